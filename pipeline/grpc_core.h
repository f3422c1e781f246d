/* grpc_core.h — gyro's small interface to the gRPC C core (server and client).
 *
 * Everything that touches <grpc/grpc.h> lives in pipeline/grpc_core.c, written against the
 * gRPC C core of Debian 12 (libgrpc-dev 1.51.1, core ABI "29.0.0") and protobuf-c 1.4.1. The C
 * core has no compatibility promise, so the rest of gyro sees only this header: a table of
 * methods with protobuf-c request types and transport-independent handlers, a server object,
 * and a blocking client.
 *
 * Server threading: `threads` workers, each owning one completion queue; every call is pinned
 * to the queue it arrived on, so a call's state machine never needs a lock. Methods flagged
 * `offload` (model inference) are served by `pool_threads` workers of their own (inference
 * workers, with their own queues; 0: by the `threads` workers with the others), which run the
 * handlers where the call's events arrive: no hand-off between threads, and health and Stats
 * never wait behind a model. Handlers get a thread index (0..threads+pool_threads-1; inference
 * workers from `threads` on) that is stable per thread, for per-thread scratch buffers. Dynamic
 * batching (max_batch, batch_wait_us, as Triton's dynamic batcher): each inference worker
 * gathers the calls of a batching method it receives, up to max_batch or until batch_wait_us
 * after the first (0: those ready now), handling its other events meanwhile, and runs them as
 * one batch. Calls are spread over the inference workers by core as they arrive (a slow call
 * delays the calls already on its worker). Per-thread counters (per method and status code)
 * and a latency histogram are written without locks and summed on request.
 *
 * Status codes: a request that does not parse as its protobuf type, or has a string field that
 * is not valid UTF-8, is INVALID_ARGUMENT before the handler runs; an unknown method is
 * UNIMPLEMENTED; a request over max_request_bytes is RESOURCE_EXHAUSTED (the core rejects it);
 * a call whose deadline passed while queued is DEADLINE_EXCEEDED without running the handler.
 */
#ifndef GYRO_PIPELINE_GRPC_CORE_H
#define GYRO_PIPELINE_GRPC_CORE_H

#include <stddef.h>
#include <stdint.h>
#include <protobuf-c/protobuf-c.h>

#include "models/core/status.h"

/* The gRPC status codes (same numbers as grpc_status_code). */
typedef enum gyro_rpc_code {
    GYRO_RPC_OK = 0,
    GYRO_RPC_CANCELLED = 1,
    GYRO_RPC_UNKNOWN = 2,
    GYRO_RPC_INVALID_ARGUMENT = 3,
    GYRO_RPC_DEADLINE_EXCEEDED = 4,
    GYRO_RPC_NOT_FOUND = 5,
    GYRO_RPC_ALREADY_EXISTS = 6,
    GYRO_RPC_PERMISSION_DENIED = 7,
    GYRO_RPC_RESOURCE_EXHAUSTED = 8,
    GYRO_RPC_FAILED_PRECONDITION = 9,
    GYRO_RPC_ABORTED = 10,
    GYRO_RPC_OUT_OF_RANGE = 11,
    GYRO_RPC_UNIMPLEMENTED = 12,
    GYRO_RPC_INTERNAL = 13,
    GYRO_RPC_UNAVAILABLE = 14,
    GYRO_RPC_DATA_LOSS = 15,
    GYRO_RPC_UNAUTHENTICATED = 16,
    GYRO_RPC_CODE_COUNT = 17
} gyro_rpc_code;

/* "OK", "INVALID_ARGUMENT", ... ; "UNKNOWN" for a number out of range. Never NULL. */
const char *gyro_rpc_code_name(int code);

/* The gRPC status code a gyro_status maps to (DATA/FORMAT/USAGE/LIMIT -> INVALID_ARGUMENT,
 * UNAVAILABLE -> UNAVAILABLE, NOT_FOUND -> NOT_FOUND, INTERRUPTED -> CANCELLED, others ->
 * INTERNAL; GYRO_OK -> OK). */
gyro_rpc_code gyro_rpc_code_from_status(gyro_status s);

/* Validate every string field of an unpacked message (recursively) as UTF-8. Returns 1 when
 * all are valid; else 0 and writes "field 'x' is not valid UTF-8 at byte N" into msg. */
int gyro_rpc_message_utf8_ok(const ProtobufCMessage *m, char *msg, size_t msg_size);

/* ---- server -------------------------------------------------------------------------------- */

typedef enum gyro_rpc_kind {
    GYRO_RPC_UNARY = 0,            /* one request, one response */
    GYRO_RPC_SERVER_STREAMING = 1, /* one request, any number of responses */
    GYRO_RPC_BIDI_STREAMING = 2    /* the handler runs once per request; one response each */
} gyro_rpc_kind;

/* Where a handler puts its responses and its status details (owned by the server). */
typedef struct gyro_rpc_reply gyro_rpc_reply;

/* Append one response message; it is packed at once, so the caller keeps ownership of `m`
 * and may free it right after. Unary and bidi handlers send exactly one message on success.
 * Errors: GYRO_ERR_NOMEM. */
gyro_status gyro_rpc_reply_send(gyro_rpc_reply *r, const ProtobufCMessage *m);

/* Set the status details sent with a non-OK code and return `code` unchanged, so a handler can
 * `return gyro_rpc_reply_error(r, GYRO_RPC_UNAVAILABLE, "no model loaded");`. Messages are
 * truncated to 512 bytes. */
int gyro_rpc_reply_error(gyro_rpc_reply *r, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Server streaming only: a handler returns this after sending a batch of responses to be
 * called again (same request, same reply with its state) once that batch is on the wire. Long
 * streams are produced batch by batch in bounded memory, with flow control from the client
 * and the deadline checked before every batch. */
#define GYRO_RPC_CONTINUE (-1)

/* Server streaming only: a handler returns this to send the responses of this round (none is
 * fine), then park the call until gyro_rpc_server_notify is next called; the handler is then
 * called again with the same request and state and may send more and wait again (a watch:
 * grpc.health.v1.Health/Watch). A parked call holds no thread; it ends when the client cancels
 * or its deadline passes (counted CANCELLED or DEADLINE_EXCEEDED), or when the server shuts down
 * (UNAVAILABLE "the server is shutting down", at once, without waiting for the grace period).
 * Only for methods that are not offloaded (an offloaded handler returning it gets INTERNAL). */
#define GYRO_RPC_WAIT (-2)

/* Keep `state` with the call for a continuing handler; state_free(state) runs when the call
 * ends however it ends (finished, cancelled, deadline, shutdown). Set it to NULL when done. */
void gyro_rpc_reply_set_state(gyro_rpc_reply *r, void *state, void (*state_free)(void *));

/* The state set by the previous invocation of the handler on this call, or NULL. */
void *gyro_rpc_reply_state(const gyro_rpc_reply *r);

/* A handler: `request` is the unpacked, UTF-8-checked request (owned by the server, valid
 * during the call); returns a gyro_rpc_code (or GYRO_RPC_CONTINUE, GYRO_RPC_WAIT). On a non-OK code any
 * messages already sent are discarded for unary calls and sent before the status for streaming
 * calls. */
typedef int (*gyro_rpc_handler)(void *ctx, int thread, const ProtobufCMessage *request,
                                gyro_rpc_reply *reply);

/* A batch handler (dynamic batching of an offloaded unary method): the same work as the
 * handler for n >= 1 calls at once. requests[i] and replies[i] belong to call i; it sets codes[i]
 * as the handler would return it (never GYRO_RPC_CONTINUE or GYRO_RPC_WAIT) and sends exactly one
 * response to replies[i] when codes[i] is OK. One call's error must not fail the others. */
typedef void (*gyro_rpc_batch_handler)(void *ctx, int thread, int n, const ProtobufCMessage *const *requests,
                                       gyro_rpc_reply *const *replies, int *codes);

typedef struct gyro_rpc_method {
    const char *path;                                /* "/gyro.v1.Gyro/Classify" */
    gyro_rpc_kind kind;
    const ProtobufCMessageDescriptor *request_type;
    int offload;                                     /* run on the inference workers */
    gyro_rpc_handler handler;
} gyro_rpc_method;

typedef struct gyro_rpc_server_options {
    const char *addr;              /* "127.0.0.1:50051"; port 0 picks a free port */
    int threads;                   /* completion-queue threads, >= 1 */
    int pool_threads;              /* inference workers (offload methods); 0: the `threads`
                                    * workers run them too */
    int requests_per_method;       /* calls kept armed per unary method and queue (e.g. 32) */
    long max_request_bytes;        /* larger requests get RESOURCE_EXHAUSTED */
    const char *tls_cert_pem;      /* PEM contents; NULL for plaintext */
    const char *tls_key_pem;
    const char *tls_client_ca_pem; /* non-NULL: require and verify client certificates */
    long max_buffer_bytes;         /* memory the transport may hold for all calls at once (a
                                    * gRPC resource quota); 0: 16 × max_request_bytes, at least
                                    * 64 MiB. Past it, calls are refused RESOURCE_EXHAUSTED. */
    int max_batch;                 /* dynamic batching: an inference worker runs up to max_batch
                                    * calls of a method with a batch handler as one batch (0 or
                                    * 1: one call at a time, as without) */
    long batch_wait_us;            /* ... waiting at most this long after the first call of a
                                    * batch arrived for more (0: only the calls already ready
                                    * on its queue). Needs pool_threads >= 1. */
    const gyro_rpc_batch_handler *batch; /* (n_methods) the batch handler of each method (NULL
                                    * entries: none), used for offloaded unary methods with
                                    * max_batch >= 2; NULL: no batching */
} gyro_rpc_server_options;

typedef struct gyro_rpc_server gyro_rpc_server;

/* Number of latency buckets; bucket i counts unary calls (and unknown-method calls) whose
 * latency, from arrival to the completion of the final batch, is <= gyro_rpc_latency_bound(i)
 * microseconds (the last bound is +Inf). Streaming calls are counted by status only. */
#define GYRO_RPC_LATENCY_BUCKETS 25
double gyro_rpc_latency_bound(int i);

/* Counters summed over all threads. counts has (n_methods + 1) rows of GYRO_RPC_CODE_COUNT;
 * the last row is for unknown methods. The latency histograms count per bucket (not
 * cumulatively): latency[b] sums latency_by_method[m][b] over the rows. */
typedef struct gyro_rpc_stats {
    int n_methods;
    uint64_t *counts;                          /* (n_methods + 1, GYRO_RPC_CODE_COUNT) */
    uint64_t latency[GYRO_RPC_LATENCY_BUCKETS];
    uint64_t *latency_by_method;               /* (n_methods + 1, GYRO_RPC_LATENCY_BUCKETS) */
    double *latency_sum_seconds;               /* (n_methods + 1) total latency of those calls */
    int in_flight;                             /* calls with a client attached right now (a
                                                * parked Health/Watch included) */
    uint64_t batches;                          /* batches of 2 or more calls run (max_batch) */
    uint64_t batched_calls;                    /* the calls in them */
    double uptime_seconds;
} gyro_rpc_stats;

/* Initialise gRPC, bind `opt->addr`, start the threads. `methods` and `ctx` must outlive the
 * server. Call with SIGTERM/SIGINT/SIGHUP already blocked in the calling thread so gRPC's
 * threads inherit the mask. Errors: GYRO_ERR_USAGE (bad options), GYRO_ERR_IO (cannot bind),
 * GYRO_ERR_NOMEM. */
gyro_status gyro_rpc_server_start(const gyro_rpc_server_options *opt,
                                  const gyro_rpc_method *methods, int n_methods, void *ctx,
                                  gyro_rpc_server **out);

/* Wake every parked call (GYRO_RPC_WAIT): each one's handler runs again on its own thread
 * within GYRO_RPC_WAKE_MS. Call after changing what a waiting handler reports. Thread-safe,
 * lock-free, cheap; NULL is a no-op. */
#define GYRO_RPC_WAKE_MS 50
void gyro_rpc_server_notify(gyro_rpc_server *s);

/* The bound port. */
int gyro_rpc_server_port(const gyro_rpc_server *s);

/* Snapshot the counters into *out (allocates its arrays; free with gyro_rpc_stats_free). May
 * be called from any thread, including handlers. Errors: GYRO_ERR_NOMEM. */
gyro_status gyro_rpc_server_stats(const gyro_rpc_server *s, gyro_rpc_stats *out);
void gyro_rpc_stats_free(gyro_rpc_stats *st);

/* Latency percentile (0..100) in microseconds estimated from the histogram (upper bound of the
 * bucket holding it); 0 when empty. */
double gyro_rpc_stats_percentile(const gyro_rpc_stats *st, double pct);

/* Stop accepting calls, let running calls finish for up to grace_ms, then cancel the rest,
 * wait until every call has released its resources and join the threads. Returns the number
 * of calls cancelled at the end of the grace period in *cancelled (may be NULL). */
void gyro_rpc_server_shutdown(gyro_rpc_server *s, long grace_ms, int *cancelled);

/* Free a server after shutdown (shuts down with grace 0 if not yet done) and release gRPC.
 * NULL is a no-op. */
void gyro_rpc_server_free(gyro_rpc_server *s);

/* ---- client -------------------------------------------------------------------------------- */

typedef struct gyro_rpc_client gyro_rpc_client;
typedef struct gyro_rpc_stream gyro_rpc_stream;

/* Open a channel to `target`. ca_pem non-NULL selects TLS with those roots; cert/key give a
 * client certificate for mutual TLS; name_override (may be NULL) sets the expected server
 * name. PEM arguments are contents, not paths. Errors: GYRO_ERR_USAGE, GYRO_ERR_NOMEM. */
gyro_status gyro_rpc_client_new(const char *target, const char *ca_pem, const char *cert_pem,
                                const char *key_pem, const char *name_override,
                                gyro_rpc_client **out);
void gyro_rpc_client_free(gyro_rpc_client *c);

/* Start a call on `path` with a deadline timeout_ms from now (<= 0: none). Any kind of method
 * can be driven this way: send requests, close the sending side, receive, finish. Errors:
 * GYRO_ERR_UNAVAILABLE (the call could not start), GYRO_ERR_NOMEM. */
gyro_status gyro_rpc_stream_open(gyro_rpc_client *c, const char *path, long timeout_ms,
                                 gyro_rpc_stream **out);

/* Send one request. Errors: GYRO_ERR_UNAVAILABLE when the call has ended (then finish). */
gyro_status gyro_rpc_stream_send(gyro_rpc_stream *st, const ProtobufCMessage *m);

/* Half-close: no more requests. */
gyro_status gyro_rpc_stream_close_send(gyro_rpc_stream *st);

/* Receive the next response into *out (free with protobuf_c_message_free_unpacked); *out is
 * NULL at the end of the stream (then finish for the status). Errors: GYRO_ERR_DATA when the
 * response does not unpack. */
gyro_status gyro_rpc_stream_recv(gyro_rpc_stream *st, const ProtobufCMessageDescriptor *type,
                                 ProtobufCMessage **out);

/* Cancel the call (the server sees the client leave: CANCELLED); finish it afterwards, which
 * then reports CANCELLED. */
void gyro_rpc_stream_cancel(gyro_rpc_stream *st);

/* Wait for the call's status and free the stream. *code gets the gRPC status; details (may be
 * NULL) gets a malloc'd copy of the status message. */
gyro_status gyro_rpc_stream_finish(gyro_rpc_stream *st, int *code, char **details);

/* ---- a handler without a server -------------------------------------------------------------- */

/* Handle one request as the server would, in the calling thread (as handler thread 0), with no
 * network: unpack the `len` bytes at `request` as m->request_type, check its strings as UTF-8,
 * run m->handler with `ctx` (a server-streaming handler at most `max_rounds` times while it
 * continues or waits, a wait being woken at once; stopping it early then gives GYRO_RPC_CANCELLED), apply the server's checks on the
 * handler's result (a unary or bidi OK with other than one response is INTERNAL, an unknown code
 * is UNKNOWN), and free everything. Returns the gRPC status code; the status details go to
 * `details` (may be NULL) and the number of responses produced to *n_responses (may be NULL).
 * For tests and fuzzing of the request decoding and the service's validation. */
int gyro_rpc_call_local(const gyro_rpc_method *m, void *ctx, const uint8_t *request, size_t len,
                        int max_rounds, char *details, size_t details_size, int *n_responses);

#endif

/* grpc_core.c — the only file of gyro that uses the gRPC C core (see grpc_core.h).
 *
 * Written against Debian 12's libgrpc-dev 1.51.1 (grpc_version_string() says "29.0.0", the core
 * ABI) and protobuf-c 1.4.1. 1.51 names: grpc_server_add_http2_port + *_credentials_create,
 * grpc_channel_create; the pre-1.4x insecure/secure channel and port functions do not exist.
 *
 * Server: one completion queue per worker thread; every call is requested with its own
 * worker's queue as both the bound and the notification queue, so all completions of a call
 * land on one thread and a call context (call_ctx) is a lock-free state machine:
 *
 *   REQUESTED --new call--> [unpack] --> handler (or the worker's batch) --> SENDING* --> FINAL
 *   bidi:  REQUESTED --> BIDI_RECV <--> handler --> ... --> FINAL
 *
 * Exactly one batch per call is in flight at any time, and each call's first batch carries
 * SEND_INITIAL_METADATA (core sends nothing for a status-only first batch). A batch that
 * completes with success == 0 means the client is gone (cancel, deadline, shutdown): the call
 * is unreffed (which cancels it) and the context freed. Each arrival re-arms a fresh request
 * on the same queue, including during shutdown (the request then fails fast). Unknown methods
 * are caught by grpc_server_request_call (without one armed they would hang until the
 * client's deadline) and answered UNIMPLEMENTED. An atomic count of live contexts lets
 * shutdown wait until every context is gone before it shuts the queues down (shutting them
 * down earlier makes core abort on a late completion).
 *
 * Parked calls (GYRO_RPC_WAIT, a watch): the call has no batch in flight while it waits, so it
 * keeps a second batch, RECV_CLOSE_ON_SERVER alone, outstanding with its own tag (the context's
 * address + 1) to learn when the client leaves; completions of both tags still land on the
 * call's worker. A worker with parked calls waits on its queue at most GYRO_RPC_WAKE_MS and
 * then re-runs the handlers of the calls parked before the last gyro_rpc_server_notify (a
 * generation counter), or ends them UNAVAILABLE once the server is shutting down (the C core
 * of 1.51 has no public alarm to wake a queue from another thread). A context whose close
 * batch is outstanding is freed only when that batch completes (end_call).
 *
 * Inference workers (pool_threads > 0): the offloaded methods (model inference) are armed only
 * on pool_threads workers of their own, the other methods only on the first `threads` workers,
 * so a call runs its handler on the thread its events arrive on, and health and Stats never wait
 * behind a model. There is no queue between threads: an offloaded call used to go from its
 * worker to a pool thread (a mutex, a futex wake and a context switch) and its completions back
 * to the worker (a core kick), two hand-offs per call on top of core's own; now it has none.
 *
 * Dynamic batching (max_batch >= 2, a batch handler for the method), per inference worker: a
 * call of a batching method is unpacked and added to the worker's pending batch instead of
 * running its handler; the batch runs when it has max_batch calls, or when the first has waited
 * batch_wait_us (the worker's queue wait is shortened to that time), or, with batch_wait_us 0,
 * as soon as the queue has nothing more ready (a zero-timeout poll). Completions and arrivals
 * of other calls are handled while a batch gathers; a call of another method runs the pending
 * batch first. The batch handler answers every call of the batch, and each call's final batch
 * of ops starts as for a single call.
 *
 * Client: a pluck queue, one op type per batch, so that any method kind can be driven as a
 * stream: open, send*, close_send, recv*, finish.
 */
#include "models/core/arena.h"
#include "models/text/utf8.h"
#include "pipeline/grpc_core.h"

#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/support/time.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* ---- small helpers ------------------------------------------------------------------------- */

static const char *const code_names[GYRO_RPC_CODE_COUNT] = {
    "OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
    "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED",
    "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED"};

const char *gyro_rpc_code_name(int code)
{
    return code >= 0 && code < GYRO_RPC_CODE_COUNT ? code_names[code] : "UNKNOWN";
}

gyro_rpc_code gyro_rpc_code_from_status(gyro_status s)
{
    switch (s) {
    case GYRO_OK: return GYRO_RPC_OK;
    case GYRO_ERR_USAGE:
    case GYRO_ERR_DATA:
    case GYRO_ERR_FORMAT:
    case GYRO_ERR_LIMIT: return GYRO_RPC_INVALID_ARGUMENT;
    case GYRO_ERR_NOT_FOUND: return GYRO_RPC_NOT_FOUND;
    case GYRO_ERR_UNAVAILABLE: return GYRO_RPC_UNAVAILABLE;
    case GYRO_ERR_INTERRUPTED: return GYRO_RPC_CANCELLED;
    case GYRO_ERR_NOMEM: return GYRO_RPC_RESOURCE_EXHAUSTED;
    default: return GYRO_RPC_INTERNAL;
    }
}

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int gyro_rpc_message_utf8_ok(const ProtobufCMessage *m, char *msg, size_t msg_size)
{
    if (!m) return 1;
    const ProtobufCMessageDescriptor *d = m->descriptor;
    const char *base = (const char *)m;
    for (unsigned f = 0; f < d->n_fields; f++) {
        const ProtobufCFieldDescriptor *fd = &d->fields[f];
        if (fd->type != PROTOBUF_C_TYPE_STRING && fd->type != PROTOBUF_C_TYPE_MESSAGE) continue;
        if ((fd->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
            *(const uint32_t *)(base + fd->quantifier_offset) != fd->id)
            continue;
        size_t count = 1;
        const void *const *items = (const void *const *)(base + fd->offset);
        if (fd->label == PROTOBUF_C_LABEL_REPEATED) {
            count = *(const size_t *)(base + fd->quantifier_offset);
            items = *(const void *const *const *)(base + fd->offset);
        }
        for (size_t k = 0; k < count; k++) {
            const void *v = items[k];
            if (!v) continue;
            if (fd->type == PROTOBUF_C_TYPE_MESSAGE) {
                if (!gyro_rpc_message_utf8_ok((const ProtobufCMessage *)v, msg, msg_size)) return 0;
                continue;
            }
            const unsigned char *s = v;
            size_t len = strlen((const char *)s), ok = gyro_utf8_find_invalid(s, len);
            if (ok < len) {
                if (msg)
                    snprintf(msg, msg_size, "field '%s' of %s is not valid UTF-8 at byte %zu",
                             fd->name, d->short_name, ok);
                return 0;
            }
        }
    }
    return 1;
}

/* Pack a message into a byte buffer (NULL on allocation failure). */
static grpc_byte_buffer *pack_message(const ProtobufCMessage *m)
{
    size_t n = protobuf_c_message_get_packed_size(m);
    grpc_slice s = grpc_slice_malloc(n);
    protobuf_c_message_pack(m, GRPC_SLICE_START_PTR(s));
    grpc_byte_buffer *bb = grpc_raw_byte_buffer_create(&s, 1);
    grpc_slice_unref(s);
    return bb;
}

/* Unpack a byte buffer as `type` with allocator `al` (NULL: malloc); NULL when it does not
 * parse (or cannot be decompressed). A message in one slice (the usual case for small requests)
 * is parsed where it lies; a longer one is first joined into one slice. */
static ProtobufCMessage *unpack_message(grpc_byte_buffer *bb, const ProtobufCMessageDescriptor *type,
                                        ProtobufCAllocator *al)
{
    grpc_byte_buffer_reader r;
    if (!grpc_byte_buffer_reader_init(&r, bb)) return NULL;
    ProtobufCMessage *m;
    grpc_slice *first;
    if (grpc_byte_buffer_length(bb) == 0) {
        m = protobuf_c_message_unpack(type, al, 0, (const uint8_t *)"");
    } else if (grpc_byte_buffer_reader_peek(&r, &first) &&
               GRPC_SLICE_LENGTH(*first) == grpc_byte_buffer_length(bb)) {
        m = protobuf_c_message_unpack(type, al, GRPC_SLICE_LENGTH(*first), GRPC_SLICE_START_PTR(*first));
    } else {
        grpc_byte_buffer_reader_destroy(&r);
        if (!grpc_byte_buffer_reader_init(&r, bb)) return NULL;
        grpc_slice s = grpc_byte_buffer_reader_readall(&r);
        m = protobuf_c_message_unpack(type, al, GRPC_SLICE_LENGTH(s), GRPC_SLICE_START_PTR(s));
        grpc_slice_unref(s);
    }
    grpc_byte_buffer_reader_destroy(&r);
    return m;
}

/* A request's memory: a small fixed arena per call context, rewound for each request, with
 * malloc for what does not fit (protobuf-c frees each piece through free_fn: a no-op for
 * pieces in the arena). */
#define REQUEST_ARENA_BYTES 2048

typedef struct request_mem {
    gyro_arena arena;        /* empty until the first request */
    ProtobufCAllocator al;   /* allocator_data: this */
} request_mem;

static void *req_alloc(void *data, size_t n)
{
    request_mem *rm = data;
    if (!rm->arena.base && gyro_arena_init(&rm->arena, REQUEST_ARENA_BYTES) != GYRO_OK) return malloc(n);
    void *p = gyro_arena_alloc(&rm->arena, n);
    return p ? p : malloc(n);
}

static void req_free(void *data, void *p)
{
    request_mem *rm = data;
    unsigned char *b = rm->arena.base;
    if (b && (unsigned char *)p >= b && (unsigned char *)p < b + rm->arena.cap) return;
    free(p);
}

/* ---- server structures --------------------------------------------------------------------- */

double gyro_rpc_latency_bound(int i)
{
    static const double b[GYRO_RPC_LATENCY_BUCKETS] = {
        10, 20, 50, 100, 200, 300, 500, 750, 1000, 1500, 2000, 3000, 5000, 7500, 10000, 20000,
        50000, 100000, 200000, 500000, 1000000, 2000000, 5000000, 10000000, __builtin_inf()};
    return i >= 0 && i < GYRO_RPC_LATENCY_BUCKETS ? b[i] : __builtin_inf();
}

struct gyro_rpc_reply {
    grpc_byte_buffer **msgs; /* (cap) packed responses */
    int n, cap;
    char details[512];
    void *state;             /* a continuing handler's state (owned via state_free) */
    void (*state_free)(void *);
};

enum { ST_REQUESTED, ST_BIDI_RECV, ST_SENDING, ST_FINAL, ST_PARKED, ST_ENDED };

typedef struct worker worker;

typedef struct call_ctx {
    worker *w;
    int method;                /* index into the method table, or -1: unregistered request */
    int state;
    int active;                /* a client call is attached */
    int md_sent;               /* SEND_INITIAL_METADATA went out */
    int code;                  /* status to send / sent */
    int next_msg;              /* server streaming: next reply message to send */
    int close_cancelled;       /* RECV_CLOSE_ON_SERVER result */
    grpc_call *call;
    gpr_timespec deadline;
    grpc_metadata_array md;
    grpc_call_details details; /* method == -1 only */
    grpc_byte_buffer *payload; /* the received request */
    ProtobufCMessage *request; /* unpacked request (in req) */
    request_mem req;           /* its memory, kept when the context is recycled */
    grpc_slice status_details;
    int has_status_details;
    int64_t t0;
    int64_t t_queued;          /* when it joined its worker's pending batch (now_ns) */
    gyro_rpc_reply reply;
    /* parked calls (GYRO_RPC_WAIT) */
    int close_started;         /* the RECV_CLOSE_ON_SERVER batch (tag: address + 1) is out */
    int close_done;            /* ... and has completed: the call is over on the wire */
    uint64_t generation;       /* gyro_rpc_server_notify count read before the handler ran */
    struct call_ctx *park_next, *park_prev;
} call_ctx;

/* Counters of one worker; written only by that worker (relaxed stores), summed by readers. */
typedef struct worker_stats {
    _Atomic uint64_t *counts;  /* (n_methods + 1, GYRO_RPC_CODE_COUNT) */
    _Atomic uint64_t *latency; /* (n_methods + 1, GYRO_RPC_LATENCY_BUCKETS) */
    _Atomic uint64_t *sum_ns;  /* (n_methods + 1) */
} worker_stats;

struct worker {
    struct gyro_rpc_server *srv;
    int index;
    grpc_completion_queue *cq;
    pthread_t thread;
    worker_stats stats;
    call_ctx *parked;          /* calls waiting for gyro_rpc_server_notify (this worker only) */
    uint64_t scan_generation;  /* generation at the last scan of the parked list */
    int rescan;                /* a call parked with an older generation: scan again */
    int inference;             /* an inference worker (offloaded methods only) */
    struct call_ctx *spare;    /* contexts of finished calls, reused by arm (this worker only) */
    int n_spare;
    struct batch_buf *b;       /* inference workers with max_batch >= 2: the batch being
                                * gathered (b->calls[0..n_pending)) */
    int n_pending;
};

struct gyro_rpc_server {
    gyro_rpc_server_options opt;
    const gyro_rpc_method *methods;
    int n_methods;
    void *ctx;
    grpc_server *server;
    void **handles;              /* (n_methods) registered method handles */
    worker *workers;             /* (n_workers): threads, then pool_threads inference workers */
    int n_workers;
    grpc_completion_queue *shutdown_cq;
    int port;
    int64_t t_start;
    _Atomic int live;            /* call contexts alive (armed or active) */
    _Atomic int active;          /* call contexts with a client call attached */
    _Atomic uint64_t generation; /* gyro_rpc_server_notify calls */
    _Atomic int stopping;        /* shutdown began: parked calls end */
    _Atomic uint64_t batches;    /* batches of >= 2 calls run, and the calls in them */
    _Atomic uint64_t batched_calls;
    int shut_down;
};

static void stat_add(_Atomic uint64_t *c, uint64_t v)
{
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + v, memory_order_relaxed);
}

static void record_call(call_ctx *c, int code)
{
    worker *w = c->w;
    int row = c->method < 0 ? w->srv->n_methods : c->method;
    stat_add(&w->stats.counts[row * GYRO_RPC_CODE_COUNT + code], 1);
    if (c->method >= 0 && w->srv->methods[c->method].kind != GYRO_RPC_UNARY) return;
    int64_t ns = now_ns() - c->t0;
    double us = (double)ns / 1000.0;
    int b = 0;
    while (b < GYRO_RPC_LATENCY_BUCKETS - 1 && us > gyro_rpc_latency_bound(b)) b++;
    stat_add(&w->stats.latency[row * GYRO_RPC_LATENCY_BUCKETS + b], 1);
    stat_add(&w->stats.sum_ns[row], ns > 0 ? (uint64_t)ns : 0);
}

static void reply_clear(gyro_rpc_reply *r)
{
    for (int i = 0; i < r->n; i++) grpc_byte_buffer_destroy(r->msgs[i]);
    r->n = 0;
    r->details[0] = 0;
}

gyro_status gyro_rpc_reply_send(gyro_rpc_reply *r, const ProtobufCMessage *m)
{
    if (r->n == r->cap) {
        int cap = r->cap ? 2 * r->cap : 4;
        grpc_byte_buffer **p = realloc(r->msgs, (size_t)cap * sizeof *p);
        if (!p) return gyro_error_set(GYRO_ERR_NOMEM, "out of memory for %d responses", cap);
        r->msgs = p;
        r->cap = cap;
    }
    grpc_byte_buffer *bb = pack_message(m);
    if (!bb) return gyro_error_set(GYRO_ERR_NOMEM, "out of memory packing a response");
    r->msgs[r->n++] = bb;
    return GYRO_OK;
}

void gyro_rpc_reply_set_state(gyro_rpc_reply *r, void *state, void (*state_free)(void *))
{
    r->state = state;
    r->state_free = state_free;
}

void *gyro_rpc_reply_state(const gyro_rpc_reply *r) { return r->state; }

int gyro_rpc_reply_error(gyro_rpc_reply *r, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->details, sizeof r->details, fmt, ap);
    va_end(ap);
    return code;
}

/* ---- call contexts ------------------------------------------------------------------------- */

/* Contexts a worker keeps for reuse (a context with its request arena and reply array is about
 * 3 KB): the calls in flight on one worker rarely exceed this. */
#define SPARE_CONTEXTS 256

/* A cleared context for `method`: a spare one of w (its request arena and reply array kept) or
 * a new one. Runs on w's thread (or before the workers start). */
static call_ctx *ctx_new(worker *w, int method)
{
    call_ctx *c = w->spare;
    if (c) {
        w->spare = c->park_next;
        w->n_spare--;
        request_mem rm = c->req;
        grpc_byte_buffer **msgs = c->reply.msgs;
        int cap = c->reply.cap;
        memset(c, 0, sizeof *c);
        c->req = rm;
        c->reply.msgs = msgs;
        c->reply.cap = cap;
    } else if (!(c = calloc(1, sizeof *c))) {
        return NULL;
    } else {
        c->req.al.alloc = req_alloc;
        c->req.al.free = req_free;
    }
    c->req.al.allocator_data = &c->req;
    c->w = w;
    c->method = method;
    c->state = ST_REQUESTED;
    grpc_metadata_array_init(&c->md);
    if (method < 0) grpc_call_details_init(&c->details);
    atomic_fetch_add(&w->srv->live, 1);
    return c;
}

/* Release a context's own memory (it holds no call any more). */
static void ctx_destroy(call_ctx *c)
{
    gyro_arena_free(&c->req.arena);
    free(c->reply.msgs);
    free(c);
}

/* The call is over: release what it holds and keep the context as a spare of its worker (or
 * destroy it). Runs on the call's worker thread. */
static void ctx_free(call_ctx *c)
{
    gyro_rpc_server *srv = c->w->srv;
    if (c->call) grpc_call_unref(c->call); /* cancels an unfinished call */
    grpc_metadata_array_destroy(&c->md);
    if (c->method < 0) grpc_call_details_destroy(&c->details);
    if (c->payload) grpc_byte_buffer_destroy(c->payload);
    if (c->request) protobuf_c_message_free_unpacked(c->request, &c->req.al);
    if (c->has_status_details) grpc_slice_unref(c->status_details);
    reply_clear(&c->reply);
    if (c->reply.state && c->reply.state_free) c->reply.state_free(c->reply.state);
    if (c->active) atomic_fetch_sub(&srv->active, 1);
    worker *w = c->w;
    if (w->n_spare < SPARE_CONTEXTS && !atomic_load(&srv->stopping)) { /* kept for the next arm */
        c->park_next = w->spare;
        w->spare = c;
        w->n_spare++;
    } else {
        ctx_destroy(c);
    }
    atomic_fetch_sub(&srv->live, 1);
}

/* Arm one request for `method` (-1: any unregistered method) on worker w. */
static void arm(worker *w, int method)
{
    gyro_rpc_server *srv = w->srv;
    call_ctx *c = ctx_new(w, method);
    if (!c) return; /* out of memory: fewer armed calls; core queues arrivals meanwhile */
    grpc_call_error e;
    if (method < 0) {
        e = grpc_server_request_call(srv->server, &c->call, &c->details, &c->md, w->cq, w->cq, c);
    } else {
        int needs_payload = srv->methods[method].kind != GYRO_RPC_BIDI_STREAMING;
        e = grpc_server_request_registered_call(srv->server, srv->handles[method], &c->call,
                                                &c->deadline, &c->md,
                                                needs_payload ? &c->payload : NULL, w->cq, w->cq, c);
    }
    if (e != GRPC_CALL_OK) ctx_free(c);
}

/* Whether the call's deadline is less than slack_ms away (or passed). */
static int deadline_near(const call_ctx *c, long slack_ms)
{
    gpr_timespec d = c->method < 0 ? c->details.deadline : c->deadline;
    if (gpr_time_cmp(d, gpr_inf_future(d.clock_type)) == 0) return 0;
    gpr_timespec now = gpr_time_add(gpr_now(d.clock_type), gpr_time_from_millis(slack_ms, GPR_TIMESPAN));
    return gpr_time_cmp(now, d) > 0;
}

static int deadline_passed(const call_ctx *c) { return deadline_near(c, 0); }

/* The call is over for us: free the context now, or, while its close batch is still out,
 * cancel the call (a no-op once it finished) and let that batch's completion free it. */
static void end_call(call_ctx *c)
{
    if (c->close_started && !c->close_done) {
        c->state = ST_ENDED;
        grpc_call_cancel(c->call, NULL);
        return;
    }
    ctx_free(c);
}

/* Start a batch or, if core refuses it, end the call. */
static void start(call_ctx *c, grpc_op *ops, size_t n)
{
    if (grpc_call_start_batch(c->call, ops, n, c, NULL) != GRPC_CALL_OK) {
        record_call(c, GYRO_RPC_INTERNAL);
        end_call(c);
    }
}

/* The final batch: status (with the unary response when OK) and RECV_CLOSE_ON_SERVER. */
static void finish(call_ctx *c, int code)
{
    grpc_op ops[4];
    size_t n = 0;
    memset(ops, 0, sizeof ops);
    c->code = code;
    if (!c->md_sent) {
        ops[n].op = GRPC_OP_SEND_INITIAL_METADATA;
        n++;
        c->md_sent = 1;
    }
    if (code == GYRO_RPC_OK && c->method >= 0 && c->w->srv->methods[c->method].kind == GYRO_RPC_UNARY &&
        c->reply.n > 0) {
        ops[n].op = GRPC_OP_SEND_MESSAGE;
        ops[n].data.send_message.send_message = c->reply.msgs[0];
        n++;
    }
    ops[n].op = GRPC_OP_SEND_STATUS_FROM_SERVER;
    ops[n].data.send_status_from_server.status = (grpc_status_code)code;
    if (code != GYRO_RPC_OK && c->reply.details[0]) {
        c->status_details = grpc_slice_from_copied_string(c->reply.details);
        c->has_status_details = 1;
        ops[n].data.send_status_from_server.status_details = &c->status_details;
    }
    n++;
    if (!c->close_started) { /* a parked call has its own close batch out */
        ops[n].op = GRPC_OP_RECV_CLOSE_ON_SERVER;
        ops[n].data.recv_close_on_server.cancelled = &c->close_cancelled;
        n++;
    }
    c->state = ST_FINAL;
    start(c, ops, n);
}

/* Server streaming: send the next reply message, or the status after the last one. */
static void redispatch(call_ctx *c);

static void park(call_ctx *c);
static int lost_code(const call_ctx *c);

static void stream_next(call_ctx *c)
{
    if (c->next_msg >= c->reply.n) {
        if (c->code == GYRO_RPC_CONTINUE) { /* every message is on the wire: produce more */
            reply_clear(&c->reply);
            c->next_msg = 0;
            redispatch(c);
            return;
        }
        if (c->code == GYRO_RPC_WAIT) {
            park(c);
            return;
        }
        finish(c, c->code);
        return;
    }
    grpc_op ops[2];
    size_t n = 0;
    memset(ops, 0, sizeof ops);
    if (!c->md_sent) {
        ops[n].op = GRPC_OP_SEND_INITIAL_METADATA;
        n++;
        c->md_sent = 1;
    }
    ops[n].op = GRPC_OP_SEND_MESSAGE;
    ops[n].data.send_message.send_message = c->reply.msgs[c->next_msg++];
    n++;
    c->state = ST_SENDING;
    start(c, ops, n);
}

/* Unlink a parked call from its worker's list. */
static void unpark(call_ctx *c)
{
    worker *w = c->w;
    if (c->park_prev) c->park_prev->park_next = c->park_next;
    else w->parked = c->park_next;
    if (c->park_next) c->park_next->park_prev = c->park_prev;
    c->park_next = c->park_prev = NULL;
}

/* Every response of a waiting handler is on the wire: put the call on its worker's parked list
 * (on the worker's thread: only stream_next from a completion or a woken handler gets here),
 * with its close batch out so that a client leaving is seen. */
static void park(call_ctx *c)
{
    reply_clear(&c->reply);
    c->next_msg = 0;
    if (c->close_done) { /* the client left while the last response was in flight */
        record_call(c, lost_code(c));
        ctx_free(c);
        return;
    }
    if (!c->close_started) {
        grpc_op ops[2];
        size_t n = 0;
        memset(ops, 0, sizeof ops);
        if (!c->md_sent) {
            ops[n].op = GRPC_OP_SEND_INITIAL_METADATA;
            n++;
            c->md_sent = 1;
        }
        ops[n].op = GRPC_OP_RECV_CLOSE_ON_SERVER;
        ops[n].data.recv_close_on_server.cancelled = &c->close_cancelled;
        n++;
        if (grpc_call_start_batch(c->call, ops, n, (char *)c + 1, NULL) != GRPC_CALL_OK) {
            record_call(c, GYRO_RPC_INTERNAL);
            ctx_free(c);
            return;
        }
        c->close_started = 1;
    }
    c->state = ST_PARKED;
    if (c->generation != atomic_load(&c->w->srv->generation)) c->w->rescan = 1; /* notified meanwhile */
    c->park_prev = NULL;
    c->park_next = c->w->parked;
    if (c->park_next) c->park_next->park_prev = c;
    c->w->parked = c;
}

/* The close batch of a parked-capable call completed: the call is over on the wire. */
static void on_close(call_ctx *c)
{
    c->close_done = 1;
    switch (c->state) {
    case ST_PARKED: /* the client left (or its deadline passed) while the call waited */
        unpark(c);
        record_call(c, lost_code(c));
        ctx_free(c);
        return;
    case ST_ENDED:
        ctx_free(c);
        return;
    default: /* a batch is in flight: its completion ends the call */
        return;
    }
}

static void run_handler(call_ctx *c, int thread);

/* Re-run the handlers of this worker's parked calls if gyro_rpc_server_notify was called since
 * they ran; end them UNAVAILABLE once the server is shutting down. */
static void wake_parked(worker *w)
{
    gyro_rpc_server *srv = w->srv;
    int stopping = atomic_load(&srv->stopping);
    uint64_t gen = atomic_load(&srv->generation);
    if (!stopping && gen == w->scan_generation && !w->rescan) return; /* nothing new: O(1) per event */
    w->scan_generation = gen;
    w->rescan = 0;
    call_ctx *due = NULL;
    for (call_ctx *c = w->parked, *next; c; c = next) {
        next = c->park_next;
        if (!stopping && c->generation == gen) continue;
        unpark(c);
        c->park_next = due; /* a private list: handlers may park again meanwhile */
        due = c;
    }
    while (due) {
        call_ctx *c = due;
        due = c->park_next;
        c->park_next = NULL;
        if (stopping) finish(c, gyro_rpc_reply_error(&c->reply, GYRO_RPC_UNAVAILABLE, "the server is shutting down"));
        else run_handler(c, w->index);
    }
}

/* Bidi: ask for the next request, sending the current reply (if any) in the same batch. */
static void bidi_recv(call_ctx *c, grpc_byte_buffer *send)
{
    grpc_op ops[3];
    size_t n = 0;
    memset(ops, 0, sizeof ops);
    if (!c->md_sent) {
        ops[n].op = GRPC_OP_SEND_INITIAL_METADATA;
        n++;
        c->md_sent = 1;
    }
    if (send) {
        ops[n].op = GRPC_OP_SEND_MESSAGE;
        ops[n].data.send_message.send_message = send;
        n++;
    }
    ops[n].op = GRPC_OP_RECV_MESSAGE;
    ops[n].data.recv_message.recv_message = &c->payload;
    n++;
    c->state = ST_BIDI_RECV;
    start(c, ops, n);
}

/* A handler's result as the server sends it: INTERNAL for a result its method cannot have (a
 * continue without responses, a wait outside a non-offloaded stream, a unary or bidi OK with
 * other than one response), UNKNOWN for a number that is no code. */
static int checked_code(call_ctx *c, int code)
{
    const gyro_rpc_server *srv = c->w->srv;
    const gyro_rpc_method *m = &srv->methods[c->method];
    if (code == GYRO_RPC_CONTINUE && (m->kind != GYRO_RPC_SERVER_STREAMING || c->reply.n == 0))
        code = gyro_rpc_reply_error(&c->reply, GYRO_RPC_INTERNAL, "handler of %s continued without responses", m->path);
    else if (code == GYRO_RPC_WAIT && (m->kind != GYRO_RPC_SERVER_STREAMING || (m->offload && srv->opt.pool_threads > 0)))
        code = gyro_rpc_reply_error(&c->reply, GYRO_RPC_INTERNAL, "handler of %s cannot wait", m->path);
    else if (code != GYRO_RPC_CONTINUE && code != GYRO_RPC_WAIT && (code < 0 || code >= GYRO_RPC_CODE_COUNT))
        code = GYRO_RPC_UNKNOWN;
    if (code == GYRO_RPC_OK && m->kind != GYRO_RPC_SERVER_STREAMING && c->reply.n != 1)
        code = gyro_rpc_reply_error(&c->reply, GYRO_RPC_INTERNAL,
                                    "handler of %s produced %d responses", m->path, c->reply.n);
    return code;
}

static void after_handler(call_ctx *c, int code);

/* Run the handler for the unpacked request (on the call's worker) and start the next
 * batch. The completion always comes back on the call's own worker. */
static void run_handler(call_ctx *c, int thread)
{
    gyro_rpc_server *srv = c->w->srv;
    const gyro_rpc_method *m = &srv->methods[c->method];
    int code;
    if (deadline_passed(c)) {
        code = gyro_rpc_reply_error(&c->reply, GYRO_RPC_DEADLINE_EXCEEDED,
                                    "deadline exceeded before the request was handled");
    } else {
        c->generation = atomic_load(&srv->generation); /* a notify from here on wakes it again */
        code = checked_code(c, m->handler(srv->ctx, thread, c->request, &c->reply));
    }
    after_handler(c, code);
}

/* What the server does with a handler's result: the next batch of the call. */
static void after_handler(call_ctx *c, int code)
{
    const gyro_rpc_method *m = &c->w->srv->methods[c->method];
    switch (m->kind) {
    case GYRO_RPC_UNARY:
        finish(c, code);
        break;
    case GYRO_RPC_SERVER_STREAMING:
        c->code = code;
        c->next_msg = 0;
        stream_next(c);
        break;
    case GYRO_RPC_BIDI_STREAMING:
        if (code == GYRO_RPC_OK) bidi_recv(c, c->reply.msgs[0]);
        else finish(c, code);
        break;
    }
}

/* Whether c's worker gathers calls of c's method into batches. */
static int batchable(const call_ctx *c)
{
    const gyro_rpc_server *srv = c->w->srv;
    return c->w->b && srv->opt.batch[c->method] && srv->methods[c->method].kind == GYRO_RPC_UNARY;
}

/* Per inference worker: room for one batch. */
typedef struct batch_buf {
    call_ctx **calls;                    /* (max_batch) gathered */
    call_ctx **live;                     /* (max_batch) those still within their deadline */
    const ProtobufCMessage **requests;   /* (max_batch) */
    gyro_rpc_reply **replies;            /* (max_batch) */
    int *codes;                          /* (max_batch) */
} batch_buf;

/* Run n >= 2 gathered calls of one method through its batch handler, then send each reply. */
static void run_batch(gyro_rpc_server *srv, batch_buf *b, int n, int thread)
{
    if (n == 1) {
        run_handler(b->calls[0], thread);
        return;
    }
    const gyro_rpc_method *m = &srv->methods[b->calls[0]->method];
    int k = 0;
    for (int i = 0; i < n; i++) {
        call_ctx *c = b->calls[i];
        if (deadline_passed(c)) {
            finish(c, gyro_rpc_reply_error(&c->reply, GYRO_RPC_DEADLINE_EXCEEDED,
                                           "deadline exceeded before the request was handled"));
            continue;
        }
        b->live[k] = c;
        b->requests[k] = c->request;
        b->replies[k] = &c->reply;
        b->codes[k] = GYRO_RPC_INTERNAL;
        k++;
    }
    atomic_fetch_add_explicit(&srv->batches, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&srv->batched_calls, (uint64_t)n, memory_order_relaxed);
    if (k == 0) return;
    srv->opt.batch[b->calls[0]->method](srv->ctx, thread, k, b->requests, b->replies, b->codes);
    for (int i = 0; i < k; i++) {
        int code = b->codes[i];
        if (code == GYRO_RPC_CONTINUE || code == GYRO_RPC_WAIT)
            code = gyro_rpc_reply_error(b->replies[i], GYRO_RPC_INTERNAL, "batch handler of %s gave a streaming result", m->path);
        finish(b->live[i], checked_code(b->live[i], code));
    }
}

/* Unpack and check the request in c->payload, then run its handler (or batch it). */
static void dispatch(call_ctx *c)
{
    gyro_rpc_server *srv = c->w->srv;
    const gyro_rpc_method *m = &srv->methods[c->method];
    if (c->request) {
        protobuf_c_message_free_unpacked(c->request, &c->req.al);
        c->request = NULL;
    }
    if (c->req.arena.base) gyro_arena_reset(&c->req.arena, 0); /* the previous request's memory */
    if (!c->payload) {
        finish(c, gyro_rpc_reply_error(&c->reply, GYRO_RPC_INVALID_ARGUMENT, "missing request message"));
        return;
    }
    c->request = unpack_message(c->payload, m->request_type, &c->req.al);
    grpc_byte_buffer_destroy(c->payload);
    c->payload = NULL;
    if (!c->request) {
        finish(c, gyro_rpc_reply_error(&c->reply, GYRO_RPC_INVALID_ARGUMENT,
                                       "request is not a valid %s message", m->request_type->name));
        return;
    }
    char why[256];
    if (!gyro_rpc_message_utf8_ok(c->request, why, sizeof why)) {
        finish(c, gyro_rpc_reply_error(&c->reply, GYRO_RPC_INVALID_ARGUMENT, "%s", why));
        return;
    }
    redispatch(c);
}

/* Run the batch gathered on worker w (if any). */
static void flush_batch(worker *w)
{
    int n = w->n_pending;
    if (!n) return;
    w->n_pending = 0;
    run_batch(w->srv, w->b, n, w->index);
}

/* Run the handler of an unpacked request, or add it to its worker's batch (run once full). */
static void redispatch(call_ctx *c)
{
    worker *w = c->w;
    if (!batchable(c)) {
        run_handler(c, w->index);
        return;
    }
    /* a batch holds calls of one method: another method's call runs the batch first */
    if (w->n_pending && w->b->calls[0]->method != c->method) flush_batch(w);
    c->t_queued = now_ns();
    w->b->calls[w->n_pending++] = c;
    if (w->n_pending >= w->srv->opt.max_batch) flush_batch(w);
}

/* The code a client saw for a call that ended without our status. The client's deadline timer
 * usually fires (and resets the stream) a moment before the server's, so a call lost within
 * 100 ms of its deadline counts as DEADLINE_EXCEEDED, not CANCELLED. */
static int lost_code(const call_ctx *c)
{
    return deadline_near(c, 100) ? GYRO_RPC_DEADLINE_EXCEEDED : GYRO_RPC_CANCELLED;
}

static void on_event(call_ctx *c, int success)
{
    gyro_rpc_server *srv = c->w->srv;
    switch (c->state) {
    case ST_REQUESTED:
        if (!success) { /* server shutting down: the armed request is void */
            ctx_free(c);
            return;
        }
        arm(c->w, c->method);
        c->active = 1;
        atomic_fetch_add(&srv->active, 1);
        c->t0 = now_ns();
        if (c->method < 0) {
            char path[256];
            size_t len = GRPC_SLICE_LENGTH(c->details.method);
            if (len >= sizeof path) len = sizeof path - 1;
            memcpy(path, GRPC_SLICE_START_PTR(c->details.method), len);
            path[len] = 0;
            finish(c, gyro_rpc_reply_error(&c->reply, GYRO_RPC_UNIMPLEMENTED, "unknown method %s", path));
        } else if (srv->methods[c->method].kind == GYRO_RPC_BIDI_STREAMING) {
            bidi_recv(c, NULL);
        } else {
            dispatch(c);
        }
        return;
    case ST_BIDI_RECV:
        if (!success) {
            record_call(c, lost_code(c));
            ctx_free(c);
            return;
        }
        reply_clear(&c->reply);
        if (!c->payload) {
            if (grpc_call_failed_before_recv_message(c->call)) { /* cancelled, not half-closed */
                record_call(c, lost_code(c));
                ctx_free(c);
            } else {
                finish(c, GYRO_RPC_OK);
            }
            return;
        }
        dispatch(c);
        return;
    case ST_SENDING:
        if (!success) {
            record_call(c, lost_code(c));
            end_call(c);
            return;
        }
        stream_next(c);
        return;
    case ST_FINAL:
        if (c->close_started) /* a parked-capable call: its close batch says whether it was cancelled */
            record_call(c, success && !(c->close_done && c->close_cancelled) ? c->code : lost_code(c));
        else
            record_call(c, success && !c->close_cancelled ? c->code : lost_code(c));
        end_call(c);
        return;
    case ST_PARKED:
    case ST_ENDED:
        return; /* no batch of the main tag is out in these states */
    }
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    const int64_t wait_ns = w->srv->opt.batch_wait_us * 1000;
    for (;;) {
        gpr_timespec until = w->parked ? gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC),
                                                      gpr_time_from_millis(GYRO_RPC_WAKE_MS, GPR_TIMESPAN))
                                       : gpr_inf_future(GPR_CLOCK_REALTIME);
        if (w->n_pending) { /* a batch is being gathered: wait no longer than its time */
            int64_t left = w->b->calls[0]->t_queued + wait_ns - now_ns();
            /* core 1.51 rounds a deadline up to the next millisecond: "now" would block up to
             * 1 ms, so a batch that is due (or batch_wait_us 0: take only what is ready) polls
             * with a deadline in the past, which returns at once */
            gpr_timespec t = left <= 0 ? gpr_inf_past(GPR_CLOCK_MONOTONIC)
                                       : gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC), gpr_time_from_nanos(left, GPR_TIMESPAN));
            if (!w->parked || gpr_time_cmp(t, until) < 0) until = t;
        }
        grpc_event ev = grpc_completion_queue_next(w->cq, until, NULL);
        if (ev.type == GRPC_QUEUE_SHUTDOWN) break;
        if (ev.type == GRPC_OP_COMPLETE) {
            if ((uintptr_t)ev.tag & 1) on_close((call_ctx *)((char *)ev.tag - 1));
            else on_event(ev.tag, ev.success);
        }
        /* batch_wait_us 0: run the batch once the queue has nothing more ready (a poll timed
         * out); else at its time (a full batch ran as soon as it was full) */
        if (w->n_pending && (wait_ns == 0 ? ev.type == GRPC_QUEUE_TIMEOUT
                                          : now_ns() >= w->b->calls[0]->t_queued + wait_ns))
            flush_batch(w);
        if (w->parked) wake_parked(w);
    }
    return NULL;
}

/* ---- server lifecycle ---------------------------------------------------------------------- */

static void server_destroy_parts(gyro_rpc_server *s)
{
    if (s->server) grpc_server_destroy(s->server);
    if (s->workers)
        for (int i = 0; i < s->n_workers; i++) {
            for (call_ctx *c = s->workers[i].spare, *next; c; c = next) {
                next = c->park_next;
                ctx_destroy(c);
            }
            batch_buf *b = s->workers[i].b;
            if (b) {
                free(b->calls);
                free(b->live);
                free(b->requests);
                free(b->replies);
                free(b->codes);
                free(b);
            }
            if (s->workers[i].cq) {
                grpc_completion_queue_shutdown(s->workers[i].cq);
                while (grpc_completion_queue_next(s->workers[i].cq, gpr_inf_future(GPR_CLOCK_REALTIME),
                                                  NULL).type != GRPC_QUEUE_SHUTDOWN) {
                }
                grpc_completion_queue_destroy(s->workers[i].cq);
            }
            free((void *)s->workers[i].stats.counts);
            free((void *)s->workers[i].stats.latency);
            free((void *)s->workers[i].stats.sum_ns);
        }
    if (s->shutdown_cq) {
        grpc_completion_queue_shutdown(s->shutdown_cq);
        while (grpc_completion_queue_next(s->shutdown_cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL).type !=
               GRPC_QUEUE_SHUTDOWN) {
        }
        grpc_completion_queue_destroy(s->shutdown_cq);
    }
    free(s->workers);
    free(s->handles);
    free(s);
    grpc_shutdown();
}

/* ---- descriptor exhaustion ----------------------------------------------------------------------
 * gRPC core 1.51 (src/core/lib/iomgr/tcp_server_posix.cc, on_read) re-arms its listener after
 * accept4 fails with EAGAIN, EWOULDBLOCK or ECONNABORTED, but on any other error (EMFILE,
 * ENFILE) it logs "Failed accept4" and never polls that listener again: one burst of
 * connections past RLIMIT_NOFILE and the port is dead until restart, with no event the
 * application could see. So gyro interposes accept4 (this definition in the executable wins
 * over libc's for libgrpc's calls; the real call is the raw system call) and, once a server has
 * started, turns exhaustion into the libev/nginx remedy: close the reserve descriptor, accept
 * the pending connection and close it at once (that client sees a reset instead of a hang),
 * reopen the reserve, and report EAGAIN so that core re-arms the listener. Before any server
 * started, errors pass through unchanged. gyro_rpc_server_start also raises the soft
 * RLIMIT_NOFILE to the hard limit, so this only happens when the hard limit is reached. */
static atomic_int fd_reserve = -1;      /* an open /dev/null kept for the moment of EMFILE */
static atomic_int fd_reserve_armed;     /* 1 once a server has started */
static atomic_ulong fd_shed;            /* connections closed at once for lack of descriptors */

int accept4(int sockfd, struct sockaddr *addr, socklen_t *addrlen, int flags)
{
    int r = (int)syscall(SYS_accept4, sockfd, addr, addrlen, flags);
    if (r >= 0 || (errno != EMFILE && errno != ENFILE) || !atomic_load(&fd_reserve_armed)) return r;
    int reserve = atomic_exchange(&fd_reserve, -1);
    if (reserve >= 0) close(reserve);
    int c = (int)syscall(SYS_accept4, sockfd, NULL, NULL, SOCK_CLOEXEC);
    if (c >= 0) close(c);
    int fresh = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (fresh >= 0) {
        int none = -1;
        if (!atomic_compare_exchange_strong(&fd_reserve, &none, fresh)) close(fresh);
    }
    unsigned long n = atomic_fetch_add(&fd_shed, 1) + 1;
    if (n == 1 || n % 1000 == 0)
        fprintf(stderr, "gyro serve: out of file descriptors: %lu connection%s refused so far "
                        "(raise ulimit -n)\n", n, n == 1 ? "" : "s");
    errno = EAGAIN;
    return -1;
}

/* Raise the soft descriptor limit to the hard one and open the reserve descriptor. */
static void fd_reserve_setup(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        (void)setrlimit(RLIMIT_NOFILE, &rl);
    }
    if (atomic_load(&fd_reserve) < 0) {
        int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        int none = -1;
        if (fd >= 0 && !atomic_compare_exchange_strong(&fd_reserve, &none, fd)) close(fd);
    }
    atomic_store(&fd_reserve_armed, 1);
}

gyro_status gyro_rpc_server_start(const gyro_rpc_server_options *opt,
                                  const gyro_rpc_method *methods, int n_methods, void *ctx,
                                  gyro_rpc_server **out)
{
    *out = NULL;
    if (!opt || !opt->addr || opt->threads < 1 || opt->threads > 256 || opt->pool_threads < 0 ||
        opt->pool_threads > 256 || opt->max_request_bytes < 1 || opt->max_request_bytes > INT32_MAX ||
        opt->max_buffer_bytes < 0 || opt->max_batch < 0 || opt->max_batch > 4096 ||
        opt->batch_wait_us < 0 || opt->batch_wait_us > 10000000 ||
        (opt->max_batch > 1 && opt->pool_threads < 1) ||
        (opt->tls_cert_pem == NULL) != (opt->tls_key_pem == NULL) ||
        (opt->tls_client_ca_pem && !opt->tls_cert_pem))
        return gyro_error_set(GYRO_ERR_USAGE, "invalid server options");
    gyro_rpc_server *s = calloc(1, sizeof *s);
    if (!s) return gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    s->opt = *opt;
    if (s->opt.requests_per_method < 1) s->opt.requests_per_method = 32;
    s->methods = methods;
    s->n_methods = n_methods;
    s->ctx = ctx;
    fd_reserve_setup();
    grpc_init();

    /* SO_REUSEPORT off (core's default is on): with it a second server on a busy port binds
     * silently and takes half of the connections, and HOST:0 binds one ephemeral port per
     * completion queue. Off, a busy port makes grpc_server_add_http2_port return 0.
     *
     * A resource quota bounds what the transport holds. gRPC core 1.51 enforces
     * GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH only once the whole message has arrived (the chttp2
     * flow-control window grows to the length the message header declares; grpc/grpc#43012),
     * so without a quota a client declaring a 300 MB request makes the server buffer 300 MB
     * before the RESOURCE_EXHAUSTED, and a few such clients exhaust memory; bursts of calls
     * that arrive faster than they are handled (or are cancelled at once) are held the same
     * way. With the quota, core slows the flow-control windows as it fills and, when it is
     * full, resets streams with RESOURCE_EXHAUSTED ("Buffers full") instead of allocating. */
    long quota = opt->max_buffer_bytes;
    if (quota == 0) quota = 16 * opt->max_request_bytes > (64L << 20) ? 16 * opt->max_request_bytes : 64L << 20;
    grpc_resource_quota *rq = grpc_resource_quota_create("gyro-serve");
    if (!rq) {
        server_destroy_parts(s);
        return gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    }
    grpc_resource_quota_resize(rq, (size_t)quota);
    grpc_arg args[3];
    args[0].type = GRPC_ARG_INTEGER;
    args[0].key = GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH;
    args[0].value.integer = (int)opt->max_request_bytes;
    args[1].type = GRPC_ARG_INTEGER;
    args[1].key = GRPC_ARG_ALLOW_REUSEPORT;
    args[1].value.integer = 0;
    args[2].type = GRPC_ARG_POINTER;
    args[2].key = GRPC_ARG_RESOURCE_QUOTA;
    args[2].value.pointer.p = rq;
    args[2].value.pointer.vtable = grpc_resource_quota_arg_vtable();
    grpc_channel_args cargs = {3, args};
    s->server = grpc_server_create(&cargs, NULL);
    grpc_resource_quota_unref(rq); /* the server holds its own reference */
    s->handles = calloc((size_t)(n_methods ? n_methods : 1), sizeof *s->handles);
    s->n_workers = opt->threads + opt->pool_threads;
    s->workers = calloc((size_t)s->n_workers, sizeof *s->workers);
    if (!s->server || !s->handles || !s->workers) {
        server_destroy_parts(s);
        return gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    }
    for (int i = 0; i < n_methods; i++) {
        s->handles[i] = grpc_server_register_method(
            s->server, methods[i].path, NULL,
            methods[i].kind == GYRO_RPC_BIDI_STREAMING ? GRPC_SRM_PAYLOAD_NONE
                                                       : GRPC_SRM_PAYLOAD_READ_INITIAL_BYTE_BUFFER,
            0);
        if (!s->handles[i]) {
            server_destroy_parts(s);
            return gyro_error_set(GYRO_ERR_USAGE, "cannot register method %s", methods[i].path);
        }
    }
    size_t ncount = (size_t)(n_methods + 1) * GYRO_RPC_CODE_COUNT;
    for (int i = 0; i < s->n_workers; i++) {
        worker *w = &s->workers[i];
        w->srv = s;
        w->index = i;
        w->inference = i >= opt->threads;
        w->stats.counts = calloc(ncount, sizeof(_Atomic uint64_t));
        w->stats.latency = calloc((size_t)(n_methods + 1) * GYRO_RPC_LATENCY_BUCKETS, sizeof(_Atomic uint64_t));
        w->stats.sum_ns = calloc((size_t)(n_methods + 1), sizeof(_Atomic uint64_t));
        w->cq = grpc_completion_queue_create_for_next(NULL);
        int batch_ok = 1;
        if (w->inference && opt->max_batch > 1 && opt->batch) {
            size_t nb = (size_t)opt->max_batch;
            batch_buf *b = w->b = calloc(1, sizeof *b);
            batch_ok = b && (b->calls = malloc(nb * sizeof *b->calls)) && (b->live = malloc(nb * sizeof *b->live)) &&
                       (b->requests = malloc(nb * sizeof *b->requests)) &&
                       (b->replies = malloc(nb * sizeof *b->replies)) && (b->codes = malloc(nb * sizeof *b->codes));
        }
        if (!w->stats.counts || !w->stats.latency || !w->stats.sum_ns || !w->cq || !batch_ok) {
            server_destroy_parts(s);
            return gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
        }
        grpc_server_register_completion_queue(s->server, w->cq, NULL);
    }
    s->shutdown_cq = grpc_completion_queue_create_for_next(NULL);
    grpc_server_register_completion_queue(s->server, s->shutdown_cq, NULL);

    grpc_server_credentials *creds;
    if (opt->tls_cert_pem) {
        grpc_ssl_pem_key_cert_pair pair = {opt->tls_key_pem, opt->tls_cert_pem};
        creds = grpc_ssl_server_credentials_create_ex(
            opt->tls_client_ca_pem, &pair, 1,
            opt->tls_client_ca_pem ? GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY
                                   : GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE,
            NULL);
    } else {
        creds = grpc_insecure_server_credentials_create();
    }
    if (!creds) {
        server_destroy_parts(s);
        return gyro_error_set(GYRO_ERR_USAGE, "cannot create server credentials");
    }
    s->port = grpc_server_add_http2_port(s->server, opt->addr, creds);
    grpc_server_credentials_release(creds);
    if (s->port == 0) {
        server_destroy_parts(s);
        return gyro_error_set(GYRO_ERR_IO,
                              "cannot listen on %s: the port is in use (another server?) or the "
                              "address is not local%s", opt->addr,
                              opt->tls_cert_pem ? ", or the TLS key/certificate is invalid" : "");
    }
    grpc_server_start(s->server);
    s->t_start = now_ns();
    /* With inference workers, offloaded methods are armed on them only and the others (and
     * unknown methods) on the first `threads` workers only: a call runs where it arrived. */
    for (int i = 0; i < s->n_workers; i++) {
        worker *w = &s->workers[i];
        for (int m = 0; m < n_methods; m++) {
            if (opt->pool_threads > 0 && (methods[m].offload != 0) != w->inference) continue;
            int r = methods[m].kind == GYRO_RPC_UNARY ? s->opt.requests_per_method : 2;
            for (int k = 0; k < r; k++) arm(w, m);
        }
        if (!w->inference)
            for (int k = 0; k < 2; k++) arm(w, -1);
    }
    for (int i = 0; i < s->n_workers; i++)
        pthread_create(&s->workers[i].thread, NULL, worker_main, &s->workers[i]);
    *out = s;
    return GYRO_OK;
}

int gyro_rpc_server_port(const gyro_rpc_server *s) { return s->port; }

void gyro_rpc_server_notify(gyro_rpc_server *s)
{
    if (s) atomic_fetch_add(&s->generation, 1);
}

void gyro_rpc_server_shutdown(gyro_rpc_server *s, long grace_ms, int *cancelled)
{
    if (cancelled) *cancelled = 0;
    if (!s || s->shut_down) return;
    s->shut_down = 1;
    int tag;
    grpc_server_shutdown_and_notify(s->server, s->shutdown_cq, &tag);
    atomic_store(&s->stopping, 1); /* parked calls end now instead of holding up the grace period */
    gpr_timespec until = gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC),
                                      gpr_time_from_millis(grace_ms > 0 ? grace_ms : 0, GPR_TIMESPAN));
    grpc_event ev = grpc_completion_queue_next(s->shutdown_cq, until, NULL);
    if (ev.type == GRPC_QUEUE_TIMEOUT) {
        if (cancelled) *cancelled = atomic_load(&s->active);
        grpc_server_cancel_all_calls(s->server);
        grpc_completion_queue_next(s->shutdown_cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
    }
    /* Every context must be released before the queues shut down (a late completion on a shut
     * queue aborts inside core). Once the count reaches 0 it stays 0. */
    int64_t t = now_ns(), warned = 0;
    while (atomic_load(&s->live) > 0) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
        if (!warned && now_ns() - t > 10 * (int64_t)1000000000) {
            fprintf(stderr, "gyro serve: waiting for %d calls to release their resources\n",
                    atomic_load(&s->live));
            warned = 1;
        }
    }
    for (int i = 0; i < s->n_workers; i++) grpc_completion_queue_shutdown(s->workers[i].cq);
    for (int i = 0; i < s->n_workers; i++) pthread_join(s->workers[i].thread, NULL);
}

void gyro_rpc_server_free(gyro_rpc_server *s)
{
    if (!s) return;
    gyro_rpc_server_shutdown(s, 0, NULL);
    server_destroy_parts(s);
}

gyro_status gyro_rpc_server_stats(const gyro_rpc_server *s, gyro_rpc_stats *out)
{
    memset(out, 0, sizeof *out);
    int rows = s->n_methods + 1;
    size_t n = (size_t)rows * GYRO_RPC_CODE_COUNT, nl = (size_t)rows * GYRO_RPC_LATENCY_BUCKETS;
    out->counts = calloc(n, sizeof *out->counts);
    out->latency_by_method = calloc(nl, sizeof *out->latency_by_method);
    out->latency_sum_seconds = calloc((size_t)rows, sizeof *out->latency_sum_seconds);
    if (!out->counts || !out->latency_by_method || !out->latency_sum_seconds) {
        gyro_rpc_stats_free(out);
        return gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    }
    out->n_methods = s->n_methods;
    for (int w = 0; w < s->n_workers; w++) {
        const worker_stats *ws = &s->workers[w].stats;
        for (size_t i = 0; i < n; i++) out->counts[i] += atomic_load_explicit(&ws->counts[i], memory_order_relaxed);
        for (size_t i = 0; i < nl; i++) {
            uint64_t v = atomic_load_explicit(&ws->latency[i], memory_order_relaxed);
            out->latency_by_method[i] += v;
            out->latency[i % GYRO_RPC_LATENCY_BUCKETS] += v;
        }
        for (int m = 0; m < rows; m++)
            out->latency_sum_seconds[m] += (double)atomic_load_explicit(&ws->sum_ns[m], memory_order_relaxed) / 1e9;
    }
    out->in_flight = atomic_load(&s->active);
    out->batches = atomic_load_explicit(&s->batches, memory_order_relaxed);
    out->batched_calls = atomic_load_explicit(&s->batched_calls, memory_order_relaxed);
    out->uptime_seconds = (double)(now_ns() - s->t_start) / 1e9;
    return GYRO_OK;
}

void gyro_rpc_stats_free(gyro_rpc_stats *st)
{
    if (!st) return;
    free(st->counts);
    free(st->latency_by_method);
    free(st->latency_sum_seconds);
    st->counts = NULL;
    st->latency_by_method = NULL;
    st->latency_sum_seconds = NULL;
}

double gyro_rpc_stats_percentile(const gyro_rpc_stats *st, double pct)
{
    uint64_t total = 0;
    for (int b = 0; b < GYRO_RPC_LATENCY_BUCKETS; b++) total += st->latency[b];
    if (!total) return 0;
    double want = pct / 100.0 * (double)total;
    uint64_t acc = 0;
    for (int b = 0; b < GYRO_RPC_LATENCY_BUCKETS; b++) {
        acc += st->latency[b];
        if ((double)acc >= want && st->latency[b]) return gyro_rpc_latency_bound(b);
    }
    return gyro_rpc_latency_bound(GYRO_RPC_LATENCY_BUCKETS - 1);
}

/* ---- client -------------------------------------------------------------------------------- */

struct gyro_rpc_client {
    grpc_channel *channel;
    grpc_completion_queue *cq; /* pluck */
};

struct gyro_rpc_stream {
    gyro_rpc_client *c;
    grpc_call *call;
    grpc_metadata_array initial_md, trailing_md;
    grpc_status_code status;
    grpc_slice details;
    int got_initial_md;
    int ended;                 /* the status arrived while receiving */
    int status_tag, op_tag;    /* addresses used as tags */
};

gyro_status gyro_rpc_client_new(const char *target, const char *ca_pem, const char *cert_pem,
                                const char *key_pem, const char *name_override,
                                gyro_rpc_client **out)
{
    *out = NULL;
    if (!target || (cert_pem == NULL) != (key_pem == NULL) || (cert_pem && !ca_pem))
        return gyro_error_set(GYRO_ERR_USAGE, "invalid client options");
    gyro_rpc_client *c = calloc(1, sizeof *c);
    if (!c) return gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    grpc_init();
    grpc_channel_credentials *creds;
    if (ca_pem) {
        grpc_ssl_pem_key_cert_pair pair = {key_pem, cert_pem};
        creds = grpc_ssl_credentials_create(ca_pem, cert_pem ? &pair : NULL, NULL, NULL);
    } else {
        creds = grpc_insecure_credentials_create();
    }
    grpc_arg args[1];
    grpc_channel_args cargs = {0, args};
    if (name_override) {
        args[0].type = GRPC_ARG_STRING;
        args[0].key = GRPC_SSL_TARGET_NAME_OVERRIDE_ARG;
        args[0].value.string = (char *)name_override;
        cargs.num_args = 1;
    }
    c->channel = creds ? grpc_channel_create(target, creds, &cargs) : NULL;
    if (creds) grpc_channel_credentials_release(creds);
    c->cq = grpc_completion_queue_create_for_pluck(NULL);
    if (!c->channel || !c->cq) {
        gyro_rpc_client_free(c);
        return gyro_error_set(GYRO_ERR_USAGE, "cannot create a channel to %s", target);
    }
    *out = c;
    return GYRO_OK;
}

void gyro_rpc_client_free(gyro_rpc_client *c)
{
    if (!c) return;
    if (c->channel) grpc_channel_destroy(c->channel);
    if (c->cq) {
        grpc_completion_queue_shutdown(c->cq);
        grpc_completion_queue_destroy(c->cq);
    }
    free(c);
    grpc_shutdown();
}

static int client_batch(gyro_rpc_stream *st, grpc_op *ops, size_t n)
{
    if (grpc_call_start_batch(st->call, ops, n, &st->op_tag, NULL) != GRPC_CALL_OK) return 0;
    grpc_event ev = grpc_completion_queue_pluck(st->c->cq, &st->op_tag, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
    return ev.type == GRPC_OP_COMPLETE && ev.success;
}

gyro_status gyro_rpc_stream_open(gyro_rpc_client *c, const char *path, long timeout_ms,
                                 gyro_rpc_stream **out)
{
    *out = NULL;
    gyro_rpc_stream *st = calloc(1, sizeof *st);
    if (!st) return gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    st->c = c;
    gpr_timespec deadline = timeout_ms > 0
                                ? gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC),
                                               gpr_time_from_millis(timeout_ms, GPR_TIMESPAN))
                                : gpr_inf_future(GPR_CLOCK_REALTIME);
    grpc_slice method = grpc_slice_from_copied_string(path);
    st->call = grpc_channel_create_call(c->channel, NULL, GRPC_PROPAGATE_DEFAULTS, c->cq, method, NULL,
                                        deadline, NULL);
    grpc_slice_unref(method);
    grpc_metadata_array_init(&st->initial_md);
    grpc_metadata_array_init(&st->trailing_md);
    if (!st->call) {
        free(st);
        return gyro_error_set(GYRO_ERR_UNAVAILABLE, "cannot start a call to %s", path);
    }
    grpc_op ops[1];
    memset(ops, 0, sizeof ops);
    ops[0].op = GRPC_OP_RECV_STATUS_ON_CLIENT;
    ops[0].data.recv_status_on_client.trailing_metadata = &st->trailing_md;
    ops[0].data.recv_status_on_client.status = &st->status;
    ops[0].data.recv_status_on_client.status_details = &st->details;
    if (grpc_call_start_batch(st->call, ops, 1, &st->status_tag, NULL) != GRPC_CALL_OK) {
        grpc_call_unref(st->call);
        free(st);
        return gyro_error_set(GYRO_ERR_UNAVAILABLE, "cannot start a call to %s", path);
    }
    memset(ops, 0, sizeof ops);
    ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
    client_batch(st, ops, 1);
    *out = st;
    return GYRO_OK;
}

gyro_status gyro_rpc_stream_send(gyro_rpc_stream *st, const ProtobufCMessage *m)
{
    grpc_byte_buffer *bb = pack_message(m);
    if (!bb) return gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    grpc_op ops[1];
    memset(ops, 0, sizeof ops);
    ops[0].op = GRPC_OP_SEND_MESSAGE;
    ops[0].data.send_message.send_message = bb;
    int ok = client_batch(st, ops, 1);
    grpc_byte_buffer_destroy(bb);
    return ok ? GYRO_OK : gyro_error_set(GYRO_ERR_UNAVAILABLE, "the call has ended");
}

gyro_status gyro_rpc_stream_close_send(gyro_rpc_stream *st)
{
    grpc_op ops[1];
    memset(ops, 0, sizeof ops);
    ops[0].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
    return client_batch(st, ops, 1) ? GYRO_OK : gyro_error_set(GYRO_ERR_UNAVAILABLE, "the call has ended");
}

gyro_status gyro_rpc_stream_recv(gyro_rpc_stream *st, const ProtobufCMessageDescriptor *type,
                                 ProtobufCMessage **out)
{
    *out = NULL;
    grpc_op ops[2];
    size_t n = 0;
    grpc_byte_buffer *bb = NULL;
    memset(ops, 0, sizeof ops);
    if (!st->got_initial_md) {
        ops[n].op = GRPC_OP_RECV_INITIAL_METADATA;
        ops[n].data.recv_initial_metadata.recv_initial_metadata = &st->initial_md;
        n++;
        st->got_initial_md = 1;
    }
    ops[n].op = GRPC_OP_RECV_MESSAGE;
    ops[n].data.recv_message.recv_message = &bb;
    n++;
    if (!client_batch(st, ops, n) || !bb) {
        if (bb) grpc_byte_buffer_destroy(bb);
        return GYRO_OK; /* end of stream or call failed: finish tells which */
    }
    *out = unpack_message(bb, type, NULL);
    grpc_byte_buffer_destroy(bb);
    if (!*out) return gyro_error_set(GYRO_ERR_DATA, "the server sent a response that is not a valid %s", type->name);
    return GYRO_OK;
}

void gyro_rpc_stream_cancel(gyro_rpc_stream *st) { grpc_call_cancel(st->call, NULL); }

gyro_status gyro_rpc_stream_finish(gyro_rpc_stream *st, int *code, char **details)
{
    if (details) *details = NULL;
    grpc_event ev = grpc_completion_queue_pluck(st->c->cq, &st->status_tag, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
    gyro_status rc = GYRO_OK;
    if (ev.type != GRPC_OP_COMPLETE) {
        *code = GYRO_RPC_UNKNOWN;
        rc = gyro_error_set(GYRO_ERR_INTERNAL, "no status received");
    } else {
        *code = (int)st->status;
        if (details) {
            size_t len = GRPC_SLICE_LENGTH(st->details);
            *details = malloc(len + 1);
            if (*details) {
                memcpy(*details, GRPC_SLICE_START_PTR(st->details), len);
                (*details)[len] = 0;
            }
        }
        grpc_slice_unref(st->details);
    }
    grpc_metadata_array_destroy(&st->initial_md);
    grpc_metadata_array_destroy(&st->trailing_md);
    grpc_call_unref(st->call);
    free(st);
    return rc;
}

/* ---- a handler without a server ------------------------------------------------------------- */

int gyro_rpc_call_local(const gyro_rpc_method *m, void *ctx, const uint8_t *request, size_t len,
                        int max_rounds, char *details, size_t details_size, int *n_responses)
{
    gyro_rpc_reply reply;
    memset(&reply, 0, sizeof reply);
    int code, sent = 0;
    ProtobufCMessage *req = protobuf_c_message_unpack(m->request_type, NULL, len, request);
    char why[256];
    if (!req) {
        code = gyro_rpc_reply_error(&reply, GYRO_RPC_INVALID_ARGUMENT, "request is not a valid %s message",
                                    m->request_type->name);
    } else if (!gyro_rpc_message_utf8_ok(req, why, sizeof why)) {
        code = gyro_rpc_reply_error(&reply, GYRO_RPC_INVALID_ARGUMENT, "%s", why);
    } else {
        for (int round = 1;; round++) {
            code = m->handler(ctx, 0, req, &reply);
            if (code == GYRO_RPC_CONTINUE && (m->kind != GYRO_RPC_SERVER_STREAMING || reply.n == 0))
                code = gyro_rpc_reply_error(&reply, GYRO_RPC_INTERNAL, "handler of %s continued without "
                                            "responses", m->path);
            else if (code == GYRO_RPC_WAIT && m->kind != GYRO_RPC_SERVER_STREAMING)
                code = gyro_rpc_reply_error(&reply, GYRO_RPC_INTERNAL, "handler of %s cannot wait", m->path);
            else if (code == GYRO_RPC_WAIT)
                code = GYRO_RPC_CONTINUE; /* no notifications here: wake it at once */
            else if (code != GYRO_RPC_CONTINUE && (code < 0 || code >= GYRO_RPC_CODE_COUNT))
                code = GYRO_RPC_UNKNOWN;
            if (code == GYRO_RPC_OK && m->kind != GYRO_RPC_SERVER_STREAMING && reply.n != 1)
                code = gyro_rpc_reply_error(&reply, GYRO_RPC_INTERNAL, "handler of %s produced %d responses",
                                            m->path, reply.n);
            sent += reply.n;
            for (int i = 0; i < reply.n; i++) grpc_byte_buffer_destroy(reply.msgs[i]);
            reply.n = 0;
            if (code != GYRO_RPC_CONTINUE) break;
            if (round >= max_rounds) {
                code = gyro_rpc_reply_error(&reply, GYRO_RPC_CANCELLED, "stopped after %d batches", round);
                break;
            }
        }
    }
    if (reply.state && reply.state_free) reply.state_free(reply.state);
    free(reply.msgs);
    if (req) protobuf_c_message_free_unpacked(req, NULL);
    if (details && details_size) snprintf(details, details_size, "%s", code ? reply.details : "");
    if (n_responses) *n_responses = sent;
    return code;
}

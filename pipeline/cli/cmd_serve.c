/* cmd_serve.c — `gyro serve`: the gRPC service (gyro.v1.Gyro, grpc.health.v1.Health Check and Watch,
 * grpc.reflection.v1alpha server reflection).
 *
 * The main thread only handles signals (and, every few seconds of a busy server, gives glibc's
 * free heap memory back: trim_heap): SIGTERM/SIGINT/SIGHUP are blocked in every thread
 * (main.c blocks them and re-executes gyro before OpenBLAS's load-time threads exist; the
 * pthread_sigmask here is for callers of gyro_cmd_serve that skip main) and taken here with
 * sigwait, so a second signal during a slow reload waits its turn; SIGPIPE is ignored.
 *   SIGHUP   reload the --model file; a file that fails to load is refused and the old model
 *            keeps serving (a message on stderr either way).
 *   SIGTERM  health turns NOT_SERVING; calls are still served for --drain-ms; then the server
 *            stops accepting calls, running calls get --grace-ms to finish, the rest are
 *            cancelled; the counters are printed and the process exits 0.
 * With --metrics-addr a second listener (pipeline/metrics_http.h) serves the Prometheus text of
 * gyro_service_metrics until the gRPC server has stopped.
 */
#include <errno.h>
#include <malloc.h>
#include <stddef.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "models/core/atomic_file.h"
#include "models/core/blas.h"
#include "pipeline/cli/cli.h"
#include "pipeline/cli/opts.h"
#include "pipeline/grpc_core.h"
#include "pipeline/metrics_http.h"
#include "pipeline/service.h"

typedef struct serve_args {
    const char *model, *emb, *policy, *composite, *hrm, *addr, *cert, *key, *ca, *port_file, *metrics_addr;
    long threads, pool, max_bytes, max_buffer, max_text, drain_ms, grace_ms, max_batch, batch_wait_us;
    const char *train_dir;
    long train_epochs, train_dim, train_examples, train_file_bytes;
    double train_seconds;
} serve_args;

static const gyro_opt serve_opts[] = {
    GYRO_O_STR("model", 'm', serve_args, model, "FILE", NULL, "intent classifier to serve (reloaded on SIGHUP)"),
    GYRO_O_STR("embeddings", 't', serve_args, emb, "FILE", NULL,
               "embedding table for Embed and Neighbors (from gyro char2vec train or gyro convert)"),
    GYRO_O_STR("policy", 0, serve_args, policy, "FILE", NULL, "reasoning policy for Reason (from gyro rl finetune)"),
    GYRO_O_STR("composite-policy", 0, serve_args, composite, "FILE", NULL,
               "composite-intent policy for Reason with environment \"composite\" (from gyro rl finetune "
               "--env composite)",
               .man = "The input is an utterance, the steps are the atoms emitted greedily and <stop>, the "
                      "answer is the emitted set joined with '+', as gyro reason --env composite prints "
                      "them. Without it such requests are UNAVAILABLE."),
    GYRO_O_STR("hrm-model", 0, serve_args, hrm, "FILE", NULL,
               "Sudoku model for Reason with environment \"sudoku\" (from gyro hrm train)",
               .man = "The input is a puzzle of 81 characters (digits, '.' or '0' for blanks); the steps are "
                      "the model's segments with the board after each, the answer the last board, as gyro "
                      "reason --env sudoku prints them. A malformed or unsolvable puzzle gets "
                      "INVALID_ARGUMENT; without --hrm-model such requests are UNAVAILABLE."),
    GYRO_O_STR("addr", 0, serve_args, addr, "HOST:PORT", "127.0.0.1:50051", "listen address (port 0 = any free port)"),
    GYRO_O_LONG("threads", 'j', serve_args, threads, "N", "2", 1, 64, "completion-queue threads"),
    GYRO_O_LONG("pool", 0, serve_args, pool, "N", "2", 0, 64,
                "inference threads for Classify, Normalize, Neighbors and Reason, so health and Stats "
                "never wait behind a model (0 = run them on the queue threads)",
                .man = "Each inference thread has its own completion queue and runs the handlers of the calls "
                       "that arrive on it, with no hand-off to another thread."),
    GYRO_O_LONG("max-batch", 0, serve_args, max_batch, "N", "1", 1, 1024,
                "dynamic batching: an inference thread classifies up to N Classify calls in one "
                "batch (1 = one call at a time)",
                .man = "As Triton's dynamic batcher: each inference thread gathers the Classify calls it "
                       "receives, up to N, waiting at most --batch-wait-us after the first arrived (0: "
                       "those already received), while it handles its other events, and runs them as one "
                       "batch (one forward pass of a transformer over the utterances "
                       "padded to the longest; an n-gram model classifies them one after the other); each "
                       "call gets the answer a single call would. Needs --pool 1 or more."),
    GYRO_O_LONG("batch-wait-us", 0, serve_args, batch_wait_us, "US", "0", 0, 1000000,
                "with --max-batch, wait at most US microseconds for more calls to fill a batch (0 = take "
                "only the calls already queued)"),
    GYRO_O_STR("tls-cert", 0, serve_args, cert, "FILE", NULL, "PEM certificate chain; enables TLS (needs --tls-key)"),
    GYRO_O_STR("tls-key", 0, serve_args, key, "FILE", NULL, "PEM private key"),
    GYRO_O_STR("tls-client-ca", 0, serve_args, ca, "FILE", NULL,
               "PEM roots: require and verify client certificates (mutual TLS)"),
    GYRO_O_LONG("max-request-bytes", 0, serve_args, max_bytes, "N", "4194304", 16, 1L << 30,
                "larger requests get RESOURCE_EXHAUSTED"),
    GYRO_O_LONG("max-buffer-bytes", 0, serve_args, max_buffer, "N", "0", 0, 1L << 40,
                "memory the transport may hold for all calls at once; past it, calls get "
                "RESOURCE_EXHAUSTED (0 = 16 x --max-request-bytes, at least 64 MiB)",
                .man = "gRPC core reads a whole request before comparing it with --max-request-bytes, "
                       "so this bounds what oversized requests, and bursts of calls, can make the "
                       "server hold."),
    GYRO_O_LONG("max-text-bytes", 0, serve_args, max_text, "N", "1048576", 1, 1L << 30,
                "longer texts (Classify, ClassifyStream, Embed, Reason input, each Normalize document) get "
                "INVALID_ARGUMENT"),
    GYRO_O_LONG("drain-ms", 0, serve_args, drain_ms, "N", "0", 0, 3600000,
                "on SIGTERM, keep serving with health NOT_SERVING this long"),
    GYRO_O_LONG("grace-ms", 0, serve_args, grace_ms, "N", "5000", 0, 3600000,
                "then let running calls finish before cancelling"),
    GYRO_O_STR("port-file", 0, serve_args, port_file, "FILE", NULL, "write the bound port to FILE once listening"),
    GYRO_O_STR("metrics-addr", 0, serve_args, metrics_addr, "HOST:PORT", NULL,
               "serve Prometheus metrics at http://HOST:PORT/metrics (port 0 = any free port)",
               .man = "Plain HTTP/1.1 on its own thread: calls by method and status code "
                      "(grpc_server_handled_total), cumulative latency histograms of unary methods "
                      "(grpc_server_handling_seconds), calls in flight, uptime, health, the served model "
                      "(gyro_model_info{version}, load time and duration), reloads by result and whether a "
                      "training runs (gyro_training_running). The bound address is printed on stderr."),
    GYRO_O_SECTION("Training over gRPC (TrainEmbeddings, TrainClassifier):"),
    GYRO_O_STR("train-dir", 0, serve_args, train_dir, "DIR", NULL,
               "enable training: data files are read and trained tables and models written under DIR only",
               .man = "A request names files relative to DIR; a path with '..' is INVALID_ARGUMENT, one that "
                      "resolves outside DIR (an absolute path, a symbolic link) PERMISSION_DENIED. Outputs are "
                      "written atomically; a trained classifier is then served (the swap SIGHUP makes, and SIGHUP "
                      "reloads that file afterwards), and a trained table replaces the one Embed and Neighbors "
                      "answer from. One training at a time (RESOURCE_EXHAUSTED beyond), on its "
                      "own thread; a cancelled call stops it and writes nothing. Without --train-dir the training "
                      "methods answer UNAVAILABLE."),
    GYRO_O_LONG("train-max-epochs", 0, serve_args, train_epochs, "N", "100", 1, 100000,
                "larger epochs in a training request are INVALID_ARGUMENT"),
    GYRO_O_LONG("train-max-dim", 0, serve_args, train_dim, "N", "512", 1, 4096,
                "larger dimensions in a training request are INVALID_ARGUMENT"),
    GYRO_O_LONG("train-max-examples", 0, serve_args, train_examples, "N", "1000000", 1, 1L << 40,
                "most examples or documents one training reads"),
    GYRO_O_LONG("train-max-file-bytes", 0, serve_args, train_file_bytes, "N", "268435456", 1, 1L << 50,
                "largest data file a training reads from --train-dir"),
    GYRO_O_DOUBLE("train-max-seconds", 0, serve_args, train_seconds, "S", "3600", 0, 0,
                  "a training still running after S seconds stops with DEADLINE_EXCEEDED, writing nothing"),
    GYRO_O_END,
};

const gyro_cmd_spec gyro_spec_serve = {
    "serve", "[options]",
    "Serve gyro over gRPC: gyro.v1.Gyro (Classify, ClassifyStream, Normalize, Embed, Neighbors, "
    "Reason, Stats, and with --train-dir TrainEmbeddings and TrainClassifier), grpc.health.v1.Health (Check, Watch) and server reflection "
    "(grpc.reflection.v1alpha and v1, for grpcurl and other generic clients).",
    "Signals: SIGHUP reloads the model; SIGTERM or SIGINT drains and exits 0.",
    serve_opts,
    NULL,
};

/* Read a whole (small) file into a NUL-terminated string. */
static gyro_status read_file(const char *path, char **out)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) return gyro_error_set(GYRO_ERR_IO, "%s: cannot open", path);
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (n < cap - 1) break;
        if (cap > (1u << 24)) {
            free(buf);
            fclose(f);
            return gyro_error_set(GYRO_ERR_LIMIT, "%s: larger than 16 MiB", path);
        }
        char *b = realloc(buf, cap * 2);
        if (!b) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = b;
        cap *= 2;
    }
    int err = ferror(f);
    fclose(f);
    if (!buf) return gyro_error_set(GYRO_ERR_NOMEM, "%s: out of memory", path);
    if (err) {
        free(buf);
        return gyro_error_set(GYRO_ERR_IO, "%s: read error", path);
    }
    buf[n] = 0;
    *out = buf;
    return GYRO_OK;
}

static gyro_status write_port(const char *path, int port)
{
    gyro_atomic_file f;
    gyro_status st = gyro_atomic_open(&f, path);
    if (st != GYRO_OK) return st;
    fprintf(f.fp, "%d\n", port);
    return gyro_atomic_commit(&f);
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

/* The running server: its service, transport and the PEM texts it was started with. */
typedef struct serving {
    gyro_service *svc;
    gyro_rpc_server *srv;
    gyro_metrics_http *metrics;
    char *cert_pem, *key_pem, *ca_pem;
    gyro_rpc_batch_handler *batch; /* (n_methods) the service's batch handlers */
} serving;

static void serving_free(serving *v)
{
    gyro_metrics_http_stop(v->metrics);
    gyro_rpc_server_free(v->srv);
    gyro_service_free(v->svc);
    free(v->cert_pem);
    free(v->key_pem);
    free(v->ca_pem);
    free(v->batch);
}

/* The metrics listener's document: the service's Prometheus text. */
static gyro_status render_metrics(void *ctx, char **text, size_t *len)
{
    serving *v = ctx;
    return gyro_service_metrics(v->svc, v->srv, text, len);
}

/* Load the files, start listening, announce it (and write --port-file). */
static gyro_status start(const serve_args *o, serving *v)
{
    gyro_status st = GYRO_OK;
    if (o->cert && (st = read_file(o->cert, &v->cert_pem)) != GYRO_OK) return st;
    if (o->key && (st = read_file(o->key, &v->key_pem)) != GYRO_OK) return st;
    if (o->ca && (st = read_file(o->ca, &v->ca_pem)) != GYRO_OK) return st;
    gyro_service_options so = {o->model, o->emb, o->policy, (int)(o->threads + o->pool), 5, 100, o->composite,
                               (size_t)o->max_text, o->hrm, o->train_dir,
                               {NULL, (int)o->train_epochs, (int)o->train_dim, o->train_examples,
                                o->train_file_bytes, o->train_seconds}, (int)o->max_batch};
    if ((st = gyro_service_new(&so, &v->svc)) != GYRO_OK) return st;
    int n_methods;
    const gyro_rpc_method *methods = gyro_service_methods(&n_methods);
    if (!(v->batch = calloc((size_t)n_methods, sizeof *v->batch))) return gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    gyro_service_batch_handlers(v->batch);
    gyro_rpc_server_options ro = {o->addr, (int)o->threads, (int)o->pool, 32, o->max_bytes, v->cert_pem, v->key_pem, v->ca_pem,
                                  o->max_buffer, (int)o->max_batch, o->batch_wait_us, v->batch};
    if ((st = gyro_rpc_server_start(&ro, methods, n_methods, v->svc, &v->srv)) != GYRO_OK) return st;
    gyro_service_attach(v->svc, v->srv);
    fprintf(stderr, "gyro serve: listening on %s (port %d, %s%s), %ld threads, pool %ld, batches of up to %ld "
            "(wait %ld us), model %s\n", o->addr,
            gyro_rpc_server_port(v->srv), o->cert ? "TLS" : "plaintext", o->ca ? " with client certificates" : "",
            o->threads, o->pool, o->max_batch, o->batch_wait_us, o->model ? gyro_service_model_version(v->svc) : "(none)");
    if (o->metrics_addr) {
        if ((st = gyro_metrics_http_start(o->metrics_addr, render_metrics, v, &v->metrics)) != GYRO_OK) return st;
        fprintf(stderr, "gyro serve: metrics on %s (port %d) at /metrics\n", o->metrics_addr,
                gyro_metrics_http_port(v->metrics));
    }
    if (o->port_file) st = write_port(o->port_file, gyro_rpc_server_port(v->srv));
    return st;
}

/* Calls finished so far (every method and status), or 0 when the counters cannot be read. */
static uint64_t calls_done(const gyro_rpc_server *srv)
{
    gyro_rpc_stats st;
    if (gyro_rpc_server_stats(srv, &st) != GYRO_OK) return 0;
    uint64_t n = 0;
    for (size_t i = 0; i < (size_t)(st.n_methods + 1) * GYRO_RPC_CODE_COUNT; i++) n += st.counts[i];
    gyro_rpc_stats_free(&st);
    return n;
}

/* Give the free memory of glibc's heaps back to the system after bursts. The server's memory
 * in use returns to its base after a burst of calls (cancelled ones, oversized requests read
 * by the transport, many calls queued at once), but glibc keeps what was freed inside its
 * arenas (one per thread that allocated, up to 8 per core) and only returns the top of each
 * heap: after 18,000 cancelled calls and 12 oversized requests the server held 48 MB in its
 * arenas with 5 MB in use, and the RSS stayed there (MALLOC_ARENA_MAX=1 or 2 only lowers it
 * to 15–38 MB). malloc_trim(0) releases the free pages of every arena. It runs from this
 * signal thread at most every TRIM_PERIOD_S seconds, only after calls were served since the
 * last one and only when the arenas hold more than TRIM_MIN_FREE free bytes. */
#define TRIM_PERIOD_S 5
#define TRIM_MIN_FREE ((size_t)8 << 20)

/* Large buffers (requests and responses of megabytes, read and packed on any of the server's
 * threads) are mapped and unmapped on their own instead of growing a heap. glibc raises its mmap
 * threshold to the largest block freed so far (up to 32 MB) and its trim threshold to twice
 * that, so after one 4 MB request every later one came from a heap, and each thread's arena kept
 * a free top of up to 8 MB: malloc_trim releases the free blocks inside an arena but not the top
 * of a thread's heap (glibc 2.36 mtrim: systrim for the main arena only). After 24 requests of
 * 4 MB, 8 at a time, three arenas held 14, 10 and 6.6 MB with under 2.5 MB in use (malloc_stats),
 * 17-23 MB of RSS above the base. A fixed threshold (mallopt turns the dynamic one off) keeps
 * blocks of HEAP_MMAP_MIN and more out of the heaps and the trim threshold at glibc's 128 KB, so
 * a heap's top is given back as soon as it is freed. */
#define HEAP_MMAP_MIN (256 << 10)

static void heap_policy(void)
{
#ifdef M_MMAP_THRESHOLD
    mallopt(M_MMAP_THRESHOLD, HEAP_MMAP_MIN);
#endif
}

typedef struct trimmer {
    uint64_t calls; /* calls_done at the last check */
} trimmer;

static void trim_heap(trimmer *t, const gyro_rpc_server *srv)
{
    uint64_t calls = calls_done(srv);
    if (calls == t->calls) return; /* idle since the last check: nothing new to release */
    t->calls = calls;
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
    struct mallinfo2 mi = mallinfo2();
    if (mi.fordblks >= TRIM_MIN_FREE) malloc_trim(0);
#endif
}

/* Serve until SIGTERM or SIGINT; SIGHUP reloads the model; in between, trim the heap. */
static void wait_for_signals(const serve_args *o, const sigset_t *sigs, serving *v)
{
    (void)o; /* SIGHUP reloads the service's current file (--model or the last trained one) */
    gyro_service *svc = v->svc;
    trimmer tr = {0};
    for (;;) {
        struct timespec period = {TRIM_PERIOD_S, 0};
        int sig = sigtimedwait(sigs, NULL, &period);
        if (sig < 0) {
            if (errno == EAGAIN) trim_heap(&tr, v->srv);
            continue;
        }
        if (sig != SIGHUP) return;
        char path[4096];
        gyro_service_model_path(svc, path, sizeof path); /* --model, or the last trained classifier */
        if (!path[0]) {
            fprintf(stderr, "gyro serve: SIGHUP ignored: no --model to reload\n");
            continue;
        }
        gyro_status rs = gyro_service_reload(svc);
        if (rs == GYRO_OK)
            fprintf(stderr, "gyro serve: reloaded %s: model %s\n", path, gyro_service_model_version(svc));
        else
            fprintf(stderr, "gyro serve: reload refused, still serving model %s: %s\n",
                    gyro_service_model_version(svc), gyro_error_message());
    }
}

/* Drain (health NOT_SERVING), stop with the grace period, print the counters. */
static void shut_down(const serve_args *o, serving *v)
{
    fprintf(stderr, "gyro serve: shutting down: health NOT_SERVING, drain %ld ms, grace %ld ms\n", o->drain_ms,
            o->grace_ms);
    gyro_service_set_serving(v->svc, 0);
    if (o->drain_ms > 0) sleep_ms(o->drain_ms);
    int cancelled = 0;
    gyro_rpc_server_shutdown(v->srv, o->grace_ms, &cancelled);
    gyro_metrics_http_stop(v->metrics); /* scrapes keep working through the drain and grace */
    v->metrics = NULL;
    if (cancelled) fprintf(stderr, "gyro serve: cancelled %d calls still running after the grace period\n", cancelled);
    gyro_rpc_stats stats;
    gyro_service_attach(v->svc, NULL);
    if (gyro_rpc_server_stats(v->srv, &stats) == GYRO_OK) {
        gyro_service_print_stats(&stats, stderr);
        gyro_rpc_stats_free(&stats);
    }
}

int gyro_cmd_serve(int argc, char **argv)
{
    const char *cmd = "serve";
    serve_args o = {0};
    int first, rc = gyro_opts_parse(&gyro_spec_serve, argc, argv, &o, &first);
    if (rc != GYRO_OPTS_CONTINUE) return rc;
    if (first < argc) return gyro_cli_usage_error(cmd, "unexpected argument '%s'", argv[first]);
    if ((o.cert == NULL) != (o.key == NULL)) return gyro_cli_usage_error(cmd, "--tls-cert and --tls-key go together");
    if (o.ca && !o.cert) return gyro_cli_usage_error(cmd, "--tls-client-ca needs --tls-cert and --tls-key");
    if (!(o.train_seconds > 0)) return gyro_cli_usage_error(cmd, "--train-max-seconds must be > 0");
    if (o.max_batch > 1 && o.pool < 1) return gyro_cli_usage_error(cmd, "--max-batch needs --pool 1 or more");

    /* The server's own threads run the inferences; OpenBLAS threads on top of them would
     * oversubscribe the cores (and their spinning multiplies latency under load). */
    gyro_blas_set_threads(1);
    heap_policy();
    signal(SIGPIPE, SIG_IGN);
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL); /* before any gRPC thread exists */

    serving v = {0};
    gyro_status st = start(&o, &v);
    if (st == GYRO_OK) {
        wait_for_signals(&o, &sigs, &v);
        shut_down(&o, &v);
    }
    rc = st == GYRO_OK ? 0 : gyro_cli_fail(cmd, st);
    serving_free(&v);
    return rc;
}

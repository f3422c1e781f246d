/* cmd_serve.c — `gyro serve`: the gRPC service (gyro.v1.Gyro + grpc.health.v1.Health/Check).
 *
 * The main thread only handles signals: SIGTERM/SIGINT/SIGHUP are blocked in every thread
 * (main.c blocks them and re-executes gyro before OpenBLAS's load-time threads exist; the
 * pthread_sigmask here is for callers of gyro_cmd_serve that skip main) and taken here with
 * sigwait, so a second signal during a slow reload waits its turn; SIGPIPE is ignored.
 *   SIGHUP   reload the --model file; a file that fails to load is refused and the old model
 *            keeps serving (a message on stderr either way).
 *   SIGTERM  health turns NOT_SERVING; calls are still served for --drain-ms; then the server
 *            stops accepting calls, running calls get --grace-ms to finish, the rest are
 *            cancelled; the counters are printed and the process exits 0.
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "models/core/atomic_file.h"
#include "models/core/blas.h"
#include "pipeline/cli/cli.h"
#include "pipeline/grpc_core.h"
#include "pipeline/service.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: gyro serve [options]\n"
            "\n"
            "Serve gyro over gRPC: gyro.v1.Gyro (Classify, ClassifyStream, Normalize, Embed,\n"
            "Neighbors, Reason, Stats) and "
            "grpc.health.v1.Health/Check.\n"
            "\n"
            "  --model FILE             intent classifier to serve (reloaded on SIGHUP)\n"
            "  --embeddings FILE        embedding table for Embed and Neighbors (from gyro char2vec)\n"
            "  --policy FILE            reasoning policy for Reason (from gyro rl finetune)\n"
            "  --composite-policy FILE  composite-intent policy for Reason with environment\n"
            "                           \"composite\" (from gyro rl finetune --env composite)\n"
            "  --addr HOST:PORT         listen address (default 127.0.0.1:50051; port 0 = any free port)\n"
            "  --threads N              completion-queue threads (default 2)\n"
            "  --pool N                 inference threads for Classify, Normalize, Neighbors, Reason, so\n"
            "                           health and Stats never wait behind a model (default 2;\n"
            "                           0 = run them on the queue threads)\n"
            "  --tls-cert FILE          PEM certificate chain; enables TLS (needs --tls-key)\n"
            "  --tls-key FILE           PEM private key\n"
            "  --tls-client-ca FILE     PEM roots: require and verify client certificates (mutual TLS)\n"
            "  --max-request-bytes N    larger requests get RESOURCE_EXHAUSTED (default 4194304)\n"
            "  --max-text-bytes N       longer texts (Classify, ClassifyStream, Embed, Reason input,\n"
            "                           each Normalize document) get INVALID_ARGUMENT (default 1048576)\n"
            "  --drain-ms N             on SIGTERM, keep serving with health NOT_SERVING (default 0)\n"
            "  --grace-ms N             then let running calls finish before cancelling (default 5000)\n"
            "  --port-file FILE         write the bound port to FILE once listening\n"
            "  -h, --help               this help\n"
            "\n"
            "Signals: SIGHUP reloads the model; SIGTERM or SIGINT drains and exits 0.\n");
}

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

int gyro_cmd_serve(int argc, char **argv)
{
    const char *cmd = "serve";
    const char *model = NULL, *emb = NULL, *policy = NULL, *composite = NULL, *addr = "127.0.0.1:50051", *cert = NULL, *key = NULL, *ca = NULL, *port_file = NULL;
    long threads = 2, pool = 2, max_bytes = 4L << 20, max_text = 1L << 20, drain_ms = 0, grace_ms = 5000;
    static const struct option longopts[] = {
        {"model", required_argument, NULL, 'm'},
        {"embeddings", required_argument, NULL, 'e'},
        {"policy", required_argument, NULL, 'r'},
        {"composite-policy", required_argument, NULL, 'c'},
        {"addr", required_argument, NULL, 'a'},
        {"threads", required_argument, NULL, 't'},
        {"pool", required_argument, NULL, 'P'},
        {"tls-cert", required_argument, NULL, 'C'},
        {"tls-key", required_argument, NULL, 'K'},
        {"tls-client-ca", required_argument, NULL, 'A'},
        {"max-request-bytes", required_argument, NULL, 'b'},
        {"max-text-bytes", required_argument, NULL, 'T'},
        {"drain-ms", required_argument, NULL, 'd'},
        {"grace-ms", required_argument, NULL, 'g'},
        {"port-file", required_argument, NULL, 'p'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'm': model = optarg; break;
        case 'e': emb = optarg; break;
        case 'r': policy = optarg; break;
        case 'c': composite = optarg; break;
        case 'a': addr = optarg; break;
        case 't': if (!gyro_cli_parse_long(cmd, "--threads", optarg, 1, 64, &threads)) return 2; break;
        case 'P': if (!gyro_cli_parse_long(cmd, "--pool", optarg, 0, 64, &pool)) return 2; break;
        case 'C': cert = optarg; break;
        case 'K': key = optarg; break;
        case 'A': ca = optarg; break;
        case 'b':
            if (!gyro_cli_parse_long(cmd, "--max-request-bytes", optarg, 16, 1L << 30, &max_bytes)) return 2;
            break;
        case 'T':
            if (!gyro_cli_parse_long(cmd, "--max-text-bytes", optarg, 1, 1L << 30, &max_text)) return 2;
            break;
        case 'd': if (!gyro_cli_parse_long(cmd, "--drain-ms", optarg, 0, 3600000, &drain_ms)) return 2; break;
        case 'g': if (!gyro_cli_parse_long(cmd, "--grace-ms", optarg, 0, 3600000, &grace_ms)) return 2; break;
        case 'p': port_file = optarg; break;
        case 'h': usage(stdout); return 0;
        default:
            return gyro_cli_usage_error(cmd, "unknown option or missing argument '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc) return gyro_cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
    if ((cert == NULL) != (key == NULL)) return gyro_cli_usage_error(cmd, "--tls-cert and --tls-key go together");
    if (ca && !cert) return gyro_cli_usage_error(cmd, "--tls-client-ca needs --tls-cert and --tls-key");

    /* The server's own threads run the inferences; OpenBLAS threads on top of them would
     * oversubscribe the cores (and their spinning multiplies latency under load). */
    gyro_blas_set_threads(1);
    signal(SIGPIPE, SIG_IGN);
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL); /* before any gRPC thread exists */

    char *cert_pem = NULL, *key_pem = NULL, *ca_pem = NULL;
    gyro_service *svc = NULL;
    gyro_rpc_server *srv = NULL;
    gyro_status st = GYRO_OK;
    if (cert && (st = read_file(cert, &cert_pem)) != GYRO_OK) goto fail;
    if (key && (st = read_file(key, &key_pem)) != GYRO_OK) goto fail;
    if (ca && (st = read_file(ca, &ca_pem)) != GYRO_OK) goto fail;

    gyro_service_options so = {model, emb, policy, (int)(threads + pool), 5, 100, composite, (size_t)max_text};
    if ((st = gyro_service_new(&so, &svc)) != GYRO_OK) goto fail;
    int n_methods;
    const gyro_rpc_method *methods = gyro_service_methods(&n_methods);
    gyro_rpc_server_options ro = {addr, (int)threads, (int)pool, 32, max_bytes, cert_pem, key_pem, ca_pem};
    if ((st = gyro_rpc_server_start(&ro, methods, n_methods, svc, &srv)) != GYRO_OK) goto fail;
    gyro_service_attach(svc, srv);
    fprintf(stderr, "gyro serve: listening on %s (port %d, %s%s), %ld threads, pool %ld, model %s\n", addr,
            gyro_rpc_server_port(srv), cert ? "TLS" : "plaintext", ca ? " with client certificates" : "", threads,
            pool, model ? gyro_service_model_version(svc) : "(none)");
    if (port_file && (st = write_port(port_file, gyro_rpc_server_port(srv))) != GYRO_OK) goto fail;

    for (;;) {
        int sig = 0;
        if (sigwait(&sigs, &sig) != 0) continue;
        if (sig == SIGHUP) {
            if (!model) {
                fprintf(stderr, "gyro serve: SIGHUP ignored: no --model to reload\n");
                continue;
            }
            gyro_status rs = gyro_service_reload(svc);
            if (rs == GYRO_OK)
                fprintf(stderr, "gyro serve: reloaded %s: model %s\n", model, gyro_service_model_version(svc));
            else
                fprintf(stderr, "gyro serve: reload refused, still serving model %s: %s\n",
                        gyro_service_model_version(svc), gyro_error_message());
            continue;
        }
        break;
    }
    fprintf(stderr, "gyro serve: shutting down: health NOT_SERVING, drain %ld ms, grace %ld ms\n", drain_ms,
            grace_ms);
    gyro_service_set_serving(svc, 0);
    if (drain_ms > 0) sleep_ms(drain_ms);
    int cancelled = 0;
    gyro_rpc_server_shutdown(srv, grace_ms, &cancelled);
    if (cancelled) fprintf(stderr, "gyro serve: cancelled %d calls still running after the grace period\n", cancelled);
    gyro_rpc_stats stats;
    gyro_service_attach(svc, NULL);
    if (gyro_rpc_server_stats(srv, &stats) == GYRO_OK) {
        gyro_service_print_stats(&stats, stderr);
        gyro_rpc_stats_free(&stats);
    }
    gyro_rpc_server_free(srv);
    gyro_service_free(svc);
    free(cert_pem);
    free(key_pem);
    free(ca_pem);
    return 0;

fail:;
    int rc = gyro_cli_fail(cmd, st);
    gyro_rpc_server_free(srv);
    gyro_service_free(svc);
    free(cert_pem);
    free(key_pem);
    free(ca_pem);
    return rc;
}

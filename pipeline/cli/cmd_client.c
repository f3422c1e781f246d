/* cmd_client.c — `gyro client`: call a running `gyro serve` from the shell.
 *
 *   gyro client [options] classify [--top-k K] TEXT...   one line per TEXT
 *   gyro client [options] classify --stream              one line per stdin line (ClassifyStream)
 *   gyro client [options] normalize [TEXT...]             normalized text, one line per
 *                                                        Document (stdin without TEXT)
 *   gyro client [options] health [SERVICE]               prints SERVING / NOT_SERVING
 *   gyro client [options] stats                          counts per status code and latency
 *
 * A classify line is the top intents, tab-separated "label<TAB>probability" pairs, most probable
 * first. An empty stdin line gives an empty output line (the stream is not sent an empty text),
 * so output lines stay aligned with input lines. A non-OK gRPC status is printed as
 * "gyro client: CODE: message"; the exit status is 65 for INVALID_ARGUMENT, 1 otherwise.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/cli/cli.h"
#include "pipeline/grpc_core.h"
#include "proto/gyro.pb-c.h"
#include "proto/health.pb-c.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: gyro client [options] classify [--top-k K] TEXT...\n"
            "       gyro client [options] classify --stream [--top-k K] < lines\n"
            "       gyro client [options] normalize [--keep-traditional] [--case-fold] [--paragraphs] [TEXT...]\n"
            "       gyro client [options] health [SERVICE]\n"
            "       gyro client [options] stats\n"
            "\n"
            "Call a running 'gyro serve'.\n"
            "\n"
            "  --addr HOST:PORT       server address (default 127.0.0.1:50051)\n"
            "  --timeout-ms N         deadline of each call (default 10000; 0 = none)\n"
            "  --tls-ca FILE          use TLS and trust these PEM roots\n"
            "  --tls-cert FILE        client certificate for mutual TLS (with --tls-key)\n"
            "  --tls-key FILE         client private key\n"
            "  --server-name NAME     expected name in the server certificate\n"
            "  --top-k K              intents per text (default: the server's, 5)\n"
            "  --stream               classify stdin lines over one ClassifyStream call\n"
            "  --keep-traditional, --case-fold, --paragraphs   options of normalize\n"
            "  -h, --help             this help\n"
            "\n"
            "Exit status: 0 OK, 1 call failed, 2 usage, 65 the server rejected the input.\n");
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - n - 1, f);
        if (n < cap - 1 || cap > (1u << 24)) break;
        char *b = realloc(buf, cap * 2);
        if (!b) { free(buf); buf = NULL; break; }
        buf = b;
        cap *= 2;
    }
    fclose(f);
    if (buf) buf[n] = 0;
    return buf;
}

static int report_status(int code, const char *details)
{
    if (code == GYRO_RPC_OK) return 0;
    fprintf(stderr, "gyro client: %s: %s\n", gyro_rpc_code_name(code), details && details[0] ? details : "(no message)");
    return code == GYRO_RPC_INVALID_ARGUMENT ? 65 : 1;
}

/* One call with one request and at most one response expected per recv. */
static int unary(gyro_rpc_client *c, const char *path, long timeout_ms, const ProtobufCMessage *rq,
                 const ProtobufCMessageDescriptor *type, ProtobufCMessage **resp)
{
    gyro_rpc_stream *st;
    *resp = NULL;
    if (gyro_rpc_stream_open(c, path, timeout_ms, &st) != GYRO_OK) return gyro_cli_fail("client", GYRO_ERR_UNAVAILABLE);
    gyro_rpc_stream_send(st, rq);
    gyro_rpc_stream_close_send(st);
    gyro_status rs = gyro_rpc_stream_recv(st, type, resp);
    int code;
    char *details = NULL;
    gyro_rpc_stream_finish(st, &code, &details);
    int rc = report_status(code, details);
    free(details);
    if (rc == 0 && rs != GYRO_OK) rc = gyro_cli_fail("client", rs);
    if (rc == 0 && !*resp) {
        fprintf(stderr, "gyro client: the server sent no response\n");
        rc = 1;
    }
    if (rc != 0 && *resp) {
        protobuf_c_message_free_unpacked(*resp, NULL);
        *resp = NULL;
    }
    return rc;
}

static void print_classify(const Gyro__V1__ClassifyResponse *r)
{
    for (size_t i = 0; i < r->n_intents; i++)
        printf("%s%s\t%.4f", i ? "\t" : "", r->intents[i]->label, r->intents[i]->probability);
    printf("\n");
}

static int classify_stream(gyro_rpc_client *c, long timeout_ms, unsigned top_k)
{
    gyro_rpc_stream *st;
    if (gyro_rpc_stream_open(c, "/gyro.v1.Gyro/ClassifyStream", timeout_ms, &st) != GYRO_OK)
        return gyro_cli_fail("client", GYRO_ERR_UNAVAILABLE);
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int rc = 0;
    while ((len = getline(&line, &cap, stdin)) >= 0) {
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = 0;
        if (len == 0) {
            printf("\n");
            continue;
        }
        Gyro__V1__ClassifyRequest rq = GYRO__V1__CLASSIFY_REQUEST__INIT;
        rq.text = line;
        rq.top_k = top_k;
        if (gyro_rpc_stream_send(st, &rq.base) != GYRO_OK) break;
        ProtobufCMessage *m = NULL;
        if (gyro_rpc_stream_recv(st, &gyro__v1__classify_response__descriptor, &m) != GYRO_OK || !m) break;
        print_classify((Gyro__V1__ClassifyResponse *)m);
        fflush(stdout);
        protobuf_c_message_free_unpacked(m, NULL);
    }
    free(line);
    gyro_rpc_stream_close_send(st);
    ProtobufCMessage *m = NULL;
    while (gyro_rpc_stream_recv(st, &gyro__v1__classify_response__descriptor, &m) == GYRO_OK && m) {
        protobuf_c_message_free_unpacked(m, NULL);
        m = NULL;
    }
    int code;
    char *details = NULL;
    gyro_rpc_stream_finish(st, &code, &details);
    rc = report_status(code, details);
    free(details);
    return rc;
}

/* Normalize TEXTs (joined by newlines) or all of stdin in one call; print each Document's text. */
static int normalize(gyro_rpc_client *c, long timeout_ms, int n, char **texts, int keep_trad, int case_fold,
                     int paragraphs)
{
    size_t len = 0, cap = 1 << 16;
    char *buf = malloc(cap);
    if (!buf) return gyro_cli_fail("client", gyro_error_set(GYRO_ERR_NOMEM, "out of memory"));
    for (int i = 0; i < n || (n == 0 && !feof(stdin)); i++) {
        const char *t = NULL;
        size_t tl = 0;
        char chunk[1 << 16];
        if (n) {
            t = texts[i];
            tl = strlen(t) + 1;
        } else {
            tl = fread(chunk, 1, sizeof chunk, stdin);
            t = chunk;
            if (tl == 0) break;
        }
        if (len + tl + 1 > cap) {
            while (len + tl + 1 > cap) cap *= 2;
            char *b = realloc(buf, cap);
            if (!b) {
                free(buf);
                return gyro_cli_fail("client", gyro_error_set(GYRO_ERR_NOMEM, "out of memory"));
            }
            buf = b;
        }
        memcpy(buf + len, t, tl);
        len += tl;
        if (n) buf[len - 1] = '\n';
    }
    if (n && len) len--; /* no newline after the last TEXT */
    buf[len] = 0;
    if (strlen(buf) != len) {
        free(buf);
        fprintf(stderr, "gyro client: the input contains a NUL byte\n");
        return 65;
    }
    Gyro__V1__NormalizeRequest rq = GYRO__V1__NORMALIZE_REQUEST__INIT;
    rq.text = buf;
    rq.keep_traditional = keep_trad;
    rq.case_fold = case_fold;
    rq.paragraphs = paragraphs;
    gyro_rpc_stream *st;
    if (gyro_rpc_stream_open(c, "/gyro.v1.Gyro/Normalize", timeout_ms, &st) != GYRO_OK) {
        free(buf);
        return gyro_cli_fail("client", GYRO_ERR_UNAVAILABLE);
    }
    gyro_rpc_stream_send(st, &rq.base);
    gyro_rpc_stream_close_send(st);
    free(buf);
    ProtobufCMessage *m = NULL;
    gyro_status rs;
    while ((rs = gyro_rpc_stream_recv(st, &gyro__v1__document__descriptor, &m)) == GYRO_OK && m) {
        printf("%s\n", ((Gyro__V1__Document *)m)->text);
        protobuf_c_message_free_unpacked(m, NULL);
        m = NULL;
    }
    int code;
    char *details = NULL;
    gyro_rpc_stream_finish(st, &code, &details);
    int rc = report_status(code, details);
    free(details);
    if (rc == 0 && rs != GYRO_OK) rc = gyro_cli_fail("client", rs);
    return rc;
}

int gyro_cmd_client(int argc, char **argv)
{
    const char *cmd = "client";
    const char *addr = "127.0.0.1:50051", *ca = NULL, *cert = NULL, *key = NULL, *name = NULL;
    long timeout_ms = 10000, top_k = 0;
    int stream = 0, keep_trad = 0, case_fold = 0, paragraphs = 0;
    static const struct option longopts[] = {
        {"addr", required_argument, NULL, 'a'},      {"timeout-ms", required_argument, NULL, 'T'},
        {"tls-ca", required_argument, NULL, 'A'},    {"tls-cert", required_argument, NULL, 'C'},
        {"tls-key", required_argument, NULL, 'K'},   {"server-name", required_argument, NULL, 'n'},
        {"top-k", required_argument, NULL, 'k'},     {"stream", no_argument, NULL, 's'},
        {"keep-traditional", no_argument, NULL, 'R'}, {"case-fold", no_argument, NULL, 'F'},
        {"paragraphs", no_argument, NULL, 'G'},
        {"help", no_argument, NULL, 'h'},            {NULL, 0, NULL, 0},
    };
    optind = 1;
    opterr = 0;
    int c;
    /* options may appear before or after the subcommand */
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'a': addr = optarg; break;
        case 'T': if (!gyro_cli_parse_long(cmd, "--timeout-ms", optarg, 0, 86400000, &timeout_ms)) return 2; break;
        case 'A': ca = optarg; break;
        case 'C': cert = optarg; break;
        case 'K': key = optarg; break;
        case 'n': name = optarg; break;
        case 'k': if (!gyro_cli_parse_long(cmd, "--top-k", optarg, 1, 100000, &top_k)) return 2; break;
        case 's': stream = 1; break;
        case 'R': keep_trad = 1; break;
        case 'F': case_fold = 1; break;
        case 'G': paragraphs = 1; break;
        case 'h': usage(stdout); return 0;
        default: return gyro_cli_usage_error(cmd, "unknown option or missing argument '%s'", argv[optind - 1]);
        }
    }
    if (optind >= argc) return gyro_cli_usage_error(cmd, "missing subcommand (classify, health or stats)");
    const char *sub = argv[optind++];
    if (strcmp(sub, "classify") && strcmp(sub, "health") && strcmp(sub, "stats") && strcmp(sub, "normalize"))
        return gyro_cli_usage_error(cmd, "unknown subcommand '%s'", sub);
    if (!strcmp(sub, "classify") && !stream && optind >= argc)
        return gyro_cli_usage_error(cmd, "classify needs TEXT arguments or --stream");
    if (!strcmp(sub, "classify") && stream && optind < argc)
        return gyro_cli_usage_error(cmd, "classify --stream reads stdin; unexpected argument '%s'", argv[optind]);
    if (!strcmp(sub, "stats") && optind < argc) return gyro_cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
    if (!strcmp(sub, "health") && argc - optind > 1) return gyro_cli_usage_error(cmd, "health takes one SERVICE");
    if ((cert == NULL) != (key == NULL)) return gyro_cli_usage_error(cmd, "--tls-cert and --tls-key go together");
    if (cert && !ca) return gyro_cli_usage_error(cmd, "--tls-cert needs --tls-ca");

    char *ca_pem = NULL, *cert_pem = NULL, *key_pem = NULL;
    int rc = 0;
    if (ca && !(ca_pem = slurp(ca))) {
        fprintf(stderr, "gyro client: %s: cannot read\n", ca);
        return 1;
    }
    if (cert && (!(cert_pem = slurp(cert)) || !(key_pem = slurp(key)))) {
        fprintf(stderr, "gyro client: cannot read %s or %s\n", cert, key);
        free(ca_pem);
        free(cert_pem);
        return 1;
    }
    gyro_rpc_client *cl;
    gyro_status st = gyro_rpc_client_new(addr, ca_pem, cert_pem, key_pem, name, &cl);
    if (st != GYRO_OK) {
        rc = gyro_cli_fail(cmd, st);
        goto out;
    }
    if (!strcmp(sub, "normalize")) {
        rc = normalize(cl, timeout_ms, argc - optind, argv + optind, keep_trad, case_fold, paragraphs);
    } else if (!strcmp(sub, "health")) {
        Grpc__Health__V1__HealthCheckRequest rq = GRPC__HEALTH__V1__HEALTH_CHECK_REQUEST__INIT;
        rq.service = optind < argc ? argv[optind] : "";
        ProtobufCMessage *m;
        rc = unary(cl, "/grpc.health.v1.Health/Check", timeout_ms, &rq.base,
                   &grpc__health__v1__health_check_response__descriptor, &m);
        if (m) {
            const ProtobufCEnumValue *v = protobuf_c_enum_descriptor_get_value(
                &grpc__health__v1__health_check_response__serving_status__descriptor,
                ((Grpc__Health__V1__HealthCheckResponse *)m)->status);
            printf("%s\n", v ? v->name : "UNKNOWN");
            protobuf_c_message_free_unpacked(m, NULL);
        }
    } else if (!strcmp(sub, "stats")) {
        Gyro__V1__StatsRequest rq = GYRO__V1__STATS_REQUEST__INIT;
        ProtobufCMessage *m;
        rc = unary(cl, "/gyro.v1.Gyro/Stats", timeout_ms, &rq.base, &gyro__v1__stats_response__descriptor, &m);
        if (m) {
            Gyro__V1__StatsResponse *r = (Gyro__V1__StatsResponse *)m;
            printf("uptime_seconds\t%.3f\nmodel_version\t%s\n", r->uptime_seconds, r->model_version);
            for (size_t i = 0; i < r->n_status_counts; i++)
                printf("count\t%s\t%s\t%llu\n", r->status_counts[i]->method, r->status_counts[i]->code,
                       (unsigned long long)r->status_counts[i]->count);
            for (size_t i = 0; i < r->n_latency; i++)
                printf("latency_le_us\t%g\t%llu\n", r->latency[i]->upper_us, (unsigned long long)r->latency[i]->count);
            protobuf_c_message_free_unpacked(m, NULL);
        }
    } else if (stream) {
        rc = classify_stream(cl, timeout_ms, (unsigned)top_k);
    } else {
        for (; optind < argc && rc == 0; optind++) {
            Gyro__V1__ClassifyRequest rq = GYRO__V1__CLASSIFY_REQUEST__INIT;
            rq.text = argv[optind];
            rq.top_k = (unsigned)top_k;
            ProtobufCMessage *m;
            rc = unary(cl, "/gyro.v1.Gyro/Classify", timeout_ms, &rq.base, &gyro__v1__classify_response__descriptor, &m);
            if (m) {
                print_classify((Gyro__V1__ClassifyResponse *)m);
                protobuf_c_message_free_unpacked(m, NULL);
            }
        }
    }
    gyro_rpc_client_free(cl);
out:
    free(ca_pem);
    free(cert_pem);
    free(key_pem);
    return rc;
}

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
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/cli/cli.h"
#include "pipeline/cli/opts.h"
#include "pipeline/grpc_core.h"
#include "proto/gyro.pb-c.h"
#include "proto/health.pb-c.h"

typedef struct client_args {
    const char *addr, *ca, *cert, *key, *name, *previous;
    long timeout_ms, top_k;
    int stream, keep_trad, case_fold, paragraphs;
} client_args;

static const gyro_opt client_opts[] = {
    GYRO_O_STR("addr", 0, client_args, addr, "HOST:PORT", "127.0.0.1:50051", "server address"),
    GYRO_O_LONG("timeout-ms", 0, client_args, timeout_ms, "N", "10000", 0, 86400000,
                "deadline of each call in milliseconds, 0 = none"),
    GYRO_O_STR("tls-ca", 0, client_args, ca, "FILE", NULL, "use TLS and trust these PEM roots"),
    GYRO_O_STR("tls-cert", 0, client_args, cert, "FILE", NULL, "client certificate for mutual TLS (with --tls-key)"),
    GYRO_O_STR("tls-key", 0, client_args, key, "FILE", NULL, "client private key"),
    GYRO_O_STR("server-name", 0, client_args, name, "NAME", NULL, "expected name in the server certificate"),
    GYRO_O_SECTION("classify:"),
    GYRO_O_LONG("top-k", 'k', client_args, top_k, "K", NULL, 1, 100000, "intents per text (default: the server's, 5)"),
    GYRO_O_FLAG("stream", 0, client_args, stream, "classify the lines of stdin over one ClassifyStream call"),
    GYRO_O_STR("previous", 0, client_args, previous, "TEXT", NULL,
               "the previous turn of the dialogue, sent with every text (models trained with --context read it)"),
    GYRO_O_SECTION("normalize:"),
    GYRO_O_FLAG("keep-traditional", 0, client_args, keep_trad, "keep Traditional characters"),
    GYRO_O_FLAG("case-fold", 0, client_args, case_fold, "apply Unicode case folding"),
    GYRO_O_FLAG("paragraphs", 0, client_args, paragraphs, "a document is a paragraph (blank-line separated)"),
    GYRO_O_END,
};

const gyro_cmd_spec gyro_spec_client = {
    "client", "[options] classify [--top-k K] [--previous TEXT] TEXT...\n"
              "[options] classify --stream [--top-k K] < lines\n"
              "[options] normalize [--keep-traditional] [--case-fold] [--paragraphs] [TEXT...]\n"
              "[options] health [SERVICE]\n"
              "[options] stats",
    "Call a running 'gyro serve'. Options may come before or after the subcommand.",
    "Exit status: 0 OK, 1 call failed, 2 usage, 65 the server rejected the input.",
    client_opts,
    NULL,
};

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

/* Finish the call on st and report the server's status; when that is OK, report rs, the status
 * of the client's last receive (GYRO_OK: nothing to report). Returns the exit status: 0, 65 for
 * INVALID_ARGUMENT, else 1. */
static int finish_call(gyro_rpc_stream *st, gyro_status rs)
{
    int code, rc = 0;
    char *details = NULL;
    gyro_rpc_stream_finish(st, &code, &details);
    if (code != GYRO_RPC_OK) {
        fprintf(stderr, "gyro client: %s: %s\n", gyro_rpc_code_name(code), details && details[0] ? details : "(no message)");
        rc = code == GYRO_RPC_INVALID_ARGUMENT ? 65 : 1;
    }
    free(details);
    if (rc == 0 && rs != GYRO_OK) rc = gyro_cli_fail("client", rs);
    return rc;
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
    int rc = finish_call(st, rs);
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
    return finish_call(st, GYRO_OK);
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
    return finish_call(st, rs);
}

/* The usage checks of subcommand `sub` with its operands argv[0..n-1]; 0 when they hold. */
static int check_args(const client_args *o, const char *sub, int n, char **argv)
{
    const char *cmd = "client";
    if (strcmp(sub, "classify") && strcmp(sub, "health") && strcmp(sub, "stats") && strcmp(sub, "normalize"))
        return gyro_cli_usage_error(cmd, "unknown subcommand '%s'", sub);
    if (!strcmp(sub, "classify") && !o->stream && n == 0)
        return gyro_cli_usage_error(cmd, "classify needs TEXT arguments or --stream");
    if (!strcmp(sub, "classify") && o->stream && n > 0)
        return gyro_cli_usage_error(cmd, "classify --stream reads stdin; unexpected argument '%s'", argv[0]);
    if (!strcmp(sub, "stats") && n > 0) return gyro_cli_usage_error(cmd, "unexpected argument '%s'", argv[0]);
    if (!strcmp(sub, "health") && n > 1) return gyro_cli_usage_error(cmd, "health takes one SERVICE");
    if ((o->cert == NULL) != (o->key == NULL)) return gyro_cli_usage_error(cmd, "--tls-cert and --tls-key go together");
    if (o->cert && !o->ca) return gyro_cli_usage_error(cmd, "--tls-cert needs --tls-ca");
    return 0;
}

/* A client of o->addr with the PEM files of the TLS options; returns 0 or the exit status. */
static int connect_client(const client_args *o, gyro_rpc_client **cl)
{
    char *ca_pem = NULL, *cert_pem = NULL, *key_pem = NULL;
    int rc = 0;
    if (o->ca && !(ca_pem = slurp(o->ca))) {
        fprintf(stderr, "gyro client: %s: cannot read\n", o->ca);
        return 1;
    }
    if (o->cert && (!(cert_pem = slurp(o->cert)) || !(key_pem = slurp(o->key)))) {
        fprintf(stderr, "gyro client: cannot read %s or %s\n", o->cert, o->key);
        rc = 1;
    }
    gyro_status st = rc ? GYRO_OK : gyro_rpc_client_new(o->addr, ca_pem, cert_pem, key_pem, o->name, cl);
    if (st != GYRO_OK) rc = gyro_cli_fail("client", st);
    free(ca_pem);
    free(cert_pem);
    free(key_pem);
    return rc;
}

static int health(gyro_rpc_client *cl, long timeout_ms, const char *service)
{
    Grpc__Health__V1__HealthCheckRequest rq = GRPC__HEALTH__V1__HEALTH_CHECK_REQUEST__INIT;
    rq.service = (char *)service;
    ProtobufCMessage *m;
    int rc = unary(cl, "/grpc.health.v1.Health/Check", timeout_ms, &rq.base,
                   &grpc__health__v1__health_check_response__descriptor, &m);
    if (m) {
        const ProtobufCEnumValue *v = protobuf_c_enum_descriptor_get_value(
            &grpc__health__v1__health_check_response__serving_status__descriptor,
            ((Grpc__Health__V1__HealthCheckResponse *)m)->status);
        printf("%s\n", v ? v->name : "UNKNOWN");
        protobuf_c_message_free_unpacked(m, NULL);
    }
    return rc;
}

static int stats(gyro_rpc_client *cl, long timeout_ms)
{
    Gyro__V1__StatsRequest rq = GYRO__V1__STATS_REQUEST__INIT;
    ProtobufCMessage *m;
    int rc = unary(cl, "/gyro.v1.Gyro/Stats", timeout_ms, &rq.base, &gyro__v1__stats_response__descriptor, &m);
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
    return rc;
}

/* One Classify call per text; stops at the first failed call. */
static int classify_texts(gyro_rpc_client *cl, long timeout_ms, unsigned top_k, const char *previous, int n,
                          char **texts)
{
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        Gyro__V1__ClassifyRequest rq = GYRO__V1__CLASSIFY_REQUEST__INIT;
        rq.text = texts[i];
        rq.top_k = top_k;
        rq.previous_turn = (char *)(previous ? previous : "");
        ProtobufCMessage *m;
        rc = unary(cl, "/gyro.v1.Gyro/Classify", timeout_ms, &rq.base, &gyro__v1__classify_response__descriptor, &m);
        if (m) {
            print_classify((Gyro__V1__ClassifyResponse *)m);
            protobuf_c_message_free_unpacked(m, NULL);
        }
    }
    return rc;
}

int gyro_cmd_client(int argc, char **argv)
{
    const char *cmd = "client";
    client_args o = {0};
    int first, rc = gyro_opts_parse(&gyro_spec_client, argc, argv, &o, &first); /* options anywhere */
    if (rc != GYRO_OPTS_CONTINUE) return rc;
    if (first >= argc) return gyro_cli_usage_error(cmd, "missing subcommand (classify, health or stats)");
    const char *sub = argv[first++];
    int n = argc - first;
    char **ops = argv + first;
    if ((rc = check_args(&o, sub, n, ops))) return rc;
    gyro_rpc_client *cl = NULL;
    if ((rc = connect_client(&o, &cl))) return rc;
    if (!strcmp(sub, "normalize")) rc = normalize(cl, o.timeout_ms, n, ops, o.keep_trad, o.case_fold, o.paragraphs);
    else if (!strcmp(sub, "health")) rc = health(cl, o.timeout_ms, n ? ops[0] : "");
    else if (!strcmp(sub, "stats")) rc = stats(cl, o.timeout_ms);
    else if (o.stream) rc = classify_stream(cl, o.timeout_ms, (unsigned)o.top_k);
    else rc = classify_texts(cl, o.timeout_ms, (unsigned)o.top_k, o.previous, n, ops);
    gyro_rpc_client_free(cl);
    return rc;
}

/* cmd_client.c — `gyro client`: call a running `gyro serve` from the shell.
 *
 *   gyro client [options] classify [--top-k K] TEXT...   one line per TEXT
 *   gyro client [options] classify --stream              one line per stdin line (ClassifyStream)
 *   gyro client [options] normalize [TEXT...]             normalized text, one line per
 *                                                        Document (stdin without TEXT)
 *   gyro client [options] health [SERVICE]               prints SERVING / NOT_SERVING
 *   gyro client [options] stats                          counts per status code and latency
 *   gyro client [options] watch [SERVICE] [--count N]    Health/Watch: each status as it changes
 *   gyro client [options] list                           the services, through server reflection
 *   gyro client [options] describe SERVICE               its methods, through server reflection
 *   gyro client [options] train classifier FILE | --server-path P    TrainClassifier
 *   gyro client [options] train embeddings [FILE...] | --server-path P  TrainEmbeddings
 *
 * train prints one line per TrainingProgress while the server trains,
 * "progress<TAB>stage<TAB>epoch<TAB>fraction<TAB>loss<TAB>learning rate<TAB>rate<TAB>elapsed s",
 * then "done<TAB>path written<TAB>model version (classifier)". A classifier FILE is read here in
 * any format `gyro classify train` reads (Example stream, TSV, fastText) and sent as Examples;
 * embeddings FILEs (none or '-': stdin) are UTF-8 text, one document per line, sent as
 * Documents; --server-path names a file under the server's --train-dir instead. Interrupting the
 * client cancels the call, which stops the training. train and watch have no deadline unless
 * --timeout-ms is given.
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

#include "models/train_classifier.h"
#include "pipeline/cli/cli.h"
#include "pipeline/cli/opts.h"
#include "pipeline/example_file.h"
#include "pipeline/grpc_core.h"
#include "pipeline/reflection.h"
#include "proto/gyro.pb-c.h"
#include "proto/health.pb-c.h"
#include "proto/reflection.pb-c.h"

typedef struct client_args {
    const char *addr, *ca, *cert, *key, *name, *previous;
    long timeout_ms, top_k;
    int stream, keep_trad, case_fold, paragraphs;
    long count;
    const char *output, *server_path, *geometry, *arch, *emb_path;
    long dim, epochs, window, negatives, min_count;
    double lr;
    uint64_t seed;
    int euclidean;
} client_args;

#define GIVEN_TIMEOUT 1u

static const gyro_opt client_opts[] = {
    GYRO_O_STR("addr", 0, client_args, addr, "HOST:PORT", "127.0.0.1:50051", "server address"),
    GYRO_O_LONG("timeout-ms", 0, client_args, timeout_ms, "N", "10000", 0, 86400000,
                "deadline of each call in milliseconds, 0 = none (train and watch: none unless given)",
                .mark = GIVEN_TIMEOUT),
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
    GYRO_O_SECTION("watch:"),
    GYRO_O_LONG("count", 'n', client_args, count, "N", "0", 0, 1000000,
                "stop after N status messages (0 = until interrupted or the server ends the call)"),
    GYRO_O_SECTION("train (0 or nothing: the server's defaults; limits: gyro serve --train-max-*):"),
    GYRO_O_STR("output", 'o', client_args, output, "NAME", NULL,
               "file name of the result under the server's --train-dir (default: a name from the time)"),
    GYRO_O_STR("server-path", 0, client_args, server_path, "PATH", NULL,
               "train on this file under the server's --train-dir instead of sending data"),
    GYRO_O_LONG("dim", 0, client_args, dim, "N", "0", 0, 65536, "dimension"),
    GYRO_O_LONG("epochs", 0, client_args, epochs, "N", "0", 0, 1000000, "epochs"),
    GYRO_O_SEED("seed", 's', client_args, seed, "0", "random seed (0: 1)"),
    GYRO_O_STR("geometry", 0, client_args, geometry, "G", NULL, "classifier: hyperbolic, euclidean or lorentz"),
    GYRO_O_STR("arch", 0, client_args, arch, "A", NULL, "classifier: ngrams or transformer"),
    GYRO_O_DOUBLE("lr", 0, client_args, lr, "X", "0", 0, 100, "classifier: learning rate"),
    GYRO_O_STR("embeddings-path", 0, client_args, emb_path, "PATH", NULL,
               "classifier: start from this table under the server's --train-dir (train embeddings' output)"),
    GYRO_O_LONG("window", 0, client_args, window, "N", "0", 0, 100, "embeddings: window"),
    GYRO_O_LONG("negatives", 0, client_args, negatives, "N", "0", 0, 100, "embeddings: negative samples"),
    GYRO_O_LONG("min-count", 0, client_args, min_count, "N", "0", 0, 1L << 40,
                "embeddings: drop characters seen fewer times (0: 1)"),
    GYRO_O_FLAG("euclidean", 0, client_args, euclidean, "embeddings: Euclidean skip-gram instead of the hyperboloid"),
    GYRO_O_END,
};

const gyro_cmd_spec gyro_spec_client = {
    "client", "[options] classify [--top-k K] [--previous TEXT] TEXT...\n"
              "[options] classify --stream [--top-k K] < lines\n"
              "[options] normalize [--keep-traditional] [--case-fold] [--paragraphs] [TEXT...]\n"
              "[options] health [SERVICE]\n"
              "[options] stats\n"
              "[options] watch [SERVICE] [--count N]\n"
              "[options] list\n"
              "[options] describe SERVICE\n"
              "[options] train classifier [train options] (FILE | --server-path PATH)\n"
              "[options] train embeddings [train options] ([FILE...] | --server-path PATH)",
    "Call a running 'gyro serve'. Options may come before or after the subcommand. watch prints "
    "each grpc.health.v1 status as it changes; list and describe ask server reflection for the "
    "services and for a service's methods (\"name(Input) returns (Output)\", 'stream' marking a "
    "streamed side); train trains on the server (it needs gyro serve --train-dir) and prints a "
    "'progress' line per TrainingProgress and a last 'done<TAB>PATH<TAB>MODEL VERSION' line; "
    "interrupting it cancels the training.",
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

/* ---- watch, list, describe -------------------------------------------------------------------- */

/* Health/Watch: print each status as it arrives until `count` messages (0: until the call ends). */
static int watch(gyro_rpc_client *cl, long timeout_ms, const char *service, long count)
{
    Grpc__Health__V1__HealthCheckRequest rq = GRPC__HEALTH__V1__HEALTH_CHECK_REQUEST__INIT;
    rq.service = (char *)service;
    gyro_rpc_stream *st;
    if (gyro_rpc_stream_open(cl, "/grpc.health.v1.Health/Watch", timeout_ms, &st) != GYRO_OK)
        return gyro_cli_fail("client", GYRO_ERR_UNAVAILABLE);
    gyro_rpc_stream_send(st, &rq.base);
    gyro_rpc_stream_close_send(st);
    ProtobufCMessage *m = NULL;
    gyro_status rs;
    long seen = 0;
    while ((rs = gyro_rpc_stream_recv(st, &grpc__health__v1__health_check_response__descriptor, &m)) == GYRO_OK && m) {
        const ProtobufCEnumValue *v = protobuf_c_enum_descriptor_get_value(
            &grpc__health__v1__health_check_response__serving_status__descriptor,
            ((Grpc__Health__V1__HealthCheckResponse *)m)->status);
        printf("%s\n", v ? v->name : "UNKNOWN");
        fflush(stdout);
        protobuf_c_message_free_unpacked(m, NULL);
        m = NULL;
        if (count > 0 && ++seen >= count) {
            gyro_rpc_stream_cancel(st); /* enough: the call ends CANCELLED, which is ours */
            int code;
            gyro_rpc_stream_finish(st, &code, NULL);
            return 0;
        }
    }
    return finish_call(st, rs);
}

/* One reflection exchange on an open ServerReflectionInfo stream: send rq, receive its answer
 * (NULL and an exit status on failure). */
static Grpc__Reflection__V1alpha__ServerReflectionResponse *reflect(gyro_rpc_stream *st,
                                                                    const Grpc__Reflection__V1alpha__ServerReflectionRequest *rq)
{
    ProtobufCMessage *m = NULL;
    if (gyro_rpc_stream_send(st, &rq->base) != GYRO_OK) return NULL;
    if (gyro_rpc_stream_recv(st, &grpc__reflection__v1alpha__server_reflection_response__descriptor, &m) != GYRO_OK)
        return NULL;
    return (Grpc__Reflection__V1alpha__ServerReflectionResponse *)m;
}

/* Finish a reflection stream after an answer that was missing or an error: the exit status. */
static int reflect_fail(gyro_rpc_stream *st, Grpc__Reflection__V1alpha__ServerReflectionResponse *r)
{
    int rc = 1;
    if (r && r->message_response_case ==
                 GRPC__REFLECTION__V1ALPHA__SERVER_REFLECTION_RESPONSE__MESSAGE_RESPONSE_ERROR_RESPONSE) {
        fprintf(stderr, "gyro client: %s: %s\n", gyro_rpc_code_name(r->error_response->error_code),
                r->error_response->error_message);
        rc = r->error_response->error_code == GYRO_RPC_NOT_FOUND ? 65 : 1;
    }
    if (r) protobuf_c_message_free_unpacked(&r->base, NULL);
    gyro_rpc_stream_close_send(st);
    int frc = finish_call(st, GYRO_OK);
    if (!r && !frc) fprintf(stderr, "gyro client: the server sent no reflection response\n");
    return frc ? frc : rc;
}

#define REFLECTION_PATH "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo"

static int list_services(gyro_rpc_client *cl, long timeout_ms)
{
    gyro_rpc_stream *st;
    if (gyro_rpc_stream_open(cl, REFLECTION_PATH, timeout_ms, &st) != GYRO_OK)
        return gyro_cli_fail("client", GYRO_ERR_UNAVAILABLE);
    Grpc__Reflection__V1alpha__ServerReflectionRequest rq = GRPC__REFLECTION__V1ALPHA__SERVER_REFLECTION_REQUEST__INIT;
    rq.message_request_case = GRPC__REFLECTION__V1ALPHA__SERVER_REFLECTION_REQUEST__MESSAGE_REQUEST_LIST_SERVICES;
    rq.list_services = "";
    Grpc__Reflection__V1alpha__ServerReflectionResponse *r = reflect(st, &rq);
    if (!r || r->message_response_case !=
                  GRPC__REFLECTION__V1ALPHA__SERVER_REFLECTION_RESPONSE__MESSAGE_RESPONSE_LIST_SERVICES_RESPONSE)
        return reflect_fail(st, r);
    for (size_t i = 0; i < r->list_services_response->n_service; i++)
        printf("%s\n", r->list_services_response->service[i]->name);
    protobuf_c_message_free_unpacked(&r->base, NULL);
    gyro_rpc_stream_close_send(st);
    return finish_call(st, GYRO_OK);
}

static void print_method(void *ctx, const char *name, const char *in, const char *out, int cs, int ss)
{
    (void)ctx;
    printf("%s(%s%s) returns (%s%s)\n", name, cs ? "stream " : "", in, ss ? "stream " : "", out);
}

/* The methods of `service`, from the file the server's reflection says declares it. */
static int describe(gyro_rpc_client *cl, long timeout_ms, const char *service)
{
    gyro_rpc_stream *st;
    if (gyro_rpc_stream_open(cl, REFLECTION_PATH, timeout_ms, &st) != GYRO_OK)
        return gyro_cli_fail("client", GYRO_ERR_UNAVAILABLE);
    Grpc__Reflection__V1alpha__ServerReflectionRequest rq = GRPC__REFLECTION__V1ALPHA__SERVER_REFLECTION_REQUEST__INIT;
    rq.message_request_case = GRPC__REFLECTION__V1ALPHA__SERVER_REFLECTION_REQUEST__MESSAGE_REQUEST_FILE_CONTAINING_SYMBOL;
    rq.file_containing_symbol = (char *)service;
    Grpc__Reflection__V1alpha__ServerReflectionResponse *r = reflect(st, &rq);
    if (!r || r->message_response_case !=
                  GRPC__REFLECTION__V1ALPHA__SERVER_REFLECTION_RESPONSE__MESSAGE_RESPONSE_FILE_DESCRIPTOR_RESPONSE)
        return reflect_fail(st, r);
    /* the first file declares the symbol; the others are its imports */
    const Grpc__Reflection__V1alpha__FileDescriptorResponse *f = r->file_descriptor_response;
    int n = f->n_file_descriptor_proto
                ? gyro_reflection_service_methods(f->file_descriptor_proto[0].data, f->file_descriptor_proto[0].len,
                                                  service, print_method, NULL)
                : -1;
    protobuf_c_message_free_unpacked(&r->base, NULL);
    gyro_rpc_stream_close_send(st);
    int rc = finish_call(st, GYRO_OK);
    if (!rc && n < 0) {
        fprintf(stderr, "gyro client: '%s' is not a service of the server (it names another kind of symbol)\n", service);
        rc = 65;
    }
    return rc;
}

/* ---- train ------------------------------------------------------------------------------------- */

/* Receive TrainingProgress until the end: a line each, the last one "done". */
static int train_stream(gyro_rpc_stream *st)
{
    ProtobufCMessage *m = NULL;
    gyro_status rs;
    while ((rs = gyro_rpc_stream_recv(st, &gyro__v1__training_progress__descriptor, &m)) == GYRO_OK && m) {
        const Gyro__V1__TrainingProgress *p = (const Gyro__V1__TrainingProgress *)m;
        if (p->done)
            printf("done\t%s\t%s\n", p->output_path, p->model_version);
        else
            printf("progress\t%s\t%u\t%.4f\t%.4f\t%.6g\t%.6g\t%.2f\n", p->stage, p->epoch, p->fraction, p->loss,
                   p->learning_rate, p->rate, p->elapsed_seconds);
        fflush(stdout);
        protobuf_c_message_free_unpacked(m, NULL);
        m = NULL;
    }
    return finish_call(st, rs);
}

static int train_call(gyro_rpc_client *cl, long timeout_ms, const char *path, const ProtobufCMessage *rq)
{
    gyro_rpc_stream *st;
    if (gyro_rpc_stream_open(cl, path, timeout_ms, &st) != GYRO_OK) return gyro_cli_fail("client", GYRO_ERR_UNAVAILABLE);
    gyro_rpc_stream_send(st, rq);
    gyro_rpc_stream_close_send(st);
    return train_stream(st);
}

static int train_classifier(gyro_rpc_client *cl, const client_args *o, long timeout_ms, int n, char **files)
{
    Gyro__V1__TrainClassifierRequest rq = GYRO__V1__TRAIN_CLASSIFIER_REQUEST__INIT;
    rq.output = (char *)(o->output ? o->output : "");
    rq.data_path = (char *)(o->server_path ? o->server_path : "");
    rq.geometry = (char *)(o->geometry ? o->geometry : "");
    rq.arch = (char *)(o->arch ? o->arch : "");
    rq.embeddings_path = (char *)(o->emb_path ? o->emb_path : "");
    rq.dim = (uint32_t)o->dim;
    rq.epochs = (uint32_t)o->epochs;
    rq.lr = o->lr;
    rq.seed = o->seed;
    gyro_example_set set = {0};
    Gyro__V1__Example *ex = NULL, **exp = NULL;
    if (n == 1) {
        gyro_status st = gyro_example_file_read_format(&set, files[0], GYRO_EXAMPLES_AUTO, NULL);
        if (st) {
            gyro_example_set_free(&set);
            return gyro_cli_fail("client", st);
        }
        ex = calloc((size_t)set.n + 1, sizeof *ex);
        exp = calloc((size_t)set.n + 1, sizeof *exp);
        if (!ex || !exp) {
            free(ex);
            free(exp);
            gyro_example_set_free(&set);
            return gyro_cli_fail("client", gyro_error_set(GYRO_ERR_NOMEM, "out of memory"));
        }
        for (int i = 0; i < set.n; i++) {
            gyro__v1__example__init(&ex[i]);
            ex[i].text = set.text[i];
            ex[i].label = set.label[i];
            ex[i].session = (char *)(set.session[i] ? set.session[i] : "");
            ex[i].line = set.line[i];
            exp[i] = &ex[i];
        }
        rq.n_examples = (size_t)set.n;
        rq.examples = exp;
    }
    int rc = train_call(cl, timeout_ms, "/gyro.v1.Gyro/TrainClassifier", &rq.base);
    free(ex);
    free(exp);
    gyro_example_set_free(&set);
    return rc;
}

/* Append the lines of `f` as Documents (text only) to the arrays; 0 or an exit status. */
static int read_documents(FILE *f, const char *name, Gyro__V1__Document ***docs, size_t *n, size_t *cap)
{
    char *line = NULL;
    size_t lcap = 0;
    ssize_t len;
    uint64_t lineno = 0;
    while ((len = getline(&line, &lcap, f)) >= 0) {
        lineno++;
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = 0;
        if (len == 0) continue;
        if (*n == *cap) {
            size_t c = *cap ? 2 * *cap : 1024;
            Gyro__V1__Document **d = realloc(*docs, c * sizeof *d);
            if (!d) break;
            *docs = d;
            *cap = c;
        }
        Gyro__V1__Document *d = malloc(sizeof *d);
        char *text = strdup(line);
        if (!d || !text) {
            free(d);
            free(text);
            break;
        }
        gyro__v1__document__init(d);
        d->text = text;
        d->source = (char *)name;
        d->line = lineno;
        (*docs)[(*n)++] = d;
    }
    int err = ferror(f) || len >= 0;
    free(line);
    if (err) return gyro_cli_fail("client", gyro_error_set(GYRO_ERR_IO, "%s: read error or out of memory", name));
    return 0;
}

static int train_embeddings(gyro_rpc_client *cl, const client_args *o, long timeout_ms, int n, char **files)
{
    Gyro__V1__TrainEmbeddingsRequest rq = GYRO__V1__TRAIN_EMBEDDINGS_REQUEST__INIT;
    rq.output = (char *)(o->output ? o->output : "");
    rq.corpus_path = (char *)(o->server_path ? o->server_path : "");
    rq.dim = (uint32_t)o->dim;
    rq.epochs = (uint32_t)o->epochs;
    rq.window = (uint32_t)o->window;
    rq.negatives = (uint32_t)o->negatives;
    rq.min_count = (uint32_t)o->min_count;
    rq.seed = o->seed;
    rq.euclidean = o->euclidean;
    Gyro__V1__Document **docs = NULL;
    size_t nd = 0, cap = 0;
    int rc = 0;
    char *stdin_only[] = {"-"};
    if (!o->server_path && n == 0) {
        files = stdin_only;
        n = 1;
    }
    for (int i = 0; i < (o->server_path ? 0 : n) && !rc; i++) {
        FILE *f = strcmp(files[i], "-") ? fopen(files[i], "rb") : stdin;
        if (!f) {
            rc = gyro_cli_fail("client", gyro_error_set(GYRO_ERR_IO, "%s: cannot open", files[i]));
            break;
        }
        rc = read_documents(f, files[i], &docs, &nd, &cap);
        if (f != stdin) fclose(f);
    }
    if (!rc) {
        rq.n_documents = nd;
        rq.documents = docs;
        rc = train_call(cl, timeout_ms, "/gyro.v1.Gyro/TrainEmbeddings", &rq.base);
    }
    for (size_t i = 0; i < nd; i++) {
        free(docs[i]->text);
        free(docs[i]);
    }
    free(docs);
    return rc;
}

/* The usage checks of subcommand `sub` with its operands argv[0..n-1]; 0 when they hold. */
static int check_args(const client_args *o, const char *sub, int n, char **argv)
{
    const char *cmd = "client";
    static const char *const subs[] = {"classify", "health", "stats", "normalize", "watch", "list", "describe", "train"};
    int known = 0;
    for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++) known |= !strcmp(sub, subs[i]);
    if (!known) return gyro_cli_usage_error(cmd, "unknown subcommand '%s'", sub);
    if (!strcmp(sub, "watch") && n > 1) return gyro_cli_usage_error(cmd, "watch takes one SERVICE");
    if (!strcmp(sub, "list") && n > 0) return gyro_cli_usage_error(cmd, "unexpected argument '%s'", argv[0]);
    if (!strcmp(sub, "describe") && n != 1) return gyro_cli_usage_error(cmd, "describe takes one SERVICE (see 'list')");
    if (!strcmp(sub, "train")) {
        if (n < 1 || (strcmp(argv[0], "classifier") && strcmp(argv[0], "embeddings")))
            return gyro_cli_usage_error(cmd, "train needs a kind: classifier or embeddings");
        int classifier = !strcmp(argv[0], "classifier");
        if (o->server_path && n > 1)
            return gyro_cli_usage_error(cmd, "train: give FILE or --server-path, not both");
        if (classifier && !o->server_path && n != 2)
            return gyro_cli_usage_error(cmd, "train classifier needs one FILE or --server-path PATH");
    }
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
    unsigned given = 0;
    int first, rc = gyro_opts_parse_marks(&gyro_spec_client, argc, argv, &o, &first, &given); /* options anywhere */
    if (rc != GYRO_OPTS_CONTINUE) return rc;
    if (first >= argc)
        return gyro_cli_usage_error(cmd, "missing subcommand (classify, normalize, health, stats, watch, list, "
                                    "describe or train)");
    const char *sub = argv[first++];
    int n = argc - first;
    char **ops = argv + first;
    if ((rc = check_args(&o, sub, n, ops))) return rc;
    gyro_rpc_client *cl = NULL;
    if ((rc = connect_client(&o, &cl))) return rc;
    long long_timeout = (given & GIVEN_TIMEOUT) ? o.timeout_ms : 0; /* train, watch: none unless given */
    if (!strcmp(sub, "train") && !strcmp(ops[0], "classifier"))
        rc = train_classifier(cl, &o, long_timeout, n - 1, ops + 1);
    else if (!strcmp(sub, "train")) rc = train_embeddings(cl, &o, long_timeout, n - 1, ops + 1);
    else if (!strcmp(sub, "watch")) rc = watch(cl, long_timeout, n ? ops[0] : "", o.count);
    else if (!strcmp(sub, "list")) rc = list_services(cl, o.timeout_ms);
    else if (!strcmp(sub, "describe")) rc = describe(cl, o.timeout_ms, ops[0]);
    else if (!strcmp(sub, "normalize")) rc = normalize(cl, o.timeout_ms, n, ops, o.keep_trad, o.case_fold, o.paragraphs);
    else if (!strcmp(sub, "health")) rc = health(cl, o.timeout_ms, n ? ops[0] : "");
    else if (!strcmp(sub, "stats")) rc = stats(cl, o.timeout_ms);
    else if (o.stream) rc = classify_stream(cl, o.timeout_ms, (unsigned)o.top_k);
    else rc = classify_texts(cl, o.timeout_ms, (unsigned)o.top_k, o.previous, n, ops);
    gyro_rpc_client_free(cl);
    return rc;
}

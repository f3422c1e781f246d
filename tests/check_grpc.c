/* check_grpc.c — Check suite for pipeline/grpc_core: status names and mapping, the UTF-8 check
 * of unpacked messages, latency percentiles, and an in-process server and client on loopback
 * (unary, server streaming, bidi, errors, unknown method, deadline, the inference pool, the
 * counters and shutdown). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pipeline/grpc_core.h"
#include "proto/gyro.pb-c.h"
#include "proto/health.pb-c.h"

START_TEST(test_code_names)
{
    ck_assert_str_eq(gyro_rpc_code_name(GYRO_RPC_OK), "OK");
    ck_assert_str_eq(gyro_rpc_code_name(GYRO_RPC_INVALID_ARGUMENT), "INVALID_ARGUMENT");
    ck_assert_str_eq(gyro_rpc_code_name(GYRO_RPC_UNAUTHENTICATED), "UNAUTHENTICATED");
    ck_assert_str_eq(gyro_rpc_code_name(99), "UNKNOWN");
    ck_assert_str_eq(gyro_rpc_code_name(-1), "UNKNOWN");
    ck_assert_int_eq(gyro_rpc_code_from_status(GYRO_OK), GYRO_RPC_OK);
    ck_assert_int_eq(gyro_rpc_code_from_status(GYRO_ERR_DATA), GYRO_RPC_INVALID_ARGUMENT);
    ck_assert_int_eq(gyro_rpc_code_from_status(GYRO_ERR_FORMAT), GYRO_RPC_INVALID_ARGUMENT);
    ck_assert_int_eq(gyro_rpc_code_from_status(GYRO_ERR_UNAVAILABLE), GYRO_RPC_UNAVAILABLE);
    ck_assert_int_eq(gyro_rpc_code_from_status(GYRO_ERR_NOT_FOUND), GYRO_RPC_NOT_FOUND);
    ck_assert_int_eq(gyro_rpc_code_from_status(GYRO_ERR_IO), GYRO_RPC_INTERNAL);
}
END_TEST

static int text_ok(const char *text)
{
    Gyro__V1__ClassifyRequest rq = GYRO__V1__CLASSIFY_REQUEST__INIT;
    rq.text = (char *)text;
    char msg[256] = "";
    int ok = gyro_rpc_message_utf8_ok(&rq.base, msg, sizeof msg);
    if (!ok) ck_assert_ptr_nonnull(strstr(msg, "'text'"));
    return ok;
}

START_TEST(test_utf8_strings)
{
    ck_assert(text_ok(""));
    ck_assert(text_ok("播放周杰伦的稻香 ok"));
    ck_assert(text_ok("\xf0\x9f\x98\x80"));         /* U+1F600 */
    ck_assert(text_ok("\xf4\x8f\xbf\xbf"));         /* U+10FFFF */
    ck_assert(!text_ok("ab\xff"));
    ck_assert(!text_ok("\xc0\xaf"));                /* overlong '/' */
    ck_assert(!text_ok("\xe0\x80\xaf"));            /* overlong, 3 bytes */
    ck_assert(!text_ok("\xed\xa0\x80"));            /* surrogate U+D800 */
    ck_assert(!text_ok("\xf4\x90\x80\x80"));        /* above U+10FFFF */
    ck_assert(!text_ok("\xe4\xb8"));                /* truncated */
    ck_assert(!text_ok("\x80"));                    /* lone continuation */
    ck_assert(!text_ok("\xe4\xb8\x41"));            /* bad continuation */
}
END_TEST

START_TEST(test_utf8_nested_and_repeated)
{
    Gyro__V1__EmbeddingEntry e1 = GYRO__V1__EMBEDDING_ENTRY__INIT, e2 = GYRO__V1__EMBEDDING_ENTRY__INIT;
    Gyro__V1__EmbeddingEntry *ep[2] = {&e1, &e2};
    char *missing[2] = {"a", "b"};
    Gyro__V1__EmbedResponse r = GYRO__V1__EMBED_RESPONSE__INIT;
    e1.token = "字";
    e2.token = "x";
    r.n_entries = 2;
    r.entries = ep;
    r.n_missing = 2;
    r.missing = missing;
    char msg[256];
    ck_assert(gyro_rpc_message_utf8_ok(&r.base, msg, sizeof msg));
    e2.token = "\xfe";
    ck_assert(!gyro_rpc_message_utf8_ok(&r.base, msg, sizeof msg));
    ck_assert_ptr_nonnull(strstr(msg, "EmbeddingEntry"));
    e2.token = "y";
    missing[1] = "\xc3";
    ck_assert(!gyro_rpc_message_utf8_ok(&r.base, msg, sizeof msg));
    ck_assert_ptr_nonnull(strstr(msg, "'missing'"));
    ck_assert(gyro_rpc_message_utf8_ok(NULL, NULL, 0));
}
END_TEST

START_TEST(test_percentile)
{
    gyro_rpc_stats st;
    memset(&st, 0, sizeof st);
    ck_assert(gyro_rpc_stats_percentile(&st, 50) == 0);
    st.latency[0] = 90; /* <= 10 us */
    st.latency[3] = 9;  /* <= 100 us */
    st.latency[GYRO_RPC_LATENCY_BUCKETS - 1] = 1;
    ck_assert(gyro_rpc_stats_percentile(&st, 50) == gyro_rpc_latency_bound(0));
    ck_assert(gyro_rpc_stats_percentile(&st, 99) == gyro_rpc_latency_bound(3));
    ck_assert(gyro_rpc_stats_percentile(&st, 100) > 1e12);
    for (int i = 1; i < GYRO_RPC_LATENCY_BUCKETS; i++)
        ck_assert(gyro_rpc_latency_bound(i) > gyro_rpc_latency_bound(i - 1));
}
END_TEST

/* ---- in-process server --------------------------------------------------------------------- */

/* Check: "" -> SERVING; "slow" -> sleeps 300 ms first; anything else -> NOT_FOUND. */
static int h_check(void *ctx, int thread, const ProtobufCMessage *request, gyro_rpc_reply *reply)
{
    int *calls = ctx;
    __atomic_add_fetch(&calls[thread], 1, __ATOMIC_RELAXED);
    const Grpc__Health__V1__HealthCheckRequest *rq = (const Grpc__Health__V1__HealthCheckRequest *)request;
    if (!strcmp(rq->service, "slow")) usleep(300000);
    else if (rq->service[0]) return gyro_rpc_reply_error(reply, GYRO_RPC_NOT_FOUND, "no service %s", rq->service);
    Grpc__Health__V1__HealthCheckResponse r = GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__INIT;
    r.status = GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__SERVING;
    gyro_rpc_reply_send(reply, &r.base);
    return GYRO_RPC_OK;
}

/* Count: streams strlen(service) responses, then OK. */
static int h_count(void *ctx, int thread, const ProtobufCMessage *request, gyro_rpc_reply *reply)
{
    (void)ctx;
    (void)thread;
    const Grpc__Health__V1__HealthCheckRequest *rq = (const Grpc__Health__V1__HealthCheckRequest *)request;
    for (size_t i = 0; i < strlen(rq->service); i++) {
        Grpc__Health__V1__HealthCheckResponse r = GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__INIT;
        r.status = (int)i % 4;
        gyro_rpc_reply_send(reply, &r.base);
    }
    return GYRO_RPC_OK;
}

/* Chunks: the same as Count, two responses per invocation (GYRO_RPC_CONTINUE). */
static int h_chunks(void *ctx, int thread, const ProtobufCMessage *request, gyro_rpc_reply *reply)
{
    (void)ctx;
    (void)thread;
    const Grpc__Health__V1__HealthCheckRequest *rq = (const Grpc__Health__V1__HealthCheckRequest *)request;
    size_t *sent = gyro_rpc_reply_state(reply);
    if (!sent) {
        sent = calloc(1, sizeof *sent);
        gyro_rpc_reply_set_state(reply, sent, free);
    }
    for (int k = 0; k < 2 && *sent < strlen(rq->service); k++, (*sent)++) {
        Grpc__Health__V1__HealthCheckResponse r = GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__INIT;
        r.status = (int)*sent % 4;
        gyro_rpc_reply_send(reply, &r.base);
    }
    return *sent < strlen(rq->service) ? GYRO_RPC_CONTINUE : GYRO_RPC_OK;
}

/* Watch: sends the value of `watched` at once and whenever it changed (GYRO_RPC_WAIT between). */
static _Atomic int watched;

static int h_watch(void *ctx, int thread, const ProtobufCMessage *request, gyro_rpc_reply *reply)
{
    (void)ctx;
    (void)thread;
    (void)request;
    int *last = gyro_rpc_reply_state(reply);
    if (!last) {
        last = malloc(sizeof *last);
        *last = -1;
        gyro_rpc_reply_set_state(reply, last, free);
    }
    int now = watched;
    if (now != *last) {
        Grpc__Health__V1__HealthCheckResponse r = GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__INIT;
        r.status = now;
        gyro_rpc_reply_send(reply, &r.base);
        *last = now;
    }
    return GYRO_RPC_WAIT;
}

static const gyro_rpc_method methods[] = {
    {"/t.T/Check", GYRO_RPC_UNARY, &grpc__health__v1__health_check_request__descriptor, 0, h_check},
    {"/t.T/PoolCheck", GYRO_RPC_UNARY, &grpc__health__v1__health_check_request__descriptor, 1, h_check},
    {"/t.T/Count", GYRO_RPC_SERVER_STREAMING, &grpc__health__v1__health_check_request__descriptor, 0, h_count},
    {"/t.T/Bidi", GYRO_RPC_BIDI_STREAMING, &grpc__health__v1__health_check_request__descriptor, 1, h_check},
    {"/t.T/Chunks", GYRO_RPC_SERVER_STREAMING, &grpc__health__v1__health_check_request__descriptor, 1, h_chunks},
    {"/t.T/BadContinue", GYRO_RPC_UNARY, &grpc__health__v1__health_check_request__descriptor, 0, h_chunks},
    {"/t.T/Watch", GYRO_RPC_SERVER_STREAMING, &grpc__health__v1__health_check_request__descriptor, 0, h_watch},
    {"/t.T/BadWait", GYRO_RPC_UNARY, &grpc__health__v1__health_check_request__descriptor, 0, h_watch},
};
#define N_METHODS 8

static int calls[8];

static gyro_rpc_server *start(gyro_rpc_client **cl)
{
    gyro_rpc_server_options o = {"127.0.0.1:0", 2, 1, 4, 1 << 16, NULL, NULL, NULL, 0, 0, 0, NULL};
    gyro_rpc_server *s;
    ck_assert_int_eq(gyro_rpc_server_start(&o, methods, N_METHODS, calls, &s), GYRO_OK);
    ck_assert_int_gt(gyro_rpc_server_port(s), 0);
    char target[64];
    snprintf(target, sizeof target, "127.0.0.1:%d", gyro_rpc_server_port(s));
    ck_assert_int_eq(gyro_rpc_client_new(target, NULL, NULL, NULL, NULL, cl), GYRO_OK);
    return s;
}

/* One request, all responses; returns the status code and the number of responses. */
static int call(gyro_rpc_client *cl, const char *path, const char *service, long timeout_ms, int *n_resp, char **details)
{
    gyro_rpc_stream *st;
    ck_assert_int_eq(gyro_rpc_stream_open(cl, path, timeout_ms, &st), GYRO_OK);
    Grpc__Health__V1__HealthCheckRequest rq = GRPC__HEALTH__V1__HEALTH_CHECK_REQUEST__INIT;
    rq.service = (char *)service;
    gyro_rpc_stream_send(st, &rq.base);
    gyro_rpc_stream_close_send(st);
    *n_resp = 0;
    for (;;) {
        ProtobufCMessage *m = NULL;
        ck_assert_int_eq(gyro_rpc_stream_recv(st, &grpc__health__v1__health_check_response__descriptor, &m), GYRO_OK);
        if (!m) break;
        (*n_resp)++;
        protobuf_c_message_free_unpacked(m, NULL);
    }
    int code;
    ck_assert_int_eq(gyro_rpc_stream_finish(st, &code, details), GYRO_OK);
    return code;
}

START_TEST(test_server_round_trip)
{
    gyro_rpc_client *cl;
    gyro_rpc_server *s = start(&cl);
    int n;
    char *d;
    ck_assert_int_eq(call(cl, "/t.T/Check", "", 5000, &n, &d), GYRO_RPC_OK);
    ck_assert_int_eq(n, 1);
    free(d);
    ck_assert_int_eq(call(cl, "/t.T/Check", "zz", 5000, &n, &d), GYRO_RPC_NOT_FOUND);
    ck_assert_int_eq(n, 0);
    ck_assert_str_eq(d, "no service zz");
    free(d);
    ck_assert_int_eq(call(cl, "/t.T/PoolCheck", "", 5000, &n, &d), GYRO_RPC_OK);
    ck_assert_int_eq(n, 1);
    ck_assert_int_eq(calls[2], 1); /* the pool thread has index threads + 0 = 2 */
    free(d);
    ck_assert_int_eq(call(cl, "/t.T/Count", "abcdefg", 5000, &n, &d), GYRO_RPC_OK);
    ck_assert_int_eq(n, 7);
    free(d);
    ck_assert_int_eq(call(cl, "/t.T/Count", "", 5000, &n, &d), GYRO_RPC_OK);
    ck_assert_int_eq(n, 0);
    free(d);
    ck_assert_int_eq(call(cl, "/t.T/Chunks", "abcdefg", 5000, &n, &d), GYRO_RPC_OK);
    ck_assert_int_eq(n, 7);
    free(d);
    ck_assert_int_eq(call(cl, "/t.T/Chunks", "ab", 5000, &n, &d), GYRO_RPC_OK);
    ck_assert_int_eq(n, 2);
    free(d);
    ck_assert_int_eq(call(cl, "/t.T/BadContinue", "abcd", 5000, &n, &d), GYRO_RPC_INTERNAL); /* unary may not continue */
    ck_assert_int_eq(n, 0);
    free(d);
    ck_assert_int_eq(call(cl, "/t.T/Nope", "", 5000, &n, &d), GYRO_RPC_UNIMPLEMENTED);
    ck_assert_ptr_nonnull(strstr(d, "/t.T/Nope"));
    free(d);
    ck_assert_int_eq(call(cl, "/t.T/Check", "slow", 100, &n, &d), GYRO_RPC_DEADLINE_EXCEEDED);
    free(d);

    /* bidi: three requests, three answers in order, then an error ends the stream */
    gyro_rpc_stream *st;
    ck_assert_int_eq(gyro_rpc_stream_open(cl, "/t.T/Bidi", 5000, &st), GYRO_OK);
    for (int i = 0; i < 3; i++) {
        Grpc__Health__V1__HealthCheckRequest rq = GRPC__HEALTH__V1__HEALTH_CHECK_REQUEST__INIT;
        ck_assert_int_eq(gyro_rpc_stream_send(st, &rq.base), GYRO_OK);
        ProtobufCMessage *m = NULL;
        ck_assert_int_eq(gyro_rpc_stream_recv(st, &grpc__health__v1__health_check_response__descriptor, &m), GYRO_OK);
        ck_assert_ptr_nonnull(m);
        protobuf_c_message_free_unpacked(m, NULL);
    }
    Grpc__Health__V1__HealthCheckRequest bad = GRPC__HEALTH__V1__HEALTH_CHECK_REQUEST__INIT;
    bad.service = "x";
    gyro_rpc_stream_send(st, &bad.base);
    ProtobufCMessage *m = NULL;
    gyro_rpc_stream_recv(st, &grpc__health__v1__health_check_response__descriptor, &m);
    ck_assert_ptr_null(m);
    int code;
    gyro_rpc_stream_finish(st, &code, NULL);
    ck_assert_int_eq(code, GYRO_RPC_NOT_FOUND);

    usleep(400000); /* the slow call finishes on the server */
    gyro_rpc_stats stats;
    ck_assert_int_eq(gyro_rpc_server_stats(s, &stats), GYRO_OK);
    ck_assert_int_eq(stats.n_methods, N_METHODS);
    ck_assert_uint_eq(stats.counts[0 * GYRO_RPC_CODE_COUNT + GYRO_RPC_OK], 1);
    ck_assert_uint_eq(stats.counts[0 * GYRO_RPC_CODE_COUNT + GYRO_RPC_NOT_FOUND], 1);
    ck_assert_uint_eq(stats.counts[0 * GYRO_RPC_CODE_COUNT + GYRO_RPC_DEADLINE_EXCEEDED], 1);
    ck_assert_uint_eq(stats.counts[2 * GYRO_RPC_CODE_COUNT + GYRO_RPC_OK], 2);
    ck_assert_uint_eq(stats.counts[3 * GYRO_RPC_CODE_COUNT + GYRO_RPC_NOT_FOUND], 1);
    ck_assert_uint_eq(stats.counts[4 * GYRO_RPC_CODE_COUNT + GYRO_RPC_OK], 2);
    ck_assert_uint_eq(stats.counts[5 * GYRO_RPC_CODE_COUNT + GYRO_RPC_INTERNAL], 1);
    ck_assert_uint_eq(stats.counts[N_METHODS * GYRO_RPC_CODE_COUNT + GYRO_RPC_UNIMPLEMENTED], 1);
    uint64_t lat = 0;
    for (int b = 0; b < GYRO_RPC_LATENCY_BUCKETS; b++) lat += stats.latency[b];
    ck_assert_uint_eq(lat, 6); /* unary and unknown-method calls only */
    gyro_rpc_stats_free(&stats);

    int cancelled = -1;
    gyro_rpc_server_shutdown(s, 1000, &cancelled);
    ck_assert_int_eq(cancelled, 0);
    gyro_rpc_server_free(s);
    gyro_rpc_client_free(cl);
}
END_TEST

START_TEST(test_server_bad_options)
{
    gyro_rpc_server *s = (gyro_rpc_server *)1;
    gyro_rpc_server_options o = {"127.0.0.1:0", 0, 0, 4, 1 << 16, NULL, NULL, NULL, 0, 0, 0, NULL};
    ck_assert_int_eq(gyro_rpc_server_start(&o, methods, N_METHODS, calls, &s), GYRO_ERR_USAGE);
    ck_assert_ptr_null(s);
    o.threads = 1;
    o.tls_cert_pem = "x"; /* without a key */
    ck_assert_int_eq(gyro_rpc_server_start(&o, methods, N_METHODS, calls, &s), GYRO_ERR_USAGE);
    o.tls_cert_pem = NULL;
    o.addr = "256.1.1.1:1";
    ck_assert_int_eq(gyro_rpc_server_start(&o, methods, N_METHODS, calls, &s), GYRO_ERR_IO);
    ck_assert_ptr_null(s);
}
END_TEST

static gyro_rpc_stream *watch_open(gyro_rpc_client *cl, long timeout_ms)
{
    gyro_rpc_stream *st;
    ck_assert_int_eq(gyro_rpc_stream_open(cl, "/t.T/Watch", timeout_ms, &st), GYRO_OK);
    Grpc__Health__V1__HealthCheckRequest rq = GRPC__HEALTH__V1__HEALTH_CHECK_REQUEST__INIT;
    ck_assert_int_eq(gyro_rpc_stream_send(st, &rq.base), GYRO_OK);
    ck_assert_int_eq(gyro_rpc_stream_close_send(st), GYRO_OK);
    return st;
}

/* The next value on a watch, or -1 at the end of the stream. */
static int watch_next(gyro_rpc_stream *st)
{
    ProtobufCMessage *m = NULL;
    ck_assert_int_eq(gyro_rpc_stream_recv(st, &grpc__health__v1__health_check_response__descriptor, &m), GYRO_OK);
    if (!m) return -1;
    int v = ((Grpc__Health__V1__HealthCheckResponse *)m)->status;
    protobuf_c_message_free_unpacked(m, NULL);
    return v;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* GYRO_RPC_WAIT: parked calls get each change after gyro_rpc_server_notify, end on the client's
 * deadline (counted DEADLINE_EXCEEDED), and end UNAVAILABLE at shutdown at once, without
 * waiting for the grace period; a unary handler may not wait. */
START_TEST(test_server_wait)
{
    gyro_rpc_client *cl;
    gyro_rpc_server *s = start(&cl);
    watched = 1;
    gyro_rpc_stream *a = watch_open(cl, 20000), *b = watch_open(cl, 20000);
    ck_assert_int_eq(watch_next(a), 1);
    ck_assert_int_eq(watch_next(b), 1);
    watched = 2;
    gyro_rpc_server_notify(s);
    ck_assert_int_eq(watch_next(a), 2);
    ck_assert_int_eq(watch_next(b), 2);
    gyro_rpc_server_notify(s); /* no change: no message (the deadline below ends the call first) */
    gyro_rpc_stream *c = watch_open(cl, 300);
    ck_assert_int_eq(watch_next(c), 2);
    ck_assert_int_eq(watch_next(c), -1);
    int code;
    gyro_rpc_stream_finish(c, &code, NULL);
    ck_assert_int_eq(code, GYRO_RPC_DEADLINE_EXCEEDED);
    int n;
    char *d;
    ck_assert_int_eq(call(cl, "/t.T/BadWait", "", 5000, &n, &d), GYRO_RPC_INTERNAL);
    free(d);
    usleep(200000);
    gyro_rpc_stats st;
    ck_assert_int_eq(gyro_rpc_server_stats(s, &st), GYRO_OK);
    ck_assert_uint_eq(st.counts[6 * GYRO_RPC_CODE_COUNT + GYRO_RPC_DEADLINE_EXCEEDED], 1);
    ck_assert_int_eq(st.in_flight, 2); /* a and b, parked */
    gyro_rpc_stats_free(&st);
    double t0 = now_s();
    gyro_rpc_server_shutdown(s, 10000, NULL);
    ck_assert(now_s() - t0 < 3.0); /* parked calls do not hold up the 10 s grace period */
    ck_assert_int_eq(watch_next(a), -1);
    gyro_rpc_stream_finish(a, &code, NULL);
    ck_assert_int_eq(code, GYRO_RPC_UNAVAILABLE);
    ck_assert_int_eq(watch_next(b), -1);
    gyro_rpc_stream_finish(b, &code, NULL);
    ck_assert_int_eq(code, GYRO_RPC_UNAVAILABLE);
    ck_assert_int_eq(gyro_rpc_server_stats(s, &st), GYRO_OK);
    ck_assert_uint_eq(st.counts[6 * GYRO_RPC_CODE_COUNT + GYRO_RPC_UNAVAILABLE], 2);
    ck_assert_int_eq(st.in_flight, 0);
    gyro_rpc_stats_free(&st);
    gyro_rpc_client_free(cl);
    gyro_rpc_server_free(s);
}
END_TEST

int main(void)
{
    Suite *su = suite_create("grpc");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_code_names);
    tcase_add_test(tc, test_utf8_strings);
    tcase_add_test(tc, test_utf8_nested_and_repeated);
    tcase_add_test(tc, test_percentile);
    tcase_add_test(tc, test_server_round_trip);
    tcase_add_test(tc, test_server_bad_options);
    tcase_add_test(tc, test_server_wait);
    suite_add_tcase(su, tc);
    SRunner *sr = srunner_create(su);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}

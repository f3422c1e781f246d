/* check_reflection.c — Check suite for pipeline/reflection: the descriptor set compiled into
 * libgyro indexes its files, symbols of every kind and imports; malformed sets are refused. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/reflection.h"

static gyro_reflection *embedded(void)
{
    size_t len;
    const uint8_t *set = gyro_reflection_embedded(&len);
    ck_assert_uint_gt(len, 100);
    gyro_reflection *r = NULL;
    ck_assert_int_eq(gyro_reflection_new(set, len, &r), GYRO_OK);
    return r;
}

START_TEST(test_files_and_symbols)
{
    gyro_reflection *r = embedded();
    ck_assert_int_ge(gyro_reflection_n_files(r), 3);
    int gyro = gyro_reflection_find_file(r, "gyro.proto"), health = gyro_reflection_find_file(r, "health.proto");
    ck_assert_int_ge(gyro, 0);
    ck_assert_int_ge(health, 0);
    ck_assert_int_eq(gyro_reflection_find_file(r, "nope.proto"), -1);
    ck_assert_str_eq(gyro_reflection_file_name(r, gyro), "gyro.proto");
    size_t len;
    ck_assert_ptr_nonnull(gyro_reflection_file_bytes(r, gyro, &len));
    ck_assert_uint_gt(len, 100);
    static const struct { const char *sym; int kind; const char *file; } want[] = {
        {"gyro.v1", GYRO_REFL_PACKAGE, "gyro.proto"},
        {"gyro.v1.Gyro", GYRO_REFL_SERVICE, "gyro.proto"},
        {"gyro.v1.Gyro.Classify", GYRO_REFL_METHOD, "gyro.proto"},
        {".gyro.v1.ClassifyRequest", GYRO_REFL_MESSAGE, "gyro.proto"},
        {"gyro.v1.ClassifyRequest.previous_turn", GYRO_REFL_FIELD, "gyro.proto"},
        {"gyro.v1.EmbeddingModel", GYRO_REFL_ENUM, "gyro.proto"},
        {"gyro.v1.POINCARE", GYRO_REFL_ENUM_VALUE, "gyro.proto"},
        {"grpc.health.v1.HealthCheckResponse.ServingStatus", GYRO_REFL_ENUM, "health.proto"},
        {"grpc.health.v1.HealthCheckResponse.NOT_SERVING", GYRO_REFL_ENUM_VALUE, "health.proto"},
        {"grpc.health.v1.Health.Watch", GYRO_REFL_METHOD, "health.proto"},
        {"grpc.reflection.v1alpha.ServerReflectionRequest.message_request", GYRO_REFL_ONEOF, "reflection.proto"},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        int kind = 0, f = gyro_reflection_find_symbol(r, want[i].sym, &kind);
        ck_assert_msg(f >= 0, "%s not found", want[i].sym);
        ck_assert_str_eq(gyro_reflection_file_name(r, f), want[i].file);
        ck_assert_msg(kind == want[i].kind, "%s: kind %d, want %d", want[i].sym, kind, want[i].kind);
    }
    ck_assert_int_eq(gyro_reflection_find_symbol(r, "gyro.v1.Nope", NULL), -1);
    ck_assert_int_eq(gyro_reflection_find_symbol(r, "gyro.v", NULL), -1);
    ck_assert_int_eq(gyro_reflection_find_symbol(r, "gyro.v1.POINCARE.x", NULL), -1);
    int *closure = calloc((size_t)gyro_reflection_n_files(r), sizeof *closure);
    ck_assert_int_eq(gyro_reflection_closure(r, health, closure), 1); /* health.proto imports nothing */
    ck_assert_int_eq(closure[0], health);
    ck_assert_int_eq(gyro_reflection_closure(r, -1, closure), 0);
    free(closure);
    gyro_reflection_free(r);
}
END_TEST

/* A FileDescriptorSet of two files, b.proto importing a.proto, built by hand. */
static size_t put_str(uint8_t *p, int field, const char *s)
{
    size_t n = strlen(s);
    p[0] = (uint8_t)(field << 3 | 2);
    p[1] = (uint8_t)n;
    memcpy(p + 2, s, n);
    return n + 2;
}

static size_t put_file(uint8_t *p, const char *name, const char *pkg, const char *dep, const char *msg)
{
    uint8_t f[128], m[64];
    size_t n = put_str(f, 1, name);
    n += put_str(f + n, 2, pkg);
    if (dep) n += put_str(f + n, 3, dep);
    size_t mn = put_str(m, 1, msg);
    f[n++] = 4 << 3 | 2;
    f[n++] = (uint8_t)mn;
    memcpy(f + n, m, mn);
    n += mn;
    p[0] = 1 << 3 | 2;
    p[1] = (uint8_t)n;
    memcpy(p + 2, f, n);
    return n + 2;
}

START_TEST(test_imports_and_malformed)
{
    uint8_t set[512];
    size_t n = put_file(set, "a.proto", "p", NULL, "A");
    n += put_file(set + n, "b.proto", "q", "a.proto", "B");
    gyro_reflection *r = NULL;
    ck_assert_int_eq(gyro_reflection_new(set, n, &r), GYRO_OK);
    int b = gyro_reflection_find_symbol(r, "q.B", NULL), out[2];
    ck_assert_int_eq(gyro_reflection_closure(r, b, out), 2);
    ck_assert_str_eq(gyro_reflection_file_name(r, out[0]), "b.proto");
    ck_assert_str_eq(gyro_reflection_file_name(r, out[1]), "a.proto");
    gyro_reflection_free(r);
    /* truncated anywhere: refused, never a crash */
    for (size_t k = 1; k < n; k++) {
        r = NULL;
        gyro_status st = gyro_reflection_new(set, k, &r);
        if (st == GYRO_OK) gyro_reflection_free(r); /* a cut between two files is a valid shorter set */
        else ck_assert_ptr_null(r);
    }
    /* an import missing from the set */
    n = put_file(set, "b.proto", "q", "a.proto", "B");
    ck_assert_int_eq(gyro_reflection_new(set, n, &r), GYRO_ERR_FORMAT);
    /* a bad wire type */
    uint8_t bad[] = {0x0b, 0x00};
    ck_assert_int_eq(gyro_reflection_new(bad, sizeof bad, &r), GYRO_ERR_FORMAT);
    /* empty: no files */
    ck_assert_int_eq(gyro_reflection_new(bad, 0, &r), GYRO_OK);
    ck_assert_int_eq(gyro_reflection_n_files(r), 0);
    gyro_reflection_free(r);
}
END_TEST

/* The methods gyro_reflection_service_methods reports, one "name in out cs ss" line each. */
static char methods_seen[4096];

static void collect(void *ctx, const char *name, const char *in, const char *out, int cs, int ss)
{
    (void)ctx;
    size_t n = strlen(methods_seen);
    snprintf(methods_seen + n, sizeof methods_seen - n, "%s %s %s %d %d\n", name, in, out, cs, ss);
}

START_TEST(test_service_methods)
{
    gyro_reflection *r = embedded();
    size_t len;
    const uint8_t *file = gyro_reflection_file_bytes(r, gyro_reflection_find_file(r, "gyro.proto"), &len);
    methods_seen[0] = 0;
    ck_assert_int_eq(gyro_reflection_service_methods(file, len, "gyro.v1.Gyro", collect, NULL), 9);
    ck_assert_ptr_nonnull(strstr(methods_seen, "Classify gyro.v1.ClassifyRequest gyro.v1.ClassifyResponse 0 0\n"));
    ck_assert_ptr_nonnull(strstr(methods_seen, "ClassifyStream gyro.v1.ClassifyRequest gyro.v1.ClassifyResponse 1 1\n"));
    ck_assert_ptr_nonnull(strstr(methods_seen, "Normalize gyro.v1.NormalizeRequest gyro.v1.Document 0 1\n"));
    ck_assert_ptr_nonnull(strstr(methods_seen, "TrainClassifier gyro.v1.TrainClassifierRequest gyro.v1.TrainingProgress 0 1\n"));
    /* a leading '.', and without a callback: only the count */
    ck_assert_int_eq(gyro_reflection_service_methods(file, len, ".gyro.v1.Gyro", NULL, NULL), 9);
    /* not declared in this file: a message, another package's service, an unknown name */
    ck_assert_int_eq(gyro_reflection_service_methods(file, len, "gyro.v1.Example", NULL, NULL), -1);
    ck_assert_int_eq(gyro_reflection_service_methods(file, len, "grpc.health.v1.Health", NULL, NULL), -1);
    ck_assert_int_eq(gyro_reflection_service_methods(file, len, "Gyro", NULL, NULL), -1);
    const uint8_t *health = gyro_reflection_file_bytes(r, gyro_reflection_find_file(r, "health.proto"), &len);
    methods_seen[0] = 0;
    ck_assert_int_eq(gyro_reflection_service_methods(health, len, "grpc.health.v1.Health", collect, NULL), 2);
    ck_assert_str_eq(methods_seen, "Check grpc.health.v1.HealthCheckRequest grpc.health.v1.HealthCheckResponse 0 0\n"
                                   "Watch grpc.health.v1.HealthCheckRequest grpc.health.v1.HealthCheckResponse 0 1\n");
    /* malformed bytes: every truncation of the file is refused or read without a crash */
    for (size_t cut = 0; cut < len; cut++) (void)gyro_reflection_service_methods(health, cut, "grpc.health.v1.Health", NULL, NULL);
    const uint8_t bad[] = {0x32, 0x05, 0x0a, 0x7f, 'x'};
    ck_assert_int_eq(gyro_reflection_service_methods(bad, sizeof bad, "x", NULL, NULL), -1);
    gyro_reflection_free(r);
}
END_TEST

int main(void)
{
    Suite *su = suite_create("reflection");
    TCase *tc = tcase_create("index");
    tcase_add_test(tc, test_files_and_symbols);
    tcase_add_test(tc, test_imports_and_malformed);
    tcase_add_test(tc, test_service_methods);
    suite_add_tcase(su, tc);
    SRunner *sr = srunner_create(su);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}

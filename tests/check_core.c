/* check_core.c — Check suite for models/core: status codes and messages, atomic files, rng,
 * progress formatting. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <math.h>
#include <stdint.h>

#include "models/core/arena.h"
#include "models/core/atomic_file.h"
#include "models/core/crc32.h"
#include "models/core/rng.h"
#include "models/core/status.h"

START_TEST(test_status_exit_codes)
{
    ck_assert_int_eq(gyro_status_exit_code(GYRO_OK), 0);
    ck_assert_int_eq(gyro_status_exit_code(GYRO_ERR_USAGE), 2);
    ck_assert_int_eq(gyro_status_exit_code(GYRO_ERR_DATA), 65);
    ck_assert_int_eq(gyro_status_exit_code(GYRO_ERR_FORMAT), 65);
    ck_assert_int_eq(gyro_status_exit_code(GYRO_ERR_IO), 1);
    ck_assert_str_eq(gyro_status_name(GYRO_ERR_NAN), "GYRO_ERR_NAN");
    ck_assert_str_eq(gyro_status_name((gyro_status)999), "GYRO_ERR_UNKNOWN");
}
END_TEST

START_TEST(test_error_message)
{
    gyro_error_clear();
    ck_assert_str_eq(gyro_error_message(), "");
    ck_assert_int_eq(gyro_error_set(GYRO_ERR_DATA, "line %d bad", 7), GYRO_ERR_DATA);
    ck_assert_str_eq(gyro_error_message(), "line 7 bad");
    gyro_error_prefix(GYRO_ERR_DATA, "file %s", "a.txt");
    ck_assert_str_eq(gyro_error_message(), "file a.txt: line 7 bad");
    /* the current message as an argument of the next one (it used to format over itself) */
    gyro_error_set(GYRO_ERR_FORMAT, "%s: record %d: %s", "t.hyp", 2, gyro_error_message());
    ck_assert_str_eq(gyro_error_message(), "t.hyp: record 2: file a.txt: line 7 bad");
}
END_TEST

/* gyro_crc32 is the standard IEEE CRC-32 (the check value, and a bitwise reference over random
 * buffers cut at random points), so files whose CRC was computed by gyro's former table-driven
 * code read unchanged. */
START_TEST(test_crc32)
{
    ck_assert_uint_eq(gyro_crc32(0, "123456789", 9), 0xCBF43926u);
    ck_assert_uint_eq(gyro_crc32(0, "", 0), 0);
    gyro_rng r;
    gyro_rng_seed(&r, 5);
    unsigned char buf[3000];
    for (int t = 0; t < 20; t++) {
        size_t n = gyro_rng_below(&r, sizeof buf), cut = n ? gyro_rng_below(&r, (uint32_t)n) : 0;
        for (size_t i = 0; i < n; i++) buf[i] = (unsigned char)gyro_rng_below(&r, 256);
        uint32_t ref = 0xFFFFFFFFu;
        for (size_t i = 0; i < n; i++) {
            ref ^= buf[i];
            for (int k = 0; k < 8; k++) ref = (ref & 1) ? 0xEDB88320u ^ (ref >> 1) : ref >> 1;
        }
        ref = ~ref;
        ck_assert_uint_eq(gyro_crc32(0, buf, n), ref);
        ck_assert_uint_eq(gyro_crc32(gyro_crc32(0, buf, cut), buf + cut, n - cut), ref);
    }
}
END_TEST

START_TEST(test_atomic_commit_and_abort)
{
    char dir[] = "/tmp/gyro-core-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/out.bin", dir);

    gyro_atomic_file f;
    ck_assert_int_eq(gyro_atomic_open(&f, path), GYRO_OK);
    fputs("hello", f.fp);
    ck_assert_int_eq(access(path, F_OK), -1); /* not visible before commit */
    ck_assert_int_eq(gyro_atomic_commit(&f), GYRO_OK);
    FILE *in = fopen(path, "rb");
    char buf[16] = {0};
    ck_assert_uint_eq(fread(buf, 1, sizeof buf, in), 5);
    fclose(in);
    ck_assert_str_eq(buf, "hello");

    ck_assert_int_eq(gyro_atomic_open(&f, path), GYRO_OK);
    fputs("garbage", f.fp);
    gyro_atomic_abort(&f);
    in = fopen(path, "rb");
    memset(buf, 0, sizeof buf);
    ck_assert_uint_eq(fread(buf, 1, sizeof buf, in), 5); /* old content survives */
    fclose(in);
    ck_assert_str_eq(buf, "hello");

    char bad[300];
    snprintf(bad, sizeof bad, "%s/no/such/dir/x", dir);
    ck_assert_int_eq(gyro_atomic_open(&f, bad), GYRO_ERR_IO);
    ck_assert_ptr_nonnull(strstr(gyro_error_message(), "no/such/dir"));
    unlink(path);
    rmdir(dir);
}
END_TEST

START_TEST(test_rng_reproducible_and_uniform)
{
    gyro_rng a, b;
    gyro_rng_seed(&a, 42);
    gyro_rng_seed(&b, 42);
    for (int i = 0; i < 100; i++) ck_assert_uint_eq(gyro_rng_next(&a), gyro_rng_next(&b));
    gyro_rng_seed(&b, 43);
    ck_assert_uint_ne(gyro_rng_next(&a), gyro_rng_next(&b));
    double sum = 0, sumsq = 0;
    int counts[10] = {0};
    const int n = 200000;
    for (int i = 0; i < n; i++) {
        double u = gyro_rng_uniform(&a);
        ck_assert(u >= 0.0 && u < 1.0);
        counts[gyro_rng_below(&a, 10)]++;
        double z = gyro_rng_normal(&a);
        sum += z;
        sumsq += z * z;
    }
    for (int k = 0; k < 10; k++) ck_assert_int_gt(counts[k], n / 10 - n / 50);
    ck_assert_double_lt(fabs(sum / n), 0.02);
    ck_assert_double_lt(fabs(sumsq / n - 1.0), 0.03);
}
END_TEST

START_TEST(test_arena_fixed_and_growing)
{
    /* fixed: 64-byte aligned slices, exhaustion returns NULL, mark/reset reuse memory */
    gyro_arena f;
    ck_assert_int_eq(gyro_arena_init(&f, 256), GYRO_OK);
    void *a = gyro_arena_alloc(&f, 10);
    size_t mark = gyro_arena_mark(&f);
    void *b = gyro_arena_alloc(&f, 100);
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(b);
    ck_assert_uint_eq((uintptr_t)b % GYRO_ARENA_ALIGN, 0);
    ck_assert_ptr_null(gyro_arena_alloc(&f, 200));
    gyro_arena_reset(&f, mark);
    ck_assert_ptr_eq(gyro_arena_alloc(&f, 100), b);
    gyro_arena_free(&f);

    /* growing: never exhausted; slices 16-byte aligned, disjoint and intact after many blocks,
     * a large slice gets its own block without abandoning the current one */
    gyro_arena g;
    gyro_arena_init_growing(&g, 4096);
    enum { N = 3000 };
    unsigned char *p[N];
    size_t len[N];
    for (int i = 0; i < N; i++) {
        len[i] = (i % 97 == 0) ? 5000 + (size_t)i : 1 + (size_t)(i * 7919) % 200;
        p[i] = gyro_arena_alloc(&g, len[i]);
        ck_assert_ptr_nonnull(p[i]);
        ck_assert_uint_eq((uintptr_t)p[i] % 16, 0);
        memset(p[i], i & 0xFF, len[i]);
    }
    for (int i = 0; i < N; i++)
        for (size_t k = 0; k < len[i]; k++) ck_assert_uint_eq(p[i][k], (unsigned)(i & 0xFF));
    unsigned char *small1 = gyro_arena_alloc(&g, 16);
    unsigned char *big = gyro_arena_alloc(&g, 100000);
    unsigned char *small2 = gyro_arena_alloc(&g, 16);
    ck_assert_ptr_nonnull(big);
    ck_assert_ptr_eq(small2, small1 + 16); /* the big slice did not retire the current block */
    gyro_arena_free(&g);
    gyro_arena_free(&g); /* freeing an empty arena is a no-op */
}
END_TEST

int main(void)
{
    Suite *s = suite_create("core");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_status_exit_codes);
    tcase_add_test(tc, test_error_message);
    tcase_add_test(tc, test_crc32);
    tcase_add_test(tc, test_atomic_commit_and_abort);
    tcase_add_test(tc, test_rng_reproducible_and_uniform);
    tcase_add_test(tc, test_arena_fixed_and_growing);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

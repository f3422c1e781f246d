/* check_core.c — Check suite for models/core: status codes and messages, atomic files, rng,
 * progress formatting. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <math.h>

#include "models/core/atomic_file.h"
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

int main(void)
{
    Suite *s = suite_create("core");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_status_exit_codes);
    tcase_add_test(tc, test_error_message);
    tcase_add_test(tc, test_atomic_commit_and_abort);
    tcase_add_test(tc, test_rng_reproducible_and_uniform);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

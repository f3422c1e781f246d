/* check_blas.c — Check suite for models/core/blas and models/core/arena: every form of the
 * cblas product (both transpositions, strided leading dimensions, alpha/beta, degenerate
 * sizes, the shapes the layers use) against the naive reference loop, in float32 and float64;
 * the arena's alignment, exhaustion and mark/reset. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "models/core/arena.h"
#include "models/core/blas.h"
#include "models/core/rng.h"

/* One product C = alpha op(A) op(B) + beta C with random strided operands; returns the max
 * relative error of BLAS against the reference. */
static double gemm_case_f32(int ta, int tb, int m, int n, int k, int pad, float alpha, float beta,
                            uint64_t seed)
{
    gyro_rng r;
    gyro_rng_seed(&r, seed);
    int ar = ta ? k : m, ac = ta ? m : k, br = tb ? n : k, bc = tb ? k : n;
    int lda = ac + pad, ldb = bc + pad, ldc = n + pad;
    float *A = malloc(sizeof(float) * (size_t)(ar * lda + 1));
    float *B = malloc(sizeof(float) * (size_t)(br * ldb + 1));
    float *C1 = malloc(sizeof(float) * (size_t)(m * ldc + 1));
    float *C2 = malloc(sizeof(float) * (size_t)(m * ldc + 1));
    for (int i = 0; i < ar * lda; i++) A[i] = (float)(2 * gyro_rng_uniform(&r) - 1);
    for (int i = 0; i < br * ldb; i++) B[i] = (float)(2 * gyro_rng_uniform(&r) - 1);
    for (int i = 0; i < m * ldc; i++) C1[i] = C2[i] = (float)(2 * gyro_rng_uniform(&r) - 1);
    gyro_blas_gemm_f32(C1, A, B, ta, tb, alpha, beta, m, n, k, lda, ldb, ldc);
    gyro_blas_gemm_ref_f32(C2, A, B, ta, tb, alpha, beta, m, n, k, lda, ldb, ldc);
    double worst = 0;
    for (int i = 0; i < m; i++)
        for (int j = 0; j < ldc; j++) {
            double a = C1[i * ldc + j], b = C2[i * ldc + j];
            double e = fabs(a - b) / (1.0 + fabs(b));
            if (j >= n && a != b) e = 1e9; /* padding must be untouched */
            if (e > worst) worst = e;
        }
    free(A); free(B); free(C1); free(C2);
    return worst;
}

static double gemm_case_f64(int ta, int tb, int m, int n, int k, int pad, double alpha,
                            double beta, uint64_t seed)
{
    gyro_rng r;
    gyro_rng_seed(&r, seed);
    int ar = ta ? k : m, ac = ta ? m : k, br = tb ? n : k, bc = tb ? k : n;
    int lda = ac + pad, ldb = bc + pad, ldc = n + pad;
    double *A = malloc(sizeof(double) * (size_t)(ar * lda + 1));
    double *B = malloc(sizeof(double) * (size_t)(br * ldb + 1));
    double *C1 = malloc(sizeof(double) * (size_t)(m * ldc + 1));
    double *C2 = malloc(sizeof(double) * (size_t)(m * ldc + 1));
    for (int i = 0; i < ar * lda; i++) A[i] = 2 * gyro_rng_uniform(&r) - 1;
    for (int i = 0; i < br * ldb; i++) B[i] = 2 * gyro_rng_uniform(&r) - 1;
    for (int i = 0; i < m * ldc; i++) C1[i] = C2[i] = 2 * gyro_rng_uniform(&r) - 1;
    gyro_blas_gemm_f64(C1, A, B, ta, tb, alpha, beta, m, n, k, lda, ldb, ldc);
    gyro_blas_gemm_ref_f64(C2, A, B, ta, tb, alpha, beta, m, n, k, lda, ldb, ldc);
    double worst = 0;
    for (int i = 0; i < m; i++)
        for (int j = 0; j < ldc; j++) {
            double a = C1[i * ldc + j], b = C2[i * ldc + j];
            double e = fabs(a - b) / (1.0 + fabs(b));
            if (j >= n && a != b) e = 1e9;
            if (e > worst) worst = e;
        }
    free(A); free(B); free(C1); free(C2);
    return worst;
}

START_TEST(test_gemm_all_forms)
{
    static const int dims[][3] = {{1, 1, 1}, {3, 5, 7}, {17, 9, 33}, {64, 100, 100},
                                  {5, 1, 12}, {1, 40, 3}, {31, 31, 2}};
    double w32 = 0, w64 = 0;
    uint64_t seed = 1;
    for (size_t d = 0; d < sizeof dims / sizeof dims[0]; d++)
        for (int ta = 0; ta < 2; ta++)
            for (int tb = 0; tb < 2; tb++)
                for (int pad = 0; pad < 2; pad++) {
                    int m = dims[d][0], n = dims[d][1], k = dims[d][2];
                    double e = gemm_case_f32(ta, tb, m, n, k, pad * 3, 0.75f, 0.5f, seed);
                    if (e > w32) w32 = e;
                    e = gemm_case_f32(ta, tb, m, n, k, pad * 3, 1.0f, 0.0f, seed + 1);
                    if (e > w32) w32 = e;
                    e = gemm_case_f64(ta, tb, m, n, k, pad * 3, -1.25, 1.0, seed + 2);
                    if (e > w64) w64 = e;
                    seed += 3;
                }
    printf("blas: gemm vs reference, max rel error f32 %.3g, f64 %.3g\n", w32, w64);
    ck_assert_double_lt(w32, 1e-5);
    ck_assert_double_lt(w64, 1e-13);
}
END_TEST

/* The exact products of the layers (attention head slices with ld = 3A, the merge's per-head
 * slices with ld = H·C) on a model-sized problem. */
START_TEST(test_gemm_layer_shapes)
{
    const int N = 40, C = 20, H = 4, D = 6, A = H * D, T = 10, F = 30;
    double worst = 0;
    /* qkv = u Wᵀ, dU += dY W, dW += dYᵀ U */
    worst = fmax(worst, gemm_case_f32(0, 1, N, 3 * A, C, 0, 1, 0, 11));
    worst = fmax(worst, gemm_case_f32(0, 0, N, C, 3 * A, 0, 1, 1, 12));
    worst = fmax(worst, gemm_case_f32(1, 0, 3 * A, C, N, 0, 1, 1, 13));
    /* attention: q kᵀ (T×T, ld 3A) and P v */
    worst = fmax(worst, gemm_case_f32(0, 1, T, T, D, 3 * A - D, 0.4f, 0, 14));
    worst = fmax(worst, gemm_case_f32(0, 0, T, D, T, 3, 1, 0, 15));
    worst = fmax(worst, gemm_case_f32(1, 0, T, D, T, 5, 1, 1, 16));
    /* merge: O_i M_iᵀ with ld(O) = A, ld(RR) = H·C */
    worst = fmax(worst, gemm_case_f32(0, 1, N, C, D, A - D, 1, 0, 17));
    /* FFN */
    worst = fmax(worst, gemm_case_f32(0, 1, N, F, C, 0, 1, 0, 18));
    worst = fmax(worst, gemm_case_f32(1, 0, C, F, N, 0, 1, 1, 19));
    ck_assert_double_lt(worst, 1e-5);
}
END_TEST

START_TEST(test_gemm_zero_sizes)
{
    float c[4] = {1, 2, 3, 4};
    float a[4] = {1, 1, 1, 1};
    gyro_blas_gemm_f32(c, a, a, 0, 0, 1, 0, 0, 2, 2, 2, 2, 2); /* m = 0: nothing */
    ck_assert(c[0] == 1 && c[3] == 4);
    gyro_blas_gemm_f32(c, a, a, 0, 0, 1, 0.5f, 2, 2, 0, 1, 2, 2); /* k = 0: C = beta C */
    ck_assert(fabsf(c[0] - 0.5f) < 1e-7f && fabsf(c[3] - 2.0f) < 1e-7f);
}
END_TEST

START_TEST(test_threads)
{
    gyro_blas_set_threads(1);
    ck_assert_int_eq(gyro_blas_get_threads(), 1);
    gyro_blas_set_threads(0); /* treated as 1 */
    ck_assert_int_eq(gyro_blas_get_threads(), 1);
}
END_TEST

START_TEST(test_arena)
{
    gyro_arena a;
    ck_assert_int_eq(gyro_arena_init(&a, 1000), 0);
    void *p = gyro_arena_alloc(&a, 10);
    void *q = gyro_arena_alloc(&a, 100);
    ck_assert_ptr_nonnull(p);
    ck_assert_ptr_nonnull(q);
    ck_assert_int_eq((int)((uintptr_t)p % GYRO_ARENA_ALIGN), 0);
    ck_assert_int_eq((int)((uintptr_t)q % GYRO_ARENA_ALIGN), 0);
    ck_assert((char *)q >= (char *)p + 10);
    size_t mark = gyro_arena_mark(&a);
    void *r1 = gyro_arena_alloc(&a, 200);
    ck_assert_ptr_nonnull(r1);
    ck_assert_ptr_null(gyro_arena_alloc(&a, 100000)); /* exhausted: NULL, nothing changes */
    gyro_arena_reset(&a, mark);
    void *r2 = gyro_arena_alloc(&a, 200);
    ck_assert_ptr_eq(r1, r2);
    ck_assert_uint_ge(a.peak, 300);
    size_t need = gyro_arena_need(gyro_arena_need(0, 10), 100);
    ck_assert_uint_ge(need, 110);
    gyro_arena_free(&a);
    ck_assert_ptr_null(a.base);
    gyro_arena_free(NULL);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("blas");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_gemm_all_forms);
    tcase_add_test(tc, test_gemm_layer_shapes);
    tcase_add_test(tc, test_gemm_zero_sizes);
    tcase_add_test(tc, test_threads);
    tcase_add_test(tc, test_arena);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* check_blas_small.c — Check suite for the small float32 products of models/core/blas.c (the
 * kernel that replaces cblas_sgemm for C = alpha A Bᵀ + beta C with 3–16 rows of A times a wide
 * B, and for per-head attention scores): every row count, k around the 8-lane steps and the
 * masked tail, strided operands, alpha/beta, padding left untouched, NaN in C ignored with
 * beta = 0, against the double-precision reference loop; and the same rows give the same
 * results whatever the batch around them. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "models/core/blas.h"
#include "models/core/rng.h"

/* C = alpha A Bᵀ + beta C (A (m, k), B (n, k), padded rows) by gyro_blas_gemm_f32 and by the
 * reference; max relative error, 1e9 when the padding of C changed. */
static double nt_case(int m, int n, int k, int pad, float alpha, float beta, int nan_c,
                      uint64_t seed)
{
    gyro_rng r;
    gyro_rng_seed(&r, seed);
    const int lda = k + pad, ldb = k + 2 * pad, ldc = n + pad;
    float *A = malloc(sizeof(float) * (size_t)(m * lda));
    float *B = malloc(sizeof(float) * (size_t)(n * ldb));
    float *C1 = malloc(sizeof(float) * (size_t)(m * ldc));
    float *C2 = malloc(sizeof(float) * (size_t)(m * ldc));
    for (int i = 0; i < m * lda; i++) A[i] = (float)(2 * gyro_rng_uniform(&r) - 1);
    for (int i = 0; i < n * ldb; i++) B[i] = (float)(2 * gyro_rng_uniform(&r) - 1);
    for (int i = 0; i < m * ldc; i++)
        C1[i] = C2[i] = (float)(2 * gyro_rng_uniform(&r) - 1);
    if (nan_c)
        for (int i = 0; i < m; i++)
            for (int j = 0; j < n; j++)
                C1[i * ldc + j] = C2[i * ldc + j] = NAN;
    gyro_blas_gemm_f32(C1, A, B, 0, 1, alpha, beta, m, n, k, lda, ldb, ldc);
    gyro_blas_gemm_ref_f32(C2, A, B, 0, 1, alpha, beta, m, n, k, lda, ldb, ldc);
    double worst = 0;
    for (int i = 0; i < m; i++)
        for (int j = 0; j < ldc; j++) {
            double a = C1[i * ldc + j], b = C2[i * ldc + j];
            double e = j < n ? fabs(a - b) / (1.0 + fabs(b)) : (a != b ? 1e9 : 0);
            if (isnan(a) || isnan(b)) e = 1e9;
            if (e > worst) worst = e;
        }
    free(A); free(B); free(C1); free(C2);
    return worst;
}

START_TEST(test_small_shapes)
{
    static const int ks[] = {1, 3, 7, 8, 9, 15, 16, 17, 24, 100, 101};
    static const int ns[] = {1, 2, 3, 5, 12, 16, 33, 100, 130};
    double worst = 0;
    uint64_t seed = 1;
    for (int m = 1; m <= 17; m++)
        for (size_t a = 0; a < sizeof ks / sizeof ks[0]; a++)
            for (size_t b = 0; b < sizeof ns / sizeof ns[0]; b++)
                for (int pad = 0; pad < 2; pad++) {
                    const int k = ks[a], n = ns[b];
                    worst = fmax(worst, nt_case(m, n, k, 3 * pad, 1.0f, 0.0f, 0, seed++));
                    worst = fmax(worst, nt_case(m, n, k, 3 * pad, 0.75f, 0.5f, 0, seed++));
                    worst = fmax(worst, nt_case(m, n, k, 3 * pad, -1.5f, 0.0f, 1, seed++));
                }
    printf("blas small: A·Bᵀ vs reference, max rel error %.3g\n", worst);
    ck_assert_double_lt(worst, 1e-5);
}
END_TEST

/* The layers' inference shapes: 6 tokens through a 100-d model (q,k,v 336 wide, FFN 400),
 * attention scores of 10 tokens with head dimension 7 (ld 3A). */
START_TEST(test_small_layer_shapes)
{
    double worst = 0;
    worst = fmax(worst, nt_case(6, 336, 100, 0, 1, 0, 0, 101));
    worst = fmax(worst, nt_case(6, 400, 100, 0, 1, 0, 0, 102));
    worst = fmax(worst, nt_case(10, 10, 7, 336 - 7, 0.378f, 0, 0, 103));
    ck_assert_double_lt(worst, 1e-5);
}
END_TEST

/* A row's result does not depend on the other rows of the product (3 to 16 rows take the
 * kernel, in blocks of 4): row i of a 16-row product equals the same row computed in a 3-row
 * product. */
START_TEST(test_small_rows_independent)
{
    enum { M = 16, N = 120, K = 100 };
    gyro_rng r;
    gyro_rng_seed(&r, 7);
    static float A[M * K], B[N * K], C[M * N], D[3 * N], A3[3 * K];
    for (int i = 0; i < M * K; i++) A[i] = (float)(2 * gyro_rng_uniform(&r) - 1);
    for (int i = 0; i < N * K; i++) B[i] = (float)(2 * gyro_rng_uniform(&r) - 1);
    gyro_blas_gemm_f32(C, A, B, 0, 1, 1, 0, M, N, K, K, K, N);
#if !(defined(__AVX2__) && defined(__FMA__))
    return; /* built without the kernel: OpenBLAS makes no such promise */
#endif
    for (int i = 0; i < M; i++) {
        for (int q = 0; q < 3; q++)
            for (int p = 0; p < K; p++)
                A3[q * K + p] = A[((i + q) % M) * K + p];
        gyro_blas_gemm_f32(D, A3, B, 0, 1, 1, 0, 3, N, K, K, K, N);
        for (int j = 0; j < N; j++)
            ck_assert_msg(D[j] == C[i * N + j], "row %d col %d: %.9g vs %.9g", i, j, D[j],
                          C[i * N + j]);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("blas_small");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_small_shapes);
    tcase_add_test(tc, test_small_layer_shapes);
    tcase_add_test(tc, test_small_rows_independent);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

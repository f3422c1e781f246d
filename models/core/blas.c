/* blas.c — row-major cblas wrappers and their naive reference loops (see blas.h). */
#include "models/core/blas.h"

#include <assert.h>
#include <cblas.h>

/* openblas_set_num_threads is declared by OpenBLAS's cblas.h. */

void gyro_blas_gemm_f32(float *C, const float *A, const float *B, int trans_a, int trans_b,
                        float alpha, float beta, int m, int n, int k, int lda, int ldb, int ldc)
{
    assert(m >= 0 && n >= 0 && k >= 0);
    assert(lda >= (trans_a ? m : k) && ldb >= (trans_b ? k : n) && ldc >= n);
    if (m == 0 || n == 0)
        return;
    cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
                trans_b ? CblasTrans : CblasNoTrans, m, n, k, alpha, A, lda > 0 ? lda : 1, B,
                ldb > 0 ? ldb : 1, beta, C, ldc > 0 ? ldc : 1);
}

void gyro_blas_gemm_f64(double *C, const double *A, const double *B, int trans_a, int trans_b,
                        double alpha, double beta, int m, int n, int k, int lda, int ldb, int ldc)
{
    assert(m >= 0 && n >= 0 && k >= 0);
    assert(lda >= (trans_a ? m : k) && ldb >= (trans_b ? k : n) && ldc >= n);
    if (m == 0 || n == 0)
        return;
    cblas_dgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
                trans_b ? CblasTrans : CblasNoTrans, m, n, k, alpha, A, lda > 0 ? lda : 1, B,
                ldb > 0 ? ldb : 1, beta, C, ldc > 0 ? ldc : 1);
}

#define GYRO_GEMM_REF(R, NAME)                                                                  \
    void NAME(R *C, const R *A, const R *B, int trans_a, int trans_b, R alpha, R beta, int m,  \
              int n, int k, int lda, int ldb, int ldc)                                         \
    {                                                                                          \
        for (int i = 0; i < m; i++) {                                                          \
            for (int j = 0; j < n; j++) {                                                      \
                double acc = 0.0;                                                              \
                for (int p = 0; p < k; p++) {                                                  \
                    double a = trans_a ? A[(long)p * lda + i] : A[(long)i * lda + p];          \
                    double b = trans_b ? B[(long)j * ldb + p] : B[(long)p * ldb + j];          \
                    acc += a * b;                                                              \
                }                                                                              \
                R *c = &C[(long)i * ldc + j];                                                  \
                *c = (R)(alpha * acc + (beta == 0 ? 0.0 : (double)beta * *c));                 \
            }                                                                                  \
        }                                                                                      \
    }

GYRO_GEMM_REF(float, gyro_blas_gemm_ref_f32)
GYRO_GEMM_REF(double, gyro_blas_gemm_ref_f64)

void gyro_blas_set_threads(int n)
{
    openblas_set_num_threads(n < 1 ? 1 : n);
}

int gyro_blas_get_threads(void)
{
    return openblas_get_num_threads();
}

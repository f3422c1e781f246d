/* blas.h — the matrix products of the neural core: cblas wrappers and naive reference loops.
 *
 * Every product of gyro's layers goes through gyro_blas_gemm_*, a thin row-major wrapper of
 * OpenBLAS cblas_sgemm / cblas_dgemm (small float32 products: gyro's own kernel, see below).
 * Beside each wrapper is the naive triple loop that the tests (tests/check_blas.c) compare it
 * against; the reference accumulates in double.
 *
 *   C = alpha · op(A) · op(B) + beta · C,   op(A): (m, k), op(B): (k, n), C: (m, n)
 *
 * All matrices are row-major with leading dimensions lda, ldb, ldc (row strides, so a head's
 * slice of a wider matrix is addressed without copying). op(X) = Xᵀ when trans_x != 0.
 * beta = 0 overwrites C (NaN in C is not propagated, as in BLAS).
 */
#ifndef GYRO_CORE_BLAS_H
#define GYRO_CORE_BLAS_H

/* Small float32 products C = alpha A Bᵀ + beta C — 3 to 16 rows times a weight matrix at least
 * as wide as deep (single-utterance inference), per-head attention scores of up to 12 tokens —
 * run on gyro's own AVX2 kernel (when compiled with AVX2 and FMA) instead of OpenBLAS, whose
 * operand packing dominates those shapes. */

/* OpenBLAS product (float32 / float64; small float32 products as above). Shapes are the
 * caller's contract (asserted). */
void gyro_blas_gemm_f32(float *C, const float *A, const float *B, int trans_a, int trans_b,
                        float alpha, float beta, int m, int n, int k, int lda, int ldb, int ldc);
void gyro_blas_gemm_f64(double *C, const double *A, const double *B, int trans_a, int trans_b,
                        double alpha, double beta, int m, int n, int k, int lda, int ldb,
                        int ldc);

/* The same product by naive loops (accumulating in double): the reference of the tests. */
void gyro_blas_gemm_ref_f32(float *C, const float *A, const float *B, int trans_a, int trans_b,
                            float alpha, float beta, int m, int n, int k, int lda, int ldb,
                            int ldc);
void gyro_blas_gemm_ref_f64(double *C, const double *A, const double *B, int trans_a,
                            int trans_b, double alpha, double beta, int m, int n, int k, int lda,
                            int ldb, int ldc);

/* Number of threads OpenBLAS uses for one product. Set 1 where gyro runs its own worker
 * threads (training with several threads, the gRPC server) so the two do not oversubscribe
 * the cores. n < 1 is treated as 1. */
void gyro_blas_set_threads(int n);
int gyro_blas_get_threads(void);

#endif

/* blas.c — row-major cblas wrappers and their naive reference loops (see blas.h). */
#include "models/core/blas.h"

#include <assert.h>
#include <cblas.h>

/* openblas_set_num_threads is declared by OpenBLAS's cblas.h. */

/* ---- small float32 products ----------------------------------------------------------------
 * Single-utterance inference multiplies a handful of rows (B·T = 6–20 tokens) by each weight
 * matrix stored (out, in), Y = X Wᵀ, and attention multiplies per-head slices of a few (D)
 * columns the same way. For the shapes listed at gyro_blas_small_nt cblas_sgemm spends most of
 * its time packing the operands (the whole weight matrix, on every call) and dispatching, so
 * they run on the AVX2 kernel below: a block of 4 rows of A × 4 rows of B keeps 16 dot products
 * in 8-lane registers over k (the last partial step with a masked load, so k = 7 is one step),
 * then reduces them with horizontal adds. The sums are ordered differently from OpenBLAS's, so
 * results agree with it to float32 rounding, not bit for bit; among products that take the
 * kernel a row's result depends only on the operands and k, not on m or on its position. */

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define GYRO_BLAS_HAVE_SMALL 1

static inline __m256i small_tail_mask(int r) /* lanes < r set */
{
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(r), lane);
}

/* (s0 … s3) = the lane sums of a0 … a3 */
static inline __m128 small_reduce4(__m256 a0, __m256 a1, __m256 a2, __m256 a3)
{
    __m256 t = _mm256_hadd_ps(_mm256_hadd_ps(a0, a1), _mm256_hadd_ps(a2, a3));
    return _mm_add_ps(_mm256_castps256_ps128(t), _mm256_extractf128_ps(t, 1));
}

/* c[0..jb) = alpha s + beta c for the jb <= 4 sums s */
static inline void small_store(float *c, __m128 s, int jb, float alpha, float beta)
{
    float v[4];
    _mm_storeu_ps(v, s);
    for (int q = 0; q < jb; q++)
        c[q] = beta == 0.0f ? alpha * v[q] : alpha * v[q] + beta * c[q];
}

/* The shapes where the kernel below beats cblas_sgemm (OpenBLAS 0.3.21, measured on an AVX-512
 * machine, one thread): 3–16 rows of A times a weight matrix at least as wide as it is deep
 * (OpenBLAS packs all of B on every call; with fewer rows it has its own small-matrix kernel,
 * and for deep B its packing is cheap), and per-head attention scores of up to 12 tokens
 * (k = head dimension < 16). Elsewhere OpenBLAS is as fast or faster. */
static inline int gyro_blas_small_nt(int m, int n, int k)
{
    return (m >= 3 && m <= 16 && k >= 16 && n >= k) || (k > 0 && k < 16 && m <= 12 && n <= 12);
}

/* C = alpha A Bᵀ + beta C: A (m, k), B (n, k), both row-major. Blocks of 4 rows of A × 4 rows
 * of B (16 accumulators: the upper 16 vector registers of AVX-512VL keep them all in registers
 * where available), so B is read ⌈m/4⌉ times. */
static void small_gemm_nt_f32(float *C, const float *A, const float *B, float alpha, float beta,
                              int m, int n, int k, int lda, int ldb, int ldc)
{
    const int kf = k & ~7, r = k - kf;
    const __m256i tail = small_tail_mask(r);
    for (int i = 0; i < m; i += 4) {
        const int ib = m - i < 4 ? m - i : 4;
        const float *x0 = A + (long)i * lda;
        const float *x1 = ib > 1 ? x0 + lda : x0, *x2 = ib > 2 ? x0 + 2L * lda : x0;
        const float *x3 = ib > 3 ? x0 + 3L * lda : x0;
        for (int j = 0; j < n; j += 4) {
            const int jb = n - j < 4 ? n - j : 4;
            const float *w0 = B + (long)j * ldb;
            const float *w1 = jb > 1 ? w0 + ldb : w0, *w2 = jb > 2 ? w0 + 2L * ldb : w0;
            const float *w3 = jb > 3 ? w0 + 3L * ldb : w0;
            __m256 a00 = _mm256_setzero_ps(), a01 = a00, a02 = a00, a03 = a00;
            __m256 a10 = a00, a11 = a00, a12 = a00, a13 = a00;
            __m256 a20 = a00, a21 = a00, a22 = a00, a23 = a00;
            __m256 a30 = a00, a31 = a00, a32 = a00, a33 = a00;
#define SMALL_ROW(q, x, LOAD, p)                                                               \
    do {                                                                                       \
        const __m256 u = LOAD((x) + (p));                                                      \
        a##q##0 = _mm256_fmadd_ps(u, b0, a##q##0);                                             \
        a##q##1 = _mm256_fmadd_ps(u, b1, a##q##1);                                             \
        a##q##2 = _mm256_fmadd_ps(u, b2, a##q##2);                                             \
        a##q##3 = _mm256_fmadd_ps(u, b3, a##q##3);                                             \
    } while (0)
#define SMALL_STEP(LOAD, p)                                                                    \
    do {                                                                                       \
        const __m256 b0 = LOAD(w0 + (p)), b1 = LOAD(w1 + (p));                                 \
        const __m256 b2 = LOAD(w2 + (p)), b3 = LOAD(w3 + (p));                                 \
        SMALL_ROW(0, x0, LOAD, p);                                                             \
        SMALL_ROW(1, x1, LOAD, p);                                                             \
        SMALL_ROW(2, x2, LOAD, p);                                                             \
        SMALL_ROW(3, x3, LOAD, p);                                                             \
    } while (0)
#define SMALL_LOADU(q) _mm256_loadu_ps(q)
#define SMALL_LOADM(q) _mm256_maskload_ps(q, tail)
            for (int p = 0; p < kf; p += 8)
                SMALL_STEP(SMALL_LOADU, p);
            if (r)
                SMALL_STEP(SMALL_LOADM, kf);
#undef SMALL_LOADM
#undef SMALL_LOADU
#undef SMALL_STEP
#undef SMALL_ROW
            float *c = C + (long)i * ldc + j;
            small_store(c, small_reduce4(a00, a01, a02, a03), jb, alpha, beta);
            if (ib > 1)
                small_store(c + ldc, small_reduce4(a10, a11, a12, a13), jb, alpha, beta);
            if (ib > 2)
                small_store(c + 2L * ldc, small_reduce4(a20, a21, a22, a23), jb, alpha, beta);
            if (ib > 3)
                small_store(c + 3L * ldc, small_reduce4(a30, a31, a32, a33), jb, alpha, beta);
        }
    }
}
#endif

void gyro_blas_gemm_f32(float *C, const float *A, const float *B, int trans_a, int trans_b,
                        float alpha, float beta, int m, int n, int k, int lda, int ldb, int ldc)
{
    assert(m >= 0 && n >= 0 && k >= 0);
    assert(lda >= (trans_a ? m : k) && ldb >= (trans_b ? k : n) && ldc >= n);
    if (m == 0 || n == 0)
        return;
#ifdef GYRO_BLAS_HAVE_SMALL
    if (!trans_a && trans_b && gyro_blas_small_nt(m, n, k)) {
        small_gemm_nt_f32(C, A, B, alpha, beta, m, n, k, lda, ldb, ldc);
        return;
    }
#endif
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

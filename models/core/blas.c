/* blas.c — row-major cblas wrappers and their naive reference loops (see blas.h). */
#include "models/core/blas.h"

#include <assert.h>
#include <cblas.h>

/* openblas_set_num_threads is declared by OpenBLAS's cblas.h. */

/* ---- small float32 products ----------------------------------------------------------------
 * Single-utterance inference multiplies a handful of rows (B·T = 6–20 tokens) by each weight
 * matrix stored (out, in), Y = X Wᵀ, and attention and the hyperbolic head merge multiply
 * per-head slices of a few (D) columns the same way. For such shapes cblas_sgemm spends most
 * of its time packing the operands (the whole weight matrix, on every call) and dispatching.
 * C = alpha A Bᵀ + beta C with few rows of A therefore runs on the AVX2 kernel below: a block
 * of 4 rows of A × 2 rows of B keeps 8 dot products in 8-lane registers over k (the last
 * partial step with a masked load, so k = 7 is one step), then reduces them with horizontal
 * adds. The sums are ordered differently from OpenBLAS's, so results agree
 * with it to float32 rounding, not bit for bit; a row's result depends only on the operands
 * and k, never on m or on its position in the batch. */

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

/* c[0..jb) = alpha s + beta c for jb <= 2 sums s */
static inline void small_store2(float *c, float s0, float s1, int jb, float alpha, float beta)
{
    c[0] = beta == 0.0f ? alpha * s0 : alpha * s0 + beta * c[0];
    if (jb > 1)
        c[1] = beta == 0.0f ? alpha * s1 : alpha * s1 + beta * c[1];
}

/* The shapes where the kernel below beats cblas_sgemm (OpenBLAS 0.3.21, measured on an AVX-512
 * machine, one thread): 3–8 rows of A times a weight matrix at least as wide as it is deep
 * (OpenBLAS packs all of B on every call; with fewer rows it has its own small-matrix kernel,
 * and for deep B its packing is cheap), and per-head attention scores of up to 12 tokens
 * (k = head dimension < 16). Elsewhere OpenBLAS is as fast or faster. */
static inline int gyro_blas_small_nt(int m, int n, int k)
{
    return (m >= 3 && m <= 8 && k >= 16 && n >= k) || (k > 0 && k < 16 && m <= 12 && n <= 12);
}

/* C = alpha A Bᵀ + beta C: A (m, k), B (n, k), both row-major. Blocks of 4 rows of A × 2 rows
 * of B (8 accumulators), so B is read ⌈m/4⌉ times. */
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
        for (int j = 0; j < n; j += 2) {
            const int jb = n - j < 2 ? n - j : 2;
            const float *w0 = B + (long)j * ldb, *w1 = jb > 1 ? w0 + ldb : w0;
            __m256 a00 = _mm256_setzero_ps(), a01 = a00, a10 = a00, a11 = a00;
            __m256 a20 = a00, a21 = a00, a30 = a00, a31 = a00;
#define SMALL_STEP(LOAD, p)                                                                    \
    do {                                                                                       \
        const __m256 b0 = LOAD(w0 + (p)), b1 = LOAD(w1 + (p));                                 \
        __m256 u = LOAD(x0 + (p));                                                             \
        a00 = _mm256_fmadd_ps(u, b0, a00);                                                     \
        a01 = _mm256_fmadd_ps(u, b1, a01);                                                     \
        u = LOAD(x1 + (p));                                                                    \
        a10 = _mm256_fmadd_ps(u, b0, a10);                                                     \
        a11 = _mm256_fmadd_ps(u, b1, a11);                                                     \
        u = LOAD(x2 + (p));                                                                    \
        a20 = _mm256_fmadd_ps(u, b0, a20);                                                     \
        a21 = _mm256_fmadd_ps(u, b1, a21);                                                     \
        u = LOAD(x3 + (p));                                                                    \
        a30 = _mm256_fmadd_ps(u, b0, a30);                                                     \
        a31 = _mm256_fmadd_ps(u, b1, a31);                                                     \
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
            float s[8];
            _mm_storeu_ps(s, small_reduce4(a00, a01, a10, a11));
            _mm_storeu_ps(s + 4, small_reduce4(a20, a21, a30, a31));
            for (int q = 0; q < ib; q++)
                small_store2(C + (long)(i + q) * ldc + j, s[2 * q], s[2 * q + 1], jb, alpha,
                             beta);
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

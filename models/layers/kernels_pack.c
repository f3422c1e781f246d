/* kernels_pack.c — packed-weight float32 products with runtime CPU dispatch (kernels_pack.h).
 *
 * One driver walks X in blocks of up to 6 rows and the packed weights in panels of 16 output
 * columns; a micro-kernel computes MR rows × NP panels at a time with every accumulator in a
 * register. NP grows as MR shrinks so that at least 8 independent multiply-add chains are in
 * flight (an FMA has a latency of about 4 cycles and two issue per cycle), which is what keeps
 * 1- and 2-token inputs fast: 1 row × 4 panels, 2 × 2, 3 × 2, then 4–6 rows × 1 panel. A last
 * panel of at most 8 columns (M = 100: 6 panels and 4 columns) runs on one 8-lane register per
 * row, half the work of a full panel (pk_half_block). The kernels of each instruction set are compiled with GCC's target attribute, so they exist
 * whatever -march the library was built with; gyro_isa_active picks one at run time.
 */
#include "models/layers/kernels_pack.h"

#include "models/hyp/hyp_consts.h"
#include "models/hyp/hyp_scalar.h"
#include "models/hyp/vmath.h"
#include "models/layers/kernels.h"

#include <assert.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define GYRO_PACK_X86 1
#include <immintrin.h>
#endif

#define PK_MR 6 /* rows per block */

/* ---- instruction-set choice --------------------------------------------------------------- */

static pthread_once_t isa_once = PTHREAD_ONCE_INIT;
static gyro_isa isa_chosen = GYRO_ISA_GENERIC;

int gyro_isa_supported(gyro_isa isa)
{
    switch (isa) {
    case GYRO_ISA_GENERIC: return 1;
#ifdef GYRO_PACK_X86
    case GYRO_ISA_AVX2:
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case GYRO_ISA_AVX512:
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx2") &&
               __builtin_cpu_supports("fma");
#endif
    default: return 0;
    }
}

const char *gyro_isa_name(gyro_isa isa)
{
    switch (isa) {
    case GYRO_ISA_GENERIC: return "generic";
    case GYRO_ISA_AVX2: return "avx2";
    case GYRO_ISA_AVX512: return "avx512";
    default: return NULL;
    }
}

static void isa_choose(void)
{
    gyro_isa best = GYRO_ISA_GENERIC;
    if (gyro_isa_supported(GYRO_ISA_AVX512))
        best = GYRO_ISA_AVX512;
    else if (gyro_isa_supported(GYRO_ISA_AVX2))
        best = GYRO_ISA_AVX2;
    const char *env = getenv("GYRO_ISA");
    if (env) {
        for (int i = GYRO_ISA_GENERIC; i <= GYRO_ISA_AVX512; i++)
            if (strcmp(env, gyro_isa_name((gyro_isa)i)) == 0 && (gyro_isa)i < best)
                best = (gyro_isa)i;
    }
    isa_chosen = best;
}

gyro_isa gyro_isa_active(void)
{
    pthread_once(&isa_once, isa_choose);
    return isa_chosen;
}

/* ---- packing ------------------------------------------------------------------------------ */

size_t gyro_pack_values(int M, int K)
{
    assert(M >= 0 && K >= 0);
    return (size_t)((M + GYRO_PACK_NR - 1) / GYRO_PACK_NR) * GYRO_PACK_NR * (size_t)K;
}

void gyro_pack_weights_f32(float *Wp, const float *W, int ldw, int M, int K)
{
    assert(M >= 0 && K >= 0 && ldw >= K);
    const int np = (M + GYRO_PACK_NR - 1) / GYRO_PACK_NR;
    for (int p = 0; p < np; p++) {
        float *panel = Wp + (size_t)p * GYRO_PACK_NR * K;
        for (int k = 0; k < K; k++)
            for (int j = 0; j < GYRO_PACK_NR; j++) {
                const int row = p * GYRO_PACK_NR + j;
                panel[(size_t)k * GYRO_PACK_NR + j] = row < M ? W[(size_t)row * ldw + k] : 0.0f;
            }
    }
}

/* ---- micro-kernels ------------------------------------------------------------------------
 * kern(Y, ldy, X, ldx, w, ps, K, nc): rows 0..MR of Y, panels 0..NP starting at w (panel
 * stride ps values); the last panel of the block writes only its first nc columns. */
typedef void (*pk_kernel)(float *Y, int ldy, const float *X, int ldx, const float *w, size_t ps,
                          int K, int nc);

/* plain C: one row and one panel at a time */
static void pk_generic(float *Y, int ldy, const float *X, int ldx, const float *w, size_t ps,
                       int K, int nc, int MR, int NP)
{
    for (int r = 0; r < MR; r++) {
        const float *x = X + (size_t)r * ldx;
        for (int q = 0; q < NP; q++) {
            const float *wq = w + (size_t)q * ps;
            float acc[GYRO_PACK_NR] = {0};
            for (int k = 0; k < K; k++)
                for (int j = 0; j < GYRO_PACK_NR; j++)
                    acc[j] += x[k] * wq[(size_t)k * GYRO_PACK_NR + j];
            const int cols = q == NP - 1 ? nc : GYRO_PACK_NR;
            memcpy(Y + (size_t)r * ldy + (size_t)q * GYRO_PACK_NR, acc, (size_t)cols * sizeof(float));
        }
    }
}

#ifdef GYRO_PACK_X86
/* AVX2 + FMA: a panel is two 8-lane registers. */
static inline __attribute__((always_inline, target("avx2,fma"))) void
pk_avx2_block(float *Y, int ldy, const float *X, int ldx, const float *w, size_t ps, int K,
              int nc, const int MR, const int NP)
{
    __m256 acc[PK_MR][4][2];
#pragma GCC unroll 6
    for (int r = 0; r < MR; r++)
#pragma GCC unroll 4
        for (int q = 0; q < NP; q++)
            acc[r][q][0] = acc[r][q][1] = _mm256_setzero_ps();
    for (int k = 0; k < K; k++) {
        __m256 b[4][2];
#pragma GCC unroll 4
        for (int q = 0; q < NP; q++) {
            b[q][0] = _mm256_loadu_ps(w + (size_t)q * ps + (size_t)k * GYRO_PACK_NR);
            b[q][1] = _mm256_loadu_ps(w + (size_t)q * ps + (size_t)k * GYRO_PACK_NR + 8);
        }
#pragma GCC unroll 6
        for (int r = 0; r < MR; r++) {
            const __m256 a = _mm256_broadcast_ss(X + (size_t)r * ldx + k);
#pragma GCC unroll 4
            for (int q = 0; q < NP; q++) {
                acc[r][q][0] = _mm256_fmadd_ps(a, b[q][0], acc[r][q][0]);
                acc[r][q][1] = _mm256_fmadd_ps(a, b[q][1], acc[r][q][1]);
            }
        }
    }
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i m0 = _mm256_cmpgt_epi32(_mm256_set1_epi32(nc), lane);
    const __m256i m1 = _mm256_cmpgt_epi32(_mm256_set1_epi32(nc - 8), lane);
#pragma GCC unroll 6
    for (int r = 0; r < MR; r++)
#pragma GCC unroll 4
        for (int q = 0; q < NP; q++) {
            float *y = Y + (size_t)r * ldy + (size_t)q * GYRO_PACK_NR;
            if (q < NP - 1 || nc == GYRO_PACK_NR) {
                _mm256_storeu_ps(y, acc[r][q][0]);
                _mm256_storeu_ps(y + 8, acc[r][q][1]);
            } else {
                _mm256_maskstore_ps(y, m0, acc[r][q][0]);
                _mm256_maskstore_ps(y + 8, m1, acc[r][q][1]);
            }
        }
}

/* AVX-512F: a panel is one 16-lane register. */
static inline __attribute__((always_inline, target("avx512f,avx2,fma"))) void
pk_avx512_block(float *Y, int ldy, const float *X, int ldx, const float *w, size_t ps, int K,
                int nc, const int MR, const int NP)
{
    __m512 acc[PK_MR][4];
#pragma GCC unroll 6
    for (int r = 0; r < MR; r++)
#pragma GCC unroll 4
        for (int q = 0; q < NP; q++)
            acc[r][q] = _mm512_setzero_ps();
    for (int k = 0; k < K; k++) {
        __m512 b[4];
#pragma GCC unroll 4
        for (int q = 0; q < NP; q++)
            b[q] = _mm512_loadu_ps(w + (size_t)q * ps + (size_t)k * GYRO_PACK_NR);
#pragma GCC unroll 6
        for (int r = 0; r < MR; r++) {
            const __m512 a = _mm512_set1_ps(X[(size_t)r * ldx + k]);
#pragma GCC unroll 4
            for (int q = 0; q < NP; q++)
                acc[r][q] = _mm512_fmadd_ps(a, b[q], acc[r][q]);
        }
    }
    const __mmask16 last = (__mmask16)((1u << nc) - 1u);
#pragma GCC unroll 6
    for (int r = 0; r < MR; r++)
#pragma GCC unroll 4
        for (int q = 0; q < NP; q++) {
            float *y = Y + (size_t)r * ldy + (size_t)q * GYRO_PACK_NR;
            if (q < NP - 1 || nc == GYRO_PACK_NR)
                _mm512_storeu_ps(y, acc[r][q]);
            else
                _mm512_mask_storeu_ps(y, last, acc[r][q]);
        }
}

/* The last panel of a matrix whose width leaves at most 8 columns there (M = 100: 6 panels and
 * 4 columns): MR rows × the panel's first 8 columns, one 8-lane register per row, on either
 * vector level — half the multiply-adds of a full panel, and the same chain per output (so
 * the same results bit for bit). */
static inline __attribute__((always_inline, target("avx2,fma"))) void
pk_half_block(float *Y, int ldy, const float *X, int ldx, const float *w, int K, int nc,
              const int MR)
{
    __m256 acc[PK_MR];
#pragma GCC unroll 6
    for (int r = 0; r < MR; r++)
        acc[r] = _mm256_setzero_ps();
    for (int k = 0; k < K; k++) {
        const __m256 b = _mm256_loadu_ps(w + (size_t)k * GYRO_PACK_NR);
#pragma GCC unroll 6
        for (int r = 0; r < MR; r++)
            acc[r] = _mm256_fmadd_ps(_mm256_broadcast_ss(X + (size_t)r * ldx + k), b, acc[r]);
    }
    const __m256i m0 = _mm256_cmpgt_epi32(_mm256_set1_epi32(nc),
                                          _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
#pragma GCC unroll 6
    for (int r = 0; r < MR; r++)
        _mm256_maskstore_ps(Y + (size_t)r * ldy, m0, acc[r]);
}

#define PK_HALF(MR)                                                                            \
    __attribute__((target("avx2,fma"))) static void pk_half_##MR(                              \
        float *Y, int ldy, const float *X, int ldx, const float *w, size_t ps, int K, int nc)  \
    {                                                                                          \
        (void)ps;                                                                              \
        pk_half_block(Y, ldy, X, ldx, w, K, nc, MR);                                           \
    }
PK_HALF(1) PK_HALF(2) PK_HALF(3) PK_HALF(4) PK_HALF(5) PK_HALF(6)
#undef PK_HALF
static const pk_kernel pk_half[PK_MR + 1] = {NULL, pk_half_1, pk_half_2, pk_half_3,
                                             pk_half_4, pk_half_5, pk_half_6};

#define PK_DEF(ISA, TGT, MR, NP)                                                               \
    __attribute__((target(TGT))) static void pk_##ISA##_##MR##_##NP(                           \
        float *Y, int ldy, const float *X, int ldx, const float *w, size_t ps, int K, int nc)  \
    {                                                                                          \
        pk_##ISA##_block(Y, ldy, X, ldx, w, ps, K, nc, MR, NP);                                \
    }
#define PK_DEFS(ISA, TGT)                                                                      \
    PK_DEF(ISA, TGT, 1, 1) PK_DEF(ISA, TGT, 2, 1) PK_DEF(ISA, TGT, 3, 1) PK_DEF(ISA, TGT, 4, 1) \
    PK_DEF(ISA, TGT, 5, 1) PK_DEF(ISA, TGT, 6, 1) PK_DEF(ISA, TGT, 1, 4) PK_DEF(ISA, TGT, 2, 2) \
    PK_DEF(ISA, TGT, 3, 2)
PK_DEFS(avx2, "avx2,fma")
PK_DEFS(avx512, "avx512f,avx2,fma")
#undef PK_DEFS
#undef PK_DEF

/* [mr] → the single-panel kernel and the wide kernel with its panel count */
static const pk_kernel pk_avx2_one[PK_MR + 1] = {NULL, pk_avx2_1_1, pk_avx2_2_1, pk_avx2_3_1,
                                                 pk_avx2_4_1, pk_avx2_5_1, pk_avx2_6_1};
static const pk_kernel pk_avx512_one[PK_MR + 1] = {NULL, pk_avx512_1_1, pk_avx512_2_1,
                                                   pk_avx512_3_1, pk_avx512_4_1, pk_avx512_5_1,
                                                   pk_avx512_6_1};
static const pk_kernel pk_avx2_wide[PK_MR + 1] = {NULL, pk_avx2_1_4, pk_avx2_2_2, pk_avx2_3_2,
                                                  pk_avx2_4_1, pk_avx2_5_1, pk_avx2_6_1};
static const pk_kernel pk_avx512_wide[PK_MR + 1] = {NULL, pk_avx512_1_4, pk_avx512_2_2,
                                                    pk_avx512_3_2, pk_avx512_4_1,
                                                    pk_avx512_5_1, pk_avx512_6_1};
#endif

static const int pk_wide_np[PK_MR + 1] = {0, 4, 2, 2, 1, 1, 1};

/* ---- driver ------------------------------------------------------------------------------- */

void gyro_packed_linear_f32_isa(gyro_isa isa, float *Y, int ldy, const float *X, int ldx,
                                const float *Wp, int N, int K, int M)
{
    assert(N >= 0 && K >= 0 && M >= 0 && ldy >= M && ldx >= K);
    assert(gyro_isa_supported(isa));
    if (N == 0 || M == 0)
        return;
    if (K == 0) {
        for (int i = 0; i < N; i++)
            memset(Y + (size_t)i * ldy, 0, (size_t)M * sizeof(float));
        return;
    }
    const int np = (M + GYRO_PACK_NR - 1) / GYRO_PACK_NR;
    const int nc_last = M - (np - 1) * GYRO_PACK_NR;
    const size_t ps = (size_t)GYRO_PACK_NR * K;
    const pk_kernel *one = NULL, *wide = NULL, *half = NULL;
#ifdef GYRO_PACK_X86
    if (isa == GYRO_ISA_AVX512) {
        one = pk_avx512_one;
        wide = pk_avx512_wide;
    } else if (isa == GYRO_ISA_AVX2) {
        one = pk_avx2_one;
        wide = pk_avx2_wide;
    }
    if (one && nc_last <= 8)
        half = pk_half;
#endif
    /* panels run by the full kernels; a last panel of at most 8 columns by the half kernel */
    const int npf = half ? np - 1 : np;
    for (int i = 0; i < N; i += PK_MR) {
        const int mr = N - i < PK_MR ? N - i : PK_MR;
        float *y = Y + (size_t)i * ldy;
        const float *x = X + (size_t)i * ldx;
        const int wnp = pk_wide_np[mr];
        int p = 0;
        if (!one) {
            pk_generic(y, ldy, x, ldx, Wp, ps, K, nc_last, mr, np);
            continue;
        }
        for (; p + wnp <= npf; p += wnp)
            wide[mr](y + (size_t)p * GYRO_PACK_NR, ldy, x, ldx, Wp + (size_t)p * ps, ps, K,
                     p + wnp == np ? nc_last : GYRO_PACK_NR);
        for (; p < npf; p++)
            one[mr](y + (size_t)p * GYRO_PACK_NR, ldy, x, ldx, Wp + (size_t)p * ps, ps, K,
                    p + 1 == np ? nc_last : GYRO_PACK_NR);
        if (half)
            half[mr](y + (size_t)p * GYRO_PACK_NR, ldy, x, ldx, Wp + (size_t)p * ps, ps, K,
                     nc_last);
    }
}

void gyro_packed_linear_f32(float *Y, int ldy, const float *X, int ldx, const float *Wp, int N,
                            int K, int M)
{
    gyro_packed_linear_f32_isa(gyro_isa_active(), Y, ldy, X, ldx, Wp, N, K, M);
}

/* ---- head merge --------------------------------------------------------------------------- */

size_t gyro_merge_pack_values(int geo, int H, int D, int C)
{
    return geo == GYRO_GEO_HYPERBOLIC ? (size_t)H * gyro_pack_values(C, D)
                                      : gyro_pack_values(C, H * D);
}

void gyro_merge_pack_f32(float *Wp, const float *W, int geo, int H, int D, int C)
{
    const int A = H * D;
    if (geo != GYRO_GEO_HYPERBOLIC) {
        gyro_pack_weights_f32(Wp, W, A, C, A);
        return;
    }
    for (int i = 0; i < H; i++)
        gyro_pack_weights_f32(Wp + (size_t)i * gyro_pack_values(C, D), W + (size_t)i * D, A, C, D);
}

#ifdef GYRO_PACK_X86
#define MERGE_CMAX 512 /* widest C of the AVX-512 and AVX2 merges (row buffers on the stack) */

/* The packed hyperbolic merge of nb ≤ 8 rows on AVX-512: each head's product rr = O_i M_iᵀ for
 * the rows, written just before it is read (so it is read back from L1), then one step of the
 * fused gyro-sum of gyro_merge_sum_f32 (kernels.h) — the same map, head by head across the
 * rows, s ← proj(s ⊕ k_i rr_i) with k_i rr_i = proj(exp0(rr_i)) =
 * min(tanh(√c|rr_i|), 1 − ε)/(√c|rr_i|) · rr_i (Ganea et al. 2018, eq. 3 and Lemma 2), the
 * coefficients of s ⊕ k rr from <s,s>, <rr,rr>, <s,rr> (gyro_hyp_madd_coef). Per head and row
 * one pass of 16-lane multiply-adds for <rr,rr> and <s,rr> (each lane sums ⌈C/16⌉ products in
 * float32, the lanes are added in double), <s,s> from the previous step's |z|², the rows'
 * coefficients as 8-lane double vectors, and one pass for s ← a s + b k rr. Y (nb, C) with
 * C <= MERGE_CMAX, O (nb, H·D) rows of stride H·D, Wp the packed heads (gyro_merge_pack_f32). */
__attribute__((target("avx512f,avx512dq,avx2,fma"))) static void
merge_rows_avx512(float *Y, const float *O, const float *Wp, double c, int nb, int H, int D,
                  int C)
{
    const size_t hv = gyro_pack_values(C, D);
    const int A = H * D, Cp = (C + 15) & ~15, full = Cp / 16;
    const double sc = sqrt(c), maxn = (1.0 - GYRO_HYP_BALL_EPS_F32) / sc;
    /* the rows' running sums s and the head's products rr, each row padded to Cp = 16·⌈C/16⌉
     * (padding 0: the packed panels' rows past C are zero), so every load and store is a whole
     * 16-lane vector and a store is forwarded to the load that reads it back */
    _Alignas(64) float sb[8 * MERGE_CMAX], rb[8 * MERGE_CMAX];
    const __mmask8 rows = (__mmask8)((1u << nb) - 1u);
    /* per row (lane j < nb): <rr,rr>, <s,rr>, <s,s>, the update's a and b·k */
    double vv[8] = {0}, sv[8] = {0}, ab[8], bk[8];
    float t[8] = {0}, kt[8];
    __m512d ss = _mm512_setzero_pd();
    __mmask8 first = rows, fin = 0;
    const __m512d one = _mm512_set1_pd(1.0), two = _mm512_set1_pd(2.0), cv = _mm512_set1_pd(c);
    const __m512d maxnv = _mm512_set1_pd(maxn), maxn2 = _mm512_set1_pd(maxn * maxn);
    for (int i = 0; i < H; i++) {
        /* rr (nb, Cp) = O_i M_iᵀ for the block's rows, written just before it is read */
        gyro_packed_linear_f32_isa(GYRO_ISA_AVX512, rb, Cp, O + (size_t)i * D, A,
                                   Wp + (size_t)i * hv, nb, D, Cp);
        for (int j = 0; j < nb; j++) {
            const float *ri = rb + (long)j * Cp, *y = sb + (long)j * Cp;
            __m512 x = _mm512_setzero_ps(), z = _mm512_setzero_ps();
            const int fst = (first >> j) & 1;
            for (int q = 0; q < full; q++) {
                const __m512 r = _mm512_load_ps(ri + 16 * q);
                x = _mm512_fmadd_ps(r, r, x);
                if (!fst)
                    z = _mm512_fmadd_ps(r, _mm512_load_ps(y + 16 * q), z);
            }
            vv[j] = _mm512_reduce_add_pd(_mm512_add_pd(
                _mm512_cvtps_pd(_mm512_castps512_ps256(x)),
                _mm512_cvtps_pd(_mm512_extractf32x8_ps(x, 1))));
            sv[j] = fst ? 0.0 : _mm512_reduce_add_pd(_mm512_add_pd(
                _mm512_cvtps_pd(_mm512_castps512_ps256(z)),
                _mm512_cvtps_pd(_mm512_extractf32x8_ps(z, 1))));
        }
        /* the rows' coefficients as 8-lane double vectors (the same operations, in the same
         * order, as merge_sum_rows of kernels_impl.h takes them one row at a time) */
        fin = 0;
        for (int j = 0; j < nb; j++)
            fin |= (__mmask8)(isfinite(vv[j]) ? 1u << j : 0u);
        const __m512d vvv = _mm512_maskz_loadu_pd(fin, vv), svv = _mm512_maskz_loadu_pd(fin, sv);
        const __m512d nv = _mm512_sqrt_pd(vvv);
        _mm256_storeu_ps(t, _mm512_cvtpd_ps(_mm512_mul_pd(_mm512_set1_pd(sc), nv)));
        gyro_vtanhc_f32(kt, t, nb);
        __m512d k = _mm512_cvtps_pd(_mm256_loadu_ps(kt));
        k = _mm512_mask_div_pd(k, _mm512_cmp_pd_mask(_mm512_mul_pd(k, nv), maxnv, _CMP_GT_OQ),
                               maxnv, nv);
        const __m512d yy = _mm512_mul_pd(_mm512_mul_pd(k, k), vvv), xy = _mm512_mul_pd(k, svv);
        /* gyro_hyp_madd_coef(c, ss, yy, xy) */
        const __m512d cxy2 = _mm512_mul_pd(_mm512_mul_pd(two, cv), xy);
        __m512d Dn = _mm512_add_pd(_mm512_add_pd(one, cxy2),
                                   _mm512_mul_pd(_mm512_mul_pd(_mm512_mul_pd(cv, cv), ss), yy));
        Dn = _mm512_max_pd(Dn, _mm512_set1_pd(GYRO_HYP_MIN_NORM));
        __m512d a = _mm512_div_pd(_mm512_add_pd(_mm512_add_pd(one, cxy2), _mm512_mul_pd(cv, yy)), Dn);
        __m512d b = _mm512_div_pd(_mm512_sub_pd(one, _mm512_mul_pd(cv, ss)), Dn);
        __m512d zz = _mm512_add_pd(
            _mm512_add_pd(_mm512_mul_pd(_mm512_mul_pd(a, a), ss),
                          _mm512_mul_pd(_mm512_mul_pd(_mm512_mul_pd(two, a), b), xy)),
            _mm512_mul_pd(_mm512_mul_pd(b, b), yy));
        const __mmask8 big = _mm512_cmp_pd_mask(zz, maxn2, _CMP_GT_OQ);
        const __m512d f = _mm512_div_pd(maxnv, _mm512_sqrt_pd(zz));
        a = _mm512_mask_mul_pd(a, big, a, f);
        b = _mm512_mask_mul_pd(b, big, b, f);
        zz = _mm512_mask_mov_pd(zz, big, maxn2);
        zz = _mm512_max_pd(zz, _mm512_setzero_pd());
        /* the first head of a row: s = k rr, |s|² = k² <rr,rr> (a = 0, b = 1) */
        const __mmask8 f1 = first & fin;
        a = _mm512_mask_mov_pd(a, f1, _mm512_setzero_pd());
        b = _mm512_mask_mov_pd(b, f1, one);
        zz = _mm512_mask_mov_pd(zz, f1, yy);
        ss = _mm512_mask_mov_pd(ss, fin, zz);
        _mm512_storeu_pd(ab, a);
        _mm512_storeu_pd(bk, _mm512_mul_pd(b, k));
        for (int j = 0; j < nb; j++) {
            if (!((fin >> j) & 1))
                continue; /* a non-finite head maps to the origin: adds nothing */
            const float *ri = rb + (long)j * Cp;
            float *y = sb + (long)j * Cp;
            const int fst = (first >> j) & 1;
            /* y ← a y + (b k) rr (y ← k rr for the row's first head) */
            const __m512 av = _mm512_set1_ps((float)ab[j]), bv = _mm512_set1_ps((float)bk[j]);
            for (int q = 0; q < full; q++) {
                __m512 yv = _mm512_mul_ps(bv, _mm512_load_ps(ri + 16 * q));
                if (!fst)
                    yv = _mm512_add_ps(_mm512_mul_ps(av, _mm512_load_ps(y + 16 * q)), yv);
                _mm512_store_ps(y + 16 * q, yv);
            }
        }
        first &= (__mmask8)~fin;
    }
    for (int j = 0; j < nb; j++) {
        if ((first >> j) & 1) /* no finite head: the origin */
            memset(Y + (long)j * C, 0, (size_t)C * sizeof(float));
        else
            memcpy(Y + (long)j * C, sb + (long)j * Cp, (size_t)C * sizeof(float));
    }
}

/* Σ of a float32 8-lane vector's lanes in double (the low and high four lanes widened and
 * added pairwise, then the four sums added: ((l0+l4)+(l2+l6)) + ((l1+l5)+(l3+l7))). */
static inline __attribute__((always_inline, target("avx2,fma"))) double
merge_hsum_avx2(__m256 x)
{
    const __m256d s = _mm256_add_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(x)),
                                    _mm256_cvtps_pd(_mm256_extractf128_ps(x, 1)));
    const __m128d h = _mm_add_pd(_mm256_castpd256_pd128(s), _mm256_extractf128_pd(s, 1));
    return _mm_cvtsd_f64(_mm_add_sd(h, _mm_unpackhi_pd(h, h)));
}

/* The packed hyperbolic merge of nb ≤ 8 rows on AVX2 + FMA: merge_rows_avx512 on 8-lane
 * float32 and 4-lane double vectors, the same map and the same order of operations — per head
 * the rows' products rr = O_i M_iᵀ (AVX2 packed kernel) written just before they are read, then
 * s ← proj(s ⊕ k_i rr_i), k_i rr_i = proj(exp0(rr_i)) = min(tanh(√c|rr_i|), 1 − ε)/(√c|rr_i|)
 * · rr_i (Ganea et al. 2018, eq. 3 and Lemma 2), the coefficients of s ⊕ k rr from <s,s>,
 * <rr,rr>, <s,rr> (gyro_hyp_madd_coef). Per head and row one pass of 8-lane float32
 * multiply-adds for <rr,rr> and <s,rr> (each lane sums ⌈C/8⌉ products in float32, the lanes are
 * added in double), <s,s> from the previous step's |z|², the 8 rows' coefficients as two 4-lane
 * double vectors (a compare and blend where AVX-512 masks), one pass for s ← a s + b k rr.
 * Rows padded to Cp = 8·⌈C/8⌉ (the packed panels' columns past C are zero), so every load and
 * store is a whole aligned 8-lane vector. Y (nb, C) with C <= MERGE_CMAX, O (nb, H·D) rows of
 * stride H·D, Wp the packed heads (gyro_merge_pack_f32). */
__attribute__((target("avx2,fma"))) static void
merge_rows_avx2(float *Y, const float *O, const float *Wp, double c, int nb, int H, int D, int C)
{
    const size_t hv = gyro_pack_values(C, D);
    const int A = H * D, Cp = (C + 7) & ~7, full = Cp / 8;
    const double sc = sqrt(c), maxn = (1.0 - GYRO_HYP_BALL_EPS_F32) / sc;
    /* the rows' running sums s and the head's products rr, (nb, Cp) each */
    _Alignas(32) float sb[8 * MERGE_CMAX], rb[8 * MERGE_CMAX];
    /* per row j < nb: <rr,rr>, <s,rr>, <s,s>, the update's a and b·k, finite <rr,rr> (lane
     * masks of all ones) and a row's first finite head still to come (likewise) */
    _Alignas(32) double vv[8] = {0}, sv[8] = {0}, ab[8], bk[8];
    _Alignas(32) float t[8] = {0}, kt[8] = {0};
    __m256d ss[2] = {_mm256_setzero_pd(), _mm256_setzero_pd()};
    int first[8];
    for (int j = 0; j < 8; j++)
        first[j] = j < nb;
    const __m256d one = _mm256_set1_pd(1.0), two = _mm256_set1_pd(2.0), cv = _mm256_set1_pd(c);
    const __m256d zero = _mm256_setzero_pd(), minn = _mm256_set1_pd(GYRO_HYP_MIN_NORM);
    const __m256d maxnv = _mm256_set1_pd(maxn), maxn2 = _mm256_set1_pd(maxn * maxn);
    for (int i = 0; i < H; i++) {
        /* rr (nb, Cp) = O_i M_iᵀ for the block's rows, written just before it is read */
        gyro_packed_linear_f32_isa(GYRO_ISA_AVX2, rb, Cp, O + (size_t)i * D, A,
                                   Wp + (size_t)i * hv, nb, D, Cp);
        int fin[8] = {0};
        for (int j = 0; j < nb; j++) {
            const float *ri = rb + (long)j * Cp, *y = sb + (long)j * Cp;
            __m256 x = _mm256_setzero_ps(), z = _mm256_setzero_ps();
            if (first[j]) {
                for (int q = 0; q < full; q++) {
                    const __m256 r = _mm256_load_ps(ri + 8 * q);
                    x = _mm256_fmadd_ps(r, r, x);
                }
                sv[j] = 0.0;
            } else {
                for (int q = 0; q < full; q++) {
                    const __m256 r = _mm256_load_ps(ri + 8 * q);
                    x = _mm256_fmadd_ps(r, r, x);
                    z = _mm256_fmadd_ps(r, _mm256_load_ps(y + 8 * q), z);
                }
                sv[j] = merge_hsum_avx2(z);
            }
            vv[j] = merge_hsum_avx2(x);
            fin[j] = isfinite(vv[j]);
            if (!fin[j]) /* a non-finite head maps to the origin: its lane computes on zeros */
                vv[j] = sv[j] = 0.0;
        }
        /* the rows' tanh ratios k = tanh(√c|rr|)/(√c|rr|), one vector call for the 8 rows */
        for (int h = 0; h < 2; h++) {
            const __m256d nv = _mm256_sqrt_pd(_mm256_load_pd(vv + 4 * h));
            _mm_store_ps(t + 4 * h, _mm256_cvtpd_ps(_mm256_mul_pd(_mm256_set1_pd(sc), nv)));
        }
        gyro_vtanhc_f32(kt, t, nb);
        /* the rows' coefficients as two 4-lane double vectors (the same operations, in the
         * same order, as merge_rows_avx512 and merge_sum_rows of kernels_impl.h) */
        for (int h = 0; h < 2 && 4 * h < nb; h++) {
            const __m256d vvv = _mm256_load_pd(vv + 4 * h), svv = _mm256_load_pd(sv + 4 * h);
            const __m256d nv = _mm256_sqrt_pd(vvv);
            __m256d k = _mm256_cvtps_pd(_mm_load_ps(kt + 4 * h));
            k = _mm256_blendv_pd(k, _mm256_div_pd(maxnv, nv),
                                 _mm256_cmp_pd(_mm256_mul_pd(k, nv), maxnv, _CMP_GT_OQ));
            const __m256d yy = _mm256_mul_pd(_mm256_mul_pd(k, k), vvv), xy = _mm256_mul_pd(k, svv);
            const __m256d s2 = ss[h];
            /* gyro_hyp_madd_coef(c, ss, yy, xy) */
            const __m256d cxy2 = _mm256_mul_pd(_mm256_mul_pd(two, cv), xy);
            __m256d Dn = _mm256_add_pd(_mm256_add_pd(one, cxy2),
                                       _mm256_mul_pd(_mm256_mul_pd(_mm256_mul_pd(cv, cv), s2), yy));
            Dn = _mm256_max_pd(Dn, minn);
            __m256d a = _mm256_div_pd(_mm256_add_pd(_mm256_add_pd(one, cxy2), _mm256_mul_pd(cv, yy)),
                                      Dn);
            __m256d b = _mm256_div_pd(_mm256_sub_pd(one, _mm256_mul_pd(cv, s2)), Dn);
            __m256d zz = _mm256_add_pd(
                _mm256_add_pd(_mm256_mul_pd(_mm256_mul_pd(a, a), s2),
                              _mm256_mul_pd(_mm256_mul_pd(_mm256_mul_pd(two, a), b), xy)),
                _mm256_mul_pd(_mm256_mul_pd(b, b), yy));
            const __m256d big = _mm256_cmp_pd(zz, maxn2, _CMP_GT_OQ);
            const __m256d f = _mm256_div_pd(maxnv, _mm256_sqrt_pd(zz));
            a = _mm256_blendv_pd(a, _mm256_mul_pd(a, f), big);
            b = _mm256_blendv_pd(b, _mm256_mul_pd(b, f), big);
            zz = _mm256_blendv_pd(zz, maxn2, big);
            zz = _mm256_max_pd(zz, zero);
            /* the first head of a row: s = k rr, |s|² = k² <rr,rr> (a = 0, b = 1); a row's
             * <s,s> moves only on a finite head */
            const int *fj = first + 4 * h, *nj = fin + 4 * h;
            const __m256d f1 = _mm256_castsi256_pd(_mm256_set_epi64x(
                -(long long)(fj[3] && nj[3]), -(long long)(fj[2] && nj[2]),
                -(long long)(fj[1] && nj[1]), -(long long)(fj[0] && nj[0])));
            const __m256d fm = _mm256_castsi256_pd(
                _mm256_set_epi64x(-(long long)nj[3], -(long long)nj[2], -(long long)nj[1],
                                  -(long long)nj[0]));
            a = _mm256_blendv_pd(a, zero, f1);
            b = _mm256_blendv_pd(b, one, f1);
            zz = _mm256_blendv_pd(zz, yy, f1);
            ss[h] = _mm256_blendv_pd(s2, zz, fm);
            _mm256_store_pd(ab + 4 * h, a);
            _mm256_store_pd(bk + 4 * h, _mm256_mul_pd(b, k));
        }
        for (int j = 0; j < nb; j++) {
            if (!fin[j])
                continue; /* a non-finite head maps to the origin: adds nothing */
            const float *ri = rb + (long)j * Cp;
            float *y = sb + (long)j * Cp;
            /* y ← a y + (b k) rr (y ← k rr for the row's first head) */
            const __m256 av = _mm256_set1_ps((float)ab[j]), bv = _mm256_set1_ps((float)bk[j]);
            if (first[j]) {
                for (int q = 0; q < full; q++)
                    _mm256_store_ps(y + 8 * q, _mm256_mul_ps(bv, _mm256_load_ps(ri + 8 * q)));
                first[j] = 0;
            } else {
                for (int q = 0; q < full; q++)
                    _mm256_store_ps(y + 8 * q,
                                    _mm256_add_ps(_mm256_mul_ps(av, _mm256_load_ps(y + 8 * q)),
                                                  _mm256_mul_ps(bv, _mm256_load_ps(ri + 8 * q))));
            }
        }
    }
    for (int j = 0; j < nb; j++) {
        if (first[j]) /* no finite head: the origin */
            memset(Y + (long)j * C, 0, (size_t)C * sizeof(float));
        else
            memcpy(Y + (long)j * C, sb + (long)j * Cp, (size_t)C * sizeof(float));
    }
}
#endif

void gyro_merge_forward_packed_f32_isa(gyro_isa isa, float *Y, float *RR, const float *O,
                                       const float *Wp, int geo, float c, int N, int H, int D,
                                       int C)
{
    assert(gyro_isa_supported(isa));
    const int A = H * D;
    if (geo != GYRO_GEO_HYPERBOLIC) {
        gyro_packed_linear_f32_isa(isa, Y, C, O, A, Wp, N, A, C);
        return;
    }
#ifdef GYRO_PACK_X86
    if (isa == GYRO_ISA_AVX512 && C <= MERGE_CMAX) { /* 8 rows at a time */
        for (int n = 0; n < N; n += 8)
            merge_rows_avx512(Y + (size_t)n * C, O + (size_t)n * A, Wp, (double)c,
                              N - n < 8 ? N - n : 8, H, D, C);
        return;
    }
    if (isa == GYRO_ISA_AVX2 && C <= MERGE_CMAX) { /* 8 rows at a time */
        for (int n = 0; n < N; n += 8)
            merge_rows_avx2(Y + (size_t)n * C, O + (size_t)n * A, Wp, (double)c,
                            N - n < 8 ? N - n : 8, H, D, C);
        return;
    }
#endif
    const size_t hv = gyro_pack_values(C, D);
    for (int i = 0; i < H; i++) /* RR_i = O_i M_iᵀ */
        gyro_packed_linear_f32_isa(isa, RR + (size_t)i * C, H * C, O + (size_t)i * D, A,
                                   Wp + (size_t)i * hv, N, D, C);
    gyro_merge_sum_f32(Y, RR, c, N, H, C);
}

void gyro_merge_forward_packed_f32(float *Y, float *RR, const float *O, const float *Wp, int geo,
                                   float c, int N, int H, int D, int C)
{
    gyro_merge_forward_packed_f32_isa(gyro_isa_active(), Y, RR, O, Wp, geo, c, N, H, D, C);
}

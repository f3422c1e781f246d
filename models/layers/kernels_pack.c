/* kernels_pack.c — packed-weight float32 products with runtime CPU dispatch (kernels_pack.h).
 *
 * One driver walks X in blocks of up to 6 rows and the packed weights in panels of 16 output
 * columns; a micro-kernel computes MR rows × NP panels at a time with every accumulator in a
 * register. NP grows as MR shrinks so that at least 8 independent multiply-add chains are in
 * flight (an FMA has a latency of about 4 cycles and two issue per cycle), which is what keeps
 * 1- and 2-token inputs fast: 1 row × 4 panels, 2 × 2, 3 × 2, then 4–6 rows × 1 panel.
 * The kernels of each instruction set are compiled with GCC's target attribute, so they exist
 * whatever -march the library was built with; gyro_isa_active picks one at run time.
 */
#include "models/layers/kernels_pack.h"

#include "models/layers/kernels.h"

#include <assert.h>
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
    const pk_kernel *one = NULL, *wide = NULL;
#ifdef GYRO_PACK_X86
    if (isa == GYRO_ISA_AVX512) {
        one = pk_avx512_one;
        wide = pk_avx512_wide;
    } else if (isa == GYRO_ISA_AVX2) {
        one = pk_avx2_one;
        wide = pk_avx2_wide;
    }
#endif
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
        for (; p + wnp <= np; p += wnp)
            wide[mr](y + (size_t)p * GYRO_PACK_NR, ldy, x, ldx, Wp + (size_t)p * ps, ps, K,
                     p + wnp == np ? nc_last : GYRO_PACK_NR);
        for (; p < np; p++)
            one[mr](y + (size_t)p * GYRO_PACK_NR, ldy, x, ldx, Wp + (size_t)p * ps, ps, K,
                    p + 1 == np ? nc_last : GYRO_PACK_NR);
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

void gyro_merge_forward_packed_f32(float *Y, float *RR, const float *O, const float *Wp, int geo,
                                   float c, int N, int H, int D, int C)
{
    const int A = H * D;
    if (geo != GYRO_GEO_HYPERBOLIC) {
        gyro_packed_linear_f32(Y, C, O, A, Wp, N, A, C);
        return;
    }
    const gyro_isa isa = gyro_isa_active();
    const size_t hv = gyro_pack_values(C, D);
    for (int i = 0; i < H; i++) /* RR_i = O_i M_iᵀ */
        gyro_packed_linear_f32_isa(isa, RR + (size_t)i * C, H * C, O + (size_t)i * D, A,
                                   Wp + (size_t)i * hv, N, D, C);
    gyro_merge_sum_f32(Y, RR, c, N, H, C);
}

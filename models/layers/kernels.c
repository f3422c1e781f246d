/* kernels.c — the layer kernels of kernels.h in float32 and float64.
 *
 * Both precisions are generated from the one implementation in kernels_impl.h: this file only
 * instantiates it with the storage type, the names and the precision's constants, as
 * models/hyp/poincare.c does.
 */
#include "models/layers/kernels.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "models/core/blas.h"
#include "models/hyp/hyp_consts.h"
#include "models/hyp/hyp_scalar.h"
#include "models/hyp/poincare.h"
#include "models/hyp/vexp_impl.h"
#include "models/hyp/vmath.h"

/* *v ← exp of its 8 lanes, for lanes <= 0 (softmax terms), float32: the shared vector exp
 * (models/hyp/vexp_impl.h, Cephes' expf, within 2 ulp). */
typedef gyro_v8sf kern_v8sf;
static inline void kern_vexp8_f32(kern_v8sf *vp) { gyro_vexp8_f32(vp); }

/* the same in float64 by libm, lane by lane (the gradient checks' precision) */
typedef double kern_v8df __attribute__((vector_size(64)));
static inline void kern_vexp8_f64(kern_v8df *v)
{
    for (int i = 0; i < 8; i++)
        (*v)[i] = exp((*v)[i]);
}

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define KERN_ATT_AVX2 1
/* One head of attention_backward in float32 with AVX2 (the default x86-64-v3 build), D <= 8,
 * n <= 64: the formulas of attention_head_backward_direct (kernels_attention_impl.h) with masked loads
 * and stores of the head's D coordinates (no lane-by-lane copies, no over-read past a row),
 * the values transposed by gathers (vt[d][jb]: keys jb·8 … jb·8+7 at coordinate d) and the
 * P row blocks read by masked loads (lanes past n are 0):
 *   dP_i = dO_i Vᵀ,  dS_i = P_i ⊙ (dP_i − <P_i, dP_i>)  (the dot product in double),
 *   dQ_i += s Σ_j dS_ij k_j,  dK_j += s Σ_i dS_ij q_i,  dV_j += Σ_i P_ij dO_i.
 * Products use FMA, so the results differ from the generic loop by float rounding (checked
 * against the reference loop in tests/check_layers.c). Rows of q, k, v, dq, dk, dv stride ld;
 * p (n, n) stride lp; dout stride lo. */
static void kern_att_bwd_avx2(float *dq, float *dk, float *dv, const float *q, const float *k,
                              const float *v, int ld, const float *p, int lp, const float *dout,
                              int lo, float scale, int n, int D)
{
    __m256 qp[64], kp[64], dka[64], dva[64], vt[8][8];
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i dmask = _mm256_cmpgt_epi32(_mm256_set1_epi32(D), lane);
    const __m256i vidx = _mm256_mullo_epi32(lane, _mm256_set1_epi32(ld));
    const __m256 zero = _mm256_setzero_ps();
    const int nb = (n + 7) / 8;
    for (int j = 0; j < n; j++) {
        qp[j] = _mm256_maskload_ps(q + (long)j * ld, dmask);
        kp[j] = _mm256_maskload_ps(k + (long)j * ld, dmask);
        dka[j] = dva[j] = zero;
    }
    for (int jb = 0; jb < nb; jb++) {
        const int cnt = n - jb * 8 < 8 ? n - jb * 8 : 8;
        const __m256 jm = _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32(cnt), lane));
        for (int d = 0; d < D; d++)
            vt[d][jb] = _mm256_mask_i32gather_ps(zero, v + (long)jb * 8 * ld + d, vidx, jm, 4);
    }
    for (int i = 0; i < n; i++) {
        const float *pr = p + (long)i * lp, *gi = dout + (long)i * lo;
        const __m256 gv = _mm256_maskload_ps(gi, dmask);
        __m256 pv[8], dpv[8];
        __m256d t0 = _mm256_setzero_pd(), t1 = _mm256_setzero_pd();
        for (int jb = 0; jb < nb; jb++) {
            const int cnt = n - jb * 8 < 8 ? n - jb * 8 : 8;
            const __m256i jm = _mm256_cmpgt_epi32(_mm256_set1_epi32(cnt), lane);
            __m256 sv = zero;
            for (int d = 0; d < D; d++)
                sv = _mm256_fmadd_ps(_mm256_broadcast_ss(gi + d), vt[d][jb], sv);
            pv[jb] = _mm256_maskload_ps(pr + jb * 8, jm);
            dpv[jb] = sv;
            t0 = _mm256_fmadd_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(pv[jb])),
                                 _mm256_cvtps_pd(_mm256_castps256_ps128(sv)), t0);
            t1 = _mm256_fmadd_pd(_mm256_cvtps_pd(_mm256_extractf128_ps(pv[jb], 1)),
                                 _mm256_cvtps_pd(_mm256_extractf128_ps(sv, 1)), t1);
        }
        double tl[4];
        _mm256_storeu_pd(tl, _mm256_add_pd(t0, t1));
        const __m256 dot = _mm256_set1_ps((float)((tl[0] + tl[2]) + (tl[1] + tl[3])));
        __m256 acc = zero;
        for (int jb = 0; jb < nb; jb++) {
            const int cnt = n - jb * 8 < 8 ? n - jb * 8 : 8;
            float ds[8];
            _mm256_storeu_ps(ds, _mm256_mul_ps(pv[jb], _mm256_sub_ps(dpv[jb], dot)));
            for (int t = 0; t < cnt; t++) {
                const int j = jb * 8 + t;
                const __m256 dsj = _mm256_broadcast_ss(ds + t);
                acc = _mm256_fmadd_ps(dsj, kp[j], acc);
                dka[j] = _mm256_fmadd_ps(dsj, qp[i], dka[j]);
                dva[j] = _mm256_fmadd_ps(_mm256_broadcast_ss(pr + j), gv, dva[j]);
            }
        }
        float *dqi = dq + (long)i * ld;
        _mm256_maskstore_ps(dqi, dmask, _mm256_fmadd_ps(_mm256_set1_ps(scale), acc,
                                                        _mm256_maskload_ps(dqi, dmask)));
    }
    const __m256 vs = _mm256_set1_ps(scale);
    for (int j = 0; j < n; j++) {
        float *dkj = dk + (long)j * ld, *dvj = dv + (long)j * ld;
        _mm256_maskstore_ps(dkj, dmask, _mm256_fmadd_ps(vs, dka[j], _mm256_maskload_ps(dkj, dmask)));
        _mm256_maskstore_ps(dvj, dmask, _mm256_add_ps(dva[j], _mm256_maskload_ps(dvj, dmask)));
    }
}

/* The head-i products of the hyperbolic merge backward for a block of nb rows, float32 with
 * AVX2 (D <= 8, C <= 512): dO_r,i += dRR_r,i M_i and dW_i += Σ_r dRR_r,iᵀ o_r,i, where M_i is
 * W's columns i·D … i·D+D−1 (C rows of stride A = H·D) and dRR_r,i the head's C gradient
 * values of row r (dRRb rows of stride H·C). Instead of two product calls per head over all
 * rows (shapes too thin for BLAS: k = D or n = D), per row: one pass over the C values with
 * four FMA chains for dO and one FMA per value into the block's dW_i accumulator; wi (C, 8)
 * holds M_i's rows padded to 8 lanes, acc (C, 8) the accumulator (both 32-byte aligned). */
static void kern_merge_head_block_avx2(float *dO, float *dW, const float *dRRb, const float *O,
                                       const float *W, int nb, int H, int D, int C, int i,
                                       float *wi, float *acc)
{
    const int A = H * D;
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i dmask = _mm256_cmpgt_epi32(_mm256_set1_epi32(D), lane);
    const __m256 zero = _mm256_setzero_ps();
    for (int c = 0; c < C; c++) {
        _mm256_store_ps(wi + 8 * c, _mm256_maskload_ps(W + (long)c * A + i * D, dmask));
        _mm256_store_ps(acc + 8 * c, zero);
    }
    for (int r = 0; r < nb; r++) {
        const __m256 o = _mm256_maskload_ps(O + (long)r * A + i * D, dmask);
        const float *e = dRRb + ((long)r * H + i) * C;
        __m256 a0 = zero, a1 = zero, a2 = zero, a3 = zero;
        int c = 0;
        for (; c + 4 <= C; c += 4) {
            const __m256 e0 = _mm256_broadcast_ss(e + c), e1 = _mm256_broadcast_ss(e + c + 1);
            const __m256 e2 = _mm256_broadcast_ss(e + c + 2), e3 = _mm256_broadcast_ss(e + c + 3);
            a0 = _mm256_fmadd_ps(e0, _mm256_load_ps(wi + 8 * c), a0);
            a1 = _mm256_fmadd_ps(e1, _mm256_load_ps(wi + 8 * c + 8), a1);
            a2 = _mm256_fmadd_ps(e2, _mm256_load_ps(wi + 8 * c + 16), a2);
            a3 = _mm256_fmadd_ps(e3, _mm256_load_ps(wi + 8 * c + 24), a3);
            _mm256_store_ps(acc + 8 * c, _mm256_fmadd_ps(e0, o, _mm256_load_ps(acc + 8 * c)));
            _mm256_store_ps(acc + 8 * c + 8, _mm256_fmadd_ps(e1, o, _mm256_load_ps(acc + 8 * c + 8)));
            _mm256_store_ps(acc + 8 * c + 16, _mm256_fmadd_ps(e2, o, _mm256_load_ps(acc + 8 * c + 16)));
            _mm256_store_ps(acc + 8 * c + 24, _mm256_fmadd_ps(e3, o, _mm256_load_ps(acc + 8 * c + 24)));
        }
        for (; c < C; c++) {
            const __m256 ec = _mm256_broadcast_ss(e + c);
            a0 = _mm256_fmadd_ps(ec, _mm256_load_ps(wi + 8 * c), a0);
            _mm256_store_ps(acc + 8 * c, _mm256_fmadd_ps(ec, o, _mm256_load_ps(acc + 8 * c)));
        }
        float *d = dO + (long)r * A + i * D;
        const __m256 sum = _mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3));
        _mm256_maskstore_ps(d, dmask, _mm256_add_ps(_mm256_maskload_ps(d, dmask), sum));
    }
    for (int c = 0; c < C; c++) {
        float *d = dW + (long)c * A + i * D;
        _mm256_maskstore_ps(d, dmask,
                            _mm256_add_ps(_mm256_maskload_ps(d, dmask), _mm256_load_ps(acc + 8 * c)));
    }
}
#else
#define KERN_ATT_AVX2 0
#endif

#define T float
#define S(name) name##_f32
#define P(name) gyro_##name##_f32
#define BALL_EPS GYRO_HYP_BALL_EPS_F32
#define ARTANH_MAX GYRO_HYP_ARTANH_MAX_F32
#define EXP expf
#define VMATH 1 /* batched tanh(t)/t of the fused maps by models/hyp/vmath.h */
#include "models/hyp/hyp_vec_impl.h"
#include "models/layers/kernels_impl.h"
#undef T
#undef S
#undef P
#undef BALL_EPS
#undef ARTANH_MAX
#undef EXP
#undef VMATH

#define T double
#define S(name) name##_f64
#define P(name) gyro_##name##_f64
#define BALL_EPS GYRO_HYP_BALL_EPS_F64
#define ARTANH_MAX GYRO_HYP_ARTANH_MAX_F64
#define EXP exp
#define VMATH 0 /* float64: libm, one scalar at a time (the golden precision) */
#include "models/hyp/hyp_vec_impl.h"
#include "models/layers/kernels_impl.h"
#undef T
#undef S
#undef P
#undef BALL_EPS
#undef ARTANH_MAX
#undef EXP
#undef VMATH

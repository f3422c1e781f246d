/* lorentz.c — the Lorentz (HyboNet) layers of lorentz.h in float32 and float64.
 *
 * Both precisions come from the one implementation in lorentz_impl.h: this file only
 * instantiates it with the storage type, the names (the convention of models/hyp/lorentz.c) and
 * the BLAS product of that precision (models/core/blas.h).
 * Every reduction that feeds a square root or a division accumulates in double in both.
 */
#include "models/layers/lorentz.h"

#include <assert.h>
#include <math.h>
#include <stddef.h>

#include "models/core/blas.h"
#include "models/layers/kernels_pack.h"
#include "models/hyp/hyp_consts.h"

#define T float
#define S(name) name##_f32
#define P(name) gyro_lorentz_##name##_f32
#define GEMM gyro_blas_gemm_f32
#include "models/layers/lorentz_impl.h"
#undef T
#undef S
#undef P
#undef GEMM

/* ---- float32 inference on packed weights (kernels_pack.h) ---------------------------------- */

void gyro_lorentz_hlinear_forward_packed_f32(float *y, float *U, float *Hc, const float *x,
                                             const float *mask, const float *P, const float *Wp,
                                             const float *b, const float *v, const float *b_t,
                                             const float *log_lambda, double eps, int act,
                                             double K, int rows, int n, int m, int p_rows)
{
    assert(K < 0.0 && rows >= 0 && n >= 0 && m >= 1 && (!P || p_rows >= 1));
    double sk = sqrt(-1.0 / K);
    assert(eps > sk);
    int d = n + 1;
    if (rows == 0) return;
    const float *Hm = lz_hin_f32(Hc, x, mask, act, rows, d);
    gyro_packed_linear_f32(U, m, Hm, d, Wp, rows, d, m);
    lz_hfinish_f32(y, U, x, P, b, v, b_t, log_lambda, eps, sk, rows, d, m, p_rows, 1);
}

void gyro_lorentz_hlinear_group_forward_packed_f32(float *y, float *U, float *Z, const float *x,
                                                   const float *Wp, const float *b,
                                                   const float *Vtp, const float *tl, double eps,
                                                   double K, int rows, int n, int m, int G)
{
    assert(K < 0.0 && rows >= 0 && n >= 0 && m >= 1 && G >= 1);
    double sk = sqrt(-1.0 / K);
    assert(eps > sk);
    int d = n + 1;
    if (rows == 0) return;
    gyro_packed_linear_f32(U, G * m, x, d, Wp, rows, d, G * m);
    gyro_packed_linear_f32(Z, G, x, d, Vtp, rows, d, G);
    lz_gfinish_f32(y, U, Z, b, tl, eps, sk, rows, m, G, 1);
}

#define T double
#define S(name) name##_f64
#define P(name) gyro_lorentz_##name##_f64
#define GEMM gyro_blas_gemm_f64
#include "models/layers/lorentz_impl.h"
#undef T
#undef S
#undef P
#undef GEMM

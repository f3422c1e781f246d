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
#include "models/hyp/vmath.h"

/* *v ← exp of its 8 lanes, for lanes <= 0 (softmax terms), float32: Cephes' expf (range reduction
 * by ln 2 in two parts, degree-6 polynomial on [−ln2/2, ln2/2], then the exponent bits; within
 * 2 ulp of expf). Lanes below −87 (e⁻⁸⁷ ≈ 1.6e-38) give 0. (By pointer: a 64-byte vector
 * passed by value would change the ABI without AVX-512.) */
typedef float kern_v8sf __attribute__((vector_size(32)));
typedef int32_t kern_v8si __attribute__((vector_size(32)));
static inline void kern_vexp8_f32(kern_v8sf *vp)
{
    kern_v8sf v = *vp;
    const kern_v8sf lo = {-87.0f, -87.0f, -87.0f, -87.0f, -87.0f, -87.0f, -87.0f, -87.0f};
    const kern_v8si under = v < lo; /* all ones where v < −87 */
    v = (kern_v8sf)(((kern_v8si)v & ~under) | ((kern_v8si)lo & under));
    const float magic = 12582912.0f; /* 1.5·2²³: adding it rounds to an integer */
    kern_v8sf fx = v * 1.44269504088896341f + magic;
    fx = fx - magic;
    v = v - fx * 0.693359375f;
    v = v - fx * -2.12194440e-4f;
    const kern_v8sf z = v * v;
    kern_v8sf y = v * 1.9875691500e-4f + 1.3981999507e-3f;
    y = y * v + 8.3334519073e-3f;
    y = y * v + 4.1665795894e-2f;
    y = y * v + 1.6666665459e-1f;
    y = y * v + 5.0000001201e-1f;
    y = y * z + v + 1.0f;
    const kern_v8si e = (__builtin_convertvector(fx, kern_v8si) + 127) << 23;
    y = y * (kern_v8sf)e;
    *vp = (kern_v8sf)((kern_v8si)y & ~under);
}

/* the same in float64 by libm, lane by lane (the gradient checks' precision) */
typedef double kern_v8df __attribute__((vector_size(64)));
static inline void kern_vexp8_f64(kern_v8df *v)
{
    for (int i = 0; i < 8; i++)
        (*v)[i] = exp((*v)[i]);
}

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

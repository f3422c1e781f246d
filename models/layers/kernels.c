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

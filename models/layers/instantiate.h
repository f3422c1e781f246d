/* instantiate.h — compile a layer's *_impl.h once in float32 and once in float64.
 *
 * Each layer keeps one formula, written over the macros below, in models/layers/<layer>_impl.h;
 * its <layer>.c defines GYRO_LAYER_IMPL as that file's path and includes this header:
 *
 *     #define GYRO_LAYER_IMPL "models/layers/act_impl.h"
 *     #include "models/layers/instantiate.h"
 *
 * The implementation sees R (the real type), S (the GYRO_F32 / GYRO_F64 name suffix),
 * HYP(name) (the math-core op of that precision), GEMM (the BLAS product of that precision),
 * BALL_EPS (the ball clamp of that precision) and EXPR (exp of that precision). No include
 * guard: the header is meant to be included once per layer translation unit.
 */
#ifndef GYRO_LAYER_IMPL
#error "define GYRO_LAYER_IMPL (the path of the layer's *_impl.h) before including instantiate.h"
#endif

#include <math.h>

#include "models/core/blas.h"
#include "models/hyp/hyp_consts.h"
#include "models/hyp/poincare.h"

#define R float
#define S GYRO_F32
#define HYP(name) gyro_poincare_##name##_f32
#define GEMM gyro_blas_gemm_f32
#define BALL_EPS GYRO_HYP_BALL_EPS_F32
#define EXPR expf
#include GYRO_LAYER_IMPL
#undef R
#undef S
#undef HYP
#undef GEMM
#undef BALL_EPS
#undef EXPR

#define R double
#define S GYRO_F64
#define HYP(name) gyro_poincare_##name##_f64
#define GEMM gyro_blas_gemm_f64
#define BALL_EPS GYRO_HYP_BALL_EPS_F64
#define EXPR exp
#include GYRO_LAYER_IMPL
#undef R
#undef S
#undef HYP
#undef GEMM
#undef BALL_EPS
#undef EXPR

#undef GYRO_LAYER_IMPL

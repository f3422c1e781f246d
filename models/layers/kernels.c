/* kernels.c — the layer kernels of kernels.h in float32 and float64.
 *
 * Both precisions are generated from the one implementation in kernels_impl.h: this file only
 * instantiates it with the storage type, the names and the precision's constants, as
 * models/hyp/poincare.c does.
 */
#include "models/layers/kernels.h"

#include <math.h>
#include <string.h>

#include "models/core/blas.h"
#include "models/hyp/hyp_consts.h"
#include "models/hyp/hyp_scalar.h"
#include "models/hyp/poincare.h"

#define T float
#define S(name) name##_f32
#define P(name) gyro_##name##_f32
#define BALL_EPS GYRO_HYP_BALL_EPS_F32
#define ARTANH_MAX GYRO_HYP_ARTANH_MAX_F32
#define EXP expf
#include "models/hyp/hyp_vec_impl.h"
#include "models/layers/kernels_impl.h"
#undef T
#undef S
#undef P
#undef BALL_EPS
#undef ARTANH_MAX
#undef EXP

#define T double
#define S(name) name##_f64
#define P(name) gyro_##name##_f64
#define BALL_EPS GYRO_HYP_BALL_EPS_F64
#define ARTANH_MAX GYRO_HYP_ARTANH_MAX_F64
#define EXP exp
#include "models/hyp/hyp_vec_impl.h"
#include "models/layers/kernels_impl.h"
#undef T
#undef S
#undef P
#undef BALL_EPS
#undef ARTANH_MAX
#undef EXP

/* poincare.c — the Poincaré-ball ops of poincare.h in float32 and float64.
 *
 * Both precisions are generated from the one implementation in poincare_impl.h: this file only
 * instantiates it with the storage type, the names and the precision's clamps (hyp_consts.h).
 * The float32 instance stores float32 and computes every dot product, norm and scalar
 * coefficient in double (shared/DESIGN.md, "Precision").
 */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>

#include "models/hyp/hyp_consts.h"
#include "models/hyp/hyp_scalar.h"
#include "models/hyp/poincare.h"

#define T float
#define S(name) name##_f32
#define P(name) gyro_poincare_##name##_f32
#define BALL_EPS GYRO_HYP_BALL_EPS_F32
#define ARTANH_MAX GYRO_HYP_ARTANH_MAX_F32
#include "models/hyp/poincare_impl.h"
#undef T
#undef S
#undef P
#undef BALL_EPS
#undef ARTANH_MAX

#define T double
#define S(name) name##_f64
#define P(name) gyro_poincare_##name##_f64
#define BALL_EPS GYRO_HYP_BALL_EPS_F64
#define ARTANH_MAX GYRO_HYP_ARTANH_MAX_F64
#include "models/hyp/poincare_impl.h"
#undef T
#undef S
#undef P
#undef BALL_EPS
#undef ARTANH_MAX

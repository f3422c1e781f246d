/* geo.c — float32 and float64 instantiations of geo_impl.h (see geo.h). */
#include "models/layers/geo.h"

#include <string.h>

#include "models/hyp/hyp_consts.h"
#include "models/hyp/poincare.h"

#define R float
#define S GYRO_F32
#define HYP(name) gyro_poincare_##name##_f32
#define BALL_EPS GYRO_HYP_BALL_EPS_F32
#include "models/layers/geo_impl.h"
#undef R
#undef S
#undef HYP
#undef BALL_EPS

#define R double
#define S GYRO_F64
#define HYP(name) gyro_poincare_##name##_f64
#define BALL_EPS GYRO_HYP_BALL_EPS_F64
#include "models/layers/geo_impl.h"
#undef R
#undef S
#undef HYP
#undef BALL_EPS

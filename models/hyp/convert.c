/* convert.c — hyperboloid ↔ Poincaré-ball conversions of convert.h in float32 and float64,
 * generated from the one implementation in convert_impl.h (norms in double).
 */
#include <math.h>
#include <stddef.h>

#include "models/hyp/convert.h"
#include "models/hyp/hyp_consts.h"

#define T float
#define S(name) name##_cv_f32
#define C(name) gyro_hyp_##name##_f32
#define ARTANH_MAX GYRO_HYP_ARTANH_MAX_F32
#include "models/hyp/convert_impl.h"
#undef T
#undef S
#undef C
#undef ARTANH_MAX

#define T double
#define S(name) name##_cv_f64
#define C(name) gyro_hyp_##name##_f64
#define ARTANH_MAX GYRO_HYP_ARTANH_MAX_F64
#include "models/hyp/convert_impl.h"
#undef T
#undef S
#undef C
#undef ARTANH_MAX

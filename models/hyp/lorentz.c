/* lorentz.c — the hyperboloid ops of lorentz.h in float32 and float64.
 *
 * Both precisions are generated from the one implementation in lorentz_impl.h: this file only
 * instantiates it with the storage type, the names and the precision's cosh clamp
 * (hyp_consts.h). Inner products and norms are accumulated in double in both.
 */
#include <float.h>
#include <math.h>
#include <stddef.h>

#include "models/hyp/hyp_consts.h"
#include "models/hyp/hyp_scalar.h"
#include "models/hyp/lorentz.h"

#define T float
#define S(name) name##_f32
#define L(name) gyro_lorentz_##name##_f32
#define COSH_MAX GYRO_HYP_COSH_MAX_F32
#include "models/hyp/lorentz_impl.h"
#undef T
#undef S
#undef L
#undef COSH_MAX

#define T double
#define S(name) name##_f64
#define L(name) gyro_lorentz_##name##_f64
#define COSH_MAX GYRO_HYP_COSH_MAX_F64
#include "models/hyp/lorentz_impl.h"
#undef T
#undef S
#undef L
#undef COSH_MAX

/* lorentz.c — the Lorentz (HyboNet) layers of lorentz.h in float32 and float64.
 *
 * Both precisions come from the one implementation in lorentz_impl.h: this file only
 * instantiates it with the storage type and the names (the convention of models/hyp/lorentz.c).
 * Every reduction that feeds a square root or a division accumulates in double in both.
 */
#include "models/layers/lorentz.h"

#include <assert.h>
#include <math.h>
#include <stddef.h>

#include "models/hyp/hyp_consts.h"

#define T float
#define S(name) name##_f32
#define P(name) gyro_lorentz_##name##_f32
#include "models/layers/lorentz_impl.h"
#undef T
#undef S
#undef P

#define T double
#define S(name) name##_f64
#define P(name) gyro_lorentz_##name##_f64
#include "models/layers/lorentz_impl.h"
#undef T
#undef S
#undef P

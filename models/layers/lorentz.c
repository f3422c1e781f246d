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

#define T double
#define S(name) name##_f64
#define P(name) gyro_lorentz_##name##_f64
#define GEMM gyro_blas_gemm_f64
#include "models/layers/lorentz_impl.h"
#undef T
#undef S
#undef P
#undef GEMM

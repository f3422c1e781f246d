/* attention.c — float32 and float64 instantiations of attention_impl.h (see attention.h). */
#include "models/layers/attention.h"

#include <math.h>
#include <string.h>

#include "models/core/blas.h"
#include "models/hyp/poincare.h"

#define R float
#define S GYRO_F32
#define HYP(name) gyro_poincare_##name##_f32
#define GEMM gyro_blas_gemm_f32
#define EXPR expf
#include "models/layers/attention_impl.h"
#undef R
#undef S
#undef HYP
#undef GEMM
#undef EXPR

#define R double
#define S GYRO_F64
#define HYP(name) gyro_poincare_##name##_f64
#define GEMM gyro_blas_gemm_f64
#define EXPR exp
#include "models/layers/attention_impl.h"
#undef R
#undef S
#undef HYP
#undef GEMM
#undef EXPR

/* layernorm.c — float32 and float64 instantiations of layernorm_impl.h (see layernorm.h). */
#include "models/layers/layernorm.h"

#include <math.h>
#include <string.h>

#define GYRO_LAYER_IMPL "models/layers/layernorm_impl.h"
#include "models/layers/instantiate.h"

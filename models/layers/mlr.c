/* mlr.c — float32 and float64 instantiations of mlr_impl.h (see mlr.h). */
#include "models/layers/mlr.h"

#include <math.h>
#include <string.h>

#define GYRO_LAYER_IMPL "models/layers/mlr_impl.h"
#include "models/layers/instantiate.h"

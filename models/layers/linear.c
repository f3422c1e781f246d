/* linear.c — float32 and float64 instantiations of linear_impl.h (see linear.h). */
#include "models/layers/linear.h"

#include <math.h>
#include <string.h>

#define GYRO_LAYER_IMPL "models/layers/linear_impl.h"
#include "models/layers/instantiate.h"

/* pool.c — float32 and float64 instantiations of pool_impl.h (see pool.h). */
#include "models/layers/pool.h"

#include <math.h>
#include <string.h>

#define GYRO_LAYER_IMPL "models/layers/pool_impl.h"
#include "models/layers/instantiate.h"

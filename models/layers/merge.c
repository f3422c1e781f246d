/* merge.c — float32 and float64 instantiations of merge_impl.h (see merge.h). */
#include "models/layers/merge.h"

#include <math.h>
#include <string.h>

#define GYRO_LAYER_IMPL "models/layers/merge_impl.h"
#include "models/layers/instantiate.h"

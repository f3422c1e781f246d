/* act.c — float32 and float64 instantiations of act_impl.h (see act.h). */
#include "models/layers/act.h"

#include <math.h>
#include <string.h>

#define GYRO_LAYER_IMPL "models/layers/act_impl.h"
#include "models/layers/instantiate.h"

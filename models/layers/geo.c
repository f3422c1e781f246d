/* geo.c — float32 and float64 instantiations of geo_impl.h (see geo.h). */
#include "models/layers/geo.h"

#include <math.h>
#include <string.h>

#define GYRO_LAYER_IMPL "models/layers/geo_impl.h"
#include "models/layers/instantiate.h"

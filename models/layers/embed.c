/* embed.c — float32 and float64 instantiations of embed_impl.h (see embed.h). */
#include "models/layers/embed.h"

#include <math.h>
#include <string.h>

#define GYRO_LAYER_IMPL "models/layers/embed_impl.h"
#include "models/layers/instantiate.h"

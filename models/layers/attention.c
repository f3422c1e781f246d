/* attention.c — float32 and float64 instantiations of attention_impl.h (see attention.h). */
#include "models/layers/attention.h"

#include <math.h>
#include <string.h>

#define GYRO_LAYER_IMPL "models/layers/attention_impl.h"
#include "models/layers/instantiate.h"

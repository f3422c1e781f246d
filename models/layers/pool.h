/* pool.h — max pooling over the valid positions of each sequence (hyperbolic-chinese-nlu
 * §4.2: "the final output of the Transformer is max pooled"). Coordinate-wise, over t < len[b].
 * In the ball the transformer pools tangent vectors log_0 x_t and maps the maximum back with
 * exp_0: a coordinate-wise maximum of ball points can leave the ball, its tangent twin cannot
 * (a deliberate deviation: the seed does not say where it pools). */
#ifndef GYRO_LAYERS_POOL_H
#define GYRO_LAYERS_POOL_H

#include "models/layers/geo.h"

#define GYRO_POOL_API(R, S)                                                                    \
    /* Y (B, C) = max_{t < len[b]} X (B, T, C); idx (B, C) caches the winning t. */            \
    void S(gyro_pool_forward)(R *Y, int *idx, const R *X, const int *len, int B, int T, int C); \
    /* dX[b, idx[b,i], i] += dY[b, i]. */                                                       \
    void S(gyro_pool_backward)(R *dX, const R *dY, const int *idx, int B, int T, int C);

GYRO_POOL_API(float, GYRO_F32)
GYRO_POOL_API(double, GYRO_F64)

#endif

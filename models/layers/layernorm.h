/* layernorm.h — LayerNorm over the last dimension (Ba et al. 2016), the Euclidean core of the
 * hyperbolic LayerNorm exp_0(LN(log_0 x)) of rl-hyperbolic-transformer-grpo (the maps around
 * it come from geo.h):  y = (x − μ)/σ ⊙ γ + β,  σ = sqrt(var + 1e-5), population variance.
 * Statistics are accumulated in double. Forward caches μ and 1/σ per row (llm.c's shape). */
#ifndef GYRO_LAYERS_LAYERNORM_H
#define GYRO_LAYERS_LAYERNORM_H

#include "models/layers/geo.h"

#define GYRO_LAYERNORM_EPS 1e-5

#define GYRO_LAYERNORM_API(R, S)                                                               \
    /* Y (N, C), mean (N), rstd (N) from X (N, C), gain g (C), bias b (C). */                   \
    void S(gyro_layernorm_forward)(R *Y, R *mean, R *rstd, const R *X, const R *g, const R *b, \
                                   int N, int C);                                              \
    /* dX += , dg += , db += from dY. */                                                        \
    void S(gyro_layernorm_backward)(R *dX, R *dg, R *db, const R *dY, const R *X,              \
                                    const R *mean, const R *rstd, const R *g, int N, int C);

GYRO_LAYERNORM_API(float, GYRO_F32)
GYRO_LAYERNORM_API(double, GYRO_F64)

#endif

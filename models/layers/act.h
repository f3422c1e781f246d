/* act.h — element-wise layers of the tangent space: ReLU (the FFN activation φ, applied as
 * φ⊗(x) = exp_0(φ(log_0 x)) in the ball, Ganea 2018 §3.2) and inverted dropout (Srivastava et
 * al. 2014): y = x ⊙ m, m_i = 1/(1−p) with probability 1−p, else 0. The mask is drawn from a
 * caller-owned gyro_rng and cached for the backward. */
#ifndef GYRO_LAYERS_ACT_H
#define GYRO_LAYERS_ACT_H

#include "models/core/rng.h"
#include "models/layers/geo.h"

#define GYRO_ACT_API(R, S)                                                                     \
    /* Y = max(X, 0) over n values (Y may alias X). */                                         \
    void S(gyro_relu_forward)(R *Y, const R *X, long n);                                       \
    /* dX += dY where X > 0. */                                                                 \
    void S(gyro_relu_backward)(R *dX, const R *dY, const R *X, long n);                        \
    /* Y = X ⊙ mask with a fresh mask (p in [0, 1)); Y may alias X. */                         \
    void S(gyro_dropout_forward)(R *Y, R *mask, const R *X, gyro_rng *rng, R p, long n);       \
    /* dX += dY ⊙ mask. */                                                                      \
    void S(gyro_dropout_backward)(R *dX, const R *dY, const R *mask, long n);

GYRO_ACT_API(float, GYRO_F32)
GYRO_ACT_API(double, GYRO_F64)

#endif

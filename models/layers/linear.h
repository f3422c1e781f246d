/* linear.h — the matrix product of every layer: Y (N, M) = X (N, K) · Wᵀ, W: (M, K).
 *
 * In the ball this is the inner product of the Möbius matvec M ⊗_c x = exp_0(M log_0 x)
 * (Ganea 2018, eq. 6 — the tanh(|Mx|/|x| artanh|x|) form equals exp_0(M log_0 x)); the layers
 * apply log0 before and exp0 after with geo.h. One cblas_sgemm per call (blas.h). X and Y
 * take leading dimensions so a head's slice can be used in place.
 */
#ifndef GYRO_LAYERS_LINEAR_H
#define GYRO_LAYERS_LINEAR_H

#include "models/layers/geo.h"

#define GYRO_LINEAR_API(R, S)                                                                  \
    /* Y = X Wᵀ (overwrites Y). */                                                              \
    void S(gyro_linear_forward)(R *Y, int ldy, const R *X, int ldx, const R *W, int ldw,       \
                                int N, int K, int M);                                          \
    /* dX += dY W and dW += dYᵀ X (dX or dW may be NULL). */                                   \
    void S(gyro_linear_backward)(R *dX, int lddx, R *dW, int lddw, const R *dY, int lddy,      \
                                 const R *X, int ldx, const R *W, int ldw, int N, int K,       \
                                 int M);

GYRO_LINEAR_API(float, GYRO_F32)
GYRO_LINEAR_API(double, GYRO_F64)

#endif

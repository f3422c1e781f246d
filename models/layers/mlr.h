/* mlr.h — the classifier head: multinomial logistic regression with hyperplanes (a_k, p_k).
 *
 *   hyperbolic (Ganea 2018, eq. 25; hyperbolic-chinese-nlu appendix C), z_k = (−p_k) ⊕_c x:
 *     logit_k = λ_{p_k}|a_k|/√c · asinh(2√c<z_k, a_k> / ((1 − c|z_k|²)|a_k|))
 *   Euclidean (its c → 0 limit up to a constant factor): logit_k = <a_k, x − p_k>
 *
 * The hyperbolic form is models/hyp's gyro_poincare_hyp_mlr_batch; the Euclidean one is one
 * cblas product and a bias.
 */
#ifndef GYRO_LAYERS_MLR_H
#define GYRO_LAYERS_MLR_H

#include "models/layers/geo.h"

#define GYRO_MLR_API(R, S)                                                                     \
    /* Lg (B, K) from X (B, C), P (K, C), A (K, C). */                                          \
    void S(gyro_mlr_forward)(R *Lg, const R *X, const R *P, const R *A, int geo, R c, int B,   \
                             int K, int C);                                                    \
    /* dX (B, C) +=, dP (K, C) +=, dA (K, C) += from dLg (B, K). */                             \
    void S(gyro_mlr_backward)(R *dX, R *dP, R *dA, const R *dLg, const R *X, const R *P,       \
                              const R *A, int geo, R c, int B, int K, int C);

GYRO_MLR_API(float, GYRO_F32)
GYRO_MLR_API(double, GYRO_F64)

#endif

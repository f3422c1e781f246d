/* merge.h — each head's own Möbius matvec, gyro-added (hyperbolic-chinese-nlu §4.2).
 *
 * "straightforward concatenation is not a valid operation in hyperbolic space. Consequently,
 * we must instead use hyperbolic matrix multiplication on each head individually and then
 * gyroadd the results together":
 *
 *   hyperbolic:  y = r_1 ⊕ r_2 ⊕ … ⊕ r_H  (left to right),  r_i = M_i ⊗_c exp_0(o_i)
 *   Euclidean:   y = Σ_i M_i o_i = W [o_1 … o_H]   (the usual output projection)
 *
 * with o_i the head's tangent output and M_i (C, D) the columns i·D..(i+1)·D−1 of W (C, A).
 * Since log_0(exp_0(o)) = o, M_i ⊗ exp_0(o_i) = exp_0(M_i o_i) (Ganea 2018, eq. 6): the kernel
 * computes RR_i = O_i M_iᵀ with one cblas product per head and maps it with exp0 (projected).
 * The only difference to the literal composition is that exp_0(o_i) is not projected first
 * (a clip of |o_i| at artanh(1−ε) ≈ 3.1 in float32), which the gradient would not see anyway.
 * The forward caches the mapped heads and the partial sums for the backward.
 */
#ifndef GYRO_LAYERS_MERGE_H
#define GYRO_LAYERS_MERGE_H

#include "models/layers/geo.h"

#define GYRO_MERGE_API(R, S)                                                                   \
    /* Y (N, C) from O (N, A) and W (C, A). Hyperbolic caches: RR (N, H, C) = M_i o_i and     \
     * RB (N, 2H, C) = per row [exp0(RR_1) … exp0(RR_H) | partial sums s_1 … s_H]; both NULL  \
     * in the Euclidean geometry. */                                                           \
    void S(gyro_merge_forward)(R *Y, R *RR, R *RB, const R *O, const R *W, int geo, R c,       \
                               int N, int H, int D, int C);                                    \
    /* dO (N, A) += and dW (C, A) += from dY (N, C). dRR (N, H, C) is overwritten (hyperbolic  \
     * only; NULL otherwise). scratch: (5C). */                                                 \
    void S(gyro_merge_backward)(R *dO, R *dW, R *dRR, R *scratch, const R *dY, const R *O,     \
                                const R *RR, const R *RB, const R *W, int geo, R c, int N,     \
                                int H, int D, int C);

GYRO_MERGE_API(float, GYRO_F32)
GYRO_MERGE_API(double, GYRO_F64)

#endif

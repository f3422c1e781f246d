/* attention.h — scaled dot-product attention of every head, in the tangent space at the origin.
 *
 * hyperbolic-chinese-nlu §4.2: queries, keys and values are taken to the tangent space at the
 * origin (log0 of each head's slice of W ⊗ x) "and then proceed to compute the scaled dot
 * product attention using the standard Euclidean operations". So this kernel is plain
 * softmax(q kᵀ/√D) v (Vaswani et al. 2017) for both geometries; the geometry lives in the maps
 * around it. Bidirectional (an encoder): position t attends to every key j < len[b]; rows
 * t >= len[b] (padding) of the output are zero and get no gradient.
 *
 * Layout: QKV (B·T, 3A) rows = [q_1 … q_H | k_1 … k_H | v_1 … v_H], A = H·D; P (B, H, T, T)
 * probabilities (only the [len, len] corner is meaningful); O (B·T, A) head outputs.
 * Each (b, h) is three cblas products (scores, P·V) — six in the backward.
 */
#ifndef GYRO_LAYERS_ATTENTION_H
#define GYRO_LAYERS_ATTENTION_H

#include "models/layers/geo.h"

#define GYRO_ATTENTION_API(R, S)                                                               \
    /* O (ld A) and P from QKV. */                                                              \
    void S(gyro_attention_forward)(R *O, R *P, const R *QKV, const int *len, int B, int T,     \
                                   int H, int D);                                              \
    /* dQKV (B·T, 3A) += gradient of dO (B·T, A). scratch: (T, T). */                           \
    void S(gyro_attention_backward)(R *dQKV, R *scratch, const R *dO, const R *QKV,            \
                                    const R *P, const int *len, int B, int T, int H, int D);

GYRO_ATTENTION_API(float, GYRO_F32)
GYRO_ATTENTION_API(double, GYRO_F64)

#endif

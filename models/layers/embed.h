/* embed.h — token embedding lookup plus positional encoding.
 *
 *   hyperbolic:  x_{b,t} = proj(E[tok_{b,t}] ⊕_c pos_t),  pos_t = exp_0(s·PE_t)
 *   Euclidean:   x_{b,t} = E[tok_{b,t}] + pos_t,          pos_t = s·PE_t
 * (hyperbolic-chinese-nlu §4.2: "transformer_input = input ⊕_c exp_0^c(PE)"). PE is the sine /
 * cosine table of Vaswani et al.; E rows are Poincaré-ball points in the hyperbolic geometry.
 * Positions t >= len[b] are padding: their rows are set to the origin and get no gradient.
 */
#ifndef GYRO_LAYERS_EMBED_H
#define GYRO_LAYERS_EMBED_H

#include <stdint.h>

#include "models/layers/geo.h"

#define GYRO_EMBED_API(R, S)                                                                   \
    /* pos (T, C) = exp0(s·PE) (hyperbolic) or s·PE: the constant positional table. */          \
    void S(gyro_embed_positions)(R *pos, int geo, R c, R s, int T, int C);                     \
    /* X (B, T, C) from tok (B, T), len (B), wte (V, C), pos (>= T, C). Token ids must be      \
     * valid for t < len[b] (the caller checks). */                                            \
    void S(gyro_embed_forward)(R *X, const int32_t *tok, const int *len, const R *wte,         \
                               const R *pos, int geo, R c, int B, int T, int C);               \
    /* dwte (V, C) += the embedding rows' share of dX (B, T, C); X is the forward output.     \
     * scratch: (2C). */                                                                       \
    void S(gyro_embed_backward)(R *dwte, R *scratch, const R *dX, const R *X,                  \
                                const int32_t *tok, const int *len, const R *wte,              \
                                const R *pos, int geo, R c, int B, int T, int C);

GYRO_EMBED_API(float, GYRO_F32)
GYRO_EMBED_API(double, GYRO_F64)

#endif

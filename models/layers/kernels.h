/* kernels.h — the layer kernels of the transformer, forward and backward, in float32 and
 * float64, each geometry (Euclidean, Poincaré ball) through one code path.
 *
 * Sections follow the network from input to output, each op's forward before its backward (as
 * llm.c's train_gpt2.c): the geometry maps every layer is built from, the embedding, the linear
 * map, attention, the head merge, activation and dropout, LayerNorm, pooling, the classifier
 * head. Both precisions come from one generic implementation (kernels_impl.h, its attention in
 * kernels_attention_impl.h, its head merge in kernels_merge_impl.h; instantiated twice in
 * kernels.c, as models/hyp/poincare.c does); every prototype is written out below.
 *
 * Conventions for every function below (llm.c's shape):
 *   - outputs first, then caches, scratch, inputs, parameters, then geometry (geo, c), then
 *     dimensions; buffers are row-major with the shape written beside them.
 *   - forward kernels overwrite their outputs; backward kernels ACCUMULATE (+=) into their
 *     gradient outputs (zero them first for a plain gradient).
 *   - no allocation, no I/O; shapes are the caller's contract. Scratch buffers are caller-owned
 *     and sized as stated.
 * The blocks built from these kernels (multi-head latent attention, mixture of experts) are
 * mla.h and moe.h beside this file.
 */
#ifndef GYRO_LAYERS_KERNELS_H
#define GYRO_LAYERS_KERNELS_H

#include <stdint.h>

#include "models/core/rng.h"

/* ============================================================================================ */
/* Geometry maps — the three maps that make one layer code serve both geometries, row by row.
 *
 * The hyperbolic transformer only ever leaves and re-enters the Poincaré ball at the origin
 * (hyperbolic-chinese-nlu §4.2: "parallel transport … to the origin using the logarithmic and
 * exponential mappings"), and combines points with Möbius addition. Its Euclidean twin is the
 * same network with those three maps replaced by their flat limits:
 *
 *   op      hyperbolic (ball of curvature −c)          Euclidean
 *   exp0    proj(exp_0(v))  (Ganea 2018, Lemma 2)      v
 *   log0    log_0(y)        (Ganea 2018, Lemma 2)      y
 *   add     proj(x ⊕_c y)   (Ganea 2018, eq. 3)        x + y
 *
 * proj is the ball projection of models/hyp (norm ≤ (1−ε)/√c): exp_0 of a long tangent vector
 * and a Möbius sum can round onto the boundary in float32, where the next Möbius addition or
 * artanh would blow up. The backward needs the Jacobian of proj at the unprojected value: when
 * the stored forward output lies clearly inside the projection radius, proj was the identity
 * and the backward goes straight to the hyp op's VJP; otherwise (or without the output) it
 * recomputes the unprojected value in a caller-provided scratch row (2·n values).
 *
 * In the Euclidean geometry exp0 and log0 are the identity: a caller may alias a map's output
 * to its input (nothing is copied) and then passes the same gradient buffer for both sides of
 * the backward, which adds nothing (the gradient is already in place).
 *
 * Rows are addressed with leading dimensions (ld*) so a head's slice of a wider row can be
 * mapped in place. Backward kernels ACCUMULATE (+=) into their gradient outputs.
 */
typedef enum gyro_geo {
    GYRO_GEO_EUCLIDEAN = 0,
    GYRO_GEO_HYPERBOLIC = 1
} gyro_geo;

/* Y[r] = exp0(V[r]) for rows r < rows of n values. Y may alias V (same ld). */
void gyro_geo_exp0_f32(float *Y, int ldy, const float *V, int ldv, int geo, float c, int rows,
                       int n);
void gyro_geo_exp0_f64(double *Y, int ldy, const double *V, int ldv, int geo, double c, int rows,
                       int n);
/* dV[r] += (∂exp0/∂v)ᵀ dY[r]. Y: the forward output (or NULL), used to skip recomputing
 * exp0 where the projection was inactive. scratch: (2n). */
void gyro_geo_exp0_backward_f32(float *dV, int lddv, float *scratch, const float *dY, int lddy,
                                const float *Y, int ldy, const float *V, int ldv, int geo, float c,
                                int rows, int n);
void gyro_geo_exp0_backward_f64(double *dV, int lddv, double *scratch, const double *dY, int lddy,
                                const double *Y, int ldy, const double *V, int ldv, int geo,
                                double c, int rows, int n);
/* V[r] = log0(Y[r]). V may alias Y (same ld). */
void gyro_geo_log0_f32(float *V, int ldv, const float *Y, int ldy, int geo, float c, int rows,
                       int n);
void gyro_geo_log0_f64(double *V, int ldv, const double *Y, int ldy, int geo, double c, int rows,
                       int n);
/* dY[r] += (∂log0/∂y)ᵀ dV[r]. */
void gyro_geo_log0_backward_f32(float *dY, int lddy, const float *dV, int lddv, const float *Y,
                                int ldy, int geo, float c, int rows, int n);
void gyro_geo_log0_backward_f64(double *dY, int lddy, const double *dV, int lddv, const double *Y,
                                int ldy, int geo, double c, int rows, int n);
/* Z[r] = X[r] ⊕ Y[r·ldy] (ldy = 0 broadcasts one row, e.g. a bias; else ldy = n).
 * Z may alias X. */
void gyro_geo_add_f32(float *Z, const float *X, const float *Y, int ldy, int geo, float c, int rows,
                      int n);
void gyro_geo_add_f64(double *Z, const double *X, const double *Y, int ldy, int geo, double c,
                      int rows, int n);
/* dX[r] += ∂/∂x, dY[r·ldy] += ∂/∂y (with ldy = 0 the rows' gradients are summed).
 * dX or dY may be NULL. Z: the forward output (or NULL), as for exp0. scratch: (2n). */
void gyro_geo_add_backward_f32(float *dX, float *dY, float *scratch, const float *dZ,
                               const float *Z, const float *X, const float *Y, int ldy, int geo,
                               float c, int rows, int n);
void gyro_geo_add_backward_f64(double *dX, double *dY, double *scratch, const double *dZ,
                               const double *Z, const double *X, const double *Y, int ldy, int geo,
                               double c, int rows, int n);

/* ============================================================================================ */
/* Embedding — token embedding lookup plus positional encoding.
 *
 *   hyperbolic:  x_{b,t} = proj(E[tok_{b,t}] ⊕_c pos_t),  pos_t = exp_0(s·PE_t)
 *   Euclidean:   x_{b,t} = E[tok_{b,t}] + pos_t,          pos_t = s·PE_t
 * (hyperbolic-chinese-nlu §4.2: "transformer_input = input ⊕_c exp_0^c(PE)"). PE is the sine /
 * cosine table of Vaswani et al.; E rows are Poincaré-ball points in the hyperbolic geometry.
 * Positions t >= len[b] are padding: their rows are set to the origin and get no gradient.
 */
/* pos (T, C) = exp0(s·PE) (hyperbolic) or s·PE: the constant positional table. */
void gyro_embed_positions_f32(float *pos, int geo, float c, float s, int T, int C);
void gyro_embed_positions_f64(double *pos, int geo, double c, double s, int T, int C);
/* X (B, T, C) from tok (B, T), len (B), wte (V, C), pos (>= T, C). Token ids must be
 * valid for t < len[b] (the caller checks). */
void gyro_embed_forward_f32(float *X, const int32_t *tok, const int *len, const float *wte,
                            const float *pos, int geo, float c, int B, int T, int C);
void gyro_embed_forward_f64(double *X, const int32_t *tok, const int *len, const double *wte,
                            const double *pos, int geo, double c, int B, int T, int C);
/* dwte (V, C) += the embedding rows' share of dX (B, T, C); X is the forward output.
 * scratch: (2C). */
void gyro_embed_backward_f32(float *dwte, float *scratch, const float *dX, const float *X,
                             const int32_t *tok, const int *len, const float *wte, const float *pos,
                             int geo, float c, int B, int T, int C);
void gyro_embed_backward_f64(double *dwte, double *scratch, const double *dX, const double *X,
                             const int32_t *tok, const int *len, const double *wte,
                             const double *pos, int geo, double c, int B, int T, int C);

/* ============================================================================================ */
/* Linear — the matrix product of every layer: Y (N, M) = X (N, K) · Wᵀ, W: (M, K).
 *
 * In the ball this is the inner product of the Möbius matvec M ⊗_c x = exp_0(M log_0 x)
 * (Ganea 2018, eq. 6 — the tanh(|Mx|/|x| artanh|x|) form equals exp_0(M log_0 x)); the layers
 * apply log0 before and exp0 after with the geometry maps. One gyro_blas_gemm per call. X and Y
 * take leading dimensions so a head's slice can be used in place.
 */
/* Y = X Wᵀ (overwrites Y). */
void gyro_linear_forward_f32(float *Y, int ldy, const float *X, int ldx, const float *W, int ldw,
                             int N, int K, int M);
void gyro_linear_forward_f64(double *Y, int ldy, const double *X, int ldx, const double *W, int ldw,
                             int N, int K, int M);
/* dX += dY W and dW += dYᵀ X (dX or dW may be NULL). */
void gyro_linear_backward_f32(float *dX, int lddx, float *dW, int lddw, const float *dY, int lddy,
                              const float *X, int ldx, const float *W, int ldw, int N, int K,
                              int M);
void gyro_linear_backward_f64(double *dX, int lddx, double *dW, int lddw, const double *dY,
                              int lddy, const double *X, int ldx, const double *W, int ldw, int N,
                              int K, int M);

/* ============================================================================================ */
/* Attention — scaled dot-product attention of every head, in the tangent space at the origin.
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
 * Each (b, h) is two gyro_blas_gemm products (scores, P·V) — four in the backward — except
 * for narrow heads (D <= 8) over at most 64 tokens, which run on 8-lane vector loops in the
 * forward and the backward (the seed's 16 heads of 7 or 8 coordinates).
 */
/* O (ld A) and P from QKV. */
void gyro_attention_forward_f32(float *O, float *P, const float *QKV, const int *len, int B, int T,
                                int H, int D);
void gyro_attention_forward_f64(double *O, double *P, const double *QKV, const int *len, int B,
                                int T, int H, int D);
/* The inference forward (no backward follows): O as gyro_attention_forward computes it, bit for
 * bit, for heads of D <= 8 and sequences of up to 64 tokens with 8 heads per vector (P, laid
 * out as there, is then not written); wider heads and longer sequences run
 * gyro_attention_forward on that sequence (P filled). */
void gyro_attention_infer_f32(float *O, float *P, const float *QKV, const int *len, int B, int T,
                              int H, int D);
void gyro_attention_infer_f64(double *O, double *P, const double *QKV, const int *len, int B,
                              int T, int H, int D);
/* The same (bit for bit) on q|k|v rows in the head-lane layout: with A = H·D, H a multiple of
 * 8 and D <= 8, column p·A + g·8D + d·8 + h of a row holds column p·A + (8g + h)·D + d of the
 * usual layout (part p = q, k, v; gyro_qkv_lanes_row maps the columns, so a packed q|k|v
 * weight matrix whose rows are permuted this way produces it). O is in the usual layout;
 * S (B, H, T, T) is scratch (only 8·len values per sequence are used). Any length. */
void gyro_attention_infer_hl_f32(float *O, float *S, const float *QKV, const int *len, int B,
                                 int T, int H, int D);
/* The head-lane column (see gyro_attention_infer_hl_f32) of column `col` < 3·H·D of the usual
 * q|k|v layout. */
static inline int gyro_qkv_lanes_row(int col, int H, int D)
{
    const int A = H * D, p = col / A, r = col % A, h = r / D, d = r % D;
    return p * A + (h / 8) * 8 * D + d * 8 + h % 8;
}
/* dQKV (B·T, 3A) += gradient of dO (B·T, A). scratch: (T, T). */
void gyro_attention_backward_f32(float *dQKV, float *scratch, const float *dO, const float *QKV,
                                 const float *P, const int *len, int B, int T, int H, int D);
void gyro_attention_backward_f64(double *dQKV, double *scratch, const double *dO, const double *QKV,
                                 const double *P, const int *len, int B, int T, int H, int D);

/* ============================================================================================ */
/* Head merge — each head's own Möbius matvec, gyro-added (hyperbolic-chinese-nlu §4.2).
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
 * computes RR_i = O_i M_iᵀ with one gemm per head and maps it with exp0 (projected).
 * The only difference to the literal composition is that exp_0(o_i) is not projected first
 * (a clip of |o_i| at artanh(1−ε) ≈ 3.1 in float32), which the gradient would not see anyway.
 * The forward caches the mapped heads and the partial sums for the backward.
 */
/* Y (N, C) from O (N, A) and W (C, A). Hyperbolic caches: RR (N, H, C) = M_i o_i and
 * RB (N, 2H, C) = per row [exp0(RR_1) … exp0(RR_H) | partial sums s_1 … s_H]; both NULL
 * in the Euclidean geometry. Hyperbolic with RB NULL (inference: no backward follows): RR is
 * still filled, and the sum runs fused (gyro_merge_sum) without caching the mapped heads. */
void gyro_merge_forward_f32(float *Y, float *RR, float *RB, const float *O, const float *W, int geo,
                            float c, int N, int H, int D, int C);
void gyro_merge_forward_f64(double *Y, double *RR, double *RB, const double *O, const double *W,
                            int geo, double c, int N, int H, int D, int C);
/* The hyperbolic gyro-sum of the merge, fused: Y (N, C) row n = r_1 ⊕ … ⊕ r_H (left to right,
 * each partial sum projected) with r_i = proj(exp0(RR[n][i])), RR (N, H, C). The same map as
 * gyro_merge_forward's cached path up to float rounding: each head takes one pass for its dot
 * products and one for the update, the norms that decide the projections come from the dot
 * products (hyp_scalar.h) instead of a pass over each mapped vector. Y must not overlap RR. */
void gyro_merge_sum_f32(float *Y, const float *RR, float c, int N, int H, int C);
void gyro_merge_sum_f64(double *Y, const double *RR, double c, int N, int H, int C);
/* ============================================================================================ */
/* Fused inference maps — chains of the hyperbolic forward computed from a few dot products per
 * row (hyp_scalar.h), for inference only (they keep no caches for a backward). Each equals the
 * composition of the separate kernels up to float rounding (checked in float64 against them):
 * every map below is a linear combination of its input vectors whose scalar coefficients
 * follow from |y|², <y,b>, |b|², and log0∘proj∘exp0 of a tangent vector v is v itself unless
 * the projection clips it (then v·artanh(1−ε)/(√c|v|)).
 *
 *   geo_exp0_add:   Z = proj(proj(exp0(Y)) ⊕ b)                   (the Möbius layer M⊗x ⊕ b)
 *   ffn_mid:        G = φ(log0(proj(proj(exp0(Y)) ⊕ b)))          φ = ReLU (relu != 0) or id
 *   tangent_res_ln: Uo = log0(exp0(LN(log0(exp0(U + log0(Y))))))  each exp0 projected: the
 *                   tangent residual, the hyperbolic LayerNorm (log0 → LN → exp0) and the
 *                   next block's log0, with LN(x) = (x − μ)/σ ⊙ gain + bias
 * Y, Z, G (N, n) / (N, C) row-major; b (n) one bias row; U, Uo (N, C) tangent rows (Uo may not
 * overlap U or Y). Hyperbolic geometry only. */
void gyro_geo_exp0_add_f32(float *Z, const float *Y, const float *b, float c, int N, int n);
void gyro_geo_exp0_add_f64(double *Z, const double *Y, const double *b, double c, int N, int n);
void gyro_ffn_mid_f32(float *G, const float *Y, const float *b, int relu, float c, int N, int n);
void gyro_ffn_mid_f64(double *G, const double *Y, const double *b, int relu, double c, int N,
                      int n);
void gyro_tangent_res_ln_f32(float *Uo, const float *U, const float *Y, const float *gain,
                             const float *bias, float c, int N, int C);
void gyro_tangent_res_ln_f64(double *Uo, const double *U, const double *Y, const double *gain,
                             const double *bias, double c, int N, int C);

/* The backward of the Möbius layer G = log0(proj(proj(exp0(Y)) ⊕ b)) (log0 != 0) or
 * G = proj(proj(exp0(Y)) ⊕ b) (log0 == 0) of every row (Ganea 2018, eq. 6 and 3), fused:
 * dY (N, n) += and db (n) += from dG (N, n), the same gradients as geo_log0_backward,
 * geo_add_backward (bias broadcast) and geo_exp0_backward in turn, up to rounding. Every
 * gradient of the chain is a linear combination of the row's dG, Y and b, so each row is one
 * pass for <dG,Y>, <dG,b>, |Y|², <Y,b>, scalar coefficients in double, and one pass adding to
 * dY and db. Y (N, n) the layer's input, b (n) its bias (ball point); hyperbolic only. */
void gyro_mobius_layer_backward_f32(float *dY, float *db, const float *dG, const float *Y,
                                    const float *b, int log0, float c, int N, int n);
void gyro_mobius_layer_backward_f64(double *dY, double *db, const double *dG, const double *Y,
                                    const double *b, int log0, double c, int N, int n);

/* dO (N, A) += and dW (C, A) += from dY (N, C). dRR (N, H, C) is scratch, overwritten
 * (hyperbolic only; NULL otherwise; float32 narrow heads use only its first 16 rows). Hyperbolic: RB is the forward's merge cache, or NULL when the forward
 * ran without one (its fused gyro-sum, gyro_merge_sum): each row's partial sums are then
 * recomputed from RR with that arithmetic. scratch: (5C) with RB, ((H + 1)·C) without. */
void gyro_merge_backward_f32(float *dO, float *dW, float *dRR, float *scratch, const float *dY,
                             const float *O, const float *RR, const float *RB, const float *W,
                             int geo, float c, int N, int H, int D, int C);
void gyro_merge_backward_f64(double *dO, double *dW, double *dRR, double *scratch, const double *dY,
                             const double *O, const double *RR, const double *RB, const double *W,
                             int geo, double c, int N, int H, int D, int C);

/* ============================================================================================ */
/* Activation and dropout — element-wise layers of the tangent space: ReLU (the FFN
 * activation φ, applied as φ⊗(x) = exp_0(φ(log_0 x)) in the ball, Ganea 2018 §3.2) and
 * inverted dropout (Srivastava et al. 2014): y = x ⊙ m, m_i = 1/(1−p) with probability 1−p,
 * else 0. The mask is drawn from a caller-owned gyro_rng and cached for the backward. */
/* Y = max(X, 0) over n values (Y may alias X). */
void gyro_relu_forward_f32(float *Y, const float *X, long n);
void gyro_relu_forward_f64(double *Y, const double *X, long n);
/* dX += dY where X > 0. */
void gyro_relu_backward_f32(float *dX, const float *dY, const float *X, long n);
void gyro_relu_backward_f64(double *dX, const double *dY, const double *X, long n);
/* Y = X ⊙ mask with a fresh mask (p in [0, 1)); Y may alias X. */
void gyro_dropout_forward_f32(float *Y, float *mask, const float *X, gyro_rng *rng, float p,
                              long n);
void gyro_dropout_forward_f64(double *Y, double *mask, const double *X, gyro_rng *rng, double p,
                              long n);
/* dX += dY ⊙ mask. */
void gyro_dropout_backward_f32(float *dX, const float *dY, const float *mask, long n);
void gyro_dropout_backward_f64(double *dX, const double *dY, const double *mask, long n);

/* ============================================================================================ */
/* LayerNorm — LayerNorm over the last dimension (Ba et al. 2016), the Euclidean core of the
 * hyperbolic LayerNorm exp_0(LN(log_0 x)) of rl-hyperbolic-transformer-grpo (the maps around
 * it are the geometry maps above):
 *   y = (x − μ)/σ ⊙ γ + β,  σ = sqrt(var + 1e-5), population variance.
 * Statistics are accumulated in double. Forward caches μ and 1/σ per row (llm.c's shape). */
#define GYRO_LAYERNORM_EPS 1e-5


/* Y (N, C), mean (N), rstd (N) from X (N, C), gain g (C), bias b (C). */
void gyro_layernorm_forward_f32(float *Y, float *mean, float *rstd, const float *X, const float *g,
                                const float *b, int N, int C);
void gyro_layernorm_forward_f64(double *Y, double *mean, double *rstd, const double *X,
                                const double *g, const double *b, int N, int C);
/* dX += , dg += , db += from dY. */
void gyro_layernorm_backward_f32(float *dX, float *dg, float *db, const float *dY, const float *X,
                                 const float *mean, const float *rstd, const float *g, int N,
                                 int C);
void gyro_layernorm_backward_f64(double *dX, double *dg, double *db, const double *dY,
                                 const double *X, const double *mean, const double *rstd,
                                 const double *g, int N, int C);

/* ============================================================================================ */
/* Pooling — max pooling over the valid positions of each sequence (hyperbolic-chinese-nlu
 * §4.2: "the final output of the Transformer is max pooled"). Coordinate-wise, over t < len[b].
 * In the ball the transformer pools tangent vectors log_0 x_t and maps the maximum back with
 * exp_0: a coordinate-wise maximum of ball points can leave the ball, its tangent twin cannot
 * (a deliberate deviation: the seed does not say where it pools). */
/* Y (B, C) = max_{t < len[b]} X (B, T, C); idx (B, C) caches the winning t. */
void gyro_pool_forward_f32(float *Y, int *idx, const float *X, const int *len, int B, int T, int C);
void gyro_pool_forward_f64(double *Y, int *idx, const double *X, const int *len, int B, int T,
                           int C);
/* dX[b, idx[b,i], i] += dY[b, i]. */
void gyro_pool_backward_f32(float *dX, const float *dY, const int *idx, int B, int T, int C);
void gyro_pool_backward_f64(double *dX, const double *dY, const int *idx, int B, int T, int C);

/* ============================================================================================ */
/* Classifier head (MLR) — multinomial logistic regression with hyperplanes (a_k, p_k).
 *
 *   hyperbolic (Ganea 2018, eq. 25; hyperbolic-chinese-nlu appendix C), z_k = (−p_k) ⊕_c x:
 *     logit_k = λ_{p_k}|a_k|/√c · asinh(2√c<z_k, a_k> / ((1 − c|z_k|²)|a_k|))
 *   Euclidean (its c → 0 limit up to a constant factor): logit_k = <a_k, x − p_k>
 *
 * The hyperbolic form is models/hyp's gyro_poincare_hyp_mlr_batch; the Euclidean one is one
 * gyro_blas_gemm product and a bias.
 */
/* Lg (B, K) from X (B, C), P (K, C), A (K, C). */
void gyro_mlr_forward_f32(float *Lg, const float *X, const float *P, const float *A, int geo,
                          float c, int B, int K, int C);
void gyro_mlr_forward_f64(double *Lg, const double *X, const double *P, const double *A, int geo,
                          double c, int B, int K, int C);
/* dX (B, C) +=, dP (K, C) +=, dA (K, C) += from dLg (B, K). */
void gyro_mlr_backward_f32(float *dX, float *dP, float *dA, const float *dLg, const float *X,
                           const float *P, const float *A, int geo, float c, int B, int K, int C);
void gyro_mlr_backward_f64(double *dX, double *dP, double *dA, const double *dLg, const double *X,
                           const double *P, const double *A, int geo, double c, int B, int K,
                           int C);

#endif

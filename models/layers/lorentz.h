/* lorentz.h — the layers of a fully hyperbolic (Lorentz) network, HyboNet (Chen et al., "Fully
 * Hyperbolic Neural Networks", ACL 2022; shared/seeds/fully-hyperbolic-lorentz-nn.txt), forward
 * and backward, in float32 and float64 from one source (lorentz_impl.h, instantiated twice by
 * lorentz.c).
 *
 * Geometry: the hyperboloid of curvature K < 0 (K = −1 is the usual choice; every op takes K),
 * time coordinate FIRST:
 *   ⟨x,y⟩_L = −x₀y₀ + Σᵢ xᵢyᵢ,   ⟨x,x⟩_L = 1/K,   x₀ > 0,
 * n the SPATIAL dimension (points have n+1 entries). Write k = −1/K > 0 (the squared radius), so
 * a point has x₀ = √(k + |x_s|²). The squared Lorentzian distance of the paper (§3.2, after Law et
 * al. 2019) is d²_L(a,b) = 2/K − 2⟨a,b⟩_L.
 *
 * Layers (each formula restated beside its prototype):
 *   hlinear   the Lorentz linear layer with its learned time scale (§3.1, eq. (3) in the form of
 *             appendix C eq. (9)), activation, dropout mask and bias inside, optionally with a
 *             per-row "bias point" that serves the Lorentz residual and position encoding (§3.3,
 *             eq. (7));
 *   residual  §3.3 Lorentz residual: the block input as the bias of the block's last hlinear;
 *   posenc    §3.3 Lorentz position encoding: one shared hlinear, the position embedding as bias;
 *   mha       §3.2 Lorentz multi-head attention: softmax(−d²_L(q,k)/√n) weights, aggregation by
 *             the Lorentz centroid (eq. (4)), a key (padding) mask, H heads as slices of a row;
 *   pool      centroid pooling over the valid tokens of each sequence (eq. (4));
 *   head      the classification head: logits −d²_L(x, p_c) + β_c to learned class points.
 *
 * Relation to models/hyp/lorentz.h: gyro_lorentz_linear there is HyboNet's SIMPLE form
 * (y_s = W x, y₀ = √(1+|y_s|²), no time scale); gyro_lorentz_centroid there is the K = −1,
 * single-set, contiguous-rows special case of the centroid that mha and pool evaluate here with a
 * curvature, a head stride and a mask (check_lorentz_layers checks that the two agree).
 *
 * The reference values are shared/golden/lorentz_layers.txt (tests/check_lorentz_golden.c):
 * hybonet_linear / hybonet_linear_relu are gyro_lorentz_hlinear_* with one row, no mask, no bias
 * point, K = −1 and log_lambda = log λ; lorentz_attention is gyro_lorentz_mha_* with B = H = 1
 * and no key mask; lorentz_centroid_pool is gyro_lorentz_pool_* with the file's mask as the
 * weights. None of the layers deviates from the file's formulas; the additions (curvature,
 * dropout mask, bias point, learned log λ, heads, key mask, batching) reduce to them when off.
 *
 * Conventions (shared/DESIGN.md, "Neural core"): outputs, then caches, then inputs (the scalars
 * K, ε, act among them), then dimensions. Forward kernels write (=) their outputs and caches;
 * backward kernels ADD (+=) dL/d(input) given dL/d(output), every gradient pointer may be NULL
 * (that input is then not differentiated). Gradients are the ambient (Euclidean) partial
 * derivatives of the formulas as written, every coordinate independent; turn those of manifold
 * parameters into Riemannian ones with gyro_lorentz_egrad2rgrad_* (K = −1). Reductions that feed
 * a square root or a division accumulate in double in both precisions. No allocation, no I/O;
 * kernels assert their shapes; outputs must not alias inputs. The only clamps come from
 * models/hyp/hyp_consts.h.
 */
#ifndef GYRO_LAYERS_LORENTZ_H
#define GYRO_LAYERS_LORENTZ_H

/* Activation h of the Lorentz linear layer, applied to every coordinate of x (x₀ > 0 passes
 * ReLU unchanged). ReLU′(0) is taken as 0. */
typedef enum gyro_lorentz_act {
    GYRO_LORENTZ_ACT_NONE = 0,
    GYRO_LORENTZ_ACT_RELU = 1,
} gyro_lorentz_act;

/* ============================================================================================ */
/* Lorentz linear layer (HyboNet §3.1, eq. (3) with φ of appendix C eq. (9)), per row r:
 *   h   = mask ⊙ act(x)                              (dropout mask inside, eq. (9) "h(drop(x))")
 *   u   = W h + b + p_s                              W (m, n+1), b (m); p_s the spatial part of
 *                                                    the row's bias point (§3.3 eq. (7)), or 0
 *   y₀  = λ σ(v·x + b_t) + ε,  λ = exp(log_lambda)   (v (n+1), b_t (1); the sigmoid sees the raw x)
 *   y_s = √(y₀² − k) · u/|u|                         so that ⟨y,y⟩_L = 1/K,  k = −1/K
 * λ is learned through its logarithm (HyboNet's code keeps the scale as log λ), so it stays > 0
 * under any update; ε > √k is a constant (the paper: ε > √(−1/K); HyboNet and the golden file
 * use 1.1 at K = −1), so y₀ > √k and y_s is finite. |u|² is floored at
 * GYRO_HYP_LORENTZ_LINEAR_MIN_USQ (HyboNet's clamp; below it the direction of y_s is undefined):
 * a row with |u|² under the floor comes out with |y_s| < √(y₀² − k), off the hyperboloid, as in
 * HyboNet (it takes W = 0 and b + p_s = 0, or a cancellation to 1e-4, to get there).
 * y₀² − k is formed as (y₀ − √k)(y₀ + √k) with y₀ − √k = λσ + (ε − √k), exact near y₀ = √k.
 * The paper's main-text eq. (3) instead fixes |y_s| = λσ(·) (y₀ = √(λ²σ² + k)); the paper says
 * it uses eq. (9) in practice, as does the golden file, and so does this layer.
 * mask ⊙ act(x) equals eq. (9)'s h(drop(x)) for ReLU (positively homogeneous, mask ≥ 0).
 * HyboNet's public code differs in one detail: it takes v and b_t as the first row of one
 * (m+1)-row weight matrix applied to h(drop(x)), so its sigmoid sees the activated, dropped
 * input; eqs. (3)/(9) and the golden file apply the sigmoid to the raw x, and so does this layer
 * (the two agree without activation and dropout).
 *
 * The product H Wᵀ and the two products of the backward go through gyro_blas_gemm_* (BLAS;
 * its naive reference is tested in check_blas); everything after them is per row, in double.
 *
 *   y    (rows, m+1)  output points
 *   U    (rows, m)    cache: u, written by forward, read by backward
 *   Hc   (rows, n+1)  cache: h = mask ⊙ act(x), written by forward when there is a mask or an
 *                     activation (then required), unused (may be NULL) otherwise (h = x)
 *   x    (rows, n+1)  inputs (hyperboloid points for the first layer; any vector is accepted)
 *   mask (rows, n+1)  dropout mask (0 or 1/(1−p)), NULL = no dropout
 *   P    (p_rows, m+1) bias points: row r uses P[r % p_rows] (its spatial part); NULL = none
 *   W (m, n+1), b (m) (NULL = 0), v (n+1), b_t (1), log_lambda (1)
 *   eps > √(−1/K); act a gyro_lorentz_act; K < 0.
 * p_rows: rows for the residual (one block input per row), T for position encoding (rows
 * ordered b·T + t), ignored when P is NULL. */
void gyro_lorentz_hlinear_forward_f32(float *y, float *U, float *Hc, const float *x,
                                      const float *mask, const float *P, const float *W,
                                      const float *b, const float *v, const float *b_t,
                                      const float *log_lambda, double eps, int act, double K,
                                      int rows, int n, int m, int p_rows);
void gyro_lorentz_hlinear_forward_f64(double *y, double *U, double *Hc, const double *x,
                                      const double *mask, const double *P, const double *W,
                                      const double *b, const double *v, const double *b_t,
                                      const double *log_lambda, double eps, int act, double K,
                                      int rows, int n, int m, int p_rows);
/* Backward of the same call (same inputs, U and Hc as the forward left them; b is not needed):
 * given dy (rows, m+1), adds
 *   dx (rows, n+1), dP (p_rows, m+1) (spatial part only: p₀ does not enter the formula),
 *   dW (m, n+1), db (m), dv (n+1), db_t (1), dlog_lambda (1).
 * Any gradient pointer may be NULL. work (rows, m+n+1) is scratch, overwritten; it may be NULL
 * only when dx and dW both are. In the notation above (z = v·x + b_t, dy = (dy₀, dy_s)):
 *   ġ₀ = dy₀ + (dy_s·u/|u|)·y₀/√(y₀²−k),   du = √(y₀²−k)/|u| (dy_s − (dy_s·u) u/|u|²),
 *   dz = ġ₀ λ σ(z)σ(−z) (σ′ as σ(z)σ(−z): exact when the sigmoid saturates), dlog λ = ġ₀ λ σ(z),
 *   dW += du hᵀ,  dx += dz v + act′(x) ⊙ mask ⊙ (Wᵀ du). */
void gyro_lorentz_hlinear_backward_f32(float *dx, float *dP, float *dW, float *db, float *dv,
                                       float *db_t, float *dlog_lambda, float *work,
                                       const float *dy, const float *U, const float *Hc,
                                       const float *x, const float *mask, const float *P,
                                       const float *W, const float *v, const float *b_t,
                                       const float *log_lambda, double eps, int act, double K,
                                       int rows, int n, int m, int p_rows);
void gyro_lorentz_hlinear_backward_f64(double *dx, double *dP, double *dW, double *db, double *dv,
                                       double *db_t, double *dlog_lambda, double *work,
                                       const double *dy, const double *U, const double *Hc,
                                       const double *x, const double *mask, const double *P,
                                       const double *W, const double *v, const double *b_t,
                                       const double *log_lambda, double eps, int act, double K,
                                       int rows, int n, int m, int p_rows);

/* ============================================================================================ */
/* G Lorentz linear layers reading the same rows — the per-head q, k, v projections of §3.2, each
 * head its own layer — in one pass: layer g has W_g = rows g·m..(g+1)·m−1 of W (G·m, n+1),
 * b_g = b + g·m (b may be NULL), v_g = row g of Vt (G, n+1), b_t,g = tl[2g], log λ_g = tl[2g+1]:
 *   y[r, g] = hlinear_g(x[r])  — gyro_lorentz_hlinear_* without mask, activation or bias point,
 * with the products U = x Wᵀ (rows, G·m) and Z = x Vtᵀ (rows, G) of all G layers in one BLAS call
 * each (z = v·x is then summed in T, not in double: the only difference from G hlinear calls).
 *   y (rows, G·(m+1)): layer g's point at columns g·(m+1)..g·(m+1)+m of row r
 *   U (rows, G·m) cache: u of every layer;  Z (rows, G) cache: z = v_g·x + b_t,g */
void gyro_lorentz_hlinear_group_forward_f32(float *y, float *U, float *Z, const float *x,
                                            const float *W, const float *b, const float *Vt,
                                            const float *tl, double eps, double K, int rows,
                                            int n, int m, int G);
void gyro_lorentz_hlinear_group_forward_f64(double *y, double *U, double *Z, const double *x,
                                            const double *W, const double *b, const double *Vt,
                                            const double *tl, double eps, double K, int rows,
                                            int n, int m, int G);
/* Given dy (rows, G·(m+1)), adds dx (rows, n+1), dW (G·m, n+1), db (G·m), dVt (G, n+1) and
 * dtl (G, 2) (each may be NULL) with hlinear's formulas per layer; work (rows, G·(m+1)) is
 * scratch, overwritten; it may be NULL only when dx, dW and dVt all are. */
void gyro_lorentz_hlinear_group_backward_f32(float *dx, float *dW, float *db, float *dVt,
                                             float *dtl, float *work, const float *dy,
                                             const float *U, const float *Z, const float *x,
                                             const float *W, const float *Vt, const float *tl,
                                             double eps, double K, int rows, int n, int m, int G);
void gyro_lorentz_hlinear_group_backward_f64(double *dx, double *dW, double *db, double *dVt,
                                             double *dtl, double *work, const double *dy,
                                             const double *U, const double *Z, const double *x,
                                             const double *W, const double *Vt, const double *tl,
                                             double eps, double K, int rows, int n, int m, int G);

/* ---- float32 inference on packed weights ----------------------------------------------------
 * The forwards of gyro_lorentz_hlinear_forward_f32 and gyro_lorentz_hlinear_group_forward_f32
 * with the products through the packed-weight kernel of models/layers/kernels_pack.h instead of
 * BLAS: Wp is W packed with gyro_pack_weights_f32 (W (m, n+1) → gyro_pack_values(m, n+1)
 * floats; for the group W (G·m, n+1) and Vtp = Vt (G, n+1) packed likewise). Same buffers,
 * contracts and formulas (every argument as in the unpacked call, P the bias points); the
 * outputs differ from the unpacked ones only by the summation order of the products (float32
 * rounding; |u|² is also summed by a vector dot product). The residual and position encoding
 * are this call with their bias points. */
void gyro_lorentz_hlinear_forward_packed_f32(float *y, float *U, float *Hc, const float *x,
                                             const float *mask, const float *P, const float *Wp,
                                             const float *b, const float *v, const float *b_t,
                                             const float *log_lambda, double eps, int act,
                                             double K, int rows, int n, int m, int p_rows);
void gyro_lorentz_hlinear_group_forward_packed_f32(float *y, float *U, float *Z, const float *x,
                                                   const float *Wp, const float *b,
                                                   const float *Vtp, const float *tl, double eps,
                                                   double K, int rows, int n, int m, int G);

/* ============================================================================================ */
/* Lorentz residual (HyboNet §3.3, eq. (7) with φ of eq. (9)): a block's last Lorentz linear layer
 * takes the block input X as its bias point, row by row:
 *   y = hlinear(o) with u = W h(o) + b + X_s,   o (rows, n+1) the block's output before that layer,
 *   X (rows, m+1) the block input (so m+1 is the model width).
 * Exactly gyro_lorentz_hlinear_* with P = X, p_rows = rows (the same buffers and contracts); dX
 * of the backward is the residual gradient (spatial part; its time part is 0 — the block's
 * other path adds to it). */
void gyro_lorentz_residual_forward_f32(float *y, float *U, float *Hc, const float *o,
                                       const float *mask, const float *X, const float *W,
                                       const float *b, const float *v, const float *b_t,
                                       const float *log_lambda, double eps, int act, double K,
                                       int rows, int n, int m);
void gyro_lorentz_residual_forward_f64(double *y, double *U, double *Hc, const double *o,
                                       const double *mask, const double *X, const double *W,
                                       const double *b, const double *v, const double *b_t,
                                       const double *log_lambda, double eps, int act, double K,
                                       int rows, int n, int m);
/* Adds do (rows, n+1), dX (rows, m+1), dW, db, dv, db_t, dlog_lambda (each may be NULL);
 * work (rows, m+n+1) scratch as for hlinear. */
void gyro_lorentz_residual_backward_f32(float *d_o, float *dX, float *dW, float *db, float *dv,
                                        float *db_t, float *dlog_lambda, float *work,
                                        const float *dy, const float *U, const float *Hc,
                                        const float *o, const float *mask, const float *X,
                                        const float *W, const float *v, const float *b_t,
                                        const float *log_lambda, double eps, int act, double K,
                                        int rows, int n, int m);
void gyro_lorentz_residual_backward_f64(double *d_o, double *dX, double *dW, double *db,
                                        double *dv, double *db_t, double *dlog_lambda,
                                        double *work, const double *dy, const double *U,
                                        const double *Hc, const double *o, const double *mask,
                                        const double *X, const double *W, const double *v,
                                        const double *b_t, const double *log_lambda, double eps,
                                        int act, double K, int rows, int n, int m);

/* Lorentz position encoding (HyboNet §3.3): the token embedding x of position t goes through a
 * Lorentz linear layer shared across positions whose bias point is the learnable position
 * embedding p_t (a hyperboloid point, only its spatial part enters, as in eq. (7)):
 *   y[b,t] = hlinear(x[b,t]) with u = W h(x[b,t]) + b + p_t,s.
 * y (B, T, m+1), U (B, T, m) and Hc (B, T, n+1) caches, x (B, T, n+1), mask (B, T, n+1) or
 * NULL, Ppos (T, m+1): the rows of the position table for t = 0..T−1 (a longer table is passed
 * from its first row). Exactly gyro_lorentz_hlinear_* with rows = B·T, P = Ppos, p_rows = T. */
void gyro_lorentz_posenc_forward_f32(float *y, float *U, float *Hc, const float *x,
                                     const float *mask, const float *Ppos, const float *W,
                                     const float *b, const float *v, const float *b_t,
                                     const float *log_lambda, double eps, int act, double K, int B,
                                     int T, int n, int m);
void gyro_lorentz_posenc_forward_f64(double *y, double *U, double *Hc, const double *x,
                                     const double *mask, const double *Ppos, const double *W,
                                     const double *b, const double *v, const double *b_t,
                                     const double *log_lambda, double eps, int act, double K,
                                     int B, int T, int n, int m);
/* Adds dx (B, T, n+1), dPpos (T, m+1) (summed over the batch), dW, db, dv, db_t, dlog_lambda;
 * work (B·T, m+n+1) scratch as for hlinear. */
void gyro_lorentz_posenc_backward_f32(float *dx, float *dPpos, float *dW, float *db, float *dv,
                                      float *db_t, float *dlog_lambda, float *work,
                                      const float *dy, const float *U, const float *Hc,
                                      const float *x, const float *mask, const float *Ppos,
                                      const float *W, const float *v, const float *b_t,
                                      const float *log_lambda, double eps, int act, double K,
                                      int B, int T, int n, int m);
void gyro_lorentz_posenc_backward_f64(double *dx, double *dPpos, double *dW, double *db,
                                      double *dv, double *db_t, double *dlog_lambda, double *work,
                                      const double *dy, const double *U, const double *Hc,
                                      const double *x, const double *mask, const double *Ppos,
                                      const double *W, const double *v, const double *b_t,
                                      const double *log_lambda, double eps, int act, double K,
                                      int B, int T, int n, int m);

/* ============================================================================================ */
/* Lorentz multi-head attention (HyboNet §3.2, eqs. (4)–(5)), for each batch b, head h, query i:
 *   ν_ij = softmax_j(−d²_L(q_i, k_j)/√n) over the valid keys j,
 *          −d²_L(q,k) = −2/K + 2⟨q,k⟩_L  (the constant cancels in the softmax; computed without it)
 *   z_i  = Σ_j ν_ij v_j,   O_i = z_i / (√(−K) √|⟨z_i,z_i⟩_L|)   (the Lorentz centroid, eq. (4))
 * n = nh is the spatial dimension of a head's points (the paper: "n is the dimension of points"),
 * not nh+1. Head h of a row is the slice [h·(nh+1), (h+1)·(nh+1)) — each a hyperboloid point
 * produced by its own Lorentz linear layer (or one hlinear per head); the paper's MHATT then
 * concatenates the heads' outputs and applies one more Lorentz linear layer (a caller's hlinear).
 * |⟨z,z⟩_L| is floored at GYRO_HYP_MIN_NORM². A sequence with no valid key gives the origin
 * (√k, 0, …, 0) for every query and no gradient.
 *   O  (B, Tq, H·(nh+1))       output points
 *   A  (B, H, Tq, Tk)          cache: the weights ν (0 at masked keys)
 *   Sz (B, H, Tq)              cache: sign(⟨z,z⟩_L)·√|⟨z,z⟩_L| (floored)
 *   Q  (B, Tq, H·(nh+1)), Kx, V (B, Tk, H·(nh+1)) queries, keys, values (hyperboloid points)
 *   kmask (B, Tk)              nonzero = valid key (padding = 0); NULL = every key valid
 *   K < 0 the curvature. */
void gyro_lorentz_mha_forward_f32(float *O, float *A, float *Sz, const float *Q, const float *Kx,
                                  const float *V, const int *kmask, double K, int B, int Tq,
                                  int Tk, int H, int nh);
void gyro_lorentz_mha_forward_f64(double *O, double *A, double *Sz, const double *Q,
                                  const double *Kx, const double *V, const int *kmask, double K,
                                  int B, int Tq, int Tk, int H, int nh);
/* Given dO (B, Tq, H·(nh+1)) and the forward's O, A, Sz, adds dQ, dKx, dV (each may be NULL):
 *   dz_i = (dO_i − sgn(⟨z,z⟩_L)(−K)(dO_i·O_i) J O_i) / (√(−K) √|⟨z,z⟩_L|),  J = diag(−1,1,…,1)
 *   dV_j += ν_ij dz_i;  dν_ij = v_j·dz_i;  dl_ij = ν_ij (dν_ij − Σ_l ν_il dν_il)
 *   dq_i += (2/√n) Σ_j dl_ij J k_j;  dk_j += (2/√n) Σ_i dl_ij J q_i. */
void gyro_lorentz_mha_backward_f32(float *dQ, float *dKx, float *dV, const float *dO,
                                   const float *O, const float *A, const float *Sz,
                                   const float *Q, const float *Kx, const float *V,
                                   const int *kmask, double K, int B, int Tq, int Tk, int H,
                                   int nh);
void gyro_lorentz_mha_backward_f64(double *dQ, double *dKx, double *dV, const double *dO,
                                   const double *O, const double *A, const double *Sz,
                                   const double *Q, const double *Kx, const double *V,
                                   const int *kmask, double K, int B, int Tq, int Tk, int H,
                                   int nh);

/* ============================================================================================ */
/* Centroid pooling (HyboNet eq. (4) with the tokens' weights; §3.2, and Appendix D's mention
 * encoder "Centroid(1/l, s_i)"), per sequence b:
 *   z = Σ_t w[b,t] X[b,t],   mu[b] = z / (√(−K) √|⟨z,z⟩_L|)
 * w (B, T): nonnegative token weights — 1 on valid tokens and 0 on padding pools the valid
 * tokens (any common factor cancels, so 1/len is the same); NULL = every token with weight 1.
 * At least one weight of each sequence must be > 0 (an all-zero row gives the origin and no
 * gradient). |⟨z,z⟩_L| is floored at GYRO_HYP_MIN_NORM².
 *   mu (B, n+1) outputs; Sz (B) cache: sign(⟨z,z⟩_L)·√|⟨z,z⟩_L|; X (B, T, n+1). */
void gyro_lorentz_pool_forward_f32(float *mu, float *Sz, const float *X, const float *w, double K,
                                   int B, int T, int n);
void gyro_lorentz_pool_forward_f64(double *mu, double *Sz, const double *X, const double *w,
                                   double K, int B, int T, int n);
/* Given dmu (B, n+1) and the forward's mu, Sz, adds dX (B, T, n+1) and dw (B, T) (the weights
 * as real numbers; each may be NULL):
 *   dz = (dmu − sgn(⟨z,z⟩_L)(−K)(dmu·mu) J mu)/(√(−K)√|⟨z,z⟩_L|);  dX[b,t] += w[b,t] dz;
 *   dw[b,t] += X[b,t]·dz. */
void gyro_lorentz_pool_backward_f32(float *dX, float *dw, const float *dmu, const float *mu,
                                    const float *Sz, const float *X, const float *w, double K,
                                    int B, int T, int n);
void gyro_lorentz_pool_backward_f64(double *dX, double *dw, const double *dmu, const double *mu,
                                    const double *Sz, const double *X, const double *w, double K,
                                    int B, int T, int n);

/* ============================================================================================ */
/* Lorentz classification head: distance-based logits to learned class points
 *   logit[b,c] = −d²_L(x_b, p_c) + β_c = −2/K + 2⟨x_b,p_c⟩_L + β_c,
 * p_c (C, n+1) points on the hyperboloid (a manifold parameter: Riemannian SGD/Adam, re-project),
 * β_c (C) Euclidean biases (NULL = 0).
 * Why this head and not a Lorentz MLR: the squared Lorentzian distance is the similarity the
 * whole network already uses (the attention weights of §3.2 and the centroid, which minimises
 * it), and HyboNet scores with it too (its knowledge-graph model: −d²_L plus biases; its
 * classifiers compare with Lorentz inner products). It is one Minkowski inner product per class
 * (the cost of a Euclidean linear head), has no arcosh/asinh and so no clamp and no kink at
 * x = p_c, and its gradients (2J x, 2J p) are exact in float32. A Lorentz MLR (distance to
 * hyperplanes, Bdeir et al. 2023) needs an asinh of a ratio of norms and a tangent-space
 * parameterisation of each hyperplane, for a gain the paper does not show on classification.
 * Its one weakness — −d²_L grows like e^d, so logits of far points are large — is met by the
 * pooling: a centroid of the last layer's tokens stays near them.
 *   logits (B, C); X (B, n+1) pooled points; P (C, n+1); beta (C) or NULL; K < 0. */
void gyro_lorentz_head_forward_f32(float *logits, const float *X, const float *P,
                                   const float *beta, double K, int B, int C, int n);
void gyro_lorentz_head_forward_f64(double *logits, const double *X, const double *P,
                                   const double *beta, double K, int B, int C, int n);
/* Given dlogits (B, C), adds dX (B, n+1) += Σ_c 2 dlogit J p_c, dP (C, n+1) += Σ_b 2 dlogit J x_b,
 * dbeta (C) += Σ_b dlogit (each may be NULL). */
void gyro_lorentz_head_backward_f32(float *dX, float *dP, float *dbeta, const float *dlogits,
                                    const float *X, const float *P, double K, int B, int C, int n);
void gyro_lorentz_head_backward_f64(double *dX, double *dP, double *dbeta, const double *dlogits,
                                    const double *X, const double *P, double K, int B, int C,
                                    int n);

#endif

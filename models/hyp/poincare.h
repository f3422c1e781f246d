/* poincare.h — the Poincaré ball of curvature −c (radius 1/√c): forward ops and their
 * vector-Jacobian products, in float32 and float64.
 *
 * Formulas follow Ganea, Bécigneul & Hofmann, "Hyperbolic Neural Networks" (NeurIPS 2018) and
 * shared/golden/hyperbolic_ops.txt, whose header restates each one. Both precisions come from
 * one generic implementation (poincare_impl.h, instantiated twice in poincare.c); the float32
 * entry points store float32 but accumulate every norm and dot product that feeds artanh, tanh
 * or a division in double.
 *
 * Conventions for every function below:
 *   - vectors are n floats, matrices are row-major; outputs first, then inputs, then scalars
 *     (c > 0, r, lr), then dimensions. Batched forms take (rows, n) row-major blocks.
 *   - no allocation, no I/O, never NULL arguments unless a function says a gradient pointer
 *     may be NULL (shapes are the caller's contract).
 *   - backward = vector-Jacobian product: given dL/d(out), it ADDS (+=) dL/d(inputs) into the
 *     gradient buffers (zero them first for a plain gradient).
 *   - removable singularities (zero vectors) take the limit value and the derivative of the
 *     smooth extension (Taylor branch, hyp_consts.h).
 *   - points whose norm would reach the boundary are clamped as DESIGN.md says: artanh
 *     arguments to 1 − 1e-7 (f64) / its float32 equivalent; tanh arguments to 15; 1 − c|x|² is
 *     floored at its value at that artanh clamp (λ_x ≤ ~1e7). Use gyro_poincare_project_* to
 *     bring a point back to √c|x| ≤ 1 − ε. float64 outputs and gradients are finite for any
 *     point of the closed ball; float32 ones for any point of the float32 ball (1 − ε = 0.996).
 *   - unless stated, an output may alias an input of the same shape (all dot products are
 *     taken before the output is written).
 */
#ifndef GYRO_HYP_POINCARE_H
#define GYRO_HYP_POINCARE_H

#include <stdint.h>

/* ============================================================================================ */
/* Möbius addition (Ganea 2018, eq. 3):
 *   x ⊕_c y = ((1 + 2c<x,y> + c|y|²) x + (1 − c|x|²) y) / (1 + 2c<x,y> + c²|x|²|y|²).
 * z: (n); x, y: (n). */
void gyro_poincare_mobius_add_f32(float *z, const float *x, const float *y, float c, int n);
void gyro_poincare_mobius_add_f64(double *z, const double *x, const double *y, double c, int n);
/* dx += (∂z/∂x)ᵀ dz, dy += (∂z/∂y)ᵀ dz. dx or dy may be NULL (not needed). */
void gyro_poincare_mobius_add_backward_f32(float *dx, float *dy, const float *dz,
                                           const float *x, const float *y, float c, int n);
void gyro_poincare_mobius_add_backward_f64(double *dx, double *dy, const double *dz,
                                           const double *x, const double *y, double c, int n);
/* Row-wise over (rows, n) blocks: Z[i] = X[i] ⊕ Y[i]. */
void gyro_poincare_mobius_add_batch_f32(float *Z, const float *X, const float *Y, float c,
                                        int rows, int n);
void gyro_poincare_mobius_add_batch_f64(double *Z, const double *X, const double *Y, double c,
                                        int rows, int n);
void gyro_poincare_mobius_add_backward_batch_f32(float *dX, float *dY, const float *dZ,
                                                 const float *X, const float *Y, float c,
                                                 int rows, int n);
void gyro_poincare_mobius_add_backward_batch_f64(double *dX, double *dY, const double *dZ,
                                                 const double *X, const double *Y, double c,
                                                 int rows, int n);

/* ============================================================================================ */
/* Conformal factor λ_x = 2 / (1 − c|x|²) (Ganea 2018, §2.1). Returns λ_x. */
float gyro_poincare_lambda_x_f32(const float *x, float c, int n);
double gyro_poincare_lambda_x_f64(const double *x, double c, int n);
/* dx += dlambda · ∂λ/∂x = dlambda · 4c x / (1 − c|x|²)². */
void gyro_poincare_lambda_x_backward_f32(float *dx, float dlambda, const float *x, float c, int n);
void gyro_poincare_lambda_x_backward_f64(double *dx, double dlambda, const double *x, double c,
                                         int n);

/* ============================================================================================ */
/* Exponential map at the origin (Ganea 2018, Lemma 2 with x = 0):
 *   exp_0(v) = tanh(√c|v|) v / (√c|v|);  exp_0(0) = 0, ∂exp_0/∂v(0) = I.   y, v: (n). */
void gyro_poincare_expmap0_f32(float *y, const float *v, float c, int n);
void gyro_poincare_expmap0_f64(double *y, const double *v, double c, int n);
/* dv += (∂y/∂v)ᵀ dy. */
void gyro_poincare_expmap0_backward_f32(float *dv, const float *dy, const float *v, float c, int n);
void gyro_poincare_expmap0_backward_f64(double *dv, const double *dy, const double *v, double c,
                                        int n);
void gyro_poincare_expmap0_batch_f32(float *Y, const float *V, float c, int rows, int n);
void gyro_poincare_expmap0_batch_f64(double *Y, const double *V, double c, int rows, int n);
void gyro_poincare_expmap0_backward_batch_f32(float *dV, const float *dY, const float *V, float c,
                                              int rows, int n);
void gyro_poincare_expmap0_backward_batch_f64(double *dV, const double *dY, const double *V,
                                              double c, int rows, int n);

/* Logarithmic map at the origin (Ganea 2018, Lemma 2 with x = 0):
 *   log_0(y) = artanh(√c|y|) y / (√c|y|);  log_0(0) = 0, ∂log_0/∂y(0) = I.   v, y: (n). */
void gyro_poincare_logmap0_f32(float *v, const float *y, float c, int n);
void gyro_poincare_logmap0_f64(double *v, const double *y, double c, int n);
/* dy += (∂v/∂y)ᵀ dv. */
void gyro_poincare_logmap0_backward_f32(float *dy, const float *dv, const float *y, float c, int n);
void gyro_poincare_logmap0_backward_f64(double *dy, const double *dv, const double *y, double c,
                                        int n);
void gyro_poincare_logmap0_batch_f32(float *V, const float *Y, float c, int rows, int n);
void gyro_poincare_logmap0_batch_f64(double *V, const double *Y, double c, int rows, int n);
void gyro_poincare_logmap0_backward_batch_f32(float *dY, const float *dV, const float *Y, float c,
                                              int rows, int n);
void gyro_poincare_logmap0_backward_batch_f64(double *dY, const double *dV, const double *Y,
                                              double c, int rows, int n);

/* ============================================================================================ */
/* Exponential map at x (Ganea 2018, Lemma 2):
 *   exp_x(v) = x ⊕ (tanh(√c λ_x |v| / 2) v / (√c|v|));  exp_x(0) = x.   y, x, v: (n). */
void gyro_poincare_expmap_f32(float *y, const float *x, const float *v, float c, int n);
void gyro_poincare_expmap_f64(double *y, const double *x, const double *v, double c, int n);
/* dx += (∂y/∂x)ᵀ dy, dv += (∂y/∂v)ᵀ dy. dx or dv may be NULL. y must not alias dx/dv. */
void gyro_poincare_expmap_backward_f32(float *dx, float *dv, const float *dy, const float *x,
                                       const float *v, float c, int n);
void gyro_poincare_expmap_backward_f64(double *dx, double *dv, const double *dy, const double *x,
                                       const double *v, double c, int n);

/* Logarithmic map at x (Ganea 2018, Lemma 2):
 *   log_x(y) = 2/(√c λ_x) artanh(√c|w|) w/|w|,  w = (−x) ⊕ y;  log_x(x) = 0.   v, x, y: (n). */
void gyro_poincare_logmap_f32(float *v, const float *x, const float *y, float c, int n);
void gyro_poincare_logmap_f64(double *v, const double *x, const double *y, double c, int n);
/* dx += (∂v/∂x)ᵀ dv, dy += (∂v/∂y)ᵀ dv. dx or dy may be NULL. */
void gyro_poincare_logmap_backward_f32(float *dx, float *dy, const float *dv, const float *x,
                                       const float *y, float c, int n);
void gyro_poincare_logmap_backward_f64(double *dx, double *dy, const double *dv, const double *x,
                                       const double *y, double c, int n);

/* ============================================================================================ */
/* Geodesic distance (Ganea 2018, eq. 5): d_c(x,y) = 2/√c · artanh(√c |(−x) ⊕ y|). Returns it. */
float gyro_poincare_dist_f32(const float *x, const float *y, float c, int n);
double gyro_poincare_dist_f64(const double *x, const double *y, double c, int n);
/* dx += dd · ∂d/∂x, dy += dd · ∂d/∂y. At x = y the distance is not differentiable (|w| has a
 * kink); the subgradient 0 is used there. dx or dy may be NULL. */
void gyro_poincare_dist_backward_f32(float *dx, float *dy, float dd, const float *x,
                                     const float *y, float c, int n);
void gyro_poincare_dist_backward_f64(double *dx, double *dy, double dd, const double *x,
                                     const double *y, double c, int n);

/* ============================================================================================ */
/* Möbius scalar multiplication (Ganea 2018, eq. 4):
 *   r ⊗_c x = tanh(r artanh(√c|x|)) x / (√c|x|);  r ⊗ 0 = 0 (derivative r·I).   y, x: (n). */
void gyro_poincare_mobius_scalar_f32(float *y, const float *x, float r, float c, int n);
void gyro_poincare_mobius_scalar_f64(double *y, const double *x, double r, double c, int n);
/* dx += (∂y/∂x)ᵀ dy (r is a fixed scalar, not differentiated). */
void gyro_poincare_mobius_scalar_backward_f32(float *dx, const float *dy, const float *x, float r,
                                              float c, int n);
void gyro_poincare_mobius_scalar_backward_f64(double *dx, const double *dy, const double *x,
                                              double r, double c, int n);

/* ============================================================================================ */
/* Möbius matrix-vector product (Ganea 2018, eq. 6), M: (m, n) row-major, x: (n), y: (m):
 *   M ⊗_c x = tanh(|Mx|/|x| · artanh(√c|x|)) Mx / (√c|Mx|);
 *   x = 0 or Mx = 0 → 0 (derivative at x = 0: M; at Mx = 0: artanh(√c|x|)/(√c|x|) M).
 * y must not alias x. */
void gyro_poincare_mobius_matvec_f32(float *y, const float *M, const float *x, float c, int m,
                                     int n);
void gyro_poincare_mobius_matvec_f64(double *y, const double *M, const double *x, double c, int m,
                                     int n);
/* dM += (∂y/∂M)ᵀ dy (m, n), dx += (∂y/∂x)ᵀ dy (n). Two passes over M, no scratch memory.
 * dM or dx may be NULL. */
void gyro_poincare_mobius_matvec_backward_f32(float *dM, float *dx, const float *dy,
                                              const float *M, const float *x, float c, int m,
                                              int n);
void gyro_poincare_mobius_matvec_backward_f64(double *dM, double *dx, const double *dy,
                                              const double *M, const double *x, double c, int m,
                                              int n);
/* The same product split for callers that compute Mx themselves (e.g. with cblas_sgemm over a
 * batch): given mx = Mx (m) and x (n), y = tanh(|mx|/|x| artanh(√c|x|)) mx/(√c|mx|). y may
 * alias mx. The backward gives dmx += ∂L/∂(Mx) (m) and the direct part dx += ∂L/∂x through
 * |x| only (n); the caller completes dM += dmx xᵀ and dx += Mᵀ dmx. dmx or dx may be NULL. */
void gyro_poincare_mobius_matvec_finish_f32(float *y, const float *mx, const float *x, float c,
                                            int m, int n);
void gyro_poincare_mobius_matvec_finish_f64(double *y, const double *mx, const double *x,
                                            double c, int m, int n);
void gyro_poincare_mobius_matvec_finish_backward_f32(float *dmx, float *dx, const float *dy,
                                                     const float *mx, const float *x, float c,
                                                     int m, int n);
void gyro_poincare_mobius_matvec_finish_backward_f64(double *dmx, double *dx, const double *dy,
                                                     const double *mx, const double *x, double c,
                                                     int m, int n);
/* Row-wise finish over a batch: MX (rows, m), X (rows, n), Y (rows, m). */
void gyro_poincare_mobius_matvec_finish_batch_f32(float *Y, const float *MX, const float *X,
                                                  float c, int rows, int m, int n);
void gyro_poincare_mobius_matvec_finish_batch_f64(double *Y, const double *MX, const double *X,
                                                  double c, int rows, int m, int n);
void gyro_poincare_mobius_matvec_finish_backward_batch_f32(float *dMX, float *dX, const float *dY,
                                                           const float *MX, const float *X,
                                                           float c, int rows, int m, int n);
void gyro_poincare_mobius_matvec_finish_backward_batch_f64(double *dMX, double *dX,
                                                           const double *dY, const double *MX,
                                                           const double *X, double c, int rows,
                                                           int m, int n);

/* ============================================================================================ */
/* Parallel transport from the origin to x (Ganea 2018, §2.3, with the λ ratio of the
 * conformal metric): P_{0→x}(v) = (λ_0/λ_x) v = (1 − c|x|²) v.   u, x, v: (n). */
void gyro_poincare_transp0_f32(float *u, const float *x, const float *v, float c, int n);
void gyro_poincare_transp0_f64(double *u, const double *x, const double *v, double c, int n);
/* dx += (∂u/∂x)ᵀ du, dv += (∂u/∂v)ᵀ du. dx or dv may be NULL. */
void gyro_poincare_transp0_backward_f32(float *dx, float *dv, const float *du, const float *x,
                                        const float *v, float c, int n);
void gyro_poincare_transp0_backward_f64(double *dx, double *dv, const double *du, const double *x,
                                        const double *v, double c, int n);

/* ============================================================================================ */
/* Gyration gyr[a,b]u = (−(a⊕b)) ⊕ (a ⊕ (b ⊕ u)) in closed form (Ungar; the form of the golden
 * file's header): gyr[a,b]u = u + 2c(A a + B b)/D with
 *   A = −c<a,u>|b|² + <b,u> + 2c<a,b><b,u>,  B = −c<b,u>|a|² − <a,u>,
 *   D = 1 + 2c<a,b> + c²|a|²|b|².   g, a, b, u: (n). */
void gyro_poincare_gyration_f32(float *g, const float *a, const float *b, const float *u, float c,
                                int n);
void gyro_poincare_gyration_f64(double *g, const double *a, const double *b, const double *u,
                                double c, int n);
/* da, db, du += VJPs of dg. Any of da, db, du may be NULL. */
void gyro_poincare_gyration_backward_f32(float *da, float *db, float *du, const float *dg,
                                         const float *a, const float *b, const float *u, float c,
                                         int n);
void gyro_poincare_gyration_backward_f64(double *da, double *db, double *du, const double *dg,
                                         const double *a, const double *b, const double *u,
                                         double c, int n);

/* ============================================================================================ */
/* Hyperbolic multinomial logistic regression logits (Ganea 2018, eq. 25), K classes with
 * offsets P (K, n) (ball points p_k) and normals A (K, n) (tangent vectors a_k):
 *   z_k = (−p_k) ⊕ x;
 *   logit_k = λ_{p_k} |a_k| / √c · asinh( 2√c <z_k, a_k> / ((1 − c|z_k|²) |a_k|) ).
 * z_k is never stored (its dot products are formed from <p,x>, <x,a>, ...). The logit is
 * evaluated as 2λ_p<z,a>/(1 − c|z|²) · S(arg), S(t) = asinh(t)/t, which is finite for a_k → 0;
 * a_k = 0 gives logit 0 and the gradient with S = 1. logits: (K), x: (n). */
void gyro_poincare_hyp_mlr_f32(float *logits, const float *x, const float *P, const float *A,
                               float c, int K, int n);
void gyro_poincare_hyp_mlr_f64(double *logits, const double *x, const double *P, const double *A,
                               double c, int K, int n);
/* dx (n), dP (K, n), dA (K, n) += VJPs of dlogits (K). Any gradient pointer may be NULL. */
void gyro_poincare_hyp_mlr_backward_f32(float *dx, float *dP, float *dA, const float *dlogits,
                                        const float *x, const float *P, const float *A, float c,
                                        int K, int n);
void gyro_poincare_hyp_mlr_backward_f64(double *dx, double *dP, double *dA,
                                        const double *dlogits, const double *x, const double *P,
                                        const double *A, double c, int K, int n);
/* Over a batch: logits (rows, K), X (rows, n); P, A shared. dP/dA accumulate over the rows. */
void gyro_poincare_hyp_mlr_batch_f32(float *logits, const float *X, const float *P,
                                     const float *A, float c, int rows, int K, int n);
void gyro_poincare_hyp_mlr_batch_f64(double *logits, const double *X, const double *P,
                                     const double *A, double c, int rows, int K, int n);
void gyro_poincare_hyp_mlr_backward_batch_f32(float *dX, float *dP, float *dA,
                                              const float *dlogits, const float *X,
                                              const float *P, const float *A, float c, int rows,
                                              int K, int n);
void gyro_poincare_hyp_mlr_backward_batch_f64(double *dX, double *dP, double *dA,
                                              const double *dlogits, const double *X,
                                              const double *P, const double *A, double c,
                                              int rows, int K, int n);

/* ============================================================================================ */
/* Hyperbolic linear layer (Ganea 2018, eq. 26 with a Möbius bias): y = (M ⊗_c x) ⊕_c b.
 * M: (m, n), x: (n), b: (m), y: (m); y must not alias x or b. */
void gyro_poincare_hyp_linear_f32(float *y, const float *M, const float *x, const float *b,
                                  float c, int m, int n);
void gyro_poincare_hyp_linear_f64(double *y, const double *M, const double *x, const double *b,
                                  double c, int m, int n);
/* dM (m, n), dx (n), db (m) += VJPs of dy (m). Two passes over M, no scratch memory. Any
 * gradient pointer may be NULL. */
void gyro_poincare_hyp_linear_backward_f32(float *dM, float *dx, float *db, const float *dy,
                                           const float *M, const float *x, const float *b,
                                           float c, int m, int n);
void gyro_poincare_hyp_linear_backward_f64(double *dM, double *dx, double *db, const double *dy,
                                           const double *M, const double *x, const double *b,
                                           double c, int m, int n);

/* ============================================================================================ */
/* Einstein midpoint of m ball points with weights w_j > 0 (HyperText, Zhu et al., Findings of
 * EMNLP 2020, §3.2; Ungar's gyromidpoint): each point goes to the Klein model, k_j = 2x_j/(1 +
 * c|x_j|²), with Lorentz factor γ_j = 1/√(1 − c|k_j|²); the midpoint is m = Σ w_j γ_j k_j /
 * Σ w_j γ_j, mapped back to the ball. In Poincaré coordinates (γ_j k_j = λ_j x_j, γ_j = λ_j − 1):
 *   m = Σ w_j λ_j x_j / Σ w_j (λ_j − 1),   y = m / (1 + √(1 − c|m|²))   (= ½ ⊗_c m).
 * The points are rows idx[j] of the table E (rows of n values; idx NULL: rows 0..m−1), so a bag
 * of embedding rows is pooled without gathering it. y: (n); w: (m), NULL for all ones. m ≥ 1. */
void gyro_poincare_einstein_midpoint_f32(float *y, const float *E, const int32_t *idx,
                                         const float *w, float c, int m, int n);
void gyro_poincare_einstein_midpoint_f64(double *y, const double *E, const int32_t *idx,
                                         const double *w, double c, int m, int n);
/* dX (m, n) += the VJP of dy for each pooled point, row j for point j (a point pooled twice gets
 * two rows), so a sparse optimizer can step each embedding row:
 *   g_m = g_y/D + c (m·g_y) m / (q D²)  (q = √(1 − c|m|²), D = 1 + q),
 *   g_u = g_m / s,  g_s = −(g_m·m)/s   (u = Σ w λ x, s = Σ w (λ − 1)),
 *   dx_j = w_j (λ_j g_u + c λ_j² (x_j·g_u + g_s) x_j). */
void gyro_poincare_einstein_midpoint_backward_f32(float *dX, const float *dy, const float *E,
                                                  const int32_t *idx, const float *w, float c,
                                                  int m, int n);
void gyro_poincare_einstein_midpoint_backward_f64(double *dX, const double *dy, const double *E,
                                                  const int32_t *idx, const double *w, double c,
                                                  int m, int n);

/* ============================================================================================ */
/* Projection onto the closed ball of radius (1 − ε)/√c (ε = GYRO_HYP_BALL_EPS_F32/_F64):
 * y = x if √c|x| ≤ 1 − ε, else x (1 − ε)/(√c|x|). y may alias x. Returns 1 if x was scaled,
 * else 0. A non-finite coordinate makes y the origin and returns -1 (reported, not propagated). */
int gyro_poincare_project_f32(float *y, const float *x, float c, int n);
int gyro_poincare_project_f64(double *y, const double *x, double c, int n);
/* dx += (∂y/∂x)ᵀ dy (identity inside the ball, the radial projection's Jacobian outside). */
void gyro_poincare_project_backward_f32(float *dx, const float *dy, const float *x, float c,
                                        int n);
void gyro_poincare_project_backward_f64(double *dx, const double *dy, const double *x, double c,
                                        int n);
/* Row-wise projection of a (rows, n) block; returns the number of rows that were scaled or
 * reset (non-finite). */
int gyro_poincare_project_batch_f32(float *Y, const float *X, float c, int rows, int n);
int gyro_poincare_project_batch_f64(double *Y, const double *X, double c, int rows, int n);

/* ============================================================================================ */
/* Riemannian gradient from the Euclidean one (Nickel & Kiela 2017, eq. 4; DESIGN.md):
 *   rgrad = ((1 − c|x|²)² / 4) g = g / λ_x².   rgrad, x, g: (n). */
void gyro_poincare_egrad2rgrad_f32(float *rgrad, const float *x, const float *g, float c, int n);
void gyro_poincare_egrad2rgrad_f64(double *rgrad, const double *x, const double *g, double c,
                                   int n);
void gyro_poincare_egrad2rgrad_backward_f32(float *dx, float *dg, const float *drgrad,
                                            const float *x, const float *g, float c, int n);
void gyro_poincare_egrad2rgrad_backward_f64(double *dx, double *dg, const double *drgrad,
                                            const double *x, const double *g, double c, int n);

/* Riemannian SGD step in the ball (Bécigneul & Ganea 2019; DESIGN.md):
 *   x_new = proj(exp_x(−lr · ((1 − c|x|²)²/4) egrad)).
 * x_new may alias x (in-place update). The projection only acts within ε of the boundary. */
void gyro_poincare_rsgd_step_f32(float *x_new, const float *x, const float *egrad, float c,
                                 float lr, int n);
void gyro_poincare_rsgd_step_f64(double *x_new, const double *x, const double *egrad, double c,
                                 double lr, int n);
/* VJP of the step before projection (x_new = exp_x(−lr rgrad)): dx, degrad += ... of dx_new.
 * dx or degrad may be NULL. */
void gyro_poincare_rsgd_step_backward_f32(float *dx, float *degrad, const float *dx_new,
                                          const float *x, const float *egrad, float c, float lr,
                                          int n);
void gyro_poincare_rsgd_step_backward_f64(double *dx, double *degrad, const double *dx_new,
                                          const double *x, const double *egrad, double c,
                                          double lr, int n);
/* Row-wise step over a (rows, n) parameter block (e.g. the ball biases of a layer). */
void gyro_poincare_rsgd_step_batch_f32(float *X_new, const float *X, const float *EGRAD, float c,
                                       float lr, int rows, int n);
void gyro_poincare_rsgd_step_batch_f64(double *X_new, const double *X, const double *EGRAD,
                                       double c, double lr, int rows, int n);

#endif

/* lorentz.h — the hyperboloid (Lorentz) model of curvature −1, time coordinate FIRST: forward
 * ops and their vector-Jacobian products, in float32 and float64.
 *
 * A point is x = (x₀, x₁..xₙ) with ⟨x,x⟩_L = −1, x₀ > 0, where
 *   ⟨x,y⟩_L = −x₀y₀ + Σᵢ xᵢyᵢ
 * (Nickel & Kiela, "Learning Continuous Hierarchies in the Lorentz Model", ICML 2018). n is the
 * SPATIAL dimension: points and tangent vectors have n+1 entries. Formulas follow
 * shared/golden/hyperbolic_ops.txt, whose header restates each one. Both precisions come from
 * one generic implementation (lorentz_impl.h, instantiated twice in lorentz.c); the float32
 * entry points store float32 but accumulate every inner product that feeds arcosh, a square
 * root or a division in double.
 *
 * Conventions: outputs first, then inputs, then scalars (lr, theta), then dimensions; no
 * allocation, no I/O, no NULL arguments unless stated; backward ADDS (+=) dL/d(inputs) given
 * dL/d(out); gradients are the ambient partial derivatives of the formulas exactly as written
 * in the golden file, every coordinate treated as independent; outputs may alias inputs of the
 * same shape unless stated.
 */
#ifndef GYRO_HYP_LORENTZ_H
#define GYRO_HYP_LORENTZ_H

/* ============================================================================================ */
/* Minkowski inner product ⟨x,y⟩_L = −x₀y₀ + Σᵢ xᵢyᵢ (accumulated in double). x, y: (n+1). */
float gyro_lorentz_inner_f32(const float *x, const float *y, int n);
double gyro_lorentz_inner_f64(const double *x, const double *y, int n);
/* dx += dinner · J y, dy += dinner · J x, J = diag(−1, 1, …, 1). dx or dy may be NULL. */
void gyro_lorentz_inner_backward_f32(float *dx, float *dy, float dinner, const float *x,
                                     const float *y, int n);
void gyro_lorentz_inner_backward_f64(double *dx, double *dy, double dinner, const double *x,
                                     const double *y, int n);

/* Geodesic distance d(x,y) = arcosh(−⟨x,y⟩_L) (argument clamped to ≥ 1). Returns it. */
float gyro_lorentz_dist_f32(const float *x, const float *y, int n);
double gyro_lorentz_dist_f64(const double *x, const double *y, int n);
/* dx += −dd/√(a²−1) J y, dy += −dd/√(a²−1) J x, a = −⟨x,y⟩_L (a² − 1 floored at
 * GYRO_HYP_ARCOSH_MIN_SQ: at x = y the distance has a kink). dx or dy may be NULL. */
void gyro_lorentz_dist_backward_f32(float *dx, float *dy, float dd, const float *x,
                                    const float *y, int n);
void gyro_lorentz_dist_backward_f64(double *dx, double *dy, double dd, const double *x,
                                    const double *y, int n);

/* ============================================================================================ */
/* Projection onto the tangent space at x: u = v + ⟨x,v⟩_L x. u, x, v: (n+1). */
void gyro_lorentz_proj_tangent_f32(float *u, const float *x, const float *v, int n);
void gyro_lorentz_proj_tangent_f64(double *u, const double *x, const double *v, int n);
void gyro_lorentz_proj_tangent_backward_f32(float *dx, float *dv, const float *du, const float *x,
                                            const float *v, int n);
void gyro_lorentz_proj_tangent_backward_f64(double *dx, double *dv, const double *du,
                                            const double *x, const double *v, int n);

/* Riemannian gradient (Nickel & Kiela 2018, §3): rgrad = proj_tangent(x, J g), J = diag(−1,1..1).
 * rgrad, x, g: (n+1). */
void gyro_lorentz_egrad2rgrad_f32(float *rgrad, const float *x, const float *g, int n);
void gyro_lorentz_egrad2rgrad_f64(double *rgrad, const double *x, const double *g, int n);
void gyro_lorentz_egrad2rgrad_backward_f32(float *dx, float *dg, const float *drgrad,
                                           const float *x, const float *g, int n);
void gyro_lorentz_egrad2rgrad_backward_f64(double *dx, double *dg, const double *drgrad,
                                           const double *x, const double *g, int n);

/* ============================================================================================ */
/* Exponential map (Nickel & Kiela 2018, eq. 9):
 *   exp_x(v) = cosh(|v|_L) x + sinh(|v|_L) v/|v|_L,  |v|_L = √max(⟨v,v⟩_L, 0);  exp_x(0) = x.
 * The cosh/sinh argument is clamped to GYRO_HYP_COSH_MAX_* − log(max(1, x₀)) so the result stays
 * representable in the storage precision. y, x, v: (n+1). */
void gyro_lorentz_expmap_f32(float *y, const float *x, const float *v, int n);
void gyro_lorentz_expmap_f64(double *y, const double *x, const double *v, int n);
void gyro_lorentz_expmap_backward_f32(float *dx, float *dv, const float *dy, const float *x,
                                      const float *v, int n);
void gyro_lorentz_expmap_backward_f64(double *dx, double *dv, const double *dy, const double *x,
                                      const double *v, int n);

/* Logarithmic map (Nickel & Kiela 2018, eq. 10 with the log of Ganea/HyboNet):
 *   log_x(y) = arcosh(a) z/|z|_L,  a = −⟨x,y⟩_L,  z = y + ⟨x,y⟩_L x = y − a x;  log_x(x) = 0.
 * v, x, y: (n+1). */
void gyro_lorentz_logmap_f32(float *v, const float *x, const float *y, int n);
void gyro_lorentz_logmap_f64(double *v, const double *x, const double *y, int n);
void gyro_lorentz_logmap_backward_f32(float *dx, float *dy, const float *dv, const float *x,
                                      const float *y, int n);
void gyro_lorentz_logmap_backward_f64(double *dx, double *dy, const double *dv, const double *x,
                                      const double *y, int n);

/* ============================================================================================ */
/* Lift a spatial vector onto the hyperboloid: x = (√(1 + |x_s|²), x_s). x: (n+1), xs: (n). */
void gyro_lorentz_lift_f32(float *x, const float *xs, int n);
void gyro_lorentz_lift_f64(double *x, const double *xs, int n);
void gyro_lorentz_lift_backward_f32(float *dxs, const float *dx, const float *xs, int n);
void gyro_lorentz_lift_backward_f64(double *dxs, const double *dx, const double *xs, int n);

/* Re-project in place: x₀ := √(1 + |x_s|²) (DESIGN.md: after every update). A non-finite
 * coordinate resets x to the origin (1, 0, …, 0) and returns -1; otherwise returns 0. */
int gyro_lorentz_reproject_f32(float *x, int n);
int gyro_lorentz_reproject_f64(double *x, int n);

/* Rounding-aware re-projection, for points that are STORED (a trainer's final table).
 * gyro_lorentz_reproject_* rounds x₀ = √(1 + |x_s|²) to the storage precision, which leaves
 * ⟨x,x⟩_L + 1 ≈ −2δx₀² (δ the relative rounding of x₀, up to 2⁻²⁴ in float32): 1e-5 already at
 * x₀ ≈ 9. This op re-projects, then, with x₀ as stored, absorbs the residual
 *   r = |x_s|² − (x₀² − 1)   (in double)
 * coordinate by coordinate: xᵢ moves towards sign(xᵢ)√(xᵢ² − r) when that shrinks |r|, by at
 * most ε·x₀/2ᵖ in sweep p = 0, 1, 2 (ε the machine epsilon), so by < 2ε·x₀ (2–4 ulps of x₀, the
 * resolution at which the point is stored) in all. The large coordinates absorb the bulk, the
 * small ones the rest at their finer resolution, so the floor is the granularity |xⱼ|·ulp(xⱼ) of
 * the smallest coordinates and the reach grows with the dimension: in float32 (Gaussian
 * directions) |⟨x,x⟩_L + 1| < 1e-6 for x₀ up to 60 at dim 32, 300 at dim 100, 1000 at dim 300
 * (check_hyp_props), 20–2000 times below the plain re-projection; at dim ≤ 8 the gain is small.
 * In float64 the residual is already at double rounding and the sweeps change little.
 * x: (n+1). A non-finite coordinate resets x to the origin and returns -1; otherwise 0. */
int gyro_lorentz_reproject_rounded_f32(float *x, int n);
int gyro_lorentz_reproject_rounded_f64(double *x, int n);

/* ============================================================================================ */
/* Riemannian SGD step (Nickel & Kiela 2018, §3; DESIGN.md):
 *   g = egrad2rgrad(x, egrad);  s = −lr g;  if |s|_L > max_step: s ← s · max_step/|s|_L;
 *   y = exp_x(s);  x_new = (√(1 + |y_s|²), y_s).
 * max_step ≤ 0 disables the clipping (GYRO_HYP_LORENTZ_MAX_STEP is a sensible default).
 * x_new may alias x (in-place update). A non-finite result resets x_new to the origin. */
void gyro_lorentz_rsgd_step_f32(float *x_new, const float *x, const float *egrad, float lr,
                                float max_step, int n);
void gyro_lorentz_rsgd_step_f64(double *x_new, const double *x, const double *egrad, double lr,
                                double max_step, int n);
/* VJP of the same map (clipping included when it is active): dx, degrad += … of dx_new.
 * dx or degrad may be NULL. */
void gyro_lorentz_rsgd_step_backward_f32(float *dx, float *degrad, const float *dx_new,
                                         const float *x, const float *egrad, float lr,
                                         float max_step, int n);
void gyro_lorentz_rsgd_step_backward_f64(double *dx, double *degrad, const double *dx_new,
                                         const double *x, const double *egrad, double lr,
                                         double max_step, int n);

/* ============================================================================================ */
/* Skip-gram negative-sampling loss on the hyperboloid with shift θ (the score is ⟨u,v⟩_L + θ,
 * which grows as the points get closer; Leimeister & Wilson 2018 style):
 *   L = −log σ(⟨u,v⟩_L + θ) − Σⱼ log σ(−(⟨u,nⱼ⟩_L + θ)),   neg: (k, n+1) rows nⱼ.
 * Returns L (computed with log1p/exp in a form that never overflows). Writes (=, not +=) the
 * Euclidean gradients egrad_u = ∂L/∂u (n+1), egrad_v (n+1), egrad_neg (k, n+1); each may be NULL
 * and none may alias an input.
 * Turn them into Riemannian ones with gyro_lorentz_egrad2rgrad_*. */
float gyro_lorentz_skipgram_loss_f32(float *egrad_u, float *egrad_v, float *egrad_neg,
                                     const float *u, const float *v, const float *neg,
                                     float theta, int k, int n);
double gyro_lorentz_skipgram_loss_f64(double *egrad_u, double *egrad_v, double *egrad_neg,
                                      const double *u, const double *v, const double *neg,
                                      double theta, int k, int n);
/* du, dv, dneg += dloss · ∂L/∂(u, v, neg). Any may be NULL. */
void gyro_lorentz_skipgram_loss_backward_f32(float *du, float *dv, float *dneg, float dloss,
                                             const float *u, const float *v, const float *neg,
                                             float theta, int k, int n);
void gyro_lorentz_skipgram_loss_backward_f64(double *du, double *dv, double *dneg, double dloss,
                                             const double *u, const double *v, const double *neg,
                                             double theta, int k, int n);
/* One term of that loss for rows that are not contiguous (a trainer's embedding table):
 *   label = 1: ℓ = −log σ(⟨u,w⟩_L + θ);  label = 0: ℓ = −log σ(−(⟨u,w⟩_L + θ)).
 * Returns ℓ and ADDS (+=) scale·∂ℓ/∂u into du and scale·∂ℓ/∂w into dw (each may be NULL). */
float gyro_lorentz_skipgram_term_f32(float *du, float *dw, const float *u, const float *w,
                                     int label, float theta, float scale, int n);
double gyro_lorentz_skipgram_term_f64(double *du, double *dw, const double *u, const double *w,
                                      int label, double theta, double scale, int n);

/* ============================================================================================ */
/* Lorentz linear layer, simple form (Chen et al., "Fully Hyperbolic Neural Networks" /
 * HyboNet, 2022): y_s = W x, y₀ = √(1 + |y_s|²).  W: (m, n+1), x: (n+1), y: (m+1).
 * y must not alias x. */
void gyro_lorentz_linear_f32(float *y, const float *x, const float *W, int m, int n);
void gyro_lorentz_linear_f64(double *y, const double *x, const double *W, int m, int n);
/* dx (n+1), dW (m, n+1) += VJPs of dy (m+1). Two passes over W, no scratch. Either may be NULL. */
void gyro_lorentz_linear_backward_f32(float *dx, float *dW, const float *dy, const float *x,
                                      const float *W, int m, int n);
void gyro_lorentz_linear_backward_f64(double *dx, double *dW, const double *dy, const double *x,
                                      const double *W, int m, int n);

/* Lorentz centroid (Law et al., "Lorentzian Distance Learning", ICML 2019):
 *   z = Σⱼ νⱼ Xⱼ,  μ = z / √|⟨z,z⟩_L|.   X: (N, n+1), nu: (N) with νⱼ > 0, mu: (n+1).
 * (|⟨z,z⟩_L| is floored at GYRO_HYP_MIN_NORM².) mu must not alias X. */
void gyro_lorentz_centroid_f32(float *mu, const float *X, const float *nu, int N, int n);
void gyro_lorentz_centroid_f64(double *mu, const double *X, const double *nu, int N, int n);
/* dX (N, n+1), dnu (N) += VJPs of dmu (n+1). Either may be NULL. */
void gyro_lorentz_centroid_backward_f32(float *dX, float *dnu, const float *dmu, const float *X,
                                        const float *nu, int N, int n);
void gyro_lorentz_centroid_backward_f64(double *dX, double *dnu, const double *dmu,
                                        const double *X, const double *nu, int N, int n);

#endif

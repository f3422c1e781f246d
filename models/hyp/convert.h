/* convert.h — conversions between the hyperboloid (curvature −1, time first) and the Poincaré
 * ball with c = 1, forward and backward, float32 and float64.
 *
 * The maps are the isometries of shared/DESIGN.md (the seed paper prints a wrong inverse):
 *   to_poincare(x)    = x_s / (1 + x₀)                       (hyperboloid (n+1) → ball (n))
 *   to_hyperboloid(y) = (1 + |y|², 2y) / (1 − |y|²)          (ball (n) → hyperboloid (n+1))
 * so that d_ball(y₁, y₂) = d_L(to_hyperboloid(y₁), to_hyperboloid(y₂)). Norms are accumulated in
 * double. to_hyperboloid clamps |y|² to the float64/float32 artanh clamp so a point on or
 * outside the unit sphere maps to a finite (far) point instead of Inf. Backward ADDS (+=).
 */
#ifndef GYRO_HYP_CONVERT_H
#define GYRO_HYP_CONVERT_H

/* y (n) = x_s / (1 + x₀), x: (n+1). y must not alias x. */
void gyro_hyp_to_poincare_f32(float *y, const float *x, int n);
void gyro_hyp_to_poincare_f64(double *y, const double *x, int n);
void gyro_hyp_to_poincare_backward_f32(float *dx, const float *dy, const float *x, int n);
void gyro_hyp_to_poincare_backward_f64(double *dx, const double *dy, const double *x, int n);
/* Row-wise over X (rows, n+1) → Y (rows, n). */
void gyro_hyp_to_poincare_batch_f32(float *Y, const float *X, int rows, int n);
void gyro_hyp_to_poincare_batch_f64(double *Y, const double *X, int rows, int n);

/* x (n+1) = (1 + |y|², 2y) / (1 − |y|²), y: (n). x must not alias y. */
void gyro_hyp_to_hyperboloid_f32(float *x, const float *y, int n);
void gyro_hyp_to_hyperboloid_f64(double *x, const double *y, int n);
void gyro_hyp_to_hyperboloid_backward_f32(float *dy, const float *dx, const float *y, int n);
void gyro_hyp_to_hyperboloid_backward_f64(double *dy, const double *dx, const double *y, int n);
/* Row-wise over Y (rows, n) → X (rows, n+1). */
void gyro_hyp_to_hyperboloid_batch_f32(float *X, const float *Y, int rows, int n);
void gyro_hyp_to_hyperboloid_batch_f64(double *X, const double *Y, int rows, int n);

#endif

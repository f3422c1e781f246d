/* convert_impl.h — internal template: the one implementation of convert.h, instantiated once
 * per precision by convert.c (no include guard on purpose). The including file defines T,
 * S(name) (file-local helper names), C(name) (public names gyro_hyp_<name>_f32/_f64) and
 * ARTANH_MAX (the floor of 1 − |y|² is 1 − ARTANH_MAX).
 */

#include "models/hyp/hyp_vec_impl.h"

/* 1 + x₀, floored at GYRO_HYP_MIN_NORM. */
static inline double S(cv_den)(const T *x)
{
    double d = 1.0 + (double)x[0];
    return d < GYRO_HYP_MIN_NORM ? GYRO_HYP_MIN_NORM : d;
}

void C(to_poincare)(T *y, const T *x, int n)
{
    S(hyp_scale)(y, 1.0 / S(cv_den)(x), x + 1, n);
}

void C(to_poincare_backward)(T *dx, const T *dy, const T *x, int n)
{
    double den = S(cv_den)(x);
    /* y = x_s/(1 + x₀): dx_s += dy/den, dx₀ += −<dy, x_s>/den² */
    dx[0] -= (T)(S(hyp_dot)(dy, x + 1, n) / (den * den));
    S(hyp_acc1)(dx + 1, 1.0 / den, dy, n);
}

void C(to_poincare_batch)(T *Y, const T *X, int rows, int n)
{
    for (int r = 0; r < rows; r++)
        C(to_poincare)(Y + (size_t)r * n, X + (size_t)r * ((size_t)n + 1), n);
}

/* 1 − |y|², floored at 1 − ARTANH_MAX; *clamped says whether the floor acted. */
static inline double S(cv_hden)(double yy, int *clamped)
{
    double d = 1.0 - yy, lo = 1.0 - ARTANH_MAX;
    *clamped = d < lo;
    return *clamped ? lo : d;
}

void C(to_hyperboloid)(T *x, const T *y, int n)
{
    double yy = S(hyp_dot)(y, y, n);
    int cl;
    double den = S(cv_hden)(yy, &cl);
    x[0] = (T)((1.0 + yy) / den);
    S(hyp_scale)(x + 1, 2.0 / den, y, n);
}

void C(to_hyperboloid_backward)(T *dy, const T *dx, const T *y, int n)
{
    double yy = S(hyp_dot)(y, y, n);
    int cl;
    double den = S(cv_hden)(yy, &cl);
    double G0 = dx[0];
    if (cl) { /* den constant: x₀ = (1+|y|²)/den, x_s = 2y/den */
        S(hyp_acc2)(dy, 2.0 * G0 / den, y, 2.0 / den, dx + 1, n);
        return;
    }
    /* ∂x₀/∂y = 4y/den², ∂x_s/∂y: 2/den I + 4 y yᵀ/den² */
    double Gy = S(hyp_dot)(dx + 1, y, n);
    S(hyp_acc2)(dy, (4.0 * G0 + 4.0 * Gy) / (den * den), y, 2.0 / den, dx + 1, n);
}

void C(to_hyperboloid_batch)(T *X, const T *Y, int rows, int n)
{
    for (int r = 0; r < rows; r++)
        C(to_hyperboloid)(X + (size_t)r * ((size_t)n + 1), Y + (size_t)r * n, n);
}

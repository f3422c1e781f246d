/* hyp_consts.h — the only home of gyro's hyperbolic epsilons, clamps and clamped transcendental
 * helpers.
 *
 * Every number that keeps the hyperbolic math finite lives here (shared/DESIGN.md, "Math
 * conventions", after geoopt practice): the ball projection margin, the artanh/arcosh/tanh/
 * cosh clamps, the divide-by-norm floor, and the thresholds below which a removable
 * singularity is evaluated by its Taylor series. The helpers compute in double whatever the
 * storage precision of the caller, because every norm or dot product that feeds artanh,
 * arcosh or a division is accumulated in double.
 *
 * The "ratio" helpers return f(t) = g(t)/t for the functions g that have a removable
 * singularity at 0 (tanh, artanh, sinh, asinh), together with f'(t)/t, which is what a
 * vector-Jacobian product of v ↦ f(|v|) v needs:
 *     d/dv [f(|v|) v]ᵀ w = f(|v|) w + (f'(|v|)/|v|) <v,w> v.
 * Both are smooth at t = 0, so zero vectors get the limit value AND the right derivative.
 */
#ifndef GYRO_HYP_CONSTS_H
#define GYRO_HYP_CONSTS_H

#include <math.h>
#include <stddef.h>

/* ---- clamps (shared/DESIGN.md) ------------------------------------------------------------ */

/* Ball projection margin: points are projected to norm <= (1 - eps)/sqrt(c). */
#define GYRO_HYP_BALL_EPS_F32 4e-3
#define GYRO_HYP_BALL_EPS_F64 1e-5

/* artanh arguments are clamped to [-max, max]. The float32 value is the float nearest 1 - 1e-7
 * (1 - 2^-23), the float32 equivalent of the float64 clamp. */
#define GYRO_HYP_ARTANH_MAX_F64 (1.0 - 1e-7)
#define GYRO_HYP_ARTANH_MAX_F32 0.99999988079071044921875

/* Floor of every quantity that is divided by (a norm, a Möbius denominator, |⟨z,z⟩_L|); zero
 * vectors themselves never reach a division: they go through the ratio helpers below. */
#define GYRO_HYP_MIN_NORM 1e-15

/* tanh argument clamp (tanh(15) = 1 - 1.9e-13: beyond it the ball point would be projected). */
#define GYRO_HYP_TANH_MAX 15.0

/* cosh/sinh argument clamps: 85 keeps cosh finite in float32 (cosh(88.7) overflows); 700 keeps
 * it finite in float64. Used by the hyperboloid exponential map. */
#define GYRO_HYP_COSH_MAX_F32 85.0
#define GYRO_HYP_COSH_MAX_F64 700.0

/* arcosh arguments are clamped to >= 1 (arcosh(1 + e) is formed from e = a - 1, hyp_scalar.h);
 * the derivative 1/sqrt(a^2 - 1) uses a^2 - 1 >= this floor. */
#define GYRO_HYP_ARCOSH_MIN_SQ 1e-15

/* Hyperboloid RSGD: default clip of the Lorentz norm of the tangent step lr*|g|_L. */
#define GYRO_HYP_LORENTZ_MAX_STEP 1.0

/* HyboNet's Lorentz linear layer (models/layers/lorentz.h): |u|² of the space direction
 * u = W h(x) + b is floored here before u/|u| (HyboNet's own clamp; the layer is undefined at
 * u = 0). */
#define GYRO_HYP_LORENTZ_LINEAR_MIN_USQ 1e-8

/* Below this argument the ratio helpers switch to their Taylor series (error < 1e-18). */
#define GYRO_HYP_SERIES_T 1e-2

/* ---- clamped transcendental helpers (double) ---------------------------------------------- */

/* artanh(x) with x clamped to [-max, max]. */
static inline double gyro_hyp_artanh(double x, double max)
{
    if (x > max) x = max;
    if (x < -max) x = -max;
    return atanh(x);
}

/* tanh(x) with x clamped to [-GYRO_HYP_TANH_MAX, GYRO_HYP_TANH_MAX]. */
static inline double gyro_hyp_tanh(double x)
{
    if (x > GYRO_HYP_TANH_MAX) x = GYRO_HYP_TANH_MAX;
    if (x < -GYRO_HYP_TANH_MAX) x = -GYRO_HYP_TANH_MAX;
    return tanh(x);
}

/* f(t) = tanh(t)/t for t >= 0 (f(0) = 1); *dft = f'(t)/t (-> -2/3 at 0). dft may be NULL.
 * t is clamped to GYRO_HYP_TANH_MAX (then f = tanh(max)/t, f' from the unclamped t). */
static inline double gyro_hyp_tanhc(double t, double *dft)
{
    if (t < GYRO_HYP_SERIES_T) {
        double t2 = t * t;
        /* tanh(t)/t = 1 - t^2/3 + 2t^4/15 - 17t^6/315 + 62t^8/2835 */
        if (dft) *dft = -2.0 / 3.0 + t2 * (8.0 / 15.0 + t2 * (-102.0 / 315.0 + t2 * (496.0 / 2835.0)));
        return 1.0 + t2 * (-1.0 / 3.0 + t2 * (2.0 / 15.0 + t2 * (-17.0 / 315.0 + t2 * (62.0 / 2835.0))));
    }
    double th = gyro_hyp_tanh(t);
    double f = th / t;
    if (dft) {
        double sech2 = t > GYRO_HYP_TANH_MAX ? 0.0 : 1.0 - th * th;
        *dft = (sech2 - f) / (t * t);
    }
    return f;
}

/* f(t) = artanh(t)/t for 0 <= t (f(0) = 1), t clamped to max; *dft = f'(t)/t (-> 2/3 at 0).
 * dft may be NULL. At the clamp the derivative of the clamped function is used (artanh' = 0). */
static inline double gyro_hyp_artanhc(double t, double max, double *dft)
{
    if (t < GYRO_HYP_SERIES_T) {
        double t2 = t * t;
        /* artanh(t)/t = 1 + t^2/3 + t^4/5 + t^6/7 + t^8/9 */
        if (dft) *dft = 2.0 / 3.0 + t2 * (4.0 / 5.0 + t2 * (6.0 / 7.0 + t2 * (8.0 / 9.0)));
        return 1.0 + t2 * (1.0 / 3.0 + t2 * (1.0 / 5.0 + t2 * (1.0 / 7.0 + t2 * (1.0 / 9.0))));
    }
    double a = gyro_hyp_artanh(t, max);
    double f = a / t;
    if (dft) {
        double da = t >= max ? 0.0 : 1.0 / (1.0 - t * t);
        *dft = (da - f) / (t * t);
    }
    return f;
}

/* f(t) = sinh(t)/t for t >= 0 (f(0) = 1), t clamped to cmax; *dft = f'(t)/t (-> 1/3 at 0).
 * dft may be NULL. */
static inline double gyro_hyp_sinhc(double t, double cmax, double *dft)
{
    if (t < GYRO_HYP_SERIES_T) {
        double t2 = t * t;
        /* sinh(t)/t = 1 + t^2/6 + t^4/120 + t^6/5040 + t^8/362880 */
        if (dft) *dft = 1.0 / 3.0 + t2 * (1.0 / 30.0 + t2 * (1.0 / 840.0 + t2 * (1.0 / 45360.0)));
        return 1.0 + t2 * (1.0 / 6.0 + t2 * (1.0 / 120.0 + t2 * (1.0 / 5040.0 + t2 * (1.0 / 362880.0))));
    }
    double tc = t > cmax ? cmax : t;
    double f = sinh(tc) / t;
    if (dft) *dft = ((t > cmax ? 0.0 : cosh(tc)) - f) / (t * t);
    return f;
}

/* cosh(t) and sinh(t)/t for t ≥ 0 with t clamped to cmax, without cancellation near 0:
 * cosh t = 1 + 2 sinh²(t/2) = 1 + (t²/2)·sinhc(t/2)². (The fused skip-gram step of
 * lorentz_skipgram.h; both values from two sinhc calls.) */
static inline void gyro_hyp_cosh_sinhc(double t, double cmax, double *ch, double *shc)
{
    double h = gyro_hyp_sinhc(0.5 * t, 0.5 * cmax, NULL);
    *ch = 1.0 + 0.5 * t * t * h * h;
    *shc = gyro_hyp_sinhc(t, cmax, NULL);
}

/* f(t) = asinh(t)/t (f(0) = 1); *dft = f'(t)/t (-> -1/3 at 0). dft may be NULL. */
static inline double gyro_hyp_asinhc(double t, double *dft)
{
    double at = fabs(t);
    if (at < GYRO_HYP_SERIES_T) {
        double t2 = t * t;
        /* asinh(t)/t = 1 - t^2/6 + 3t^4/40 - 15t^6/336 + 105t^8/3456 */
        if (dft) *dft = -1.0 / 3.0 + t2 * (3.0 / 10.0 + t2 * (-90.0 / 336.0 + t2 * (840.0 / 3456.0)));
        return 1.0 + t2 * (-1.0 / 6.0 + t2 * (3.0 / 40.0 + t2 * (-15.0 / 336.0 + t2 * (105.0 / 3456.0))));
    }
    double f = asinh(t) / t;
    if (dft) *dft = (1.0 / sqrt(1.0 + t * t) - f) / (t * t);
    return f;
}

/* g(a) = arcosh(a)/sqrt(a^2 - 1) for a >= 1 (g(1) = 1); *dga = g'(a) (-> -1/3 at 1). dga may be
 * NULL. Used where the Lorentz log map is written with the on-manifold norm sqrt(a^2 - 1). */
static inline double gyro_hyp_arcoshc(double a, double *dga)
{
    double e = a - 1.0;
    if (e < GYRO_HYP_SERIES_T) {
        if (e < 0.0) e = 0.0;
        /* with a = 1 + e: g = 1 - e/3 + 2e^2/15 - 2e^3/35 + 8e^4/315 */
        if (dga) *dga = -1.0 / 3.0 + e * (4.0 / 15.0 + e * (-6.0 / 35.0 + e * (32.0 / 315.0)));
        return 1.0 + e * (-1.0 / 3.0 + e * (2.0 / 15.0 + e * (-2.0 / 35.0 + e * (8.0 / 315.0))));
    }
    double s = sqrt(a * a - 1.0);
    double g = acosh(a) / s;
    if (dga) *dga = (1.0 - a * g) / (s * s);
    return g;
}

#endif

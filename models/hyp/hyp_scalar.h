/* hyp_scalar.h — internal: precision-independent scalar algebra shared by the hyperbolic
 * kernels (not part of the public API).
 *
 * The ball ops are written so that no intermediate vector is ever stored: every output and
 * every vector-Jacobian product is a linear combination of the input vectors with scalar
 * coefficients that depend only on dot products. This header computes those coefficients in
 * double. Möbius addition is the building block (Ganea et al. 2018, eq. 3):
 *   z = x ⊕_c y = (A x + B y) / D,
 *   A = 1 + 2c<x,y> + c|y|²,  B = 1 − c|x|²,  D = 1 + 2c<x,y> + c²|x|²|y|².
 */
#ifndef GYRO_HYP_SCALAR_H
#define GYRO_HYP_SCALAR_H

#include "models/hyp/hyp_consts.h"

/* z = a x + b y for z = x ⊕_c y, from xx = |x|², yy = |y|², xy = <x,y>. D is floored at
 * GYRO_HYP_MIN_NORM (it is ≥ (1 − c|x||y|)² > 0 inside the ball). */
static inline void gyro_hyp_madd_coef(double c, double xx, double yy, double xy, double *a,
                                      double *b)
{
    double D = 1.0 + 2.0 * c * xy + c * c * xx * yy;
    if (D < GYRO_HYP_MIN_NORM) D = GYRO_HYP_MIN_NORM;
    *a = (1.0 + 2.0 * c * xy + c * yy) / D;
    *b = (1.0 - c * xx) / D;
}

/* Vector-Jacobian product of z = x ⊕_c y for an upstream gradient g, from the dot products and
 * gx = <g,x>, gy = <g,y>:
 *   dx = cx[0] g + cx[1] x + cx[2] y,   dy = cy[0] g + cy[1] x + cy[2] y.
 * Derivation: with N = A gx + B gy (so <g,z> = N/D), ∇ₓA = 2c y, ∇ₓB = −2c x,
 * ∇ₓD = 2c y + 2c²|y|² x, ∇ᵧA = 2c x + 2c y, ∇ᵧB = 0, ∇ᵧD = 2c x + 2c²|x|² y. */
static inline void gyro_hyp_madd_vjp(double c, double xx, double yy, double xy, double gx,
                                     double gy, double cx[3], double cy[3])
{
    double A = 1.0 + 2.0 * c * xy + c * yy;
    double B = 1.0 - c * xx;
    double D = 1.0 + 2.0 * c * xy + c * c * xx * yy;
    if (D < GYRO_HYP_MIN_NORM) D = GYRO_HYP_MIN_NORM;
    double N = A * gx + B * gy;
    double iD = 1.0 / D, ND2 = N * iD * iD;
    cx[0] = A * iD;
    cx[1] = -2.0 * c * gy * iD - 2.0 * c * c * yy * ND2;
    cx[2] = 2.0 * c * gx * iD - 2.0 * c * ND2;
    cy[0] = B * iD;
    cy[1] = 2.0 * c * gx * iD - 2.0 * c * ND2;
    cy[2] = 2.0 * c * gx * iD - 2.0 * c * c * xx * ND2;
}

/* Möbius matrix-vector scaling (Ganea 2018, eq. 6) written without removable singularities:
 * with s = √c|x|, H = artanh(s)/s, t = √c|Mx| H, G = tanh(t)/t,
 *   M ⊗ x = G H (Mx).
 * Given |x|² (xx), |Mx|² (uu) and <dy,Mx> (gu), fills the forward scale k = G H and the VJP
 * pieces dL/d(Mx) = p dy + q Mx and the direct part dL/dx = r x (through |x|). */
typedef struct gyro_hyp_matvec_coef {
    double k;      /* y = k Mx */
    double p, q;   /* dL/d(Mx) = p dy + q Mx */
    double r;      /* dL/dx (direct, through |x|) = r x */
} gyro_hyp_matvec_coef;

static inline void gyro_hyp_matvec_coef_fill(gyro_hyp_matvec_coef *o, double c, double xx,
                                             double uu, double gu, double artanh_max)
{
    double sc = sqrt(c);
    double s = sc * sqrt(xx);
    double Hp, Gp;
    double H = gyro_hyp_artanhc(s, artanh_max, &Hp); /* Hp = H'(s)/s */
    double t = sc * sqrt(uu) * H;
    double G = gyro_hyp_tanhc(t, &Gp);               /* Gp = G'(t)/t */
    o->k = G * H;
    o->p = G * H;
    /* ∂t/∂u = √c H u/|u| ⇒ H ∂G/∂u = H Gp t ∂t/∂u = c H³ Gp u */
    o->q = gu * c * H * H * H * Gp;
    /* ∂L/∂H = gu (G + H G'(t) √c|u|) = gu (G + Gp c|u|² H²);  ∂H/∂x = Hp c x */
    o->r = gu * (G + Gp * c * uu * H * H) * Hp * c;
}

/* Accurate a − 1 for a = −⟨x,y⟩_L with x₀, y₀ near 1 (points near the origin):
 *   x₀y₀ − 1 − Σxᵢyᵢ = (x₀−1)(y₀−1) + (x₀−1) + (y₀−1) − Σxᵢyᵢ
 * (x₀ − 1 is exact for x₀ in [0.5, 2]); sp = Σᵢ₌₁ xᵢyᵢ. */
static inline double gyro_hyp_lorentz_am1(double x0, double y0, double sp)
{
    double ex = x0 - 1.0, ey = y0 - 1.0;
    return ex * ey + ex + ey - sp;
}

/* arcosh(1 + e) for e ≥ 0 without cancellation: log1p(e + √(e(2+e))). */
static inline double gyro_hyp_arcosh1p(double e)
{
    if (e <= 0.0) return 0.0;
    return log1p(e + sqrt(e * (2.0 + e)));
}

/* −log σ(t) = log(1 + e^{−t}) without overflow. */
static inline double gyro_hyp_neg_log_sigmoid(double t)
{
    return t > 0.0 ? log1p(exp(-t)) : -t + log1p(exp(t));
}

/* −log σ(t) and σ(−t) (= −d/dt of it) from one exp: with e = exp(−|t|),
 * t ≥ 0: log1p(e) and e/(1+e);  t < 0: −t + log1p(e) and 1/(1+e). */
static inline double gyro_hyp_nls_sig(double t, double *sig_neg)
{
    double e = exp(-fabs(t));
    if (t >= 0.0) {
        *sig_neg = e / (1.0 + e);
        return log1p(e);
    }
    *sig_neg = 1.0 / (1.0 + e);
    return -t + log1p(e);
}

/* σ(t) = 1/(1 + e^{−t}) without overflow. */
static inline double gyro_hyp_sigmoid(double t)
{
    if (t >= 0.0) return 1.0 / (1.0 + exp(-t));
    double e = exp(t);
    return e / (1.0 + e);
}

/* Exponential map of the ball written as y = a x + bv v (Ganea 2018, Lemma 2):
 *   λ = 2/(1 − c|x|²),  t = √c λ |v| / 2,  f = tanh(t)/t,  u = k v with k = f λ/2,
 *   y = x ⊕ u.
 * From xx = |x|², vv = |v|², xv = <x,v>. */
static inline void gyro_hyp_expmap_coef(double c, double xx, double vv, double xv, double *a,
                                        double *bv)
{
    double m = 1.0 - c * xx;
    if (m < GYRO_HYP_MIN_NORM) m = GYRO_HYP_MIN_NORM;
    double lam = 2.0 / m;
    double t = sqrt(c) * lam * sqrt(vv) * 0.5;
    double k = gyro_hyp_tanhc(t, NULL) * lam * 0.5;
    double b;
    gyro_hyp_madd_coef(c, xx, k * k * vv, k * xv, a, &b);
    *bv = b * k;
}

/* VJP of y = exp_x(v) (ball) for an upstream gradient G, from xx, vv, xv and gx = <G,x>,
 * gv = <G,v>:  dx = cx[0] G + cx[1] x + cx[2] v,  dv = cv[0] G + cv[1] x + cv[2] v.
 * Chain: Möbius-addition VJP to (x, u), then u = k(x, v) v with
 *   ∂k/∂v = (λ/2) (f'(t)/t) (cλ²/4) v,  ∂k/∂λ = f/2 + (f'(t)/t) t²/2,  ∂λ/∂x = cλ² x. */
static inline void gyro_hyp_expmap_vjp(double c, double xx, double vv, double xv, double gx,
                                       double gv, double cx[3], double cv[3])
{
    double m = 1.0 - c * xx;
    if (m < GYRO_HYP_MIN_NORM) m = GYRO_HYP_MIN_NORM;
    double lam = 2.0 / m;
    double t = sqrt(c) * lam * sqrt(vv) * 0.5;
    double fp;
    double f = gyro_hyp_tanhc(t, &fp);
    double k = f * lam * 0.5;
    double mx[3], mu[3];
    gyro_hyp_madd_vjp(c, xx, k * k * vv, k * xv, gx, k * gv, mx, mu);
    /* du = mu0 G + mu1 x + mu2 u;  <du, v> */
    double duv = mu[0] * gv + mu[1] * xv + mu[2] * k * vv;
    double dk_dlam = 0.5 * f + 0.5 * fp * t * t;
    cx[0] = mx[0];
    cx[1] = mx[1] + duv * dk_dlam * c * lam * lam;
    cx[2] = mx[2] * k;
    cv[0] = k * mu[0];
    cv[1] = k * mu[1];
    cv[2] = k * mu[2] * k + duv * 0.5 * lam * fp * c * lam * lam * 0.25;
}

#endif

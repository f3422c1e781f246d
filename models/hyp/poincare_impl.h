/* poincare_impl.h — internal template: the one implementation of poincare.h, instantiated once
 * per precision by poincare.c (no include guard on purpose). The including file defines
 *   T           storage type (float or double)
 *   S(name)     per-precision name of a file-local helper
 *   P(name)     public name, gyro_poincare_<name>_f32 / _f64
 *   BALL_EPS    projection margin, ARTANH_MAX artanh clamp (hyp_consts.h)
 *
 * Every op is written as scalar coefficients (computed in double from dot products, see
 * hyp_scalar.h) times the input vectors, so no intermediate vector is stored, nothing is
 * allocated, and the final loops are plain a·x + b·y forms. Removable singularities go through
 * the ratio helpers of hyp_consts.h (tanh(t)/t, artanh(t)/t, asinh(t)/t) so zero vectors get the
 * limit value and the derivative of the smooth extension.
 */

#include "models/hyp/hyp_vec_impl.h"

/* 1 − c|x|² (= 2/λ_x), floored at 1 − ARTANH_MAX², its value at the artanh clamp: a point on or
 * beyond the boundary is treated as lying at the clamp radius, so λ stays finite (≤ ~1e7). */
static inline double S(omc)(double c, double xx)
{
    double m = 1.0 - c * xx, lo = (1.0 - ARTANH_MAX) * (1.0 + ARTANH_MAX);
    return m < lo ? lo : m;
}

/* d += k0 g + k1 a + k2 b + k3 u. */
static inline void S(acc4)(T *restrict d, double k0, const T *g, double k1, const T *a,
                           double k2, const T *b, double k3, const T *u, int n)
{
    T t0 = (T)k0, t1 = (T)k1, t2 = (T)k2, t3 = (T)k3;
    for (int i = 0; i < n; i++) d[i] += t0 * g[i] + t1 * a[i] + t2 * b[i] + t3 * u[i];
}

/* ---- Möbius addition ------------------------------------------------------------------------ */

void P(mobius_add)(T *z, const T *x, const T *y, T c, int n)
{
    double xx, yy, xy, a, b;
    S(hyp_dot3)(&xx, &yy, &xy, x, y, n);
    gyro_hyp_madd_coef(c, xx, yy, xy, &a, &b);
    S(hyp_axpby)(z, a, x, b, y, n);
}

void P(mobius_add_backward)(T *dx, T *dy, const T *dz, const T *x, const T *y, T c, int n)
{
    double xx, yy, xy, cx[3], cy[3];
    S(hyp_dot3)(&xx, &yy, &xy, x, y, n);
    double gx = S(hyp_dot)(dz, x, n), gy = S(hyp_dot)(dz, y, n);
    gyro_hyp_madd_vjp(c, xx, yy, xy, gx, gy, cx, cy);
    if (dx) S(hyp_acc3)(dx, cx, dz, x, y, n);
    if (dy) S(hyp_acc3)(dy, cy, dz, x, y, n);
}

void P(mobius_add_batch)(T *Z, const T *X, const T *Y, T c, int rows, int n)
{
    for (int r = 0; r < rows; r++) {
        size_t o = (size_t)r * (size_t)n;
        P(mobius_add)(Z + o, X + o, Y + o, c, n);
    }
}

void P(mobius_add_backward_batch)(T *dX, T *dY, const T *dZ, const T *X, const T *Y, T c,
                                  int rows, int n)
{
    for (int r = 0; r < rows; r++) {
        size_t o = (size_t)r * (size_t)n;
        P(mobius_add_backward)(dX ? dX + o : NULL, dY ? dY + o : NULL, dZ + o, X + o, Y + o, c,
                               n);
    }
}

/* ---- conformal factor ----------------------------------------------------------------------- */

T P(lambda_x)(const T *x, T c, int n)
{
    return (T)(2.0 / S(omc)(c, S(hyp_dot)(x, x, n)));
}

void P(lambda_x_backward)(T *dx, T dlambda, const T *x, T c, int n)
{
    double m = S(omc)(c, S(hyp_dot)(x, x, n));
    S(hyp_acc1)(dx, (double)dlambda * 4.0 * c / (m * m), x, n);
}

/* ---- exp/log at the origin -------------------------------------------------------------------- */
/* y = f(s) v with s = √c|v|; VJP: dv += f dy + c (f'(s)/s) <dy,v> v. */

void P(expmap0)(T *y, const T *v, T c, int n)
{
    double s = sqrt((double)c * S(hyp_dot)(v, v, n));
    S(hyp_scale)(y, gyro_hyp_tanhc(s, NULL), v, n);
}

void P(expmap0_backward)(T *dv, const T *dy, const T *v, T c, int n)
{
    double s = sqrt((double)c * S(hyp_dot)(v, v, n)), fp;
    double f = gyro_hyp_tanhc(s, &fp);
    double gv = S(hyp_dot)(dy, v, n);
    S(hyp_acc2)(dv, f, dy, (double)c * fp * gv, v, n);
}

void P(logmap0)(T *v, const T *y, T c, int n)
{
    double s = sqrt((double)c * S(hyp_dot)(y, y, n));
    S(hyp_scale)(v, gyro_hyp_artanhc(s, ARTANH_MAX, NULL), y, n);
}

void P(logmap0_backward)(T *dy, const T *dv, const T *y, T c, int n)
{
    double s = sqrt((double)c * S(hyp_dot)(y, y, n)), fp;
    double f = gyro_hyp_artanhc(s, ARTANH_MAX, &fp);
    double gy = S(hyp_dot)(dv, y, n);
    S(hyp_acc2)(dy, f, dv, (double)c * fp * gy, y, n);
}

void P(expmap0_batch)(T *Y, const T *V, T c, int rows, int n)
{
    for (int r = 0; r < rows; r++) {
        size_t o = (size_t)r * (size_t)n;
        P(expmap0)(Y + o, V + o, c, n);
    }
}

void P(expmap0_backward_batch)(T *dV, const T *dY, const T *V, T c, int rows, int n)
{
    for (int r = 0; r < rows; r++) {
        size_t o = (size_t)r * (size_t)n;
        P(expmap0_backward)(dV + o, dY + o, V + o, c, n);
    }
}

void P(logmap0_batch)(T *V, const T *Y, T c, int rows, int n)
{
    for (int r = 0; r < rows; r++) {
        size_t o = (size_t)r * (size_t)n;
        P(logmap0)(V + o, Y + o, c, n);
    }
}

void P(logmap0_backward_batch)(T *dY, const T *dV, const T *Y, T c, int rows, int n)
{
    for (int r = 0; r < rows; r++) {
        size_t o = (size_t)r * (size_t)n;
        P(logmap0_backward)(dY + o, dV + o, Y + o, c, n);
    }
}

/* ---- exp/log at x ----------------------------------------------------------------------------- */

void P(expmap)(T *y, const T *x, const T *v, T c, int n)
{
    double xx, vv, xv, a, bv;
    S(hyp_dot3)(&xx, &vv, &xv, x, v, n);
    gyro_hyp_expmap_coef(c, xx, vv, xv, &a, &bv);
    S(hyp_axpby)(y, a, x, bv, v, n);
}

void P(expmap_backward)(T *dx, T *dv, const T *dy, const T *x, const T *v, T c, int n)
{
    double xx, vv, xv, cx[3], cv[3];
    S(hyp_dot3)(&xx, &vv, &xv, x, v, n);
    double gx = S(hyp_dot)(dy, x, n), gv = S(hyp_dot)(dy, v, n);
    gyro_hyp_expmap_vjp(c, xx, vv, xv, gx, gv, cx, cv);
    if (dx) S(hyp_acc3)(dx, cx, dy, x, v, n);
    if (dv) S(hyp_acc3)(dv, cv, dy, x, v, n);
}

/* w = (−x) ⊕ y = wa x + wb y, and |w|², <w,x>, <w,y>, <g,w> summed from the explicit w_i (so a
 * small w near y = x keeps its relative accuracy). g may be NULL. */
static void S(logmap_w)(double *wa, double *wb, double *ww, double *wx, double *wy, double *gw,
                        double c, double xx, double yy, double xy, const T *x, const T *y,
                        const T *g, int n)
{
    double a, b, d[4];
    gyro_hyp_madd_coef(c, xx, yy, -xy, &a, &b);
    *wa = -a;
    *wb = b;
    S(hyp_comb_dots)(d, -a, x, b, y, g, n);
    *ww = d[0]; *wx = d[1]; *wy = d[2]; *gw = d[3];
}

void P(logmap)(T *v, const T *x, const T *y, T c, int n)
{
    double xx, yy, xy, wa, wb, ww, wx, wy, gw;
    S(hyp_dot3)(&xx, &yy, &xy, x, y, n);
    S(logmap_w)(&wa, &wb, &ww, &wx, &wy, &gw, c, xx, yy, xy, x, y, NULL, n);
    double m = S(omc)(c, xx); /* 2/λ_x */
    double h = gyro_hyp_artanhc(sqrt((double)c * ww), ARTANH_MAX, NULL);
    S(hyp_axpby)(v, m * h * wa, x, m * h * wb, y, n);
}

void P(logmap_backward)(T *dx, T *dy, const T *dv, const T *x, const T *y, T c, int n)
{
    double xx, yy, xy, wa, wb, ww, wx, wy, gw, hp, cX[3], cY[3];
    S(hyp_dot3)(&xx, &yy, &xy, x, y, n);
    S(logmap_w)(&wa, &wb, &ww, &wx, &wy, &gw, c, xx, yy, xy, x, y, dv, n);
    double gx = S(hyp_dot)(dv, x, n), gy = S(hyp_dot)(dv, y, n);
    double m = S(omc)(c, xx);
    double h = gyro_hyp_artanhc(sqrt((double)c * ww), ARTANH_MAX, &hp);
    /* v = m h(s) w: dL/dw = m h G + e w, e = m hp c <G,w>; direct dL/dx = −2c h <G,w> x */
    double e = m * hp * c * gw;
    double gwv_x = m * h * gx + e * wx, gwv_y = m * h * gy + e * wy;
    /* Möbius-addition VJP at (X' = −x, y): <gw, X'> = −<gw, x> */
    gyro_hyp_madd_vjp(c, xx, yy, -xy, -gwv_x, gwv_y, cX, cY);
    if (dx) {
        double k[3] = {-cX[0] * m * h, cX[1] - 2.0 * c * h * gw - cX[0] * e * wa,
                       -cX[2] - cX[0] * e * wb};
        S(hyp_acc3)(dx, k, dv, x, y, n);
    }
    if (dy) {
        double k[3] = {cY[0] * m * h, -cY[1] + cY[0] * e * wa, cY[2] + cY[0] * e * wb};
        S(hyp_acc3)(dy, k, dv, x, y, n);
    }
}

/* ---- distance --------------------------------------------------------------------------------- */

T P(dist)(const T *x, const T *y, T c, int n)
{
    double xx, yy, xy, wa, wb, ww, wx, wy, gw;
    S(hyp_dot3)(&xx, &yy, &xy, x, y, n);
    S(logmap_w)(&wa, &wb, &ww, &wx, &wy, &gw, c, xx, yy, xy, x, y, NULL, n);
    double sc = sqrt((double)c);
    return (T)(2.0 / sc * gyro_hyp_artanh(sc * sqrt(ww), ARTANH_MAX));
}

void P(dist_backward)(T *dx, T *dy, T dd, const T *x, const T *y, T c, int n)
{
    double xx, yy, xy, wa, wb, ww, wx, wy, gw, cX[3], cY[3];
    S(hyp_dot3)(&xx, &yy, &xy, x, y, n);
    S(logmap_w)(&wa, &wb, &ww, &wx, &wy, &gw, c, xx, yy, xy, x, y, NULL, n);
    double nw = sqrt(ww), s = sqrt((double)c) * nw;
    if (nw <= 0.0 || s >= ARTANH_MAX) return; /* kink at x = y; clamped artanh is flat */
    /* ∂d/∂w = 2/(1 − s²) w/|w| = β w */
    double beta = (double)dd * 2.0 / ((1.0 - s * s) * nw);
    gyro_hyp_madd_vjp(c, xx, yy, -xy, -beta * wx, beta * wy, cX, cY);
    if (dx) S(hyp_acc2)(dx, -cX[0] * beta * wa + cX[1], x, -cX[0] * beta * wb - cX[2], y, n);
    if (dy) S(hyp_acc2)(dy, cY[0] * beta * wa - cY[1], x, cY[0] * beta * wb + cY[2], y, n);
}

/* ---- Möbius scalar multiplication ------------------------------------------------------------ */
/* y = F(s) x, F(s) = tanh(r artanh(s))/s, s = √c|x|; F(0) = r. Returns F and *fp = F'(s)/s. */
static double S(mscalar_f)(double s, double r, double *fp)
{
    if (s < 1e-4) {
        /* F = r + (r − r³) s²/3 + O(s⁴) */
        *fp = 2.0 * (r - r * r * r) / 3.0;
        return r + (r - r * r * r) * s * s / 3.0;
    }
    double at = gyro_hyp_artanh(s, ARTANH_MAX);
    double u = r * at;
    double th = gyro_hyp_tanh(u);
    double F = th / s;
    double da = s >= ARTANH_MAX ? 0.0 : 1.0 / (1.0 - s * s);
    double sech2 = fabs(u) > GYRO_HYP_TANH_MAX ? 0.0 : 1.0 - th * th;
    *fp = (r * da * sech2 - F) / (s * s);
    return F;
}

void P(mobius_scalar)(T *y, const T *x, T r, T c, int n)
{
    double s = sqrt((double)c * S(hyp_dot)(x, x, n)), fp;
    S(hyp_scale)(y, S(mscalar_f)(s, r, &fp), x, n);
}

void P(mobius_scalar_backward)(T *dx, const T *dy, const T *x, T r, T c, int n)
{
    double s = sqrt((double)c * S(hyp_dot)(x, x, n)), fp;
    double F = S(mscalar_f)(s, r, &fp);
    double gx = S(hyp_dot)(dy, x, n);
    S(hyp_acc2)(dx, F, dy, (double)c * fp * gx, x, n);
}

/* ---- Möbius matrix-vector product ------------------------------------------------------------ */

void P(mobius_matvec_finish)(T *y, const T *mx, const T *x, T c, int m, int n)
{
    gyro_hyp_matvec_coef k;
    gyro_hyp_matvec_coef_fill(&k, c, S(hyp_dot)(x, x, n), S(hyp_dot)(mx, mx, m), 0.0, ARTANH_MAX);
    S(hyp_scale)(y, k.k, mx, m);
}

void P(mobius_matvec_finish_backward)(T *dmx, T *dx, const T *dy, const T *mx, const T *x, T c,
                                      int m, int n)
{
    gyro_hyp_matvec_coef k;
    gyro_hyp_matvec_coef_fill(&k, c, S(hyp_dot)(x, x, n), S(hyp_dot)(mx, mx, m),
                              S(hyp_dot)(dy, mx, m), ARTANH_MAX);
    if (dmx) S(hyp_acc2)(dmx, k.p, dy, k.q, mx, m);
    if (dx) S(hyp_acc1)(dx, k.r, x, n);
}

void P(mobius_matvec_finish_batch)(T *Y, const T *MX, const T *X, T c, int rows, int m, int n)
{
    for (int r = 0; r < rows; r++)
        P(mobius_matvec_finish)(Y + (size_t)r * m, MX + (size_t)r * m, X + (size_t)r * n, c, m,
                                n);
}

void P(mobius_matvec_finish_backward_batch)(T *dMX, T *dX, const T *dY, const T *MX, const T *X,
                                            T c, int rows, int m, int n)
{
    for (int r = 0; r < rows; r++)
        P(mobius_matvec_finish_backward)(dMX ? dMX + (size_t)r * m : NULL,
                                         dX ? dX + (size_t)r * n : NULL, dY + (size_t)r * m,
                                         MX + (size_t)r * m, X + (size_t)r * n, c, m, n);
}

void P(mobius_matvec)(T *y, const T *M, const T *x, T c, int m, int n)
{
    double uu = 0.0;
    for (int i = 0; i < m; i++) {
        double u = S(hyp_dot)(M + (size_t)i * n, x, n);
        uu += u * u;
        y[i] = (T)u;
    }
    gyro_hyp_matvec_coef k;
    gyro_hyp_matvec_coef_fill(&k, c, S(hyp_dot)(x, x, n), uu, 0.0, ARTANH_MAX);
    S(hyp_scale)(y, k.k, y, m);
}

void P(mobius_matvec_backward)(T *dM, T *dx, const T *dy, const T *M, const T *x, T c, int m,
                               int n)
{
    double uu = 0.0, gu = 0.0;
    for (int i = 0; i < m; i++) { /* pass 1: |Mx|² and <dy, Mx> */
        double u = S(hyp_dot)(M + (size_t)i * n, x, n);
        uu += u * u;
        gu += (double)dy[i] * u;
    }
    gyro_hyp_matvec_coef k;
    gyro_hyp_matvec_coef_fill(&k, c, S(hyp_dot)(x, x, n), uu, gu, ARTANH_MAX);
    for (int i = 0; i < m; i++) { /* pass 2: dL/d(Mx)_i, then dM_i and Mᵀ dmx */
        const T *Mi = M + (size_t)i * n;
        double dmx = k.p * (double)dy[i] + k.q * S(hyp_dot)(Mi, x, n);
        if (dM) S(hyp_acc1)(dM + (size_t)i * n, dmx, x, n);
        if (dx) S(hyp_acc1)(dx, dmx, Mi, n);
    }
    if (dx) S(hyp_acc1)(dx, k.r, x, n);
}

/* ---- parallel transport from the origin ------------------------------------------------------- */

void P(transp0)(T *u, const T *x, const T *v, T c, int n)
{
    S(hyp_scale)(u, 1.0 - (double)c * S(hyp_dot)(x, x, n), v, n);
}

void P(transp0_backward)(T *dx, T *dv, const T *du, const T *x, const T *v, T c, int n)
{
    if (dx) S(hyp_acc1)(dx, -2.0 * c * S(hyp_dot)(du, v, n), x, n);
    if (dv) S(hyp_acc1)(dv, 1.0 - (double)c * S(hyp_dot)(x, x, n), du, n);
}

/* ---- gyration (closed form) ------------------------------------------------------------------- */

void P(gyration)(T *g, const T *a, const T *b, const T *u, T c, int n)
{
    double aa, bb, ab;
    S(hyp_dot3)(&aa, &bb, &ab, a, b, n);
    double au = S(hyp_dot)(a, u, n), bu = S(hyp_dot)(b, u, n);
    double A = -c * au * bb + bu + 2.0 * c * ab * bu;
    double B = -c * bu * aa - au;
    double D = 1.0 + 2.0 * c * ab + (double)c * c * aa * bb;
    if (D < GYRO_HYP_MIN_NORM) D = GYRO_HYP_MIN_NORM;
    T ka = (T)(2.0 * c * A / D), kb = (T)(2.0 * c * B / D);
    for (int i = 0; i < n; i++) g[i] = u[i] + ka * a[i] + kb * b[i];
}

void P(gyration_backward)(T *da, T *db, T *du, const T *dg, const T *a, const T *b, const T *u,
                          T c, int n)
{
    double aa, bb, ab;
    S(hyp_dot3)(&aa, &bb, &ab, a, b, n);
    double au = S(hyp_dot)(a, u, n), bu = S(hyp_dot)(b, u, n);
    double Ga = S(hyp_dot)(dg, a, n), Gb = S(hyp_dot)(dg, b, n);
    double cc = c;
    double A = -cc * au * bb + bu + 2.0 * cc * ab * bu;
    double B = -cc * bu * aa - au;
    double D = 1.0 + 2.0 * cc * ab + cc * cc * aa * bb;
    if (D < GYRO_HYP_MIN_NORM) D = GYRO_HYP_MIN_NORM;
    double K = 2.0 * cc / D, N = A * Ga + B * Gb, KND = K * N / D;
    /* g = u + K (A a + B b); L = <G,u> + K (A Ga + B Gb) */
    if (du) /* ∇ᵤA = −c|b|² a + (1 + 2c<a,b>) b, ∇ᵤB = −c|a|² b − a */
        S(acc4)(du, 1.0, dg, K * (-cc * bb * Ga - Gb), a,
                K * (Ga * (1.0 + 2.0 * cc * ab) - cc * aa * Gb), b, 0.0, u, n);
    if (da) /* ∇ₐA = −c|b|² u + 2c<b,u> b, ∇ₐB = −2c<b,u> a − u, ∇ₐD = 2c b + 2c²|b|² a */
        S(acc4)(da, K * A, dg, K * Gb * (-2.0 * cc * bu) - KND * 2.0 * cc * cc * bb, a,
                K * Ga * 2.0 * cc * bu - KND * 2.0 * cc, b, K * (-cc * bb * Ga - Gb), u, n);
    if (db) /* ∇_bA = −2c<a,u> b + (1 + 2c<a,b>) u + 2c<b,u> a, ∇_bB = −c|a|² u,
               ∇_bD = 2c a + 2c²|a|² b */
        S(acc4)(db, K * B, dg, K * Ga * 2.0 * cc * bu - KND * 2.0 * cc, a,
                K * Ga * (-2.0 * cc * au) - KND * 2.0 * cc * cc * aa, b,
                K * (Ga * (1.0 + 2.0 * cc * ab) - Gb * cc * aa), u, n);
}

/* ---- hyperbolic MLR (Ganea 2018, eq. 25) ------------------------------------------------------ */
/* Per class, with z = (−p) ⊕ x = αp p + βx x, ω = 1 − c|z|², Λ = 2λ_p/ω,
 * arg = 2√c<z,a>/(ω|a|):  logit = λ_p|a|/√c · asinh(arg) = Λ <z,a> S(arg), S = asinh(t)/t. */
typedef struct S(mlr_state) {
    double pp, px, pa, xa, aa;  /* dot products */
    double ap, bx;              /* z = ap p + bx x */
    double za, omega, lamp, na, arg, Sv, Sp, Lam, logit;
} S(mlr_state);

static void S(mlr_class)(S(mlr_state) *st, const T *x, const T *p, const T *a, double xx,
                         double c, int n)
{
    double d5[5];
    S(hyp_dot5)(d5, p, x, a, n);
    double pp = d5[0], px = d5[1], pa = d5[2], xa = d5[3], aa = d5[4];
    double ma, mb;
    gyro_hyp_madd_coef(c, pp, xx, -px, &ma, &mb); /* z = ma (−p) + mb x */
    st->pp = pp; st->px = px; st->pa = pa; st->xa = xa; st->aa = aa;
    st->ap = -ma; st->bx = mb;
    double zz = st->ap * st->ap * pp + 2.0 * st->ap * st->bx * px + st->bx * st->bx * xx;
    st->za = st->ap * pa + st->bx * xa;
    st->omega = S(omc)(c, zz);
    st->lamp = 2.0 / S(omc)(c, pp);
    st->na = sqrt(aa);
    st->arg = st->na > 0.0 ? 2.0 * sqrt(c) * st->za / (st->omega * st->na) : 0.0;
    st->Sv = gyro_hyp_asinhc(st->arg, &st->Sp);
    st->Lam = 2.0 * st->lamp / st->omega;
    st->logit = st->Lam * st->za * st->Sv;
}

void P(hyp_mlr)(T *logits, const T *x, const T *P, const T *A, T c, int K, int n)
{
    double xx = S(hyp_dot)(x, x, n);
    for (int k = 0; k < K; k++) {
        S(mlr_state) st;
        S(mlr_class)(&st, x, P + (size_t)k * n, A + (size_t)k * n, xx, c, n);
        logits[k] = (T)st.logit;
    }
}

void P(hyp_mlr_backward)(T *dx, T *dP, T *dA, const T *dlogits, const T *x, const T *P,
                         const T *A, T c, int K, int n)
{
    double xx = S(hyp_dot)(x, x, n), cc = c, dx_x = 0.0;
    for (int k = 0; k < K; k++) {
        const T *p = P + (size_t)k * n, *a = A + (size_t)k * n;
        double gl = dlogits[k];
        if (gl == 0.0) continue;
        S(mlr_state) st;
        S(mlr_class)(&st, x, p, a, xx, cc, n);
        double isq = 1.0 / sqrt(1.0 + st.arg * st.arg);
        double L_za = gl * st.Lam * isq;
        double L_om = -gl * st.Lam * st.za / st.omega * isq;
        double L_na = st.na > 0.0 ? -gl * st.Lam * (st.za / st.na) * st.Sp * st.arg * st.arg : 0.0;
        double L_lp = gl * 2.0 * st.za * st.Sv / st.omega;
        /* dL/dz = L_za a − 2c L_om z = L_za a + zp p + zx x */
        double zp = -2.0 * cc * L_om * st.ap, zx = -2.0 * cc * L_om * st.bx;
        double gXp = -(L_za * st.pa + zp * st.pp + zx * st.px); /* <dz, −p> */
        double gY = L_za * st.xa + zp * st.px + zx * xx;        /* <dz, x> */
        double cX[3], cY[3];
        gyro_hyp_madd_vjp(cc, st.pp, xx, -st.px, gXp, gY, cX, cY);
        if (dP) {
            double k3[3] = {-cX[0] * L_za, -cX[0] * zp + cX[1] + L_lp * cc * st.lamp * st.lamp,
                            -cX[0] * zx - cX[2]};
            S(hyp_acc3)(dP + (size_t)k * n, k3, a, p, x, n);
        }
        if (dx) {
            S(hyp_acc2)(dx, cY[0] * L_za, a, cY[0] * zp - cY[1], p, n);
            dx_x += cY[0] * zx + cY[2];
        }
        if (dA) {
            double k3[3] = {st.na > 0.0 ? L_na / st.na : 0.0, L_za * st.ap, L_za * st.bx};
            S(hyp_acc3)(dA + (size_t)k * n, k3, a, p, x, n);
        }
    }
    if (dx) S(hyp_acc1)(dx, dx_x, x, n);
}

void P(hyp_mlr_batch)(T *logits, const T *X, const T *P, const T *A, T c, int rows, int K,
                      int n)
{
    for (int r = 0; r < rows; r++)
        P(hyp_mlr)(logits + (size_t)r * K, X + (size_t)r * n, P, A, c, K, n);
}

void P(hyp_mlr_backward_batch)(T *dX, T *dP, T *dA, const T *dlogits, const T *X, const T *P,
                               const T *A, T c, int rows, int K, int n)
{
    for (int r = 0; r < rows; r++)
        P(hyp_mlr_backward)(dX ? dX + (size_t)r * n : NULL, dP, dA, dlogits + (size_t)r * K,
                            X + (size_t)r * n, P, A, c, K, n);
}

/* ---- hyperbolic linear layer ------------------------------------------------------------------ */

void P(hyp_linear)(T *y, const T *M, const T *x, const T *b, T c, int m, int n)
{
    P(mobius_matvec)(y, M, x, c, m, n);
    P(mobius_add)(y, y, b, c, m);
}

void P(hyp_linear_backward)(T *dM, T *dx, T *db, const T *dy, const T *M, const T *x,
                            const T *b, T c, int m, int n)
{
    double uu = 0.0, ub = 0.0, gu = 0.0;
    for (int i = 0; i < m; i++) { /* pass 1: u = Mx dotted with itself, b and dy */
        double u = S(hyp_dot)(M + (size_t)i * n, x, n);
        uu += u * u;
        ub += u * (double)b[i];
        gu += u * (double)dy[i];
    }
    double xx = S(hyp_dot)(x, x, n), bb = S(hyp_dot)(b, b, m), gb = S(hyp_dot)(dy, b, m);
    gyro_hyp_matvec_coef k;
    gyro_hyp_matvec_coef_fill(&k, c, xx, uu, 0.0, ARTANH_MAX);
    double kk = k.k; /* h = M ⊗ x = kk u */
    double ch[3], cb[3];
    gyro_hyp_madd_vjp(c, kk * kk * uu, bb, kk * ub, kk * gu, gb, ch, cb);
    /* dh = ch0 g + ch1 kk u + ch2 b, then the matvec VJP with <dh, u> */
    double dhu = ch[0] * gu + ch[1] * kk * uu + ch[2] * ub;
    gyro_hyp_matvec_coef_fill(&k, c, xx, uu, dhu, ARTANH_MAX);
    double eg = k.p * ch[0], eu = k.p * ch[1] * kk + k.q, eb = k.p * ch[2];
    for (int i = 0; i < m; i++) { /* pass 2 */
        const T *Mi = M + (size_t)i * n;
        double u = S(hyp_dot)(Mi, x, n);
        double dmx = eg * (double)dy[i] + eu * u + eb * (double)b[i];
        if (dM) S(hyp_acc1)(dM + (size_t)i * n, dmx, x, n);
        if (dx) S(hyp_acc1)(dx, dmx, Mi, n);
        if (db) db[i] += (T)(cb[0] * (double)dy[i] + cb[1] * kk * u + cb[2] * (double)b[i]);
    }
    if (dx) S(hyp_acc1)(dx, k.r, x, n);
}

/* ---- projection ------------------------------------------------------------------------------- */

int P(project)(T *y, const T *x, T c, int n)
{
    double xx = S(hyp_dot)(x, x, n);
    if (!isfinite(xx)) {
        for (int i = 0; i < n; i++) y[i] = 0;
        return -1;
    }
    double nx = sqrt(xx), maxn = (1.0 - BALL_EPS) / sqrt((double)c);
    if (nx > maxn) {
        S(hyp_scale)(y, maxn / nx, x, n);
        return 1;
    }
    if (y != x)
        for (int i = 0; i < n; i++) y[i] = x[i];
    return 0;
}

void P(project_backward)(T *dx, const T *dy, const T *x, T c, int n)
{
    double xx = S(hyp_dot)(x, x, n);
    if (!isfinite(xx)) return;
    double nx = sqrt(xx), maxn = (1.0 - BALL_EPS) / sqrt((double)c);
    if (nx > maxn) { /* y = maxn x/|x|: dx += (maxn/|x|)(dy − <dy,x> x/|x|²) */
        double f = maxn / nx;
        S(hyp_acc2)(dx, f, dy, -f * S(hyp_dot)(dy, x, n) / xx, x, n);
    } else {
        S(hyp_acc1)(dx, 1.0, dy, n);
    }
}

int P(project_batch)(T *Y, const T *X, T c, int rows, int n)
{
    int changed = 0;
    for (int r = 0; r < rows; r++) {
        size_t o = (size_t)r * (size_t)n;
        if (P(project)(Y + o, X + o, c, n) != 0) changed++;
    }
    return changed;
}

/* ---- Riemannian gradient and SGD -------------------------------------------------------------- */

void P(egrad2rgrad)(T *rgrad, const T *x, const T *g, T c, int n)
{
    double m = 1.0 - (double)c * S(hyp_dot)(x, x, n);
    S(hyp_scale)(rgrad, m * m * 0.25, g, n);
}

void P(egrad2rgrad_backward)(T *dx, T *dg, const T *drgrad, const T *x, const T *g, T c, int n)
{
    double m = 1.0 - (double)c * S(hyp_dot)(x, x, n);
    if (dg) S(hyp_acc1)(dg, m * m * 0.25, drgrad, n);
    if (dx) S(hyp_acc1)(dx, -(double)c * m * S(hyp_dot)(drgrad, g, n), x, n);
}

void P(rsgd_step)(T *x_new, const T *x, const T *egrad, T c, T lr, int n)
{
    double xx, gg, xg, a, bv;
    S(hyp_dot3)(&xx, &gg, &xg, x, egrad, n);
    double m = 1.0 - (double)c * xx;
    double sig = -(double)lr * m * m * 0.25; /* v = sig · egrad */
    gyro_hyp_expmap_coef(c, xx, sig * sig * gg, sig * xg, &a, &bv);
    S(hyp_axpby)(x_new, a, x, bv * sig, egrad, n);
    P(project)(x_new, x_new, c, n);
}

void P(rsgd_step_backward)(T *dx, T *degrad, const T *dx_new, const T *x, const T *egrad, T c,
                           T lr, int n)
{
    double xx, gg, xg, cx[3], cv[3];
    S(hyp_dot3)(&xx, &gg, &xg, x, egrad, n);
    double G_x = S(hyp_dot)(dx_new, x, n), G_g = S(hyp_dot)(dx_new, egrad, n);
    double m = 1.0 - (double)c * xx;
    double sig = -(double)lr * m * m * 0.25;
    gyro_hyp_expmap_vjp(c, xx, sig * sig * gg, sig * xg, G_x, sig * G_g, cx, cv);
    /* dv = cv0 G + cv1 x + cv2 v (v = sig g); dsig/dx = lr c m x */
    double dv_g = cv[0] * G_g + cv[1] * xg + cv[2] * sig * gg;
    if (degrad) {
        double k[3] = {sig * cv[0], sig * cv[1], sig * sig * cv[2]};
        S(hyp_acc3)(degrad, k, dx_new, x, egrad, n);
    }
    if (dx) {
        double k[3] = {cx[0], cx[1] + dv_g * (double)lr * c * m, cx[2] * sig};
        S(hyp_acc3)(dx, k, dx_new, x, egrad, n);
    }
}

void P(rsgd_step_batch)(T *X_new, const T *X, const T *EGRAD, T c, T lr, int rows, int n)
{
    for (int r = 0; r < rows; r++) {
        size_t o = (size_t)r * (size_t)n;
        P(rsgd_step)(X_new + o, X + o, EGRAD + o, c, lr, n);
    }
}

/* ---- Einstein midpoint (HyperText §3.2) ------------------------------------------------------ */

/* u = Σ w λ x into `m` (n), returns s = Σ w (λ − 1). */
static double S(emid_sums)(T *m, const T *E, const int32_t *idx, const T *w, T c, int k, int n)
{
    double s = 0;
    for (int i = 0; i < n; i++) m[i] = 0;
    for (int j = 0; j < k; j++) {
        const T *x = E + (size_t)(idx ? idx[j] : j) * (size_t)n;
        double lam = 2.0 / S(omc)(c, S(hyp_dot)(x, x, n)), wj = w ? (double)w[j] : 1.0;
        S(hyp_acc1)(m, wj * lam, x, n);
        s += wj * (lam - 1.0);
    }
    return s;
}

void P(einstein_midpoint)(T *y, const T *E, const int32_t *idx, const T *w, T c, int k, int n)
{
    double s = S(emid_sums)(y, E, idx, w, c, k, n);
    S(hyp_scale)(y, 1.0 / s, y, n);                          /* m, the Klein midpoint */
    double q = sqrt(S(omc)(c, S(hyp_dot)(y, y, n)));
    S(hyp_scale)(y, 1.0 / (1.0 + q), y, n);
}

void P(einstein_midpoint_backward)(T *dX, const T *dy, const T *E, const int32_t *idx, const T *w,
                                   T c, int k, int n)
{
    T mbuf[512];
    T *m = n <= 512 ? mbuf : malloc((size_t)n * sizeof *m);
    if (!m) return;
    double s = S(emid_sums)(m, E, idx, w, c, k, n);
    S(hyp_scale)(m, 1.0 / s, m, n);
    double mm = S(hyp_dot)(m, m, n), q = sqrt(S(omc)(c, mm)), D = 1.0 + q;
    double my = S(hyp_dot)(m, dy, n);
    /* g_m = dy/D + c (m·dy)/(q D²) m;  g_u = g_m/s;  g_s = −(g_m·m)/s */
    double a = 1.0 / D, b = (double)c * my / (q * D * D);
    double gs = -(a * my + b * mm) / s;
    for (int j = 0; j < k; j++) {
        const T *x = E + (size_t)(idx ? idx[j] : j) * (size_t)n;
        double xx = S(hyp_dot)(x, x, n), lam = 2.0 / S(omc)(c, xx), wj = w ? (double)w[j] : 1.0;
        double xdy = S(hyp_dot)(x, dy, n), xm = S(hyp_dot)(x, m, n);
        double xgu = (a * xdy + b * xm) / s;                   /* x·g_u */
        double kx = wj * (double)c * lam * lam * (xgu + gs);
        double kg = wj * lam / s;                              /* times g_m = a dy + b m */
        S(hyp_acc2)(dX + (size_t)j * (size_t)n, kg * a, dy, kg * b, m, n);
        S(hyp_acc1)(dX + (size_t)j * (size_t)n, kx, x, n);
    }
    if (m != mbuf) free(m);
}

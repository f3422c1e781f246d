/* lorentz_impl.h — internal template: the one implementation of lorentz.h, instantiated once
 * per precision by lorentz.c (no include guard on purpose). The including file defines
 *   T           storage type (float or double)
 *   S(name)     per-precision name of a file-local helper
 *   L(name)     public name, gyro_lorentz_<name>_f32 / _f64
 *   COSH_MAX    cosh/sinh argument clamp (hyp_consts.h)
 *
 * Index 0 is time. Loops over the spatial part (i = 1..n) carry no sign and vectorize; the time
 * coordinate is handled on its own. Inner products accumulate in double. −⟨x,y⟩_L − 1 is formed
 * as (x₀−1)(y₀−1) + (x₀−1) + (y₀−1) − Σxᵢyᵢ so arcosh keeps its accuracy near the origin.
 */

#include "models/hyp/hyp_vec_impl.h"

/* ⟨x,y⟩_L in double. */
static inline double S(linner)(const T *x, const T *y, int n)
{
    return -(double)x[0] * (double)y[0] + S(hyp_dot)(x + 1, y + 1, n);
}

/* −⟨x,y⟩_L − 1, accurate near the origin. */
static inline double S(lam1)(const T *x, const T *y, int n)
{
    return gyro_hyp_lorentz_am1(x[0], y[0], S(hyp_dot)(x + 1, y + 1, n));
}

/* d += k · J y (J = diag(−1, 1, …, 1)). */
static inline void S(acc_J)(T *restrict d, double k, const T *y, int n)
{
    d[0] -= (T)(k * (double)y[0]);
    S(hyp_acc1)(d + 1, k, y + 1, n);
}

/* The cosh/sinh clamp for a step from x: COSH_MAX − log(max(1, |x₀|)), so that cosh(t)·x stays
 * representable even far from the origin (at least 1). */
static inline double S(cosh_max)(const T *x)
{
    double a = fabs((double)x[0]);
    double m = COSH_MAX - (a > 1.0 ? log(a) : 0.0);
    return m < 1.0 ? 1.0 : m;
}

/* x := origin (1, 0, …, 0). */
static inline void S(origin)(T *x, int n)
{
    x[0] = 1;
    for (int i = 1; i <= n; i++) x[i] = 0;
}

/* ---- inner product and distance ---------------------------------------------------------------- */

T L(inner)(const T *x, const T *y, int n)
{
    return (T)S(linner)(x, y, n);
}

void L(inner_backward)(T *dx, T *dy, T dinner, const T *x, const T *y, int n)
{
    if (dx) S(acc_J)(dx, dinner, y, n);
    if (dy) S(acc_J)(dy, dinner, x, n);
}

T L(dist)(const T *x, const T *y, int n)
{
    return (T)gyro_hyp_arcosh1p(S(lam1)(x, y, n));
}

void L(dist_backward)(T *dx, T *dy, T dd, const T *x, const T *y, int n)
{
    double e = S(lam1)(x, y, n);
    if (e < 0.0) return; /* arcosh clamped at 1: flat */
    double q = e * (2.0 + e);
    if (q < GYRO_HYP_ARCOSH_MIN_SQ) q = GYRO_HYP_ARCOSH_MIN_SQ;
    double k = -(double)dd / sqrt(q); /* ∂a/∂x = −J y */
    if (dx) S(acc_J)(dx, k, y, n);
    if (dy) S(acc_J)(dy, k, x, n);
}

/* ---- tangent projection and Riemannian gradient ----------------------------------------------- */

void L(proj_tangent)(T *u, const T *x, const T *v, int n)
{
    double xv = S(linner)(x, v, n);
    S(hyp_axpby)(u, 1.0, v, xv, x, n + 1);
}

void L(proj_tangent_backward)(T *dx, T *dv, const T *du, const T *x, const T *v, int n)
{
    double xv = S(linner)(x, v, n), Gx = S(hyp_dot)(du, x, n + 1);
    if (dv) { S(hyp_acc1)(dv, 1.0, du, n + 1); S(acc_J)(dv, Gx, x, n); }
    if (dx) { S(hyp_acc1)(dx, xv, du, n + 1); S(acc_J)(dx, Gx, v, n); }
}

/* rgrad = J g + ⟨x, J g⟩_L x = J g + <x,g> x (Euclidean <x,g>, since J² = I). */
void L(egrad2rgrad)(T *rgrad, const T *x, const T *g, int n)
{
    double xg = S(hyp_dot)(x, g, n + 1);
    rgrad[0] = (T)(-(double)g[0] + xg * (double)x[0]);
    S(hyp_axpby)(rgrad + 1, 1.0, g + 1, xg, x + 1, n);
}

void L(egrad2rgrad_backward)(T *dx, T *dg, const T *drgrad, const T *x, const T *g, int n)
{
    double xg = S(hyp_dot)(x, g, n + 1), Gx = S(hyp_dot)(drgrad, x, n + 1);
    if (dg) { S(acc_J)(dg, 1.0, drgrad, n); S(hyp_acc1)(dg, Gx, x, n + 1); }
    if (dx) S(hyp_acc2)(dx, xg, drgrad, Gx, g, n + 1);
}

/* ---- exponential and logarithmic maps ---------------------------------------------------------- */
/* y = cosh(|v|_L) x + sinhc(|v|_L) v, |v|_L = √max(⟨v,v⟩_L, 0). */

void L(expmap)(T *y, const T *x, const T *v, int n)
{
    double q = S(linner)(v, v, n), cm = S(cosh_max)(x);
    double nv = q > 0.0 ? sqrt(q) : 0.0;
    double ch = cosh(nv > cm ? cm : nv);
    double sh = gyro_hyp_sinhc(nv, cm, NULL);
    S(hyp_axpby)(y, ch, x, sh, v, n + 1);
}

void L(expmap_backward)(T *dx, T *dv, const T *dy, const T *x, const T *v, int n)
{
    double q = S(linner)(v, v, n), cm = S(cosh_max)(x);
    double nv = q > 0.0 ? sqrt(q) : 0.0, dft;
    double ch = cosh(nv > cm ? cm : nv);
    double sh = gyro_hyp_sinhc(nv, cm, &dft);
    if (dx) S(hyp_acc1)(dx, ch, dy, n + 1);
    if (dv) {
        S(hyp_acc1)(dv, sh, dy, n + 1);
        if (q > 0.0) { /* ∂|v|_L/∂v = J v/|v|_L; cosh' /|v| = sinhc (0 past the clamp) */
            double Gx = S(hyp_dot)(dy, x, n + 1), Gv = S(hyp_dot)(dy, v, n + 1);
            double kx = nv > cm ? 0.0 : sh;
            S(acc_J)(dv, kx * Gx + dft * Gv, v, n);
        }
    }
}

/* The log map as written: a = −⟨x,y⟩_L, z = y − a x, v = arcosh(a) z/√⟨z,z⟩_L. Returns the
 * ratio R = arcosh(a)/|z|_L and fills a, e = a − 1, q = ⟨z,z⟩_L. When |z|_L is below
 * GYRO_HYP_MIN_NORM (y = x) R is the on-manifold limit arcosh(a)/√(a²−1) → 1. */
static double S(logmap_ratio)(double *a, double *e, double *q, const T *x, const T *y, int n)
{
    *e = S(lam1)(x, y, n);
    *a = 1.0 + *e;
    double z0 = (double)y[0] - *a * (double)x[0], d[4];
    S(hyp_comb_dots)(d, -*a, x + 1, 1.0, y + 1, NULL, n); /* spatial |z_s|² */
    double qq = d[0] - z0 * z0;
    *q = qq;
    double A = gyro_hyp_arcosh1p(*e);
    if (qq > GYRO_HYP_MIN_NORM * GYRO_HYP_MIN_NORM) return A / sqrt(qq);
    return gyro_hyp_arcoshc(*a < 1.0 ? 1.0 : *a, NULL);
}

void L(logmap)(T *v, const T *x, const T *y, int n)
{
    double a, e, q;
    double R = S(logmap_ratio)(&a, &e, &q, x, y, n);
    S(hyp_axpby)(v, R, y, -R * a, x, n + 1);
}

void L(logmap_backward)(T *dx, T *dy, const T *dv, const T *x, const T *y, int n)
{
    double a, e, q;
    double R = S(logmap_ratio)(&a, &e, &q, x, y, n);
    /* <G,z>, <G,x>, ⟨z,x⟩_L */
    double Gz = 0.0, zxL = 0.0;
    for (int i = 0; i <= n; i++) {
        double zi = (double)y[i] - a * (double)x[i];
        Gz += (double)dv[i] * zi;
        zxL += (i == 0 ? -zi : zi) * (double)x[i];
    }
    double Gx = S(hyp_dot)(dv, x, n + 1);
    double kz = 0.0, La = 0.0;
    if (q > GYRO_HYP_MIN_NORM * GYRO_HYP_MIN_NORM) {
        /* dL/dz = R G − (R <G,z>/q) J z;  dL/da = A' <G,z>/|z|_L − <dL/dz, x> */
        kz = -R * Gz / q;
        double ee = e * (2.0 + e);
        if (ee < GYRO_HYP_ARCOSH_MIN_SQ) ee = GYRO_HYP_ARCOSH_MIN_SQ;
        double dA = e < 0.0 ? 0.0 : 1.0 / sqrt(ee);
        La = dA * Gz / sqrt(q) - (R * Gx + kz * zxL);
    }
    /* z = y − a x, ∂a/∂x = −J y, ∂a/∂y = −J x:
     *   dy += R G + kz J z − La J x,   dx += −a (R G + kz J z) − La J y */
    for (int i = 0; i <= n; i++) {
        double sgn = i == 0 ? -1.0 : 1.0;
        double zi = (double)y[i] - a * (double)x[i];
        double gz = R * (double)dv[i] + kz * sgn * zi;
        if (dy) dy[i] += (T)(gz - La * sgn * (double)x[i]);
        if (dx) dx[i] += (T)(-a * gz - La * sgn * (double)y[i]);
    }
}

/* ---- lift and re-projection ------------------------------------------------------------------- */

void L(lift)(T *x, const T *xs, int n)
{
    double ss = S(hyp_dot)(xs, xs, n);
    if (x + 1 != xs)
        for (int i = 0; i < n; i++) x[i + 1] = xs[i];
    x[0] = (T)sqrt(1.0 + ss);
}

void L(lift_backward)(T *dxs, const T *dx, const T *xs, int n)
{
    double x0 = sqrt(1.0 + S(hyp_dot)(xs, xs, n));
    for (int i = 0; i < n; i++) dxs[i] += (T)((double)dx[i + 1] + (double)dx[0] * xs[i] / x0);
}

int L(reproject)(T *x, int n)
{
    double ss = S(hyp_dot)(x + 1, x + 1, n);
    if (!isfinite(ss)) {
        S(origin)(x, n);
        return -1;
    }
    x[0] = (T)sqrt(1.0 + ss);
    return 0;
}

/* Residual r = |x_s|² − (x₀² − 1) absorbed by the spatial coordinates; in sweep p a coordinate
 * moves by at most B/2ᵖ, B = ε·x₀ (ε the machine epsilon of T: one to two ulps of x₀, the
 * resolution at which the point is stored), so by < 2B in all; a move is kept only if it
 * shrinks |r|. Large coordinates absorb the bulk (the capacity of the first sweep,
 * ≈ 2B·Σ|xᵢ| ≥ 2B·|x_s|, covers the initial |r| ≈ ulp(x₀)·x₀ once |x_s| is comparable to x₀),
 * the smaller ones the rest at their finer resolution. */
int L(reproject_rounded)(T *x, int n)
{
    if (L(reproject)(x, n)) return -1;
    const int is_f32 = sizeof(T) == sizeof(float);
    double x0 = (double)x[0], B = (is_f32 ? (double)FLT_EPSILON : DBL_EPSILON) * x0;
    double r = S(hyp_dot)(x + 1, x + 1, n) - (x0 * x0 - 1.0);
    for (int pass = 0; pass < 3 && r != 0.0; pass++, B *= 0.5) {
        for (int k = 1; k <= n && r != 0.0; k++) {
            double xk = (double)x[k], ak = fabs(xk), want = xk * xk - r;
            double m = want > 0.0 ? sqrt(want) : 0.0;
            if (m > ak + B) m = ak + B;
            if (m < ak - B) m = ak - B;
            if (m < 0.0) m = 0.0;
            T nk = (T)copysign(m, xk == 0.0 ? 1.0 : xk);
            if (fabs((double)nk - xk) > B) /* rounded past the bound: one step back */
                nk = is_f32 ? (T)nextafterf((float)nk, (float)xk) : (T)nextafter((double)nk, xk);
            double nr = r + (double)nk * (double)nk - xk * xk;
            if (fabs(nr) < fabs(r)) {
                x[k] = nk;
                r = nr;
            }
        }
    }
    return 0;
}

/* ---- Riemannian SGD ------------------------------------------------------------------------- */
/* Shared forward pieces: xg = <x,g>, rg = J g + xg x, s = −lr rg clipped to |s|_L ≤ max_step:
 * s = kr · rg; y = cosh(|s|_L) x + sinhc(|s|_L) s. */
typedef struct S(rsgd_state) {
    double xg, rr;       /* <x,g>, ⟨rg,rg⟩_L */
    double ns_raw;       /* |−lr rg|_L before clipping */
    int clipped;
    double kr;           /* s = kr rg */
    double ns;           /* |s|_L after clipping */
    double cm;           /* cosh/sinh clamp at x */
    double ch, sh, dft;  /* cosh(ns), sinh(ns)/ns, (sinhc)'(ns)/ns */
} S(rsgd_state);

static inline double S(rg_at)(const T *x, const T *g, double xg, int i)
{
    return (i == 0 ? -(double)g[0] : (double)g[i]) + xg * (double)x[i];
}

static void S(rsgd_prepare)(S(rsgd_state) *st, const T *x, const T *g, double lr,
                            double max_step, int n)
{
    st->xg = S(hyp_dot)(x, g, n + 1);
    double r0 = S(rg_at)(x, g, st->xg, 0), d[4];
    S(hyp_comb_dots)(d, st->xg, x + 1, 1.0, g + 1, NULL, n); /* spatial |rg_s|² */
    double rr = d[0] - r0 * r0;
    st->rr = rr;
    st->ns_raw = rr > 0.0 ? fabs(lr) * sqrt(rr) : 0.0;
    st->kr = -lr;
    st->clipped = max_step > 0.0 && st->ns_raw > max_step;
    if (st->clipped) st->kr *= max_step / st->ns_raw;
    st->ns = st->clipped ? max_step : st->ns_raw;
    st->cm = S(cosh_max)(x);
    st->ch = cosh(st->ns > st->cm ? st->cm : st->ns);
    st->sh = gyro_hyp_sinhc(st->ns, st->cm, &st->dft);
}

void L(rsgd_step)(T *x_new, const T *x, const T *egrad, T lr, T max_step, int n)
{
    S(rsgd_state) st;
    S(rsgd_prepare)(&st, x, egrad, lr, max_step, n);
    /* spatial y = ch x + k rg = (ch + k xg) x + k g (i ≥ 1); x_new may alias x. x₀ is then
     * recomputed from the STORED spatial coordinates, so ⟨x,x⟩_L = −1 up to one rounding of x₀. */
    double k = st.sh * st.kr;
    S(hyp_axpby)(x_new + 1, st.ch + k * st.xg, x + 1, k, egrad + 1, n);
    double ss = S(hyp_dot)(x_new + 1, x_new + 1, n);
    if (!isfinite(ss)) {
        S(origin)(x_new, n);
        return;
    }
    x_new[0] = (T)sqrt(1.0 + ss);
}

void L(rsgd_step_backward)(T *dx, T *degrad, const T *dx_new, const T *x, const T *egrad, T lr,
                           T max_step, int n)
{
    S(rsgd_state) st;
    S(rsgd_prepare)(&st, x, egrad, lr, max_step, n);
    double k = st.sh * st.kr;
    /* y_i = ch x_i + k rg_i (i ≥ 1); x_new0 = √(1 + |y_s|²) */
    double ss = 0.0;
    for (int i = 1; i <= n; i++) {
        double yi = st.ch * (double)x[i] + k * S(rg_at)(x, egrad, st.xg, i);
        ss += yi * yi;
    }
    double xn0 = sqrt(1.0 + ss);
    /* dy_i = G_i + G_0 y_i/xn0 (i ≥ 1), dy_0 = 0; then <dy,x>, <dy,s> */
    double G0 = dx_new[0], dyx = 0.0, dys = 0.0;
    for (int i = 1; i <= n; i++) {
        double rgi = S(rg_at)(x, egrad, st.xg, i);
        double yi = st.ch * (double)x[i] + k * rgi;
        double dyi = (double)dx_new[i] + G0 * yi / xn0;
        dyx += dyi * (double)x[i];
        dys += dyi * st.kr * rgi;
    }
    /* expmap VJP: dx_a = ch dy; ds = sh dy + kJ J s, kJ = sh<dy,x> + dft<dy,s> (if |s|_L > 0) */
    double kJ = 0.0;
    if (st.ns > 0.0) kJ = (st.ns > st.cm ? 0.0 : st.sh) * dyx + st.dft * dys;
    /* <ds, s_raw> for the clipping VJP, s_raw = −lr rg; (J s)_i = sgn_i kr rg_i */
    double ds_sraw = 0.0;
    if (st.clipped) {
        for (int i = 0; i <= n; i++) {
            double rgi = S(rg_at)(x, egrad, st.xg, i);
            double dyi = i == 0 ? 0.0 : (double)dx_new[i] + G0 * (st.ch * (double)x[i] + k * rgi) / xn0;
            double Js = (i == 0 ? -1.0 : 1.0) * st.kr * rgi;
            ds_sraw += (st.sh * dyi + kJ * Js) * (-(double)lr) * rgi;
        }
    }
    /* clip: s = (M/ns_raw) s_raw ⇒ ds_raw = (M/ns_raw) ds − (M <ds,s_raw>/ns_raw³) J s_raw;
     * drg = −lr ds_raw; then rg = J g + xg x: dg += J drg + <drg,x> x, dx += xg drg + <drg,x> g */
    double fclip = st.clipped ? st.kr / -(double)lr : 1.0; /* = M/ns_raw */
    double kclip = st.clipped ? fclip * ds_sraw / (st.ns_raw * st.ns_raw) : 0.0;
    double drg_x = 0.0;
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i <= n; i++) {
            double sgn = i == 0 ? -1.0 : 1.0;
            double rgi = S(rg_at)(x, egrad, st.xg, i);
            double yi = st.ch * (double)x[i] + k * rgi;
            double dyi = i == 0 ? 0.0 : (double)dx_new[i] + G0 * yi / xn0;
            double dsi = st.sh * dyi + kJ * sgn * st.kr * rgi;
            double dsraw = fclip * dsi - kclip * sgn * (-(double)lr) * rgi;
            double drg = -(double)lr * dsraw;
            if (pass == 0) {
                drg_x += drg * (double)x[i];
            } else {
                if (degrad) degrad[i] += (T)(sgn * drg + drg_x * (double)x[i]);
                if (dx) dx[i] += (T)(st.ch * dyi + st.xg * drg + drg_x * (double)egrad[i]);
            }
        }
    }
}

/* ---- skip-gram loss --------------------------------------------------------------------------- */

T L(skipgram_loss)(T *egrad_u, T *egrad_v, T *egrad_neg, const T *u, const T *v, const T *neg,
                   T theta, int k, int n)
{
    size_t d = (size_t)n + 1;
    double tp = S(linner)(u, v, n) + theta, sp, sj;
    double loss = gyro_hyp_nls_sig(tp, &sp);
    double gp = -sp; /* dL/dt for the positive pair: −σ(−t) */
    if (egrad_u) {
        for (size_t i = 0; i < d; i++) egrad_u[i] = 0;
        S(acc_J)(egrad_u, gp, v, n);
    }
    if (egrad_v) {
        for (size_t i = 0; i < d; i++) egrad_v[i] = 0;
        S(acc_J)(egrad_v, gp, u, n);
    }
    for (int j = 0; j < k; j++) {
        const T *nj = neg + (size_t)j * d;
        double tj = S(linner)(u, nj, n) + theta;
        loss += gyro_hyp_nls_sig(-tj, &sj); /* −log σ(−t), and σ(t) */
        double gj = sj;
        if (egrad_u) S(acc_J)(egrad_u, gj, nj, n);
        if (egrad_neg) {
            T *e = egrad_neg + (size_t)j * d;
            for (size_t i = 0; i < d; i++) e[i] = 0;
            S(acc_J)(e, gj, u, n);
        }
    }
    return (T)loss;
}

void L(skipgram_loss_backward)(T *du, T *dv, T *dneg, T dloss, const T *u, const T *v,
                               const T *neg, T theta, int k, int n)
{
    size_t d = (size_t)n + 1;
    double tp = S(linner)(u, v, n) + theta;
    double gp = -(double)dloss * gyro_hyp_sigmoid(-tp);
    if (du) S(acc_J)(du, gp, v, n);
    if (dv) S(acc_J)(dv, gp, u, n);
    for (int j = 0; j < k; j++) {
        const T *nj = neg + (size_t)j * d;
        double gj = (double)dloss * gyro_hyp_sigmoid(S(linner)(u, nj, n) + theta);
        if (du) S(acc_J)(du, gj, nj, n);
        if (dneg) S(acc_J)(dneg + (size_t)j * d, gj, u, n);
    }
}

T L(skipgram_term)(T *du, T *dw, const T *u, const T *w, int label, T theta, T scale, int n)
{
    double t = S(linner)(u, w, n) + theta;
    double loss, g;
    if (label) {
        loss = gyro_hyp_nls_sig(t, &g);
        g = -g;
    } else {
        loss = gyro_hyp_nls_sig(-t, &g);
    }
    g *= scale;
    if (du) S(acc_J)(du, g, w, n);
    if (dw) S(acc_J)(dw, g, u, n);
    return (T)loss;
}

/* ---- Lorentz linear layer and centroid --------------------------------------------------------- */

void L(linear)(T *y, const T *x, const T *W, int m, int n)
{
    size_t d = (size_t)n + 1;
    double ss = 0.0;
    for (int i = 0; i < m; i++) {
        double yi = S(hyp_dot)(W + (size_t)i * d, x, n + 1);
        y[i + 1] = (T)yi;
        ss += yi * yi;
    }
    y[0] = (T)sqrt(1.0 + ss);
}

void L(linear_backward)(T *dx, T *dW, const T *dy, const T *x, const T *W, int m, int n)
{
    size_t d = (size_t)n + 1;
    double ss = 0.0;
    for (int i = 0; i < m; i++) {
        double yi = S(hyp_dot)(W + (size_t)i * d, x, n + 1);
        ss += yi * yi;
    }
    double y0 = sqrt(1.0 + ss), G0 = dy[0];
    for (int i = 0; i < m; i++) {
        const T *Wi = W + (size_t)i * d;
        double yi = S(hyp_dot)(Wi, x, n + 1);
        double g = (double)dy[i + 1] + G0 * yi / y0;
        if (dW) S(hyp_acc1)(dW + (size_t)i * d, g, x, n + 1);
        if (dx) S(hyp_acc1)(dx, g, Wi, n + 1);
    }
}

/* z_i = Σⱼ νⱼ X[j][i] in double. */
static inline double S(centroid_z)(const T *X, const T *nu, int N, size_t d, int i)
{
    double z = 0.0;
    for (int j = 0; j < N; j++) z += (double)nu[j] * (double)X[(size_t)j * d + i];
    return z;
}

/* s = √|⟨z,z⟩_L| floored; returns s and the sign of ⟨z,z⟩_L in *sg. */
static double S(centroid_norm)(double *sg, double *Gz, const T *G, const T *X, const T *nu, int N,
                               int n)
{
    size_t d = (size_t)n + 1;
    double q = 0.0, gz = 0.0;
    for (int i = 0; i <= n; i++) {
        double zi = S(centroid_z)(X, nu, N, d, i);
        q += (i == 0 ? -zi : zi) * zi;
        if (G) gz += (double)G[i] * zi;
    }
    *sg = q < 0.0 ? -1.0 : 1.0;
    if (Gz) *Gz = gz;
    double aq = fabs(q);
    if (aq < GYRO_HYP_MIN_NORM * GYRO_HYP_MIN_NORM) aq = GYRO_HYP_MIN_NORM * GYRO_HYP_MIN_NORM;
    return sqrt(aq);
}

void L(centroid)(T *mu, const T *X, const T *nu, int N, int n)
{
    size_t d = (size_t)n + 1;
    double sg;
    double s = S(centroid_norm)(&sg, NULL, NULL, X, nu, N, n);
    for (int i = 0; i <= n; i++) mu[i] = (T)(S(centroid_z)(X, nu, N, d, i) / s);
}

void L(centroid_backward)(T *dX, T *dnu, const T *dmu, const T *X, const T *nu, int N, int n)
{
    size_t d = (size_t)n + 1;
    double sg, Gz;
    double s = S(centroid_norm)(&sg, &Gz, dmu, X, nu, N, n);
    /* μ = z/s, s = √|⟨z,z⟩_L|: dz = G/s − (<G,z>/s³) sign(⟨z,z⟩_L) J z */
    double kz = -Gz / (s * s * s) * sg;
    for (int i = 0; i <= n; i++) {
        double zi = S(centroid_z)(X, nu, N, d, i);
        double dz = (double)dmu[i] / s + kz * (i == 0 ? -zi : zi);
        for (int j = 0; j < N; j++) {
            if (dX) dX[(size_t)j * d + i] += (T)((double)nu[j] * dz);
            if (dnu) dnu[j] += (T)((double)X[(size_t)j * d + i] * dz);
        }
    }
}

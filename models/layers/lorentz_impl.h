/* lorentz_impl.h — internal template: the one implementation of models/layers/lorentz.h,
 * instantiated once per precision by lorentz.c (no include guard on purpose). The including
 * file defines
 *   T           storage type (float or double)
 *   S(name)     per-precision name of a file-local helper
 *   P(name)     public name, gyro_lorentz_<layer>_<verb>_f32 / _f64
 *
 * Index 0 of every point is time. Dot products, norms and sums that feed a square root, a
 * division or a softmax accumulate in double (hyp_vec_impl.h's loops, or plain double
 * accumulators); only the stored results are rounded to T. The formulas and paper sections are
 * in lorentz.h beside each prototype and repeated in short beside each kernel.
 */

#include "models/hyp/hyp_vec_impl.h"

/* ---- scalar helpers ------------------------------------------------------------------------ */

#ifndef LZ_SMALL
/* Points with fewer than LZ_SMALL spatial coordinates (attention heads, small models) keep their
 * per-query vectors (the centroid sum z, its gradient dz) in a stack buffer in double; wider
 * points take the buffer-free two-pass loops. Both give the same values up to the order of the
 * double sums. */
#define LZ_SMALL 64
#endif

/* σ(z) = 1/(1+e^(−z)) without overflow for either sign of z. */
static inline double S(lz_sigmoid)(double z)
{
    if (z >= 0.0) return 1.0 / (1.0 + exp(-z));
    double e = exp(z);
    return e / (1.0 + e);
}

/* ⟨a,b⟩_L in double. a, b: (n+1). */
static inline double S(lz_inner)(const T *a, const T *b, int n)
{
    return -(double)a[0] * (double)b[0] + S(hyp_dot)(a + 1, b + 1, n);
}

/* ============================================================================================ */
/* Lorentz linear layer (HyboNet §3.1, eq. (3) with φ of appendix C eq. (9)):
 *   u = W (mask ⊙ act(x)) + b + p_s,  y₀ = λσ(v·x + b_t) + ε,  y_s = √(y₀² − k) u/|u|,  k = −1/K. */

/* The time part of one row: z = v·x + b_t, σ(z), a = y₀ − √k = λσ + (ε − √k), and
 * r = √(y₀² − k) = √(a(a + 2√k)). */
typedef struct S(lz_time) {
    double z, sg, lam, a, y0, r;
} S(lz_time);

static inline S(lz_time) S(lz_time_of)(const T *xr, const T *v, const T *b_t, double lam,
                                       double eps, double sk, int d)
{
    S(lz_time) t;
    t.z = S(hyp_dot)(v, xr, d) + (double)b_t[0];
    t.sg = S(lz_sigmoid)(t.z);
    t.lam = lam; /* exp(log λ), once per call of the layer */
    t.a = t.lam * t.sg + (eps - sk);
    t.y0 = t.a + sk;
    t.r = sqrt(t.a * (t.a + 2.0 * sk));
    return t;
}

/* H = mask ⊙ act(x) (rows, n+1) into Hc, or x itself when there is neither. In T (the product
 * of two T values is exact in double, so rounding it from double would give the same T). */
static const T *S(lz_hin)(T *Hc, const T *x, const T *mask, int act, int rows, int d)
{
    if (!mask && act == GYRO_LORENTZ_ACT_NONE)
        return x;
    assert(Hc != NULL);
    const size_t nv = (size_t)rows * d;
    const int relu = act == GYRO_LORENTZ_ACT_RELU;
    if (mask && relu)
        for (size_t i = 0; i < nv; i++) Hc[i] = x[i] > 0 ? mask[i] * x[i] : (T)0;
    else if (mask)
        for (size_t i = 0; i < nv; i++) Hc[i] = mask[i] * x[i];
    else
        for (size_t i = 0; i < nv; i++) Hc[i] = x[i] > 0 ? x[i] : (T)0;
    return Hc;
}

/* Everything of hlinear after the product U = H Wᵀ (rows, m): u += b + p_s, the time part and
 * the scaled spatial part of y. vec: |u|² summed by the vector dot product hyp_dot (inference:
 * another summation order in double, so y may differ by a float32 rounding); 0: one sequential
 * sum (the training forward, whose backward re-forms the same sums). */
static void S(lz_hfinish)(T *y, T *U, const T *x, const T *Pb, const T *b, const T *v,
                          const T *b_t, const T *log_lambda, double eps, double sk, int rows,
                          int d, int m, int p_rows, int vec)
{
    const double lam = exp((double)log_lambda[0]);
    for (int r = 0; r < rows; r++) {
        const T *xr = x + (size_t)r * d;
        const T *pr = Pb ? Pb + (size_t)(r % p_rows) * (m + 1) : NULL;
        T *Ur = U + (size_t)r * m, *yr = y + (size_t)r * (m + 1);
        if (b && pr)
            for (int i = 0; i < m; i++)
                Ur[i] = (T)((double)Ur[i] + (double)b[i] + (double)pr[i + 1]);
        else if (b)
            for (int i = 0; i < m; i++) Ur[i] = (T)((double)Ur[i] + (double)b[i]);
        else if (pr)
            for (int i = 0; i < m; i++) Ur[i] = (T)((double)Ur[i] + (double)pr[i + 1]);
        /* |u|² of the stored u: y and the backward agree */
        double q = 0.0;
        if (vec)
            q = S(hyp_dot)(Ur, Ur, m);
        else
            for (int i = 0; i < m; i++) q += (double)Ur[i] * (double)Ur[i];
        S(lz_time) t = S(lz_time_of)(xr, v, b_t, lam, eps, sk, d);
        /* |y_s| from the STORED y₀: in float32 the rounding of y₀ (relative 2⁻²⁴) would otherwise
         * leave ⟨y,y⟩_L − 1/K ≈ 2y₀²·2⁻²⁴ (1.5e-5 at y₀ = 11); only the rounding of the y_s
         * coordinates remains, with random signs. In float64 y₀ is stored exactly. */
        yr[0] = (T)t.y0;
        double a = sizeof(T) < sizeof(double) ? (double)yr[0] - sk : t.a;
        double sc = sqrt(a * (a + 2.0 * sk)) /
                    sqrt(q > GYRO_HYP_LORENTZ_LINEAR_MIN_USQ ? q : GYRO_HYP_LORENTZ_LINEAR_MIN_USQ);
        for (int i = 0; i < m; i++) yr[i + 1] = (T)((double)Ur[i] * sc);
    }
}

void P(hlinear_forward)(T *y, T *U, T *Hc, const T *x, const T *mask, const T *Pb, const T *W,
                        const T *b, const T *v, const T *b_t, const T *log_lambda, double eps,
                        int act, double K, int rows, int n, int m, int p_rows)
{
    assert(K < 0.0 && rows >= 0 && n >= 0 && m >= 1 && (!Pb || p_rows >= 1));
    double sk = sqrt(-1.0 / K);
    assert(eps > sk);
    int d = n + 1;
    if (rows == 0) return;
    const T *Hm = S(lz_hin)(Hc, x, mask, act, rows, d);
    /* U = H Wᵀ (rows, m) through BLAS, then + b + p_s */
    GEMM(U, Hm, W, 0, 1, 1, 0, rows, m, d, d, d, m);
    S(lz_hfinish)(y, U, x, Pb, b, v, b_t, log_lambda, eps, sk, rows, d, m, p_rows, 0);
}

void P(hlinear_backward)(T *dx, T *dP, T *dW, T *db, T *dv, T *db_t, T *dlog_lambda, T *work,
                         const T *dy, const T *U, const T *Hc, const T *x, const T *mask,
                         const T *Pb, const T *W, const T *v, const T *b_t, const T *log_lambda,
                         double eps, int act, double K, int rows, int n, int m, int p_rows)
{
    assert(K < 0.0 && rows >= 0 && n >= 0 && m >= 1 && (!Pb || p_rows >= 1));
    double sk = sqrt(-1.0 / K);
    assert(eps > sk);
    int d = n + 1;
    if (rows == 0) return;
    int plain = !mask && act == GYRO_LORENTZ_ACT_NONE;
    assert(plain || Hc != NULL);
    assert(work != NULL || (!dx && !dW));
    T *dU = work; /* (rows, m): du, then dH (rows, n+1) after it */
    const double lam = exp((double)log_lambda[0]);
    double gbt = 0.0, glam = 0.0;
    for (int r = 0; r < rows; r++) {
        const T *xr = x + (size_t)r * d;
        const T *Ur = U + (size_t)r * m, *gr = dy + (size_t)r * (m + 1);
        double q = 0.0, gu = 0.0;
        for (int i = 0; i < m; i++) {
            q += (double)Ur[i] * (double)Ur[i];
            gu += (double)gr[i + 1] * (double)Ur[i];
        }
        int floored = !(q > GYRO_HYP_LORENTZ_LINEAR_MIN_USQ);
        double nu = sqrt(floored ? GYRO_HYP_LORENTZ_LINEAR_MIN_USQ : q);
        S(lz_time) t = S(lz_time_of)(xr, v, b_t, lam, eps, sk, d);
        /* ġ₀ = dy₀ + (dy_s·u/|u|)·dr/dy₀,  dr/dy₀ = y₀/r */
        double g0 = (double)gr[0] + gu / nu * (t.y0 / t.r);
        /* du_i = (r/|u|)(dy_i − (dy_s·u) u_i/|u|²)  (the projection drops when |u|² is floored) */
        double cu = t.r / nu, cp = floored ? 0.0 : gu / q;
        for (int i = 0; i < m; i++) {
            double du = cu * ((double)gr[i + 1] - cp * (double)Ur[i]);
            if (db) db[i] += (T)du;
            if (dP && Pb) dP[(size_t)(r % p_rows) * (m + 1) + i + 1] += (T)du;
            if (dU) dU[(size_t)r * m + i] = (T)du;
        }
        /* sigmoid path: dz = ġ₀ λ σ(z)σ(−z) */
        double dz = g0 * t.lam * t.sg * S(lz_sigmoid)(-t.z);
        glam += g0 * t.lam * t.sg;
        gbt += dz;
        if (dv) S(hyp_acc1)(dv, dz, xr, d);
        if (dx) S(hyp_acc1)(dx + (size_t)r * d, dz, v, d);
    }
    if (db_t) db_t[0] += (T)gbt;
    if (dlog_lambda) dlog_lambda[0] += (T)glam;
    /* dW += dUᵀ H;  dH = dU W, dx += dH ⊙ mask ⊙ act′(x) */
    const T *Hm = plain ? x : Hc;
    if (dW) GEMM(dW, dU, Hm, 1, 0, 1, 1, m, d, rows, m, d, d);
    if (dx && plain) GEMM(dx, dU, W, 0, 0, 1, 1, rows, d, m, m, d, d);
    if (dx && !plain) {
        T *dH = work + (size_t)rows * m;
        GEMM(dH, dU, W, 0, 0, 1, 0, rows, d, m, m, d, d);
        /* dx += dH ⊙ dh/dx, dh/dx = mask (1 without), 0 where ReLU cuts (x ≤ 0) */
        const size_t nv = (size_t)rows * d;
        const int relu = act == GYRO_LORENTZ_ACT_RELU;
        for (size_t i = 0; i < nv; i++) {
            T dh = relu && !(x[i] > 0) ? (T)0 : mask ? mask[i] : (T)1;
            dx[i] += dH[i] * dh;
        }
    }
}

/* ---- G Lorentz linear layers on the same rows (the per-head q / k / v projections) ----------- */

/* Everything of the group layer after the products U = x Wᵀ (rows, G·m) and Z = x Vtᵀ
 * (rows, G); vec as for lz_hfinish. */
static void S(lz_gfinish)(T *y, T *U, T *Z, const T *b, const T *tl, double eps, double sk,
                          int rows, int m, int G, int vec)
{
    const int gm = G * m;
    /* λ_g = exp(log λ_g) once per call, not once per row (LZ_SMALL layers at most on the stack,
     * the rest per row as before: the same value either way) */
    double lam[LZ_SMALL];
    const int gl = G < LZ_SMALL ? G : LZ_SMALL;
    for (int g = 0; g < gl; g++) lam[g] = exp((double)tl[2 * g + 1]);
    for (int r = 0; r < rows; r++) {
        T *Ur = U + (size_t)r * gm, *Zr = Z + (size_t)r * G;
        T *yr = y + (size_t)r * G * (m + 1);
        for (int g = 0; g < G; g++) {
            T *ug = Ur + (size_t)g * m, *yg = yr + (size_t)g * (m + 1);
            if (b)
                for (int i = 0; i < m; i++)
                    ug[i] = (T)((double)ug[i] + (double)b[(size_t)g * m + i]);
            double q = 0.0;
            if (vec)
                q = S(hyp_dot)(ug, ug, m);
            else
                for (int i = 0; i < m; i++) q += (double)ug[i] * (double)ug[i];
            Zr[g] = (T)((double)Zr[g] + (double)tl[2 * g]); /* z = v·x + b_t, cached */
            double sg = S(lz_sigmoid)((double)Zr[g]);
            double a = (g < gl ? lam[g] : exp((double)tl[2 * g + 1])) * sg + (eps - sk);
            yg[0] = (T)(a + sk);
            if (sizeof(T) < sizeof(double)) a = (double)yg[0] - sk; /* as hlinear: stored y₀ */
            double sc = sqrt(a * (a + 2.0 * sk)) /
                        sqrt(q > GYRO_HYP_LORENTZ_LINEAR_MIN_USQ ? q : GYRO_HYP_LORENTZ_LINEAR_MIN_USQ);
            for (int i = 0; i < m; i++) yg[i + 1] = (T)((double)ug[i] * sc);
        }
    }
}

void P(hlinear_group_forward)(T *y, T *U, T *Z, const T *x, const T *W, const T *b, const T *Vt,
                              const T *tl, double eps, double K, int rows, int n, int m, int G)
{
    assert(K < 0.0 && rows >= 0 && n >= 0 && m >= 1 && G >= 1);
    double sk = sqrt(-1.0 / K);
    assert(eps > sk);
    int d = n + 1, gm = G * m;
    if (rows == 0) return;
    /* U = x Wᵀ (rows, G·m), Z = x Vtᵀ (rows, G): every layer's products at once */
    GEMM(U, x, W, 0, 1, 1, 0, rows, gm, d, d, d, gm);
    GEMM(Z, x, Vt, 0, 1, 1, 0, rows, G, d, d, d, G);
    S(lz_gfinish)(y, U, Z, b, tl, eps, sk, rows, m, G, 0);
}

void P(hlinear_group_backward)(T *dx, T *dW, T *db, T *dVt, T *dtl, T *work, const T *dy,
                               const T *U, const T *Z, const T *x, const T *W, const T *Vt,
                               const T *tl, double eps, double K, int rows, int n, int m, int G)
{
    assert(K < 0.0 && rows >= 0 && n >= 0 && m >= 1 && G >= 1);
    double sk = sqrt(-1.0 / K);
    assert(eps > sk);
    assert(work != NULL || (!dx && !dW && !dVt));
    int d = n + 1, gm = G * m;
    if (rows == 0) return;
    T *dU = work, *dZ = work ? work + (size_t)rows * gm : NULL; /* (rows, G·m), (rows, G) */
    for (int g = 0; g < G; g++) {
        const double lam = exp((double)tl[2 * g + 1]);
        double gbt = 0.0, glam = 0.0;
        for (int r = 0; r < rows; r++) {
            const T *ug = U + (size_t)r * gm + (size_t)g * m;
            const T *gr = dy + (size_t)r * G * (m + 1) + (size_t)g * (m + 1);
            double q = 0.0, gu = 0.0;
            for (int i = 0; i < m; i++) {
                q += (double)ug[i] * (double)ug[i];
                gu += (double)gr[i + 1] * (double)ug[i];
            }
            int floored = !(q > GYRO_HYP_LORENTZ_LINEAR_MIN_USQ);
            double nu = sqrt(floored ? GYRO_HYP_LORENTZ_LINEAR_MIN_USQ : q);
            double z = (double)Z[(size_t)r * G + g], sg = S(lz_sigmoid)(z);
            double a = lam * sg + (eps - sk), y0 = a + sk, rr = sqrt(a * (a + 2.0 * sk));
            double g0 = (double)gr[0] + gu / nu * (y0 / rr);
            double cu = rr / nu, cp = floored ? 0.0 : gu / q;
            for (int i = 0; i < m; i++) {
                double du = cu * ((double)gr[i + 1] - cp * (double)ug[i]);
                if (db) db[(size_t)g * m + i] += (T)du;
                if (dU) dU[(size_t)r * gm + (size_t)g * m + i] = (T)du;
            }
            double dz = g0 * lam * sg * S(lz_sigmoid)(-z);
            glam += g0 * lam * sg;
            gbt += dz;
            if (dZ) dZ[(size_t)r * G + g] = (T)dz;
        }
        if (dtl) {
            dtl[2 * g] += (T)gbt;
            dtl[2 * g + 1] += (T)glam;
        }
    }
    /* dW += dUᵀ x, dVt += dZᵀ x;  dx += dU W + dZ Vt */
    if (dW) GEMM(dW, dU, x, 1, 0, 1, 1, gm, d, rows, gm, d, d);
    if (dVt) GEMM(dVt, dZ, x, 1, 0, 1, 1, G, d, rows, G, d, d);
    if (dx) {
        GEMM(dx, dU, W, 0, 0, 1, 1, rows, d, gm, gm, d, d);
        GEMM(dx, dZ, Vt, 0, 0, 1, 1, rows, d, G, G, d, d);
    }
}

/* ---- §3.3: residual and position encoding, both the bias-point mode of hlinear ------------- */

void P(residual_forward)(T *y, T *U, T *Hc, const T *o, const T *mask, const T *X, const T *W,
                         const T *b, const T *v, const T *b_t, const T *log_lambda, double eps,
                         int act, double K, int rows, int n, int m)
{
    assert(X != NULL);
    P(hlinear_forward)(y, U, Hc, o, mask, X, W, b, v, b_t, log_lambda, eps, act, K, rows, n, m,
                       rows > 0 ? rows : 1);
}

void P(residual_backward)(T *d_o, T *dX, T *dW, T *db, T *dv, T *db_t, T *dlog_lambda, T *work,
                          const T *dy, const T *U, const T *Hc, const T *o, const T *mask,
                          const T *X, const T *W, const T *v, const T *b_t, const T *log_lambda,
                          double eps, int act, double K, int rows, int n, int m)
{
    assert(X != NULL);
    P(hlinear_backward)(d_o, dX, dW, db, dv, db_t, dlog_lambda, work, dy, U, Hc, o, mask, X, W, v,
                        b_t, log_lambda, eps, act, K, rows, n, m, rows > 0 ? rows : 1);
}

void P(posenc_forward)(T *y, T *U, T *Hc, const T *x, const T *mask, const T *Ppos, const T *W,
                       const T *b, const T *v, const T *b_t, const T *log_lambda, double eps,
                       int act, double K, int B, int Tn, int n, int m)
{
    assert(Ppos != NULL && B >= 0 && Tn >= 1);
    P(hlinear_forward)(y, U, Hc, x, mask, Ppos, W, b, v, b_t, log_lambda, eps, act, K, B * Tn, n, m,
                       Tn);
}

void P(posenc_backward)(T *dx, T *dPpos, T *dW, T *db, T *dv, T *db_t, T *dlog_lambda, T *work,
                        const T *dy, const T *U, const T *Hc, const T *x, const T *mask,
                        const T *Ppos, const T *W, const T *v, const T *b_t,
                        const T *log_lambda, double eps, int act, double K, int B, int Tn, int n,
                        int m)
{
    assert(Ppos != NULL && B >= 0 && Tn >= 1);
    P(hlinear_backward)(dx, dPpos, dW, db, dv, db_t, dlog_lambda, work, dy, U, Hc, x, mask, Ppos,
                        W, v, b_t, log_lambda, eps, act, K, B * Tn, n, m, Tn);
}

/* ============================================================================================ */
/* The weighted Lorentz centroid of eq. (4) over rows with a stride, shared by mha and pool:
 *   z = Σ_j w_j X_j (w NULL: every w_j = 1),  mu = z/(√(−K)·s),  s = √|⟨z,z⟩_L| (floored at GYRO_HYP_MIN_NORM).
 * Returns sign(⟨z,z⟩_L)·s. X rows at X + j·stride, d = n+1 entries; w (N) with stride 1. z is
 * accumulated in double, one coordinate at a time (no scratch). */
static double S(lz_centroid)(T *mu, const T *X, size_t stride, const T *w, int N, int n,
                             double sK)
{
    if (n < LZ_SMALL) { /* one pass over the rows into z (double), then the scale */
        double z[LZ_SMALL] = {0.0};
        for (int j = 0; j < N; j++) {
            double wj = w ? (double)w[j] : 1.0;
            if (wj == 0.0) continue;
            const T *xj = X + (size_t)j * stride;
            for (int e = 0; e <= n; e++) z[e] += wj * (double)xj[e];
        }
        double qz = -z[0] * z[0];
        for (int e = 1; e <= n; e++) qz += z[e] * z[e];
        double sg = qz < 0.0 ? -1.0 : 1.0, aq = fabs(qz);
        if (aq < GYRO_HYP_MIN_NORM * GYRO_HYP_MIN_NORM) aq = GYRO_HYP_MIN_NORM * GYRO_HYP_MIN_NORM;
        double s = sqrt(aq), c = 1.0 / (sK * s);
        for (int e = 0; e <= n; e++) mu[e] = (T)(z[e] * c);
        return sg * s;
    }
    double qz = 0.0;
    for (int e = 0; e <= n; e++) {
        double ze = 0.0;
        for (int j = 0; j < N; j++) ze += (w ? (double)w[j] : 1.0) * (double)X[(size_t)j * stride + e];
        qz += e == 0 ? -ze * ze : ze * ze;
    }
    double sg = qz < 0.0 ? -1.0 : 1.0, aq = fabs(qz);
    if (aq < GYRO_HYP_MIN_NORM * GYRO_HYP_MIN_NORM) aq = GYRO_HYP_MIN_NORM * GYRO_HYP_MIN_NORM;
    double s = sqrt(aq), c = 1.0 / (sK * s);
    for (int e = 0; e <= n; e++) {
        double ze = 0.0;
        for (int j = 0; j < N; j++) ze += (w ? (double)w[j] : 1.0) * (double)X[(size_t)j * stride + e];
        mu[e] = (T)(ze * c);
    }
    return sg * s;
}

/* The coefficients of dz = c (G − κ J mu) for the centroid's VJP (lorentz.h):
 * c = 1/(√(−K) s), κ = sgn(⟨z,z⟩_L)(−K)(G·mu) (0 when s was floored: s is then constant). */
static inline void S(lz_centroid_dz)(double *c, double *kappa, const T *G, const T *mu, double Sz,
                                     int n, double K)
{
    double s = fabs(Sz);
    *c = 1.0 / (sqrt(-K) * s);
    if (s <= GYRO_HYP_MIN_NORM) {
        *kappa = 0.0;
        return;
    }
    *kappa = (Sz < 0.0 ? -1.0 : 1.0) * (-K) * S(hyp_dot)(G, mu, n + 1);
}

/* dz_e = c (G_e − κ (J mu)_e) */
static inline double S(lz_dz)(const T *G, const T *mu, double c, double kappa, int e)
{
    double jm = e == 0 ? -(double)mu[0] : (double)mu[e];
    return c * ((double)G[e] - kappa * jm);
}

/* The origin (√k, 0, …, 0): the output when no row has weight. */
static inline void S(lz_origin)(T *mu, int n, double K)
{
    mu[0] = (T)sqrt(-1.0 / K);
    for (int e = 1; e <= n; e++) mu[e] = 0;
}

/* ============================================================================================ */
/* Lorentz multi-head attention (HyboNet §3.2, eqs. (4)–(5)):
 *   ν_ij = softmax_j(2⟨q_i,k_j⟩_L/√n) over valid keys (= softmax(−d²_L/√n), the −2/K cancels),
 *   O_i = Centroid(ν_i·, V) = z_i/(√(−K)√|⟨z_i,z_i⟩_L|). */

void P(mha_forward)(T *O, T *A, T *Sz, const T *Q, const T *Kx, const T *V, const int *kmask,
                    double K, int B, int Tq, int Tk, int H, int nh)
{
    assert(K < 0.0 && B >= 0 && Tq >= 0 && Tk >= 1 && H >= 1 && nh >= 1);
    int d = nh + 1;
    size_t row = (size_t)H * d;
    double sK = sqrt(-K), scale = 2.0 / sqrt((double)nh);
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++)
            for (int i = 0; i < Tq; i++) {
                const T *q = Q + ((size_t)b * Tq + i) * row + (size_t)h * d;
                T *a = A + (((size_t)b * H + h) * Tq + i) * Tk;
                T *o = O + ((size_t)b * Tq + i) * row + (size_t)h * d;
                const int *km = kmask ? kmask + (size_t)b * Tk : NULL;
                /* max-subtracted softmax: pass 1 the max logit, pass 2 e^(l − max) into a and
                 * their sum in double, then a /= sum */
                T *sz = Sz + ((size_t)b * H + h) * Tq + i;
                double mx = -INFINITY;
                double lbuf[LZ_SMALL]; /* the logits of short rows, kept in double */
                const int keep = Tk <= LZ_SMALL;
                for (int j = 0; j < Tk; j++) {
                    if (km && !km[j]) continue;
                    double l = scale * S(lz_inner)(q, Kx + ((size_t)b * Tk + j) * row + (size_t)h * d, nh);
                    if (keep) lbuf[j] = l;
                    if (l > mx) mx = l;
                }
                if (mx == -INFINITY) { /* no valid key */
                    for (int j = 0; j < Tk; j++) a[j] = 0;
                    S(lz_origin)(o, nh, K);
                    *sz = 0;
                    continue;
                }
                double sum = 0.0;
                for (int j = 0; j < Tk; j++) {
                    if (km && !km[j]) {
                        a[j] = 0;
                        continue;
                    }
                    double l = keep ? lbuf[j]
                                    : scale * S(lz_inner)(q, Kx + ((size_t)b * Tk + j) * row + (size_t)h * d, nh);
                    double e = exp(l - mx);
                    sum += e;
                    a[j] = (T)e;
                }
                const double inv = 1.0 / sum;
                for (int j = 0; j < Tk; j++) a[j] = (T)((double)a[j] * inv);
                *sz = (T)S(lz_centroid)(o, V + (size_t)b * Tk * row + (size_t)h * d, row, a, Tk,
                                        nh, sK);
            }
}

void P(mha_backward)(T *dQ, T *dKx, T *dV, const T *dO, const T *O, const T *A, const T *Sz,
                     const T *Q, const T *Kx, const T *V, const int *kmask, double K, int B,
                     int Tq, int Tk, int H, int nh)
{
    assert(K < 0.0 && B >= 0 && Tq >= 0 && Tk >= 1 && H >= 1 && nh >= 1);
    int d = nh + 1;
    size_t row = (size_t)H * d;
    double scale = 2.0 / sqrt((double)nh);
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++)
            for (int i = 0; i < Tq; i++) {
                size_t qo = ((size_t)b * Tq + i) * row + (size_t)h * d;
                const T *q = Q + qo, *o = O + qo, *G = dO + qo;
                const T *a = A + (((size_t)b * H + h) * Tq + i) * Tk;
                double sz = (double)Sz[((size_t)b * H + h) * Tq + i];
                if (sz == 0.0) continue; /* no valid key: constant output */
                const int *km = kmask ? kmask + (size_t)b * Tk : NULL;
                double c, kappa;
                S(lz_centroid_dz)(&c, &kappa, G, o, sz, nh, K);
                if (nh < LZ_SMALL) {
                    /* dz = c (G − κ J o) once; dν_ij = v_j·dz; Σ_l ν_il dν_il as below */
                    double dzv[LZ_SMALL], dnb[LZ_SMALL];
                    for (int e = 0; e < d; e++) dzv[e] = S(lz_dz)(G, o, c, kappa, e);
                    double adot = 0.0;
                    for (int j = 0; j < Tk; j++) {
                        if ((km && !km[j]) || a[j] == 0) continue;
                        const T *vj = V + ((size_t)b * Tk + j) * row + (size_t)h * d;
                        double dn = 0.0;
                        for (int e = 0; e < d; e++) dn += (double)vj[e] * dzv[e];
                        if (j < LZ_SMALL) dnb[j] = dn;
                        adot += (double)a[j] * dn;
                    }
                    for (int j = 0; j < Tk; j++) {
                        if ((km && !km[j]) || a[j] == 0) continue;
                        size_t ko = ((size_t)b * Tk + j) * row + (size_t)h * d;
                        const T *vj = V + ko, *kj = Kx + ko;
                        double aj = (double)a[j], dn;
                        if (j < LZ_SMALL) {
                            dn = dnb[j];
                        } else {
                            dn = 0.0;
                            for (int e = 0; e < d; e++) dn += (double)vj[e] * dzv[e];
                        }
                        if (dV)
                            for (int e = 0; e < d; e++) dV[ko + e] += (T)(aj * dzv[e]);
                        double dl = aj * (dn - adot) * scale;
                        if (dQ) {
                            dQ[qo] -= (T)(dl * (double)kj[0]);
                            S(hyp_acc1)(dQ + qo + 1, dl, kj + 1, nh);
                        }
                        if (dKx) {
                            dKx[ko] -= (T)(dl * (double)q[0]);
                            S(hyp_acc1)(dKx + ko + 1, dl, q + 1, nh);
                        }
                    }
                    continue;
                }
                /* dν_ij = v_j·dz = c (v_j·G − κ ⟨v_j, mu⟩_L);  Σ_l ν_il dν_il = z·dz is 0 in exact
                 * arithmetic (the centroid is homogeneous of degree 0 in ν) unless |⟨z,z⟩_L| was
                 * floored; it is kept so the softmax VJP holds in both cases. */
                double adot = 0.0;
                for (int j = 0; j < Tk; j++) {
                    if ((km && !km[j]) || a[j] == 0) continue;
                    const T *vj = V + ((size_t)b * Tk + j) * row + (size_t)h * d;
                    double dn = c * (S(hyp_dot)(vj, G, d) - kappa * S(lz_inner)(vj, o, nh));
                    adot += (double)a[j] * dn;
                }
                for (int j = 0; j < Tk; j++) {
                    if ((km && !km[j]) || a[j] == 0) continue;
                    size_t ko = ((size_t)b * Tk + j) * row + (size_t)h * d;
                    const T *vj = V + ko, *kj = Kx + ko;
                    double aj = (double)a[j];
                    if (dV)
                        for (int e = 0; e < d; e++) dV[ko + e] += (T)(aj * S(lz_dz)(G, o, c, kappa, e));
                    double dn = c * (S(hyp_dot)(vj, G, d) - kappa * S(lz_inner)(vj, o, nh));
                    double dl = aj * (dn - adot) * scale;
                    /* l = scale ⟨q,k⟩_L: dq += dl J k, dk += dl J q */
                    if (dQ) {
                        dQ[qo] -= (T)(dl * (double)kj[0]);
                        S(hyp_acc1)(dQ + qo + 1, dl, kj + 1, nh);
                    }
                    if (dKx) {
                        dKx[ko] -= (T)(dl * (double)q[0]);
                        S(hyp_acc1)(dKx + ko + 1, dl, q + 1, nh);
                    }
                }
            }
}

/* ============================================================================================ */
/* Centroid pooling (HyboNet eq. (4)): mu_b = Σ_t w_bt X_bt / (√(−K)√|⟨z,z⟩_L|). */

void P(pool_forward)(T *mu, T *Sz, const T *X, const T *w, double K, int B, int Tn, int n)
{
    assert(K < 0.0 && B >= 0 && Tn >= 1 && n >= 1);
    size_t d = (size_t)n + 1;
    double sK = sqrt(-K);
    for (int b = 0; b < B; b++) {
        const T *Xb = X + (size_t)b * Tn * d;
        T *mb = mu + (size_t)b * d;
        const T *wb = w ? w + (size_t)b * Tn : NULL;
        int any = !wb;
        for (int t = 0; wb && t < Tn; t++) any |= wb[t] > 0;
        if (!any) {
            S(lz_origin)(mb, n, K);
            Sz[b] = 0;
            continue;
        }
        Sz[b] = (T)S(lz_centroid)(mb, Xb, d, wb, Tn, n, sK);
    }
}

void P(pool_backward)(T *dX, T *dw, const T *dmu, const T *mu, const T *Sz, const T *X,
                      const T *w, double K, int B, int Tn, int n)
{
    assert(K < 0.0 && B >= 0 && Tn >= 1 && n >= 1);
    size_t d = (size_t)n + 1;
    for (int b = 0; b < B; b++) {
        double sz = (double)Sz[b];
        if (sz == 0.0) continue;
        const T *G = dmu + (size_t)b * d, *mb = mu + (size_t)b * d;
        double c, kappa;
        S(lz_centroid_dz)(&c, &kappa, G, mb, sz, n, K);
        for (int t = 0; t < Tn; t++) {
            double wt = w ? (double)w[(size_t)b * Tn + t] : 1.0;
            const T *xt = X + ((size_t)b * Tn + t) * d;
            T *dxt = dX ? dX + ((size_t)b * Tn + t) * d : NULL;
            double dwt = 0.0;
            for (size_t e = 0; e < d; e++) {
                double dz = S(lz_dz)(G, mb, c, kappa, (int)e);
                if (dxt && wt != 0.0) dxt[e] += (T)(wt * dz);
                dwt += (double)xt[e] * dz;
            }
            if (dw) dw[(size_t)b * Tn + t] += (T)dwt;
        }
    }
}

/* ============================================================================================ */
/* Classification head: logit_bc = −d²_L(x_b, p_c) + β_c = −2/K + 2⟨x_b,p_c⟩_L + β_c. */

void P(head_forward)(T *logits, const T *X, const T *Pc, const T *beta, double K, int B, int C,
                     int n)
{
    assert(K < 0.0 && B >= 0 && C >= 1 && n >= 1);
    size_t d = (size_t)n + 1;
    for (int b = 0; b < B; b++)
        for (int c = 0; c < C; c++) {
            double l = -2.0 / K + 2.0 * S(lz_inner)(X + (size_t)b * d, Pc + (size_t)c * d, n);
            if (beta) l += (double)beta[c];
            logits[(size_t)b * C + c] = (T)l;
        }
}

void P(head_backward)(T *dX, T *dP, T *dbeta, const T *dlogits, const T *X, const T *Pc, double K,
                      int B, int C, int n)
{
    assert(K < 0.0 && B >= 0 && C >= 1 && n >= 1);
    size_t d = (size_t)n + 1;
    for (int b = 0; b < B; b++)
        for (int c = 0; c < C; c++) {
            double g = (double)dlogits[(size_t)b * C + c];
            if (dbeta) dbeta[c] += (T)g;
            const T *x = X + (size_t)b * d, *p = Pc + (size_t)c * d;
            if (dX) {
                dX[(size_t)b * d] -= (T)(2.0 * g * (double)p[0]);
                S(hyp_acc1)(dX + (size_t)b * d + 1, 2.0 * g, p + 1, n);
            }
            if (dP) {
                dP[(size_t)c * d] -= (T)(2.0 * g * (double)x[0]);
                S(hyp_acc1)(dP + (size_t)c * d + 1, 2.0 * g, x + 1, n);
            }
        }
}

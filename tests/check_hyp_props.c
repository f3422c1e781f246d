/* check_hyp_props.c — Check suite: geometric properties of models/hyp/ in the style of geoopt's
 * tests, on random inputs (fixed seeds), plus robustness on extreme inputs.
 *
 *   - Möbius gyrogroup: left cancellation (−x)⊕(x⊕y) = y; gyrocommutativity
 *     x⊕y = gyr[x,y](y⊕x); left gyroassociativity x⊕(y⊕u) = (x⊕y)⊕gyr[x,y]u; gyr[x,y] is an
 *     isometry (preserves norms and inner products).
 *   - Möbius scalar: (r+s)⊗x = (r⊗x)⊕(s⊗x), r⊗(s⊗x) = (rs)⊗x; matvec: (MN)⊗x = M⊗(N⊗x), and
 *     the split finish(Mx, x) equals mobius_matvec(M, x).
 *   - exp∘log and log∘exp round trips at any base point, in the ball and on the hyperboloid;
 *     d(x,y) = λ_x|log_x y| in the ball and d(x,y) = |log_x y|_L on the hyperboloid.
 *   - the distance is equal across the two models (to_hyperboloid is an isometry) and the
 *     conversions invert each other.
 *   - the skip-gram loss equals the sum of its terms (values and gradients).
 *   - the float32 batched forms (and the forms the golden file has no case for: matvec finish,
 *     projection inside RSGD, clipped Lorentz RSGD, skip-gram terms) agree with float64 to 2e-5.
 *   - 10⁶ RSGD steps on the hyperboloid in float32 keep |⟨x,x⟩_L + 1| < 1e-5; RSGD in the ball
 *     keeps every float32 point inside √c|x| ≤ 1 − ε.
 *   - extreme but finite inputs give finite outputs and gradients: ball points anywhere in the
 *     closed ball (the boundary itself included) in float64 and anywhere in the float32 ball
 *     (√c|x| ≤ 1 − 4e-3, what gyro_poincare_project_f32 guarantees) in float32, tangent vectors
 *     from 0 to 1e15, hyperboloid points up to x₀ ~ 1e6 (float64) / 1e3 (float32); points
 *     outside the ball are projected and reported; non-finite ones reset.
 */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/core/rng.h"
#include "models/hyp/convert.h"
#include "models/hyp/hyp_consts.h"
#include "models/hyp/hyp_scalar.h"
#include "models/hyp/lorentz.h"
#include "models/hyp/lorentz_skipgram.h"
#include "models/hyp/poincare.h"

#define NMAX 32
#define TRIALS 200

static const double g_cs[3] = {1.0, 0.5, 2.0};
static const int g_ns[4] = {2, 3, 8, 16};

static void rnd_ball(double *x, int n, double c, double radius, gyro_rng *r)
{
    double nx = 0.0;
    for (int i = 0; i < n; i++) { x[i] = gyro_rng_normal(r); nx += x[i] * x[i]; }
    double target = radius * gyro_rng_uniform(r) / sqrt(c);
    for (int i = 0; i < n; i++) x[i] *= target / sqrt(nx);
}

static void rnd_vec(double *x, int n, double scale, gyro_rng *r)
{
    for (int i = 0; i < n; i++) x[i] = scale * gyro_rng_normal(r);
}

static void rnd_hyp(double *x, int n, double scale, gyro_rng *r)
{
    rnd_vec(x + 1, n, scale, r);
    gyro_lorentz_reproject_f64(x, n);
}

/* max_i |a_i − b_i| / max(1, max_i |b_i|) */
static double rel_err(const double *a, const double *b, int n)
{
    double d = 0.0, s = 1.0;
    for (int i = 0; i < n; i++) {
        if (fabs(a[i] - b[i]) > d) d = fabs(a[i] - b[i]);
        if (fabs(b[i]) > s) s = fabs(b[i]);
    }
    return d / s;
}

static double dot(const double *a, const double *b, int n)
{
    double s = 0.0;
    for (int i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}

static void neg(double *y, const double *x, int n)
{
    for (int i = 0; i < n; i++) y[i] = -x[i];
}

/* ---- gyrogroup -------------------------------------------------------------------------------- */

START_TEST(test_left_cancellation)
{
    gyro_rng r;
    gyro_rng_seed(&r, 1);
    double worst = 0.0;
    for (int t = 0; t < TRIALS; t++) {
        double c = g_cs[t % 3];
        int n = g_ns[t % 4];
        double x[NMAX], y[NMAX], xy[NMAX], mx[NMAX], back[NMAX];
        rnd_ball(x, n, c, 0.99, &r);
        rnd_ball(y, n, c, 0.99, &r);
        gyro_poincare_mobius_add_f64(xy, x, y, c, n);
        neg(mx, x, n);
        gyro_poincare_mobius_add_f64(back, mx, xy, c, n);
        double e = rel_err(back, y, n);
        if (e > worst) worst = e;
        ck_assert_msg(e < 1e-10, "left cancellation error %g (c=%g n=%d)", e, c, n);
    }
}
END_TEST

START_TEST(test_gyration_identities)
{
    gyro_rng r;
    gyro_rng_seed(&r, 2);
    for (int t = 0; t < TRIALS; t++) {
        double c = g_cs[t % 3];
        int n = g_ns[t % 4];
        double a[NMAX], b[NMAX], u[NMAX], w[NMAX], g[NMAX], h[NMAX], ab[NMAX], ba[NMAX], tmp[NMAX],
            lhs[NMAX], rhs[NMAX];
        rnd_ball(a, n, c, 0.95, &r);
        rnd_ball(b, n, c, 0.95, &r);
        rnd_ball(u, n, c, 0.95, &r);
        rnd_vec(w, n, 1.0, &r);
        /* gyrocommutativity: a⊕b = gyr[a,b](b⊕a) */
        gyro_poincare_mobius_add_f64(ab, a, b, c, n);
        gyro_poincare_mobius_add_f64(ba, b, a, c, n);
        gyro_poincare_gyration_f64(g, a, b, ba, c, n);
        ck_assert_msg(rel_err(g, ab, n) < 1e-10, "gyrocommutativity (c=%g n=%d)", c, n);
        /* left gyroassociativity: a⊕(b⊕u) = (a⊕b)⊕gyr[a,b]u */
        gyro_poincare_mobius_add_f64(tmp, b, u, c, n);
        gyro_poincare_mobius_add_f64(lhs, a, tmp, c, n);
        gyro_poincare_gyration_f64(g, a, b, u, c, n);
        gyro_poincare_mobius_add_f64(rhs, ab, g, c, n);
        ck_assert_msg(rel_err(lhs, rhs, n) < 1e-10, "left gyroassociativity (c=%g n=%d)", c, n);
        /* the closed form equals the composition (−(a⊕b))⊕(a⊕(b⊕u)) */
        double mab[NMAX];
        neg(mab, ab, n);
        gyro_poincare_mobius_add_f64(rhs, mab, lhs, c, n);
        ck_assert_msg(rel_err(g, rhs, n) < 1e-8, "closed form vs composition (c=%g n=%d)", c, n);
        /* isometry: |gyr u| = |u|, <gyr u, gyr w> = <u, w> */
        gyro_poincare_gyration_f64(h, a, b, w, c, n);
        ck_assert(fabs(sqrt(dot(g, g, n)) - sqrt(dot(u, u, n))) < 1e-12);
        ck_assert(fabs(dot(g, h, n) - dot(u, w, n)) < 1e-11 * (1.0 + fabs(dot(u, w, n))));
    }
}
END_TEST

START_TEST(test_scalar_and_matvec)
{
    gyro_rng r;
    gyro_rng_seed(&r, 3);
    for (int t = 0; t < TRIALS; t++) {
        double c = g_cs[t % 3];
        int n = g_ns[t % 4];
        double x[NMAX], a[NMAX], b[NMAX], s1[NMAX], s2[NMAX];
        rnd_ball(x, n, c, 0.9, &r);
        double rr = 2.0 * gyro_rng_uniform(&r) - 0.5, ss = 2.0 * gyro_rng_uniform(&r) - 0.5;
        /* (r+s)⊗x = (r⊗x)⊕(s⊗x) */
        gyro_poincare_mobius_scalar_f64(a, x, rr, c, n);
        gyro_poincare_mobius_scalar_f64(b, x, ss, c, n);
        gyro_poincare_mobius_add_f64(s1, a, b, c, n);
        gyro_poincare_mobius_scalar_f64(s2, x, rr + ss, c, n);
        ck_assert_msg(rel_err(s1, s2, n) < 1e-9, "scalar distributivity (c=%g n=%d)", c, n);
        /* r⊗(s⊗x) = (rs)⊗x */
        gyro_poincare_mobius_scalar_f64(s1, b, rr, c, n);
        gyro_poincare_mobius_scalar_f64(s2, x, rr * ss, c, n);
        ck_assert_msg(rel_err(s1, s2, n) < 1e-9, "scalar associativity (c=%g n=%d)", c, n);
        /* (MN)⊗x = M⊗(N⊗x); M (m, k), N (k, n) */
        int m = 1 + (int)gyro_rng_below(&r, 8), k = 1 + (int)gyro_rng_below(&r, 8);
        double M[8 * 8], N[8 * NMAX], MN[8 * NMAX], nx[8], lhs[8], rhs[8], mx[8];
        rnd_vec(M, m * k, 0.5, &r);
        rnd_vec(N, k * n, 0.5, &r);
        for (int i = 0; i < m; i++)
            for (int j = 0; j < n; j++) {
                double acc = 0.0;
                for (int l = 0; l < k; l++) acc += M[i * k + l] * N[l * n + j];
                MN[i * n + j] = acc;
            }
        gyro_poincare_mobius_matvec_f64(nx, N, x, c, k, n);
        gyro_poincare_mobius_matvec_f64(lhs, M, nx, c, m, k);
        gyro_poincare_mobius_matvec_f64(rhs, MN, x, c, m, n);
        ck_assert_msg(rel_err(lhs, rhs, m) < 1e-9, "matvec associativity (c=%g n=%d)", c, n);
        /* finish(Mx, x) = M⊗x */
        for (int i = 0; i < m; i++) mx[i] = dot(MN + i * n, x, n);
        gyro_poincare_mobius_matvec_finish_f64(lhs, mx, x, c, m, n);
        ck_assert(rel_err(lhs, rhs, m) < 1e-12);
    }
}
END_TEST

/* ---- exp/log and distances -------------------------------------------------------------------- */

START_TEST(test_ball_exp_log)
{
    gyro_rng r;
    gyro_rng_seed(&r, 4);
    for (int t = 0; t < TRIALS; t++) {
        double c = g_cs[t % 3];
        int n = g_ns[t % 4];
        double x[NMAX], y[NMAX], v[NMAX], z[NMAX], w[NMAX];
        rnd_ball(x, n, c, 0.9, &r);
        rnd_ball(y, n, c, 0.9, &r);
        /* exp_x(log_x(y)) = y */
        gyro_poincare_logmap_f64(v, x, y, c, n);
        gyro_poincare_expmap_f64(z, x, v, c, n);
        ck_assert_msg(rel_err(z, y, n) < 1e-10, "exp_x∘log_x (c=%g n=%d)", c, n);
        /* d(x,y) = λ_x |log_x y| */
        double d = gyro_poincare_dist_f64(x, y, c, n);
        double lam = gyro_poincare_lambda_x_f64(x, c, n);
        ck_assert_msg(fabs(d - lam * sqrt(dot(v, v, n))) < 1e-10 * (1.0 + d), "dist vs log (c=%g)", c);
        /* symmetric */
        ck_assert(fabs(d - gyro_poincare_dist_f64(y, x, c, n)) < 1e-10 * (1.0 + d));
        /* log_x(exp_x(v)) = v for a moderate tangent vector */
        rnd_vec(w, n, 0.3, &r);
        gyro_poincare_expmap_f64(z, x, w, c, n);
        gyro_poincare_logmap_f64(v, x, z, c, n);
        ck_assert_msg(rel_err(v, w, n) < 1e-8, "log_x∘exp_x (c=%g n=%d)", c, n);
        /* at the origin: logmap0∘expmap0 and expmap(0, v) = expmap0(v) */
        gyro_poincare_expmap0_f64(z, w, c, n);
        gyro_poincare_logmap0_f64(v, z, c, n);
        ck_assert(rel_err(v, w, n) < 1e-12);
        double o[NMAX] = {0}, z2[NMAX];
        gyro_poincare_expmap_f64(z2, o, w, c, n);
        gyro_poincare_expmap0_f64(z, w, c, n);
        /* exp_0 with λ_0 = 2: tanh(√c|w|) w/(√c|w|) both ways */
        ck_assert(rel_err(z2, z, n) < 1e-12);
    }
}
END_TEST

START_TEST(test_lorentz_exp_log)
{
    gyro_rng r;
    gyro_rng_seed(&r, 5);
    for (int t = 0; t < TRIALS; t++) {
        int n = g_ns[t % 4];
        double x[NMAX + 1], y[NMAX + 1], v[NMAX + 1], z[NMAX + 1], g[NMAX + 1], w[NMAX + 1];
        rnd_hyp(x, n, 1.0, &r);
        rnd_hyp(y, n, 1.0, &r);
        gyro_lorentz_logmap_f64(v, x, y, n);
        /* log is tangent at x */
        ck_assert(fabs(gyro_lorentz_inner_f64(x, v, n)) < 1e-10);
        gyro_lorentz_expmap_f64(z, x, v, n);
        ck_assert_msg(rel_err(z, y, n + 1) < 1e-9, "lorentz exp∘log (n=%d)", n);
        double d = gyro_lorentz_dist_f64(x, y, n);
        ck_assert(fabs(d - sqrt(gyro_lorentz_inner_f64(v, v, n))) < 1e-9 * (1.0 + d));
        /* log∘exp for a tangent vector */
        rnd_vec(g, n + 1, 0.7, &r);
        gyro_lorentz_proj_tangent_f64(w, x, g, n);
        gyro_lorentz_expmap_f64(z, x, w, n);
        ck_assert(fabs(gyro_lorentz_inner_f64(z, z, n) + 1.0) < 1e-10 * z[0] * z[0]);
        gyro_lorentz_logmap_f64(v, x, z, n);
        ck_assert_msg(rel_err(v, w, n + 1) < 1e-8, "lorentz log∘exp (n=%d)", n);
        /* the Riemannian gradient is tangent */
        gyro_lorentz_egrad2rgrad_f64(w, x, g, n);
        ck_assert(fabs(gyro_lorentz_inner_f64(x, w, n)) < 1e-10 * (1.0 + x[0] * x[0]));
    }
}
END_TEST

START_TEST(test_cross_model)
{
    gyro_rng r;
    gyro_rng_seed(&r, 6);
    for (int t = 0; t < TRIALS; t++) {
        int n = g_ns[t % 4];
        double y1[NMAX], y2[NMAX], x1[NMAX + 1], x2[NMAX + 1], back[NMAX], mu[NMAX + 1];
        rnd_ball(y1, n, 1.0, 0.99, &r);
        rnd_ball(y2, n, 1.0, 0.99, &r);
        gyro_hyp_to_hyperboloid_f64(x1, y1, n);
        gyro_hyp_to_hyperboloid_f64(x2, y2, n);
        ck_assert(fabs(gyro_lorentz_inner_f64(x1, x1, n) + 1.0) < 1e-12 * x1[0] * x1[0]);
        double db = gyro_poincare_dist_f64(y1, y2, 1.0, n), dl = gyro_lorentz_dist_f64(x1, x2, n);
        ck_assert_msg(fabs(db - dl) < 1e-10 * (1.0 + db), "d_ball %.17g d_lorentz %.17g", db, dl);
        gyro_hyp_to_poincare_f64(back, x1, n);
        ck_assert(rel_err(back, y1, n) < 1e-12);
        /* the centroid of two points lies on the hyperboloid and converts into the ball */
        double X[2 * (NMAX + 1)], nu[2] = {1.0, 1.0};
        memcpy(X, x1, (size_t)(n + 1) * sizeof(double));
        memcpy(X + n + 1, x2, (size_t)(n + 1) * sizeof(double));
        gyro_lorentz_centroid_f64(mu, X, nu, 2, n);
        ck_assert(fabs(gyro_lorentz_inner_f64(mu, mu, n) + 1.0) < 1e-9);
        /* batch conversion equals row-wise conversion */
        double Yb[2 * NMAX];
        gyro_hyp_to_poincare_batch_f64(Yb, X, 2, n);
        ck_assert(rel_err(Yb, y1, n) < 1e-12 && rel_err(Yb + n, y2, n) < 1e-12);
    }
}
END_TEST

START_TEST(test_skipgram_terms)
{
    gyro_rng r;
    gyro_rng_seed(&r, 7);
    int n = 8, k = 5;
    double u[9], v[9], ng[5 * 9], gu[9], gv[9], gn[5 * 9];
    double tu[9] = {0}, tv[9] = {0}, tn[5 * 9] = {0};
    rnd_hyp(u, n, 1.0, &r);
    rnd_hyp(v, n, 1.0, &r);
    for (int j = 0; j < k; j++) rnd_hyp(ng + j * 9, n, 1.0, &r);
    double L = gyro_lorentz_skipgram_loss_f64(gu, gv, gn, u, v, ng, 2.0, k, n);
    double S = gyro_lorentz_skipgram_term_f64(tu, tv, u, v, 1, 2.0, 1.0, n);
    for (int j = 0; j < k; j++)
        S += gyro_lorentz_skipgram_term_f64(tu, tn + j * 9, u, ng + j * 9, 0, 2.0, 1.0, n);
    ck_assert(fabs(L - S) < 1e-12 * (1.0 + L));
    ck_assert(rel_err(gu, tu, 9) < 1e-12 && rel_err(gv, tv, 9) < 1e-12);
    ck_assert(rel_err(gn, tn, 5 * 9) < 1e-12);
    /* huge scores do not overflow the loss */
    double far[9];
    rnd_hyp(far, n, 30.0, &r);
    double Lf = gyro_lorentz_skipgram_loss_f64(gu, gv, gn, u, far, far, 5.0, 1, n);
    ck_assert(isfinite(Lf) && Lf > 0.0);
}
END_TEST

/* ---- RSGD stays on the manifold ----------------------------------------------------------------- */

START_TEST(test_lorentz_rsgd_million_steps_f32)
{
    /* A point pulled towards targets that change every step (the gradient of the distance)
     * plus Gaussian noise, 10⁶ float32 steps with clipping; the constraint is measured in double
     * from the stored floats after every step. */
    enum { N = 4, NT = 6 };
    gyro_rng r;
    gyro_rng_seed(&r, 8);
    float x[N + 1], tg[NT][N + 1], eg[N + 1];
    float xs0[N] = {0};
    gyro_lorentz_lift_f32(x, xs0, N);
    for (int j = 0; j < NT; j++) {
        float s[N];
        /* targets around a centre away from the origin (x0 ≈ 2.7) */
        for (int i = 0; i < N; i++) s[i] = (float)((i == 0 ? 2.5 : 0.0) + 0.5 * gyro_rng_normal(&r));
        gyro_lorentz_lift_f32(tg[j], s, N);
    }
    double worst = 0.0, x0max = 0.0;
    long steps = 1000000;
    for (long t = 0; t < steps; t++) {
        const float *target = tg[gyro_rng_below(&r, NT)];
        memset(eg, 0, sizeof eg);
        gyro_lorentz_dist_backward_f32(eg, NULL, 1.0f, x, target, N);
        for (int i = 0; i <= N; i++) eg[i] += (float)(0.5 * gyro_rng_normal(&r));
        gyro_lorentz_rsgd_step_f32(x, x, eg, 0.01f, (float)GYRO_HYP_LORENTZ_MAX_STEP, N);
        double q = -(double)x[0] * x[0];
        for (int i = 1; i <= N; i++) q += (double)x[i] * x[i];
        double e = fabs(q + 1.0);
        if (e > worst) worst = e;
        if (x[0] > x0max) x0max = x[0];
        if (!(e < 1e-5)) ck_abort_msg("step %ld: |<x,x>_L + 1| = %g (x0 = %g)", t, e, x[0]);
    }
    printf("lorentz rsgd f32: %ld steps, max |<x,x>_L + 1| = %.3g, x0 up to %.3f, final %.3f\n",
           steps, worst, x0max, x[0]);
    ck_assert(x0max > 2.0); /* the walk did leave the origin */
}
END_TEST

START_TEST(test_lorentz_rsgd_far_f64)
{
    /* far from the origin in float64 the constraint holds to rounding: |<x,x>+1| ≤ 2e-15 x0² */
    gyro_rng r;
    gyro_rng_seed(&r, 9);
    int n = 6;
    double x[7], g[7];
    rnd_hyp(x, n, 20.0, &r);
    for (int t = 0; t < 20000; t++) {
        rnd_vec(g, n + 1, 1.0, &r);
        gyro_lorentz_rsgd_step_f64(x, x, g, 0.05, 1.0, n);
        double e = fabs(gyro_lorentz_inner_f64(x, x, n) + 1.0);
        ck_assert_msg(e <= 2e-15 * x[0] * x[0] + 1e-15, "step %d: %g (x0 %g)", t, e, x[0]);
    }
}
END_TEST

START_TEST(test_poincare_rsgd_stays_in_ball_f32)
{
    gyro_rng r;
    gyro_rng_seed(&r, 10);
    for (int ci = 0; ci < 3; ci++) {
        float c = (float)g_cs[ci];
        int n = 8;
        float x[8] = {0}, g[8];
        double maxn = (1.0 - GYRO_HYP_BALL_EPS_F32) / sqrt(c);
        for (int t = 0; t < 20000; t++) {
            for (int i = 0; i < n; i++) g[i] = (float)(50.0 * gyro_rng_normal(&r) + (i == 0 ? -200.0 : 0.0));
            gyro_poincare_rsgd_step_f32(x, x, g, c, 0.5f, n);
            double nx = 0.0;
            for (int i = 0; i < n; i++) nx += (double)x[i] * x[i];
            ck_assert_msg(sqrt(nx) <= maxn * (1.0 + 1e-6), "c=%g step %d: |x| = %.9g > %.9g", c, t,
                          sqrt(nx), maxn);
        }
    }
}
END_TEST

/* ---- robustness ------------------------------------------------------------------------------- */

static int all_finite_d(const double *x, int n)
{
    for (int i = 0; i < n; i++)
        if (!isfinite(x[i])) return 0;
    return 1;
}

static int all_finite_f(const float *x, int n)
{
    for (int i = 0; i < n; i++)
        if (!isfinite(x[i])) return 0;
    return 1;
}

/* Runs the ball ops in f64 and f32 on (x, y, v) and checks every output and gradient is finite. */
static void ball_ops_finite(const double *x, const double *y, const double *v, double c, int n,
                            const char *what)
{
    double o[NMAX], d1[NMAX], d2[NMAX], d3[NMAX], w[NMAX], M[4 * NMAX], dM[4 * NMAX], P[2 * NMAX],
        A[2 * NMAX], dP[2 * NMAX], dA[2 * NMAX], lg[2];
    float xf[NMAX], yf[NMAX], vf[NMAX], of[NMAX], e1[NMAX], e2[NMAX], e3[NMAX], wf[NMAX],
        Mf[4 * NMAX], dMf[4 * NMAX], Pf[2 * NMAX], Af[2 * NMAX], dPf[2 * NMAX], dAf[2 * NMAX],
        lgf[2];
    for (int i = 0; i < n; i++) {
        w[i] = 1.0 - 0.1 * i;
        xf[i] = (float)x[i]; yf[i] = (float)y[i]; vf[i] = (float)v[i]; wf[i] = (float)w[i];
    }
    /* the float32 contract: ball points are inside the float32 ball (what project_f32 gives);
     * float64 gets the raw points, on the boundary itself included */
    gyro_poincare_project_f32(xf, xf, (float)c, n);
    gyro_poincare_project_f32(yf, yf, (float)c, n);
    for (int i = 0; i < 4 * n; i++) { M[i] = 0.3 * sin(i + 1.0); Mf[i] = (float)M[i]; }
    for (int i = 0; i < n; i++) {
        P[i] = x[i]; P[n + i] = y[i]; A[i] = v[i]; A[n + i] = w[i];
        Pf[i] = xf[i]; Pf[n + i] = yf[i]; Af[i] = vf[i]; Af[n + i] = wf[i];
    }
    double dl[2] = {1.0, -1.0};
    float dlf[2] = {1.0f, -1.0f};
#define ZERO_D memset(d1, 0, sizeof d1); memset(d2, 0, sizeof d2); memset(d3, 0, sizeof d3)
#define ZERO_F memset(e1, 0, sizeof e1); memset(e2, 0, sizeof e2); memset(e3, 0, sizeof e3)
#define CHK_D(name) ck_assert_msg(all_finite_d(o, n) && all_finite_d(d1, n) && all_finite_d(d2, n) && all_finite_d(d3, n), "%s: %s f64 not finite", what, name)
#define CHK_F(name) ck_assert_msg(all_finite_f(of, n) && all_finite_f(e1, n) && all_finite_f(e2, n) && all_finite_f(e3, n), "%s: %s f32 not finite", what, name)
    ZERO_D; gyro_poincare_mobius_add_f64(o, x, y, c, n); gyro_poincare_mobius_add_backward_f64(d1, d2, w, x, y, c, n); CHK_D("mobius_add");
    ZERO_F; gyro_poincare_mobius_add_f32(of, xf, yf, c, n); gyro_poincare_mobius_add_backward_f32(e1, e2, wf, xf, yf, c, n); CHK_F("mobius_add");
    ZERO_D; o[0] = gyro_poincare_lambda_x_f64(x, c, n); gyro_poincare_lambda_x_backward_f64(d1, 1.0, x, c, n); CHK_D("lambda_x");
    ZERO_F; of[0] = gyro_poincare_lambda_x_f32(xf, c, n); gyro_poincare_lambda_x_backward_f32(e1, 1.0f, xf, c, n); CHK_F("lambda_x");
    ZERO_D; gyro_poincare_expmap0_f64(o, v, c, n); gyro_poincare_expmap0_backward_f64(d1, w, v, c, n); CHK_D("expmap0");
    ZERO_F; gyro_poincare_expmap0_f32(of, vf, c, n); gyro_poincare_expmap0_backward_f32(e1, wf, vf, c, n); CHK_F("expmap0");
    ZERO_D; gyro_poincare_logmap0_f64(o, x, c, n); gyro_poincare_logmap0_backward_f64(d1, w, x, c, n); CHK_D("logmap0");
    ZERO_F; gyro_poincare_logmap0_f32(of, xf, c, n); gyro_poincare_logmap0_backward_f32(e1, wf, xf, c, n); CHK_F("logmap0");
    ZERO_D; gyro_poincare_expmap_f64(o, x, v, c, n); gyro_poincare_expmap_backward_f64(d1, d2, w, x, v, c, n); CHK_D("expmap");
    ZERO_F; gyro_poincare_expmap_f32(of, xf, vf, c, n); gyro_poincare_expmap_backward_f32(e1, e2, wf, xf, vf, c, n); CHK_F("expmap");
    ZERO_D; gyro_poincare_logmap_f64(o, x, y, c, n); gyro_poincare_logmap_backward_f64(d1, d2, w, x, y, c, n); CHK_D("logmap");
    ZERO_F; gyro_poincare_logmap_f32(of, xf, yf, c, n); gyro_poincare_logmap_backward_f32(e1, e2, wf, xf, yf, c, n); CHK_F("logmap");
    ZERO_D; o[0] = gyro_poincare_dist_f64(x, y, c, n); gyro_poincare_dist_backward_f64(d1, d2, 1.0, x, y, c, n); CHK_D("dist");
    ZERO_F; of[0] = gyro_poincare_dist_f32(xf, yf, c, n); gyro_poincare_dist_backward_f32(e1, e2, 1.0f, xf, yf, c, n); CHK_F("dist");
    ZERO_D; gyro_poincare_mobius_scalar_f64(o, x, 3.5, c, n); gyro_poincare_mobius_scalar_backward_f64(d1, w, x, 3.5, c, n); CHK_D("mobius_scalar");
    ZERO_F; gyro_poincare_mobius_scalar_f32(of, xf, 3.5f, c, n); gyro_poincare_mobius_scalar_backward_f32(e1, wf, xf, 3.5f, c, n); CHK_F("mobius_scalar");
    ZERO_D; memset(dM, 0, sizeof dM); gyro_poincare_mobius_matvec_f64(o, M, x, c, 4, n); gyro_poincare_mobius_matvec_backward_f64(dM, d1, w, M, x, c, 4, n); CHK_D("mobius_matvec");
    ck_assert(all_finite_d(dM, 4 * n));
    ZERO_F; memset(dMf, 0, sizeof dMf); gyro_poincare_mobius_matvec_f32(of, Mf, xf, c, 4, n); gyro_poincare_mobius_matvec_backward_f32(dMf, e1, wf, Mf, xf, c, 4, n); CHK_F("mobius_matvec");
    ck_assert(all_finite_f(dMf, 4 * n));
    ZERO_D; memset(dM, 0, sizeof dM); gyro_poincare_hyp_linear_f64(o, M, x, y, c, 4, n < 4 ? n : 4); gyro_poincare_hyp_linear_backward_f64(dM, d1, d2, w, M, x, y, c, 4, n < 4 ? n : 4); CHK_D("hyp_linear");
    ZERO_F; memset(dMf, 0, sizeof dMf); gyro_poincare_hyp_linear_f32(of, Mf, xf, yf, c, 4, n < 4 ? n : 4); gyro_poincare_hyp_linear_backward_f32(dMf, e1, e2, wf, Mf, xf, yf, c, 4, n < 4 ? n : 4); CHK_F("hyp_linear");
    ZERO_D; gyro_poincare_gyration_f64(o, x, y, v, c, n); gyro_poincare_gyration_backward_f64(d1, d2, d3, w, x, y, v, c, n); CHK_D("gyration");
    ZERO_F; gyro_poincare_gyration_f32(of, xf, yf, vf, c, n); gyro_poincare_gyration_backward_f32(e1, e2, e3, wf, xf, yf, vf, c, n); CHK_F("gyration");
    ZERO_D; memset(dP, 0, sizeof dP); memset(dA, 0, sizeof dA);
    gyro_poincare_hyp_mlr_f64(lg, y, P, A, c, 2, n); gyro_poincare_hyp_mlr_backward_f64(d1, dP, dA, dl, y, P, A, c, 2, n);
    ck_assert_msg(all_finite_d(lg, 2) && all_finite_d(d1, n) && all_finite_d(dP, 2 * n) && all_finite_d(dA, 2 * n), "%s: hyp_mlr f64", what);
    ZERO_F; memset(dPf, 0, sizeof dPf); memset(dAf, 0, sizeof dAf);
    gyro_poincare_hyp_mlr_f32(lgf, yf, Pf, Af, c, 2, n); gyro_poincare_hyp_mlr_backward_f32(e1, dPf, dAf, dlf, yf, Pf, Af, c, 2, n);
    ck_assert_msg(all_finite_f(lgf, 2) && all_finite_f(e1, n) && all_finite_f(dPf, 2 * n) && all_finite_f(dAf, 2 * n), "%s: hyp_mlr f32", what);
    ZERO_D; gyro_poincare_rsgd_step_f64(o, x, v, c, 0.1, n); gyro_poincare_rsgd_step_backward_f64(d1, d2, w, x, v, c, 0.1, n); CHK_D("rsgd_step");
    ZERO_F; gyro_poincare_rsgd_step_f32(of, xf, vf, c, 0.1f, n); gyro_poincare_rsgd_step_backward_f32(e1, e2, wf, xf, vf, c, 0.1f, n); CHK_F("rsgd_step");
    ZERO_D; gyro_poincare_transp0_f64(o, x, v, c, n); gyro_poincare_transp0_backward_f64(d1, d2, w, x, v, c, n); CHK_D("transp0");
    ZERO_D; gyro_poincare_egrad2rgrad_f64(o, x, v, c, n); gyro_poincare_egrad2rgrad_backward_f64(d1, d2, w, x, v, c, n); CHK_D("egrad2rgrad");
    ZERO_D; gyro_poincare_project_f64(o, x, c, n); gyro_poincare_project_backward_f64(d1, w, x, c, n); CHK_D("project");
#undef ZERO_D
#undef ZERO_F
#undef CHK_D
#undef CHK_F
}

START_TEST(test_ball_extreme_inputs_finite)
{
    gyro_rng r;
    gyro_rng_seed(&r, 11);
    static const double radii[] = {0.0, 1e-30, 1e-8, 0.5, 1.0 - 1e-7, 1.0 - 1e-12, 1.0};
    static const double vnorms[] = {0.0, 1e-30, 1e-8, 1.0, 1e3, 1e15};
    int nr = (int)(sizeof radii / sizeof radii[0]), nv = (int)(sizeof vnorms / sizeof vnorms[0]);
    for (int ci = 0; ci < 3; ci++)
        for (int a = 0; a < nr; a++)
            for (int b = 0; b < nr; b++)
                for (int k = 0; k < nv; k++) {
                    double c = g_cs[ci];
                    int n = 4;
                    double x[4], y[4], v[4];
                    rnd_vec(x, n, 1.0, &r);
                    rnd_vec(y, n, 1.0, &r);
                    rnd_vec(v, n, 1.0, &r);
                    double nx = sqrt(dot(x, x, n)), ny = sqrt(dot(y, y, n)), nvv = sqrt(dot(v, v, n));
                    for (int i = 0; i < n; i++) {
                        x[i] *= radii[a] / sqrt(c) / nx;
                        y[i] *= radii[b] / sqrt(c) / ny;
                        v[i] *= vnorms[k] / nvv;
                    }
                    if (a == b && a == nr - 1) /* antipodal boundary points: D = 0 */
                        for (int i = 0; i < n; i++) y[i] = -x[i];
                    char what[96];
                    snprintf(what, sizeof what, "c=%g |x|=%g |y|=%g |v|=%g", c, radii[a], radii[b],
                             vnorms[k]);
                    ball_ops_finite(x, y, v, c, n, what);
                }
}
END_TEST

START_TEST(test_project_and_report)
{
    double x[3] = {3.0, -4.0, 0.0}, y[3];
    ck_assert_int_eq(gyro_poincare_project_f64(y, x, 1.0, 3), 1);
    ck_assert(fabs(sqrt(dot(y, y, 3)) - (1.0 - GYRO_HYP_BALL_EPS_F64)) < 1e-15);
    float xf[3] = {0.5f, 0.5f, 0.5f}, yf[3];
    ck_assert_int_eq(gyro_poincare_project_f32(yf, xf, 2.0f, 3), 1); /* radius 1/√2 */
    double nf = sqrt((double)yf[0] * yf[0] + (double)yf[1] * yf[1] + (double)yf[2] * yf[2]);
    ck_assert(nf <= (1.0 - GYRO_HYP_BALL_EPS_F32) / sqrt(2.0) * (1 + 1e-7));
    ck_assert_int_eq(gyro_poincare_project_f32(yf, yf, 2.0f, 3), 0); /* inside: unchanged */
    double bad[3] = {NAN, 0.1, 0.1};
    ck_assert_int_eq(gyro_poincare_project_f64(y, bad, 1.0, 3), -1);
    ck_assert(y[0] == 0.0 && y[1] == 0.0 && y[2] == 0.0);
    double rows[6] = {0.1, 0.1, 0.1, 2.0, 0.0, 0.0};
    ck_assert_int_eq(gyro_poincare_project_batch_f64(rows, rows, 1.0, 2, 3), 1);
    double h[4] = {1.0, INFINITY, 0.0, 0.0};
    ck_assert_int_eq(gyro_lorentz_reproject_f64(h, 3), -1);
    ck_assert(h[0] == 1.0 && h[1] == 0.0);
}
END_TEST

START_TEST(test_lorentz_extreme_inputs_finite)
{
    gyro_rng r;
    gyro_rng_seed(&r, 12);
    static const double scales[] = {0.0, 1e-9, 1.0, 50.0, 1e6};
    int ns = (int)(sizeof scales / sizeof scales[0]);
    int n = 3;
    for (int a = 0; a < ns; a++)
        for (int b = 0; b < ns; b++) {
            double x[4], y[4], v[4], g[4], o[4], d1[4], d2[4], w[4] = {0.3, -1.0, 0.5, 2.0};
            float xf[4], yf[4], vf[4], of[4], e1[4], e2[4], wf[4] = {0.3f, -1.0f, 0.5f, 2.0f};
            rnd_hyp(x, n, scales[a], &r);
            rnd_hyp(y, n, scales[b], &r);
            rnd_vec(g, n + 1, scales[b], &r);
            gyro_lorentz_proj_tangent_f64(v, x, g, n);
            for (int i = 0; i < 4; i++) { xf[i] = (float)x[i]; yf[i] = (float)y[i]; vf[i] = (float)v[i]; }
            int f32ok = all_finite_f(xf, 4) && all_finite_f(yf, 4) && all_finite_f(vf, 4);
            memset(d1, 0, sizeof d1); memset(d2, 0, sizeof d2);
            gyro_lorentz_expmap_f64(o, x, v, n);
            gyro_lorentz_expmap_backward_f64(d1, d2, w, x, v, n);
            ck_assert_msg(all_finite_d(o, 4) && all_finite_d(d1, 4) && all_finite_d(d2, 4), "expmap %d %d", a, b);
            memset(d1, 0, sizeof d1); memset(d2, 0, sizeof d2);
            gyro_lorentz_logmap_f64(o, x, y, n);
            gyro_lorentz_logmap_backward_f64(d1, d2, w, x, y, n);
            ck_assert_msg(all_finite_d(o, 4) && all_finite_d(d1, 4) && all_finite_d(d2, 4), "logmap %d %d", a, b);
            memset(d1, 0, sizeof d1); memset(d2, 0, sizeof d2);
            o[0] = gyro_lorentz_dist_f64(x, y, n);
            gyro_lorentz_dist_backward_f64(d1, d2, 1.0, x, y, n);
            ck_assert_msg(all_finite_d(o, 1) && all_finite_d(d1, 4) && all_finite_d(d2, 4), "dist %d %d", a, b);
            memset(d1, 0, sizeof d1); memset(d2, 0, sizeof d2);
            gyro_lorentz_rsgd_step_f64(o, x, g, 0.1, 1.0, n);
            gyro_lorentz_rsgd_step_backward_f64(d1, d2, w, x, g, 0.1, 1.0, n);
            ck_assert_msg(all_finite_d(o, 4) && all_finite_d(d1, 4) && all_finite_d(d2, 4), "rsgd %d %d", a, b);
            o[0] = gyro_lorentz_skipgram_loss_f64(d1, d2, NULL, x, y, NULL, 5.0, 0, n);
            ck_assert_msg(all_finite_d(o, 1) && all_finite_d(d1, 4) && all_finite_d(d2, 4), "skipgram %d %d", a, b);
            gyro_hyp_to_poincare_f64(o, x, n);
            ck_assert(all_finite_d(o, 3) && dot(o, o, 3) <= 1.0);
            if (!f32ok || scales[a] > 1e3 || scales[b] > 1e3) continue; /* float32 range */
            memset(e1, 0, sizeof e1); memset(e2, 0, sizeof e2);
            gyro_lorentz_expmap_f32(of, xf, vf, n);
            gyro_lorentz_expmap_backward_f32(e1, e2, wf, xf, vf, n);
            ck_assert_msg(all_finite_f(of, 4) && all_finite_f(e1, 4) && all_finite_f(e2, 4), "expmap f32 %d %d", a, b);
            memset(e1, 0, sizeof e1); memset(e2, 0, sizeof e2);
            gyro_lorentz_logmap_f32(of, xf, yf, n);
            gyro_lorentz_logmap_backward_f32(e1, e2, wf, xf, yf, n);
            ck_assert_msg(all_finite_f(of, 4) && all_finite_f(e1, 4) && all_finite_f(e2, 4), "logmap f32 %d %d", a, b);
            gyro_lorentz_rsgd_step_f32(of, xf, vf, 0.1f, 1.0f, n);
            ck_assert_msg(all_finite_f(of, 4), "rsgd f32 %d %d", a, b);
        }
    /* a ball point on the unit sphere maps to a finite hyperboloid point */
    double yb[2] = {1.0, 0.0}, xh[3];
    gyro_hyp_to_hyperboloid_f64(xh, yb, 2);
    ck_assert(all_finite_d(xh, 3));
}
END_TEST

/* ---- the ratio helpers of hyp_consts.h ----------------------------------------------------------- */

/* Each helper returns f(t) and f'(t)/t; check both against the direct formulas just above the
 * Taylor threshold (where the direct formulas are still accurate) and continuity across it, and
 * f' against a central difference. */
typedef double (*ratio_fn)(double t, double *dft);
static double r_tanhc(double t, double *d) { return gyro_hyp_tanhc(t, d); }
static double r_artanhc(double t, double *d) { return gyro_hyp_artanhc(t, GYRO_HYP_ARTANH_MAX_F64, d); }
static double r_sinhc(double t, double *d) { return gyro_hyp_sinhc(t, GYRO_HYP_COSH_MAX_F64, d); }
static double r_asinhc(double t, double *d) { return gyro_hyp_asinhc(t, d); }

START_TEST(test_ratio_helpers)
{
    ratio_fn fns[4] = {r_tanhc, r_artanhc, r_sinhc, r_asinhc};
    const char *names[4] = {"tanhc", "artanhc", "sinhc", "asinhc"};
    double (*direct[4])(double) = {tanh, atanh, sinh, asinh};
    for (int k = 0; k < 4; k++) {
        double th = GYRO_HYP_SERIES_T;
        double lo, hi, dlo, dhi;
        lo = fns[k](th * (1.0 - 1e-13), &dlo);
        hi = fns[k](th * (1.0 + 1e-13), &dhi);
        ck_assert_msg(fabs(lo - hi) < 1e-14, "%s value jumps at the threshold", names[k]);
        ck_assert_msg(fabs(dlo - dhi) < 1e-9, "%s derivative jumps at the threshold: %.17g %.17g",
                      names[k], dlo, dhi);
        for (double t = 1e-6; t < 0.9; t *= 1.7) {
            double d, f = fns[k](t, &d);
            if (t > 0.05) /* the direct quotient is accurate here */
                ck_assert_msg(fabs(f - direct[k](t) / t) < 1e-14, "%s(%g)", names[k], t);
            if (t < 1e-3) continue; /* below, f varies less than its rounding over any h */
            double h = 1e-3 * t, dp, dm;
            double fp = fns[k](t + h, &dp), fm = fns[k](t - h, &dm);
            double fd = (fp - fm) / (2.0 * h) / t;
            ck_assert_msg(fabs(fd - d) < 1e-5 * (1.0 + fabs(d)), "%s'(%g)/t: %.10g vs fd %.10g",
                          names[k], t, d, fd);
        }
        double d0, f0 = fns[k](0.0, &d0);
        ck_assert(f0 == 1.0 && isfinite(d0));
    }
    /* arcosh(a)/√(a²−1) and its derivative, series against the direct formula */
    for (double e = 1e-12; e < 3.0; e *= 1.9) {
        double a = 1.0 + e, dg;
        double g = gyro_hyp_arcoshc(a, &dg);
        double s = sqrt(e * (2.0 + e));
        double direct_g = log1p(e + s) / s;
        ck_assert_msg(fabs(g - direct_g) < (e < 1e-6 ? 1e-9 : 1e-13), "arcoshc(1+%g)", e);
        if (e > 1e-4) {
            double h = 1e-7 * a, dp, dm;
            double fd = (gyro_hyp_arcoshc(a + h, &dp) - gyro_hyp_arcoshc(a - h, &dm)) / (2 * h);
            ck_assert_msg(fabs(fd - dg) < 1e-6, "arcoshc'(1+%g): %g vs %g", e, dg, fd);
        }
    }
    ck_assert(gyro_hyp_arcoshc(1.0, NULL) == 1.0);
    /* accurate arcosh near 1 and the shared sigmoid/softplus */
    ck_assert(fabs(gyro_hyp_arcosh1p(1e-20) - sqrt(2e-20)) < 1e-25);
    ck_assert(gyro_hyp_neg_log_sigmoid(-800.0) == 800.0 && gyro_hyp_neg_log_sigmoid(800.0) == 0.0);
    double sn;
    ck_assert(fabs(gyro_hyp_nls_sig(3.0, &sn) - log1p(exp(-3.0))) < 1e-15);
    ck_assert(fabs(sn - 1.0 / (1.0 + exp(3.0))) < 1e-15);
}
END_TEST

START_TEST(test_logmap_at_base_point)
{
    /* log_x(x) = 0 in both models, with finite gradients */
    gyro_rng r;
    gyro_rng_seed(&r, 13);
    int n = 5;
    double x[6], v[6], dx[6] = {0}, dy[6] = {0}, w[6] = {1, 2, 3, 4, 5, 6};
    rnd_hyp(x, n, 1.0, &r);
    gyro_lorentz_logmap_f64(v, x, x, n);
    for (int i = 0; i <= n; i++) ck_assert(fabs(v[i]) < 1e-7);
    gyro_lorentz_logmap_backward_f64(dx, dy, w, x, x, n);
    ck_assert(all_finite_d(dx, n + 1) && all_finite_d(dy, n + 1));
    ck_assert(gyro_lorentz_dist_f64(x, x, n) < 1e-7);
    double b[5], bv[5], db1[5] = {0}, db2[5] = {0};
    rnd_ball(b, n, 1.0, 0.9, &r);
    gyro_poincare_logmap_f64(bv, b, b, 1.0, n);
    for (int i = 0; i < n; i++) ck_assert(bv[i] == 0.0);
    gyro_poincare_logmap_backward_f64(db1, db2, w, b, b, 1.0, n);
    ck_assert(all_finite_d(db1, n) && all_finite_d(db2, n));
    ck_assert(gyro_poincare_dist_f64(b, b, 1.0, n) == 0.0);
}
END_TEST

/* ---- float32 batched forms agree with float64 ------------------------------------------------------ */

static void to_f(float *f, const double *d, int n)
{
    for (int i = 0; i < n; i++) f[i] = (float)d[i];
}

/* max |f − d| / max(1e-30, max |d|) over n values */
static double f_vs_d(const float *f, const double *d, int n)
{
    double e = 0.0, m = 1e-30;
    for (int i = 0; i < n; i++) {
        if (fabs((double)f[i] - d[i]) > e) e = fabs((double)f[i] - d[i]);
        if (fabs(d[i]) > m) m = fabs(d[i]);
    }
    return e / m;
}

START_TEST(test_f32_batches_match_f64)
{
    enum { R = 3, N = 16, M = 12, K = 5 };
    gyro_rng r;
    gyro_rng_seed(&r, 14);
    double X[R * N], Y[R * N], V[R * N], G[R * N], MX[R * M], P[K * N], A[K * N];
    float Xf[R * N], Yf[R * N], Vf[R * N], Gf[R * N], MXf[R * M], Pf[K * N], Af[K * N];
    double o[R * N], o2[R * N], o3[K * N], o4[K * N];
    float of[R * N], of2[R * N], of3[K * N], of4[K * N];
    const double tol = 2e-5;
    for (int t = 0; t < 20; t++) {
        double c = g_cs[t % 3];
        for (int i = 0; i < R; i++) {
            rnd_ball(X + i * N, N, c, 0.9, &r);
            rnd_ball(Y + i * N, N, c, 0.9, &r);
        }
        rnd_vec(V, R * N, 0.5, &r);
        rnd_vec(G, R * N, 1.0, &r);
        rnd_vec(MX, R * M, 0.5, &r);
        for (int k = 0; k < K; k++) rnd_ball(P + k * N, N, c, 0.8, &r);
        rnd_vec(A, K * N, 0.7, &r);
        to_f(Xf, X, R * N); to_f(Yf, Y, R * N); to_f(Vf, V, R * N); to_f(Gf, G, R * N);
        to_f(MXf, MX, R * M); to_f(Pf, P, K * N); to_f(Af, A, K * N);
#define CMP(what, fv, dv, len) ck_assert_msg(f_vs_d(fv, dv, len) < tol, "%s f32 vs f64: %g (c=%g)", what, f_vs_d(fv, dv, len), c)
        gyro_poincare_mobius_add_batch_f64(o, X, Y, c, R, N);
        gyro_poincare_mobius_add_batch_f32(of, Xf, Yf, (float)c, R, N);
        CMP("mobius_add_batch", of, o, R * N);
        memset(o, 0, sizeof o); memset(o2, 0, sizeof o2); memset(of, 0, sizeof of); memset(of2, 0, sizeof of2);
        gyro_poincare_mobius_add_backward_batch_f64(o, o2, G, X, Y, c, R, N);
        gyro_poincare_mobius_add_backward_batch_f32(of, of2, Gf, Xf, Yf, (float)c, R, N);
        CMP("mobius_add_backward_batch dX", of, o, R * N);
        CMP("mobius_add_backward_batch dY", of2, o2, R * N);
        gyro_poincare_expmap0_batch_f64(o, V, c, R, N);
        gyro_poincare_expmap0_batch_f32(of, Vf, (float)c, R, N);
        CMP("expmap0_batch", of, o, R * N);
        memset(o, 0, sizeof o); memset(of, 0, sizeof of);
        gyro_poincare_expmap0_backward_batch_f64(o, G, V, c, R, N);
        gyro_poincare_expmap0_backward_batch_f32(of, Gf, Vf, (float)c, R, N);
        CMP("expmap0_backward_batch", of, o, R * N);
        gyro_poincare_logmap0_batch_f64(o, X, c, R, N);
        gyro_poincare_logmap0_batch_f32(of, Xf, (float)c, R, N);
        CMP("logmap0_batch", of, o, R * N);
        memset(o, 0, sizeof o); memset(of, 0, sizeof of);
        gyro_poincare_logmap0_backward_batch_f64(o, G, X, c, R, N);
        gyro_poincare_logmap0_backward_batch_f32(of, Gf, Xf, (float)c, R, N);
        CMP("logmap0_backward_batch", of, o, R * N);
        gyro_poincare_mobius_matvec_finish_batch_f64(o, MX, X, c, R, M, N);
        gyro_poincare_mobius_matvec_finish_batch_f32(of, MXf, Xf, (float)c, R, M, N);
        CMP("matvec_finish_batch", of, o, R * M);
        memset(o, 0, sizeof o); memset(o2, 0, sizeof o2); memset(of, 0, sizeof of); memset(of2, 0, sizeof of2);
        gyro_poincare_mobius_matvec_finish_backward_batch_f64(o, o2, G, MX, X, c, R, M, N);
        gyro_poincare_mobius_matvec_finish_backward_batch_f32(of, of2, Gf, MXf, Xf, (float)c, R, M, N);
        CMP("matvec_finish_backward_batch dMX", of, o, R * M);
        CMP("matvec_finish_backward_batch dX", of2, o2, R * N);
        gyro_poincare_hyp_mlr_batch_f64(o, X, P, A, c, R, K, N);
        gyro_poincare_hyp_mlr_batch_f32(of, Xf, Pf, Af, (float)c, R, K, N);
        CMP("hyp_mlr_batch", of, o, R * K);
        memset(o, 0, sizeof o); memset(o3, 0, sizeof o3); memset(o4, 0, sizeof o4);
        memset(of, 0, sizeof of); memset(of3, 0, sizeof of3); memset(of4, 0, sizeof of4);
        gyro_poincare_hyp_mlr_backward_batch_f64(o, o3, o4, G, X, P, A, c, R, K, N);
        gyro_poincare_hyp_mlr_backward_batch_f32(of, of3, of4, Gf, Xf, Pf, Af, (float)c, R, K, N);
        CMP("hyp_mlr_backward_batch dX", of, o, R * N);
        CMP("hyp_mlr_backward_batch dP", of3, o3, K * N);
        CMP("hyp_mlr_backward_batch dA", of4, o4, K * N);
        gyro_poincare_rsgd_step_batch_f64(o, X, G, c, 0.1, R, N);
        gyro_poincare_rsgd_step_batch_f32(of, Xf, Gf, (float)c, 0.1f, R, N);
        CMP("rsgd_step_batch", of, o, R * N);
        /* the conversions: the ball with c = 1 only */
        double H[R * (N + 1)];
        float Hf[R * (N + 1)];
        for (int i = 0; i < R; i++) rnd_ball(Y + i * N, N, 1.0, 0.9, &r);
        to_f(Yf, Y, R * N);
        gyro_hyp_to_hyperboloid_batch_f64(H, Y, R, N);
        gyro_hyp_to_hyperboloid_batch_f32(Hf, Yf, R, N);
        CMP("to_hyperboloid_batch", Hf, H, R * (N + 1));
        gyro_hyp_to_poincare_batch_f64(o, H, R, N);
        gyro_hyp_to_poincare_batch_f32(of, Hf, R, N);
        CMP("to_poincare_batch", of, o, R * N);
        /* hyperboloid: a clipped RSGD step and a skip-gram term */
        double hx[N + 1], hg[N + 1], hd1[N + 1] = {0}, hd2[N + 1] = {0};
        float hxf[N + 1], hgf[N + 1], hf1[N + 1] = {0}, hf2[N + 1] = {0};
        rnd_hyp(hx, N, 0.8, &r);
        rnd_vec(hg, N + 1, 5.0, &r);
        to_f(hxf, hx, N + 1); to_f(hgf, hg, N + 1);
        gyro_lorentz_rsgd_step_f64(o, hx, hg, 1.0, 0.5, N);
        gyro_lorentz_rsgd_step_f32(of, hxf, hgf, 1.0f, 0.5f, N);
        CMP("lorentz rsgd_step clipped", of, o, N + 1);
        double l64 = gyro_lorentz_skipgram_term_f64(hd1, hd2, hx, H, t % 2, 2.0, 0.5, N);
        float l32 = gyro_lorentz_skipgram_term_f32(hf1, hf2, hxf, Hf, t % 2, 2.0f, 0.5f, N);
        ck_assert(fabs(l32 - l64) < tol * (1.0 + fabs(l64)));
        CMP("skipgram_term du", hf1, hd1, N + 1);
        CMP("skipgram_term dw", hf2, hd2, N + 1);
#undef CMP
    }
}
END_TEST

/* ---- the fused skip-gram step (lorentz_skipgram.h) ------------------------------------------ */

#define SG_DIM 20 /* spatial dimension: 21 used entries of a 32-entry padded row (two 16-blocks) */
#define SG_ROW 32

static double sg_sigm(double x) { return 1.0 / (1.0 + exp(-x)); }

/* A padded hyperboloid row at distance ~radius from the origin, in both precisions. */
static void sg_point(float *xf, double *xd, gyro_rng *r, double radius)
{
    memset(xf, 0, SG_ROW * sizeof *xf);
    memset(xd, 0, SG_ROW * sizeof *xd);
    for (int k = 1; k <= SG_DIM; k++) xf[k] = (float)(gyro_rng_normal(r) * radius / sqrt(SG_DIM));
    gyro_lorentz_reproject_f32(xf, SG_DIM);
    for (int k = 1; k <= SG_DIM; k++) xd[k] = xf[k];
    gyro_lorentz_reproject_f64(xd, SG_DIM); /* on the hyperboloid in double, not at float x₀ */
}

/* A centre and three targets (one positive, two negatives): the fused target and centre steps,
 * float32 and float64, against gyro_lorentz_skipgram_term's gradient fed to
 * gyro_lorentz_rsgd_step (float64). Returns the number of target steps that were clipped. */
static int sg_compare(double lr, double max_step, double radius, double tol32)
{
    gyro_rng r;
    gyro_rng_seed(&r, 7);
    const double theta = 3.0, tol64 = 1e-11;
    int clipped = 0;
    for (int trial = 0; trial < 50; trial++) {
        float u[SG_ROW] __attribute__((aligned(64))), v[3][SG_ROW] __attribute__((aligned(64)));
        float h[SG_ROW] __attribute__((aligned(64)));
        double ud[SG_ROW] __attribute__((aligned(64))), vd[3][SG_ROW] __attribute__((aligned(64)));
        double hd[SG_ROW] __attribute__((aligned(64)));
        double ur[SG_DIM + 1], vr[3][SG_DIM + 1], du[SG_DIM + 1] = {0};
        sg_point(u, ud, &r, radius);
        for (int t = 0; t < 3; t++) sg_point(v[t], vd[t], &r, radius);
        memcpy(ur, ud, sizeof ur);
        for (int t = 0; t < 3; t++) memcpy(vr[t], vd[t], sizeof vr[t]);
        memset(h, 0, sizeof h);
        memset(hd, 0, sizeof hd);
        for (int t = 0; t < 3; t++) {
            int label = t == 0;
            /* reference: Euclidean gradient of the term, then one RSGD step on the target */
            double dw[SG_DIM + 1] = {0};
            gyro_lorentz_skipgram_term_f64(du, dw, ur, vr[t], label, theta, 1.0, SG_DIM);
            gyro_lorentz_rsgd_step_f64(vr[t], vr[t], dw, lr, max_step, SG_DIM);
            /* fused, float32 and float64, with the exact sigmoid */
            double s32 = gyro_lorentz_padded_inner_f32(u, v[t], SG_ROW);
            double s64 = gyro_lorentz_padded_inner_f64(ud, vd[t], SG_ROW);
            double s32_ref = -(double)u[0] * v[t][0];
            for (int k = 1; k <= SG_DIM; k++) s32_ref += (double)u[k] * v[t][k];
            ck_assert_double_eq_tol(s32, s32_ref, 1e-12 * fabs(s32_ref));
            ck_assert_double_eq_tol(s64, gyro_lorentz_inner_f64(ud, vd[t], SG_DIM), 1e-12 * fabs(s64));
            if (max_step > 0 && fabs(lr * (label - sg_sigm(s64 + theta))) * sqrt(s64 * s64 - 1) > max_step)
                clipped++;
            gyro_lorentz_skipgram_step_target_f32(h, v[t], u, s32, label - sg_sigm(s32 + theta), lr,
                                                  max_step, SG_ROW);
            gyro_lorentz_skipgram_step_target_f64(hd, vd[t], ud, s64, label - sg_sigm(s64 + theta), lr,
                                                  max_step, SG_ROW);
            for (int k = 0; k <= SG_DIM; k++) {
                double ref = vr[t][k];
                ck_assert_msg(fabs(v[t][k] - ref) <= tol32 * (1 + fabs(ref)),
                              "target %d coord %d: fused f32 %.9g reference %.9g", t, k, v[t][k], ref);
                ck_assert_msg(fabs(vd[t][k] - ref) <= tol64 * (1 + fabs(ref)),
                              "target %d coord %d: fused f64 %.17g reference %.17g", t, k, vd[t][k], ref);
            }
            for (int k = SG_DIM + 1; k < SG_ROW; k++) {
                ck_assert(v[t][k] == 0.0f && h[k] == 0.0f); /* padding stays zero */
                ck_assert(vd[t][k] == 0.0 && hd[k] == 0.0);
            }
        }
        /* h = Σ g v_old = −J ∂L/∂u: the centre step equals rsgd_step on ∂L/∂u */
        for (int k = 0; k <= SG_DIM; k++) {
            double want = -(k == 0 ? -du[k] : du[k]);
            ck_assert_msg(fabs(hd[k] - want) <= 1e-12 * (1 + fabs(want)), "h coord %d", k);
        }
        gyro_lorentz_rsgd_step_f64(ur, ur, du, lr, max_step, SG_DIM);
        gyro_lorentz_skipgram_step_centre_f32(u, h, lr, max_step, SG_ROW);
        gyro_lorentz_skipgram_step_centre_f64(ud, hd, lr, max_step, SG_ROW);
        for (int k = 0; k <= SG_DIM; k++) {
            ck_assert_msg(fabs(u[k] - ur[k]) <= tol32 * (1 + fabs(ur[k])), "centre coord %d: fused f32 %.9g reference %.9g",
                          k, u[k], ur[k]);
            ck_assert_msg(fabs(ud[k] - ur[k]) <= tol64 * (1 + fabs(ur[k])), "centre coord %d: fused f64 %.17g reference %.17g",
                          k, ud[k], ur[k]);
        }
        for (int k = SG_DIM + 1; k < SG_ROW; k++) ck_assert(u[k] == 0.0f && ud[k] == 0.0);
        ck_assert_double_eq_tol(gyro_lorentz_inner_f32(u, u, SG_DIM), -1.0, 1e-5 * u[0] * u[0]);
        ck_assert_double_eq_tol(gyro_lorentz_inner_f64(ud, ud, SG_DIM), -1.0, 1e-14 * ud[0] * ud[0]);
    }
    return clipped;
}

START_TEST(test_skipgram_step_small_steps)
{
    ck_assert_int_eq(sg_compare(0.05, 1.0, 0.3, 2e-5), 0);
}
END_TEST

START_TEST(test_skipgram_step_clipped)
{
    /* lr 5 with points ~2 apart: most target steps exceed max_step 0.5 and are clipped */
    int c = sg_compare(5.0, 0.5, 2.0, 5e-5);
    ck_assert_msg(c > 50, "only %d of 150 target steps were clipped", c);
}
END_TEST

START_TEST(test_skipgram_step_unclipped_large)
{
    sg_compare(0.8, 0.0, 1.0, 5e-5);
}
END_TEST

/* ---- rounding-aware re-projection ------------------------------------------------------------ */

START_TEST(test_reproject_rounded_far_f32)
{
    /* far points in float32: plain re-projection leaves |⟨x,x⟩_L + 1| ~ 2δx₀² (δ ≤ 2⁻²⁴), the
     * rounding-aware one brings it under 1e-6 while moving each coordinate by < 2ε·x₀. Its floor
     * is the granularity |xⱼ|·ulp(xⱼ) of the smallest coordinates, so the reach grows with the
     * dimension: x₀ up to 60 at dim 32, 300 (distance 6.4) at dim 100, 1000 at dim 300. */
    static const struct { int n; double x0max; } cfg[] = {{32, 60}, {50, 100}, {100, 300}, {300, 1000}};
    gyro_rng r;
    gyro_rng_seed(&r, 21);
    double worst_plain = 0.0, worst = 0.0;
    for (size_t ci = 0; ci < sizeof cfg / sizeof cfg[0]; ci++) {
        int n = cfg[ci].n;
        for (int trial = 0; trial < 300; trial++) {
            float x[301], y[301];
            /* |x_s| from 0 (the first trials) to x0max, log-uniform over the last factor 30 */
            double target = trial < 20 ? trial * 0.1 : cfg[ci].x0max * exp(-gyro_rng_uniform(&r) * log(30.0));
            double nn = 0.0;
            for (int k = 1; k <= n; k++) {
                x[k] = (float)gyro_rng_normal(&r);
                nn += (double)x[k] * x[k];
            }
            for (int k = 1; k <= n; k++) x[k] = (float)(x[k] * target / sqrt(nn + 1e-300));
            memcpy(y, x, sizeof x);
            ck_assert_int_eq(gyro_lorentz_reproject_f32(x, n), 0);
            ck_assert_int_eq(gyro_lorentz_reproject_rounded_f32(y, n), 0);
            ck_assert(x[0] == y[0]); /* x₀ is the plain one, the spatial part absorbs the residual */
            double er = -(double)y[0] * y[0] + 1.0;
            for (int k = 1; k <= n; k++) {
                er += (double)y[k] * y[k];
                /* each coordinate moves by less than 2ε·x₀ (2–4 ulps of x₀) */
                double d = fabs((double)y[k] - x[k]);
                ck_assert_msg(d < 2 * FLT_EPSILON * (double)x[0], "n %d coord %d moved by %g (x0 %g)", n, k, d, x[0]);
            }
            double pl = -(double)x[0] * x[0] + 1.0;
            for (int k = 1; k <= n; k++) pl += (double)x[k] * x[k];
            if (fabs(pl) > worst_plain) worst_plain = fabs(pl);
            if (fabs(er) > worst) worst = fabs(er);
            ck_assert_msg(fabs(er) < 1e-6, "n %d x0 %g: |<x,x>_L + 1| = %g after the rounding-aware re-projection",
                          n, y[0], fabs(er));
        }
    }
    printf("lorentz reproject f32 (dim 32..300, x0 up to 60..1000): max |<x,x>_L + 1| plain %.3g, "
           "rounding-aware %.3g\n",
           worst_plain, worst);
    ck_assert(worst_plain > 1e-3); /* the far points do defeat the plain re-projection */
    /* non-finite input: origin and -1, in both precisions */
    float bad[5] = {1, 2, NAN, 3, 4};
    ck_assert_int_eq(gyro_lorentz_reproject_rounded_f32(bad, 4), -1);
    ck_assert(bad[0] == 1.0f && bad[1] == 0.0f && bad[2] == 0.0f && bad[3] == 0.0f && bad[4] == 0.0f);
    double badd[3] = {1, INFINITY, 1};
    ck_assert_int_eq(gyro_lorentz_reproject_rounded_f64(badd, 2), -1);
    ck_assert(badd[0] == 1.0 && badd[1] == 0.0 && badd[2] == 0.0);
    /* float64: at double rounding, never worse than the plain re-projection's bound */
    for (int trial = 0; trial < 200; trial++) {
        double xd[17];
        rnd_hyp(xd, 16, 100.0, &r);
        ck_assert_int_eq(gyro_lorentz_reproject_rounded_f64(xd, 16), 0);
        double e = fabs(gyro_lorentz_inner_f64(xd, xd, 16) + 1.0);
        ck_assert_msg(e <= 4e-16 * xd[0] * xd[0] + 1e-15, "f64: %g at x0 %g", e, xd[0]);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("hyp_props");
    TCase *tc = tcase_create("geometry");
    tcase_add_test(tc, test_left_cancellation);
    tcase_add_test(tc, test_gyration_identities);
    tcase_add_test(tc, test_scalar_and_matvec);
    tcase_add_test(tc, test_ball_exp_log);
    tcase_add_test(tc, test_lorentz_exp_log);
    tcase_add_test(tc, test_cross_model);
    tcase_add_test(tc, test_skipgram_terms);
    tcase_add_test(tc, test_f32_batches_match_f64);
    tcase_add_test(tc, test_skipgram_step_small_steps);
    tcase_add_test(tc, test_skipgram_step_clipped);
    tcase_add_test(tc, test_skipgram_step_unclipped_large);
    tcase_add_test(tc, test_reproject_rounded_far_f32);
    suite_add_tcase(s, tc);
    TCase *to = tcase_create("optimizers");
    tcase_set_timeout(to, 120);
    tcase_add_test(to, test_lorentz_rsgd_million_steps_f32);
    tcase_add_test(to, test_lorentz_rsgd_far_f64);
    tcase_add_test(to, test_poincare_rsgd_stays_in_ball_f32);
    suite_add_tcase(s, to);
    TCase *tr = tcase_create("robustness");
    tcase_add_test(tr, test_ball_extreme_inputs_finite);
    tcase_add_test(tr, test_project_and_report);
    tcase_add_test(tr, test_lorentz_extreme_inputs_finite);
    tcase_add_test(tr, test_ratio_helpers);
    tcase_add_test(tr, test_logmap_at_base_point);
    suite_add_tcase(s, tr);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nf == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

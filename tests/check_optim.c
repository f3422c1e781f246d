/* check_optim.c — Check suite for models/optim: RMSProp, Adam and SGD steps against the formulas
 * evaluated by hand in double, Riemannian SGD in the ball against the math core's rsgd step,
 * step clipping and staying inside the ball, Riemannian Adam against geoopt's formula and on
 * a toy problem, Riemannian Adam on the hyperboloid (its first step against the math core's exp
 * map, the first moment's parallel transport against the geodesic's velocity, a toy problem at
 * c = 2 with the rows kept on the manifold), NaN stop, global-norm clipping, frozen tensors,
 * convergence on a quadratic, and the SGDR schedule. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/hyp/lorentz.h"
#include "models/hyp/poincare.h"
#include "models/optim.h"

static gyro_optim_tensor euclid(float *w, float *g, size_t rows, size_t cols)
{
    gyro_optim_tensor t = {.name = "w", .w = w, .g = g, .rows = rows, .cols = cols,
                           .manifold = GYRO_OPTIM_MANIFOLD_EUCLIDEAN};
    return t;
}

START_TEST(test_rmsprop_step)
{
    float w[3] = {1.0f, -2.0f, 0.5f}, g[3] = {0.1f, -0.4f, 0.0f};
    gyro_optim_config c = gyro_optim_config_default();
    c.lr = 0.01;
    gyro_optim_tensor t = euclid(w, g, 1, 3);
    gyro_optim o;
    ck_assert_int_eq(gyro_optim_init(&o, &c, &t, 1), GYRO_OK);
    double v[3] = {0}, ref[3] = {1.0, -2.0, 0.5};
    for (int step = 0; step < 3; step++) {
        ck_assert_int_eq(gyro_optim_step(&o, 1.0), GYRO_OK);
        for (int i = 0; i < 3; i++) {
            double gi = g[i];
            v[i] = 0.9 * v[i] + 0.1 * gi * gi;
            ref[i] -= 0.01 * gi / (sqrt(v[i]) + 1e-7);
        }
    }
    for (int i = 0; i < 3; i++) ck_assert_double_eq_tol(w[i], ref[i], 1e-5);
    ck_assert_double_eq_tol(o.last_grad_norm, sqrt(0.01 + 0.16), 1e-6);
    gyro_optim_free(&o);
}
END_TEST

START_TEST(test_adam_step_and_schedule_factor)
{
    float w[2] = {0.3f, -0.7f}, g[2];
    gyro_optim_config c = gyro_optim_config_default();
    c.kind = GYRO_OPTIM_ADAM;
    c.lr = 0.05;
    c.eps = 1e-8;
    gyro_optim_tensor t = euclid(w, g, 2, 1);
    gyro_optim o;
    ck_assert_int_eq(gyro_optim_init(&o, &c, &t, 1), GYRO_OK);
    double m[2] = {0}, v[2] = {0}, ref[2] = {0.3, -0.7};
    for (int step = 1; step <= 4; step++) {
        g[0] = 0.2f * step;
        g[1] = -0.1f;
        double factor = 1.0 / step;
        ck_assert_int_eq(gyro_optim_step(&o, factor), GYRO_OK);
        for (int i = 0; i < 2; i++) {
            m[i] = 0.9 * m[i] + 0.1 * g[i];
            v[i] = 0.999 * v[i] + 0.001 * (double)g[i] * g[i];
            double mh = m[i] / (1 - pow(0.9, step)), vh = v[i] / (1 - pow(0.999, step));
            ref[i] -= 0.05 * factor * mh / (sqrt(vh) + 1e-8);
        }
    }
    for (int i = 0; i < 2; i++) ck_assert_double_eq_tol(w[i], ref[i], 1e-5);
    gyro_optim_free(&o);
}
END_TEST

START_TEST(test_adam_converges)
{
    /* minimise Σ (w_i − i)² */
    float w[8] = {0}, g[8];
    gyro_optim_config c = gyro_optim_config_default();
    c.kind = GYRO_OPTIM_ADAM;
    c.lr = 0.1;
    gyro_optim_tensor t = euclid(w, g, 8, 1);
    gyro_optim o;
    ck_assert_int_eq(gyro_optim_init(&o, &c, &t, 1), GYRO_OK);
    for (int s = 0; s < 2000; s++) {
        for (int i = 0; i < 8; i++) g[i] = 2.0f * (w[i] - (float)i);
        ck_assert_int_eq(gyro_optim_step(&o, gyro_sgdr_factor(&(gyro_sgdr){500, 1, 0.0}, s / 100.0, NULL)), GYRO_OK);
    }
    for (int i = 0; i < 8; i++) ck_assert_double_eq_tol(w[i], i, 1e-2);
    gyro_optim_free(&o);
}
END_TEST

START_TEST(test_rsgd_matches_core_and_stays_in_ball)
{
    enum { N = 5 };
    float x[2][N] = {{0.1f, -0.2f, 0.3f, 0.0f, 0.05f}, {0.6f, 0.5f, -0.3f, 0.2f, 0.1f}};
    float g[2][N] = {{0.3f, 0.1f, -0.2f, 0.4f, 0.0f}, {-1.0f, 0.2f, 0.1f, 0.0f, 0.3f}};
    float ref[2][N];
    float c = 1.0f, lr = 0.05f;
    for (int r = 0; r < 2; r++) gyro_poincare_rsgd_step_f32(ref[r], x[r], g[r], c, lr, N);
    gyro_optim_config cfg = gyro_optim_config_default();
    cfg.ball_lr = lr;
    cfg.ball_max_step = 0; /* no clipping: must equal the math core's step */
    gyro_optim_tensor t = {.name = "b", .w = &x[0][0], .g = &g[0][0], .rows = 2, .cols = N,
                           .manifold = GYRO_OPTIM_MANIFOLD_POINCARE, .c = c};
    gyro_optim o;
    ck_assert_int_eq(gyro_optim_init(&o, &cfg, &t, 1), GYRO_OK);
    ck_assert_int_eq(gyro_optim_step(&o, 1.0), GYRO_OK);
    for (int r = 0; r < 2; r++)
        for (int i = 0; i < N; i++) ck_assert_double_eq_tol(x[r][i], ref[r][i], 2e-6);
    /* a row with a zero gradient (an embedding absent from the batch) stays bit for bit */
    float keep[N];
    memcpy(keep, x[1], sizeof keep);
    memset(g[1], 0, sizeof g[1]);
    ck_assert_int_eq(gyro_optim_step(&o, 1.0), GYRO_OK);
    ck_assert_int_eq(memcmp(keep, x[1], sizeof keep), 0);
    gyro_optim_free(&o);

    /* a huge gradient: the clipped step keeps the point inside the ball and moves it by at
     * most the clip (hyperbolic distance) */
    cfg.ball_max_step = 0.5;
    float y[N] = {0.2f, 0.1f, 0.0f, -0.1f, 0.3f}, y0[N], gy[N] = {1e6f, -1e6f, 1e6f, 0, 1e6f};
    memcpy(y0, y, sizeof y);
    gyro_optim_tensor t2 = {.name = "b", .w = y, .g = gy, .rows = 1, .cols = N,
                            .manifold = GYRO_OPTIM_MANIFOLD_POINCARE, .c = c};
    ck_assert_int_eq(gyro_optim_init(&o, &cfg, &t2, 1), GYRO_OK);
    for (int s = 0; s < 50; s++) ck_assert_int_eq(gyro_optim_step(&o, 1.0), GYRO_OK);
    double n2 = 0;
    for (int i = 0; i < N; i++) n2 += (double)y[i] * y[i];
    ck_assert(sqrt(n2) < 1.0);
    ck_assert(isfinite(n2));
    gyro_optim_free(&o);
    memcpy(y, y0, sizeof y);
    ck_assert_int_eq(gyro_optim_init(&o, &cfg, &t2, 1), GYRO_OK);
    ck_assert_int_eq(gyro_optim_step(&o, 1.0), GYRO_OK);
    ck_assert_double_le(gyro_poincare_dist_f32(y, y0, c, N), 0.5 + 1e-3);
    gyro_optim_free(&o);
}
END_TEST

/* Riemannian SGD on the hyperboloid of curvature −c: with c = 1 the step is the math core's
 * rsgd_step; with c = 2 the rows stay on ⟨x,x⟩_L = −1/2 and descend the distance to a target
 * (loss −⟨x,p⟩_L, minimal at x = p), and a row with zero gradient does not move. */
START_TEST(test_rsgd_hyperboloid)
{
    enum { R = 3, N = 4 };
    for (int pass = 0; pass < 2; pass++) {
        const double c = pass ? 2.0 : 1.0, k = 1.0 / c;
        float w[R * (N + 1)], g[R * (N + 1)], want[N + 1], p[N + 1] = {0};
        for (int r = 0; r < R; r++) {
            double q = k;
            for (int j = 1; j <= N; j++) {
                w[r * (N + 1) + j] = (float)(0.3 * (r + 1) * (j % 2 ? 1 : -1));
                q += (double)w[r * (N + 1) + j] * w[r * (N + 1) + j];
            }
            w[r * (N + 1)] = (float)sqrt(q);
        }
        p[0] = (float)sqrt(k + 0.25);
        p[1] = 0.5f;
        gyro_optim_config cfg = gyro_optim_config_default();
        cfg.ball_lr = 0.1;
        gyro_optim_tensor t = {.name = "pts", .w = w, .g = g, .rows = R, .cols = N + 1,
                               .manifold = GYRO_OPTIM_MANIFOLD_LORENTZ, .c = (float)c};
        gyro_optim o;
        ck_assert_int_eq(gyro_optim_init(&o, &cfg, &t, 1), GYRO_OK);
        double first = 0, last = 0;
        for (int step = 0; step < 200; step++) {
            double loss = 0;
            for (int r = 0; r < R; r++) {
                float *x = w + r * (N + 1), *gr = g + r * (N + 1);
                loss += (double)x[0] * p[0];
                for (int j = 1; j <= N; j++) loss -= (double)x[j] * p[j];
                /* ∂(−⟨x,p⟩_L)/∂x = (p₀, −p_s); row 2 gets no gradient */
                gr[0] = r == 2 ? 0.0f : p[0];
                for (int j = 1; j <= N; j++) gr[j] = r == 2 ? 0.0f : -p[j];
            }
            if (step == 0) first = loss;
            last = loss;
            if (step == 0 && pass == 0) { /* c = 1: the core's step */
                memcpy(want, w, sizeof want);
                gyro_lorentz_rsgd_step_f32(want, want, g, 0.1f, (float)cfg.ball_max_step, N);
            }
            float row2[N + 1];
            memcpy(row2, w + 2 * (N + 1), sizeof row2);
            ck_assert_int_eq(gyro_optim_step(&o, 1.0), GYRO_OK);
            ck_assert_int_eq(memcmp(row2, w + 2 * (N + 1), sizeof row2), 0);
            if (step == 0 && pass == 0)
                for (int j = 0; j <= N; j++) ck_assert(fabsf(want[j] - w[j]) < 1e-6f);
            for (int r = 0; r < R; r++) {
                const float *x = w + r * (N + 1);
                double q = -(double)x[0] * x[0];
                for (int j = 1; j <= N; j++) q += (double)x[j] * x[j];
                ck_assert_msg(fabs(q + k) < 1e-5 * x[0] * x[0], "off the hyperboloid: %g", q + k);
            }
        }
        ck_assert_double_lt(last, first - 0.1);
        /* rows 0 and 1 end at the target point */
        for (int j = 0; j <= N; j++) ck_assert(fabsf(w[j] - p[j]) < 1e-3f);
        gyro_optim_free(&o);
    }
}
END_TEST

START_TEST(test_nan_stop_clip_frozen)
{
    float a[2] = {1, 2}, ga[2] = {3, 4}, b[2] = {5, 6}, gb[2] = {NAN, 0};
    gyro_optim_config c = gyro_optim_config_default();
    c.kind = GYRO_OPTIM_SGD;
    c.lr = 1.0;
    gyro_optim_tensor t[2] = {euclid(a, ga, 1, 2), euclid(b, gb, 1, 2)};
    t[1].name = "bad";
    gyro_optim o;
    ck_assert_int_eq(gyro_optim_init(&o, &c, t, 2), GYRO_OK);
    ck_assert_int_eq(gyro_optim_step(&o, 1.0), GYRO_ERR_NAN);
    ck_assert_ptr_nonnull(strstr(gyro_error_message(), "bad"));
    ck_assert(a[0] == 1 && a[1] == 2); /* nothing updated */
    gyro_optim_free(&o);

    t[1].frozen = 1; /* a frozen tensor is neither checked nor updated */
    c.clip_norm = 1.0;
    ck_assert_int_eq(gyro_optim_init(&o, &c, t, 2), GYRO_OK);
    ck_assert_int_eq(gyro_optim_step(&o, 1.0), GYRO_OK);
    ck_assert_double_eq_tol(a[0], 1 - 0.6, 1e-6); /* |g| = 5 clipped to 1 */
    ck_assert_double_eq_tol(a[1], 2 - 0.8, 1e-6);
    ck_assert(b[0] == 5 && b[1] == 6);
    gyro_optim_zero_grad(&o);
    ck_assert(ga[0] == 0 && ga[1] == 0);
    gyro_optim_free(&o);

    c.rho = 1.5;
    ck_assert_int_eq(gyro_optim_init(&o, &c, t, 2), GYRO_ERR_USAGE);
    c = gyro_optim_config_default();
    gyro_optim_tensor bt = {.name = "b", .w = a, .g = ga, .rows = 1, .cols = 2,
                            .manifold = GYRO_OPTIM_MANIFOLD_POINCARE, .c = 0};
    ck_assert_int_eq(gyro_optim_init(&o, &c, &bt, 1), GYRO_ERR_USAGE);
}
END_TEST

START_TEST(test_sgdr)
{
    gyro_sgdr s = {.t0 = 2, .t_mult = 2, .min_factor = 0.1};
    int cyc;
    ck_assert_double_eq_tol(gyro_sgdr_factor(&s, 0, &cyc), 1.0, 1e-12);
    ck_assert_int_eq(cyc, 0);
    ck_assert_double_eq_tol(gyro_sgdr_factor(&s, 1, NULL), 0.55, 1e-12);
    ck_assert(gyro_sgdr_factor(&s, 1.999, NULL) < 0.11);
    ck_assert_double_eq_tol(gyro_sgdr_factor(&s, 2, &cyc), 1.0, 1e-12); /* warm restart */
    ck_assert_int_eq(cyc, 1);
    ck_assert_double_eq_tol(gyro_sgdr_factor(&s, 4, NULL), 0.55, 1e-12); /* cycle of 4 */
    ck_assert_double_eq_tol(gyro_sgdr_factor(&s, 6, &cyc), 1.0, 1e-12);
    ck_assert_int_eq(cyc, 2);
    gyro_sgdr off = {0};
    ck_assert_double_eq(gyro_sgdr_factor(&off, 3.7, NULL), 1.0);
    ck_assert_double_eq(gyro_sgdr_factor(NULL, 3.7, NULL), 1.0);
}
END_TEST

/* Riemannian Adam (geoopt's RiemannianAdam on the Poincaré ball), two steps of one row by hand
 * in double: g_R = ∇E/λ_x², m ← β1m + (1−β1)g_R, v ← β2v + (1−β2)λ_x²|g_R|²,
 * y = proj(x − η m̂/(√v̂ + ε)), m ← (λ_x/λ_y) gyr[y, −x] m, the gyration evaluated here as
 * ⊖(a⊕b) ⊕ (a ⊕ (b ⊕ w)) by Möbius additions (optim.c uses the closed form). */
static void radam_ref(double *x, double *m, double *v, const double *g, double c, double lr,
                      double b1, double b2, int t, double eps, int n)
{
    double xx = 0, rr = 0, rg[8], y[8], nb[8], a_b[8], bw[8], abw[8], w[8], out[8], mn = 0;
    for (int i = 0; i < n; i++) xx += x[i] * x[i];
    double lx = 2 / (1 - c * xx);
    for (int i = 0; i < n; i++) rg[i] = g[i] / (lx * lx), rr += rg[i] * rg[i];
    *v = b2 * *v + (1 - b2) * lx * lx * rr;
    double bc1 = 1 - pow(b1, t), bc2 = 1 - pow(b2, t), den = sqrt(*v / bc2) + eps, yy = 0;
    for (int i = 0; i < n; i++) {
        m[i] = b1 * m[i] + (1 - b1) * rg[i];
        y[i] = x[i] - lr * (m[i] / bc1) / den;
        yy += y[i] * y[i];
        mn += m[i] * m[i];
    }
    ck_assert(sqrt(c * yy) < 0.99); /* no projection in this example */
    double k = 0.1 / (sqrt(c) * sqrt(mn)); /* gyr is linear: apply it to a point inside */
    for (int i = 0; i < n; i++) nb[i] = -x[i], w[i] = k * m[i];
    gyro_poincare_mobius_add_f64(a_b, y, nb, c, n);
    gyro_poincare_mobius_add_f64(bw, nb, w, c, n);
    gyro_poincare_mobius_add_f64(abw, y, bw, c, n);
    for (int i = 0; i < n; i++) a_b[i] = -a_b[i];
    gyro_poincare_mobius_add_f64(out, a_b, abw, c, n);
    double ly = 2 / (1 - c * yy);
    for (int i = 0; i < n; i++) m[i] = out[i] / k * lx / ly, x[i] = y[i];
}

START_TEST(test_radam_matches_geoopt_formula_and_converges)
{
    enum { N = 5 };
    float x[N] = {0.3f, -0.2f, 0.1f, 0.4f, -0.1f};
    float g[N] = {0.5f, 0.2f, -0.4f, 0.1f, 0.3f};
    const double c = 0.7, lr = 0.05;
    double xd[N], md[N] = {0}, vd = 0, gd[N];
    for (int i = 0; i < N; i++) xd[i] = x[i], gd[i] = g[i];
    gyro_optim_config cfg = gyro_optim_config_default();
    cfg.ball_kind = GYRO_OPTIM_BALL_RADAM;
    cfg.ball_lr = lr;
    cfg.ball_max_step = 0;
    cfg.eps = 1e-8;
    gyro_optim_tensor t = {.name = "b", .w = x, .g = g, .rows = 1, .cols = N,
                           .manifold = GYRO_OPTIM_MANIFOLD_POINCARE, .c = (float)c};
    gyro_optim o;
    ck_assert_int_eq(gyro_optim_init(&o, &cfg, &t, 1), GYRO_OK);
    for (int step = 1; step <= 2; step++) {
        ck_assert_int_eq(gyro_optim_step(&o, 1.0), GYRO_OK);
        radam_ref(xd, md, &vd, gd, c, lr, cfg.beta1, cfg.beta2, step, cfg.eps, N);
        for (int i = 0; i < N; i++) ck_assert_double_eq_tol(x[i], xd[i], 2e-6);
        const float *m = o.state + o.offset[0];
        for (int i = 0; i < N; i++) ck_assert_double_eq_tol(m[i], md[i], 1e-6);
        ck_assert_double_eq_tol(m[N], vd, 1e-7);
        if (step == 1) /* the second step has a different gradient */
            for (int i = 0; i < N; i++) g[i] = -0.3f * g[i] + 0.1f, gd[i] = g[i];
    }
    gyro_optim_free(&o);

    /* a toy problem: E(x) = Σ_r |x_r − t_r|² with the targets inside the ball (one near the
     * boundary); Riemannian Adam brings every row to its target */
    float w[2][N] = {{0}, {0.1f, 0.1f, 0.1f, 0.1f, 0.1f}}, gw[2][N];
    const float tg[2][N] = {{0.5f, -0.3f, 0.2f, 0.1f, 0.0f}, {-0.7f, 0.5f, 0.3f, -0.2f, 0.1f}};
    gyro_optim_tensor t2 = {.name = "b", .w = &w[0][0], .g = &gw[0][0], .rows = 2, .cols = N,
                            .manifold = GYRO_OPTIM_MANIFOLD_POINCARE, .c = 1.0f};
    cfg.ball_lr = 0.02;
    ck_assert_int_eq(gyro_optim_init(&o, &cfg, &t2, 1), GYRO_OK);
    for (int s = 0; s < 3000; s++) {
        for (int r = 0; r < 2; r++)
            for (int i = 0; i < N; i++) gw[r][i] = 2 * (w[r][i] - tg[r][i]);
        ck_assert_int_eq(gyro_optim_step(&o, s < 2000 ? 1.0 : 0.1), GYRO_OK);
    }
    for (int r = 0; r < 2; r++)
        for (int i = 0; i < N; i++) ck_assert_double_eq_tol(w[r][i], tg[r][i], 2e-3);
    gyro_optim_free(&o);
    cfg.ball_kind = (gyro_optim_ball_kind)7;
    ck_assert_int_eq(gyro_optim_init(&o, &cfg, &t2, 1), GYRO_ERR_USAGE);
}
END_TEST

/* ⟨a,b⟩_L of (n+1) doubles */
static double mink(const double *a, const double *b, int n)
{
    double s = -a[0] * b[0];
    for (int i = 1; i <= n; i++) s += a[i] * b[i];
    return s;
}

START_TEST(test_radam_hyperboloid)
{
    enum { N = 4 };
    gyro_optim_config cfg = gyro_optim_config_default();
    cfg.ball_kind = GYRO_OPTIM_BALL_RADAM;
    cfg.ball_max_step = 0;
    cfg.eps = 1e-8;
    const double lr = 0.3;
    cfg.ball_lr = lr;
    /* 1. c = 1, zero state: m̂ = g_R, v̂ = |g_R|², so the first step is exp_x(−η g_R/(|g_R| + ε));
     * the math core's egrad2rgrad and expmap give the reference. The stored first moment is
     * (1−β1) g_R transported to the new point: along the geodesic t ↦ exp_x(t u), the
     * transport of u is the velocity at t = 1, |u|_L sinh(|u|_L) x + cosh(|u|_L) u. */
    float x[N + 1] = {0, 0.3f, -0.5f, 0.2f, 0.7f}, g[N + 1] = {0.4f, -0.2f, 0.5f, 0.1f, -0.3f};
    double q = 1;
    for (int i = 1; i <= N; i++) q += (double)x[i] * x[i];
    x[0] = (float)sqrt(q);
    double xd[N + 1], gd[N + 1], rg[N + 1], u[N + 1], want[N + 1], vel[N + 1];
    for (int i = 0; i <= N; i++) xd[i] = x[i], gd[i] = g[i];
    gyro_lorentz_egrad2rgrad_f64(rg, xd, gd, N);
    const double rn = sqrt(mink(rg, rg, N));
    for (int i = 0; i <= N; i++) u[i] = -lr * rg[i] / (rn + cfg.eps);
    gyro_lorentz_expmap_f64(want, xd, u, N);
    const double un = sqrt(mink(u, u, N));
    for (int i = 0; i <= N; i++) vel[i] = un * sinh(un) * xd[i] + cosh(un) * u[i];
    gyro_optim_tensor t = {.name = "pts", .w = x, .g = g, .rows = 1, .cols = N + 1,
                           .manifold = GYRO_OPTIM_MANIFOLD_LORENTZ, .c = 1.0f};
    gyro_optim o;
    ck_assert_int_eq(gyro_optim_init(&o, &cfg, &t, 1), GYRO_OK);
    ck_assert_int_eq(gyro_optim_step(&o, 1.0), GYRO_OK);
    for (int i = 0; i <= N; i++) ck_assert_double_eq_tol(x[i], want[i], 2e-6 * (1 + fabs(want[i])));
    const float *m = o.state + o.offset[0];
    /* m = (1−β1) g_R = −(1−β1)(|g_R|+ε)/η · u, so P(m) = the same multiple of the velocity */
    const double k = -(1 - cfg.beta1) * (rn + cfg.eps) / lr;
    for (int i = 0; i <= N; i++) ck_assert_double_eq_tol(m[i], k * vel[i], 2e-6 * (1 + fabs(k * vel[i])));
    ck_assert_double_eq_tol(m[N + 1], (1 - cfg.beta2) * rn * rn, 1e-6 * rn * rn); /* v */
    double x1[N + 1], md[N + 1];
    for (int i = 0; i <= N; i++) x1[i] = x[i], md[i] = m[i];
    ck_assert(fabs(mink(x1, md, N)) < 1e-5);                                    /* m ∈ T_y */
    ck_assert_double_eq_tol(sqrt(mink(md, md, N)), (1 - cfg.beta1) * rn, 1e-5); /* isometry */
    /* a zero gradient still moves the row by its momentum (the row is not skipped) */
    memset(g, 0, sizeof g);
    ck_assert_int_eq(gyro_optim_step(&o, 1.0), GYRO_OK);
    double moved = 0;
    for (int i = 0; i <= N; i++) moved += fabs(x[i] - x1[i]);
    ck_assert(moved > 1e-3);
    gyro_optim_free(&o);

    /* 2. c = 2: rows brought to a target p by minimising −⟨x,p⟩_L (minimum 1/c at x = p), every
     * row on the hyperboloid at every step; a row that never had a gradient stays as it was */
    enum { R = 3 };
    const double c = 2.0, kc = 1.0 / c;
    float w[R * (N + 1)], gw[R * (N + 1)], p[N + 1] = {0, 0.5f, -0.25f, 0.1f, 0.3f};
    q = kc;
    for (int j = 1; j <= N; j++) q += (double)p[j] * p[j];
    p[0] = (float)sqrt(q);
    for (int r = 0; r < R; r++) {
        q = kc;
        for (int j = 1; j <= N; j++) {
            w[r * (N + 1) + j] = (float)(0.4 * (r + 1) * (j % 2 ? -1 : 1));
            q += (double)w[r * (N + 1) + j] * w[r * (N + 1) + j];
        }
        w[r * (N + 1)] = (float)sqrt(q);
    }
    float row2[N + 1];
    memcpy(row2, w + 2 * (N + 1), sizeof row2);
    cfg.ball_lr = 0.05;
    cfg.ball_max_step = 1.0;
    gyro_optim_tensor t2 = {.name = "pts", .w = w, .g = gw, .rows = R, .cols = N + 1,
                            .manifold = GYRO_OPTIM_MANIFOLD_LORENTZ, .c = (float)c};
    ck_assert_int_eq(gyro_optim_init(&o, &cfg, &t2, 1), GYRO_OK);
    for (int step = 0; step < 1500; step++) {
        for (int r = 0; r < R; r++)
            for (int j = 0; j <= N; j++)
                gw[r * (N + 1) + j] = r == 2 ? 0.0f : j == 0 ? p[0] : -p[j];
        ck_assert_int_eq(gyro_optim_step(&o, step < 1000 ? 1.0 : 0.1), GYRO_OK);
        for (int r = 0; r < R; r++) {
            const float *xr = w + r * (N + 1);
            double qq = -(double)xr[0] * xr[0];
            for (int j = 1; j <= N; j++) qq += (double)xr[j] * xr[j];
            ck_assert_msg(fabs(qq + kc) < 1e-5 * xr[0] * xr[0], "off the hyperboloid: %g", qq + kc);
        }
    }
    for (int r = 0; r < 2; r++)
        for (int j = 0; j <= N; j++) ck_assert_double_eq_tol(w[r * (N + 1) + j], p[j], 2e-3);
    ck_assert_int_eq(memcmp(row2, w + 2 * (N + 1), sizeof row2), 0);
    gyro_optim_free(&o);
}
END_TEST

/* The 8-lane RMSProp and Adam loops against the plain float32 loop (the reference the vector
 * code must reproduce bit for bit: same operations, same order, no contraction) on a length
 * with a tail (8·k + 5), with weight decay and clipping (gs ≠ 1); the global norm in double. */
START_TEST(test_vector_updates_match_scalar_loop)
{
    enum { N = 8 * 9 + 5 };
    for (int kind = 0; kind < 2; kind++) {
        float w[N], g[N], rw[N], rm[N] = {0}, rv[N] = {0};
        gyro_optim_config c = gyro_optim_config_default();
        c.kind = kind ? GYRO_OPTIM_ADAM : GYRO_OPTIM_RMSPROP;
        c.lr = 0.01;
        c.weight_decay = 0.03;
        c.clip_norm = 0.5;
        gyro_optim_tensor t = euclid(w, g, 1, N);
        gyro_optim o;
        ck_assert_int_eq(gyro_optim_init(&o, &c, &t, 1), GYRO_OK);
        for (int i = 0; i < N; i++) rw[i] = w[i] = (float)sin(0.7 * i) * 0.8f;
        for (int step = 1; step <= 3; step++) {
            double sq = 0.0;
            for (int i = 0; i < N; i++) {
                g[i] = (float)cos(1.3 * i + step) * (i % 7 == 3 ? 0.0f : 0.2f);
                sq += (double)g[i] * g[i];
            }
            ck_assert_int_eq(gyro_optim_step(&o, 1.0), GYRO_OK);
            ck_assert_double_eq_tol(o.last_grad_norm, sqrt(sq), 1e-12 * sqrt(sq));
            const float gs = sqrt(sq) > c.clip_norm ? (float)(c.clip_norm / o.last_grad_norm) : 1.0f;
            const float lr = (float)c.lr, wd = (float)c.weight_decay, eps = (float)c.eps;
            const float b1 = (float)c.beta1, b2 = (float)c.beta2, rho = (float)c.rho;
            const float bc1 = (float)(1.0 - pow(c.beta1, step)), bc2 = (float)(1.0 - pow(c.beta2, step));
            for (int i = 0; i < N; i++) {
                float gi = g[i] * gs;
                if (kind) {
                    rm[i] = b1 * rm[i] + (1.0f - b1) * gi;
                    rv[i] = b2 * rv[i] + (1.0f - b2) * gi * gi;
                    float mh = rm[i] / bc1, vh = rv[i] / bc2;
                    rw[i] -= lr * (mh / (sqrtf(vh) + eps) + wd * rw[i]);
                } else {
                    rv[i] = rho * rv[i] + (1.0f - rho) * gi * gi;
                    rw[i] -= lr * (gi / (sqrtf(rv[i]) + eps) + wd * rw[i]);
                }
            }
            ck_assert_int_eq(memcmp(w, rw, sizeof w), 0);
        }
        gyro_optim_free(&o);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("optim");
    TCase *tc = tcase_create("optim");
    tcase_add_test(tc, test_rmsprop_step);
    tcase_add_test(tc, test_vector_updates_match_scalar_loop);
    tcase_add_test(tc, test_adam_step_and_schedule_factor);
    tcase_add_test(tc, test_adam_converges);
    tcase_add_test(tc, test_rsgd_matches_core_and_stays_in_ball);
    tcase_add_test(tc, test_rsgd_hyperboloid);
    tcase_add_test(tc, test_radam_matches_geoopt_formula_and_converges);
    tcase_add_test(tc, test_radam_hyperboloid);
    tcase_add_test(tc, test_nan_stop_clip_frozen);
    tcase_add_test(tc, test_sgdr);
    suite_add_tcase(s, tc);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? 1 : 0;
}

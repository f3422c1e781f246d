/* sgns.h — the inner kernels of char2vec: skip-gram negative-sampling updates on padded rows.
 *
 * Rows are `row` floats (a multiple of 16, 64-byte aligned, zero padding past the used width),
 * so every loop runs over whole 4-float lanes without remainders and the zero padding stays
 * zero. Sums (dot products and squared norms) accumulate in double lanes (DESIGN.md: reductions
 * that feed a square root or a division are accumulated in double).
 *
 * Hyperbolic update of one target v (a context or negative row, point on the hyperboloid, time
 * first) for the centre u, with s = ⟨u,v⟩_L and g = y − σ(s + θ) (the derivative of the
 * log-likelihood log σ(±(s+θ)) with respect to s):
 *   Minkowski gradient of the log-likelihood with respect to v: g·u (appendix B of the seed);
 *   tangent step p = lr·g·proj_v(u) = a(u + s v), a = lr·g, whose Lorentz norm is closed-form:
 *     ⟨p,p⟩_L = a²(⟨u,u⟩ + 2s⟨u,v⟩ + s²⟨v,v⟩) = a²(s² − 1);
 *   clip |p|_L to max_step (scale a), then exp_v(p) = cosh|p| v + (sinh|p|/|p|) p
 *     = (cosh|p| + sinhc|p|·a·s) v + (sinhc|p|·a) u            (Nickel & Kiela 2018, eq. 9);
 *   re-project x₀ = √(1 + |x_s|²). The centre's gradient accumulates h += g·v_old.
 * Centre update with q = ⟨u,h⟩_L: p = lr·(h + q u), ⟨p,p⟩_L = lr²(⟨h,h⟩_L + q²), then the same
 * exp map, u ← (cosh|p| + sinhc|p|·lr·q) u + (sinhc|p|·lr) h, and re-projection.
 * These equal gyro_lorentz_rsgd_step_f32 (models/hyp/lorentz.h) applied to the Euclidean
 * gradient of gyro_lorentz_skipgram_term_f32 — check_char2vec compares them — but cost two
 * passes over a row per target instead of six.
 *
 * Euclidean twin (word2vec): s = u·v, g = y − σ(s); h += g v; v += lr g u; finally u += lr h.
 */
#ifndef GYRO_EMBEDDINGS_SGNS_H
#define GYRO_EMBEDDINGS_SGNS_H

#include <math.h>
#include <stddef.h>

#include "models/hyp/hyp_consts.h"

#define GYRO_SGNS_SIG_MAX 8.0
#define GYRO_SGNS_SIG_N 2048

/* σ(x) and −log σ(x) tabulated over [−GYRO_SGNS_SIG_MAX, GYRO_SGNS_SIG_MAX]. */
typedef struct gyro_sgns_tables {
    float sig[GYRO_SGNS_SIG_N + 1];
    float nlsig[GYRO_SGNS_SIG_N + 1];
} gyro_sgns_tables;

/* Fill the tables (double-precision formulas, stored as float). */
void gyro_sgns_tables_init(gyro_sgns_tables *t);

/* σ(x) from the table and −log σ(±x) (the loss of label 1 / 0) into *loss.
 * x must be finite. Outside the range σ is 0 or 1 and the loss is linear (−x or 0). */
static inline double gyro_sgns_sigmoid(const gyro_sgns_tables *t, double x, int label, double *loss)
{
    const double scale = GYRO_SGNS_SIG_N / (2.0 * GYRO_SGNS_SIG_MAX);
    double xs = label ? x : -x; /* loss = −log σ(xs) */
    if (xs >= GYRO_SGNS_SIG_MAX) *loss = 0.0;
    else if (xs <= -GYRO_SGNS_SIG_MAX) *loss = -xs;
    else *loss = t->nlsig[(int)((xs + GYRO_SGNS_SIG_MAX) * scale + 0.5)];
    if (x >= GYRO_SGNS_SIG_MAX) return 1.0;
    if (x <= -GYRO_SGNS_SIG_MAX) return 0.0;
    return t->sig[(int)((x + GYRO_SGNS_SIG_MAX) * scale + 0.5)];
}

typedef float gyro_v4f __attribute__((vector_size(16)));
typedef double gyro_v4d __attribute__((vector_size(32)));

static inline double gyro_sgns_hsum(gyro_v4d a)
{
    return (a[0] + a[1]) + (a[2] + a[3]);
}

/* Σ x_i y_i over a padded row, in double. */
static inline double gyro_sgns_dot(const float *x, const float *y, int row)
{
    gyro_v4d a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0};
    for (int i = 0; i < row; i += 16) {
        a0 += __builtin_convertvector(*(const gyro_v4f *)(x + i), gyro_v4d) *
              __builtin_convertvector(*(const gyro_v4f *)(y + i), gyro_v4d);
        a1 += __builtin_convertvector(*(const gyro_v4f *)(x + i + 4), gyro_v4d) *
              __builtin_convertvector(*(const gyro_v4f *)(y + i + 4), gyro_v4d);
        a2 += __builtin_convertvector(*(const gyro_v4f *)(x + i + 8), gyro_v4d) *
              __builtin_convertvector(*(const gyro_v4f *)(y + i + 8), gyro_v4d);
        a3 += __builtin_convertvector(*(const gyro_v4f *)(x + i + 12), gyro_v4d) *
              __builtin_convertvector(*(const gyro_v4f *)(y + i + 12), gyro_v4d);
    }
    return gyro_sgns_hsum((a0 + a1) + (a2 + a3));
}

/* ⟨x,y⟩_L = −x₀y₀ + Σ xᵢyᵢ over a padded row. */
static inline double gyro_sgns_minkowski(const float *x, const float *y, int row)
{
    return gyro_sgns_dot(x, y, row) - 2.0 * (double)x[0] * (double)y[0];
}

/* cosh(t) and sinh(t)/t for t >= 0 with the clamps of hyp_consts.h:
 * cosh t = 1 + 2 sinh²(t/2) = 1 + (t²/2)·sinhc(t/2)², exact near 0 without cancellation. */
static inline void gyro_sgns_cosh_sinhc(double t, double *ch, double *shc)
{
    double h = gyro_hyp_sinhc(0.5 * t, 0.5 * GYRO_HYP_COSH_MAX_F32, NULL);
    *ch = 1.0 + 0.5 * t * t * h * h;
    *shc = gyro_hyp_sinhc(t, GYRO_HYP_COSH_MAX_F32, NULL);
}

/* x ← alpha·x + beta·y over the row, then x₀ := √(1 + Σ_{i≥1} xᵢ²). Returns the new x₀
 * (not finite if the row blew up). */
static inline float gyro_sgns_axpby_reproject(float *x, const float *y, float alpha, float beta,
                                              int row)
{
    gyro_v4d ss = {0};
    for (int i = 0; i < row; i += 4) {
        gyro_v4f xn = alpha * *(gyro_v4f *)(x + i) + beta * *(const gyro_v4f *)(y + i);
        *(gyro_v4f *)(x + i) = xn;
        gyro_v4d d = __builtin_convertvector(xn, gyro_v4d);
        ss += d * d;
    }
    double s = gyro_sgns_hsum(ss) - (double)x[0] * (double)x[0];
    float x0 = (float)sqrt(1.0 + (s > 0 ? s : 0));
    x[0] = x0;
    return x0;
}

/* Hyperbolic target update (see the file comment): h += g·v_old; v ← exp_v(clip(lr·g·proj_v u)),
 * re-projected. `s` = ⟨u,v⟩_L. Returns the new v₀. */
static inline float gyro_sgns_hyp_target(float *h, float *v, const float *u, double s, double g,
                                         double lr, double max_step, int row)
{
    double a = lr * g;
    double s2 = s * s - 1.0;
    double n = fabs(a) * sqrt(s2 > 0 ? s2 : 0);
    if (max_step > 0 && n > max_step) {
        a *= max_step / n;
        n = max_step;
    }
    double ch, shc;
    gyro_sgns_cosh_sinhc(n, &ch, &shc);
    float alpha = (float)(ch + shc * a * s), beta = (float)(shc * a), gf = (float)g;
    gyro_v4d ss = {0};
    for (int i = 0; i < row; i += 4) {
        gyro_v4f vo = *(gyro_v4f *)(v + i);
        *(gyro_v4f *)(h + i) += gf * vo;
        gyro_v4f vn = alpha * vo + beta * *(const gyro_v4f *)(u + i);
        *(gyro_v4f *)(v + i) = vn;
        gyro_v4d d = __builtin_convertvector(vn, gyro_v4d);
        ss += d * d;
    }
    double sp = gyro_sgns_hsum(ss) - (double)v[0] * (double)v[0];
    float v0 = (float)sqrt(1.0 + (sp > 0 ? sp : 0));
    v[0] = v0;
    return v0;
}

/* Hyperbolic centre update: u ← exp_u(clip(lr·proj_u h)), re-projected. Returns the new u₀. */
static inline float gyro_sgns_hyp_centre(float *u, const float *h, double lr, double max_step,
                                         int row)
{
    gyro_v4d aq = {0}, ah = {0};
    for (int i = 0; i < row; i += 4) {
        gyro_v4d hd = __builtin_convertvector(*(const gyro_v4f *)(h + i), gyro_v4d);
        aq += __builtin_convertvector(*(const gyro_v4f *)(u + i), gyro_v4d) * hd;
        ah += hd * hd;
    }
    double q = gyro_sgns_hsum(aq) - 2.0 * (double)u[0] * (double)h[0];
    double hh = gyro_sgns_hsum(ah) - 2.0 * (double)h[0] * (double)h[0];
    double t2 = hh + q * q;
    double e = lr;
    double n = lr * sqrt(t2 > 0 ? t2 : 0);
    if (max_step > 0 && n > max_step) {
        e *= max_step / n;
        n = max_step;
    }
    double ch, shc;
    gyro_sgns_cosh_sinhc(n, &ch, &shc);
    return gyro_sgns_axpby_reproject(u, h, (float)(ch + shc * e * q), (float)(shc * e), row);
}

/* Euclidean target update: h += g·v_old; v += lr·g·u. */
static inline void gyro_sgns_euc_target(float *h, float *v, const float *u, double g, double lr,
                                        int row)
{
    float gf = (float)g, a = (float)(lr * g);
    for (int i = 0; i < row; i += 4) {
        gyro_v4f vo = *(gyro_v4f *)(v + i);
        *(gyro_v4f *)(h + i) += gf * vo;
        *(gyro_v4f *)(v + i) = vo + a * *(const gyro_v4f *)(u + i);
    }
}

/* Euclidean centre update: u += lr·h. */
static inline void gyro_sgns_euc_centre(float *u, const float *h, double lr, int row)
{
    float a = (float)lr;
    for (int i = 0; i < row; i += 4) *(gyro_v4f *)(u + i) += a * *(const gyro_v4f *)(h + i);
}

#endif

/* hyp_ops_bench.c — nanoseconds per call of the hyperbolic ops of models/hyp/ at d = 100 (the
 * models' dimension), float32 and float64, against a naive scalar loop of the same formula.
 *
 * Built and run by tests/bench/hyp_ops.sh (not by make). Each op runs over 16 different input
 * sets in turn (so nothing is hoisted out of the loop); a measurement is the time of `iters`
 * calls divided by iters (thread CPU time); the figure printed is the median of `reps`
 * measurements, library and naive versions interleaved op by op. The naive
 * versions are the textbook code: one loop per reduction, accumulators in the storage type,
 * the intermediate vector stored in a stack buffer. For the fused skip-gram step
 * (lorentz_skipgram.h: a centre, its context and 5 negatives, on padded rows) the "naive"
 * column is the unfused math-core path it replaces: skipgram_term + rsgd_step per target,
 * then rsgd_step on the centre (both copy their 7 rows in first).
 *
 * Usage: hyp_ops_bench [reps] [iters]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "models/core/rng.h"
#include "models/hyp/convert.h"
#include "models/hyp/lorentz.h"
#include "models/hyp/lorentz_skipgram.h"
#include "models/hyp/poincare.h"

#define D 100
#define NSET 16
#define NEG 5
#define MLR_K 10
#define ROW 112 /* D + 1 padded to a multiple of 16 */

/* CPU time of this thread: on the shared 2-core machine wall time mostly measures the other
 * processes; thread CPU time excludes the time spent descheduled (cache pollution remains). */
static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static volatile double g_sink;

/* ---- inputs (both precisions hold the same values) ------------------------------------------- */

static double bx[NSET][D], by[NSET][D], bv[NSET][D], bg[NSET][D];          /* ball, tangent */
static double hx[NSET][D + 1], hy[NSET][D + 1], hg[NSET][D + 1];           /* hyperboloid */
static double hneg[NSET][NEG * (D + 1)];
static double bM[D * D], bP[MLR_K * D], bA[MLR_K * D];
static float fx[NSET][D], fy[NSET][D], fv[NSET][D], fg[NSET][D];
static float fhx[NSET][D + 1], fhy[NSET][D + 1], fhg[NSET][D + 1], fhneg[NSET][NEG * (D + 1)];
static float fM[D * D], fP[MLR_K * D], fA[MLR_K * D];
static double od[NEG * (D + 1)], od2[D * D], od3[D + 1];
static float of[NEG * (D + 1)], of2[D * D], of3[D + 1];

static void setup(void)
{
    gyro_rng r;
    gyro_rng_seed(&r, 42);
    for (int s = 0; s < NSET; s++) {
        double nx = 0, ny = 0;
        for (int i = 0; i < D; i++) {
            bx[s][i] = gyro_rng_normal(&r); nx += bx[s][i] * bx[s][i];
            by[s][i] = gyro_rng_normal(&r); ny += by[s][i] * by[s][i];
            bv[s][i] = 0.05 * gyro_rng_normal(&r);
            bg[s][i] = gyro_rng_normal(&r);
        }
        for (int i = 0; i < D; i++) { bx[s][i] *= 0.7 / sqrt(nx); by[s][i] *= 0.6 / sqrt(ny); }
        double xs[D], ys[D];
        for (int i = 0; i < D; i++) { xs[i] = 0.1 * gyro_rng_normal(&r); ys[i] = 0.1 * gyro_rng_normal(&r); }
        gyro_lorentz_lift_f64(hx[s], xs, D);
        gyro_lorentz_lift_f64(hy[s], ys, D);
        for (int i = 0; i <= D; i++) hg[s][i] = gyro_rng_normal(&r);
        for (int j = 0; j < NEG; j++) {
            for (int i = 0; i < D; i++) xs[i] = 0.1 * gyro_rng_normal(&r);
            gyro_lorentz_lift_f64(hneg[s] + j * (D + 1), xs, D);
        }
    }
    for (int i = 0; i < D * D; i++) bM[i] = gyro_rng_normal(&r) / sqrt((double)D);
    for (int k = 0; k < MLR_K; k++) {
        for (int i = 0; i < D; i++) {
            bP[k * D + i] = 0.03 * gyro_rng_normal(&r);
            bA[k * D + i] = gyro_rng_normal(&r);
        }
    }
    for (int s = 0; s < NSET; s++) {
        for (int i = 0; i < D; i++) {
            fx[s][i] = (float)bx[s][i]; fy[s][i] = (float)by[s][i];
            fv[s][i] = (float)bv[s][i]; fg[s][i] = (float)bg[s][i];
        }
        for (int i = 0; i <= D; i++) { fhx[s][i] = (float)hx[s][i]; fhy[s][i] = (float)hy[s][i]; fhg[s][i] = (float)hg[s][i]; }
        for (int i = 0; i < NEG * (D + 1); i++) fhneg[s][i] = (float)hneg[s][i];
    }
    for (int i = 0; i < D * D; i++) fM[i] = (float)bM[i];
    for (int i = 0; i < MLR_K * D; i++) { fP[i] = (float)bP[i]; fA[i] = (float)bA[i]; }
}

/* ---- naive scalar references (textbook loops, storage-type accumulators) ---------------------- */

#define NAIVE_DEFS(T, SFX)                                                                        \
    static T naive_dot_##SFX(const T *a, const T *b, int n)                                       \
    {                                                                                             \
        T s = 0;                                                                                  \
        for (int i = 0; i < n; i++) s += a[i] * b[i];                                             \
        return s;                                                                                 \
    }                                                                                             \
    static void naive_mobius_add_##SFX(T *z, const T *x, const T *y, T c, int n)                  \
    {                                                                                             \
        T xy = naive_dot_##SFX(x, y, n), xx = naive_dot_##SFX(x, x, n),                            \
          yy = naive_dot_##SFX(y, y, n);                                                          \
        T den = 1 + 2 * c * xy + c * c * xx * yy;                                                 \
        for (int i = 0; i < n; i++)                                                               \
            z[i] = ((1 + 2 * c * xy + c * yy) * x[i] + (1 - c * xx) * y[i]) / den;                \
    }                                                                                             \
    static void naive_expmap0_##SFX(T *y, const T *v, T c, int n)                                 \
    {                                                                                             \
        T nv = sqrt(naive_dot_##SFX(v, v, n)), sc = sqrt(c);                                      \
        T f = nv > 0 ? tanh(sc * nv) / (sc * nv) : 1;                                             \
        for (int i = 0; i < n; i++) y[i] = f * v[i];                                              \
    }                                                                                             \
    static void naive_logmap0_##SFX(T *v, const T *y, T c, int n)                                 \
    {                                                                                             \
        T ny = sqrt(naive_dot_##SFX(y, y, n)), sc = sqrt(c);                                      \
        T f = ny > 0 ? atanh(sc * ny) / (sc * ny) : 1;                                            \
        for (int i = 0; i < n; i++) v[i] = f * y[i];                                              \
    }                                                                                             \
    static T naive_dist_##SFX(const T *x, const T *y, T c, int n)                                 \
    {                                                                                             \
        T mx[D], w[D];                                                                            \
        for (int i = 0; i < n; i++) mx[i] = -x[i];                                                \
        naive_mobius_add_##SFX(w, mx, y, c, n);                                                   \
        T sc = sqrt(c);                                                                           \
        return 2 / sc * atanh(sc * sqrt(naive_dot_##SFX(w, w, n)));                               \
    }                                                                                             \
    static void naive_matvec_##SFX(T *y, const T *M, const T *x, T c, int m, int n)               \
    {                                                                                             \
        for (int i = 0; i < m; i++) y[i] = naive_dot_##SFX(M + (size_t)i * n, x, n);             \
        T nx = sqrt(naive_dot_##SFX(x, x, n)), nmx = sqrt(naive_dot_##SFX(y, y, m)), sc = sqrt(c); \
        T f = tanh(nmx / nx * atanh(sc * nx)) / (sc * nmx);                                       \
        for (int i = 0; i < m; i++) y[i] *= f;                                                    \
    }                                                                                             \
    static T naive_linner_##SFX(const T *x, const T *y, int n)                                    \
    {                                                                                             \
        T s = -x[0] * y[0];                                                                       \
        for (int i = 1; i <= n; i++) s += x[i] * y[i];                                            \
        return s;                                                                                 \
    }                                                                                             \
    static T naive_ldist_##SFX(const T *x, const T *y, int n)                                     \
    {                                                                                             \
        T a = -naive_linner_##SFX(x, y, n);                                                       \
        return acosh(a < 1 ? 1 : a);                                                              \
    }                                                                                             \
    static void naive_lrsgd_##SFX(T *x, const T *g, T lr, int n)                                  \
    {                                                                                             \
        T h[D + 1], v[D + 1];                                                                     \
        h[0] = -g[0];                                                                             \
        for (int i = 1; i <= n; i++) h[i] = g[i];                                                 \
        T xh = naive_linner_##SFX(x, h, n);                                                       \
        for (int i = 0; i <= n; i++) v[i] = -lr * (h[i] + xh * x[i]);                             \
        T nv = sqrt(fmax(naive_linner_##SFX(v, v, n), 0));                                        \
        if (nv > 1) { for (int i = 0; i <= n; i++) v[i] /= nv; nv = 1; }                          \
        T ch = cosh(nv), sh = nv > 0 ? sinh(nv) / nv : 1, ss = 0;                                 \
        for (int i = 1; i <= n; i++) { x[i] = ch * x[i] + sh * v[i]; ss += x[i] * x[i]; }         \
        x[0] = sqrt(1 + ss);                                                                      \
    }                                                                                             \
    static T naive_skipgram_##SFX(T *gu, T *gv, T *gn, const T *u, const T *v, const T *neg,      \
                                  T theta, int k, int n)                                          \
    {                                                                                             \
        T t = naive_linner_##SFX(u, v, n) + theta;                                                \
        T loss = log1p(exp(-t)), gp = -1 / (1 + exp(t));                                          \
        gu[0] = -gp * v[0]; gv[0] = -gp * u[0];                                                   \
        for (int i = 1; i <= n; i++) { gu[i] = gp * v[i]; gv[i] = gp * u[i]; }                    \
        for (int j = 0; j < k; j++) {                                                             \
            const T *nj = neg + (size_t)j * (n + 1);                                              \
            T tj = naive_linner_##SFX(u, nj, n) + theta;                                          \
            loss += log1p(exp(tj));                                                               \
            T g = 1 / (1 + exp(-tj));                                                             \
            gu[0] -= g * nj[0]; gn[(size_t)j * (n + 1)] = -g * u[0];                              \
            for (int i = 1; i <= n; i++) { gu[i] += g * nj[i]; gn[(size_t)j * (n + 1) + i] = g * u[i]; } \
        }                                                                                         \
        return loss;                                                                              \
    }

NAIVE_DEFS(float, f32)
NAIVE_DEFS(double, f64)

/* ---- the benchmark table ------------------------------------------------------------------------ */

typedef void (*bench_fn)(int s);

/* library ops */
static void l_madd32(int s) { gyro_poincare_mobius_add_f32(of, fx[s], fy[s], 1.0f, D); }
static void l_madd64(int s) { gyro_poincare_mobius_add_f64(od, bx[s], by[s], 1.0, D); }
static void n_madd32(int s) { naive_mobius_add_f32(of, fx[s], fy[s], 1.0f, D); }
static void n_madd64(int s) { naive_mobius_add_f64(od, bx[s], by[s], 1.0, D); }
static void l_maddb32(int s) { gyro_poincare_mobius_add_backward_f32(of, of3, fg[s], fx[s], fy[s], 1.0f, D); }
static void l_maddb64(int s) { gyro_poincare_mobius_add_backward_f64(od, od3, bg[s], bx[s], by[s], 1.0, D); }
static void l_exp032(int s) { gyro_poincare_expmap0_f32(of, fv[s], 1.0f, D); }
static void l_exp064(int s) { gyro_poincare_expmap0_f64(od, bv[s], 1.0, D); }
static void n_exp032(int s) { naive_expmap0_f32(of, fv[s], 1.0f, D); }
static void n_exp064(int s) { naive_expmap0_f64(od, bv[s], 1.0, D); }
static void l_log032(int s) { gyro_poincare_logmap0_f32(of, fx[s], 1.0f, D); }
static void l_log064(int s) { gyro_poincare_logmap0_f64(od, bx[s], 1.0, D); }
static void n_log032(int s) { naive_logmap0_f32(of, fx[s], 1.0f, D); }
static void n_log064(int s) { naive_logmap0_f64(od, bx[s], 1.0, D); }
static void l_exp32(int s) { gyro_poincare_expmap_f32(of, fx[s], fv[s], 1.0f, D); }
static void l_exp64(int s) { gyro_poincare_expmap_f64(od, bx[s], bv[s], 1.0, D); }
static void l_dist32(int s) { g_sink = gyro_poincare_dist_f32(fx[s], fy[s], 1.0f, D); }
static void l_dist64(int s) { g_sink = gyro_poincare_dist_f64(bx[s], by[s], 1.0, D); }
static void n_dist32(int s) { g_sink = naive_dist_f32(fx[s], fy[s], 1.0f, D); }
static void n_dist64(int s) { g_sink = naive_dist_f64(bx[s], by[s], 1.0, D); }
static void l_mv32(int s) { gyro_poincare_mobius_matvec_f32(of, fM, fx[s], 1.0f, D, D); }
static void l_mv64(int s) { gyro_poincare_mobius_matvec_f64(od, bM, bx[s], 1.0, D, D); }
static void n_mv32(int s) { naive_matvec_f32(of, fM, fx[s], 1.0f, D, D); }
static void n_mv64(int s) { naive_matvec_f64(od, bM, bx[s], 1.0, D, D); }
static void l_mvb32(int s) { gyro_poincare_mobius_matvec_backward_f32(of2, of3, fg[s], fM, fx[s], 1.0f, D, D); }
static void l_mvb64(int s) { gyro_poincare_mobius_matvec_backward_f64(od2, od3, bg[s], bM, bx[s], 1.0, D, D); }
static void l_mlr32(int s) { gyro_poincare_hyp_mlr_f32(of, fx[s], fP, fA, 1.0f, MLR_K, D); }
static void l_mlr64(int s) { gyro_poincare_hyp_mlr_f64(od, bx[s], bP, bA, 1.0, MLR_K, D); }
static void l_rsgdp32(int s) { gyro_poincare_rsgd_step_f32(of, fx[s], fg[s], 1.0f, 0.01f, D); }
static void l_rsgdp64(int s) { gyro_poincare_rsgd_step_f64(od, bx[s], bg[s], 1.0, 0.01, D); }
static void l_li32(int s) { g_sink = gyro_lorentz_inner_f32(fhx[s], fhy[s], D); }
static void l_li64(int s) { g_sink = gyro_lorentz_inner_f64(hx[s], hy[s], D); }
static void n_li32(int s) { g_sink = naive_linner_f32(fhx[s], fhy[s], D); }
static void n_li64(int s) { g_sink = naive_linner_f64(hx[s], hy[s], D); }
static void l_ld32(int s) { g_sink = gyro_lorentz_dist_f32(fhx[s], fhy[s], D); }
static void l_ld64(int s) { g_sink = gyro_lorentz_dist_f64(hx[s], hy[s], D); }
static void n_ld32(int s) { g_sink = naive_ldist_f32(fhx[s], fhy[s], D); }
static void n_ld64(int s) { g_sink = naive_ldist_f64(hx[s], hy[s], D); }
static void l_lrsgd32(int s) { memcpy(of3, fhx[s], sizeof fhx[s]); gyro_lorentz_rsgd_step_f32(of3, of3, fhg[s], 0.01f, 1.0f, D); }
static void l_lrsgd64(int s) { memcpy(od3, hx[s], sizeof hx[s]); gyro_lorentz_rsgd_step_f64(od3, od3, hg[s], 0.01, 1.0, D); }
static void n_lrsgd32(int s) { memcpy(of3, fhx[s], sizeof fhx[s]); naive_lrsgd_f32(of3, fhg[s], 0.01f, D); }
static void n_lrsgd64(int s) { memcpy(od3, hx[s], sizeof hx[s]); naive_lrsgd_f64(od3, hg[s], 0.01, D); }
static void l_sg32(int s) { g_sink = gyro_lorentz_skipgram_loss_f32(of3, of2, of, fhx[s], fhy[s], fhneg[s], 2.0f, NEG, D); }
static void l_sg64(int s) { g_sink = gyro_lorentz_skipgram_loss_f64(od3, od2, od, hx[s], hy[s], hneg[s], 2.0, NEG, D); }
static void n_sg32(int s) { g_sink = naive_skipgram_f32(of3, of2, of, fhx[s], fhy[s], fhneg[s], 2.0f, NEG, D); }
static void n_sg64(int s) { g_sink = naive_skipgram_f64(od3, od2, od, hx[s], hy[s], hneg[s], 2.0, NEG, D); }
static void l_tp32(int s) { gyro_hyp_to_poincare_f32(of, fhx[s], D); }
static void l_tp64(int s) { gyro_hyp_to_poincare_f64(od, hx[s], D); }

/* ---- fused skip-gram step against skipgram_term + rsgd_step --------------------------------- */
/* rows 0 = centre, 1 = context, 2.. = negatives; copied from the pristine set into work rows */
static float sgf[NSET][NEG + 2][ROW] __attribute__((aligned(64)));
static double sgd[NSET][NEG + 2][ROW] __attribute__((aligned(64)));
static float wf[NEG + 2][ROW] __attribute__((aligned(64))), hf[ROW] __attribute__((aligned(64)));
static double wd[NEG + 2][ROW] __attribute__((aligned(64))), hd[ROW] __attribute__((aligned(64)));

static void sg_setup(void)
{
    for (int s = 0; s < NSET; s++)
        for (int t = 0; t < NEG + 2; t++) {
            const double *src = t == 0 ? hx[s] : t == 1 ? hy[s] : hneg[s] + (t - 2) * (D + 1);
            for (int i = 0; i <= D; i++) { sgd[s][t][i] = src[i]; sgf[s][t][i] = (float)src[i]; }
        }
}

#define SG_DEFS(T, SFX, W, H, SRC)                                                                 \
    static void l_sgstep##SFX(int s)                                                               \
    {                                                                                              \
        memcpy(W, SRC[s], sizeof W);                                                               \
        memset(H, 0, sizeof H);                                                                    \
        for (int t = 1; t < NEG + 2; t++) {                                                        \
            double sc = gyro_lorentz_padded_inner##SFX(W[0], W[t], ROW);                           \
            double g = (t == 1) - 1.0 / (1.0 + exp(-(sc + 2.0)));                                  \
            gyro_lorentz_skipgram_step_target##SFX(H, W[t], W[0], sc, g, 0.025, 1.0, ROW);         \
        }                                                                                          \
        g_sink = gyro_lorentz_skipgram_step_centre##SFX(W[0], H, 0.025, 1.0, ROW);                 \
    }                                                                                              \
    static void n_sgstep##SFX(int s)                                                               \
    {                                                                                              \
        T du[D + 1] = {0}, dw[D + 1];                                                              \
        memcpy(W, SRC[s], sizeof W);                                                               \
        for (int t = 1; t < NEG + 2; t++) {                                                        \
            memset(dw, 0, sizeof dw);                                                              \
            g_sink = gyro_lorentz_skipgram_term##SFX(du, dw, W[0], W[t], t == 1, 2.0, 1.0, D);     \
            gyro_lorentz_rsgd_step##SFX(W[t], W[t], dw, 0.025, 1.0, D);                            \
        }                                                                                          \
        gyro_lorentz_rsgd_step##SFX(W[0], W[0], du, 0.025, 1.0, D);                                \
    }
SG_DEFS(float, _f32, wf, hf, sgf)
SG_DEFS(double, _f64, wd, hd, sgd)

typedef struct bench_row {
    const char *name;
    bench_fn lib32, lib64, naive32, naive64; /* naive may be NULL */
    long scale;                              /* iterations divisor for heavy ops */
} bench_row;

static const bench_row g_rows[] = {
    {"poincare mobius_add", l_madd32, l_madd64, n_madd32, n_madd64, 1},
    {"poincare mobius_add backward", l_maddb32, l_maddb64, NULL, NULL, 1},
    {"poincare expmap0", l_exp032, l_exp064, n_exp032, n_exp064, 1},
    {"poincare logmap0", l_log032, l_log064, n_log032, n_log064, 1},
    {"poincare expmap", l_exp32, l_exp64, NULL, NULL, 1},
    {"poincare dist", l_dist32, l_dist64, n_dist32, n_dist64, 1},
    {"poincare mobius_matvec 100x100", l_mv32, l_mv64, n_mv32, n_mv64, 20},
    {"poincare mobius_matvec backward", l_mvb32, l_mvb64, NULL, NULL, 40},
    {"poincare hyp_mlr K=10", l_mlr32, l_mlr64, NULL, NULL, 5},
    {"poincare rsgd_step", l_rsgdp32, l_rsgdp64, NULL, NULL, 1},
    {"lorentz inner", l_li32, l_li64, n_li32, n_li64, 1},
    {"lorentz dist", l_ld32, l_ld64, n_ld32, n_ld64, 1},
    {"lorentz rsgd_step (clipped)", l_lrsgd32, l_lrsgd64, n_lrsgd32, n_lrsgd64, 1},
    {"lorentz skipgram_loss 5 neg", l_sg32, l_sg64, n_sg32, n_sg64, 4},
    {"lorentz skipgram_step 1+5 (fused)", l_sgstep_f32, l_sgstep_f64, n_sgstep_f32, n_sgstep_f64, 4},
    {"to_poincare", l_tp32, l_tp64, NULL, NULL, 1},
};

static double measure(bench_fn f, long iters, int reps)
{
    double t[64];
    if (reps > 64) reps = 64;
    for (long i = 0; i < iters / 10; i++) f((int)(i % NSET)); /* warm up */
    for (int r = 0; r < reps; r++) {
        double t0 = now_ns();
        for (long i = 0; i < iters; i++) f((int)(i % NSET));
        t[r] = (now_ns() - t0) / (double)iters;
    }
    qsort(t, (size_t)reps, sizeof t[0], cmp_double);
    return t[reps / 2];
}

int main(int argc, char **argv)
{
    int reps = argc > 1 ? atoi(argv[1]) : 7;
    long iters = argc > 2 ? atol(argv[2]) : 200000;
    if (reps < 1 || iters < 1) {
        fprintf(stderr, "usage: hyp_ops_bench [reps] [iters]\n");
        return 2;
    }
    setup();
    sg_setup();
    printf("d = %d, thread CPU ns per call, median of %d runs of %ld calls (heavy ops: fewer)\n",
           D, reps, iters);
    printf("%-34s %10s %10s %10s %10s %8s %8s\n", "op", "f32 ns", "naive f32", "f64 ns",
           "naive f64", "x f32", "x f64");
    for (size_t i = 0; i < sizeof g_rows / sizeof g_rows[0]; i++) {
        const bench_row *b = &g_rows[i];
        long it = iters / b->scale;
        double l32 = measure(b->lib32, it, reps), l64 = measure(b->lib64, it, reps);
        if (b->naive32) {
            double n32 = measure(b->naive32, it, reps), n64 = measure(b->naive64, it, reps);
            printf("%-34s %10.1f %10.1f %10.1f %10.1f %8.2f %8.2f\n", b->name, l32, n32, l64, n64,
                   n32 / l32, n64 / l64);
        } else {
            printf("%-34s %10.1f %10s %10.1f %10s %8s %8s\n", b->name, l32, "-", l64, "-", "-", "-");
        }
        fflush(stdout);
    }
    return 0;
}

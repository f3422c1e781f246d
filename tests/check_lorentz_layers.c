/* check_lorentz_layers.c — Check suite for the HyboNet layers of models/layers/lorentz.h.
 *
 * 1. Finite differences (float64): for every backward kernel, in every mode (activation, dropout
 *    mask, bias point as residual and as position encoding, curvatures K ≠ −1, heads, key mask,
 *    token weights), the kernel's vector-Jacobian product for a random dL/dout = w is compared
 *    with (s(in + h eⱼ) − s(in − h eⱼ))/2h, s = Σ w ⊙ out, h = 1e-6, on every coordinate of every
 *    input and parameter. The error of a trial is max |analytic − fd| / max(1, max |analytic|) and
 *    must stay below 1e-6; the suite prints the max absolute and relative error per op (as
 *    check_hyp_grad does). A second backward call must double the gradients (+= contract).
 * 2. Properties:
 *    - the float32 Lorentz linear layer keeps its outputs on the hyperboloid over 10⁴ random
 *      forward/backward/SGD-update steps: |⟨y,y⟩_L + 1| ≤ 1e-5 and ≤ 1e-6·y₀², no NaN, λ > 0.
 *      With λ ≈ 10 (HyboNet's default scale, y₀ up to ≈ 12) the absolute bar is close to what
 *      float32 can store (y₀² · 2⁻²⁴ ≈ 8e-6; measured max 6.7e-6); a larger λ needs the
 *      relative form. The upstream gradients are N(0, 0.05²) so that log λ does not random-walk
 *      far from its start;
 *    - every layer's float64 output lies on the hyperboloid of its K;
 *    - centroid pooling is invariant under a permutation of the tokens and equivariant under a
 *      Lorentz transformation (boost · rotation) applied to every input; so is attention (Q, K, V
 *      all transformed; keys permuted together with their values);
 *    - attention with all weights equal (identical keys) is the centroid of the values, and a
 *      padded key is ignored; pooling at K = −1 agrees with models/hyp's gyro_lorentz_centroid;
 *    - the head's logits are −2(cosh d − 1) + β with d = gyro_lorentz_dist (K = −1);
 *    - float32 and float64 kernels agree (the float32 path accumulates in double).
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/core/rng.h"
#include "models/hyp/lorentz.h"
#include "models/layers/lorentz.h"
#include "tests/support/fd.h"

#define FD_H 1e-6
#define FD_TOL 1e-6
#define FD_TRIALS 8
#define FD_MAXIN 8

/* ---- random points --------------------------------------------------------------------------- */

static void rnd_normal(double *x, size_t len, double scale, gyro_rng *r)
{
    for (size_t i = 0; i < len; i++) x[i] = scale * gyro_rng_normal(r);
}

/* rows hyperboloid points of curvature K: x₀ = √(−1/K + |x_s|²), x_s Gaussian of the scale. */
static void rnd_points(double *x, int rows, int n, double K, double scale, gyro_rng *r)
{
    for (int i = 0; i < rows; i++) {
        double *p = x + (size_t)i * (n + 1), ss = 0.0;
        rnd_normal(p + 1, (size_t)n, scale, r);
        for (int e = 1; e <= n; e++) ss += p[e] * p[e];
        p[0] = sqrt(-1.0 / K + ss);
    }
}

static double lz_inner(const double *a, const double *b, int n)
{
    double s = -a[0] * b[0];
    for (int e = 1; e <= n; e++) s += a[e] * b[e];
    return s;
}

/* max over rows of |⟨y,y⟩_L − 1/K| / max(1, y₀²). */
static double manifold_err(const double *y, int rows, int n, double K)
{
    double worst = 0.0;
    for (int i = 0; i < rows; i++) {
        const double *p = y + (size_t)i * (n + 1);
        double e = fabs(lz_inner(p, p, n) - 1.0 / K) / fmax(1.0, p[0] * p[0]);
        if (!(e <= worst)) worst = e;
    }
    return worst;
}

/* ---- the finite-difference harness ---------------------------------------------------------- */

typedef struct fd_spec fd_spec;
/* init(NULL, s, r) draws a trial's shapes (and fixed masks) into s; init(in, s, r) then draws the
 * input values for those shapes. */
typedef void (*fd_init_fn)(double **in, fd_spec *s, gyro_rng *r);
typedef void (*fd_fwd_fn)(double *out, double *const *in, const fd_spec *s);
typedef void (*fd_bwd_fn)(double *const *din, const double *dout, double *const *in,
                          const fd_spec *s);

struct fd_spec {
    const char *name;
    int nin;
    fd_init_fn init;
    fd_fwd_fn fwd;
    fd_bwd_fn bwd;
    int variant;
    /* per trial */
    double K, eps;
    int act, rows, B, T, Tq, Tk, H, n, m, C;
    double *mask;   /* dropout mask (rows, n+1) or NULL */
    int *kmask;     /* key mask (B, Tk) or NULL */
    size_t len[FD_MAXIN], outlen;
};

/* hlinear family: inputs x, P (or none), W, b, v, b_t, log_lambda. */
enum { LIN_PLAIN, LIN_RELU_MASK_RES, LIN_POSENC, LIN_RESIDUAL };

static void init_lin(double **in, fd_spec *s, gyro_rng *r)
{
    static const double Ks[4] = {-1.0, -0.5, -2.0, -1.0};
    static const int ns[4] = {2, 3, 8, 5};
    int d, pr, withP = s->variant != LIN_PLAIN, k = 0;
    if (in) goto values;
    s->K = Ks[(int)gyro_rng_below(r, 4)];
    s->n = ns[(int)gyro_rng_below(r, 4)];
    s->m = 1 + (int)gyro_rng_below(r, 6);
    s->act = s->variant == LIN_RELU_MASK_RES ? GYRO_LORENTZ_ACT_RELU : GYRO_LORENTZ_ACT_NONE;
    s->eps = sqrt(-1.0 / s->K) + 0.1;
    s->B = 1 + (int)gyro_rng_below(r, 2);
    s->T = 1 + (int)gyro_rng_below(r, 3);
    s->rows = s->variant == LIN_POSENC ? s->B * s->T : 1 + (int)gyro_rng_below(r, 3);
    d = s->n + 1;
    pr = s->variant == LIN_POSENC ? s->T : s->rows;
    s->len[k++] = (size_t)s->rows * d;
    if (withP) s->len[k++] = (size_t)pr * (s->m + 1);
    s->len[k++] = (size_t)s->m * d;
    s->len[k++] = (size_t)s->m;
    s->len[k++] = (size_t)d;
    s->len[k++] = 1;
    s->len[k++] = 1;
    s->nin = k;
    s->outlen = (size_t)s->rows * (s->m + 1);
    free(s->mask);
    s->mask = NULL;
    if (s->variant == LIN_RELU_MASK_RES || s->variant == LIN_RESIDUAL) {
        s->mask = malloc((size_t)s->rows * d * sizeof *s->mask);
        ck_assert_ptr_nonnull(s->mask);
        for (int i = 0; i < s->rows * d; i++) s->mask[i] = gyro_rng_uniform(r) < 0.3 ? 0.0 : 1.0 / 0.7;
    }
    return;
values:
    d = s->n + 1;
    pr = s->variant == LIN_POSENC ? s->T : s->rows;
    rnd_points(in[k++], s->rows, s->n, s->K, 0.8, r);
    if (withP) rnd_points(in[k++], pr, s->m, s->K, 0.8, r);
    rnd_normal(in[k++], (size_t)s->m * d, 0.5, r);
    rnd_normal(in[k++], (size_t)s->m, 0.3, r);
    rnd_normal(in[k++], (size_t)d, 0.3, r);
    in[k++][0] = 0.5 * gyro_rng_normal(r);
    in[k++][0] = log(1.0 + 9.0 * gyro_rng_uniform(r));
}

/* Splits the input list into the named arguments. */
typedef struct lin_args { double *x, *P, *W, *b, *v, *bt, *ll; } lin_args;
static lin_args lin_split(double *const *in, const fd_spec *s)
{
    lin_args a;
    int k = 0;
    a.x = in[k++];
    a.P = s->variant != LIN_PLAIN ? in[k++] : NULL;
    a.W = in[k++];
    a.b = in[k++];
    a.v = in[k++];
    a.bt = in[k++];
    a.ll = in[k++];
    return a;
}

/* Scratch of one hlinear call: U (rows, m), Hc (rows, n+1), work (rows, m+n+1). */
typedef struct lin_bufs { double *U, *Hc, *work, *y; } lin_bufs;
static lin_bufs lin_alloc(const fd_spec *s)
{
    lin_bufs k;
    k.U = malloc((size_t)s->rows * s->m * sizeof(double));
    k.Hc = malloc((size_t)s->rows * (s->n + 1) * sizeof(double));
    k.work = malloc((size_t)s->rows * (s->m + s->n + 1) * sizeof(double));
    k.y = malloc(s->outlen * sizeof(double));
    ck_assert(k.U && k.Hc && k.work && k.y);
    return k;
}
static void lin_free(lin_bufs *k) { free(k->U); free(k->Hc); free(k->work); free(k->y); }

static void f_lin(double *out, double *const *in, const fd_spec *s)
{
    lin_args a = lin_split(in, s);
    lin_bufs k = lin_alloc(s);
    if (s->variant == LIN_POSENC)
        gyro_lorentz_posenc_forward_f64(out, k.U, k.Hc, a.x, s->mask, a.P, a.W, a.b, a.v, a.bt, a.ll,
                                        s->eps, s->act, s->K, s->B, s->T, s->n, s->m);
    else if (s->variant == LIN_RESIDUAL)
        gyro_lorentz_residual_forward_f64(out, k.U, k.Hc, a.x, s->mask, a.P, a.W, a.b, a.v, a.bt,
                                          a.ll, s->eps, s->act, s->K, s->rows, s->n, s->m);
    else
        gyro_lorentz_hlinear_forward_f64(out, k.U, k.Hc, a.x, s->mask, a.P, a.W, a.b, a.v, a.bt,
                                         a.ll, s->eps, s->act, s->K, s->rows, s->n, s->m, s->rows);
    lin_free(&k);
}

static void b_lin(double *const *din, const double *dout, double *const *in, const fd_spec *s)
{
    lin_args a = lin_split(in, s), g = lin_split(din, s);
    lin_bufs k = lin_alloc(s);
    if (s->variant == LIN_POSENC) {
        gyro_lorentz_posenc_forward_f64(k.y, k.U, k.Hc, a.x, s->mask, a.P, a.W, a.b, a.v, a.bt, a.ll,
                                        s->eps, s->act, s->K, s->B, s->T, s->n, s->m);
        gyro_lorentz_posenc_backward_f64(g.x, g.P, g.W, g.b, g.v, g.bt, g.ll, k.work, dout, k.U,
                                         k.Hc, a.x, s->mask, a.P, a.W, a.v, a.bt, a.ll, s->eps,
                                         s->act, s->K, s->B, s->T, s->n, s->m);
    } else if (s->variant == LIN_RESIDUAL) {
        gyro_lorentz_residual_forward_f64(k.y, k.U, k.Hc, a.x, s->mask, a.P, a.W, a.b, a.v, a.bt,
                                          a.ll, s->eps, s->act, s->K, s->rows, s->n, s->m);
        gyro_lorentz_residual_backward_f64(g.x, g.P, g.W, g.b, g.v, g.bt, g.ll, k.work, dout, k.U,
                                           k.Hc, a.x, s->mask, a.P, a.W, a.v, a.bt, a.ll, s->eps,
                                           s->act, s->K, s->rows, s->n, s->m);
    } else {
        gyro_lorentz_hlinear_forward_f64(k.y, k.U, k.Hc, a.x, s->mask, a.P, a.W, a.b, a.v, a.bt,
                                         a.ll, s->eps, s->act, s->K, s->rows, s->n, s->m, s->rows);
        gyro_lorentz_hlinear_backward_f64(g.x, g.P, g.W, g.b, g.v, g.bt, g.ll, k.work, dout, k.U,
                                          k.Hc, a.x, s->mask, a.P, a.W, a.v, a.bt, a.ll, s->eps,
                                          s->act, s->K, s->rows, s->n, s->m, s->rows);
    }
    lin_free(&k);
}

/* mha: inputs Q, K, V. variant 0: one head, no mask, K = −1; 1: H = 2..3, key mask, any K. */
static void init_mha(double **in, fd_spec *s, gyro_rng *r)
{
    static const double Ks[3] = {-1.0, -0.5, -3.0};
    if (in) {
        for (int k = 0; k < 3; k++)
            rnd_points(in[k], (int)(s->len[k] / (size_t)(s->n + 1)), s->n, s->K, 0.7, r);
        return;
    }
    s->K = s->variant ? Ks[gyro_rng_below(r, 3)] : -1.0;
    s->B = s->variant == 1 ? 2 : 1;
    s->H = s->variant == 1 ? 2 + (int)gyro_rng_below(r, 2) : 1;
    s->n = 2 + (int)gyro_rng_below(r, 4);
    s->Tq = 1 + (int)gyro_rng_below(r, 3);
    s->Tk = 2 + (int)gyro_rng_below(r, 3);
    /* variants 2 and 3 take the kernels' paths for long key rows (Tk > 64: logits recomputed,
     * per-key products past the stack buffer) and wide heads (n >= 64: two-pass centroid) */
    if (s->variant == 2) s->Tk = 65 + (int)gyro_rng_below(r, 3);
    if (s->variant == 3) s->n = 64 + (int)gyro_rng_below(r, 3);
    int d = s->n + 1;
    size_t row = (size_t)s->H * d;
    s->len[0] = (size_t)s->B * s->Tq * row;
    s->len[1] = s->len[2] = (size_t)s->B * s->Tk * row;
    s->outlen = s->len[0];
    s->nin = 3;
    free(s->kmask);
    s->kmask = NULL;
    if (s->variant) {
        s->kmask = malloc((size_t)s->B * s->Tk * sizeof *s->kmask);
        ck_assert_ptr_nonnull(s->kmask);
        for (int i = 0; i < s->B * s->Tk; i++) s->kmask[i] = 1;
        s->kmask[s->Tk - 1] = 0; /* the first sequence has one padded key */
    }
}

static void f_mha(double *out, double *const *in, const fd_spec *s)
{
    double *A = malloc((size_t)s->B * s->H * s->Tq * s->Tk * sizeof *A);
    double *Sz = malloc((size_t)s->B * s->H * s->Tq * sizeof *Sz);
    ck_assert(A && Sz);
    gyro_lorentz_mha_forward_f64(out, A, Sz, in[0], in[1], in[2], s->kmask, s->K, s->B, s->Tq,
                                 s->Tk, s->H, s->n);
    free(A);
    free(Sz);
}

static void b_mha(double *const *din, const double *dout, double *const *in, const fd_spec *s)
{
    double *A = malloc((size_t)s->B * s->H * s->Tq * s->Tk * sizeof *A);
    double *Sz = malloc((size_t)s->B * s->H * s->Tq * sizeof *Sz);
    double *O = malloc(s->outlen * sizeof *O);
    ck_assert(A && Sz && O);
    gyro_lorentz_mha_forward_f64(O, A, Sz, in[0], in[1], in[2], s->kmask, s->K, s->B, s->Tq, s->Tk,
                                 s->H, s->n);
    gyro_lorentz_mha_backward_f64(din[0], din[1], din[2], dout, O, A, Sz, in[0], in[1], in[2],
                                  s->kmask, s->K, s->B, s->Tq, s->Tk, s->H, s->n);
    free(A);
    free(Sz);
    free(O);
}

/* pool: inputs X, w. variant 0: 0/1 weights (padding), 1: positive real weights. */
static void init_pool(double **in, fd_spec *s, gyro_rng *r)
{
    static const double Ks[3] = {-1.0, -0.7, -2.5};
    if (in) goto values;
    s->K = Ks[gyro_rng_below(r, 3)];
    s->B = 1 + (int)gyro_rng_below(r, 3);
    s->T = 1 + (int)gyro_rng_below(r, 5);
    s->n = s->variant == 2 ? 64 + (int)gyro_rng_below(r, 3) /* the two-pass (wide) centroid */
                           : 2 + (int)gyro_rng_below(r, 7);
    s->len[0] = (size_t)s->B * s->T * (s->n + 1);
    s->len[1] = (size_t)s->B * s->T;
    s->outlen = (size_t)s->B * (s->n + 1);
    s->nin = 2;
    return;
values:
    rnd_points(in[0], s->B * s->T, s->n, s->K, 1.0, r);
    for (int b = 0; b < s->B; b++)
        for (int t = 0; t < s->T; t++)
            in[1][b * s->T + t] = s->variant ? 0.2 + gyro_rng_uniform(r)
                                             : (t == 0 || gyro_rng_uniform(r) < 0.6 ? 1.0 : 0.0);
}

static void f_pool(double *out, double *const *in, const fd_spec *s)
{
    double *Sz = malloc((size_t)s->B * sizeof *Sz);
    ck_assert_ptr_nonnull(Sz);
    gyro_lorentz_pool_forward_f64(out, Sz, in[0], in[1], s->K, s->B, s->T, s->n);
    free(Sz);
}

static void b_pool(double *const *din, const double *dout, double *const *in, const fd_spec *s)
{
    double *Sz = malloc((size_t)s->B * sizeof *Sz), *mu = malloc(s->outlen * sizeof *mu);
    ck_assert(Sz && mu);
    gyro_lorentz_pool_forward_f64(mu, Sz, in[0], in[1], s->K, s->B, s->T, s->n);
    gyro_lorentz_pool_backward_f64(din[0], din[1], dout, mu, Sz, in[0], in[1], s->K, s->B, s->T,
                                   s->n);
    free(Sz);
    free(mu);
}

/* head: inputs X, P, beta. */
static void init_head(double **in, fd_spec *s, gyro_rng *r)
{
    static const double Ks[3] = {-1.0, -0.5, -2.0};
    if (in) goto values;
    s->K = Ks[gyro_rng_below(r, 3)];
    s->B = 1 + (int)gyro_rng_below(r, 3);
    s->C = 2 + (int)gyro_rng_below(r, 5);
    s->n = 2 + (int)gyro_rng_below(r, 7);
    s->len[0] = (size_t)s->B * (s->n + 1);
    s->len[1] = (size_t)s->C * (s->n + 1);
    s->len[2] = (size_t)s->C;
    s->outlen = (size_t)s->B * s->C;
    s->nin = 3;
    return;
values:
    rnd_points(in[0], s->B, s->n, s->K, 1.0, r);
    rnd_points(in[1], s->C, s->n, s->K, 1.0, r);
    rnd_normal(in[2], (size_t)s->C, 0.5, r);
}

static void f_head(double *out, double *const *in, const fd_spec *s)
{
    gyro_lorentz_head_forward_f64(out, in[0], in[1], in[2], s->K, s->B, s->C, s->n);
}

static void b_head(double *const *din, const double *dout, double *const *in, const fd_spec *s)
{
    gyro_lorentz_head_backward_f64(din[0], din[1], din[2], dout, in[0], in[1], s->K, s->B, s->C,
                                   s->n);
}

#define OP(nm, var, init, f, b) {nm, 0, init, f, b, var, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, NULL, {0}, 0}
static fd_spec g_specs[] = {
    OP("hlinear", LIN_PLAIN, init_lin, f_lin, b_lin),
    OP("hlinear relu+dropout+bias point", LIN_RELU_MASK_RES, init_lin, f_lin, b_lin),
    OP("residual (dropout)", LIN_RESIDUAL, init_lin, f_lin, b_lin),
    OP("posenc", LIN_POSENC, init_lin, f_lin, b_lin),
    OP("mha 1 head", 0, init_mha, f_mha, b_mha),
    OP("mha heads+key mask", 1, init_mha, f_mha, b_mha),
    OP("mha 65+ keys (mask)", 2, init_mha, f_mha, b_mha),
    OP("mha wide head (mask)", 3, init_mha, f_mha, b_mha),
    OP("pool 0/1 weights", 0, init_pool, f_pool, b_pool),
    OP("pool real weights", 1, init_pool, f_pool, b_pool),
    OP("pool wide points", 2, init_pool, f_pool, b_pool),
    OP("head", 0, init_head, f_head, b_head),
};
#define NSPECS ((int)(sizeof g_specs / sizeof g_specs[0]))
static double g_max_abs[NSPECS], g_max_rel[NSPECS];

/* The spec's callbacks as an fd_problem (tests/support/fd.h). */
static void fd_init(double **in, void *s, gyro_rng *r) { ((fd_spec *)s)->init(in, s, r); }
static void fd_fwd(double *out, double *const *in, void *s) { ((fd_spec *)s)->fwd(out, in, s); }
static void fd_bwd(double *const *din, const double *dout, double *const *in, void *s)
{
    ((fd_spec *)s)->bwd(din, dout, in, s);
}

START_TEST(test_fd)
{
    fd_spec s = g_specs[_i];
    gyro_rng r;
    gyro_rng_seed(&r, 7000 + (uint64_t)_i);
    double worst_rel = 0.0, worst_abs = 0.0;
    for (int trial = 0; trial < FD_TRIALS; trial++) {
        s.init(NULL, &s, &r); /* shapes; fd_trial draws the values for them */
        const fd_problem p = {s.nin, s.len, s.outlen, &s, fd_init, fd_fwd, fd_bwd};
        double scale, dmax = fd_trial(&p, &r, FD_H, &scale, s.name);
        double rel = dmax / scale;
        if (rel > worst_rel) worst_rel = rel;
        if (dmax > worst_abs) worst_abs = dmax;
        ck_assert_msg(rel < FD_TOL, "%s trial %d (K=%g n=%d m=%d rows=%d H=%d): fd error %.3g (abs %.3g)",
                      s.name, trial, s.K, s.n, s.m, s.rows, s.H, rel, dmax);
    }
    free(s.mask);
    free(s.kmask);
    g_max_abs[_i] = worst_abs;
    g_max_rel[_i] = worst_rel;
}
END_TEST

/* ---- properties -------------------------------------------------------------------------------- */

/* 10⁴ float32 steps of one Lorentz linear layer (n = m = 16, 4 rows, ReLU, dropout, K = −1,
 * λ = 10 at the start): forward on fresh random input points, a random upstream gradient,
 * backward, plain SGD on W, b, v, b_t, log λ. Every output of every step must stay on the
 * hyperboloid (the bars are discussed at the top of the file). */
START_TEST(test_linear_f32_stays_on_manifold)
{
    enum { N = 16, M = 16, ROWS = 4, STEPS = 10000 };
    const int D = N + 1;
    const double K = -1.0, eps = 1.1;
    gyro_rng r;
    gyro_rng_seed(&r, 4242);
    float W[M * (N + 1)], b[M], v[N + 1], bt = 0.0f, ll = (float)log(10.0);
    float dW[M * (N + 1)], db[M], dv[N + 1], dbt, dll;
    float x[ROWS * (N + 1)], mask[ROWS * (N + 1)], y[ROWS * (M + 1)], U[ROWS * M], dy[ROWS * (M + 1)];
    float Hc[ROWS * (N + 1)], work[ROWS * (M + N + 1)];
    double tmp[N + 1];
    for (int i = 0; i < M * D; i++) W[i] = (float)(0.3 * gyro_rng_normal(&r));
    for (int i = 0; i < M; i++) b[i] = (float)(0.1 * gyro_rng_normal(&r));
    for (int i = 0; i < D; i++) v[i] = (float)(0.1 * gyro_rng_normal(&r));
    double worst = 0.0, worst_abs = 0.0, ymax = 0.0;
    for (int step = 0; step < STEPS; step++) {
        for (int row = 0; row < ROWS; row++) {
            rnd_points(tmp, 1, N, K, 0.2 + 2.0 * gyro_rng_uniform(&r), &r);
            for (int e = 0; e < D; e++) {
                x[row * D + e] = (float)tmp[e];
                mask[row * D + e] = gyro_rng_uniform(&r) < 0.1 ? 0.0f : (float)(1.0 / 0.9);
            }
        }
        gyro_lorentz_hlinear_forward_f32(y, U, Hc, x, mask, NULL, W, b, v, &bt, &ll, eps,
                                         GYRO_LORENTZ_ACT_RELU, K, ROWS, N, M, 1);
        for (int row = 0; row < ROWS; row++) {
            const float *p = y + row * (M + 1);
            double q = -(double)p[0] * p[0];
            for (int e = 1; e <= M; e++) q += (double)p[e] * p[e];
            ck_assert_msg(isfinite(q), "step %d: non-finite output", step);
            double ea = fabs(q - 1.0 / K), er = ea / fmax(1.0, (double)p[0] * p[0]);
            if (er > worst) worst = er;
            if (ea > worst_abs) worst_abs = ea;
            if (p[0] > ymax) ymax = p[0];
            ck_assert_msg(ea <= 1e-5 && er <= 1e-6, "step %d row %d: |<y,y>_L + 1| = %.3g (y0 = %g)",
                          step, row, ea, (double)p[0]);
        }
        for (int i = 0; i < ROWS * (M + 1); i++) dy[i] = (float)(0.05 * gyro_rng_normal(&r));
        memset(dW, 0, sizeof dW);
        memset(db, 0, sizeof db);
        memset(dv, 0, sizeof dv);
        dbt = dll = 0.0f;
        gyro_lorentz_hlinear_backward_f32(NULL, NULL, dW, db, dv, &dbt, &dll, work, dy, U, Hc, x,
                                          mask, NULL, W, v, &bt, &ll, eps, GYRO_LORENTZ_ACT_RELU, K,
                                          ROWS, N, M, 1);
        const float lr = 1e-3f;
        for (int i = 0; i < M * D; i++) W[i] -= lr * dW[i];
        for (int i = 0; i < M; i++) b[i] -= lr * db[i];
        for (int i = 0; i < D; i++) v[i] -= lr * dv[i];
        bt -= lr * dbt;
        ll -= lr * dll;
    }
    ck_assert(isfinite(ll) && exp(ll) > 0.0);
    printf("lorentz_layers: float32 hlinear, %d steps: max |<y,y>_L + 1|/max(1,y0^2) = %.3g, "
           "max |<y,y>_L + 1| = %.3g, max y0 = %.3g, final lambda = %.3g\n",
           (int)STEPS, worst, worst_abs, ymax, exp((double)ll));
}
END_TEST

/* A Lorentz transformation: a boost of rapidity phi along axis 1 after a rotation by theta in
 * the (1,2) plane. It preserves ⟨·,·⟩_L for every K. L: (n+1, n+1) row-major. */
static void lorentz_transform(double *L, int n, double phi, double theta)
{
    int d = n + 1;
    double R[64 * 64], Bm[64 * 64];
    memset(R, 0, sizeof(double) * d * d);
    memset(Bm, 0, sizeof(double) * d * d);
    for (int i = 0; i < d; i++) R[i * d + i] = Bm[i * d + i] = 1.0;
    R[1 * d + 1] = cos(theta); R[1 * d + 2] = -sin(theta);
    R[2 * d + 1] = sin(theta); R[2 * d + 2] = cos(theta);
    Bm[0] = cosh(phi); Bm[1] = sinh(phi);
    Bm[d] = sinh(phi); Bm[d + 1] = cosh(phi);
    for (int i = 0; i < d; i++)
        for (int j = 0; j < d; j++) {
            double s = 0.0;
            for (int k = 0; k < d; k++) s += Bm[i * d + k] * R[k * d + j];
            L[i * d + j] = s;
        }
}

static void apply_rows(double *Y, const double *L, const double *X, int rows, int n)
{
    int d = n + 1;
    for (int r = 0; r < rows; r++)
        for (int i = 0; i < d; i++) {
            double s = 0.0;
            for (int k = 0; k < d; k++) s += L[i * d + k] * X[r * d + k];
            Y[r * d + i] = s;
        }
}

static double max_rel_diff(const double *a, const double *b, size_t len)
{
    double dm = 0.0, am = 0.0;
    for (size_t i = 0; i < len; i++) {
        dm = fmax(dm, fabs(a[i] - b[i]));
        am = fmax(am, fabs(b[i]));
    }
    return dm / fmax(am, 1e-300);
}

START_TEST(test_pool_invariances)
{
    enum { T = 6, N = 5 };
    const int D = N + 1;
    gyro_rng r;
    gyro_rng_seed(&r, 99);
    static const double Ks[3] = {-1.0, -0.5, -2.0};
    for (int trial = 0; trial < 12; trial++) {
        double K = Ks[trial % 3];
        double X[T * (N + 1)], w[T], Xp[T * (N + 1)], wp[T], LX[T * (N + 1)], L[(N + 1) * (N + 1)];
        double mu[N + 1], mup[N + 1], muL[N + 1], Lmu[N + 1], Sz;
        rnd_points(X, T, N, K, 1.2, &r);
        for (int t = 0; t < T; t++) w[t] = t == 0 || gyro_rng_uniform(&r) < 0.7 ? 1.0 : 0.0;
        gyro_lorentz_pool_forward_f64(mu, &Sz, X, w, K, 1, T, N);
        ck_assert(manifold_err(mu, 1, N, K) < 1e-12);
        /* permutation (a reversal and a rotation by trial) */
        for (int t = 0; t < T; t++) {
            int s = (T - 1 - t + trial) % T;
            memcpy(Xp + t * D, X + s * D, sizeof(double) * D);
            wp[t] = w[s];
        }
        gyro_lorentz_pool_forward_f64(mup, &Sz, Xp, wp, K, 1, T, N);
        ck_assert_msg(max_rel_diff(mup, mu, D) < 1e-13, "pool not permutation invariant");
        /* Lorentz transformation */
        lorentz_transform(L, N, 1.5 * gyro_rng_normal(&r), 6.0 * gyro_rng_uniform(&r));
        apply_rows(LX, L, X, T, N);
        gyro_lorentz_pool_forward_f64(muL, &Sz, LX, w, K, 1, T, N);
        apply_rows(Lmu, L, mu, 1, N);
        ck_assert_msg(max_rel_diff(muL, Lmu, D) < 1e-11, "pool not Lorentz equivariant (K=%g): %.3g", K,
                      max_rel_diff(muL, Lmu, D));
        /* K = −1: the same as models/hyp's centroid with the weights as ν */
        if (K == -1.0) {
            double mh[N + 1];
            gyro_lorentz_centroid_f64(mh, X, w, T, N);
            ck_assert(max_rel_diff(mu, mh, D) < 1e-13);
        }
    }
}
END_TEST

START_TEST(test_attention_properties)
{
    enum { B = 2, TQ = 3, TK = 4, H = 2, NH = 4 };
    enum { D = NH + 1, ROW = H * D };
    gyro_rng r;
    gyro_rng_seed(&r, 123);
    static const double Ks[3] = {-1.0, -0.5, -2.0};
    for (int trial = 0; trial < 9; trial++) {
        double K = Ks[trial % 3];
        double Q[B * TQ * ROW], Kx[B * TK * ROW], V[B * TK * ROW], O[B * TQ * ROW];
        double A[B * H * TQ * TK], Sz[B * H * TQ];
        int km[B * TK];
        for (int i = 0; i < B * TK; i++) km[i] = 1;
        km[TK - 1] = 0; /* sequence 0: last key padded */
        rnd_points(Q, B * TQ * H, NH, K, 1.0, &r);
        rnd_points(Kx, B * TK * H, NH, K, 1.0, &r);
        rnd_points(V, B * TK * H, NH, K, 1.0, &r);
        gyro_lorentz_mha_forward_f64(O, A, Sz, Q, Kx, V, km, K, B, TQ, TK, H, NH);
        ck_assert(manifold_err(O, B * TQ * H, NH, K) < 1e-12);
        for (int i = 0; i < B * H * TQ; i++) {
            double s = 0.0;
            for (int j = 0; j < TK; j++) s += A[i * TK + j];
            ck_assert(fabs(s - 1.0) < 1e-14);
        }
        for (int h = 0; h < H; h++)
            for (int i = 0; i < TQ; i++) ck_assert(A[((0 * H + h) * TQ + i) * TK + TK - 1] == 0.0);
        /* a padded key is ignored: changing it changes nothing */
        double Kx2[B * TK * ROW], V2[B * TK * ROW], O2[B * TQ * ROW];
        memcpy(Kx2, Kx, sizeof Kx);
        memcpy(V2, V, sizeof V);
        rnd_points(Kx2 + (TK - 1) * ROW, H, NH, K, 2.0, &r);
        rnd_points(V2 + (TK - 1) * ROW, H, NH, K, 2.0, &r);
        gyro_lorentz_mha_forward_f64(O2, A, Sz, Q, Kx2, V2, km, K, B, TQ, TK, H, NH);
        ck_assert(max_rel_diff(O2, O, sizeof O / sizeof O[0]) == 0.0);
        /* keys permuted together with their values: same output */
        for (int b = 0; b < B; b++)
            for (int j = 0; j < TK; j++) {
                int s = b == 0 ? (j + 1) % (TK - 1) : TK - 1 - j; /* keep the padded key last in b=0 */
                if (b == 0 && j == TK - 1) s = TK - 1;
                memcpy(Kx2 + (b * TK + j) * ROW, Kx + (b * TK + s) * ROW, sizeof(double) * ROW);
                memcpy(V2 + (b * TK + j) * ROW, V + (b * TK + s) * ROW, sizeof(double) * ROW);
            }
        gyro_lorentz_mha_forward_f64(O2, A, Sz, Q, Kx2, V2, km, K, B, TQ, TK, H, NH);
        ck_assert_msg(max_rel_diff(O2, O, sizeof O / sizeof O[0]) < 1e-12, "key permutation");
        /* one Lorentz transformation of every point of every head: O ↦ Λ O */
        double L[(NH + 1) * (NH + 1)], LQ[B * TQ * ROW], LK[B * TK * ROW], LV[B * TK * ROW], LO[B * TQ * ROW];
        lorentz_transform(L, NH, 1.2 * gyro_rng_normal(&r), 6.0 * gyro_rng_uniform(&r));
        apply_rows(LQ, L, Q, B * TQ * H, NH);
        apply_rows(LK, L, Kx, B * TK * H, NH);
        apply_rows(LV, L, V, B * TK * H, NH);
        gyro_lorentz_mha_forward_f64(O2, A, Sz, LQ, LK, LV, km, K, B, TQ, TK, H, NH);
        apply_rows(LO, L, O, B * TQ * H, NH);
        ck_assert_msg(max_rel_diff(O2, LO, sizeof O / sizeof O[0]) < 1e-10,
                      "attention not Lorentz equivariant: %.3g", max_rel_diff(O2, LO, sizeof O / sizeof O[0]));
        /* all weights equal (every key the same point): the centroid of the valid values */
        for (int b = 0; b < B; b++)
            for (int j = 0; j < TK; j++) memcpy(Kx2 + (b * TK + j) * ROW, Kx, sizeof(double) * ROW);
        gyro_lorentz_mha_forward_f64(O2, A, Sz, Q, Kx2, V, km, K, B, TQ, TK, H, NH);
        for (int b = 0; b < B; b++)
            for (int h = 0; h < H; h++) {
                int nk = b == 0 ? TK - 1 : TK;
                double Vh[TK * (NH + 1)], wts[TK], mu[NH + 1], s1;
                for (int j = 0; j < nk; j++) {
                    memcpy(Vh + j * D, V + (b * TK + j) * ROW + h * D, sizeof(double) * D);
                    wts[j] = 1.0;
                }
                gyro_lorentz_pool_forward_f64(mu, &s1, Vh, wts, K, 1, nk, NH);
                for (int i = 0; i < TQ; i++) {
                    for (int j = 0; j < nk; j++)
                        ck_assert(fabs(A[((b * H + h) * TQ + i) * TK + j] - 1.0 / nk) < 1e-15);
                    ck_assert_msg(max_rel_diff(O2 + (b * TQ + i) * ROW + h * D, mu, D) < 1e-13,
                                  "equal weights: not the centroid");
                    if (K == -1.0) {
                        double mh[NH + 1];
                        gyro_lorentz_centroid_f64(mh, Vh, wts, nk, NH);
                        ck_assert(max_rel_diff(O2 + (b * TQ + i) * ROW + h * D, mh, D) < 1e-13);
                    }
                }
            }
    }
}
END_TEST

START_TEST(test_head_and_linear_properties)
{
    gyro_rng r;
    gyro_rng_seed(&r, 5);
    enum { N = 6, C = 5, M = 4, ROWS = 3 };
    double X[2 * (N + 1)], P[C * (N + 1)], beta[C], lg[2 * C];
    rnd_points(X, 2, N, -1.0, 1.0, &r);
    rnd_points(P, C, N, -1.0, 1.0, &r);
    rnd_normal(beta, C, 1.0, &r);
    gyro_lorentz_head_forward_f64(lg, X, P, beta, -1.0, 2, C, N);
    for (int b = 0; b < 2; b++)
        for (int c = 0; c < C; c++) {
            double dd = gyro_lorentz_dist_f64(X + b * (N + 1), P + c * (N + 1), N);
            double ref = -2.0 * (cosh(dd) - 1.0) + beta[c];
            ck_assert_msg(fabs(lg[b * C + c] - ref) < 1e-9 * fmax(1.0, fabs(ref)), "head logit");
        }
    /* hlinear outputs on the hyperboloid of their K (float64), and the y₀ formula */
    static const double Ks[3] = {-1.0, -0.25, -4.0};
    for (int t = 0; t < 3; t++) {
        double K = Ks[t], eps = sqrt(-1.0 / K) + 0.05;
        double x[ROWS * (N + 1)], W[M * (N + 1)], bb[M], v[N + 1], bt = 0.3, ll = log(5.0);
        double y[ROWS * (M + 1)], U[ROWS * M];
        rnd_points(x, ROWS, N, K, 1.5, &r);
        rnd_normal(W, M * (N + 1), 0.5, &r);
        rnd_normal(bb, M, 0.3, &r);
        rnd_normal(v, N + 1, 0.3, &r);
        gyro_lorentz_hlinear_forward_f64(y, U, NULL, x, NULL, NULL, W, bb, v, &bt, &ll, eps,
                                         GYRO_LORENTZ_ACT_NONE, K, ROWS, N, M, 1);
        ck_assert(manifold_err(y, ROWS, M, K) < 1e-13);
        for (int i = 0; i < ROWS; i++) {
            double z = bt;
            for (int e = 0; e <= N; e++) z += v[e] * x[i * (N + 1) + e];
            ck_assert(fabs(y[i * (M + 1)] - (5.0 / (1.0 + exp(-z)) + eps)) < 1e-13);
        }
    }
}
END_TEST

/* float32 kernels against float64 on the same (float-rounded) inputs. */
START_TEST(test_f32_matches_f64)
{
    gyro_rng r;
    gyro_rng_seed(&r, 31);
    enum { B = 2, T = 5, H = 2, NH = 6, N = 12, M = 8 };
    enum { D = NH + 1, ROW = H * D };
    double Qd[B * T * ROW], Kd[B * T * ROW], Vd[B * T * ROW], Od[B * T * ROW], Ad[B * H * T * T], Sd[B * H * T];
    float Qf[B * T * ROW], Kf[B * T * ROW], Vf[B * T * ROW], Of[B * T * ROW], Af[B * H * T * T], Sf[B * H * T];
    rnd_points(Qd, B * T * H, NH, -1.0, 1.0, &r);
    rnd_points(Kd, B * T * H, NH, -1.0, 1.0, &r);
    rnd_points(Vd, B * T * H, NH, -1.0, 1.0, &r);
    for (int i = 0; i < B * T * ROW; i++) {
        Qf[i] = (float)Qd[i]; Qd[i] = Qf[i];
        Kf[i] = (float)Kd[i]; Kd[i] = Kf[i];
        Vf[i] = (float)Vd[i]; Vd[i] = Vf[i];
    }
    gyro_lorentz_mha_forward_f64(Od, Ad, Sd, Qd, Kd, Vd, NULL, -1.0, B, T, T, H, NH);
    gyro_lorentz_mha_forward_f32(Of, Af, Sf, Qf, Kf, Vf, NULL, -1.0, B, T, T, H, NH);
    double e = 0.0, am = 0.0;
    for (int i = 0; i < B * T * ROW; i++) { e = fmax(e, fabs(Of[i] - Od[i])); am = fmax(am, fabs(Od[i])); }
    ck_assert_msg(e / am < 1e-5, "mha f32 vs f64: %.3g", e / am);
    double gd[B * T * ROW], dQd[B * T * ROW] = {0}, dKd[B * T * ROW] = {0}, dVd[B * T * ROW] = {0};
    float gf[B * T * ROW], dQf[B * T * ROW] = {0}, dKf[B * T * ROW] = {0}, dVf[B * T * ROW] = {0};
    for (int i = 0; i < B * T * ROW; i++) { gf[i] = (float)gyro_rng_normal(&r); gd[i] = gf[i]; }
    gyro_lorentz_mha_backward_f64(dQd, dKd, dVd, gd, Od, Ad, Sd, Qd, Kd, Vd, NULL, -1.0, B, T, T, H, NH);
    gyro_lorentz_mha_backward_f32(dQf, dKf, dVf, gf, Of, Af, Sf, Qf, Kf, Vf, NULL, -1.0, B, T, T, H, NH);
    const double *gds[3] = {dQd, dKd, dVd};
    const float *gfs[3] = {dQf, dKf, dVf};
    for (int k = 0; k < 3; k++) {
        e = am = 0.0;
        for (int i = 0; i < B * T * ROW; i++) { e = fmax(e, fabs(gfs[k][i] - gds[k][i])); am = fmax(am, fabs(gds[k][i])); }
        ck_assert_msg(e / am < 1e-4, "mha grad %d f32 vs f64: %.3g", k, e / am);
    }
    /* posenc (hlinear with a bias-point table) */
    double xd[B * T * (N + 1)], Wd[M * (N + 1)], bd[M], vd[N + 1], Pd[T * (M + 1)], btd = 0.2, lld = log(10.0);
    float xf[B * T * (N + 1)], Wf[M * (N + 1)], bf[M], vf[N + 1], Pf[T * (M + 1)], btf = 0.2f, llf = (float)log(10.0);
    double yd[B * T * (M + 1)], Ud[B * T * M], Hd[B * T * (N + 1)];
    float yf[B * T * (M + 1)], Uf[B * T * M], Hf[B * T * (N + 1)];
    rnd_points(xd, B * T, N, -1.0, 1.0, &r);
    rnd_points(Pd, T, M, -1.0, 1.0, &r);
    rnd_normal(Wd, M * (N + 1), 0.4, &r);
    rnd_normal(bd, M, 0.2, &r);
    rnd_normal(vd, N + 1, 0.2, &r);
#define RND2F(a, f, len) for (int i = 0; i < (len); i++) { f[i] = (float)a[i]; a[i] = f[i]; }
    RND2F(xd, xf, B * T * (N + 1));
    RND2F(Pd, Pf, T * (M + 1));
    RND2F(Wd, Wf, M * (N + 1));
    RND2F(bd, bf, M);
    RND2F(vd, vf, N + 1);
    lld = llf;
#undef RND2F
    gyro_lorentz_posenc_forward_f64(yd, Ud, Hd, xd, NULL, Pd, Wd, bd, vd, &btd, &lld, 1.1,
                                    GYRO_LORENTZ_ACT_RELU, -1.0, B, T, N, M);
    gyro_lorentz_posenc_forward_f32(yf, Uf, Hf, xf, NULL, Pf, Wf, bf, vf, &btf, &llf, 1.1,
                                    GYRO_LORENTZ_ACT_RELU, -1.0, B, T, N, M);
    e = am = 0.0;
    for (int i = 0; i < B * T * (M + 1); i++) { e = fmax(e, fabs(yf[i] - yd[i])); am = fmax(am, fabs(yd[i])); }
    ck_assert_msg(e / am < 1e-5, "posenc f32 vs f64: %.3g", e / am);
}
END_TEST

START_TEST(test_report)
{
    printf("%-34s %12s %12s\n", "lorentz layer (fd, float64)", "max abs", "max rel");
    for (int i = 0; i < NSPECS; i++)
        printf("%-34s %12.3g %12.3g\n", g_specs[i].name, g_max_abs[i], g_max_rel[i]);
    fflush(stdout);
}
END_TEST

/* The group form equals G separate hlinear calls (forward values, every gradient), and its
 * gradient matches central differences of the loss Σ w·y. */
START_TEST(test_hlinear_group)
{
    enum { R = 5, N = 6, M = 3, G = 4 };
    const int d = N + 1;
    const double K = -1.5, eps = 1.1 * sqrt(1.0 / 1.5);
    gyro_rng r;
    gyro_rng_seed(&r, 21);
    double x[R * (N + 1)], W[G * M * (N + 1)], b[G * M], Vt[G * (N + 1)], tl[2 * G];
    rnd_points(x, R, N, K, 0.8, &r);
    for (int i = 0; i < G * M * d; i++) W[i] = gyro_rng_uniform(&r) - 0.5;
    for (int i = 0; i < G * M; i++) b[i] = 0.3 * (gyro_rng_uniform(&r) - 0.5);
    for (int i = 0; i < G * d; i++) Vt[i] = 0.4 * (gyro_rng_uniform(&r) - 0.5);
    for (int g = 0; g < G; g++) {
        tl[2 * g] = 0.5 * (gyro_rng_uniform(&r) - 0.5);
        tl[2 * g + 1] = 0.5 + gyro_rng_uniform(&r);
    }
    double y[R * G * (M + 1)], U[R * G * M], Z[R * G], w[R * G * (M + 1)];
    for (int i = 0; i < R * G * (M + 1); i++) w[i] = gyro_rng_uniform(&r) - 0.5;
    gyro_lorentz_hlinear_group_forward_f64(y, U, Z, x, W, b, Vt, tl, eps, K, R, N, M, G);
    double dx[R * (N + 1)] = {0}, dW[G * M * (N + 1)] = {0}, db[G * M] = {0}, dV[G * (N + 1)] = {0};
    double dtl[2 * G] = {0}, work[R * G * (M + 1)];
    gyro_lorentz_hlinear_group_backward_f64(dx, dW, db, dV, dtl, work, w, U, Z, x, W, Vt, tl, eps,
                                            K, R, N, M, G);
    /* against G hlinear calls */
    double dx2[R * (N + 1)] = {0};
    for (int g = 0; g < G; g++) {
        double yg[R * (M + 1)], Ug[R * M], wg[R * (M + 1)], wk[R * (M + N + 1)];
        double dWg[M * (N + 1)] = {0}, dbg[M] = {0}, dvg[N + 1] = {0}, dbt = 0, dll = 0;
        gyro_lorentz_hlinear_forward_f64(yg, Ug, NULL, x, NULL, NULL, W + g * M * d, b + g * M,
                                         Vt + g * d, tl + 2 * g, tl + 2 * g + 1, eps,
                                         GYRO_LORENTZ_ACT_NONE, K, R, N, M, 1);
        for (int rr = 0; rr < R; rr++)
            for (int e = 0; e <= M; e++) {
                ck_assert(fabs(yg[rr * (M + 1) + e] - y[rr * G * (M + 1) + g * (M + 1) + e]) < 1e-12);
                wg[rr * (M + 1) + e] = w[rr * G * (M + 1) + g * (M + 1) + e];
            }
        gyro_lorentz_hlinear_backward_f64(dx2, NULL, dWg, dbg, dvg, &dbt, &dll, wk, wg, Ug, NULL, x,
                                          NULL, NULL, W + g * M * d, Vt + g * d, tl + 2 * g,
                                          tl + 2 * g + 1, eps, GYRO_LORENTZ_ACT_NONE, K, R, N, M, 1);
        for (int i = 0; i < M * d; i++) ck_assert(fabs(dWg[i] - dW[g * M * d + i]) < 1e-12);
        for (int i = 0; i < M; i++) ck_assert(fabs(dbg[i] - db[g * M + i]) < 1e-12);
        for (int i = 0; i < d; i++) ck_assert(fabs(dvg[i] - dV[g * d + i]) < 1e-12);
        ck_assert(fabs(dbt - dtl[2 * g]) < 1e-12 && fabs(dll - dtl[2 * g + 1]) < 1e-12);
    }
    for (int i = 0; i < R * d; i++) ck_assert(fabs(dx2[i] - dx[i]) < 1e-12);
    /* central differences of Σ w·y in x and in the time parameters */
    const double h = 1e-6;
    double *ps[2] = {x, tl};
    const double *gs[2] = {dx, dtl};
    const int ns[2] = {R * d, 2 * G};
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < ns[k]; i++) {
            double save = ps[k][i], lp = 0, lm = 0;
            ps[k][i] = save + h;
            gyro_lorentz_hlinear_group_forward_f64(y, U, Z, x, W, b, Vt, tl, eps, K, R, N, M, G);
            for (int j = 0; j < R * G * (M + 1); j++) lp += w[j] * y[j];
            ps[k][i] = save - h;
            gyro_lorentz_hlinear_group_forward_f64(y, U, Z, x, W, b, Vt, tl, eps, K, R, N, M, G);
            for (int j = 0; j < R * G * (M + 1); j++) lm += w[j] * y[j];
            ps[k][i] = save;
            double num = (lp - lm) / (2 * h);
            ck_assert_msg(fabs(num - gs[k][i]) < 1e-6 * fmax(1.0, fabs(num)), "group fd %d/%d: %g vs %g",
                          k, i, num, gs[k][i]);
        }
}
END_TEST

int main(void)
{
    Suite *su = suite_create("lorentz_layers");
    TCase *tc = tcase_create("finite_differences");
    tcase_add_loop_test(tc, test_fd, 0, NSPECS);
    tcase_add_test(tc, test_report);
    suite_add_tcase(su, tc);
    TCase *tp = tcase_create("properties");
    tcase_set_timeout(tp, 120);
    tcase_add_test(tp, test_linear_f32_stays_on_manifold);
    tcase_add_test(tp, test_pool_invariances);
    tcase_add_test(tp, test_attention_properties);
    tcase_add_test(tp, test_head_and_linear_properties);
    tcase_add_test(tp, test_f32_matches_f64);
    tcase_add_test(tp, test_hlinear_group);
    suite_add_tcase(su, tp);
    SRunner *sr = srunner_create(su);
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_NORMAL);
    int nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nf == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

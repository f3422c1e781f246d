/* check_layers.c — Check suite for models/layers: a finite-difference check in float64 of
 * EVERY backward kernel (geometry maps, embedding, linear, attention, head merge, LayerNorm,
 * ReLU, dropout, pooling, MLR), in both geometries where the kernel has two; the max absolute
 * and relative errors are printed. Plus float32 vs float64 agreement of the forward kernels.
 *
 * Method: a random weight vector w defines L = <w, forward(inputs)>; the backward kernel is
 * run with dout = w (accumulating onto a non-zero gradient buffer, to check the += contract);
 * every input coordinate is perturbed by ±h (h = 1e-6) and the central difference compared.
 */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/core/rng.h"
#include "models/layers/kernels.h"
#include "tests/support/fd.h"

/* ---- the finite-difference harness -------------------------------------------------------- */

#define MAXIN 6

typedef struct fd_case {
    const char *name;
    int n_in;
    double *in[MAXIN];       /* inputs to differentiate */
    size_t in_n[MAXIN];
    double *out;             /* forward output */
    size_t out_n;
    void (*fwd)(struct fd_case *);
    void (*bwd)(struct fd_case *, double **grads, const double *dout);
    void *ctx;
} fd_case;

/* s = Σ w ⊙ out of a case at its current inputs (the objective of fd_central). */
typedef struct fd_objective {
    fd_case *k;
    const double *w;
} fd_objective;

static double fd_loss(void *vctx)
{
    const fd_objective *o = vctx;
    o->k->fwd(o->k);
    double s = 0;
    for (size_t i = 0; i < o->k->out_n; i++)
        s += o->w[i] * o->k->out[i];
    return s;
}

/* Check every input coordinate; returns the max relative error (also printed with the abs). */
static double fd_check(fd_case *k, uint64_t seed)
{
    gyro_rng r;
    gyro_rng_seed(&r, seed);
    double *w = malloc(k->out_n * sizeof(double));
    for (size_t i = 0; i < k->out_n; i++)
        w[i] = 2 * gyro_rng_uniform(&r) - 1;
    double *g[MAXIN] = {0};
    double *g0[MAXIN] = {0};
    for (int j = 0; j < k->n_in; j++) {
        g[j] = malloc(k->in_n[j] * sizeof(double));
        g0[j] = malloc(k->in_n[j] * sizeof(double));
        for (size_t i = 0; i < k->in_n[j]; i++)
            g[j][i] = g0[j][i] = 0.25 * (2 * gyro_rng_uniform(&r) - 1); /* += contract */
    }
    k->fwd(k);
    k->bwd(k, g, w);
    fd_objective obj = {k, w};
    fd_stats st = {.floor = 1e-3};
    for (int j = 0; j < k->n_in; j++)
        for (size_t i = 0; i < k->in_n[j]; i++)
            fd_stats_add(&st, i, fd_central(&k->in[j][i], 1e-6, fd_loss, &obj), g[j][i] - g0[j][i]);
    const double max_abs = st.max_abs, max_rel = st.max_rel;
    printf("fd %-28s max abs %.3e  max rel %.3e\n", k->name, max_abs, max_rel);
    for (int j = 0; j < k->n_in; j++) {
        free(g[j]);
        free(g0[j]);
    }
    free(w);
    return max_rel;
}

static double *rnd(gyro_rng *r, size_t n, double scale)
{
    double *x = malloc(n * sizeof(double));
    for (size_t i = 0; i < n; i++)
        x[i] = scale * (2 * gyro_rng_uniform(r) - 1);
    return x;
}

/* Random ball points of norm < 0.7 (well inside, so no projection kink is crossed). */
static double *rnd_ball(gyro_rng *r, int rows, int n)
{
    double *x = rnd(r, (size_t)rows * n, 1.0);
    for (int i = 0; i < rows; i++) {
        double s = 0;
        for (int j = 0; j < n; j++) s += x[i * n + j] * x[i * n + j];
        double target = 0.7 * gyro_rng_uniform(r);
        double f = target / sqrt(s + 1e-300);
        for (int j = 0; j < n; j++) x[i * n + j] *= f;
    }
    return x;
}

#define FD_TOL 1e-6

/* ---- geometry maps ------------------------------------------------------------------------ */

typedef struct geo_ctx { int geo; int rows, n; double c; int use_out; double scratch[64]; } geo_ctx;

static void exp0_f(fd_case *k) { geo_ctx *x = k->ctx; gyro_geo_exp0_f64(k->out, x->n, k->in[0], x->n, x->geo, x->c, x->rows, x->n); }
static void exp0_b(fd_case *k, double **g, const double *d) { geo_ctx *x = k->ctx; gyro_geo_exp0_backward_f64(g[0], x->n, x->scratch, d, x->n, x->use_out ? k->out : NULL, x->n, k->in[0], x->n, x->geo, x->c, x->rows, x->n); }
static void log0_f(fd_case *k) { geo_ctx *x = k->ctx; gyro_geo_log0_f64(k->out, x->n, k->in[0], x->n, x->geo, x->c, x->rows, x->n); }
static void log0_b(fd_case *k, double **g, const double *d) { geo_ctx *x = k->ctx; gyro_geo_log0_backward_f64(g[0], x->n, d, x->n, k->in[0], x->n, x->geo, x->c, x->rows, x->n); }
static void add_f(fd_case *k) { geo_ctx *x = k->ctx; gyro_geo_add_f64(k->out, k->in[0], k->in[1], x->n, x->geo, x->c, x->rows, x->n); }
static void add_b(fd_case *k, double **g, const double *d) { geo_ctx *x = k->ctx; gyro_geo_add_backward_f64(g[0], g[1], x->scratch, d, x->use_out ? k->out : NULL, k->in[0], k->in[1], x->n, x->geo, x->c, x->rows, x->n); }
static void addb_f(fd_case *k) { geo_ctx *x = k->ctx; gyro_geo_add_f64(k->out, k->in[0], k->in[1], 0, x->geo, x->c, x->rows, x->n); }
static void addb_b(fd_case *k, double **g, const double *d) { geo_ctx *x = k->ctx; gyro_geo_add_backward_f64(g[0], g[1], x->scratch, d, x->use_out ? k->out : NULL, k->in[0], k->in[1], 0, x->geo, x->c, x->rows, x->n); }

START_TEST(test_fd_geo)
{
    for (int variant = 0; variant < 4; variant++) {
        const int geo = variant & 1, use_out = variant >> 1; /* with/without the output */
        gyro_rng r;
        gyro_rng_seed(&r, 100 + geo);
        geo_ctx x = {.geo = geo, .rows = 4, .n = 5, .c = 0.8, .use_out = use_out};
        double out[20];
        double *v = rnd(&r, 20, 0.8), *y = rnd_ball(&r, 4, 5), *z = rnd_ball(&r, 4, 5);
        double *bias = rnd_ball(&r, 1, 5);
        /* a long tangent vector: exp0 lands beyond the projection radius (radial Jacobian) */
        v[5] = 9.0;
        char name[64];
        fd_case k1 = {.n_in = 1, .in = {v}, .in_n = {20}, .out = out, .out_n = 20, .fwd = exp0_f, .bwd = exp0_b, .ctx = &x};
        snprintf(name, sizeof name, "geo_exp0 (%s%s)", geo ? "ball" : "flat", use_out ? ", out" : ""); k1.name = name;
        ck_assert_double_lt(fd_check(&k1, 1), FD_TOL);
        fd_case k2 = {.n_in = 1, .in = {y}, .in_n = {20}, .out = out, .out_n = 20, .fwd = log0_f, .bwd = log0_b, .ctx = &x};
        snprintf(name, sizeof name, "geo_log0 (%s)", geo ? "ball" : "flat"); k2.name = name;
        ck_assert_double_lt(fd_check(&k2, 2), FD_TOL);
        fd_case k3 = {.n_in = 2, .in = {y, z}, .in_n = {20, 20}, .out = out, .out_n = 20, .fwd = add_f, .bwd = add_b, .ctx = &x};
        snprintf(name, sizeof name, "geo_add (%s%s)", geo ? "ball" : "flat", use_out ? ", out" : ""); k3.name = name;
        ck_assert_double_lt(fd_check(&k3, 3), FD_TOL);
        fd_case k4 = {.n_in = 2, .in = {y, bias}, .in_n = {20, 5}, .out = out, .out_n = 20, .fwd = addb_f, .bwd = addb_b, .ctx = &x};
        snprintf(name, sizeof name, "geo_add bcast (%s%s)", geo ? "ball" : "flat", use_out ? ", out" : ""); k4.name = name;
        ck_assert_double_lt(fd_check(&k4, 4), FD_TOL);
        free(v); free(y); free(z); free(bias);
    }
}
END_TEST

/* ---- embedding ---------------------------------------------------------------------------- */

typedef struct emb_ctx { int geo, B, T, C; double c; int32_t tok[12]; int len[3]; double *pos; double scratch[32]; } emb_ctx;

static void emb_f(fd_case *k) { emb_ctx *x = k->ctx; gyro_embed_forward_f64(k->out, x->tok, x->len, k->in[0], x->pos, x->geo, x->c, x->B, x->T, x->C); }
static void emb_b(fd_case *k, double **g, const double *d) { emb_ctx *x = k->ctx; gyro_embed_backward_f64(g[0], x->scratch, d, k->out, x->tok, x->len, k->in[0], x->pos, x->geo, x->c, x->B, x->T, x->C); }

START_TEST(test_fd_embed)
{
    for (int geo = 0; geo < 2; geo++) {
        gyro_rng r;
        gyro_rng_seed(&r, 200 + geo);
        emb_ctx x = {.geo = geo, .B = 3, .T = 4, .C = 6, .c = 1.0,
                     .tok = {0, 1, 0, 4, 2, 2, 3, 9, 4, 0, 1, 3}, .len = {4, 3, 1}};
        x.pos = malloc(4 * 6 * sizeof(double));
        gyro_embed_positions_f64(x.pos, geo, 1.0, sqrt(2.0 / 6), 4, 6);
        double *wte = rnd_ball(&r, 5, 6);
        double out[72];
        fd_case k = {.name = geo ? "embed (ball)" : "embed (flat)", .n_in = 1, .in = {wte}, .in_n = {30}, .out = out, .out_n = 72, .fwd = emb_f, .bwd = emb_b, .ctx = &x};
        ck_assert_double_lt(fd_check(&k, 5), FD_TOL);
        /* padding rows are the origin */
        ck_assert(out[(2 * 4 + 2) * 6] == 0.0 && out[(1 * 4 + 3) * 6 + 5] == 0.0);
        free(wte); free(x.pos);
    }
}
END_TEST

/* ---- linear ------------------------------------------------------------------------------- */

typedef struct lin_ctx { int N, K, M; } lin_ctx;
static void lin_f(fd_case *k) { lin_ctx *x = k->ctx; gyro_linear_forward_f64(k->out, x->M, k->in[0], x->K, k->in[1], x->K, x->N, x->K, x->M); }
static void lin_b(fd_case *k, double **g, const double *d) { lin_ctx *x = k->ctx; gyro_linear_backward_f64(g[0], x->K, g[1], x->K, d, x->M, k->in[0], x->K, k->in[1], x->K, x->N, x->K, x->M); }

START_TEST(test_fd_linear)
{
    gyro_rng r;
    gyro_rng_seed(&r, 300);
    lin_ctx x = {.N = 5, .K = 4, .M = 3};
    double *X = rnd(&r, 20, 1), *W = rnd(&r, 12, 1), out[15];
    fd_case k = {.name = "linear", .n_in = 2, .in = {X, W}, .in_n = {20, 12}, .out = out, .out_n = 15, .fwd = lin_f, .bwd = lin_b, .ctx = &x};
    ck_assert_double_lt(fd_check(&k, 6), FD_TOL);
    free(X); free(W);
}
END_TEST

/* ---- attention ---------------------------------------------------------------------------- */

typedef struct att_ctx { int B, T, H, D; int len[2]; double *P; double scratch[64]; } att_ctx;
static void att_f(fd_case *k) { att_ctx *x = k->ctx; gyro_attention_forward_f64(k->out, x->P, k->in[0], x->len, x->B, x->T, x->H, x->D); }
static void att_b(fd_case *k, double **g, const double *d) { att_ctx *x = k->ctx; gyro_attention_backward_f64(g[0], x->scratch, d, k->in[0], x->P, x->len, x->B, x->T, x->H, x->D); }

START_TEST(test_fd_attention)
{
    gyro_rng r;
    gyro_rng_seed(&r, 400);
    att_ctx x = {.B = 2, .T = 5, .H = 2, .D = 3, .len = {5, 3}};
    const int A = 6, N = 10;
    x.P = calloc(2 * 2 * 25, sizeof(double));
    double *qkv = rnd(&r, (size_t)N * 3 * A, 1.5), out[60];
    fd_case k = {.name = "attention", .n_in = 1, .in = {qkv}, .in_n = {(size_t)N * 3 * A}, .out = out, .out_n = 60, .fwd = att_f, .bwd = att_b, .ctx = &x};
    ck_assert_double_lt(fd_check(&k, 7), FD_TOL);
    /* padded query rows are zero; padded keys get no weight */
    for (int i = 0; i < A; i++) ck_assert(out[(5 + 4) * A + i] == 0.0);
    att_f(&k);
    double s = 0;
    for (int j = 0; j < 3; j++) s += x.P[(2 * 1 + 0) * 25 + 0 * 5 + j];
    ck_assert(fabs(s - 1.0) < 1e-12);
    /* changing a padded key/value row changes nothing */
    double before = out[5 * A];
    for (int i = 0; i < 3 * A; i++) qkv[(5 + 4) * 3 * A + i] += 3.0;
    att_f(&k);
    ck_assert(out[5 * A] == before);
    free(qkv); free(x.P);
}
END_TEST

/* The general path (heads wider than 8: four product calls per head) by finite differences. */
START_TEST(test_fd_attention_wide)
{
    gyro_rng r;
    gyro_rng_seed(&r, 410);
    att_ctx x = {.B = 2, .T = 4, .H = 1, .D = 9, .len = {4, 2}};
    const int A = 9, N = 8;
    x.P = calloc(2 * 16, sizeof(double));
    double *qkv = rnd(&r, (size_t)N * 3 * A, 1.0), out[72];
    fd_case k = {.name = "attention (wide heads)", .n_in = 1, .in = {qkv}, .in_n = {(size_t)N * 3 * A}, .out = out, .out_n = 72, .fwd = att_f, .bwd = att_b, .ctx = &x};
    ck_assert_double_lt(fd_check(&k, 17), FD_TOL);
    free(qkv); free(x.P);
}
END_TEST

/* The reference loop of attention_backward (the formulas of kernels.h, one scalar at a time). */
#define ATT_REF(T, SFX)                                                                          \
    static void attention_backward_ref_##SFX(T *dQKV, const T *dO, const T *QKV, const T *P,      \
                                             const int *len, int B, int Tl, int H, int D)         \
    {                                                                                            \
        const int A = H * D, ld = 3 * A;                                                         \
        const double s = 1.0 / sqrt((double)D);                                                  \
        double *dp = malloc(sizeof(double) * Tl);                                                \
        for (int b = 0; b < B; b++)                                                              \
            for (int h = 0; h < H; h++) {                                                        \
                const int n = len[b];                                                            \
                const long o = (long)b * Tl * ld + h * D;                                        \
                const T *q = QKV + o, *k = q + A, *v = q + 2 * A;                                \
                T *dq = dQKV + o, *dk = dq + A, *dv = dq + 2 * A;                                \
                const T *p = P + ((long)b * H + h) * Tl * Tl;                                    \
                const T *g = dO + (long)b * Tl * A + h * D;                                      \
                for (int i = 0; i < n; i++) {                                                    \
                    double dot = 0;                                                              \
                    for (int j = 0; j < n; j++) {                                                \
                        dp[j] = 0;                                                               \
                        for (int d = 0; d < D; d++) dp[j] += (double)g[i * A + d] * v[j * ld + d]; \
                        dot += p[i * Tl + j] * dp[j];                                            \
                    }                                                                            \
                    for (int j = 0; j < n; j++) {                                                \
                        const double ds = p[i * Tl + j] * (dp[j] - dot);                         \
                        for (int d = 0; d < D; d++) {                                            \
                            dq[i * ld + d] += (T)(s * ds * k[j * ld + d]);                       \
                            dk[j * ld + d] += (T)(s * ds * q[i * ld + d]);                       \
                            dv[j * ld + d] += (T)(p[i * Tl + j] * g[i * A + d]);                 \
                        }                                                                        \
                    }                                                                            \
                }                                                                                \
            }                                                                                    \
        free(dp);                                                                                \
    }
ATT_REF(double, f64)
ATT_REF(float, f32)

/* The narrow-head vector backward against the reference loop, float64 and float32: the seed's
 * heads (16 of 7) and the twin's (16 of 8) over lengths that cover 1, 2 and 3 blocks of 8 keys
 * and a padded batch (lengths below T). */
START_TEST(test_attention_backward_matches_reference)
{
    for (int variant = 0; variant < 2; variant++) {
        const int B = 4, Tl = 20, H = 16, D = variant ? 8 : 7, A = H * D, N = B * Tl;
        const int len[4] = {20, 12, 7, 1};
        gyro_rng r;
        gyro_rng_seed(&r, 450 + variant);
        double *qkv = rnd(&r, (size_t)N * 3 * A, 1.5), *dO = rnd(&r, (size_t)N * A, 1.0);
        double *P = calloc((size_t)B * H * Tl * Tl, sizeof(double)), *O = calloc((size_t)N * A, sizeof(double));
        double *g = calloc((size_t)N * 3 * A, sizeof(double)), *gr = calloc((size_t)N * 3 * A, sizeof(double));
        double scr[400];
        gyro_attention_forward_f64(O, P, qkv, len, B, Tl, H, D);
        gyro_attention_backward_f64(g, scr, dO, qkv, P, len, B, Tl, H, D);
        attention_backward_ref_f64(gr, dO, qkv, P, len, B, Tl, H, D);
        double e64 = 0, m = 0;
        for (int i = 0; i < N * 3 * A; i++) { e64 = fmax(e64, fabs(g[i] - gr[i])); m = fmax(m, fabs(gr[i])); }
        float *qf = malloc(sizeof(float) * N * 3 * A), *dOf = malloc(sizeof(float) * N * A);
        float *Pf = calloc((size_t)B * H * Tl * Tl, sizeof(float)), *Of = calloc((size_t)N * A, sizeof(float));
        float *gf = calloc((size_t)N * 3 * A, sizeof(float)), *grf = calloc((size_t)N * 3 * A, sizeof(float));
        float scrf[400];
        for (int i = 0; i < N * 3 * A; i++) qf[i] = (float)qkv[i];
        for (int i = 0; i < N * A; i++) dOf[i] = (float)dO[i];
        gyro_attention_forward_f32(Of, Pf, qf, len, B, Tl, H, D);
        gyro_attention_backward_f32(gf, scrf, dOf, qf, Pf, len, B, Tl, H, D);
        attention_backward_ref_f32(grf, dOf, qf, Pf, len, B, Tl, H, D);
        double e32 = 0;
        for (int i = 0; i < N * 3 * A; i++) e32 = fmax(e32, fabs(gf[i] - grf[i]));
        printf("attention backward (D = %d) vs reference: f64 max abs %.2e, f32 %.2e (of %.2e)\n", D, e64, e32, m);
        ck_assert_double_lt(e64, 1e-13 * fmax(m, 1.0));
        ck_assert_double_lt(e32, 1e-5 * fmax(m, 1.0));
        /* padded query rows get no gradient */
        for (int t = len[1]; t < Tl; t++)
            for (int i = 0; i < 3 * A; i++) ck_assert(g[((long)Tl + t) * 3 * A + i] == 0.0);
        free(qkv); free(dO); free(P); free(O); free(g); free(gr);
        free(qf); free(dOf); free(Pf); free(Of); free(gf); free(grf);
    }
}
END_TEST

/* ---- head merge --------------------------------------------------------------------------- */

typedef struct merge_ctx { int geo, N, H, D, C; double c; double *RR, *RB, *dRR; double scratch[256]; } merge_ctx;
static void merge_f(fd_case *k) { merge_ctx *x = k->ctx; gyro_merge_forward_f64(k->out, x->RR, x->RB, k->in[0], k->in[1], x->geo, x->c, x->N, x->H, x->D, x->C); }
static void merge_b(fd_case *k, double **g, const double *d) { merge_ctx *x = k->ctx; gyro_merge_backward_f64(g[0], g[1], x->dRR, x->scratch, d, k->in[0], x->RR, x->RB, k->in[1], x->geo, x->c, x->N, x->H, x->D, x->C); }

START_TEST(test_fd_merge)
{
    for (int geo = 0; geo < 2; geo++) {
        gyro_rng r;
        gyro_rng_seed(&r, 500 + geo);
        merge_ctx x = {.geo = geo, .N = 4, .H = 3, .D = 2, .C = 5, .c = 1.3};
        x.RR = calloc(4 * 3 * 5, sizeof(double));
        x.dRR = calloc(4 * 3 * 5, sizeof(double));
        x.RB = calloc(4 * 2 * 3 * 5, sizeof(double));
        double *O = rnd(&r, 4 * 6, 0.8), *W = rnd(&r, 5 * 6, 0.6), out[20];
        fd_case k = {.name = geo ? "merge (ball, gyro-added)" : "merge (flat)", .n_in = 2, .in = {O, W}, .in_n = {24, 30}, .out = out, .out_n = 20, .fwd = merge_f, .bwd = merge_b, .ctx = &x};
        ck_assert_double_lt(fd_check(&k, 8), FD_TOL);
        free(O); free(W); free(x.RR); free(x.dRR); free(x.RB);
    }
}
END_TEST

/* Clipping everywhere: heads and partial sums pushed past the projection radius (O scaled up),
 * away from the kink itself, so the fused backward's projected branches are differentiated. */
START_TEST(test_fd_merge_projected)
{
    gyro_rng r;
    gyro_rng_seed(&r, 520);
    merge_ctx x = {.geo = 1, .N = 5, .H = 4, .D = 2, .C = 6, .c = 0.9};
    x.RR = calloc(5 * 4 * 6, sizeof(double));
    x.dRR = calloc(5 * 4 * 6, sizeof(double));
    x.RB = calloc(5 * 2 * 4 * 6, sizeof(double));
    double *O = rnd(&r, 5 * 8, 3.0), *W = rnd(&r, 6 * 8, 1.0), out[30];
    merge_f(&(fd_case){.out = out, .in = {O, W}, .ctx = &x});
    int clipped = 0; /* partial sums on the radius (1 − ε)/√c */
    for (int n = 0; n < 5; n++)
        for (int i = 1; i < 4; i++) {
            const double *s = x.RB + (long)n * 2 * 4 * 6 + (4 + i) * 6;
            double ss = 0;
            for (int j = 0; j < 6; j++) ss += s[j] * s[j];
            clipped += sqrt(0.9 * ss) > 1 - 2e-3;
        }
    ck_assert_int_gt(clipped, 3);
    fd_case k = {.name = "merge (ball, projected)", .n_in = 2, .in = {O, W}, .in_n = {40, 48}, .out = out, .out_n = 30, .fwd = merge_f, .bwd = merge_b, .ctx = &x};
    ck_assert_double_lt(fd_check(&k, 21), FD_TOL);
    /* without a merge cache: the fused forward sum, the backward recomputing the partial sums */
    double *rb = x.RB;
    x.RB = NULL;
    fd_case k2 = {.name = "merge (ball, projected, no RB)", .n_in = 2, .in = {O, W}, .in_n = {40, 48}, .out = out, .out_n = 30, .fwd = merge_f, .bwd = merge_b, .ctx = &x};
    ck_assert_double_lt(fd_check(&k2, 22), FD_TOL);
    x.RB = rb;
    free(O); free(W); free(x.RR); free(x.dRR); free(x.RB);
}
END_TEST

/* The reference loop of the fused merge backward: per row, the chain taken head by head with the
 * separate kernels (geo_add_backward of proj(s_{i−1} ⊕ r_i), geo_exp0_backward of
 * r_i = proj(exp0(rr_i))), then dO_i += dRR_i W_i and dW_i += dRR_iᵀ O_i by plain loops. */
#define MERGE_REF(T, SFX)                                                                        \
    static void merge_backward_ref_##SFX(T *dO, T *dW, T *dRR, const T *dY, const T *O,           \
                                         const T *RR, const T *RB, const T *W, T c, int N, int H, \
                                         int D, int C)                                           \
    {                                                                                            \
        const int A = H * D;                                                                     \
        T *g = calloc((size_t)6 * C, sizeof(T)), *gp = g + C, *dr = gp + C, *tmp = dr + C;      \
        for (int n = 0; n < N; n++) {                                                            \
            const T *rr = RR + (long)n * H * C, *rb = RB + (long)n * 2 * H * C, *ps = rb + H * C; \
            T *drr = dRR + (long)n * H * C;                                                      \
            memset(drr, 0, (size_t)H * C * sizeof(T));                                           \
            memcpy(g, dY + (long)n * C, (size_t)C * sizeof(T));                                  \
            for (int i = H - 1; i >= 1; i--) {                                                   \
                memset(gp, 0, (size_t)2 * C * sizeof(T));                                        \
                gyro_geo_add_backward_##SFX(gp, dr, tmp, g, ps + i * C, ps + (i - 1) * C,        \
                                            rb + i * C, C, GYRO_GEO_HYPERBOLIC, c, 1, C);         \
                gyro_geo_exp0_backward_##SFX(drr + i * C, C, tmp, dr, C, rb + i * C, C,           \
                                             rr + i * C, C, GYRO_GEO_HYPERBOLIC, c, 1, C);        \
                memcpy(g, gp, (size_t)C * sizeof(T));                                            \
            }                                                                                    \
            gyro_geo_exp0_backward_##SFX(drr, C, tmp, g, C, rb, C, rr, C, GYRO_GEO_HYPERBOLIC, c, \
                                         1, C);                                                  \
        }                                                                                        \
        for (int n = 0; n < N; n++)                                                              \
            for (int i = 0; i < H; i++)                                                          \
                for (int d = 0; d < D; d++)                                                      \
                    for (int j = 0; j < C; j++) {                                                \
                        const T e = dRR[((long)n * H + i) * C + j];                              \
                        dO[(long)n * A + i * D + d] += e * W[(long)j * A + i * D + d];           \
                        dW[(long)j * A + i * D + d] += e * O[(long)n * A + i * D + d];           \
                    }                                                                            \
        free(g);                                                                                 \
    }
MERGE_REF(double, f64)
MERGE_REF(float, f32)

/* Fused merge backward against its reference loop, float64 and float32, on rows with and
 * without clipped heads and sums (scale 0.5 and 3), the seed's head width (C = 100, 16 heads of
 * 7: the vector loops and their tails). */
START_TEST(test_merge_backward_matches_reference)
{
    const int N = 37, H = 16, D = 7, C = 100, A = H * D; /* 37 rows: blocks of 16 and a tail */
    for (int variant = 0; variant < 2; variant++) {
        gyro_rng r;
        gyro_rng_seed(&r, 530 + variant);
        double *O = rnd(&r, (size_t)N * A, variant ? 3.0 : 0.5), *W = rnd(&r, (size_t)C * A, 0.3);
        double *dY = rnd(&r, (size_t)N * C, 1.0);
        double *RR = calloc((size_t)N * H * C, sizeof(double)), *RB = calloc((size_t)N * 2 * H * C, sizeof(double));
        double *Y = calloc((size_t)N * C, sizeof(double)), *dRR = calloc((size_t)N * H * C, sizeof(double));
        double *dO = calloc((size_t)N * A, sizeof(double)), *dW = calloc((size_t)C * A, sizeof(double));
        double *rO = calloc((size_t)N * A, sizeof(double)), *rW = calloc((size_t)C * A, sizeof(double));
        double *rRR = calloc((size_t)N * H * C, sizeof(double)), scratch[5 * 100];
        gyro_merge_forward_f64(Y, RR, RB, O, W, GYRO_GEO_HYPERBOLIC, 1.0, N, H, D, C);
        gyro_merge_backward_f64(dO, dW, dRR, scratch, dY, O, RR, RB, W, GYRO_GEO_HYPERBOLIC, 1.0, N, H, D, C);
        merge_backward_ref_f64(rO, rW, rRR, dY, O, RR, RB, W, 1.0, N, H, D, C);
        double e64 = 0, m = 0;
        for (int i = 0; i < N * H * C; i++) { e64 = fmax(e64, fabs(dRR[i] - rRR[i])); m = fmax(m, fabs(rRR[i])); }
        for (int i = 0; i < N * A; i++) e64 = fmax(e64, fabs(dO[i] - rO[i]));
        for (int i = 0; i < C * A; i++) e64 = fmax(e64, fabs(dW[i] - rW[i]));
        /* float32 */
        float *Of = malloc(sizeof(float) * N * A), *Wf = malloc(sizeof(float) * C * A), *dYf = malloc(sizeof(float) * N * C);
        float *RRf = calloc((size_t)N * H * C, sizeof(float)), *RBf = calloc((size_t)N * 2 * H * C, sizeof(float));
        float *Yf = calloc((size_t)N * C, sizeof(float)), *dRRf = calloc((size_t)N * H * C, sizeof(float));
        float *dOf = calloc((size_t)N * A, sizeof(float)), *dWf = calloc((size_t)C * A, sizeof(float));
        float *rOf = calloc((size_t)N * A, sizeof(float)), *rWf = calloc((size_t)C * A, sizeof(float));
        float *rRRf = calloc((size_t)N * H * C, sizeof(float)), scratchf[5 * 100];
        for (int i = 0; i < N * A; i++) Of[i] = (float)O[i];
        for (int i = 0; i < C * A; i++) Wf[i] = (float)W[i];
        for (int i = 0; i < N * C; i++) dYf[i] = (float)dY[i];
        gyro_merge_forward_f32(Yf, RRf, RBf, Of, Wf, GYRO_GEO_HYPERBOLIC, 1.0f, N, H, D, C);
        gyro_merge_backward_f32(dOf, dWf, dRRf, scratchf, dYf, Of, RRf, RBf, Wf, GYRO_GEO_HYPERBOLIC, 1.0f, N, H, D, C);
        merge_backward_ref_f32(rOf, rWf, rRRf, dYf, Of, RRf, RBf, Wf, 1.0f, N, H, D, C);
        double e32 = 0, m32 = 0; /* dO and dW (float32 narrow heads use dRR as block scratch) */
        for (int i = 0; i < N * A; i++) { e32 = fmax(e32, fabs(dOf[i] - rOf[i])); m32 = fmax(m32, fabs(rOf[i])); }
        for (int i = 0; i < C * A; i++) { e32 = fmax(e32, fabs(dWf[i] - rWf[i])); m32 = fmax(m32, fabs(rWf[i])); }
        printf("merge backward vs reference (%s): f64 max abs %.2e (of %.2e), f32 %.2e (of %.2e)\n",
               variant ? "clipped" : "inside", e64, m, e32, m32);
        ck_assert_double_lt(e64, 1e-12 * fmax(m, 1.0));
        ck_assert_double_lt(e32, 2e-5 * fmax(m32, 1.0));
        /* without a merge cache (the fused forward sum; partial sums recomputed): the same
         * gradients up to the rounding of the two forwards (float32: the vector tanh) */
        memset(dO, 0, sizeof(double) * N * A); memset(dW, 0, sizeof(double) * C * A);
        memset(dOf, 0, sizeof(float) * N * A); memset(dWf, 0, sizeof(float) * C * A);
        double scratch2[17 * 100];
        float scratch2f[17 * 100];
        gyro_merge_forward_f64(Y, RR, NULL, O, W, GYRO_GEO_HYPERBOLIC, 1.0, N, H, D, C);
        gyro_merge_backward_f64(dO, dW, dRR, scratch2, dY, O, RR, NULL, W, GYRO_GEO_HYPERBOLIC, 1.0, N, H, D, C);
        gyro_merge_forward_f32(Yf, RRf, NULL, Of, Wf, GYRO_GEO_HYPERBOLIC, 1.0f, N, H, D, C);
        gyro_merge_backward_f32(dOf, dWf, dRRf, scratch2f, dYf, Of, RRf, NULL, Wf, GYRO_GEO_HYPERBOLIC, 1.0f, N, H, D, C);
        e64 = e32 = 0;
        for (int i = 0; i < N * H * C; i++) e64 = fmax(e64, fabs(dRR[i] - rRR[i]));
        for (int i = 0; i < N * A; i++) { e64 = fmax(e64, fabs(dO[i] - rO[i])); e32 = fmax(e32, fabs(dOf[i] - rOf[i])); }
        for (int i = 0; i < C * A; i++) { e64 = fmax(e64, fabs(dW[i] - rW[i])); e32 = fmax(e32, fabs(dWf[i] - rWf[i])); }
        printf("merge backward without a cache vs reference (%s): f64 max abs %.2e, f32 %.2e\n",
               variant ? "clipped" : "inside", e64, e32);
        ck_assert_double_lt(e64, 1e-11 * fmax(m, 1.0));
        ck_assert_double_lt(e32, 5e-5 * fmax(m32, 1.0));
        free(O); free(W); free(dY); free(RR); free(RB); free(Y); free(dRR); free(dO); free(dW);
        free(rO); free(rW); free(rRR);
        free(Of); free(Wf); free(dYf); free(RRf); free(RBf); free(Yf); free(dRRf); free(dOf);
        free(dWf); free(rOf); free(rWf); free(rRRf);
    }
}
END_TEST

/* ---- the fused Möbius layer backward ------------------------------------------------------ */

typedef struct mlb_ctx { int N, n, log0; double c; double *e, *h; double scratch[64]; } mlb_ctx;
/* the forward by the separate kernels: e = exp0(Y), h = e ⊕ b, out = log0(h) or h */
static void mlb_f(fd_case *k)
{
    mlb_ctx *x = k->ctx;
    gyro_geo_exp0_f64(x->e, x->n, k->in[0], x->n, GYRO_GEO_HYPERBOLIC, x->c, x->N, x->n);
    gyro_geo_add_f64(x->h, x->e, k->in[1], 0, GYRO_GEO_HYPERBOLIC, x->c, x->N, x->n);
    if (x->log0)
        gyro_geo_log0_f64(k->out, x->n, x->h, x->n, GYRO_GEO_HYPERBOLIC, x->c, x->N, x->n);
    else
        memcpy(k->out, x->h, sizeof(double) * x->N * x->n);
}
static void mlb_b(fd_case *k, double **g, const double *d) { mlb_ctx *x = k->ctx; gyro_mobius_layer_backward_f64(g[0], g[1], d, k->in[0], k->in[1], x->log0, x->c, x->N, x->n); }

/* By finite differences: with and without the log0 on rows inside the ball, and without it on
 * rows whose exp0 and sum are clipped (Y scaled up: √c|Y| ≈ 18, far past the clip at
 * artanh(1 − ε) ≈ 6.1). With the log0, clipped rows sit within 1e-5 of the boundary, where
 * log0's curvature (artanh″ ~ 1e10) swamps a central difference: that case is checked against
 * the reference loop below instead (and end to end in check_transformer). */
START_TEST(test_fd_mobius_layer)
{
    for (int variant = 0; variant < 3; variant++) {
        const int log0 = variant & 1, big = variant >> 1;
        gyro_rng r;
        gyro_rng_seed(&r, 600 + variant);
        mlb_ctx x = {.N = 4, .n = 9, .log0 = log0, .c = 0.8};
        double *Y = rnd(&r, 36, big ? 12.0 : 0.4), *b = rnd_ball(&r, 1, 9), out[36], e[36], h[36];
        x.e = e;
        x.h = h;
        char name[64];
        snprintf(name, sizeof name, "mobius layer (%s%s)", log0 ? "log0" : "ball", big ? ", clipped" : "");
        fd_case k = {.name = name, .n_in = 2, .in = {Y, b}, .in_n = {36, 9}, .out = out, .out_n = 36, .fwd = mlb_f, .bwd = mlb_b, .ctx = &x};
        ck_assert_double_lt(fd_check(&k, 30 + variant), FD_TOL);
        free(Y); free(b);
    }
}
END_TEST

/* Against the reference loop it replaces (geo_log0_backward, geo_add_backward with the bias
 * broadcast, geo_exp0_backward in turn, on the forward's cached e and h), float32 and float64,
 * the seed's FFN width (400) and dim (100), inside and clipped. */
#define MLB_CHECK(T, SFX, TOL)                                                                    \
    static double mlb_vs_ref_##SFX(int N, int n, int log0, double scale, uint64_t seed)          \
    {                                                                                            \
        gyro_rng r;                                                                              \
        gyro_rng_seed(&r, seed);                                                                 \
        const size_t sz = (size_t)N * n;                                                         \
        T *Y = malloc(sizeof(T) * sz), *dG = malloc(sizeof(T) * sz), *b = malloc(sizeof(T) * n); \
        T *e = malloc(sizeof(T) * sz), *h = malloc(sizeof(T) * sz), *gg = calloc(sz, sizeof(T)); \
        T *de = calloc(sz, sizeof(T)), *dh = calloc(sz, sizeof(T)), *rY = calloc(sz, sizeof(T)); \
        T *dY = calloc(sz, sizeof(T)), *db = calloc(n, sizeof(T)), *rb = calloc(n, sizeof(T));   \
        T *scr = malloc(sizeof(T) * 2 * n);                                                      \
        double *bd = rnd_ball(&r, 1, n);                                                         \
        for (int i = 0; i < n; i++) b[i] = (T)bd[i];                                             \
        for (size_t i = 0; i < sz; i++) {                                                        \
            Y[i] = (T)(scale * (2 * gyro_rng_uniform(&r) - 1));                                  \
            dG[i] = (T)(2 * gyro_rng_uniform(&r) - 1);                                           \
        }                                                                                        \
        gyro_geo_exp0_##SFX(e, n, Y, n, GYRO_GEO_HYPERBOLIC, (T)0.9, N, n);                      \
        gyro_geo_add_##SFX(h, e, b, 0, GYRO_GEO_HYPERBOLIC, (T)0.9, N, n);                       \
        if (log0)                                                                                \
            gyro_geo_log0_backward_##SFX(dh, n, dG, n, h, n, GYRO_GEO_HYPERBOLIC, (T)0.9, N, n); \
        else                                                                                     \
            memcpy(dh, dG, sizeof(T) * sz);                                                      \
        gyro_geo_add_backward_##SFX(de, rb, scr, dh, h, e, b, 0, GYRO_GEO_HYPERBOLIC, (T)0.9, N, n); \
        gyro_geo_exp0_backward_##SFX(rY, n, scr, de, n, e, n, Y, n, GYRO_GEO_HYPERBOLIC, (T)0.9, N, n); \
        gyro_mobius_layer_backward_##SFX(dY, db, dG, Y, b, log0, (T)0.9, N, n);                  \
        double err = 0, m = 0;                                                                   \
        for (size_t i = 0; i < sz; i++) { err = fmax(err, fabs((double)dY[i] - rY[i])); m = fmax(m, fabs((double)rY[i])); } \
        for (int i = 0; i < n; i++) { err = fmax(err, fabs((double)db[i] - rb[i])); m = fmax(m, fabs((double)rb[i])); } \
        printf("mobius layer backward (" #SFX ", n = %d, log0 %d, scale %g) vs reference: max abs %.2e of %.2e\n", \
               n, log0, scale, err, m);                                                          \
        free(Y); free(dG); free(b); free(e); free(h); free(gg); free(de); free(dh); free(rY);    \
        free(dY); free(db); free(rb); free(scr); free(bd);                                       \
        return err / fmax(m, 1.0);                                                               \
    }
MLB_CHECK(double, f64, 0)
MLB_CHECK(float, f32, 0)

START_TEST(test_mobius_layer_backward_matches_reference)
{
    const int widths[2] = {400, 100};
    for (int w = 0; w < 2; w++)
        for (int log0 = 0; log0 < 2; log0++)
            for (int big = 0; big < 2; big++) {
                const double scale = big ? 0.5 : 0.02; /* |Y| ≈ 6 (clipped) or ≈ 0.2 */
                ck_assert_double_lt(mlb_vs_ref_f64(24, widths[w], log0, scale, 700 + w * 4 + log0 * 2 + big), 1e-11);
                ck_assert_double_lt(mlb_vs_ref_f32(24, widths[w], log0, scale, 700 + w * 4 + log0 * 2 + big), 2e-5);
            }
}
END_TEST

/* ---- LayerNorm ---------------------------------------------------------------------------- */

typedef struct ln_ctx { int N, C; double mean[8], rstd[8]; } ln_ctx;
static void ln_f(fd_case *k) { ln_ctx *x = k->ctx; gyro_layernorm_forward_f64(k->out, x->mean, x->rstd, k->in[0], k->in[1], k->in[2], x->N, x->C); }
static void ln_b(fd_case *k, double **g, const double *d) { ln_ctx *x = k->ctx; gyro_layernorm_backward_f64(g[0], g[1], g[2], d, k->in[0], x->mean, x->rstd, k->in[1], x->N, x->C); }

START_TEST(test_fd_layernorm)
{
    gyro_rng r;
    gyro_rng_seed(&r, 600);
    ln_ctx x = {.N = 4, .C = 7};
    double *X = rnd(&r, 28, 2), *g = rnd(&r, 7, 1), *b = rnd(&r, 7, 1), out[28];
    fd_case k = {.name = "layernorm", .n_in = 3, .in = {X, g, b}, .in_n = {28, 7, 7}, .out = out, .out_n = 28, .fwd = ln_f, .bwd = ln_b, .ctx = &x};
    ck_assert_double_lt(fd_check(&k, 9), FD_TOL);
    free(X); free(g); free(b);
}
END_TEST

/* ---- ReLU and dropout --------------------------------------------------------------------- */

static void relu_f(fd_case *k) { gyro_relu_forward_f64(k->out, k->in[0], (long)k->out_n); }
static void relu_b(fd_case *k, double **g, const double *d) { gyro_relu_backward_f64(g[0], d, k->in[0], (long)k->out_n); }
typedef struct drop_ctx { double mask[40]; uint64_t seed; double p; } drop_ctx;
static void drop_f(fd_case *k)
{
    drop_ctx *x = k->ctx;
    gyro_rng r;
    gyro_rng_seed(&r, x->seed); /* the same mask on every evaluation */
    gyro_dropout_forward_f64(k->out, x->mask, k->in[0], &r, x->p, (long)k->out_n);
}
static void drop_b(fd_case *k, double **g, const double *d) { drop_ctx *x = k->ctx; gyro_dropout_backward_f64(g[0], d, x->mask, (long)k->out_n); }

START_TEST(test_fd_act_dropout)
{
    gyro_rng r;
    gyro_rng_seed(&r, 700);
    double *X = rnd(&r, 40, 1), out[40];
    for (int i = 0; i < 40; i++) if (fabs(X[i]) < 1e-3) X[i] = 0.5; /* stay off the kink */
    fd_case k = {.name = "relu", .n_in = 1, .in = {X}, .in_n = {40}, .out = out, .out_n = 40, .fwd = relu_f, .bwd = relu_b};
    ck_assert_double_lt(fd_check(&k, 10), FD_TOL);
    drop_ctx x = {.seed = 5, .p = 0.3};
    fd_case k2 = {.name = "dropout", .n_in = 1, .in = {X}, .in_n = {40}, .out = out, .out_n = 40, .fwd = drop_f, .bwd = drop_b, .ctx = &x};
    ck_assert_double_lt(fd_check(&k2, 11), FD_TOL);
    int zeros = 0;
    for (int i = 0; i < 40; i++) {
        ck_assert(x.mask[i] == 0.0 || fabs(x.mask[i] - 1.0 / 0.7) < 1e-12);
        zeros += x.mask[i] == 0.0;
    }
    ck_assert(zeros > 0 && zeros < 40);
    /* the drop rate is p (odd length: the last element takes its own draw) */
    const long big = 100001;
    float *xs = malloc(sizeof(float) * big), *ms = malloc(sizeof(float) * big);
    for (long i = 0; i < big; i++) xs[i] = 1.0f;
    gyro_rng_seed(&r, 9);
    gyro_dropout_forward_f32(xs, ms, xs, &r, 0.3f, big); /* in place */
    long dropped = 0;
    for (long i = 0; i < big; i++) {
        dropped += ms[i] == 0.0f;
        ck_assert(xs[i] == ms[i]);
    }
    ck_assert(fabs((double)dropped / big - 0.3) < 0.01);
    free(xs); free(ms);
    free(X);
}
END_TEST

/* ---- pooling ------------------------------------------------------------------------------ */

typedef struct pool_ctx { int B, T, C; int len[2]; int idx[16]; } pool_ctx;
static void pool_f(fd_case *k) { pool_ctx *x = k->ctx; gyro_pool_forward_f64(k->out, x->idx, k->in[0], x->len, x->B, x->T, x->C); }
static void pool_b(fd_case *k, double **g, const double *d) { pool_ctx *x = k->ctx; gyro_pool_backward_f64(g[0], d, x->idx, x->B, x->T, x->C); }

START_TEST(test_fd_pool)
{
    gyro_rng r;
    gyro_rng_seed(&r, 800);
    pool_ctx x = {.B = 2, .T = 4, .C = 5, .len = {4, 2}};
    double *X = rnd(&r, 40, 1), out[10];
    for (int i = 0; i < 5; i++) X[(4 + 3) * 5 + i] = 100.0; /* padding never wins */
    fd_case k = {.name = "pool", .n_in = 1, .in = {X}, .in_n = {40}, .out = out, .out_n = 10, .fwd = pool_f, .bwd = pool_b, .ctx = &x};
    ck_assert_double_lt(fd_check(&k, 12), FD_TOL);
    for (int i = 0; i < 5; i++) ck_assert(out[5 + i] < 100.0 && x.idx[5 + i] < 2);
    free(X);
}
END_TEST

/* ---- MLR ---------------------------------------------------------------------------------- */

typedef struct mlr_ctx { int geo, B, K, C; double c; } mlr_ctx;
static void mlr_f(fd_case *k) { mlr_ctx *x = k->ctx; gyro_mlr_forward_f64(k->out, k->in[0], k->in[1], k->in[2], x->geo, x->c, x->B, x->K, x->C); }
static void mlr_b(fd_case *k, double **g, const double *d) { mlr_ctx *x = k->ctx; gyro_mlr_backward_f64(g[0], g[1], g[2], d, k->in[0], k->in[1], k->in[2], x->geo, x->c, x->B, x->K, x->C); }

START_TEST(test_fd_mlr)
{
    for (int geo = 0; geo < 2; geo++) {
        gyro_rng r;
        gyro_rng_seed(&r, 900 + geo);
        mlr_ctx x = {.geo = geo, .B = 3, .K = 4, .C = 5, .c = 1.0};
        double *X = rnd_ball(&r, 3, 5), *P = rnd_ball(&r, 4, 5), *A = rnd(&r, 20, 1), out[12];
        fd_case k = {.name = geo ? "mlr (ball, Ganea eq. 25)" : "mlr (flat)", .n_in = 3, .in = {X, P, A}, .in_n = {15, 20, 20}, .out = out, .out_n = 12, .fwd = mlr_f, .bwd = mlr_b, .ctx = &x};
        ck_assert_double_lt(fd_check(&k, 13), FD_TOL);
        free(X); free(P); free(A);
    }
}
END_TEST

/* The vector loops of the element-wise backward kernels (ReLU, dropout, the Euclidean maps'
 * identity and x + y) against their plain loops, bit for bit, on a length with a tail. */
START_TEST(test_elementwise_backward_matches_loops)
{
    enum { N = 8 * 5 + 3 };
    gyro_rng r;
    gyro_rng_seed(&r, 1100);
    float x[N], dy[N], m[N], d[N], ref[N], d2[N], ref2[N];
    for (int i = 0; i < N; i++) {
        x[i] = (float)(2 * gyro_rng_uniform(&r) - 1);
        dy[i] = (float)(2 * gyro_rng_uniform(&r) - 1);
        m[i] = gyro_rng_uniform(&r) < 0.3 ? 0.0f : 1.25f;
        d[i] = ref[i] = d2[i] = ref2[i] = (float)(gyro_rng_uniform(&r) - 0.5);
    }
    x[5] = 0.0f; /* ReLU at 0: no gradient */
    gyro_relu_backward_f32(d, dy, x, N);
    for (int i = 0; i < N; i++) ref[i] += x[i] > 0 ? dy[i] : 0.0f;
    ck_assert_int_eq(memcmp(d, ref, sizeof d), 0);
    gyro_dropout_backward_f32(d, dy, m, N);
    for (int i = 0; i < N; i++) ref[i] += dy[i] * m[i];
    ck_assert_int_eq(memcmp(d, ref, sizeof d), 0);
    float scr[2 * N];
    gyro_geo_add_backward_f32(d, d2, scr, dy, NULL, x, x, N, GYRO_GEO_EUCLIDEAN, 1.0f, 1, N);
    for (int i = 0; i < N; i++) { ref[i] += dy[i]; ref2[i] += dy[i]; }
    ck_assert_int_eq(memcmp(d, ref, sizeof d), 0);
    ck_assert_int_eq(memcmp(d2, ref2, sizeof d2), 0);
    gyro_geo_exp0_backward_f32(d, N, scr, dy, N, NULL, N, x, N, GYRO_GEO_EUCLIDEAN, 1.0f, 1, N);
    gyro_geo_log0_backward_f32(d2, N, dy, N, x, N, GYRO_GEO_EUCLIDEAN, 1.0f, 1, N);
    for (int i = 0; i < N; i++) { ref[i] += dy[i]; ref2[i] += dy[i]; }
    ck_assert_int_eq(memcmp(d, ref, sizeof d), 0);
    ck_assert_int_eq(memcmp(d2, ref2, sizeof d2), 0);
}
END_TEST

/* The LayerNorm backward (4-lane double vectors) against its plain loop (the formulas of
 * kernels.h, one scalar at a time in double), float32 and float64, widths with and without a
 * tail (128, 100, 13). */
START_TEST(test_layernorm_backward_matches_reference)
{
    const int widths[3] = {128, 100, 13}, N = 5;
    for (int w = 0; w < 3; w++) {
        const int C = widths[w];
        gyro_rng r;
        gyro_rng_seed(&r, 1200 + w);
        double *x = rnd(&r, (size_t)N * C, 2.0), *g = rnd(&r, C, 1.5), *b = rnd(&r, C, 0.5), *dy = rnd(&r, (size_t)N * C, 1.0);
        double *y = calloc((size_t)N * C, sizeof(double)), mean[5], rstd[5];
        double *dx = calloc((size_t)N * C, sizeof(double)), *dg = calloc(C, sizeof(double)), *db = calloc(C, sizeof(double));
        double *rx = calloc((size_t)N * C, sizeof(double)), *rg = calloc(C, sizeof(double)), *rb = calloc(C, sizeof(double));
        float *xf = malloc(sizeof(float) * N * C), *gf = malloc(sizeof(float) * C), *bf = malloc(sizeof(float) * C), *dyf = malloc(sizeof(float) * N * C);
        float *yf = calloc((size_t)N * C, sizeof(float)), meanf[5], rstdf[5];
        float *dxf = calloc((size_t)N * C, sizeof(float)), *dgf = calloc(C, sizeof(float)), *dbf = calloc(C, sizeof(float));
        for (int i = 0; i < N * C; i++) { xf[i] = (float)x[i]; dyf[i] = (float)dy[i]; }
        for (int i = 0; i < C; i++) { gf[i] = (float)g[i]; bf[i] = (float)b[i]; }
        gyro_layernorm_forward_f64(y, mean, rstd, x, g, b, N, C);
        gyro_layernorm_backward_f64(dx, dg, db, dy, x, mean, rstd, g, N, C);
        gyro_layernorm_forward_f32(yf, meanf, rstdf, xf, gf, bf, N, C);
        gyro_layernorm_backward_f32(dxf, dgf, dbf, dyf, xf, meanf, rstdf, gf, N, C);
        for (int n = 0; n < N; n++) { /* reference loop */
            double sm = 0, sn = 0;
            for (int i = 0; i < C; i++) {
                const double xh = (x[n * C + i] - mean[n]) * rstd[n], dn = g[i] * dy[n * C + i];
                sm += dn;
                sn += dn * xh;
            }
            sm /= C;
            sn /= C;
            for (int i = 0; i < C; i++) {
                const double xh = (x[n * C + i] - mean[n]) * rstd[n], dn = g[i] * dy[n * C + i];
                rb[i] += dy[n * C + i];
                rg[i] += xh * dy[n * C + i];
                rx[n * C + i] += (dn - sm - xh * sn) * rstd[n];
            }
        }
        double e64 = 0, e32 = 0, m = 0;
        for (int i = 0; i < N * C; i++) { e64 = fmax(e64, fabs(dx[i] - rx[i])); e32 = fmax(e32, fabs(dxf[i] - rx[i])); m = fmax(m, fabs(rx[i])); }
        for (int i = 0; i < C; i++) {
            e64 = fmax(e64, fmax(fabs(dg[i] - rg[i]), fabs(db[i] - rb[i])));
            e32 = fmax(e32, fmax(fabs(dgf[i] - rg[i]), fabs(dbf[i] - rb[i])));
            m = fmax(m, fmax(fabs(rg[i]), fabs(rb[i])));
        }
        printf("layernorm backward C = %d vs reference: f64 max abs %.2e, f32 %.2e (of %.2e)\n", C, e64, e32, m);
        ck_assert_double_lt(e64, 1e-13 * fmax(m, 1.0));
        ck_assert_double_lt(e32, 1e-5 * fmax(m, 1.0));
        free(x); free(g); free(b); free(dy); free(y); free(dx); free(dg); free(db); free(rx); free(rg); free(rb);
        free(xf); free(gf); free(bf); free(dyf); free(yf); free(dxf); free(dgf); free(dbf);
    }
}
END_TEST

/* ---- float32 against float64 ------------------------------------------------------------- */

START_TEST(test_f32_matches_f64)
{
    gyro_rng r;
    gyro_rng_seed(&r, 1000);
    const int N = 6, H = 2, D = 3, C = 4, A = H * D;
    double *O = rnd(&r, N * A, 0.8), *W = rnd(&r, C * A, 0.6);
    float Of[36], Wf[24];
    for (int i = 0; i < N * A; i++) Of[i] = (float)O[i];
    for (int i = 0; i < C * A; i++) Wf[i] = (float)W[i];
    double Y[24], RR[48], RB[96];
    float Yf[24], RRf[48], RBf[96];
    gyro_merge_forward_f64(Y, RR, RB, O, W, GYRO_GEO_HYPERBOLIC, 1.0, N, H, D, C);
    gyro_merge_forward_f32(Yf, RRf, RBf, Of, Wf, GYRO_GEO_HYPERBOLIC, 1.0f, N, H, D, C);
    double worst = 0;
    for (int i = 0; i < N * C; i++) worst = fmax(worst, fabs(Y[i] - Yf[i]));
    ck_assert_double_lt(worst, 1e-5);
    free(O); free(W);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("layers");
    TCase *tc = tcase_create("fd");
    tcase_add_test(tc, test_fd_geo);
    tcase_add_test(tc, test_fd_embed);
    tcase_add_test(tc, test_fd_linear);
    tcase_add_test(tc, test_fd_attention);
    tcase_add_test(tc, test_fd_attention_wide);
    tcase_add_test(tc, test_attention_backward_matches_reference);
    tcase_add_test(tc, test_fd_merge);
    tcase_add_test(tc, test_fd_merge_projected);
    tcase_add_test(tc, test_merge_backward_matches_reference);
    tcase_add_test(tc, test_fd_mobius_layer);
    tcase_add_test(tc, test_mobius_layer_backward_matches_reference);
    tcase_add_test(tc, test_fd_layernorm);
    tcase_add_test(tc, test_layernorm_backward_matches_reference);
    tcase_add_test(tc, test_fd_act_dropout);
    tcase_add_test(tc, test_fd_pool);
    tcase_add_test(tc, test_fd_mlr);
    tcase_add_test(tc, test_f32_matches_f64);
    tcase_add_test(tc, test_elementwise_backward_matches_loops);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* fd.c — central finite differences for the gradient checks (see fd.h). */
#include "tests/support/fd.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>

double fd_central(double *x, double h, fd_fn f, void *ctx)
{
    const double keep = *x;
    *x = keep + h;
    const double fp = f(ctx);
    *x = keep - h;
    const double fm = f(ctx);
    *x = keep;
    return (fp - fm) / (2 * h);
}

void fd_stats_add(fd_stats *st, size_t k, double num, double ana)
{
    const double ab = fabs(num - ana), mag = fabs(num) + fabs(ana);
    const double rel = ab / fmax(st->floor, mag);
    if (ab > st->max_abs) {
        st->max_abs = ab;
        st->worst = k;
    }
    if (mag > st->gate && rel > st->max_rel) st->max_rel = rel;
}

/* s = Σ w ⊙ f(in) of a trial. */
typedef struct weighted {
    const fd_problem *p;
    double *const *in;
    const double *w;
    double *out;
} weighted;

static double weighted_sum(void *vctx)
{
    const weighted *ws = vctx;
    ws->p->fwd(ws->out, ws->in, ws->p->ctx);
    double acc = 0.0;
    for (size_t i = 0; i < ws->p->outlen; i++) acc += ws->w[i] * ws->out[i];
    return acc;
}

double fd_trial(const fd_problem *p, gyro_rng *r, double h, double *scale, const char *name)
{
    ck_assert_int_le(p->nin, FD_MAX_IN);
    double *in[FD_MAX_IN] = {0}, *din[FD_MAX_IN] = {0}, *din2[FD_MAX_IN] = {0};
    for (int i = 0; i < p->nin; i++) {
        in[i] = calloc(p->len[i], sizeof(double));
        din[i] = calloc(p->len[i], sizeof(double));
        din2[i] = calloc(p->len[i], sizeof(double));
        ck_assert(in[i] && din[i] && din2[i]);
    }
    p->init(in, p->ctx, r);
    double *w = malloc(p->outlen * sizeof *w), *out = malloc(p->outlen * sizeof *out);
    ck_assert(w && out);
    for (size_t i = 0; i < p->outlen; i++) w[i] = gyro_rng_normal(r);
    p->bwd(din, w, in, p->ctx);
    /* the accumulate contract: two calls give twice the gradient */
    p->bwd(din2, w, in, p->ctx);
    p->bwd(din2, w, in, p->ctx);
    double sc = 1.0, dmax = 0.0;
    for (int i = 0; i < p->nin; i++)
        for (size_t j = 0; j < p->len[i]; j++) {
            if (fabs(din[i][j]) > sc) sc = fabs(din[i][j]);
            ck_assert_msg(fabs(din2[i][j] - 2.0 * din[i][j]) <= 1e-12 * (1.0 + fabs(din[i][j])),
                          "%s: backward does not accumulate", name);
        }
    weighted ws = {p, in, w, out};
    for (int i = 0; i < p->nin; i++)
        for (size_t j = 0; j < p->len[i]; j++) {
            double e = fabs(fd_central(&in[i][j], h, weighted_sum, &ws) - din[i][j]);
            if (e > dmax) dmax = e;
            ck_assert_msg(isfinite(din[i][j]), "%s: non-finite gradient", name);
        }
    for (int i = 0; i < p->nin; i++) {
        free(in[i]);
        free(din[i]);
        free(din2[i]);
    }
    free(w);
    free(out);
    *scale = sc;
    return dmax;
}

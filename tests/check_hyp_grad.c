/* check_hyp_grad.c — Check suite: every backward kernel of models/hyp/ against central finite
 * differences in float64 on random inputs (and on the zero vectors of the removable
 * singularities, where the Taylor branches must give the derivative of the smooth extension).
 *
 * For an op out = f(in₀, in₁, …) and a random weight w, the scalar s = Σ w ⊙ out is
 * differentiated two ways: the kernel's vector-Jacobian product (dL/dout = w, gradients
 * accumulated into zeroed buffers) and (s(in + h eⱼ) − s(in − h eⱼ))/2h with h = 1e-6 on every
 * coordinate of every input. The error of a trial is max |analytic − fd| / max(1, max|analytic|);
 * it must stay below 1e-6 (the difference quotient itself is good to ~1e-9). The suite prints
 * the max absolute and relative error per op (the report's gradient figures).
 * The accumulate (+=) contract is checked too: a second backward call must double the result.
 * The fused skip-gram step of lorentz_skipgram.h has no backward kernel; its gradient direction
 * and the first-order effect of its steps are checked against finite differences of the loss.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/core/rng.h"
#include "models/hyp/convert.h"
#include "models/hyp/hyp_consts.h"
#include "models/hyp/lorentz.h"
#include "models/hyp/lorentz_skipgram.h"
#include "models/hyp/poincare.h"
#include "tests/support/fd.h"

#define FD_H 1e-6
#define FD_TOL 1e-6
#define FD_TRIALS 12
#define FD_MAXIN 4

typedef struct fd_spec fd_spec;
typedef void (*fd_init_fn)(double **in, const fd_spec *s, gyro_rng *r);
typedef void (*fd_fwd_fn)(double *out, double *const *in, const fd_spec *s);
typedef void (*fd_bwd_fn)(double *const *din, const double *dout, double *const *in,
                          const fd_spec *s);

/* One op under test; the dimension fields are set per trial by fd_shape. */
struct fd_spec {
    const char *name;
    int nin;
    fd_init_fn init;
    fd_fwd_fn fwd;
    fd_bwd_fn bwd;
    int shape;   /* which length formula (see fd_lengths) */
    int variant; /* op-specific: zero inputs, clipping, label, ... */
    /* per-trial */
    double c, r, lr, theta, max_step;
    int m, n, k, rows;
    size_t len[FD_MAXIN], outlen;
};

/* ---- random inputs ------------------------------------------------------------------------ */

static void rnd_normal(double *x, size_t len, double scale, gyro_rng *r)
{
    for (size_t i = 0; i < len; i++) x[i] = scale * gyro_rng_normal(r);
}

/* A ball point of norm radius/√c · u, u uniform in [0.05, 1). */
static void rnd_ball(double *x, int n, double c, double radius, gyro_rng *r)
{
    rnd_normal(x, (size_t)n, 1.0, r);
    double nx = 0.0;
    for (int i = 0; i < n; i++) nx += x[i] * x[i];
    nx = sqrt(nx);
    double target = radius * (0.05 + 0.95 * gyro_rng_uniform(r)) / sqrt(c);
    for (int i = 0; i < n; i++) x[i] *= target / nx;
}

/* A hyperboloid point: lift of a Gaussian spatial vector of the given scale. */
static void rnd_hyp(double *x, int n, double scale, gyro_rng *r)
{
    rnd_normal(x + 1, (size_t)n, scale, r);
    gyro_lorentz_reproject_f64(x, n);
}

/* A tangent vector at hyperboloid point x. */
static void rnd_tangent(double *v, const double *x, int n, double scale, gyro_rng *r)
{
    double g[64];
    rnd_normal(g, (size_t)n + 1, scale, r);
    gyro_lorentz_proj_tangent_f64(v, x, g, n);
}

/* ---- Poincaré ops --------------------------------------------------------------------------- */

static void init_ball2(double **in, const fd_spec *s, gyro_rng *r) /* two ball points */
{
    rnd_ball(in[0], s->n, s->c, 0.9, r);
    rnd_ball(in[1], s->n, s->c, 0.9, r);
}
static void init_ball_vec(double **in, const fd_spec *s, gyro_rng *r) /* ball point, vector */
{
    rnd_ball(in[0], s->n, s->c, 0.85, r);
    rnd_normal(in[1], (size_t)s->n, s->variant == 1 ? 0.0 : 0.5, r);
}
static void init_vec(double **in, const fd_spec *s, gyro_rng *r)
{
    rnd_normal(in[0], s->len[0], s->variant == 1 ? 0.0 : 0.6, r);
}
static void init_ball1(double **in, const fd_spec *s, gyro_rng *r)
{
    if (s->variant == 1) { memset(in[0], 0, s->len[0] * sizeof(double)); return; }
    for (size_t i = 0; i < s->len[0] / (size_t)s->n; i++)
        rnd_ball(in[0] + i * (size_t)s->n, s->n, s->c, 0.95, r);
}

static void f_madd(double *o, double *const *in, const fd_spec *s)
{ gyro_poincare_mobius_add_f64(o, in[0], in[1], s->c, s->n); }
static void b_madd(double *const *d, const double *g, double *const *in, const fd_spec *s)
{ gyro_poincare_mobius_add_backward_f64(d[0], d[1], g, in[0], in[1], s->c, s->n); }

static void f_madd_b(double *o, double *const *in, const fd_spec *s)
{ gyro_poincare_mobius_add_batch_f64(o, in[0], in[1], s->c, s->rows, s->n); }
static void b_madd_b(double *const *d, const double *g, double *const *in, const fd_spec *s)
{ gyro_poincare_mobius_add_backward_batch_f64(d[0], d[1], g, in[0], in[1], s->c, s->rows, s->n); }
static void init_ball2_rows(double **in, const fd_spec *s, gyro_rng *r)
{
    for (int i = 0; i < s->rows; i++) {
        rnd_ball(in[0] + (size_t)i * s->n, s->n, s->c, 0.9, r);
        rnd_ball(in[1] + (size_t)i * s->n, s->n, s->c, 0.9, r);
    }
}

static void f_lambda(double *o, double *const *in, const fd_spec *s)
{ o[0] = gyro_poincare_lambda_x_f64(in[0], s->c, s->n); }
static void b_lambda(double *const *d, const double *g, double *const *in, const fd_spec *s)
{ gyro_poincare_lambda_x_backward_f64(d[0], g[0], in[0], s->c, s->n); }

static void f_exp0(double *o, double *const *in, const fd_spec *s)
{ gyro_poincare_expmap0_batch_f64(o, in[0], s->c, s->rows, s->n); }
static void b_exp0(double *const *d, const double *g, double *const *in, const fd_spec *s)
{ gyro_poincare_expmap0_backward_batch_f64(d[0], g, in[0], s->c, s->rows, s->n); }

static void f_log0(double *o, double *const *in, const fd_spec *s)
{ gyro_poincare_logmap0_batch_f64(o, in[0], s->c, s->rows, s->n); }
static void b_log0(double *const *d, const double *g, double *const *in, const fd_spec *s)
{ gyro_poincare_logmap0_backward_batch_f64(d[0], g, in[0], s->c, s->rows, s->n); }

static void f_exp(double *o, double *const *in, const fd_spec *s)
{ gyro_poincare_expmap_f64(o, in[0], in[1], s->c, s->n); }
static void b_exp(double *const *d, const double *g, double *const *in, const fd_spec *s)
{ gyro_poincare_expmap_backward_f64(d[0], d[1], g, in[0], in[1], s->c, s->n); }

static void f_log(double *o, double *const *in, const fd_spec *s)
{ gyro_poincare_logmap_f64(o, in[0], in[1], s->c, s->n); }
static void b_log(double *const *d, const double *g, double *const *in, const fd_spec *s)
{ gyro_poincare_logmap_backward_f64(d[0], d[1], g, in[0], in[1], s->c, s->n); }

static void f_dist(double *o, double *const *in, const fd_spec *s)
{ o[0] = gyro_poincare_dist_f64(in[0], in[1], s->c, s->n); }
static void b_dist(double *const *d, const double *g, double *const *in, const fd_spec *s)
{ gyro_poincare_dist_backward_f64(d[0], d[1], g[0], in[0], in[1], s->c, s->n); }

static void f_mscal(double *o, double *const *in, const fd_spec *s)
{ gyro_poincare_mobius_scalar_f64(o, in[0], s->r, s->c, s->n); }
static void b_mscal(double *const *d, const double *g, double *const *in, const fd_spec *s)
{ gyro_poincare_mobius_scalar_backward_f64(d[0], g, in[0], s->r, s->c, s->n); }

static void init_matvec(double **in, const fd_spec *s, gyro_rng *r)
{
    rnd_normal(in[0], s->len[0], 0.5, r);
    if (s->variant == 1) memset(in[1], 0, s->len[1] * sizeof(double));
    else rnd_ball(in[1], s->n, s->c, 0.9, r);
}
static void f_mv(double *o, double *const *in, const fd_spec *s)
{ gyro_poincare_mobius_matvec_f64(o, in[0], in[1], s->c, s->m, s->n); }
static void b_mv(double *const *d, const double *g, double *const *in, const fd_spec *s)
{ gyro_poincare_mobius_matvec_backward_f64(d[0], d[1], g, in[0], in[1], s->c, s->m, s->n); }

/* finish over rows: in[0] = MX (rows, m), in[1] = X (rows, n) */
static void init_finish(double **in, const fd_spec *s, gyro_rng *r)
{
    rnd_normal(in[0], s->len[0], s->variant == 1 ? 0.0 : 0.4, r);
    for (int i = 0; i < s->rows; i++) rnd_ball(in[1] + (size_t)i * s->n, s->n, s->c, 0.9, r);
}
static void f_fin(double *o, double *const *in, const fd_spec *s)
{ gyro_poincare_mobius_matvec_finish_batch_f64(o, in[0], in[1], s->c, s->rows, s->m, s->n); }
static void b_fin(double *const *d, const double *g, double *const *in, const fd_spec *s)
{
    gyro_poincare_mobius_matvec_finish_backward_batch_f64(d[0], d[1], g, in[0], in[1], s->c,
                                                          s->rows, s->m, s->n);
}

static void f_tr0(double *o, double *const *in, const fd_spec *s)
{ gyro_poincare_transp0_f64(o, in[0], in[1], s->c, s->n); }
static void b_tr0(double *const *d, const double *g, double *const *in, const fd_spec *s)
{ gyro_poincare_transp0_backward_f64(d[0], d[1], g, in[0], in[1], s->c, s->n); }

static void init_ball3(double **in, const fd_spec *s, gyro_rng *r)
{
    for (int i = 0; i < 3; i++) rnd_ball(in[i], s->n, s->c, 0.9, r);
}
static void f_gyr(double *o, double *const *in, const fd_spec *s)
{ gyro_poincare_gyration_f64(o, in[0], in[1], in[2], s->c, s->n); }
static void b_gyr(double *const *d, const double *g, double *const *in, const fd_spec *s)
{ gyro_poincare_gyration_backward_f64(d[0], d[1], d[2], g, in[0], in[1], in[2], s->c, s->n); }

/* MLR over a batch: in[0] = X (rows, n), in[1] = P (K, n), in[2] = A (K, n) */
static void init_mlr(double **in, const fd_spec *s, gyro_rng *r)
{
    for (int i = 0; i < s->rows; i++) rnd_ball(in[0] + (size_t)i * s->n, s->n, s->c, 0.9, r);
    for (int k = 0; k < s->k; k++) rnd_ball(in[1] + (size_t)k * s->n, s->n, s->c, 0.8, r);
    rnd_normal(in[2], s->len[2], 0.7, r);
}
static void f_mlr(double *o, double *const *in, const fd_spec *s)
{ gyro_poincare_hyp_mlr_batch_f64(o, in[0], in[1], in[2], s->c, s->rows, s->k, s->n); }
static void b_mlr(double *const *d, const double *g, double *const *in, const fd_spec *s)
{
    gyro_poincare_hyp_mlr_backward_batch_f64(d[0], d[1], d[2], g, in[0], in[1], in[2], s->c,
                                             s->rows, s->k, s->n);
}

static void init_lin(double **in, const fd_spec *s, gyro_rng *r)
{
    rnd_normal(in[0], s->len[0], 0.5, r);
    if (s->variant == 1) memset(in[1], 0, s->len[1] * sizeof(double));
    else rnd_ball(in[1], s->n, s->c, 0.9, r);
    rnd_ball(in[2], s->m, s->c, 0.8, r);
}
static void f_lin(double *o, double *const *in, const fd_spec *s)
{ gyro_poincare_hyp_linear_f64(o, in[0], in[1], in[2], s->c, s->m, s->n); }
static void b_lin(double *const *d, const double *g, double *const *in, const fd_spec *s)
{ gyro_poincare_hyp_linear_backward_f64(d[0], d[1], d[2], g, in[0], in[1], in[2], s->c, s->m, s->n); }

static void init_proj(double **in, const fd_spec *s, gyro_rng *r) /* variant 2: outside */
{
    rnd_ball(in[0], s->n, s->c, s->variant == 2 ? 1.0 : 0.9, r);
    if (s->variant == 2)
        for (int i = 0; i < s->n; i++) in[0][i] *= 1.5;
}
static void f_proj(double *o, double *const *in, const fd_spec *s)
{ gyro_poincare_project_f64(o, in[0], s->c, s->n); }
static void b_proj(double *const *d, const double *g, double *const *in, const fd_spec *s)
{ gyro_poincare_project_backward_f64(d[0], g, in[0], s->c, s->n); }

static void f_e2r(double *o, double *const *in, const fd_spec *s)
{ gyro_poincare_egrad2rgrad_f64(o, in[0], in[1], s->c, s->n); }
static void b_e2r(double *const *d, const double *g, double *const *in, const fd_spec *s)
{ gyro_poincare_egrad2rgrad_backward_f64(d[0], d[1], g, in[0], in[1], s->c, s->n); }

static void f_rsgd(double *o, double *const *in, const fd_spec *s)
{ gyro_poincare_rsgd_step_f64(o, in[0], in[1], s->c, s->lr, s->n); }
static void b_rsgd(double *const *d, const double *g, double *const *in, const fd_spec *s)
{ gyro_poincare_rsgd_step_backward_f64(d[0], d[1], g, in[0], in[1], s->c, s->lr, s->n); }

/* ---- hyperboloid ops ------------------------------------------------------------------------ */

static void init_hyp2(double **in, const fd_spec *s, gyro_rng *r)
{
    rnd_hyp(in[0], s->n, 1.0, r);
    rnd_hyp(in[1], s->n, 1.0, r);
}
static void init_hyp_tan(double **in, const fd_spec *s, gyro_rng *r)
{
    rnd_hyp(in[0], s->n, 1.0, r);
    if (s->variant == 1) memset(in[1], 0, s->len[1] * sizeof(double));
    else rnd_tangent(in[1], in[0], s->n, 0.6, r);
}
static void init_hyp_free(double **in, const fd_spec *s, gyro_rng *r) /* point, free vector */
{
    rnd_hyp(in[0], s->n, 1.0, r);
    rnd_normal(in[1], s->len[1], s->variant == 3 ? 3.0 : 0.5, r);
}

static void f_linner(double *o, double *const *in, const fd_spec *s)
{ o[0] = gyro_lorentz_inner_f64(in[0], in[1], s->n); }
static void b_linner(double *const *d, const double *g, double *const *in, const fd_spec *s)
{ gyro_lorentz_inner_backward_f64(d[0], d[1], g[0], in[0], in[1], s->n); }

static void f_ldist(double *o, double *const *in, const fd_spec *s)
{ o[0] = gyro_lorentz_dist_f64(in[0], in[1], s->n); }
static void b_ldist(double *const *d, const double *g, double *const *in, const fd_spec *s)
{ gyro_lorentz_dist_backward_f64(d[0], d[1], g[0], in[0], in[1], s->n); }

static void f_lproj(double *o, double *const *in, const fd_spec *s)
{ gyro_lorentz_proj_tangent_f64(o, in[0], in[1], s->n); }
static void b_lproj(double *const *d, const double *g, double *const *in, const fd_spec *s)
{ gyro_lorentz_proj_tangent_backward_f64(d[0], d[1], g, in[0], in[1], s->n); }

static void f_le2r(double *o, double *const *in, const fd_spec *s)
{ gyro_lorentz_egrad2rgrad_f64(o, in[0], in[1], s->n); }
static void b_le2r(double *const *d, const double *g, double *const *in, const fd_spec *s)
{ gyro_lorentz_egrad2rgrad_backward_f64(d[0], d[1], g, in[0], in[1], s->n); }

static void f_lexp(double *o, double *const *in, const fd_spec *s)
{ gyro_lorentz_expmap_f64(o, in[0], in[1], s->n); }
static void b_lexp(double *const *d, const double *g, double *const *in, const fd_spec *s)
{ gyro_lorentz_expmap_backward_f64(d[0], d[1], g, in[0], in[1], s->n); }

static void f_llog(double *o, double *const *in, const fd_spec *s)
{ gyro_lorentz_logmap_f64(o, in[0], in[1], s->n); }
static void b_llog(double *const *d, const double *g, double *const *in, const fd_spec *s)
{ gyro_lorentz_logmap_backward_f64(d[0], d[1], g, in[0], in[1], s->n); }

static void f_lrsgd(double *o, double *const *in, const fd_spec *s)
{ gyro_lorentz_rsgd_step_f64(o, in[0], in[1], s->lr, s->max_step, s->n); }
static void b_lrsgd(double *const *d, const double *g, double *const *in, const fd_spec *s)
{ gyro_lorentz_rsgd_step_backward_f64(d[0], d[1], g, in[0], in[1], s->lr, s->max_step, s->n); }

static void f_lift(double *o, double *const *in, const fd_spec *s)
{ gyro_lorentz_lift_f64(o, in[0], s->n); }
static void b_lift(double *const *d, const double *g, double *const *in, const fd_spec *s)
{ gyro_lorentz_lift_backward_f64(d[0], g, in[0], s->n); }

/* skip-gram: in[0] = u, in[1] = v, in[2] = neg (k, n+1) */
static void init_sg(double **in, const fd_spec *s, gyro_rng *r)
{
    rnd_hyp(in[0], s->n, 0.8, r);
    rnd_hyp(in[1], s->n, 0.8, r);
    for (int j = 0; j < s->k; j++) rnd_hyp(in[2] + (size_t)j * (s->n + 1), s->n, 0.8, r);
}
static void f_sg(double *o, double *const *in, const fd_spec *s)
{ o[0] = gyro_lorentz_skipgram_loss_f64(NULL, NULL, NULL, in[0], in[1], in[2], s->theta, s->k, s->n); }
static void b_sg(double *const *d, const double *g, double *const *in, const fd_spec *s)
{
    gyro_lorentz_skipgram_loss_backward_f64(d[0], d[1], d[2], g[0], in[0], in[1], in[2], s->theta,
                                            s->k, s->n);
}
static void f_sgt(double *o, double *const *in, const fd_spec *s)
{ o[0] = gyro_lorentz_skipgram_term_f64(NULL, NULL, in[0], in[1], s->variant, s->theta, 1.0, s->n); }
static void b_sgt(double *const *d, const double *g, double *const *in, const fd_spec *s)
{ gyro_lorentz_skipgram_term_f64(d[0], d[1], in[0], in[1], s->variant, s->theta, g[0], s->n); }

static void init_llin(double **in, const fd_spec *s, gyro_rng *r)
{
    rnd_hyp(in[0], s->n, 1.0, r);
    rnd_normal(in[1], s->len[1], 0.4, r);
}
static void f_llin(double *o, double *const *in, const fd_spec *s)
{ gyro_lorentz_linear_f64(o, in[0], in[1], s->m, s->n); }
static void b_llin(double *const *d, const double *g, double *const *in, const fd_spec *s)
{ gyro_lorentz_linear_backward_f64(d[0], d[1], g, in[0], in[1], s->m, s->n); }

static void init_cent(double **in, const fd_spec *s, gyro_rng *r)
{
    for (int j = 0; j < s->k; j++) {
        rnd_hyp(in[0] + (size_t)j * (s->n + 1), s->n, 1.0, r);
        in[1][j] = 0.2 + gyro_rng_uniform(r);
    }
}
static void f_cent(double *o, double *const *in, const fd_spec *s)
{ gyro_lorentz_centroid_f64(o, in[0], in[1], s->k, s->n); }
static void b_cent(double *const *d, const double *g, double *const *in, const fd_spec *s)
{ gyro_lorentz_centroid_backward_f64(d[0], d[1], g, in[0], in[1], s->k, s->n); }

/* ---- conversions ---------------------------------------------------------------------------- */

static void init_hyp_rows(double **in, const fd_spec *s, gyro_rng *r)
{
    rnd_hyp(in[0], s->n, 1.5, r);
}
static void f_top(double *o, double *const *in, const fd_spec *s)
{ gyro_hyp_to_poincare_f64(o, in[0], s->n); }
static void b_top(double *const *d, const double *g, double *const *in, const fd_spec *s)
{ gyro_hyp_to_poincare_backward_f64(d[0], g, in[0], s->n); }
static void init_unit_ball(double **in, const fd_spec *s, gyro_rng *r)
{
    if (s->variant == 1) { memset(in[0], 0, s->len[0] * sizeof(double)); return; }
    rnd_ball(in[0], s->n, 1.0, 0.95, r);
}
static void f_toh(double *o, double *const *in, const fd_spec *s)
{ gyro_hyp_to_hyperboloid_f64(o, in[0], s->n); }
static void b_toh(double *const *d, const double *g, double *const *in, const fd_spec *s)
{ gyro_hyp_to_hyperboloid_backward_f64(d[0], g, in[0], s->n); }

/* ---- shapes --------------------------------------------------------------------------------- */

enum {
    SH_VV,      /* two n-vectors → n */
    SH_V_S,     /* n-vector → scalar */
    SH_VV_S,    /* two n-vectors → scalar */
    SH_ROWS,    /* (rows, n) → (rows, n) */
    SH_ROWS2,   /* two (rows, n) → (rows, n) */
    SH_V,       /* n → n */
    SH_MV,      /* M (m, n), x (n) → m */
    SH_FIN,     /* MX (rows, m), X (rows, n) → (rows, m) */
    SH_VVV,     /* three n-vectors → n */
    SH_MLR,     /* X (rows, n), P (k, n), A (k, n) → (rows, k) */
    SH_LIN,     /* M (m, n), x (n), b (m) → m */
    SH_L2,      /* two (n+1) → n+1 */
    SH_L2_S,    /* two (n+1) → scalar */
    SH_LIFT,    /* n → n+1 */
    SH_SG,      /* u, v (n+1), neg (k, n+1) → scalar */
    SH_LLIN,    /* x (n+1), W (m, n+1) → m+1 */
    SH_CENT,    /* X (k, n+1), nu (k) → n+1 */
    SH_TOP,     /* (n+1) → n */
};

static void fd_lengths(fd_spec *s)
{
    size_t n = (size_t)s->n, m = (size_t)s->m, k = (size_t)s->k, R = (size_t)s->rows, d = n + 1;
    memset(s->len, 0, sizeof s->len);
    switch (s->shape) {
    case SH_VV: s->len[0] = s->len[1] = n; s->outlen = n; break;
    case SH_V_S: s->len[0] = n; s->outlen = 1; break;
    case SH_VV_S: s->len[0] = s->len[1] = n; s->outlen = 1; break;
    case SH_ROWS: s->len[0] = R * n; s->outlen = R * n; break;
    case SH_ROWS2: s->len[0] = s->len[1] = R * n; s->outlen = R * n; break;
    case SH_V: s->len[0] = n; s->outlen = n; break;
    case SH_MV: s->len[0] = m * n; s->len[1] = n; s->outlen = m; break;
    case SH_FIN: s->len[0] = R * m; s->len[1] = R * n; s->outlen = R * m; break;
    case SH_VVV: s->len[0] = s->len[1] = s->len[2] = n; s->outlen = n; break;
    case SH_MLR: s->len[0] = R * n; s->len[1] = s->len[2] = k * n; s->outlen = R * k; break;
    case SH_LIN: s->len[0] = m * n; s->len[1] = n; s->len[2] = m; s->outlen = m; break;
    case SH_L2: s->len[0] = s->len[1] = d; s->outlen = d; break;
    case SH_L2_S: s->len[0] = s->len[1] = d; s->outlen = 1; break;
    case SH_LIFT: s->len[0] = n; s->outlen = d; break;
    case SH_SG: s->len[0] = s->len[1] = d; s->len[2] = k * d; s->outlen = 1; break;
    case SH_LLIN: s->len[0] = d; s->len[1] = m * d; s->outlen = m + 1; break;
    case SH_CENT: s->len[0] = k * d; s->len[1] = k; s->outlen = d; break;
    case SH_TOP: s->len[0] = d; s->outlen = n; break;
    }
}

#define OP(nm, ni, sh, var, ini, f, b) {nm, ni, ini, f, b, sh, var, 0, 0, 0, 0, 0, 0, 0, 0, 0, {0}, 0}
static const fd_spec g_specs[] = {
    OP("mobius_add", 2, SH_VV, 0, init_ball2, f_madd, b_madd),
    OP("mobius_add_batch", 2, SH_ROWS2, 0, init_ball2_rows, f_madd_b, b_madd_b),
    OP("lambda_x", 1, SH_V_S, 0, init_ball1, f_lambda, b_lambda),
    OP("expmap0_batch", 1, SH_ROWS, 0, init_vec, f_exp0, b_exp0),
    OP("expmap0_batch zero", 1, SH_ROWS, 1, init_vec, f_exp0, b_exp0),
    OP("logmap0_batch", 1, SH_ROWS, 0, init_ball1, f_log0, b_log0),
    OP("logmap0_batch zero", 1, SH_ROWS, 1, init_ball1, f_log0, b_log0),
    OP("expmap", 2, SH_VV, 0, init_ball_vec, f_exp, b_exp),
    OP("expmap v=0", 2, SH_VV, 1, init_ball_vec, f_exp, b_exp),
    OP("logmap", 2, SH_VV, 0, init_ball2, f_log, b_log),
    OP("dist", 2, SH_VV_S, 0, init_ball2, f_dist, b_dist),
    OP("mobius_scalar", 1, SH_V, 0, init_ball1, f_mscal, b_mscal),
    OP("mobius_scalar x=0", 1, SH_V, 1, init_ball1, f_mscal, b_mscal),
    OP("mobius_matvec", 2, SH_MV, 0, init_matvec, f_mv, b_mv),
    OP("mobius_matvec x=0", 2, SH_MV, 1, init_matvec, f_mv, b_mv),
    OP("mobius_matvec_finish_batch", 2, SH_FIN, 0, init_finish, f_fin, b_fin),
    OP("mobius_matvec_finish Mx=0", 2, SH_FIN, 1, init_finish, f_fin, b_fin),
    OP("transp0", 2, SH_VV, 0, init_ball_vec, f_tr0, b_tr0),
    OP("gyration", 3, SH_VVV, 0, init_ball3, f_gyr, b_gyr),
    OP("hyp_mlr_batch", 3, SH_MLR, 0, init_mlr, f_mlr, b_mlr),
    OP("hyp_linear", 3, SH_LIN, 0, init_lin, f_lin, b_lin),
    OP("hyp_linear x=0", 3, SH_LIN, 1, init_lin, f_lin, b_lin),
    OP("project inside", 1, SH_V, 0, init_proj, f_proj, b_proj),
    OP("project outside", 1, SH_V, 2, init_proj, f_proj, b_proj),
    OP("poincare_egrad2rgrad", 2, SH_VV, 0, init_ball_vec, f_e2r, b_e2r),
    OP("poincare_rsgd_step", 2, SH_VV, 0, init_ball_vec, f_rsgd, b_rsgd),
    OP("poincare_rsgd_step g=0", 2, SH_VV, 1, init_ball_vec, f_rsgd, b_rsgd),
    OP("lorentz_inner", 2, SH_L2_S, 0, init_hyp2, f_linner, b_linner),
    OP("lorentz_dist", 2, SH_L2_S, 0, init_hyp2, f_ldist, b_ldist),
    OP("lorentz_proj_tangent", 2, SH_L2, 0, init_hyp_free, f_lproj, b_lproj),
    OP("lorentz_egrad2rgrad", 2, SH_L2, 0, init_hyp_free, f_le2r, b_le2r),
    OP("lorentz_expmap", 2, SH_L2, 0, init_hyp_tan, f_lexp, b_lexp),
    OP("lorentz_expmap v=0", 2, SH_L2, 1, init_hyp_tan, f_lexp, b_lexp),
    OP("lorentz_logmap", 2, SH_L2, 0, init_hyp2, f_llog, b_llog),
    OP("lorentz_rsgd_step", 2, SH_L2, 0, init_hyp_free, f_lrsgd, b_lrsgd),
    OP("lorentz_rsgd_step clipped", 2, SH_L2, 3, init_hyp_free, f_lrsgd, b_lrsgd),
    OP("lorentz_lift", 1, SH_LIFT, 0, init_vec, f_lift, b_lift),
    OP("lorentz_skipgram_loss", 3, SH_SG, 0, init_sg, f_sg, b_sg),
    OP("lorentz_skipgram_term pos", 2, SH_L2_S, 1, init_hyp2, f_sgt, b_sgt),
    OP("lorentz_skipgram_term neg", 2, SH_L2_S, 0, init_hyp2, f_sgt, b_sgt),
    OP("lorentz_linear", 2, SH_LLIN, 0, init_llin, f_llin, b_llin),
    OP("lorentz_centroid", 2, SH_CENT, 0, init_cent, f_cent, b_cent),
    OP("to_poincare", 1, SH_TOP, 0, init_hyp_rows, f_top, b_top),
    OP("to_hyperboloid", 1, SH_LIFT, 0, init_unit_ball, f_toh, b_toh),
    OP("to_hyperboloid y=0", 1, SH_LIFT, 1, init_unit_ball, f_toh, b_toh),
};
#define NSPECS ((int)(sizeof g_specs / sizeof g_specs[0]))

static double g_max_abs[NSPECS], g_max_rel[NSPECS];

/* Per-trial parameters; shapes are small so the whole suite stays fast. */
static void fd_shape(fd_spec *s, gyro_rng *r, int trial)
{
    static const double cs[3] = {1.0, 0.5, 2.0};
    static const int ns[4] = {2, 3, 8, 16};
    s->c = cs[trial % 3];
    s->n = ns[trial % 4];
    s->m = 1 + (int)gyro_rng_below(r, 6);
    s->k = 1 + (int)gyro_rng_below(r, 4);
    s->rows = 1 + (int)gyro_rng_below(r, 3);
    s->r = (gyro_rng_uniform(r) - 0.3) * 3.0;
    s->lr = 0.05 + 0.3 * gyro_rng_uniform(r);
    s->theta = trial % 2 ? 2.0 : 5.0;
    s->max_step = s->variant == 3 ? 0.3 : 0.0; /* clipped variant: always active */
    if (strstr(s->name, "lorentz_rsgd_step") && s->variant == 3) s->lr = 1.0;
    fd_lengths(s);
}

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
    gyro_rng_seed(&r, 1000 + (uint64_t)_i);
    double worst_rel = 0.0, worst_abs = 0.0;
    for (int trial = 0; trial < FD_TRIALS; trial++) {
        fd_shape(&s, &r, trial);
        const fd_problem p = {s.nin, s.len, s.outlen, &s, fd_init, fd_fwd, fd_bwd};
        double scale, dmax = fd_trial(&p, &r, FD_H, &scale, s.name);
        double rel = dmax / scale;
        if (rel > worst_rel) worst_rel = rel;
        if (dmax > worst_abs) worst_abs = dmax;
        ck_assert_msg(rel < FD_TOL, "%s trial %d (c=%g n=%d m=%d k=%d rows=%d): fd error %.3g (abs %.3g)",
                      s.name, trial, s.c, s.n, s.m, s.k, s.rows, rel, dmax);
    }
    g_max_abs[_i] = worst_abs;
    g_max_rel[_i] = worst_rel;
}
END_TEST

/* ---- the fused skip-gram step (lorentz_skipgram.h) ------------------------------------------ */

#define SG_DIM 10
#define SG_ROW 16

static double sg_nls(double t) { return t > 0 ? log1p(exp(-t)) : -t + log1p(exp(t)); } /* −log σ(t) */
static double sg_sigm(double x) { return 1.0 / (1.0 + exp(-x)); }
/* ℓ = −log σ(±(⟨u,w⟩_L + θ)) */
static double sg_loss(const double *u, const double *w, int label, double theta)
{
    double t = gyro_lorentz_inner_f64(u, w, SG_DIM) + theta;
    return label ? sg_nls(t) : sg_nls(-t);
}

static double g_sg_err[3];

/* (1) the centre's accumulated h = Σ g v_old is −J ∂L/∂u: central differences of L(u);
 * (2) the target step moves ℓ at rate dℓ/dlr = −g²(s² − 1) (= −|grad|² along the geodesic);
 * (3) the centre step moves L at rate −(⟨h,h⟩_L + q²), q = ⟨u,h⟩_L.
 * Rates by central differences over lr = ±ε of the float64 op (unclipped). */
START_TEST(test_skipgram_step_fd)
{
    gyro_rng r;
    gyro_rng_seed(&r, 3);
    const double theta = 2.0, eps = 1e-6;
    double e_grad = 0.0, e_tgt = 0.0, e_ctr = 0.0;
    for (int trial = 0; trial < FD_TRIALS; trial++) {
        double u[SG_ROW] __attribute__((aligned(64))) = {0};
        double v[3][SG_ROW] __attribute__((aligned(64))) = {{0}};
        double h[SG_ROW] __attribute__((aligned(64))) = {0};
        double w[SG_ROW] __attribute__((aligned(64)));
        rnd_hyp(u, SG_DIM, 0.7, &r);
        for (int t = 0; t < 3; t++) rnd_hyp(v[t], SG_DIM, 0.7, &r);
        double L0 = 0.0;
        for (int t = 0; t < 3; t++) {
            int label = t == 0;
            double s = gyro_lorentz_padded_inner_f64(u, v[t], SG_ROW);
            double g = label - sg_sigm(s + theta);
            L0 += sg_loss(u, v[t], label, theta);
            /* (2): ℓ(v(±ε)) with this target's step */
            double lp, lm;
            memcpy(w, v[t], sizeof w);
            double hs[SG_ROW] __attribute__((aligned(64))) = {0};
            gyro_lorentz_skipgram_step_target_f64(hs, w, u, s, g, eps, 0.0, SG_ROW);
            lp = sg_loss(u, w, label, theta);
            memcpy(w, v[t], sizeof w);
            gyro_lorentz_skipgram_step_target_f64(hs, w, u, s, g, -eps, 0.0, SG_ROW);
            lm = sg_loss(u, w, label, theta);
            double rate = (lp - lm) / (2 * eps), want = -g * g * (s * s - 1.0);
            double e = fabs(rate - want) / (1.0 + fabs(want));
            if (e > e_tgt) e_tgt = e;
            /* lr 0: only h is written, v is left as it was */
            memcpy(w, v[t], sizeof w);
            gyro_lorentz_skipgram_step_target_f64(h, w, u, s, g, 0.0, 0.0, SG_ROW);
            ck_assert(memcmp(w + 1, v[t] + 1, sizeof w - sizeof w[0]) == 0);
            ck_assert(fabs(w[0] - v[t][0]) <= 1e-15 * v[t][0]); /* x₀ re-derived from x_s */
        }
        /* (1) */
        for (int k = 0; k <= SG_DIM; k++) {
            double up[SG_DIM + 1], dn[SG_DIM + 1], lp = 0.0, lm = 0.0;
            memcpy(up, u, sizeof up);
            memcpy(dn, u, sizeof dn);
            up[k] += FD_H;
            dn[k] -= FD_H;
            for (int t = 0; t < 3; t++) {
                lp += sg_loss(up, v[t], t == 0, theta);
                lm += sg_loss(dn, v[t], t == 0, theta);
            }
            double fd = (lp - lm) / (2 * FD_H), an = -(k == 0 ? -h[0] : h[k]);
            double e = fabs(fd - an) / (1.0 + fabs(an));
            if (e > e_grad) e_grad = e;
        }
        /* (3) */
        double q = gyro_lorentz_padded_inner_f64(u, h, SG_ROW), hh = gyro_lorentz_padded_inner_f64(h, h, SG_ROW);
        double Lp = 0.0, Lm = 0.0;
        memcpy(w, u, sizeof w);
        gyro_lorentz_skipgram_step_centre_f64(w, h, eps, 0.0, SG_ROW);
        for (int t = 0; t < 3; t++) Lp += sg_loss(w, v[t], t == 0, theta);
        memcpy(w, u, sizeof w);
        gyro_lorentz_skipgram_step_centre_f64(w, h, -eps, 0.0, SG_ROW);
        for (int t = 0; t < 3; t++) Lm += sg_loss(w, v[t], t == 0, theta);
        double rate = (Lp - Lm) / (2 * eps), want = -(hh + q * q);
        double e = fabs(rate - want) / (1.0 + fabs(want));
        if (e > e_ctr) e_ctr = e;
        ck_assert(want <= 0.0 && isfinite(L0)); /* a descent direction */
    }
    g_sg_err[0] = e_grad;
    g_sg_err[1] = e_tgt;
    g_sg_err[2] = e_ctr;
    ck_assert_msg(e_grad < FD_TOL, "h vs -J dL/du: %g", e_grad);
    ck_assert_msg(e_tgt < FD_TOL, "target step rate: %g", e_tgt);
    ck_assert_msg(e_ctr < FD_TOL, "centre step rate: %g", e_ctr);
}
END_TEST

int main(void)
{
    Suite *su = suite_create("hyp_grad");
    TCase *tc = tcase_create("finite_differences");
    tcase_add_loop_test(tc, test_fd, 0, NSPECS);
    tcase_add_test(tc, test_skipgram_step_fd);
    suite_add_tcase(su, tc);
    SRunner *sr = srunner_create(su);
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_NORMAL);
    int nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    printf("%-30s %12s %12s   (float64, %d random trials, h = %g)\n", "backward kernel",
           "max abs err", "max rel err", FD_TRIALS, FD_H);
    for (int i = 0; i < NSPECS; i++)
        printf("%-30s %12.3g %12.3g\n", g_specs[i].name, g_max_abs[i], g_max_rel[i]);
    printf("lorentz skipgram_step (fused): rel err h vs -J dL/du %.3g, target-step rate %.3g, "
           "centre-step rate %.3g\n", g_sg_err[0], g_sg_err[1], g_sg_err[2]);
    return nf == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

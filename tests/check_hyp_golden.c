/* check_hyp_golden.c — Check suite: every case of the golden vectors (default
 * ../shared/golden/hyperbolic_ops.txt, or the file named by $GYRO_GOLDEN) run through
 * models/hyp/ in float64 and float32, outputs and gradients compared tensor-wise.
 *
 * The error of a tensor is max_i |got_i − exp_i| / max_i |exp_i| (an all-zero expected tensor
 * must come out below 1e-12 absolute in float64, 1e-6 in float32). Tolerances:
 *   float64: 1e-9 for every case.
 *   float32: 1e-4 for ordinary cases; 1e-2 for cases tagged f32_sensitive; 5e-2 for cases
 *            tagged near_boundary. Why: rounding the inputs to float32 moves a point at
 *            √c|x| = 0.99999 by ~1e-7, i.e. 1% of its distance to the boundary; the float32
 *            projection margin ε = 4e-3 moves RSGD outputs that end near the boundary (~4e-3);
 *            and a Riemannian gradient Jg + <x,g>x at x₀ ≈ 100 cancels ~4 digits of float32
 *            (up to 2.4e-2 measured on generated hard sets). Outputs and gradients of those
 *            cases are still compared, never skipped.
 * An op in the file that the library lacks FAILS its case. Every op named in the file's
 * header must have at least one case (a truncated file fails too).
 *
 * Each case is one Check loop iteration (test_f64 / test_f32), so a failure names the op, the
 * case id and the tensor. With GYRO_GOLDEN_REPORT=1 the suite also prints, per op and
 * precision, the largest error found (used for the figures in the README). The file format,
 * the comparison and the suite are tests/support/golden.h, shared with check_lorentz_golden.
 *
 * The handlers are written once over a storage type T: the file includes itself twice (see the
 * bottom of the first half) with T = double and T = float.
 */
#ifndef HG_TEMPLATE

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/hyp/convert.h"
#include "models/hyp/lorentz.h"
#include "models/hyp/poincare.h"
#include "tests/support/golden.h"

#define HG_TEMPLATE 1
#define T double
#define SFX(name) name##_f64
#include "tests/check_hyp_golden.c"
#undef T
#undef SFX
#define T float
#define SFX(name) name##_f32
#include "tests/check_hyp_golden.c"
#undef T
#undef SFX
#undef HG_TEMPLATE

#define HG_OP(name) {#name, h_##name##_f64, h_##name##_f32}
static const golden_op g_ops[] = {
    HG_OP(mobius_add), HG_OP(lambda_x), HG_OP(expmap0), HG_OP(logmap0), HG_OP(expmap),
    HG_OP(logmap), HG_OP(dist), HG_OP(mobius_scalar), HG_OP(mobius_matvec), HG_OP(transp0),
    HG_OP(gyration), HG_OP(hyp_mlr), HG_OP(hyp_linear), HG_OP(poincare_egrad2rgrad),
    HG_OP(poincare_rsgd_step), HG_OP(lorentz_inner), HG_OP(lorentz_dist),
    HG_OP(lorentz_proj_tangent), HG_OP(lorentz_egrad2rgrad), HG_OP(lorentz_expmap),
    HG_OP(lorentz_logmap), HG_OP(lorentz_rsgd_step), HG_OP(lorentz_lift), HG_OP(to_poincare),
    HG_OP(to_hyperboloid), HG_OP(lorentz_skipgram_loss), HG_OP(lorentz_linear),
    HG_OP(lorentz_centroid), HG_OP(roundtrip_ball), HG_OP(roundtrip_hyperboloid),
    HG_OP(dist_cross_model),
};

int main(void)
{
    static const golden_suite suite = {
        .name = "hyp_golden", .env = "GYRO_GOLDEN", .default_path = "../shared/golden/hyperbolic_ops.txt",
        .library = "models/hyp", .ops = g_ops, .nops = (int)(sizeof g_ops / sizeof g_ops[0]), .strict = 0,
    };
    return golden_main(&suite);
}

#else /* HG_TEMPLATE: the handlers, instantiated for T = double and T = float */

/* The case's tensors as T (the float copy is the float64 value rounded once); OUT and GRAD
 * (shaped like input nm) register zeroed result buffers. */
#define IN(nm) SFX(golden_in)(cx, nm)
#define W(nm) SFX(golden_w)(cx, nm)
#define OUT(nm, len) ((T *)golden_buf(cx, GOLDEN_OUT, nm, len, sizeof(T)))
#define GRAD(nm) ((T *)golden_buf(cx, GOLDEN_GRAD, nm, golden_in(cx, nm)->len, sizeof(T)))
#define D1(nm) (golden_in(cx, nm)->d1)
#define D2(nm) (golden_in(cx, nm)->d2)
#define PAR(nm) ((T)golden_param(cx, nm))
#define HAS_W (cx->k->nw > 0)

/* ---- Poincaré ball ---- */

static int SFX(h_mobius_add)(golden_ctx *cx)
{
    int n = D1("x");
    T c = PAR("c");
    SFX(gyro_poincare_mobius_add)(OUT("z", n), IN("x"), IN("y"), c, n);
    if (HAS_W)
        SFX(gyro_poincare_mobius_add_backward)(GRAD("x"), GRAD("y"), W("z"), IN("x"), IN("y"), c, n);
    return 0;
}

static int SFX(h_lambda_x)(golden_ctx *cx)
{
    int n = D1("x");
    T c = PAR("c");
    OUT("lambda", 1)[0] = SFX(gyro_poincare_lambda_x)(IN("x"), c, n);
    if (HAS_W) SFX(gyro_poincare_lambda_x_backward)(GRAD("x"), W("lambda")[0], IN("x"), c, n);
    return 0;
}

static int SFX(h_expmap0)(golden_ctx *cx)
{
    int n = D1("v");
    T c = PAR("c");
    SFX(gyro_poincare_expmap0)(OUT("y", n), IN("v"), c, n);
    if (HAS_W) SFX(gyro_poincare_expmap0_backward)(GRAD("v"), W("y"), IN("v"), c, n);
    return 0;
}

static int SFX(h_logmap0)(golden_ctx *cx)
{
    int n = D1("y");
    T c = PAR("c");
    SFX(gyro_poincare_logmap0)(OUT("v", n), IN("y"), c, n);
    if (HAS_W) SFX(gyro_poincare_logmap0_backward)(GRAD("y"), W("v"), IN("y"), c, n);
    return 0;
}

static int SFX(h_expmap)(golden_ctx *cx)
{
    int n = D1("x");
    T c = PAR("c");
    SFX(gyro_poincare_expmap)(OUT("y", n), IN("x"), IN("v"), c, n);
    if (HAS_W)
        SFX(gyro_poincare_expmap_backward)(GRAD("x"), GRAD("v"), W("y"), IN("x"), IN("v"), c, n);
    return 0;
}

static int SFX(h_logmap)(golden_ctx *cx)
{
    int n = D1("x");
    T c = PAR("c");
    SFX(gyro_poincare_logmap)(OUT("v", n), IN("x"), IN("y"), c, n);
    if (HAS_W)
        SFX(gyro_poincare_logmap_backward)(GRAD("x"), GRAD("y"), W("v"), IN("x"), IN("y"), c, n);
    return 0;
}

static int SFX(h_dist)(golden_ctx *cx)
{
    int n = D1("x");
    T c = PAR("c");
    OUT("d", 1)[0] = SFX(gyro_poincare_dist)(IN("x"), IN("y"), c, n);
    if (HAS_W)
        SFX(gyro_poincare_dist_backward)(GRAD("x"), GRAD("y"), W("d")[0], IN("x"), IN("y"), c, n);
    return 0;
}

static int SFX(h_mobius_scalar)(golden_ctx *cx)
{
    int n = D1("x");
    T c = PAR("c"), r = PAR("r");
    SFX(gyro_poincare_mobius_scalar)(OUT("y", n), IN("x"), r, c, n);
    if (HAS_W) SFX(gyro_poincare_mobius_scalar_backward)(GRAD("x"), W("y"), IN("x"), r, c, n);
    return 0;
}

static int SFX(h_mobius_matvec)(golden_ctx *cx)
{
    int m = D1("M"), n = D2("M");
    T c = PAR("c");
    if (D1("x") != n) { snprintf(cx->err, sizeof cx->err, "M and x shapes differ"); return -1; }
    SFX(gyro_poincare_mobius_matvec)(OUT("y", m), IN("M"), IN("x"), c, m, n);
    if (HAS_W)
        SFX(gyro_poincare_mobius_matvec_backward)(GRAD("M"), GRAD("x"), W("y"), IN("M"), IN("x"),
                                                  c, m, n);
    return 0;
}

static int SFX(h_transp0)(golden_ctx *cx)
{
    int n = D1("x");
    T c = PAR("c");
    SFX(gyro_poincare_transp0)(OUT("u", n), IN("x"), IN("v"), c, n);
    if (HAS_W)
        SFX(gyro_poincare_transp0_backward)(GRAD("x"), GRAD("v"), W("u"), IN("x"), IN("v"), c, n);
    return 0;
}

static int SFX(h_gyration)(golden_ctx *cx)
{
    int n = D1("a");
    T c = PAR("c");
    SFX(gyro_poincare_gyration)(OUT("g", n), IN("a"), IN("b"), IN("u"), c, n);
    if (HAS_W)
        SFX(gyro_poincare_gyration_backward)(GRAD("a"), GRAD("b"), GRAD("u"), W("g"), IN("a"),
                                             IN("b"), IN("u"), c, n);
    return 0;
}

static int SFX(h_hyp_mlr)(golden_ctx *cx)
{
    int K = D1("P"), n = D2("P");
    T c = PAR("c");
    SFX(gyro_poincare_hyp_mlr)(OUT("logits", K), IN("x"), IN("P"), IN("A"), c, K, n);
    if (HAS_W)
        SFX(gyro_poincare_hyp_mlr_backward)(GRAD("x"), GRAD("P"), GRAD("A"), W("logits"), IN("x"),
                                            IN("P"), IN("A"), c, K, n);
    return 0;
}

static int SFX(h_hyp_linear)(golden_ctx *cx)
{
    int m = D1("M"), n = D2("M");
    T c = PAR("c");
    SFX(gyro_poincare_hyp_linear)(OUT("y", m), IN("M"), IN("x"), IN("b"), c, m, n);
    if (HAS_W)
        SFX(gyro_poincare_hyp_linear_backward)(GRAD("M"), GRAD("x"), GRAD("b"), W("y"), IN("M"),
                                               IN("x"), IN("b"), c, m, n);
    return 0;
}

static int SFX(h_poincare_egrad2rgrad)(golden_ctx *cx)
{
    int n = D1("x");
    T c = PAR("c");
    SFX(gyro_poincare_egrad2rgrad)(OUT("rgrad", n), IN("x"), IN("g"), c, n);
    if (HAS_W)
        SFX(gyro_poincare_egrad2rgrad_backward)(GRAD("x"), GRAD("g"), W("rgrad"), IN("x"), IN("g"),
                                                c, n);
    return 0;
}

static int SFX(h_poincare_rsgd_step)(golden_ctx *cx)
{
    int n = D1("x");
    T c = PAR("c"), lr = PAR("lr");
    SFX(gyro_poincare_rsgd_step)(OUT("x_new", n), IN("x"), IN("egrad"), c, lr, n);
    if (HAS_W)
        SFX(gyro_poincare_rsgd_step_backward)(GRAD("x"), GRAD("egrad"), W("x_new"), IN("x"),
                                              IN("egrad"), c, lr, n);
    return 0;
}

/* ---- hyperboloid ---- */

static int SFX(h_lorentz_inner)(golden_ctx *cx)
{
    int n = D1("x") - 1;
    OUT("inner", 1)[0] = SFX(gyro_lorentz_inner)(IN("x"), IN("y"), n);
    if (HAS_W)
        SFX(gyro_lorentz_inner_backward)(GRAD("x"), GRAD("y"), W("inner")[0], IN("x"), IN("y"), n);
    return 0;
}

static int SFX(h_lorentz_dist)(golden_ctx *cx)
{
    int n = D1("x") - 1;
    OUT("d", 1)[0] = SFX(gyro_lorentz_dist)(IN("x"), IN("y"), n);
    if (HAS_W)
        SFX(gyro_lorentz_dist_backward)(GRAD("x"), GRAD("y"), W("d")[0], IN("x"), IN("y"), n);
    return 0;
}

static int SFX(h_lorentz_proj_tangent)(golden_ctx *cx)
{
    int n = D1("x") - 1;
    SFX(gyro_lorentz_proj_tangent)(OUT("u", n + 1), IN("x"), IN("v"), n);
    if (HAS_W)
        SFX(gyro_lorentz_proj_tangent_backward)(GRAD("x"), GRAD("v"), W("u"), IN("x"), IN("v"), n);
    return 0;
}

static int SFX(h_lorentz_egrad2rgrad)(golden_ctx *cx)
{
    int n = D1("x") - 1;
    SFX(gyro_lorentz_egrad2rgrad)(OUT("rgrad", n + 1), IN("x"), IN("g"), n);
    if (HAS_W)
        SFX(gyro_lorentz_egrad2rgrad_backward)(GRAD("x"), GRAD("g"), W("rgrad"), IN("x"), IN("g"),
                                               n);
    return 0;
}

static int SFX(h_lorentz_expmap)(golden_ctx *cx)
{
    int n = D1("x") - 1;
    SFX(gyro_lorentz_expmap)(OUT("y", n + 1), IN("x"), IN("v"), n);
    if (HAS_W)
        SFX(gyro_lorentz_expmap_backward)(GRAD("x"), GRAD("v"), W("y"), IN("x"), IN("v"), n);
    return 0;
}

static int SFX(h_lorentz_logmap)(golden_ctx *cx)
{
    int n = D1("x") - 1;
    SFX(gyro_lorentz_logmap)(OUT("v", n + 1), IN("x"), IN("y"), n);
    if (HAS_W)
        SFX(gyro_lorentz_logmap_backward)(GRAD("x"), GRAD("y"), W("v"), IN("x"), IN("y"), n);
    return 0;
}

static int SFX(h_lorentz_rsgd_step)(golden_ctx *cx)
{
    int n = D1("x") - 1;
    T lr = PAR("lr");
    /* the golden step has no clipping: max_step = 0 disables it */
    SFX(gyro_lorentz_rsgd_step)(OUT("x_new", n + 1), IN("x"), IN("egrad"), lr, 0, n);
    if (HAS_W)
        SFX(gyro_lorentz_rsgd_step_backward)(GRAD("x"), GRAD("egrad"), W("x_new"), IN("x"),
                                             IN("egrad"), lr, 0, n);
    return 0;
}

static int SFX(h_lorentz_lift)(golden_ctx *cx)
{
    int n = D1("xs");
    SFX(gyro_lorentz_lift)(OUT("x", n + 1), IN("xs"), n);
    if (HAS_W) SFX(gyro_lorentz_lift_backward)(GRAD("xs"), W("x"), IN("xs"), n);
    return 0;
}

static int SFX(h_to_poincare)(golden_ctx *cx)
{
    int n = D1("x") - 1;
    SFX(gyro_hyp_to_poincare)(OUT("y", n), IN("x"), n);
    if (HAS_W) SFX(gyro_hyp_to_poincare_backward)(GRAD("x"), W("y"), IN("x"), n);
    return 0;
}

static int SFX(h_to_hyperboloid)(golden_ctx *cx)
{
    int n = D1("y");
    SFX(gyro_hyp_to_hyperboloid)(OUT("x", n + 1), IN("y"), n);
    if (HAS_W) SFX(gyro_hyp_to_hyperboloid_backward)(GRAD("y"), W("x"), IN("y"), n);
    return 0;
}

static int SFX(h_lorentz_skipgram_loss)(golden_ctx *cx)
{
    int n = D1("u") - 1, k = D1("neg");
    size_t d = (size_t)n + 1;
    T theta = PAR("theta");
    T *eu = OUT("egrad_u", d), *ev = OUT("egrad_v", d), *en = OUT("egrad_neg", (size_t)k * d);
    OUT("loss", 1)[0] = SFX(gyro_lorentz_skipgram_loss)(eu, ev, en, IN("u"), IN("v"), IN("neg"),
                                                        theta, k, n);
    SFX(gyro_lorentz_egrad2rgrad)(OUT("rgrad_u", d), IN("u"), eu, n);
    SFX(gyro_lorentz_egrad2rgrad)(OUT("rgrad_v", d), IN("v"), ev, n);
    T *rn = OUT("rgrad_neg", (size_t)k * d);
    for (int j = 0; j < k; j++)
        SFX(gyro_lorentz_egrad2rgrad)(rn + (size_t)j * d, IN("neg") + (size_t)j * d,
                                      en + (size_t)j * d, n);
    if (HAS_W)
        SFX(gyro_lorentz_skipgram_loss_backward)(GRAD("u"), GRAD("v"), GRAD("neg"), W("loss")[0],
                                                 IN("u"), IN("v"), IN("neg"), theta, k, n);
    return 0;
}

static int SFX(h_lorentz_linear)(golden_ctx *cx)
{
    int m = D1("W"), n = D2("W") - 1;
    SFX(gyro_lorentz_linear)(OUT("y", (size_t)m + 1), IN("x"), IN("W"), m, n);
    if (HAS_W)
        SFX(gyro_lorentz_linear_backward)(GRAD("x"), GRAD("W"), W("y"), IN("x"), IN("W"), m, n);
    return 0;
}

static int SFX(h_lorentz_centroid)(golden_ctx *cx)
{
    int N = D1("X"), n = D2("X") - 1;
    SFX(gyro_lorentz_centroid)(OUT("mu", (size_t)n + 1), IN("X"), IN("nu"), N, n);
    if (HAS_W)
        SFX(gyro_lorentz_centroid_backward)(GRAD("X"), GRAD("nu"), W("mu"), IN("X"), IN("nu"), N,
                                            n);
    return 0;
}

/* ---- consistency ---- */

static int SFX(h_roundtrip_ball)(golden_ctx *cx)
{
    int n = D1("y");
    T *x = OUT("x", (size_t)n + 1);
    SFX(gyro_hyp_to_hyperboloid)(x, IN("y"), n);
    SFX(gyro_hyp_to_poincare)(OUT("y_rt", n), x, n);
    return 0;
}

static int SFX(h_roundtrip_hyperboloid)(golden_ctx *cx)
{
    int n = D1("x") - 1;
    T *y = OUT("y", n);
    SFX(gyro_hyp_to_poincare)(y, IN("x"), n);
    SFX(gyro_hyp_to_hyperboloid)(OUT("x_rt", (size_t)n + 1), y, n);
    return 0;
}

static int SFX(h_dist_cross_model)(golden_ctx *cx)
{
    int n = D1("y1");
    T *x1 = OUT("x1", (size_t)n + 1), *x2 = OUT("x2", (size_t)n + 1);
    SFX(gyro_hyp_to_hyperboloid)(x1, IN("y1"), n);
    SFX(gyro_hyp_to_hyperboloid)(x2, IN("y2"), n);
    OUT("d_ball", 1)[0] = SFX(gyro_poincare_dist)(IN("y1"), IN("y2"), 1, n);
    OUT("d_lorentz", 1)[0] = SFX(gyro_lorentz_dist)(x1, x2, n);
    return 0;
}

#undef IN
#undef W
#undef OUT
#undef GRAD
#undef D1
#undef D2
#undef PAR
#undef HAS_W

#endif /* HG_TEMPLATE */

/* check_lorentz_golden.c — Check suite: every case of the HyboNet layer vectors (default
 * ../shared/golden/lorentz_layers.txt, or the file named by $GYRO_GOLDEN_LAYERS) run through
 * models/layers/lorentz.h in float64 and float32, outputs and gradients compared tensor-wise.
 *
 * The file format, the comparison and the suite are tests/support/golden.h, shared with
 * check_hyp_golden.c: the error of a tensor is
 * max_i |got_i − exp_i| / max_i |exp_i| (an all-zero expected tensor must come out below 1e-12
 * absolute in float64, 1e-6 in float32), with the tolerances
 *   float64: 1e-9 for every case;
 *   float32: 1e-4 for ordinary cases, 1e-2 for f32_sensitive, 5e-2 for near_boundary
 * (the reasons are written at the top of check_hyp_golden.c). Every out and grad line is
 * compared, none is skipped: the pooling kernel differentiates its token weights too, so even
 * `grad mask` is checked.
 *
 * How the file's ops map onto the layers (lorentz.h says the same):
 *   hybonet_linear[_relu]  gyro_lorentz_hlinear_* with one row, no dropout mask, no bias point,
 *                          K = −1, ε = eps and log_lambda = log(lambda) (the layer learns log λ;
 *                          exp(log λ) is λ to 1 ulp), act = none / relu;
 *   lorentz_attention      gyro_lorentz_mha_* with B = H = 1, no key mask, K = −1;
 *   lorentz_centroid_pool  gyro_lorentz_pool_* with the mask as the token weights, K = −1.
 * An op in the file that this table lacks FAILS (test_file_loaded and its case), and every op
 * named in the file's "counts:" header must have at least one case.
 * With GYRO_GOLDEN_REPORT=1 the suite prints the largest error per op and precision.
 *
 * The handlers are written once over a storage type T: the file includes itself twice.
 */
#ifndef LG_TEMPLATE

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/layers/lorentz.h"
#include "tests/support/golden.h"

#define LG_TEMPLATE 1
#define T double
#define SFX(name) name##_f64
#include "tests/check_lorentz_golden.c"
#undef T
#undef SFX
#define T float
#define SFX(name) name##_f32
#include "tests/check_lorentz_golden.c"
#undef T
#undef SFX
#undef LG_TEMPLATE

#define LG_OP(name) {#name, h_##name##_f64, h_##name##_f32}
static const golden_op g_ops[] = {
    LG_OP(hybonet_linear),
    LG_OP(hybonet_linear_relu),
    LG_OP(lorentz_attention),
    LG_OP(lorentz_centroid_pool),
};

int main(void)
{
    static const golden_suite suite = {
        .name = "lorentz_golden", .env = "GYRO_GOLDEN_LAYERS", .default_path = "../shared/golden/lorentz_layers.txt",
        .library = "models/layers/lorentz", .ops = g_ops, .nops = (int)(sizeof g_ops / sizeof g_ops[0]),
        .strict = 1,
    };
    return golden_main(&suite);
}

#else /* LG_TEMPLATE: the handlers, instantiated for T = double and T = float */

#define IN(nm) SFX(golden_in)(cx, nm)
#define WT(nm) SFX(golden_w)(cx, nm)
#define OUT(nm, len) ((T *)golden_buf(cx, GOLDEN_OUT, nm, len, sizeof(T)))
#define GRAD(nm) ((T *)golden_buf(cx, GOLDEN_GRAD, nm, golden_in(cx, nm)->len, sizeof(T)))
#define SCRATCH(len) ((T *)golden_buf(cx, GOLDEN_SCRATCH, "", len, sizeof(T)))
#define D1(nm) (golden_in(cx, nm)->d1)
#define D2(nm) (golden_in(cx, nm)->d2)
#define HAS_W (cx->k->nw > 0)

/* hybonet_linear(_relu): one row; the layer learns log λ, so λ enters as log(λ). */
static void SFX(lg_hybonet)(golden_ctx *cx, int act)
{
    int m = D1("W"), n = D2("W") - 1;
    ck_assert_int_eq(D1("x"), n + 1);
    double eps = golden_param(cx, "eps");
    T loglam = (T)log(golden_param(cx, "lambda"));
    T *U = SCRATCH((size_t)m), *Hc = SCRATCH((size_t)n + 1);
    SFX(gyro_lorentz_hlinear_forward)(OUT("y", (size_t)m + 1), U, Hc, IN("x"), NULL, NULL, IN("W"),
                                      IN("b"), IN("v"), IN("b_t"), &loglam, eps, act, -1.0, 1, n,
                                      m, 1);
    if (HAS_W) {
        T *dll = SCRATCH(1), *work = SCRATCH((size_t)m + n + 1);
        SFX(gyro_lorentz_hlinear_backward)(GRAD("x"), NULL, GRAD("W"), GRAD("b"), GRAD("v"),
                                           GRAD("b_t"), dll, work, WT("y"), U, Hc, IN("x"), NULL,
                                           NULL, IN("W"), IN("v"), IN("b_t"), &loglam, eps, act,
                                           -1.0, 1, n, m, 1);
    }
}

static int SFX(h_hybonet_linear)(golden_ctx *cx) { SFX(lg_hybonet)(cx, GYRO_LORENTZ_ACT_NONE); return 0; }
static int SFX(h_hybonet_linear_relu)(golden_ctx *cx) { SFX(lg_hybonet)(cx, GYRO_LORENTZ_ACT_RELU); return 0; }

static int SFX(h_lorentz_attention)(golden_ctx *cx)
{
    int Tq = D1("Q"), Tk = D1("K"), n = D2("Q") - 1;
    ck_assert_int_eq(D2("K"), n + 1);
    ck_assert_int_eq(D1("V"), Tk);
    T *O = OUT("O", (size_t)Tq * (n + 1));
    T *A = SCRATCH((size_t)Tq * Tk), *Sz = SCRATCH((size_t)Tq);
    SFX(gyro_lorentz_mha_forward)(O, A, Sz, IN("Q"), IN("K"), IN("V"), NULL, -1.0, 1, Tq, Tk, 1, n);
    if (HAS_W)
        SFX(gyro_lorentz_mha_backward)(GRAD("Q"), GRAD("K"), GRAD("V"), WT("O"), O, A, Sz, IN("Q"),
                                       IN("K"), IN("V"), NULL, -1.0, 1, Tq, Tk, 1, n);
    return 0;
}

static int SFX(h_lorentz_centroid_pool)(golden_ctx *cx)
{
    int Tn = D1("X"), n = D2("X") - 1;
    ck_assert_int_eq(D1("mask"), Tn);
    T *mu = OUT("mu", (size_t)n + 1), *Sz = SCRATCH(1);
    SFX(gyro_lorentz_pool_forward)(mu, Sz, IN("X"), IN("mask"), -1.0, 1, Tn, n);
    if (HAS_W)
        SFX(gyro_lorentz_pool_backward)(GRAD("X"), GRAD("mask"), WT("mu"), mu, Sz, IN("X"),
                                        IN("mask"), -1.0, 1, Tn, n);
    return 0;
}

#undef IN
#undef WT
#undef OUT
#undef GRAD
#undef SCRATCH
#undef D1
#undef D2
#undef HAS_W

#endif /* LG_TEMPLATE */

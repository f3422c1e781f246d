/* check_mla.c — Check suite for models/layers/mla: configuration checks, attention structure (rows
 * sum to one, causal mask, RoPE's relative-position property), float32 against float64, and the
 * backward pass against central finite differences in float64 (Euclidean and hyperbolic, causal
 * and not), reporting the max abs and relative error. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/core/rng.h"
#include "models/hyp/poincare.h"
#include "models/layers/mla.h"
#include "tests/support/fd.h"

static gyro_mla_config small_cfg(int hyperbolic, int causal)
{
    gyro_mla_config c = {.d_model = 8, .n_heads = 2, .d_head = 3, .d_rope = 4, .d_kv_latent = 5,
                         .d_q_latent = 6, .causal = causal, .hyperbolic = hyperbolic,
                         .curvature = 1.0, .rope_base = 10000.0};
    return c;
}

static void random_input(double *x, int N, int d, int hyperbolic, gyro_rng *r)
{
    for (int i = 0; i < N * d; i++) x[i] = 0.5 * gyro_rng_normal(r);
    if (hyperbolic)
        for (int i = 0; i < N; i++) gyro_poincare_expmap0_f64(x + i * d, x + i * d, 1.0, d);
}

static double loss_of(const double *out, const double *w, size_t n)
{
    double s = 0.0;
    for (size_t i = 0; i < n; i++) s += out[i] * w[i];
    return s;
}

/* L = Σ w·out of the forward at the current parameters and input (the objective of fd_central). */
typedef struct mla_objective {
    const gyro_mla_config *cfg;
    int B, T;
    double *out, *acts;
    const double *in, *P, *w;
} mla_objective;

static double mla_loss(void *vctx)
{
    const mla_objective *o = vctx;
    gyro_mla_forward_f64(o->out, o->acts, o->in, o->P, o->cfg, o->B, o->T);
    return loss_of(o->out, o->w, (size_t)o->B * o->T * o->cfg->d_model);
}

/* Compare the analytic gradient of L = Σ w·out with central differences, for every parameter
 * and every input coordinate. */
static void fd_check(int hyperbolic, int causal)
{
    gyro_mla_config cfg = small_cfg(hyperbolic, causal);
    ck_assert_int_eq(gyro_mla_config_check(&cfg), GYRO_OK);
    const int B = 2, T = 3, N = B * T, d = cfg.d_model;
    gyro_mla_layout L;
    gyro_mla_layout_init(&L, &cfg, B, T);
    gyro_rng r;
    gyro_rng_seed(&r, 1234 + hyperbolic * 10 + causal);
    double *P = malloc(sizeof(double) * L.n_params), *dP = calloc(L.n_params, sizeof(double));
    double *acts = malloc(sizeof(double) * L.n_acts), *scr = malloc(sizeof(double) * L.n_scratch);
    double *in = malloc(sizeof(double) * N * d), *din = calloc((size_t)N * d, sizeof(double));
    double *out = malloc(sizeof(double) * N * d), *w = malloc(sizeof(double) * N * d);
    gyro_mla_init_params_f64(P, &cfg, &r);
    random_input(in, N, d, hyperbolic, &r);
    for (int i = 0; i < N * d; i++) w[i] = gyro_rng_normal(&r);

    gyro_mla_forward_f64(out, acts, in, P, &cfg, B, T);
    gyro_mla_backward_f64(din, dP, scr, w, acts, in, P, &cfg, B, T);

    mla_objective o = {&cfg, B, T, out, acts, in, P, w};
    fd_stats st = {.floor = 1e-3};
    for (size_t k = 0; k < L.n_params + (size_t)N * d; k++) {
        double *x = k < L.n_params ? &P[k] : &in[k - L.n_params];
        double g = k < L.n_params ? dP[k] : din[k - L.n_params];
        fd_stats_add(&st, k, fd_central(x, 1e-6, mla_loss, &o), g);
    }
    const double max_abs = st.max_abs, max_rel = st.max_rel;
    printf("mla fd (hyperbolic=%d causal=%d): %zu values, max abs err %.3g, max rel err %.3g\n",
           hyperbolic, causal, L.n_params + (size_t)N * d, max_abs, max_rel);
    ck_assert_msg(max_abs < 1e-7 && max_rel < 1e-5, "max abs %g rel %g", max_abs, max_rel);
    free(P); free(dP); free(acts); free(scr); free(in); free(din); free(out); free(w);
}

START_TEST(test_fd_euclidean) { fd_check(0, 0); }
END_TEST
START_TEST(test_fd_euclidean_causal) { fd_check(0, 1); }
END_TEST
START_TEST(test_fd_hyperbolic) { fd_check(1, 0); }
END_TEST
START_TEST(test_fd_hyperbolic_causal) { fd_check(1, 1); }
END_TEST

START_TEST(test_fd_no_rope)
{
    gyro_mla_config cfg = small_cfg(0, 0);
    cfg.d_rope = 0;
    ck_assert_int_eq(gyro_mla_config_check(&cfg), GYRO_OK);
    const int B = 1, T = 4, N = B * T, d = cfg.d_model;
    gyro_mla_layout L;
    gyro_mla_layout_init(&L, &cfg, B, T);
    gyro_rng r;
    gyro_rng_seed(&r, 99);
    double *P = malloc(sizeof(double) * L.n_params), *dP = calloc(L.n_params, sizeof(double));
    double *acts = malloc(sizeof(double) * L.n_acts), *scr = malloc(sizeof(double) * L.n_scratch);
    double in[32], din[32] = {0}, out[32], w[32];
    gyro_mla_init_params_f64(P, &cfg, &r);
    random_input(in, N, d, 0, &r);
    for (int i = 0; i < N * d; i++) w[i] = gyro_rng_normal(&r);
    gyro_mla_forward_f64(out, acts, in, P, &cfg, B, T);
    gyro_mla_backward_f64(din, dP, scr, w, acts, in, P, &cfg, B, T);
    mla_objective o = {&cfg, B, T, out, acts, in, P, w};
    fd_stats st = {.floor = 1e-3};
    for (int k = 0; k < N * d; k++) fd_stats_add(&st, (size_t)k, fd_central(&in[k], 1e-6, mla_loss, &o), din[k]);
    ck_assert_msg(st.max_abs < 1e-7, "max abs %g", st.max_abs);
    free(P); free(dP); free(acts); free(scr);
}
END_TEST

START_TEST(test_attention_structure)
{
    gyro_mla_config cfg = small_cfg(0, 1);
    const int B = 2, T = 4, N = B * T, d = cfg.d_model;
    gyro_mla_layout L;
    gyro_mla_layout_init(&L, &cfg, B, T);
    gyro_rng r;
    gyro_rng_seed(&r, 5);
    double *P = malloc(sizeof(double) * L.n_params), *acts = malloc(sizeof(double) * L.n_acts);
    double in[64], out[64];
    gyro_mla_init_params_f64(P, &cfg, &r);
    random_input(in, N, d, 0, &r);
    gyro_mla_forward_f64(out, acts, in, P, &cfg, B, T);
    const double *att = acts + L.att;
    for (int row = 0; row < B * cfg.n_heads * T; row++) {
        int t = row % T;
        double s = 0.0;
        for (int j = 0; j < T; j++) {
            double a = att[row * T + j];
            if (j > t) ck_assert_double_eq(a, 0.0); /* causal mask */
            else ck_assert(a > 0.0);
            s += a;
        }
        ck_assert_double_eq_tol(s, 1.0, 1e-12);
    }
    /* causal: the first token's output depends on itself only, so changing a later token leaves
     * it unchanged */
    double out2[64];
    in[3 * d + 1] += 0.7;
    gyro_mla_forward_f64(out2, acts, in, P, &cfg, B, T);
    for (int i = 0; i < d; i++) ck_assert_double_eq(out[i], out2[i]);
    free(P); free(acts);
}
END_TEST

/* RoPE: the score between the same two token contents depends only on their relative position,
 * so shifting both positions leaves it unchanged. Checked through the rotated q^R/k^R dots. */
START_TEST(test_rope_relative)
{
    gyro_mla_config cfg = small_cfg(0, 0);
    cfg.n_heads = 1;
    const int T = 6, d = cfg.d_model;
    gyro_mla_layout L;
    gyro_mla_layout_init(&L, &cfg, 1, T);
    gyro_rng r;
    gyro_rng_seed(&r, 8);
    double *P = malloc(sizeof(double) * L.n_params), *acts = malloc(sizeof(double) * L.n_acts);
    double tok_a[8], tok_b[8], in[48], out[48];
    gyro_mla_init_params_f64(P, &cfg, &r);
    random_input(tok_a, 1, d, 0, &r);
    random_input(tok_b, 1, d, 0, &r);
    /* sequence a b a b a b: (pos 0 → a, pos 1 → b) and (pos 2 → a, pos 3 → b) */
    for (int t = 0; t < T; t++) memcpy(in + t * d, t % 2 ? tok_b : tok_a, sizeof tok_a);
    gyro_mla_forward_f64(out, acts, in, P, &cfg, 1, T);
    const double *qr = acts + L.qr, *kr = acts + L.kr;
    int dr = cfg.d_rope;
    double s01 = 0, s23 = 0, s02 = 0;
    for (int i = 0; i < dr; i++) {
        s01 += qr[0 * dr + i] * kr[1 * dr + i];
        s23 += qr[2 * dr + i] * kr[3 * dr + i];
        s02 += qr[0 * dr + i] * kr[2 * dr + i];
    }
    ck_assert_double_eq_tol(s01, s23, 1e-12);
    ck_assert(fabs(s01 - s02) > 1e-9); /* and it does depend on the offset */
    free(P); free(acts);
}
END_TEST

START_TEST(test_f32_matches_f64)
{
    for (int hyp = 0; hyp < 2; hyp++) {
        gyro_mla_config cfg = small_cfg(hyp, 0);
        const int B = 3, T = 4, N = B * T, d = cfg.d_model;
        gyro_mla_layout L;
        gyro_mla_layout_init(&L, &cfg, B, T);
        gyro_rng r;
        gyro_rng_seed(&r, 77);
        double *P = malloc(sizeof(double) * L.n_params), *acts = malloc(sizeof(double) * L.n_acts);
        double *dP = calloc(L.n_params, sizeof(double)), *scr = malloc(sizeof(double) * L.n_scratch);
        float *Pf = malloc(sizeof(float) * L.n_params), *actsf = malloc(sizeof(float) * L.n_acts);
        float *dPf = calloc(L.n_params, sizeof(float)), *scrf = malloc(sizeof(float) * L.n_scratch);
        double in[96], out[96], w[96], din[96] = {0};
        float inf[96], outf[96], wf[96], dinf[96] = {0};
        gyro_mla_init_params_f64(P, &cfg, &r);
        for (size_t i = 0; i < L.n_params; i++) Pf[i] = (float)P[i];
        random_input(in, N, d, hyp, &r);
        for (int i = 0; i < N * d; i++) {
            inf[i] = (float)in[i];
            w[i] = gyro_rng_normal(&r);
            wf[i] = (float)w[i];
        }
        gyro_mla_forward_f64(out, acts, in, P, &cfg, B, T);
        gyro_mla_forward_f32(outf, actsf, inf, Pf, &cfg, B, T);
        gyro_mla_backward_f64(din, dP, scr, w, acts, in, P, &cfg, B, T);
        gyro_mla_backward_f32(dinf, dPf, scrf, wf, actsf, inf, Pf, &cfg, B, T);
        for (int i = 0; i < N * d; i++) {
            ck_assert_double_eq_tol(outf[i], out[i], 1e-5);
            ck_assert_double_eq_tol(dinf[i], din[i], 1e-4);
        }
        for (size_t i = 0; i < L.n_params; i++) ck_assert_double_eq_tol(dPf[i], dP[i], 1e-4);
        free(P); free(acts); free(dP); free(scr); free(Pf); free(actsf); free(dPf); free(scrf);
    }
}
END_TEST

START_TEST(test_config_check)
{
    gyro_mla_config c = small_cfg(1, 0);
    ck_assert_int_eq(gyro_mla_config_check(&c), GYRO_OK);
    c.d_rope = 3;
    ck_assert_int_eq(gyro_mla_config_check(&c), GYRO_ERR_USAGE);
    c = small_cfg(1, 0);
    c.curvature = 0.0;
    ck_assert_int_eq(gyro_mla_config_check(&c), GYRO_ERR_USAGE);
    c = small_cfg(0, 0);
    c.curvature = 0.0; /* irrelevant when Euclidean */
    ck_assert_int_eq(gyro_mla_config_check(&c), GYRO_OK);
    c.d_kv_latent = 0;
    ck_assert_int_eq(gyro_mla_config_check(&c), GYRO_ERR_USAGE);
    ck_assert_int_eq(gyro_mla_config_check(NULL), GYRO_ERR_USAGE);
}
END_TEST

Suite *mla_suite(void)
{
    Suite *s = suite_create("mla");
    TCase *tc = tcase_create("mla");
    tcase_add_test(tc, test_config_check);
    tcase_add_test(tc, test_attention_structure);
    tcase_add_test(tc, test_rope_relative);
    tcase_add_test(tc, test_f32_matches_f64);
    tcase_add_test(tc, test_fd_euclidean);
    tcase_add_test(tc, test_fd_euclidean_causal);
    tcase_add_test(tc, test_fd_hyperbolic);
    tcase_add_test(tc, test_fd_hyperbolic_causal);
    tcase_add_test(tc, test_fd_no_rope);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(mla_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* check_moe.c — Check suite for models/layers/moe: configuration checks, routing (softmax, top-k,
 * ties, load counts), the balance loss by hand, float32 against float64, and the backward pass
 * against central finite differences in float64 (Euclidean and hyperbolic, with and without shared
 * experts, top-1 and top-2, with the balance loss). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/core/rng.h"
#include "models/hyp/poincare.h"
#include "models/layers/moe.h"
#include "tests/support/fd.h"

static gyro_moe_config cfg_of(int hyperbolic, int n_shared, int top_k)
{
    gyro_moe_config c = {.d_model = 6, .d_ffn = 5, .n_shared = n_shared, .n_routed = 4,
                         .top_k = top_k, .hyperbolic = hyperbolic, .curvature = 1.0};
    return c;
}

static void random_input(double *x, int N, int d, int hyperbolic, gyro_rng *r)
{
    for (int i = 0; i < N * d; i++) x[i] = 0.6 * gyro_rng_normal(r);
    if (hyperbolic)
        for (int i = 0; i < N; i++) gyro_poincare_expmap0_f64(x + i * d, x + i * d, 1.0, d);
}

static double objective(double *out, double *acts, int *route, const double *in, const double *P,
                        const double *w, const gyro_moe_config *cfg, int N, double alpha)
{
    gyro_moe_forward_f64(out, acts, route, in, P, cfg, N);
    double s = gyro_moe_balance_loss_f64(NULL, acts, route, cfg, N, alpha);
    for (int i = 0; i < N * cfg->d_model; i++) s += out[i] * w[i];
    return s;
}

/* The objective at the current parameters and input for fd_central; `switched` records a
 * routing different from route0 (a top-k switch, where the objective is not differentiable). */
typedef struct moe_objective {
    double *out, *acts;
    int *route;
    const int *route0;
    const double *in, *P, *w;
    const gyro_moe_config *cfg;
    int N, switched;
    size_t n_route;
    double alpha;
} moe_objective;

static double moe_loss(void *vctx)
{
    moe_objective *o = vctx;
    double s = objective(o->out, o->acts, o->route, o->in, o->P, o->w, o->cfg, o->N, o->alpha);
    o->switched |= memcmp(o->route, o->route0, sizeof(int) * o->n_route) != 0;
    return s;
}

static void fd_check(int hyperbolic, int n_shared, int top_k, double alpha)
{
    gyro_moe_config cfg = cfg_of(hyperbolic, n_shared, top_k);
    ck_assert_int_eq(gyro_moe_config_check(&cfg), GYRO_OK);
    const int N = 7, d = cfg.d_model;
    gyro_moe_layout L;
    gyro_moe_layout_init(&L, &cfg, N);
    gyro_rng r;
    gyro_rng_seed(&r, 100 + hyperbolic * 7 + n_shared * 3 + top_k);
    double *P = malloc(sizeof(double) * L.n_params), *dP = calloc(L.n_params, sizeof(double));
    double *acts = malloc(sizeof(double) * L.n_acts), *scr = malloc(sizeof(double) * L.n_scratch);
    int *route = malloc(sizeof(int) * L.n_route), *route0 = malloc(sizeof(int) * L.n_route);
    double in[42], din[42] = {0}, out[42], w[42];
    gyro_moe_init_params_f64(P, &cfg, &r);
    for (size_t i = 0; i < L.n_params; i++) P[i] += 0.1 * gyro_rng_normal(&r); /* nonzero biases */
    random_input(in, N, d, hyperbolic, &r);
    for (int i = 0; i < N * d; i++) w[i] = gyro_rng_normal(&r);

    objective(out, acts, route0, in, P, w, &cfg, N, alpha);
    gyro_moe_backward_f64(din, dP, scr, w, acts, route0, in, P, &cfg, N, alpha);

    moe_objective o = {out, acts, route, route0, in, P, w, &cfg, N, 0, L.n_route, alpha};
    fd_stats st = {.floor = 1e-3};
    int skipped = 0;
    for (size_t k = 0; k < L.n_params + (size_t)N * d; k++) {
        double *x = k < L.n_params ? &P[k] : &in[k - L.n_params];
        double g = k < L.n_params ? dP[k] : din[k - L.n_params];
        o.switched = 0;
        double fd = fd_central(x, 1e-6, moe_loss, &o);
        if (o.switched) { skipped++; continue; } /* a top-k switch: not differentiable there */
        fd_stats_add(&st, k, fd, g);
    }
    const double max_abs = st.max_abs, max_rel = st.max_rel;
    printf("moe fd (hyperbolic=%d shared=%d top_k=%d alpha=%g): %zu values (%d at a routing switch), "
           "max abs err %.3g, max rel err %.3g\n", hyperbolic, n_shared, top_k, alpha,
           L.n_params + (size_t)N * d, skipped, max_abs, max_rel);
    ck_assert_int_eq(skipped, 0);
    ck_assert_msg(max_abs < 1e-7 && max_rel < 1e-5, "max abs %g rel %g", max_abs, max_rel);
    free(P); free(dP); free(acts); free(scr); free(route); free(route0);
}

START_TEST(test_fd_euclidean_shared_top1) { fd_check(0, 1, 1, 0.0); }
END_TEST
START_TEST(test_fd_euclidean_top2_balance) { fd_check(0, 0, 2, 0.3); }
END_TEST
START_TEST(test_fd_hyperbolic_shared_top1) { fd_check(1, 1, 1, 0.0); }
END_TEST
START_TEST(test_fd_hyperbolic_top2_balance) { fd_check(1, 2, 2, 0.3); }
END_TEST
START_TEST(test_fd_hyperbolic_single) { fd_check(1, 0, 1, 0.1); }
END_TEST

START_TEST(test_routing_and_balance)
{
    gyro_moe_config cfg = cfg_of(0, 1, 2);
    const int N = 3, d = cfg.d_model;
    gyro_moe_layout L;
    gyro_moe_layout_init(&L, &cfg, N);
    double *P = calloc(L.n_params, sizeof(double)), *acts = malloc(sizeof(double) * L.n_acts);
    int *route = malloc(sizeof(int) * L.n_route);
    double in[18] = {0}, out[18];
    /* centroids: e_i = i · unit vector 0, so the affinity of token x is i · x0 */
    for (int i = 0; i < 4; i++) P[L.centroids + (size_t)i * d] = i;
    in[0 * d] = 1.0;  /* token 0: prefers expert 3, then 2 */
    in[1 * d] = -1.0; /* token 1: prefers expert 0, then 1 */
    /* token 2 is zero: all affinities tie → experts 0 and 1 (lower index) */
    gyro_moe_forward_f64(out, acts, route, in, P, &cfg, N);
    ck_assert_int_eq(route[0], 3);
    ck_assert_int_eq(route[1], 2);
    ck_assert_int_eq(route[2], 0);
    ck_assert_int_eq(route[3], 1);
    ck_assert_int_eq(route[4], 0);
    ck_assert_int_eq(route[5], 1);
    const double *s = acts + L.probs;
    double z = exp(0) + exp(1) + exp(2) + exp(3);
    ck_assert_double_eq_tol(s[3], exp(3) / z, 1e-12);
    ck_assert_double_eq_tol(s[2 * 4 + 0], 0.25, 1e-12);
    long cnt[4] = {0};
    gyro_moe_count_load(cnt, route, &cfg, N);
    ck_assert_int_eq(cnt[0], 2);
    ck_assert_int_eq(cnt[1], 2);
    ck_assert_int_eq(cnt[2], 1);
    ck_assert_int_eq(cnt[3], 1);
    /* balance loss by hand: f_i = Nr/(K N) cnt_i = 4/6 cnt_i, P_i = mean_t s_{i,t} */
    double f[4], want = 0.0;
    double bal = gyro_moe_balance_loss_f64(f, acts, route, &cfg, N, 0.5);
    for (int i = 0; i < 4; i++) {
        double p = (s[i] + s[4 + i] + s[8 + i]) / 3.0;
        ck_assert_double_eq_tol(f[i], 4.0 / 6.0 * cnt[i], 1e-12);
        want += f[i] * p;
    }
    ck_assert_double_eq_tol(bal, 0.5 * want, 1e-12);
    /* with all weights zero the Euclidean output is zero */
    for (int i = 0; i < N * d; i++) ck_assert_double_eq(out[i], 0.0);
    free(P); free(acts); free(route);
}
END_TEST

START_TEST(test_f32_matches_f64)
{
    for (int hyp = 0; hyp < 2; hyp++) {
        gyro_moe_config cfg = cfg_of(hyp, 1, 1);
        const int N = 9, d = cfg.d_model;
        gyro_moe_layout L;
        gyro_moe_layout_init(&L, &cfg, N);
        gyro_rng r;
        gyro_rng_seed(&r, 3);
        double *P = malloc(sizeof(double) * L.n_params), *acts = malloc(sizeof(double) * L.n_acts);
        double *dP = calloc(L.n_params, sizeof(double)), *scr = malloc(sizeof(double) * L.n_scratch);
        float *Pf = malloc(sizeof(float) * L.n_params), *actsf = malloc(sizeof(float) * L.n_acts);
        float *dPf = calloc(L.n_params, sizeof(float)), *scrf = malloc(sizeof(float) * L.n_scratch);
        int *route = malloc(sizeof(int) * L.n_route), *routef = malloc(sizeof(int) * L.n_route);
        double in[54], out[54], w[54], din[54] = {0};
        float inf[54], outf[54], wf[54], dinf[54] = {0};
        gyro_moe_init_params_f64(P, &cfg, &r);
        for (size_t i = 0; i < L.n_params; i++) Pf[i] = (float)P[i];
        random_input(in, N, d, hyp, &r);
        for (int i = 0; i < N * d; i++) {
            inf[i] = (float)in[i];
            w[i] = gyro_rng_normal(&r);
            wf[i] = (float)w[i];
        }
        gyro_moe_forward_f64(out, acts, route, in, P, &cfg, N);
        gyro_moe_forward_f32(outf, actsf, routef, inf, Pf, &cfg, N);
        ck_assert_mem_eq(route, routef, sizeof(int) * L.n_route);
        gyro_moe_backward_f64(din, dP, scr, w, acts, route, in, P, &cfg, N, 0.1);
        gyro_moe_backward_f32(dinf, dPf, scrf, wf, actsf, routef, inf, Pf, &cfg, N, 0.1);
        for (int i = 0; i < N * d; i++) {
            ck_assert_double_eq_tol(outf[i], out[i], 1e-5);
            ck_assert_double_eq_tol(dinf[i], din[i], 1e-4);
        }
        for (size_t i = 0; i < L.n_params; i++) ck_assert_double_eq_tol(dPf[i], dP[i], 1e-4);
        if (hyp)
            for (int t = 0; t < N; t++) { /* outputs stay inside the ball */
                double n2 = 0;
                for (int k = 0; k < d; k++) n2 += outf[t * d + k] * outf[t * d + k];
                ck_assert(n2 < 1.0);
            }
        free(P); free(acts); free(dP); free(scr); free(Pf); free(actsf); free(dPf); free(scrf);
        free(route); free(routef);
    }
}
END_TEST

START_TEST(test_config_check)
{
    gyro_moe_config c = cfg_of(1, 1, 1);
    ck_assert_int_eq(gyro_moe_config_check(&c), GYRO_OK);
    c.top_k = 5;
    ck_assert_int_eq(gyro_moe_config_check(&c), GYRO_ERR_USAGE);
    c = cfg_of(1, 1, 1);
    c.curvature = -1;
    ck_assert_int_eq(gyro_moe_config_check(&c), GYRO_ERR_USAGE);
    c = cfg_of(0, 0, 1);
    c.n_routed = GYRO_MOE_MAX_ROUTED + 1;
    ck_assert_int_eq(gyro_moe_config_check(&c), GYRO_ERR_USAGE);
    c = cfg_of(0, -1, 1);
    ck_assert_int_eq(gyro_moe_config_check(&c), GYRO_ERR_USAGE);
    c = cfg_of(0, 0, 1);
    c.n_routed = 0;
    ck_assert_int_eq(gyro_moe_config_check(&c), GYRO_ERR_USAGE);
    ck_assert_int_eq(gyro_moe_config_check(NULL), GYRO_ERR_USAGE);
}
END_TEST

Suite *moe_suite(void)
{
    Suite *s = suite_create("moe");
    TCase *tc = tcase_create("moe");
    tcase_add_test(tc, test_config_check);
    tcase_add_test(tc, test_routing_and_balance);
    tcase_add_test(tc, test_f32_matches_f64);
    tcase_add_test(tc, test_fd_euclidean_shared_top1);
    tcase_add_test(tc, test_fd_euclidean_top2_balance);
    tcase_add_test(tc, test_fd_hyperbolic_shared_top1);
    tcase_add_test(tc, test_fd_hyperbolic_top2_balance);
    tcase_add_test(tc, test_fd_hyperbolic_single);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(moe_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

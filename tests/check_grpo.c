/* check_grpo.c — Check suite for models/rl/grpo: group advantages, the clipped surrogate and the
 * KL estimator against hand-computed values, and the log-prob gradient against finite
 * differences. */
#include <check.h>
#include <math.h>
#include <stdlib.h>

#include "models/core/rng.h"
#include "models/rl/grpo.h"
#include "tests/support/fd.h"

START_TEST(test_advantages_hand)
{
    /* group 1: rewards 1,2,3,4 -> mean 2.5, population std sqrt(1.25) */
    double r[8] = {1, 2, 3, 4, 5, 5, 5, 5}, a[8];
    ck_assert_int_eq(gyro_grpo_advantages(a, r, 2, 4, 1e-8), GYRO_OK);
    double sd = sqrt(1.25);
    ck_assert_double_eq_tol(a[0], -1.5 / sd, 1e-12);
    ck_assert_double_eq_tol(a[1], -0.5 / sd, 1e-12);
    ck_assert_double_eq_tol(a[2], 0.5 / sd, 1e-12);
    ck_assert_double_eq_tol(a[3], 1.5 / sd, 1e-12);
    for (int i = 4; i < 8; i++) ck_assert_double_eq(a[i], 0.0); /* equal rewards: no signal */
    /* in place */
    ck_assert_int_eq(gyro_grpo_advantages(r, r, 1, 4, 1e-8), GYRO_OK);
    ck_assert_double_eq_tol(r[3], 1.5 / sd, 1e-12);
}
END_TEST

START_TEST(test_advantages_errors)
{
    double r[2] = {1, NAN}, a[2];
    ck_assert_int_eq(gyro_grpo_advantages(a, r, 1, 2, 1e-8), GYRO_ERR_NAN);
    ck_assert_int_eq(gyro_grpo_advantages(a, r, 1, 0, 1e-8), GYRO_ERR_USAGE);
    ck_assert_int_eq(gyro_grpo_advantages(NULL, r, 1, 2, 1e-8), GYRO_ERR_USAGE);
}
END_TEST

START_TEST(test_weights)
{
    int len[3] = {2, 0, 1};
    double w[3];
    ck_assert_int_eq(gyro_grpo_weights(w, len, 3), 3);
    ck_assert_double_eq_tol(w[0], 1.0 / 6.0, 1e-15);
    ck_assert_double_eq_tol(w[1], 1.0 / 6.0, 1e-15);
    ck_assert_double_eq_tol(w[2], 1.0 / 3.0, 1e-15);
}
END_TEST

/* Hand cases of the objective with ε = 0.2, β = 0 and then β = 0.5. */
START_TEST(test_loss_hand)
{
    gyro_grpo_config c = {.clip_eps = 0.2, .kl_beta = 0.0, .adv_eps = 1e-8};
    double lo[4] = {log(1.5), log(1.5), log(0.5), log(0.5)}; /* ratios 1.5, 1.5, 0.5, 0.5 */
    double old[4] = {0, 0, 0, 0};
    double adv[4] = {1, -1, 1, -1};
    double w[4] = {1, 1, 1, 1};
    double g[4] = {0, 0, 0, 0};
    gyro_grpo_stats st;
    double loss = gyro_grpo_loss(g, &st, lo, old, NULL, adv, w, &c, 4);
    /* A=+1, ρ=1.5: min(1.5, 1.2) = 1.2, clipped, grad 0
     * A=-1, ρ=1.5: min(-1.5, -1.2) = -1.5, grad ρA = -1.5
     * A=+1, ρ=0.5: min(0.5, 0.8) = 0.5, grad 0.5
     * A=-1, ρ=0.5: min(-0.5, -0.8) = -0.8, clipped, grad 0 */
    ck_assert_double_eq_tol(loss, -(1.2 - 1.5 + 0.5 - 0.8), 1e-12);
    ck_assert_double_eq_tol(g[0], 0.0, 1e-15);
    ck_assert_double_eq_tol(g[1], 1.5, 1e-12);  /* loss gradient = −dJ */
    ck_assert_double_eq_tol(g[2], -0.5, 1e-12);
    ck_assert_double_eq_tol(g[3], 0.0, 1e-15);
    ck_assert_double_eq_tol(st.clip_fraction, 0.5, 1e-15);
    ck_assert_double_eq_tol(st.ratio_mean, 1.0, 1e-12);

    /* KL estimator: logp = 0, logp_ref = log 2 -> ρ2 = 2, KL = 2 − log 2 − 1 */
    c.kl_beta = 0.5;
    double lp = 0.0, lpo = 0.0, lpr = log(2.0), a0 = 0.0, w1 = 1.0, d = 0.0;
    loss = gyro_grpo_loss(&d, &st, &lp, &lpo, &lpr, &a0, &w1, &c, 1);
    double kl = 2.0 - log(2.0) - 1.0;
    ck_assert_double_eq_tol(st.kl, kl, 1e-12);
    ck_assert_double_eq_tol(loss, 0.5 * kl, 1e-12);
    ck_assert_double_eq_tol(d, 0.5 * (1.0 - 2.0), 1e-12); /* −(−β(1−ρ2)) */
    /* the estimator is zero when the policies agree */
    lpr = 0.0;
    gyro_grpo_loss(NULL, &st, &lp, &lpo, &lpr, &a0, &w1, &c, 1);
    ck_assert_double_eq_tol(st.kl, 0.0, 1e-15);
}
END_TEST

/* The GRPO loss at the current log-probabilities (the objective of fd_central). */
typedef struct grpo_objective {
    const double *lp, *old, *ref, *adv, *w;
    const gyro_grpo_config *c;
    int N;
} grpo_objective;

static double grpo_loss(void *vctx)
{
    const grpo_objective *o = vctx;
    return gyro_grpo_loss(NULL, NULL, o->lp, o->old, o->ref, o->adv, o->w, o->c, o->N);
}

/* Finite differences on random inputs, away from the clip kinks. */
START_TEST(test_loss_fd)
{
    gyro_rng rng;
    gyro_rng_seed(&rng, 7);
    enum { N = 64 };
    double lp[N], old[N], ref[N], adv[N], w[N], g[N];
    gyro_grpo_config c = {.clip_eps = 0.2, .kl_beta = 0.1, .adv_eps = 1e-8};
    for (int k = 0; k < N; k++) {
        old[k] = -0.2 - 2.0 * gyro_rng_uniform(&rng);
        double d;
        do d = 0.6 * (gyro_rng_uniform(&rng) - 0.5); /* log-ratio in (−0.3, 0.3) */
        while (fabs(exp(d) - 0.8) < 1e-3 || fabs(exp(d) - 1.2) < 1e-3);
        lp[k] = old[k] + d;
        ref[k] = old[k] + 0.4 * (gyro_rng_uniform(&rng) - 0.5);
        adv[k] = gyro_rng_normal(&rng);
        w[k] = 1.0 / N;
        g[k] = 0.0;
    }
    gyro_grpo_loss(g, NULL, lp, old, ref, adv, w, &c, N);
    grpo_objective o = {lp, old, ref, adv, w, &c, N};
    fd_stats st = {.floor = 1e-3};
    for (int k = 0; k < N; k++) fd_stats_add(&st, (size_t)k, fd_central(&lp[k], 1e-6, grpo_loss, &o), g[k]);
    ck_assert_msg(st.max_abs < 1e-8, "max abs error %g", st.max_abs);
}
END_TEST

/* A gradient step on the loss increases the probability of positive-advantage actions. */
START_TEST(test_loss_direction)
{
    gyro_grpo_config c = gyro_grpo_config_default();
    double lp[2] = {log(0.5), log(0.5)}, old[2] = {log(0.5), log(0.5)}, ref[2] = {log(0.5), log(0.5)};
    double adv[2] = {1.0, -1.0}, w[2] = {0.5, 0.5}, g[2] = {0, 0};
    gyro_grpo_loss(g, NULL, lp, old, ref, adv, w, &c, 2);
    ck_assert(g[0] < 0.0); /* descending the loss raises logp of the good action */
    ck_assert(g[1] > 0.0);
}
END_TEST

Suite *grpo_suite(void)
{
    Suite *s = suite_create("grpo");
    TCase *tc = tcase_create("grpo");
    tcase_add_test(tc, test_advantages_hand);
    tcase_add_test(tc, test_advantages_errors);
    tcase_add_test(tc, test_weights);
    tcase_add_test(tc, test_loss_hand);
    tcase_add_test(tc, test_loss_fd);
    tcase_add_test(tc, test_loss_direction);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(grpo_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* check_rl_transition.c — Check suite for models/rl/transition: a learned transition model of
 * the Van der Pol and unicycle dynamics beats the mean predictor and the copy baseline on
 * held-out rollouts in both geometries, is reproducible, and refuses bad settings. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "models/core/blas.h"
#include "models/rl/env.h"
#include "models/rl/transition.h"

static gyro_rl_transition_config small(const gyro_rl_env *env, int hyperbolic)
{
    gyro_rl_transition_config c = gyro_rl_transition_config_default();
    c.env = env;
    c.hyperbolic = hyperbolic;
    c.train_episodes = 40;
    c.test_episodes = 10;
    c.epochs = 6;
    c.batch = 128;
    c.quiet = 1;
    return c;
}

/* max_mse: the standardised held-out error the short training must beat (1.0 = the mean). */
static void learns(const gyro_rl_env *env, int hyperbolic, double max_mse)
{
    gyro_blas_set_threads(1);
    gyro_rl_transition_config c = small(env, hyperbolic);
    gyro_rl_transition_result r;
    ck_assert_int_eq(gyro_rl_transition_fit(&c, &r), GYRO_OK);
    printf("transition %s (hyperbolic=%d): train mse %.3f, test mse %.3f, state rmse %.4g "
           "(copy %.4g)\n", env->name, hyperbolic, r.train_mse, r.test_mse, r.test_state_rmse,
           r.test_copy_rmse);
    ck_assert_int_eq(r.train_rows, 40L * env->max_steps);
    ck_assert_int_eq(r.test_rows, 10L * env->max_steps);
    ck_assert_msg(r.test_mse < max_mse, "test mse %g", r.test_mse);
    ck_assert(r.test_state_rmse < r.test_copy_rmse); /* better than ŝ′ = s */
    gyro_rl_transition_result r2;
    ck_assert_int_eq(gyro_rl_transition_fit(&c, &r2), GYRO_OK);
    ck_assert_double_eq(r.test_mse, r2.test_mse);
}

START_TEST(test_vdp_euclidean) { learns(&gyro_rl_env_vdp, 0, 0.7); }
END_TEST
START_TEST(test_vdp_hyperbolic) { learns(&gyro_rl_env_vdp, 1, 0.7); }
END_TEST
START_TEST(test_unicycle_hyperbolic) { learns(&gyro_rl_env_unicycle, 1, 0.95); } /* v·sin θ: harder */
END_TEST

START_TEST(test_bad_settings)
{
    gyro_rl_transition_result r;
    gyro_rl_transition_config c = small(&gyro_rl_env_vdp, 0);
    c.batch = 0;
    ck_assert_int_eq(gyro_rl_transition_fit(&c, &r), GYRO_ERR_USAGE);
    c = small(NULL, 0);
    ck_assert_int_eq(gyro_rl_transition_fit(&c, &r), GYRO_ERR_USAGE);
    c = small(&gyro_rl_env_vdp, 0);
    c.lr = 0;
    ck_assert_int_eq(gyro_rl_transition_fit(&c, &r), GYRO_ERR_USAGE);
    ck_assert_int_eq(gyro_rl_transition_fit(NULL, &r), GYRO_ERR_USAGE);
}
END_TEST

Suite *rl_transition_suite(void)
{
    Suite *s = suite_create("rl_transition");
    TCase *tc = tcase_create("transition");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_bad_settings);
    tcase_add_test(tc, test_vdp_euclidean);
    tcase_add_test(tc, test_vdp_hyperbolic);
    tcase_add_test(tc, test_unicycle_hyperbolic);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(rl_transition_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

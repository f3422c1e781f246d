/* check_rl_transition.c — Check suite for models/rl/transition: a learned transition model of
 * the Van der Pol and unicycle dynamics beats the mean predictor and the copy baseline on
 * held-out rollouts in both geometries, is reproducible, and refuses bad settings; a saved model
 * used as an environment (models/rl/env_model.h) steps close to the true dynamics, and the
 * wrapper refuses files of another environment. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "models/core/blas.h"
#include "models/rl/env.h"
#include "models/rl/env_model.h"
#include "models/rl/policy.h"
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

/* Train on the true dynamics, save, load as an environment; from the same states and actions
 * (random rollouts of the true env) one model step must land as close to the true next
 * observation as the measured held-out error says, and predict the stage cost. */
static void model_env_steps(const gyro_rl_env *env)
{
    gyro_blas_set_threads(1);
    char dir[] = "/tmp/gyro-rlmodel-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/t.bin", dir);
    gyro_rl_transition_config c = small(env, 1);
    c.train_episodes = 100;
    c.epochs = 20;
    c.out = path;
    gyro_rl_transition_result r;
    ck_assert_int_eq(gyro_rl_transition_fit(&c, &r), GYRO_OK);
    const gyro_rl_env *menv = NULL;
    ck_assert_int_eq(gyro_rl_env_model_open(env, path, &menv), GYRO_OK);
    ck_assert_ptr_nonnull(menv);
    ck_assert_int_eq(menv->obs_dim, env->obs_dim);
    ck_assert_int_eq(menv->n_actions, env->n_actions);
    ck_assert_int_eq(menv->max_steps, env->max_steps);
    const int T = env->obs_dim;
    unsigned char st[256], mst[256];
    ck_assert_uint_le(env->state_size, sizeof st);
    float o[16], om[16];
    gyro_rng rng;
    gyro_rng_seed(&rng, 99);
    double se = 0.0, se_copy = 0.0, se_cost = 0.0, var_cost = 0.0, sum_cost = 0.0;
    long n = 0;
    for (int e = 0; e < 50; e++) {
        env->reset(st, &rng);
        while (!env->done(st)) {
            float o0[16];
            env->observe(st, o0);
            memcpy(mst, st, env->state_size);
            int a = (int)gyro_rng_below(&rng, (uint32_t)env->n_actions);
            double m0 = env->metric(st);
            env->step(st, a);
            menv->step(mst, a);
            env->observe(st, o);
            menv->observe(mst, om);
            ck_assert_int_eq(menv->done(mst), env->done(st));
            for (int k = 0; k < T; k++) {
                se += (double)(o[k] - om[k]) * (o[k] - om[k]);
                se_copy += (double)(o[k] - o0[k]) * (o[k] - o0[k]);
            }
            double cost = env->metric(st) - m0, mcost = menv->metric(mst) - m0;
            se_cost += (cost - mcost) * (cost - mcost);
            sum_cost += cost;
            var_cost += cost * cost;
            n++;
        }
    }
    double rmse = sqrt(se / ((double)n * T)), copy = sqrt(se_copy / ((double)n * T));
    double cost_rmse = sqrt(se_cost / n), mean_cost = sum_cost / n;
    double cost_sd = sqrt(var_cost / n - mean_cost * mean_cost);
    printf("model env %s: one-step state rmse %.4g (held-out %.4g, copy %.4g), cost rmse %.4g "
           "(sd %.4g)\n", env->name, rmse, r.test_state_rmse, copy, cost_rmse, cost_sd);
    /* the wrapper reproduces the measured model error (the time feature is exact here, so ≤) */
    ck_assert_msg(rmse <= 1.5 * r.test_state_rmse + 1e-6, "rmse %g vs held-out %g", rmse, r.test_state_rmse);
    ck_assert(rmse < copy);
    ck_assert_msg(cost_rmse < cost_sd, "cost rmse %g, sd %g", cost_rmse, cost_sd);

    /* a model of another environment, a policy file, junk, a missing file */
    const gyro_rl_env *other = env == &gyro_rl_env_vdp ? &gyro_rl_env_unicycle : &gyro_rl_env_vdp;
    ck_assert_int_eq(gyro_rl_env_model_open(other, path, &menv), GYRO_ERR_FORMAT);
    ck_assert_ptr_null(menv);
    ck_assert_int_eq(gyro_rl_env_model_open(&gyro_rl_env_root, path, &menv), GYRO_ERR_USAGE);
    char ppath[256];
    snprintf(ppath, sizeof ppath, "%s/p.bin", dir);
    gyro_rl_policy_config pc = gyro_rl_policy_config_default(1, env->obs_dim, env->n_actions);
    gyro_rl_policy *p = NULL;
    ck_assert_int_eq(gyro_rl_policy_new(&pc, 1, 1, &p), GYRO_OK);
    snprintf(p->env_name, sizeof p->env_name, "%s", env->name);
    ck_assert_int_eq(gyro_rl_policy_save(p, ppath), GYRO_OK);
    gyro_rl_policy_free(p);
    ck_assert_int_eq(gyro_rl_env_model_open(env, ppath, &menv), GYRO_ERR_FORMAT);
    FILE *f = fopen(ppath, "wb");
    ck_assert_ptr_nonnull(f);
    fputs("not a model\n", f);
    fclose(f);
    ck_assert_int_eq(gyro_rl_env_model_open(env, ppath, &menv), GYRO_ERR_FORMAT);
    unlink(ppath);
    ck_assert_int_eq(gyro_rl_env_model_open(env, ppath, &menv), GYRO_ERR_IO);
    gyro_rl_env_model_close();
    unlink(path);
    rmdir(dir);
}

START_TEST(test_model_env_vdp) { model_env_steps(&gyro_rl_env_vdp); }
END_TEST
START_TEST(test_model_env_unicycle) { model_env_steps(&gyro_rl_env_unicycle); }
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
    tcase_add_test(tc, test_model_env_vdp);
    tcase_add_test(tc, test_model_env_unicycle);
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

/* check_rl_train.c — Check suite for models/rl/grpo_train: GRPO actually improves the policy on
 * root finding, training is reproducible for a seed, the expert-load count is exact, checkpoints
 * round-trip, and bad settings are refused. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "models/core/blas.h"
#include "models/rl/env.h"
#include "models/rl/env_root.h"
#include "models/rl/grpo_train.h"
#include "models/rl/policy.h"
#include "models/rl/reason.h"

static gyro_rl_policy *root_policy(int hyperbolic, uint64_t seed)
{
    gyro_rl_policy_config pc = gyro_rl_policy_config_default(hyperbolic, gyro_rl_env_root.obs_dim,
                                                             gyro_rl_env_root.n_actions);
    gyro_rl_policy *p;
    ck_assert_int_eq(gyro_rl_policy_new(&pc, seed, 128, &p), GYRO_OK);
    return p;
}

static gyro_rl_train_config small_train(void)
{
    gyro_rl_train_config c = gyro_rl_train_config_default();
    c.env = &gyro_rl_env_root;
    c.iterations = 12;
    c.n_states = 8;
    c.group = 8;
    c.epochs = 2;
    c.lr = 3e-3;
    c.eval_every = 4;
    c.eval_episodes = 16;
    c.quiet = 1;
    return c;
}

static void improves(int hyperbolic)
{
    gyro_blas_set_threads(1);
    gyro_rl_policy *p = root_policy(hyperbolic, 11);
    gyro_rl_train_config c = small_train();
    gyro_rng r;
    gyro_rng_seed(&r, 99);
    double before, after;
    ck_assert_int_eq(gyro_rl_evaluate(p, c.env, 64, &r, &before, NULL), GYRO_OK);
    gyro_rl_train_result res;
    ck_assert_int_eq(gyro_rl_train(p, &c, &res), GYRO_OK);
    gyro_rng_seed(&r, 99);
    ck_assert_int_eq(gyro_rl_evaluate(p, c.env, 64, &r, &after, NULL), GYRO_OK);
    printf("rl train (hyperbolic=%d): sampled MAE %.3g -> %.3g in %ld steps, kl %.3g\n",
           hyperbolic, before, after, res.steps, res.kl);
    ck_assert_int_eq(res.steps, 24);
    ck_assert_msg(after < before / 10, "MAE %g -> %g", before, after);
    ck_assert(isfinite(res.kl) && res.kl >= 0);
    ck_assert(res.seconds > 0 && res.cpu_seconds >= 0);
    /* every token of every sampled step was routed to exactly top_k experts */
    long total = 0;
    for (int i = 0; i < res.n_experts; i++) total += res.expert_load[i];
    ck_assert_int_eq(total, (long)c.iterations * c.n_states * c.group * GYRO_RL_ROOT_HORIZON *
                                gyro_rl_env_root.obs_dim * p->cfg.moe.top_k);
    gyro_rl_policy_free(p);
}

START_TEST(test_improves_euclidean) { improves(0); }
END_TEST
START_TEST(test_improves_hyperbolic) { improves(1); }
END_TEST
START_TEST(test_improves_lorentz) { improves(GYRO_RL_GEOMETRY_LORENTZ); } /* no experts: load 0 */
END_TEST

START_TEST(test_reproducible_and_checkpoint)
{
    char dir[] = "/tmp/gyro-rltrain-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/p.bin", dir);
    gyro_rl_train_config c = small_train();
    c.iterations = 3;
    gyro_rl_policy *a = root_policy(1, 5), *b = root_policy(1, 5);
    gyro_rl_train_result ra, rb;
    c.checkpoint = path;
    ck_assert_int_eq(gyro_rl_train(a, &c, &ra), GYRO_OK);
    c.checkpoint = NULL;
    ck_assert_int_eq(gyro_rl_train(b, &c, &rb), GYRO_OK);
    ck_assert_mem_eq(a->params, b->params, sizeof(float) * a->lay.n_params);
    ck_assert_double_eq(ra.final_metric, rb.final_metric);
    gyro_rl_policy *l;
    ck_assert_int_eq(gyro_rl_policy_load(path, 4, &l), GYRO_OK);
    ck_assert_mem_eq(l->params, a->params, sizeof(float) * a->lay.n_params);
    gyro_rl_policy_free(l);
    /* another seed gives another policy */
    gyro_rl_policy *d = root_policy(1, 5);
    c.seed = 2;
    ck_assert_int_eq(gyro_rl_train(d, &c, &rb), GYRO_OK);
    ck_assert(memcmp(d->params, a->params, sizeof(float) * a->lay.n_params) != 0);
    /* zero iterations: evaluation only, parameters untouched */
    gyro_rl_policy *z = root_policy(1, 5);
    c.iterations = 0;
    ck_assert_int_eq(gyro_rl_train(z, &c, &rb), GYRO_OK);
    ck_assert_int_eq(rb.steps, 0);
    ck_assert(isfinite(rb.final_metric));
    gyro_rl_policy_free(a);
    gyro_rl_policy_free(b);
    gyro_rl_policy_free(d);
    gyro_rl_policy_free(z);
    unlink(path);
    rmdir(dir);
}
END_TEST

START_TEST(test_bad_settings)
{
    gyro_rl_policy *p = root_policy(0, 1);
    gyro_rl_train_config c = small_train();
    gyro_rl_train_result r;
    c.group = 1;
    ck_assert_int_eq(gyro_rl_train(p, &c, &r), GYRO_ERR_USAGE);
    c = small_train();
    c.grpo.clip_eps = 1.5;
    ck_assert_int_eq(gyro_rl_train(p, &c, &r), GYRO_ERR_USAGE);
    c = small_train();
    c.env = &gyro_rl_env_vdp; /* 3 numbers, 25 actions: not this policy */
    ck_assert_int_eq(gyro_rl_train(p, &c, &r), GYRO_ERR_USAGE);
    ck_assert_ptr_nonnull(strstr(gyro_error_message(), "vdp"));
    ck_assert_int_eq(gyro_rl_evaluate(p, &gyro_rl_env_unicycle, 4, NULL, NULL, NULL), GYRO_ERR_USAGE);
    ck_assert_int_eq(gyro_rl_evaluate(p, &gyro_rl_env_root, 0, NULL, NULL, NULL), GYRO_ERR_USAGE);
    c = small_train();
    c.checkpoint = "/nonexistent/dir/p.bin";
    c.iterations = 1;
    ck_assert_int_eq(gyro_rl_train(p, &c, &r), GYRO_ERR_IO);
    gyro_rl_policy_free(p);
}
END_TEST

/* A non-finite parameter makes the loss non-finite: training stops with GYRO_ERR_NAN. */
START_TEST(test_nan_stops)
{
    gyro_rl_policy *p = root_policy(0, 1);
    p->params[p->lay.w_head] = NAN;
    gyro_rl_train_config c = small_train();
    c.iterations = 2;
    gyro_rl_train_result r;
    ck_assert_int_eq(gyro_rl_train(p, &c, &r), GYRO_ERR_NAN);
    ck_assert_int_eq(r.steps, 0);
    ck_assert_ptr_nonnull(strstr(gyro_error_message(), "not finite"));
    gyro_rl_policy_free(p);
}
END_TEST

START_TEST(test_sample_action)
{
    gyro_rng r;
    gyro_rng_seed(&r, 3);
    float lp[3] = {logf(0.2f), logf(0.5f), logf(0.3f)};
    int cnt[3] = {0, 0, 0};
    for (int i = 0; i < 20000; i++) cnt[gyro_rl_sample_action(lp, 3, &r)]++;
    ck_assert_double_eq_tol(cnt[0] / 20000.0, 0.2, 0.015);
    ck_assert_double_eq_tol(cnt[1] / 20000.0, 0.5, 0.015);
    ck_assert_double_eq_tol(cnt[2] / 20000.0, 0.3, 0.015);
}
END_TEST

START_TEST(test_reason)
{
    gyro_rl_policy *p = root_policy(1, 4);
    snprintf(p->env_name, sizeof p->env_name, "root");
    gyro_rl_reason_result *r = malloc(sizeof *r), *r2 = malloc(sizeof *r2);
    ck_assert_int_eq(gyro_rl_reason(p, "3.5", 0, 0, 1, r), GYRO_OK);
    ck_assert_int_eq(r->n_steps, GYRO_RL_ROOT_HORIZON);
    ck_assert_ptr_nonnull(strstr(r->steps[0].state, "x = 3.500000000000"));
    for (int i = 0; i < r->n_steps; i++) {
        ck_assert_int_eq(r->steps[i].index, i + 1);
        ck_assert(r->steps[i].probability > 0 && r->steps[i].probability <= 1);
        ck_assert_double_eq(r->steps[i].reward, i + 1 == r->n_steps ? r->reward : 0.0);
    }
    ck_assert(isfinite(r->metric) && r->metric >= 0);
    /* the greedy action is the most probable one */
    ck_assert(r->steps[0].probability >= 1.0 / gyro_rl_env_root.n_actions);
    ck_assert_int_eq(gyro_rl_reason(p, " 1.5 ", 2, 1, 9, r), GYRO_OK);
    ck_assert_int_eq(r->n_steps, 2);
    ck_assert_int_eq(gyro_rl_reason(p, "1.5", 2, 1, 9, r2), GYRO_OK);
    ck_assert_int_eq(r->steps[1].action, r2->steps[1].action); /* sampled, same seed */
    ck_assert_int_eq(gyro_rl_reason(p, "", 0, 0, 1, r), GYRO_OK); /* default start */
    ck_assert_int_eq(gyro_rl_reason(p, NULL, 0, 0, 1, r), GYRO_OK);
    ck_assert_int_eq(gyro_rl_reason(p, "abc", 0, 0, 1, r), GYRO_ERR_USAGE);
    ck_assert_ptr_nonnull(strstr(gyro_error_message(), "x0"));
    ck_assert_int_eq(gyro_rl_reason(p, "1,2", 0, 0, 1, r), GYRO_ERR_USAGE);
    ck_assert_int_eq(gyro_rl_reason(p, "99", 0, 0, 1, r), GYRO_ERR_USAGE);
    ck_assert_int_eq(gyro_rl_reason(p, "1,", 0, 0, 1, r), GYRO_ERR_USAGE);
    snprintf(p->env_name, sizeof p->env_name, "vanderpol"); /* exists, but does not fit */
    ck_assert_ptr_eq(gyro_rl_env_find("vanderpol"), &gyro_rl_env_vdp);
    ck_assert_int_eq(gyro_rl_reason(p, NULL, 0, 0, 1, r), GYRO_ERR_NOT_FOUND);
    snprintf(p->env_name, sizeof p->env_name, "nope");
    ck_assert_int_eq(gyro_rl_reason(p, NULL, 0, 0, 1, r), GYRO_ERR_NOT_FOUND);
    free(r);
    free(r2);
    gyro_rl_policy_free(p);
}
END_TEST

Suite *rl_train_suite(void)
{
    Suite *s = suite_create("rl_train");
    TCase *tc = tcase_create("train");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_sample_action);
    tcase_add_test(tc, test_reason);
    tcase_add_test(tc, test_nan_stops);
    tcase_add_test(tc, test_bad_settings);
    tcase_add_test(tc, test_reproducible_and_checkpoint);
    tcase_add_test(tc, test_improves_euclidean);
    tcase_add_test(tc, test_improves_hyperbolic);
    tcase_add_test(tc, test_improves_lorentz);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(rl_train_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

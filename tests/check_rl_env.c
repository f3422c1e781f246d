/* check_rl_env.c — Check suite for models/rl/env*: the registry, the root-finding equation and
 * its steps, RK4 against a hand-computed step and exact solutions, the Van der Pol and unicycle
 * dynamics, costs and rewards, and the sanity of the seed's Van der Pol reference cost. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/core/rng.h"
#include "models/rl/env.h"
#include "models/rl/env_root.h"
#include "models/rl/env_unicycle.h"
#include "models/rl/env_vdp.h"
#include "models/rl/ode.h"

START_TEST(test_registry)
{
    ck_assert_ptr_eq(gyro_rl_env_find("root"), &gyro_rl_env_root);
    ck_assert_ptr_eq(gyro_rl_env_find("vdp"), &gyro_rl_env_vdp);
    ck_assert_ptr_eq(gyro_rl_env_find("unicycle"), &gyro_rl_env_unicycle);
    ck_assert_ptr_eq(gyro_rl_env_find("primefield"), &gyro_rl_env_primefield);
    ck_assert_ptr_null(gyro_rl_env_find("nope"));
    ck_assert_ptr_null(gyro_rl_env_find(NULL));
    int n = 0;
    for (const gyro_rl_env *const *e = gyro_rl_env_all(); *e; e++) {
        ck_assert((*e)->obs_dim > 0 && (*e)->n_actions > 1 && (*e)->max_steps > 0);
        ck_assert((*e)->n_start >= 0 && (*e)->set_start && (*e)->start_help);
        n++;
    }
    ck_assert_int_eq(n, 4);
}
END_TEST

START_TEST(test_root_equation)
{
    ck_assert_double_eq_tol(gyro_rl_root_residual(2.0), 0.0, 1e-15);
    ck_assert_double_eq_tol(gyro_rl_root_residual(0.0), sqrt(7.0 - sqrt(7.0)), 1e-15);
    /* x = 9: sqrt(7 - 4) - 9 */
    ck_assert_double_eq_tol(gyro_rl_root_residual(9.0), sqrt(3.0) - 9.0, 1e-15);
    /* outside the domain: clamped, finite */
    ck_assert(isfinite(gyro_rl_root_residual(-100.0)));
    ck_assert(isfinite(gyro_rl_root_residual(1e9)));
    ck_assert(isfinite(gyro_rl_root_residual(NAN)));
    /* the derivative at x* is -1 - 1/24 */
    double h = 1e-6;
    double d = (gyro_rl_root_residual(2 + h) - gyro_rl_root_residual(2 - h)) / (2 * h);
    ck_assert_double_eq_tol(d, -1.0 - 1.0 / 24.0, 1e-8);
}
END_TEST

START_TEST(test_root_steps_and_reward)
{
    const gyro_rl_env *e = &gyro_rl_env_root;
    gyro_rl_root_state s;
    e->reset_eval(&s, 3, 4); /* x0 = 3.5 */
    ck_assert_double_eq_tol(s.x, 3.5, 1e-15);
    float obs[4];
    e->observe(&s, obs);
    double g0 = gyro_rl_root_residual(3.5);
    ck_assert_float_eq_tol(obs[0], 3.5f / 4.0f, 1e-7f);
    ck_assert_float_eq_tol(obs[1], (float)g0, 1e-7f);
    ck_assert_float_eq_tol(obs[2], (float)(log10(fabs(g0)) / 15.0), 1e-6f);
    ck_assert_float_eq(obs[3], 0.0f);
    /* one step with action 5 (alpha = 1): x += g(x) */
    e->step(&s, 5);
    ck_assert_double_eq_tol(s.x, 3.5 + g0, 1e-15);
    ck_assert_int_eq(s.t, 1);
    /* the best relaxation (0.95) reaches 1e-9 in the horizon; 0.25 does not reach 1e-2 */
    int best = 4, worst = 0;
    ck_assert_double_eq(gyro_rl_root_alpha(best), 0.95);
    e->reset_eval(&s, 3, 4);
    while (!e->done(&s)) e->step(&s, best);
    ck_assert_double_lt(e->metric(&s), 1e-9);
    ck_assert_double_gt(e->reward(&s), 9.0);
    e->reset_eval(&s, 3, 4);
    while (!e->done(&s)) e->step(&s, worst);
    ck_assert_double_gt(e->metric(&s), 1e-2);
    ck_assert_int_eq(s.t, GYRO_RL_ROOT_HORIZON);
    e->step(&s, 1); /* no-op once done */
    ck_assert_int_eq(s.t, GYRO_RL_ROOT_HORIZON);
    /* random starts stay in [0, 4); out-of-range actions are clamped */
    gyro_rng r;
    gyro_rng_seed(&r, 3);
    for (int i = 0; i < 100; i++) {
        e->reset(&s, &r);
        ck_assert(s.x >= 0.0 && s.x < 4.0);
    }
    ck_assert_double_eq(gyro_rl_root_alpha(-3), gyro_rl_root_alpha(0));
    double v = 1.25;
    ck_assert_int_eq(e->set_start(&s, &v), 0);
    ck_assert_double_eq(s.x, 1.25);
    ck_assert_int_eq(s.t, 0);
    v = 50.0;
    ck_assert_int_eq(e->set_start(&s, &v), -1);
    v = NAN;
    ck_assert_int_eq(e->set_start(&s, &v), -1);
    ck_assert_double_eq(gyro_rl_root_alpha(99), gyro_rl_root_alpha(GYRO_RL_ROOT_NACTIONS - 1));
}
END_TEST

static void f_lin(double *dx, const double *x, const void *ctx)
{
    (void)ctx;
    dx[0] = x[1];
    dx[1] = -x[0];
}

START_TEST(test_rk4_hand)
{
    /* harmonic oscillator from (1, 0), h = 0.5, by hand:
     * k1 = (0, -1); k2 = f(1, -0.25) = (-0.25, -1); k3 = f(0.9375, -0.25) = (-0.25, -0.9375);
     * k4 = f(0.875, -0.46875) = (-0.46875, -0.875);
     * x = 1 + 0.5/6 (0 - 0.5 - 0.5 - 0.46875) = 0.877604166…;
     * v = 0 + 0.5/6 (-1 - 2 - 1.875 - 0.875) = -0.479166… */
    double x[2] = {1.0, 0.0};
    gyro_rl_rk4_step(x, 2, 0.5, f_lin, NULL);
    ck_assert_double_eq_tol(x[0], 1.0 + 0.5 / 6.0 * (-1.46875), 1e-15);
    ck_assert_double_eq_tol(x[1], 0.5 / 6.0 * (-5.75), 1e-15);
    /* and it converges to (cos t, -sin t) */
    double y[2] = {1.0, 0.0};
    for (int i = 0; i < 100; i++) gyro_rl_rk4_step(y, 2, 0.01, f_lin, NULL);
    ck_assert_double_eq_tol(y[0], cos(1.0), 1e-10);
    ck_assert_double_eq_tol(y[1], -sin(1.0), 1e-10);
}
END_TEST

START_TEST(test_vdp_dynamics)
{
    const gyro_rl_env *e = &gyro_rl_env_vdp;
    gyro_rl_vdp_state s;
    e->reset_eval(&s, 0, 1);
    ck_assert_double_eq(s.x[0], 1.0);
    ck_assert_double_eq(s.x[1], 0.0);
    /* controls: 25 levels from -0.25 to 0.95, level 5 is u = 0 */
    ck_assert_double_eq_tol(gyro_rl_vdp_control(0), -0.25, 1e-15);
    ck_assert_double_eq_tol(gyro_rl_vdp_control(24), 0.95, 1e-12);
    ck_assert_double_eq_tol(gyro_rl_vdp_control(5), 0.0, 1e-15);
    ck_assert_double_eq_tol(gyro_rl_vdp_control(99), 0.95, 1e-12);
    /* hand values at t = 0 with u = 0: x1'' = -1, so over the first 0.1 s
     * x1 ≈ 1 - t²/2, x2 ≈ -t - t²·(…); cost ≈ ½∫(1 - t²)dt ≈ 0.05 - 0.000166 */
    gyro_rl_vdp_advance(&s, 0.0);
    ck_assert_double_eq_tol(s.x[0], 1.0 - 0.005, 2e-4);
    ck_assert_double_eq_tol(s.x[1], -0.1, 1e-2);
    ck_assert_double_eq_tol(s.x[2], 0.05, 2e-4);
    /* the whole u = 0 trajectory against an independent fine integration (48 × 4 RK4 steps,
     * computed outside gyro): x(2.4) = (-1.7173, -0.6718), J = 2.9970 */
    e->reset_eval(&s, 0, 1);
    while (!e->done(&s)) e->step(&s, 5);
    ck_assert_int_eq(s.k, GYRO_RL_VDP_STEPS);
    ck_assert_double_eq_tol(s.x[0], -1.7173, 2e-4);
    ck_assert_double_eq_tol(s.x[1], -0.6718, 2e-4);
    ck_assert_double_eq_tol(e->metric(&s), 2.9970, 2e-4);
    double term = s.x[0] * s.x[0] + s.x[1] * s.x[1];
    ck_assert_double_eq_tol(e->reward(&s), -(s.x[2] + GYRO_RL_VDP_TERMINAL_W * term), 1e-12);
    /* control bounds are enforced */
    gyro_rl_vdp_state a, b;
    e->reset_eval(&a, 0, 1);
    e->reset_eval(&b, 0, 1);
    gyro_rl_vdp_advance(&a, 5.0);
    gyro_rl_vdp_advance(&b, 0.999999);
    ck_assert_double_eq(a.x[1], b.x[1]);
}
END_TEST

/* The seed's reference optimum J = 0.1478 is a lower bound for everything the environment can
 * reach: random control sequences and every constant control cost more. */
START_TEST(test_vdp_reference_sanity)
{
    const gyro_rl_env *e = &gyro_rl_env_vdp;
    gyro_rl_vdp_state s;
    double best = 1e300;
    for (int a = 0; a < e->n_actions; a++) {
        e->reset_eval(&s, 0, 1);
        while (!e->done(&s)) e->step(&s, a);
        if (e->metric(&s) < best) best = e->metric(&s);
    }
    gyro_rng r;
    gyro_rng_seed(&r, 11);
    for (int i = 0; i < 200; i++) {
        e->reset(&s, &r);
        while (!e->done(&s)) e->step(&s, (int)gyro_rng_below(&r, e->n_actions));
        ck_assert(isfinite(e->metric(&s)));
        if (e->metric(&s) < best) best = e->metric(&s);
    }
    ck_assert_double_gt(best, GYRO_RL_VDP_J_REF);
    ck_assert_double_lt(best, 3.0);
}
END_TEST

START_TEST(test_unicycle)
{
    const gyro_rl_env *e = &gyro_rl_env_unicycle;
    gyro_rl_unicycle_state s;
    /* u = 0 (action 4) is optimal: nothing moves, J = 0 */
    double ut, uv;
    gyro_rl_unicycle_controls(4, &ut, &uv);
    ck_assert_double_eq(ut, 0.0);
    ck_assert_double_eq(uv, 0.0);
    e->reset_eval(&s, 5, 16);
    double x0 = s.x[0], y0 = s.x[1], th0 = s.x[2];
    while (!e->done(&s)) e->step(&s, 4);
    ck_assert_double_eq(s.x[0], x0);
    ck_assert_double_eq(s.x[1], y0);
    ck_assert_double_eq(s.x[2], th0);
    ck_assert_double_eq(e->metric(&s), 0.0);
    ck_assert_double_eq(e->reward(&s), 0.0);
    /* θ = 0, u_v = +1 (action 5): v = t, y = y0 + t²/2, x constant, J = 0.1 · 2.5
     * (RK4 is exact on these polynomials) */
    s.x[0] = -1.0; s.x[1] = 0.5; s.x[2] = 0.0; s.x[3] = 0.0; s.x[4] = 0.0; s.k = 0;
    while (!e->done(&s)) e->step(&s, 5);
    ck_assert_double_eq_tol(s.x[3], 2.5, 1e-12);
    ck_assert_double_eq_tol(s.x[1], 0.5 + 2.5 * 2.5 / 2.0, 1e-12);
    ck_assert_double_eq_tol(s.x[0], -1.0, 1e-12);
    ck_assert_double_eq_tol(e->metric(&s), 0.25, 1e-12);
    /* u_θ = +1, u_v = +1 (action 8): θ̇ = v = t → θ = t²/2; J = 0.3 · 2.5 */
    s.x[0] = 0; s.x[1] = 0; s.x[2] = 0; s.x[3] = 0; s.x[4] = 0; s.k = 0;
    while (!e->done(&s)) e->step(&s, 8);
    ck_assert_double_eq_tol(s.x[2], 2.5 * 2.5 / 2.0, 1e-9);
    ck_assert_double_eq_tol(e->metric(&s), 0.75, 1e-12);
    /* random starts lie in the seed's box */
    gyro_rng r;
    gyro_rng_seed(&r, 5);
    for (int i = 0; i < 200; i++) {
        e->reset(&s, &r);
        ck_assert(s.x[0] >= -3.0 && s.x[0] <= 0.0);
        ck_assert(s.x[1] >= -3.0 && s.x[1] <= 3.0);
        ck_assert(s.x[2] >= -M_PI && s.x[2] <= M_PI);
        ck_assert_double_eq(s.x[3], 0.0);
        e->reset_eval(&s, i, 200);
        ck_assert(s.x[0] >= -3.0 && s.x[0] <= 0.0);
        ck_assert(s.x[1] >= -3.0 && s.x[1] <= 3.0);
    }
    double st3[3] = {-1.0, 2.0, 0.5}, bad3[3] = {1.0, 0.0, 0.0};
    ck_assert_int_eq(e->set_start(&s, st3), 0);
    ck_assert_double_eq(s.x[1], 2.0);
    ck_assert_double_eq(s.x[3], 0.0);
    ck_assert_int_eq(e->set_start(&s, bad3), -1);
    double v2[2] = {0.5, -0.5};
    gyro_rl_vdp_state vs;
    ck_assert_int_eq(gyro_rl_env_vdp.set_start(&vs, v2), 0);
    ck_assert_double_eq(vs.x[1], -0.5);
    v2[0] = INFINITY;
    ck_assert_int_eq(gyro_rl_env_vdp.set_start(&vs, v2), -1);
    char buf[160];
    ck_assert_int_gt(e->format_action(8, buf, sizeof buf), 0);
    ck_assert_ptr_nonnull(strstr(buf, "u_theta = +1"));
    ck_assert_int_gt(e->format_state(&s, buf, sizeof buf), 0);
}
END_TEST

Suite *rl_env_suite(void)
{
    Suite *s = suite_create("rl_env");
    TCase *tc = tcase_create("env");
    tcase_add_test(tc, test_registry);
    tcase_add_test(tc, test_root_equation);
    tcase_add_test(tc, test_root_steps_and_reward);
    tcase_add_test(tc, test_rk4_hand);
    tcase_add_test(tc, test_vdp_dynamics);
    tcase_add_test(tc, test_vdp_reference_sanity);
    tcase_add_test(tc, test_unicycle);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(rl_env_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

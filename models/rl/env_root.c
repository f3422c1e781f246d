/* env_root.c — the scalar root-finding environment (see env_root.h). */
#include "models/rl/env_root.h"

#include <math.h>
#include <stdio.h>

#include "models/rl/env.h"

static const double alphas[GYRO_RL_ROOT_NACTIONS] = {0.25, 0.5, 0.75, 0.9, 0.95,
                                                     1.0,  1.1, 1.25, 1.5};

static double clamp_domain(double x)
{
    const double lo = -GYRO_RL_ROOT_A, hi = GYRO_RL_ROOT_A * GYRO_RL_ROOT_A - GYRO_RL_ROOT_A;
    if (!(x >= lo)) return lo; /* also catches NaN */
    return x > hi ? hi : x;
}

double gyro_rl_root_residual(double x)
{
    x = clamp_domain(x);
    double inner = GYRO_RL_ROOT_A - sqrt(GYRO_RL_ROOT_A + x);
    if (inner < 0.0) inner = 0.0;
    return sqrt(inner) - x;
}

double gyro_rl_root_alpha(int a)
{
    if (a < 0) a = 0;
    if (a >= GYRO_RL_ROOT_NACTIONS) a = GYRO_RL_ROOT_NACTIONS - 1;
    return alphas[a];
}

static void root_reset(void *st, gyro_rng *rng)
{
    gyro_rl_root_state *s = st;
    s->x = 4.0 * gyro_rng_uniform(rng);
    s->t = 0;
}

static void root_reset_eval(void *st, int i, int n)
{
    gyro_rl_root_state *s = st;
    s->x = 4.0 * (i + 0.5) / n;
    s->t = 0;
}

static int root_set_start(void *st, const double *v)
{
    gyro_rl_root_state *s = st;
    if (!(v[0] >= -GYRO_RL_ROOT_A && v[0] <= GYRO_RL_ROOT_A * GYRO_RL_ROOT_A - GYRO_RL_ROOT_A)) return -1;
    s->x = v[0];
    s->t = 0;
    return 0;
}

static void root_observe(const void *st, float *obs)
{
    const gyro_rl_root_state *s = st;
    double g = gyro_rl_root_residual(s->x);
    double ag = fabs(g) < 1e-15 ? 1e-15 : fabs(g);
    obs[0] = (float)(s->x / 4.0);
    obs[1] = (float)g;
    obs[2] = (float)(log10(ag) / 15.0);
    obs[3] = (float)s->t / GYRO_RL_ROOT_HORIZON;
}

static void root_step(void *st, int a)
{
    gyro_rl_root_state *s = st;
    if (s->t >= GYRO_RL_ROOT_HORIZON) return;
    s->x = clamp_domain(s->x + gyro_rl_root_alpha(a) * gyro_rl_root_residual(s->x));
    s->t++;
}

static int root_done(const void *st)
{
    return ((const gyro_rl_root_state *)st)->t >= GYRO_RL_ROOT_HORIZON;
}

static double root_reward(const void *st)
{
    double g = fabs(gyro_rl_root_residual(((const gyro_rl_root_state *)st)->x));
    return -log10(g < 1e-15 ? 1e-15 : g);
}

static double root_metric(const void *st)
{
    return fabs(((const gyro_rl_root_state *)st)->x - GYRO_RL_ROOT_XSTAR);
}

static int root_format_action(int a, char *buf, size_t n)
{
    return snprintf(buf, n, "x += %.2f * g(x)", gyro_rl_root_alpha(a));
}

static int root_format_state(const void *st, char *buf, size_t n)
{
    const gyro_rl_root_state *s = st;
    return snprintf(buf, n, "x = %.12f  g(x) = %.3e  |x - 2| = %.3e", s->x,
                    gyro_rl_root_residual(s->x), fabs(s->x - GYRO_RL_ROOT_XSTAR));
}

const gyro_rl_env gyro_rl_env_root = {
    .name = "root",
    .description = "root finding: sqrt(7 - sqrt(7 + x)) = x, x* = 2 (seed Table 1)",
    .metric_name = "MAE",
    .obs_dim = 4, .n_actions = GYRO_RL_ROOT_NACTIONS, .max_steps = GYRO_RL_ROOT_HORIZON,
    .state_size = sizeof(gyro_rl_root_state),
    .n_start = 1, .start_help = "x0 in [-7, 42]",
    GYRO_RL_ENV_FUNCTIONS(root),
};

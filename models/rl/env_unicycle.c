/* env_unicycle.c — the unicycle energy-minimisation environment (see env_unicycle.h). */
#include "models/rl/env_unicycle.h"

#include <math.h>
#include <stdio.h>

#include "models/rl/env.h"
#include "models/rl/ode.h"

void gyro_rl_unicycle_controls(int a, double *u_theta, double *u_v)
{
    if (a < 0) a = 0;
    if (a > 8) a = 8;
    *u_theta = (double)(a / 3 - 1);
    *u_v = (double)(a % 3 - 1);
}

static void uni_f(double *dx, const double *x, const void *ctx)
{
    const double *u = ctx;
    dx[0] = x[3] * sin(x[2]);
    dx[1] = x[3] * cos(x[2]);
    dx[2] = u[0] * x[3];
    dx[3] = u[1];
    dx[4] = 0.2 * u[0] * u[0] + 0.1 * u[1] * u[1];
}

void gyro_rl_unicycle_advance(gyro_rl_unicycle_state *s, double u_theta, double u_v)
{
    double u[2] = {u_theta, u_v};
    const double h = GYRO_RL_UNI_T / GYRO_RL_UNI_STEPS / GYRO_RL_UNI_SUBSTEPS;
    for (int i = 0; i < GYRO_RL_UNI_SUBSTEPS; i++) gyro_rl_rk4_step(s->x, 5, h, uni_f, u);
    s->k++;
}

static void uni_set(gyro_rl_unicycle_state *s, double x, double y, double th)
{
    s->x[0] = x;
    s->x[1] = y;
    s->x[2] = th;
    s->x[3] = 0.0;
    s->x[4] = 0.0;
    s->k = 0;
}

static void uni_reset(void *st, gyro_rng *rng)
{
    double x = -3.0 * gyro_rng_uniform(rng);
    double y = -3.0 + 6.0 * gyro_rng_uniform(rng);
    double th = M_PI * (2.0 * gyro_rng_uniform(rng) - 1.0);
    uni_set(st, x, y, th);
}

static void uni_reset_eval(void *st, int i, int n)
{
    /* a deterministic low-discrepancy spread over the start box (golden-ratio sequences) */
    double f1 = fmod((i + 0.5) / n, 1.0);
    double f2 = fmod(0.5 + i * 0.6180339887498949, 1.0);
    double f3 = fmod(0.25 + i * 0.7548776662466927, 1.0);
    uni_set(st, -3.0 * f1, -3.0 + 6.0 * f2, M_PI * (2.0 * f3 - 1.0));
}

static int uni_set_start(void *st, const double *v)
{
    if (!(v[0] >= -3.0 && v[0] <= 0.0 && v[1] >= -3.0 && v[1] <= 3.0 && v[2] >= -M_PI &&
          v[2] <= M_PI))
        return -1;
    uni_set(st, v[0], v[1], v[2]);
    return 0;
}

static void uni_observe(const void *st, float *obs)
{
    const gyro_rl_unicycle_state *s = st;
    obs[0] = (float)(s->x[0] / 3.0);
    obs[1] = (float)(s->x[1] / 3.0);
    obs[2] = (float)(s->x[2] / M_PI);
    obs[3] = (float)s->x[3];
    obs[4] = (float)s->k / GYRO_RL_UNI_STEPS;
}

static void uni_step(void *st, int a)
{
    gyro_rl_unicycle_state *s = st;
    if (s->k >= GYRO_RL_UNI_STEPS) return;
    double ut, uv;
    gyro_rl_unicycle_controls(a, &ut, &uv);
    gyro_rl_unicycle_advance(s, ut, uv);
}

static int uni_done(const void *st)
{
    return ((const gyro_rl_unicycle_state *)st)->k >= GYRO_RL_UNI_STEPS;
}

static double uni_reward(const void *st)
{
    return -((const gyro_rl_unicycle_state *)st)->x[4];
}

static double uni_metric(const void *st)
{
    return ((const gyro_rl_unicycle_state *)st)->x[4];
}

static int uni_format_action(int a, char *buf, size_t n)
{
    double ut, uv;
    gyro_rl_unicycle_controls(a, &ut, &uv);
    return snprintf(buf, n, "u_theta = %+.0f  u_v = %+.0f", ut, uv);
}

static int uni_format_state(const void *st, char *buf, size_t n)
{
    const gyro_rl_unicycle_state *s = st;
    return snprintf(buf, n, "t = %.2f  x = %+.4f  y = %+.4f  theta = %+.4f  v = %+.4f  J = %.6f",
                    s->k * (GYRO_RL_UNI_T / GYRO_RL_UNI_STEPS), s->x[0], s->x[1], s->x[2],
                    s->x[3], s->x[4]);
}

const gyro_rl_env gyro_rl_env_unicycle = {
    .name = "unicycle",
    .description = "unicycle energy minimisation, J* = 0 (seed Table 4)",
    .metric_name = "J",
    .obs_dim = 5, .n_actions = 9, .max_steps = GYRO_RL_UNI_STEPS,
    .state_size = sizeof(gyro_rl_unicycle_state),
    .n_start = 3, .start_help = "x,y,theta in [-3,0] x [-3,3] x [-pi,pi] (v = 0)",
    GYRO_RL_ENV_FUNCTIONS(uni),
};

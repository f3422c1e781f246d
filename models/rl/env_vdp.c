/* env_vdp.c — the Van der Pol optimal-control environment (see env_vdp.h). */
#include "models/rl/env_vdp.h"

#include <math.h>
#include <stdio.h>

#include "models/rl/env.h"
#include "models/rl/ode.h"

double gyro_rl_vdp_control(int a)
{
    if (a < 0) a = 0;
    if (a >= GYRO_RL_VDP_NLEVELS) a = GYRO_RL_VDP_NLEVELS - 1;
    return -0.25 + 0.05 * a;
}

static void vdp_f(double *dx, const double *x, const void *ctx)
{
    double u = *(const double *)ctx;
    dx[0] = x[1];
    dx[1] = (1.0 - x[0] * x[0]) * x[1] - x[0] + u;
    dx[2] = 0.5 * (x[0] * x[0] + x[1] * x[1] + u * u * u * u + u * u);
}

void gyro_rl_vdp_advance(gyro_rl_vdp_state *s, double u)
{
    if (!(u >= -0.25)) u = -0.25;
    if (u > 0.999999) u = 0.999999;
    const double h = GYRO_RL_VDP_T / GYRO_RL_VDP_STEPS / GYRO_RL_VDP_SUBSTEPS;
    for (int i = 0; i < GYRO_RL_VDP_SUBSTEPS; i++) gyro_rl_rk4_step(s->x, 3, h, vdp_f, &u);
    s->k++;
}

static void vdp_reset(void *st, gyro_rng *rng)
{
    (void)rng;
    gyro_rl_vdp_state *s = st;
    s->x[0] = 1.0;
    s->x[1] = 0.0;
    s->x[2] = 0.0;
    s->k = 0;
}

static void vdp_reset_eval(void *st, int i, int n)
{
    (void)i;
    (void)n;
    vdp_reset(st, NULL);
}

static int vdp_set_start(void *st, const double *v)
{
    if (!(fabs(v[0]) <= 10.0 && fabs(v[1]) <= 10.0)) return -1;
    gyro_rl_vdp_state *s = st;
    s->x[0] = v[0];
    s->x[1] = v[1];
    s->x[2] = 0.0;
    s->k = 0;
    return 0;
}

static void vdp_observe(const void *st, float *obs)
{
    const gyro_rl_vdp_state *s = st;
    obs[0] = (float)s->x[0];
    obs[1] = (float)s->x[1];
    obs[2] = (float)s->k / GYRO_RL_VDP_STEPS;
}

static void vdp_step(void *st, int a)
{
    gyro_rl_vdp_state *s = st;
    if (s->k >= GYRO_RL_VDP_STEPS) return;
    gyro_rl_vdp_advance(s, gyro_rl_vdp_control(a));
}

static int vdp_done(const void *st)
{
    return ((const gyro_rl_vdp_state *)st)->k >= GYRO_RL_VDP_STEPS;
}

static double vdp_reward(const void *st)
{
    const gyro_rl_vdp_state *s = st;
    double term = s->x[0] * s->x[0] + s->x[1] * s->x[1];
    double r = -(s->x[2] + GYRO_RL_VDP_TERMINAL_W * term);
    return isfinite(r) ? r : -1e6;
}

static double vdp_metric(const void *st)
{
    return ((const gyro_rl_vdp_state *)st)->x[2];
}

static int vdp_format_action(int a, char *buf, size_t n)
{
    return snprintf(buf, n, "u = %+.2f", gyro_rl_vdp_control(a));
}

static int vdp_format_state(const void *st, char *buf, size_t n)
{
    const gyro_rl_vdp_state *s = st;
    return snprintf(buf, n, "t = %.2f  x1 = %+.6f  x2 = %+.6f  J = %.6f",
                    s->k * (GYRO_RL_VDP_T / GYRO_RL_VDP_STEPS), s->x[0], s->x[1], s->x[2]);
}

const gyro_rl_env gyro_rl_env_vdp = {
    .name = "vdp",
    .description = "Van der Pol optimal control, horizon 2.4, terminal penalty (seed Table 3)",
    .metric_name = "J",
    .obs_dim = 3, .n_actions = GYRO_RL_VDP_NLEVELS, .max_steps = GYRO_RL_VDP_STEPS,
    .state_size = sizeof(gyro_rl_vdp_state),
    .n_start = 2, .start_help = "x1,x2 in [-10, 10] (the problem's start is 1,0)",
    GYRO_RL_ENV_FUNCTIONS(vdp),
};

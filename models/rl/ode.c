/* ode.c — RK4 (see ode.h). */
#include "models/rl/ode.h"

void gyro_rl_rk4_step(double *x, int n, double h, gyro_rl_ode_fn f, const void *ctx)
{
    double k1[GYRO_RL_ODE_MAX_DIM], k2[GYRO_RL_ODE_MAX_DIM], k3[GYRO_RL_ODE_MAX_DIM],
        k4[GYRO_RL_ODE_MAX_DIM], y[GYRO_RL_ODE_MAX_DIM];
    f(k1, x, ctx);
    for (int i = 0; i < n; i++) y[i] = x[i] + 0.5 * h * k1[i];
    f(k2, y, ctx);
    for (int i = 0; i < n; i++) y[i] = x[i] + 0.5 * h * k2[i];
    f(k3, y, ctx);
    for (int i = 0; i < n; i++) y[i] = x[i] + h * k3[i];
    f(k4, y, ctx);
    for (int i = 0; i < n; i++) x[i] += h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
}

/* ode.h — the classical fourth-order Runge–Kutta step used by the control environments.
 *
 *   k1 = f(x), k2 = f(x + h/2 k1), k3 = f(x + h/2 k2), k4 = f(x + h k3),
 *   x ← x + h/6 (k1 + 2k2 + 2k3 + k4).
 * The control is held constant over the step (zero-order hold), so f takes it through ctx.
 */
#ifndef GYRO_RL_ODE_H
#define GYRO_RL_ODE_H

#define GYRO_RL_ODE_MAX_DIM 8

/* dx = f(x; ctx), n ≤ GYRO_RL_ODE_MAX_DIM. */
typedef void (*gyro_rl_ode_fn)(double *dx, const double *x, const void *ctx);

/* One RK4 step of size h on x (n values) in place. */
void gyro_rl_rk4_step(double *x, int n, double h, gyro_rl_ode_fn f, const void *ctx);

#endif

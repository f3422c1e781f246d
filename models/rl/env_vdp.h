/* env_vdp.h — Van der Pol optimal control (seed rl-hyperbolic-transformer-grpo, Table 3):
 *
 *   min J = ½ ∫₀^2.4 (x₁² + x₂² + u⁴ + u²) dt
 *   ẋ₁ = x₂,  ẋ₂ = (1 − x₁²) x₂ − x₁ + u,  −0.25 ≤ u < 1,  x(0) = (1, 0),  x(2.4) = (0, 0).
 *
 * Discretisation: 24 control intervals of 0.1 (zero-order hold), each integrated with 4 RK4
 * steps; the running cost is integrated as a third state so J is exact to RK4 accuracy. The
 * control takes GYRO_RL_VDP_NLEVELS levels −0.25, −0.20, …, 0.95 in steps of 0.05 (all inside
 * [−0.25, 1); u = 0 is level 5).
 * The terminal condition x(2.4) = 0 is a penalty: reward = −(J + GYRO_RL_VDP_TERMINAL_W |x(2.4)|²).
 * The metric is J itself; gyro reports |x(2.4)| beside it.
 * Observation: (x₁, x₂, t/2.4). All episodes start at (1, 0) (the problem is deterministic; the
 * group of G rollouts differs by the sampled actions).
 *
 * Note on the seed's reference J = 0.1478: with x(0) = (1, 0) the state cannot leave x₁ ≈ 1 fast
 * enough for ½∫x₁² to stay that small (ẍ₁ ≥ −1.25 − … at the start); the best open-loop controls
 * gyro finds cost far more (README, "Reasoning with RL"). The figure is kept as the seed's claim.
 */
#ifndef GYRO_RL_ENV_VDP_H
#define GYRO_RL_ENV_VDP_H

#define GYRO_RL_VDP_T 2.4
#define GYRO_RL_VDP_STEPS 24
#define GYRO_RL_VDP_SUBSTEPS 4
#define GYRO_RL_VDP_NLEVELS 25
#define GYRO_RL_VDP_TERMINAL_W 10.0
#define GYRO_RL_VDP_J_REF 0.1478

typedef struct gyro_rl_vdp_state {
    double x[3]; /* x₁, x₂, accumulated cost J */
    int k;       /* control intervals done */
} gyro_rl_vdp_state;

/* The control of level a (clamped to 0 … NLEVELS−1). */
double gyro_rl_vdp_control(int a);

/* Advance one control interval with control u (any value; the env clamps to the bounds). */
void gyro_rl_vdp_advance(gyro_rl_vdp_state *s, double u);

#endif

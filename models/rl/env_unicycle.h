/* env_unicycle.h — unicycle energy minimisation (seed rl-hyperbolic-transformer-grpo, Table 4):
 *
 *   min J = ∫₀^2.5 uᵀ R u dt,  R = diag(0.2, 0.1),  u = (u_θ, u_v)
 *   ẋ = v sin θ,  ẏ = v cos θ,  θ̇ = u_θ v,  v̇ = u_v
 *   x₀ ∈ [−3, 0], y₀ ∈ [−3, 3], θ₀ ∈ [−π, π], v₀ = 0.
 *
 * As the seed states, u = 0 is optimal (it keeps v = 0) and J* = 0; the task checks that the
 * policy learns to spend no energy. Discretisation: 25 intervals of 0.1, 4 RK4 steps each, the
 * cost integrated as a fifth state. Controls: u_θ, u_v ∈ {−1, 0, 1}, action a = 3·i_θ + i_v.
 * Observation: (x/3, y/3, θ/π, v, t/2.5). Reward −J; metric J.
 */
#ifndef GYRO_RL_ENV_UNICYCLE_H
#define GYRO_RL_ENV_UNICYCLE_H

#define GYRO_RL_UNI_T 2.5
#define GYRO_RL_UNI_STEPS 25
#define GYRO_RL_UNI_SUBSTEPS 4

typedef struct gyro_rl_unicycle_state {
    double x[5]; /* x, y, θ, v, J */
    int k;       /* control intervals done */
} gyro_rl_unicycle_state;

/* Controls of action a (clamped to 0 … 8). */
void gyro_rl_unicycle_controls(int a, double *u_theta, double *u_v);

/* Advance one control interval with controls (u_θ, u_v). */
void gyro_rl_unicycle_advance(gyro_rl_unicycle_state *s, double u_theta, double u_v);

#endif

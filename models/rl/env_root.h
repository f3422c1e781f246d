/* env_root.h — scalar root finding (seed rl-hyperbolic-transformer-grpo, Table 1):
 * solve √(a − √(a + x)) = x with a = 7; the unique solution is x* = 2.
 *
 * Why x* = 2 is the only root: squaring twice gives x⁴ − 14x² − x + 42 = (x² + x − 6)(x² − x − 7),
 * roots 2, −3, (1 ± √29)/2; the left side is ≥ 0 so x ≥ 0, and √(7+x) = 7 − x² needs x² ≤ 7,
 * which leaves x = 2 alone.
 *
 * The policy refines an estimate step by step: with the residual g(x) = √(a − √(a+x)) − x, the
 * action k applies the relaxed fixed-point step x ← x + α_k g(x), α_k from
 * GYRO_RL_ROOT_ALPHAS. Near x*, g'(x*) = −1 − 1/24, so the error contracts by |1 − α(25/24)|:
 * the policy must learn which relaxation converges fastest from what it observes.
 * Observation: (x/4, g(x), log10(max(|g|, 1e-15))/15, t/T). Start x₀ ~ U[0, 4].
 * Horizon T = 6 actions. Reward −log10(max(|g(x_T)|, 1e-15)) uses only the equation; the metric
 * is MAE = |x_T − x*|. x is kept inside the equation's domain [−a, a² − a].
 */
#ifndef GYRO_RL_ENV_ROOT_H
#define GYRO_RL_ENV_ROOT_H

#define GYRO_RL_ROOT_A 7.0
#define GYRO_RL_ROOT_XSTAR 2.0
#define GYRO_RL_ROOT_HORIZON 6
#define GYRO_RL_ROOT_NACTIONS 9

typedef struct gyro_rl_root_state {
    double x; /* current estimate */
    int t;    /* actions taken */
} gyro_rl_root_state;

/* The residual g(x) = √(a − √(a + x)) − x, x clamped to the domain [−a, a² − a]. */
double gyro_rl_root_residual(double x);

/* The relaxation factor of action a (0 ≤ a < GYRO_RL_ROOT_NACTIONS). */
double gyro_rl_root_alpha(int a);

#endif

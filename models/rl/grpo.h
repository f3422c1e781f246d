/* grpo.h — Group Relative Policy Optimization: advantages, the clipped surrogate with the KL
 * penalty, and its gradient with respect to the policy's log-probabilities.
 *
 * Xu, Lee & Xiong, "Reinforcement learning in hyperbolic space for multi-step reasoning",
 * eq. 41–45 (after DeepSeekMath's GRPO). The printed eq. 44 is garbled; the objective used here is
 * the intended PPO-style one (see ../shared/seeds/README.md):
 *
 *   A_i     = (r_i − mean_G r) / std_G r                                   (41a, population std)
 *   ρ_i     = π_θ(a_i|s) / π_old(a_i|s) = exp(logp − logp_old)              (41b)
 *   ρ2_i    = π_ref(a_i|s) / π_θ(a_i|s) = exp(logp_ref − logp)              (42)
 *   KL_i    = ρ2_i − log ρ2_i − 1                         (43, the unbiased "k3" estimator, ≥ 0)
 *   J_i     = min(ρ_i A_i, clip(ρ_i, 1−ε, 1+ε) A_i) − β KL_i                (44, intended form)
 *   J       = Σ_k w_k J_k,   loss = −J                                        (45)
 *
 * One "sample" k is one action taken at one step; a multi-step output (a trajectory) contributes
 * one sample per step, all carrying the trajectory's advantage. The caller chooses the weights
 * w_k; the usual choice (average over the steps of a trajectory, over the group, over the batch)
 * is w_k = 1 / (N · G · len(trajectory)), which gyro_grpo_weights computes.
 *
 * Gradient (per sample, d J_k / d logp_k):
 *   surrogate: ρA when the unclipped term is the minimum, 0 when the clipped constant is
 *              (ρ outside [1−ε, 1+ε] on the side where clipping lowers the objective);
 *   KL:        −β (1 − ρ2).
 * Everything is double: these are short vectors and the ratios are exponentials of differences.
 */
#ifndef GYRO_RL_GRPO_H
#define GYRO_RL_GRPO_H

#include "models/core/status.h"

typedef struct gyro_grpo_config {
    double clip_eps;  /* ε of the clipped ratio, e.g. 0.2 */
    double kl_beta;   /* β of the KL penalty, e.g. 0.04; 0 disables it */
    double adv_eps;   /* std floor of the advantage normalisation, e.g. 1e-8 */
} gyro_grpo_config;

typedef struct gyro_grpo_stats {
    double objective;     /* J = Σ w J_k (to be maximised) */
    double surrogate;     /* Σ w · clipped surrogate */
    double kl;            /* Σ w · KL_k (weighted mean when Σ w = 1) */
    double clip_fraction; /* fraction of samples whose gradient was cut by the clip */
    double ratio_mean;    /* plain mean of ρ */
} gyro_grpo_stats;

/* Default configuration: ε = 0.2, β = 0.04, adv_eps = 1e-8. */
gyro_grpo_config gyro_grpo_config_default(void);

/* Group-relative advantages (eq. 41a). rewards and adv are (groups, group_size), row-major; each
 * row is normalised by its own mean and population standard deviation (floored at adv_eps, so a
 * group whose rewards are all equal gets zero advantages). adv may alias rewards.
 * Errors: GYRO_ERR_USAGE for group_size < 1, groups < 0 or NULL buffers; GYRO_ERR_NAN when a
 * reward is not finite (adv is left unspecified). */
gyro_status gyro_grpo_advantages(double *adv, const double *rewards, int groups, int group_size,
                                 double adv_eps);

/* Per-sample weights w_k = 1 / (n_traj · len_k) for samples laid out trajectory by trajectory:
 * traj_len[t] samples for trajectory t (t < n_traj). w has Σ traj_len entries; trajectories of
 * length 0 contribute nothing. Returns the number of samples written. */
int gyro_grpo_weights(double *w, const int *traj_len, int n_traj);

/* The GRPO objective over n samples and its gradient. Inputs are per sample: logp (current
 * policy), logp_old (the policy that sampled), logp_ref (frozen reference; ignored when
 * cfg->kl_beta == 0, may then be NULL), adv, and w. dlogp (may be NULL) ACCUMULATES
 * d(loss)/d(logp) = −w_k dJ_k/dlogp_k, i.e. the gradient of the loss to be minimised.
 * stats may be NULL. Returns the loss −J.
 * Non-finite inputs propagate into the result; the caller checks it (isfinite). */
double gyro_grpo_loss(double *dlogp, gyro_grpo_stats *stats, const double *logp,
                      const double *logp_old, const double *logp_ref, const double *adv,
                      const double *w, const gyro_grpo_config *cfg, int n);

#endif

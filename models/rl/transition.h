/* transition.h — learning an environment's transition function with the policy's network
 * (seed rl-hyperbolic-transformer-grpo, "Transition function learning", Fig. 2): a model
 * (s, a) → (ŝ′, r̂), Euclidean or hyperbolic, trained by regression on rollouts and measured by
 * its one-step prediction error on held-out rollouts.
 *
 * Data: episodes from the environment's random starts with uniformly random actions; each step
 * gives the input tokens (observation, a/(|A|−1)) and the target (observation′ − observation,
 * r) where r is the change of the environment's metric over the step (the stage cost of the
 * control problems). Targets are standardised per coordinate with the training set's mean and
 * standard deviation; the network is models/rl/policy.h with obs_dim + 1 input tokens and
 * obs_dim + 1 linear outputs (its logits; the softmax is not used), trained with Adam on the
 * mean squared error plus the MoE balance loss. Errors are reported in standardised units
 * (1.0 = predicting the training mean) and, for the state, in raw units.
 *
 * Saved model (cfg->out): the network as a policy checkpoint (models/rl/policy.h: magic
 * "GYRORLP1", version, configuration, CRC-32 checksum, written atomically) with the environment
 * name "transition:<env>" and the standardisation folded into the linear head
 * (w'_j = sd_j w_j, b'_j = sd_j b_j + mu_j), so its logits are the raw (s' - s, stage cost).
 * models/rl/env_model.h loads it as an environment.
 */
#ifndef GYRO_RL_TRANSITION_H
#define GYRO_RL_TRANSITION_H

/* Prefix of the environment name stored in a saved transition model. */
#define GYRO_RL_TRANSITION_PREFIX "transition:"

#include <signal.h>
#include <stdint.h>

#include "models/core/status.h"
#include "models/rl/env.h"

typedef struct gyro_rl_transition_config {
    const gyro_rl_env *env;
    int hyperbolic;         /* 1: Hyper-T, 0: Vanilla-T */
    int train_episodes;     /* episodes of training data (default 200) */
    int test_episodes;      /* held-out episodes (default 50) */
    int epochs;             /* passes over the training set (default 20) */
    int batch;              /* rows per Adam step (default 256) */
    double lr;              /* Adam learning rate (default 1e-3) */
    uint64_t seed;
    int quiet;              /* no progress line */
    const char *out;        /* NULL, or where to save the trained model (see below) */
    volatile sig_atomic_t *stop; /* NULL, or set non-zero (e.g. by a SIGINT handler) to stop
                                  * after the current Adam step: the model so far is measured and
                                  * saved as at the end, and the fit returns GYRO_ERR_INTERRUPTED */
} gyro_rl_transition_config;

typedef struct gyro_rl_transition_result {
    long train_rows, test_rows;
    double train_mse;       /* standardised MSE on the training set after the last epoch */
    double test_mse;        /* standardised MSE on the held-out steps */
    double test_state_rmse; /* raw RMSE of the predicted next observation on held-out steps */
    double test_copy_rmse;  /* the same for the baseline ŝ′ = s */
    double seconds;
} gyro_rl_transition_result;

/* Defaults listed above; env is NULL, seed 1. */
gyro_rl_transition_config gyro_rl_transition_config_default(void);

/* Collect the data, train the model, measure it, and save it to cfg->out when set.
 * GYRO_ERR_USAGE (bad settings), GYRO_ERR_NOMEM, GYRO_ERR_NAN (training diverged), GYRO_ERR_IO
 * (cannot write cfg->out; the target is left unchanged), GYRO_ERR_INTERRUPTED (cfg->stop was
 * set: *res and cfg->out hold the model as it was when training stopped). */
gyro_status gyro_rl_transition_fit(const gyro_rl_transition_config *cfg,
                                   gyro_rl_transition_result *res);

#endif

/* grpo_train.h — GRPO fine-tuning of a policy on an environment (seed rl-hyperbolic-transformer-
 * grpo, "Hyperbolic GRPO", Algorithm 1), and greedy evaluation.
 *
 * One iteration:
 *   1. Sample N start states; from each, G episodes with actions drawn from the current policy
 *      (π_old), all episodes stepped in lockstep; record observation, action and log π_old.
 *   2. Terminal rewards → group-relative advantages (grpo.h, eq. 41a), one group per start state.
 *   3. log π_ref of the recorded actions under the frozen reference (the initial parameters, or
 *      a given block).
 *   4. `epochs` times: forward the whole batch (in chunks of `minibatch` rows), GRPO loss and its
 *      gradient (eq. 44 intended form, weights 1/(N·G·len)), back through the softmax into the
 *      network, plus the MoE balance loss; one Adam step (models/optim.h) with global-norm clip.
 * Every `eval_every` iterations the policy is evaluated on the environment's fixed evaluation
 * starts (actions sampled with a fixed seed, or greedy); the first gradient-step count at which the mean metric falls below
 * `target` is recorded (the seed's "updates to MAE < 1e-6").
 * Reproducible: every random draw comes from one gyro_rng seeded with `seed`.
 *
 * Several processes (`sync` of R > 1 ranks, e.g. `mpirun -np R gyro rl finetune`): synchronous
 * data parallelism. Every rank starts from the same policy and calls this with the same
 * configuration; rank r samples the r-th of R parts of the N start states (its own random
 * stream; rank 0's is the single process's), with their G episodes each, so the groups of the
 * advantages stay whole on one rank. The loss keeps the weights 1/(N·G·len) of the whole batch,
 * so the sum over ranks of their gradients, all-reduced before every Adam step, is the
 * gradient of the whole batch: every rank makes the same step. The ranks agree on a stop
 * request and on a failure; every rank evaluates (the same policy, the same fixed evaluation
 * starts: the same figures); only rank 0 writes checkpoints, reports and the progress line.
 */
#ifndef GYRO_RL_GRPO_TRAIN_H
#define GYRO_RL_GRPO_TRAIN_H

#include <signal.h>
#include <stdint.h>

#include "models/core/rng.h"
#include "models/core/status.h"
#include "models/core/sync.h"
#include "models/rl/env.h"
#include "models/rl/grpo.h"
#include "models/rl/policy.h"

#define GYRO_RL_MAX_EXPERTS 64

struct gyro_rl_train_result;

/* Called after every evaluation with the figures so far (the library itself prints nothing but
 * the progress line). `load` is the share of tokens routed to each expert during the sampling
 * of the iterations since the previous report (n_experts values). */
typedef void (*gyro_rl_report_fn)(void *ctx, int iteration, const struct gyro_rl_train_result *so_far,
                                  const double *load, int n_experts);

typedef struct gyro_rl_train_config {
    const gyro_rl_env *env;
    const gyro_rl_env *eval_env; /* evaluation environment (same shape as env); NULL: env. Set
                                    when env is a learned model (models/rl/env_model.h) so the
                                    reported metric comes from the true dynamics */
    int iterations;         /* GRPO iterations (batches of rollouts) */
    int n_states;           /* N start states per batch */
    int group;              /* G episodes per start state (≥ 2) */
    int epochs;             /* gradient steps per batch */
    double lr;              /* Adam learning rate (seed: 3e-4) */
    double clip_norm;       /* global gradient-norm clip (0: none) */
    double balance_alpha;   /* α of the MoE expert-level balance loss */
    gyro_grpo_config grpo;  /* ε, β, advantage floor */
    uint64_t seed;
    int eval_every;         /* iterations between greedy evaluations (≥ 1) */
    int eval_episodes;      /* evaluation starts */
    int eval_greedy;        /* 1: evaluate the argmax policy; 0 (default): sample actions from
                               the policy with a fixed evaluation seed, so the figure measures
                               what the stochastic policy does, not its single likeliest path */
    double target;          /* metric threshold for steps_to_target */
    const char *checkpoint; /* path written atomically every checkpoint_every iterations and at
                               the end; NULL: none */
    int checkpoint_every;
    const float *ref_params;/* frozen reference (n_params floats); NULL: the initial parameters */
    int quiet;              /* no progress line */
    gyro_rl_report_fn report; /* NULL: no reports */
    void *report_ctx;
    volatile sig_atomic_t *stop; /* when set to non-zero (e.g. by a SIGINT handler), training
                               stops after the current iteration, writes the checkpoint and
                               returns GYRO_ERR_INTERRUPTED; NULL: never */
    const gyro_sync *sync;  /* several processes (see above); NULL: this one alone */
} gyro_rl_train_config;

typedef struct gyro_rl_train_result {
    long steps;             /* gradient steps done */
    long steps_to_target;   /* first step count whose evaluation met the target; −1: never */
    double final_metric;    /* greedy evaluation after the last iteration */
    double final_reward;
    double best_metric;     /* best greedy evaluation seen */
    double batch_reward;    /* mean sampled reward of the last batch */
    double kl, clip_fraction, loss; /* of the last gradient step */
    double seconds;         /* wall clock of the training loop (sampling, updates, evaluation) */
    double cpu_seconds;     /* processor time of the process over the same loop (clock()) */
    int n_experts;
    long expert_load[GYRO_RL_MAX_EXPERTS]; /* tokens routed to each expert during sampling */
} gyro_rl_train_result;

/* Defaults: 200 iterations, N 16, G 8, 2 epochs, lr 3e-4, clip 1, α 1e-3, ε 0.2, β 0.04,
 * seed 1, eval every 5 iterations on 32 starts, target 1e-6, no checkpoint. env is NULL. */
gyro_rl_train_config gyro_rl_train_config_default(void);

/* Train p in place. p->max_batch is the chunk size of every forward/backward. Errors:
 * GYRO_ERR_USAGE (bad configuration, policy shaped for another environment), GYRO_ERR_NOMEM,
 * GYRO_ERR_NAN (a non-finite loss or gradient: training stops, parameters of the last good step
 * are kept), GYRO_ERR_IO (checkpoint), GYRO_ERR_INTERRUPTED (cfg->stop was raised; the
 * checkpoint, if any, holds the policy of the last finished iteration). res is filled as far
 * as training got. */
gyro_status gyro_rl_train(gyro_rl_policy *p, const gyro_rl_train_config *cfg,
                          gyro_rl_train_result *res);

/* Episodes from the n evaluation starts of env (reset_eval(i, n)): mean metric and mean reward
 * (either pointer may be NULL). Actions are the argmax when rng is NULL, else sampled from π
 * with rng. GYRO_ERR_USAGE if the policy does not fit env; GYRO_ERR_NOMEM. */
gyro_status gyro_rl_evaluate(gyro_rl_policy *p, const gyro_rl_env *env, int n, gyro_rng *rng,
                             double *metric, double *reward);

/* Draw an action from log-probabilities lp (n of them) with rng (inverse CDF). */
int gyro_rl_sample_action(const float *lp, int n, gyro_rng *rng);

#endif

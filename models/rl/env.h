/* env.h — the small interface every reinforcement-learning environment of gyro implements.
 *
 * An environment is a table of functions over an opaque per-episode state of `state_size`
 * bytes that the caller allocates (so a trainer can hold thousands of episodes in one block and
 * step them in lockstep without allocating). Actions are discrete (the policy is a softmax over
 * `n_actions` logits, seed eq. 40); continuous controls are quantised into levels documented by
 * each environment. Episodes end when `done` says so (at most `max_steps` actions); the reward is
 * terminal ("outcome" reward, as in GRPO): higher is better. `metric` is the figure a user reads
 * (MAE for root finding, the cost J for the control problems): lower is better.
 *
 * Environments: "root" (env_root.c), "vdp" (env_vdp.c), "unicycle" (env_unicycle.c),
 * "primefield" (env_primefield.c: an answer written digit by digit, checked by a verifier).
 * Every function is pure C over the state; none allocates, prints or fails.
 */
#ifndef GYRO_RL_ENV_H
#define GYRO_RL_ENV_H

#include <stddef.h>

#include "models/core/rng.h"

typedef struct gyro_rl_env {
    const char *name;        /* "root", "vdp", "unicycle", "primefield" */
    const char *description; /* one line for --help */
    const char *metric_name; /* "MAE", "J", "miss" */
    int obs_dim;             /* floats per observation */
    int n_actions;
    int max_steps;           /* every episode ends after at most this many actions */
    size_t state_size;       /* bytes of one episode's state */
    /* Sample an initial state from the environment's start distribution. */
    void (*reset)(void *st, gyro_rng *rng);
    /* Number of values set_start takes (0 for a fixed start), and a short description of them
     * ("x0"). */
    int n_start;
    const char *start_help;
    /* Start from given values (n_start of them); returns 0, or −1 if they are outside the
     * environment's start domain (the state is then unspecified). */
    int (*set_start)(void *st, const double *v);
    /* The i-th of n fixed evaluation starts (deterministic; n ≥ 1, 0 ≤ i < n). */
    void (*reset_eval)(void *st, int i, int n);
    /* Write the observation (obs_dim floats) of the current state. */
    void (*observe)(const void *st, float *obs);
    /* Apply action a (0 ≤ a < n_actions; out-of-range actions are clamped). */
    void (*step)(void *st, int a);
    /* 1 once the episode is over. */
    int (*done)(const void *st);
    /* Terminal reward (meaningful once done). */
    double (*reward)(const void *st);
    /* The user-facing figure of merit (lower is better). */
    double (*metric)(const void *st);
    /* Human-readable action and state for `gyro reason`; return snprintf's value. */
    int (*format_action)(int a, char *buf, size_t n);
    int (*format_state)(const void *st, char *buf, size_t n);
} gyro_rl_env;

/* The function members of an environment whose functions are named <p>_reset, <p>_set_start,
 * <p>_reset_eval, <p>_observe, <p>_step, <p>_done, <p>_reward, <p>_metric, <p>_format_action
 * and <p>_format_state, as every environment of gyro names them (env_root.c: root_step ...):
 *     const gyro_rl_env gyro_rl_env_root = { .name = "root", ..., GYRO_RL_ENV_FUNCTIONS(root) }; */
#define GYRO_RL_ENV_FUNCTIONS(p)                                                                  \
    .reset = p##_reset, .set_start = p##_set_start, .reset_eval = p##_reset_eval,                 \
    .observe = p##_observe, .step = p##_step, .done = p##_done, .reward = p##_reward,             \
    .metric = p##_metric, .format_action = p##_format_action, .format_state = p##_format_state

/* The environment named `name` ("vanderpol" is accepted for "vdp"), or NULL. */
const gyro_rl_env *gyro_rl_env_find(const char *name);

/* The NULL-terminated list of all environments (for --help). */
const gyro_rl_env *const *gyro_rl_env_all(void);

/* The individual environments. */
extern const gyro_rl_env gyro_rl_env_root;
extern const gyro_rl_env gyro_rl_env_vdp;
extern const gyro_rl_env gyro_rl_env_unicycle;
extern const gyro_rl_env gyro_rl_env_primefield;

#endif

/* reason.h — run a trained policy on one input and record its steps: the library side of
 * `gyro reason` and of the gRPC Reason method (proto ReasonRequest/ReasonStep/ReasonResponse).
 *
 * The input is the environment's start as text: comma-separated numbers (root: "x0"; vdp:
 * "x1,x2"; unicycle: "x,y,theta"); empty means the environment's first evaluation start.
 * Actions are the argmax of the policy, or sampled with a seed. Rewards are terminal: every step
 * but the last records 0, the last the episode's reward.
 */
#ifndef GYRO_RL_REASON_H
#define GYRO_RL_REASON_H

#include <stdint.h>

#include "models/core/status.h"
#include "models/rl/env.h"
#include "models/rl/policy.h"

#define GYRO_RL_REASON_MAX_STEPS 256

typedef struct gyro_rl_reason_step {
    int index;              /* 1-based */
    int action;
    double probability;     /* π(action | state) */
    double reward;          /* 0 until the last step, then the episode's reward */
    char state[192];        /* the state before the action, as text */
    char action_text[96];
} gyro_rl_reason_step;

typedef struct gyro_rl_reason_result {
    const gyro_rl_env *env;
    int n_steps;
    gyro_rl_reason_step steps[GYRO_RL_REASON_MAX_STEPS];
    char final_state[192];
    double metric;          /* the environment's metric at the end (MAE, J) */
    double reward;          /* the episode's reward */
} gyro_rl_reason_result;

/* Run p on its environment (p->env_name) from `input` (NULL or "" = default start), at most
 * max_steps actions (0 = the environment's horizon). Errors: GYRO_ERR_USAGE (the input does not
 * parse or lies outside the environment's start domain; the message says what is expected),
 * GYRO_ERR_NOT_FOUND (the policy names no known environment, or one it does not fit),
 * GYRO_ERR_NOMEM. Thread-safe for distinct policies. */
gyro_status gyro_rl_reason(gyro_rl_policy *p, const char *input, int max_steps, int sample,
                           uint64_t seed, gyro_rl_reason_result *out);

#endif

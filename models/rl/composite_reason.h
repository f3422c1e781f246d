/* composite_reason.h — one greedy composite-intent episode on an utterance, recorded: the
 * library side of `gyro reason --env composite` and of the gRPC Reason method with
 * environment "composite".
 *
 * The utterance is tokenized as the policy's training data was (gyro_composite_data_build),
 * then the greedy policy (gyro_composite_greedy_trace) emits atoms one at a time and ends with
 * STOP (or after GYRO_COMPOSITE_MAX_STEPS atoms). The answer is the emitted atoms, in emission
 * order, joined with '+'.
 */
#ifndef GYRO_RL_COMPOSITE_REASON_H
#define GYRO_RL_COMPOSITE_REASON_H

#include "models/core/status.h"
#include "models/rl/composite.h"

#define GYRO_COMPOSITE_ANSWER_MAX 1024

typedef struct gyro_composite_reason_result {
    int n_steps;                                      /* atoms emitted, then STOP if taken */
    const char *action[GYRO_COMPOSITE_MAX_STEPS + 1]; /* class names, owned by the policy */
    double prob[GYRO_COMPOSITE_MAX_STEPS + 1];        /* π(action | state), masked softmax */
    int n_emitted;
    char answer[GYRO_COMPOSITE_ANSWER_MAX];           /* emitted atoms joined with '+' */
} gyro_composite_reason_result;

/* Run p greedily on `utterance` (UTF-8; NULL is ""). The action names in *out point into p and
 * stay valid while p lives. p is only read: distinct threads may share it. Errors: GYRO_ERR_LIMIT
 * (the answer is longer than GYRO_COMPOSITE_ANSWER_MAX − 1 bytes), the tokenizer's and the
 * transformer's errors, GYRO_ERR_NOMEM. */
gyro_status gyro_composite_reason(const gyro_composite_policy *p, const char *utterance,
                                  gyro_composite_reason_result *out);

#endif

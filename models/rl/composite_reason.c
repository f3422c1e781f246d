/* composite_reason.c — one greedy composite-intent episode on an utterance (see
 * composite_reason.h). The utterance goes through a one-example set so that it is tokenized
 * exactly as training and evaluation data are; its label is STOP (no gold atoms), which only
 * the episode's reward would read, and the reward is not reported.
 */
#include "models/rl/composite_reason.h"

#include <string.h>

#include "models/rl/composite_train.h"

gyro_status gyro_composite_reason(const gyro_composite_policy *p, const char *utterance,
                                  gyro_composite_reason_result *out)
{
    memset(out, 0, sizeof *out);
    gyro_example_set set = {0};
    gyro_composite_data d = {0};
    gyro_composite_trace tr;
    gyro_status s = gyro_example_set_add(&set, utterance ? utterance : "", GYRO_COMPOSITE_STOP, 1);
    if (!s) s = gyro_composite_data_build(p, &set, &d);
    if (!s) s = gyro_composite_greedy_trace(p, &d, 0, &tr);
    if (!s) {
        const gyro_label_set *ls = gyro_classifier_labels(p->clf);
        out->n_steps = tr.n_steps;
        for (int k = 0; k < tr.n_steps; k++) {
            out->action[k] = gyro_label_set_name(ls, tr.action[k]);
            out->prob[k] = tr.prob[k];
        }
        out->n_emitted = tr.ep.n_emitted;
        size_t used = 0;
        for (int k = 0; k < tr.ep.n_emitted; k++) {
            const char *name = gyro_label_set_name(ls, tr.ep.emitted[k]);
            size_t len = strlen(name);
            if (used + (k > 0) + len + 1 > sizeof out->answer) {
                s = gyro_error_set(GYRO_ERR_LIMIT, "composite answer longer than %d bytes",
                                   GYRO_COMPOSITE_ANSWER_MAX - 1);
                break;
            }
            if (k) out->answer[used++] = '+';
            memcpy(out->answer + used, name, len + 1);
            used += len;
        }
    }
    gyro_composite_data_free(&d);
    gyro_example_set_free(&set);
    return s;
}

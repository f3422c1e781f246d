/* cmd_reason.c — `gyro reason`: run a trained policy on an input and print its steps.
 *
 *   gyro reason --model MODEL [--start v1,v2,...] [--sample --seed S]
 *   gyro reason --env composite --model MODEL "utterance" ...
 *
 * Each step prints the state, the action the policy takes (greedy by default) with its
 * probability; the last line gives the environment's metric (MAE or J) and reward. A thin
 * wrapper over gyro_rl_reason (models/rl/reason.h), which the gRPC Reason method can share.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/core/blas.h"
#include "models/core/rng.h"
#include "models/rl/env.h"
#include "models/rl/reason.h"
#include "models/rl/policy.h"
#include "pipeline/cli/cli.h"
#include "pipeline/cli/opts.h"
#include "pipeline/cli/cmd_hrm.h"
#include "pipeline/cli/cmd_rl_composite.h"

typedef struct reason_args {
    const char *model, *start, *env;
    int sample;
    uint64_t seed;
} reason_args;

static const gyro_opt reason_opts[] = {
    GYRO_O_STR("model", 'm', reason_args, model, "MODEL", NULL, "the policy file (required)"),
    GYRO_O_STR("env", 'e', reason_args, env, "composite", NULL,
               "a composite-intent policy (gyro rl finetune --env composite): take utterances as "
               "arguments and print the intents emitted step by step, then STOP, and the composite "
               "label of the emitted set; the other environments come from the policy file"),
    GYRO_O_STR("start", 'x', reason_args, start, "LIST", NULL,
               "start values, comma-separated (default: the first evaluation start); root: x0; "
               "vdp: x1,x2; unicycle: x,y,theta; primefield: none (the problem is fixed)"),
    GYRO_O_FLAG("sample", 0, reason_args, sample, "sample actions from the policy instead of taking the argmax"),
    GYRO_O_SEED("seed", 's', reason_args, seed, "1", "seed of --sample"),
    GYRO_O_END,
};

const gyro_cmd_spec gyro_spec_reason = {
    "reason", "--model MODEL [--start V1,V2,...] [--sample] [--seed S]\n"
              "--env composite --model MODEL \"utterance\" ...\n"
              "--env sudoku --model HRM_MODEL [--no-act] [PUZZLE ...]",
    "Run a policy trained by 'gyro rl finetune' on one episode of its environment and print every "
    "step: the state, the action and its probability, then the result.",
    "Exit status: 0 OK, 1 I/O error, 2 usage (bad start values), 65 bad model file.",
    reason_opts,
    NULL,
};

int gyro_cmd_reason(int argc, char **argv)
{
    const char *cmd = "reason";
    if (gyro_cli_is_sudoku(argc, argv)) return gyro_cli_reason_sudoku(argc, argv); /* its own options */
    reason_args o = {0};
    int first;
    int rc = gyro_opts_parse(&gyro_spec_reason, argc, argv, &o, &first);
    if (rc != GYRO_OPTS_CONTINUE) return rc;
    if (o.env && strcmp(o.env, "composite") != 0)
        return gyro_cli_usage_error(cmd, "--env: only 'composite' (the other environments come from the "
                                    "policy file), not '%s'", o.env);
    if (!o.model) return gyro_cli_usage_error(cmd, "--model is required");
    if (o.env) return gyro_cli_reason_composite(o.model, argc - first, argv + first);
    if (first < argc)
        return gyro_cli_usage_error(cmd, "unexpected argument '%s' (utterances need --env composite)", argv[first]);
    const char *model = o.model, *start = o.start;
    int sample = o.sample;
    unsigned long long seed = o.seed;
    gyro_rl_policy *p;
    gyro_blas_set_threads(1);
    gyro_status s = gyro_rl_policy_load(model, 1, &p);
    if (s != GYRO_OK) return gyro_cli_fail(cmd, s);
    gyro_rl_reason_result *r = malloc(sizeof *r);
    if (!r) {
        gyro_rl_policy_free(p);
        return gyro_cli_fail(cmd, gyro_error_set(GYRO_ERR_NOMEM, "out of memory"));
    }
    s = gyro_rl_reason(p, start, 0, sample, seed, r);
    if (s == GYRO_OK) {
        printf("env: %s  geometry: %s  policy: %s\n", r->env->name,
               gyro_rl_policy_geometry_name(p->cfg.hyperbolic), sample ? "sampled" : "greedy");
        for (int i = 0; i < r->n_steps; i++)
            printf("step %2d: %s\n         -> %s  (p = %.4f)\n", r->steps[i].index, r->steps[i].state,
                   r->steps[i].action_text, r->steps[i].probability);
        printf("final:   %s\nresult:  %s = %.6g  reward = %.6g\n", r->final_state,
               r->env->metric_name, r->metric, r->reward);
    }
    rc = s == GYRO_OK ? 0
             : s == GYRO_ERR_USAGE ? gyro_cli_usage_error(cmd, "%s", gyro_error_message())
             : gyro_cli_fail(cmd, s == GYRO_ERR_NOT_FOUND ? GYRO_ERR_FORMAT : s);
    free(r);
    gyro_rl_policy_free(p);
    return rc;
}

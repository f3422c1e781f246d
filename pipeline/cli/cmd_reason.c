/* cmd_reason.c — `gyro reason`: run a trained policy on an input and print its steps.
 *
 *   gyro reason --model MODEL [--start v1,v2,...] [--sample --seed S]
 *
 * Each step prints the state, the action the policy takes (greedy by default) with its
 * probability; the last line gives the environment's metric (MAE or J) and reward. A thin
 * wrapper over gyro_rl_reason (models/rl/reason.h), which the gRPC Reason method can share.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/core/blas.h"
#include "models/core/rng.h"
#include "models/rl/env.h"
#include "models/rl/reason.h"
#include "models/rl/policy.h"
#include "pipeline/cli/cli.h"
#include "pipeline/cli/cmd_hrm.h"
#include "pipeline/cli/cmd_rl_composite.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: gyro reason --model MODEL [--start V1,V2,...] [--sample] [--seed S]\n"
            "       gyro reason --env composite --model MODEL \"utterance\" ...\n"
            "       gyro reason --env sudoku --model HRM_MODEL [--no-act] [PUZZLE ...]\n"
            "\n"
            "Run a policy trained by 'gyro rl finetune' on one episode of its environment and\n"
            "print every step: the state, the action and its probability, then the result.\n"
            "\n"
            "  -m, --model MODEL   the policy file\n"
            "  -x, --start LIST    start values, comma-separated (default: the first evaluation\n"
            "                      start). root: x0; vdp: x1,x2; unicycle: x,y,theta\n"
            "      --sample        sample actions from the policy instead of taking the argmax\n"
            "  -s, --seed S        seed of --sample (default 1)\n"
            "  -h, --help          this help\n"
            "\n"
            "Exit status: 0 OK, 1 I/O error, 2 usage (bad start values), 65 bad model file.\n");
}

int gyro_cmd_reason(int argc, char **argv)
{
    static const struct option opts[] = {
        {"model", required_argument, 0, 'm'}, {"start", required_argument, 0, 'x'},
        {"sample", no_argument, 0, 'S'},      {"seed", required_argument, 0, 's'},
        {"help", no_argument, 0, 'h'},        {0, 0, 0, 0}};
    const char *cmd = "reason", *model = NULL, *start = NULL;
    int sample = 0, c;
    if (gyro_cli_is_composite(argc, argv)) return gyro_cli_reason_composite(argc, argv);
    if (gyro_cli_is_sudoku(argc, argv)) return gyro_cli_reason_sudoku(argc, argv);
    unsigned long long seed = 1;
    optind = 1;
    while ((c = getopt_long(argc, argv, "m:x:s:h", opts, NULL)) != -1) {
        switch (c) {
        case 'm': model = optarg; break;
        case 'x': start = optarg; break;
        case 'S': sample = 1; break;
        case 's': {
            uint64_t v;
            if (!gyro_cli_parse_seed(cmd, "--seed", optarg, &v)) return 2;
            seed = v;
            break;
        }
        case 'h': usage(stdout); return 0;
        default: return gyro_cli_usage_error(cmd, "unknown option or missing argument");
        }
    }
    if (optind < argc) return gyro_cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
    if (!model) return gyro_cli_usage_error(cmd, "--model is required");
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
               p->cfg.hyperbolic ? "hyperbolic" : "euclidean", sample ? "sampled" : "greedy");
        for (int i = 0; i < r->n_steps; i++)
            printf("step %2d: %s\n         -> %s  (p = %.4f)\n", r->steps[i].index, r->steps[i].state,
                   r->steps[i].action_text, r->steps[i].probability);
        printf("final:   %s\nresult:  %s = %.6g  reward = %.6g\n", r->final_state,
               r->env->metric_name, r->metric, r->reward);
    }
    int rc = s == GYRO_OK ? 0
             : s == GYRO_ERR_USAGE ? gyro_cli_usage_error(cmd, "%s", gyro_error_message())
             : gyro_cli_fail(cmd, s == GYRO_ERR_NOT_FOUND ? GYRO_ERR_FORMAT : s);
    free(r);
    gyro_rl_policy_free(p);
    return rc;
}

/* cmd_reason.c — `gyro reason`: run a trained policy on an input and print its steps.
 *
 *   gyro reason --model MODEL [--start v1,v2,...] [--sample --seed S]
 *
 * Each step prints the state, the action the policy takes (greedy by default) with its
 * probability; the last line gives the environment's metric (MAE or J) and reward.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/core/blas.h"
#include "models/core/rng.h"
#include "models/rl/env.h"
#include "models/rl/grpo_train.h"
#include "models/rl/policy.h"
#include "pipeline/cli/cli.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: gyro reason --model MODEL [--start V1,V2,...] [--sample] [--seed S]\n"
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
    unsigned long long seed = 1;
    optind = 1;
    while ((c = getopt_long(argc, argv, "m:x:s:h", opts, NULL)) != -1) {
        switch (c) {
        case 'm': model = optarg; break;
        case 'x': start = optarg; break;
        case 'S': sample = 1; break;
        case 's': {
            char *end;
            seed = strtoull(optarg, &end, 10);
            if (!*optarg || *end || optarg[0] == '-')
                return gyro_cli_usage_error(cmd, "--seed expects a non-negative integer, got '%s'", optarg);
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
    const gyro_rl_env *env = gyro_rl_env_find(p->env_name);
    if (!env || env->obs_dim != p->cfg.obs_dim || env->n_actions != p->cfg.n_actions) {
        gyro_rl_policy_free(p);
        return gyro_cli_fail(cmd, gyro_error_set(GYRO_ERR_FORMAT,
                                                 "%s: the model names environment '%s', which gyro "
                                                 "does not have or which does not fit it",
                                                 model, p->env_name));
    }
    void *st = calloc(1, env->state_size);
    float *obs = malloc(sizeof(float) * env->obs_dim);
    if (!st || !obs) {
        free(st);
        free(obs);
        gyro_rl_policy_free(p);
        return gyro_cli_fail(cmd, gyro_error_set(GYRO_ERR_NOMEM, "out of memory"));
    }
    int rc = 0;
    env->reset_eval(st, 0, 1);
    if (start) {
        double v[16];
        int n = 0;
        const char *q = start;
        while (*q && n < 16) {
            char *end;
            errno = 0;
            v[n] = strtod(q, &end);
            if (end == q || errno || !isfinite(v[n])) break;
            n++;
            q = end;
            if (*q == ',') q++;
            else break;
        }
        if (*q || n != env->n_start || env->set_start(st, v) != 0) {
            rc = gyro_cli_usage_error(cmd, "--start for '%s' takes %s, got '%s'", env->name,
                                      env->start_help, start);
            goto out;
        }
    }
    gyro_rng rng;
    gyro_rng_seed(&rng, seed);
    char sbuf[256], abuf[128];
    printf("env: %s  geometry: %s  policy: %s\n", env->name,
           p->cfg.hyperbolic ? "hyperbolic" : "euclidean", sample ? "sampled" : "greedy");
    for (int step = 0; !env->done(st) && step < env->max_steps; step++) {
        env->format_state(st, sbuf, sizeof sbuf);
        env->observe(st, obs);
        const float *lp = gyro_rl_policy_forward(p, NULL, obs, 1);
        int a = gyro_rl_policy_argmax(p, 0);
        if (sample) a = gyro_rl_sample_action(lp, env->n_actions, &rng);
        env->format_action(a, abuf, sizeof abuf);
        printf("step %2d: %s\n         -> %s  (p = %.4f)\n", step + 1, sbuf, abuf, exp((double)lp[a]));
        env->step(st, a);
    }
    env->format_state(st, sbuf, sizeof sbuf);
    printf("final:   %s\nresult:  %s = %.6g  reward = %.6g\n", sbuf, env->metric_name,
           env->metric(st), env->reward(st));
out:
    free(st);
    free(obs);
    gyro_rl_policy_free(p);
    return rc;
}

/* reason.c — one recorded episode of a trained policy (see reason.h). */
#include "models/rl/reason.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/core/rng.h"
#include "models/rl/grpo_train.h"

/* Parse up to max comma-separated finite numbers; returns the count, −1 on a syntax error. */
static int parse_numbers(const char *text, double *v, int max)
{
    int n = 0;
    const char *q = text;
    while (*q == ' ') q++;
    if (!*q) return 0;
    for (;;) {
        char *end;
        errno = 0;
        double x = strtod(q, &end);
        if (end == q || errno || !isfinite(x) || n >= max) return -1;
        v[n++] = x;
        q = end;
        while (*q == ' ') q++;
        if (!*q) return n;
        if (*q != ',') return -1;
        q++;
    }
}

gyro_status gyro_rl_reason(gyro_rl_policy *p, const char *input, int max_steps, int sample,
                           uint64_t seed, gyro_rl_reason_result *out)
{
    memset(out, 0, sizeof *out);
    const gyro_rl_env *env = gyro_rl_env_find(p->env_name);
    if (!env || env->obs_dim != p->cfg.obs_dim || env->n_actions != p->cfg.n_actions)
        return gyro_error_set(GYRO_ERR_NOT_FOUND,
                              "the policy names environment '%s', which gyro does not have or "
                              "which does not fit it", p->env_name);
    out->env = env;
    void *st = calloc(1, env->state_size);
    float *obs = malloc(sizeof(float) * env->obs_dim);
    if (!st || !obs) {
        free(st);
        free(obs);
        return gyro_error_set(GYRO_ERR_NOMEM, "reason: out of memory");
    }
    gyro_status s = GYRO_OK;
    env->reset_eval(st, 0, 1);
    if (input && *input) {
        double v[16];
        int n = parse_numbers(input, v, 16);
        if (n != env->n_start || env->set_start(st, v) != 0) {
            s = gyro_error_set(GYRO_ERR_USAGE, "the start for '%s' is %s; got '%s'", env->name,
                               env->start_help, input);
            goto done;
        }
    }
    int limit = max_steps > 0 && max_steps < env->max_steps ? max_steps : env->max_steps;
    if (limit > GYRO_RL_REASON_MAX_STEPS) limit = GYRO_RL_REASON_MAX_STEPS;
    gyro_rng rng;
    gyro_rng_seed(&rng, seed);
    while (!env->done(st) && out->n_steps < limit) {
        gyro_rl_reason_step *k = &out->steps[out->n_steps];
        env->format_state(st, k->state, sizeof k->state);
        env->observe(st, obs);
        const float *lp = gyro_rl_policy_forward(p, NULL, obs, 1);
        int a = sample ? gyro_rl_sample_action(lp, env->n_actions, &rng) : gyro_rl_policy_argmax(p, 0);
        k->index = out->n_steps + 1;
        k->action = a;
        k->probability = exp((double)lp[a]);
        env->format_action(a, k->action_text, sizeof k->action_text);
        env->step(st, a);
        out->n_steps++;
    }
    env->format_state(st, out->final_state, sizeof out->final_state);
    out->metric = env->metric(st);
    out->reward = env->reward(st);
    if (out->n_steps > 0) out->steps[out->n_steps - 1].reward = out->reward;
done:
    free(st);
    free(obs);
    return s;
}

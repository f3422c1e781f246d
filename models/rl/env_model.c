/* env_model.c — the learned-model environment (see env_model.h). */
#include "models/rl/env_model.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "models/rl/env_unicycle.h"
#include "models/rl/env_vdp.h"
#include "models/rl/policy.h"
#include "models/rl/transition.h"

#define MAX_OBS 8

static gyro_rl_policy *model;     /* the loaded transition network, batch 1 */
static const gyro_rl_env *base;   /* the wrapped environment */
static gyro_rl_env wrapper;

/* Write the predicted next observation obs′ = obs + Δ and the stage cost r into the state. */
static void vdp_apply(void *st, const float *obs, const float *pred)
{
    gyro_rl_vdp_state *s = st;
    s->x[0] = (double)obs[0] + pred[0];
    s->x[1] = (double)obs[1] + pred[1];
    s->x[2] += pred[3];
    s->k++;
}

static void unicycle_apply(void *st, const float *obs, const float *pred)
{
    gyro_rl_unicycle_state *s = st;
    s->x[0] = 3.0 * ((double)obs[0] + pred[0]);
    s->x[1] = 3.0 * ((double)obs[1] + pred[1]);
    s->x[2] = M_PI * ((double)obs[2] + pred[2]);
    s->x[3] = (double)obs[3] + pred[3];
    s->x[4] += pred[5];
    s->k++;
}

static void (*apply)(void *st, const float *obs, const float *pred);

static void model_step(void *st, int a)
{
    if (base->done(st)) return;
    if (a < 0) a = 0;
    if (a >= base->n_actions) a = base->n_actions - 1;
    const int T = base->obs_dim;
    float in[MAX_OBS + 1];
    base->observe(st, in);
    in[T] = (float)a / (float)(base->n_actions - 1);
    gyro_rl_policy_forward(model, NULL, in, 1);
    float pred[MAX_OBS + 1];
    for (int k = 0; k <= T; k++) pred[k] = isfinite(model->last_logits[k]) ? model->last_logits[k] : 0.0f;
    apply(st, in, pred);
}

void gyro_rl_env_model_close(void)
{
    gyro_rl_policy_free(model);
    model = NULL;
    base = NULL;
}

gyro_status gyro_rl_env_model_open(const gyro_rl_env *env, const char *path, const gyro_rl_env **out)
{
    *out = NULL;
    gyro_rl_env_model_close();
    if (!env || !path) return gyro_error_set(GYRO_ERR_USAGE, "model env: no environment or file");
    void (*fn)(void *, const float *, const float *) = NULL;
    if (env == &gyro_rl_env_vdp) fn = vdp_apply;
    else if (env == &gyro_rl_env_unicycle) fn = unicycle_apply;
    else return gyro_error_set(GYRO_ERR_USAGE, "--transition: environment '%s' has no learned-model rollouts (vdp, unicycle)", env->name);
    gyro_rl_policy *p = NULL;
    gyro_status s = gyro_rl_policy_load(path, 1, &p);
    if (s != GYRO_OK) return s;
    char want[sizeof p->env_name];
    snprintf(want, sizeof want, "%s%s", GYRO_RL_TRANSITION_PREFIX, env->name);
    if (strcmp(p->env_name, want) != 0 || p->cfg.obs_dim != env->obs_dim + 1 ||
        p->cfg.n_actions != env->obs_dim + 1) {
        s = gyro_error_set(GYRO_ERR_FORMAT, "%s: not a transition model of '%s' (it is for '%s')", path,
                           env->name, p->env_name[0] ? p->env_name : "?");
        gyro_rl_policy_free(p);
        return s;
    }
    model = p;
    base = env;
    apply = fn;
    wrapper = *env;
    wrapper.step = model_step;
    *out = &wrapper;
    return GYRO_OK;
}

/* transition.c — data collection, training and evaluation of a learned transition model (see
 * transition.h). */
#include "models/rl/transition.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/core/progress.h"
#include "models/core/rng.h"
#include "models/optim.h"
#include "models/rl/policy.h"

gyro_rl_transition_config gyro_rl_transition_config_default(void)
{
    gyro_rl_transition_config c;
    memset(&c, 0, sizeof c);
    c.hyperbolic = 1;
    c.train_episodes = 200;
    c.test_episodes = 50;
    c.epochs = 20;
    c.batch = 256;
    c.lr = 1e-3;
    c.seed = 1;
    return c;
}

/* Roll out `episodes` random episodes; rows of in (T+1) and out (T+1) floats. Returns rows. */
static long collect(float *in, float *out, const gyro_rl_env *env, int episodes, gyro_rng *rng,
                    void *st)
{
    const int T = env->obs_dim;
    long r = 0;
    for (int e = 0; e < episodes; e++) {
        env->reset(st, rng);
        while (!env->done(st)) {
            float *x = in + (size_t)r * (T + 1), *y = out + (size_t)r * (T + 1);
            env->observe(st, x);
            int a = (int)gyro_rng_below(rng, (uint32_t)env->n_actions);
            x[T] = (float)a / (float)(env->n_actions - 1);
            double m0 = env->metric(st);
            env->step(st, a);
            env->observe(st, y);
            for (int k = 0; k < T; k++) y[k] -= x[k];
            y[T] = (float)(env->metric(st) - m0);
            r++;
        }
    }
    return r;
}

/* Standardised squared error of a batch's predictions; fills d (dloss/dpred) when non-NULL. */
static double batch_mse(float *d, const float *pred, const float *target, const double *mu,
                        const double *sd, int B, int D)
{
    double s = 0.0;
    for (int b = 0; b < B; b++)
        for (int k = 0; k < D; k++) {
            double t = (target[(size_t)b * D + k] - mu[k]) / sd[k];
            double e = pred[(size_t)b * D + k] - t;
            s += e * e;
            if (d) d[(size_t)b * D + k] = (float)(2.0 * e / ((double)B * D));
        }
    return s;
}

gyro_status gyro_rl_transition_fit(const gyro_rl_transition_config *cfg,
                                   gyro_rl_transition_result *res)
{
    memset(res, 0, sizeof *res);
    if (!cfg || !cfg->env || cfg->train_episodes < 1 || cfg->test_episodes < 1 || cfg->epochs < 0 ||
        cfg->batch < 1 || !(cfg->lr > 0) || cfg->train_episodes > 1000000 || cfg->test_episodes > 1000000)
        return gyro_error_set(GYRO_ERR_USAGE, "transition: bad settings (episodes >= 1, batch >= 1, lr > 0)");
    const gyro_rl_env *env = cfg->env;
    const int T = env->obs_dim, D = T + 1, H = env->max_steps;
    const long ntr_max = (long)cfg->train_episodes * H, nte_max = (long)cfg->test_episodes * H;
    float *xin = malloc(sizeof(float) * (size_t)(ntr_max + nte_max) * D);
    float *yout = malloc(sizeof(float) * (size_t)(ntr_max + nte_max) * D);
    float *bx = malloc(sizeof(float) * (size_t)cfg->batch * D);
    float *by = malloc(sizeof(float) * (size_t)cfg->batch * D);
    float *dpred = malloc(sizeof(float) * (size_t)cfg->batch * D);
    long *perm = malloc(sizeof(long) * (size_t)ntr_max);
    void *st = calloc(1, env->state_size);
    double *mu = calloc(D, sizeof(double)), *sd = calloc(D, sizeof(double));
    gyro_rl_policy *p = NULL;
    gyro_status s = GYRO_OK;
    gyro_optim opt;
    memset(&opt, 0, sizeof opt);
    if (!xin || !yout || !bx || !by || !dpred || !perm || !st || !mu || !sd) {
        s = gyro_error_set(GYRO_ERR_NOMEM, "transition: out of memory");
        goto done;
    }
    gyro_rng rng;
    gyro_rng_seed(&rng, cfg->seed);
    res->train_rows = collect(xin, yout, env, cfg->train_episodes, &rng, st);
    res->test_rows = collect(xin + (size_t)res->train_rows * D, yout + (size_t)res->train_rows * D,
                             env, cfg->test_episodes, &rng, st);
    const long ntr = res->train_rows, nte = res->test_rows;
    for (long r = 0; r < ntr; r++)
        for (int k = 0; k < D; k++) mu[k] += yout[(size_t)r * D + k];
    for (int k = 0; k < D; k++) mu[k] /= ntr;
    for (long r = 0; r < ntr; r++)
        for (int k = 0; k < D; k++) {
            double e = yout[(size_t)r * D + k] - mu[k];
            sd[k] += e * e;
        }
    for (int k = 0; k < D; k++) {
        sd[k] = sqrt(sd[k] / ntr);
        if (sd[k] < 1e-6) sd[k] = 1.0; /* a constant target (the time feature): not rescaled */
    }

    gyro_rl_policy_config pc = gyro_rl_policy_config_default(cfg->hyperbolic, D, D);
    s = gyro_rl_policy_new(&pc, cfg->seed, cfg->batch, &p);
    if (s != GYRO_OK) goto done;
    gyro_optim_config oc = gyro_optim_config_default();
    oc.kind = GYRO_OPTIM_ADAM;
    oc.lr = cfg->lr;
    oc.eps = 1e-8;
    oc.clip_norm = 1.0;
    gyro_optim_tensor t = {.name = "transition", .w = p->params, .g = p->grads,
                           .rows = p->lay.n_params, .cols = 1,
                           .manifold = GYRO_OPTIM_MANIFOLD_EUCLIDEAN};
    s = gyro_optim_init(&opt, &oc, &t, 1);
    if (s != GYRO_OK) goto done;
    gyro_progress prog;
    gyro_progress_init(&prog, "rows/sec", cfg->quiet);
    const double t0 = gyro_now();
    for (long r = 0; r < ntr; r++) perm[r] = r;
    int stopped_at = 0;   /* epoch (1-based) in which cfg->stop was seen */
    for (int ep = 0; ep < cfg->epochs && s == GYRO_OK && !stopped_at; ep++) {
        for (long r = ntr - 1; r > 0; r--) { /* Fisher–Yates */
            long j = (long)(gyro_rng_uniform(&rng) * (r + 1));
            long tmp = perm[r];
            perm[r] = perm[j];
            perm[j] = tmp;
        }
        double sum = 0.0;
        long seen = 0;
        for (long base = 0; base < ntr; base += cfg->batch) {
            if (cfg->stop && *cfg->stop) {
                stopped_at = ep + 1;
                break;
            }
            int B = (int)(ntr - base < cfg->batch ? ntr - base : cfg->batch);
            seen += B;
            for (int b = 0; b < B; b++) {
                memcpy(bx + (size_t)b * D, xin + (size_t)perm[base + b] * D, sizeof(float) * D);
                memcpy(by + (size_t)b * D, yout + (size_t)perm[base + b] * D, sizeof(float) * D);
            }
            gyro_optim_zero_grad(&opt);
            gyro_rl_policy_forward(p, NULL, bx, B);
            sum += batch_mse(dpred, p->last_logits, by, mu, sd, B, D);
            gyro_rl_policy_backward(p, dpred, bx, B, 1e-3);
            s = gyro_optim_step(&opt, 1.0);
            if (s != GYRO_OK) break;
        }
        if (seen > 0) res->train_mse = sum / ((double)seen * D);
        if (s == GYRO_OK && !isfinite(res->train_mse))
            s = gyro_error_set(GYRO_ERR_NAN, "transition: the loss is not finite at epoch %d", ep + 1);
        double el = gyro_now() - t0;
        gyro_progress_update(&prog, (double)(ep + 1) / cfg->epochs, el > 0 ? (ep + 1) * ntr / el : 0,
                             cfg->lr, res->train_mse, 0);
    }
    res->seconds = gyro_now() - t0;
    const int epochs_done = stopped_at ? stopped_at - 1 : cfg->epochs;
    gyro_progress_finish(&prog, cfg->epochs ? (double)epochs_done / cfg->epochs : 1.0,
                         res->seconds > 0 ? epochs_done * ntr / res->seconds : 0, cfg->lr, res->train_mse);
    if (s != GYRO_OK) goto done;
    /* held-out one-step error */
    double sum = 0.0, se = 0.0, se_copy = 0.0;
    const float *tx = xin + (size_t)ntr * D, *ty = yout + (size_t)ntr * D;
    for (long base = 0; base < nte; base += cfg->batch) {
        int B = (int)(nte - base < cfg->batch ? nte - base : cfg->batch);
        gyro_rl_policy_forward(p, NULL, tx + (size_t)base * D, B);
        const float *pred = p->last_logits, *tgt = ty + (size_t)base * D;
        sum += batch_mse(NULL, pred, tgt, mu, sd, B, D);
        for (int b = 0; b < B; b++)
            for (int k = 0; k < T; k++) {
                double delta = pred[(size_t)b * D + k] * sd[k] + mu[k];
                double e = delta - tgt[(size_t)b * D + k];
                se += e * e;
                se_copy += (double)tgt[(size_t)b * D + k] * tgt[(size_t)b * D + k];
            }
    }
    res->test_mse = sum / ((double)nte * D);
    res->test_state_rmse = sqrt(se / ((double)nte * T));
    res->test_copy_rmse = sqrt(se_copy / ((double)nte * T));
    if (cfg->out) { /* fold the standardisation into the head: logits become raw targets */
        const int d = p->cfg.d_model;
        for (int j = 0; j < D; j++) {
            float *w = p->params + p->lay.w_head + (size_t)j * d;
            for (int k = 0; k < d; k++) w[k] = (float)(w[k] * sd[j]);
            p->params[p->lay.b_head + j] = (float)(p->params[p->lay.b_head + j] * sd[j] + mu[j]);
        }
        snprintf(p->env_name, sizeof p->env_name, "%s%s", GYRO_RL_TRANSITION_PREFIX, env->name);
        s = gyro_rl_policy_save(p, cfg->out);
    }
    if (s == GYRO_OK && stopped_at)
        s = gyro_error_set(GYRO_ERR_INTERRUPTED, "interrupted in epoch %d of %d%s%s", stopped_at,
                           cfg->epochs, cfg->out ? "; the model so far is saved to " : "",
                           cfg->out ? cfg->out : "");
done:
    gyro_optim_free(&opt);
    gyro_rl_policy_free(p);
    free(xin); free(yout); free(bx); free(by); free(dpred); free(perm); free(st); free(mu); free(sd);
    return s;
}

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

/* Mean mu (D) and standard deviation sd (D) of the ntr target rows (D); a constant target (the
 * time feature) keeps sd 1, so it is not rescaled. */
static void standardize(double *mu, double *sd, const float *yout, long ntr, int D)
{
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
        if (sd[k] < 1e-6) sd[k] = 1.0;
    }
}

/* The training of one fit: the rows, their standardisation, the network and its optimizer. */
typedef struct fit {
    const gyro_rl_transition_config *cfg;
    int T, D;                   /* observation floats; row width T + 1 */
    long ntr, nte;              /* training and held-out rows */
    float *xin, *yout;          /* (ntr + nte, D) inputs (observation, action) and targets */
    float *bx, *by, *dpred;     /* (batch, D) */
    long *perm;                 /* (ntr) this epoch's order */
    double *mu, *sd;            /* (D) target standardisation */
    gyro_rl_policy *p;
    gyro_optim opt;
    gyro_rng rng;
} fit;

/* One epoch of Adam steps over the shuffled training rows; *stopped = 1 when cfg->stop was seen
 * (the epoch is then cut short). Sets res->train_mse. */
static gyro_status fit_epoch(fit *f, int ep, int *stopped, gyro_rl_transition_result *res)
{
    const gyro_rl_transition_config *cfg = f->cfg;
    const int D = f->D;
    for (long r = f->ntr - 1; r > 0; r--) { /* Fisher–Yates */
        long j = (long)(gyro_rng_uniform(&f->rng) * (r + 1));
        long tmp = f->perm[r];
        f->perm[r] = f->perm[j];
        f->perm[j] = tmp;
    }
    double sum = 0.0;
    long seen = 0;
    gyro_status s = GYRO_OK;
    for (long base = 0; base < f->ntr; base += cfg->batch) {
        if (cfg->stop && *cfg->stop) {
            *stopped = 1;
            break;
        }
        int B = (int)(f->ntr - base < cfg->batch ? f->ntr - base : cfg->batch);
        seen += B;
        for (int b = 0; b < B; b++) {
            memcpy(f->bx + (size_t)b * D, f->xin + (size_t)f->perm[base + b] * D, sizeof(float) * D);
            memcpy(f->by + (size_t)b * D, f->yout + (size_t)f->perm[base + b] * D, sizeof(float) * D);
        }
        gyro_optim_zero_grad(&f->opt);
        gyro_rl_policy_forward(f->p, NULL, f->bx, B);
        sum += batch_mse(f->dpred, f->p->last_logits, f->by, f->mu, f->sd, B, D);
        gyro_rl_policy_backward(f->p, f->dpred, f->bx, B, 1e-3);
        s = gyro_optim_step(&f->opt, 1.0);
        if (s != GYRO_OK) break;
    }
    if (seen > 0) res->train_mse = sum / ((double)seen * D);
    if (s == GYRO_OK && !isfinite(res->train_mse))
        s = gyro_error_set(GYRO_ERR_NAN, "transition: the loss is not finite at epoch %d", ep + 1);
    return s;
}

/* The held-out one-step errors: standardised MSE, raw state RMSE and the copy baseline's. */
static void fit_test(fit *f, gyro_rl_transition_result *res)
{
    const int T = f->T, D = f->D, batch = f->cfg->batch;
    const long nte = f->nte;
    const double *mu = f->mu, *sd = f->sd;
    double sum = 0.0, se = 0.0, se_copy = 0.0;
    const float *tx = f->xin + (size_t)f->ntr * D, *ty = f->yout + (size_t)f->ntr * D;
    for (long base = 0; base < nte; base += batch) {
        int B = (int)(nte - base < batch ? nte - base : batch);
        gyro_rl_policy_forward(f->p, NULL, tx + (size_t)base * D, B);
        const float *pred = f->p->last_logits, *tgt = ty + (size_t)base * D;
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
}

/* Fold the standardisation into the head (the logits become raw targets) and save the network
 * as the transition model of env to `path`. */
static gyro_status fit_save(fit *f, const gyro_rl_env *env, const char *path)
{
    gyro_rl_policy *p = f->p;
    const int d = p->cfg.d_model;
    for (int j = 0; j < f->D; j++) {
        float *w = p->params + p->lay.w_head + (size_t)j * d;
        for (int k = 0; k < d; k++) w[k] = (float)(w[k] * f->sd[j]);
        p->params[p->lay.b_head + j] = (float)(p->params[p->lay.b_head + j] * f->sd[j] + f->mu[j]);
    }
    snprintf(p->env_name, sizeof p->env_name, "%s%s", GYRO_RL_TRANSITION_PREFIX, env->name);
    return gyro_rl_policy_save(p, path);
}

/* The buffers, the random rollouts and their standardisation, the network and Adam. */
static gyro_status fit_setup(fit *f, gyro_rl_transition_result *res)
{
    const gyro_rl_transition_config *cfg = f->cfg;
    const gyro_rl_env *env = cfg->env;
    const int D = f->D, H = env->max_steps;
    const long ntr_max = (long)cfg->train_episodes * H, nte_max = (long)cfg->test_episodes * H;
    f->xin = malloc(sizeof(float) * (size_t)(ntr_max + nte_max) * D);
    f->yout = malloc(sizeof(float) * (size_t)(ntr_max + nte_max) * D);
    f->bx = malloc(sizeof(float) * (size_t)cfg->batch * D);
    f->by = malloc(sizeof(float) * (size_t)cfg->batch * D);
    f->dpred = malloc(sizeof(float) * (size_t)cfg->batch * D);
    f->perm = malloc(sizeof(long) * (size_t)ntr_max);
    void *st = calloc(1, env->state_size);
    f->mu = calloc(D, sizeof(double));
    f->sd = calloc(D, sizeof(double));
    if (!f->xin || !f->yout || !f->bx || !f->by || !f->dpred || !f->perm || !st || !f->mu || !f->sd) {
        free(st);
        return gyro_error_set(GYRO_ERR_NOMEM, "transition: out of memory");
    }
    gyro_rng_seed(&f->rng, cfg->seed);
    res->train_rows = collect(f->xin, f->yout, env, cfg->train_episodes, &f->rng, st);
    res->test_rows = collect(f->xin + (size_t)res->train_rows * D, f->yout + (size_t)res->train_rows * D,
                             env, cfg->test_episodes, &f->rng, st);
    free(st);
    f->ntr = res->train_rows;
    f->nte = res->test_rows;
    standardize(f->mu, f->sd, f->yout, f->ntr, D);
    for (long r = 0; r < f->ntr; r++) f->perm[r] = r;

    gyro_rl_policy_config pc = gyro_rl_policy_config_default(cfg->hyperbolic, D, D);
    gyro_status s = gyro_rl_policy_new(&pc, cfg->seed, cfg->batch, &f->p);
    if (s != GYRO_OK) return s;
    gyro_optim_config oc = gyro_optim_config_default();
    oc.kind = GYRO_OPTIM_ADAM;
    oc.lr = cfg->lr;
    oc.eps = 1e-8;
    oc.clip_norm = 1.0;
    gyro_optim_tensor t = {.name = "transition", .w = f->p->params, .g = f->p->grads,
                           .rows = f->p->lay.n_params, .cols = 1,
                           .manifold = GYRO_OPTIM_MANIFOLD_EUCLIDEAN};
    return gyro_optim_init(&f->opt, &oc, &t, 1);
}

gyro_status gyro_rl_transition_fit(const gyro_rl_transition_config *cfg,
                                   gyro_rl_transition_result *res)
{
    memset(res, 0, sizeof *res);
    if (!cfg || !cfg->env || cfg->train_episodes < 1 || cfg->test_episodes < 1 || cfg->epochs < 0 ||
        cfg->batch < 1 || !(cfg->lr > 0) || cfg->train_episodes > 1000000 || cfg->test_episodes > 1000000)
        return gyro_error_set(GYRO_ERR_USAGE, "transition: bad settings (episodes >= 1, batch >= 1, lr > 0)");
    fit f;
    memset(&f, 0, sizeof f);
    f.cfg = cfg;
    f.T = cfg->env->obs_dim;
    f.D = f.T + 1;
    gyro_status s = fit_setup(&f, res);
    int stopped_at = 0;   /* epoch (1-based) in which cfg->stop was seen */
    if (s == GYRO_OK) {
        gyro_progress prog;
        gyro_progress_init(&prog, "rows/sec", cfg->quiet);
        const double t0 = gyro_now();
        for (int ep = 0; ep < cfg->epochs && s == GYRO_OK && !stopped_at; ep++) {
            int stopped = 0;
            s = fit_epoch(&f, ep, &stopped, res);
            if (stopped) stopped_at = ep + 1;
            double el = gyro_now() - t0;
            gyro_progress_update(&prog, (double)(ep + 1) / cfg->epochs, el > 0 ? (ep + 1) * f.ntr / el : 0,
                                 cfg->lr, res->train_mse, 0);
        }
        res->seconds = gyro_now() - t0;
        const int epochs_done = stopped_at ? stopped_at - 1 : cfg->epochs;
        gyro_progress_finish(&prog, cfg->epochs ? (double)epochs_done / cfg->epochs : 1.0,
                             res->seconds > 0 ? epochs_done * f.ntr / res->seconds : 0, cfg->lr, res->train_mse);
    }
    if (s == GYRO_OK) {
        fit_test(&f, res);
        if (cfg->out) s = fit_save(&f, cfg->env, cfg->out);
    }
    if (s == GYRO_OK && stopped_at)
        s = gyro_error_set(GYRO_ERR_INTERRUPTED, "interrupted in epoch %d of %d%s%s", stopped_at,
                           cfg->epochs, cfg->out ? "; the model so far is saved to " : "",
                           cfg->out ? cfg->out : "");
    gyro_optim_free(&f.opt);
    gyro_rl_policy_free(f.p);
    free(f.xin); free(f.yout); free(f.bx); free(f.by); free(f.dpred); free(f.perm); free(f.mu); free(f.sd);
    return s;
}

/* grpo_train.c — the GRPO training loop and greedy evaluation (see grpo_train.h). */
#include "models/rl/grpo_train.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "models/core/progress.h"
#include "models/core/rng.h"
#include "models/optim.h"

gyro_rl_train_config gyro_rl_train_config_default(void)
{
    gyro_rl_train_config c;
    memset(&c, 0, sizeof c);
    c.iterations = 200;
    c.n_states = 16;
    c.group = 8;
    c.epochs = 2;
    c.lr = 3e-4;
    c.clip_norm = 1.0;
    c.balance_alpha = 1e-3;
    c.grpo = gyro_grpo_config_default();
    c.seed = 1;
    c.eval_every = 5;
    c.eval_episodes = 32;
    c.target = 1e-6;
    c.checkpoint_every = 50;
    return c;
}

static gyro_status check_fit(const gyro_rl_policy *p, const gyro_rl_env *env)
{
    if (!env) return gyro_error_set(GYRO_ERR_USAGE, "rl: no environment");
    if (p->cfg.obs_dim != env->obs_dim || p->cfg.n_actions != env->n_actions)
        return gyro_error_set(GYRO_ERR_USAGE,
                              "rl: the policy reads %d numbers and has %d actions; environment "
                              "'%s' needs %d and %d",
                              p->cfg.obs_dim, p->cfg.n_actions, env->name, env->obs_dim,
                              env->n_actions);
    return GYRO_OK;
}

int gyro_rl_sample_action(const float *lp, int n, gyro_rng *rng)
{
    double u = gyro_rng_uniform(rng), acc = 0.0;
    for (int j = 0; j < n; j++) {
        acc += exp((double)lp[j]);
        if (u < acc) return j;
    }
    return n - 1; /* rounding: the mass left over belongs to the last action */
}

gyro_status gyro_rl_evaluate(gyro_rl_policy *p, const gyro_rl_env *env, int n, gyro_rng *rng,
                             double *metric, double *reward)
{
    gyro_status s = check_fit(p, env);
    if (s != GYRO_OK) return s;
    if (n < 1) return gyro_error_set(GYRO_ERR_USAGE, "rl: evaluation needs at least one episode");
    const int T = env->obs_dim, chunk = p->max_batch;
    unsigned char *st = malloc(env->state_size * (size_t)chunk);
    float *obs = malloc(sizeof(float) * (size_t)chunk * T);
    if (!st || !obs) {
        free(st);
        free(obs);
        return gyro_error_set(GYRO_ERR_NOMEM, "rl: out of memory for evaluation");
    }
    double msum = 0.0, rsum = 0.0;
    for (int base = 0; base < n; base += chunk) {
        int B = n - base < chunk ? n - base : chunk;
        for (int b = 0; b < B; b++) env->reset_eval(st + (size_t)b * env->state_size, base + b, n);
        for (int step = 0; step < env->max_steps; step++) {
            int any = 0;
            for (int b = 0; b < B; b++) {
                env->observe(st + (size_t)b * env->state_size, obs + (size_t)b * T);
                any |= !env->done(st + (size_t)b * env->state_size);
            }
            if (!any) break;
            const float *lp = gyro_rl_policy_forward(p, NULL, obs, B);
            for (int b = 0; b < B; b++) {
                void *sb = st + (size_t)b * env->state_size;
                if (env->done(sb)) continue;
                int a = rng ? gyro_rl_sample_action(lp + (size_t)b * env->n_actions, env->n_actions, rng)
                            : gyro_rl_policy_argmax(p, b);
                env->step(sb, a);
            }
        }
        for (int b = 0; b < B; b++) {
            msum += env->metric(st + (size_t)b * env->state_size);
            rsum += env->reward(st + (size_t)b * env->state_size);
        }
    }
    free(st);
    free(obs);
    if (metric) *metric = msum / n;
    if (reward) *reward = rsum / n;
    return GYRO_OK;
}

/* Buffers of one GRPO batch. */
typedef struct batch {
    int M, H, T, A, rows_max;
    unsigned char *states;  /* (M, state_size) */
    unsigned char *starts;  /* (N, state_size) */
    float *obs;             /* (rows_max, T) */
    int *act;               /* (rows_max) */
    int *episode;           /* (rows_max) */
    double *lp_old, *lp_ref, *lp, *adv, *w, *dlp; /* (rows_max) */
    double *reward;         /* (M) episode rewards → advantages */
    int *len;               /* (M) steps per episode */
    float *dlogits;         /* (chunk, A) */
    int *active;            /* (M) */
} batch;

static void batch_free(batch *b)
{
    free(b->states); free(b->starts); free(b->obs); free(b->act); free(b->episode);
    free(b->lp_old); free(b->lp_ref); free(b->lp); free(b->adv); free(b->w); free(b->dlp);
    free(b->reward); free(b->len); free(b->dlogits); free(b->active);
}

static gyro_status batch_alloc(batch *b, const gyro_rl_train_config *cfg, int chunk)
{
    memset(b, 0, sizeof *b);
    const gyro_rl_env *env = cfg->env;
    b->M = cfg->n_states * cfg->group;
    b->H = env->max_steps;
    b->T = env->obs_dim;
    b->A = env->n_actions;
    b->rows_max = b->M * b->H;
    size_t R = (size_t)b->rows_max;
    b->states = malloc(env->state_size * (size_t)b->M);
    b->starts = malloc(env->state_size * (size_t)cfg->n_states);
    b->obs = malloc(sizeof(float) * R * b->T);
    b->act = malloc(sizeof(int) * R);
    b->episode = malloc(sizeof(int) * R);
    b->lp_old = malloc(sizeof(double) * R);
    b->lp_ref = malloc(sizeof(double) * R);
    b->lp = malloc(sizeof(double) * R);
    b->adv = malloc(sizeof(double) * R);
    b->w = malloc(sizeof(double) * R);
    b->dlp = malloc(sizeof(double) * R);
    b->reward = malloc(sizeof(double) * b->M);
    b->len = malloc(sizeof(int) * b->M);
    b->dlogits = malloc(sizeof(float) * (size_t)chunk * b->A);
    b->active = malloc(sizeof(int) * b->M);
    if (!b->states || !b->starts || !b->obs || !b->act || !b->episode || !b->lp_old ||
        !b->lp_ref || !b->lp || !b->adv || !b->w || !b->dlp || !b->reward || !b->len ||
        !b->dlogits || !b->active) {
        batch_free(b);
        return gyro_error_set(GYRO_ERR_NOMEM, "rl: out of memory for a batch of %d episodes", b->M);
    }
    return GYRO_OK;
}

/* Step 1: sample the episodes; returns the number of rows recorded. */
static int rollout(batch *b, gyro_rl_policy *p, const gyro_rl_train_config *cfg, gyro_rng *rng,
                   long *load)
{
    const gyro_rl_env *env = cfg->env;
    const size_t ss = env->state_size;
    const int chunk = p->max_batch, G = cfg->group;
    for (int j = 0; j < cfg->n_states; j++) {
        env->reset(b->starts + j * ss, rng);
        for (int i = 0; i < G; i++) memcpy(b->states + ((size_t)j * G + i) * ss, b->starts + j * ss, ss);
    }
    for (int m = 0; m < b->M; m++) b->len[m] = 0;
    int rows = 0;
    for (int step = 0; step < b->H; step++) {
        int n_active = 0;
        for (int m = 0; m < b->M; m++)
            if (!env->done(b->states + m * ss)) b->active[n_active++] = m;
        if (!n_active) break;
        for (int base = 0; base < n_active; base += chunk) {
            int B = n_active - base < chunk ? n_active - base : chunk;
            float *obs = b->obs + (size_t)(rows + base) * b->T;
            for (int k = 0; k < B; k++) env->observe(b->states + b->active[base + k] * ss, obs + (size_t)k * b->T);
            const float *lp = gyro_rl_policy_forward(p, NULL, obs, B);
            if (load) gyro_moe_count_load(load, p->route, &p->cfg.moe, B * b->T);
            for (int k = 0; k < B; k++) {
                const float *l = lp + (size_t)k * b->A;
                int a = gyro_rl_sample_action(l, b->A, rng);
                int r = rows + base + k, m = b->active[base + k];
                b->act[r] = a;
                b->episode[r] = m;
                b->lp_old[r] = l[a];
                env->step(b->states + m * ss, a);
                b->len[m]++;
            }
        }
        rows += n_active;
    }
    for (int m = 0; m < b->M; m++) b->reward[m] = env->reward(b->states + m * ss);
    return rows;
}

/* log π(a_r | s_r) for every row under params (NULL: the policy's own) into out. */
static void logprobs(double *out, batch *b, gyro_rl_policy *p, const float *params, int rows)
{
    for (int base = 0; base < rows; base += p->max_batch) {
        int B = rows - base < p->max_batch ? rows - base : p->max_batch;
        const float *lp = gyro_rl_policy_forward(p, params, b->obs + (size_t)base * b->T, B);
        for (int k = 0; k < B; k++) out[base + k] = lp[(size_t)k * b->A + b->act[base + k]];
    }
}

gyro_status gyro_rl_train(gyro_rl_policy *p, const gyro_rl_train_config *cfg,
                          gyro_rl_train_result *res)
{
    memset(res, 0, sizeof *res);
    res->steps_to_target = -1;
    res->best_metric = INFINITY;
    gyro_status s = check_fit(p, cfg ? cfg->env : NULL);
    if (s != GYRO_OK) return s;
    if (cfg->iterations < 0 || cfg->n_states < 1 || cfg->group < 2 || cfg->epochs < 1 ||
        cfg->eval_every < 1 || cfg->eval_episodes < 1 || !(cfg->lr > 0) || !(cfg->clip_norm >= 0) ||
        !(cfg->balance_alpha >= 0) || !(cfg->grpo.clip_eps > 0 && cfg->grpo.clip_eps < 1) ||
        !(cfg->grpo.kl_beta >= 0) || !(cfg->grpo.adv_eps > 0) ||
        (long)cfg->n_states * cfg->group * cfg->env->max_steps > (1L << 26))
        return gyro_error_set(GYRO_ERR_USAGE,
                              "rl: bad training settings (iterations >= 0, states >= 1, group >= 2, "
                              "epochs >= 1, lr > 0, 0 < clip < 1, beta >= 0)");
    const gyro_sync *sy = gyro_sync_active(cfg->sync) ? cfg->sync : NULL;
    if (sy && cfg->n_states < sy->size)
        return gyro_error_set(GYRO_ERR_USAGE, "rl: %d start states per batch cannot be split over %d ranks "
                              "(give at least one per rank)", cfg->n_states, sy->size);
    /* lc: this rank's part of every batch (all of it for one process); rank 0 alone writes */
    gyro_rl_train_config lc = *cfg;
    if (sy) {
        lc.n_states = (int)((long)cfg->n_states * (sy->rank + 1) / sy->size - (long)cfg->n_states * sy->rank / sy->size);
        if (sy->rank != 0) {
            lc.checkpoint = NULL;
            lc.report = NULL;
            lc.quiet = 1;
        }
    }
    const double M_all = (double)cfg->n_states * cfg->group;   /* episodes of the whole batch */
    res->n_experts = p->cfg.moe.n_routed < GYRO_RL_MAX_EXPERTS ? p->cfg.moe.n_routed : GYRO_RL_MAX_EXPERTS;
    const size_t n_params = p->lay.n_params;
    float *ref = malloc(sizeof(float) * n_params);
    const size_t n_load = p->cfg.moe.n_routed > 0 ? (size_t)p->cfg.moe.n_routed : 1; /* Lorentz: 0 experts */
    long *load = calloc(n_load, sizeof(long));
    long *load_prev = calloc(n_load, sizeof(long));
    double *share = calloc(n_load, sizeof(double));
    batch b;
    if (!ref || !load || !load_prev || !share) {
        free(ref);
        free(load);
        free(load_prev);
        free(share);
        return gyro_error_set(GYRO_ERR_NOMEM, "rl: out of memory");
    }
    memcpy(ref, cfg->ref_params ? cfg->ref_params : p->params, sizeof(float) * n_params);
    s = batch_alloc(&b, &lc, p->max_batch);
    if (s != GYRO_OK) {
        free(ref);
        free(load);
        free(load_prev);
        free(share);
        return s;
    }
    gyro_optim opt;
    gyro_optim_config oc = gyro_optim_config_default();
    oc.kind = GYRO_OPTIM_ADAM;
    oc.lr = cfg->lr;
    oc.eps = 1e-8;
    oc.clip_norm = cfg->clip_norm;
    gyro_optim_tensor t = {.name = "policy", .w = p->params, .g = p->grads, .rows = n_params,
                           .cols = 1, .manifold = GYRO_OPTIM_MANIFOLD_EUCLIDEAN};
    s = gyro_optim_init(&opt, &oc, &t, 1);
    if (s != GYRO_OK) {
        batch_free(&b);
        free(ref);
        free(load);
        free(load_prev);
        free(share);
        return s;
    }
    gyro_rng rng;
    gyro_rng_seed(&rng, sy && sy->rank ? cfg->seed ^ (0xa24baed4963ee407ULL * (uint64_t)sy->rank) : cfg->seed);
    gyro_progress prog;
    gyro_progress_init(&prog, "episodes/sec", lc.quiet);
    const double t0 = gyro_now();
    const clock_t c0 = clock();
    long episodes = 0;
    const gyro_rl_env *env = cfg->env;

    for (int it = 0; it < cfg->iterations && s == GYRO_OK; it++) {
        uint64_t stop = cfg->stop && *cfg->stop;
        if (sy && (s = gyro_sync_allreduce(sy, &stop, 1, GYRO_SYNC_U64, GYRO_SYNC_MAX)) != GYRO_OK) break;
        if (stop) {
            s = gyro_error_set(GYRO_ERR_INTERRUPTED, "rl: interrupted after %d of %d iterations%s%s",
                               it, cfg->iterations, lc.checkpoint ? "; policy saved to " : "",
                               lc.checkpoint ? lc.checkpoint : "");
            break;
        }
        int rows = rollout(&b, p, &lc, &rng, load);
        episodes += b.M;
        double rsum = 0.0;
        for (int m = 0; m < b.M; m++) rsum += b.reward[m];
        s = gyro_grpo_advantages(b.reward, b.reward, lc.n_states, cfg->group, cfg->grpo.adv_eps);
        if (sy) {
            s = gyro_sync_agree(sy, s, NULL);
            if (s == GYRO_OK) s = gyro_sync_allreduce(sy, &rsum, 1, GYRO_SYNC_F64, GYRO_SYNC_SUM);
        }
        if (s != GYRO_OK) break;
        res->batch_reward = rsum / M_all;
        for (int r = 0; r < rows; r++) {
            int m = b.episode[r];
            b.adv[r] = b.reward[m];
            b.w[r] = 1.0 / (M_all * b.len[m]);
        }
        if (cfg->grpo.kl_beta != 0.0) logprobs(b.lp_ref, &b, p, ref, rows);
        for (int e = 0; e < cfg->epochs && s == GYRO_OK; e++) {
            gyro_optim_zero_grad(&opt);
            double loss = 0.0, kl = 0.0, clipf = 0.0;
            for (int base = 0; base < rows; base += p->max_batch) {
                int B = rows - base < p->max_batch ? rows - base : p->max_batch;
                const float *lp = gyro_rl_policy_forward(p, NULL, b.obs + (size_t)base * b.T, B);
                for (int k = 0; k < B; k++) {
                    b.lp[base + k] = lp[(size_t)k * b.A + b.act[base + k]];
                    b.dlp[base + k] = 0.0;
                }
                gyro_grpo_stats st;
                loss += gyro_grpo_loss(b.dlp + base, &st, b.lp + base, b.lp_old + base,
                                       b.lp_ref + base, b.adv + base, b.w + base, &cfg->grpo, B);
                kl += st.kl;
                clipf += st.clip_fraction * B;
                /* d loss / d logits_j = dlogp · (1[j = a] − π_j) */
                for (int k = 0; k < B; k++) {
                    double g = b.dlp[base + k];
                    const float *l = lp + (size_t)k * b.A;
                    float *dz = b.dlogits + (size_t)k * b.A;
                    for (int j = 0; j < b.A; j++)
                        dz[j] = (float)(g * ((j == b.act[base + k]) - exp((double)l[j])));
                }
                gyro_rl_policy_backward(p, b.dlogits, b.obs + (size_t)base * b.T, B,
                                        cfg->balance_alpha * B / rows);
            }
            double all_rows = rows;
            if (sy) {   /* the gradient and figures of the whole batch on every rank */
                double fig[4] = {loss, kl, clipf, all_rows};
                s = gyro_sync_allreduce(sy, p->grads, n_params, GYRO_SYNC_F32, GYRO_SYNC_SUM);
                if (s == GYRO_OK) s = gyro_sync_allreduce(sy, fig, 4, GYRO_SYNC_F64, GYRO_SYNC_SUM);
                if (s != GYRO_OK) break;
                loss = fig[0], kl = fig[1], clipf = fig[2], all_rows = fig[3];
            }
            if (!isfinite(loss)) {
                s = gyro_error_set(GYRO_ERR_NAN, "rl: the GRPO loss is not finite at iteration %d", it + 1);
                break;
            }
            s = gyro_optim_step(&opt, 1.0);
            if (s != GYRO_OK) {
                gyro_error_prefix(s, "rl: iteration %d", it + 1);
                break;
            }
            res->steps++;
            res->loss = loss;
            res->kl = kl;
            res->clip_fraction = all_rows > 0 ? clipf / all_rows : 0.0;
        }
        if (s != GYRO_OK) break;
        if ((it + 1) % cfg->eval_every == 0 || it + 1 == cfg->iterations) {
            double metric, reward;
            gyro_rng erng;
            gyro_rng_seed(&erng, cfg->seed ^ 0x5eed5eed5eedULL);
            s = gyro_rl_evaluate(p, cfg->eval_env ? cfg->eval_env : env, cfg->eval_episodes, cfg->eval_greedy ? NULL : &erng,
                                 &metric, &reward);
            if (s != GYRO_OK) break;
            res->final_metric = metric;
            res->final_reward = reward;
            if (metric < res->best_metric) res->best_metric = metric;
            if (res->steps_to_target < 0 && metric < cfg->target) res->steps_to_target = res->steps;
            if (lc.report) {
                long tot = 0;
                for (int i = 0; i < p->cfg.moe.n_routed; i++) tot += load[i] - load_prev[i];
                for (int i = 0; i < p->cfg.moe.n_routed; i++) {
                    share[i] = tot ? (double)(load[i] - load_prev[i]) / tot : 0.0;
                    load_prev[i] = load[i];
                }
                res->seconds = gyro_now() - t0;
                lc.report(cfg->report_ctx, it + 1, res, share, res->n_experts);
            }
        }
        if (cfg->checkpoint && cfg->checkpoint_every > 0 && (it + 1) % cfg->checkpoint_every == 0 &&
            it + 1 < cfg->iterations) {
            if (lc.checkpoint) s = gyro_rl_policy_save(p, lc.checkpoint);
            if (sy) s = gyro_sync_agree(sy, s, NULL);   /* rank 0's save, told to every rank */
            if (s != GYRO_OK) break;
        }
        double el = gyro_now() - t0;
        gyro_progress_update(&prog, (double)(it + 1) / cfg->iterations, el > 0 ? episodes / el : 0,
                             cfg->lr, res->loss, 0);
    }
    res->seconds = gyro_now() - t0;
    res->cpu_seconds = (double)(clock() - c0) / CLOCKS_PER_SEC;
    gyro_progress_finish(&prog, cfg->iterations ? (double)res->steps / ((double)cfg->iterations * cfg->epochs) : 1.0,
                         res->seconds > 0 ? episodes / res->seconds : 0, cfg->lr, res->loss);
    if (cfg->iterations == 0 && s == GYRO_OK) {
        gyro_rng erng;
        gyro_rng_seed(&erng, cfg->seed ^ 0x5eed5eed5eedULL);
        s = gyro_rl_evaluate(p, cfg->eval_env ? cfg->eval_env : env, cfg->eval_episodes, cfg->eval_greedy ? NULL : &erng,
                             &res->final_metric, &res->final_reward);
        res->best_metric = res->final_metric;
    }
    if ((s == GYRO_OK || s == GYRO_ERR_INTERRUPTED) && lc.checkpoint) {
        gyro_status w = gyro_rl_policy_save(p, lc.checkpoint);
        if (w != GYRO_OK) s = w;
    }
    for (int i = 0; i < res->n_experts; i++) res->expert_load[i] = load[i];
    gyro_optim_free(&opt);
    batch_free(&b);
    free(ref);
    free(load);
    free(load_prev);
    free(share);
    return s;
}

/* composite_train.c — supervised start, batched episodes, GRPO fine-tuning and evaluation of the
 * composite-intent policy (design in composite_train.h). Episodes run in lockstep: every step,
 * the states of all running episodes are encoded into rows of CHUNK sequences and pushed through
 * the transformer together. */
#include "models/rl/composite_train.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/core/progress.h"
#include "models/optim.h"

#define CHUNK 256   /* rows per forward pass */

/* ---- data -------------------------------------------------------------------------------------- */

void gyro_composite_data_free(gyro_composite_data *d)
{
    if (!d) return;
    free(d->ids);
    free(d->len);
    free(d->n_gold);
    free(d->gold);
    memset(d, 0, sizeof *d);
}

gyro_status gyro_composite_data_build(const gyro_composite_policy *p, const gyro_example_set *set,
                                      gyro_composite_data *out)
{
    memset(out, 0, sizeof *out);
    int n = set->n, T = p->max_len;
    out->max_len = T;
    out->ids = malloc(((size_t)n * T + 1) * sizeof *out->ids);
    out->len = malloc(((size_t)n + 1) * sizeof *out->len);
    out->n_gold = malloc(((size_t)n + 1) * sizeof *out->n_gold);
    out->gold = malloc(((size_t)n * GYRO_LABEL_MAX_ATOMS + 1) * sizeof *out->gold);
    gyro_tokenizer *tz = NULL;
    gyro_status s = GYRO_OK;
    if (!out->ids || !out->len || !out->n_gold || !out->gold)
        s = gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    if (!s)
        s = gyro_tokenizer_new(gyro_classifier_normalize_options(p->clf),
                               gyro_classifier_token_unit(p->clf), &tz);
    for (int i = 0; !s && i < n; i++) {
        s = gyro_composite_gold(p, set->label[i], out->gold + (size_t)i * GYRO_LABEL_MAX_ATOMS,
                                &out->n_gold[i]);
        char *const *toks;
        size_t n_toks;
        const char *norm;
        if (!s) s = gyro_tokenizer_run(tz, set->text[i], strlen(set->text[i]), &toks, &n_toks, &norm);
        if (s) {
            s = gyro_error_prefix(s, "record %llu", (unsigned long long)set->line[i]);
            break;
        }
        out->len[i] = gyro_classifier_encode(p->clf, toks, n_toks, out->ids + (size_t)i * T, T);
    }
    gyro_tokenizer_free(tz);
    if (s) gyro_composite_data_free(out);
    else out->n = n;
    return s;
}

/* ---- supervised start ------------------------------------------------------------------------- */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The distinct atoms of the labels of `train`, sorted, into *atoms (n strdup'ed strings, owned
 * by the caller also on error). Errors: a label that does not parse (GYRO_ERR_DATA with its
 * record number), no example (GYRO_ERR_DATA), GYRO_ERR_NOMEM. */
static gyro_status collect_atoms(const gyro_example_set *train, char ***atoms_out, int *n_out)
{
    int n = 0, cap = 0;
    char **atoms = NULL;
    gyro_status s = GYRO_OK;
    for (int i = 0; !s && i < train->n; i++) {
        gyro_label l;
        s = gyro_label_parse(train->label[i], &l);
        if (s) {
            s = gyro_error_prefix(s, "record %llu", (unsigned long long)train->line[i]);
            break;
        }
        for (int a = 0; !s && a < l.n_atoms; a++) {
            int seen = 0;
            for (int j = 0; j < n && !seen; j++) seen = !strcmp(atoms[j], l.atoms[a]);
            if (seen) continue;
            if (n == cap) {
                char **t = realloc(atoms, (size_t)(cap = cap ? 2 * cap : 64) * sizeof *t);
                if (!t) { s = gyro_error_set(GYRO_ERR_NOMEM, "out of memory"); break; }
                atoms = t;
            }
            if (!(atoms[n] = strdup(l.atoms[a]))) s = gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
            else n++;
        }
        gyro_label_free(&l);
    }
    if (!s && n == 0) s = gyro_error_set(GYRO_ERR_DATA, "no training example");
    if (!s) qsort(atoms, (size_t)n, sizeof *atoms, cmp_str);
    *atoms_out = atoms;
    *n_out = n;
    return s;
}

gyro_status gyro_composite_teacher_forced(const gyro_example_set *in, const char *const *atoms,
                                          int n_atoms, gyro_example_set *out, int *skipped)
{
    if (n_atoms > GYRO_COMPOSITE_MAX_MARKS)
        return gyro_error_set(GYRO_ERR_LIMIT, "%d atoms, at most %d", n_atoms, GYRO_COMPOSITE_MAX_MARKS);
    size_t cap = 256;
    char *buf = malloc(cap);
    if (!buf) return gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    gyro_status s = GYRO_OK;
    for (int i = 0; !s && i < in->n; i++) {
        gyro_label l;
        s = gyro_label_parse(in->label[i], &l);
        if (s) {
            s = gyro_error_prefix(s, "record %llu", (unsigned long long)in->line[i]);
            break;
        }
        int rank[GYRO_LABEL_MAX_ATOMS], ok = 1;
        for (int a = 0; a < l.n_atoms; a++) {
            const char *key = l.atoms[a];
            const char **hit = bsearch(&key, atoms, (size_t)n_atoms, sizeof *atoms, cmp_str);
            if (!hit) ok = 0;
            else rank[a] = (int)(hit - (const char **)atoms);
        }
        int n = l.n_atoms < GYRO_COMPOSITE_MAX_STEPS ? l.n_atoms : GYRO_COMPOSITE_MAX_STEPS;
        if (!ok) {
            if (skipped) (*skipped)++;
        } else {
            size_t tl = strlen(in->text[i]), need = tl + 4 * (size_t)n + 1;
            if (need > cap) {
                char *t = realloc(buf, need);
                if (!t) s = gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
                else buf = t, cap = need;
            }
            /* atoms are sorted, so the markers of a prefix are already in rank order */
            for (int t = 0; !s && t <= n; t++) {
                size_t off = 0;
                for (int a = 0; a < t; a++) off += (size_t)gyro_composite_marker(rank[a], buf + off);
                memcpy(buf + off, in->text[i], tl + 1);
                const char *target = t < n ? l.atoms[t]
                                     : n < GYRO_COMPOSITE_MAX_STEPS ? GYRO_COMPOSITE_STOP : NULL;
                if (target) s = gyro_example_set_add(out, buf, target, in->line[i]);
            }
        }
        gyro_label_free(&l);
    }
    free(buf);
    return s;
}

void gyro_composite_supervise_options_init(gyro_train_options *o, gyro_tf_geometry geometry, int dim,
                                           int layers, int heads, int epochs)
{
    gyro_train_options_init(o, geometry);
    o->arch = GYRO_ARCH_TRANSFORMER;   /* the policy is a transformer */
    o->model.dim = dim;
    o->model.n_layers = layers;
    o->model.n_heads = heads;
    o->model.head_dim = heads > 0 ? (dim + heads - 1) / heads : dim;
    o->model.ffn_dim = 2 * dim;
    o->epochs = epochs;
    o->sgdr.t0 = 0;
    o->dev_fraction = 0;
}

/* Seeded split of `in` by utterance: round(fraction · n) utterances (at least 1 when n >= 2) go to
 * *held, the rest to *fit, both in input order. */
static gyro_status holdout(const gyro_example_set *in, double fraction, uint64_t seed,
                           gyro_example_set *fit, gyro_example_set *held)
{
    int n = in->n, k = (int)(fraction * n + 0.5);
    if (k < 1 && n >= 2) k = 1;
    if (k >= n) k = n - 1;
    int *order = malloc(((size_t)n + 1) * sizeof *order);
    unsigned char *out = calloc((size_t)n + 1, 1);
    gyro_status s = order && out ? GYRO_OK : gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    gyro_rng rng;
    gyro_rng_seed(&rng, seed ^ 0x636f6d706f736974ull);   /* "composit": apart from the model's seed */
    for (int i = 0; !s && i < n; i++) order[i] = i;
    for (int i = n - 1; !s && i > 0; i--) {
        int j = (int)gyro_rng_below(&rng, (uint32_t)(i + 1)), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (int i = 0; !s && i < k; i++) out[order[i]] = 1;
    for (int i = 0; !s && i < n; i++)
        s = gyro_example_set_add(out[i] ? held : fit, in->text[i], in->label[i], in->line[i]);
    free(order);
    free(out);
    return s;
}

gyro_status gyro_composite_supervise(const gyro_train_options *opt, const gyro_example_set *train,
                                     const gyro_example_set *dev, gyro_composite_policy **out,
                                     gyro_train_result *res)
{
    *out = NULL;
    if (opt->arch != GYRO_ARCH_TRANSFORMER)
        return gyro_error_set(GYRO_ERR_USAGE, "composite policy: the supervised start trains a transformer "
                              "(arch transformer)");
    int n = 0;
    char **atoms = NULL;
    gyro_status s = collect_atoms(train, &atoms, &n);
    gyro_example_set tf_train = {0}, tf_dev = {0}, fit = {0}, held = {0};
    const gyro_example_set *fit_set = train, *stop_set = dev;
    if (!s && !dev && opt->dev_fraction > 0) {   /* hold out utterances, not states */
        s = holdout(train, opt->dev_fraction, opt->seed, &fit, &held);
        if (!s && held.n > 0 && fit.n > 0) fit_set = &fit, stop_set = &held;
    }
    if (!s) s = gyro_composite_teacher_forced(fit_set, (const char *const *)atoms, n, &tf_train, NULL);
    if (!s && stop_set)
        s = gyro_composite_teacher_forced(stop_set, (const char *const *)atoms, n, &tf_dev, NULL);
    gyro_classifier *clf = NULL;
    if (!s) {
        gyro_train_options o2 = *opt;
        if (!stop_set) o2.dev_fraction = 0;   /* never hold out teacher-forced states */
        s = gyro_train_classifier(&o2, &tf_train, stop_set ? &tf_dev : NULL, &clf, res);
    }
    if (s == GYRO_ERR_INTERRUPTED && clf) {   /* the best model so far comes back too */
        char why[1024];
        snprintf(why, sizeof why, "%s", gyro_error_message());
        s = gyro_composite_policy_wrap(clf, out);
        if (!s) s = gyro_error_set(GYRO_ERR_INTERRUPTED, "supervised start: %s", why);
    } else if (!s) {
        s = gyro_composite_policy_wrap(clf, out);
    }
    gyro_example_set_free(&tf_train);
    gyro_example_set_free(&tf_dev);
    gyro_example_set_free(&fit);
    gyro_example_set_free(&held);
    for (int i = 0; i < n; i++) free(atoms[i]);
    free(atoms);
    return s;
}

static int compact(int32_t *tok, const int *len, int rows, int T);

/* ---- a start from a flat classifier ------------------------------------------------------------ */

gyro_status gyro_composite_from_classifier(const gyro_classifier *flat, const gyro_example_set *train,
                                           uint64_t seed, gyro_composite_policy **out)
{
    *out = NULL;
    if (!gyro_classifier_tf_const(flat))
        return gyro_error_set(GYRO_ERR_USAGE, "the flat classifier is an n-gram model; a composite policy "
                              "starts from a transformer (train it with gyro classify train --arch transformer)");
    int n = 0;
    char **atoms = NULL;
    gyro_status s = collect_atoms(train, &atoms, &n);
    if (!s && n > GYRO_COMPOSITE_MAX_MARKS) s = gyro_error_set(GYRO_ERR_LIMIT, "%d atoms, at most %d", n, GYRO_COMPOSITE_MAX_MARKS);
    /* vocabulary: the flat model's tokens (same ids), then the markers it lacks */
    const gyro_tf_model *ft = gyro_classifier_tf_const(flat);
    int nv = gyro_classifier_vocab_size(flat) - 1, nt = 0;
    const char **vocab = s ? NULL : malloc(((size_t)nv + n + 1) * sizeof *vocab);
    char *marks = s ? NULL : malloc((size_t)n * 4 + 1);
    if (!s && (!vocab || !marks)) s = gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    for (int i = 0; !s && i < nv; i++) vocab[nt++] = gyro_classifier_token(flat, i + 1);
    for (int i = 0; !s && i < n; i++) {
        gyro_composite_marker(i, marks + 4 * i);
        if (gyro_classifier_token_id(flat, marks + 4 * i) == GYRO_CLASSIFIER_UNK) vocab[nt++] = marks + 4 * i;
    }
    gyro_label_set *labels = NULL;
    if (!s) s = gyro_label_set_new(&labels);
    for (int i = 0; !s && i < n; i++) s = gyro_label_set_add(labels, atoms[i], NULL);
    if (!s) s = gyro_label_set_add(labels, GYRO_COMPOSITE_STOP, NULL);
    gyro_classifier *clf = NULL;
    if (!s) {
        s = gyro_classifier_create(&ft->cfg, seed, gyro_classifier_normalize_options(flat), vocab, nt,
                                   labels, &clf);   /* takes the label set over */
        labels = NULL;
    }
    gyro_label_set_free(labels);
    if (!s) {
        gyro_classifier_set_token_unit(clf, gyro_classifier_token_unit(flat));
        /* every tensor of the flat model's shape is copied; the embedding rows of its tokens too;
         * the head (shaped by the classes) and the marker rows keep their fresh values */
        gyro_tf_model *ct = gyro_classifier_tf(clf);
        for (int t = 0; t < ct->n_tensors; t++) {
            const gyro_tf_tensor *X = &ct->tensors[t];
            for (int u = 0; u < ft->n_tensors; u++) {
                const gyro_tf_tensor *Y = &ft->tensors[u];
                if (strcmp(X->name, Y->name) || X->cols != Y->cols) continue;
                if (X->rows == Y->rows)
                    memcpy(ct->params_memory + X->offset, ft->params_memory + Y->offset, X->size * sizeof(float));
                else if (X->offset == (size_t)(ct->params.wte - ct->params_memory) && Y->rows == nv + 1)
                    memcpy(ct->params_memory + X->offset, ft->params_memory + Y->offset, Y->size * sizeof(float));
                break;
            }
        }
    }
    free(vocab);
    free(marks);
    for (int i = 0; i < n; i++) free(atoms[i]);
    free(atoms);
    if (s) {
        gyro_classifier_free(clf);
        return s;
    }
    return gyro_composite_policy_wrap(clf, out);
}

/* ---- supervised training of a policy ----------------------------------------------------------- */

gyro_composite_sft_options gyro_composite_sft_options_default(void)
{
    gyro_composite_sft_options o = {0};
    o.epochs = 20;
    o.batch = 32;
    o.patience = 5;
    o.dev_fraction = 0.1;
    o.optim = gyro_optim_config_default();
    o.sgdr = (gyro_sgdr){.t0 = 0, .t_mult = 1, .min_factor = 0.01};
    o.seed = 1;
    return o;
}

/* Teacher-forced state k of utterance i: gold atoms sorted by rank, the first t emitted. */
typedef struct tf_state {
    int item, t;
} tf_state;

static int by_rank_ctx_cmp(const gyro_composite_policy *p, int a, int b)
{
    return p->rank[a] - p->rank[b];
}

/* The sorted gold atoms of utterance i (ranks ascending); returns the count, −1 when an atom is
 * unknown to the policy. */
static int sorted_gold(const gyro_composite_policy *p, const gyro_composite_data *d, int i, int *g)
{
    int n = d->n_gold[i];
    for (int k = 0; k < n; k++) {
        g[k] = d->gold[(size_t)i * GYRO_LABEL_MAX_ATOMS + k];
        if (g[k] < 0) return -1;
    }
    for (int a = 1; a < n; a++)
        for (int b = a; b > 0 && by_rank_ctx_cmp(p, g[b - 1], g[b]) > 0; b--) {
            int t = g[b];
            g[b] = g[b - 1];
            g[b - 1] = t;
        }
    return n;
}

gyro_status gyro_composite_train_supervised(gyro_composite_policy *p, const gyro_example_set *train,
                                            const gyro_example_set *dev,
                                            const gyro_composite_sft_options *o, gyro_train_result *res)
{
    gyro_train_result R = {0};
    if (o->epochs < 1 || o->batch < 1 || o->batch > CHUNK || o->patience < 0 ||
        !(o->dev_fraction >= 0 && o->dev_fraction < 1))
        return gyro_error_set(GYRO_ERR_USAGE, "supervised training needs epochs >= 1, batch in 1..%d, "
                              "patience >= 0, dev fraction in [0, 1)", CHUNK);
    gyro_example_set fit = {0}, held = {0};
    const gyro_example_set *fit_set = train, *stop_set = dev;
    gyro_status s = GYRO_OK;
    if (!dev && o->dev_fraction > 0) {
        s = holdout(train, o->dev_fraction, o->seed, &fit, &held);
        if (!s && held.n > 0 && fit.n > 0) fit_set = &fit, stop_set = &held;
    }
    gyro_composite_data dt = {0}, dd = {0};
    if (!s) s = gyro_composite_data_build(p, fit_set, &dt);
    if (!s && stop_set) s = gyro_composite_data_build(p, stop_set, &dd);
    gyro_tf_model *tf = gyro_classifier_tf(p->clf);
    const int K = p->n_actions, T = p->max_len, B = o->batch;
    /* the states */
    int ns = 0;
    tf_state *st = NULL;
    if (!s) {
        st = malloc(((size_t)dt.n * (GYRO_COMPOSITE_MAX_STEPS + 1) + 1) * sizeof *st);
        if (!st) s = gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    }
    for (int i = 0; !s && i < dt.n; i++) {
        int g[GYRO_LABEL_MAX_ATOMS], n = sorted_gold(p, &dt, i, g);
        if (n < 1) continue;   /* an atom the policy lacks */
        int last = n < GYRO_COMPOSITE_MAX_STEPS ? n : GYRO_COMPOSITE_MAX_STEPS - 1;
        for (int t = 0; t <= last; t++) st[ns++] = (tf_state){i, t};
    }
    if (!s && ns == 0) s = gyro_error_set(GYRO_ERR_DATA, "no training state");
    float *grad_block = s ? NULL : calloc(tf->n_params, sizeof *grad_block);
    float *best = s ? NULL : malloc(tf->n_params * sizeof *best);
    float *dlogits = s ? NULL : malloc((size_t)B * K * sizeof *dlogits);
    int32_t *tok = s ? NULL : malloc((size_t)B * T * sizeof *tok);
    int *len = s ? NULL : malloc((size_t)B * sizeof *len), *tgt = s ? NULL : malloc((size_t)B * sizeof *tgt);
    unsigned char *valid = s ? NULL : malloc((size_t)B * K);
    double *logp = s ? NULL : malloc((size_t)K * sizeof *logp);
    gyro_tf_acts *acts = NULL;
    gyro_optim opt = {0};
    int opt_ready = 0;
    if (!s && (!grad_block || !best || !dlogits || !tok || !len || !tgt || !valid || !logp))
        s = gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    if (!s) s = gyro_tf_acts_new(tf, B, T, 1, &acts);
    if (!s) {
        gyro_tf_params grads;
        gyro_tf_carve(&tf->cfg, grad_block, &grads);
        gyro_optim_tensor ot[GYRO_TF_MAX_TENSORS];
        for (int i = 0; i < tf->n_tensors; i++) {
            const gyro_tf_tensor *X = &tf->tensors[i];
            ot[i] = (gyro_optim_tensor){
                .name = X->name, .w = tf->params_memory + X->offset, .g = grad_block + X->offset,
                .rows = (size_t)X->rows, .cols = (size_t)X->cols,
                .manifold = X->manifold == GYRO_TF_MANIFOLD_BALL      ? GYRO_OPTIM_MANIFOLD_POINCARE
                            : X->manifold == GYRO_TF_MANIFOLD_LORENTZ ? GYRO_OPTIM_MANIFOLD_LORENTZ
                                                                      : GYRO_OPTIM_MANIFOLD_EUCLIDEAN,
                .c = tf->cfg.curvature};
        }
        s = gyro_optim_init(&opt, &o->optim, ot, tf->n_tensors);
        opt_ready = !s;
    }
    gyro_tf_params grads;
    if (!s) gyro_tf_carve(&tf->cfg, grad_block, &grads);
    gyro_rng rng, drop;
    gyro_rng_seed(&rng, o->seed ^ 0x5eedda7aULL);
    gyro_rng_seed(&drop, o->seed ^ 0xd209u);
    double t0 = gyro_now(), best_ex = -1;
    int since = 0, steps_per_epoch = (ns + B - 1) / B;
    for (int ep = 0; !s && ep < o->epochs; ep++) {
        for (int i = ns - 1; i > 0; i--) {
            int j = (int)gyro_rng_below(&rng, (uint32_t)(i + 1));
            tf_state t = st[i];
            st[i] = st[j];
            st[j] = t;
        }
        double loss = 0;
        for (int b0 = 0, step = 0; !s && b0 < ns; b0 += B, step++) {
            if (o->stop && *o->stop) {
                s = gyro_error_set(GYRO_ERR_INTERRUPTED, "interrupted in epoch %d", ep + 1);
                break;
            }
            int rows = ns - b0 < B ? ns - b0 : B;
            for (int r = 0; r < rows; r++) {
                const tf_state *x = &st[b0 + r];
                int g[GYRO_LABEL_MAX_ATOMS], n = sorted_gold(p, &dt, x->item, g);
                gyro_composite_episode e;
                gyro_composite_episode_reset(&e, g, n);
                for (int k = 0; k < x->t; k++) gyro_composite_step(&e, p->stop, g[k]);
                tgt[r] = x->t < n ? g[x->t] : p->stop;
                len[r] = gyro_composite_encode(p, &e, dt.ids + (size_t)x->item * dt.max_len, dt.len[x->item],
                                               tok + (size_t)r * T);
                gyro_composite_valid(&e, p->stop, K, valid + (size_t)r * K);
            }
            int Tc = compact(tok, len, rows, T);
            s = gyro_tf_forward(tf, acts, tok, len, rows, Tc, tf->cfg.dropout > 0 ? &drop : NULL);
            if (s) break;
            const float *logits = gyro_tf_logits(acts);
            memset(dlogits, 0, (size_t)rows * K * sizeof *dlogits);
            for (int r = 0; r < rows; r++) {   /* cross-entropy under the masked softmax */
                gyro_composite_log_softmax(logp, logits + (size_t)r * K, valid + (size_t)r * K, K);
                loss -= logp[tgt[r]];
                gyro_composite_log_softmax_backward(dlogits + (size_t)r * K, logp, valid + (size_t)r * K, K,
                                                    tgt[r], -1.0 / rows);
            }
            if (!isfinite(loss)) {
                s = gyro_error_set(GYRO_ERR_NAN, "supervised loss is not finite");
                break;
            }
            gyro_optim_zero_grad(&opt);
            gyro_tf_backward(tf, acts, &grads, dlogits);
            double f = gyro_sgdr_factor(&o->sgdr, ep + (double)step / steps_per_epoch, NULL);
            s = gyro_optim_step(&opt, f);
            R.steps++;
        }
        if (s) break;
        R.epochs = ep + 1;
        R.train_loss = loss / ns;
        double ex = NAN, f1 = NAN;
        if (stop_set) s = gyro_composite_evaluate(p, &dd, &ex, &f1);
        if (s) break;
        if (o->log)
            fprintf(o->log, "epoch %d: train loss %.4f, held-out exact-set %.4f, F1 %.4f, %.1f s\n", ep + 1,
                    R.train_loss, ex, f1, gyro_now() - t0);
        if (stop_set) {
            if (ex > best_ex) {
                best_ex = ex, since = 0, R.best_epoch = ep + 1;
                memcpy(best, tf->params_memory, tf->n_params * sizeof *best);
            } else if (o->patience > 0 && ++since >= o->patience) {
                break;
            }
        }
    }
    if ((!s || s == GYRO_ERR_INTERRUPTED) && stop_set && best_ex >= 0)   /* the best held-out epoch */
        memcpy(tf->params_memory, best, tf->n_params * sizeof *best);
    R.best_dev_accuracy = stop_set ? best_ex : NAN;
    R.seconds = gyro_now() - t0;
    R.n_train = ns;
    R.n_dev = stop_set ? dd.n : 0;
    if (res) *res = R;
    if (opt_ready) gyro_optim_free(&opt);
    gyro_tf_acts_free(acts);
    free(grad_block); free(best); free(dlogits); free(tok); free(len); free(tgt); free(valid); free(logp); free(st);
    gyro_composite_data_free(&dt);
    gyro_composite_data_free(&dd);
    gyro_example_set_free(&fit);
    gyro_example_set_free(&held);
    return s;
}

/* ---- episodes in lockstep ----------------------------------------------------------------------- */

/* Every step of the sampled episodes of one iteration, in the order they were taken. */
typedef struct steps {
    int n, cap, K, T;
    int32_t *ids;            /* (cap, T) */
    int *len, *act, *traj;   /* (cap) */
    unsigned char *valid;    /* (cap, K) */
    double *logp_old, *logp_ref, *adv, *w, *logp, *dlogp;   /* (cap) */
} steps;

typedef struct runner {
    int K, T;
    gyro_tf_acts *acts, *ref_acts;
    int32_t *tok;            /* (CHUNK, T) */
    int len[CHUNK], who[CHUNK];
    double *logp;            /* (K) */
    unsigned char *valid;    /* (K) */
} runner;

static void runner_free(runner *r)
{
    gyro_tf_acts_free(r->acts);
    gyro_tf_acts_free(r->ref_acts);
    free(r->tok);
    free(r->logp);
    free(r->valid);
}

static gyro_status runner_init(runner *r, const gyro_composite_policy *p,
                               const gyro_composite_policy *ref, int training)
{
    memset(r, 0, sizeof *r);
    r->K = p->n_actions;
    r->T = p->max_len;
    gyro_status s = gyro_tf_acts_new(gyro_classifier_tf_const(p->clf), CHUNK, r->T, training, &r->acts);
    if (!s && ref)
        s = gyro_tf_acts_new(gyro_classifier_tf_const(ref->clf), CHUNK, r->T, 0, &r->ref_acts);
    r->tok = malloc((size_t)CHUNK * r->T * sizeof *r->tok);
    r->logp = malloc((size_t)r->K * sizeof *r->logp);
    r->valid = malloc((size_t)r->K);
    if (!s && (!r->tok || !r->logp || !r->valid)) s = gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    if (s) runner_free(r);
    return s;
}

/* Repack rows of stride T into rows of stride Tc = the longest length (rows only move towards the
 * start, in order, so the copy is in place); the transformer's work follows Tc. Returns Tc. */
static int compact(int32_t *tok, const int *len, int rows, int T)
{
    int Tc = 1;
    for (int i = 0; i < rows; i++)
        if (len[i] > Tc) Tc = len[i];
    if (Tc < T)
        for (int i = 1; i < rows; i++)
            memmove(tok + (size_t)i * Tc, tok + (size_t)i * T, (size_t)len[i] * sizeof *tok);
    return Tc;
}

/* Run episodes eps[0..n_eps) to the end; episode e reads utterance items[e / group] of d.
 * rng NULL: greedy; else sampled, and with rec every step is recorded (with ref's log-prob). */
static gyro_status run_episodes(const gyro_composite_policy *p, const gyro_composite_policy *ref,
                                runner *r, const gyro_composite_data *d, const int *items,
                                int group, gyro_composite_episode *eps, int n_eps, gyro_rng *rng,
                                steps *rec)
{
    const gyro_tf_model *tf = gyro_classifier_tf_const(p->clf);
    int K = r->K, T = r->T;
    for (;;) {
        int rows = 0, any = 0;
        for (int e = 0; e <= n_eps; e++) {
            if (e < n_eps && !eps[e].done) {
                int it = items[e / group];
                r->len[rows] = gyro_composite_encode(p, &eps[e], d->ids + (size_t)it * d->max_len,
                                                     d->len[it], r->tok + (size_t)rows * T);
                r->who[rows++] = e;
                any = 1;
            }
            if (rows == CHUNK || (e == n_eps && rows > 0)) {
                int Tc = compact(r->tok, r->len, rows, T);
                gyro_status s = gyro_tf_forward(tf, r->acts, r->tok, r->len, rows, Tc, NULL);
                if (!s && rec)
                    s = gyro_tf_forward(gyro_classifier_tf_const(ref->clf), r->ref_acts, r->tok,
                                        r->len, rows, Tc, NULL);
                if (s) return s;
                const float *logits = gyro_tf_logits(r->acts);
                for (int i = 0; i < rows; i++) {
                    gyro_composite_episode *ep = &eps[r->who[i]];
                    gyro_composite_valid(ep, p->stop, K, r->valid);
                    gyro_composite_log_softmax(r->logp, logits + (size_t)i * K, r->valid, K);
                    int a = -1;
                    if (!rng) {
                        for (int k = 0; k < K; k++)
                            if (r->valid[k] && (a < 0 || r->logp[k] > r->logp[a])) a = k;
                    } else {
                        double u = gyro_rng_uniform(rng), acc = 0.0;
                        for (int k = 0; k < K; k++)
                            if (r->valid[k]) {
                                a = k;
                                acc += exp(r->logp[k]);
                                if (u < acc) break;
                            }
                    }
                    if (rec) {
                        int j = rec->n++;
                        memcpy(rec->ids + (size_t)j * T, r->tok + (size_t)i * Tc, (size_t)r->len[i] * sizeof *rec->ids);
                        memcpy(rec->valid + (size_t)j * K, r->valid, (size_t)K);
                        rec->len[j] = r->len[i];
                        rec->act[j] = a;
                        rec->traj[j] = r->who[i];
                        rec->logp_old[j] = r->logp[a];
                        double *lr = r->logp;   /* reuse: the policy's row is no longer needed */
                        gyro_composite_log_softmax(lr, gyro_tf_logits(r->ref_acts) + (size_t)i * K, r->valid, K);
                        rec->logp_ref[j] = lr[a];
                    }
                    gyro_composite_step(ep, p->stop, a);
                }
                rows = 0;
            }
        }
        if (!any) return GYRO_OK;
    }
}

gyro_status gyro_composite_evaluate(const gyro_composite_policy *p, const gyro_composite_data *d,
                                    double *exact, double *f1)
{
    runner r;
    gyro_status s = runner_init(&r, p, NULL, 0);
    if (s) return s;
    int *items = malloc(((size_t)d->n + 1) * sizeof *items);
    gyro_composite_episode *eps = malloc(((size_t)d->n + 1) * sizeof *eps);
    if (!items || !eps) s = gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    for (int i = 0; !s && i < d->n; i++) {
        items[i] = i;
        gyro_composite_episode_reset(&eps[i], d->gold + (size_t)i * GYRO_LABEL_MAX_ATOMS, d->n_gold[i]);
    }
    if (!s) s = run_episodes(p, NULL, &r, d, items, 1, eps, d->n, NULL, NULL);
    double ex = 0, f = 0;
    for (int i = 0; !s && i < d->n; i++) {
        double rw = gyro_composite_reward(&eps[i]);
        f += rw;
        ex += rw == 1.0;
    }
    if (exact) *exact = d->n ? ex / d->n : NAN;
    if (f1) *f1 = d->n ? f / d->n : NAN;
    free(items);
    free(eps);
    runner_free(&r);
    return s;
}

gyro_status gyro_composite_greedy_trace(const gyro_composite_policy *p, const gyro_composite_data *d,
                                        int i, gyro_composite_trace *out)
{
    memset(out, 0, sizeof *out);
    if (i < 0 || i >= d->n) return gyro_error_set(GYRO_ERR_USAGE, "utterance %d out of range", i);
    const gyro_tf_model *tf = gyro_classifier_tf_const(p->clf);
    int K = p->n_actions, T = p->max_len;
    gyro_tf_acts *acts = NULL;
    int32_t *tok = malloc((size_t)T * sizeof *tok);
    double *logp = malloc((size_t)K * sizeof *logp);
    unsigned char *valid = malloc((size_t)K);
    gyro_status s = tok && logp && valid ? gyro_tf_acts_new(tf, 1, T, 0, &acts)
                                         : gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    gyro_composite_episode_reset(&out->ep, d->gold + (size_t)i * GYRO_LABEL_MAX_ATOMS, d->n_gold[i]);
    while (!s && !out->ep.done) {
        int len = gyro_composite_encode(p, &out->ep, d->ids + (size_t)i * d->max_len, d->len[i], tok);
        s = gyro_tf_forward(tf, acts, tok, &len, 1, len, NULL);
        if (s) break;
        gyro_composite_valid(&out->ep, p->stop, K, valid);
        gyro_composite_log_softmax(logp, gyro_tf_logits(acts), valid, K);
        int a = -1;
        for (int k = 0; k < K; k++)
            if (valid[k] && (a < 0 || logp[k] > logp[a])) a = k;
        out->action[out->n_steps] = a;
        out->prob[out->n_steps++] = exp(logp[a]);
        gyro_composite_step(&out->ep, p->stop, a);
    }
    gyro_tf_acts_free(acts);
    free(tok);
    free(logp);
    free(valid);
    return s;
}

/* ---- beam search ------------------------------------------------------------------------------- */

typedef struct beam {
    gyro_composite_episode ep;
    double score;            /* Σ log π(a_t | s_t) over the steps taken, STOP included */
} beam;

/* 1 when two episodes have emitted the same set (order aside) and are both running or both done:
 * then every continuation scores the same from both, and only the better one is kept. */
static int same_state(const gyro_composite_episode *a, const gyro_composite_episode *b)
{
    if (a->n_emitted != b->n_emitted || a->done != b->done) return 0;
    for (int i = 0; i < a->n_emitted; i++) {
        int hit = 0;
        for (int j = 0; j < b->n_emitted && !hit; j++) hit = a->emitted[i] == b->emitted[j];
        if (!hit) return 0;
    }
    return 1;
}

/* Insert candidate c into the list top[0..*n) (best first, at most W), merging equal states. */
static void beam_offer(beam *top, int *n, int W, const beam *c)
{
    for (int i = 0; i < *n; i++)
        if (same_state(&top[i].ep, &c->ep)) {
            if (c->score <= top[i].score) return;
            for (int j = i; j + 1 < *n; j++) top[j] = top[j + 1];   /* drop it, reinsert below */
            (*n)--;
            break;
        }
    int at = *n;
    while (at > 0 && top[at - 1].score < c->score) at--;
    if (at >= W) return;
    int last = *n < W ? *n : W - 1;
    for (int j = last; j > at; j--) top[j] = top[j - 1];
    top[at] = *c;
    if (*n < W) (*n)++;
}

gyro_status gyro_composite_beam_decode(const gyro_composite_policy *p, const gyro_composite_data *d,
                                       int width, int *pred, int *n_pred, double *score)
{
    if (width < 1 || width > GYRO_COMPOSITE_MAX_BEAM)
        return gyro_error_set(GYRO_ERR_USAGE, "beam width %d outside 1..%d", width, GYRO_COMPOSITE_MAX_BEAM);
    const gyro_tf_model *tf = gyro_classifier_tf_const(p->clf);
    const int K = p->n_actions, T = p->max_len, W = width;
    const int U = CHUNK / W > 0 ? CHUNK / W : 1;   /* utterances decoded together */
    runner r;
    gyro_status s = runner_init(&r, p, NULL, 0);
    if (s) return s;
    beam *cur = malloc((size_t)U * W * sizeof *cur), *next = malloc((size_t)U * W * sizeof *next);
    int *n_cur = malloc((size_t)U * sizeof *n_cur), *n_next = malloc((size_t)U * sizeof *n_next);
    int *row_u = malloc((size_t)CHUNK * sizeof *row_u), *row_b = malloc((size_t)CHUNK * sizeof *row_b);
    if (!cur || !next || !n_cur || !n_next || !row_u || !row_b)
        s = gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    for (int u0 = 0; !s && u0 < d->n; u0 += U) {
        int nu = d->n - u0 < U ? d->n - u0 : U;
        for (int u = 0; u < nu; u++) {
            const int i = u0 + u;
            gyro_composite_episode_reset(&cur[u * W].ep, d->gold + (size_t)i * GYRO_LABEL_MAX_ATOMS, d->n_gold[i]);
            cur[u * W].score = 0.0;
            n_cur[u] = 1;
        }
        for (;;) {
            /* the running beams of every utterance, one row each (at most U·W <= CHUNK rows) */
            int rows = 0;
            for (int u = 0; u < nu; u++)
                for (int b = 0; b < n_cur[u]; b++) {
                    if (cur[u * W + b].ep.done) continue;
                    const int i = u0 + u;
                    r.len[rows] = gyro_composite_encode(p, &cur[u * W + b].ep, d->ids + (size_t)i * d->max_len,
                                                        d->len[i], r.tok + (size_t)rows * T);
                    row_u[rows] = u;
                    row_b[rows++] = b;
                }
            if (rows == 0) break;
            int Tc = compact(r.tok, r.len, rows, T);
            s = gyro_tf_forward(tf, r.acts, r.tok, r.len, rows, Tc, NULL);
            if (s) break;
            const float *logits = gyro_tf_logits(r.acts);
            for (int u = 0; u < nu; u++) {   /* finished beams compete with the expansions */
                n_next[u] = 0;
                for (int b = 0; b < n_cur[u]; b++)
                    if (cur[u * W + b].ep.done) beam_offer(next + u * W, &n_next[u], W, &cur[u * W + b]);
            }
            for (int q = 0; q < rows; q++) {
                const int u = row_u[q];
                const beam *bm = &cur[u * W + row_b[q]];
                gyro_composite_valid(&bm->ep, p->stop, K, r.valid);
                gyro_composite_log_softmax(r.logp, logits + (size_t)q * K, r.valid, K);
                for (int k = 0; k < K; k++) {
                    if (!r.valid[k]) continue;
                    beam c = *bm;
                    c.score += r.logp[k];
                    gyro_composite_step(&c.ep, p->stop, k);
                    beam_offer(next + u * W, &n_next[u], W, &c);
                }
            }
            beam *t = cur;
            cur = next, next = t;
            int *tn = n_cur;
            n_cur = n_next, n_next = tn;
        }
        for (int u = 0; !s && u < nu; u++) {   /* the best beam is first; all are done now */
            const beam *bm = &cur[u * W];
            const int i = u0 + u;
            n_pred[i] = bm->ep.n_emitted;
            for (int k = 0; k < bm->ep.n_emitted; k++) pred[(size_t)i * GYRO_COMPOSITE_MAX_STEPS + k] = bm->ep.emitted[k];
            if (score) score[i] = bm->score;
        }
    }
    free(cur);
    free(next);
    free(n_cur);
    free(n_next);
    free(row_u);
    free(row_b);
    runner_free(&r);
    return s;
}

gyro_status gyro_composite_score(const gyro_composite_policy *p, const gyro_composite_data *d, int width,
                                 gyro_composite_scores *out)
{
    memset(out, 0, sizeof *out);
    int *pred = malloc(((size_t)d->n * GYRO_COMPOSITE_MAX_STEPS + 1) * sizeof *pred);
    int *n_pred = malloc(((size_t)d->n + 1) * sizeof *n_pred);
    gyro_status s = pred && n_pred ? gyro_composite_beam_decode(p, d, width, pred, n_pred, NULL)
                                   : gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    double f = 0;
    for (int i = 0; !s && i < d->n; i++) {
        const int *g = d->gold + (size_t)i * GYRO_LABEL_MAX_ATOMS, *q = pred + (size_t)i * GYRO_COMPOSITE_MAX_STEPS;
        double f1 = gyro_composite_f1(g, d->n_gold[i], q, n_pred[i]);
        f += f1;
        out->exact += f1 == 1.0;
        int hit = 0;
        for (int a = 0; a < n_pred[i]; a++)
            for (int b = 0; b < d->n_gold[i]; b++)
                if (g[b] >= 0 && g[b] == q[a]) {
                    hit++;
                    break;
                }
        out->tp += hit;
        out->fp += n_pred[i] - hit;
        out->fn += d->n_gold[i] - hit;
        if (d->n_gold[i] > 1) out->n_composite++, out->exact_composite += f1 == 1.0;
    }
    if (!s) {
        out->n = d->n;
        out->exact = d->n ? out->exact / d->n : NAN;
        out->mean_f1 = d->n ? f / d->n : NAN;
        out->exact_composite = out->n_composite ? out->exact_composite / out->n_composite : NAN;
        out->atom_p = out->tp + out->fp ? (double)out->tp / (double)(out->tp + out->fp) : 0.0;
        out->atom_r = out->tp + out->fn ? (double)out->tp / (double)(out->tp + out->fn) : 0.0;
        out->atom_f1 = out->atom_p + out->atom_r > 0
                           ? 2 * out->atom_p * out->atom_r / (out->atom_p + out->atom_r) : 0.0;
    }
    free(pred);
    free(n_pred);
    return s;
}

/* ---- GRPO -------------------------------------------------------------------------------------- */

gyro_composite_grpo_options gyro_composite_grpo_options_default(void)
{
    gyro_composite_grpo_options o = {0};
    o.grpo = gyro_grpo_config_default();
    o.iterations = 100;
    o.batch = 16;
    o.group = 8;
    o.epochs = 2;
    o.lr = 1e-4;
    o.ball_lr = 0.005;
    o.seed = 1;
    o.eval_every = 10;
    return o;
}

static void steps_free(steps *st)
{
    free(st->ids); free(st->len); free(st->act); free(st->traj); free(st->valid);
    free(st->logp_old); free(st->logp_ref); free(st->adv); free(st->w); free(st->logp); free(st->dlogp);
}

static gyro_status steps_init(steps *st, int cap, int K, int T)
{
    memset(st, 0, sizeof *st);
    st->cap = cap, st->K = K, st->T = T;
    st->ids = malloc((size_t)cap * T * sizeof *st->ids);
    st->valid = malloc((size_t)cap * K);
    st->len = malloc((size_t)cap * sizeof(int));
    st->act = malloc((size_t)cap * sizeof(int));
    st->traj = malloc((size_t)cap * sizeof(int));
    double **dd[] = {&st->logp_old, &st->logp_ref, &st->adv, &st->w, &st->logp, &st->dlogp};
    int ok = st->ids && st->valid && st->len && st->act && st->traj;
    for (size_t i = 0; i < sizeof dd / sizeof *dd; i++) ok &= !!(*dd[i] = malloc((size_t)cap * sizeof(double)));
    if (!ok) {
        steps_free(st);
        memset(st, 0, sizeof *st);
        return gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    }
    return GYRO_OK;
}

/* One gradient step over the recorded samples; returns the loss (NaN when not finite). */
static gyro_status grpo_step(gyro_composite_policy *p, runner *r, steps *st, float *dlogits,
                             const gyro_tf_params *grads, gyro_optim *opt,
                             const gyro_grpo_config *cfg, gyro_grpo_stats *total, double *dev_mean,
                             double *dev_max)
{
    gyro_tf_model *tf = gyro_classifier_tf(p->clf);
    int K = st->K, T = st->T;
    gyro_optim_zero_grad(opt);
    memset(total, 0, sizeof *total);
    for (int j0 = 0; j0 < st->n; j0 += CHUNK) {
        int rows = st->n - j0 < CHUNK ? st->n - j0 : CHUNK;
        for (int i = 0; i < rows; i++)
            memcpy(r->tok + (size_t)i * T, st->ids + (size_t)(j0 + i) * T, (size_t)st->len[j0 + i] * sizeof *r->tok);
        int Tc = compact(r->tok, st->len + j0, rows, T);
        gyro_status s = gyro_tf_forward(tf, r->acts, r->tok, st->len + j0, rows, Tc, NULL);
        if (s) return s;
        const float *logits = gyro_tf_logits(r->acts);
        for (int i = 0; i < rows; i++) {
            int j = j0 + i;
            gyro_composite_log_softmax(r->logp, logits + (size_t)i * K, st->valid + (size_t)j * K, K);
            st->logp[j] = r->logp[st->act[j]];
            st->dlogp[j] = 0.0;
        }
        gyro_grpo_stats cs;
        double loss = gyro_grpo_loss(st->dlogp + j0, &cs, st->logp + j0, st->logp_old + j0,
                                     cfg->kl_beta > 0 ? st->logp_ref + j0 : NULL, st->adv + j0,
                                     st->w + j0, cfg, rows);
        if (!isfinite(loss)) return gyro_error_set(GYRO_ERR_NAN, "GRPO loss is not finite");
        total->objective += cs.objective;
        total->kl += cs.kl;
        total->clip_fraction += cs.clip_fraction * rows;
        memset(dlogits, 0, (size_t)rows * K * sizeof *dlogits);
        for (int i = 0; i < rows; i++) {
            int j = j0 + i;
            gyro_composite_log_softmax(r->logp, logits + (size_t)i * K, st->valid + (size_t)j * K, K);
            gyro_composite_log_softmax_backward(dlogits + (size_t)i * K, r->logp,
                                                st->valid + (size_t)j * K, K, st->act[j], st->dlogp[j]);
        }
        gyro_tf_backward(tf, r->acts, grads, dlogits);
    }
    total->clip_fraction /= st->n ? st->n : 1;
    /* how far this step's policy has moved from the sampling one: |ρ − 1| per sample */
    double dm = 0.0, dx = 0.0;
    for (int j = 0; j < st->n; j++) {
        double dv = fabs(exp(st->logp[j] - st->logp_old[j]) - 1.0);
        dm += dv;
        if (dv > dx) dx = dv;
    }
    *dev_mean = st->n ? dm / st->n : 0.0;
    *dev_max = dx;
    return gyro_optim_step(opt, 1.0);
}

gyro_status gyro_composite_grpo(gyro_composite_policy *p, const gyro_composite_policy *ref,
                                const gyro_composite_data *train, const gyro_composite_data *dev,
                                const gyro_composite_grpo_options *o,
                                gyro_composite_grpo_result *res)
{
    gyro_composite_grpo_result R = {0};
    if (o->iterations < 0 || o->batch < 1 || o->group < 2 || o->epochs < 1 || !(o->lr > 0) ||
        !(o->ball_lr > 0))
        return gyro_error_set(GYRO_ERR_USAGE, "GRPO needs iterations >= 0, batch >= 1, group >= 2, "
                              "epochs >= 1 and positive learning rates");
    if (ref->n_actions != p->n_actions || ref->max_len != p->max_len ||
        gyro_classifier_vocab_size(ref->clf) != gyro_classifier_vocab_size(p->clf))
        return gyro_error_set(GYRO_ERR_USAGE, "the reference policy has other actions or vocabulary");
    if (train->n < 1) return gyro_error_set(GYRO_ERR_DATA, "no training utterance");
    gyro_tf_model *tf = gyro_classifier_tf(p->clf);
    int K = p->n_actions, T = p->max_len, B = o->batch, G = o->group, E = B * G;
    runner r;
    gyro_status s = runner_init(&r, p, ref, 1);
    if (s) return s;
    steps st;
    s = steps_init(&st, E * GYRO_COMPOSITE_MAX_STEPS, K, T);
    float *grad_block = calloc(tf->n_params, sizeof *grad_block);
    float *dlogits = malloc((size_t)CHUNK * K * sizeof *dlogits);
    int *order = malloc((size_t)train->n * sizeof *order), *items = malloc((size_t)B * sizeof *items);
    double *rewards = malloc((size_t)E * sizeof *rewards), *adv = malloc((size_t)E * sizeof *adv);
    int *tlen = calloc((size_t)E, sizeof *tlen);
    gyro_composite_episode *eps = malloc((size_t)E * sizeof *eps);
    gyro_optim opt = {0};
    int opt_ready = 0;
    if (!s && (!grad_block || !dlogits || !order || !items || !rewards || !adv || !tlen || !eps))
        s = gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    gyro_tf_params grads;
    if (!s) {
        gyro_tf_carve(&tf->cfg, grad_block, &grads);
        gyro_optim_tensor ot[GYRO_TF_MAX_TENSORS];
        for (int i = 0; i < tf->n_tensors; i++) {
            const gyro_tf_tensor *X = &tf->tensors[i];
            ot[i] = (gyro_optim_tensor){
                .name = X->name, .w = tf->params_memory + X->offset, .g = grad_block + X->offset,
                .rows = (size_t)X->rows, .cols = (size_t)X->cols,
                .manifold = X->manifold == GYRO_TF_MANIFOLD_BALL ? GYRO_OPTIM_MANIFOLD_POINCARE
                                                                 : GYRO_OPTIM_MANIFOLD_EUCLIDEAN,
                .c = tf->cfg.curvature};
        }
        gyro_optim_config oc = gyro_optim_config_default();
        oc.kind = GYRO_OPTIM_ADAM;
        oc.lr = o->lr;
        oc.ball_lr = o->ball_lr;
        oc.clip_norm = 1.0;
        s = gyro_optim_init(&opt, &oc, ot, tf->n_tensors);
        opt_ready = !s;
    }
    gyro_rng rng;
    gyro_rng_seed(&rng, o->seed);
    for (int i = 0; !s && i < train->n; i++) order[i] = i;
    int pos = train->n;   /* position in the shuffled order; reshuffle when it runs out */
    gyro_progress prog;
    gyro_progress_init(&prog, "episodes/sec", o->quiet);
    double t0 = gyro_now();
    gyro_grpo_stats gs = {0};
    for (int it = 0; !s && it < o->iterations; it++) {
        if (o->stop && *o->stop) {
            s = gyro_error_set(GYRO_ERR_INTERRUPTED, "interrupted after %d iterations", it);
            break;
        }
        for (int b = 0; b < B; b++) {
            if (pos == train->n) {
                for (int i = train->n - 1; i > 0; i--) {
                    int j = (int)gyro_rng_below(&rng, (uint32_t)(i + 1)), t = order[i];
                    order[i] = order[j];
                    order[j] = t;
                }
                pos = 0;
            }
            items[b] = order[pos++];
        }
        for (int e = 0; e < E; e++) {
            int u = items[e / G];
            gyro_composite_episode_reset(&eps[e], train->gold + (size_t)u * GYRO_LABEL_MAX_ATOMS, train->n_gold[u]);
        }
        st.n = 0;
        s = run_episodes(p, ref, &r, train, items, G, eps, E, &rng, &st);
        if (s) break;
        double mean_r = 0;
        for (int e = 0; e < E; e++) mean_r += (rewards[e] = gyro_composite_reward(&eps[e])) / E;
        if (it == 0) R.first_reward = mean_r;
        R.last_reward = mean_r;
        s = gyro_grpo_advantages(adv, rewards, B, G, o->grpo.adv_eps);
        if (s) break;
        memset(tlen, 0, (size_t)E * sizeof *tlen);
        for (int j = 0; j < st.n; j++) tlen[st.traj[j]]++;
        for (int j = 0; j < st.n; j++) {   /* w = 1 / (B·G·len), as gyro_grpo_weights */
            st.adv[j] = adv[st.traj[j]];
            st.w[j] = 1.0 / ((double)E * tlen[st.traj[j]]);
        }
        double dev_mean = 0, dev_max = 0;
        for (int ep = 0; !s && ep < o->epochs; ep++)
            s = grpo_step(p, &r, &st, dlogits, &grads, &opt, &o->grpo, &gs, &dev_mean, &dev_max);
        if (s) break;
        R.iterations = it + 1;
        R.kl = gs.kl;
        R.clip_fraction = gs.clip_fraction;
        R.ratio_dev_mean = dev_mean;
        R.ratio_dev_max = dev_max;
        double el = gyro_now() - t0;
        gyro_progress_update(&prog, (double)(it + 1) / o->iterations, (double)(it + 1) * E / (el > 0 ? el : 1e-9),
                             o->lr, -gs.objective, 0);
        if (o->log && dev && o->eval_every > 0 && (it + 1) % o->eval_every == 0) {
            double ex, f1;
            s = gyro_composite_evaluate(p, dev, &ex, &f1);
            if (!s)
                fprintf(o->log, "iteration %d  sampled reward %.4f  kl %.4g  clip %.3f  |ratio-1| mean %.2g "
                        "max %.2g  dev exact %.4f  dev F1 %.4f\n",
                        it + 1, mean_r, gs.kl, gs.clip_fraction, dev_mean, dev_max, ex, f1);
        }
    }
    double el = gyro_now() - t0;
    gyro_progress_finish(&prog, o->iterations ? (double)R.iterations / o->iterations : 1.0,
                         (double)R.iterations * E / (el > 0 ? el : 1e-9), o->lr, -gs.objective);
    R.seconds = el;
    if (res) *res = R;
    if (opt_ready) gyro_optim_free(&opt);
    steps_free(&st);
    runner_free(&r);
    free(grad_block); free(dlogits); free(order); free(items); free(rewards); free(adv); free(tlen); free(eps);
    return s;
}

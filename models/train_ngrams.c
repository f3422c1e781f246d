/* train_ngrams.c — fastText-style training and evaluation of the n-gram classifier
 * (train_ngrams.h).
 *
 * Examples are turned into bags once ("bag sets": the rows and weights of every example in two
 * flat arrays), so an epoch only walks them; the per-example gradient buffers are sized once
 * for the largest bag: the loop allocates nothing.
 */
#include "models/train_ngrams.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/core/progress.h"
#include "models/core/rng.h"
#include "models/train_best.h"

typedef struct bagset {
    int n;
    int32_t *rows;     /* (Σ len) feature rows */
    float *w;          /* (Σ len) their weights */
    size_t *start;     /* (n) */
    int *len;          /* (n) >= 1 */
    int *label;        /* (n) class ids */
    int max_len;       /* the largest bag */
} bagset;

static void bagset_free(bagset *b)
{
    free(b->rows);
    free(b->w);
    free(b->start);
    free(b->len);
    free(b->label);
    memset(b, 0, sizeof *b);
}

/* Bags of examples idx[0..n) of `set` (all when idx is NULL). Unknown labels are counted in
 * *unknown (may be NULL) and skipped, unless keep_unknown: then their bag is kept with the label
 * −1 − e (e the example's index in `set`), for the caller to count as an error. */
static gyro_status bagset_build(const gyro_classifier *m, gyro_tokenizer *nz, const gyro_example_set *set,
                                const int *idx, int n, bagset *b, int *unknown, int keep_unknown)
{
    memset(b, 0, sizeof *b);
    const gyro_ngrams_model *ng = gyro_classifier_ngrams_const(m);
    const int cap = gyro_ngram_bag_cap(ng), L = ng->cfg.max_len;
    size_t used = 0, room = 4096;
    int32_t *ids = malloc((size_t)L * sizeof *ids);
    uint64_t *hash = malloc((size_t)L * sizeof *hash);
    b->rows = malloc(room * sizeof *b->rows);
    b->w = malloc(room * sizeof *b->w);
    b->start = malloc((size_t)(n ? n : 1) * sizeof *b->start);
    b->len = malloc((size_t)(n ? n : 1) * sizeof *b->len);
    b->label = malloc((size_t)(n ? n : 1) * sizeof *b->label);
    gyro_status st = GYRO_OK;
    if (!ids || !hash || !b->rows || !b->w || !b->start || !b->len || !b->label)
        st = gyro_error_set(GYRO_ERR_NOMEM, "examples");
    const gyro_label_set *ls = gyro_classifier_labels(m);
    for (int i = 0; !st && i < n; i++) {
        int e = idx ? idx[i] : i;
        int lab = gyro_label_set_find(ls, set->label[e]);
        if (lab < 0) {
            if (unknown) (*unknown)++;
            if (!keep_unknown) continue;
            lab = -1 - e;
        }
        if (used + (size_t)cap > room) {
            while (used + (size_t)cap > room) room *= 2;
            int32_t *r = realloc(b->rows, room * sizeof *r);
            if (r) b->rows = r;
            float *w = realloc(b->w, room * sizeof *w);
            if (w) b->w = w;
            if (!r || !w) { st = gyro_error_set(GYRO_ERR_NOMEM, "examples"); break; }
        }
        int len;
        st = gyro_classifier_ngram_bag(m, nz, set->text[e], gyro_example_set_context(set, e), ids, hash,
                                       b->rows + used, b->w + used, &len, NULL, NULL);
        if (st) { st = gyro_error_prefix(st, "record %llu", (unsigned long long)set->line[e]); break; }
        b->start[b->n] = used;
        b->len[b->n] = len;
        b->label[b->n] = lab;
        if (len > b->max_len) b->max_len = len;
        b->n++;
        used += (size_t)len;
    }
    free(ids);
    free(hash);
    if (st) bagset_free(b);
    return st;
}

/* Softmax of logits (K) into probs; returns −log p[label] (label ≥ 0). */
static double softmax_xent(const float *logits, float *probs, int label, int K)
{
    double mx = -INFINITY, sum = 0;
    for (int k = 0; k < K; k++) if (logits[k] > mx) mx = logits[k];
    for (int k = 0; k < K; k++) { double e = exp((double)logits[k] - mx); probs[k] = (float)e; sum += e; }
    for (int k = 0; k < K; k++) probs[k] = (float)(probs[k] / sum);
    return label >= 0 ? -((double)logits[label] - mx - log(sum)) : NAN;
}

/* Accuracy of the bags (NaN when empty); metrics (may be NULL) count every prediction, the
 * bags of labels the model never saw (label −1 − e, bagset_build) under set->label[e]. */
static gyro_status score_bags(const gyro_ngrams_model *ng, const bagset *b, float *y, float *logits, float *probs,
                              gyro_metrics *metrics, const gyro_example_set *set, double *acc)
{
    const int K = ng->cfg.n_classes;
    int ok = 0;
    for (int i = 0; i < b->n; i++) {
        const int lab = b->label[i];
        gyro_ngrams_forward(ng, b->rows + b->start[i], b->w + b->start[i], b->len[i], y, logits);
        softmax_xent(logits, probs, lab, K);
        int best = 0;
        for (int k = 1; k < K; k++) if (probs[k] > probs[best]) best = k;
        ok += best == lab;
        if (metrics && lab >= 0) gyro_metrics_add_probs(metrics, lab, probs);
        if (metrics && lab < 0) {
            gyro_status st = gyro_metrics_add_unseen(metrics, set->label[-1 - lab], probs);
            if (st) return gyro_error_prefix(st, "record %llu", (unsigned long long)set->line[-1 - lab]);
        }
    }
    *acc = b->n ? (double)ok / b->n : NAN;
    return GYRO_OK;
}

gyro_status gyro_ngrams_evaluate(const gyro_classifier *m, const gyro_example_set *set,
                                 gyro_metrics *metrics, int *unknown)
{
    const gyro_ngrams_model *ng = gyro_classifier_ngrams_const(m);
    if (!ng) return gyro_error_set(GYRO_ERR_USAGE, "evaluate: not an n-gram model");
    gyro_tokenizer *nz = NULL;
    bagset b = {0};
    const int H = gyro_ngrams_head_rows(ng);   /* labels and parent classes */
    float *y = malloc((size_t)ng->cfg.dim * sizeof *y), *logits = malloc((size_t)H * sizeof *logits),
          *probs = malloc((size_t)H * sizeof *probs);
    gyro_status st = (!y || !logits || !probs) ? gyro_error_set(GYRO_ERR_NOMEM, "evaluate") : GYRO_OK;
    if (!st) st = gyro_tokenizer_new(gyro_classifier_normalize_options(m), gyro_classifier_token_unit(m), &nz);
    double acc;
    if (!st) st = bagset_build(m, nz, set, NULL, set->n, &b, unknown, metrics != NULL);
    if (!st) st = score_bags(ng, &b, y, logits, probs, metrics, set, &acc);
    bagset_free(&b);
    gyro_tokenizer_free(nz);
    free(y);
    free(logits);
    free(probs);
    return st;
}

/* Per-example buffers of one training step. */
typedef struct step_bufs {
    float *y, *logits, *probs;  /* (C), (H), (H); H = K labels + P parents (gyro_ngrams_head_rows) */
    float *dX;                  /* (max bag, C) */
    float *dA, *dP, *dB;        /* (H, C), (H, C) hyperbolic, (H) Euclidean */
} step_bufs;

static void step_bufs_free(step_bufs *s)
{
    free(s->y); free(s->logits); free(s->probs); free(s->dX); free(s->dA); free(s->dP); free(s->dB);
    memset(s, 0, sizeof *s);
}

static gyro_status step_bufs_new(step_bufs *s, const gyro_ngrams_model *ng, int max_bag)
{
    const size_t C = (size_t)ng->cfg.dim, K = (size_t)gyro_ngrams_head_rows(ng);
    memset(s, 0, sizeof *s);
    s->y = malloc(C * sizeof *s->y);
    s->logits = malloc(K * sizeof *s->logits);
    s->probs = malloc(K * sizeof *s->probs);
    s->dX = malloc((size_t)(max_bag ? max_bag : 1) * C * sizeof *s->dX);
    s->dA = malloc(K * C * sizeof *s->dA);
    s->dP = malloc(K * C * sizeof *s->dP);
    s->dB = malloc(K * sizeof *s->dB);
    if (!s->y || !s->logits || !s->probs || !s->dX || !s->dA || !s->dP || !s->dB) {
        step_bufs_free(s);
        return gyro_error_set(GYRO_ERR_NOMEM, "train buffers");
    }
    return GYRO_OK;
}

/* One SGD step on bag i; returns its loss (cross-entropy with the one-hot target; with label
 * smoothing ε the gradient is that of the target (1 − ε)·onehot + ε/K, Szegedy et al. 2016). */
static double train_one(gyro_ngrams_model *ng, const bagset *b, int i, step_bufs *s, float lr, float head_lr,
                        int freeze_below, float smoothing)
{
    const int C = ng->cfg.dim, K = ng->cfg.n_classes, H = gyro_ngrams_head_rows(ng), len = b->len[i],
              lab = b->label[i];
    const int32_t *rows = b->rows + b->start[i];
    const float *w = b->w + b->start[i];
    gyro_ngrams_forward(ng, rows, w, len, s->y, s->logits);
    double loss = softmax_xent(s->logits, s->probs, lab, K);
    if (smoothing > 0)       /* dL/dlogits = p − target */
        for (int k = 0; k < K; k++) s->probs[k] -= smoothing / (float)K;
    s->probs[lab] -= 1.0f - smoothing;
    memset(s->dX, 0, (size_t)len * C * sizeof *s->dX);
    memset(s->dA, 0, (size_t)H * C * sizeof *s->dA);
    memset(s->dP, 0, (size_t)H * C * sizeof *s->dP);
    memset(s->dB, 0, (size_t)H * sizeof *s->dB);
    gyro_ngrams_backward(ng, rows, w, len, s->y, s->probs, s->dX, s->dA, s->dP, s->dB);
    gyro_ngrams_step(ng, rows, len, s->dX, s->dA, s->dP, s->dB, lr, head_lr, freeze_below);
    return loss;
}

/* One training run: the bags, the buffers and the loop's state. */
typedef struct run {
    const gyro_train_options *opt;
    gyro_classifier *m;
    gyro_ngrams_model *ng;
    const gyro_example_set *dev;
    bagset tr, dv;
    step_bufs sb;
    int *order;                 /* (tr.n) this epoch's order */
    gyro_train_best best;       /* early stopping: the best dev epoch's parameters */
    int freeze_below;           /* embedding rows below it stay as the table gave them */
    gyro_rng rng;
    gyro_progress prog;
    double t0, train_time, lr, loss;
    gyro_train_result *R;
} run;

/* A stop request: the best model so far is left in m (and in the checkpoint). */
static gyro_status interrupted(run *r, int epoch, int s)
{
    const gyro_train_options *opt = r->opt;
    gyro_status st = GYRO_OK;
    gyro_train_best_restore(&r->best, r->R);
    if (opt->checkpoint && r->R->best_epoch == 0 && !gyro_ngrams_first_nonfinite(r->ng, NULL))
        st = gyro_classifier_save(r->m, opt->checkpoint);
    return st ? st : gyro_error_set(GYRO_ERR_INTERRUPTED, "train: interrupted at epoch %d example %d%s%s", epoch + 1,
                                    s + 1, opt->checkpoint ? "; the best model so far is in " : "",
                                    opt->checkpoint ? opt->checkpoint : "");
}

/* One pass over the shuffled training bags, the rates decaying linearly over all epochs. */
static gyro_status run_epoch(run *r, int epoch)
{
    const gyro_train_options *opt = r->opt;
    const int n = r->tr.n;
    gyro_rng_shuffle(&r->rng, r->order, n);
    const double total = (double)n * opt->epochs, ts = gyro_now();
    double loss_sum = 0;
    for (int s = 0; s < n; s++) {
        if (opt->stop && *opt->stop) return interrupted(r, epoch, s);
        double done_frac = ((double)epoch * n + s) / total;
        r->lr = opt->optim.lr * (1.0 - done_frac);
        const float head_lr = (float)(opt->head_lr * (1.0 - done_frac));
        double l = train_one(r->ng, &r->tr, r->order[s], &r->sb, (float)r->lr, head_lr, r->freeze_below,
                             opt->label_smoothing);
        if (!isfinite(l))
            return gyro_error_set(GYRO_ERR_NAN, "train: the loss became %g at epoch %d example %d; "
                                  "lower the learning rate (--lr)", l, epoch + 1, s + 1);
        loss_sum += l;
        r->R->steps++;
        r->loss = loss_sum / (s + 1);
        if ((s & 1023) == 0) {
            double el = gyro_now() - r->t0;
            gyro_progress_update(&r->prog, done_frac, el > 0 ? (double)r->R->steps / el : NAN, r->lr, r->loss, 0);
        }
    }
    r->train_time += gyro_now() - ts;
    r->R->epochs = epoch + 1;
    r->R->train_loss = loss_sum / n;
    return GYRO_OK;
}

/* After an epoch: the finiteness check, the dev score, the log line, the best parameters and
 * the checkpoint; *done = 1 when patience ran out. */
static gyro_status end_epoch(run *r, int epoch, int *done)
{
    const gyro_train_options *opt = r->opt;
    gyro_train_result *R = r->R;
    size_t at;
    const gyro_tf_tensor *bad = gyro_ngrams_first_nonfinite(r->ng, &at);
    if (bad)
        return gyro_error_set(GYRO_ERR_NAN, "train: tensor %s became non-finite (parameter %zu) in epoch %d; "
                              "lower the learning rate (--lr)", bad->name, at, epoch + 1);
    double acc = NAN;
    gyro_status st;
    if (r->dv.n > 0 && (st = score_bags(r->ng, &r->dv, r->sb.y, r->sb.logits, r->sb.probs, NULL, r->dev, &acc)))
        return st;
    if (opt->log) {
        fprintf(opt->log, "epoch %d: train loss %.4f", epoch + 1, R->train_loss);
        if (!isnan(acc)) fprintf(opt->log, ", dev accuracy %.2f%%", 100 * acc);
        fprintf(opt->log, ", %.1f s\n", gyro_now() - r->t0);
    }
    return gyro_train_best_epoch(&r->best, opt, r->m, R, epoch, r->dv.n > 0, acc, done);
}

/* Bags, buffers and counters of a run; GYRO_ERR_DATA without a training example. */
static gyro_status run_setup(run *r, gyro_tokenizer *nz, const gyro_example_set *train, const int *tr_idx,
                             int n_tr, const int *dev_idx, int n_dev)
{
    gyro_status st = bagset_build(r->m, nz, train, tr_idx, n_tr, &r->tr, NULL, 0);
    if (!st && r->dev && n_dev > 0) st = bagset_build(r->m, nz, r->dev, dev_idx, n_dev, &r->dv, &r->R->dev_unknown, 0);
    if (st) return st;
    if (r->tr.n == 0) return gyro_error_set(GYRO_ERR_DATA, "train: no training example left after the dev split");
    r->R->n_train = r->tr.n;
    r->R->n_dev = r->dv.n;
    r->order = malloc((size_t)r->tr.n * sizeof *r->order);
    if (!r->order) return gyro_error_set(GYRO_ERR_NOMEM, "train buffers");
    if ((st = gyro_train_best_init(&r->best, r->ng->params, r->ng->n_params))) return st;
    if ((st = step_bufs_new(&r->sb, r->ng, r->tr.max_len > r->dv.max_len ? r->tr.max_len : r->dv.max_len))) return st;
    for (int i = 0; i < r->tr.n; i++) r->order[i] = i;
    /* a frozen table: its rows 1..n keep their values (UNK and everything after still learn) */
    r->freeze_below = r->opt->freeze_table && r->R->table_rows > 0 ? 1 + r->R->table_rows : 0;
    gyro_rng_seed(&r->rng, r->opt->seed ^ 0x6e67747261696eULL);
    return GYRO_OK;
}

gyro_status gyro_train_ngrams(const gyro_train_options *opt, gyro_classifier *m, gyro_tokenizer *nz,
                              const gyro_example_set *train, const int *tr_idx, int n_tr,
                              const gyro_example_set *dev, const int *dev_idx, int n_dev,
                              gyro_train_result *R)
{
    run r = {.opt = opt, .m = m, .ng = gyro_classifier_ngrams(m), .dev = dev, .R = R, .lr = opt->optim.lr,
             .loss = NAN};
    if (!r.ng) return gyro_error_set(GYRO_ERR_USAGE, "train: not an n-gram model");
    gyro_status st = run_setup(&r, nz, train, tr_idx, n_tr, dev_idx, n_dev);
    if (!st) {
        gyro_progress_init(&r.prog, "examples/sec", opt->quiet);
        r.t0 = gyro_now();
        int done = 0;
        for (int epoch = 0; !st && !done && epoch < opt->epochs; epoch++) {
            st = run_epoch(&r, epoch);
            if (!st) st = end_epoch(&r, epoch, &done);
        }
    }
    if (!st) {
        gyro_progress_finish(&r.prog, (double)R->steps / ((double)r.tr.n * opt->epochs), NAN, r.lr, r.loss);
        gyro_train_best_restore(&r.best, R);
        R->seconds = gyro_now() - r.t0;
        R->steps_per_second = r.train_time > 0 ? R->steps / r.train_time : NAN;
    }
    bagset_free(&r.tr);
    bagset_free(&r.dv);
    step_bufs_free(&r.sb);
    free(r.order);
    gyro_train_best_free(&r.best);
    return st;
}

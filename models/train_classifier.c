/* train_classifier.c — mini-batch training, early stopping and batch evaluation of the intent
 * classifier (see train_classifier.h).
 *
 * Texts are normalized and mapped to token ids once, into one flat id array per set ("prepared"
 * data), so an epoch only gathers ids into the (B, T) batch buffer: the training loop allocates
 * nothing. T of a batch is its longest example (capped at the model's max_len). The optimizer
 * sees the transformer's tensor table; when the char2vec table is frozen, the embedding tensor
 * is handed over as three row ranges (UNK, table rows frozen, learned rows).
 */
#include "models/train_classifier.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "models/core/blas.h"
#include "models/core/progress.h"
#include "models/core/rng.h"
#include "models/hyp/convert.h"
#include "models/hyp/lorentz.h"
#include "models/hyp/poincare.h"
#include "models/train_best.h"
#include "models/train_ngrams.h"
#include "models/train_vocab.h"

/* ---- prepared (tokenized) data ------------------------------------------------------------ */

typedef struct prepared {
    int n;
    int32_t *tok;      /* (Σ len) token ids */
    size_t *start;     /* (n) */
    int *len;          /* (n) >= 1 */
    int *label;        /* (n) class ids */
} prepared;

static void prepared_free(prepared *p)
{
    free(p->tok);
    free(p->start);
    free(p->len);
    free(p->label);
    memset(p, 0, sizeof *p);
}

/* Tokenize the examples idx[0..n) of `set` (all when idx is NULL). Unknown labels are skipped
 * and counted; an empty text becomes the single token UNK. */
static gyro_status prepare(const gyro_classifier *m, gyro_tokenizer *nz, const gyro_example_set *set,
                           const int *idx, int n, prepared *p, int *unknown)
{
    memset(p, 0, sizeof *p);
    int T = gyro_classifier_tf_const(m)->cfg.max_len;
    size_t cap = 4096;
    p->tok = malloc(cap * sizeof *p->tok);
    p->start = malloc((size_t)(n ? n : 1) * sizeof *p->start);
    p->len = malloc((size_t)(n ? n : 1) * sizeof *p->len);
    p->label = malloc((size_t)(n ? n : 1) * sizeof *p->label);
    if (!p->tok || !p->start || !p->len || !p->label) { prepared_free(p); return gyro_error_set(GYRO_ERR_NOMEM, "examples"); }
    size_t used = 0;
    const gyro_label_set *ls = gyro_classifier_labels(m);
    for (int i = 0; i < n; i++) {
        int e = idx ? idx[i] : i;
        int lab = gyro_label_set_find(ls, set->label[e]);
        if (lab < 0) { if (unknown) (*unknown)++; continue; }
        char *const *toks;
        size_t n_toks;
        const char *norm;
        gyro_status st = gyro_tokenizer_run(nz, set->text[e], strlen(set->text[e]), &toks, &n_toks, &norm);
        if (st) { prepared_free(p); return gyro_error_prefix(st, "record %llu", (unsigned long long)set->line[e]); }
        if (used + (size_t)T > cap) {
            while (used + (size_t)T > cap) cap *= 2;
            int32_t *t = realloc(p->tok, cap * sizeof *t);
            if (!t) { prepared_free(p); return gyro_error_set(GYRO_ERR_NOMEM, "examples"); }
            p->tok = t;
        }
        int len = gyro_classifier_encode(m, toks, n_toks, p->tok + used, T);
        if (len == 0) p->tok[used] = GYRO_CLASSIFIER_UNK, len = 1;
        p->start[p->n] = used;
        p->len[p->n] = len;
        p->label[p->n] = lab;
        p->n++;
        used += (size_t)len;
    }
    return GYRO_OK;
}

/* Gather examples order[from..from+B) into tokens (B, T) and lengths; returns T. */
static int gather(const prepared *p, const int *order, int from, int B, int32_t *tokens, int *lengths,
                  int *labels)
{
    int T = 1;
    for (int b = 0; b < B; b++) {
        int e = order ? order[from + b] : from + b;
        if (p->len[e] > T) T = p->len[e];
    }
    for (int b = 0; b < B; b++) {
        int e = order ? order[from + b] : from + b;
        int L = p->len[e];
        memcpy(tokens + (size_t)b * T, p->tok + p->start[e], (size_t)L * sizeof *tokens);
        for (int t = L; t < T; t++) tokens[(size_t)b * T + t] = GYRO_CLASSIFIER_UNK;
        lengths[b] = L;
        labels[b] = p->label[e];
    }
    return T;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Sort each run of `chunk` consecutive entries of the (shuffled) order by example length, so a
 * batch holds examples of similar lengths and pads little; ties keep the shuffled order. The
 * caller then shuffles the order of the batches. keys: (n) scratch. */
static void bucket_by_length(const prepared *p, int *order, uint64_t *keys, long chunk_l)
{
    int chunk = chunk_l > (1 << 20) ? (1 << 20) : (int)chunk_l; /* the index field has 20 bits */
    for (int from = 0; from < p->n; from += chunk) {
        int n = p->n - from < chunk ? p->n - from : chunk;
        for (int i = 0; i < n; i++)
            keys[i] = (uint64_t)p->len[order[from + i]] << 40 | (uint64_t)i << 20;
        qsort(keys, (size_t)n, sizeof *keys, cmp_u64);
        for (int i = 0; i < n; i++) keys[i] = (uint64_t)order[from + (int)((keys[i] >> 20) & 0xFFFFF)];
        for (int i = 0; i < n; i++) order[from + i] = (int)keys[i];
    }
}

/* Evaluate prepared data with acts of batch `maxb`; fills metrics (may be NULL) and returns
 * the accuracy (NaN when empty). */
static gyro_status eval_prepared(const gyro_tf_model *tf, gyro_tf_acts *acts, int maxb, const prepared *p,
                                 int32_t *tokens, int *lengths, int *labels, float *probs,
                                 gyro_metrics *metrics, double *acc)
{
    int K = tf->cfg.n_classes;
    int ok = 0;
    for (int from = 0; from < p->n; from += maxb) {
        int B = p->n - from < maxb ? p->n - from : maxb;
        int T = gather(p, NULL, from, B, tokens, lengths, labels);
        gyro_status st = gyro_tf_forward(tf, acts, tokens, lengths, B, T, NULL);
        if (st) return st;
        const float *logits = gyro_tf_logits(acts);
        gyro_tf_softmax_xent(NULL, probs, logits, labels, B, K);
        for (int b = 0; b < B; b++) {
            const float *pr = probs + (size_t)b * K;
            int best = 0;
            for (int k = 1; k < K; k++) if (pr[k] > pr[best]) best = k;
            ok += best == labels[b];
            if (metrics) gyro_metrics_add_probs(metrics, labels[b], pr);
        }
    }
    *acc = p->n ? (double)ok / p->n : NAN;
    return GYRO_OK;
}

gyro_status gyro_classifier_evaluate(const gyro_classifier *m, const gyro_example_set *set,
                                     gyro_metrics *metrics, int *unknown)
{
    if (gyro_classifier_ngrams_const(m)) return gyro_ngrams_evaluate(m, set, metrics, unknown);
    const gyro_tf_model *tf = gyro_classifier_tf_const(m);
    enum { MAXB = 64 };
    int T = tf->cfg.max_len, K = tf->cfg.n_classes;
    /* small products between serial maps: OpenBLAS on this thread, as in training */
    const int blas_threads = gyro_blas_get_threads();
    if (blas_threads != 1) gyro_blas_set_threads(1);
    gyro_tokenizer *nz = NULL;
    gyro_tf_acts *acts = NULL;
    prepared p = {0};
    int32_t *tokens = malloc((size_t)MAXB * T * sizeof *tokens);
    int *lengths = malloc(MAXB * sizeof *lengths), *labels = malloc(MAXB * sizeof *labels);
    float *probs = malloc((size_t)MAXB * K * sizeof *probs);
    gyro_status st = (!tokens || !lengths || !labels || !probs) ? gyro_error_set(GYRO_ERR_NOMEM, "evaluate") : GYRO_OK;
    if (!st) st = gyro_tokenizer_new(gyro_classifier_normalize_options(m), gyro_classifier_token_unit(m), &nz);
    if (!st) st = gyro_tf_acts_new(tf, MAXB, T, 0, &acts);
    if (!st) st = prepare(m, nz, set, NULL, set->n, &p, unknown);
    double acc;
    if (!st) st = eval_prepared(tf, acts, MAXB, &p, tokens, lengths, labels, probs, metrics, &acc);
    if (blas_threads != 1) gyro_blas_set_threads(blas_threads);
    prepared_free(&p);
    /* examples whose label the model never saw: predicted like the others (prepared under a
     * stand-in label, class 0, which prepare needs) and counted as errors under their own */
    const gyro_label_set *ls = gyro_classifier_labels(m);
    int n_uns = 0;
    for (int i = 0; metrics && i < set->n; i++) n_uns += gyro_label_set_find(ls, set->label[i]) < 0;
    if (!st && n_uns) {
        int *orig = malloc((size_t)n_uns * sizeof *orig);
        gyro_example_set view = {.n = n_uns, .cap = n_uns};
        view.text = malloc((size_t)n_uns * sizeof *view.text);
        view.label = malloc((size_t)n_uns * sizeof *view.label);
        view.line = malloc((size_t)n_uns * sizeof *view.line);
        if (!orig || !view.text || !view.label || !view.line) st = gyro_error_set(GYRO_ERR_NOMEM, "evaluate");
        for (int i = 0, j = 0; !st && i < set->n; i++) {
            if (gyro_label_set_find(ls, set->label[i]) >= 0) continue;
            orig[j] = i;
            view.text[j] = set->text[i];
            view.label[j] = (char *)gyro_label_set_name(ls, 0); /* only read by prepare */
            view.line[j++] = set->line[i];
        }
        if (!st) st = prepare(m, nz, &view, NULL, n_uns, &p, NULL);
        for (int from = 0; !st && from < p.n; from += MAXB) {
            int B = p.n - from < MAXB ? p.n - from : MAXB;
            int TT = gather(&p, NULL, from, B, tokens, lengths, labels);
            if ((st = gyro_tf_forward(tf, acts, tokens, lengths, B, TT, NULL))) break;
            gyro_tf_softmax_xent(NULL, probs, gyro_tf_logits(acts), labels, B, K);
            for (int b = 0; !st && b < B; b++) {
                int e = orig[from + b];
                st = gyro_metrics_add_unseen(metrics, set->label[e], probs + (size_t)b * K);
                if (st) st = gyro_error_prefix(st, "record %llu", (unsigned long long)set->line[e]);
            }
        }
        prepared_free(&p);
        free(orig);
        free(view.text);
        free(view.label);
        free(view.line);
    }
    gyro_tf_acts_free(acts);
    gyro_tokenizer_free(nz);
    free(tokens);
    free(lengths);
    free(labels);
    free(probs);
    return st;
}

/* ---- training -------------------------------------------------------------------------------- */

const char *gyro_arch_name(int arch)
{
    switch (arch) {
    case GYRO_ARCH_TRANSFORMER: return "transformer";
    case GYRO_ARCH_NGRAMS: return "ngrams";
    default: return NULL;
    }
}

gyro_status gyro_arch_parse(const char *name, gyro_arch *out)
{
    for (int a = GYRO_ARCH_TRANSFORMER; a <= GYRO_ARCH_NGRAMS; a++)
        if (name && strcmp(name, gyro_arch_name(a)) == 0) { *out = (gyro_arch)a; return GYRO_OK; }
    return gyro_error_set(GYRO_ERR_USAGE, "unknown architecture '%s' (known: transformer, ngrams)",
                          name ? name : "");
}

void gyro_train_options_init(gyro_train_options *o, gyro_tf_geometry geometry)
{
    memset(o, 0, sizeof *o);
    /* the bag of n-grams is the default (tests/bench/intent_quality.sh: on the NLPCC session dev
     * split it beats fastText and the transformer, in seconds); it has no Lorentz form */
    o->arch = geometry == GYRO_TF_GEOMETRY_LORENTZ ? GYRO_ARCH_TRANSFORMER : GYRO_ARCH_NGRAMS;
    o->ngrams = gyro_ngrams_config_default(geometry == GYRO_TF_GEOMETRY_LORENTZ ? GYRO_TF_GEOMETRY_HYPERBOLIC
                                                                               : (int)geometry);
    o->ngrams.context = 1;
    /* parent classes from the label names (ngrams.h): +1.4 points on CrossWOZ's label sets,
     * +0.3 on SMP, +0.1 on NLPCC (intent_quality.sh, medians of 3 seeds) */
    o->ngrams.hierarchy = 1;
    o->model = gyro_tf_config_default(geometry);
    o->optim = gyro_optim_config_default();
    if (geometry == GYRO_TF_GEOMETRY_EUCLIDEAN) o->optim.lr = 1e-4;
    if (geometry == GYRO_TF_GEOMETRY_HYPERBOLIC) {
        /* measured on the NLPCC session dev split (tests/bench/intent_quality.sh): the seed's
         * block (no residual, no LayerNorm, identity FFN, c = 1, no dropout) loses gradient
         * 15x over 3 layers and reached 83.1%; tangent residuals + LayerNorm + ReLU with
         * c = 0.1 and dropout 0.1 train evenly (README, intent classification) */
        o->model.residual = GYRO_TF_RESIDUAL_TANGENT;
        o->model.layernorm = 1;
        o->model.ffn_activation = GYRO_TF_ACTIVATION_RELU;
        o->model.curvature = 0.1f;
        o->model.dropout = 0.1f;
    }
    if (geometry == GYRO_TF_GEOMETRY_LORENTZ) {
        /* SMP fold 0, 5 epochs (README, the Lorentz geometry): Riemannian SGD 0.05 on the token,
         * position and class points reached 72.9%, Riemannian Adam 0.03 85.8-86.0%, and RMSProp
         * 5e-4 instead of 1e-3 on the Euclidean tensors 86.5-87.4% (seeds 1, 2) */
        o->optim.ball_kind = GYRO_OPTIM_BALL_RADAM;
        o->optim.ball_lr = 0.03;
        o->optim.lr = 5e-4;
    }
    o->sgdr = (gyro_sgdr){.t0 = 10, .t_mult = 1, .min_factor = 0.01};
    gyro_normalize_options_init(&o->norm);
    o->epochs = 20;
    o->batch_size = 32;
    o->bucket = 50;
    o->threads = 1;
    o->patience = 5;
    o->dev_fraction = 0.1;
    o->min_count = 1;
    o->seed = 1;
}

/* The curvature c > 0 a table's rows were trained at (1 when the table does not say). */
static double table_curvature(const gyro_embedding_table *tab)
{
    return tab->curvature > 0 && isfinite(tab->curvature) ? tab->curvature : 1.0;
}

/* Copy the table's vectors into rows 1..n of a Poincaré (or Euclidean) model's embeddings: ball
 * rows as they are, hyperboloid rows converted (DESIGN.md: x ↦ x_s/(1+x₀), on the unit
 * hyperboloid) with a notice on stderr. For a Poincaré model whose curvature c differs from the
 * table's c_t, rows are scaled by √(c_t/c): the map of the c_t-ball onto the c-ball that keeps
 * every point's place (distances scale by √(c_t/c)), as the Lorentz model rescales between
 * hyperboloids; a notice says so. Ball rows are then projected into the model's ball. */
static void copy_table_rows(float *wte, int C, int geometry, float curvature,
                            const gyro_embedding_table *tab)
{
    int nt = tab->n;
    if (tab->model == GYRO_EMBEDDING_HYPERBOLOID)
        fprintf(stderr, "notice: the embedding table holds hyperboloid points; converted to the "
                "Poincaré ball (x_s/(1+x0)) for the %s model\n", gyro_tf_geometry_name(geometry));
    double ct = tab->model == GYRO_EMBEDDING_HYPERBOLOID ? 1.0 : table_curvature(tab);
    float scale = 1.0f;
    if (geometry == GYRO_TF_GEOMETRY_HYPERBOLIC && fabs(ct - curvature) > 1e-6 * ct) {
        scale = (float)sqrt(ct / curvature);
        fprintf(stderr, "notice: the table's rows (curvature %g) are scaled by %.4g onto the model's "
                "ball of curvature %g\n", ct, scale, (double)curvature);
    }
    for (int i = 0; i < nt; i++) {
        const float *src = tab->vectors + (size_t)i * tab->stride;
        float *dst = wte + (size_t)(i + 1) * C;
        if (tab->model == GYRO_EMBEDDING_HYPERBOLOID) gyro_hyp_to_poincare_f32(dst, src, C);
        else memcpy(dst, src, (size_t)C * sizeof *dst);
        if (scale != 1.0f)
            for (int k = 0; k < C; k++) dst[k] *= scale;
    }
    if (geometry == GYRO_TF_GEOMETRY_HYPERBOLIC)
        gyro_poincare_project_batch_f32(wte, wte, curvature, nt + 1, C);
}

static void copy_table_ball(gyro_tf_model *tf, const gyro_embedding_table *tab)
{
    copy_table_rows(tf->params.wte, tf->cfg.dim, tf->cfg.geometry, tf->cfg.curvature, tab);
}

/* The same for the character rows of an n-gram model. */
static void copy_table_ngrams(gyro_ngrams_model *ng, const gyro_embedding_table *tab)
{
    copy_table_rows(ng->emb, ng->cfg.dim, ng->cfg.geometry, ng->cfg.curvature, tab);
}

/* Copy the table's vectors into rows 1..n of a Lorentz model's embeddings (C+1 values, time
 * first, on ⟨x,x⟩_L = −1/c). A hyperboloid table is taken as it is, rescaled by √(c_t/c) when
 * its curvature c_t differs from the model's (the map between the two hyperboloids); a Poincaré
 * table is converted (HyboNet/DESIGN.md: on the unit models y = ((1+|p|²), 2p)/(1−|p|²) with
 * p = √c_t·row, then scaled by 1/√c) and a Euclidean one lifted (x_s = row), each with a notice
 * on stderr. Every row is then re-projected, x₀ = √(1/c + |x_s|²), rounding-aware. */
static void copy_table_lorentz(gyro_tf_model *tf, const gyro_embedding_table *tab)
{
    const int C = tf->cfg.dim, d = C + 1, nt = tab->n;
    const double c = tf->cfg.curvature, ct = table_curvature(tab);
    if (tab->model == GYRO_EMBEDDING_POINCARE)
        fprintf(stderr, "notice: the embedding table holds Poincaré-ball points; converted to the "
                "hyperboloid for the lorentz model\n");
    else if (tab->model != GYRO_EMBEDDING_HYPERBOLOID)
        fprintf(stderr, "notice: the embedding table holds %s vectors; lifted onto the "
                "hyperboloid (x_s = v) for the lorentz model\n", gyro_embedding_model_name(tab->model));
    float buf[4097];
    for (int i = 0; i < nt; i++) {
        const float *src = tab->vectors + (size_t)i * tab->stride;
        float *dst = tf->params.wte + (size_t)(i + 1) * d;
        if (tab->model == GYRO_EMBEDDING_HYPERBOLOID) {
            const double s = sqrt(ct / c);
            for (int j = 0; j < d; j++) dst[j] = (float)(s * src[j]);
        } else if (tab->model == GYRO_EMBEDDING_POINCARE) {
            const double sp = sqrt(ct), sx = 1.0 / sqrt(c);
            for (int j = 0; j < C; j++) buf[j] = (float)(sp * src[j]);
            gyro_hyp_to_hyperboloid_f32(dst, buf, C);
            for (int j = 0; j < d; j++) dst[j] = (float)(sx * dst[j]);
        } else {
            memcpy(dst + 1, src, (size_t)C * sizeof *dst);
        }
        /* rounding-aware re-projection on the unit hyperboloid, then back to curvature −c */
        const double sc = sqrt(c);
        for (int j = 0; j < d; j++) buf[j] = (float)(sc * dst[j]);
        gyro_lorentz_reproject_rounded_f32(buf, C);
        for (int j = 0; j < d; j++) dst[j] = (float)(buf[j] / sc);
    }
}

gyro_status gyro_train_options_complete(gyro_train_options *o, unsigned set)
{
    if (!o) return gyro_error_set(GYRO_ERR_USAGE, "gyro_train_options_complete: NULL options");
    gyro_tf_config *m = &o->model;
    if (o->table) m->dim = o->table->dim;
    if (o->arch == GYRO_ARCH_NGRAMS) {
        gyro_ngrams_config *g = &o->ngrams;
        if (!(set & GYRO_TRAIN_SET_DIM) && !o->table) m->dim = 100;
        if (!(set & GYRO_TRAIN_SET_EPOCHS)) o->epochs = 25;
        if (!(set & GYRO_TRAIN_SET_DEV_FRACTION)) o->dev_fraction = 0;
        g->geometry = m->geometry;
        g->dim = m->dim;
        g->curvature = m->curvature;
        g->max_len = m->max_len;
        /* fields the model does not use take one value, so equal models are equal files */
        if (g->geometry == GYRO_TF_GEOMETRY_EUCLIDEAN) g->curvature = 1.0f, g->pool = GYRO_NGRAMS_POOL_TANGENT;
        if (!g->context) g->context_weight = 1.0f;
        if (!(set & GYRO_TRAIN_SET_LR)) o->optim.lr = GYRO_NGRAMS_DEFAULT_LR;
        if (!(o->head_lr > 0))
            o->head_lr = o->optim.lr * (g->geometry == GYRO_TF_GEOMETRY_HYPERBOLIC ? GYRO_NGRAMS_HEAD_LR_SCALE_BALL : 1.0);
        if (!(o->label_smoothing >= 0 && o->label_smoothing < 1))
            return gyro_error_set(GYRO_ERR_USAGE, "--label-smoothing must be in [0, 1)");
        gyro_ngrams_config probe = *g;
        probe.vocab_size = 1;
        probe.n_classes = 1;
        return gyro_ngrams_config_validate(&probe);
    }
    if (o->arch != GYRO_ARCH_TRANSFORMER)
        return gyro_error_set(GYRO_ERR_USAGE, "unknown architecture %d", o->arch);
    if (!(set & GYRO_TRAIN_SET_HEAD_DIM) && m->n_heads > 0) m->head_dim = (m->dim + m->n_heads - 1) / m->n_heads;
    if (!(set & GYRO_TRAIN_SET_FFN_DIM)) m->ffn_dim = 4 * m->dim;
    if (m->attention_kind == GYRO_TF_ATTENTION_MLA && !(set & GYRO_TRAIN_SET_MLA_LATENT))
        m->mla_latent_dim = m->dim > 1 ? m->dim / 2 : 1;
    if (m->ffn_kind == GYRO_TF_FFN_MOE) {
        if (!(set & GYRO_TRAIN_SET_MOE_EXPERTS)) m->moe_experts = 4;
        if (!(set & GYRO_TRAIN_SET_MOE_TOP_K)) m->moe_top_k = 1;
        if (!(set & GYRO_TRAIN_SET_MOE_BALANCE)) m->moe_balance = 0.01f;
    }
    gyro_tf_config probe = *m; /* vocabulary and classes come from the data */
    probe.vocab_size = 1;
    probe.n_classes = 1;
    return gyro_tf_config_validate(&probe);
}

/* Build vocabulary and labels, and create the model of opt->arch. */
static gyro_status build_model(const gyro_train_options *opt, const gyro_example_set *train,
                               gyro_tokenizer *nz, gyro_classifier **out, int *table_rows)
{
    gyro_train_vocab v;
    gyro_status st = gyro_train_vocab_build(&v, train, nz, opt->table, opt->min_count);
    if (st) return st;
    if (opt->arch == GYRO_ARCH_NGRAMS) {
        gyro_ngrams_config cfg = opt->ngrams;
        st = gyro_classifier_create_ngrams(&cfg, opt->seed, &opt->norm, v.tokens, v.n, v.labels, out);
    } else {
        gyro_tf_config cfg = opt->model;
        st = gyro_classifier_create(&cfg, opt->seed, &opt->norm, v.tokens, v.n, v.labels, out);
    }
    v.labels = NULL; /* owned by the model (or freed) now */
    if (!st) gyro_classifier_set_token_unit(*out, opt->token_unit);
    const gyro_embedding_table *tab = opt->table;
    if (!st && tab) {
        gyro_tf_model *tf = gyro_classifier_tf(*out);
        if (!tf) copy_table_ngrams(gyro_classifier_ngrams(*out), tab);
        else if (tf->cfg.geometry == GYRO_TF_GEOMETRY_LORENTZ) copy_table_lorentz(tf, tab);
        else copy_table_ball(tf, tab);
        *table_rows = tab->n;
    }
    gyro_train_vocab_free(&v);
    return st;
}

/* ---- data-parallel steps --------------------------------------------------------------------
 * Shard t of a step takes the consecutive examples order[from + off_t .. from + off_t + b_t) of
 * the batch and runs forward, cross-entropy and backward on its own activations into its own
 * gradient block, drawing dropout from its own stream (thread 0: the single-threaded loop's).
 * A shard costs about its padded tokens b_t·T_t (T_t its longest text), and a bucketed batch is
 * sorted by length, so the cut points minimise the largest b_t·T_t (split_batch) rather than
 * giving every shard b/n examples. Its loss L_t is the shard's mean cross-entropy (+ its MoE
 * balance loss) and its
 * gradient that of L_t, so the batch loss is L = Σ_t w_t L_t and the batch gradient
 * g = Σ_t w_t g_t with w_t = b_t / b (the batch mean of the cross-entropy).
 *
 * One thread uses the model's gradient block and one optimizer: it is the single-threaded loop
 * exactly. With n > 1 every shard has a private block, and the sum of the shard gradients
 * overwrites the model's. The optimizer is split too: the tensor table is cut at row boundaries
 * into n contiguous pieces of about equal work, one optimizer each (every update is per value or
 * per ball / hyperboloid row, so the cut changes no value), and after the shards thread t sums
 * the gradients of its piece's parameter range in shard order, steps its optimizer and checks
 * the range for non-finite values. No lock is taken in forward, backward, the sum or the step,
 * and the result depends on n but not on scheduling. A gradient-norm clip is global, so with
 * clip_norm > 0 the sum runs in equal slices and one optimizer steps on the calling thread. A
 * failed piece leaves the others updated, unlike one optimizer; training then stops with the
 * error and the model is freed, so nothing sees the difference. Workers sleep on a condition
 * variable between jobs (two hand-offs per step), never spinning. */

typedef struct train_shard {
    gyro_tf_acts *acts;     /* (Bs, Tmax) training activations, owned (Bs: see pool_init) */
    float *gmem;            /* (n_params) gradient block: n = 1 the model's (borrowed), else owned */
    gyro_tf_params grads;   /* carved from gmem */
    gyro_rng drop;          /* dropout stream */
    int32_t *tokens;        /* (Bs, Tmax) */
    int *lengths, *labels;  /* (Bs) */
    float *dlogits;         /* (Bs, K) */
    int from, b;            /* this step: examples order[from .. from + b) (b = 0: idle) */
    double w;               /* b / batch size */
    double loss;            /* L_t */
    gyro_status st;         /* of the last step job */
    int ok;                 /* dev examples this thread classified correctly (eval job) */
    gyro_optim optim;       /* the optimizer of piece t (update job; n > 1 without a clip) */
    size_t lo, hi;          /* piece t's parameter range [lo, hi) */
    int nonfinite;          /* the update left a non-finite parameter in [lo, hi) */
    double cpu;             /* CPU seconds of this thread in the last job */
    char msg[1024];         /* the message of st (a worker's own message is thread-local) */
} train_shard;

enum { JOB_STEP, JOB_REDUCE, JOB_UPDATE, JOB_EVAL, JOB_QUIT };

typedef struct train_pool {
    int n;                  /* threads, the caller's included */
    train_shard *sh;        /* (n) */
    const gyro_tf_model *tf;
    const prepared *data;   /* training examples, in the order `order` */
    const int *order;
    const prepared *eval;   /* dev examples (eval job) */
    int K, moe, Bs;         /* classes, MoE blocks, shard capacity (examples) */
    double lr_factor;       /* the schedule's factor of the current step (update job) */
    pthread_t *th;          /* (n - 1) workers */
    int sync;               /* mu and the condition variables are initialised */
    int reduced;            /* the update job finds the gradient summed already (several ranks) */
    struct train_worker *wk; /* (n - 1) their arguments */
    int started;            /* workers running */
    pthread_mutex_t mu;
    pthread_cond_t cv_work, cv_done;
    unsigned gen;           /* job number, bumped for each job */
    int job, busy;          /* current job, workers still on it */
} train_pool;

typedef struct train_worker { train_pool *p; int t; } train_worker;

/* The examples of p->eval in batches of Bs, batch k on thread k mod n: count the correct ones. */
static void shard_eval(train_pool *p, int t)
{
    train_shard *s = &p->sh[t];
    const prepared *d = p->eval;
    s->st = GYRO_OK;
    s->ok = 0;
    for (int from = t * p->Bs; from < d->n; from += p->n * p->Bs) {
        int B = d->n - from < p->Bs ? d->n - from : p->Bs;
        int T = gather(d, NULL, from, B, s->tokens, s->lengths, s->labels);
        s->st = gyro_tf_forward(p->tf, s->acts, s->tokens, s->lengths, B, T, NULL);
        if (s->st) {
            snprintf(s->msg, sizeof s->msg, "%s", gyro_error_message());
            return;
        }
        float *probs = s->dlogits;
        gyro_tf_softmax_xent(NULL, probs, gyro_tf_logits(s->acts), s->labels, B, p->K);
        for (int b = 0; b < B; b++) {
            const float *pr = probs + (size_t)b * p->K;
            int best = 0;
            for (int k = 1; k < p->K; k++) if (pr[k] > pr[best]) best = k;
            s->ok += best == s->labels[b];
        }
    }
}

/* Greedy cut of the batch order[from .. from + b) into consecutive shards of at most p->Bs
 * examples and padded size (examples × longest text) at most C: each shard as long as it fits.
 * Returns the number of shards; with `set`, writes their from and b. */
static int cut_batch(train_pool *p, int from, int b, long C, int set)
{
    const prepared *d = p->data;
    int shards = 0, cnt = 0, at = from;
    long mx = 0;
    for (int i = 0; i < b; i++) {
        long L = d->len[p->order[from + i]], m = L > mx ? L : mx;
        if (cnt > 0 && (cnt == p->Bs || (cnt + 1) * m > C)) {
            if (set) { p->sh[shards].from = at; p->sh[shards].b = cnt; }
            shards++;
            at += cnt;
            cnt = 0;
            m = L;
        }
        cnt++;
        mx = m;
    }
    if (set) { p->sh[shards].from = at; p->sh[shards].b = cnt; }
    return shards + 1;
}

/* Cut the batch order[from .. from + b) into at most p->n consecutive shards whose largest
 * padded size is as small as possible: the least C for which cut_batch needs at most n shards
 * (the greedy cut is optimal for a bound that grows with the shard), found by bisection. Sets
 * from, b and w = b_t / b of every shard (trailing shards may be empty). */
static void split_batch(train_pool *p, int from, int b)
{
    const int n = p->n;
    long lo = 1, hi = 0;
    for (int i = 0; i < b; i++)
        if (p->data->len[p->order[from + i]] > hi) hi = p->data->len[p->order[from + i]];
    hi *= p->Bs; /* n shards of Bs examples hold the batch */
    while (lo < hi) {
        long C = lo + (hi - lo) / 2;
        if (cut_batch(p, from, b, C, 0) <= n) hi = C;
        else lo = C + 1;
    }
    for (int t = cut_batch(p, from, b, hi, 1); t < n; t++) p->sh[t].from = from + b, p->sh[t].b = 0;
    for (int t = 0; t < n; t++) p->sh[t].w = (double)p->sh[t].b / b;
}

/* Forward, loss and backward of shard t (its gradient block zeroed first, except the model's,
 * which the caller zeroes through the optimizer as the single-threaded loop does). */
static void shard_step(train_pool *p, int t)
{
    train_shard *s = &p->sh[t];
    s->st = GYRO_OK;
    s->loss = 0;
    if (s->b == 0) return;
    if (s->gmem != p->tf->grads_memory) memset(s->gmem, 0, p->tf->n_params * sizeof *s->gmem);
    int Tb = gather(p->data, p->order, s->from, s->b, s->tokens, s->lengths, s->labels);
    s->st = gyro_tf_forward(p->tf, s->acts, s->tokens, s->lengths, s->b, Tb, &s->drop);
    if (s->st) {
        snprintf(s->msg, sizeof s->msg, "%s", gyro_error_message());
        return;
    }
    /* training loss = cross-entropy + the MoE balance loss (0 for dense blocks), whose gradient
     * gyro_tf_backward adds */
    s->loss = gyro_tf_softmax_xent(s->dlogits, NULL, gyro_tf_logits(s->acts), s->labels, s->b, p->K);
    if (p->moe) s->loss += gyro_tf_balance_loss(s->acts);
    if (!isfinite(s->loss)) return; /* the caller reports it */
    gyro_tf_backward(p->tf, s->acts, &s->grads, s->dlogits);
}

/* The model's gradients ← Σ_t w_t g_t over [lo, hi), in shard order (n > 1). */
static void reduce_range(train_pool *p, size_t lo, size_t hi)
{
    float *g = p->tf->grads_memory;
    const float w0 = (float)p->sh[0].w, *g0 = p->sh[0].gmem;
    for (size_t i = lo; i < hi; i++) g[i] = w0 * g0[i];
    for (int u = 1; u < p->n; u++) {
        if (p->sh[u].b == 0) continue;
        const float *gu = p->sh[u].gmem, wu = (float)p->sh[u].w;
        for (size_t i = lo; i < hi; i++) g[i] += wu * gu[i];
    }
}

/* The sum over thread t's equal slice of the parameters (16-value aligned). */
static void shard_reduce(train_pool *p, int t)
{
    size_t np = p->tf->n_params, chunk = (np / (size_t)p->n + 15) & ~(size_t)15;
    size_t lo = chunk * (size_t)t, hi = lo + chunk < np ? lo + chunk : np;
    if (lo < hi) reduce_range(p, lo, hi);
}

/* The sum over piece t's range, its optimizer's step, and the range's finiteness. */
static void shard_update(train_pool *p, int t)
{
    train_shard *s = &p->sh[t];
    s->st = GYRO_OK;
    s->nonfinite = 0;
    if (!p->reduced) reduce_range(p, s->lo, s->hi);
    if (s->optim.n_tensors == 0) return;
    s->st = gyro_optim_step(&s->optim, p->lr_factor);
    if (s->st) {
        snprintf(s->msg, sizeof s->msg, "%s", gyro_error_message());
        return;
    }
    const float *w = p->tf->params_memory;
    for (size_t i = s->lo; i < s->hi && !s->nonfinite; i++) s->nonfinite = !isfinite(w[i]);
}

/* Work of one value in the update job, in units of its share of the gradient sum (measured on
 * the seed's model, RMSProp + RSGD): a Euclidean update costs about twice the sum, a ball or
 * hyperboloid row about the sum (most embedding rows have no gradient in a batch and are
 * skipped), a frozen value only the sum. */
static size_t update_cost(const gyro_optim_tensor *d)
{
    return d->frozen ? 1 : d->manifold == GYRO_OPTIM_MANIFOLD_EUCLIDEAN ? 3 : 2;
}

/* Cut the optimizer's tensors (in parameter order, contiguous) into p->n pieces of about equal
 * work (update_cost) at row boundaries; piece t gets an optimizer and the range [lo, hi) from
 * its first value to the next piece's (the last to the end of the block). */
static gyro_status pool_split_optim(train_pool *p, const gyro_optim_config *cfg,
                                    const gyro_optim_tensor *ot, int no)
{
    const int n = p->n;
    size_t total = 0;
    for (int i = 0; i < no; i++) total += ot[i].rows * ot[i].cols * update_cost(&ot[i]);
    int cap = no + n;
    gyro_optim_tensor *part = malloc((size_t)cap * sizeof *part);
    int *piece = malloc((size_t)cap * sizeof *piece);
    if (!part || !piece) { free(part); free(piece); return gyro_error_set(GYRO_ERR_NOMEM, "train threads"); }
    int np = 0;
    size_t acc = 0;
    for (int i = 0; i < no; i++) {
        const gyro_optim_tensor *d = &ot[i];
        size_t r = 0;
        while (r < d->rows) {
            int k = total ? (int)(acc * (size_t)n / total) : 0;
            if (k > n - 1) k = n - 1;
            const size_t unit = d->cols * update_cost(d); /* work of a row */
            size_t r1 = d->rows; /* rows up to the next piece's first value */
            if (k < n - 1 && unit > 0) {
                size_t bound = (total * (size_t)(k + 1) + (size_t)n - 1) / (size_t)n; /* first acc of piece k+1 */
                size_t rows = (bound - acc + unit - 1) / unit;
                if (rows < 1) rows = 1;
                if (r + rows < r1) r1 = r + rows;
            }
            gyro_optim_tensor q = *d;
            q.w += r * d->cols;
            q.g += r * d->cols;
            q.rows = r1 - r;
            acc += q.rows * unit;
            part[np] = q;
            piece[np++] = k;
            r = r1;
        }
    }
    gyro_status st = GYRO_OK;
    const float *base = p->tf->params_memory;
    for (int t = 0; t < n; t++) p->sh[t].lo = p->sh[t].hi = (size_t)-1;
    for (int i = 0, t = 0; !st && t < n; t++) {
        int j = i;
        while (j < np && piece[j] == t) j++;
        if (j > i) {
            p->sh[t].lo = (size_t)(part[i].w - base);
            st = gyro_optim_init(&p->sh[t].optim, cfg, part + i, j - i);
        }
        i = j;
    }
    /* ranges: from each piece's first value to the next non-empty piece's; empty pieces none */
    size_t next = p->tf->n_params;
    for (int t = n - 1; t >= 0; t--) {
        if (p->sh[t].lo == (size_t)-1) { p->sh[t].lo = p->sh[t].hi = next; continue; }
        p->sh[t].hi = next;
        next = p->sh[t].lo;
    }
    p->sh[0].lo = 0; /* the block's start (values before the first tensor, if any) */
    free(part);
    free(piece);
    return st;
}

/* CPU time of the calling thread, in seconds (0 if the clock is missing). */
static double thread_cpu(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0;
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void pool_job(train_pool *p, int t, int job)
{
    const double c0 = thread_cpu();
    if (job == JOB_STEP) shard_step(p, t);
    else if (job == JOB_REDUCE) shard_reduce(p, t);
    else if (job == JOB_UPDATE) shard_update(p, t);
    else if (job == JOB_EVAL) shard_eval(p, t);
    p->sh[t].cpu = thread_cpu() - c0;
}

static void *pool_worker(void *arg)
{
    train_worker *w = arg;
    train_pool *p = w->p;
    unsigned seen = 0;
    for (;;) {
        pthread_mutex_lock(&p->mu);
        while (p->gen == seen) pthread_cond_wait(&p->cv_work, &p->mu);
        seen = p->gen;
        int job = p->job;
        pthread_mutex_unlock(&p->mu);
        if (job == JOB_QUIT) return NULL;
        pool_job(p, w->t, job);
        pthread_mutex_lock(&p->mu);
        if (--p->busy == 0) pthread_cond_signal(&p->cv_done);
        pthread_mutex_unlock(&p->mu);
    }
}

/* Run `job` (not JOB_QUIT) on every thread (the caller's is thread 0) and wait for all of them.
 * Returns the CPU seconds of the slowest thread in the job (its share of the critical path). */
static double pool_run(train_pool *p, int job)
{
    if (p->started) {
        pthread_mutex_lock(&p->mu);
        p->job = job;
        p->busy = p->started;
        p->gen++;
        pthread_cond_broadcast(&p->cv_work);
        pthread_mutex_unlock(&p->mu);
    }
    pool_job(p, 0, job);
    if (p->started) {
        pthread_mutex_lock(&p->mu);
        while (p->busy > 0) pthread_cond_wait(&p->cv_done, &p->mu);
        pthread_mutex_unlock(&p->mu);
    }
    double slowest = 0;
    for (int t = 0; t < p->n; t++) if (p->sh[t].cpu > slowest) slowest = p->sh[t].cpu;
    return slowest;
}

static void pool_free(train_pool *p)
{
    if (p->started) {
        pthread_mutex_lock(&p->mu);
        p->job = JOB_QUIT;
        p->gen++;
        pthread_cond_broadcast(&p->cv_work);
        pthread_mutex_unlock(&p->mu);
        for (int i = 0; i < p->started; i++) pthread_join(p->th[i], NULL);
    }
    if (p->sync) {
        pthread_mutex_destroy(&p->mu);
        pthread_cond_destroy(&p->cv_work);
        pthread_cond_destroy(&p->cv_done);
    }
    for (int t = 0; p->sh && t < p->n; t++) {
        train_shard *s = &p->sh[t];
        gyro_tf_acts_free(s->acts);
        gyro_optim_free(&s->optim);
        if (s->gmem != p->tf->grads_memory) free(s->gmem);
        free(s->tokens);
        free(s->lengths);
        free(s->labels);
        free(s->dlogits);
    }
    free(p->sh);
    free(p->th);
    free(p->wk);
    memset(p, 0, sizeof *p);
}

/* Set up n shards for batches of up to B examples of up to T tokens (shard 0's dropout stream
 * is the single-threaded loop's, the others' are seeded from `seed` and their index) and start
 * n − 1 workers. */
static gyro_status pool_init(train_pool *p, int n, const gyro_tf_model *tf, const prepared *data,
                             const int *order, const prepared *eval, int B, int T, uint64_t seed)
{
    memset(p, 0, sizeof *p);
    p->n = n;
    p->tf = tf;
    p->data = data;
    p->order = order;
    p->eval = eval;
    p->K = tf->cfg.n_classes;
    p->moe = tf->cfg.ffn_kind == GYRO_TF_FFN_MOE;
    /* ⌈B/n⌉ plus a quarter of it for the cut by padded size (split_batch); one thread: B */
    p->Bs = (B + n - 1) / n + (n > 1 ? (B + 4 * n - 1) / (4 * n) : 0);
    if (p->Bs > B) p->Bs = B;
    const int Bs = p->Bs;
    p->sh = calloc((size_t)n, sizeof *p->sh);
    if (!p->sh) return gyro_error_set(GYRO_ERR_NOMEM, "train threads");
    for (int t = 0; t < n; t++) {
        train_shard *s = &p->sh[t];
        gyro_status st = gyro_tf_acts_new(tf, Bs, T, 1, &s->acts);
        if (st) { pool_free(p); return st; }
        s->gmem = n == 1 ? tf->grads_memory : malloc(tf->n_params * sizeof *s->gmem);
        s->tokens = malloc((size_t)Bs * T * sizeof *s->tokens);
        s->lengths = malloc((size_t)Bs * sizeof *s->lengths);
        s->labels = malloc((size_t)Bs * sizeof *s->labels);
        s->dlogits = malloc((size_t)Bs * p->K * sizeof *s->dlogits);
        if (!s->gmem || !s->tokens || !s->lengths || !s->labels || !s->dlogits) {
            pool_free(p);
            return gyro_error_set(GYRO_ERR_NOMEM, "train threads");
        }
        gyro_tf_carve(&tf->cfg, s->gmem, &s->grads);
        gyro_rng_seed(&s->drop, t == 0 ? seed ^ 0xd209u : seed ^ 0xd209u ^ (0x9e3779b97f4a7c15ULL * (uint64_t)t));
    }
    if (n == 1) return GYRO_OK;
    p->th = malloc((size_t)(n - 1) * sizeof *p->th);
    p->wk = malloc((size_t)(n - 1) * sizeof *p->wk);
    if (!p->th || !p->wk) { pool_free(p); return gyro_error_set(GYRO_ERR_NOMEM, "train threads"); }
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv_work, NULL);
    pthread_cond_init(&p->cv_done, NULL);
    p->sync = 1;
    for (int t = 1; t < n; t++) {
        p->wk[t - 1] = (train_worker){p, t};
        int e = pthread_create(&p->th[t - 1], NULL, pool_worker, &p->wk[t - 1]);
        if (e) {
            pool_free(p);
            return gyro_error_set(GYRO_ERR_NOMEM, "train: cannot start thread %d of %d (%s)", t + 1, n, strerror(e));
        }
        p->started++;
    }
    return GYRO_OK;
}

/* The first failed shard's status, its message restored on the calling thread. */
static gyro_status pool_status(const train_pool *p)
{
    for (int t = 0; t < p->n; t++)
        if (p->sh[t].st) return gyro_error_set(p->sh[t].st, "%s", p->sh[t].msg);
    return GYRO_OK;
}


/* The training indices 0..n−1 in *idx (owned by the caller), the first *n_dev of them held out
 * as dev: without a dev set and with dev_fraction > 0 a seeded shuffle, else in order, none
 * held out. */
static gyro_status dev_split(const gyro_train_options *opt, const gyro_example_set *train, int have_dev,
                             gyro_rng *rng, int **idx, int *n_dev)
{
    *n_dev = 0;
    *idx = malloc((size_t)train->n * sizeof **idx);
    if (!*idx) return gyro_error_set(GYRO_ERR_NOMEM, "train");
    int *x = *idx;
    for (int i = 0; i < train->n; i++) x[i] = i;
    if (have_dev || !(opt->dev_fraction > 0)) return GYRO_OK;
    gyro_rng_shuffle(rng, x, train->n);
    *n_dev = (int)(opt->dev_fraction * train->n);
    if (*n_dev >= train->n) *n_dev = train->n - 1;
    return GYRO_OK;
}

/* The optimizer's view of the transformer's tensor table into ot (GYRO_TF_MAX_TENSORS + 2):
 * ball rows take Riemannian SGD, hyperboloid rows Lorentz RSGD; with frozen_rows > 0 the
 * embedding tensor is handed over as three row ranges (UNK, the frozen table rows, the learned
 * rest). Returns the number of entries. */
static int optim_tensors(gyro_tf_model *tf, int frozen_rows, gyro_optim_tensor *ot)
{
    int no = 0;
    for (int t = 0; t < tf->n_tensors; t++) {
        const gyro_tf_tensor *X = &tf->tensors[t];
        gyro_optim_tensor d = {
            .name = X->name, .w = tf->params_memory + X->offset, .g = tf->grads_memory + X->offset,
            .rows = (size_t)X->rows, .cols = (size_t)X->cols,
            .manifold = X->manifold == GYRO_TF_MANIFOLD_BALL      ? GYRO_OPTIM_MANIFOLD_POINCARE
                        : X->manifold == GYRO_TF_MANIFOLD_LORENTZ ? GYRO_OPTIM_MANIFOLD_LORENTZ
                                                                  : GYRO_OPTIM_MANIFOLD_EUCLIDEAN,
            .c = tf->cfg.curvature,
        };
        if (X->offset == (size_t)(tf->params.wte - tf->params_memory) && frozen_rows > 0) {
            size_t C = (size_t)X->cols, nt = (size_t)frozen_rows;
            gyro_optim_tensor unk = d, fixed = d, rest = d;
            unk.rows = 1;
            unk.name = "wte[unk]";
            fixed.w += C; fixed.g += C; fixed.rows = nt; fixed.frozen = 1; fixed.name = "wte[table]";
            rest.w += C * (1 + nt); rest.g += C * (1 + nt); rest.rows = (size_t)X->rows - 1 - nt; rest.name = "wte[learned]";
            ot[no++] = unk;
            ot[no++] = fixed;
            if (rest.rows) ot[no++] = rest;
        } else {
            ot[no++] = d;
        }
    }
    return no;
}

/* ---- the training loop ----------------------------------------------------------------------
 * One run: the prepared data, the thread pool and optimizer, the shuffled orders and the loop's
 * state. run_setup fills it, run_epoch makes one pass (run_step per batch), end_epoch scores the
 * dev set and keeps the best parameters, interrupted answers a stop request. */

typedef struct tf_run {
    const gyro_train_options *opt;
    const gyro_sync *sync;      /* several ranks (NULL: this process alone) */
    gyro_classifier *m;
    gyro_tf_model *tf;
    gyro_train_result *R;
    prepared tr, dv;            /* training and dev examples */
    train_pool pool;
    gyro_optim optim;           /* the optimizer unless split_optim */
    int split_optim;            /* one optimizer per thread over pieces of the table */
    int B, steps_per_epoch;     /* batch size (at most tr.n), batches per epoch */
    double total_steps;         /* steps_per_epoch · epochs */
    int *order;                 /* (tr.n) this epoch's order of the examples */
    int *batch_order;           /* (steps_per_epoch) this epoch's order of the batches */
    uint64_t *keys;             /* (tr.n) scratch of bucket_by_length */
    gyro_train_best best;       /* early stopping: the best dev epoch's parameters */
    int moe;                    /* MoE blocks: the expert load is summed and logged */
    size_t n_load;              /* L · moe_experts */
    long *load;                 /* (L, moe_experts) expert load summed over an epoch */
    size_t load_cap;
    char *load_line;            /* (load_cap) the formatted load of an epoch */
    gyro_rng rng;               /* the dev split's, then the shuffles' */
    gyro_progress prog;
    double t0, train_time, lr, loss;
    double own, slowest;        /* this epoch: CPU of thread 0 and of the slowest thread in jobs */
} tf_run;

static void run_free(tf_run *r)
{
    pool_free(&r->pool);
    gyro_optim_free(&r->optim);
    prepared_free(&r->tr);
    prepared_free(&r->dv);
    free(r->order);
    free(r->batch_order);
    free(r->keys);
    gyro_train_best_free(&r->best);
    free(r->load);
    free(r->load_line);
}

/* The prepared sets (train: idx[n_dev_split..n); dev: `dev`, or idx[0..n_dev_split) of train),
 * the pool, the optimizer(s) and the buffers; GYRO_ERR_DATA without a training example. */
static gyro_status run_setup(tf_run *r, gyro_tokenizer *nz, const gyro_example_set *train,
                             const gyro_example_set *dev, const int *idx, int n_dev_split)
{
    const gyro_train_options *opt = r->opt;
    gyro_tf_model *tf = r->tf;
    gyro_status st = prepare(r->m, nz, train, idx + n_dev_split, train->n - n_dev_split, &r->tr, NULL);
    if (!st) {
        if (dev) st = prepare(r->m, nz, dev, NULL, dev->n, &r->dv, &r->R->dev_unknown);
        else st = prepare(r->m, nz, train, idx, n_dev_split, &r->dv, &r->R->dev_unknown);
    }
    if (st) return st;
    if (r->tr.n == 0) return gyro_error_set(GYRO_ERR_DATA, "train: no training example left after the dev split");
    r->R->n_train = r->tr.n;
    r->R->n_dev = r->dv.n;
    r->B = opt->batch_size < r->tr.n ? opt->batch_size : r->tr.n;
    r->steps_per_epoch = (r->tr.n + r->B - 1) / r->B;
    r->total_steps = (double)r->steps_per_epoch * opt->epochs;

    gyro_optim_tensor ot[GYRO_TF_MAX_TENSORS + 2];
    int no = optim_tensors(tf, opt->freeze_table ? r->R->table_rows : 0, ot);
    r->order = malloc((size_t)r->tr.n * sizeof *r->order);
    if (!r->order) return gyro_error_set(GYRO_ERR_NOMEM, "train buffers");
    const int n_threads = opt->threads > 1 ? opt->threads : 1;
    /* rank 0's first dropout stream is the single process's; other ranks draw their own */
    const uint64_t drop_seed = r->sync && r->sync->rank ? opt->seed ^ (0xa24baed4963ee407ULL * (uint64_t)r->sync->rank)
                                                        : opt->seed;
    if ((st = pool_init(&r->pool, n_threads, tf, &r->tr, r->order, &r->dv, r->B, tf->cfg.max_len, drop_seed)))
        return st;
    /* one optimizer on this thread, or one per thread over pieces of the table (see above) */
    r->split_optim = n_threads > 1 && !(opt->optim.clip_norm > 0);
    if (r->split_optim) st = pool_split_optim(&r->pool, &opt->optim, ot, no);
    else st = gyro_optim_init(&r->optim, &opt->optim, ot, no);
    if (st) return st;
    r->keys = malloc((size_t)r->tr.n * sizeof *r->keys);
    r->batch_order = malloc((size_t)(r->tr.n / r->B + 1) * sizeof *r->batch_order);
    r->moe = tf->cfg.ffn_kind == GYRO_TF_FFN_MOE;
    if (r->moe) {
        r->n_load = (size_t)tf->cfg.n_layers * (size_t)tf->cfg.moe_experts;
        /* "L<l> " + up to "100/" per expert + "%" and a separator per layer */
        r->load_cap = (size_t)tf->cfg.n_layers * (16 + 4 * (size_t)tf->cfg.moe_experts) + 1;
        r->load = malloc(r->n_load * sizeof *r->load);
        r->load_line = malloc(r->load_cap);
    }
    if (!r->keys || !r->batch_order || (r->moe && (!r->load || !r->load_line)))
        return gyro_error_set(GYRO_ERR_NOMEM, "train buffers");
    if ((st = gyro_train_best_init(&r->best, tf->params_memory, tf->n_params))) return st;
    for (int i = 0; i < r->tr.n; i++) r->order[i] = i;
    return GYRO_OK;
}

/* A stop request: the caller gets the best model so far: the best dev epoch's parameters, or
 * the current ones (finite: every step is checked) before any dev evaluation. */
static gyro_status interrupted(tf_run *r, int epoch, int s)
{
    const gyro_train_options *opt = r->opt;
    gyro_status st = GYRO_OK;
    gyro_train_best_restore(&r->best, r->R);
    if (opt->checkpoint && r->R->best_epoch == 0) st = gyro_classifier_save(r->m, opt->checkpoint);
    return st ? st : gyro_error_set(GYRO_ERR_INTERRUPTED, "train: interrupted at epoch %d step %d%s%s", epoch + 1,
                                    s + 1, opt->checkpoint ? "; the best model so far is in " : "",
                                    opt->checkpoint ? opt->checkpoint : "");
}

/* The epoch's order: the examples shuffled, then (bucket > 1) sorted by length in runs of
 * bucket batches, and the batches shuffled. */
static void shuffle_epoch(tf_run *r)
{
    gyro_rng_shuffle(&r->rng, r->order, r->tr.n);
    for (int i = 0; i < r->steps_per_epoch; i++) r->batch_order[i] = i;
    if (r->opt->bucket > 1) {
        bucket_by_length(&r->tr, r->order, r->keys, (long)r->B * r->opt->bucket);
        gyro_rng_shuffle(&r->rng, r->batch_order, r->steps_per_epoch);
    }
}

/* The error of a step that left a parameter non-finite, naming the tensor (its gradient too
 * when that is where it began). */
static gyro_status nonfinite_error(const gyro_tf_model *tf, const gyro_tf_tensor *bad, size_t at, int epoch, int s)
{
    size_t gat;
    const gyro_tf_tensor *g = gyro_tf_first_nonfinite(tf, tf->grads_memory, &gat);
    char gw[160] = "";
    if (g) snprintf(gw, sizeof gw, " (its gradient was already non-finite in tensor %s)", g->name);
    return gyro_error_set(GYRO_ERR_NAN, "train: tensor %s became non-finite (parameter %zu) at "
                          "epoch %d step %d%s; lower the learning rate", bad->name, at, epoch + 1, s + 1, gw);
}

/* Several ranks, after forward and backward on this rank's part of the batch (bp of b
 * examples; its gradient in the shards, loss l): agree on the step (this rank's status st or a
 * non-finite loss, a stop request), then the batch gradient Σ_r (b_r / b) g_r and loss into the
 * model's gradient block and *l on every rank. *stop_all = 1 when a rank was asked to stop. */
static gyro_status sync_step(tf_run *r, gyro_status st, int bp, int b, double *l, int epoch, int s, int *stop_all)
{
    train_pool *pool = &r->pool;
    const gyro_sync *sy = r->sync;
    const gyro_train_options *opt = r->opt;
    if (!st && !isfinite(*l))
        st = gyro_error_set(GYRO_ERR_NAN, "train: the loss became %g at epoch %d step %d on rank %d (every "
                            "parameter finite: an activation overflowed); lower the learning rate", *l,
                            epoch + 1, s + 1, sy->rank);
    uint64_t w[3] = {(uint64_t)st, st ? (uint64_t)(sy->size - sy->rank) : 0, opt->stop && *opt->stop};
    gyro_status t = gyro_sync_allreduce(sy, w, 3, GYRO_SYNC_U64, GYRO_SYNC_MAX);
    if (t) return t;
    if (st) return st;
    if (w[0])
        return gyro_error_set((gyro_status)w[0], "train: stopped at epoch %d step %d: rank %d of %d failed (%s; "
                              "its message says why)", epoch + 1, s + 1, sy->size - (int)w[1], sy->size,
                              gyro_status_name((gyro_status)w[0]));
    if (w[2]) {
        *stop_all = 1;
        return GYRO_OK;
    }
    float *g = r->tf->grads_memory;
    const size_t np = r->tf->n_params;
    if (bp == 0) memset(g, 0, np * sizeof *g);
    else if (pool->n > 1) r->slowest += pool_run(pool, JOB_REDUCE), r->own += pool->sh[0].cpu;
    const float share = (float)((double)bp / b);
    if (share != 1.0f)
        for (size_t i = 0; i < np; i++) g[i] *= share;
    double ls = bp ? *l * bp / b : 0;
    if ((t = gyro_sync_allreduce(sy, g, np, GYRO_SYNC_F32, GYRO_SYNC_SUM))) return t;
    if ((t = gyro_sync_allreduce(sy, &ls, 1, GYRO_SYNC_F64, GYRO_SYNC_SUM))) return t;
    *l = ls;
    return GYRO_OK;
}

/* Step s of the epoch on the batch order[from .. from + b): shards of the batch (one shard: the
 * whole batch; several ranks: this rank's part of it, sync_step), forward and backward on every
 * thread, the shard losses and gradients weighted by their share of the batch, then the update.
 * *loss: the batch loss; *stop_all: several ranks agreed to stop (nothing updated). */
static gyro_status run_step(tf_run *r, int epoch, int s, int from, int b, double *loss, int *stop_all)
{
    train_pool *pool = &r->pool;
    const int n = pool->n;
    const gyro_sync *sy = r->sync;
    int pf = from, bp = b;   /* this rank's part of the batch */
    if (sy) {
        pf = from + (int)((long)b * sy->rank / sy->size);
        bp = from + (int)((long)b * (sy->rank + 1) / sy->size) - pf;
    }
    if (n == 1 && !r->split_optim) gyro_optim_zero_grad(&r->optim); /* else the shard sum overwrites */
    gyro_status st = GYRO_OK;
    double l = 0;
    if (bp > 0) {
        split_batch(pool, pf, bp);
        r->slowest += pool_run(pool, JOB_STEP);
        r->own += pool->sh[0].cpu;
        st = pool_status(pool);
        if (!st) {
            l = pool->sh[0].loss;
            if (n > 1) {
                l = 0;
                for (int t = 0; t < n; t++) l += pool->sh[t].w * pool->sh[t].loss;
            }
        }
    } else {
        for (int t = 0; t < n; t++) pool->sh[t].b = 0, pool->sh[t].w = 0;
    }
    if (sy) {
        pool->reduced = 1;
        st = sync_step(r, st, bp, b, &l, epoch, s, stop_all);
        if (st || *stop_all) return st;
    }
    if (st) return st;
    for (int t = 0; r->moe && t < n; t++) {
        const long *c = pool->sh[t].b ? gyro_tf_expert_load(pool->sh[t].acts) : NULL;
        for (size_t i = 0; c && i < r->n_load; i++) r->load[i] += c[i];
    }
    if (!isfinite(l))
        return gyro_error_set(GYRO_ERR_NAN, "train: the loss became %g at epoch %d step %d "
                              "(every parameter finite: an activation overflowed); lower the "
                              "learning rate", l, epoch + 1, s + 1);
    double f = gyro_sgdr_factor(&r->opt->sgdr, epoch + (double)s / r->steps_per_epoch, NULL);
    r->lr = r->opt->optim.lr * f;
    int nonfinite = 0;
    if (r->split_optim) {
        pool->lr_factor = f;
        r->slowest += pool_run(pool, JOB_UPDATE);
        r->own += pool->sh[0].cpu;
        if ((st = pool_status(pool))) return st;
        for (int t = 0; t < n; t++) nonfinite |= pool->sh[t].nonfinite;
    } else {
        if (n > 1 && !sy) r->slowest += pool_run(pool, JOB_REDUCE), r->own += pool->sh[0].cpu;
        if ((st = gyro_optim_step(&r->optim, f))) return st;
        nonfinite = 1; /* not checked yet */
    }
    /* stop at the first step that leaves a parameter non-finite, before anything can save it */
    size_t at;
    const gyro_tf_tensor *bad = nonfinite ? gyro_tf_first_nonfinite(r->tf, r->tf->params_memory, &at) : NULL;
    if (bad) return nonfinite_error(r->tf, bad, at, epoch, s);
    *loss = l;
    return GYRO_OK;
}

/* One pass over the training batches, the learning rate following the SGDR schedule. */
static gyro_status run_epoch(tf_run *r, int epoch)
{
    const gyro_train_options *opt = r->opt;
    gyro_train_result *R = r->R;
    shuffle_epoch(r);
    double loss_sum = 0, ts = gyro_now(), cpu0 = thread_cpu();
    int seen = 0;
    r->own = r->slowest = 0;
    if (r->moe) memset(r->load, 0, r->n_load * sizeof *r->load);
    for (int s = 0; s < r->steps_per_epoch; s++) {
        int from = r->batch_order[s] * r->B, b = r->tr.n - from < r->B ? r->tr.n - from : r->B;
        if (!r->sync && opt->stop && *opt->stop) return interrupted(r, epoch, s);
        double l = 0;
        int stop_all = 0;
        gyro_status st = run_step(r, epoch, s, from, b, &l, &stop_all);
        if (st) return st;
        if (stop_all) return interrupted(r, epoch, s);
        R->steps++;
        loss_sum += l * b;
        seen += b;
        r->loss = loss_sum / seen;
        double done_frac = R->steps / r->total_steps, el = gyro_now() - r->t0;
        gyro_progress_update(&r->prog, done_frac, el > 0 ? (double)R->steps * r->B / el : NAN, r->lr, r->loss, 0);
    }
    r->train_time += gyro_now() - ts;
    R->critical_seconds += thread_cpu() - cpu0 - r->own + r->slowest;
    R->epochs = epoch + 1;
    R->train_loss = loss_sum / r->tr.n;
    return GYRO_OK;
}

/* After an epoch: the dev score (split over the threads), the log line, the best parameters and
 * the checkpoint; *done = 1 when patience ran out. */
static gyro_status end_epoch(tf_run *r, int epoch, int *done)
{
    const gyro_train_options *opt = r->opt;
    gyro_train_result *R = r->R;
    double acc = NAN;
    if (r->dv.n > 0) {
        pool_run(&r->pool, JOB_EVAL);
        gyro_status st = pool_status(&r->pool);
        if (st) return st;
        int ok = 0;
        for (int t = 0; t < r->pool.n; t++) ok += r->pool.sh[t].ok;
        acc = (double)ok / r->dv.n;
    }
    if (opt->log) {
        if (r->moe) gyro_tf_expert_load_format(r->load_line, r->load_cap, r->load, &r->tf->cfg);
        fprintf(opt->log, "epoch %d: train loss %.4f", epoch + 1, R->train_loss);
        if (!isnan(acc)) fprintf(opt->log, ", dev accuracy %.2f%%", 100 * acc);
        if (r->moe) fprintf(opt->log, ", expert load %s", r->load_line);
        fprintf(opt->log, ", %.1f s, critical path %.2f s\n", gyro_now() - r->t0, R->critical_seconds);
    }
    return gyro_train_best_epoch(&r->best, opt, r->m, R, epoch, r->dv.n > 0, acc, done);
}

/* The checks of gyro_train_classifier's arguments (GYRO_ERR_USAGE, or GYRO_ERR_DATA for an
 * empty training set). */
static gyro_status check_train_args(const gyro_train_options *opt, const gyro_example_set *train,
                                    gyro_classifier **out)
{
    if (!opt || !train || !out) return gyro_error_set(GYRO_ERR_USAGE, "train: NULL argument");
    if (opt->epochs < 1 || opt->batch_size < 1 || opt->patience < 0 || !(opt->dev_fraction >= 0 && opt->dev_fraction < 1))
        return gyro_error_set(GYRO_ERR_USAGE, "train: epochs and batch size must be >= 1, dev fraction in [0, 1)");
    if (opt->threads < 0 || opt->threads > GYRO_TRAIN_MAX_THREADS)
        return gyro_error_set(GYRO_ERR_USAGE, "train: threads %d outside [1, %d]", opt->threads, GYRO_TRAIN_MAX_THREADS);
    if (train->n == 0) return gyro_error_set(GYRO_ERR_DATA, "train: no training example");
    if (gyro_sync_active(opt->sync) && opt->arch == GYRO_ARCH_NGRAMS)
        return gyro_error_set(GYRO_ERR_USAGE, "train: the n-gram model trains on one process (Hogwild SGD); "
                              "over several ranks train the transformer (--arch transformer)");
    const gyro_embedding_table *tab = opt->table;
    if (tab && tab->dim != opt->model.dim)
        return gyro_error_set(GYRO_ERR_USAGE, "train: the embedding table has %d dimensions, the model %d "
                              "(set --dim %d)", tab->dim, opt->model.dim, tab->dim);
    return GYRO_OK;
}

gyro_status gyro_train_classifier(const gyro_train_options *opt, const gyro_example_set *train,
                                  const gyro_example_set *dev, gyro_classifier **out,
                                  gyro_train_result *res)
{
    if (out) *out = NULL;
    gyro_train_result R = {0};
    R.best_dev_accuracy = NAN;
    gyro_status st = check_train_args(opt, train, out);
    if (st) return st;
    gyro_train_options rank_opt;
    if (gyro_sync_active(opt->sync) && opt->sync->rank != 0) {
        /* only rank 0 writes the checkpoint, the log and the progress line */
        rank_opt = *opt;
        rank_opt.checkpoint = NULL;
        rank_opt.log = NULL;
        rank_opt.quiet = 1;
        opt = &rank_opt;
    }
    /* The products of a training step are small (B·T rows by at most 4·C) and half of a step
     * is serial hyperbolic maps between them: OpenBLAS's worker threads would spin on
     * sched_yield through those gaps, costing more system and user time than they save. The
     * training runs OpenBLAS on the calling thread (data parallelism is opt->threads') and
     * restores the caller's setting on return. */
    const int blas_threads = gyro_blas_get_threads();
    if (blas_threads != 1) gyro_blas_set_threads(1);
    gyro_tokenizer *nz = NULL;
    gyro_classifier *m = NULL;
    int *idx = NULL, n_dev_split = 0;
    tf_run r = {.opt = opt, .sync = gyro_sync_active(opt->sync) ? opt->sync : NULL, .R = &R, .lr = opt->optim.lr,
                .loss = NAN};
    gyro_rng_seed(&r.rng, opt->seed ^ 0x5eedda7aULL);
    st = gyro_tokenizer_new(&opt->norm, opt->token_unit, &nz);
    if (!st) st = build_model(opt, train, nz, &m, &R.table_rows);
    if (!st) st = dev_split(opt, train, dev != NULL, &r.rng, &idx, &n_dev_split);
    if (!st && gyro_classifier_ngrams(m)) {
        st = gyro_train_ngrams(opt, m, nz, train, idx + n_dev_split, train->n - n_dev_split,
                               dev ? dev : train, dev ? NULL : idx, dev ? dev->n : n_dev_split, &R);
    } else if (!st) {
        r.m = m;
        r.tf = gyro_classifier_tf(m);
        st = run_setup(&r, nz, train, dev, idx, n_dev_split);
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
            gyro_progress_finish(&r.prog, R.steps / r.total_steps, NAN, r.lr, r.loss);
            gyro_train_best_restore(&r.best, &R);
            R.seconds = gyro_now() - r.t0;
            R.steps_per_second = r.train_time > 0 ? R.steps / r.train_time : NAN;
        }
    }
    run_free(&r);
    gyro_tokenizer_free(nz);
    free(idx);
    if (blas_threads != 1) gyro_blas_set_threads(blas_threads);
    if (st && st != GYRO_ERR_INTERRUPTED) {
        gyro_classifier_free(m);
        m = NULL;
    }
    if (res) *res = R;
    *out = m;
    return st;
}

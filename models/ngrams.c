/* ngrams.c — the bag-of-n-grams classifier (ngrams.h): features, forward, backward, SGD step.
 *
 * Hashing follows fastText's scheme (a multiplicative combination of the tokens' hashes), over
 * 64-bit FNV-1a token hashes, with one salt for an utterance's n-grams and another for its
 * context, so an n-gram and the same n-gram one turn earlier have different rows.
 */
#include "models/ngrams.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/core/rng.h"
#include "models/hyp/poincare.h"
#include "models/text/strmap.h"

#define NGRAM_MULT 116049371ULL            /* fastText's n-gram hash multiplier */
#define SALT_TEXT 0x9e3779b97f4a7c15ULL
#define SALT_CONTEXT 0xc2b2ae3d27d4eb4fULL
#define HASH_BOS 0x2f3c2f733e3c732fULL   /* hashes of the two boundary tokens */
#define HASH_EOS 0x3c2f733e2f3c733eULL

gyro_ngrams_config gyro_ngrams_config_default(int geometry)
{
    return (gyro_ngrams_config){
        .geometry = geometry, .dim = 100, .buckets = 200000, .max_n = 2, .max_len = 128,
        .context = 0, .context_weight = 1.0f, .curvature = 1.0f, .pool = GYRO_NGRAMS_POOL_TANGENT,
    };
}

gyro_status gyro_ngrams_config_validate(const gyro_ngrams_config *c)
{
    if (!c) return gyro_error_set(GYRO_ERR_USAGE, "ngrams: NULL configuration");
    if (c->geometry != GYRO_TF_GEOMETRY_EUCLIDEAN && c->geometry != GYRO_TF_GEOMETRY_HYPERBOLIC)
        return gyro_error_set(GYRO_ERR_USAGE, "ngrams: geometry must be euclidean or hyperbolic "
                              "(the lorentz geometry has no n-gram model)");
    if (c->dim < 1 || c->dim > 4096) return gyro_error_set(GYRO_ERR_USAGE, "ngrams: --dim must be in 1..4096");
    if (c->buckets < 0 || c->buckets > (1 << 26))
        return gyro_error_set(GYRO_ERR_USAGE, "ngrams: --buckets must be in 0..67108864");
    if (c->max_n < 1 || c->max_n > 8) return gyro_error_set(GYRO_ERR_USAGE, "ngrams: --max-n must be in 1..8");
    if (c->max_n > 1 && c->buckets == 0)
        return gyro_error_set(GYRO_ERR_USAGE, "ngrams: n-grams longer than 1 need --buckets > 0");
    if (c->context && c->buckets == 0)
        return gyro_error_set(GYRO_ERR_USAGE, "ngrams: --context needs --buckets > 0");
    if (c->max_len < 1 || c->max_len > (1 << 16)) return gyro_error_set(GYRO_ERR_USAGE, "ngrams: --max-len must be in 1..65536");
    if (!(c->context_weight > 0 && c->context_weight <= 100))
        return gyro_error_set(GYRO_ERR_USAGE, "ngrams: --context-weight must be in (0, 100]");
    if (!(c->curvature > 0 && c->curvature <= 1e4)) return gyro_error_set(GYRO_ERR_USAGE, "ngrams: --curvature must be in (0, 1e4]");
    if (c->pool != GYRO_NGRAMS_POOL_EINSTEIN && c->pool != GYRO_NGRAMS_POOL_TANGENT)
        return gyro_error_set(GYRO_ERR_USAGE, "ngrams: unknown pooling %d (einstein 0, tangent 1)", c->pool);
    if (c->vocab_size < 1 || c->n_classes < 1)
        return gyro_error_set(GYRO_ERR_USAGE, "ngrams: vocabulary and classes must be >= 1");
    if ((int64_t)c->vocab_size + c->buckets > INT32_MAX)
        return gyro_error_set(GYRO_ERR_USAGE, "ngrams: too many rows");
    if (c->hierarchy != 0 && c->hierarchy != 1) return gyro_error_set(GYRO_ERR_USAGE, "ngrams: hierarchy must be 0 or 1");
    if (c->n_parents < 0 || c->n_parents > (c->hierarchy ? (1 << 20) : 0))
        return gyro_error_set(GYRO_ERR_USAGE, "ngrams: %d parent classes for %d labels", c->n_parents, c->n_classes);
    return GYRO_OK;
}

size_t gyro_ngrams_param_count(const gyro_ngrams_config *c)
{
    size_t V = (size_t)c->vocab_size + (size_t)c->buckets, C = (size_t)c->dim,
           K = (size_t)c->n_classes + (size_t)c->n_parents;   /* head rows */
    return V * C + K * C + (c->geometry == GYRO_TF_GEOMETRY_HYPERBOLIC ? K * C : K);
}

/* Label k's candidate parents (ngrams.h): its '+'-separated atoms and each atom's part before
 * its first '.', as ids of `names`, without repeats; returns how many were written to ids
 * (cap ≥ 2·atoms). */
static gyro_status candidate_parents(gyro_strmap *names, const char *label, int32_t *ids, int cap, int *n)
{
    char buf[1024];
    *n = 0;
    for (const char *a = label; *a;) {
        const char *e = strchr(a, '+');
        size_t len = e ? (size_t)(e - a) : strlen(a);
        for (int part = 0; part < 2 && len > 0; part++) {
            size_t l = len;
            if (part == 1) {           /* the atom's prefix */
                const char *dot = memchr(a, '.', len);
                if (!dot || dot == a) break;
                l = (size_t)(dot - a);
            }
            if (l >= sizeof buf) break;
            memcpy(buf, a, l);
            buf[l] = '\0';
            int32_t id;
            int added;
            gyro_status st = gyro_strmap_intern(names, buf, &id, &added);
            if (st) return st;
            int seen = 0;
            for (int j = 0; j < *n; j++) seen |= ids[j] == id;
            if (!seen && *n < cap) ids[(*n)++] = id;
        }
        if (!e) break;
        a = e + 1;
    }
    return GYRO_OK;
}

/* The parent map of K labels (ngrams.h): candidates shared by two or more labels, numbered in
 * order of first appearance; m->parent_start/parent_idx and m->cfg.n_parents. */
static gyro_status label_parents(gyro_ngrams_model *m, const char *const *labels)
{
    const int K = m->cfg.n_classes;
    gyro_strmap *names = NULL;
    int total = 0;
    for (int k = 0; k < K; k++) {
        int atoms = 1;
        for (const char *p = labels[k]; *p; p++) atoms += *p == '+';
        total += 2 * atoms;
    }
    int32_t *cand = malloc((size_t)total * sizeof *cand), *cstart = malloc((size_t)(K + 1) * sizeof *cstart);
    int32_t *count = NULL, *renum = NULL;
    gyro_status st = (!cand || !cstart) ? gyro_error_set(GYRO_ERR_NOMEM, "ngrams: label hierarchy") : gyro_strmap_new(&names);
    int used = 0;
    for (int k = 0; !st && k < K; k++) {
        int n;
        cstart[k] = used;
        st = candidate_parents(names, labels[k], cand + used, total - used, &n);
        used += n;
    }
    size_t N = st ? 0 : gyro_strmap_count(names);
    if (!st) {
        cstart[K] = used;
        count = calloc(N ? N : 1, sizeof *count);
        renum = malloc((N ? N : 1) * sizeof *renum);
        m->parent_start = malloc((size_t)(K + 1) * sizeof *m->parent_start);
        m->parent_idx = malloc((size_t)(used ? used : 1) * sizeof *m->parent_idx);
        if (!count || !renum || !m->parent_start || !m->parent_idx) st = gyro_error_set(GYRO_ERR_NOMEM, "ngrams: label hierarchy");
    }
    if (!st) {
        for (int j = 0; j < used; j++) count[cand[j]]++;
        int P = 0;
        for (int j = 0; j < used; j++)   /* first appearance order */
            if (count[cand[j]] >= 2) { renum[cand[j]] = P++; count[cand[j]] = -count[cand[j]]; }
        int w = 0;
        for (int k = 0; k < K; k++) {
            m->parent_start[k] = w;
            for (int j = cstart[k]; j < cstart[k + 1]; j++)
                if (count[cand[j]] < 0) m->parent_idx[w++] = renum[cand[j]];
        }
        m->parent_start[K] = w;
        m->cfg.n_parents = P;
    }
    gyro_strmap_free(names);
    free(cand);
    free(cstart);
    free(count);
    free(renum);
    return st;
}

gyro_status gyro_ngrams_new(const gyro_ngrams_config *cfg, const char *const *labels, uint64_t seed,
                            int init, gyro_ngrams_model **out)
{
    if (out) *out = NULL;
    if (!out || !cfg || (cfg->hierarchy && !labels)) return gyro_error_set(GYRO_ERR_USAGE, "ngrams: NULL argument");
    gyro_ngrams_config c0 = *cfg;
    c0.n_parents = 0;
    gyro_status st = gyro_ngrams_config_validate(&c0);
    if (st) return st;
    gyro_ngrams_model *m = calloc(1, sizeof *m);
    if (!m) return gyro_error_set(GYRO_ERR_NOMEM, "ngrams model");
    m->cfg = c0;
    if (cfg->hierarchy && (st = label_parents(m, labels))) { gyro_ngrams_free(m); return st; }
    m->n_params = gyro_ngrams_param_count(&m->cfg);
    m->params = calloc(m->n_params, sizeof *m->params);
    if (!m->params) { gyro_ngrams_free(m); return gyro_error_set(GYRO_ERR_NOMEM, "ngrams model of %zu parameters", gyro_ngrams_param_count(&m->cfg)); }
    const int hyp = cfg->geometry == GYRO_TF_GEOMETRY_HYPERBOLIC;
    int V = cfg->vocab_size + cfg->buckets, C = cfg->dim, K = gyro_ngrams_head_rows(m);
    size_t off = 0;
    gyro_tf_tensor *T = m->tensors;
    T[0] = (gyro_tf_tensor){"ngram_emb", off, (size_t)V * C, V, C, hyp ? GYRO_TF_MANIFOLD_BALL : GYRO_TF_MANIFOLD_EUCLIDEAN};
    off += T[0].size;
    T[1] = (gyro_tf_tensor){hyp ? "ngram_mlr_a" : "ngram_out_w", off, (size_t)K * C, K, C, GYRO_TF_MANIFOLD_EUCLIDEAN};
    off += T[1].size;
    if (hyp) T[2] = (gyro_tf_tensor){"ngram_mlr_p", off, (size_t)K * C, K, C, GYRO_TF_MANIFOLD_BALL};
    else T[2] = (gyro_tf_tensor){"ngram_out_b", off, (size_t)K, 1, K, GYRO_TF_MANIFOLD_EUCLIDEAN};
    m->n_tensors = 3;
    m->emb = m->params + T[0].offset;
    m->head_a = m->params + T[1].offset;
    m->head_p = hyp ? m->params + T[2].offset : NULL;
    m->head_b = hyp ? NULL : m->params + T[2].offset;
    if (init) {
        gyro_rng r;
        gyro_rng_seed(&r, seed ^ 0x6e6772616d73ULL);
        double a = 1.0 / C;   /* fastText: uniform(−1/dim, 1/dim); well inside any ball of c ≤ dim² */
        for (size_t i = 0; i < (size_t)V * C; i++) m->emb[i] = (float)((2 * gyro_rng_uniform(&r) - 1) * a);
        if (hyp) gyro_poincare_project_batch_f32(m->emb, m->emb, cfg->curvature, V, C);
    }
    *out = m;
    return GYRO_OK;
}

int gyro_ngrams_head_rows(const gyro_ngrams_model *m)
{
    return m->cfg.n_classes + m->cfg.n_parents;
}

void gyro_ngrams_free(gyro_ngrams_model *m)
{
    if (!m) return;
    free(m->params);
    free(m->parent_start);
    free(m->parent_idx);
    free(m);
}

uint64_t gyro_ngrams_token_hash(const char *s)
{
    uint64_t h = 14695981039346656037ULL;
    for (; *s; s++) h = (h ^ (uint8_t)*s) * 1099511628211ULL;
    return h;
}

/* A hashed row: V + (mixed hash mod buckets). The final mix (splitmix64's) spreads the
 * multiplicative combination over the low bits the modulus keeps. */
static int32_t bucket_row(const gyro_ngrams_config *c, uint64_t h)
{
    h ^= h >> 30; h *= 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 27; h *= 0x94d049bb133111ebULL;
    h ^= h >> 31;
    return (int32_t)(c->vocab_size + (int64_t)(h % (uint64_t)c->buckets));
}

int gyro_ngrams_features(const gyro_ngrams_model *m, const int32_t *uni, const uint64_t *h, int n,
                         int context, int32_t *rows, int cap)
{
    const gyro_ngrams_config *c = &m->cfg;
    int from = 0, k = 0;
    if (n > c->max_len) {
        if (context) from = n - c->max_len;
        n = c->max_len;
    }
    uni += from;
    h += from;
    if (context) {
        if (c->buckets == 0) return 0;
        for (int i = 0; i < n && k < cap; i++) rows[k++] = bucket_row(c, SALT_CONTEXT ^ h[i]);
        for (int i = 0; i + 1 < n && k < cap; i++)
            rows[k++] = bucket_row(c, (SALT_CONTEXT ^ h[i]) * NGRAM_MULT + h[i + 1]);
        return k;
    }
    for (int i = 0; i < n && k < cap; i++) rows[k++] = uni[i];
    if (c->buckets == 0) return k;
    /* n-grams over BOS c_1 … c_n EOS (the boundaries mark where the utterance starts and ends,
     * as fastText's end-of-sentence token does); the EOS unigram is a row every bag shares */
    if (k < cap) rows[k++] = bucket_row(c, SALT_TEXT ^ HASH_EOS);
    for (int i = -1; i < n; i++) {
        uint64_t g = SALT_TEXT ^ (i < 0 ? HASH_BOS : h[i]);
        for (int j = i + 1; j <= n && j - i < c->max_n && k < cap; j++) {
            g = g * NGRAM_MULT + (j == n ? HASH_EOS : h[j]);
            rows[k++] = bucket_row(c, g);
        }
    }
    return k;
}

int gyro_ngram_bag_cap(const gyro_ngrams_model *m)
{
    const gyro_ngrams_config *c = &m->cfg;
    /* unigrams + EOS + n-grams over the max_len + 2 tokens with boundaries */
    return c->max_len + 1 + (c->max_len + 2) * (c->max_n - 1) + (c->context ? 2 * c->max_len : 0);
}

/* v (C) = Σ w_j log0(x_j) / Σ w_j, the tangent mean of the bag; returns Σ w_j. */
static double tangent_mean(const gyro_ngrams_model *m, const int32_t *rows, const float *w, int nf, float *v)
{
    const int C = m->cfg.dim;
    double acc[4096], ws = 0;   /* (C), cfg.dim ≤ 4096 (validated); only C entries are zeroed */
    memset(acc, 0, (size_t)C * sizeof *acc);
    float t[4096];
    for (int j = 0; j < nf; j++) {
        gyro_poincare_logmap0_f32(t, m->emb + (size_t)rows[j] * C, m->cfg.curvature, C);
        double wj = w ? w[j] : 1.0;
        for (int i = 0; i < C; i++) acc[i] += wj * t[i];
        ws += wj;
    }
    for (int i = 0; i < C; i++) v[i] = (float)(acc[i] / ws);
    return ws;
}

/* logit_k += Σ_{q ∈ parents(k)} logit_{K+q} (ngrams.h, hierarchy). */
static void add_parent_logits(const gyro_ngrams_model *m, float *logits)
{
    const int K = m->cfg.n_classes;
    if (!m->parent_start) return;
    for (int k = 0; k < K; k++)
        for (int j = m->parent_start[k]; j < m->parent_start[k + 1]; j++) logits[k] += logits[K + m->parent_idx[j]];
}

void gyro_ngrams_forward(const gyro_ngrams_model *m, const int32_t *rows, const float *w, int nf,
                         float *y, float *logits)
{
    const int C = m->cfg.dim, K = gyro_ngrams_head_rows(m);
    if (m->cfg.geometry == GYRO_TF_GEOMETRY_HYPERBOLIC) {
        if (m->cfg.pool == GYRO_NGRAMS_POOL_TANGENT) {
            float v[4096];
            tangent_mean(m, rows, w, nf, v);
            gyro_poincare_expmap0_f32(y, v, m->cfg.curvature, C);
        } else {
            gyro_poincare_einstein_midpoint_f32(y, m->emb, rows, w, m->cfg.curvature, nf, C);
        }
        gyro_poincare_hyp_mlr_f32(logits, y, m->head_p, m->head_a, m->cfg.curvature, K, C);
        add_parent_logits(m, logits);
        return;
    }
    double acc[4096], ws = 0;   /* (C), cfg.dim ≤ 4096 (validated); only C entries are zeroed */
    memset(acc, 0, (size_t)C * sizeof *acc);
    for (int j = 0; j < nf; j++) {
        const float *x = m->emb + (size_t)rows[j] * C;
        double wj = w ? w[j] : 1.0;
        for (int i = 0; i < C; i++) acc[i] += wj * x[i];
        ws += wj;
    }
    for (int i = 0; i < C; i++) y[i] = (float)(acc[i] / ws);
    for (int k = 0; k < K; k++) {
        const float *a = m->head_a + (size_t)k * C;
        double s = m->head_b[k];
        for (int i = 0; i < C; i++) s += (double)a[i] * y[i];
        logits[k] = (float)s;
    }
    add_parent_logits(m, logits);
}

void gyro_ngrams_backward(const gyro_ngrams_model *m, const int32_t *rows, const float *w, int nf,
                          const float *y, float *dlogits, float *dX, float *dA, float *dP,
                          float *dB)
{
    const int C = m->cfg.dim, K = gyro_ngrams_head_rows(m), L = m->cfg.n_classes;
    if (m->parent_start) {   /* a parent's gradient is the sum of its children's */
        memset(dlogits + L, 0, (size_t)(K - L) * sizeof *dlogits);
        for (int k = 0; k < L; k++)
            for (int j = m->parent_start[k]; j < m->parent_start[k + 1]; j++) dlogits[L + m->parent_idx[j]] += dlogits[k];
    }
    float dy[4096];
    memset(dy, 0, (size_t)C * sizeof *dy);
    if (m->cfg.geometry == GYRO_TF_GEOMETRY_HYPERBOLIC) {
        gyro_poincare_hyp_mlr_backward_f32(dy, dP, dA, dlogits, y, m->head_p, m->head_a,
                                           m->cfg.curvature, K, C);
        if (!dX) return;
        if (m->cfg.pool != GYRO_NGRAMS_POOL_TANGENT) {
            gyro_poincare_einstein_midpoint_backward_f32(dX, dy, m->emb, rows, w, m->cfg.curvature, nf, C);
            return;
        }
        float v[4096], dv[4096], g[4096];
        double ws = tangent_mean(m, rows, w, nf, v);
        memset(dv, 0, (size_t)C * sizeof *dv);
        gyro_poincare_expmap0_backward_f32(dv, dy, v, m->cfg.curvature, C);
        for (int j = 0; j < nf; j++) {
            float f = (float)((w ? w[j] : 1.0) / ws);
            for (int i = 0; i < C; i++) g[i] = f * dv[i];
            gyro_poincare_logmap0_backward_f32(dX + (size_t)j * C, g, m->emb + (size_t)rows[j] * C,
                                               m->cfg.curvature, C);
        }
        return;
    }
    for (int k = 0; k < K; k++) {
        const float *a = m->head_a + (size_t)k * C;
        float g = dlogits[k];
        if (g == 0) continue;
        for (int i = 0; i < C; i++) dy[i] += g * a[i];
        if (dA) for (int i = 0; i < C; i++) dA[(size_t)k * C + i] += g * y[i];
        if (dB) dB[k] += g;
    }
    if (!dX) return;
    double ws = 0;
    for (int j = 0; j < nf; j++) ws += w ? w[j] : 1.0;
    for (int j = 0; j < nf; j++) {
        float f = (float)((w ? w[j] : 1.0) / ws);
        for (int i = 0; i < C; i++) dX[(size_t)j * C + i] += f * dy[i];
    }
}

void gyro_ngrams_step(gyro_ngrams_model *m, const int32_t *rows, int nf, const float *dX,
                      const float *dA, const float *dP, const float *dB, float lr, float head_lr,
                      int freeze_below)
{
    const int C = m->cfg.dim, K = gyro_ngrams_head_rows(m);
    const float c = m->cfg.curvature;
    const int hyp = m->cfg.geometry == GYRO_TF_GEOMETRY_HYPERBOLIC;
    if (dX)
        for (int j = 0; j < nf; j++) {
            if (rows[j] < freeze_below) continue;
            float *x = m->emb + (size_t)rows[j] * C;
            const float *g = dX + (size_t)j * C;
            if (hyp) gyro_poincare_rsgd_step_f32(x, x, g, c, lr, C);
            else for (int i = 0; i < C; i++) x[i] -= lr * g[i];
        }
    if (dA) for (size_t i = 0; i < (size_t)K * C; i++) m->head_a[i] -= head_lr * dA[i];
    if (hyp && dP) gyro_poincare_rsgd_step_batch_f32(m->head_p, m->head_p, dP, c, head_lr, K, C);
    if (!hyp && dB) for (int k = 0; k < K; k++) m->head_b[k] -= head_lr * dB[k];
}

const gyro_tf_tensor *gyro_ngrams_first_nonfinite(const gyro_ngrams_model *m, size_t *at)
{
    for (int t = 0; t < m->n_tensors; t++) {
        const gyro_tf_tensor *T = &m->tensors[t];
        const float *x = m->params + T->offset;
        for (size_t i = 0; i < T->size; i++)
            if (!isfinite(x[i])) { if (at) *at = i; return T; }
    }
    return NULL;
}

/* classifier.c — the intent classifier's model file, vocabulary and prediction (classifier.h).
 *
 * File layout (all integers little-endian):
 *     "GYROCLF\0"  u32 format version  u32 flags (0)  u64 payload length  payload  u32 CRC-32
 * (the CRC-32 of the payload: zlib's, models/core/crc32.h)
 * payload:
 *     section "norm"   u32 count, then (str key, f64 value) pairs: t2s, nfkc, case_fold,
 *                      token_unit (0 characters, 1 ICU words)
 *     section "config" u32 count, then (str key, f64 value) pairs: the transformer configuration
 *                      (geometry 0 Euclidean, 1 hyperbolic/Poincaré, 2 Lorentz; an unknown
 *                      geometry is refused as GYRO_ERR_FORMAT with the value named)
 *       or section "ngrams" (format version 2): the same pairs for a bag-of-n-grams model
 *                      (ngrams.h); a transformer file keeps version 1, so older readers load it
 *     section "vocab"  u32 n, then n strings (ids 1..n; id 0 is UNK)
 *     section "labels" u32 n, then n strings (class ids 0..n−1; the hierarchy and atoms are
 *                      re-derived from the names by pipeline/labels)
 *     section "params" u32 n, then n × (str name, u32 manifold, u32 rows, u32 cols, f32 × rows·cols)
 *                      (manifold 0 Euclidean, 1 ball rows, 2 hyperboloid rows)
 * A string is a u32 byte length and the bytes (no NUL). Named key/value pairs keep the file
 * readable when the configuration struct grows: a missing key keeps its default, an unknown key
 * means a newer writer and is refused. The reader bounds-checks every read, verifies the CRC
 * before parsing, rebuilds the model from the configuration and then requires the parameter
 * tensors to match the model's tensor table by name, manifold and shape, and to be finite.
 *
 * The vocabulary is a gyro_strmap (models/text/strmap.h), read-only after creation so
 * concurrent predictions only read it.
 */
#include "models/classifier.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>

#include "models/core/atomic_file.h"
#include "models/core/crc32.h"
#include "models/text/strmap.h"

#define MAGIC_LEN 8
#define MAX_FILE_BYTES ((uint64_t)4 << 30)
#define MAX_STRING 4096u

struct gyro_classifier {
    gyro_tf_model *tf;            /* the transformer, or NULL for an n-gram model */
    gyro_tf_packed *pack;         /* tf's weights packed for prediction (owned), or NULL: made
                                   * at load, dropped when tf is handed out for changes */
    gyro_ngrams_model *ng;        /* the n-gram model, or NULL for a transformer */
    gyro_normalize_options norm;
    int token_unit;               /* gyro_token_unit */
    int n_tokens;                 /* ids 1..n_tokens */
    gyro_strmap *vocab;           /* token → id − 1; read-only after creation */
    gyro_label_set *labels;
    uint32_t crc;                 /* of the payload last saved or loaded */
    char version[96];
};

struct gyro_classifier_scratch {
    gyro_tokenizer *tok;
    int tok_shared;               /* tok belongs to a gyro_classifier_batch (not freed here) */
    gyro_tf_acts *acts;
    int32_t *ids;                 /* (max_len) token ids */
    uint64_t *hash;               /* (max_len) token hashes (n-gram models) */
    int32_t *rows;                /* (row_cap) feature rows of the bag (n-gram models) */
    float *w;                     /* (row_cap) their weights */
    float *y;                     /* (dim) pooled point (n-gram models) */
    float *logits;                /* (K) (n-gram models) */
    int row_cap;
    float *probs;                 /* (K) */
    int *order;                   /* (K) */
    char *text;                   /* normalized text of the last predict */
    size_t text_cap;
};

/* ---- vocabulary ---------------------------------------------------------------------------- */

int gyro_classifier_token_id(const gyro_classifier *m, const char *token)
{
    if (!m || !token || !m->vocab) return GYRO_CLASSIFIER_UNK;
    return gyro_strmap_find(m->vocab, token) + 1;   /* −1 (absent) is UNK, 0 */
}

/* The vocabulary from n strings (copied): token i gets id i + 1. USAGE on a duplicate or empty
 * token. */
static gyro_status vocab_build(gyro_classifier *m, const char *const *vocab, int n)
{
    gyro_status st = gyro_strmap_new(&m->vocab);
    for (int i = 0; !st && i < n; i++) {
        if (!vocab[i] || !vocab[i][0]) return gyro_error_set(GYRO_ERR_USAGE, "vocabulary: empty token %d", i + 1);
        int32_t id;
        int added;
        if ((st = gyro_strmap_intern(m->vocab, vocab[i], &id, &added))) break;
        if (!added) return gyro_error_set(GYRO_ERR_USAGE, "vocabulary: duplicate token '%s'", vocab[i]);
        m->n_tokens = i + 1;
    }
    return st;
}

/* ---- configuration fields as key/value pairs ---------------------------------------------- */

typedef struct field { const char *key; size_t off; int is_float; } field;
#define FI(k) {#k, offsetof(gyro_tf_config, k), 0}
#define FF(k) {#k, offsetof(gyro_tf_config, k), 1}
static const field config_fields[] = {
    FI(geometry), FI(vocab_size), FI(n_classes), FI(dim), FI(n_layers), FI(n_heads),
    FI(head_dim), FI(ffn_dim), FI(max_len), FF(dropout), FF(curvature), FF(pos_scale),
    FI(layernorm), FI(residual), FI(ffn_activation), FI(attention_kind), FI(ffn_kind),
    FI(mla_latent_dim), FI(moe_experts), FI(moe_shared), FI(moe_top_k),
    FI(mla_q_latent), FI(mla_rope_dim), FF(moe_balance), FI(qkv_tangent),
};
#define N_CONFIG_FIELDS (sizeof config_fields / sizeof config_fields[0])
#define NI(k) {#k, offsetof(gyro_ngrams_config, k), 0}
#define NF(k) {#k, offsetof(gyro_ngrams_config, k), 1}
static const field ngrams_fields[] = {
    NI(geometry), NI(vocab_size), NI(n_classes), NI(dim), NI(buckets), NI(max_n), NI(max_len),
    NI(context), NF(context_weight), NF(curvature), NI(pool), NI(hierarchy), NI(n_parents),
};
#define N_NGRAMS_FIELDS (sizeof ngrams_fields / sizeof ngrams_fields[0])

/* The parameter block and tensor table of either architecture. */
static void param_table(const gyro_classifier *m, const gyro_tf_tensor **T, int *n, float **params)
{
    if (m->ng) { *T = m->ng->tensors; *n = m->ng->n_tensors; *params = m->ng->params; }
    else { *T = m->tf->tensors; *n = m->tf->n_tensors; *params = m->tf->params_memory; }
}
/* The "norm" section describes how text becomes tokens: normalization options, then the unit. */
typedef struct text_options { gyro_normalize_options norm; int token_unit; } text_options;
static const field norm_fields[] = {
    {"t2s", offsetof(text_options, norm) + offsetof(gyro_normalize_options, t2s), 0},
    {"nfkc", offsetof(text_options, norm) + offsetof(gyro_normalize_options, nfkc), 0},
    {"case_fold", offsetof(text_options, norm) + offsetof(gyro_normalize_options, case_fold), 0},
    {"token_unit", offsetof(text_options, token_unit), 0},
};
#define N_NORM_FIELDS (sizeof norm_fields / sizeof norm_fields[0])

/* ---- writer ---------------------------------------------------------------------------------- */

typedef struct wbuf { uint8_t *p; size_t n, cap; int oom; } wbuf;

static void w_bytes(wbuf *b, const void *src, size_t n)
{
    if (b->oom) return;
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->n + n) cap *= 2;
        uint8_t *p = realloc(b->p, cap);
        if (!p) { b->oom = 1; return; }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, src, n);
    b->n += n;
}
static void w_u32(wbuf *b, uint32_t v)
{
    uint8_t x[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    w_bytes(b, x, 4);
}
static void w_u64(wbuf *b, uint64_t v) { w_u32(b, (uint32_t)v); w_u32(b, (uint32_t)(v >> 32)); }
static void w_f64(wbuf *b, double d) { uint64_t v; memcpy(&v, &d, 8); w_u64(b, v); }
static void w_f32(wbuf *b, float f) { uint32_t v; memcpy(&v, &f, 4); w_u32(b, v); }
static void w_str(wbuf *b, const char *s) { size_t n = strlen(s); w_u32(b, (uint32_t)n); w_bytes(b, s, n); }

static void write_fields(wbuf *b, const char *section, const field *f, size_t nf, const void *base)
{
    w_str(b, section);
    w_u32(b, (uint32_t)nf);
    for (size_t i = 0; i < nf; i++) {
        const char *p = (const char *)base + f[i].off;
        double v;
        if (f[i].is_float) { float x; memcpy(&x, p, sizeof x); v = x; }
        else { int x; memcpy(&x, p, sizeof x); v = x; }
        w_str(b, f[i].key);
        w_f64(b, v);
    }
}

static void build_payload(const gyro_classifier *m, wbuf *b)
{
    text_options to = {m->norm, m->token_unit};
    write_fields(b, "norm", norm_fields, N_NORM_FIELDS, &to);
    if (m->ng) write_fields(b, "ngrams", ngrams_fields, N_NGRAMS_FIELDS, &m->ng->cfg);
    else write_fields(b, "config", config_fields, N_CONFIG_FIELDS, &m->tf->cfg);
    w_str(b, "vocab");
    w_u32(b, (uint32_t)m->n_tokens);
    for (int i = 0; i < m->n_tokens; i++) w_str(b, gyro_strmap_key(m->vocab, i));
    w_str(b, "labels");
    int k = gyro_label_set_count(m->labels);
    w_u32(b, (uint32_t)k);
    for (int i = 0; i < k; i++) w_str(b, gyro_label_set_name(m->labels, i));
    const gyro_tf_tensor *tt;
    int nt;
    float *params;
    param_table(m, &tt, &nt, &params);
    w_str(b, "params");
    w_u32(b, (uint32_t)nt);
    for (int t = 0; t < nt; t++) {
        const gyro_tf_tensor *T = &tt[t];
        w_str(b, T->name);
        w_u32(b, (uint32_t)T->manifold);
        w_u32(b, (uint32_t)T->rows);
        w_u32(b, (uint32_t)T->cols);
        const float *x = params + T->offset;
        for (size_t i = 0; i < T->size; i++) w_f32(b, x[i]);
    }
}

static void set_version(gyro_classifier *m)
{
    if (m->ng) {
        const gyro_ngrams_config *g = &m->ng->cfg;
        snprintf(m->version, sizeof m->version, "ngrams-%s-%dd-%08x",
                 gyro_tf_geometry_name(g->geometry) ? gyro_tf_geometry_name(g->geometry) : "?", g->dim,
                 (unsigned)m->crc);
        return;
    }
    const gyro_tf_config *c = &m->tf->cfg;
    snprintf(m->version, sizeof m->version, "%s-%dd-%dL-%08x",
             gyro_tf_geometry_name(c->geometry) ? gyro_tf_geometry_name(c->geometry) : "?", c->dim,
             c->n_layers, (unsigned)m->crc);
}

gyro_status gyro_classifier_save(const gyro_classifier *m, const char *path)
{
    if (!m || !path) return gyro_error_set(GYRO_ERR_USAGE, "classifier save: NULL argument");
    size_t at;
    const gyro_tf_tensor *bad = m->ng ? gyro_ngrams_first_nonfinite(m->ng, &at)
                                      : gyro_tf_first_nonfinite(m->tf, m->tf->params_memory, &at);
    if (bad)   /* a diverged model must never replace a good file */
        return gyro_error_set(GYRO_ERR_NAN, "%s: not written: parameter %zu of tensor %s is not finite "
                              "(the file is left as it was)", path, at, bad->name);
    wbuf b = {0};
    build_payload(m, &b);
    if (b.oom) { free(b.p); return gyro_error_set(GYRO_ERR_NOMEM, "%s: model of %zu bytes", path, b.n); }
    wbuf h = {0};
    w_bytes(&h, GYRO_CLASSIFIER_MAGIC, MAGIC_LEN); /* the literal's NUL is the 8th byte */
    w_u32(&h, m->ng ? 2u : 1u);
    w_u32(&h, 0);
    w_u64(&h, b.n);
    uint32_t crc = gyro_crc32(0, b.p, b.n);
    wbuf t = {0};
    w_u32(&t, crc);
    gyro_status st = GYRO_OK;
    if (h.oom || t.oom) st = gyro_error_set(GYRO_ERR_NOMEM, "%s", path);
    gyro_atomic_file af;
    if (st == GYRO_OK) st = gyro_atomic_open(&af, path);
    if (st == GYRO_OK) {
        if (fwrite(h.p, 1, h.n, af.fp) != h.n || fwrite(b.p, 1, b.n, af.fp) != b.n ||
            fwrite(t.p, 1, t.n, af.fp) != t.n) {
            gyro_atomic_abort(&af);
            st = gyro_error_set(GYRO_ERR_IO, "%s: write error: %s", path, strerror(errno));
        } else {
            st = gyro_atomic_commit(&af);
        }
    }
    if (st == GYRO_OK) {
        /* the version string names the saved parameters */
        gyro_classifier *mm = (gyro_classifier *)m;
        mm->crc = crc;
        set_version(mm);
    }
    free(h.p);
    free(b.p);
    free(t.p);
    return st;
}

/* ---- reader ---------------------------------------------------------------------------------- */

typedef struct rbuf { const uint8_t *p; size_t n, off; const char *what; int err; } rbuf;

static int r_need(rbuf *r, size_t n, const char *what)
{
    if (r->err) return 0;
    if (n > r->n - r->off) { r->err = 1; r->what = what; return 0; }
    return 1;
}
static uint32_t r_u32(rbuf *r, const char *what)
{
    if (!r_need(r, 4, what)) return 0;
    const uint8_t *p = r->p + r->off;
    r->off += 4;
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t r_u64(rbuf *r, const char *what)
{
    uint64_t lo = r_u32(r, what);
    return lo | (uint64_t)r_u32(r, what) << 32;
}
static double r_f64(rbuf *r, const char *what) { uint64_t v = r_u64(r, what); double d; memcpy(&d, &v, 8); return d; }

/* A string copied into buf (cap bytes, NUL-terminated); "" on error. */
static const char *r_str(rbuf *r, char *buf, size_t cap, const char *what)
{
    buf[0] = '\0';
    uint32_t n = r_u32(r, what);
    if (r->err) return buf;
    if (n >= cap || n > MAX_STRING) { r->err = 1; r->what = what; return buf; }
    if (!r_need(r, n, what)) return buf;
    memcpy(buf, r->p + r->off, n);
    buf[n] = '\0';
    if (memchr(buf, '\0', n)) { r->err = 1; r->what = what; buf[0] = '\0'; }
    r->off += n;
    return buf;
}

static gyro_status bad(const char *path, const char *fmt, const char *what)
{
    return gyro_error_set(GYRO_ERR_FORMAT, "%s: corrupt classifier model: %s%s", path, fmt, what ? what : "");
}

static gyro_status read_section(rbuf *r, const char *path, const char *want)
{
    char name[64];
    r_str(r, name, sizeof name, want);
    if (r->err) return bad(path, "truncated at section ", want);
    if (strcmp(name, want) != 0) return bad(path, "expected section ", want);
    return GYRO_OK;
}

/* The pairs of a section whose name was read already. */
static gyro_status read_field_values(rbuf *r, const char *path, const char *section, const field *f,
                                     size_t nf, void *base)
{
    uint32_t n = r_u32(r, section);
    if (n > 1024) return bad(path, "too many fields in ", section);
    for (uint32_t i = 0; i < n && !r->err; i++) {
        char key[128];
        r_str(r, key, sizeof key, section);
        double v = r_f64(r, section);
        if (r->err) break;
        size_t j = 0;
        while (j < nf && strcmp(f[j].key, key) != 0) j++;
        if (j == nf)
            return gyro_error_set(GYRO_ERR_VERSION,
                                  "%s: the model has a %s field '%s' this gyro does not know; "
                                  "it was written by a newer gyro (upgrade gyro)", path, section, key);
        if (!isfinite(v)) return bad(path, "non-finite value in ", section);
        char *p = (char *)base + f[j].off;
        if (f[j].is_float) { float x = (float)v; memcpy(p, &x, sizeof x); }
        else {
            if (v < -1e9 || v > 1e9 || v != floor(v)) return bad(path, "bad integer in ", section);
            int x = (int)v;
            memcpy(p, &x, sizeof x);
        }
    }
    if (r->err) return bad(path, "truncated in ", section);
    return GYRO_OK;
}

static gyro_status read_fields(rbuf *r, const char *path, const char *section, const field *f,
                               size_t nf, void *base)
{
    gyro_status st = read_section(r, path, section);
    return st ? st : read_field_values(r, path, section, f, nf, base);
}

/* The model configuration section: "config" (a transformer, into *cfg) or "ngrams" (an n-gram
 * model, into *ng, *is_ngrams = 1). */
static gyro_status read_model_config(rbuf *r, const char *path, gyro_tf_config *cfg,
                                     gyro_ngrams_config *ng, int *is_ngrams)
{
    char name[64];
    r_str(r, name, sizeof name, "config");
    if (r->err) return bad(path, "truncated at section ", "config");
    *is_ngrams = strcmp(name, "ngrams") == 0;
    if (*is_ngrams) {
        gyro_status st = read_field_values(r, path, "ngrams", ngrams_fields, N_NGRAMS_FIELDS, ng);
        if (st) return st;
        if (ng->geometry != GYRO_TF_GEOMETRY_EUCLIDEAN && ng->geometry != GYRO_TF_GEOMETRY_HYPERBOLIC)
            return gyro_error_set(GYRO_ERR_FORMAT, "%s: n-gram model geometry %d is unknown to this gyro "
                                  "(known: 0 euclidean, 1 hyperbolic; upgrade gyro)", path, ng->geometry);
        if (gyro_ngrams_config_validate(ng) != GYRO_OK)
            return gyro_error_prefix(GYRO_ERR_FORMAT, "%s: corrupt classifier model: configuration", path);
        cfg->vocab_size = ng->vocab_size;
        cfg->n_classes = ng->n_classes;
        return GYRO_OK;
    }
    if (strcmp(name, "config") != 0) return bad(path, "expected section ", "config");
    gyro_status st = read_field_values(r, path, "config", config_fields, N_CONFIG_FIELDS, cfg);
    if (st) return st;
    if (!gyro_tf_geometry_name(cfg->geometry))
        return gyro_error_set(GYRO_ERR_FORMAT, "%s: model geometry %d is unknown to this gyro "
                              "(known: 0 euclidean, 1 hyperbolic, 2 lorentz; upgrade gyro)", path,
                              cfg->geometry);
    if (gyro_tf_config_validate(cfg) != GYRO_OK)
        return gyro_error_prefix(GYRO_ERR_FORMAT, "%s: corrupt classifier model: configuration", path);
    return GYRO_OK;
}

/* An n-gram model for the classifier's labels (their names give the parent classes). */
static gyro_status new_ngrams(gyro_classifier *m, const gyro_ngrams_config *cfg, uint64_t seed, int init)
{
    int K = gyro_label_set_count(m->labels);
    const char **names = malloc((size_t)(K ? K : 1) * sizeof *names);
    if (!names) return gyro_error_set(GYRO_ERR_NOMEM, "ngrams model");
    for (int k = 0; k < K; k++) names[k] = gyro_label_set_name(m->labels, k);
    gyro_status st = gyro_ngrams_new(cfg, names, seed, init, &m->ng);
    free(names);
    return st;
}

/* Create the model of the configuration (zeros) once the file is known to hold its values. */
static gyro_status new_model(gyro_classifier *m, rbuf *r, const char *path, const gyro_tf_config *cfg,
                             const gyro_ngrams_config *ng, int is_ngrams)
{
    gyro_status st;
    if (is_ngrams) {
        if (gyro_ngrams_param_count(ng) > (r->n - r->off) / sizeof(float))
            return bad(path, "the configuration needs more parameters than the file holds", NULL);
        st = new_ngrams(m, ng, 0, 0);
        if (!st && m->ng->cfg.n_parents != ng->n_parents)
            return bad(path, "the labels give another number of parent classes than the configuration", NULL);
    } else {
        if (cfg->dim > (1 << 16) || cfg->ffn_dim > (1 << 20) || cfg->n_layers > 1024 || cfg->n_heads > 4096 ||
            cfg->head_dim > (1 << 16) || cfg->max_len > (1 << 20) ||
            gyro_tf_param_count(cfg) > (r->n - r->off) / sizeof(float))
            return bad(path, "the configuration needs more parameters than the file holds", NULL);
        st = gyro_tf_new(cfg, 0, 0, &m->tf);
    }
    return st ? gyro_error_prefix(st == GYRO_ERR_NOMEM ? st : GYRO_ERR_FORMAT, "%s", path) : GYRO_OK;
}

static gyro_status parse_payload(gyro_classifier *m, rbuf *r, const char *path)
{
    text_options to = {.token_unit = GYRO_TOKEN_CHARS};
    gyro_normalize_options_init(&to.norm);
    gyro_status st = read_fields(r, path, "norm", norm_fields, N_NORM_FIELDS, &to);
    if (st) return st;
    if (to.token_unit != GYRO_TOKEN_CHARS && to.token_unit != GYRO_TOKEN_WORDS)
        return gyro_error_set(GYRO_ERR_VERSION, "%s: token unit %d is unknown to this gyro (upgrade gyro)",
                              path, to.token_unit);
    m->norm = to.norm;
    m->token_unit = to.token_unit;
    gyro_tf_config cfg = gyro_tf_config_default(GYRO_TF_GEOMETRY_EUCLIDEAN);
    cfg.qkv_tangent = 0; /* absent in models written before the field: per-head-slice log0 */
    gyro_ngrams_config ng = gyro_ngrams_config_default(GYRO_TF_GEOMETRY_EUCLIDEAN);
    int is_ngrams = 0;
    if ((st = read_model_config(r, path, &cfg, &ng, &is_ngrams))) return st;

    /* vocabulary */
    if ((st = read_section(r, path, "vocab"))) return st;
    uint32_t nv = r_u32(r, "vocab");
    if (r->err || nv + 1 != (uint32_t)cfg.vocab_size) return bad(path, "vocabulary size differs from the configuration", NULL);
    if ((uint64_t)nv * 4 > r->n - r->off) return bad(path, "truncated in ", "vocab");
    char **tmp = calloc(nv ? nv : 1, sizeof *tmp);
    if (!tmp) return gyro_error_set(GYRO_ERR_NOMEM, "%s", path);
    char buf[MAX_STRING + 1];
    for (uint32_t i = 0; i < nv && !r->err; i++) {
        r_str(r, buf, sizeof buf, "vocab");
        tmp[i] = strdup(buf);
        if (!tmp[i]) { r->err = 1; r->what = "vocab"; }
    }
    if (!r->err) {
        st = vocab_build(m, (const char *const *)tmp, (int)nv);
        if (st) st = gyro_error_prefix(GYRO_ERR_FORMAT, "%s: corrupt classifier model", path);
    }
    for (uint32_t i = 0; i < nv; i++) free(tmp[i]);
    free(tmp);
    if (r->err) return bad(path, "truncated in ", "vocab");
    if (st) return GYRO_ERR_FORMAT;

    /* labels */
    if ((st = read_section(r, path, "labels"))) return st;
    uint32_t nl = r_u32(r, "labels");
    if (r->err || nl != (uint32_t)cfg.n_classes) return bad(path, "label count differs from the configuration", NULL);
    if ((st = gyro_label_set_new(&m->labels))) return st;
    for (uint32_t i = 0; i < nl; i++) {
        r_str(r, buf, sizeof buf, "labels");
        if (r->err) return bad(path, "truncated in ", "labels");
        int id = -1;
        if (gyro_label_set_add(m->labels, buf, &id) != GYRO_OK)
            return gyro_error_prefix(GYRO_ERR_FORMAT, "%s: corrupt classifier model: label %u", path, i);
        if (id != (int)i) return bad(path, "duplicate label ", buf);
    }

    /* parameters: the configuration must not ask for more values than the file holds */
    if ((st = new_model(m, r, path, &cfg, &ng, is_ngrams))) return st;
    const gyro_tf_tensor *tt;
    int ntt;
    float *params;
    param_table(m, &tt, &ntt, &params);
    if ((st = read_section(r, path, "params"))) return st;
    uint32_t nt = r_u32(r, "params");
    if (r->err || nt != (uint32_t)ntt) return bad(path, "parameter table differs from the configuration", NULL);
    for (uint32_t t = 0; t < nt; t++) {
        const gyro_tf_tensor *T = &tt[t];
        char name[128];
        r_str(r, name, sizeof name, "params");
        uint32_t man = r_u32(r, "params"), rows = r_u32(r, "params"), cols = r_u32(r, "params");
        if (r->err) return bad(path, "truncated in ", "params");
        if (strcmp(name, T->name) != 0 || man != (uint32_t)T->manifold || rows != (uint32_t)T->rows ||
            cols != (uint32_t)T->cols)
            return gyro_error_set(GYRO_ERR_FORMAT,
                                  "%s: corrupt classifier model: tensor %u is %s (%u×%u), expected %s (%d×%d)",
                                  path, t, name, rows, cols, T->name, T->rows, T->cols);
        if (!r_need(r, T->size * 4, "params")) return bad(path, "truncated in tensor ", T->name);
        float *x = params + T->offset;
        for (size_t i = 0; i < T->size; i++) {
            uint32_t v = (uint32_t)r->p[r->off] | (uint32_t)r->p[r->off + 1] << 8 |
                         (uint32_t)r->p[r->off + 2] << 16 | (uint32_t)r->p[r->off + 3] << 24;
            r->off += 4;
            memcpy(&x[i], &v, 4);
            if (!isfinite(x[i])) return bad(path, "non-finite parameter in ", T->name);
        }
    }
    if (r->off != r->n) return bad(path, "trailing bytes after the parameters", NULL);
    return GYRO_OK;
}

gyro_status gyro_classifier_load(const char *path, gyro_classifier **out)
{
    if (out) *out = NULL;
    if (!path || !out) return gyro_error_set(GYRO_ERR_USAGE, "classifier load: NULL argument");
    FILE *f = fopen(path, "rb");
    if (!f) return gyro_error_set(GYRO_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    uint8_t head[MAGIC_LEN + 16];
    size_t got = fread(head, 1, sizeof head, f);
    if (got < MAGIC_LEN || memcmp(head, GYRO_CLASSIFIER_MAGIC, MAGIC_LEN) != 0) {
        fclose(f);
        return gyro_error_set(GYRO_ERR_FORMAT, "%s: not a gyro classifier model (bad magic; "
                              "expected a file written by 'gyro classify train')", path);
    }
    if (got < sizeof head) {
        fclose(f);
        return gyro_error_set(GYRO_ERR_FORMAT, "%s: truncated classifier model header", path);
    }
    rbuf hr = {head, sizeof head, MAGIC_LEN, NULL, 0};
    uint32_t version = r_u32(&hr, "header"), flags = r_u32(&hr, "header");
    uint64_t len = r_u64(&hr, "header");
    if (version > GYRO_CLASSIFIER_FORMAT_VERSION) {
        fclose(f);
        return gyro_error_set(GYRO_ERR_VERSION, "%s: classifier model format version %u is newer "
                              "than this gyro reads (%u); upgrade gyro", path, version,
                              GYRO_CLASSIFIER_FORMAT_VERSION);
    }
    if (version == 0 || flags != 0) {
        fclose(f);
        return gyro_error_set(GYRO_ERR_FORMAT, "%s: corrupt classifier model header (version %u, flags %u)",
                              path, version, flags);
    }
    if (len > MAX_FILE_BYTES) {
        fclose(f);
        return gyro_error_set(GYRO_ERR_FORMAT, "%s: corrupt classifier model: payload length %llu",
                              path, (unsigned long long)len);
    }
    /* The header's length is a claim, not a size to allocate: the buffer grows only as bytes
     * arrive (so a 9 KB file saying 4 GiB costs at most twice its own size), and a regular
     * file's size is compared with the claim before anything is allocated. */
    struct stat sb;
    if (fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode) &&
        (uint64_t)sb.st_size != sizeof head + len + 4) {
        fclose(f);
        return gyro_error_set(GYRO_ERR_FORMAT, "%s: %s classifier model: the header says %llu bytes, "
                              "the file has %llu", path,
                              (uint64_t)sb.st_size < sizeof head + len + 4 ? "truncated" : "corrupt",
                              (unsigned long long)(sizeof head + len + 4), (unsigned long long)sb.st_size);
    }
    uint8_t *p = NULL;
    size_t cap = 0;
    got = 0;
    for (;;) {   /* read at most len + 5 bytes: one past the end tells trailing bytes apart */
        if (got == cap) {
            size_t nc = cap ? cap * 2 : 1 << 16;
            if (nc > len + 5) nc = (size_t)len + 5;
            uint8_t *q = realloc(p, nc);
            if (!q) { free(p); fclose(f); return gyro_error_set(GYRO_ERR_NOMEM, "%s: out of memory", path); }
            p = q;
            cap = nc;
        }
        size_t n = fread(p + got, 1, cap - got, f);
        got += n;
        if (n == 0 || got == (size_t)len + 5) break;
    }
    int rerr = ferror(f);
    fclose(f);
    if (rerr) { free(p); return gyro_error_set(GYRO_ERR_IO, "%s: read error", path); }
    if (got < len + 4) {
        free(p);
        return gyro_error_set(GYRO_ERR_FORMAT, "%s: truncated classifier model: %zu of %llu bytes",
                              path, got + sizeof head, (unsigned long long)(len + 4 + sizeof head));
    }
    if (got > len + 4) { free(p); return gyro_error_set(GYRO_ERR_FORMAT, "%s: corrupt classifier model: trailing bytes", path); }
    rbuf cr = {p + len, 4, 0, NULL, 0};
    uint32_t crc = r_u32(&cr, "crc");
    if (gyro_crc32(0, p, (size_t)len) != crc) {
        free(p);
        return gyro_error_set(GYRO_ERR_FORMAT, "%s: corrupt classifier model: checksum mismatch", path);
    }
    gyro_classifier *m = calloc(1, sizeof *m);
    if (!m) { free(p); return gyro_error_set(GYRO_ERR_NOMEM, "%s", path); }
    rbuf r = {p, (size_t)len, 0, NULL, 0};
    gyro_status st = parse_payload(m, &r, path);
    free(p);
    if (st) { gyro_classifier_free(m); return st; }
    m->crc = crc;
    set_version(m);
    if (m->tf && (st = gyro_tf_pack_new(m->tf, &m->pack))) { gyro_classifier_free(m); return st; }
    *out = m;
    return GYRO_OK;
}

/* ---- creation and accessors ------------------------------------------------------------------ */

/* A model without its network: labels (taken over, freed on error too), normalization and
 * vocabulary. `cfg` is the caller's configuration, only checked for NULL here. */
static gyro_status classifier_shell(const void *cfg, const gyro_normalize_options *norm, const char *const *vocab,
                                    int n_vocab, gyro_label_set *labels, gyro_classifier **out)
{
    *out = NULL;
    if (!cfg || !labels || n_vocab < 0 || (n_vocab > 0 && !vocab)) {
        gyro_label_set_free(labels);
        return gyro_error_set(GYRO_ERR_USAGE, "classifier create: NULL argument");
    }
    gyro_classifier *m = calloc(1, sizeof *m);
    if (!m) { gyro_label_set_free(labels); return gyro_error_set(GYRO_ERR_NOMEM, "classifier"); }
    m->labels = labels;
    if (norm) m->norm = *norm;
    else gyro_normalize_options_init(&m->norm);
    gyro_status st = vocab_build(m, vocab, n_vocab);
    if (st == GYRO_OK && gyro_label_set_count(labels) < 1)
        st = gyro_error_set(GYRO_ERR_USAGE, "classifier: no labels");
    if (st) { gyro_classifier_free(m); return st; }
    *out = m;
    return GYRO_OK;
}

/* Finish a shell whose network was just made (st its status); a transformer's weights are
 * packed for prediction, as a loaded model's are, so both predict alike. */
static gyro_status classifier_finish(gyro_classifier *m, gyro_status st, gyro_classifier **out)
{
    if (st == GYRO_OK && m->tf) st = gyro_tf_pack_new(m->tf, &m->pack);
    if (st) { gyro_classifier_free(m); return st; }
    set_version(m);
    *out = m;
    return GYRO_OK;
}

gyro_status gyro_classifier_create(const gyro_tf_config *cfg, uint64_t seed,
                                   const gyro_normalize_options *norm, const char *const *vocab,
                                   int n_vocab, gyro_label_set *labels, gyro_classifier **out)
{
    if (!out) { gyro_label_set_free(labels); return gyro_error_set(GYRO_ERR_USAGE, "classifier create: NULL argument"); }
    gyro_classifier *m;
    gyro_status st = classifier_shell(cfg, norm, vocab, n_vocab, labels, &m);
    if (st) { *out = NULL; return st; }
    gyro_tf_config c = *cfg;
    c.vocab_size = n_vocab + 1;
    c.n_classes = gyro_label_set_count(m->labels);
    *out = NULL;
    return classifier_finish(m, gyro_tf_new(&c, seed, 1, &m->tf), out);
}

gyro_status gyro_classifier_create_ngrams(const gyro_ngrams_config *cfg, uint64_t seed,
                                          const gyro_normalize_options *norm,
                                          const char *const *vocab, int n_vocab,
                                          gyro_label_set *labels, gyro_classifier **out)
{
    if (!out) { gyro_label_set_free(labels); return gyro_error_set(GYRO_ERR_USAGE, "classifier create: NULL argument"); }
    gyro_classifier *m;
    gyro_status st = classifier_shell(cfg, norm, vocab, n_vocab, labels, &m);
    if (st) { *out = NULL; return st; }
    gyro_ngrams_config c = *cfg;
    c.vocab_size = n_vocab + 1;
    c.n_classes = gyro_label_set_count(m->labels);
    *out = NULL;
    return classifier_finish(m, new_ngrams(m, &c, seed, 1), out);
}

void gyro_classifier_free(gyro_classifier *m)
{
    if (!m) return;
    gyro_tf_free(m->tf);
    gyro_tf_pack_free(m->pack);
    gyro_ngrams_free(m->ng);
    gyro_strmap_free(m->vocab);
    gyro_label_set_free(m->labels);
    free(m);
}

const char *gyro_classifier_version(const gyro_classifier *m) { return m ? m->version : ""; }
int gyro_classifier_num_labels(const gyro_classifier *m) { return m ? gyro_label_set_count(m->labels) : 0; }
const char *gyro_classifier_label(const gyro_classifier *m, int i) { return m ? gyro_label_set_name(m->labels, i) : NULL; }
gyro_tf_model *gyro_classifier_tf(gyro_classifier *m)
{
    /* the caller may change the parameters: the packed copy would go stale */
    gyro_tf_pack_free(m->pack);
    m->pack = NULL;
    return m->tf;
}

gyro_status gyro_classifier_prepare(gyro_classifier *m)
{
    if (!m) return gyro_error_set(GYRO_ERR_USAGE, "classifier prepare: NULL argument");
    if (!m->tf) return GYRO_OK;
    gyro_tf_packed *pk;
    gyro_status st = gyro_tf_pack_new(m->tf, &pk);
    if (st) return st;
    gyro_tf_pack_free(m->pack);
    m->pack = pk;
    return GYRO_OK;
}
const gyro_tf_model *gyro_classifier_tf_const(const gyro_classifier *m) { return m->tf; }
gyro_ngrams_model *gyro_classifier_ngrams(gyro_classifier *m) { return m->ng; }
const gyro_ngrams_model *gyro_classifier_ngrams_const(const gyro_classifier *m) { return m->ng; }
size_t gyro_classifier_param_count(const gyro_classifier *m) { return m->ng ? m->ng->n_params : m->tf->n_params; }
const char *gyro_classifier_arch_name(const gyro_classifier *m) { return m->ng ? "ngrams" : "transformer"; }
int gyro_classifier_uses_context(const gyro_classifier *m) { return m && m->ng && m->ng->cfg.context; }
const gyro_label_set *gyro_classifier_labels(const gyro_classifier *m) { return m->labels; }
const gyro_normalize_options *gyro_classifier_normalize_options(const gyro_classifier *m) { return &m->norm; }
int gyro_classifier_vocab_size(const gyro_classifier *m) { return m->n_tokens + 1; }
const char *gyro_classifier_token(const gyro_classifier *m, int id)
{
    return (m && id >= 1 && id <= m->n_tokens) ? gyro_strmap_key(m->vocab, id - 1) : NULL;
}

void gyro_classifier_set_token_unit(gyro_classifier *m, gyro_token_unit unit) { m->token_unit = (int)unit; }
gyro_token_unit gyro_classifier_token_unit(const gyro_classifier *m) { return (gyro_token_unit)m->token_unit; }

static int is_blank(const char *s)
{
    for (; *s; s++)
        if (*s != ' ') return 0;
    return 1;
}

int gyro_classifier_encode(const gyro_classifier *m, char *const *chars, size_t n, int32_t *ids,
                           int max)
{
    int k = 0;
    for (size_t i = 0; i < n && k < max; i++) {
        if (is_blank(chars[i])) continue;
        ids[k++] = gyro_classifier_token_id(m, chars[i]);
    }
    return k;
}

/* ids and hashes of the non-blank tokens, at most max (the first ones). */
static int encode_hashed(const gyro_classifier *m, char *const *toks, size_t n, int32_t *ids,
                         uint64_t *hash, int max)
{
    int k = 0;
    for (size_t i = 0; i < n && k < max; i++) {
        if (is_blank(toks[i])) continue;
        ids[k] = gyro_classifier_token_id(m, toks[i]);
        hash[k++] = gyro_ngrams_token_hash(toks[i]);
    }
    return k;
}

gyro_status gyro_classifier_ngram_bag(const gyro_classifier *m, gyro_tokenizer *tok,
                                      const char *text, const char *context, int32_t *ids,
                                      uint64_t *hash, int32_t *rows, float *w, int *n,
                                      int *n_text, const char **normalized)
{
    *n = 0;
    if (n_text) *n_text = 0;
    if (normalized) *normalized = "";
    if (!m->ng) return gyro_error_set(GYRO_ERR_USAGE, "n-gram bag of a transformer model");
    const gyro_ngrams_model *ng = m->ng;
    const int cap = gyro_ngram_bag_cap(ng), L = ng->cfg.max_len;
    char *const *toks;
    size_t n_toks;
    const char *norm;
    int nc = 0;
    /* the context first: the tokenizer's output only lives until its next call. Its rows go
     * after the utterance's, so they are computed into the tail and moved. */
    if (ng->cfg.context && context && context[0]) {
        gyro_status st = gyro_tokenizer_run(tok, context, strlen(context), &toks, &n_toks, &norm);
        if (st) return gyro_error_prefix(st, "context");
        /* the last max_len characters of the context matter most: keep those */
        size_t skip = n_toks > (size_t)L ? n_toks - (size_t)L : 0;
        int k = encode_hashed(m, toks + skip, n_toks - skip, ids, hash, L);
        nc = gyro_ngrams_features(ng, ids, hash, k, 1, rows + (cap - 2 * L), 2 * L);
    }
    gyro_status st = gyro_tokenizer_run(tok, text, strlen(text), &toks, &n_toks, &norm);
    if (st) return st;
    if (normalized) *normalized = norm;
    int k = encode_hashed(m, toks, n_toks, ids, hash, L);
    int nt = gyro_ngrams_features(ng, ids, hash, k, 0, rows, cap - 2 * L * (ng->cfg.context != 0));
    if (n_text) *n_text = k;
    if (nt == 0) rows[nt++] = GYRO_CLASSIFIER_UNK;
    for (int i = 0; i < nt; i++) w[i] = 1.0f;
    if (nc > 0) {
        memmove(rows + nt, rows + (cap - 2 * L), (size_t)nc * sizeof *rows);
        float wc = ng->cfg.context_weight / (float)nc;
        for (int i = 0; i < nc; i++) w[nt + i] = wc;
    }
    *n = nt + nc;
    return GYRO_OK;
}

/* ---- prediction ------------------------------------------------------------------------------ */

/* A scratch, with the transformer's activations for one sequence or (with_acts 0) without, with
 * its own tokenizer or (tok != NULL) that one, borrowed (a normalizer holds megabytes of ICU
 * transliteration tables: the items of a batch, tokenized one after the other, share one). */
static gyro_status scratch_new(const gyro_classifier *m, int with_acts, gyro_tokenizer *tok,
                               gyro_classifier_scratch **out)
{
    if (out) *out = NULL;
    if (!m || !out) return gyro_error_set(GYRO_ERR_USAGE, "classifier scratch: NULL argument");
    gyro_classifier_scratch *s = calloc(1, sizeof *s);
    if (!s) return gyro_error_set(GYRO_ERR_NOMEM, "classifier scratch");
    int K = gyro_label_set_count(m->labels), T = m->ng ? m->ng->cfg.max_len : m->tf->cfg.max_len;
    gyro_status st = GYRO_OK;
    if (tok) {
        s->tok = tok;
        s->tok_shared = 1;
    } else {
        st = gyro_tokenizer_new(&m->norm, (gyro_token_unit)m->token_unit, &s->tok);
    }
    if (st == GYRO_OK && m->tf && with_acts) st = gyro_tf_acts_new(m->tf, 1, T, 0, &s->acts);
    if (st == GYRO_OK && m->ng) {
        s->row_cap = gyro_ngram_bag_cap(m->ng);
        s->hash = malloc((size_t)T * sizeof *s->hash);
        s->rows = malloc((size_t)s->row_cap * sizeof *s->rows);
        s->w = malloc((size_t)s->row_cap * sizeof *s->w);
        s->y = malloc((size_t)m->ng->cfg.dim * sizeof *s->y);
        s->logits = malloc((size_t)gyro_ngrams_head_rows(m->ng) * sizeof *s->logits);
        if (!s->hash || !s->rows || !s->w || !s->y || !s->logits) st = gyro_error_set(GYRO_ERR_NOMEM, "classifier scratch");
    }
    if (st == GYRO_OK) {
        s->ids = malloc((size_t)T * sizeof *s->ids);
        s->probs = malloc((size_t)K * sizeof *s->probs);
        s->order = malloc((size_t)K * sizeof *s->order);
        s->text_cap = 256;
        s->text = calloc(s->text_cap, 1);
        if (!s->ids || !s->probs || !s->order || !s->text) st = gyro_error_set(GYRO_ERR_NOMEM, "classifier scratch");
    }
    if (st) { gyro_classifier_scratch_free(s); return st; }
    *out = s;
    return GYRO_OK;
}

gyro_status gyro_classifier_scratch_new(const gyro_classifier *m, gyro_classifier_scratch **out)
{
    return scratch_new(m, 1, NULL, out);
}

void gyro_classifier_scratch_free(gyro_classifier_scratch *s)
{
    if (!s) return;
    if (!s->tok_shared) gyro_tokenizer_free(s->tok);
    gyro_tf_acts_free(s->acts);
    free(s->hash);
    free(s->rows);
    free(s->w);
    free(s->y);
    free(s->logits);
    free(s->ids);
    free(s->probs);
    free(s->order);
    free(s->text);
    free(s);
}

const char *gyro_classifier_scratch_normalized(const gyro_classifier_scratch *s)
{
    return s && s->text ? s->text : "";
}

gyro_status gyro_classifier_predict(const gyro_classifier *m, gyro_classifier_scratch *s,
                                    const char *text, int k, gyro_intent *out, int *n_out)
{
    return gyro_classifier_predict_context(m, s, text, NULL, k, out, n_out);
}

/* Keep a copy of the normalized text of the last predict in the scratch. */
static gyro_status keep_text(gyro_classifier_scratch *s, const char *norm_text)
{
    size_t text_len = strlen(norm_text);
    if (text_len + 1 > s->text_cap) {
        size_t cap = 2 * (text_len + 1);
        char *p = realloc(s->text, cap);
        if (!p) return gyro_error_set(GYRO_ERR_NOMEM, "classify");
        s->text = p;
        s->text_cap = cap;
    }
    memcpy(s->text, norm_text, text_len + 1);
    return GYRO_OK;
}

/* The logits of an n-gram model for (text, context). */
static gyro_status ngrams_logits(const gyro_classifier *m, gyro_classifier_scratch *s,
                                 const char *text, const char *context, const float **logits)
{
    int n, n_text;
    const char *norm_text;
    gyro_status st = gyro_classifier_ngram_bag(m, s->tok, text, context, s->ids, s->hash, s->rows,
                                               s->w, &n, &n_text, &norm_text);
    if (st) return st;
    if ((st = keep_text(s, norm_text))) return st;
    if (n_text == 0) return gyro_error_set(GYRO_ERR_DATA, "empty text after normalization");
    gyro_ngrams_forward(m->ng, s->rows, s->w, n, s->y, s->logits);
    *logits = s->logits;
    return GYRO_OK;
}

static gyro_status top_k(const gyro_classifier *m, gyro_classifier_scratch *s, const float *logits, int k,
                         gyro_intent *out, int *n_out);

/* Tokenize and encode one utterance for the transformer into s->ids; *T its length (0: empty). */
static gyro_status tf_encode(const gyro_classifier *m, gyro_classifier_scratch *s, const char *text, int *T)
{
    char *const *toks;
    size_t n_toks;
    const char *norm_text;
    gyro_status st;
    *T = 0;
    if ((st = gyro_tokenizer_run(s->tok, text, strlen(text), &toks, &n_toks, &norm_text))) return st;
    if ((st = keep_text(s, norm_text))) return st;
    *T = gyro_classifier_encode(m, toks, n_toks, s->ids, m->tf->cfg.max_len);
    if (*T == 0) return gyro_error_set(GYRO_ERR_DATA, "empty text after normalization");
    return GYRO_OK;
}

gyro_status gyro_classifier_predict_context(const gyro_classifier *m, gyro_classifier_scratch *s,
                                            const char *text, const char *context, int k,
                                            gyro_intent *out, int *n_out)
{
    if (n_out) *n_out = 0;
    if (!m || !s || !text || !out || !n_out || k < 1)
        return gyro_error_set(GYRO_ERR_USAGE, "classify: %s", k < 1 ? "k must be at least 1" : "NULL argument");
    const float *logits = NULL;
    gyro_status st;
    if (m->ng) {
        if ((st = ngrams_logits(m, s, text, context, &logits))) return st;
    } else {
        int T;
        if ((st = tf_encode(m, s, text, &T))) return st;
        if ((st = gyro_tf_forward_packed(m->tf, m->pack, s->acts, s->ids, &T, 1, T))) return st;
        logits = gyro_tf_logits(s->acts);
    }
    return top_k(m, s, logits, k, out, n_out);
}

/* Softmax of the K logits into s->probs and the k most probable intents into out. */
static gyro_status top_k(const gyro_classifier *m, gyro_classifier_scratch *s, const float *logits, int k,
                         gyro_intent *out, int *n_out)
{
    int K = gyro_label_set_count(m->labels);
    double mx = -INFINITY, sum = 0;
    for (int i = 0; i < K; i++) if (logits[i] > mx) mx = logits[i];
    if (!isfinite(mx)) return gyro_error_set(GYRO_ERR_NAN, "classify: non-finite logits");
    for (int i = 0; i < K; i++) {
        double e = exp((double)logits[i] - mx);
        s->probs[i] = (float)e;
        sum += e;
    }
    for (int i = 0; i < K; i++) s->probs[i] = (float)(s->probs[i] / sum);
    int n = k < K ? k : K;
    /* partial selection sort of the top n (K is small: tens to a few hundred) */
    for (int i = 0; i < K; i++) s->order[i] = i;
    for (int i = 0; i < n; i++) {
        int best = i;
        for (int j = i + 1; j < K; j++)
            if (s->probs[s->order[j]] > s->probs[s->order[best]]) best = j;
        int t = s->order[i]; s->order[i] = s->order[best]; s->order[best] = t;
        out[i].label = gyro_label_set_name(m->labels, s->order[i]);
        out[i].probability = s->probs[s->order[i]];
    }
    *n_out = n;
    return GYRO_OK;
}

/* ---- batched prediction ------------------------------------------------------------------------ */

#define BATCH_MSG 256
/* Longest sequence a batch's forward pass holds: the activations of a transformer keep every
 * layer's buffers, (B, T) rows each and (B, H, T, T) for attention, about 6 MB for one sequence
 * of 64 positions of the seed-size model, so (16, 64) held 100 MB per thread. Utterances are
 * short (NLPCC 2018: 8 characters on average); a longer one runs alone on activations for one
 * sequence of max_len. */
#define BATCH_MAX_T 16

struct gyro_classifier_batch {
    int max_batch;
    gyro_tokenizer *tok;            /* shared by the items (they are tokenized in turn) */
    gyro_classifier_scratch **item; /* (max_batch) per utterance: ids, normalized text,
                                     * probabilities (no activations, tok borrowed) */
    gyro_tf_acts *acts;             /* (max_batch, Tb) transformer activations, or NULL */
    gyro_tf_acts *acts_long;        /* (1, max_len) for utterances longer than Tb, or NULL */
    int Tb;                         /* min(max_len, BATCH_MAX_T) */
    int32_t *ids;                   /* (max_batch, Tb) or (max_len) token ids of a forward pass */
    int *lengths;                   /* (2 max_batch) the items' lengths, then a group's */
    int *row;                       /* (max_batch) the valid items, shortest first */
    char (*msg)[BATCH_MSG];         /* (max_batch) error message per item */
};

gyro_status gyro_classifier_batch_new(const gyro_classifier *m, int max_batch, gyro_classifier_batch **out)
{
    if (out) *out = NULL;
    if (!m || !out || max_batch < 1) return gyro_error_set(GYRO_ERR_USAGE, "classifier batch: %s", max_batch < 1 ? "max_batch < 1" : "NULL argument");
    gyro_classifier_batch *b = calloc(1, sizeof *b);
    if (!b) return gyro_error_set(GYRO_ERR_NOMEM, "classifier batch");
    b->max_batch = max_batch;
    size_t nb = (size_t)max_batch;
    b->item = calloc(nb, sizeof *b->item);
    b->lengths = calloc(2 * nb, sizeof *b->lengths);
    b->row = calloc(nb, sizeof *b->row);
    b->msg = calloc(nb, sizeof *b->msg);
    gyro_status st = b->item && b->lengths && b->row && b->msg ? GYRO_OK : gyro_error_set(GYRO_ERR_NOMEM, "classifier batch");
    if (st == GYRO_OK) st = gyro_tokenizer_new(&m->norm, (gyro_token_unit)m->token_unit, &b->tok);
    for (int i = 0; st == GYRO_OK && i < max_batch; i++) st = scratch_new(m, 0, b->tok, &b->item[i]);
    if (st == GYRO_OK && m->tf) {
        int T = m->tf->cfg.max_len;
        b->Tb = T < BATCH_MAX_T ? T : BATCH_MAX_T;
        st = gyro_tf_acts_new(m->tf, max_batch, b->Tb, 0, &b->acts);
        if (st == GYRO_OK && T > b->Tb) st = gyro_tf_acts_new(m->tf, 1, T, 0, &b->acts_long);
        size_t cap = nb * (size_t)b->Tb > (size_t)T ? nb * (size_t)b->Tb : (size_t)T;
        if (st == GYRO_OK && !(b->ids = calloc(cap, sizeof *b->ids)))
            st = gyro_error_set(GYRO_ERR_NOMEM, "classifier batch");
    }
    if (st) { gyro_classifier_batch_free(b); return st; }
    *out = b;
    return GYRO_OK;
}

void gyro_classifier_batch_free(gyro_classifier_batch *b)
{
    if (!b) return;
    if (b->item)
        for (int i = 0; i < b->max_batch; i++) gyro_classifier_scratch_free(b->item[i]);
    free(b->item);
    gyro_tokenizer_free(b->tok);
    gyro_tf_acts_free(b->acts);
    gyro_tf_acts_free(b->acts_long);
    free(b->ids);
    free(b->lengths);
    free(b->row);
    free(b->msg);
    free(b);
}

/* Record item i's status and, on error, the thread's message. */
static gyro_status batch_item(gyro_classifier_batch *b, int i, gyro_status st, gyro_status *status)
{
    status[i] = st;
    if (st) snprintf(b->msg[i], BATCH_MSG, "%s", gyro_error_message());
    return st;
}

gyro_status gyro_classifier_predict_batch(const gyro_classifier *m, gyro_classifier_batch *b, int n,
                                          const char *const *texts, const char *const *contexts, const int *k,
                                          gyro_intent *const *out, int *n_out, gyro_status *status)
{
    if (!m || !b || !texts || !k || !out || !n_out || !status || n < 1 || n > b->max_batch)
        return gyro_error_set(GYRO_ERR_USAGE, "classify batch: %s",
                              b && (n < 1 || n > b->max_batch) ? "batch size out of range" : "NULL argument");
    for (int i = 0; i < n; i++) {
        n_out[i] = 0;
        b->msg[i][0] = 0;
        b->item[i]->text[0] = 0;
        if (!texts[i] || k[i] < 1)
            batch_item(b, i, gyro_error_set(GYRO_ERR_USAGE, "classify: %s", k[i] < 1 ? "k must be at least 1" : "NULL argument"), status);
        else
            status[i] = GYRO_OK;
    }
    if (m->ng) { /* one after the other: an n-gram forward shares nothing between utterances */
        for (int i = 0; i < n; i++) {
            if (status[i]) continue;
            gyro_classifier_scratch *s = b->item[i];
            const float *logits = NULL;
            gyro_status st = ngrams_logits(m, s, texts[i], contexts ? contexts[i] : NULL, &logits);
            if (st == GYRO_OK) st = top_k(m, s, logits, k[i], out[i], &n_out[i]);
            batch_item(b, i, st, status);
        }
        return GYRO_OK;
    }
    /* transformer: encode every text, sort the valid ones by length, then one forward pass per
     * group of similar lengths (B_g, T_g): a group grows while padding to its longest adds at
     * most a quarter to the positions it holds (every position costs the same in the linear
     * layers, so padding a 3-character utterance to 14 would cost more than the batch saves) */
    int nv = 0;
    for (int i = 0; i < n; i++) {
        if (status[i]) continue;
        int T;
        if (batch_item(b, i, tf_encode(m, b->item[i], texts[i], &T), status)) continue;
        b->lengths[i] = T;
        int j = nv++; /* insertion into b->row (here: the valid items by length) */
        while (j > 0 && b->lengths[b->row[j - 1]] > T) {
            b->row[j] = b->row[j - 1];
            j--;
        }
        b->row[j] = i;
    }
    int K = gyro_label_set_count(m->labels);
    for (int g0 = 0, g1; g0 < nv; g0 = g1) {
        long held = 0;
        for (g1 = g0; g1 < nv; g1++) {
            long Tg = b->lengths[b->row[g1]], with = held + Tg;
            if (g1 > g0 && (Tg > b->Tb || 4 * Tg * (g1 - g0 + 1) > 5 * with)) break;
            held = with;
        } /* an utterance longer than Tb makes a group of its own */
        const int Bg = g1 - g0, Tg = b->lengths[b->row[g1 - 1]];
        int *glen = b->lengths + n; /* (Bg) after the per-item lengths */
        for (int r = 0; r < Bg; r++) {
            const int i = b->row[g0 + r], L = b->lengths[i];
            int32_t *dst = b->ids + (size_t)r * Tg;
            memcpy(dst, b->item[i]->ids, (size_t)L * sizeof *dst);
            for (int t = L; t < Tg; t++) dst[t] = 0; /* padding: masked, never read */
            glen[r] = L;
        }
        gyro_tf_acts *acts = Tg > b->Tb ? b->acts_long : b->acts;
        gyro_status st = gyro_tf_forward_packed(m->tf, m->pack, acts, b->ids, glen, Bg, Tg);
        const float *logits = st ? NULL : gyro_tf_logits(acts);
        for (int r = 0; r < Bg; r++) {
            const int i = b->row[g0 + r];
            if (st) batch_item(b, i, st, status);
            else batch_item(b, i, top_k(m, b->item[i], logits + (size_t)r * K, k[i], out[i], &n_out[i]), status);
        }
    }
    return GYRO_OK;
}

const char *gyro_classifier_batch_normalized(const gyro_classifier_batch *b, int i)
{
    return b && i >= 0 && i < b->max_batch ? gyro_classifier_scratch_normalized(b->item[i]) : "";
}

const char *gyro_classifier_batch_error(const gyro_classifier_batch *b, int i)
{
    return b && i >= 0 && i < b->max_batch ? b->msg[i] : "";
}

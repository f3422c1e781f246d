/* vocab.c — character vocabulary: hash, counts, pruning, subsampling and negative table
 * (see vocab.h for the design). */
#include "embeddings/vocab.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint64_t fnv1a(const char *s, size_t len)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ULL;
    }
    return h;
}

gyro_status gyro_vocab_init(gyro_vocab *v)
{
    memset(v, 0, sizeof *v);
    v->cap = 1024;
    v->n_slots = 2048;
    v->tokens = malloc((size_t)v->cap * sizeof *v->tokens);
    v->counts = malloc((size_t)v->cap * sizeof *v->counts);
    v->slots = malloc((size_t)v->n_slots * sizeof *v->slots);
    if (!v->tokens || !v->counts || !v->slots) {
        gyro_vocab_free(v);
        return gyro_error_set(GYRO_ERR_NOMEM, "out of memory for the vocabulary");
    }
    memset(v->slots, 0xff, (size_t)v->n_slots * sizeof *v->slots);
    return GYRO_OK;
}

void gyro_vocab_free(gyro_vocab *v)
{
    if (!v) return;
    if (v->tokens)
        for (int i = 0; i < v->n; i++) free(v->tokens[i]);
    free(v->tokens);
    free(v->counts);
    free(v->slots);
    memset(v, 0, sizeof *v);
}

/* Slot of `tok` (holding its id) or of the empty slot where it would go. */
static uint32_t find_slot(const gyro_vocab *v, const char *tok, size_t len)
{
    uint32_t mask = v->n_slots - 1;
    uint32_t i = (uint32_t)fnv1a(tok, len) & mask;
    for (;;) {
        int32_t id = v->slots[i];
        if (id < 0) return i;
        const char *t = v->tokens[id];
        if (strncmp(t, tok, len) == 0 && t[len] == '\0') return i;
        i = (i + 1) & mask;
    }
}

static gyro_status rehash(gyro_vocab *v, uint32_t n_slots)
{
    int32_t *slots = malloc((size_t)n_slots * sizeof *slots);
    if (!slots) return gyro_error_set(GYRO_ERR_NOMEM, "out of memory for the vocabulary hash");
    memset(slots, 0xff, (size_t)n_slots * sizeof *slots);
    free(v->slots);
    v->slots = slots;
    v->n_slots = n_slots;
    for (int id = 0; id < v->n; id++) {
        uint32_t s = find_slot(v, v->tokens[id], strlen(v->tokens[id]));
        v->slots[s] = id;
    }
    return GYRO_OK;
}

int gyro_vocab_find(const gyro_vocab *v, const char *tok, size_t len)
{
    if (!v->slots || len == 0) return -1;
    return v->slots[find_slot(v, tok, len)];
}

gyro_status gyro_vocab_add(gyro_vocab *v, const char *tok, size_t len, uint64_t count, int *id)
{
    if (len == 0) return gyro_error_set(GYRO_ERR_DATA, "empty token");
    if (len > GYRO_VOCAB_MAX_TOKEN)
        return gyro_error_set(GYRO_ERR_DATA, "token of %zu bytes (the limit is %d)", len,
                              GYRO_VOCAB_MAX_TOKEN);
    if (memchr(tok, '\0', len)) return gyro_error_set(GYRO_ERR_DATA, "token contains a NUL byte");
    uint32_t s = find_slot(v, tok, len);
    int32_t e = v->slots[s];
    if (e < 0) {
        if (v->n >= GYRO_VOCAB_MAX_SIZE)
            return gyro_error_set(GYRO_ERR_LIMIT, "more than %d distinct tokens", GYRO_VOCAB_MAX_SIZE);
        if (v->n == v->cap) {
            int cap = v->cap * 2;
            char **t = realloc(v->tokens, (size_t)cap * sizeof *t);
            if (!t) return gyro_error_set(GYRO_ERR_NOMEM, "out of memory for the vocabulary");
            v->tokens = t;
            uint64_t *c = realloc(v->counts, (size_t)cap * sizeof *c);
            if (!c) return gyro_error_set(GYRO_ERR_NOMEM, "out of memory for the vocabulary");
            v->counts = c;
            v->cap = cap;
        }
        char *copy = malloc(len + 1);
        if (!copy) return gyro_error_set(GYRO_ERR_NOMEM, "out of memory for the vocabulary");
        memcpy(copy, tok, len);
        copy[len] = '\0';
        e = v->n++;
        v->tokens[e] = copy;
        v->counts[e] = 0;
        v->slots[s] = e;
        if ((uint64_t)v->n * 2 > v->n_slots) {
            gyro_status st = rehash(v, v->n_slots * 2);
            if (st) return st;
        }
    }
    v->counts[e] += count;
    v->total += count;
    if (id) *id = e;
    return GYRO_OK;
}

/* ---- finalize ------------------------------------------------------------------------------ */

static _Thread_local const gyro_vocab *tl_sort_vocab;

static int cmp_entry(const void *a, const void *b)
{
    const gyro_vocab *v = tl_sort_vocab;
    int32_t i = *(const int32_t *)a, j = *(const int32_t *)b;
    if (v->counts[i] != v->counts[j]) return v->counts[i] > v->counts[j] ? -1 : 1;
    return strcmp(v->tokens[i], v->tokens[j]);
}

gyro_status gyro_vocab_finalize(gyro_vocab *v, uint64_t min_count, int max_size, int32_t *remap)
{
    int n = v->n;
    int32_t *order = malloc((size_t)(n ? n : 1) * sizeof *order);
    char **tokens = malloc((size_t)(v->cap) * sizeof *tokens);
    uint64_t *counts = malloc((size_t)(v->cap) * sizeof *counts);
    if (!order || !tokens || !counts) {
        free(order); free(tokens); free(counts);
        return gyro_error_set(GYRO_ERR_NOMEM, "out of memory sorting the vocabulary");
    }
    for (int i = 0; i < n; i++) order[i] = i;
    tl_sort_vocab = v;
    qsort(order, (size_t)n, sizeof *order, cmp_entry);
    tl_sort_vocab = NULL;
    int kept = 0;
    if (remap)
        for (int i = 0; i < n; i++) remap[i] = -1;
    for (int r = 0; r < n; r++) {
        int32_t old = order[r];
        if (v->counts[old] >= min_count && (max_size <= 0 || kept < max_size)) {
            tokens[kept] = v->tokens[old];
            counts[kept] = v->counts[old];
            if (remap) remap[old] = kept;
            kept++;
        } else {
            free(v->tokens[old]);
        }
    }
    free(order);
    free(v->tokens);
    free(v->counts);
    v->tokens = tokens;
    v->counts = counts;
    v->n = kept;
    uint32_t slots = 2048;
    while ((uint64_t)slots < 2ULL * (uint64_t)kept) slots *= 2;
    return rehash(v, slots);
}

uint64_t gyro_vocab_train_tokens(const gyro_vocab *v)
{
    uint64_t s = 0;
    for (int i = 0; i < v->n; i++) s += v->counts[i];
    return s;
}

/* ---- sampling ------------------------------------------------------------------------------ */

void gyro_vocab_keep_thresholds(const gyro_vocab *v, double sample, uint64_t train_tokens,
                                uint64_t *keep)
{
    const uint64_t always = 1ULL << 32;
    for (int i = 0; i < v->n; i++) {
        if (sample <= 0 || train_tokens == 0 || v->counts[i] == 0) {
            keep[i] = always;
            continue;
        }
        /* word2vec: p = (sqrt(f/(t*T)) + 1) * (t*T)/f = sqrt(t/f') + t/f' with f' = f/T */
        double tf = sample * (double)train_tokens / (double)v->counts[i];
        double p = sqrt(tf) + tf;
        keep[i] = p >= 1.0 ? always : (uint64_t)(p * 4294967296.0);
    }
}

gyro_status gyro_vocab_negative_table(const gyro_vocab *v, double power, uint32_t **table,
                                      uint32_t *size)
{
    if (v->n <= 0) return gyro_error_set(GYRO_ERR_DATA, "the vocabulary is empty");
    uint64_t want = 64ULL * (uint64_t)v->n;
    uint32_t sz = 1u << 16;
    while (sz < want && sz < (1u << 26)) sz <<= 1;
    if ((uint64_t)sz < (uint64_t)v->n) sz = (uint32_t)v->n; /* cannot happen below the max size */
    uint32_t *t = malloc((size_t)sz * sizeof *t);
    if (!t) return gyro_error_set(GYRO_ERR_NOMEM, "out of memory for the negative table");
    double z = 0;
    for (int i = 0; i < v->n; i++) z += pow((double)v->counts[i], power);
    /* Slot boundaries from the cumulative distribution, with one slot reserved per entry so the
     * rarest characters are still drawn occasionally. */
    uint64_t spare = (uint64_t)sz - (uint64_t)v->n;
    double cum = 0;
    uint64_t pos = 0;
    for (int i = 0; i < v->n; i++) {
        cum += pow((double)v->counts[i], power);
        uint64_t end = (uint64_t)(z > 0 ? cum / z * (double)spare : 0) + (uint64_t)i + 1;
        if (i == v->n - 1) end = sz;
        if (end > sz) end = sz;
        while (pos < end) t[pos++] = (uint32_t)i;
    }
    *table = t;
    *size = sz;
    return GYRO_OK;
}

uint64_t gyro_vocab_fingerprint(const gyro_vocab *v)
{
    uint64_t h = 1469598103934665603ULL;
    for (int i = 0; i < v->n; i++) {
        const char *s = v->tokens[i];
        size_t len = strlen(s) + 1; /* include the NUL as a separator */
        for (size_t k = 0; k < len; k++) {
            h ^= (unsigned char)s[k];
            h *= 1099511628211ULL;
        }
        uint64_t c = v->counts[i];
        for (int k = 0; k < 8; k++) {
            h ^= (c >> (8 * k)) & 0xff;
            h *= 1099511628211ULL;
        }
    }
    return h;
}

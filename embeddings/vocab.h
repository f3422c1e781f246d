/* vocab.h — the character vocabulary of char2vec: counts, pruning, subsampling and negatives.
 *
 * A gyro_vocab maps UTF-8 tokens (grapheme clusters) to dense ids with an open-addressing hash
 * table (FNV-1a, linear probing, power-of-two size, at most half full). Counting appends tokens in
 * order of first appearance; gyro_vocab_finalize() then sorts by count (most frequent first, ties
 * by byte order so the result does not depend on input order), drops tokens under min_count,
 * keeps at most max_size entries and reports the old→new id map so an encoded corpus can be
 * rewritten. Memory is proportional to the number of distinct tokens.
 *
 * Sampling helpers follow word2vec (Mikolov et al. 2013): the probability of keeping a token of
 * frequency f is min(1, sqrt(t/f) + t/f) with t = --sample; negatives are drawn in proportion to
 * count^0.75 from a table whose size is a power of two proportional to the vocabulary (not 1e8
 * slots), so it stays in cache and a draw is one mask.
 */
#ifndef GYRO_EMBEDDINGS_VOCAB_H
#define GYRO_EMBEDDINGS_VOCAB_H

#include <stddef.h>
#include <stdint.h>

#include "models/core/status.h"

typedef struct gyro_vocab {
    int n;               /* number of entries */
    int cap;             /* allocated entries */
    char **tokens;       /* (n) NUL-terminated UTF-8, owned */
    uint64_t *counts;    /* (n) */
    int32_t *slots;      /* (n_slots) entry id or -1 */
    uint32_t n_slots;    /* power of two, >= 2 * cap */
    uint64_t total;      /* tokens counted, including entries later pruned */
} gyro_vocab;

/* Maximum byte length of one token (a grapheme cluster); longer tokens are rejected. */
#define GYRO_VOCAB_MAX_TOKEN 64
/* Hard limit on distinct tokens (ids are int32, hash slots uint32). */
#define GYRO_VOCAB_MAX_SIZE (1 << 26)

/* Initialise an empty vocabulary. Returns GYRO_ERR_NOMEM on allocation failure (v is then
 * safe to free). */
gyro_status gyro_vocab_init(gyro_vocab *v);

/* Release everything owned by `v` (NULL or zeroed is fine). */
void gyro_vocab_free(gyro_vocab *v);

/* Add `count` occurrences of the `len` bytes at `tok` (not necessarily NUL-terminated); *id
 * receives the entry id (may be NULL). Adds `count` to v->total. Errors: GYRO_ERR_DATA for an
 * empty token or one longer than GYRO_VOCAB_MAX_TOKEN, GYRO_ERR_LIMIT past
 * GYRO_VOCAB_MAX_SIZE entries, GYRO_ERR_NOMEM. */
gyro_status gyro_vocab_add(gyro_vocab *v, const char *tok, size_t len, uint64_t count, int *id);

/* Entry id of the token, or -1. */
int gyro_vocab_find(const gyro_vocab *v, const char *tok, size_t len);

/* Sort by count (descending, ties by token bytes), drop entries with count < min_count, keep
 * at most max_size (0 = no limit), rebuild the hash. If `remap` is not NULL it must hold the old
 * v->n ints and receives old id → new id, or -1 for a dropped entry. v->total is unchanged.
 * Returns GYRO_ERR_NOMEM (vocabulary unchanged) on allocation failure. */
gyro_status gyro_vocab_finalize(gyro_vocab *v, uint64_t min_count, int max_size, int32_t *remap);

/* Sum of the counts of the entries (tokens a training epoch sees before subsampling). */
uint64_t gyro_vocab_train_tokens(const gyro_vocab *v);

/* Subsampling thresholds: keep[i] = min(1, sqrt(t/f) + t/f) * 2^32 with f = counts[i]/train,
 * t = sample; a token is kept when a uniform 32-bit draw is < keep[i]. sample <= 0 keeps
 * everything. `keep` holds v->n entries. */
void gyro_vocab_keep_thresholds(const gyro_vocab *v, double sample, uint64_t train_tokens,
                                uint64_t *keep);

/* The negative-sampling table: *table (owned by the caller, free()) of *size slots (a power of
 * two of at least 64 * v->n, at most 2^26) filled with ids in proportion to count^power, every
 * entry getting at least one slot. Errors: GYRO_ERR_DATA for an empty vocabulary, NOMEM. */
gyro_status gyro_vocab_negative_table(const gyro_vocab *v, double power, uint32_t **table,
                                      uint32_t *size);

/* FNV-1a 64 hash of the tokens and counts in order: identifies a vocabulary in checkpoints
 * and encoded corpora. */
uint64_t gyro_vocab_fingerprint(const gyro_vocab *v);

#endif

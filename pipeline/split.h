/* split.h — deterministic, seeded train/dev splits that never cut a session.
 *
 * Examples are grouped by session: the group key is "source<TAB>session" (an example without a
 * session is a group of its own, keyed by its source and line, or by its position when
 * it has no line either). Groups are ordered by a seeded
 * hash of their key, h = splitmix64(seed XOR fnv1a(key)), ties broken by the key, so a group's
 * place depends only on the seed and its own key — not on the order of the input or on the
 * other groups. Then:
 *   - fraction mode: dev is the prefix of that order whose example count is closest to
 *     fraction * N (ties: the shorter prefix);
 *   - k-fold mode: the order is cut into K consecutive parts whose cumulative example counts are
 *     closest to k*N/K (k = 1..K-1); fold i is the dev set of run i, the rest its train set,
 *     so the K dev sets partition the data.
 * Stratified (`stratify`): each session's stratum is the label of its first example; groups are
 * ordered by (seeded hash of the stratum, then of the group) and dealt systematically along that
 * order — k folds: group p goes to fold (p + r) mod K; fraction f: group p is dev when
 * floor((p+1)f + u) > floor(pf + u) — with r and u drawn from the seed, so every label is spread
 * over the folds (or between train and dev) in proportion. Stratified splits balance sessions,
 * not examples: they suit data sets of one-utterance sessions such as SMP2020.
 * The same seed and data give the same split on every machine (integer hashing only).
 */
#ifndef GYRO_PIPELINE_SPLIT_H
#define GYRO_PIPELINE_SPLIT_H

#include <stddef.h>
#include <stdint.h>

#include "models/core/status.h"
#include "proto/gyro.pb-c.h"

typedef struct gyro_split_options {
    uint64_t seed;
    double dev_fraction;   /* fraction mode (folds == 0): in [0, 1] */
    int folds;             /* 0: fraction mode; K >= 2: k-fold mode */
    int fold;              /* k-fold mode: the dev fold, 0 <= fold < folds */
    int stratify;          /* 1: stratify by the label of each session's first example */
} gyro_split_options;

typedef struct gyro_split_summary {
    size_t groups, dev_groups;       /* sessions in all, in dev */
    size_t examples, dev_examples;   /* examples in all, in dev */
} gyro_split_summary;

/* Assign groups: keys[g] (NUL-terminated, distinct) with sizes[g] examples each (g < n_groups),
 * and, when opt->stratify, strata[g] the name of group g's stratum (else strata may be NULL).
 * Writes is_dev[g] = 1 for dev, 0 for train. Errors: GYRO_ERR_USAGE for bad options (fraction
 * outside [0, 1] or not finite, folds == 1 or < 0, fold out of range, more folds than groups)
 * or NULL arrays with n_groups > 0, GYRO_ERR_NOMEM. */
gyro_status gyro_split_groups(const gyro_split_options *opt, const char *const *keys,
                              const uint64_t *sizes, const char *const *strata, size_t n_groups,
                              uint8_t *is_dev);

/* Split examples: groups them by session (see the file comment; with opt->stratify a session's
 * stratum is the label of its first example), assigns the groups, and writes is_dev[i] for
 * every example i < n. `summary` may be NULL. Errors as gyro_split_groups. */
gyro_status gyro_split_examples(const gyro_split_options *opt,
                                const Gyro__V1__Example *const *examples, size_t n,
                                uint8_t *is_dev, gyro_split_summary *summary);

#endif

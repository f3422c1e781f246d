/* autotune.h — a search over the n-gram classifier's options on a dev split within a time
 * budget, as fastText's `-autotune-validation` does for its own model.
 *
 * Trial 1 is the caller's options unchanged (the defaults, for `gyro classify autotune`), so
 * the search never ends below them on the dev split. Every further trial draws, from a seeded
 * generator, a learning rate (log-uniform around the geometry's default), a dimension, a
 * number of epochs, the longest n-gram, the number of buckets, whether the previous turn is
 * used and its weight, and for the ball the curvature; a trial trains on `train` with early
 * stopping on `dev` (gyro_train_classifier) and scores its best dev accuracy. The search stops
 * when the next trial would not finish within the budget (estimated from the trials so far)
 * or after max_trials. The same seed, data and trial count give the same trials.
 */
#ifndef GYRO_MODELS_AUTOTUNE_H
#define GYRO_MODELS_AUTOTUNE_H

#include <stdio.h>

#include "models/train_classifier.h"

typedef struct gyro_autotune_options {
    double budget_seconds;      /* wall-clock budget of the whole search (> 0) */
    int max_trials;             /* 0: no limit but the budget */
    uint64_t seed;              /* of the search (the trials' own seed is base->seed) */
    int fixed_geometry;         /* 1: every trial keeps base->model.geometry; 0: both are tried */
    FILE *log;                  /* one line per trial (NULL = none) */
    volatile int *stop;         /* optional: set non-zero to end the search after the current trial */
} gyro_autotune_options;

typedef struct gyro_autotune_result {
    int trials;                 /* trials run */
    int best_trial;             /* 1-based */
    double best_accuracy;       /* dev accuracy of the best trial */
    double first_accuracy;      /* of trial 1 (the options as given) */
    double seconds;             /* wall time of the search */
    gyro_train_options best;    /* the best trial's options (table, log, stop as given) */
} gyro_autotune_result;

/* Search (see the file comment). base: the starting options (arch must be ngrams, completed by
 * gyro_train_options_complete); dev must not be empty. On success *out owns the best trial's
 * model. Errors: GYRO_ERR_USAGE (bad options, no dev example), GYRO_ERR_LIMIT (the first trial
 * alone took longer than the budget: the message gives its time, nothing is returned), the
 * errors of gyro_train_classifier for the first trial (a later trial that fails is logged and
 * skipped), GYRO_ERR_INTERRUPTED (stop set before the first trial finished); *out is NULL on
 * error. */
gyro_status gyro_classify_autotune(const gyro_autotune_options *ao, const gyro_train_options *base,
                                   const gyro_example_set *train, const gyro_example_set *dev,
                                   gyro_classifier **out, gyro_autotune_result *res);

/* The searched options of `o` as `gyro classify train` options ("--geometry euclidean --lr 0.31
 * --dim 100 ..."), into buf (cap bytes, always NUL-terminated). */
void gyro_autotune_format(const gyro_train_options *o, char *buf, size_t cap);

#endif

/* metrics.h — evaluation of a classifier: accuracy, macro-F1, cross-entropy, per-intent
 * precision and recall, the confusion matrix (text and SVG) and accuracy at each level of the
 * label hierarchy.
 *
 * Everything is derived from one K×K confusion matrix of counts (rows: true label, columns:
 * predicted label) plus the running sum of −log p(true label). Class names and the hierarchy
 * come from the classifier's label set (models/text/labels.h): at level l (numbered from 1 here,
 * from 0 in labels.h) a prediction counts as correct when it is the true class, or when the
 * level-(l−1) projections of the true and predicted classes are equal ("music.play" and
 * "music.pause" agree at level 1 on "music"; "a.x+b.y" projects to "a+b"). The deepest level,
 * gyro_label_set_max_depth, is exact-match accuracy: two spellings of one atom set, "a+b" and
 * "b+a+b", are different intents there, although their projections are equal.
 */
#ifndef GYRO_MODELS_METRICS_H
#define GYRO_MODELS_METRICS_H

#include <stdint.h>
#include <stdio.h>

#include "models/core/status.h"
#include "models/text/labels.h"

#define GYRO_METRICS_MAX_LEVELS 8

typedef struct gyro_metrics {
    int k;                 /* number of classes */
    uint64_t *confusion;   /* (k, k) counts: row = true class, column = predicted class */
    uint64_t n;            /* examples added */
    double loss_sum;       /* Σ −log p(true class) (natural log) */
    uint64_t loss_n;       /* examples whose probability was given */
} gyro_metrics;

/* Per-class figures (derived). */
typedef struct gyro_class_stats {
    uint64_t support;      /* true examples of the class */
    uint64_t predicted;    /* examples predicted as the class */
    uint64_t correct;
    double precision;      /* NaN when nothing was predicted as the class */
    double recall;         /* NaN when the class has no true example */
    double f1;             /* 0 when precision or recall is 0 or undefined */
} gyro_class_stats;

/* Allocate a zeroed k×k matrix. Errors: GYRO_ERR_USAGE (k < 1), GYRO_ERR_NOMEM. */
gyro_status gyro_metrics_init(gyro_metrics *m, int k);

/* Release the matrix; the struct may be initialised again. NULL-safe. */
void gyro_metrics_free(gyro_metrics *m);

/* Count one example. `p_true` is the probability the model gave the true class, or a negative
 * number when unknown (cross-entropy then ignores the example). It is clamped to ≥ 1e-12.
 * Out-of-range classes are ignored (the caller validates). */
void gyro_metrics_add(gyro_metrics *m, int truth, int pred, double p_true);

/* Fraction of exact matches; NaN when empty. */
double gyro_metrics_accuracy(const gyro_metrics *m);

/* Mean cross-entropy in nats; NaN when no probability was given. */
double gyro_metrics_cross_entropy(const gyro_metrics *m);

/* Figures of class c (0 <= c < k). */
gyro_class_stats gyro_metrics_class(const gyro_metrics *m, int c);

/* Unweighted mean F1 over the classes that occur as truth or prediction (scikit-learn's
 * "macro" over the labels present); NaN when empty. */
double gyro_metrics_macro_f1(const gyro_metrics *m);

/* Accuracy at hierarchy levels 1..levels (acc[l-1]) over the classes of `set` (class i of the
 * matrix is class i of the set; not owned). Returns the number of levels written: the set's
 * largest depth, at most max_levels; 0 (nothing written) when set is NULL, its class count is
 * not m->k, or max_levels < 1. */
int gyro_metrics_level_accuracy(const gyro_metrics *m, const gyro_label_set *set, double *acc,
                                int max_levels);

/* Write the full report (summary, hierarchy levels, per-class table, confusion matrix of the
 * `max_confusion` most frequent true classes, 0 = all) as text; class names come from `set`
 * (not owned). GYRO_ERR_USAGE when set is NULL or its class count is not m->k, GYRO_ERR_IO on
 * write error. */
gyro_status gyro_metrics_write_text(const gyro_metrics *m, const gyro_label_set *set,
                                    int max_confusion, FILE *out);

/* Write the confusion matrix as an SVG heat map (row-normalised colours, counts in the cells,
 * class names of `set` on both axes), atomically to `path`. Errors: GYRO_ERR_USAGE (set NULL
 * or of another class count; nothing written), GYRO_ERR_IO. */
gyro_status gyro_metrics_write_svg(const gyro_metrics *m, const gyro_label_set *set,
                                   const char *path);

#endif

/* metrics.h — evaluation of a classifier: accuracy, macro-F1, cross-entropy, per-intent
 * precision and recall, the confusion matrix (text and SVG), accuracy at each level of the
 * label hierarchy, the NLPCC 2018 task-4 intent measure and fastText's P@k / R@k.
 *
 * Everything is derived from one K×K confusion matrix of counts (rows: true label, columns:
 * predicted label), extra rows for true labels outside the classifier's label set ("unseen"
 * labels, one row each, columns still the K classes), the running sum of −log p(true label),
 * and the counts of P@k. Class names and the hierarchy come from the classifier's label set
 * (models/text/labels.h): at level l (numbered from 1 here, from 0 in labels.h) a prediction
 * counts as correct when it is the true class, or when the level-(l−1) projections of the true
 * and predicted classes are equal ("music.play" and "music.pause" agree at level 1 on "music";
 * "a.x+b.y" projects to "a+b"). The deepest level, gyro_label_set_max_depth, is exact-match
 * accuracy: two spellings of one atom set, "a+b" and "b+a+b", are different intents there,
 * although their projections are equal.
 *
 * Examples whose true label the model never saw (gyro_metrics_add_unseen) are errors: they
 * count in n, in accuracy (never right), in macro-F1 (their label is a class with F1 0), in
 * the precision of the class they were predicted as (a false positive) and in the hierarchy
 * levels (an unseen "music.hum" predicted as "music.play" is right at level 1); they are left
 * out of cross-entropy (the model gives their label no probability).
 */
#ifndef GYRO_MODELS_METRICS_H
#define GYRO_MODELS_METRICS_H

#include <stdint.h>
#include <stdio.h>

#include "models/core/status.h"
#include "models/text/labels.h"

#define GYRO_METRICS_MAX_LEVELS 8

/* All fields are read-only for callers; use the functions. */
typedef struct gyro_metrics {
    int k;                 /* number of classes */
    uint64_t *confusion;   /* (k, k) counts: row = true class, column = predicted class */
    uint64_t n;            /* examples added, unseen ones included */
    double loss_sum;       /* Σ −log p(true class) (natural log) */
    uint64_t loss_n;       /* examples whose probability was given */
    /* true labels outside the label set */
    uint64_t n_unseen;     /* examples among n whose label is not a class */
    int n_unseen_labels;   /* distinct such labels */
    int unseen_cap;
    char **unseen_name;    /* (n_unseen_labels) the labels as parsed (trimmed), owned */
    uint64_t *unseen_confusion; /* (n_unseen_labels, k) counts: row = unseen label, column = predicted */
    /* P@k / R@k (gyro_metrics_rank) */
    int at_k;              /* 0 until gyro_metrics_rank */
    const gyro_label_set *rank_set; /* borrowed: the atoms ranked */
    double *atom_score;    /* (atom count of rank_set) scratch */
    int *atom_gold;        /* (atom count of rank_set) scratch: 1 for the gold atoms */
    uint64_t rank_n;       /* examples counted (at least one gold atom the model knows) */
    uint64_t rank_gold;    /* Σ gold atoms */
    uint64_t rank_predicted; /* Σ predicted atoms (min(at_k, atom count) each) */
    uint64_t rank_hits;    /* Σ predicted atoms that are gold */
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

/* The NLPCC 2018 task-4 intent measure (gyro_metrics_nlpcc). */
typedef struct gyro_nlpcc_score {
    double f1;             /* 2·P·R/(P+R), 0 when P = R = 0; NaN when there is no intent */
    double precision;      /* P: mean precision over the intents (0 for an intent never predicted) */
    double recall;         /* R: mean recall over the intents (0 for an intent with no example) */
    int intents;           /* the intents averaged over */
} gyro_nlpcc_score;

/* Allocate a zeroed k×k matrix. Errors: GYRO_ERR_USAGE (k < 1), GYRO_ERR_NOMEM. */
gyro_status gyro_metrics_init(gyro_metrics *m, int k);

/* Release the matrix, the unseen labels and the P@k scratch; the struct may be initialised
 * again. NULL-safe. */
void gyro_metrics_free(gyro_metrics *m);

/* Also count precision and recall at `at_k` as fastText's `test` does (src/meter.cc,
 * Meter::log, with its default threshold 0), over the atoms of `set` (borrowed; class i of the
 * matrix must be class i of the set; it must outlive the metrics): for every example given
 * with its probabilities (gyro_metrics_add_probs, _add_unseen), the gold labels are the atoms
 * of its label the model knows, the predicted labels the min(at_k, atom count) atoms of the
 * largest probability (an atom's probability is the sum over the classes that contain it,
 * so for a set without composites atoms are the classes; ties go to the lower atom id).
 * P@k = Σ predicted-and-gold / Σ predicted, R@k = Σ predicted-and-gold / Σ gold. As fastText's
 * dictionary drops labels it has not seen, atoms the model does not know are not gold, and an
 * example with no known atom is left out of P@k and R@k (it still counts everywhere else).
 * Call before adding examples. Errors: GYRO_ERR_USAGE (set NULL or of another class count,
 * at_k < 1), GYRO_ERR_NOMEM; the metrics are unchanged on error. */
gyro_status gyro_metrics_rank(gyro_metrics *m, const gyro_label_set *set, int at_k);

/* Count one example. `p_true` is the probability the model gave the true class, or a negative
 * number when unknown (cross-entropy then ignores the example). It is clamped to ≥ 1e-12.
 * Out-of-range classes are ignored (the caller validates). */
void gyro_metrics_add(gyro_metrics *m, int truth, int pred, double p_true);

/* Count one example from the model's probabilities `probs` (k, over the classes, as softmax
 * gives them): the prediction is the first class of the largest probability, p_true is
 * probs[truth], and P@k is counted when gyro_metrics_rank was called. An out-of-range truth is
 * ignored, as in gyro_metrics_add. */
void gyro_metrics_add_probs(gyro_metrics *m, int truth, const float *probs);

/* Count one example whose true label `label` (as written, e.g. "music.hum") is not a class of
 * the model: an error, predicted as the first class of the largest of `probs` (k); its label
 * gets a row of its own (labels are told apart by their trimmed spelling). The caller has
 * checked that the label is not a class. Errors: GYRO_ERR_DATA (not a valid label,
 * models/text/labels.h; the message says why), GYRO_ERR_USAGE (NULL argument), GYRO_ERR_LIMIT
 * (2^30 distinct labels), GYRO_ERR_NOMEM; nothing is counted on error. */
gyro_status gyro_metrics_add_unseen(gyro_metrics *m, const char *label, const float *probs);

/* The unseen label `i` (0 <= i < m->n_unseen_labels), owned by the metrics; NULL out of range. */
const char *gyro_metrics_unseen_label(const gyro_metrics *m, int i);

/* Fraction of exact matches over all n examples (unseen ones are errors); NaN when empty. */
double gyro_metrics_accuracy(const gyro_metrics *m);

/* Mean cross-entropy in nats; NaN when no probability was given. */
double gyro_metrics_cross_entropy(const gyro_metrics *m);

/* Figures of class c (0 <= c < k); `predicted` includes unseen examples predicted as c. */
gyro_class_stats gyro_metrics_class(const gyro_metrics *m, int c);

/* Figures of unseen label i (0 <= i < m->n_unseen_labels): its support, never predicted or
 * right (precision NaN, recall and F1 0). */
gyro_class_stats gyro_metrics_unseen_class(const gyro_metrics *m, int i);

/* Unweighted mean F1 over the labels that occur as truth or prediction, unseen labels included
 * (scikit-learn's "macro" over the labels present); NaN when empty. */
double gyro_metrics_macro_f1(const gyro_metrics *m);

/* The NLPCC 2018 task-4 intent measure, as the task's evaluation script computes it
 * (nlpcc_eval.py, _eval_intent, in github.com/xmzhao/nlpcc2018-task4): for every intent, the
 * labels of the task's schema except `others` (here: the classes of `set`, which must be the
 * matrix's, and the unseen labels), precision tp/(tp+fp) and recall tp/(tp+fn), each 0 when
 * its denominator is 0; P and R are their unweighted means and the measure is the F1 of P and
 * R, 2·P·R/(P+R) — not the mean of per-intent F1s. Examples of `others`, true or predicted,
 * count only as the false negatives and false positives of the intents. An intent the model
 * knows that neither occurs nor is predicted counts with P = R = 0, as a schema intent absent
 * from the test file does in the script. Where the script maps a label outside its schema to
 * OTHERS, an unseen label here stays an intent of its own (recall 0). Returns 1 and fills *out
 * when `others` is a class of `set` or an unseen label; 0 (nothing written) when it is neither,
 * or set is NULL or of another class count. */
int gyro_metrics_nlpcc(const gyro_metrics *m, const gyro_label_set *set, const char *others,
                       gyro_nlpcc_score *out);

/* P@k and R@k (see gyro_metrics_rank) into *precision and *recall (NaN when nothing was
 * predicted / no gold atom) and the examples counted into *n (each pointer may be NULL).
 * Returns k, or 0 when gyro_metrics_rank was not called (nothing written). */
int gyro_metrics_at_k(const gyro_metrics *m, double *precision, double *recall, uint64_t *n);

/* Accuracy at hierarchy levels 1..levels (acc[l-1]) over the classes of `set` (class i of the
 * matrix is class i of the set; not owned) and the unseen labels, over all n examples. Level 1
 * of a two-level "domain.intent" set is the domain (the part before the first '.'). Returns
 * the number of levels written: the set's largest depth, at most max_levels; 0 (nothing
 * written) when set is NULL, its class count is not m->k, or max_levels < 1. */
int gyro_metrics_level_accuracy(const gyro_metrics *m, const gyro_label_set *set, double *acc,
                                int max_levels);

/* Write the full report (summary with the unseen examples, accuracy, macro-F1, the NLPCC
 * measure when `others` (may be NULL) names a label (gyro_metrics_nlpcc), P@k and R@k when
 * ranked, cross-entropy, hierarchy levels; the per-class table, unseen labels marked; the
 * confusion matrix of the `max_confusion` most frequent true classes, 0 = all) as text; class
 * names come from `set` (not owned). GYRO_ERR_USAGE when set is NULL or its class count is not
 * m->k, GYRO_ERR_NOMEM, GYRO_ERR_IO on write error. */
gyro_status gyro_metrics_write_text(const gyro_metrics *m, const gyro_label_set *set,
                                    int max_confusion, const char *others, FILE *out);

#endif

/* train_best.h — early stopping, shared by the two training loops of the classifier
 * (train_classifier.c for the transformer, train_ngrams.c for the bag of n-grams): the parameters
 * of the best dev epoch so far, the epochs since, and the checkpoint written on every improvement
 * (after every epoch when there is no dev set).
 */
#ifndef GYRO_MODELS_TRAIN_BEST_H
#define GYRO_MODELS_TRAIN_BEST_H

#include <stddef.h>

#include "models/train_classifier.h"

typedef struct gyro_train_best {
    float *params;   /* (n) the model's parameters (borrowed) */
    float *copy;     /* (n) the best dev epoch's parameters (owned) */
    size_t n;
    int since;       /* epochs without dev improvement */
} gyro_train_best;

/* Watch the n parameters at params (owned by the model). GYRO_ERR_NOMEM (b is then empty, safe
 * to free). */
gyro_status gyro_train_best_init(gyro_train_best *b, float *params, size_t n);

/* Free the copy; b becomes empty. NULL-safe for an empty b. */
void gyro_train_best_free(gyro_train_best *b);

/* The end of epoch `epoch` (0-based) with dev accuracy acc (have_dev 0: no dev set, acc unused).
 * On a new best (or the first epoch scored) record it in R (best_dev_accuracy, best_epoch) and
 * copy the parameters; write m to opt->checkpoint (when set) on a new best, or after every epoch
 * without a dev set. *done = 1 once opt->patience (> 0) epochs in a row brought no improvement.
 * Errors: those of gyro_classifier_save. */
gyro_status gyro_train_best_epoch(gyro_train_best *b, const gyro_train_options *opt, gyro_classifier *m,
                                  gyro_train_result *R, int epoch, int have_dev, double acc, int *done);

/* Put the best dev epoch's parameters back into the model when R->best_epoch > 0. */
void gyro_train_best_restore(const gyro_train_best *b, const gyro_train_result *R);

#endif

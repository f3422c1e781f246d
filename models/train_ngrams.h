/* train_ngrams.h — training and evaluation of the bag-of-n-grams classifier (ngrams.h), the
 * `--arch ngrams` half of train_classifier.h (which builds the model and the splits and calls
 * these).
 *
 * Training is fastText's: one example at a time in a seeded shuffled order each epoch, the
 * softmax cross-entropy gradient taken through the head and the pooling to the rows of the bag,
 * and a step on exactly those rows (Riemannian SGD for ball rows, ngrams.h), with the learning
 * rate decaying linearly from opt->optim.lr to 0 over opt->epochs. After every epoch the dev
 * examples are scored; the best parameters are kept (and checkpointed), and training stops
 * after `patience` epochs without improvement, as the transformer's training does.
 */
#ifndef GYRO_MODELS_TRAIN_NGRAMS_H
#define GYRO_MODELS_TRAIN_NGRAMS_H

#include "models/train_classifier.h"

/* Train the n-gram model m (created by gyro_train_classifier with its vocabulary, labels and
 * table rows) on examples tr_idx[0..n_tr) of `train`, stopping early on examples
 * dev_idx[0..n_dev) of `dev` (dev_idx NULL: all of dev). The previous turn of an example
 * (gyro_example_set_context) is read from the set the example is in. R's counters are filled
 * in. Errors: as gyro_train_classifier (GYRO_ERR_INTERRUPTED leaves m holding the best
 * parameters so far). */
gyro_status gyro_train_ngrams(const gyro_train_options *opt, gyro_classifier *m, gyro_tokenizer *nz,
                              const gyro_example_set *train, const int *tr_idx, int n_tr,
                              const gyro_example_set *dev, const int *dev_idx, int n_dev,
                              gyro_train_result *R);

/* gyro_classifier_evaluate for an n-gram model (each example with its previous turn). */
gyro_status gyro_ngrams_evaluate(const gyro_classifier *m, const gyro_example_set *set,
                                 gyro_metrics *metrics, int *unknown);

#endif

/* train_vocab.h — the label set and token vocabulary a classifier is built with, from its
 * training examples (both architectures of train_classifier.h use it).
 *
 * Labels are the distinct training labels in sorted order, so class ids do not depend on the
 * order of the data. Tokens are the embedding table's (when one is given, in its order), then
 * the training tokens seen at least min_count times that the table lacks, most frequent first
 * (ties in byte order). Whitespace tokens are left out.
 */
#ifndef GYRO_MODELS_TRAIN_VOCAB_H
#define GYRO_MODELS_TRAIN_VOCAB_H

#include "embeddings/table.h"
#include "models/classifier.h"
#include "models/core/status.h"
#include "models/text/labels.h"
#include "models/text/strmap.h"

typedef struct gyro_example_set gyro_example_set;

typedef struct gyro_train_vocab {
    gyro_label_set *labels;   /* owned until handed to a model (set to NULL then) */
    const char **tokens;      /* (n) borrowed from the table and from `seen` */
    int n;
    gyro_strmap *seen;        /* the training tokens (owns their strings) */
    uint64_t *counts;         /* (count of seen) occurrences */
} gyro_train_vocab;

/* Build labels and vocabulary from `train`, tokenized with `nz`; `table` may be NULL. Errors:
 * those of the tokenizer (prefixed with the record number), GYRO_ERR_DATA for a bad label,
 * GYRO_ERR_NOMEM. On error v is left empty. */
gyro_status gyro_train_vocab_build(gyro_train_vocab *v, const gyro_example_set *train,
                                   gyro_tokenizer *nz, const gyro_embedding_table *table,
                                   int min_count);

/* Free what v still owns. NULL-safe; v may be reused. */
void gyro_train_vocab_free(gyro_train_vocab *v);

#endif

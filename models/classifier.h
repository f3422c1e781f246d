/* classifier.h — a trained intent classifier: the model file and the prediction API.
 *
 * A gyro_classifier bundles everything needed to turn raw UTF-8 text into intents: the
 * normalization options used at training time, the character vocabulary, the label set with
 * its hierarchy (`music.play` has the parent `music`; `a+b` has the atoms {a, b}), the model
 * configuration and its parameters. It is immutable once loaded, so any number of threads may
 * predict with one model as long as each thread uses its own gyro_classifier_scratch (the
 * per-thread activation buffers and normalizer).
 *
 * Model file (little-endian, written atomically): the magic "GYROCLF\0", a u32 format version
 * (GYRO_CLASSIFIER_FORMAT_VERSION), a u64 payload length, the payload (configuration,
 * vocabulary, labels, parameters) and a CRC-32 of the payload. A file with another magic, a
 * truncated payload or a wrong checksum is GYRO_ERR_FORMAT; a higher version is
 * GYRO_ERR_VERSION with a hint to upgrade gyro.
 */
#ifndef GYRO_MODELS_CLASSIFIER_H
#define GYRO_MODELS_CLASSIFIER_H

#include "models/core/status.h"

#define GYRO_CLASSIFIER_MAGIC "GYROCLF"      /* 7 characters + NUL = 8 bytes on disk */
#define GYRO_CLASSIFIER_FORMAT_VERSION 1u

typedef struct gyro_classifier gyro_classifier;
typedef struct gyro_classifier_scratch gyro_classifier_scratch; /* per-thread buffers + normalizer */

/* One predicted intent. `label` points into the model and lives as long as the model. */
typedef struct gyro_intent {
    const char *label;
    float probability;
} gyro_intent;

/* Load a model file. On success *out owns a new model (free with gyro_classifier_free).
 * Errors: GYRO_ERR_IO (cannot open/read), GYRO_ERR_FORMAT (not a gyro classifier, truncated,
 * checksum mismatch, inconsistent sizes), GYRO_ERR_VERSION (written by a newer gyro),
 * GYRO_ERR_NOMEM. *out is NULL on error; the thread's error message names the file. */
gyro_status gyro_classifier_load(const char *path, gyro_classifier **out);

/* Free a model. NULL is a no-op. Scratch objects made from it must be freed first. */
void gyro_classifier_free(gyro_classifier *m);

/* A short version string of the model ("<geometry>-<dim>d-<layers>L-<crc32 hex>"), owned by
 * the model. Never NULL. */
const char *gyro_classifier_version(const gyro_classifier *m);

/* Number of labels the model predicts (the largest useful k). */
int gyro_classifier_num_labels(const gyro_classifier *m);

/* Label i (0 <= i < num_labels), owned by the model; NULL if i is out of range. */
const char *gyro_classifier_label(const gyro_classifier *m, int i);

/* Allocate the per-thread buffers of one predicting thread. *out is NULL on error
 * (GYRO_ERR_NOMEM, or the normalizer's error). */
gyro_status gyro_classifier_scratch_new(const gyro_classifier *m, gyro_classifier_scratch **out);

/* Free a scratch object. NULL is a no-op. */
void gyro_classifier_scratch_free(gyro_classifier_scratch *s);

/* Classify one utterance. `text` is raw UTF-8 (normalized inside with the model's options; a
 * text already normalized by `gyro normalize` is unchanged by it). Writes the k most probable
 * intents to out[0..*n_out), most probable first; *n_out = min(k, number of labels). Texts
 * longer than the model's maximum length are truncated to it. Thread-safe across threads that
 * use different scratch objects. Errors: GYRO_ERR_USAGE (NULL argument, k < 1),
 * GYRO_ERR_DATA (invalid UTF-8 or an empty text after normalization). */
gyro_status gyro_classifier_predict(const gyro_classifier *m, gyro_classifier_scratch *s,
                                    const char *text, int k, gyro_intent *out, int *n_out);

/* The normalized text of the last successful predict with this scratch (owned by the scratch,
 * valid until the next predict); "" before the first. */
const char *gyro_classifier_scratch_normalized(const gyro_classifier_scratch *s);

#endif

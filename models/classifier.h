/* classifier.h — a trained intent classifier: the model file and the prediction API.
 *
 * A gyro_classifier bundles everything needed to turn raw UTF-8 text into intents: the
 * normalization options used at training time, the character vocabulary, the label set with
 * its hierarchy (`music.play` has the parent `music`; `a+b` has the atoms {a, b}), the model
 * configuration and its parameters. It is immutable once loaded, so any number of threads may
 * predict with one model as long as each thread uses its own gyro_classifier_scratch (the
 * per-thread activation buffers and normalizer).
 *
 * Two architectures share the file, the label set, the vocabulary and the prediction API: the
 * transformer (transformer.h) and the bag of character n-grams (ngrams.h, `--arch ngrams`).
 * An n-gram model with context features also reads the previous turn of the session
 * (gyro_classifier_predict_context); the transformer ignores it.
 *
 * Model file (little-endian, written atomically): the magic "GYROCLF\0", a u32 format version
 * (GYRO_CLASSIFIER_FORMAT_VERSION), a u64 payload length, the payload (configuration,
 * vocabulary, labels, parameters) and a CRC-32 of the payload. A file with another magic, a
 * truncated payload or a wrong checksum is GYRO_ERR_FORMAT; a higher version is
 * GYRO_ERR_VERSION with a hint to upgrade gyro.
 */
#ifndef GYRO_MODELS_CLASSIFIER_H
#define GYRO_MODELS_CLASSIFIER_H

#include <stdint.h>

#include "models/core/status.h"
#include "models/ngrams.h"
#include "models/tokenizer.h"
#include "models/transformer.h"
#include "models/text/labels.h"
#include "models/text/normalize.h"

#define GYRO_CLASSIFIER_MAGIC "GYROCLF"      /* 7 characters + NUL = 8 bytes on disk */
#define GYRO_CLASSIFIER_FORMAT_VERSION 2u   /* 2: n-gram models; transformer files stay 1 */

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

/* The same, with the previous turn of the session (`context`, raw UTF-8; NULL or "" for none),
 * which an n-gram model trained with context features reads; other models ignore it. Errors
 * as gyro_classifier_predict (an invalid context is GYRO_ERR_DATA too). */
gyro_status gyro_classifier_predict_context(const gyro_classifier *m, gyro_classifier_scratch *s,
                                            const char *text, const char *context, int k,
                                            gyro_intent *out, int *n_out);

/* 1 when the model reads the previous turn (an n-gram model trained with context features). */
int gyro_classifier_uses_context(const gyro_classifier *m);

/* The normalized text of the last successful predict with this scratch (owned by the scratch,
 * valid until the next predict); "" before the first. */
const char *gyro_classifier_scratch_normalized(const gyro_classifier_scratch *s);

/* ---- batched prediction (the server's dynamic batching) ------------------------------------- */

/* The buffers of one thread predicting up to max_batch utterances at a time. */
typedef struct gyro_classifier_batch gyro_classifier_batch;

/* Allocate the buffers for batches of up to max_batch (>= 1) utterances of model m. Errors:
 * GYRO_ERR_USAGE (NULL argument, max_batch < 1), GYRO_ERR_NOMEM, the normalizer's error. */
gyro_status gyro_classifier_batch_new(const gyro_classifier *m, int max_batch, gyro_classifier_batch **out);

/* Free a batch object. NULL is a no-op. */
void gyro_classifier_batch_free(gyro_classifier_batch *b);

/* Classify n (1..max_batch) utterances at once: for each i, what gyro_classifier_predict_context
 * (m, s, texts[i], contexts[i], k[i], out[i], &n_out[i]) gives (same top classes, probabilities
 * within float rounding), with its own status in status[i]: one bad text fails only its own
 * item (its message: gyro_classifier_batch_error). A transformer runs the valid utterances as
 * one forward pass of n sequences padded to the longest (padded positions are masked); an n-gram
 * model classifies them one after the other (its forward is a bag sum and a small head product:
 * nothing to share). contexts may be NULL. Returns GYRO_ERR_USAGE for bad arguments (then no
 * item ran), else GYRO_OK. Allocates nothing once the buffers exist (the normalized texts grow
 * to the longest seen). */
gyro_status gyro_classifier_predict_batch(const gyro_classifier *m, gyro_classifier_batch *b, int n,
                                          const char *const *texts, const char *const *contexts, const int *k,
                                          gyro_intent *const *out, int *n_out, gyro_status *status);

/* Item i of the last batch: its normalized text ("" when it failed before normalization), and
 * its error message ("" when it succeeded). Owned by b, valid until the next batch. */
const char *gyro_classifier_batch_normalized(const gyro_classifier_batch *b, int i);
const char *gyro_classifier_batch_error(const gyro_classifier_batch *b, int i);

/* ---- building and saving (training) --------------------------------------------------------- */

/* Token id of characters outside the vocabulary (row 0 of the embedding table). */
#define GYRO_CLASSIFIER_UNK 0

/* Create a model with fresh parameters (seeded) for training. `vocab` holds n_vocab distinct
 * tokens (copied); token i gets id i + 1, id 0 is GYRO_CLASSIFIER_UNK. `labels` is taken over
 * by the model (freed with it, also on error). cfg->vocab_size and cfg->n_classes are set here
 * from the vocabulary and the label set. `norm` (copied; NULL = defaults) is the normalization
 * applied before prediction. Errors: GYRO_ERR_USAGE (bad config, duplicate token, no label),
 * GYRO_ERR_NOMEM. */
gyro_status gyro_classifier_create(const gyro_tf_config *cfg, uint64_t seed,
                                   const gyro_normalize_options *norm, const char *const *vocab,
                                   int n_vocab, gyro_label_set *labels, gyro_classifier **out);

/* The same for a bag-of-n-grams model (ngrams.h): cfg->vocab_size and n_classes are set here. */
gyro_status gyro_classifier_create_ngrams(const gyro_ngrams_config *cfg, uint64_t seed,
                                          const gyro_normalize_options *norm,
                                          const char *const *vocab, int n_vocab,
                                          gyro_label_set *labels, gyro_classifier **out);

/* Set the token unit of a model being built (default GYRO_TOKEN_CHARS); saved in the file. */
void gyro_classifier_set_token_unit(gyro_classifier *m, gyro_token_unit unit);
gyro_token_unit gyro_classifier_token_unit(const gyro_classifier *m);

/* Write the model file atomically (format in the file comment). GYRO_ERR_IO on failure;
 * GYRO_ERR_NAN (naming the tensor) without writing anything when a parameter is NaN or
 * infinite, so a diverged model never replaces a good file. */
gyro_status gyro_classifier_save(const gyro_classifier *m, const char *path);

/* The transformer of the model (parameters are modified in place by training); NULL for an
 * n-gram model. Drops the model's packed copy of the weights (gyro_classifier_prepare), since
 * the caller may change them: predictions then read the parameters directly until the next
 * gyro_classifier_prepare. */
gyro_tf_model *gyro_classifier_tf(gyro_classifier *m);

/* Pack the transformer's weights for prediction (models/transformer.h, gyro_tf_pack_new),
 * replacing an earlier pack; gyro_classifier_load does this. A no-op for an n-gram model. Not
 * thread-safe: call while no prediction runs. USAGE on NULL, NOMEM (the old pack is kept). */
gyro_status gyro_classifier_prepare(gyro_classifier *m);
const gyro_tf_model *gyro_classifier_tf_const(const gyro_classifier *m);

/* The n-gram model of the model; NULL for a transformer. */
gyro_ngrams_model *gyro_classifier_ngrams(gyro_classifier *m);
const gyro_ngrams_model *gyro_classifier_ngrams_const(const gyro_classifier *m);

/* Parameter values of the model (either architecture). */
size_t gyro_classifier_param_count(const gyro_classifier *m);

/* The architecture's name: "transformer" or "ngrams". */
const char *gyro_classifier_arch_name(const gyro_classifier *m);

/* The label set (class ids are the transformer's output indices). */
const gyro_label_set *gyro_classifier_labels(const gyro_classifier *m);

/* The normalization options of the model. */
const gyro_normalize_options *gyro_classifier_normalize_options(const gyro_classifier *m);

/* Vocabulary size including the UNK row, and the token of an id (NULL for UNK / out of range). */
int gyro_classifier_vocab_size(const gyro_classifier *m);
const char *gyro_classifier_token(const gyro_classifier *m, int id);

/* Id of a token, or GYRO_CLASSIFIER_UNK. */
int gyro_classifier_token_id(const gyro_classifier *m, const char *token);

/* The bag of an n-gram model (ngrams.h) for `text` and the previous turn `context` (NULL or ""
 * for none; ignored unless the model was trained with context): normalized and cut with `tok`
 * (the model's tokenizer), characters mapped to ids, then gyro_ngrams_features. ids and hash
 * are (max_len) scratch; rows and w receive up to gyro_ngram_bag_cap entries, *n of them; the
 * utterance's rows weigh 1 each, the context's context_weight together. An
 * utterance with no character gives the single row UNK and *n_text = 0 (the caller decides
 * whether that is an error). *normalized (may be NULL) receives the utterance's normalized
 * text, owned by `tok` until its next run. Errors: those of gyro_tokenizer_run (invalid UTF-8 is
 * GYRO_ERR_DATA), GYRO_ERR_USAGE for a transformer model. */
gyro_status gyro_classifier_ngram_bag(const gyro_classifier *m, gyro_tokenizer *tok,
                                      const char *text, const char *context, int32_t *ids,
                                      uint64_t *hash, int32_t *rows, float *w, int *n,
                                      int *n_text, const char **normalized);

/* Map the tokens chars[0..n) to ids (whitespace-only tokens dropped, unknown ones → UNK), at
 * most `max` of them; returns the number written. */
int gyro_classifier_encode(const gyro_classifier *m, char *const *chars, size_t n, int32_t *ids,
                           int max);

#endif

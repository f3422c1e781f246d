/* tokenizer.h — text to tokens for the classifiers: gyro's normalizer, then either its grapheme
 * clusters (characters) or the words of ICU's dictionary-based Chinese word break iterator.
 */
#ifndef GYRO_MODELS_TOKENIZER_H
#define GYRO_MODELS_TOKENIZER_H

#include <stddef.h>

#include "models/core/status.h"
#include "models/text/normalize.h"

/* Token units of a model: characters (grapheme clusters of the normalizer, the seed's model) or
 * words from ICU's dictionary-based Chinese word break iterator (the word-model baseline). */
typedef enum gyro_token_unit {
    GYRO_TOKEN_CHARS = 0,
    GYRO_TOKEN_WORDS = 1
} gyro_token_unit;

/* Normalizer plus optional word breaker; one per thread. Whitespace-only tokens are dropped. */
typedef struct gyro_tokenizer gyro_tokenizer;

/* Create a tokenizer (`norm` copied; NULL = defaults). Errors: those of gyro_normalizer_new,
 * GYRO_ERR_UNAVAILABLE if ICU's word break iterator cannot be opened, GYRO_ERR_NOMEM. */
gyro_status gyro_tokenizer_new(const gyro_normalize_options *norm, gyro_token_unit unit,
                               gyro_tokenizer **out);

/* Free a tokenizer. NULL is a no-op. */
void gyro_tokenizer_free(gyro_tokenizer *t);

/* Normalize and cut `len` bytes of text. *tokens (n_tokens entries) and *normalized are owned by
 * the tokenizer and valid until its next call. Errors: those of gyro_normalize_text. */
gyro_status gyro_tokenizer_run(gyro_tokenizer *t, const char *text, size_t len,
                               char *const **tokens, size_t *n_tokens, const char **normalized);

#endif

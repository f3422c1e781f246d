/* corpus_input.h — corpus input for char2vec: files or stdin, as text or as Document streams.
 *
 * Each input is read once: a Document stream from `gyro normalize` is taken as it is (its
 * grapheme clusters; a Document without clusters has its text segmented again); plain UTF-8
 * text, one document per line, is normalized on the fly by models/text/normalize.h with the
 * given options (a line over 1 MiB is cut at a UTF-8 boundary into several documents). The
 * format is detected from the first bytes (a gyro stream header) unless given; the bytes peeked
 * from a pipe are given back to the reader. Every document goes to a gyro_corpus_builder
 * (embeddings/corpus.h), which counts and encodes it.
 */
#ifndef GYRO_PIPELINE_CORPUS_INPUT_H
#define GYRO_PIPELINE_CORPUS_INPUT_H

#include <stdint.h>
#include <stdio.h>

#include "embeddings/corpus.h"
#include "embeddings/vocab.h"
#include "models/core/status.h"
#include "models/text/normalize.h"

typedef enum gyro_corpus_format {
    GYRO_CORPUS_AUTO = 0,   /* a gyro Document stream if it starts with a gyro header, else text */
    GYRO_CORPUS_TEXT,       /* UTF-8 text, one document per line */
    GYRO_CORPUS_STREAM      /* a Document stream */
} gyro_corpus_format;

typedef struct gyro_corpus_input_options {
    gyro_normalize_options norm;   /* for plain text */
    gyro_corpus_format format;
    uint64_t min_count;            /* drop characters seen fewer times (default 5) */
    int max_vocab;                 /* keep at most this many characters (0 = no limit) */
} gyro_corpus_input_options;

/* Defaults: normalizer defaults, auto format, min_count 5, no vocabulary limit. */
void gyro_corpus_input_options_init(gyro_corpus_input_options *opt);

/* Read the inputs (paths, "-" = stdin; n_inputs >= 1), build the vocabulary into *vocab
 * (initialised here; the caller frees it with gyro_vocab_free, also on error) and write the
 * encoded corpus atomically to `ids_path`. Errors: GYRO_ERR_IO (cannot open/read/write, message
 * names the file), GYRO_ERR_DATA / FORMAT (bad input with file and line or record, e.g. an
 * invalid stream or invalid UTF-8 under the fail policy), GYRO_ERR_DATA when no character
 * reaches min_count ("nothing above --min-count") or the input holds no character at all.
 * `stats` may be NULL. */
gyro_status gyro_corpus_input_encode(const char *const *inputs, int n_inputs,
                                     const gyro_corpus_input_options *opt, const char *ids_path,
                                     gyro_vocab *vocab, gyro_corpus_stats *stats);

/* Write the token stream training sees, as text (gyro_corpus_builder_new_tokens), to `out`.
 * Errors as gyro_corpus_input_encode (GYRO_ERR_IO on a write error). stats->chars = stats->kept =
 * tokens written; `stats` may be NULL. */
gyro_status gyro_corpus_input_write_tokens(const char *const *inputs, int n_inputs,
                                           const gyro_corpus_input_options *opt, FILE *out,
                                           gyro_corpus_stats *stats);

#endif

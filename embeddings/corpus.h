/* corpus.h — turn text into the encoded character corpus char2vec trains on.
 *
 * Training makes several passes over the corpus with several threads, each reading its own
 * shard; the input may be stdin or a pipe. So the first step reads every input once, normalizes
 * it (a Document stream from `gyro normalize` is taken as it is; plain UTF-8 text is normalized
 * on the fly by pipeline/normalize.h with the same defaults), counts the characters, and writes
 * the corpus as a file of uint32 ids (one per character, GYRO_CORPUS_EOD after each document)
 * in vocabulary order. Memory stays proportional to the vocabulary: ids go to disk as they are
 * read (first to an unlinked scratch file, then remapped to the final ids once the vocabulary is
 * sorted and pruned), and workers read their shard with pread into a fixed buffer.
 *
 * Tokens are the grapheme clusters of the normalized text; a cluster that is whitespace is a
 * separator, not a token. Characters under min_count are dropped from the encoded corpus (as
 * word2vec drops out-of-vocabulary words), so windows span over them.
 *
 * File layout (little-endian, written atomically; "GYROIDS" magic, version 1):
 *     char magic[8]; uint32 version; uint32 vocab_size; uint64 vocab_fingerprint;
 *     uint64 n_ids; uint64 n_tokens; uint64 n_docs; uint64 reserved[2]     (64 bytes)
 *     uint32 ids[n_ids]
 */
#ifndef GYRO_EMBEDDINGS_CORPUS_H
#define GYRO_EMBEDDINGS_CORPUS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "embeddings/vocab.h"
#include "models/core/status.h"
#include "pipeline/normalize.h"

#define GYRO_CORPUS_EOD 0xFFFFFFFFu
#define GYRO_CORPUS_HEADER_BYTES 64

typedef enum gyro_corpus_format {
    GYRO_CORPUS_AUTO = 0,   /* a gyro Document stream if it starts with a gyro header, else text */
    GYRO_CORPUS_TEXT,       /* UTF-8 text, one document per line */
    GYRO_CORPUS_STREAM      /* a Document stream */
} gyro_corpus_format;

typedef struct gyro_corpus_options {
    gyro_normalize_options norm;   /* for plain text */
    gyro_corpus_format format;
    uint64_t min_count;            /* drop characters seen fewer times (default 5) */
    int max_vocab;                 /* keep at most this many characters (0 = no limit) */
} gyro_corpus_options;

/* Defaults: normalizer defaults, auto format, min_count 5, no vocabulary limit. */
void gyro_corpus_options_init(gyro_corpus_options *opt);

typedef struct gyro_corpus_stats {
    uint64_t documents;     /* documents (lines) read */
    uint64_t chars;         /* characters read (before min_count) */
    uint64_t kept;          /* characters written to the encoded corpus */
    uint64_t distinct;      /* distinct characters before pruning */
    uint64_t repaired;      /* documents with invalid UTF-8 repaired by the normalizer */
} gyro_corpus_stats;

/* Read the inputs (paths, "-" = stdin; n_inputs >= 1), build the vocabulary into *vocab
 * (initialised here; the caller frees it with gyro_vocab_free, also on error) and write the
 * encoded corpus atomically to `ids_path`. Errors: GYRO_ERR_IO (cannot open/read/write, message
 * names the file), GYRO_ERR_DATA / FORMAT (bad input with file and line or record, e.g. an
 * invalid stream or invalid UTF-8 under the fail policy), GYRO_ERR_DATA when no character
 * reaches min_count ("nothing above --min-count") or the input holds no character at all.
 * `stats` may be NULL. */
gyro_status gyro_corpus_encode(const char *const *inputs, int n_inputs,
                               const gyro_corpus_options *opt, const char *ids_path,
                               gyro_vocab *vocab, gyro_corpus_stats *stats);

/* Write the token stream training sees, as text: the tokens of each document separated by one
 * space, one document per line (no min_count filtering), to `out`. For feeding the same
 * characters to other tools (word2vec, fastText) in comparisons. Errors as gyro_corpus_encode
 * (GYRO_ERR_IO on a write error). stats->chars = stats->kept = tokens written. */
gyro_status gyro_corpus_write_tokens(const char *const *inputs, int n_inputs,
                                     const gyro_corpus_options *opt, FILE *out,
                                     gyro_corpus_stats *stats);

/* An open encoded corpus (read-only; pread is thread-safe, so workers share one). */
typedef struct gyro_corpus {
    int fd;
    uint32_t vocab_size;
    uint64_t fingerprint;
    uint64_t n_ids;         /* ids including document ends */
    uint64_t n_tokens;      /* character ids */
    uint64_t n_docs;
} gyro_corpus;

/* Open and check an encoded corpus: magic, version, and that the file size matches n_ids
 * (a truncated file gives GYRO_ERR_FORMAT naming the path). */
gyro_status gyro_corpus_open(const char *path, gyro_corpus *c);

/* Read up to `n` ids starting at id index `pos` into buf; *got receives the number read
 * (0 at the end). GYRO_ERR_IO on a read error. */
gyro_status gyro_corpus_read(const gyro_corpus *c, uint64_t pos, uint32_t *buf, size_t n,
                             size_t *got);

/* Close the file (safe on a zeroed or already closed corpus). */
void gyro_corpus_close(gyro_corpus *c);

#endif

/* corpus.h — the encoded character corpus char2vec trains on.
 *
 * Training makes several passes over the corpus with several threads, each reading its own
 * shard; the input may be stdin or a pipe. So the first step reads every input once, normalizes
 * it, counts the characters, and writes the corpus as a file of uint32 ids (one per character,
 * GYRO_CORPUS_EOD after each document) in vocabulary order. Reading the inputs (detecting a
 * Document stream from `gyro normalize`, or normalizing plain UTF-8 text with
 * models/text/normalize.h) is pipeline/corpus_input.h; it hands each document, as its grapheme
 * clusters, to the builder below, which knows no file format but its own. Memory stays proportional to the vocabulary: ids go to disk as they are
 * read (first to an unlinked scratch file, then remapped to the final ids once the vocabulary is
 * sorted and pruned), and workers read their shard with pread into a fixed buffer.
 *
 * Tokens are the grapheme clusters of the normalized text; a cluster that is whitespace is a
 * separator, not a token. Characters under min_count are dropped from the encoded corpus (as
 * word2vec drops out-of-vocabulary words), so windows span over them.
 *
 * File layout (little-endian, written atomically; "GYROIDS" magic, version 2):
 *     char magic[8]; uint32 version; uint32 vocab_size; uint64 vocab_fingerprint;
 *     uint64 n_ids; uint64 n_tokens; uint64 n_docs; uint32 crc; uint32 reserved[3] (64 bytes)
 *     uint32 ids[n_ids]
 * crc is the CRC-32 (zlib's, models/core/crc32.h) of ids[] and then of the header's first 48
 * bytes; gyro_corpus_open checks it. Version 1 (no crc, reserved bytes zero) is still read.
 */
#ifndef GYRO_EMBEDDINGS_CORPUS_H
#define GYRO_EMBEDDINGS_CORPUS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "embeddings/vocab.h"
#include "models/core/status.h"

#define GYRO_CORPUS_EOD 0xFFFFFFFFu
#define GYRO_CORPUS_HEADER_BYTES 64

typedef struct gyro_corpus_stats {
    uint64_t documents;     /* documents (lines) read */
    uint64_t chars;         /* characters read (before min_count) */
    uint64_t kept;          /* characters written to the encoded corpus */
    uint64_t distinct;      /* distinct characters before pruning */
    uint64_t repaired;      /* documents with invalid UTF-8 repaired by the normalizer */
} gyro_corpus_stats;

/* ---- building: documents in, the encoded corpus out ----------------------------------------- */

typedef struct gyro_corpus_builder gyro_corpus_builder;

/* Start an encoded corpus to be written atomically to `ids_path` at gyro_corpus_builder_finish.
 * `vocab` must be initialised (gyro_vocab_init) and empty; the builder adds every character to it
 * and the caller keeps ownership (free it with gyro_vocab_free, also on error). Provisional ids go
 * to an unlinked scratch file beside ids_path (tmpfile() as a fallback). `stats` (not NULL, owned
 * by the caller, outliving the builder) receives chars, then distinct and kept at finish; the
 * builder leaves documents and repaired to the reader. Errors: GYRO_ERR_IO (no scratch file),
 * GYRO_ERR_NOMEM, GYRO_ERR_USAGE (NULL argument). *out is set only on success. */
gyro_status gyro_corpus_builder_new(const char *ids_path, gyro_vocab *vocab,
                                    gyro_corpus_stats *stats, gyro_corpus_builder **out);

/* A builder that writes the token stream training sees instead, as text: the tokens of each
 * document separated by one space, one document per line (no min_count filtering), to
 * `text_out` (borrowed). For feeding the same characters to other tools (word2vec, fastText) in
 * comparisons. stats->chars = stats->kept = tokens written. Errors as gyro_corpus_builder_new. */
gyro_status gyro_corpus_builder_new_tokens(FILE *text_out, gyro_corpus_stats *stats,
                                           gyro_corpus_builder **out);

/* Add one document given as its grapheme clusters `chars` (n, NUL-terminated UTF-8, borrowed).
 * Whitespace clusters are separators, not tokens; a cluster over GYRO_VOCAB_MAX_TOKEN bytes is
 * dropped. Errors: GYRO_ERR_IO (scratch or text write), GYRO_ERR_NOMEM, GYRO_ERR_LIMIT (vocab). */
gyro_status gyro_corpus_builder_add(gyro_corpus_builder *b, char *const *chars, size_t n);

/* Finish: sort and prune the vocabulary (characters seen fewer than `min_count` times dropped,
 * at most `max_vocab` kept, 0 = no limit), remap the provisional ids and write the encoded
 * corpus atomically (a token builder only flushes its output). Errors: GYRO_ERR_DATA when no
 * character was added ("the corpus is empty") or none reaches min_count ("nothing above
 * --min-count"), GYRO_ERR_IO naming the file, GYRO_ERR_NOMEM. Call at most once. */
gyro_status gyro_corpus_builder_finish(gyro_corpus_builder *b, uint64_t min_count, int max_vocab);

/* Close the scratch file and free the builder (not the vocabulary). NULL is a no-op. */
void gyro_corpus_builder_free(gyro_corpus_builder *b);

/* ---- reading ---------------------------------------------------------------------------- */

/* An open encoded corpus (read-only; pread is thread-safe, so workers share one). */
typedef struct gyro_corpus {
    int fd;
    uint32_t vocab_size;
    uint64_t fingerprint;
    uint64_t n_ids;         /* ids including document ends */
    uint64_t n_tokens;      /* character ids */
    uint64_t n_docs;
} gyro_corpus;

/* Open and check an encoded corpus: magic, version, that the file size matches n_ids, and the
 * checksum (one read of the file). A truncated or altered file gives GYRO_ERR_FORMAT naming the
 * path; GYRO_ERR_VERSION for a newer file; GYRO_ERR_IO when it cannot be read. */
gyro_status gyro_corpus_open(const char *path, gyro_corpus *c);

/* Read up to `n` ids starting at id index `pos` into buf; *got receives the number read
 * (0 at the end). GYRO_ERR_IO on a read error. */
gyro_status gyro_corpus_read(const gyro_corpus *c, uint64_t pos, uint32_t *buf, size_t n,
                             size_t *got);

/* Close the file (safe on a zeroed or already closed corpus). */
void gyro_corpus_close(gyro_corpus *c);

#endif

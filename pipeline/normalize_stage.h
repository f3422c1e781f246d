/* normalize_stage.h — the `normalize` stage: text documents in, Document records (or text) out.
 *
 * One function over one input: read documents with a gyro_text_reader, normalize each with a
 * gyro_normalizer, write a gyro.v1.Document per document to a stream writer (or the normalized
 * text plus "\n" to a FILE*), and count what happened. The CLI (`gyro normalize`) and the gRPC
 * Normalize method are thin wrappers around it.
 *
 * Policies: invalid UTF-8 follows the normalizer's policy (replace and count / skip and count /
 * fail with GYRO_ERR_DATA "file:line: invalid UTF-8 byte 0xFF at byte 7 of the line (byte 123 of
 * the file)"). A document longer than the reader's maximum, or whose record would exceed the
 * stream's record limit, is skipped and counted as too long. A document that is empty after
 * normalization is counted and not written unless keep_empty is set. Each skip and each repair
 * is reported through the optional warning callback with file and line.
 */
#ifndef GYRO_PIPELINE_NORMALIZE_STAGE_H
#define GYRO_PIPELINE_NORMALIZE_STAGE_H

#include <stdint.h>
#include <stdio.h>

#include "models/core/progress.h"
#include "models/core/status.h"
#include "models/text/normalize.h"
#include "pipeline/stream.h"
#include "pipeline/text_reader.h"
#include "proto/gyro.pb-c.h"

/* Counts of a run of the stage (accumulated over calls), printed as its summary. */
typedef struct gyro_normalize_stats {
    uint64_t lines;       /* input lines read */
    uint64_t bytes;       /* input bytes read */
    uint64_t documents;   /* documents written */
    uint64_t repaired;    /* documents with at least one U+FFFD repair */
    uint64_t skipped;     /* documents dropped: invalid UTF-8 under skip, or too long */
    uint64_t too_long;    /* of those, the ones over the length limits */
    uint64_t empty;       /* documents empty after normalization (written only if kept) */
} gyro_normalize_stats;

typedef struct gyro_normalize_stage_options {
    int keep_empty;                          /* also write empty documents */
    /* Called with a one-line message for each skipped or repaired document; may be NULL. */
    void (*warn)(void *ctx, const char *message);
    void *warn_ctx;
    gyro_progress *progress;                 /* may be NULL: no progress line */
    uint64_t progress_base;                  /* bytes of earlier inputs (for the fraction) */
    uint64_t progress_total;                 /* bytes of all inputs; 0 = unknown */
    double progress_start;                   /* gyro_now() when the run began (for the rate) */
} gyro_normalize_stage_options;

/* Normalize every document of `in`. Writes Documents to `w` when it is not NULL (Document.source
 * = the reader's name, ids continue from *next_id, which is advanced), otherwise the normalized
 * text and "\n" to `text_out`. `o` may be NULL. Adds to *stats. Errors: GYRO_ERR_DATA under the
 * fail policy, GYRO_ERR_IO on read/write errors, GYRO_ERR_NOMEM, GYRO_ERR_INTERNAL (ICU). */
gyro_status gyro_normalize_stage_run(gyro_normalizer *n, gyro_text_reader *in,
                                     gyro_stream_writer *w, FILE *text_out,
                                     const gyro_normalize_stage_options *o,
                                     gyro_normalize_stats *stats, uint64_t *next_id);

/* Point the fields of `doc` (initialised with gyro__v1__document__init) at the result `r`:
 * original, text, chars, repairs; sets id, source and line from the arguments. No copy: `doc`
 * borrows from the normalizer and from `source`, so it must not be freed with
 * protobuf_c_message_free_unpacked and is valid only until the next normalize call. */
void gyro_normalize_stage_to_document(const gyro_normalized *r, const char *source,
                                      uint64_t line, uint64_t id, Gyro__V1__Document *doc);

/* Format the summary line "N lines read, N documents written, N repaired, N skipped (N too
 * long), N empty" into buf (always NUL-terminated). */
void gyro_normalize_stats_format(const gyro_normalize_stats *s, char *buf, size_t size);

#endif

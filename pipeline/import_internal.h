/* import_internal.h — what the format readers of pipeline/import_*.c share (not a public API).
 *
 * A reader walks its file and, per record, either calls gyro_import_emit() with the raw text,
 * label and session (validation, trimming and the Example message are done there, once for
 * every format) or gyro_import_bad() with the reason (which warns and counts, or fails in
 * strict mode).
 */
#ifndef GYRO_PIPELINE_IMPORT_INTERNAL_H
#define GYRO_PIPELINE_IMPORT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "pipeline/import.h"

typedef struct gyro_import_ctx {
    gyro_import_format fmt;
    const char *path;              /* as given, for messages */
    char *source;                  /* "<format>:<basename>" (owned) */
    const gyro_import_options *opt;
    gyro_import_sink sink;
    void *sink_ctx;
    gyro_import_stats *stats;
    char *text;                    /* (text_cap) reusable copy of the current text */
    size_t text_cap;
} gyro_import_ctx;

/* Report a bad record at `line` of the current file: "path:line: <formatted>". Non-strict:
 * warn, count, return GYRO_OK (the reader goes on). Strict: return GYRO_ERR_DATA with that
 * message. */
gyro_status gyro_import_bad(gyro_import_ctx *c, uint64_t line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Validate and emit one example: `text` (len bytes, not necessarily NUL-terminated) is trimmed
 * of ASCII whitespace and a leading BOM, must be non-empty valid UTF-8 without NUL; `label` is
 * parsed with gyro_label_parse. A failed check goes through gyro_import_bad; otherwise the
 * Example is passed to the sink and its status returned. */
gyro_status gyro_import_emit(gyro_import_ctx *c, const char *text, size_t len, const char *label,
                             const char *session, uint64_t line);

/* The readers. */
gyro_status gyro_import_lines(gyro_import_ctx *c);      /* tsv and nlpcc */
gyro_status gyro_import_smp(gyro_import_ctx *c);
gyro_status gyro_import_crosswoz(gyro_import_ctx *c);

#endif

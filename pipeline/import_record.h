/* import_record.h — one imported record to one gyro.v1.Example: the types of an import and the
 * checks every format reader (pipeline/import_<format>.c) shares.
 *
 * Layers: import.c (format dispatch) calls the readers (import_readers.h), which call
 * gyro_import_emit / gyro_import_bad here; this file calls none of them.
 *
 * A reader walks its file and, per record, either calls gyro_import_emit() with the raw text,
 * label and session (validation, trimming and the Example message are done there, once for
 * every format) or gyro_import_bad() with the reason (which warns and counts, or fails in
 * strict mode).
 */
#ifndef GYRO_PIPELINE_IMPORT_RECORD_H
#define GYRO_PIPELINE_IMPORT_RECORD_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "models/core/status.h"
#include "proto/gyro.pb-c.h"

/* Longest line of a line-based format; a longer line is a bad record. */
#define GYRO_IMPORT_MAX_LINE ((size_t)1 << 20)

typedef enum gyro_import_format {
    GYRO_IMPORT_TSV = 0,
    GYRO_IMPORT_NLPCC,
    GYRO_IMPORT_SMP,
    GYRO_IMPORT_CROSSWOZ,
    GYRO_IMPORT_FASTTEXT,
    GYRO_IMPORT_CONLL,
    GYRO_IMPORT_JSONL,
    /* not a format name: tsv or fasttext, decided by the first non-blank line (fasttext when it
     * starts with "__label__"); what `classify train` reads when given text */
    GYRO_IMPORT_LABELLED_TEXT
} gyro_import_format;

/* Receives each example. The message and its strings are owned by the importer and valid only
 * during the call. A status other than GYRO_OK stops the import and is returned by it. */
typedef gyro_status (*gyro_import_sink)(void *ctx, const Gyro__V1__Example *example);

/* Receives the message of each bad record that is skipped (non-strict mode). */
typedef void (*gyro_import_warn)(void *ctx, const char *message);

typedef struct gyro_import_options {
    int strict;               /* 1: the first bad record fails the import (GYRO_ERR_DATA) */
    gyro_import_warn warn;    /* may be NULL */
    void *warn_ctx;
    const char *intent_path;  /* conll: the intent file (NULL: intents inside the file) */
    const char *text_field;   /* jsonl: member holding the text (NULL: "text") */
    const char *label_field;  /* jsonl: member(s) holding the label (NULL: "label") */
    const char *session_field;/* jsonl: member holding the session (NULL: none) */
} gyro_import_options;

/* Counts of one or more imports (they accumulate: zero the struct before the first). */
typedef struct gyro_import_stats {
    uint64_t examples;        /* examples passed to the sink */
    uint64_t bad;             /* bad records skipped */
    uint64_t blank;           /* blank lines skipped (line formats) */
    uint64_t ignored;         /* records that are not examples: system turns, a header line */
    uint64_t composite;       /* examples whose label has two or more atoms */
    uint64_t slots;           /* conll: slot spans (B- and S- tags) seen */
} gyro_import_stats;

typedef struct gyro_import_ctx {
    gyro_import_format fmt;
    const char *path;              /* as given, for messages */
    FILE *fp;                      /* line formats: read this instead of opening path */
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

#endif

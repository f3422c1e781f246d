/* example_file.h — the Example reader: labelled examples read into the plain gyro_example_set
 * the trainers take (models/train_classifier.h). The trainers never see a stream, a file format
 * or a protobuf type.
 *
 * Three inputs are read directly, so `gyro classify train data.txt` works on the files users
 * already have:
 *   pb        a gyro stream of gyro.v1.Example (the output of `gyro import` and `gyro split`);
 *   tsv       `text<TAB>label[<TAB>session]` lines, as `gyro import --format tsv` (a header
 *             line naming the columns may reorder them: "label<TAB>text");
 *   fasttext  fastText's `__label__x text` lines, as `gyro import --format fasttext` (several
 *             labels on one line make the composite label x+y).
 * GYRO_EXAMPLES_AUTO tells them apart from the first bytes without consuming them (a pipe works
 * too): a gyro stream header means pb; otherwise text whose first non-blank line starts with
 * "__label__" is fasttext, any other text tsv. Text input is read strictly: the first bad line
 * (wrong column count, bad label, empty text, invalid UTF-8) stops the read with GYRO_ERR_DATA
 * and "FILE:LINE: what is wrong".
 */
#ifndef GYRO_PIPELINE_EXAMPLE_FILE_H
#define GYRO_PIPELINE_EXAMPLE_FILE_H

#include <stdint.h>

#include "models/core/status.h"
#include "models/train_classifier.h"

typedef enum gyro_example_format {
    GYRO_EXAMPLES_AUTO = 0,
    GYRO_EXAMPLES_PB,
    GYRO_EXAMPLES_TSV,
    GYRO_EXAMPLES_FASTTEXT
} gyro_example_format;

/* What one read found (counts accumulate over reads: zero the struct first). */
typedef struct gyro_example_read_stats {
    gyro_example_format format;   /* the format of the last file read (never AUTO) */
    uint64_t examples;            /* examples added */
    uint64_t skipped;             /* pb records with an empty text or label, left out */
    uint64_t composite;           /* text input: examples with a label of two or more atoms */
    uint64_t ignored;             /* text input: a header line */
} gyro_example_read_stats;

/* Parse "auto", "pb", "tsv", "fasttext"; 0 on success, -1 if unknown. */
int gyro_example_format_parse(const char *name, gyro_example_format *out);

/* The name of a format ("auto", "pb", "tsv", "fasttext"). */
const char *gyro_example_format_name(gyro_example_format f);

/* Append every example of `path` ("-" = stdin) in format `fmt` (AUTO: detected, see above).
 * `stats` may be NULL. Errors: GYRO_ERR_IO (cannot open or read; a directory), stream errors as
 * pipeline/stream.h (GYRO_ERR_FORMAT naming the record, e.g. a text file given as pb), a stream
 * of another message type (GYRO_ERR_FORMAT), GYRO_ERR_DATA for a bad text line, GYRO_ERR_NOMEM.
 * Examples added before an error stay in the set. */
gyro_status gyro_example_file_read_format(gyro_example_set *s, const char *path,
                                          gyro_example_format fmt, gyro_example_read_stats *stats);

/* gyro_example_file_read_format with GYRO_EXAMPLES_AUTO; records skipped for an empty text or
 * label are added to *skipped (may be NULL). */
gyro_status gyro_example_file_read(gyro_example_set *s, const char *path, uint64_t *skipped);

#endif

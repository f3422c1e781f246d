/* text_reader.h — stream a text file as documents: one per line, or one per paragraph.
 *
 * The reader holds a 64 KiB read buffer and one document buffer that grows up to
 * `max_document` bytes, so any input size is read with constant memory. Line ends are "\n";
 * a "\r" before it (CRLF) is dropped, as is a UTF-8 byte-order mark at the very start of the
 * input. Bytes are passed through unchanged otherwise (no UTF-8 check here: that is the
 * normalizer's job, so it can apply its invalid-UTF-8 policy).
 *
 * Maximum document length: a line (or paragraph) longer than `max_document` bytes (default
 * 16 MiB) is not returned in pieces; the reader consumes it to its end and returns it with
 * too_long = 1 and only its first max_document bytes, so the caller can count and report it
 * and go on with the next document.
 *
 * Paragraph mode: documents are separated by one or more blank lines (empty, or only spaces,
 * tabs and CR); the lines of a paragraph are joined with "\n".
 */
#ifndef GYRO_PIPELINE_TEXT_READER_H
#define GYRO_PIPELINE_TEXT_READER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "models/core/status.h"

#define GYRO_TEXT_DEFAULT_MAX_DOCUMENT ((size_t)16 << 20)

typedef struct gyro_text_reader_options {
    size_t max_document;   /* bytes; 0 = GYRO_TEXT_DEFAULT_MAX_DOCUMENT */
    int paragraphs;        /* 1: documents are paragraphs separated by blank lines */
} gyro_text_reader_options;

/* One document returned by gyro_text_reader_next. `data` is owned by the reader, valid until the
 * next call, NUL-terminated (the document itself may contain NUL bytes: use `len`). */
typedef struct gyro_text_document {
    const char *data;
    size_t len;
    uint64_t line;         /* 1-based line where the document starts */
    uint64_t offset;       /* byte offset of its first byte in the input */
    int too_long;          /* 1: longer than max_document; data holds its first bytes */
} gyro_text_document;

typedef struct gyro_text_reader gyro_text_reader;

/* Read from `fp` (not closed by the reader); `name` (copied, NULL = "-") is for messages.
 * `opt` may be NULL. Errors: GYRO_ERR_NOMEM. */
gyro_status gyro_text_reader_open_file(FILE *fp, const char *name,
                                       const gyro_text_reader_options *opt, gyro_text_reader **out);

/* Open `path` ("-" = stdin). Errors: GYRO_ERR_IO naming the path, GYRO_ERR_NOMEM. */
gyro_status gyro_text_reader_open_path(const char *path, const gyro_text_reader_options *opt,
                                       gyro_text_reader **out);

/* The next document into *doc. Returns GYRO_OK with doc->data = NULL at the end of the input,
 * GYRO_ERR_IO on a read error (message names the input and line). */
gyro_status gyro_text_reader_next(gyro_text_reader *r, gyro_text_document *doc);

/* Lines and bytes consumed so far. */
uint64_t gyro_text_reader_lines(const gyro_text_reader *r);
uint64_t gyro_text_reader_bytes(const gyro_text_reader *r);

/* The name given at open. */
const char *gyro_text_reader_name(const gyro_text_reader *r);

/* Free the reader (closing the file if opened by gyro_text_reader_open_path). NULL is a no-op. */
void gyro_text_reader_free(gyro_text_reader *r);

#endif

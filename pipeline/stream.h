/* stream.h — gyro streams: length-delimited protobuf messages behind a StreamHeader.
 *
 * Wire format (protobuf's "delimited" convention, as Java's writeDelimitedTo and Python's
 * _VarintBytes + SerializeToString):
 *
 *     varint(len) StreamHeader  varint(len) record  varint(len) record ...
 *
 * The first record is a gyro.v1.StreamHeader {magic "gyro", version 1, message_type, producer};
 * every following record is a message of `message_type` (e.g. "gyro.v1.Document").
 *
 * The reader reads through stdio with constant memory (one record buffer, grown up to the
 * record limit, default 64 MiB) and never reads out of bounds: a truncated length prefix or
 * body, a malformed varint, a length above the limit, a record that fails to unpack, a missing
 * or foreign header each give GYRO_ERR_FORMAT / GYRO_ERR_LIMIT / GYRO_ERR_VERSION with the
 * stream name, the record number (1-based, the header is record 0) and the byte offset of the
 * record's length prefix, e.g.
 *     in.pb: record 3 at byte 1187: truncated: length prefix says 52 bytes, 17 remain
 * All of these map to exit status 65.
 *
 * The writer packs each message into one reusable buffer and writes prefix + body with stdio;
 * opened on a path it writes atomically (models/core/atomic_file.h), "-" is stdout.
 *
 * Neither object is thread-safe; use one per thread.
 */
#ifndef GYRO_PIPELINE_STREAM_H
#define GYRO_PIPELINE_STREAM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <protobuf-c/protobuf-c.h>

#include "models/core/status.h"
#include "proto/gyro.pb-c.h"

#define GYRO_STREAM_MAGIC "gyro"
#define GYRO_STREAM_VERSION 1u
/* Default limit on one record's length (the header's too): 64 MiB. */
#define GYRO_STREAM_DEFAULT_MAX_RECORD ((size_t)64 << 20)

/* ---- writer ------------------------------------------------------------------------------- */

typedef struct gyro_stream_writer gyro_stream_writer;

/* Start a stream on an open FILE* (not closed by the writer; e.g. stdout) and write its header
 * naming `type`->name as message_type and `producer` (may be NULL: "gyro"). `type` must outlive
 * the writer. Errors: GYRO_ERR_USAGE on NULL fp/type, GYRO_ERR_NOMEM, GYRO_ERR_IO if the
 * header cannot be written. *out is set only on success. */
gyro_status gyro_stream_writer_open_file(FILE *fp, const ProtobufCMessageDescriptor *type,
                                         const char *producer, gyro_stream_writer **out);

/* Start a stream written atomically to `path` ("-" = stdout): the file appears complete at
 * gyro_stream_writer_close() or not at all. Errors as above; the message names the path. */
gyro_status gyro_stream_writer_open_path(const char *path, const ProtobufCMessageDescriptor *type,
                                         const char *producer, gyro_stream_writer **out);

/* Append one message. It must be of the stream's type (else GYRO_ERR_USAGE); a packed size
 * above the record limit gives GYRO_ERR_LIMIT and writes nothing (the stream stays valid);
 * a write failure gives GYRO_ERR_IO. The message is not modified or freed. */
gyro_status gyro_stream_write(gyro_stream_writer *w, const ProtobufCMessage *m);

/* Set the record limit of the writer (default GYRO_STREAM_DEFAULT_MAX_RECORD). */
void gyro_stream_writer_set_max_record(gyro_stream_writer *w, size_t max_record);

/* Number of records written so far, the header not counted. */
uint64_t gyro_stream_writer_count(const gyro_stream_writer *w);

/* Push the records written so far to the reader of the stream (stdout, "-", a pipe, a FIFO or
 * a device), so a consumer sees each answer as it is made. A regular file written atomically
 * is not visible before gyro_stream_writer_close(): there it does nothing. Errors: GYRO_ERR_IO if the
 * flush fails (also remembered for close). */
gyro_status gyro_stream_writer_flush(gyro_stream_writer *w);

/* Flush (and for a path: fsync + rename) and free the writer. Returns GYRO_ERR_IO if any write,
 * the flush or the commit failed; the writer is freed in every case. NULL is a no-op (GYRO_OK). */
gyro_status gyro_stream_writer_close(gyro_stream_writer *w);

/* Free the writer without committing: a path target is left unchanged. NULL is a no-op. */
void gyro_stream_writer_abort(gyro_stream_writer *w);

/* ---- reader ------------------------------------------------------------------------------- */

typedef struct gyro_stream_reader gyro_stream_reader;

typedef struct gyro_stream_reader_options {
    size_t max_record;       /* 0 = GYRO_STREAM_DEFAULT_MAX_RECORD */
    /* NULL: the stream must start with a gyro StreamHeader. Non-NULL: the full name of the
     * record type (e.g. "gyro.v1.Document") to assume when the stream has no header; a stream
     * that does start with a header is still accepted (its header is checked). */
    const char *headerless_type;
} gyro_stream_reader_options;

/* Open a reader on `fp` (not closed by the reader); `name` (copied; NULL = "-") is used in
 * messages. Reads and checks the header: missing magic → GYRO_ERR_FORMAT, version above
 * GYRO_STREAM_VERSION → GYRO_ERR_VERSION (with a hint to upgrade), truncation/garbage →
 * GYRO_ERR_FORMAT. `opt` may be NULL for defaults. *out is set only on success. */
gyro_status gyro_stream_reader_open_file(FILE *fp, const char *name,
                                         const gyro_stream_reader_options *opt,
                                         gyro_stream_reader **out);

/* Open `path` ("-" = stdin) and read its header as above; GYRO_ERR_IO if it cannot be opened. */
gyro_status gyro_stream_reader_open_path(const char *path, const gyro_stream_reader_options *opt,
                                         gyro_stream_reader **out);

/* The header of the stream (owned by the reader; for a headerless stream a synthesized header
 * with magic "gyro", version 1, message_type = headerless_type and producer ""). */
const Gyro__V1__StreamHeader *gyro_stream_reader_header(const gyro_stream_reader *r);

/* Full name of the record type, e.g. "gyro.v1.Document". Owned by the reader. */
const char *gyro_stream_reader_message_type(const gyro_stream_reader *r);

/* Unpack the next record as `type` into *msg (caller frees it with
 * protobuf_c_message_free_unpacked(*msg, NULL)). At the clean end of the stream returns GYRO_OK
 * with *msg = NULL. Errors (*msg = NULL): `type`->name differs from the header's message_type
 * (GYRO_ERR_FORMAT), truncation, malformed prefix, unpack failure (GYRO_ERR_FORMAT), length over
 * the limit (GYRO_ERR_LIMIT), read error (GYRO_ERR_IO) — each message names the stream, record
 * number and byte offset. After an error the reader only returns that error again. */
gyro_status gyro_stream_next(gyro_stream_reader *r, const ProtobufCMessageDescriptor *type,
                             ProtobufCMessage **msg);

/* The next record's raw bytes without unpacking: *data (owned by the reader, valid until the next
 * call) and *len. At the end returns GYRO_OK with *data = NULL, *len = 0. Errors as above. */
gyro_status gyro_stream_next_raw(gyro_stream_reader *r, const uint8_t **data, size_t *len);

/* Number of the last record returned (1-based; 0 before the first) and the byte offset of its
 * length prefix from the start of the stream. */
uint64_t gyro_stream_reader_record(const gyro_stream_reader *r);
uint64_t gyro_stream_reader_offset(const gyro_stream_reader *r);

/* Free the reader (and close the file if it was opened by gyro_stream_reader_open_path).
 * NULL is a no-op. */
void gyro_stream_reader_free(gyro_stream_reader *r);

/* ---- record types ------------------------------------------------------------------------- */

/* The descriptor of a gyro message by its full name ("gyro.v1.Document",
 * "grpc.health.v1.HealthCheckResponse"), or NULL if gyro does not know it. Covers every
 * message of proto/gyro.proto and proto/health.proto (table in pipeline/stream_types.c). */
const ProtobufCMessageDescriptor *gyro_stream_type_find(const char *full_name);

/* The i-th known message descriptor (0-based), NULL past the end: for listing and tests. */
const ProtobufCMessageDescriptor *gyro_stream_type_at(size_t i);

/* ---- varint helpers (exposed for tests and other framings) -------------------------------- */

/* Encode `v` as a protobuf varint into buf (at least 10 bytes); returns the number of bytes. */
size_t gyro_varint_encode(uint8_t *buf, uint64_t v);

/* ---- detecting a stream ---------------------------------------------------------------------- */

/* 1 when the n bytes at b start a gyro stream (a varint length, then the StreamHeader's field 1
 * = "gyro"), else 0. */
int gyro_stream_looks_like(const unsigned char *b, size_t n);

/* Peek at the first bytes of `raw` (a file or a pipe; `name` for messages) and say whether they
 * start a gyro stream (*is_stream); *out reads those bytes first and then the rest of `raw`.
 * Only as many bytes as the decision needs are awaited (text is told after its first byte or
 * two, so a terminal or a pipe fed line by line is not held up; see stream_sniff.c), and *out
 * returns each read as soon as it arrives. `raw` must not have been read through stdio before
 * (it is read through its file descriptor when it has one). Closing *out does not close `raw`.
 * GYRO_ERR_IO on a read error, GYRO_ERR_NOMEM; *out is NULL then. */
gyro_status gyro_stream_sniff(FILE *raw, const char *name, FILE **out, int *is_stream);

#endif

/* stream.c — reader and writer of gyro streams (see stream.h for the format and error model).
 *
 * Reader: the length prefix is read byte by byte with getc (stdio buffers), the body with fread
 * into one record buffer. The buffer grows with the bytes actually read (doubling, capped at the
 * record limit), so a forged length of 60 MiB on a 100-byte file never allocates 60 MiB. Every
 * error is sticky: once a stream is found corrupt, later calls return the same status.
 *
 * Writer: each message is packed into one reusable buffer (grown to the largest message), then
 * prefix and body are written with fwrite. Write errors are remembered and reported at close
 * as well as at the failing call.
 */
#include "pipeline/stream.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "models/core/atomic_file.h"

/* ---- varints ----------------------------------------------------------------------------- */

size_t gyro_varint_encode(uint8_t *buf, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        buf[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    buf[n++] = (uint8_t)v;
    return n;
}

/* ---- writer ------------------------------------------------------------------------------ */

struct gyro_stream_writer {
    FILE *fp;
    gyro_atomic_file af;      /* used when `atomic` */
    int atomic;
    const ProtobufCMessageDescriptor *type;
    uint8_t *buf;             /* (cap) packed message */
    size_t cap;
    size_t max_record;
    uint64_t count;
    gyro_status failed;       /* first write error, sticky */
};

static gyro_status writer_put(gyro_stream_writer *w, const ProtobufCMessage *m)
{
    if (w->failed) return gyro_error_set(w->failed, "stream: an earlier write failed");
    size_t size = protobuf_c_message_get_packed_size(m);
    if (size > w->max_record)
        return gyro_error_set(GYRO_ERR_LIMIT,
                              "stream: a %s record of %zu bytes is over the limit of %zu bytes",
                              m->descriptor->name, size, w->max_record);
    if (size > w->cap) {
        size_t cap = w->cap ? w->cap : 4096;
        while (cap < size) cap *= 2;
        uint8_t *nb = realloc(w->buf, cap);
        if (!nb) return gyro_error_set(GYRO_ERR_NOMEM, "stream: out of memory (%zu bytes)", cap);
        w->buf = nb;
        w->cap = cap;
    }
    size_t packed = size ? protobuf_c_message_pack(m, w->buf) : 0;
    if (packed != size)
        return gyro_error_set(GYRO_ERR_INTERNAL, "stream: packed %zu bytes, expected %zu", packed, size);
    uint8_t prefix[10];
    size_t np = gyro_varint_encode(prefix, size);
    if (fwrite(prefix, 1, np, w->fp) != np || (size && fwrite(w->buf, 1, size, w->fp) != size)) {
        w->failed = GYRO_ERR_IO;
        return gyro_error_set(GYRO_ERR_IO, "stream: write failed: %s", strerror(errno));
    }
    return GYRO_OK;
}

static gyro_status writer_start(gyro_stream_writer *w, const char *producer)
{
    Gyro__V1__StreamHeader h = GYRO__V1__STREAM_HEADER__INIT;
    h.magic = (char *)GYRO_STREAM_MAGIC;
    h.version = GYRO_STREAM_VERSION;
    h.message_type = (char *)w->type->name;
    h.producer = (char *)(producer ? producer : "gyro");
    return writer_put(w, &h.base);
}

static gyro_status writer_new(const ProtobufCMessageDescriptor *type, gyro_stream_writer **out)
{
    if (!type || !out) return gyro_error_set(GYRO_ERR_USAGE, "stream: NULL type or output");
    gyro_stream_writer *w = calloc(1, sizeof *w);
    if (!w) return gyro_error_set(GYRO_ERR_NOMEM, "stream: out of memory");
    w->type = type;
    w->max_record = GYRO_STREAM_DEFAULT_MAX_RECORD;
    *out = w;
    return GYRO_OK;
}

gyro_status gyro_stream_writer_open_file(FILE *fp, const ProtobufCMessageDescriptor *type,
                                         const char *producer, gyro_stream_writer **out)
{
    if (!fp) return gyro_error_set(GYRO_ERR_USAGE, "stream: NULL file");
    gyro_stream_writer *w;
    gyro_status s = writer_new(type, &w);
    if (s) return s;
    w->fp = fp;
    if ((s = writer_start(w, producer))) {
        gyro_stream_writer_abort(w);
        return s;
    }
    *out = w;
    return GYRO_OK;
}

gyro_status gyro_stream_writer_open_path(const char *path, const ProtobufCMessageDescriptor *type,
                                         const char *producer, gyro_stream_writer **out)
{
    if (!path) return gyro_error_set(GYRO_ERR_USAGE, "stream: NULL path");
    gyro_stream_writer *w;
    gyro_status s = writer_new(type, &w);
    if (s) return s;
    if ((s = gyro_atomic_open(&w->af, path))) {
        free(w);
        return s;
    }
    w->atomic = 1;
    w->fp = w->af.fp;
    if ((s = writer_start(w, producer))) {
        gyro_error_prefix(s, "%s", path);
        gyro_stream_writer_abort(w);
        return s;
    }
    *out = w;
    return GYRO_OK;
}

gyro_status gyro_stream_write(gyro_stream_writer *w, const ProtobufCMessage *m)
{
    if (!w || !m) return gyro_error_set(GYRO_ERR_USAGE, "stream: NULL writer or message");
    if (m->descriptor != w->type && strcmp(m->descriptor->name, w->type->name) != 0)
        return gyro_error_set(GYRO_ERR_USAGE, "stream: writing a %s into a stream of %s",
                              m->descriptor->name, w->type->name);
    gyro_status s = writer_put(w, m);
    if (s == GYRO_OK) w->count++;
    return s;
}

void gyro_stream_writer_set_max_record(gyro_stream_writer *w, size_t max_record)
{
    if (w) w->max_record = max_record ? max_record : GYRO_STREAM_DEFAULT_MAX_RECORD;
}

uint64_t gyro_stream_writer_count(const gyro_stream_writer *w)
{
    return w ? w->count : 0;
}

gyro_status gyro_stream_writer_flush(gyro_stream_writer *w)
{
    if (!w || (w->atomic && w->af.mode == GYRO_ATOMIC_RENAME)) return GYRO_OK;
    if (w->failed) return gyro_error_set(w->failed, "stream: a write failed");
    if (fflush(w->fp) != 0 || ferror(w->fp)) {
        w->failed = GYRO_ERR_IO;
        return gyro_error_set(GYRO_ERR_IO, "stream: write failed: %s", strerror(errno));
    }
    return GYRO_OK;
}

gyro_status gyro_stream_writer_close(gyro_stream_writer *w)
{
    if (!w) return GYRO_OK;
    gyro_status s = w->failed;
    if (s) {
        gyro_error_set(s, "stream: a write failed");
        if (w->atomic) gyro_atomic_abort(&w->af);
    } else if (w->atomic) {
        s = gyro_atomic_commit(&w->af);
    } else if (fflush(w->fp) != 0 || ferror(w->fp)) {
        s = gyro_error_set(GYRO_ERR_IO, "stream: write failed: %s", strerror(errno));
    }
    free(w->buf);
    free(w);
    return s;
}

void gyro_stream_writer_abort(gyro_stream_writer *w)
{
    if (!w) return;
    if (w->atomic) gyro_atomic_abort(&w->af);
    free(w->buf);
    free(w);
}

/* ---- reader ------------------------------------------------------------------------------ */

struct gyro_stream_reader {
    FILE *fp;
    int owns_fp;
    char *name;
    size_t max_record;
    uint8_t *buf;             /* (cap) current record */
    size_t cap;
    uint64_t pos;             /* bytes consumed from the stream */
    uint64_t record;          /* number of the record last read (header = 0) */
    uint64_t record_offset;   /* offset of its length prefix */
    gyro_status failed;       /* sticky error */
    char *failed_msg;
    Gyro__V1__StreamHeader *header;   /* unpacked, or synthesized below */
    Gyro__V1__StreamHeader synth;
    char *synth_type;
    int type_checked;
    int pending;              /* 1: buf holds a record already read (headerless first record) */
    size_t pending_len;
};

static gyro_status reader_fail(gyro_stream_reader *r, gyro_status s, uint64_t record,
                               uint64_t offset, const char *what)
{
    gyro_error_set(s, "%s: record %llu at byte %llu: %s", r->name, (unsigned long long)record,
                   (unsigned long long)offset, what);
    r->failed = s;
    free(r->failed_msg);
    r->failed_msg = strdup(gyro_error_message());
    return s;
}

/* Read one record into r->buf. Returns GYRO_OK with *len set and *eof = 0, or GYRO_OK with
 * *eof = 1 at a clean end (no byte of a new prefix), or an error. */
static gyro_status read_record(gyro_stream_reader *r, size_t *len, int *eof)
{
    char what[160];
    uint64_t start = r->pos, number = r->record + 1;
    uint64_t v = 0;
    int shift = 0, nbytes = 0;
    *eof = 0;
    *len = 0;
    for (;;) {
        int c = getc(r->fp);
        if (c == EOF) {
            if (ferror(r->fp)) {
                snprintf(what, sizeof what, "read error: %s", strerror(errno));
                return reader_fail(r, GYRO_ERR_IO, number, start, what);
            }
            if (nbytes == 0) {
                *eof = 1;
                return GYRO_OK;
            }
            return reader_fail(r, GYRO_ERR_FORMAT, number, start,
                               "truncated: the stream ends inside a length prefix");
        }
        r->pos++;
        nbytes++;
        if (shift == 63 && (c & 0x7e))
            return reader_fail(r, GYRO_ERR_FORMAT, number, start,
                               "malformed length prefix (varint over 64 bits)");
        v |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) break;
        shift += 7;
        if (shift > 63)
            return reader_fail(r, GYRO_ERR_FORMAT, number, start,
                               "malformed length prefix (more than 10 bytes)");
    }
    if (v > r->max_record) {
        snprintf(what, sizeof what, "length prefix says %llu bytes, over the limit of %zu bytes",
                 (unsigned long long)v, r->max_record);
        return reader_fail(r, GYRO_ERR_LIMIT, number, start, what);
    }
    size_t want = (size_t)v, got = 0;
    while (got < want) {
        if (got == r->cap) {
            size_t cap = r->cap ? r->cap * 2 : 4096;
            if (cap > want) cap = want;
            uint8_t *nb = realloc(r->buf, cap);
            if (!nb) return reader_fail(r, GYRO_ERR_NOMEM, number, start, "out of memory");
            r->buf = nb;
            r->cap = cap;
        }
        size_t chunk = (r->cap < want ? r->cap : want) - got;
        size_t n = fread(r->buf + got, 1, chunk, r->fp);
        got += n;
        r->pos += n;
        if (n < chunk) {
            if (ferror(r->fp)) {
                snprintf(what, sizeof what, "read error: %s", strerror(errno));
                return reader_fail(r, GYRO_ERR_IO, number, start, what);
            }
            snprintf(what, sizeof what, "truncated: length prefix says %zu bytes, %zu remain",
                     want, got);
            return reader_fail(r, GYRO_ERR_FORMAT, number, start, what);
        }
    }
    r->record = number;
    r->record_offset = start;
    *len = want;
    return GYRO_OK;
}

static gyro_status reader_header(gyro_stream_reader *r, const char *headerless_type)
{
    size_t len;
    int eof;
    r->record = (uint64_t)-1; /* so the header is record 0 */
    gyro_status s = read_record(r, &len, &eof);
    if (s) return s;
    if (eof && !headerless_type)
        return reader_fail(r, GYRO_ERR_FORMAT, 0, 0, "empty input: no gyro stream header");
    Gyro__V1__StreamHeader *h = NULL;
    if (!eof) h = gyro__v1__stream_header__unpack(NULL, len, r->buf);
    if (h && h->magic && strcmp(h->magic, GYRO_STREAM_MAGIC) == 0) {
        r->header = h;
        if (h->version > GYRO_STREAM_VERSION) {
            char what[200];
            snprintf(what, sizeof what,
                     "stream format version %u is newer than this gyro reads (%u); "
                     "upgrade gyro to read it", h->version, GYRO_STREAM_VERSION);
            return reader_fail(r, GYRO_ERR_VERSION, 0, 0, what);
        }
        if (!h->message_type || !h->message_type[0])
            return reader_fail(r, GYRO_ERR_FORMAT, 0, 0, "stream header names no message type");
        return GYRO_OK;
    }
    if (h) gyro__v1__stream_header__free_unpacked(h, NULL);
    if (!headerless_type)
        return reader_fail(r, GYRO_ERR_FORMAT, 0, 0,
                           "not a gyro stream (no StreamHeader with magic \"gyro\"; "
                           "for a stream without header give its type)");
    /* Headerless: the record just read (if any) is the first data record. */
    r->synth_type = strdup(headerless_type);
    if (!r->synth_type) return reader_fail(r, GYRO_ERR_NOMEM, 0, 0, "out of memory");
    gyro__v1__stream_header__init(&r->synth);
    r->synth.magic = (char *)GYRO_STREAM_MAGIC;
    r->synth.version = GYRO_STREAM_VERSION;
    r->synth.message_type = r->synth_type;
    r->synth.producer = (char *)"";
    r->header = &r->synth;
    r->record = 0;
    if (!eof) {
        r->pending = 1;
        r->pending_len = len;
        r->record_offset = 0;
    }
    return GYRO_OK;
}

gyro_status gyro_stream_reader_open_file(FILE *fp, const char *name,
                                         const gyro_stream_reader_options *opt,
                                         gyro_stream_reader **out)
{
    if (!fp || !out) return gyro_error_set(GYRO_ERR_USAGE, "stream: NULL file or output");
    gyro_stream_reader *r = calloc(1, sizeof *r);
    if (!r) return gyro_error_set(GYRO_ERR_NOMEM, "stream: out of memory");
    r->fp = fp;
    r->name = strdup(name ? name : "-");
    r->max_record = opt && opt->max_record ? opt->max_record : GYRO_STREAM_DEFAULT_MAX_RECORD;
    if (!r->name) {
        free(r);
        return gyro_error_set(GYRO_ERR_NOMEM, "stream: out of memory");
    }
    gyro_status s = reader_header(r, opt ? opt->headerless_type : NULL);
    if (s) {
        gyro_stream_reader_free(r);
        return s;
    }
    *out = r;
    return GYRO_OK;
}

gyro_status gyro_stream_reader_open_path(const char *path, const gyro_stream_reader_options *opt,
                                         gyro_stream_reader **out)
{
    if (!path || !out) return gyro_error_set(GYRO_ERR_USAGE, "stream: NULL path or output");
    if (strcmp(path, "-") == 0) return gyro_stream_reader_open_file(stdin, "-", opt, out);
    FILE *fp = fopen(path, "rb");
    if (!fp) return gyro_error_set(GYRO_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    gyro_stream_reader *r;
    gyro_status s = gyro_stream_reader_open_file(fp, path, opt, &r);
    if (s) {
        fclose(fp);
        return s;
    }
    r->owns_fp = 1;
    *out = r;
    return GYRO_OK;
}

const Gyro__V1__StreamHeader *gyro_stream_reader_header(const gyro_stream_reader *r)
{
    return r ? r->header : NULL;
}

const char *gyro_stream_reader_message_type(const gyro_stream_reader *r)
{
    return r && r->header ? r->header->message_type : NULL;
}

gyro_status gyro_stream_next_raw(gyro_stream_reader *r, const uint8_t **data, size_t *len)
{
    if (!r || !data || !len) return gyro_error_set(GYRO_ERR_USAGE, "stream: NULL argument");
    *data = NULL;
    *len = 0;
    if (r->failed) return gyro_error_set(r->failed, "%s", r->failed_msg ? r->failed_msg : "stream failed");
    if (r->pending) {
        r->pending = 0;
        r->record = 1;
        *len = r->pending_len;
        *data = r->buf ? r->buf : (const uint8_t *)"";
        return GYRO_OK;
    }
    int eof;
    gyro_status s = read_record(r, len, &eof);
    if (s || eof) return s;
    *data = r->buf ? r->buf : (const uint8_t *)"";
    return GYRO_OK;
}

gyro_status gyro_stream_next(gyro_stream_reader *r, const ProtobufCMessageDescriptor *type,
                             ProtobufCMessage **msg)
{
    if (!r || !type || !msg) return gyro_error_set(GYRO_ERR_USAGE, "stream: NULL argument");
    *msg = NULL;
    if (!r->type_checked && !r->failed) {
        if (strcmp(type->name, r->header->message_type) != 0) {
            char what[300];
            snprintf(what, sizeof what, "the stream holds %.120s records, expected %.120s",
                     r->header->message_type, type->name);
            return reader_fail(r, GYRO_ERR_FORMAT, 0, 0, what);
        }
        r->type_checked = 1;
    }
    const uint8_t *data;
    size_t len;
    gyro_status s = gyro_stream_next_raw(r, &data, &len);
    if (s || !data) return s;
    ProtobufCMessage *m = protobuf_c_message_unpack(type, NULL, len, data);
    if (!m) {
        char what[200];
        snprintf(what, sizeof what, "a %zu-byte record does not unpack as %.120s", len, type->name);
        return reader_fail(r, GYRO_ERR_FORMAT, r->record, r->record_offset, what);
    }
    *msg = m;
    return GYRO_OK;
}

uint64_t gyro_stream_reader_record(const gyro_stream_reader *r)
{
    return r ? r->record : 0;
}

uint64_t gyro_stream_reader_offset(const gyro_stream_reader *r)
{
    return r ? r->record_offset : 0;
}

void gyro_stream_reader_free(gyro_stream_reader *r)
{
    if (!r) return;
    if (r->header && r->header != &r->synth) gyro__v1__stream_header__free_unpacked(r->header, NULL);
    if (r->owns_fp) fclose(r->fp);
    free(r->synth_type);
    free(r->failed_msg);
    free(r->name);
    free(r->buf);
    free(r);
}

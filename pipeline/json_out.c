/* json_out.c — protobuf-c message → JSON through its descriptor (see json_out.h).
 *
 * protobuf-c lays a message out as a C struct described by ProtobufCFieldDescriptor: `offset` is
 * the value (or, for a repeated field, the pointer to the array) and `quantifier_offset` the
 * element count of a repeated field, the has_ flag of a proto2 optional scalar, or the case
 * member of a oneof. Each value is read with the C type protobuf-c uses for its field type.
 */
#include "pipeline/json_out.h"

#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "models/text/utf8.h"

#define MAX_DEPTH 64

void gyro_json_write_string(FILE *out, const char *s, size_t len)
{
    const uint8_t *p = (const uint8_t *)s;
    putc('"', out);
    size_t i = 0;
    while (i < len) {
        uint8_t b = p[i];
        if (b >= 0x20 && b < 0x80 && b != '"' && b != '\\') {
            putc(b, out);
            i++;
            continue;
        }
        if (b < 0x80) {
            switch (b) {
            case '"': fputs("\\\"", out); break;
            case '\\': fputs("\\\\", out); break;
            case '\n': fputs("\\n", out); break;
            case '\r': fputs("\\r", out); break;
            case '\t': fputs("\\t", out); break;
            case '\b': fputs("\\b", out); break;
            case '\f': fputs("\\f", out); break;
            default: fprintf(out, "\\u%04x", b); break;
            }
            i++;
            continue;
        }
        int32_t cp;
        size_t n = gyro_utf8_decode(p + i, len - i, &cp);
        if (cp < 0) fputs("\\ufffd", out);
        else if (cp == 0x2028 || cp == 0x2029) fprintf(out, "\\u%04x", (unsigned)cp);
        else fwrite(p + i, 1, n, out);
        i += n;
    }
    putc('"', out);
}

static void write_base64(FILE *out, const uint8_t *d, size_t len)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    putc('"', out);
    size_t i = 0;
    for (; i + 2 < len; i += 3) {
        uint32_t v = (uint32_t)d[i] << 16 | (uint32_t)d[i + 1] << 8 | d[i + 2];
        putc(tab[v >> 18], out);
        putc(tab[(v >> 12) & 63], out);
        putc(tab[(v >> 6) & 63], out);
        putc(tab[v & 63], out);
    }
    if (i < len) {
        uint32_t v = (uint32_t)d[i] << 16 | (i + 1 < len ? (uint32_t)d[i + 1] << 8 : 0);
        putc(tab[v >> 18], out);
        putc(tab[(v >> 12) & 63], out);
        putc(i + 1 < len ? tab[(v >> 6) & 63] : '=', out);
        putc('=', out);
    }
    putc('"', out);
}

/* The shortest of %.{min..max}g that reads back to the same float (is_float) or double. */
static void write_double(FILE *out, double v, int is_float)
{
    if (isnan(v)) {
        fputs("\"NaN\"", out);
        return;
    }
    if (isinf(v)) {
        fputs(v > 0 ? "\"Infinity\"" : "\"-Infinity\"", out);
        return;
    }
    char buf[40];
    for (int digits = is_float ? 6 : 15; digits <= (is_float ? 9 : 17); digits++) {
        snprintf(buf, sizeof buf, "%.*g", digits, v);
        if (is_float ? strtof(buf, NULL) == (float)v : strtod(buf, NULL) == v) break;
    }
    fputs(buf, out);
}

/* Size in bytes of one element of a field of type t in a protobuf-c struct. */
static size_t elem_size(ProtobufCType t)
{
    switch (t) {
    case PROTOBUF_C_TYPE_INT32: case PROTOBUF_C_TYPE_SINT32: case PROTOBUF_C_TYPE_SFIXED32:
    case PROTOBUF_C_TYPE_UINT32: case PROTOBUF_C_TYPE_FIXED32: case PROTOBUF_C_TYPE_ENUM:
        return 4;
    case PROTOBUF_C_TYPE_FLOAT: return sizeof(float);
    case PROTOBUF_C_TYPE_BOOL: return sizeof(protobuf_c_boolean);
    case PROTOBUF_C_TYPE_INT64: case PROTOBUF_C_TYPE_SINT64: case PROTOBUF_C_TYPE_SFIXED64:
    case PROTOBUF_C_TYPE_UINT64: case PROTOBUF_C_TYPE_FIXED64:
        return 8;
    case PROTOBUF_C_TYPE_DOUBLE: return sizeof(double);
    case PROTOBUF_C_TYPE_STRING: return sizeof(char *);
    case PROTOBUF_C_TYPE_BYTES: return sizeof(ProtobufCBinaryData);
    case PROTOBUF_C_TYPE_MESSAGE: return sizeof(ProtobufCMessage *);
    }
    return 0;
}

/* 1 if the value at p is the proto3 default of its type. */
static int is_default(const ProtobufCFieldDescriptor *f, const void *p)
{
    switch (f->type) {
    case PROTOBUF_C_TYPE_INT32: case PROTOBUF_C_TYPE_SINT32: case PROTOBUF_C_TYPE_SFIXED32:
    case PROTOBUF_C_TYPE_UINT32: case PROTOBUF_C_TYPE_FIXED32:
        return *(const uint32_t *)p == 0;
    case PROTOBUF_C_TYPE_ENUM: return *(const int *)p == 0;
    case PROTOBUF_C_TYPE_INT64: case PROTOBUF_C_TYPE_SINT64: case PROTOBUF_C_TYPE_SFIXED64:
    case PROTOBUF_C_TYPE_UINT64: case PROTOBUF_C_TYPE_FIXED64:
        return *(const uint64_t *)p == 0;
    case PROTOBUF_C_TYPE_FLOAT: return *(const float *)p == 0.0f;
    case PROTOBUF_C_TYPE_DOUBLE: return *(const double *)p == 0.0;
    case PROTOBUF_C_TYPE_BOOL: return !*(const protobuf_c_boolean *)p;
    case PROTOBUF_C_TYPE_STRING: {
        const char *s = *(char *const *)p;
        return !s || !s[0];
    }
    case PROTOBUF_C_TYPE_BYTES: return ((const ProtobufCBinaryData *)p)->len == 0;
    case PROTOBUF_C_TYPE_MESSAGE: return *(ProtobufCMessage *const *)p == NULL;
    }
    return 1;
}

static gyro_status write_msg(FILE *out, const ProtobufCMessage *m, const gyro_json_out_options *o,
                             int depth);

static gyro_status write_value(FILE *out, const ProtobufCFieldDescriptor *f, const void *p,
                               const gyro_json_out_options *o, int depth)
{
    switch (f->type) {
    case PROTOBUF_C_TYPE_INT32: case PROTOBUF_C_TYPE_SINT32: case PROTOBUF_C_TYPE_SFIXED32:
        fprintf(out, "%" PRId32, *(const int32_t *)p);
        break;
    case PROTOBUF_C_TYPE_UINT32: case PROTOBUF_C_TYPE_FIXED32:
        fprintf(out, "%" PRIu32, *(const uint32_t *)p);
        break;
    case PROTOBUF_C_TYPE_INT64: case PROTOBUF_C_TYPE_SINT64: case PROTOBUF_C_TYPE_SFIXED64:
        fprintf(out, "\"%" PRId64 "\"", *(const int64_t *)p);
        break;
    case PROTOBUF_C_TYPE_UINT64: case PROTOBUF_C_TYPE_FIXED64:
        fprintf(out, "\"%" PRIu64 "\"", *(const uint64_t *)p);
        break;
    case PROTOBUF_C_TYPE_FLOAT: write_double(out, *(const float *)p, 1); break;
    case PROTOBUF_C_TYPE_DOUBLE: write_double(out, *(const double *)p, 0); break;
    case PROTOBUF_C_TYPE_BOOL: fputs(*(const protobuf_c_boolean *)p ? "true" : "false", out); break;
    case PROTOBUF_C_TYPE_ENUM: {
        int v = *(const int *)p;
        const ProtobufCEnumValue *ev =
            f->descriptor ? protobuf_c_enum_descriptor_get_value(f->descriptor, v) : NULL;
        if (ev) gyro_json_write_string(out, ev->name, strlen(ev->name));
        else fprintf(out, "%d", v);
        break;
    }
    case PROTOBUF_C_TYPE_STRING: {
        const char *s = *(char *const *)p;
        gyro_json_write_string(out, s ? s : "", s ? strlen(s) : 0);
        break;
    }
    case PROTOBUF_C_TYPE_BYTES: {
        const ProtobufCBinaryData *b = p;
        write_base64(out, b->data, b->len);
        break;
    }
    case PROTOBUF_C_TYPE_MESSAGE: {
        const ProtobufCMessage *sub = *(ProtobufCMessage *const *)p;
        if (!sub) fputs("null", out);
        else return write_msg(out, sub, o, depth + 1);
        break;
    }
    }
    return GYRO_OK;
}

static gyro_status write_msg(FILE *out, const ProtobufCMessage *m, const gyro_json_out_options *o,
                             int depth)
{
    if (depth > MAX_DEPTH)
        return gyro_error_set(GYRO_ERR_LIMIT, "json: messages nested deeper than %d levels", MAX_DEPTH);
    const ProtobufCMessageDescriptor *d = m->descriptor;
    const char *base = (const char *)m;
    int first = 1;
    gyro_status s = GYRO_OK;
    putc('{', out);
    for (unsigned i = 0; i < d->n_fields && !s; i++) {
        const ProtobufCFieldDescriptor *f = &d->fields[i];
        const void *p = base + f->offset;
        if (f->label == PROTOBUF_C_LABEL_REPEATED) {
            size_t n = *(const size_t *)(base + f->quantifier_offset);
            if (n == 0 && !o->emit_defaults) continue;
            if (!first) putc(',', out);
            first = 0;
            gyro_json_write_string(out, f->name, strlen(f->name));
            putc(':', out);
            putc('[', out);
            const char *arr = *(char *const *)p;
            size_t es = elem_size(f->type);
            for (size_t k = 0; k < n && !s; k++) {
                if (k) putc(',', out);
                s = write_value(out, f, arr + k * es, o, depth);
            }
            putc(']', out);
            continue;
        }
        int present;
        if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
            present = *(const uint32_t *)(base + f->quantifier_offset) == f->id;
        } else if (f->label == PROTOBUF_C_LABEL_OPTIONAL && f->type != PROTOBUF_C_TYPE_STRING &&
                   f->type != PROTOBUF_C_TYPE_MESSAGE) {
            present = *(const protobuf_c_boolean *)(base + f->quantifier_offset) || o->emit_defaults;
        } else if (f->label == PROTOBUF_C_LABEL_REQUIRED) {
            present = 1;
        } else {
            present = o->emit_defaults || !is_default(f, p);
        }
        if (!present) continue;
        if (!first) putc(',', out);
        first = 0;
        gyro_json_write_string(out, f->name, strlen(f->name));
        putc(':', out);
        s = write_value(out, f, p, o, depth);
    }
    putc('}', out);
    return s;
}

gyro_status gyro_json_write_message(FILE *out, const ProtobufCMessage *m,
                                    const gyro_json_out_options *opt)
{
    if (!out || !m) return gyro_error_set(GYRO_ERR_USAGE, "json: NULL argument");
    gyro_json_out_options o = {0};
    if (opt) o = *opt;
    gyro_status s = write_msg(out, m, &o, 0);
    if (s) return s;
    if (ferror(out)) return gyro_error_set(GYRO_ERR_IO, "json: write failed");
    return GYRO_OK;
}

gyro_status gyro_json_message_to_string(const ProtobufCMessage *m, const gyro_json_out_options *opt,
                                        char **json, size_t *len)
{
    if (!json) return gyro_error_set(GYRO_ERR_USAGE, "json: NULL argument");
    *json = NULL;
    char *buf = NULL;
    size_t n = 0;
    FILE *fp = open_memstream(&buf, &n);
    if (!fp) return gyro_error_set(GYRO_ERR_NOMEM, "json: out of memory");
    gyro_status s = gyro_json_write_message(fp, m, opt);
    if (fclose(fp) != 0 && !s) s = gyro_error_set(GYRO_ERR_NOMEM, "json: out of memory");
    if (s) {
        free(buf);
        return s;
    }
    *json = buf;
    if (len) *len = n;
    return GYRO_OK;
}

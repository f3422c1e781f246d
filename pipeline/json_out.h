/* json_out.h — any protobuf-c message as one line of JSON, driven by its descriptor.
 *
 * The output follows protobuf's proto3 JSON mapping with the proto field names kept (as
 * Python's json_format.MessageToJson(..., preserving_proto_field_name=True)):
 *   - fields in field-number order; fields at their default value (0, "", false, the first enum
 *     value, an empty repeated field, an absent message) are left out unless emit_defaults;
 *     a member of a oneof is written whenever it is the set case;
 *   - int64/uint64/fixed64/sint64/sfixed64 as decimal strings, other integers as numbers;
 *   - float and double in the fewest digits (6..9, 15..17) that read back exactly; NaN and
 *     the infinities as the strings "NaN", "Infinity", "-Infinity";
 *   - enums by value name (the number if the value is unknown); bytes as standard base64;
 *   - strings escaped per RFC 8259 (plus U+2028/U+2029); a string that is not valid UTF-8
 *     (protobuf-c does not check) has each invalid sequence written as \ufffd.
 * No trailing newline is written. Used by `gyro dump` and by commands offering --json.
 */
#ifndef GYRO_PIPELINE_JSON_OUT_H
#define GYRO_PIPELINE_JSON_OUT_H

#include <stddef.h>
#include <stdio.h>

#include <protobuf-c/protobuf-c.h>

#include "models/core/status.h"

typedef struct gyro_json_out_options {
    int emit_defaults;   /* 1: also write fields at their default value */
} gyro_json_out_options;

/* Write `m` as a JSON object to `out`. `opt` may be NULL (defaults left out). Errors:
 * GYRO_ERR_USAGE for NULL arguments, GYRO_ERR_LIMIT for messages nested deeper than 64 levels,
 * GYRO_ERR_IO if the stream reports a write error. */
gyro_status gyro_json_write_message(FILE *out, const ProtobufCMessage *m,
                                    const gyro_json_out_options *opt);

/* The same into a new NUL-terminated string: *json (caller frees with free()) and *len (may be
 * NULL). Errors as above plus GYRO_ERR_NOMEM; *json is NULL on error. */
gyro_status gyro_json_message_to_string(const ProtobufCMessage *m, const gyro_json_out_options *opt,
                                        char **json, size_t *len);

/* Write `len` bytes of `s` as a quoted, escaped JSON string (invalid UTF-8 → \ufffd). */
void gyro_json_write_string(FILE *out, const char *s, size_t len);

#endif

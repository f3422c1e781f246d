/* json.h — a small strict JSON parser (RFC 8259) for the data sets gyro imports.
 *
 * The whole text is parsed into a read-only tree whose nodes and strings live in one arena
 * owned by a gyro_json_doc, so a document is freed in one call and parsing does one allocation
 * per 1 MiB chunk rather than one per node. Strict means: no comments, no trailing commas, no
 * single quotes, no NaN/Infinity, no leading zeros or '+' on numbers, no raw control
 * characters in strings, valid UTF-8 everywhere, \u escapes with properly paired surrogates,
 * exactly one value followed only by whitespace. A leading UTF-8 byte-order mark is skipped
 * (RFC 8259 §8.1 allows it). Nesting is limited (GYRO_JSON_MAX_DEPTH) so hostile input cannot
 * exhaust the stack.
 *
 * Any malformed input gives GYRO_ERR_DATA with "name:line:column: what was expected" (line and
 * column 1-based, the column counted in characters), never a crash or an out-of-bounds read.
 * Strings are decoded (escapes resolved) and NUL-terminated; a string may contain U+0000 from a
 * \u0000 escape, so its byte length is kept beside it. Duplicate object keys are kept in order;
 * gyro_json_get returns the first.
 */
#ifndef GYRO_PIPELINE_JSON_H
#define GYRO_PIPELINE_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "models/core/status.h"

#define GYRO_JSON_MAX_DEPTH 256
/* Largest file gyro_json_parse_file reads: 1 GiB. */
#define GYRO_JSON_MAX_FILE ((size_t)1 << 30)

typedef enum gyro_json_type {
    GYRO_JSON_NULL = 0,
    GYRO_JSON_FALSE,
    GYRO_JSON_TRUE,
    GYRO_JSON_NUMBER,
    GYRO_JSON_STRING,
    GYRO_JSON_ARRAY,
    GYRO_JSON_OBJECT
} gyro_json_type;

/* One value of the tree. Owned by its document; never modify. */
typedef struct gyro_json gyro_json;
struct gyro_json {
    gyro_json_type type;
    uint32_t line;           /* 1-based line where the value starts */
    size_t offset;           /* byte offset where the value starts */
    union {
        double number;                       /* GYRO_JSON_NUMBER */
        struct { const char *str; size_t len; } s;  /* GYRO_JSON_STRING: decoded, NUL-terminated */
        struct {
            size_t n;                        /* elements or members */
            const gyro_json **items;         /* (n) elements, or member values */
            const char **keys;               /* (n) member names (objects only), NUL-terminated */
        } c;
    } u;
};

typedef struct gyro_json_doc gyro_json_doc;

/* Parse `len` bytes at `text` (need not be NUL-terminated). `name` (copied; NULL = "-") is used
 * in messages. On success *out owns a new document. Errors: GYRO_ERR_DATA (malformed, message
 * "name:line:col: ..."), GYRO_ERR_LIMIT (nesting deeper than GYRO_JSON_MAX_DEPTH),
 * GYRO_ERR_NOMEM, GYRO_ERR_USAGE (NULL out, or NULL text with len > 0); *out is then NULL. */
gyro_status gyro_json_parse(const char *text, size_t len, const char *name, gyro_json_doc **out);

/* Read the file at `path` ("-" = stdin) and parse it. GYRO_ERR_IO if it cannot be read,
 * GYRO_ERR_LIMIT above GYRO_JSON_MAX_FILE, else as gyro_json_parse (messages name the path). */
gyro_status gyro_json_parse_file(const char *path, gyro_json_doc **out);

/* Free a document and every node and string in it. NULL is a no-op. */
void gyro_json_doc_free(gyro_json_doc *d);

/* The root value of a document (never NULL for a parsed document). */
const gyro_json *gyro_json_root(const gyro_json_doc *d);

/* The name the document was parsed under (owned by the document). */
const char *gyro_json_name(const gyro_json_doc *d);

/* The 1-based column (in characters) of a node of this document: computed by scanning back to
 * the start of its line, so call it for messages, not in loops. It reads the parsed text: for a
 * document from gyro_json_parse the caller's buffer must still be alive (a document from
 * gyro_json_parse_file owns its text). */
uint32_t gyro_json_column(const gyro_json_doc *d, const gyro_json *v);

/* The member `key` of an object (the first if repeated), or NULL when `obj` is NULL, not an
 * object, or has no such member. */
const gyro_json *gyro_json_get(const gyro_json *obj, const char *key);

/* Number of elements of an array or members of an object; 0 for other values and NULL. */
size_t gyro_json_size(const gyro_json *v);

/* Element i of an array or value of member i of an object; NULL when out of range. */
const gyro_json *gyro_json_at(const gyro_json *v, size_t i);

/* Name of member i of an object; NULL when not an object or out of range. */
const char *gyro_json_key_at(const gyro_json *v, size_t i);

/* The decoded string of a string value, NULL for anything else (NULL included). */
const char *gyro_json_string(const gyro_json *v);

/* Name of a type ("null", "false", "true", "number", "string", "array", "object"). */
const char *gyro_json_type_name(gyro_json_type t);

#endif

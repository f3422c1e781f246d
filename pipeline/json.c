/* json.c — strict recursive-descent JSON parser into an arena-backed tree (see json.h).
 *
 * The parser keeps one cursor, the current line and the offset where that line starts;
 * newlines can only occur in whitespace (a raw newline inside a string is an error), so the
 * line count is exact and an error's column is found by counting UTF-8 lead bytes from the line
 * start. Children of open arrays and objects are pushed on one shared growable stack and copied
 * into the arena when their container closes, so a container costs one arena copy however
 * deep the nesting. Every read checks the cursor against the end first.
 */
#include "models/core/arena.h"
#include "models/text/utf8.h"
#include "pipeline/json.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define JSON_BLOCK ((size_t)1 << 20) /* bytes per block of the document's arena */

struct gyro_json_doc {
    gyro_arena arena;      /* every node and string of the document (growing) */
    const gyro_json *root;
    char *name;
    const char *text;      /* the parsed text; valid only during parsing and for column lookups */
    size_t len;
    char *owned_text;      /* the file contents when the document read the file itself */
};

static void *arena_alloc(gyro_json_doc *d, size_t size) { return gyro_arena_alloc(&d->arena, size); }

/* ---- parser state ------------------------------------------------------------------------------ */

typedef struct child { const char *key; const gyro_json *value; } child;

typedef struct parser {
    gyro_json_doc *doc;
    const unsigned char *p, *end, *begin;
    uint32_t line;
    const unsigned char *line_start;
    int depth;
    child *stack;          /* (cap) children of the open containers */
    size_t top, cap;
} parser;

static uint32_t column_at(const unsigned char *line_start, const unsigned char *pos)
{
    uint32_t col = 1;
    for (const unsigned char *q = line_start; q < pos; q++)
        if ((*q & 0xC0) != 0x80) col++;
    return col;
}

static gyro_status fail_at(parser *ps, const unsigned char *pos, gyro_status st, const char *what)
{
    if (pos > ps->end) pos = ps->end;
    const char *found;
    char buf[32];
    if (pos >= ps->end) found = "end of input";
    else if (*pos >= 0x20 && *pos < 0x7F) { snprintf(buf, sizeof buf, "'%c'", *pos); found = buf; }
    else { snprintf(buf, sizeof buf, "byte 0x%02X", *pos); found = buf; }
    return gyro_error_set(st, "%s:%u:%u: %s (found %s)", ps->doc->name, ps->line,
                          column_at(ps->line_start, pos), what, found);
}

static void skip_ws(parser *ps)
{
    while (ps->p < ps->end) {
        unsigned char c = *ps->p;
        if (c == '\n') { ps->line++; ps->line_start = ++ps->p; }
        else if (c == ' ' || c == '\t' || c == '\r') ps->p++;
        else break;
    }
}

static gyro_json *new_node(parser *ps, gyro_json_type t, const unsigned char *start)
{
    gyro_json *v = arena_alloc(ps->doc, sizeof *v);
    if (!v) return NULL;
    memset(v, 0, sizeof *v);
    v->type = t;
    v->line = ps->line;
    v->offset = (size_t)(start - ps->begin);
    return v;
}

static gyro_status nomem(void) { return gyro_error_set(GYRO_ERR_NOMEM, "out of memory parsing JSON"); }

static int hex4(const unsigned char *p, const unsigned char *end, uint32_t *out)
{
    if (end - p < 4) return 0;
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        unsigned char c = p[i];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= (uint32_t)(c - '0');
        else if (c >= 'a' && c <= 'f') v |= (uint32_t)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v |= (uint32_t)(c - 'A' + 10);
        else return 0;
    }
    *out = v;
    return 1;
}

static char *put_utf8(char *o, uint32_t cp)
{
    if (cp < 0x80) *o++ = (char)cp;
    else if (cp < 0x800) { *o++ = (char)(0xC0 | (cp >> 6)); *o++ = (char)(0x80 | (cp & 0x3F)); }
    else if (cp < 0x10000) {
        *o++ = (char)(0xE0 | (cp >> 12));
        *o++ = (char)(0x80 | ((cp >> 6) & 0x3F));
        *o++ = (char)(0x80 | (cp & 0x3F));
    } else {
        *o++ = (char)(0xF0 | (cp >> 18));
        *o++ = (char)(0x80 | ((cp >> 12) & 0x3F));
        *o++ = (char)(0x80 | ((cp >> 6) & 0x3F));
        *o++ = (char)(0x80 | (cp & 0x3F));
    }
    return o;
}

/* Parse a string at ps->p (which is '"'); *out and *out_len receive the decoded arena copy. */
static gyro_status parse_string_raw(parser *ps, const char **out, size_t *out_len)
{
    const unsigned char *q = ps->p + 1;
    int escapes = 0;
    /* pass 1: find the closing quote, validating bytes */
    for (;;) {
        if (q >= ps->end) return fail_at(ps, q, GYRO_ERR_DATA, "unterminated string");
        unsigned char c = *q;
        if (c == '"') break;
        if (c < 0x20) return fail_at(ps, q, GYRO_ERR_DATA, "control character in string");
        if (c == '\\') {
            escapes = 1;
            if (q + 1 >= ps->end) return fail_at(ps, q + 1, GYRO_ERR_DATA, "unterminated string");
            q += 2;
            continue;
        }
        int32_t cp;
        size_t l = gyro_utf8_decode(q, (size_t)(ps->end - q), &cp);
        if (cp < 0) return fail_at(ps, q, GYRO_ERR_DATA, "invalid UTF-8 in string");
        q += l;
    }
    size_t raw = (size_t)(q - (ps->p + 1));
    char *dst = arena_alloc(ps->doc, raw + 1);
    if (!dst) return nomem();
    if (!escapes) {
        memcpy(dst, ps->p + 1, raw);
        dst[raw] = '\0';
        *out = dst;
        *out_len = raw;
        ps->p = q + 1;
        return GYRO_OK;
    }
    /* pass 2: decode escapes */
    char *o = dst;
    const unsigned char *r = ps->p + 1;
    while (r < q) {
        if (*r != '\\') { *o++ = (char)*r++; continue; }
        unsigned char e = r[1];
        switch (e) {
        case '"': *o++ = '"'; r += 2; break;
        case '\\': *o++ = '\\'; r += 2; break;
        case '/': *o++ = '/'; r += 2; break;
        case 'b': *o++ = '\b'; r += 2; break;
        case 'f': *o++ = '\f'; r += 2; break;
        case 'n': *o++ = '\n'; r += 2; break;
        case 'r': *o++ = '\r'; r += 2; break;
        case 't': *o++ = '\t'; r += 2; break;
        case 'u': {
            uint32_t cp, lo;
            if (!hex4(r + 2, q, &cp))
                return fail_at(ps, r, GYRO_ERR_DATA, "\\u must be followed by four hex digits");
            if (cp >= 0xDC00 && cp <= 0xDFFF)
                return fail_at(ps, r, GYRO_ERR_DATA, "unpaired low surrogate escape");
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                if (q - (r + 6) < 6 || r[6] != '\\' || r[7] != 'u' || !hex4(r + 8, q, &lo) ||
                    lo < 0xDC00 || lo > 0xDFFF)
                    return fail_at(ps, r, GYRO_ERR_DATA, "unpaired high surrogate escape");
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                r += 12;
            } else {
                r += 6;
            }
            o = put_utf8(o, cp);
            break;
        }
        default:
            return fail_at(ps, r, GYRO_ERR_DATA, "invalid escape in string");
        }
    }
    *o = '\0';
    *out = dst;
    *out_len = (size_t)(o - dst);
    ps->p = q + 1;
    return GYRO_OK;
}

static gyro_status parse_number(parser *ps, gyro_json **out)
{
    const unsigned char *s = ps->p, *q = s;
    if (q < ps->end && *q == '-') q++;
    if (q >= ps->end || *q < '0' || *q > '9')
        return fail_at(ps, q, GYRO_ERR_DATA, "expected a digit");
    if (*q == '0') {
        q++;
        if (q < ps->end && *q >= '0' && *q <= '9')
            return fail_at(ps, q, GYRO_ERR_DATA, "leading zero in number");
    } else {
        while (q < ps->end && *q >= '0' && *q <= '9') q++;
    }
    if (q < ps->end && *q == '.') {
        q++;
        if (q >= ps->end || *q < '0' || *q > '9')
            return fail_at(ps, q, GYRO_ERR_DATA, "expected a digit after '.'");
        while (q < ps->end && *q >= '0' && *q <= '9') q++;
    }
    if (q < ps->end && (*q == 'e' || *q == 'E')) {
        q++;
        if (q < ps->end && (*q == '+' || *q == '-')) q++;
        if (q >= ps->end || *q < '0' || *q > '9')
            return fail_at(ps, q, GYRO_ERR_DATA, "expected a digit in the exponent");
        while (q < ps->end && *q >= '0' && *q <= '9') q++;
    }
    size_t n = (size_t)(q - s);
    char small[128];
    char *buf = n < sizeof small ? small : malloc(n + 1);
    if (!buf) return nomem();
    memcpy(buf, s, n);
    buf[n] = '\0';
    errno = 0;
    double v = strtod(buf, NULL);
    int range = errno == ERANGE && isinf(v);
    if (buf != small) free(buf);
    if (range) return fail_at(ps, s, GYRO_ERR_DATA, "number out of range");
    gyro_json *node = new_node(ps, GYRO_JSON_NUMBER, s);
    if (!node) return nomem();
    node->u.number = v;
    ps->p = q;
    *out = node;
    return GYRO_OK;
}

static gyro_status push_child(parser *ps, const char *key, const gyro_json *v)
{
    if (ps->top == ps->cap) {
        size_t cap = ps->cap ? ps->cap * 2 : 256;
        child *s = realloc(ps->stack, cap * sizeof *s);
        if (!s) return nomem();
        ps->stack = s;
        ps->cap = cap;
    }
    ps->stack[ps->top].key = key;
    ps->stack[ps->top].value = v;
    ps->top++;
    return GYRO_OK;
}

/* Move the children above `base` into the container node (arena arrays). */
static gyro_status close_container(parser *ps, gyro_json *node, size_t base, int with_keys)
{
    size_t n = ps->top - base;
    node->u.c.n = n;
    if (n) {
        const gyro_json **items = arena_alloc(ps->doc, n * sizeof *items);
        if (!items) return nomem();
        const char **keys = NULL;
        if (with_keys) {
            keys = arena_alloc(ps->doc, n * sizeof *keys);
            if (!keys) return nomem();
        }
        for (size_t i = 0; i < n; i++) {
            items[i] = ps->stack[base + i].value;
            if (keys) keys[i] = ps->stack[base + i].key;
        }
        node->u.c.items = items;
        node->u.c.keys = keys;
    }
    ps->top = base;
    return GYRO_OK;
}

static gyro_status parse_value(parser *ps, gyro_json **out);

/* A member's key and its ':' (an object's member: a string key, ':' and a value). */
static gyro_status parse_key(parser *ps, const char **key)
{
    skip_ws(ps);
    if (ps->p >= ps->end || *ps->p != '"')
        return fail_at(ps, ps->p, GYRO_ERR_DATA, "expected a string as object key");
    size_t klen;
    gyro_status st = parse_string_raw(ps, key, &klen);
    if (st != GYRO_OK) return st;
    skip_ws(ps);
    if (ps->p >= ps->end || *ps->p != ':')
        return fail_at(ps, ps->p, GYRO_ERR_DATA, "expected ':' after an object key");
    ps->p++;
    return GYRO_OK;
}

/* The array or object opening at ps->p ('[' or '{'): its elements (members: key, ':' and value)
 * separated by ',', pushed on the stack up to the closing bracket, then gathered into the node. */
static gyro_status parse_container(parser *ps, gyro_json **out)
{
    const int object = *ps->p == '{';
    const char close = object ? '}' : ']';
    gyro_json *node = new_node(ps, object ? GYRO_JSON_OBJECT : GYRO_JSON_ARRAY, ps->p);
    if (!node) return nomem();
    size_t base = ps->top;
    ps->p++;
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == close) {
        ps->p++;
        *out = node;
        return GYRO_OK;
    }
    gyro_status st;
    for (;;) {
        const char *key = NULL;
        if (object && (st = parse_key(ps, &key)) != GYRO_OK) return st;
        gyro_json *v;
        if ((st = parse_value(ps, &v)) != GYRO_OK) return st;
        if ((st = push_child(ps, key, v)) != GYRO_OK) return st;
        skip_ws(ps);
        if (ps->p < ps->end && *ps->p == ',') { ps->p++; continue; }
        if (ps->p < ps->end && *ps->p == close) { ps->p++; break; }
        return fail_at(ps, ps->p, GYRO_ERR_DATA, object ? "expected ',' or '}' after an object member"
                                                        : "expected ',' or ']' after an array element");
    }
    if ((st = close_container(ps, node, base, object)) != GYRO_OK) return st;
    *out = node;
    return GYRO_OK;
}

static gyro_status parse_literal(parser *ps, const char *word, gyro_json_type t, gyro_json **out)
{
    size_t n = strlen(word);
    if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n) != 0)
        return fail_at(ps, ps->p, GYRO_ERR_DATA, "expected a JSON value");
    gyro_json *node = new_node(ps, t, ps->p);
    if (!node) return nomem();
    ps->p += n;
    *out = node;
    return GYRO_OK;
}

static gyro_status parse_value(parser *ps, gyro_json **out)
{
    skip_ws(ps);
    if (ps->p >= ps->end) return fail_at(ps, ps->p, GYRO_ERR_DATA, "expected a JSON value");
    gyro_status st;
    switch (*ps->p) {
    case '{':
    case '[':
        if (ps->depth >= GYRO_JSON_MAX_DEPTH)
            return fail_at(ps, ps->p, GYRO_ERR_LIMIT, "nesting deeper than the limit of 256");
        ps->depth++;
        st = parse_container(ps, out);
        ps->depth--;
        return st;
    case '"': {
        gyro_json *node = new_node(ps, GYRO_JSON_STRING, ps->p);
        if (!node) return nomem();
        st = parse_string_raw(ps, &node->u.s.str, &node->u.s.len);
        if (st != GYRO_OK) return st;
        *out = node;
        return GYRO_OK;
    }
    case 't': return parse_literal(ps, "true", GYRO_JSON_TRUE, out);
    case 'f': return parse_literal(ps, "false", GYRO_JSON_FALSE, out);
    case 'n': return parse_literal(ps, "null", GYRO_JSON_NULL, out);
    default:
        if (*ps->p == '-' || (*ps->p >= '0' && *ps->p <= '9')) return parse_number(ps, out);
        return fail_at(ps, ps->p, GYRO_ERR_DATA, "expected a JSON value");
    }
}

/* ---- public API ------------------------------------------------------------------------------- */

void gyro_json_doc_free(gyro_json_doc *d)
{
    if (!d) return;
    gyro_arena_free(&d->arena);
    free(d->owned_text);
    free(d->name);
    free(d);
}

gyro_status gyro_json_parse(const char *text, size_t len, const char *name, gyro_json_doc **out)
{
    if (!out || (!text && len > 0))
        return gyro_error_set(GYRO_ERR_USAGE, "gyro_json_parse: NULL argument");
    *out = NULL;
    gyro_json_doc *d = calloc(1, sizeof *d);
    if (!d) return nomem();
    gyro_arena_init_growing(&d->arena, JSON_BLOCK);
    d->name = strdup(name ? name : "-");
    if (!d->name) { free(d); return nomem(); }
    d->text = text;
    d->len = len;
    parser ps = {0};
    ps.doc = d;
    ps.begin = (const unsigned char *)(text ? text : "");
    ps.p = ps.begin;
    ps.end = ps.begin + len;
    ps.line = 1;
    ps.line_start = ps.p;
    if (len >= 3 && memcmp(ps.p, "\xEF\xBB\xBF", 3) == 0) ps.p += 3;
    gyro_json *root = NULL;
    gyro_status st = parse_value(&ps, &root);
    if (st == GYRO_OK) {
        skip_ws(&ps);
        if (ps.p < ps.end)
            st = fail_at(&ps, ps.p, GYRO_ERR_DATA, "unexpected data after the JSON value");
    }
    free(ps.stack);
    if (st != GYRO_OK) {
        gyro_json_doc_free(d);
        return st;
    }
    d->root = root;
    *out = d;
    return GYRO_OK;
}

gyro_status gyro_json_parse_file(const char *path, gyro_json_doc **out)
{
    if (!path || !out) return gyro_error_set(GYRO_ERR_USAGE, "gyro_json_parse_file: NULL argument");
    *out = NULL;
    int is_stdin = strcmp(path, "-") == 0;
    FILE *fp = is_stdin ? stdin : fopen(path, "rb");
    if (!fp) return gyro_error_set(GYRO_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    gyro_status st = GYRO_OK;
    if (!buf) st = nomem();
    while (st == GYRO_OK) {
        if (n == cap) {
            if (cap >= GYRO_JSON_MAX_FILE) {
                st = gyro_error_set(GYRO_ERR_LIMIT, "%s: larger than the JSON limit of %zu bytes",
                                    path, GYRO_JSON_MAX_FILE);
                break;
            }
            size_t ncap = cap * 2 > GYRO_JSON_MAX_FILE ? GYRO_JSON_MAX_FILE : cap * 2;
            if (ncap == cap) ncap = cap + 1;
            char *nb = realloc(buf, ncap);
            if (!nb) { st = nomem(); break; }
            buf = nb;
            cap = ncap;
        }
        size_t got = fread(buf + n, 1, cap - n, fp);
        n += got;
        if (got == 0) {
            if (ferror(fp)) st = gyro_error_set(GYRO_ERR_IO, "%s: read error: %s", path, strerror(errno));
            break;
        }
    }
    if (!is_stdin) fclose(fp);
    if (st != GYRO_OK) { free(buf); return st; }
    gyro_json_doc *d;
    st = gyro_json_parse(buf, n, path, &d);
    if (st != GYRO_OK) { free(buf); return st; }
    d->owned_text = buf;
    d->text = buf;
    *out = d;
    return GYRO_OK;
}

const gyro_json *gyro_json_root(const gyro_json_doc *d) { return d ? d->root : NULL; }

const char *gyro_json_name(const gyro_json_doc *d) { return d ? d->name : "-"; }

uint32_t gyro_json_column(const gyro_json_doc *d, const gyro_json *v)
{
    if (!d || !v || !d->text || v->offset > d->len) return 0;
    const unsigned char *t = (const unsigned char *)d->text, *pos = t + v->offset, *ls = pos;
    while (ls > t && ls[-1] != '\n') ls--;
    return column_at(ls, pos);
}

const gyro_json *gyro_json_get(const gyro_json *obj, const char *key)
{
    if (!obj || !key || obj->type != GYRO_JSON_OBJECT) return NULL;
    for (size_t i = 0; i < obj->u.c.n; i++)
        if (strcmp(obj->u.c.keys[i], key) == 0) return obj->u.c.items[i];
    return NULL;
}

size_t gyro_json_size(const gyro_json *v)
{
    if (!v || (v->type != GYRO_JSON_ARRAY && v->type != GYRO_JSON_OBJECT)) return 0;
    return v->u.c.n;
}

const gyro_json *gyro_json_at(const gyro_json *v, size_t i)
{
    return i < gyro_json_size(v) ? v->u.c.items[i] : NULL;
}

const char *gyro_json_key_at(const gyro_json *v, size_t i)
{
    if (!v || v->type != GYRO_JSON_OBJECT || i >= v->u.c.n) return NULL;
    return v->u.c.keys[i];
}

const char *gyro_json_string(const gyro_json *v)
{
    return (v && v->type == GYRO_JSON_STRING) ? v->u.s.str : NULL;
}

const char *gyro_json_type_name(gyro_json_type t)
{
    static const char *names[] = {"null", "false", "true", "number", "string", "array", "object"};
    return (unsigned)t < sizeof names / sizeof *names ? names[t] : "unknown";
}

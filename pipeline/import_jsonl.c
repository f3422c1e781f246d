/* import_jsonl.c — the JSON-lines importer (see import.h, format jsonl).
 *
 * Each non-blank line is parsed alone with the strict parser of json.h (so a bad line is one bad
 * record with its line number, and the file is read with the constant memory of the text
 * reader). The fields are named by options: text_field, label_field (several, separated by ',',
 * are joined by '.' into a hierarchical label, e.g. "domain,intent" gives "music.PLAY", and a
 * null or empty one among several is left out, so {"domain": "chat", "intent": null} is "chat"; a field
 * holding an array of strings is a composite, its elements joined by '+') and session_field. A
 * field name with dots is first looked up as one member, then as a path into nested objects.
 */
#include "pipeline/import_readers.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/json.h"
#include "pipeline/text_reader.h"

/* A growable string. */
typedef struct sbuf {
    char *s;
    size_t n, cap;
} sbuf;

static int sbuf_add(sbuf *b, const char *s, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        size_t cap = (b->n + n + 1) * 2;
        char *t = realloc(b->s, cap);
        if (!t) return -1;
        b->s = t;
        b->cap = cap;
    }
    memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = '\0';
    return 0;
}

/* The member `name` of obj: the member of that exact name, else the path of its '.'-separated
 * parts through nested objects. NULL when absent. */
static const gyro_json *field(const gyro_json *obj, const char *name, size_t len)
{
    char key[256];
    if (len >= sizeof key) return NULL;
    memcpy(key, name, len);
    key[len] = '\0';
    const gyro_json *v = gyro_json_get(obj, key);
    if (v || !memchr(key, '.', len)) return v;
    v = obj;
    for (char *p = key, *dot; v; p = dot + 1) {
        dot = strchr(p, '.');
        if (dot) *dot = '\0';
        v = gyro_json_get(v, p);
        if (!dot) break;
    }
    return v;
}

/* A scalar as label or session text into b: a string as is, a finite integral number in
 * decimal. Returns 0, or -1 with *why set when the value cannot be one (-2: out of memory). */
static int scalar(sbuf *b, const gyro_json *v, const char **why)
{
    if (v->type == GYRO_JSON_STRING) {
        if (strlen(v->u.s.str) != v->u.s.len) { *why = "a NUL character"; return -1; }
        return sbuf_add(b, v->u.s.str, v->u.s.len) ? -2 : 0;
    }
    if (v->type == GYRO_JSON_NUMBER && isfinite(v->u.number) && v->u.number == floor(v->u.number) &&
        fabs(v->u.number) < 1e15) {
        char num[32];
        int n = snprintf(num, sizeof num, "%.0f", v->u.number);
        return sbuf_add(b, num, (size_t)n) ? -2 : 0;
    }
    *why = v->type == GYRO_JSON_NUMBER ? "a number that is not an integer" : gyro_json_type_name(v->type);
    return -1;
}

gyro_status gyro_import_jsonl(gyro_import_ctx *c)
{
    const char *text_field = c->opt && c->opt->text_field ? c->opt->text_field : "text";
    const char *label_field = c->opt && c->opt->label_field ? c->opt->label_field : "label";
    const char *session_field = c->opt ? c->opt->session_field : NULL;
    int multi = strchr(label_field, ',') != NULL;
    gyro_text_reader_options ro = {.max_document = GYRO_IMPORT_MAX_LINE, .paragraphs = 0};
    gyro_text_reader *r;
    gyro_status st = c->fp ? gyro_text_reader_open_file(c->fp, c->path, &ro, &r)
                           : gyro_text_reader_open_path(c->path, &ro, &r);
    if (st != GYRO_OK) return st;
    sbuf label = {0}, session = {0};
    for (;;) {
        gyro_text_document doc;
        st = gyro_text_reader_next(r, &doc);
        if (st != GYRO_OK || !doc.data) break;
        if (doc.too_long) {
            st = gyro_import_bad(c, doc.line, "line longer than %zu bytes", GYRO_IMPORT_MAX_LINE);
            if (st != GYRO_OK) break;
            continue;
        }
        size_t i = 0;
        while (i < doc.len && (doc.data[i] == ' ' || doc.data[i] == '\t' || doc.data[i] == '\r')) i++;
        if (i == doc.len) {
            c->stats->blank++;
            continue;
        }
        gyro_json_doc *jd = NULL;
        st = gyro_json_parse(doc.data, doc.len, "", &jd);
        if (st == GYRO_ERR_NOMEM) break;
        if (st != GYRO_OK) {
            /* the parser says ":1:COL: what"; the line is ours */
            const char *m = gyro_error_message();
            const char *col = strchr(m + (*m == ':'), ':');
            st = gyro_import_bad(c, doc.line, "malformed JSON at column %s", col ? col + 1 : m);
            if (st != GYRO_OK) break;
            continue;
        }
        const gyro_json *root = gyro_json_root(jd);
        const char *why = NULL;
        label.n = session.n = 0;
        if (label.s) label.s[0] = '\0';
        if (root->type != GYRO_JSON_OBJECT) {
            st = gyro_import_bad(c, doc.line, "expected a JSON object, found %s",
                                 gyro_json_type_name(root->type));
            goto next;
        }
        const gyro_json *t = field(root, text_field, strlen(text_field));
        if (!t || t->type != GYRO_JSON_STRING) {
            st = gyro_import_bad(c, doc.line, "\"%s\" is %s, expected a string (--text-field)",
                                 text_field, t ? gyro_json_type_name(t->type) : "missing");
            goto next;
        }
        for (const char *p = label_field; *p && !why;) {
            const char *e = strchr(p, ',');
            size_t n = e ? (size_t)(e - p) : strlen(p);
            const gyro_json *v = field(root, p, n);
            if (multi && v && (v->type == GYRO_JSON_NULL ||
                               (v->type == GYRO_JSON_STRING && v->u.s.len == 0))) {
                p = e ? e + 1 : p + n;   /* SMP's "intent": null labels by the domain alone */
                continue;
            }
            if (label.n && sbuf_add(&label, ".", 1)) { st = GYRO_ERR_NOMEM; break; }
            if (!v) {
                why = "missing";
            } else if (v->type == GYRO_JSON_ARRAY) {
                if (gyro_json_size(v) == 0) why = "an empty array";
                for (size_t k = 0; k < gyro_json_size(v) && !why; k++) {
                    if (k && sbuf_add(&label, "+", 1)) { st = GYRO_ERR_NOMEM; break; }
                    int rc = scalar(&label, gyro_json_at(v, k), &why);
                    if (rc == -2) { st = GYRO_ERR_NOMEM; break; }
                }
            } else {
                int rc = scalar(&label, v, &why);
                if (rc == -2) { st = GYRO_ERR_NOMEM; break; }
            }
            if (why) {
                st = gyro_import_bad(c, doc.line, "label field \"%.*s\" is %s, expected a string, an "
                                     "integer or an array of strings (--label-field)", (int)n, p, why);
                goto next;
            }
            if (st != GYRO_OK) break;
            p = e ? e + 1 : p + n;
        }
        if (st == GYRO_ERR_NOMEM) {
            st = gyro_error_set(GYRO_ERR_NOMEM, "out of memory reading %s", c->path);
            goto next;
        }
        if (session_field) {
            const gyro_json *v = field(root, session_field, strlen(session_field));
            int rc = v ? scalar(&session, v, &why) : -1;
            if (!v) why = "missing";
            if (rc == -2) { st = gyro_error_set(GYRO_ERR_NOMEM, "out of memory reading %s", c->path); goto next; }
            if (rc) {
                st = gyro_import_bad(c, doc.line, "session field \"%s\" is %s, expected a string or "
                                     "an integer (--session-field)", session_field, why);
                goto next;
            }
        } else {
            char ls[32];
            int n = snprintf(ls, sizeof ls, "L%llu", (unsigned long long)doc.line);
            if (sbuf_add(&session, ls, (size_t)n)) { st = gyro_error_set(GYRO_ERR_NOMEM, "out of memory"); goto next; }
        }
        if (strlen(t->u.s.str) != t->u.s.len) {
            st = gyro_import_bad(c, doc.line, "NUL character in the text");
            goto next;
        }
        st = gyro_import_emit(c, t->u.s.str, t->u.s.len, label.s ? label.s : "", session.s, doc.line);
    next:
        gyro_json_doc_free(jd);
        if (st != GYRO_OK) break;
    }
    free(label.s);
    free(session.s);
    gyro_text_reader_free(r);
    return st;
}

/* import_record.c — the record checks shared by every importer (see import_record.h).
 *
 * gyro_import_emit is the single place where a record becomes an Example, so every format
 * applies the same rules to texts (trimmed, BOM dropped, non-empty, valid UTF-8, no NUL) and
 * labels (labels.h grammar; the Example keeps the trimmed label and its sorted atoms).
 */
#include "pipeline/import_record.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/text/labels.h"
#include "models/text/utf8.h"

gyro_status gyro_import_bad(gyro_import_ctx *c, uint64_t line, const char *fmt, ...)
{
    char what[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    char msg[1024];
    snprintf(msg, sizeof msg, "%s:%llu: %s", c->path, (unsigned long long)line, what);
    if (c->opt && c->opt->strict) return gyro_error_set(GYRO_ERR_DATA, "%s", msg);
    c->stats->bad++;
    if (c->opt && c->opt->warn) c->opt->warn(c->opt->warn_ctx, msg);
    return GYRO_OK;
}

static int is_ascii_space(unsigned char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n' || ch == '\v' || ch == '\f';
}

gyro_status gyro_import_emit(gyro_import_ctx *c, const char *text, size_t len, const char *label,
                             const char *session, uint64_t line)
{
    size_t b = 0, e = len;
    for (;;) {   /* whitespace and BOMs, in any order, at the start */
        if (b < e && is_ascii_space((unsigned char)text[b])) b++;
        else if (e - b >= 3 && memcmp(text + b, "\xEF\xBB\xBF", 3) == 0) b += 3;
        else break;
    }
    while (e > b && is_ascii_space((unsigned char)text[e - 1])) e--;
    if (b == e) return gyro_import_bad(c, line, "empty text");
    if (memchr(text + b, '\0', e - b)) return gyro_import_bad(c, line, "NUL byte in the text");
    size_t bad = gyro_utf8_find_invalid((const uint8_t *)text + b, e - b);
    if (bad < e - b)
        return gyro_import_bad(c, line, "invalid UTF-8 in the text at byte %zu (0x%02X)", bad,
                               (unsigned char)text[b + bad]);
    if (!label) return gyro_import_bad(c, line, "missing label");
    while (*label == ' ' || *label == '\t') label++;
    if (strncmp(label, "\xEF\xBB\xBF", 3) == 0) label += 3;   /* a BOM before the label field */
    if (session && gyro_utf8_find_invalid((const uint8_t *)session, strlen(session)) <
                       strlen(session))
        return gyro_import_bad(c, line, "invalid UTF-8 in the session id");
    gyro_label l;
    gyro_status st = gyro_label_parse(label, &l);
    if (st == GYRO_ERR_NOMEM) return st;
    if (st != GYRO_OK) {
        char why[512];
        snprintf(why, sizeof why, "%s", gyro_error_message());
        return gyro_import_bad(c, line, "bad label: %s", why);
    }
    if (e - b + 1 > c->text_cap) {
        size_t cap = (e - b + 1) * 2;
        char *t = realloc(c->text, cap);
        if (!t) {
            gyro_label_free(&l);
            return gyro_error_set(GYRO_ERR_NOMEM, "out of memory importing %s", c->path);
        }
        c->text = t;
        c->text_cap = cap;
    }
    memcpy(c->text, text + b, e - b);
    c->text[e - b] = '\0';

    Gyro__V1__Example ex = GYRO__V1__EXAMPLE__INIT;
    ex.text = c->text;
    ex.label = l.name;
    ex.n_labels = (size_t)l.n_atoms;
    ex.labels = l.atoms;
    ex.source = c->source;
    ex.session = (char *)(session ? session : "");
    ex.line = line;
    st = c->sink ? c->sink(c->sink_ctx, &ex) : GYRO_OK;
    if (st == GYRO_OK) {
        c->stats->examples++;
        if (l.n_atoms > 1) c->stats->composite++;
    }
    gyro_label_free(&l);
    return st;
}

/* import_lines.c — the line-based importers: plain TSV, NLPCC 2018 and fastText's `__label__`
 * lines (see import.h).
 *
 * Lines come from gyro_text_reader (constant memory, CRLF and a leading BOM handled there). Each
 * line is copied into one reusable buffer and split in place on tabs; the columns are then
 * handed to gyro_import_emit. NLPCC sessions are the first column; TSV sessions are the third
 * column when present, else the line number, so a TSV without sessions splits line by line.
 * A TSV header line names the columns ("text", "label", "session" in any order, e.g.
 * "label<TAB>text"), which sets their order for the rest of the file.
 *
 * fastText lines are split on spaces and tabs: tokens starting with "__label__" are labels
 * (joined by '+' into one composite label), the others are rejoined with single spaces as the
 * text. GYRO_IMPORT_LABELLED_TEXT picks fasttext or tsv from the first non-blank line and then
 * reads the whole file in that format.
 */
#include "pipeline/import_readers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pipeline/text_reader.h"

#define MAX_COLUMNS 8

static int blank_line(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r') return 0;
    return 1;
}

/* Split buf in place on tabs; returns the number of columns (up to MAX_COLUMNS + 1, meaning
 * "more than MAX_COLUMNS"). */
static int split_tabs(char *buf, char **col)
{
    int n = 0;
    char *p = buf;
    for (;;) {
        if (n == MAX_COLUMNS) return MAX_COLUMNS + 1;
        col[n++] = p;
        char *t = strchr(p, '\t');
        if (!t) return n;
        *t = '\0';
        p = t + 1;
    }
}

#define FT_PREFIX "__label__"
#define FT_PREFIX_LEN 9

/* fastText's line: the labels (prefix removed, joined by '+') into *label, the other tokens
 * joined by one space into *text; both point into buf, which is rewritten in place (the text
 * is moved left, the labels written into `lab`, of at least strlen(buf) + 1 bytes). Returns the
 * number of labels. */
static int split_fasttext(char *buf, char *lab, const char **text, const char **label)
{
    size_t w = 0, lw = 0;
    int nl = 0;
    char *p = buf;
    for (;;) {
        while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\v' || *p == '\f') p++;
        if (!*p) break;
        char *e = p;
        while (*e && *e != ' ' && *e != '\t' && *e != '\r' && *e != '\v' && *e != '\f') e++;
        size_t n = (size_t)(e - p);
        if (n >= FT_PREFIX_LEN && memcmp(p, FT_PREFIX, FT_PREFIX_LEN) == 0) {
            if (nl++) lab[lw++] = '+';
            memcpy(lab + lw, p + FT_PREFIX_LEN, n - FT_PREFIX_LEN);
            lw += n - FT_PREFIX_LEN;
        } else {
            if (w) buf[w++] = ' ';
            memmove(buf + w, p, n);
            w += n;
        }
        p = e;
    }
    buf[w] = '\0';
    lab[lw] = '\0';
    *text = buf;
    *label = lab;
    return nl;
}

/* 1 when the line (after a BOM and blanks) starts with fastText's label prefix. */
static int looks_fasttext(const char *s, size_t n)
{
    size_t i = 0;
    if (n >= 3 && memcmp(s, "\xEF\xBB\xBF", 3) == 0) i = 3;
    while (i < n && (s[i] == ' ' || s[i] == '\t')) i++;
    return n - i >= FT_PREFIX_LEN && memcmp(s + i, FT_PREFIX, FT_PREFIX_LEN) == 0;
}

/* Name the decided format in Example.source ("fasttext:<name>"). GYRO_ERR_NOMEM. */
static gyro_status set_source(gyro_import_ctx *c, gyro_import_format fmt)
{
    const char *base = strchr(c->source, ':');
    base = base ? base + 1 : c->source;
    /* (the names of import.c, not called: import.c calls this file) */
    const char *name = fmt == GYRO_IMPORT_FASTTEXT ? "fasttext" : "tsv";
    size_t n = strlen(name) + strlen(base) + 2;
    char *s = malloc(n);
    if (!s) return gyro_error_set(GYRO_ERR_NOMEM, "out of memory importing %s", c->path);
    snprintf(s, n, "%s:%s", name, base);
    free(c->source);
    c->source = s;
    c->fmt = fmt;
    return GYRO_OK;
}

/* The columns a TSV header names: col_of[0..2] = the column of text, label, session (a header
 * without "session" leaves it the third column, as without a header).
 * Returns 1 when the n columns are a header (text and label present, every name known, none
 * repeated), else 0. */
static int tsv_header(char **col, int n, int col_of[3])
{
    static const char *const names[3] = {"text", "label", "session"};
    col_of[0] = col_of[1] = col_of[2] = -1;
    for (int i = 0; i < n; i++) {
        const char *v = col[i];
        while (*v == ' ' || *v == '\r') v++;
        if (!strncmp(v, "\xEF\xBB\xBF", 3)) v += 3;
        size_t len = strlen(v);
        while (len && (v[len - 1] == ' ' || v[len - 1] == '\r')) len--;
        int k = -1;
        for (int j = 0; j < 3; j++)
            if (len == strlen(names[j]) && strncasecmp(v, names[j], len) == 0) k = j;
        if (k < 0 || col_of[k] >= 0) return 0;
        col_of[k] = i;
    }
    if (col_of[2] < 0) col_of[2] = 2;   /* a two-column header: the session may still follow */
    return col_of[0] >= 0 && col_of[1] >= 0;
}

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\r') s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\r')) s[--n] = '\0';
    return s;
}

gyro_status gyro_import_lines(gyro_import_ctx *c)
{
    gyro_text_reader_options ro = {.max_document = GYRO_IMPORT_MAX_LINE, .paragraphs = 0};
    gyro_text_reader *r;
    gyro_status st = c->fp ? gyro_text_reader_open_file(c->fp, c->path, &ro, &r)
                           : gyro_text_reader_open_path(c->path, &ro, &r);
    if (st != GYRO_OK) return st;
    int nlpcc = c->fmt == GYRO_IMPORT_NLPCC;
    char *buf = NULL, *lab = NULL;
    size_t cap = 0;
    int col_of[3] = {0, 1, 2};   /* tsv: the columns of text, label, session */
    int seen_nonblank = 0;
    for (;;) {
        gyro_text_document doc;
        st = gyro_text_reader_next(r, &doc);
        if (st != GYRO_OK || !doc.data) break;
        if (doc.too_long) {
            st = gyro_import_bad(c, doc.line, "line longer than %zu bytes", GYRO_IMPORT_MAX_LINE);
            if (st != GYRO_OK) break;
            continue;
        }
        if (blank_line(doc.data, doc.len)) {
            c->stats->blank++;
            continue;
        }
        int first = !seen_nonblank;
        seen_nonblank = 1;
        if (first && c->fmt == GYRO_IMPORT_LABELLED_TEXT &&
            (st = set_source(c, looks_fasttext(doc.data, doc.len) ? GYRO_IMPORT_FASTTEXT
                                                                   : GYRO_IMPORT_TSV)) != GYRO_OK)
            break;
        if (memchr(doc.data, '\0', doc.len)) {
            st = gyro_import_bad(c, doc.line, "NUL byte in the line");
            if (st != GYRO_OK) break;
            continue;
        }
        if (doc.len + 1 > cap) {
            size_t ncap = (doc.len + 1) * 2;
            char *nb = realloc(buf, ncap), *nl = nb ? realloc(lab, ncap) : NULL;
            if (nb) buf = nb;
            if (nl) lab = nl;
            if (!nb || !nl) { st = gyro_error_set(GYRO_ERR_NOMEM, "out of memory reading %s", c->path); break; }
            cap = ncap;
        }
        memcpy(buf, doc.data, doc.len);
        buf[doc.len] = '\0';
        if (c->fmt == GYRO_IMPORT_FASTTEXT) {
            const char *text, *label;
            char line_session[32];
            if (split_fasttext(buf, lab, &text, &label) == 0) {
                st = gyro_import_bad(c, doc.line, "no __label__ token (fastText lines are "
                                     "'__label__<label> <text>')");
                if (st != GYRO_OK) break;
                continue;
            }
            snprintf(line_session, sizeof line_session, "L%llu", (unsigned long long)doc.line);
            st = gyro_import_emit(c, text, strlen(text), label, line_session, doc.line);
            if (st != GYRO_OK) break;
            continue;
        }
        char *col[MAX_COLUMNS] = {0};
        int n = split_tabs(buf, col);
        char line_session[32];
        const char *text, *label, *session;
        if (nlpcc) {
            if (n != 3 && n != 4) {
                st = gyro_import_bad(c, doc.line, "expected 4 tab-separated columns (session, "
                                     "utterance, label, tagged utterance), found %s%d",
                                     n > MAX_COLUMNS ? "more than " : "",
                                     n > MAX_COLUMNS ? MAX_COLUMNS : n);
                if (st != GYRO_OK) break;
                continue;
            }
            session = trim(col[0]);
            text = col[1];
            label = col[2];
            if (!*session) {
                st = gyro_import_bad(c, doc.line, "empty session id");
                if (st != GYRO_OK) break;
                continue;
            }
        } else {
            if (n != 2 && n != 3) {
                st = gyro_import_bad(c, doc.line, "expected 2 or 3 tab-separated columns (text, "
                                     "label[, session]), found %s%d",
                                     n > MAX_COLUMNS ? "more than " : "",
                                     n > MAX_COLUMNS ? MAX_COLUMNS : n);
                if (st != GYRO_OK) break;
                continue;
            }
            int hdr[3];
            if (first && tsv_header(col, n, hdr)) {
                memcpy(col_of, hdr, sizeof hdr);
                c->stats->ignored++;   /* header line */
                continue;
            }
            if (col_of[0] >= n || col_of[1] >= n) {
                st = gyro_import_bad(c, doc.line, "expected the %s column (column %d of the header), "
                                     "found %d columns", col_of[0] >= n ? "text" : "label",
                                     (col_of[0] >= n ? col_of[0] : col_of[1]) + 1, n);
                if (st != GYRO_OK) break;
                continue;
            }
            text = col[col_of[0]];
            label = col[col_of[1]];
            if (col_of[2] >= 0 && col_of[2] < n && *trim(col[col_of[2]])) {
                session = trim(col[col_of[2]]);
            } else {
                snprintf(line_session, sizeof line_session, "L%llu", (unsigned long long)doc.line);
                session = line_session;
            }
        }
        st = gyro_import_emit(c, text, strlen(text), label, session, doc.line);
        if (st != GYRO_OK) break;
    }
    free(buf);
    free(lab);
    gyro_text_reader_free(r);
    return st;
}

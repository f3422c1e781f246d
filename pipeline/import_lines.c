/* import_lines.c — the line-based importers: plain TSV and NLPCC 2018 (see import.h).
 *
 * Lines come from gyro_text_reader (constant memory, CRLF and a leading BOM handled there). Each
 * line is copied into one reusable buffer and split in place on tabs; the columns are then
 * handed to gyro_import_emit. NLPCC sessions are the first column; TSV sessions are the third
 * column when present, else the line number, so a TSV without sessions splits line by line.
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
    gyro_status st = gyro_text_reader_open_path(c->path, &ro, &r);
    if (st != GYRO_OK) return st;
    int nlpcc = c->fmt == GYRO_IMPORT_NLPCC;
    char *buf = NULL;
    size_t cap = 0;
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
        if (memchr(doc.data, '\0', doc.len)) {
            st = gyro_import_bad(c, doc.line, "NUL byte in the line");
            if (st != GYRO_OK) break;
            continue;
        }
        if (doc.len + 1 > cap) {
            size_t ncap = (doc.len + 1) * 2;
            char *nb = realloc(buf, ncap);
            if (!nb) { st = gyro_error_set(GYRO_ERR_NOMEM, "out of memory reading %s", c->path); break; }
            buf = nb;
            cap = ncap;
        }
        memcpy(buf, doc.data, doc.len);
        buf[doc.len] = '\0';
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
            if (first && strcasecmp(trim(col[0]), "text") == 0 &&
                strcasecmp(trim(col[1]), "label") == 0 &&
                (n == 2 || strcasecmp(trim(col[2]), "session") == 0)) {
                c->stats->ignored++;   /* header line */
                continue;
            }
            text = col[0];
            label = col[1];
            if (n == 3 && *trim(col[2])) {
                session = trim(col[2]);
            } else {
                snprintf(line_session, sizeof line_session, "L%llu", (unsigned long long)doc.line);
                session = line_session;
            }
        }
        st = gyro_import_emit(c, text, strlen(text), label, session, doc.line);
        if (st != GYRO_OK) break;
    }
    free(buf);
    gyro_text_reader_free(r);
    return st;
}

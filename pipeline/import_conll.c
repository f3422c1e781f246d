/* import_conll.c — the CoNLL-style importer: one token per line with a BIO tag, a blank line
 * between sentences, the intents in a second file or on the last line of each sentence (see
 * import.h, format conll). CAIS ships exactly this: ch.train (`char tag`) beside
 * ch.train.intent (one intent per line).
 *
 * Both files are read line by line with the text reader (constant memory). A sentence is
 * collected token by token; at its blank line (or the end of the file) the next non-blank line
 * of the intent file is taken as its label, so a bad sentence still consumes its intent and the
 * two files never go out of step. Counts that differ at the end are an error whatever the mode:
 * the files do not belong together.
 */
#include "pipeline/import_readers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/text_reader.h"

#define MAX_FIELDS 16

static int is_blank(int ch) { return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\v' || ch == '\f'; }

static int ascii_alnum(unsigned char ch)
{
    return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
}

/* Split `s` (n bytes) into whitespace-separated fields: starts and lengths. Returns the count,
 * MAX_FIELDS + 1 for more. */
static int split_fields(const char *s, size_t n, const char **f, size_t *len)
{
    int k = 0;
    size_t i = 0;
    for (;;) {
        while (i < n && is_blank((unsigned char)s[i])) i++;
        if (i == n) return k;
        if (k == MAX_FIELDS) return MAX_FIELDS + 1;
        size_t b = i;
        while (i < n && !is_blank((unsigned char)s[i])) i++;
        f[k] = s + b;
        len[k++] = i - b;
    }
}

/* A tag of the BIO/BIOES schemes: "O", or one of B I E S (also lower case) then '-' or '_' and a
 * non-empty type. Returns 'O', 'B', 'I', 'E', 'S', or 0 when not a tag. */
static char tag_kind(const char *t, size_t n)
{
    if (n == 1 && (t[0] == 'O' || t[0] == 'o')) return 'O';
    if (n < 3 || (t[1] != '-' && t[1] != '_')) return 0;
    switch (t[0]) {
    case 'B': case 'b': return 'B';
    case 'I': case 'i': return 'I';
    case 'E': case 'e': return 'E';
    case 'S': case 's': return 'S';
    default: return 0;
    }
}

typedef struct sentence {
    char *text;          /* (cap) the tokens joined */
    size_t n, cap;
    uint64_t line;       /* where it starts; 0 = no sentence open */
    uint64_t slots;      /* B- and S- tags */
    size_t last_len;     /* bytes of the last token */
    char *intent;        /* (icap) the in-file intent line, if any */
    size_t icap;
    int has_intent;
    int bad;             /* a bad line was reported: the sentence is skipped */
} sentence;

static int grow(char **s, size_t *cap, size_t need)
{
    if (need <= *cap) return 0;
    size_t c = need * 2;
    char *t = realloc(*s, c);
    if (!t) return -1;
    *s = t;
    *cap = c;
    return 0;
}

/* The next non-blank line of the intent file into *out (owned by the reader), NULL at its end. */
static gyro_status next_intent(gyro_text_reader *ir, const char **out, size_t *len, uint64_t *line)
{
    *out = NULL;
    for (;;) {
        gyro_text_document d;
        gyro_status st = gyro_text_reader_next(ir, &d);
        if (st != GYRO_OK || !d.data) return st;
        size_t b = 0, e = d.len;
        while (b < e && is_blank((unsigned char)d.data[b])) b++;
        while (e > b && is_blank((unsigned char)d.data[e - 1])) e--;
        if (b == e) continue;
        *out = d.data + b;
        *len = e - b;
        *line = d.line;
        return GYRO_OK;
    }
}

/* End of a sentence: take its intent and emit it (unless it is bad). */
static gyro_status finish(gyro_import_ctx *c, sentence *s, gyro_text_reader *ir, uint64_t index,
                          uint64_t *missing)
{
    const char *label = NULL;
    size_t llen = 0;
    uint64_t iline = 0;
    gyro_status st = GYRO_OK;
    char *lab = NULL;
    if (ir) {
        if ((st = next_intent(ir, &label, &llen, &iline)) != GYRO_OK) return st;
        if (!label) {
            (*missing)++;
            s->bad = 1;   /* nothing to emit; the counts are compared at the end */
        }
    } else if (s->has_intent) {
        label = s->intent;
        llen = strlen(s->intent);
    }
    if (!s->bad) {
        if (!label) {
            st = gyro_import_bad(c, s->line, "sentence %llu has no intent (give the intent file, or "
                                 "end each sentence with a line holding its intent)",
                                 (unsigned long long)index);
        } else if (!(lab = malloc(llen + 1))) {
            st = gyro_error_set(GYRO_ERR_NOMEM, "out of memory reading %s", c->path);
        } else {
            memcpy(lab, label, llen);
            lab[llen] = '\0';
            char session[32];
            snprintf(session, sizeof session, "s%llu", (unsigned long long)index);
            st = gyro_import_emit(c, s->text ? s->text : "", s->n, lab, session, s->line);
            if (st == GYRO_OK) c->stats->slots += s->slots;
        }
    }
    free(lab);
    s->n = 0;
    s->last_len = 0;
    s->line = 0;
    s->slots = 0;
    s->has_intent = 0;
    s->bad = 0;
    return st;
}

gyro_status gyro_import_conll(gyro_import_ctx *c)
{
    const char *ipath = c->opt ? c->opt->intent_path : NULL;
    gyro_text_reader_options ro = {.max_document = GYRO_IMPORT_MAX_LINE, .paragraphs = 0};
    gyro_text_reader *r = NULL, *ir = NULL;
    gyro_status st = gyro_text_reader_open_path(c->path, &ro, &r);
    if (st != GYRO_OK) return st;
    if (ipath && (st = gyro_text_reader_open_path(ipath, &ro, &ir)) != GYRO_OK) {
        gyro_text_reader_free(r);
        return st;
    }
    sentence s = {0};
    uint64_t sentences = 0, missing = 0;
    for (;;) {
        gyro_text_document d;
        if ((st = gyro_text_reader_next(r, &d)) != GYRO_OK) break;
        const char *f[MAX_FIELDS];
        size_t fl[MAX_FIELDS];
        int nf = d.data ? split_fields(d.data, d.len, f, fl) : 0;
        if (!d.data || nf == 0) {   /* end of file or a blank line: the sentence ends */
            if (s.line) {
                sentences++;
                if ((st = finish(c, &s, ir, sentences, &missing)) != GYRO_OK) break;
            } else if (d.data) {
                c->stats->blank++;
            }
            if (!d.data) break;
            continue;
        }
        if (!s.line) s.line = d.line;
        if (s.bad) continue;
        if (d.too_long) {
            st = gyro_import_bad(c, d.line, "line longer than %zu bytes", GYRO_IMPORT_MAX_LINE);
            s.bad = 1;
        } else if (memchr(d.data, '\0', d.len)) {
            st = gyro_import_bad(c, d.line, "NUL byte in the line");
            s.bad = 1;
        } else if (s.has_intent) {
            st = gyro_import_bad(c, d.line, "a token after the intent line of the sentence at line %llu",
                                 (unsigned long long)s.line);
            s.bad = 1;
        } else if (nf == 1 && !ir && s.n > 0) {
            /* the intent line that ends a sentence (no intent file) */
            if (grow(&s.intent, &s.icap, fl[0] + 1)) { st = gyro_error_set(GYRO_ERR_NOMEM, "out of memory"); break; }
            memcpy(s.intent, f[0], fl[0]);
            s.intent[fl[0]] = '\0';
            s.has_intent = 1;
        } else if (nf == 1 || nf > MAX_FIELDS) {
            st = gyro_import_bad(c, d.line, "expected a token and its tag, found %s%d field%s",
                                 nf > MAX_FIELDS ? "more than " : "", nf > MAX_FIELDS ? MAX_FIELDS : nf,
                                 nf == 1 ? "" : "s");
            s.bad = 1;
        } else {
            const char *tag = f[nf - 1];
            size_t tl = fl[nf - 1];
            char k = tag_kind(tag, tl);
            if (!k) {
                st = gyro_import_bad(c, d.line, "'%.*s' is not a BIO tag (O, B-type, I-type; E-, S-)",
                                     (int)(tl > 64 ? 64 : tl), tag);
                s.bad = 1;
            } else {
                if (k == 'B' || k == 'S') s.slots++;
                /* words of a word-level file are spaced; characters of a character-level one
                 * (CAIS spells "mp3" as three tokens) are not */
                int space = s.n > 0 && ascii_alnum((unsigned char)s.text[s.n - 1]) &&
                            ascii_alnum((unsigned char)f[0][0]) && (fl[0] > 1 || s.last_len > 1);
                s.last_len = fl[0];
                if (s.n + fl[0] + 2 > GYRO_IMPORT_MAX_LINE) {
                    st = gyro_import_bad(c, d.line, "sentence longer than %zu bytes", GYRO_IMPORT_MAX_LINE);
                    s.bad = 1;
                } else if (grow(&s.text, &s.cap, s.n + fl[0] + 2)) {
                    st = gyro_error_set(GYRO_ERR_NOMEM, "out of memory reading %s", c->path);
                    break;
                } else {
                    if (space) s.text[s.n++] = ' ';
                    memcpy(s.text + s.n, f[0], fl[0]);
                    s.n += fl[0];
                    s.text[s.n] = '\0';
                }
            }
        }
        if (st != GYRO_OK) break;
    }
    if (st == GYRO_OK && ir) {
        const char *extra;
        size_t el;
        uint64_t eline;
        uint64_t more = 0;
        while ((st = next_intent(ir, &extra, &el, &eline)) == GYRO_OK && extra) more++;
        if (st == GYRO_OK && (more || missing))
            st = gyro_error_set(GYRO_ERR_DATA, "%s has %llu sentences but %s has %llu intents: the "
                                "files do not belong together", c->path,
                                (unsigned long long)sentences, ipath,
                                (unsigned long long)(sentences - missing + more));
    }
    free(s.text);
    free(s.intent);
    gyro_text_reader_free(r);
    gyro_text_reader_free(ir);
    return st;
}

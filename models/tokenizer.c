/* tokenizer.c — the classifiers' tokenizer (tokenizer.h). */
#include "models/tokenizer.h"

#include <stdlib.h>
#include <string.h>

#include <unicode/ubrk.h>
#include <unicode/utext.h>

/* 1 when s is empty or only ASCII spaces. */
static int is_blank(const char *s)
{
    for (; *s; s++)
        if (*s != ' ') return 0;
    return 1;
}

/* Words: ICU's word break iterator (dictionary-based for Han) over the normalized UTF-8 text
 * through a UText, so boundaries are byte offsets. Normalized text has no whitespace other
 * than single ASCII spaces, so dropping all-space segments removes every separator. */
struct gyro_tokenizer {
    gyro_normalizer *norm;
    int unit;
    UBreakIterator *brk;          /* words only */
    char *buf;                    /* word bytes, NUL-separated */
    size_t buf_cap;
    char **tok;                   /* (tok_cap) */
    size_t tok_cap;
};

gyro_status gyro_tokenizer_new(const gyro_normalize_options *norm, gyro_token_unit unit,
                               gyro_tokenizer **out)
{
    if (out) *out = NULL;
    if (!out || (unit != GYRO_TOKEN_CHARS && unit != GYRO_TOKEN_WORDS))
        return gyro_error_set(GYRO_ERR_USAGE, "tokenizer: bad argument");
    gyro_tokenizer *t = calloc(1, sizeof *t);
    if (!t) return gyro_error_set(GYRO_ERR_NOMEM, "tokenizer");
    t->unit = (int)unit;
    gyro_status st = gyro_normalizer_new(norm, &t->norm);
    if (!st && unit == GYRO_TOKEN_WORDS) {
        UErrorCode e = U_ZERO_ERROR;
        t->brk = ubrk_open(UBRK_WORD, "zh", NULL, 0, &e);
        if (U_FAILURE(e)) st = gyro_error_set(GYRO_ERR_UNAVAILABLE, "ICU word break iterator: %s", u_errorName(e));
    }
    if (st) { gyro_tokenizer_free(t); return st; }
    *out = t;
    return GYRO_OK;
}

void gyro_tokenizer_free(gyro_tokenizer *t)
{
    if (!t) return;
    gyro_normalizer_free(t->norm);
    if (t->brk) ubrk_close(t->brk);
    free(t->buf);
    free(t->tok);
    free(t);
}

gyro_status gyro_tokenizer_run(gyro_tokenizer *t, const char *text, size_t len,
                               char *const **tokens, size_t *n_tokens, const char **normalized)
{
    gyro_normalized r;
    gyro_status st = gyro_normalize_text(t->norm, text, len, &r);
    if (st) return st;
    *normalized = r.text;
    if (t->unit == GYRO_TOKEN_CHARS) {
        *tokens = r.chars;
        *n_tokens = r.n_chars;
        return GYRO_OK;
    }
    /* at most one word per byte, and the bytes plus one NUL per word */
    if (r.text_len + 1 > t->tok_cap) {
        size_t cap = 2 * (r.text_len + 1);
        char **p = realloc(t->tok, cap * sizeof *p);
        if (!p) return gyro_error_set(GYRO_ERR_NOMEM, "tokenizer");
        t->tok = p;
        t->tok_cap = cap;
    }
    if (2 * r.text_len + 1 > t->buf_cap) {
        size_t cap = 2 * (2 * r.text_len + 1);
        char *p = realloc(t->buf, cap);
        if (!p) return gyro_error_set(GYRO_ERR_NOMEM, "tokenizer");
        t->buf = p;
        t->buf_cap = cap;
    }
    UErrorCode e = U_ZERO_ERROR;
    UText *ut = utext_openUTF8(NULL, r.text, (int64_t)r.text_len, &e);
    if (!U_FAILURE(e)) ubrk_setUText(t->brk, ut, &e);
    if (U_FAILURE(e)) {
        utext_close(ut);
        return gyro_error_set(GYRO_ERR_INTERNAL, "ICU word break: %s", u_errorName(e));
    }
    size_t n = 0, off = 0;
    int32_t prev = ubrk_first(t->brk);
    for (int32_t b = ubrk_next(t->brk); b != UBRK_DONE; prev = b, b = ubrk_next(t->brk)) {
        size_t l = (size_t)(b - prev);
        if (b <= prev || (size_t)b > r.text_len) continue;
        memcpy(t->buf + off, r.text + prev, l);
        t->buf[off + l] = '\0';
        if (is_blank(t->buf + off)) continue;
        t->tok[n++] = t->buf + off;
        off += l + 1;
    }
    utext_close(ut);
    static const UChar empty[1] = {0};
    e = U_ZERO_ERROR;
    ubrk_setText(t->brk, empty, 0, &e); /* drop the reference to the closed UText */
    *tokens = t->tok;
    *n_tokens = n;
    return GYRO_OK;
}


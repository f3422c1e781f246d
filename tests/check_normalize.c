/* check_normalize.c — Check suite for pipeline/utf8, pipeline/text_reader, pipeline/normalize
 * and pipeline/normalize_stage: NFKC, T2S (incl. its trigger-run shortcut against plain utrans on
 * real Traditional text), ANSI escapes, controls, whitespace, case folding, grapheme clusters
 * (against a plain ICU break iterator), every invalid-UTF-8 policy, empty input, a 10 MB line,
 * CRLF, BOM, paragraphs, the maximum length, the stage's counts and messages, and normalizers
 * used from several threads. */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unicode/ubrk.h>
#include <unicode/ustring.h>
#include <unicode/utrans.h>
#include <utf8proc.h>

#include "models/text/normalize.h"
#include "pipeline/normalize_stage.h"
#include "pipeline/text_reader.h"
#include "models/text/utf8.h"

/* Normalize `in` with default options (or `opt`) and return a copy of the text. */
static char *norm(const gyro_normalize_options *opt, const char *in, size_t len, gyro_normalized *res)
{
    gyro_normalizer *n;
    ck_assert_int_eq(gyro_normalizer_new(opt, &n), GYRO_OK);
    gyro_normalized r;
    ck_assert_int_eq(gyro_normalize_text(n, in, len, &r), GYRO_OK);
    char *text = strdup(r.text);
    if (res) {
        *res = r;
        res->text = res->original = NULL;
        res->chars = NULL;
    }
    gyro_normalizer_free(n);
    return text;
}

static void expect(const char *in, const char *want)
{
    char *got = norm(NULL, in, strlen(in), NULL);
    ck_assert_msg(strcmp(got, want) == 0, "normalize(\"%s\") = \"%s\", want \"%s\"", in, got, want);
    free(got);
}

/* ---- utf8 -------------------------------------------------------------------------------- */

START_TEST(test_utf8_decoder)
{
    struct { const char *s; size_t len; int32_t cp; size_t used; } cases[] = {
        {"A", 1, 'A', 1},
        {"\xC3\xA9", 2, 0xE9, 2},
        {"\xE5\xAD\xA6", 3, 0x5B66, 3},
        {"\xF0\x9F\x91\x8D", 4, 0x1F44D, 4},
        {"\xC0\x80", 2, -1, 1},            /* overlong lead */
        {"\xE0\x80\x80", 3, -1, 1},        /* overlong: E0 needs A0..BF */
        {"\xED\xA0\x80", 3, -1, 1},        /* surrogate */
        {"\xF4\x90\x80\x80", 4, -1, 1},    /* above U+10FFFF */
        {"\xF0\x9F\x98", 3, -1, 3},        /* truncated: maximal subpart is 3 bytes */
        {"\xE5\xAD", 2, -1, 2},
        {"\xE5\x41", 2, -1, 1},
        {"\x80", 1, -1, 1},
        {"\xFF", 1, -1, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int32_t cp;
        size_t used = gyro_utf8_decode((const uint8_t *)cases[i].s, cases[i].len, &cp);
        ck_assert_msg(cp == cases[i].cp && used == cases[i].used, "case %zu: cp %d used %zu", i, cp, used);
    }
    char buf[4];
    ck_assert_uint_eq(gyro_utf8_encode(buf, 0xD800), 0);
    ck_assert_uint_eq(gyro_utf8_encode(buf, 0x110000), 0);
    ck_assert_uint_eq(gyro_utf8_encode(buf, 0x1F44D), 4);
    ck_assert_uint_eq(gyro_utf8_find_invalid((const uint8_t *)"ab\xE5\xAD\xA6\xFF", 6), 5);
    ck_assert_uint_eq(gyro_utf8_find_invalid((const uint8_t *)"ab", 2), 2);
}
END_TEST

/* ---- normalization steps ------------------------------------------------------------------ */

START_TEST(test_nfkc_t2s)
{
    expect("ＡＢＣ１２３", "ABC123");
    expect("學生", "学生");
    expect("微波爐", "微波炉");
    expect("學生ＡＢＣ", "学生ABC");
    expect("頭髮很長", "头发很长");       /* a phrase rule */
    expect("简体字不变", "简体字不变");
    expect("ｶﾀｶﾅ", "カタカナ");
    gyro_normalize_options o;
    gyro_normalize_options_init(&o);
    o.t2s = 0;
    char *t = norm(&o, "學生", strlen("學生"), NULL);
    ck_assert_str_eq(t, "學生");
    free(t);
    o.t2s = 1;
    o.nfkc = 0;
    t = norm(&o, "ＡＢＣ", strlen("ＡＢＣ"), NULL);
    ck_assert_str_eq(t, "ＡＢＣ");
    free(t);
}
END_TEST

START_TEST(test_ansi_controls_whitespace)
{
    expect("\x1b[1;33m彩色\x1b[0m", "彩色");
    expect("a\x1b]0;window title\x07z", "az");
    expect("a\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\z", "alinkz");
    expect("a\x1b" "cz", "az");
    expect("end\x1b", "end");
    expect("a\xC2\x9B" "31mz", "az");               /* C1 CSI */
    expect("a\x01" "b\x7f" "c", "abc");
    expect("  a \t b\xE3\x80\x80" "c\r  ", "a b c");
    expect("a\xEF\xBB\xBF" "b", "ab");               /* stray BOM / ZWNBSP */
    expect("a\xE2\x80\xA8" "b", "a b");             /* LINE SEPARATOR is whitespace */
    expect("很难避免\n的人", "很难避免的人");       /* wrapped Chinese joins without a space */
    expect("很难避免 \r\n 的人。\n下一行", "很难避免的人。下一行");
    expect("在 Debian 中", "在 Debian 中");          /* typed spaces stay */
    expect("abc\ndef", "abc def");
    expect("中\nabc", "中 abc");
    /* a NUL byte is a control character */
    char *t = norm(NULL, "a\0b", 3, NULL);
    ck_assert_str_eq(t, "ab");
    free(t);
    gyro_normalize_options o;
    gyro_normalize_options_init(&o);
    o.case_fold = 1;
    t = norm(&o, "ÀBC Straße", strlen("ÀBC Straße"), NULL);
    ck_assert_str_eq(t, "àbc strasse");
    free(t);
}
END_TEST

START_TEST(test_graphemes)
{
    gyro_normalizer *n;
    ck_assert_int_eq(gyro_normalizer_new(NULL, &n), GYRO_OK);
    struct { const char *in; size_t n; const char *first; } cases[] = {
        {"e\xCC\x81", 1, "\xC3\xA9"},                      /* composed by NFKC */
        {"q\xCC\x81", 1, "q\xCC\x81"},                     /* no precomposed form: one cluster */
        {"\xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD", 1, NULL},      /* thumbs up + skin tone */
        {"\xE2\x9D\xA4\xEF\xB8\x8F", 1, NULL},              /* heart + VS16 */
        {"\xF0\x9F\x91\xA8\xE2\x80\x8D\xF0\x9F\x91\xA9\xE2\x80\x8D\xF0\x9F\x91\xA7", 1, NULL}, /* ZWJ family */
        {"\xF0\x9F\x87\xA8\xF0\x9F\x87\xB3\xF0\x9F\x87\xBA\xF0\x9F\x87\xB8", 2, NULL},         /* two flags */
        {"学生ABC", 5, "学"},
        {"a b", 3, "a"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gyro_normalized r;
        ck_assert_int_eq(gyro_normalize_text(n, cases[i].in, strlen(cases[i].in), &r), GYRO_OK);
        ck_assert_msg(r.n_chars == cases[i].n, "case %zu: %zu clusters", i, r.n_chars);
        if (cases[i].first) ck_assert_str_eq(r.chars[0], cases[i].first);
        /* clusters concatenate back to the text */
        size_t total = 0;
        for (size_t k = 0; k < r.n_chars; k++) total += strlen(r.chars[k]);
        ck_assert_uint_eq(total, r.text_len);
    }
    gyro_normalizer_free(n);
}
END_TEST

/* Clusters of `text` by a plain ICU character break iterator, as "|"-joined string. */
static char *icu_clusters(const char *text, size_t len)
{
    UErrorCode st = U_ZERO_ERROR;
    UBreakIterator *bi = ubrk_open(UBRK_CHARACTER, "", NULL, 0, &st);
    UText ut = UTEXT_INITIALIZER;
    utext_openUTF8(&ut, text, (int64_t)len, &st);
    ubrk_setUText(bi, &ut, &st);
    ck_assert(U_SUCCESS(st));
    char *out = malloc(2 * len + 2);
    size_t o = 0;
    int32_t prev = ubrk_first(bi);
    for (int32_t b = ubrk_next(bi); b != UBRK_DONE; b = ubrk_next(bi)) {
        memcpy(out + o, text + prev, (size_t)(b - prev));
        o += (size_t)(b - prev);
        out[o++] = '|';
        prev = b;
    }
    out[o] = '\0';
    utext_close(&ut);
    ubrk_close(bi);
    return out;
}

START_TEST(test_graphemes_match_icu)
{
    /* random mixes of simple characters and characters that bind to their neighbours */
    static const char *palette[] = {
        "a", "Z", "1", " ", "学", "生", "。", "「", "e", "\xCC\x81" /* U+0301 */,
        "\xE2\x80\x8D" /* ZWJ */, "\xEF\xB8\x8F" /* VS16 */, "\xF0\x9F\x91\x8D", "\xF0\x9F\x8F\xBD",
        "\xF0\x9F\x87\xA8" /* RI */, "\xE0\xA4\x95" /* DEVANAGARI KA */, "\xE0\xA4\xBF" /* SpacingMark */,
        "\xD8\x80" /* U+0600 Prepend */, "\xE1\x84\x80" /* Hangul L */, "\xE1\x85\xA1" /* V */,
        "\xE3\x80\xAA" /* U+302A tone mark (Extend) */, "\xE2\x9D\xA4", "\xE3\x80\xB0" /* wavy dash */,
    };
    size_t np = sizeof palette / sizeof palette[0];
    gyro_normalize_options o;
    gyro_normalize_options_init(&o);
    o.nfkc = 0;
    o.t2s = 0;
    gyro_normalizer *n;
    ck_assert_int_eq(gyro_normalizer_new(&o, &n), GYRO_OK);
    unsigned seed = 7;
    char in[512];
    for (int round = 0; round < 3000; round++) {
        size_t len = 0;
        int k = 1 + round % 24;
        for (int j = 0; j < k; j++) {
            seed = seed * 1103515245u + 12345u;
            const char *p = palette[(seed >> 16) % np];
            memcpy(in + len, p, strlen(p));
            len += strlen(p);
        }
        gyro_normalized r;
        ck_assert_int_eq(gyro_normalize_text(n, in, len, &r), GYRO_OK);
        char *want = icu_clusters(r.text, r.text_len);
        char *got = malloc(2 * r.text_len + 2);
        size_t g = 0;
        for (size_t c = 0; c < r.n_chars; c++) {
            size_t l = strlen(r.chars[c]);
            memcpy(got + g, r.chars[c], l);
            g += l;
            got[g++] = '|';
        }
        got[g] = '\0';
        ck_assert_msg(strcmp(got, want) == 0, "round %d: got %s want %s", round, got, want);
        free(want);
        free(got);
    }
    gyro_normalizer_free(n);
}
END_TEST

/* Plain utrans over a whole NFC UTF-8 string. */
static char *utrans_whole(UTransliterator *t, const char *s, size_t len)
{
    UErrorCode st = U_ZERO_ERROR;
    int32_t cap = (int32_t)(4 * len + 64), ulen;
    UChar *u = malloc((size_t)cap * sizeof(UChar));
    u_strFromUTF8(u, cap, &ulen, s, (int32_t)len, &st);
    int32_t limit = ulen;
    utrans_transUChars(t, u, &ulen, cap, 0, &limit, &st);
    ck_assert(U_SUCCESS(st));
    char *out = malloc((size_t)ulen * 3 + 1);
    int32_t olen;
    u_strToUTF8(out, ulen * 3 + 1, &olen, u, ulen, &st);
    free(u);
    return out;
}

START_TEST(test_t2s_runs_match_utrans)
{
    /* Real Traditional and mixed text (Tang poems, Tatoeba) if the shared corpora are here, and
     * a built-in sample with phrase rules, each line compared with plain utrans over the line. */
    const char *paths[] = {"../shared/corpora/text/chinese-poetry/全唐诗/poet.tang.0.json",
                           "../shared/corpora/text/chinese-poetry/全唐诗/poet.tang.30000.json",
                           "../shared/corpora/text/tatoeba/cmn.txt", NULL};
    const char *sample = "於是乾隆頭髮發展，後來裡面的麵條很乾，鬆了一口氣。甚麼？瞭解了。餘額不足。"
                         "生薑和于飛，在於乾淨，生活在於。";
    gyro_normalize_options o;
    gyro_normalize_options_init(&o);
    o.nfkc = 0;
    o.strip_controls = 0;
    o.fold_whitespace = 0;
    o.strip_ansi = 0;
    o.segment = 0;
    gyro_normalizer *n;
    ck_assert_int_eq(gyro_normalizer_new(&o, &n), GYRO_OK);
    UChar id[32];
    UParseError pe;
    UErrorCode st = U_ZERO_ERROR;
    u_uastrcpy(id, "Traditional-Simplified");
    UTransliterator *t = utrans_openU(id, -1, UTRANS_FORWARD, NULL, 0, &pe, &st);
    ck_assert(U_SUCCESS(st));
    static char line[1 << 16];
    int lines = 0, changed = 0;
    for (int f = -1; f < 0 || paths[f]; f++) {
        FILE *fp = f >= 0 ? fopen(paths[f], "rb") : NULL;
        if (f >= 0 && !fp) continue;
        for (int k = 0; k < 8000; k++) {
            const char *s;
            if (f < 0) {
                if (k) break;
                s = sample;
            } else {
                if (!fgets(line, sizeof line, fp)) break;
                s = line;
            }
            size_t len = strlen(s);
            gyro_normalized r;
            ck_assert_int_eq(gyro_normalize_text(n, s, len, &r), GYRO_OK);
            char *want = utrans_whole(t, s, len);
            ck_assert_msg(strcmp(r.text, want) == 0, "line %d differs:\n%s\n%s", lines + 1, r.text, want);
            changed += strcmp(want, s) != 0;
            free(want);
            lines++;
        }
        if (fp) fclose(fp);
    }
    ck_assert_int_gt(changed, 0);
    utrans_close(t);
    gyro_normalizer_free(n);
}
END_TEST

/* ---- invalid UTF-8 ------------------------------------------------------------------------ */

START_TEST(test_invalid_policies)
{
    const char *in = "學生\xFF" "ab\xE0\x80" "c\xF0\x9F\x98";
    gyro_normalizer *n;
    gyro_normalized r;
    gyro_normalize_options o;
    gyro_normalize_options_init(&o);

    ck_assert_int_eq(gyro_normalizer_new(&o, &n), GYRO_OK);
    ck_assert_int_eq(gyro_normalize_text(n, in, strlen(in), &r), GYRO_OK);
    ck_assert_str_eq(r.text, "学生\xEF\xBF\xBD" "ab\xEF\xBF\xBD\xEF\xBF\xBD" "c\xEF\xBF\xBD");
    ck_assert_str_eq(r.original, "學生\xEF\xBF\xBD" "ab\xEF\xBF\xBD\xEF\xBF\xBD" "c\xEF\xBF\xBD");
    ck_assert_uint_eq(r.repairs, 4);
    ck_assert_int_eq(r.skipped, 0);
    gyro_normalizer_free(n);

    o.invalid = GYRO_INVALID_SKIP;
    ck_assert_int_eq(gyro_normalizer_new(&o, &n), GYRO_OK);
    ck_assert_int_eq(gyro_normalize_text(n, in, strlen(in), &r), GYRO_OK);
    ck_assert_int_eq(r.skipped, 1);
    ck_assert_str_eq(r.text, "");
    ck_assert_uint_eq(r.n_chars, 0);
    /* a valid text after a skipped one is normal again */
    ck_assert_int_eq(gyro_normalize_text(n, "ok", 2, &r), GYRO_OK);
    ck_assert_int_eq(r.skipped, 0);
    ck_assert_str_eq(r.text, "ok");
    gyro_normalizer_free(n);

    o.invalid = GYRO_INVALID_FAIL;
    ck_assert_int_eq(gyro_normalizer_new(&o, &n), GYRO_OK);
    ck_assert_int_eq(gyro_normalize_text(n, in, strlen(in), &r), GYRO_ERR_DATA);
    ck_assert_str_eq(gyro_error_message(), "invalid UTF-8 byte 0xFF at byte 6");
    gyro_normalizer_free(n);

    gyro_invalid_policy p;
    ck_assert_int_eq(gyro_invalid_policy_parse("skip", &p), 0);
    ck_assert_int_eq(p, GYRO_INVALID_SKIP);
    ck_assert_int_eq(gyro_invalid_policy_parse("bogus", &p), -1);
    ck_assert_str_eq(gyro_invalid_policy_name(GYRO_INVALID_FAIL), "fail");
    o.invalid = (gyro_invalid_policy)9;
    ck_assert_int_eq(gyro_normalizer_new(&o, &n), GYRO_ERR_USAGE);
}
END_TEST

START_TEST(test_empty_and_null)
{
    gyro_normalized r;
    char *t = norm(NULL, NULL, 0, &r);
    ck_assert_str_eq(t, "");
    ck_assert_uint_eq(r.n_chars, 0);
    free(t);
    t = norm(NULL, " \t\x1b[0m ", 7, &r);
    ck_assert_str_eq(t, "");
    free(t);
    gyro_normalizer *n;
    ck_assert_int_eq(gyro_normalizer_new(NULL, &n), GYRO_OK);
    ck_assert_int_eq(gyro_normalize_text(n, NULL, 3, &r), GYRO_ERR_USAGE);
    gyro_normalizer_free(n);
    gyro_normalizer_free(NULL);
}
END_TEST

/* ---- text reader -------------------------------------------------------------------------- */

static gyro_text_reader *reader_on(const char *data, size_t len, size_t max, int paragraphs, FILE **fp)
{
    *fp = fmemopen((void *)data, len, "rb");
    ck_assert_ptr_nonnull(*fp);
    gyro_text_reader_options o = {max, paragraphs};
    gyro_text_reader *r;
    ck_assert_int_eq(gyro_text_reader_open_file(*fp, "mem.txt", &o, &r), GYRO_OK);
    return r;
}

START_TEST(test_reader_bom_crlf_paragraphs)
{
    static const char data[] = "\xEF\xBB\xBF" "first\r\nsecond\r\n\r\nlast";
    FILE *fp;
    gyro_text_reader *r = reader_on(data, sizeof data - 1, 0, 0, &fp);
    gyro_text_document d;
    const char *want[] = {"first", "second", "", "last"};
    for (int i = 0; i < 4; i++) {
        ck_assert_int_eq(gyro_text_reader_next(r, &d), GYRO_OK);
        ck_assert_ptr_nonnull(d.data);
        ck_assert_str_eq(d.data, want[i]);
        ck_assert_uint_eq(d.line, (uint64_t)i + 1);
    }
    ck_assert_int_eq(gyro_text_reader_next(r, &d), GYRO_OK);
    ck_assert_ptr_null(d.data);
    ck_assert_uint_eq(gyro_text_reader_lines(r), 4);
    ck_assert_uint_eq(gyro_text_reader_bytes(r), sizeof data - 1);
    gyro_text_reader_free(r);
    fclose(fp);

    static const char para[] = "\n\na\nb\n \t\n\nc\r\nd\n\n";
    r = reader_on(para, sizeof para - 1, 0, 1, &fp);
    ck_assert_int_eq(gyro_text_reader_next(r, &d), GYRO_OK);
    ck_assert_str_eq(d.data, "a\nb");
    ck_assert_uint_eq(d.line, 3);
    ck_assert_int_eq(gyro_text_reader_next(r, &d), GYRO_OK);
    ck_assert_str_eq(d.data, "c\nd");
    ck_assert_uint_eq(d.line, 7);
    ck_assert_int_eq(gyro_text_reader_next(r, &d), GYRO_OK);
    ck_assert_ptr_null(d.data);
    gyro_text_reader_free(r);
    fclose(fp);

    /* NUL bytes inside a line survive the reader */
    static const char nul[] = "a\0b\nc";
    r = reader_on(nul, sizeof nul - 1, 0, 0, &fp);
    ck_assert_int_eq(gyro_text_reader_next(r, &d), GYRO_OK);
    ck_assert_uint_eq(d.len, 3);
    ck_assert_int_eq(memcmp(d.data, "a\0b", 3), 0);
    gyro_text_reader_free(r);
    fclose(fp);
}
END_TEST

START_TEST(test_reader_max_length)
{
    static const char data[] = "short\n0123456789abcdefghij\nok\n";
    FILE *fp;
    gyro_text_reader *r = reader_on(data, sizeof data - 1, 10, 0, &fp);
    gyro_text_document d;
    ck_assert_int_eq(gyro_text_reader_next(r, &d), GYRO_OK);
    ck_assert_int_eq(d.too_long, 0);
    ck_assert_int_eq(gyro_text_reader_next(r, &d), GYRO_OK);
    ck_assert_int_eq(d.too_long, 1);
    ck_assert_uint_eq(d.len, 10);
    ck_assert_uint_eq(d.line, 2);
    ck_assert_int_eq(gyro_text_reader_next(r, &d), GYRO_OK);
    ck_assert_int_eq(d.too_long, 0);
    ck_assert_str_eq(d.data, "ok");
    ck_assert_uint_eq(d.line, 3);
    gyro_text_reader_free(r);
    fclose(fp);

    /* a paragraph of exactly the maximum is not too long; one more line makes it so */
    static const char para[] = "01234\n6789\n\nab\n";
    r = reader_on(para, sizeof para - 1, 10, 1, &fp);
    ck_assert_int_eq(gyro_text_reader_next(r, &d), GYRO_OK);
    ck_assert_int_eq(d.too_long, 0);
    ck_assert_str_eq(d.data, "01234\n6789");
    ck_assert_int_eq(gyro_text_reader_next(r, &d), GYRO_OK);
    ck_assert_str_eq(d.data, "ab");
    gyro_text_reader_free(r);
    fclose(fp);
    static const char para2[] = "01234\n6789\nx\n\nab\n";
    r = reader_on(para2, sizeof para2 - 1, 10, 1, &fp);
    ck_assert_int_eq(gyro_text_reader_next(r, &d), GYRO_OK);
    ck_assert_int_eq(d.too_long, 1);
    ck_assert_int_eq(gyro_text_reader_next(r, &d), GYRO_OK);
    ck_assert_str_eq(d.data, "ab");
    ck_assert_uint_eq(d.line, 5);
    gyro_text_reader_free(r);
    fclose(fp);
}
END_TEST

START_TEST(test_ten_megabyte_line)
{
    /* 10 MB of mixed Traditional Chinese, ASCII and full-width text on one line, through the
     * reader and the normalizer */
    const char *unit = "學生們在圖書館讀書 ＡＢＣ abc ";
    size_t ul = strlen(unit), len = 0, units = 0;
    size_t target = 10u << 20;
    char *big = malloc(target + ul + 2);
    while (len + ul <= target) {
        memcpy(big + len, unit, ul);
        len += ul;
        units++;
    }
    big[len++] = '\n';
    FILE *fp;
    gyro_text_reader *r = reader_on(big, len, 0, 0, &fp);
    gyro_text_document d;
    ck_assert_int_eq(gyro_text_reader_next(r, &d), GYRO_OK);
    ck_assert_int_eq(d.too_long, 0);
    ck_assert_uint_eq(d.len, len - 1);
    gyro_normalizer *n;
    ck_assert_int_eq(gyro_normalizer_new(NULL, &n), GYRO_OK);
    gyro_normalized res;
    ck_assert_int_eq(gyro_normalize_text(n, d.data, d.len, &res), GYRO_OK);
    const char *want_unit = "学生们在图书馆读书 ABC abc ";
    ck_assert_int_eq(strncmp(res.text, want_unit, strlen(want_unit)), 0);
    ck_assert_uint_eq(res.text_len, units * strlen(want_unit) - 1); /* trailing space trimmed */
    ck_assert_uint_eq(res.n_chars, units * 18 - 1);
    ck_assert_str_eq(res.chars[res.n_chars - 1], "c");
    gyro_normalizer_free(n);
    gyro_text_reader_free(r);
    fclose(fp);
    free(big);
}
END_TEST

/* ---- the stage ---------------------------------------------------------------------------- */

static int warnings;
static void count_warning(void *ctx, const char *msg)
{
    (void)ctx;
    ck_assert_ptr_nonnull(strstr(msg, "mem.txt:"));
    warnings++;
}

START_TEST(test_stage_counts_and_errors)
{
    static const char data[] = "學生\n\xFF\n\n  \nok\n0123456789abcdefghijklmnop\n";
    gyro_normalize_options o;
    gyro_normalize_options_init(&o);
    o.invalid = GYRO_INVALID_SKIP;
    gyro_normalizer *n;
    ck_assert_int_eq(gyro_normalizer_new(&o, &n), GYRO_OK);
    FILE *fp;
    gyro_text_reader *r = reader_on(data, sizeof data - 1, 16, 0, &fp);
    char *out = NULL;
    size_t out_len = 0;
    FILE *text = open_memstream(&out, &out_len);
    gyro_normalize_stats st;
    memset(&st, 0, sizeof st);
    gyro_normalize_stage_options so;
    memset(&so, 0, sizeof so);
    so.warn = count_warning;
    warnings = 0;
    uint64_t id = 1;
    ck_assert_int_eq(gyro_normalize_stage_run(n, r, NULL, text, &so, &st, &id), GYRO_OK);
    fclose(text);
    ck_assert_str_eq(out, "学生\nok\n");
    ck_assert_uint_eq(st.lines, 6);
    ck_assert_uint_eq(st.documents, 2);
    ck_assert_uint_eq(st.skipped, 2);
    ck_assert_uint_eq(st.too_long, 1);
    ck_assert_uint_eq(st.empty, 2);
    ck_assert_uint_eq(st.repaired, 0);
    ck_assert_int_eq(warnings, 2);
    ck_assert_uint_eq(id, 3);
    char summary[256];
    gyro_normalize_stats_format(&st, summary, sizeof summary);
    ck_assert_str_eq(summary, "6 lines read, 2 documents written, 0 repaired, 2 skipped (1 too long), 2 empty");
    free(out);
    gyro_text_reader_free(r);
    fclose(fp);
    gyro_normalizer_free(n);

    /* fail: the message names file, line, byte of the line and byte of the input */
    o.invalid = GYRO_INVALID_FAIL;
    ck_assert_int_eq(gyro_normalizer_new(&o, &n), GYRO_OK);
    r = reader_on(data, sizeof data - 1, 0, 0, &fp);
    text = open_memstream(&out, &out_len);
    memset(&st, 0, sizeof st);
    ck_assert_int_eq(gyro_normalize_stage_run(n, r, NULL, text, NULL, &st, &id), GYRO_ERR_DATA);
    ck_assert_str_eq(gyro_error_message(),
                     "mem.txt:2: invalid UTF-8 byte 0xFF at byte 0 of the line (byte 7 of the input)");
    fclose(text);
    free(out);
    gyro_text_reader_free(r);
    fclose(fp);
    gyro_normalizer_free(n);
}
END_TEST

START_TEST(test_stage_documents_in_stream)
{
    static const char data[] = "學生ＡＢＣ\xFF\n\nx\n";
    gyro_normalizer *n;
    ck_assert_int_eq(gyro_normalizer_new(NULL, &n), GYRO_OK);
    FILE *fp;
    gyro_text_reader *r = reader_on(data, sizeof data - 1, 0, 0, &fp);
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    gyro_stream_writer *w;
    ck_assert_int_eq(gyro_stream_writer_open_file(mem, &gyro__v1__document__descriptor, "t", &w), GYRO_OK);
    gyro_normalize_stats st;
    memset(&st, 0, sizeof st);
    gyro_normalize_stage_options so;
    memset(&so, 0, sizeof so);
    so.keep_empty = 1;
    uint64_t id = 1;
    ck_assert_int_eq(gyro_normalize_stage_run(n, r, w, NULL, &so, &st, &id), GYRO_OK);
    ck_assert_int_eq(gyro_stream_writer_close(w), GYRO_OK);
    fclose(mem);
    ck_assert_uint_eq(st.documents, 3);
    ck_assert_uint_eq(st.repaired, 1);

    FILE *in = fmemopen(buf, len, "rb");
    gyro_stream_reader *sr;
    ck_assert_int_eq(gyro_stream_reader_open_file(in, "mem", NULL, &sr), GYRO_OK);
    ProtobufCMessage *m;
    ck_assert_int_eq(gyro_stream_next(sr, &gyro__v1__document__descriptor, &m), GYRO_OK);
    Gyro__V1__Document *d = (Gyro__V1__Document *)m;
    ck_assert_str_eq(d->text, "学生ABC\xEF\xBF\xBD");
    ck_assert_str_eq(d->original, "學生ＡＢＣ\xEF\xBF\xBD");
    ck_assert_str_eq(d->source, "mem.txt");
    ck_assert_uint_eq(d->id, 1);
    ck_assert_uint_eq(d->line, 1);
    ck_assert_uint_eq(d->repairs, 1);
    ck_assert_uint_eq(d->n_chars, 6);
    ck_assert_str_eq(d->chars[0], "学");
    protobuf_c_message_free_unpacked(m, NULL);
    ck_assert_int_eq(gyro_stream_next(sr, &gyro__v1__document__descriptor, &m), GYRO_OK);
    d = (Gyro__V1__Document *)m;
    ck_assert_str_eq(d->text, "");
    ck_assert_uint_eq(d->line, 2);
    protobuf_c_message_free_unpacked(m, NULL);
    ck_assert_int_eq(gyro_stream_next(sr, &gyro__v1__document__descriptor, &m), GYRO_OK);
    d = (Gyro__V1__Document *)m;
    ck_assert_uint_eq(d->id, 3);
    ck_assert_uint_eq(d->line, 3);
    protobuf_c_message_free_unpacked(m, NULL);
    ck_assert_int_eq(gyro_stream_next(sr, &gyro__v1__document__descriptor, &m), GYRO_OK);
    ck_assert_ptr_null(m);
    gyro_stream_reader_free(sr);
    fclose(in);
    free(buf);
    gyro_text_reader_free(r);
    fclose(fp);
    gyro_normalizer_free(n);
}
END_TEST

/* ---- threads ------------------------------------------------------------------------------ */

static void *thread_main(void *arg)
{
    int *ok = arg;
    gyro_normalizer *n;
    if (gyro_normalizer_new(NULL, &n)) return NULL;
    *ok = 1;
    for (int i = 0; i < 2000; i++) {
        gyro_normalized r;
        const char *in = (i & 1) ? "微波爐 學生ＡＢＣ 👍🏽" : "頭髮很長 e\xCC\x81";
        const char *want = (i & 1) ? "微波炉 学生ABC 👍🏽" : "头发很长 \xC3\xA9";
        if (gyro_normalize_text(n, in, strlen(in), &r) || strcmp(r.text, want) != 0) *ok = 0;
    }
    gyro_normalizer_free(n);
    return NULL;
}

START_TEST(test_one_normalizer_per_thread)
{
    pthread_t t[4];
    int ok[4] = {0, 0, 0, 0};
    for (int i = 0; i < 4; i++) ck_assert_int_eq(pthread_create(&t[i], NULL, thread_main, &ok[i]), 0);
    for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
    for (int i = 0; i < 4; i++) ck_assert_int_eq(ok[i], 1);
}
END_TEST


START_TEST(test_random_input_never_fails)
{
    /* random code points of every plane and random bytes: GYRO_OK, valid UTF-8 out, clusters
     * that concatenate back to the text */
    gyro_normalizer *n;
    ck_assert_int_eq(gyro_normalizer_new(NULL, &n), GYRO_OK);
    char in[1024];
    unsigned seed = 4242;
    for (int round = 0; round < 2000; round++) {
        size_t len = 0;
        int bytes = round % 2;
        while (len < 200) {
            seed = seed * 1103515245u + 12345u;
            if (bytes) {
                in[len++] = (char)(seed >> 16);
                continue;
            }
            int32_t cp = (int32_t)((seed >> 8) % 0x110000);
            if ((seed & 3) == 0) cp = 0x3000 + (int32_t)((seed >> 8) % 0x7000);  /* CJK-heavy */
            size_t w = gyro_utf8_encode(in + len, cp);
            len += w;
        }
        gyro_normalized r;
        ck_assert_int_eq(gyro_normalize_text(n, in, len, &r), GYRO_OK);
        ck_assert_uint_eq(gyro_utf8_find_invalid((const uint8_t *)r.text, r.text_len), r.text_len);
        ck_assert_uint_eq(strlen(r.text), r.text_len);
        size_t total = 0;
        for (size_t k = 0; k < r.n_chars; k++) total += strlen(r.chars[k]);
        ck_assert_uint_eq(total, r.text_len);
    }
    gyro_normalizer_free(n);
}
END_TEST


START_TEST(test_nfkc_matches_utf8proc)
{
    /* every line of real text (and a few made-up ones), with and without case folding, equals
     * utf8proc's own NFKC / NFKC + case folding: covers the shortcut for NFKC-stable lines */
    const char *paths[] = {"../shared/corpora/text/reviews/online_shopping_10_cats.csv",
                           "../shared/corpora/text/tatoeba/cmn.txt",
                           "../shared/corpora/text/chinese-poetry/全唐诗/poet.tang.0.json", NULL};
    const char *samples[] = {"ABC abc 学生。、", "ＡＢＣ", "e\xCC\x81", "Straße ÀÉ", "学\xCC\x81", "ﬁ ㍻ ①"};
    static char line[1 << 16];
    int lines = 0;
    for (int fold = 0; fold < 2; fold++) {
        gyro_normalize_options o;
        gyro_normalize_options_init(&o);
        o.t2s = 0;
        o.strip_ansi = 0;
        o.strip_controls = 0;
        o.fold_whitespace = 0;
        o.segment = 0;
        o.case_fold = fold;
        gyro_normalizer *n;
        ck_assert_int_eq(gyro_normalizer_new(&o, &n), GYRO_OK);
        utf8proc_option_t uo = UTF8PROC_STABLE | UTF8PROC_COMPOSE | UTF8PROC_COMPAT |
                               (fold ? UTF8PROC_CASEFOLD : 0);
        for (int f = -1; f < 0 || paths[f]; f++) {
            FILE *fp = f >= 0 ? fopen(paths[f], "rb") : NULL;
            if (f >= 0 && !fp) continue;
            for (int k = 0; k < 6000; k++) {
                const char *in;
                if (f < 0) {
                    if (k >= (int)(sizeof samples / sizeof samples[0])) break;
                    in = samples[k];
                } else {
                    if (!fgets(line, sizeof line, fp)) break;
                    line[strcspn(line, "\r\n")] = '\0';
                    in = line;
                }
                size_t len = strlen(in);
                if (gyro_utf8_find_invalid((const uint8_t *)in, len) != len) continue;
                gyro_normalized r;
                ck_assert_int_eq(gyro_normalize_text(n, in, len, &r), GYRO_OK);
                utf8proc_uint8_t *want = NULL;
                ck_assert_int_ge(utf8proc_map((const utf8proc_uint8_t *)in, (utf8proc_ssize_t)len, &want, uo), 0);
                ck_assert_msg(strcmp(r.text, (const char *)want) == 0, "fold %d, line %d:\n%s\n%s",
                              fold, k + 1, r.text, want);
                free(want);
                lines++;
            }
            if (fp) fclose(fp);
        }
        gyro_normalizer_free(n);
    }
    ck_assert_int_gt(lines, 10);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("normalize");
    TCase *tc = tcase_create("normalize");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_utf8_decoder);
    tcase_add_test(tc, test_nfkc_t2s);
    tcase_add_test(tc, test_ansi_controls_whitespace);
    tcase_add_test(tc, test_graphemes);
    tcase_add_test(tc, test_graphemes_match_icu);
    tcase_add_test(tc, test_t2s_runs_match_utrans);
    tcase_add_test(tc, test_invalid_policies);
    tcase_add_test(tc, test_empty_and_null);
    tcase_add_test(tc, test_reader_bom_crlf_paragraphs);
    tcase_add_test(tc, test_reader_max_length);
    tcase_add_test(tc, test_ten_megabyte_line);
    tcase_add_test(tc, test_stage_counts_and_errors);
    tcase_add_test(tc, test_stage_documents_in_stream);
    tcase_add_test(tc, test_one_normalizer_per_thread);
    tcase_add_test(tc, test_random_input_never_fails);
    tcase_add_test(tc, test_nfkc_matches_utf8proc);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

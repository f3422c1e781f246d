/* check_json.c — Check suite for pipeline/json: the values and escapes of RFC 8259, positions,
 * strictness (every malformed form rejected with line and column), depth limit, and a
 * deterministic mutation fuzz that must never crash (run under the sanitizer build). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "models/core/rng.h"
#include "pipeline/json.h"

static gyro_json_doc *parse_ok(const char *text)
{
    gyro_json_doc *d = NULL;
    gyro_status st = gyro_json_parse(text, strlen(text), "t.json", &d);
    ck_assert_msg(st == GYRO_OK, "'%s': %s", text, gyro_error_message());
    ck_assert_ptr_nonnull(d);
    return d;
}

static void parse_bad(const char *text, size_t len, gyro_status want, const char *where)
{
    gyro_json_doc *d = (gyro_json_doc *)1;
    gyro_error_clear();
    gyro_status st = gyro_json_parse(text, len, "t.json", &d);
    ck_assert_msg(st == want, "'%.*s': got %d want %d (%s)", (int)len, text, st, want,
                  gyro_error_message());
    ck_assert_ptr_null(d);
    if (where)
        ck_assert_msg(strstr(gyro_error_message(), where) != NULL, "'%.*s': message '%s' lacks '%s'",
                      (int)len, text, gyro_error_message(), where);
}

START_TEST(test_values)
{
    gyro_json_doc *d = parse_ok(" {\"a\": [1, -2.5e3, 0, true, false, null, \"x\"], \"b\": {}, \"c\": []} ");
    const gyro_json *r = gyro_json_root(d);
    ck_assert_int_eq(r->type, GYRO_JSON_OBJECT);
    ck_assert_uint_eq(gyro_json_size(r), 3);
    ck_assert_str_eq(gyro_json_key_at(r, 1), "b");
    const gyro_json *a = gyro_json_get(r, "a");
    ck_assert_uint_eq(gyro_json_size(a), 7);
    ck_assert_double_eq(gyro_json_at(a, 0)->u.number, 1.0);
    ck_assert_double_eq(gyro_json_at(a, 1)->u.number, -2500.0);
    ck_assert_int_eq(gyro_json_at(a, 3)->type, GYRO_JSON_TRUE);
    ck_assert_int_eq(gyro_json_at(a, 4)->type, GYRO_JSON_FALSE);
    ck_assert_int_eq(gyro_json_at(a, 5)->type, GYRO_JSON_NULL);
    ck_assert_str_eq(gyro_json_string(gyro_json_at(a, 6)), "x");
    ck_assert_ptr_null(gyro_json_at(a, 7));
    ck_assert_ptr_null(gyro_json_string(gyro_json_at(a, 0)));
    ck_assert_uint_eq(gyro_json_size(gyro_json_get(r, "b")), 0);
    ck_assert_int_eq(gyro_json_get(r, "c")->type, GYRO_JSON_ARRAY);
    ck_assert_ptr_null(gyro_json_get(r, "zz"));
    ck_assert_ptr_null(gyro_json_get(a, "a"));      /* not an object */
    ck_assert_ptr_null(gyro_json_key_at(a, 0));
    ck_assert_str_eq(gyro_json_type_name(GYRO_JSON_OBJECT), "object");
    gyro_json_doc_free(d);
    gyro_json_doc_free(NULL);

    d = parse_ok("42");
    ck_assert_double_eq(gyro_json_root(d)->u.number, 42.0);
    gyro_json_doc_free(d);
    d = parse_ok("\xEF\xBB\xBF[\"bom\"]");
    ck_assert_str_eq(gyro_json_string(gyro_json_at(gyro_json_root(d), 0)), "bom");
    gyro_json_doc_free(d);
    d = parse_ok("{\"k\":1,\"k\":2}");   /* duplicate keys: first wins */
    ck_assert_double_eq(gyro_json_get(gyro_json_root(d), "k")->u.number, 1.0);
    gyro_json_doc_free(d);
}
END_TEST

START_TEST(test_strings_and_escapes)
{
    gyro_json_doc *d = parse_ok("[\"\\\"\\\\\\/\\b\\f\\n\\r\\t\", \"\\u4e2d\\u6587\", \"\\ud83d\\ude00\","
                                " \"a\\u0000b\", \"中文 ok\"]");
    const gyro_json *r = gyro_json_root(d);
    ck_assert_str_eq(gyro_json_string(gyro_json_at(r, 0)), "\"\\/\b\f\n\r\t");
    ck_assert_str_eq(gyro_json_string(gyro_json_at(r, 1)), "中文");
    ck_assert_str_eq(gyro_json_string(gyro_json_at(r, 2)), "\xF0\x9F\x98\x80");
    const gyro_json *nul = gyro_json_at(r, 3);
    ck_assert_uint_eq(nul->u.s.len, 3);
    ck_assert_int_eq(memcmp(nul->u.s.str, "a\0b", 4), 0);
    ck_assert_str_eq(gyro_json_string(gyro_json_at(r, 4)), "中文 ok");
    gyro_json_doc_free(d);
}
END_TEST

START_TEST(test_positions)
{
    const char *text = "[\n  1,\n  {\"中文\": \"x\",\n   \"b\": tru }\n]";
    parse_bad(text, strlen(text), GYRO_ERR_DATA, "t.json:4:9:");
    const char *ok = "[\n  1,\n  {\"中文\": \"x\"}]";
    gyro_json_doc *d = parse_ok(ok);
    const gyro_json *obj = gyro_json_at(gyro_json_root(d), 1);
    ck_assert_uint_eq(obj->line, 3);
    ck_assert_uint_eq(gyro_json_column(d, obj), 3);
    const gyro_json *x = gyro_json_get(obj, "中文");
    ck_assert_uint_eq(gyro_json_column(d, x), 10);   /* columns count characters, not bytes */
    gyro_json_doc_free(d);
}
END_TEST

START_TEST(test_rejects)
{
    static const struct { const char *text; const char *where; } bad[] = {
        {"", "1:1: expected a JSON value"},
        {"   ", "expected a JSON value"},
        {"[1,]", "1:4:"},
        {"{\"a\":1,}", "expected a string as object key"},
        {"{'a':1}", "expected a string"},
        {"{\"a\" 1}", "expected ':'"},
        {"{\"a\":1 \"b\":2}", "expected ',' or '}'"},
        {"[1 2]", "expected ',' or ']'"},
        {"[1", "end of input"},
        {"{", "end of input"},
        {"\"abc", "unterminated string"},
        {"\"a\\", "unterminated string"},
        {"\"a\tb\"", "control character"},
        {"\"a\nb\"", "control character"},
        {"\"\\x41\"", "invalid escape"},
        {"\"\\u12\"", "four hex digits"},
        {"\"\\ud800\"", "unpaired high surrogate"},
        {"\"\\ud800\\u0041\"", "unpaired high surrogate"},
        {"\"\\udc00\"", "unpaired low surrogate"},
        {"01", "leading zero"},
        {"-", "expected a digit"},
        {"+1", "expected a JSON value"},
        {"1.", "after '.'"},
        {".5", "expected a JSON value"},
        {"1e", "exponent"},
        {"1e999", "out of range"},
        {"NaN", "expected a JSON value"},
        {"Infinity", "expected a JSON value"},
        {"nul", "expected a JSON value"},
        {"truex", "unexpected data after"},
        {"[] []", "unexpected data after"},
        {"// c\n1", "expected a JSON value"},
        {"\"\xff\"", "invalid UTF-8"},
        {"\"\xe4\xb8\"", "invalid UTF-8"},
        {"\"\xc0\xaf\"", "invalid UTF-8"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        parse_bad(bad[i].text, strlen(bad[i].text), GYRO_ERR_DATA, bad[i].where);
    parse_bad("[1,\0 2]", 7, GYRO_ERR_DATA, "byte 0x00");

    gyro_json_doc *d;
    ck_assert_int_eq(gyro_json_parse(NULL, 3, "x", &d), GYRO_ERR_USAGE);
    ck_assert_int_eq(gyro_json_parse("1", 1, "x", NULL), GYRO_ERR_USAGE);
}
END_TEST

START_TEST(test_depth_limit)
{
    char buf[2 * GYRO_JSON_MAX_DEPTH + 8];
    size_t n = 0;
    for (int i = 0; i < GYRO_JSON_MAX_DEPTH; i++) buf[n++] = '[';
    for (int i = 0; i < GYRO_JSON_MAX_DEPTH; i++) buf[n++] = ']';
    gyro_json_doc *d;
    ck_assert_int_eq(gyro_json_parse(buf, n, "deep", &d), GYRO_OK);
    gyro_json_doc_free(d);
    n = 0;
    for (int i = 0; i < GYRO_JSON_MAX_DEPTH + 1; i++) buf[n++] = '[';
    parse_bad(buf, n, GYRO_ERR_LIMIT, "nesting");
}
END_TEST

START_TEST(test_large_document)
{
    /* many nodes and a string bigger than an arena chunk */
    size_t big = (size_t)3 << 20;
    size_t cap = big + 2000000;
    char *t = malloc(cap);
    size_t n = 0;
    n += (size_t)sprintf(t + n, "{\"big\":\"");
    memset(t + n, 'x', big);
    n += big;
    n += (size_t)sprintf(t + n, "\",\"arr\":[");
    for (int i = 0; i < 100000; i++) n += (size_t)sprintf(t + n, "%s{\"i\":%d}", i ? "," : "", i);
    n += (size_t)sprintf(t + n, "]}");
    gyro_json_doc *d;
    ck_assert_int_eq(gyro_json_parse(t, n, "big", &d), GYRO_OK);
    const gyro_json *r = gyro_json_root(d);
    ck_assert_uint_eq(gyro_json_get(r, "big")->u.s.len, big);
    const gyro_json *arr = gyro_json_get(r, "arr");
    ck_assert_uint_eq(gyro_json_size(arr), 100000);
    ck_assert_double_eq(gyro_json_get(gyro_json_at(arr, 99999), "i")->u.number, 99999.0);
    gyro_json_doc_free(d);
    free(t);
}
END_TEST

START_TEST(test_file)
{
    char path[] = "/tmp/gyro-json-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    FILE *f = fdopen(fd, "w");
    fputs("[{\"text\": \"打开\", \"n\": 1}]\n", f);
    fclose(f);
    gyro_json_doc *d;
    ck_assert_int_eq(gyro_json_parse_file(path, &d), GYRO_OK);
    ck_assert_str_eq(gyro_json_name(d), path);
    const gyro_json *o = gyro_json_at(gyro_json_root(d), 0);
    ck_assert_uint_eq(gyro_json_column(d, gyro_json_get(o, "n")), 22);
    gyro_json_doc_free(d);
    unlink(path);
    ck_assert_int_eq(gyro_json_parse_file(path, &d), GYRO_ERR_IO);
    ck_assert_ptr_null(d);
}
END_TEST

START_TEST(test_mutation_fuzz)
{
    /* mutate a valid document byte by byte (flips, truncations, insertions): every result must
     * either parse or fail with GYRO_ERR_DATA/LIMIT and a located message */
    const char *seed = "{\"text\": \"播放周杰伦的歌\\u4e2d\", \"domain\": \"music\", \"slots\": "
                       "{\"a\": [1, 2.5e-3, true, null, {\"b\": \"\\ud83d\\ude00\"}]}}";
    size_t len = strlen(seed);
    char buf[512];
    gyro_rng rng;
    gyro_rng_seed(&rng, 7);
    static const char alphabet[] = "{}[]\",:\\u0123456789eE+-. \n\t\x80\xff\xe4tfnl";
    int ok = 0, bad = 0;
    for (int iter = 0; iter < 20000; iter++) {
        memcpy(buf, seed, len);
        size_t n = len;
        int edits = 1 + (int)gyro_rng_below(&rng, 3);
        for (int e = 0; e < edits; e++) {
            size_t pos = gyro_rng_below(&rng, (uint32_t)n);
            char c = alphabet[gyro_rng_below(&rng, sizeof alphabet - 1)];
            switch (gyro_rng_below(&rng, 3)) {
            case 0: buf[pos] = c; break;
            case 1: n = pos; break;
            default:
                if (n + 1 < sizeof buf) {
                    memmove(buf + pos + 1, buf + pos, n - pos);
                    buf[pos] = c;
                    n++;
                }
            }
            if (n == 0) break;
        }
        /* parse from a heap copy of exactly n bytes so ASan catches any over-read */
        char *copy = malloc(n ? n : 1);
        memcpy(copy, buf, n);
        gyro_json_doc *d;
        gyro_status st = gyro_json_parse(copy, n, "fuzz", &d);
        if (st == GYRO_OK) { ok++; gyro_json_doc_free(d); }
        else {
            ck_assert_msg(st == GYRO_ERR_DATA || st == GYRO_ERR_LIMIT, "status %d", st);
            ck_assert_ptr_nonnull(strstr(gyro_error_message(), "fuzz:"));
            bad++;
        }
        free(copy);
    }
    ck_assert_int_gt(bad, 1000);
    ck_assert_int_gt(ok, 10);
}
END_TEST


/* ---- property test: random documents written here, parsed back, compared ---------------------- */

typedef struct gen { gyro_rng r; char *out; size_t n, cap; } gen;

static void emit(gen *g, const char *s, size_t n)
{
    if (g->n + n + 1 > g->cap) {
        g->cap = (g->n + n + 1) * 2;
        g->out = realloc(g->out, g->cap);
    }
    memcpy(g->out + g->n, s, n);
    g->n += n;
    g->out[g->n] = '\0';
}

static void emits(gen *g, const char *s) { emit(g, s, strlen(s)); }

static void ws(gen *g)
{
    static const char *const w[] = {"", "", " ", "\n", "\t", "\r\n  "};
    emits(g, w[gyro_rng_below(&g->r, 6)]);
}

/* A random code point (ASCII, CJK, astral, specials) written raw or escaped; the decoded UTF-8
 * is appended to *want. */
static void gen_char(gen *g, char *want, size_t *wn, int no_nul)
{
    uint32_t cp;
    switch (gyro_rng_below(&g->r, 6)) {
    case 0: cp = 0x20 + gyro_rng_below(&g->r, 0x5F); break;              /* printable ASCII */
    case 1: cp = gyro_rng_below(&g->r, 0x20); break;                      /* control: escaped */
    case 2: cp = 0x4E00 + gyro_rng_below(&g->r, 0x5000); break;           /* CJK */
    case 3: cp = 0x10000 + gyro_rng_below(&g->r, 0x10000); break;         /* astral */
    case 4: cp = "\"\\/"[gyro_rng_below(&g->r, 3)]; break;
    default: cp = 0x80 + gyro_rng_below(&g->r, 0x700); break;             /* 2-byte */
    }
    if (cp == 0 && no_nul) cp = 'z';
    char u[8];
    size_t un = 0;
    if (cp < 0x80) u[un++] = (char)cp;
    else if (cp < 0x800) { u[un++] = (char)(0xC0 | (cp >> 6)); u[un++] = (char)(0x80 | (cp & 0x3F)); }
    else if (cp < 0x10000) {
        u[un++] = (char)(0xE0 | (cp >> 12));
        u[un++] = (char)(0x80 | ((cp >> 6) & 0x3F));
        u[un++] = (char)(0x80 | (cp & 0x3F));
    } else {
        u[un++] = (char)(0xF0 | (cp >> 18));
        u[un++] = (char)(0x80 | ((cp >> 12) & 0x3F));
        u[un++] = (char)(0x80 | ((cp >> 6) & 0x3F));
        u[un++] = (char)(0x80 | (cp & 0x3F));
    }
    memcpy(want + *wn, u, un);
    *wn += un;
    int must_escape = cp < 0x20 || cp == '"' || cp == '\\';
    if (must_escape || gyro_rng_below(&g->r, 4) == 0) {
        char e[16];
        if (cp == '"') emits(g, "\\\"");
        else if (cp == '\\') emits(g, "\\\\");
        else if (cp == '/' && gyro_rng_below(&g->r, 2)) emits(g, "\\/");
        else if (cp == '\n') emits(g, "\\n");
        else if (cp == '\t') emits(g, "\\t");
        else if (cp >= 0x10000) {
            uint32_t v = cp - 0x10000;
            snprintf(e, sizeof e, "\\u%04X\\u%04x", 0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF));
            emits(g, e);
        } else {
            snprintf(e, sizeof e, gyro_rng_below(&g->r, 2) ? "\\u%04x" : "\\u%04X", cp);
            emits(g, e);
        }
    } else {
        emit(g, u, un);
    }
}

#define MAXW 256
typedef struct expect_node {
    int type;               /* gyro_json_type */
    double num;
    char str[MAXW * 4];
    size_t len;
    int n;                  /* children */
    struct expect_node *kid[8];
    char key[8][MAXW * 4];
} expect_node;

static expect_node *gen_value(gen *g, int depth)
{
    expect_node *e = calloc(1, sizeof *e);
    int kind = (int)gyro_rng_below(&g->r, depth > 4 ? 4 : 6);
    ws(g);
    switch (kind) {
    case 0: {
        static const char *const lit[] = {"null", "false", "true"};
        int k = (int)gyro_rng_below(&g->r, 3);
        e->type = GYRO_JSON_NULL + k;
        emits(g, lit[k]);
        break;
    }
    case 1: {
        char b[64];
        long long m = (long long)gyro_rng_below(&g->r, 2000000) - 1000000;
        int ex = (int)gyro_rng_below(&g->r, 21) - 10;
        if (gyro_rng_below(&g->r, 2)) snprintf(b, sizeof b, "%lld", m);
        else snprintf(b, sizeof b, "%lld.%03de%d", m, (int)gyro_rng_below(&g->r, 1000), ex);
        e->type = GYRO_JSON_NUMBER;
        e->num = strtod(b, NULL);
        emits(g, b);
        break;
    }
    case 2:
    case 3: {
        e->type = GYRO_JSON_STRING;
        emits(g, "\"");
        int len = (int)gyro_rng_below(&g->r, 12);
        for (int i = 0; i < len; i++) gen_char(g, e->str, &e->len, 0);
        emits(g, "\"");
        break;
    }
    case 4: {
        e->type = GYRO_JSON_ARRAY;
        emits(g, "[");
        e->n = (int)gyro_rng_below(&g->r, 5);
        for (int i = 0; i < e->n; i++) {
            if (i) { ws(g); emits(g, ","); }
            e->kid[i] = gen_value(g, depth + 1);
        }
        ws(g);
        emits(g, "]");
        break;
    }
    default: {
        e->type = GYRO_JSON_OBJECT;
        emits(g, "{");
        e->n = (int)gyro_rng_below(&g->r, 5);
        for (int i = 0; i < e->n; i++) {
            if (i) emits(g, ",");
            ws(g);
            emits(g, "\"");
            size_t kn = 0;
            int len = 1 + (int)gyro_rng_below(&g->r, 5);
            for (int k = 0; k < len; k++)   /* keys without U+0000 (keys are C strings) */
                gen_char(g, e->key[i], &kn, 1);
            e->key[i][kn] = '\0';
            emits(g, "\"");
            ws(g);
            emits(g, ":");
            e->kid[i] = gen_value(g, depth + 1);
        }
        ws(g);
        emits(g, "}");
        break;
    }
    }
    return e;
}

static void free_expect(expect_node *e)
{
    for (int i = 0; i < e->n; i++) free_expect(e->kid[i]);
    free(e);
}

static int same(const expect_node *e, const gyro_json *v)
{
    if (!v || (int)v->type != e->type) return 0;
    switch (e->type) {
    case GYRO_JSON_NUMBER: return v->u.number == e->num;
    case GYRO_JSON_STRING: return v->u.s.len == e->len && memcmp(v->u.s.str, e->str, e->len) == 0;
    case GYRO_JSON_ARRAY:
    case GYRO_JSON_OBJECT:
        if (gyro_json_size(v) != (size_t)e->n) return 0;
        for (int i = 0; i < e->n; i++) {
            if (!same(e->kid[i], gyro_json_at(v, (size_t)i))) return 0;
            if (e->type == GYRO_JSON_OBJECT && strcmp(gyro_json_key_at(v, (size_t)i), e->key[i]) != 0)
                return 0;
        }
        return 1;
    default: return 1;
    }
}

START_TEST(test_roundtrip_property)
{
    gen g = {0};
    gyro_rng_seed(&g.r, 2024);
    for (int it = 0; it < 3000; it++) {
        g.n = 0;
        expect_node *e = gen_value(&g, 0);
        ws(&g);
        gyro_json_doc *d;
        gyro_status st = gyro_json_parse(g.out, g.n, "prop", &d);
        if (st != GYRO_OK) ck_abort_msg("iteration %d: %s in %s", it, gyro_error_message(), g.out);
        if (!same(e, gyro_json_root(d))) ck_abort_msg("iteration %d: tree differs for %s", it, g.out);
        gyro_json_doc_free(d);
        free_expect(e);
    }
    free(g.out);
}
END_TEST

static Suite *json_suite(void)
{
    Suite *s = suite_create("json");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_values);
    tcase_add_test(tc, test_strings_and_escapes);
    tcase_add_test(tc, test_positions);
    tcase_add_test(tc, test_rejects);
    tcase_add_test(tc, test_depth_limit);
    tcase_add_test(tc, test_large_document);
    tcase_add_test(tc, test_file);
    tcase_add_test(tc, test_mutation_fuzz);
    tcase_add_test(tc, test_roundtrip_property);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(json_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

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

/* check_vocab.c — Check suite for embeddings/vocab and embeddings/corpus: counting, sorting and
 * pruning, hash growth, subsampling thresholds, the negative table, the encoded corpus file. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "embeddings/corpus.h"
#include "embeddings/vocab.h"
#include "pipeline/corpus_input.h"
#include "pipeline/stream.h"

static int add(gyro_vocab *v, const char *s, uint64_t c)
{
    int id = -1;
    ck_assert_int_eq(gyro_vocab_add(v, s, strlen(s), c, &id), GYRO_OK);
    return id;
}

START_TEST(test_add_find_finalize)
{
    gyro_vocab v;
    ck_assert_int_eq(gyro_vocab_init(&v), GYRO_OK);
    int a = add(&v, "水", 3), b = add(&v, "火", 10);
    ck_assert_int_eq(add(&v, "水", 4), a);
    add(&v, "爱", 1);
    add(&v, "歌", 7);
    ck_assert_int_ne(a, b);
    ck_assert_int_eq(v.n, 4);
    ck_assert_uint_eq(v.total, 25);
    ck_assert_int_eq(gyro_vocab_find(&v, "水", strlen("水")), a);
    ck_assert_int_eq(gyro_vocab_find(&v, "听", strlen("听")), -1);
    /* prefix of a token is not the token */
    ck_assert_int_eq(gyro_vocab_find(&v, "水", 2), -1);

    int32_t remap[4];
    ck_assert_int_eq(gyro_vocab_finalize(&v, 2, 0, remap), GYRO_OK);
    ck_assert_int_eq(v.n, 3);
    ck_assert_str_eq(v.tokens[0], "火");
    ck_assert_str_eq(v.tokens[1], "歌"); /* 7, ties by bytes: 歌 E6AD8C < 水 E6B0B4 */
    ck_assert_str_eq(v.tokens[2], "水"); /* 7 */
    ck_assert_int_eq(remap[b], 0);
    ck_assert_int_eq(remap[2], -1); /* 爱 had count 1 */
    ck_assert_int_eq(gyro_vocab_find(&v, "爱", strlen("爱")), -1);
    ck_assert_int_eq(gyro_vocab_find(&v, "歌", strlen("歌")), 1);
    ck_assert_uint_eq(gyro_vocab_train_tokens(&v), 24);
    ck_assert_uint_eq(v.total, 25);
    gyro_vocab_free(&v);
}
END_TEST

START_TEST(test_ties_sorted_by_bytes_and_max_size)
{
    gyro_vocab v;
    ck_assert_int_eq(gyro_vocab_init(&v), GYRO_OK);
    add(&v, "c", 5);
    add(&v, "a", 5);
    add(&v, "b", 5);
    add(&v, "z", 9);
    ck_assert_int_eq(gyro_vocab_finalize(&v, 1, 3, NULL), GYRO_OK);
    ck_assert_int_eq(v.n, 3);
    ck_assert_str_eq(v.tokens[0], "z");
    ck_assert_str_eq(v.tokens[1], "a");
    ck_assert_str_eq(v.tokens[2], "b");
    gyro_vocab_free(&v);
}
END_TEST

START_TEST(test_growth_and_fingerprint)
{
    gyro_vocab v, w;
    ck_assert_int_eq(gyro_vocab_init(&v), GYRO_OK);
    ck_assert_int_eq(gyro_vocab_init(&w), GYRO_OK);
    char buf[32];
    for (int i = 0; i < 50000; i++) {
        snprintf(buf, sizeof buf, "t%d", i);
        add(&v, buf, (uint64_t)(i % 17) + 1);
    }
    for (int i = 49999; i >= 0; i--) {
        snprintf(buf, sizeof buf, "t%d", i);
        add(&w, buf, (uint64_t)(i % 17) + 1);
    }
    ck_assert_int_eq(v.n, 50000);
    for (int i = 0; i < 50000; i += 997) {
        snprintf(buf, sizeof buf, "t%d", i);
        ck_assert_int_eq(gyro_vocab_find(&v, buf, strlen(buf)), i);
    }
    ck_assert_int_eq(gyro_vocab_finalize(&v, 3, 0, NULL), GYRO_OK);
    ck_assert_int_eq(gyro_vocab_finalize(&w, 3, 0, NULL), GYRO_OK);
    /* the order of first appearance does not matter after finalize */
    ck_assert_uint_eq(gyro_vocab_fingerprint(&v), gyro_vocab_fingerprint(&w));
    w.counts[5]++;
    ck_assert_uint_ne(gyro_vocab_fingerprint(&v), gyro_vocab_fingerprint(&w));
    gyro_vocab_free(&v);
    gyro_vocab_free(&w);
}
END_TEST

START_TEST(test_bad_tokens)
{
    gyro_vocab v;
    ck_assert_int_eq(gyro_vocab_init(&v), GYRO_OK);
    ck_assert_int_eq(gyro_vocab_add(&v, "", 0, 1, NULL), GYRO_ERR_DATA);
    char big[GYRO_VOCAB_MAX_TOKEN + 2];
    memset(big, 'x', sizeof big);
    ck_assert_int_eq(gyro_vocab_add(&v, big, sizeof big, 1, NULL), GYRO_ERR_DATA);
    ck_assert_int_eq(gyro_vocab_add(&v, "a\0b", 3, 1, NULL), GYRO_ERR_DATA);
    ck_assert_int_eq(v.n, 0);
    gyro_vocab_free(&v);
    gyro_vocab_free(&v); /* double free of a zeroed vocabulary is harmless */
}
END_TEST

START_TEST(test_keep_thresholds)
{
    gyro_vocab v;
    ck_assert_int_eq(gyro_vocab_init(&v), GYRO_OK);
    add(&v, "的", 100000);
    add(&v, "稀", 10);
    ck_assert_int_eq(gyro_vocab_finalize(&v, 1, 0, NULL), GYRO_OK);
    uint64_t keep[2];
    uint64_t T = gyro_vocab_train_tokens(&v);
    gyro_vocab_keep_thresholds(&v, 1e-3, T, keep);
    double f = 100000.0 / (double)T, t = 1e-3;
    double p = sqrt(t / f) + t / f;
    ck_assert_double_eq_tol((double)keep[0] / 4294967296.0, p, 1e-9);
    ck_assert_uint_eq(keep[1], 1ULL << 32); /* rare: always kept */
    gyro_vocab_keep_thresholds(&v, 0, T, keep);
    ck_assert_uint_eq(keep[0], 1ULL << 32);
    gyro_vocab_free(&v);
}
END_TEST

START_TEST(test_negative_table)
{
    gyro_vocab v;
    ck_assert_int_eq(gyro_vocab_init(&v), GYRO_OK);
    add(&v, "a", 10000);
    add(&v, "b", 1000);
    add(&v, "c", 100);
    add(&v, "d", 1);
    ck_assert_int_eq(gyro_vocab_finalize(&v, 1, 0, NULL), GYRO_OK);
    uint32_t *t, n;
    ck_assert_int_eq(gyro_vocab_negative_table(&v, 0.75, &t, &n), GYRO_OK);
    ck_assert_uint_eq(n & (n - 1), 0);
    ck_assert_uint_ge(n, 64u * 4);
    uint64_t hist[4] = {0};
    for (uint32_t i = 0; i < n; i++) {
        ck_assert_uint_lt(t[i], 4);
        hist[t[i]]++;
    }
    double z = pow(10000, .75) + pow(1000, .75) + pow(100, .75) + 1;
    for (int i = 0; i < 3; i++)
        ck_assert_double_eq_tol((double)hist[i] / n, pow((double)v.counts[i], .75) / z, 2e-4);
    ck_assert_uint_ge(hist[3], 1); /* every entry can be drawn */
    /* the table is sorted by id (cumulative fill) */
    for (uint32_t i = 1; i < n; i++) ck_assert_uint_le(t[i - 1], t[i]);
    free(t);
    gyro_vocab_free(&v);
    gyro_vocab e;
    ck_assert_int_eq(gyro_vocab_init(&e), GYRO_OK);
    ck_assert_int_eq(gyro_vocab_negative_table(&e, 0.75, &t, &n), GYRO_ERR_DATA);
    gyro_vocab_free(&e);
}
END_TEST

/* ---- encoded corpus ------------------------------------------------------------------------ */

static char tmpdir[64];

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

static void setup(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/gyro-vocab-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    ck_assert_int_eq(system(cmd), 0);
}

START_TEST(test_encode_text)
{
    char in[128], ids[128];
    snprintf(in, sizeof in, "%s/in.txt", tmpdir);
    snprintf(ids, sizeof ids, "%s/c.ids", tmpdir);
    /* Traditional 愛 becomes 爱; spaces are separators; 鳥 (once) is below min_count 2 */
    write_file(in, "我爱水 水\n\n愛水我鳥\r\n我 爱\n");
    gyro_corpus_input_options o;
    gyro_corpus_input_options_init(&o);
    o.min_count = 2;
    gyro_vocab v;
    gyro_corpus_stats st;
    const char *inputs[] = {in};
    ck_assert_int_eq(gyro_corpus_input_encode(inputs, 1, &o, ids, &v, &st), GYRO_OK);
    ck_assert_int_eq(v.n, 3);
    ck_assert_str_eq(v.tokens[0], "我"); /* 我 3, 水 3, 爱 3: ties by bytes (E6 88.., E6 B0.., E7 ..) */
    ck_assert_str_eq(v.tokens[2], "爱");
    ck_assert_uint_eq(st.documents, 4);
    ck_assert_uint_eq(st.chars, 10);
    ck_assert_uint_eq(st.kept, 9);
    gyro_corpus c;
    ck_assert_int_eq(gyro_corpus_open(ids, &c), GYRO_OK);
    ck_assert_uint_eq(c.vocab_size, 3);
    ck_assert_uint_eq(c.fingerprint, gyro_vocab_fingerprint(&v));
    ck_assert_uint_eq(c.n_tokens, 9);
    ck_assert_uint_eq(c.n_docs, 3);
    ck_assert_uint_eq(c.n_ids, 12);
    uint32_t buf[16];
    size_t got;
    ck_assert_int_eq(gyro_corpus_read(&c, 0, buf, 16, &got), GYRO_OK);
    ck_assert_uint_eq(got, 12);
    int wo = gyro_vocab_find(&v, "我", 3), ai = gyro_vocab_find(&v, "爱", 3), sh = gyro_vocab_find(&v, "水", 3);
    uint32_t want[12] = {wo, ai, sh, sh, GYRO_CORPUS_EOD, ai, sh, wo, GYRO_CORPUS_EOD, wo, ai, GYRO_CORPUS_EOD};
    for (int i = 0; i < 12; i++) ck_assert_uint_eq(buf[i], want[i]);
    ck_assert_int_eq(gyro_corpus_read(&c, 12, buf, 16, &got), GYRO_OK);
    ck_assert_uint_eq(got, 0);
    gyro_corpus_close(&c);
    gyro_vocab_free(&v);

    /* truncation of the encoded file is detected */
    ck_assert_int_eq(truncate(ids, 64 + 4 * 11), 0);
    ck_assert_int_eq(gyro_corpus_open(ids, &c), GYRO_ERR_FORMAT);
    write_file(ids, "hello");
    ck_assert_int_eq(gyro_corpus_open(ids, &c), GYRO_ERR_FORMAT);
}
END_TEST

START_TEST(test_encode_errors)
{
    char in[128], ids[128];
    snprintf(in, sizeof in, "%s/in.txt", tmpdir);
    snprintf(ids, sizeof ids, "%s/c.ids", tmpdir);
    gyro_corpus_input_options o;
    gyro_corpus_input_options_init(&o);
    gyro_vocab v;
    const char *inputs[] = {in};
    write_file(in, "");
    ck_assert_int_eq(gyro_corpus_input_encode(inputs, 1, &o, ids, &v, NULL), GYRO_ERR_DATA);
    ck_assert_ptr_nonnull(strstr(gyro_error_message(), "empty"));
    gyro_vocab_free(&v);
    ck_assert_int_eq(access(ids, F_OK), -1);
    write_file(in, "一二三\n \n");
    ck_assert_int_eq(gyro_corpus_input_encode(inputs, 1, &o, ids, &v, NULL), GYRO_ERR_DATA);
    ck_assert_ptr_nonnull(strstr(gyro_error_message(), "min-count"));
    gyro_vocab_free(&v);
    ck_assert_int_eq(access(ids, F_OK), -1);
    const char *missing[] = {"/nonexistent/x.txt"};
    ck_assert_int_eq(gyro_corpus_input_encode(missing, 1, &o, ids, &v, NULL), GYRO_ERR_IO);
    gyro_vocab_free(&v);
    /* a stream of the wrong type */
    write_file(in, "\x16\x0a\x04gyro\x10\x01\x1a\x0egyro.v1.Vocabx");
    ck_assert_int_eq(gyro_corpus_input_encode(inputs, 1, &o, ids, &v, NULL), GYRO_ERR_FORMAT);
    gyro_vocab_free(&v);
}
END_TEST

/* A Document stream (as from gyro normalize) gives the same corpus as the text it came from,
 * and gyro_corpus_input_write_tokens prints the characters training sees. */
START_TEST(test_encode_stream_and_tokens)
{
    char in[128], pb[128], ids1[128], ids2[128], tok[128];
    snprintf(in, sizeof in, "%s/in.txt", tmpdir);
    snprintf(pb, sizeof pb, "%s/in.pb", tmpdir);
    snprintf(ids1, sizeof ids1, "%s/a.ids", tmpdir);
    snprintf(ids2, sizeof ids2, "%s/b.ids", tmpdir);
    snprintf(tok, sizeof tok, "%s/tokens.txt", tmpdir);
    write_file(in, "山水 山水\n愛山\n");
    gyro_stream_writer *w;
    ck_assert_int_eq(gyro_stream_writer_open_path(pb, &gyro__v1__document__descriptor, "test", &w), GYRO_OK);
    char *d1[] = {"山", "水", " ", "山", "水"};
    Gyro__V1__Document doc;
    gyro__v1__document__init(&doc);
    doc.text = "山水 山水";
    doc.n_chars = 5;
    doc.chars = d1;
    ck_assert_int_eq(gyro_stream_write(w, &doc.base), GYRO_OK);
    gyro__v1__document__init(&doc);
    doc.text = "爱山"; /* no clusters: the text is segmented */
    ck_assert_int_eq(gyro_stream_write(w, &doc.base), GYRO_OK);
    ck_assert_int_eq(gyro_stream_writer_close(w), GYRO_OK);
    gyro_corpus_input_options o;
    gyro_corpus_input_options_init(&o);
    o.min_count = 1;
    gyro_vocab v1, v2;
    const char *a[] = {in}, *b[] = {pb};
    ck_assert_int_eq(gyro_corpus_input_encode(a, 1, &o, ids1, &v1, NULL), GYRO_OK);
    ck_assert_int_eq(gyro_corpus_input_encode(b, 1, &o, ids2, &v2, NULL), GYRO_OK);
    ck_assert_uint_eq(gyro_vocab_fingerprint(&v1), gyro_vocab_fingerprint(&v2));
    ck_assert_int_eq(v1.n, 3);
    gyro_corpus c1, c2;
    ck_assert_int_eq(gyro_corpus_open(ids1, &c1), GYRO_OK);
    ck_assert_int_eq(gyro_corpus_open(ids2, &c2), GYRO_OK);
    ck_assert_uint_eq(c1.n_ids, c2.n_ids);
    uint32_t x[16], y[16];
    size_t g1, g2;
    ck_assert_int_eq(gyro_corpus_read(&c1, 0, x, 16, &g1), GYRO_OK);
    ck_assert_int_eq(gyro_corpus_read(&c2, 0, y, 16, &g2), GYRO_OK);
    ck_assert_uint_eq(g1, 8);
    ck_assert_int_eq(memcmp(x, y, g1 * sizeof *x), 0);
    gyro_corpus_close(&c1);
    gyro_corpus_close(&c2);
    gyro_vocab_free(&v1);
    gyro_vocab_free(&v2);
    /* the token stream of the text input */
    FILE *out = fopen(tok, "w");
    ck_assert_int_eq(gyro_corpus_input_write_tokens(a, 1, &o, out, NULL), GYRO_OK);
    fclose(out);
    FILE *f = fopen(tok, "r");
    char buf[128];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    ck_assert_str_eq(buf, "山 水 山 水\n爱 山\n");
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("vocab");
    TCase *tc = tcase_create("vocab");
    tcase_add_test(tc, test_add_find_finalize);
    tcase_add_test(tc, test_ties_sorted_by_bytes_and_max_size);
    tcase_add_test(tc, test_growth_and_fingerprint);
    tcase_add_test(tc, test_bad_tokens);
    tcase_add_test(tc, test_keep_thresholds);
    tcase_add_test(tc, test_negative_table);
    suite_add_tcase(s, tc);
    TCase *tc2 = tcase_create("corpus");
    tcase_add_checked_fixture(tc2, setup, teardown);
    tcase_add_test(tc2, test_encode_text);
    tcase_add_test(tc2, test_encode_errors);
    tcase_add_test(tc2, test_encode_stream_and_tokens);
    suite_add_tcase(s, tc2);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* check_stream.c — Check suite for pipeline/stream: round trip through a file and a memory
 * FILE*, truncation at every byte, oversized and malformed length prefixes, garbage, unpack
 * failures, headers (missing, foreign, newer version, headerless with a given type), the wrong
 * record type, writer limits, the type table, random mutations of a valid stream, and
 * pipeline/json_out (the JSON of `gyro dump`). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <math.h>

#include "pipeline/json_out.h"
#include "pipeline/stream.h"
#include "proto/gyro.pb-c.h"

/* Write `n` Documents into a memory buffer; returns the malloc'd bytes and their size. */
static uint8_t *make_stream(int n, size_t *size)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(fp);
    gyro_stream_writer *w;
    ck_assert_int_eq(gyro_stream_writer_open_file(fp, &gyro__v1__document__descriptor, "test", &w), GYRO_OK);
    for (int i = 0; i < n; i++) {
        Gyro__V1__Document d = GYRO__V1__DOCUMENT__INIT;
        char text[64];
        snprintf(text, sizeof text, "文档 %d", i);
        char *chars[] = {"文", "档"};
        d.id = (uint64_t)i + 1;
        d.source = "mem";
        d.line = (uint64_t)i + 10;
        d.text = text;
        d.original = text;
        d.n_chars = 2;
        d.chars = chars;
        ck_assert_int_eq(gyro_stream_write(w, &d.base), GYRO_OK);
    }
    ck_assert_int_eq(gyro_stream_writer_count(w), (uint64_t)n);
    ck_assert_int_eq(gyro_stream_writer_close(w), GYRO_OK);
    fclose(fp);
    *size = len;
    return (uint8_t *)buf;
}

static int check_ids = 1;   /* read_all checks the ids written by make_stream */

/* Read every Document from `data`; returns the status of the first failure (or GYRO_OK) and the
 * number of documents read in *count. */
static gyro_status read_all(const uint8_t *data, size_t size, const gyro_stream_reader_options *opt,
                            int *count)
{
    FILE *fp = fmemopen((void *)data, size ? size : 1, "rb");
    if (size == 0) { /* fmemopen refuses size 0 on some libcs: use an empty tmpfile */
        fclose(fp);
        fp = tmpfile();
    }
    ck_assert_ptr_nonnull(fp);
    *count = 0;
    gyro_stream_reader *r;
    gyro_status s = gyro_stream_reader_open_file(fp, "mem", opt, &r);
    if (s) {
        fclose(fp);
        return s;
    }
    for (;;) {
        ProtobufCMessage *m;
        s = gyro_stream_next(r, &gyro__v1__document__descriptor, &m);
        if (s || !m) break;
        Gyro__V1__Document *d = (Gyro__V1__Document *)m;
        if (check_ids) ck_assert_uint_eq(d->id, (uint64_t)*count + 1);
        ck_assert_uint_eq(gyro_stream_reader_record(r), (uint64_t)*count + 1);
        (*count)++;
        protobuf_c_message_free_unpacked(m, NULL);
    }
    gyro_stream_reader_free(r);
    fclose(fp);
    return s;
}

START_TEST(test_round_trip_path)
{
    char dir[] = "/tmp/gyro-stream-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/docs.pb", dir);
    gyro_stream_writer *w;
    ck_assert_int_eq(gyro_stream_writer_open_path(path, &gyro__v1__document__descriptor, "gyro test", &w), GYRO_OK);
    ck_assert_int_eq(access(path, F_OK), -1); /* atomic: invisible until close */
    for (int i = 0; i < 100; i++) {
        Gyro__V1__Document d = GYRO__V1__DOCUMENT__INIT;
        d.id = (uint64_t)i + 1;
        d.text = "學生";
        ck_assert_int_eq(gyro_stream_write(w, &d.base), GYRO_OK);
    }
    ck_assert_int_eq(gyro_stream_writer_close(w), GYRO_OK);

    gyro_stream_reader *r;
    ck_assert_int_eq(gyro_stream_reader_open_path(path, NULL, &r), GYRO_OK);
    ck_assert_str_eq(gyro_stream_reader_message_type(r), "gyro.v1.Document");
    ck_assert_str_eq(gyro_stream_reader_header(r)->producer, "gyro test");
    ck_assert_uint_eq(gyro_stream_reader_header(r)->version, 1);
    int n = 0;
    for (;;) {
        ProtobufCMessage *m;
        ck_assert_int_eq(gyro_stream_next(r, &gyro__v1__document__descriptor, &m), GYRO_OK);
        if (!m) break;
        Gyro__V1__Document *d = (Gyro__V1__Document *)m;
        ck_assert_uint_eq(d->id, (uint64_t)n + 1);
        ck_assert_str_eq(d->text, "學生");
        protobuf_c_message_free_unpacked(m, NULL);
        n++;
    }
    ck_assert_int_eq(n, 100);
    /* after the end: still the end */
    ProtobufCMessage *m;
    ck_assert_int_eq(gyro_stream_next(r, &gyro__v1__document__descriptor, &m), GYRO_OK);
    ck_assert_ptr_null(m);
    gyro_stream_reader_free(r);
    unlink(path);
    rmdir(dir);
}
END_TEST

START_TEST(test_round_trip_memory_and_empty_records)
{
    size_t size;
    uint8_t *data = make_stream(5, &size);
    int n;
    ck_assert_int_eq(read_all(data, size, NULL, &n), GYRO_OK);
    ck_assert_int_eq(n, 5);
    free(data);

    /* a stream with a header and zero records */
    data = make_stream(0, &size);
    ck_assert_int_eq(read_all(data, size, NULL, &n), GYRO_OK);
    ck_assert_int_eq(n, 0);
    free(data);
}
END_TEST

START_TEST(test_truncation_at_every_byte)
{
    size_t size;
    uint8_t *data = make_stream(4, &size);
    /* Find the record boundaries: the clean-cut lengths. */
    int boundaries = 0;
    for (size_t cut = 0; cut < size; cut++) {
        int n;
        gyro_status s = read_all(data, cut, NULL, &n);
        if (s == GYRO_OK) {
            boundaries++;
            continue;
        }
        ck_assert_msg(s == GYRO_ERR_FORMAT, "cut %zu: status %d", cut, s);
        const char *msg = gyro_error_message();
        ck_assert_msg(strstr(msg, "mem: record ") != NULL, "cut %zu: %s", cut, msg);
        ck_assert_msg(strstr(msg, " at byte ") != NULL, "cut %zu: %s", cut, msg);
        ck_assert_msg(strstr(msg, "truncated") || strstr(msg, "empty input"), "cut %zu: %s", cut, msg);
    }
    /* clean cuts are exactly after the header and after records 1..3 */
    ck_assert_int_eq(boundaries, 4);
    free(data);
}
END_TEST

START_TEST(test_oversized_and_malformed_prefix)
{
    size_t size;
    uint8_t *data = make_stream(1, &size);
    /* append a record claiming 100 MiB */
    uint8_t *big = malloc(size + 16);
    memcpy(big, data, size);
    size_t n = size + gyro_varint_encode(big + size, (uint64_t)100 << 20);
    int count;
    ck_assert_int_eq(read_all(big, n, NULL, &count), GYRO_ERR_LIMIT);
    ck_assert_int_eq(count, 1);
    ck_assert_ptr_nonnull(strstr(gyro_error_message(), "record 2 at byte"));
    ck_assert_ptr_nonnull(strstr(gyro_error_message(), "over the limit"));

    /* a smaller limit applies to ordinary records too */
    gyro_stream_reader_options opt = {.max_record = 8, .headerless_type = NULL};
    ck_assert_int_eq(read_all(data, size, &opt, &count), GYRO_ERR_LIMIT);

    /* an 11-byte varint */
    memcpy(big, data, size);
    memset(big + size, 0xff, 11);
    ck_assert_int_eq(read_all(big, size + 11, NULL, &count), GYRO_ERR_FORMAT);
    ck_assert_ptr_nonnull(strstr(gyro_error_message(), "malformed length prefix"));
    /* a claimed length within the limit but far beyond the data */
    n = size + gyro_varint_encode(big + size, (uint64_t)60 << 20);
    ck_assert_int_eq(read_all(big, n, NULL, &count), GYRO_ERR_FORMAT);
    ck_assert_ptr_nonnull(strstr(gyro_error_message(), "truncated"));
    free(big);
    free(data);
}
END_TEST

START_TEST(test_garbage_and_unpack_failure)
{
    /* plain text is not a gyro stream */
    const char *text = "hello world, this is not protobuf\n";
    int count;
    ck_assert_int_eq(read_all((const uint8_t *)text, strlen(text), NULL, &count), GYRO_ERR_FORMAT);

    /* random bytes never crash the reader, whatever they say */
    uint8_t junk[512];
    unsigned seed = 12345;
    for (int round = 0; round < 200; round++) {
        for (size_t i = 0; i < sizeof junk; i++) {
            seed = seed * 1103515245u + 12345u;
            junk[i] = (uint8_t)(seed >> 16);
        }
        size_t len = 1 + (seed % sizeof junk);
        gyro_status s = read_all(junk, len, NULL, &count);
        ck_assert(s != GYRO_OK || count >= 0);
    }

    /* a valid header followed by a record that is not a Document (bad wire type for field 1) */
    size_t size;
    uint8_t *data = make_stream(0, &size);
    uint8_t *bad = malloc(size + 8);
    memcpy(bad, data, size);
    bad[size] = 3;          /* length 3 */
    bad[size + 1] = 0x0f;   /* field 1, wire type 7: invalid */
    bad[size + 2] = 0x01;
    bad[size + 3] = 0x02;
    ck_assert_int_eq(read_all(bad, size + 4, NULL, &count), GYRO_ERR_FORMAT);
    ck_assert_ptr_nonnull(strstr(gyro_error_message(), "record 1 at byte"));
    ck_assert_ptr_nonnull(strstr(gyro_error_message(), "does not unpack"));
    free(bad);
    free(data);
}
END_TEST

/* Write a header record with the given fields into buf; returns its size. */
static size_t put_header(uint8_t *buf, const char *magic, uint32_t version, const char *type)
{
    Gyro__V1__StreamHeader h = GYRO__V1__STREAM_HEADER__INIT;
    h.magic = (char *)magic;
    h.version = version;
    h.message_type = (char *)type;
    size_t len = gyro__v1__stream_header__get_packed_size(&h);
    size_t n = gyro_varint_encode(buf, len);
    gyro__v1__stream_header__pack(&h, buf + n);
    return n + len;
}

START_TEST(test_headers)
{
    uint8_t buf[256];
    int count;
    size_t n = put_header(buf, "gyro", 2, "gyro.v1.Document");
    ck_assert_int_eq(read_all(buf, n, NULL, &count), GYRO_ERR_VERSION);
    ck_assert_ptr_nonnull(strstr(gyro_error_message(), "upgrade"));

    n = put_header(buf, "nope", 1, "gyro.v1.Document");
    ck_assert_int_eq(read_all(buf, n, NULL, &count), GYRO_ERR_FORMAT);
    ck_assert_ptr_nonnull(strstr(gyro_error_message(), "not a gyro stream"));

    /* the wrong record type */
    n = put_header(buf, "gyro", 1, "gyro.v1.Example");
    ck_assert_int_eq(read_all(buf, n, NULL, &count), GYRO_ERR_FORMAT);
    ck_assert_ptr_nonnull(strstr(gyro_error_message(), "holds gyro.v1.Example records"));

    /* empty input */
    ck_assert_int_eq(read_all(buf, 0, NULL, &count), GYRO_ERR_FORMAT);
    ck_assert_ptr_nonnull(strstr(gyro_error_message(), "empty input"));
}
END_TEST

START_TEST(test_headerless)
{
    /* two Documents without a header, read with headerless_type */
    uint8_t buf[256];
    size_t n = 0;
    for (int i = 0; i < 2; i++) {
        Gyro__V1__Document d = GYRO__V1__DOCUMENT__INIT;
        d.id = (uint64_t)i + 1;
        d.text = "x";
        size_t len = gyro__v1__document__get_packed_size(&d);
        n += gyro_varint_encode(buf + n, len);
        n += gyro__v1__document__pack(&d, buf + n);
    }
    int count;
    ck_assert_int_eq(read_all(buf, n, NULL, &count), GYRO_ERR_FORMAT);
    gyro_stream_reader_options opt = {.max_record = 0, .headerless_type = "gyro.v1.Document"};
    ck_assert_int_eq(read_all(buf, n, &opt, &count), GYRO_OK);
    ck_assert_int_eq(count, 2);
    /* a stream with a header is still read with the option given */
    size_t size;
    uint8_t *data = make_stream(3, &size);
    ck_assert_int_eq(read_all(data, size, &opt, &count), GYRO_OK);
    ck_assert_int_eq(count, 3);
    free(data);
    /* empty headerless input is an empty stream */
    ck_assert_int_eq(read_all(buf, 0, &opt, &count), GYRO_OK);
    ck_assert_int_eq(count, 0);
}
END_TEST

START_TEST(test_writer_limits_and_types)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    gyro_stream_writer *w;
    ck_assert_int_eq(gyro_stream_writer_open_file(fp, &gyro__v1__document__descriptor, NULL, &w), GYRO_OK);
    gyro_stream_writer_set_max_record(w, 16);
    Gyro__V1__Document d = GYRO__V1__DOCUMENT__INIT;
    d.text = "a text well over sixteen bytes long";
    ck_assert_int_eq(gyro_stream_write(w, &d.base), GYRO_ERR_LIMIT);
    d.text = "short";
    d.id = 1;
    ck_assert_int_eq(gyro_stream_write(w, &d.base), GYRO_OK);
    Gyro__V1__Example e = GYRO__V1__EXAMPLE__INIT;
    ck_assert_int_eq(gyro_stream_write(w, &e.base), GYRO_ERR_USAGE);
    ck_assert_uint_eq(gyro_stream_writer_count(w), 1);
    ck_assert_int_eq(gyro_stream_writer_close(w), GYRO_OK);
    fclose(fp);
    int count;
    ck_assert_int_eq(read_all((uint8_t *)buf, len, NULL, &count), GYRO_OK);
    ck_assert_int_eq(count, 1);
    free(buf);

    /* a path in a missing directory */
    ck_assert_int_eq(gyro_stream_writer_open_path("/nonexistent-dir/x.pb", &gyro__v1__document__descriptor, NULL, &w), GYRO_ERR_IO);
    gyro_stream_reader *r;
    ck_assert_int_eq(gyro_stream_reader_open_path("/nonexistent-dir/x.pb", NULL, &r), GYRO_ERR_IO);
}
END_TEST

START_TEST(test_type_table_and_varint)
{
    ck_assert_ptr_eq(gyro_stream_type_find("gyro.v1.Document"), &gyro__v1__document__descriptor);
    ck_assert_ptr_null(gyro_stream_type_find("gyro.v1.Nope"));
    ck_assert_ptr_null(gyro_stream_type_find(NULL));
    size_t i = 0;
    while (gyro_stream_type_at(i)) i++;
    ck_assert_int_ge(i, 20);
    uint8_t b[10];
    ck_assert_uint_eq(gyro_varint_encode(b, 0), 1);
    ck_assert_uint_eq(b[0], 0);
    ck_assert_uint_eq(gyro_varint_encode(b, 300), 2);
    ck_assert_uint_eq(b[0], 0xac);
    ck_assert_uint_eq(b[1], 0x02);
    ck_assert_uint_eq(gyro_varint_encode(b, UINT64_MAX), 10);
}
END_TEST


START_TEST(test_mutations_never_crash)
{
    /* flip, drop and insert bytes of a valid stream: the reader returns OK or a located error */
    size_t size;
    uint8_t *data = make_stream(6, &size);
    uint8_t *buf = malloc(size + 1);
    unsigned seed = 99;
    check_ids = 0;
    for (int round = 0; round < 3000; round++) {
        memcpy(buf, data, size);
        size_t len = size;
        for (int k = 0; k < 1 + round % 4; k++) {
            seed = seed * 1103515245u + 12345u;
            size_t at = (seed >> 8) % len;
            buf[at] ^= (uint8_t)(1u << ((seed >> 4) % 8));
        }
        if (round % 3 == 0) len -= (seed >> 12) % len;
        int count;
        gyro_status st = read_all(buf, len, NULL, &count);
        if (st != GYRO_OK) {
            const char *m = gyro_error_message();
            ck_assert_msg(strstr(m, "mem: record ") && strstr(m, " at byte "), "round %d: %s", round, m);
        }
    }
    check_ids = 1;
    free(buf);
    free(data);
}
END_TEST

START_TEST(test_json_out)
{
    Gyro__V1__EmbeddingTable t = GYRO__V1__EMBEDDING_TABLE__INIT;
    Gyro__V1__EmbeddingEntry e = GYRO__V1__EMBEDDING_ENTRY__INIT;
    Gyro__V1__EmbeddingEntry *entries[] = {&e};
    float v[] = {1.5f, 0.1f, NAN, -INFINITY, 0.0f};
    t.model = GYRO__V1__EMBEDDING_MODEL__POINCARE;
    t.curvature = 0.5;
    t.dim = 5;
    t.n_entries = 1;
    t.entries = entries;
    e.token = "\"学\"\\\n\x01\xff\xe2\x80\xa8";
    e.count = 18446744073709551615ull;
    e.n_vector = 5;
    e.vector = v;
    char *json;
    size_t len;
    ck_assert_int_eq(gyro_json_message_to_string(&t.base, NULL, &json, &len), GYRO_OK);
    ck_assert_str_eq(json, "{\"model\":\"POINCARE\",\"curvature\":0.5,\"dim\":5,\"entries\":[{\"token\":"
                           "\"\\\"学\\\"\\\\\\n\\u0001\\ufffd\\u2028\",\"count\":\"18446744073709551615\","
                           "\"vector\":[1.5,0.1,\"NaN\",\"-Infinity\",0]}]}");
    ck_assert_uint_eq(len, strlen(json));
    free(json);

    /* defaults left out, or written with emit_defaults */
    Gyro__V1__Document d = GYRO__V1__DOCUMENT__INIT;
    ck_assert_int_eq(gyro_json_message_to_string(&d.base, NULL, &json, NULL), GYRO_OK);
    ck_assert_str_eq(json, "{}");
    free(json);
    gyro_json_out_options o = {.emit_defaults = 1};
    ck_assert_int_eq(gyro_json_message_to_string(&d.base, &o, &json, NULL), GYRO_OK);
    ck_assert_str_eq(json, "{\"id\":\"0\",\"source\":\"\",\"line\":\"0\",\"original\":\"\",\"text\":\"\","
                           "\"chars\":[],\"repairs\":0}");
    free(json);

    /* nested messages and bools */
    Gyro__V1__NormalizeRequest nr = GYRO__V1__NORMALIZE_REQUEST__INIT;
    nr.case_fold = 1;
    ck_assert_int_eq(gyro_json_message_to_string(&nr.base, NULL, &json, NULL), GYRO_OK);
    ck_assert_str_eq(json, "{\"case_fold\":true}");
    free(json);
    Gyro__V1__ClassifyResponse cr = GYRO__V1__CLASSIFY_RESPONSE__INIT;
    Gyro__V1__Intent in = GYRO__V1__INTENT__INIT;
    Gyro__V1__Intent *ins[] = {&in};
    char *atoms[] = {"a", "b"};
    in.label = "a+b";
    in.probability = 0.25f;
    in.n_atoms = 2;
    in.atoms = atoms;
    cr.n_intents = 1;
    cr.intents = ins;
    ck_assert_int_eq(gyro_json_message_to_string(&cr.base, NULL, &json, NULL), GYRO_OK);
    ck_assert_str_eq(json, "{\"intents\":[{\"label\":\"a+b\",\"probability\":0.25,\"atoms\":[\"a\",\"b\"]}]}");
    free(json);
    ck_assert_int_eq(gyro_json_message_to_string(NULL, NULL, &json, NULL), GYRO_ERR_USAGE);
}
END_TEST

START_TEST(test_sniff_gives_back_the_peeked_bytes)
{
    size_t size;
    uint8_t *data = make_stream(3, &size);
    const char *text = "播放周杰伦的稻香\n";
    for (int k = 0; k < 3; k++) {  /* a stream, text, and a 2-byte input shorter than the peek */
        const uint8_t *in = k == 0 ? data : (const uint8_t *)text;
        size_t n = k == 0 ? size : k == 1 ? strlen(text) : 2;
        FILE *raw = fmemopen((void *)in, n, "rb");
        ck_assert_ptr_nonnull(raw);
        FILE *fp;
        int is_stream = -1;
        ck_assert_int_eq(gyro_stream_sniff(raw, "mem", &fp, &is_stream), GYRO_OK);
        ck_assert_int_eq(is_stream, k == 0);
        uint8_t *back = malloc(n + 1);
        ck_assert_uint_eq(fread(back, 1, n + 1, fp), n);   /* every byte, then EOF */
        ck_assert_mem_eq(back, in, n);
        free(back);
        fclose(fp);
        fclose(raw);
    }
    ck_assert(!gyro_stream_looks_like((const uint8_t *)"\x06\x0a\x04gyr", 7));
    free(data);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("stream");
    TCase *tc = tcase_create("stream");
    tcase_add_test(tc, test_round_trip_path);
    tcase_add_test(tc, test_sniff_gives_back_the_peeked_bytes);
    tcase_add_test(tc, test_round_trip_memory_and_empty_records);
    tcase_add_test(tc, test_truncation_at_every_byte);
    tcase_add_test(tc, test_oversized_and_malformed_prefix);
    tcase_add_test(tc, test_garbage_and_unpack_failure);
    tcase_add_test(tc, test_headers);
    tcase_add_test(tc, test_headerless);
    tcase_add_test(tc, test_writer_limits_and_types);
    tcase_add_test(tc, test_type_table_and_varint);
    tcase_add_test(tc, test_mutations_never_crash);
    tcase_add_test(tc, test_json_out);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

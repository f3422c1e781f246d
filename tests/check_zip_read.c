/* check_zip_read.c — Check suite for pipeline/zip_read: stored and deflated members of archives
 * built here with zlib, the shared CrossWOZ archive, and corrupt archives (every truncation,
 * byte flips, wrong CRC, wrong sizes, unsupported features) that must fail cleanly. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "models/core/rng.h"
#include "pipeline/zip_read.h"

typedef struct member { const char *name; const char *data; int method; } member;

static void put16(unsigned char **p, unsigned v) { (*p)[0] = (unsigned char)v; (*p)[1] = (unsigned char)(v >> 8); *p += 2; }
static void put32(unsigned char **p, unsigned long v)
{
    for (int i = 0; i < 4; i++) (*p)[i] = (unsigned char)(v >> (8 * i));
    *p += 4;
}

/* Build a ZIP archive of the members into buf (large enough); returns its length. */
static size_t build_zip(unsigned char *buf, const member *m, int n)
{
    unsigned char *p = buf;
    unsigned long offs[8], csz[8], crcs[8];
    unsigned char *cdata[8];
    for (int i = 0; i < n; i++) {
        size_t len = strlen(m[i].data);
        crcs[i] = crc32(crc32(0L, Z_NULL, 0), (const Bytef *)m[i].data, (uInt)len);
        cdata[i] = malloc(len + 64);
        if (m[i].method == 8) {
            z_stream zs;
            memset(&zs, 0, sizeof zs);
            deflateInit2(&zs, 9, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
            zs.next_in = (Bytef *)m[i].data;
            zs.avail_in = (uInt)len;
            zs.next_out = cdata[i];
            zs.avail_out = (uInt)(len + 64);
            ck_assert_int_eq(deflate(&zs, Z_FINISH), Z_STREAM_END);
            csz[i] = zs.total_out;
            deflateEnd(&zs);
        } else {
            memcpy(cdata[i], m[i].data, len);
            csz[i] = len;
        }
        offs[i] = (unsigned long)(p - buf);
        put32(&p, 0x04034b50); put16(&p, 20); put16(&p, 0); put16(&p, (unsigned)m[i].method);
        put16(&p, 0); put16(&p, 0); put32(&p, crcs[i]); put32(&p, csz[i]); put32(&p, len);
        put16(&p, (unsigned)strlen(m[i].name)); put16(&p, 0);
        memcpy(p, m[i].name, strlen(m[i].name)); p += strlen(m[i].name);
        memcpy(p, cdata[i], csz[i]); p += csz[i];
    }
    unsigned long cd = (unsigned long)(p - buf);
    for (int i = 0; i < n; i++) {
        size_t len = strlen(m[i].data);
        put32(&p, 0x02014b50); put16(&p, 20); put16(&p, 20); put16(&p, 0);
        put16(&p, (unsigned)m[i].method); put16(&p, 0); put16(&p, 0); put32(&p, crcs[i]);
        put32(&p, csz[i]); put32(&p, len); put16(&p, (unsigned)strlen(m[i].name)); put16(&p, 0);
        put16(&p, 0); put16(&p, 0); put16(&p, 0); put32(&p, 0); put32(&p, offs[i]);
        memcpy(p, m[i].name, strlen(m[i].name)); p += strlen(m[i].name);
        free(cdata[i]);
    }
    unsigned long cd_size = (unsigned long)(p - buf) - cd;
    put32(&p, 0x06054b50); put16(&p, 0); put16(&p, 0); put16(&p, (unsigned)n); put16(&p, (unsigned)n);
    put32(&p, cd_size); put32(&p, cd); put16(&p, 0);
    return (size_t)(p - buf);
}

static const member two[] = {
    {"a.txt", "hello hello hello hello hello", 0},
    {"dir/b.json", "{\"text\": \"播放音乐\", \"label\": \"music.play\"} {\"text\": \"播放音乐\"}", 8},
};

START_TEST(test_roundtrip)
{
    unsigned char buf[4096];
    size_t n = build_zip(buf, two, 2);
    gyro_zip *z;
    ck_assert_int_eq(gyro_zip_open_memory(buf, n, "mem.zip", &z), GYRO_OK);
    ck_assert_uint_eq(gyro_zip_count(z), 2);
    ck_assert_str_eq(gyro_zip_name(z, 1), "dir/b.json");
    ck_assert_int_eq(gyro_zip_find(z, "a.txt"), 0);
    ck_assert_int_eq(gyro_zip_find(z, "c"), -1);
    ck_assert_ptr_null(gyro_zip_name(z, 2));
    for (int i = 0; i < 2; i++) {
        char *data;
        size_t len;
        ck_assert_int_eq(gyro_zip_extract(z, (size_t)i, &data, &len), GYRO_OK);
        ck_assert_uint_eq(len, strlen(two[i].data));
        ck_assert_uint_eq(gyro_zip_size(z, (size_t)i), len);
        ck_assert_str_eq(data, two[i].data);
        free(data);
    }
    char *data;
    size_t len;
    ck_assert_int_eq(gyro_zip_extract(z, 2, &data, &len), GYRO_ERR_USAGE);
    ck_assert_ptr_null(data);
    gyro_zip_free(z);
    gyro_zip_free(NULL);
}
END_TEST

START_TEST(test_file_and_shared_archive)
{
    char path[] = "/tmp/gyro-zip-XXXXXX";
    int fd = mkstemp(path);
    unsigned char buf[4096];
    size_t n = build_zip(buf, two, 2);
    ck_assert_int_eq(write(fd, buf, n), (ssize_t)n);
    close(fd);
    gyro_zip *z;
    ck_assert_int_eq(gyro_zip_open(path, &z), GYRO_OK);
    ck_assert_uint_eq(gyro_zip_count(z), 2);
    gyro_zip_free(z);
    unlink(path);
    ck_assert_int_eq(gyro_zip_open(path, &z), GYRO_ERR_IO);
    ck_assert_ptr_null(z);

    const char *shared = "../shared/corpora/intent/crosswoz/val.json.zip";
    if (access(shared, R_OK) != 0) return;   /* the shared corpora are optional for this test */
    ck_assert_int_eq(gyro_zip_open(shared, &z), GYRO_OK);
    long i = gyro_zip_find(z, "val.json");
    ck_assert_int_ge(i, 0);
    char *data;
    size_t len;
    ck_assert_int_eq(gyro_zip_extract(z, (size_t)i, &data, &len), GYRO_OK);  /* CRC checked */
    ck_assert_uint_eq(len, 38909408);
    ck_assert_int_eq(data[0], '{');
    free(data);
    gyro_zip_free(z);
}
END_TEST

/* open + extract everything; returns the first error status or GYRO_OK */
static gyro_status try_all(const unsigned char *buf, size_t n)
{
    unsigned char *copy = malloc(n ? n : 1);   /* exact-size heap copy: ASan sees over-reads */
    memcpy(copy, buf, n);
    gyro_zip *z;
    gyro_status st = gyro_zip_open_memory(copy, n, "bad.zip", &z);
    free(copy);
    if (st != GYRO_OK) return st;
    for (size_t i = 0; i < gyro_zip_count(z) && st == GYRO_OK; i++) {
        char *data;
        size_t len;
        st = gyro_zip_extract(z, i, &data, &len);
        free(data);
    }
    gyro_zip_free(z);
    return st;
}

START_TEST(test_corrupt)
{
    unsigned char buf[4096];
    size_t n = build_zip(buf, two, 2);
    /* every truncation fails (the end record moves or disappears) */
    for (size_t cut = 0; cut < n; cut++) {
        gyro_status st = try_all(buf, cut);
        ck_assert_msg(st == GYRO_ERR_FORMAT, "cut %zu: %d %s", cut, st, gyro_error_message());
        ck_assert_ptr_nonnull(strstr(gyro_error_message(), "bad.zip"));
    }
    /* flip every byte: must never crash; flips inside member data must be detected */
    unsigned char m[4096];
    int detected = 0;
    for (size_t i = 0; i < n; i++) {
        memcpy(m, buf, n);
        m[i] ^= 0x5A;
        gyro_status st = try_all(m, n);
        ck_assert(st == GYRO_OK || st == GYRO_ERR_FORMAT || st == GYRO_ERR_LIMIT ||
                  st == GYRO_ERR_NOMEM);
        if (st != GYRO_OK) detected++;
    }
    ck_assert_int_gt(detected, (int)n / 2);

    /* random multi-byte garbage */
    gyro_rng rng;
    gyro_rng_seed(&rng, 3);
    for (int it = 0; it < 3000; it++) {
        memcpy(m, buf, n);
        for (int k = 0; k < 4; k++) m[gyro_rng_below(&rng, (uint32_t)n)] = (unsigned char)gyro_rng_next(&rng);
        (void)try_all(m, n);
    }
}
END_TEST

START_TEST(test_unsupported)
{
    unsigned char buf[4096];
    size_t n = build_zip(buf, two, 2);
    size_t cd = n - 22;
    /* find the second central header and patch its fields */
    unsigned char m[4096];
    size_t h = 0;
    for (size_t i = 0; i + 4 <= cd; i++)
        if (buf[i] == 'P' && buf[i + 1] == 'K' && buf[i + 2] == 1 && buf[i + 3] == 2) h = i;
    ck_assert_uint_gt(h, 0);
    memcpy(m, buf, n);
    m[h + 10] = 12;                                   /* method 12 = bzip2 */
    ck_assert_int_eq(try_all(m, n), GYRO_ERR_FORMAT);
    ck_assert_ptr_nonnull(strstr(gyro_error_message(), "method 12"));
    memcpy(m, buf, n);
    m[h + 8] |= 1;                                    /* encrypted */
    ck_assert_int_eq(try_all(m, n), GYRO_ERR_FORMAT);
    ck_assert_ptr_nonnull(strstr(gyro_error_message(), "encrypted"));
    memcpy(m, buf, n);
    m[h + 16] ^= 1;                                   /* CRC */
    ck_assert_int_eq(try_all(m, n), GYRO_ERR_FORMAT);
    ck_assert_ptr_nonnull(strstr(gyro_error_message(), "CRC-32"));
    memcpy(m, buf, n);
    m[h + 24] += 1;                                   /* uncompressed size one too big */
    ck_assert_int_eq(try_all(m, n), GYRO_ERR_FORMAT);
    memcpy(m, buf, n);
    memset(m + h + 24, 0xFF, 4);                      /* ZIP64 marker */
    ck_assert_int_eq(try_all(m, n), GYRO_ERR_FORMAT);
    ck_assert_ptr_nonnull(strstr(gyro_error_message(), "ZIP64"));
    ck_assert_int_eq(try_all((const unsigned char *)"not a zip at all, just some text", 32),
                     GYRO_ERR_FORMAT);
}
END_TEST

static long vm_peak_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmPeak: %ld kB", &kb) == 1) break;
    if (f) fclose(f);
    return kb;
}

/* A deflated member recording 1 GiB uncompressed over a few compressed bytes (found by
 * fuzz_zip): refused before that much is allocated. */
START_TEST(test_size_claim_refused)
{
    unsigned char buf[4096];
    size_t n = build_zip(buf, two, 2);
    size_t cd = n - 22, h = 0, lh = 0;
    for (size_t i = 0; i + 4 <= cd; i++) {
        if (buf[i] == 'P' && buf[i + 1] == 'K' && buf[i + 2] == 1 && buf[i + 3] == 2) h = i;
        if (buf[i] == 'P' && buf[i + 1] == 'K' && buf[i + 2] == 3 && buf[i + 3] == 4) lh = i;
    }
    ck_assert_uint_gt(h, 0);
    unsigned char *p = buf + h + 24;   /* the deflated member's uncompressed size */
    put32(&p, (1ul << 30) - 1);
    p = buf + lh + 22;
    put32(&p, (1ul << 30) - 1);
    long before = vm_peak_kb();
    ck_assert_int_eq(try_all(buf, n), GYRO_ERR_FORMAT);
    ck_assert_msg(strstr(gyro_error_message(), "cannot inflate"), "%s", gyro_error_message());
    ck_assert_msg(vm_peak_kb() - before < 256 * 1024, "VmPeak grew by %ld KiB", vm_peak_kb() - before);
}
END_TEST

static Suite *zip_suite(void)
{
    Suite *s = suite_create("zip_read");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_roundtrip);
    tcase_add_test(tc, test_file_and_shared_archive);
    tcase_add_test(tc, test_corrupt);
    tcase_add_test(tc, test_unsupported);
    tcase_add_test(tc, test_size_claim_refused);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(zip_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

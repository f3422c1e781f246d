/* check_import.c — Check suite for pipeline/import: the TSV, NLPCC, SMP, CrossWOZ, fastText,
 * CoNLL and JSON-lines readers on small files written here (CRLF, BOMs, blank lines, headers,
 * composites), every kind of bad record in lenient and strict mode, malformed files, a CrossWOZ
 * archive read from a ZIP, and the tsv-or-fasttext choice over an open stream. */
#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "pipeline/import.h"

/* ---- helpers ---------------------------------------------------------------------------------- */

#define MAXEX 64

typedef struct got {
    int n;
    char text[MAXEX][128], label[MAXEX][128], atoms[MAXEX][128], session[MAXEX][64], source[MAXEX][64];
    unsigned long line[MAXEX];
    int warnings;
    char last_warning[512];
} got;

static gyro_status sink(void *ctx, const Gyro__V1__Example *e)
{
    got *g = ctx;
    ck_assert_int_lt(g->n, MAXEX);
    snprintf(g->text[g->n], 128, "%s", e->text);
    snprintf(g->label[g->n], 128, "%s", e->label);
    g->atoms[g->n][0] = '\0';
    for (size_t i = 0; i < e->n_labels; i++) {
        if (i) strcat(g->atoms[g->n], "|");
        strcat(g->atoms[g->n], e->labels[i]);
    }
    snprintf(g->session[g->n], 64, "%s", e->session);
    snprintf(g->source[g->n], 64, "%s", e->source);
    g->line[g->n] = (unsigned long)e->line;
    g->n++;
    return GYRO_OK;
}

static void warn(void *ctx, const char *msg)
{
    got *g = ctx;
    g->warnings++;
    snprintf(g->last_warning, sizeof g->last_warning, "%s", msg);
}

static char tmpdir[64];

static const char *write_file(const char *name, const void *data, size_t len)
{
    static char path[256];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(data, 1, len, f), len);
    fclose(f);
    return path;
}

static gyro_status run(gyro_import_format fmt, const char *path, int strict, got *g,
                       gyro_import_stats *stats)
{
    memset(g, 0, sizeof *g);
    memset(stats, 0, sizeof *stats);
    gyro_import_options opt = {.strict = strict, .warn = warn, .warn_ctx = g};
    gyro_error_clear();
    return gyro_import_file(fmt, path, &opt, sink, g, stats);
}

static void setup(void)
{
    /* the fuzz test rewrites a file 1,600 times: prefer a memory file system */
    const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(tmpdir, sizeof tmpdir, "%s/gyro-import-XXXXXX", base);
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    ck_assert_int_eq(system(cmd), 0);
}

/* ---- tests ------------------------------------------------------------------------------------ */

START_TEST(test_format_names)
{
    gyro_import_format f;
    ck_assert_int_eq(gyro_import_format_parse("crosswoz", &f), 0);
    ck_assert_int_eq(f, GYRO_IMPORT_CROSSWOZ);
    ck_assert_str_eq(gyro_import_format_name(GYRO_IMPORT_SMP), "smp");
    ck_assert_int_eq(gyro_import_format_parse("csv", &f), -1);
    ck_assert_int_eq(gyro_import_format_parse(NULL, &f), -1);
}
END_TEST

START_TEST(test_tsv)
{
    const char data[] = "\xEF\xBB\xBFtext\tlabel\r\n"
                        "播放音乐\tmusic.play\r\n"
                        "\r\n"
                        "  查询歌曲并播放 \tquery_song + play_song\n"
                        "\xEF\xBB\xBF下一首\t\xEF\xBB\xBFmusic.next\ts7\n"
                        "no trailing newline\tOTHERS";
    const char *path = write_file("a.tsv", data, sizeof data - 1);
    got g;
    gyro_import_stats st;
    ck_assert_int_eq(run(GYRO_IMPORT_TSV, path, 1, &g, &st), GYRO_OK);
    ck_assert_int_eq(g.n, 4);
    ck_assert_uint_eq(st.examples, 4);
    ck_assert_uint_eq(st.ignored, 1);     /* header */
    ck_assert_uint_eq(st.blank, 1);
    ck_assert_uint_eq(st.composite, 1);
    ck_assert_str_eq(g.text[0], "播放音乐");
    ck_assert_str_eq(g.label[0], "music.play");
    ck_assert_str_eq(g.session[0], "L2");
    ck_assert_uint_eq(g.line[0], 2);
    ck_assert_str_eq(g.source[0], "tsv:a.tsv");
    ck_assert_str_eq(g.text[1], "查询歌曲并播放");
    ck_assert_str_eq(g.label[1], "query_song+play_song");
    ck_assert_str_eq(g.atoms[1], "play_song|query_song");
    ck_assert_str_eq(g.text[2], "下一首");        /* BOM inside the field dropped */
    ck_assert_str_eq(g.session[2], "s7");
    ck_assert_str_eq(g.label[3], "OTHERS");
    ck_assert_uint_eq(g.line[3], 6);
}
END_TEST

START_TEST(test_tsv_bad_records)
{
    static const struct { const char *line; const char *why; } bad[] = {
        {"only one column", "expected 2 or 3"},
        {"a\tb\tc\td", "expected 2 or 3"},
        {"a\tb\tc\td\te\tf\tg\th\ti\tj", "found more than 8"},
        {"text\ta++b", "bad label"},
        {"text\t", "bad label: empty label"},
        {"text\tmusic play", "whitespace"},
        {"   \tmusic.play", "empty text"},
        {"\xff\xfe bad\tmusic.play", "invalid UTF-8 in the text at byte 0"},
        {"ok\tmusic.play\t\xc3", "invalid UTF-8 in the session"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char data[256];
        int n = snprintf(data, sizeof data, "好的\tOTHERS\n%s\n再见\tOTHERS\n", bad[i].line);
        const char *path = write_file("b.tsv", data, (size_t)n);
        got g;
        gyro_import_stats st;
        /* lenient: skipped with a located warning, the others still imported */
        ck_assert_int_eq(run(GYRO_IMPORT_TSV, path, 0, &g, &st), GYRO_OK);
        ck_assert_int_eq(g.n, 2);
        ck_assert_uint_eq(st.bad, 1);
        ck_assert_int_eq(g.warnings, 1);
        ck_assert_msg(strstr(g.last_warning, "b.tsv:2: ") && strstr(g.last_warning, bad[i].why),
                      "case %zu: '%s'", i, g.last_warning);
        /* strict: the import stops there with the same message */
        ck_assert_int_eq(run(GYRO_IMPORT_TSV, path, 1, &g, &st), GYRO_ERR_DATA);
        ck_assert_int_eq(g.n, 1);
        ck_assert_ptr_nonnull(strstr(gyro_error_message(), "b.tsv:2: "));
    }
    /* NUL byte in a line */
    const char nul[] = "好的\tOTHERS\nx\0y\tOTHERS\n";
    const char *path = write_file("nul.tsv", nul, sizeof nul - 1);
    got g;
    gyro_import_stats st;
    ck_assert_int_eq(run(GYRO_IMPORT_TSV, path, 0, &g, &st), GYRO_OK);
    ck_assert_int_eq(g.n, 1);
    ck_assert_ptr_nonnull(strstr(g.last_warning, "NUL byte"));
    /* missing file */
    ck_assert_int_eq(run(GYRO_IMPORT_TSV, "/nonexistent/x.tsv", 0, &g, &st), GYRO_ERR_IO);
}
END_TEST

START_TEST(test_nlpcc)
{
    const char data[] = "11\t播放周杰伦的歌\tmusic.play\t播放<singer>周杰伦</singer>的歌\r\n"
                        "11\t下一首\tmusic.next\t下一首\r\n"
                        "\r\n"
                        "22\t导航到北京\tnavigation.navigation\n"
                        "22\t\tOTHERS\t\n"
                        "\n"
                        "33\t取消\tnavigation.cancel_navigation\tx\ty\n"
                        "\t没有会话\tOTHERS\tx\n";
    const char *path = write_file("corpus.train.txt", data, sizeof data - 1);
    got g;
    gyro_import_stats st;
    ck_assert_int_eq(run(GYRO_IMPORT_NLPCC, path, 0, &g, &st), GYRO_OK);
    ck_assert_int_eq(g.n, 3);
    ck_assert_uint_eq(st.bad, 3);
    ck_assert_uint_eq(st.blank, 2);
    ck_assert_str_eq(g.session[0], "11");
    ck_assert_str_eq(g.text[1], "下一首");
    ck_assert_str_eq(g.label[2], "navigation.navigation");
    ck_assert_str_eq(g.session[2], "22");
    ck_assert_uint_eq(g.line[2], 4);
    ck_assert_str_eq(g.source[0], "nlpcc:corpus.train.txt");
    ck_assert_ptr_nonnull(strstr(g.last_warning, "corpus.train.txt:8: empty session id"));
    ck_assert_int_eq(run(GYRO_IMPORT_NLPCC, path, 1, &g, &st), GYRO_ERR_DATA);
    ck_assert_ptr_nonnull(strstr(gyro_error_message(), "corpus.train.txt:5: empty text"));
}
END_TEST

START_TEST(test_smp)
{
    const char data[] = "\xEF\xBB\xBF[\n"
                        "  {\"text\": \"打开uc\", \"domain\": \"app\", \"intent\": \"LAUNCH\", \"slots\": {}},\n"
                        "  {\"text\": \"你好\", \"domain\": \"chat\", \"intent\": null},\n"
                        "  {\"text\": \"空\", \"domain\": \"chat\", \"intent\": \"\"},\n"
                        "  {\"text\": 5, \"domain\": \"app\", \"intent\": \"LAUNCH\"},\n"
                        "  {\"text\": \"x\", \"intent\": \"LAUNCH\"},\n"
                        "  {\"text\": \"x\", \"domain\": \"app\", \"intent\": 3},\n"
                        "  {\"text\": \"x\", \"domain\": \"a.\", \"intent\": \"B\"},\n"
                        "  [1],\n"
                        "  {\"text\": \"a\\u0000b\", \"domain\": \"app\", \"intent\": \"LAUNCH\"},\n"
                        "  {\"text\": \"x\", \"domain\": \"app\", \"intent\": \"\\u0000L\"},\n"
                        "  {\"text\": \"\\u64ad\\u653e\", \"domain\": \"music\", \"intent\": \"PLAY\"}\n"
                        "]\n";
    const char *path = write_file("2020train.json", data, sizeof data - 1);
    got g;
    gyro_import_stats st;
    ck_assert_int_eq(run(GYRO_IMPORT_SMP, path, 0, &g, &st), GYRO_OK);
    ck_assert_int_eq(g.n, 4);
    ck_assert_uint_eq(st.bad, 7);
    ck_assert_str_eq(g.label[0], "app.LAUNCH");
    ck_assert_str_eq(g.session[0], "r1");
    ck_assert_uint_eq(g.line[0], 2);
    ck_assert_str_eq(g.label[1], "chat");
    ck_assert_str_eq(g.label[2], "chat");
    ck_assert_str_eq(g.text[3], "播放");
    ck_assert_str_eq(g.label[3], "music.PLAY");
    ck_assert_str_eq(g.session[3], "r11");
    ck_assert_ptr_nonnull(strstr(g.last_warning, "2020train.json:11: record 10: NUL character in the label"));
    ck_assert_int_eq(run(GYRO_IMPORT_SMP, path, 1, &g, &st), GYRO_ERR_DATA);
    ck_assert_ptr_nonnull(strstr(gyro_error_message(), "2020train.json:5: record 4: \"text\" is number"));

    /* not an array; malformed JSON: fatal in either mode, located */
    path = write_file("obj.json", "{\"a\": 1}", 8);
    ck_assert_int_eq(run(GYRO_IMPORT_SMP, path, 0, &g, &st), GYRO_ERR_DATA);
    ck_assert_ptr_nonnull(strstr(gyro_error_message(), "expected a JSON array"));
    const char *broken = "[\n {\"text\": \"x\",,}]";
    path = write_file("broken.json", broken, strlen(broken));
    ck_assert_int_eq(run(GYRO_IMPORT_SMP, path, 0, &g, &st), GYRO_ERR_DATA);
    ck_assert_ptr_nonnull(strstr(gyro_error_message(), "broken.json:2:15:"));
}
END_TEST

static const char crosswoz_json[] =
    "{\n"
    " \"7\": {\"messages\": [\n"
    "  {\"content\": \"你好，找一家酒店\", \"role\": \"usr\", \"dialog_act\": "
    "[[\"Request\", \"酒店\", \"名称\", \"\"], [\"General\", \"greet\", \"none\", \"none\"], "
    "[\"Inform\", \"酒店\", \"价格\", \"400\"], [\"Request\", \"酒店\", \"地址\", \"\"]]},\n"
    "  {\"content\": \"好的\", \"role\": \"sys\", \"dialog_act\": []},\n"
    "  {\"content\": \"谢谢\", \"role\": \"usr\", \"dialog_act\": [[\"General\", \"thank\", \"none\", \"none\"]]},\n"
    "  {\"content\": \"嗯\", \"role\": \"usr\", \"dialog_act\": []},\n"
    "  {\"content\": \"坏\", \"role\": \"usr\", \"dialog_act\": [[\"Inform\", \"a+b\", \"x\", \"y\"]]},\n"
    "  {\"content\": \"坏\", \"role\": \"usr\", \"dialog_act\": [\"Inform\"]}\n"
    " ]},\n"
    " \"8\": {\"goal\": []},\n"
    " \"9\": {\"messages\": [{\"content\": \"地铁站\", \"role\": \"usr\", \"dialog_act\": "
    "[[\"Request\", \"地铁\", \"名称\", \"\"]]}]}\n"
    "}\n";

static void check_crosswoz(const got *g, const gyro_import_stats *st)
{
    ck_assert_int_eq(g->n, 3);
    ck_assert_uint_eq(st->bad, 4);
    ck_assert_uint_eq(st->ignored, 1);   /* the system turn */
    ck_assert_uint_eq(st->composite, 1);
    ck_assert_str_eq(g->label[0], "General.greet+Inform.酒店+Request.酒店");
    ck_assert_str_eq(g->atoms[0], "General.greet|Inform.酒店|Request.酒店");
    ck_assert_str_eq(g->session[0], "7");
    ck_assert_uint_eq(g->line[0], 3);
    ck_assert_str_eq(g->label[1], "General.thank");
    ck_assert_str_eq(g->label[2], "Request.地铁");
    ck_assert_str_eq(g->session[2], "9");
}

START_TEST(test_crosswoz_json)
{
    const char *path = write_file("val.json", crosswoz_json, sizeof crosswoz_json - 1);
    got g;
    gyro_import_stats st;
    ck_assert_int_eq(run(GYRO_IMPORT_CROSSWOZ, path, 0, &g, &st), GYRO_OK);
    check_crosswoz(&g, &st);
    ck_assert_int_eq(run(GYRO_IMPORT_CROSSWOZ, path, 1, &g, &st), GYRO_ERR_DATA);
    ck_assert_ptr_nonnull(strstr(gyro_error_message(), "val.json:6: dialogue 7: user turn with no dialogue act"));
    path = write_file("arr.json", "[]", 2);
    ck_assert_int_eq(run(GYRO_IMPORT_CROSSWOZ, path, 0, &g, &st), GYRO_ERR_DATA);
    ck_assert_ptr_nonnull(strstr(gyro_error_message(), "expected a JSON object"));
}
END_TEST

static void put16(unsigned char **p, unsigned v) { (*p)[0] = (unsigned char)v; (*p)[1] = (unsigned char)(v >> 8); *p += 2; }
static void put32(unsigned char **p, unsigned long v)
{
    for (int i = 0; i < 4; i++) (*p)[i] = (unsigned char)(v >> (8 * i));
    *p += 4;
}

/* A one-member stored ZIP archive. */
static size_t stored_zip(unsigned char *buf, const char *name, const char *data, size_t len)
{
    unsigned char *p = buf;
    unsigned long crc = crc32(crc32(0L, Z_NULL, 0), (const Bytef *)data, (uInt)len);
    size_t nl = strlen(name);
    put32(&p, 0x04034b50); put16(&p, 20); put16(&p, 0); put16(&p, 0); put16(&p, 0); put16(&p, 0);
    put32(&p, crc); put32(&p, len); put32(&p, len); put16(&p, (unsigned)nl); put16(&p, 0);
    memcpy(p, name, nl); p += nl;
    memcpy(p, data, len); p += len;
    unsigned long cd = (unsigned long)(p - buf);
    put32(&p, 0x02014b50); put16(&p, 20); put16(&p, 20); put16(&p, 0); put16(&p, 0); put16(&p, 0);
    put16(&p, 0); put32(&p, crc); put32(&p, len); put32(&p, len); put16(&p, (unsigned)nl);
    put16(&p, 0); put16(&p, 0); put16(&p, 0); put16(&p, 0); put32(&p, 0); put32(&p, 0);
    memcpy(p, name, nl); p += nl;
    unsigned long cds = (unsigned long)(p - buf) - cd;
    put32(&p, 0x06054b50); put16(&p, 0); put16(&p, 0); put16(&p, 1); put16(&p, 1);
    put32(&p, cds); put32(&p, cd); put16(&p, 0);
    return (size_t)(p - buf);
}

START_TEST(test_crosswoz_zip)
{
    unsigned char buf[8192];
    size_t n = stored_zip(buf, "val.json", crosswoz_json, sizeof crosswoz_json - 1);
    const char *path = write_file("val.json.zip", buf, n);
    got g;
    gyro_import_stats st;
    ck_assert_int_eq(run(GYRO_IMPORT_CROSSWOZ, path, 0, &g, &st), GYRO_OK);
    check_crosswoz(&g, &st);
    ck_assert_str_eq(g.source[0], "crosswoz:val.json.zip:val.json");
    ck_assert_ptr_nonnull(strstr(g.last_warning, "val.json.zip:val.json:10: dialogue 8: no \"messages\""));
    /* detected by signature without the .zip suffix */
    path = write_file("archive.bin", buf, n);
    ck_assert_int_eq(run(GYRO_IMPORT_CROSSWOZ, path, 0, &g, &st), GYRO_OK);
    ck_assert_int_eq(g.n, 3);
    /* an archive without JSON, and a truncated archive */
    n = stored_zip(buf, "readme.txt", "hello", 5);
    path = write_file("nojson.zip", buf, n);
    ck_assert_int_eq(run(GYRO_IMPORT_CROSSWOZ, path, 0, &g, &st), GYRO_ERR_FORMAT);
    ck_assert_ptr_nonnull(strstr(gyro_error_message(), "no .json member"));
    path = write_file("cut.zip", buf, n - 10);
    ck_assert_int_eq(run(GYRO_IMPORT_CROSSWOZ, path, 0, &g, &st), GYRO_ERR_FORMAT);
}
END_TEST

static gyro_status failing_sink(void *ctx, const Gyro__V1__Example *e)
{
    (void)e;
    int *calls = ctx;
    return ++*calls == 2 ? gyro_error_set(GYRO_ERR_IO, "disk full") : GYRO_OK;
}

START_TEST(test_sink_error_stops)
{
    const char data[] = "a\tx\nb\ty\nc\tz\n";
    const char *path = write_file("s.tsv", data, sizeof data - 1);
    int calls = 0;
    gyro_import_stats st = {0};
    ck_assert_int_eq(gyro_import_file(GYRO_IMPORT_TSV, path, NULL, failing_sink, &calls, &st),
                     GYRO_ERR_IO);
    ck_assert_int_eq(calls, 2);
    ck_assert_uint_eq(st.examples, 1);
    /* stats accumulate over calls; NULL opt and stats are accepted */
    calls = -100;
    ck_assert_int_eq(gyro_import_file(GYRO_IMPORT_TSV, path, NULL, failing_sink, &calls, &st), GYRO_OK);
    ck_assert_uint_eq(st.examples, 4);
    ck_assert_int_eq(gyro_import_file(GYRO_IMPORT_TSV, path, NULL, NULL, NULL, NULL), GYRO_OK);
}
END_TEST


/* ---- fuzz ------------------------------------------------------------------------------------- */

#include "models/core/rng.h"
#include "models/text/labels.h"
#include "models/text/utf8.h"

/* every example that reaches the sink must satisfy the importer's promises (plain checks, not
 * ck_assert: Check records every passing assertion, which would dominate this loop) */
#define FUZZ_CHECK(cond) do { if (!(cond)) ck_abort_msg("fuzz: %s fails for '%s'", #cond, e->text); } while (0)
static gyro_status checking_sink(void *ctx, const Gyro__V1__Example *e)
{
    int *n = ctx;
    size_t len = strlen(e->text);
    FUZZ_CHECK(len > 0);
    FUZZ_CHECK(gyro_utf8_find_invalid((const uint8_t *)e->text, len) == len);
    FUZZ_CHECK(e->text[0] != ' ' && e->text[len - 1] != ' ');
    gyro_label l;
    FUZZ_CHECK(gyro_label_parse(e->label, &l) == GYRO_OK);
    FUZZ_CHECK(strcmp(l.name, e->label) == 0);
    FUZZ_CHECK((size_t)l.n_atoms == e->n_labels);
    for (int i = 0; i < l.n_atoms; i++) FUZZ_CHECK(strcmp(l.atoms[i], e->labels[i]) == 0);
    gyro_label_free(&l);
    FUZZ_CHECK(gyro_utf8_find_invalid((const uint8_t *)e->session, strlen(e->session)) ==
               strlen(e->session));
    (*n)++;
    return GYRO_OK;
}

static void fuzz_format(gyro_import_format fmt, const char *name, const char *seed_text, int iters,
                        int min_examples)
{
    static const char alphabet[] = "\t\n\r\"{}[],:+. \\\xff\xe4\xb8\xad\xef\xbb\xbf" "abc0";
    size_t len = strlen(seed_text);
    char *buf = malloc(len + 64);
    gyro_rng r;
    gyro_rng_seed(&r, 99 + (uint64_t)fmt);
    int total = 0;
    for (int it = 0; it < iters; it++) {
        memcpy(buf, seed_text, len);
        size_t n = len;
        int edits = 1 + (int)gyro_rng_below(&r, 4);
        for (int e = 0; e < edits && n > 0; e++) {
            size_t pos = gyro_rng_below(&r, (uint32_t)n);
            char c = gyro_rng_below(&r, 8) == 0 ? '\0' : alphabet[gyro_rng_below(&r, sizeof alphabet - 1)];
            switch (gyro_rng_below(&r, 4)) {
            case 0: buf[pos] = c; break;
            case 1: n = pos; break;
            case 2: memmove(buf + pos, buf + pos + 1, n - pos - 1); n--; break;
            default:
                if (n + 1 < len + 64) {
                    memmove(buf + pos + 1, buf + pos, n - pos);
                    buf[pos] = c;
                    n++;
                }
            }
        }
        const char *path = write_file(name, buf, n);
        for (int strict = 0; strict < 2; strict++) {
            int got_n = 0;
            gyro_import_options opt = {.strict = strict};
            gyro_import_stats st = {0};
            gyro_status s = gyro_import_file(fmt, path, &opt, checking_sink, &got_n, &st);
            if (s != GYRO_OK && s != GYRO_ERR_DATA && s != GYRO_ERR_FORMAT && s != GYRO_ERR_LIMIT)
                ck_abort_msg("%s iteration %d: status %d (%s)", name, it, s, gyro_error_message());
            if (s != GYRO_OK && !strstr(gyro_error_message(), name))
                ck_abort_msg("%s iteration %d: message without the file: %s", name, it,
                             gyro_error_message());
            if (st.examples != (uint64_t)got_n) ck_abort_msg("%s: examples miscounted", name);
            total += got_n;
        }
    }
    ck_assert_int_gt(total, min_examples);   /* mutants still hold good records */
    free(buf);
}

START_TEST(test_fasttext)
{
    const char data[] = "__label__music.play 播放 音乐\r\n"
                        "\n"
                        "__label__query_song\t__label__play_song 查询歌曲并播放\n"
                        "下一首 __label__music.next\n"
                        "没有标签\n"
                        "__label__OTHERS\n";
    const char *path = write_file("a.ft", data, sizeof data - 1);
    got g;
    gyro_import_stats st;
    ck_assert_int_eq(run(GYRO_IMPORT_FASTTEXT, path, 0, &g, &st), GYRO_OK);
    ck_assert_int_eq(g.n, 3);
    ck_assert_str_eq(g.text[0], "播放 音乐");
    ck_assert_str_eq(g.label[0], "music.play");
    ck_assert_str_eq(g.source[0], "fasttext:a.ft");
    ck_assert_str_eq(g.label[1], "query_song+play_song");   /* the order written */
    ck_assert_str_eq(g.atoms[1], "play_song|query_song");
    ck_assert_str_eq(g.text[2], "下一首");                  /* a label after the text */
    ck_assert_str_eq(g.label[2], "music.next");
    ck_assert_str_eq(g.session[2], "L4");
    ck_assert_uint_eq(st.bad, 2);                           /* no label; no text */
    ck_assert_uint_eq(st.composite, 1);
    ck_assert_int_eq(run(GYRO_IMPORT_FASTTEXT, path, 1, &g, &st), GYRO_ERR_DATA);
    ck_assert_ptr_nonnull(strstr(gyro_error_message(), "a.ft:5: no __label__ token"));
}
END_TEST

START_TEST(test_labelled_text_stream)
{
    /* an open stream: the first non-blank line picks the format */
    const char ft[] = "\n__label__a 你好\n__label__b 再见\n", tsv[] = "label\ttext\na\t你好\n";
    const char *texts[2] = {ft, tsv};
    const char *sources[2] = {"fasttext:mem", "tsv:mem"};
    for (int k = 0; k < 2; k++) {
        FILE *f = fmemopen((void *)texts[k], strlen(texts[k]), "rb");
        ck_assert_ptr_nonnull(f);
        got g;
        memset(&g, 0, sizeof g);
        gyro_import_stats st = {0};
        gyro_import_options opt = {.strict = 1};
        ck_assert_int_eq(gyro_import_fp(GYRO_IMPORT_LABELLED_TEXT, f, "mem", &opt, sink, &g, &st), GYRO_OK);
        fclose(f);
        ck_assert_int_ge(g.n, 1);
        ck_assert_str_eq(g.source[0], sources[k]);
        ck_assert_str_eq(g.text[0], "你好");
        ck_assert_str_eq(g.label[0], "a");
    }
    /* formats read from a path only */
    FILE *f = fmemopen((void *)ft, strlen(ft), "rb");
    ck_assert_int_eq(gyro_import_fp(GYRO_IMPORT_SMP, f, "mem", NULL, sink, NULL, NULL), GYRO_ERR_USAGE);
    fclose(f);
}
END_TEST

START_TEST(test_conll)
{
    /* the intent on the last line of each sentence; ASCII characters are not spaced, words are */
    const char data[] = "播 O\n放 O\nm B-song\np I-song\n3 I-song\nplay_song\n\n\n"
                        "play\tO\nthe O\nsong S-song\nen.play\n\r\n"
                        "坏 Q-x\nbad.tag\n\n"
                        "无 O\n";
    const char *path = write_file("a.conll", data, sizeof data - 1);
    got g;
    gyro_import_stats st;
    ck_assert_int_eq(run(GYRO_IMPORT_CONLL, path, 0, &g, &st), GYRO_OK);
    ck_assert_int_eq(g.n, 2);
    ck_assert_str_eq(g.text[0], "播放mp3");
    ck_assert_str_eq(g.label[0], "play_song");
    ck_assert_str_eq(g.session[0], "s1");
    ck_assert_uint_eq(g.line[0], 1);
    ck_assert_str_eq(g.text[1], "play the song");
    ck_assert_str_eq(g.label[1], "en.play");
    ck_assert_uint_eq(st.slots, 2);
    ck_assert_uint_eq(st.bad, 2);   /* a bad tag; a sentence without an intent */
    ck_assert_ptr_nonnull(strstr(g.last_warning, "a.conll:17: sentence 4 has no intent"));
    /* an intent file: one intent per sentence, the counts must agree */
    const char toks[] = "播 O\n放 O\n\n停 O\n", intents[] = "music.play\r\n\nmusic.pause\n";
    const char *tp = write_file("b.conll", toks, sizeof toks - 1);
    char tpath[256];
    snprintf(tpath, sizeof tpath, "%s", tp);
    const char *ip = write_file("b.intent", intents, sizeof intents - 1);
    gyro_import_options opt = {.strict = 1, .intent_path = ip};
    memset(&g, 0, sizeof g);
    memset(&st, 0, sizeof st);
    ck_assert_int_eq(gyro_import_file(GYRO_IMPORT_CONLL, tpath, &opt, sink, &g, &st), GYRO_OK);
    ck_assert_int_eq(g.n, 2);
    ck_assert_str_eq(g.label[1], "music.pause");
    write_file("b.intent", "music.play\n", 11);
    memset(&g, 0, sizeof g);
    ck_assert_int_eq(gyro_import_file(GYRO_IMPORT_CONLL, tpath, &opt, sink, &g, &st), GYRO_ERR_DATA);
    ck_assert_ptr_nonnull(strstr(gyro_error_message(), "has 2 sentences but"));
    ck_assert_ptr_nonnull(strstr(gyro_error_message(), "has 1 intents"));
}
END_TEST

START_TEST(test_jsonl)
{
    const char data[] = "{\"q\": \"打开uc\", \"d\": \"app\", \"i\": \"LAUNCH\", \"m\": {\"s\": 7}}\n"
                        "\n"
                        "{\"q\": \"你好\", \"d\": \"chat\", \"i\": null, \"m\": {\"s\": \"x\"}}\n"
                        "{\"q\": \"坏\", \"d\": \"a\", \"i\": [\"b\"], \"m\": {}}\n"
                        "[1, 2]\n"
                        "{\"q\": 3, \"d\": \"a\", \"m\": {\"s\": 1}}\n"
                        "{\"q\": \"x\",\n";
    const char *path = write_file("a.jsonl", data, sizeof data - 1);
    got g;
    memset(&g, 0, sizeof g);
    gyro_import_stats st = {0};
    gyro_import_options opt = {.warn = warn, .warn_ctx = &g, .text_field = "q", .label_field = "d,i",
                               .session_field = "m.s"};
    ck_assert_int_eq(gyro_import_file(GYRO_IMPORT_JSONL, path, &opt, sink, &g, &st), GYRO_OK);
    ck_assert_int_eq(g.n, 2);
    ck_assert_str_eq(g.text[0], "打开uc");
    ck_assert_str_eq(g.label[0], "app.LAUNCH");
    ck_assert_str_eq(g.session[0], "7");
    ck_assert_str_eq(g.label[1], "chat");       /* a null field among several is left out */
    ck_assert_str_eq(g.session[1], "x");
    ck_assert_uint_eq(g.line[1], 3);
    ck_assert_uint_eq(st.blank, 1);
    ck_assert_uint_eq(st.bad, 4);               /* no session; an array; a number text; bad JSON */
    ck_assert_ptr_nonnull(strstr(g.last_warning, "a.jsonl:7: malformed JSON at column"));
    /* an array label is a composite */
    const char arr[] = "{\"text\": \"查询并播放\", \"label\": [\"query_song\", \"play_song\"]}\n";
    path = write_file("b.jsonl", arr, sizeof arr - 1);
    gyro_import_stats st2;
    ck_assert_int_eq(run(GYRO_IMPORT_JSONL, path, 1, &g, &st2), GYRO_OK);
    ck_assert_str_eq(g.label[0], "query_song+play_song");
    ck_assert_str_eq(g.session[0], "L1");
    ck_assert_uint_eq(st2.composite, 1);
}
END_TEST

START_TEST(test_fuzz_all_formats)
{
    fuzz_format(GYRO_IMPORT_TSV, "f.tsv",
                "text\tlabel\n播放音乐\tmusic.play\n查询 并播放\tquery_song+play_song\ts1\n\n下一首\tmusic.next\n", 400, 400);
    fuzz_format(GYRO_IMPORT_NLPCC, "f.txt",
                "11\t播放周杰伦的歌\tmusic.play\t播放<singer>周杰伦</singer>的歌\r\n11\t下一首\tmusic.next\t下一首\r\n\r\n"
                "22\t导航到北京\tnavigation.navigation\t导航到<destination>北京</destination>\n", 400, 400);
    fuzz_format(GYRO_IMPORT_SMP, "f.json",
                "[{\"text\": \"打开uc\", \"domain\": \"app\", \"intent\": \"LAUNCH\", \"slots\": {\"name\": \"uc\"}},\n"
                " {\"text\": \"你好\", \"domain\": \"chat\", \"intent\": null},\n"
                " {\"text\": \"\\u64ad\\u653e\", \"domain\": \"music\", \"intent\": \"PLAY\"}]\n", 400, 40);
    fuzz_format(GYRO_IMPORT_CROSSWOZ, "f.json", crosswoz_json, 400, 40);
    fuzz_format(GYRO_IMPORT_FASTTEXT, "f.ft",
                "__label__music.play 播放 音乐\n__label__a __label__b 查询\n下一首 __label__music.next\n", 400, 400);
    fuzz_format(GYRO_IMPORT_CONLL, "f.conll",
                "播 O\n放 B-song\n歌 I-song\nmusic.play\n\n下 O\n一 O\n首 O\nmusic.next\n", 400, 200);
    fuzz_format(GYRO_IMPORT_JSONL, "f.jsonl",
                "{\"text\": \"播放\", \"label\": \"music.play\"}\n{\"text\": \"下一首\", \"label\": [\"a\", \"b\"]}\n"
                "{\"text\": \"\\u64ad\", \"label\": 3}\n", 400, 200);
    /* (one syntax error rejects a whole JSON file, so fewer JSON mutants keep records) */
}
END_TEST

static Suite *import_suite(void)
{
    Suite *s = suite_create("import");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_format_names);
    tcase_add_test(tc, test_tsv);
    tcase_add_test(tc, test_tsv_bad_records);
    tcase_add_test(tc, test_nlpcc);
    tcase_add_test(tc, test_smp);
    tcase_add_test(tc, test_crosswoz_json);
    tcase_add_test(tc, test_crosswoz_zip);
    tcase_add_test(tc, test_sink_error_stops);
    tcase_add_test(tc, test_fasttext);
    tcase_add_test(tc, test_labelled_text_stream);
    tcase_add_test(tc, test_conll);
    tcase_add_test(tc, test_jsonl);
    tcase_add_test(tc, test_fuzz_all_formats);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(import_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

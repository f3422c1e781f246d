/* check_generate.c — Check suite for pipeline/generate_music: the shipped corpora/music files
 * load and cover the 125 intents of the seed's appendix D, the copy compiled into libgyro is
 * byte for byte the tree's corpora/music and generates the same set, generation is deterministic
 * for a seed and balanced over intents, composites are built from their atoms, and malformed
 * template directories or in-memory sets fail with file and line. */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pipeline/embedded.h"
#include "pipeline/generate_music.h"
#include "models/text/labels.h"

#define MUSIC_DIR "corpora/music"

typedef struct collect {
    size_t n;
    char **text;      /* (n) */
    char **label;     /* (n) */
    size_t *n_atoms;  /* (n) */
    char **session;   /* (n) */
    char *source;
} collect;

static gyro_status collect_sink(void *ctx, const Gyro__V1__Example *e)
{
    collect *c = ctx;
    c->text = realloc(c->text, (c->n + 1) * sizeof *c->text);
    c->label = realloc(c->label, (c->n + 1) * sizeof *c->label);
    c->session = realloc(c->session, (c->n + 1) * sizeof *c->session);
    c->n_atoms = realloc(c->n_atoms, (c->n + 1) * sizeof *c->n_atoms);
    c->text[c->n] = strdup(e->text);
    c->label[c->n] = strdup(e->label);
    c->session[c->n] = strdup(e->session);
    c->n_atoms[c->n] = e->n_labels;
    ck_assert_uint_eq(e->line, c->n + 1);
    if (!c->source) c->source = strdup(e->source);
    c->n++;
    return GYRO_OK;
}

static void collect_free(collect *c)
{
    for (size_t i = 0; i < c->n; i++) {
        free(c->text[i]);
        free(c->label[i]);
        free(c->session[i]);
    }
    free(c->text);
    free(c->label);
    free(c->session);
    free(c->n_atoms);
    free(c->source);
    memset(c, 0, sizeof *c);
}

START_TEST(test_load_shipped_set)
{
    gyro_music_gen *g;
    ck_assert_msg(gyro_music_gen_load(MUSIC_DIR, &g) == GYRO_OK, "%s", gyro_error_message());
    ck_assert_uint_eq(gyro_music_gen_n_intents(g), 125);
    ck_assert_uint_gt(gyro_music_gen_n_templates(g), 200);
    gyro_label_set *s;
    ck_assert_int_eq(gyro_label_set_new(&s), GYRO_OK);
    int composites = 0;
    for (size_t i = 0; i < 125; i++) {
        ck_assert_int_eq(gyro_label_set_add(s, gyro_music_gen_intent(g, i), NULL), GYRO_OK);
        composites += strchr(gyro_music_gen_intent(g, i), '+') != NULL;
    }
    ck_assert_int_eq(gyro_label_set_count(s), 125);
    ck_assert_int_ge(gyro_label_set_find(s, "query_song+play_song+query_song+play_song+play_song"), 0);
    ck_assert_int_ge(gyro_label_set_find(s, "query_lyric.get_mood"), 0);
    ck_assert_int_ge(gyro_label_set_find(s, "others"), 0);
    ck_assert_int_gt(composites, 50);
    ck_assert_ptr_null(gyro_music_gen_intent(g, 125));
    gyro_label_set_free(s);
    gyro_music_gen_free(g);
    gyro_music_gen_free(NULL);
}
END_TEST

START_TEST(test_generate_deterministic_balanced)
{
    gyro_music_gen *g;
    ck_assert_int_eq(gyro_music_gen_load(MUSIC_DIR, &g), GYRO_OK);
    collect a = {0}, b = {0}, c = {0};
    const size_t n = 1000;
    ck_assert_int_eq(gyro_music_generate(g, 7, n, collect_sink, &a), GYRO_OK);
    ck_assert_int_eq(gyro_music_generate(g, 7, n, collect_sink, &b), GYRO_OK);
    ck_assert_int_eq(gyro_music_generate(g, 8, n, collect_sink, &c), GYRO_OK);
    ck_assert_uint_eq(a.n, n);
    ck_assert_str_eq(a.source, "music:seed=7");
    int same = 1, differ = 0;
    for (size_t i = 0; i < n; i++) {
        same &= strcmp(a.text[i], b.text[i]) == 0 && strcmp(a.label[i], b.label[i]) == 0 &&
                strcmp(a.session[i], b.session[i]) == 0;
        differ += strcmp(a.text[i], c.text[i]) != 0;
    }
    ck_assert(same);
    ck_assert_int_gt(differ, (int)n / 2);

    /* every intent in each cycle of 125; counts differ by at most one */
    gyro_label_set *s;
    ck_assert_int_eq(gyro_label_set_new(&s), GYRO_OK);
    int count[125] = {0};
    size_t distinct_text = 0;
    for (size_t i = 0; i < n; i++) {
        int id;
        ck_assert_int_eq(gyro_label_set_add(s, a.label[i], &id), GYRO_OK);
        ck_assert_int_lt(id, 125);
        count[id]++;
        gyro_label l;
        ck_assert_int_eq(gyro_label_parse(a.label[i], &l), GYRO_OK);
        ck_assert_uint_eq(a.n_atoms[i], (size_t)l.n_atoms);
        gyro_label_free(&l);
        ck_assert_uint_gt(strlen(a.text[i]), 0);
        ck_assert_ptr_null(strchr(a.text[i], '{'));
        ck_assert_ptr_null(strchr(a.text[i], '\t'));
        int dup = 0;
        for (size_t j = 0; j < i && !dup; j++) dup = strcmp(a.text[i], a.text[j]) == 0;
        distinct_text += !dup;
        if (i == 124) ck_assert_int_eq(gyro_label_set_count(s), 125);
    }
    int lo = count[0], hi = count[0];
    for (int k = 0; k < 125; k++) {
        if (count[k] < lo) lo = count[k];
        if (count[k] > hi) hi = count[k];
    }
    ck_assert_int_le(hi - lo, 1);
    ck_assert_uint_gt(distinct_text, n * 8 / 10);   /* templates x slots give variety */

    /* sessions: consecutive runs of 1..4 */
    size_t run = 1;
    for (size_t i = 1; i < n; i++) {
        if (strcmp(a.session[i], a.session[i - 1]) == 0) run++;
        else run = 1;
        ck_assert_uint_le(run, 4);
    }
    gyro_label_set_free(s);
    collect_free(&a);
    collect_free(&b);
    collect_free(&c);
    gyro_music_gen_free(g);
}
END_TEST

static char tmp[64];

static void put(const char *name, const char *text)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", tmp, name);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

static void minimal_set(void)
{
    snprintf(tmp, sizeof tmp, "/tmp/gyro-gen-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmp));
    char path[256];
    snprintf(path, sizeof path, "%s/slots", tmp);
    ck_assert_int_eq(mkdir(path, 0700), 0);
    put("intents.txt", "\xEF\xBB\xBF# two intents\r\nplay_song\r\nquery_song+play_song\r\n");
    put("templates.tsv", "play_song\t放{song}\nquery_song\t找{song}和{song2}\n");
    put("slots/song.txt", "甲\n乙\n");
    put("connectors.txt", "然后\n");
    put("prefixes.txt", "请\n");
    put("suffixes.txt", "吧\n");
}

static void cleanup(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    ck_assert_int_eq(system(cmd), 0);
}

static void expect_load_error(const char *where)
{
    gyro_music_gen *g = (gyro_music_gen *)1;
    gyro_status st = gyro_music_gen_load(tmp, &g);
    ck_assert_msg(st == GYRO_ERR_DATA || st == GYRO_ERR_IO, "status %d", st);
    ck_assert_ptr_null(g);
    ck_assert_msg(strstr(gyro_error_message(), where) != NULL, "'%s' lacks '%s'",
                  gyro_error_message(), where);
}

START_TEST(test_minimal_and_errors)
{
    minimal_set();
    gyro_music_gen *g;
    ck_assert_msg(gyro_music_gen_load(tmp, &g) == GYRO_OK, "%s", gyro_error_message());
    collect a = {0};
    ck_assert_int_eq(gyro_music_generate(g, 1, 200, collect_sink, &a), GYRO_OK);
    for (size_t i = 0; i < a.n; i++) {
        if (strcmp(a.label[i], "query_song+play_song") == 0) {
            ck_assert(strstr(a.text[i], "找甲和乙") || strstr(a.text[i], "找乙和甲"));  /* {song2} differs */
            ck_assert_ptr_nonnull(strstr(a.text[i], "然后放"));
            ck_assert_uint_eq(a.n_atoms[i], 2);
        }
    }
    collect_free(&a);
    gyro_music_gen_free(g);

    put("templates.tsv", "play_song\t放{song}\nquery_song\t找{singer}\n");
    expect_load_error("templates.tsv:2: unknown slot {singer}");
    put("templates.tsv", "play_song\t放{song\nquery_song\t找\n");
    expect_load_error("templates.tsv:1: '{' without '}'");
    put("templates.tsv", "play_song\t放}\nquery_song\t找\n");
    expect_load_error("templates.tsv:1: '}' without '{'");
    put("templates.tsv", "play_song\t放{Song}\nquery_song\t找\n");
    expect_load_error("templates.tsv:1: bad slot name");
    put("templates.tsv", "play_song 放\n");
    expect_load_error("templates.tsv:1: expected atom<TAB>template");
    put("templates.tsv", "a+b\t放\n");
    expect_load_error("templates belong to single atoms");
    put("templates.tsv", "play_song\t放\n");
    expect_load_error("intents.txt:3: atom 'query_song' of intent 'query_song+play_song' has no template");
    put("templates.tsv", "play_song\t放\nquery_song\t找\nstop_song\t停\n");
    expect_load_error("atom 'stop_song' has templates but is part of no intent");
    put("templates.tsv", "play_song\t放\nquery_song\t找\n");
    put("intents.txt", "play_song\nplay_song\n");
    expect_load_error("intents.txt:2: intent 'play_song' listed twice");
    put("intents.txt", "play_song\nquery_song++play_song\n");
    expect_load_error("intents.txt:2:");
    put("intents.txt", "play_song\n\xff\n");
    expect_load_error("intents.txt:2: invalid UTF-8");
    put("intents.txt", "# nothing\n");
    expect_load_error("no intents");
    put("intents.txt", "play_song\n");
    put("templates.tsv", "play_song\t放\n");
    put("connectors.txt", "# none\n");
    expect_load_error("connectors.txt: empty");
    cleanup();
    gyro_music_gen *g2 = (gyro_music_gen *)1;
    ck_assert_int_eq(gyro_music_gen_load("/nonexistent/dir", &g2), GYRO_ERR_IO);
    ck_assert_ptr_null(g2);
}
END_TEST

/* ---- the embedded copy ------------------------------------------------------------------------ */

/* Regular files under dir, recursively, without hidden files and editor backups (name~): the
 * files the Makefile embeds. */
static size_t count_files(const char *dir)
{
    DIR *d = opendir(dir);
    ck_assert_msg(d != NULL, "cannot open %s", dir);
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (e->d_name[0] == '.' || e->d_name[len - 1] == '~') continue;
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        ck_assert_int_eq(lstat(path, &st), 0);
        if (S_ISDIR(st.st_mode)) n += count_files(path);
        else if (S_ISREG(st.st_mode)) n++;
    }
    closedir(d);
    return n;
}

START_TEST(test_embedded_equals_tree)
{
    /* every embedded file holds the bytes of corpora/music/<name>, and nothing is missing */
    ck_assert_uint_gt(gyro_music_n_files, 5);
    for (size_t i = 0; i < gyro_music_n_files; i++) {
        const gyro_data_file *f = &gyro_music_files[i];
        if (i) ck_assert_int_lt(strcmp(gyro_music_files[i - 1].name, f->name), 0);   /* sorted */
        ck_assert_ptr_eq(gyro_data_file_find(gyro_music_files, gyro_music_n_files, f->name), f);
        char path[512];
        snprintf(path, sizeof path, "%s/%s", MUSIC_DIR, f->name);
        FILE *fp = fopen(path, "rb");
        ck_assert_msg(fp != NULL, "embedded %s is not in the tree", f->name);
        unsigned char *b = malloc(f->length + 1);
        ck_assert_ptr_nonnull(b);
        size_t got = fread(b, 1, f->length + 1, fp);
        fclose(fp);
        ck_assert_msg(got == f->length && memcmp(b, f->bytes, f->length) == 0,
                      "embedded %s differs from %s (stale build?)", f->name, path);
        ck_assert_int_eq(f->bytes[f->length], 0);
        free(b);
    }
    ck_assert_uint_eq(count_files(MUSIC_DIR), gyro_music_n_files);
    ck_assert_ptr_null(gyro_data_file_find(gyro_music_files, gyro_music_n_files, "nope.txt"));
    ck_assert_ptr_null(gyro_data_file_find(gyro_music_files, gyro_music_n_files, NULL));
    ck_assert_ptr_null(gyro_data_file_find(NULL, 3, "intents.txt"));
}
END_TEST

START_TEST(test_default_equals_directory)
{
    gyro_music_gen *e, *d;
    ck_assert_msg(gyro_music_gen_load_default(&e) == GYRO_OK, "%s", gyro_error_message());
    ck_assert_int_eq(gyro_music_gen_load(MUSIC_DIR, &d), GYRO_OK);
    ck_assert_uint_eq(gyro_music_gen_n_intents(e), 125);
    ck_assert_uint_eq(gyro_music_gen_n_templates(e), gyro_music_gen_n_templates(d));
    for (size_t i = 0; i < 125; i++)
        ck_assert_str_eq(gyro_music_gen_intent(e, i), gyro_music_gen_intent(d, i));
    collect a = {0}, b = {0};
    ck_assert_int_eq(gyro_music_generate(e, 3, 500, collect_sink, &a), GYRO_OK);
    ck_assert_int_eq(gyro_music_generate(d, 3, 500, collect_sink, &b), GYRO_OK);
    ck_assert_uint_eq(a.n, b.n);
    for (size_t i = 0; i < a.n; i++) {
        ck_assert_str_eq(a.text[i], b.text[i]);
        ck_assert_str_eq(a.label[i], b.label[i]);
        ck_assert_str_eq(a.session[i], b.session[i]);
    }
    collect_free(&a);
    collect_free(&b);
    gyro_music_gen_free(e);
    gyro_music_gen_free(d);
}
END_TEST

/* an in-memory set: the files of minimal_set, the last one without its final newline */
#define MEM(n, s) {n, (const unsigned char *)(s), sizeof(s) - 1}

static void expect_mem_error(const gyro_data_file *files, size_t n, const char *where)
{
    gyro_music_gen *g = (gyro_music_gen *)1;
    gyro_status st = gyro_music_gen_load_files(files, n, "mem", &g);
    ck_assert_msg(st == GYRO_ERR_DATA || st == GYRO_ERR_IO, "status %d", st);
    ck_assert_ptr_null(g);
    ck_assert_msg(strstr(gyro_error_message(), where) != NULL, "'%s' lacks '%s'",
                  gyro_error_message(), where);
}

START_TEST(test_load_files)
{
    gyro_data_file f[] = {
        MEM("connectors.txt", "然后\n"),
        MEM("intents.txt", "\xEF\xBB\xBF# two intents\r\nplay_song\r\nquery_song+play_song"),
        MEM("prefixes.txt", "请\n"),
        MEM("slots/song.txt", "甲\n乙\n"),
        MEM("suffixes.txt", "吧\n"),
        MEM("templates.tsv", "play_song\t放{song}\nquery_song\t找{song}和{song2}\n"),
    };
    size_t n = sizeof f / sizeof f[0];
    gyro_music_gen *g;
    ck_assert_msg(gyro_music_gen_load_files(f, n, NULL, &g) == GYRO_OK, "%s", gyro_error_message());
    ck_assert_uint_eq(gyro_music_gen_n_intents(g), 2);
    ck_assert_str_eq(gyro_music_gen_intent(g, 1), "query_song+play_song");
    collect a = {0};
    ck_assert_int_eq(gyro_music_generate(g, 1, 50, collect_sink, &a), GYRO_OK);
    for (size_t i = 0; i < a.n; i++)
        if (strcmp(a.label[i], "query_song+play_song") == 0)
            ck_assert(strstr(a.text[i], "找甲和乙") || strstr(a.text[i], "找乙和甲"));
    collect_free(&a);
    gyro_music_gen_free(g);

    /* errors name the origin, the file and the line, as for a directory */
    f[5] = (gyro_data_file)MEM("templates.tsv", "play_song\t放{song}\nquery_song\t找{singer}\n");
    expect_mem_error(f, n, "mem/templates.tsv:2: unknown slot {singer} (no mem/slots/singer.txt)");
    f[5] = (gyro_data_file)MEM("templates.tsv", "play_song\t放\0{song}\nquery_song\t找\n");
    expect_mem_error(f, n, "mem/templates.tsv:1: NUL byte");
    f[5] = (gyro_data_file)MEM("templates.tsv", "play_song\t放\nquery_song\t找\n");
    f[1] = (gyro_data_file)MEM("intents.txt", "play_song\n\xe6\x89\n");
    expect_mem_error(f, n, "mem/intents.txt:2: invalid UTF-8");
    f[1] = (gyro_data_file)MEM("intents.txt", "");
    expect_mem_error(f, n, "mem/intents.txt: no intents");
    f[1] = (gyro_data_file)MEM("intents.txt", "play_song\nquery_song");
    expect_mem_error(f, n - 1, "mem/templates.tsv: no such embedded file");   /* templates absent */
    expect_mem_error(f + 1, n - 1, "mem/connectors.txt: no such embedded file");
    gyro_music_gen *g2 = (gyro_music_gen *)1;
    ck_assert_int_eq(gyro_music_gen_load_files(NULL, 0, NULL, &g2), GYRO_ERR_IO);
    ck_assert_ptr_null(g2);
    ck_assert_ptr_nonnull(strstr(gyro_error_message(), "[embedded]/templates.tsv"));
    ck_assert_int_eq(gyro_music_gen_load_files(NULL, 2, NULL, &g2), GYRO_ERR_USAGE);
    ck_assert_int_eq(gyro_music_gen_load_files(f, n, NULL, NULL), GYRO_ERR_USAGE);
    ck_assert_int_eq(gyro_music_gen_load(NULL, &g2), GYRO_ERR_USAGE);
    ck_assert_ptr_null(g2);
}
END_TEST

static Suite *generate_suite(void)
{
    Suite *s = suite_create("generate");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_load_shipped_set);
    tcase_add_test(tc, test_generate_deterministic_balanced);
    tcase_add_test(tc, test_minimal_and_errors);
    tcase_add_test(tc, test_embedded_equals_tree);
    tcase_add_test(tc, test_default_equals_directory);
    tcase_add_test(tc, test_load_files);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(generate_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

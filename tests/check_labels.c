/* check_labels.c — Check suite for pipeline/labels: the label grammar, composites, hierarchy
 * projections, the label set (ids, atoms, parents) and its behaviour on malformed labels. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/core/rng.h"
#include "models/text/labels.h"

START_TEST(test_parse_simple_and_hierarchy)
{
    gyro_label l;
    ck_assert_int_eq(gyro_label_parse("music.play", &l), GYRO_OK);
    ck_assert_str_eq(l.name, "music.play");
    ck_assert_int_eq(l.n_atoms, 1);
    ck_assert_str_eq(l.atoms[0], "music.play");
    ck_assert_int_eq(l.depth, 2);
    gyro_label_free(&l);
    ck_assert_ptr_null(l.name);
    gyro_label_free(&l); /* zeroed: no-op */

    ck_assert_int_eq(gyro_label_parse("  OTHERS\r\n", &l), GYRO_OK);
    ck_assert_str_eq(l.name, "OTHERS");
    ck_assert_int_eq(l.depth, 1);
    gyro_label_free(&l);

    /* UTF-8 levels (CrossWOZ) */
    ck_assert_int_eq(gyro_label_parse("Inform.酒店", &l), GYRO_OK);
    ck_assert_int_eq(l.depth, 2);
    gyro_label_free(&l);
}
END_TEST

START_TEST(test_parse_composite)
{
    gyro_label l;
    ck_assert_int_eq(gyro_label_parse("query_song + play_song", &l), GYRO_OK);
    ck_assert_str_eq(l.name, "query_song+play_song");
    ck_assert_int_eq(l.n_atoms, 2);
    ck_assert_str_eq(l.atoms[0], "play_song");
    ck_assert_str_eq(l.atoms[1], "query_song");
    gyro_label_free(&l);

    /* repeated atoms: the name keeps them, the atom set does not */
    ck_assert_int_eq(gyro_label_parse("query_song+play_song+query_song+play_song+play_song", &l),
                     GYRO_OK);
    ck_assert_str_eq(l.name, "query_song+play_song+query_song+play_song+play_song");
    ck_assert_int_eq(l.n_atoms, 2);
    gyro_label_free(&l);

    ck_assert_int_eq(gyro_label_parse("b.x+a+b.y.z", &l), GYRO_OK);
    ck_assert_int_eq(l.n_atoms, 3);
    ck_assert_str_eq(l.atoms[0], "a");
    ck_assert_str_eq(l.atoms[1], "b.x");
    ck_assert_str_eq(l.atoms[2], "b.y.z");
    ck_assert_int_eq(l.depth, 3);
    gyro_label_free(&l);
}
END_TEST

static void expect_error(const char *text, gyro_status want)
{
    gyro_label l;
    gyro_error_clear();
    gyro_status st = gyro_label_parse(text, &l);
    ck_assert_msg(st == want, "'%s': got %d want %d (%s)", text, st, want, gyro_error_message());
    ck_assert_str_ne(gyro_error_message(), "");
    ck_assert_ptr_null(l.name);
    ck_assert_ptr_null(l.atoms);
    ck_assert_int_eq(l.n_atoms, 0);
}

START_TEST(test_parse_errors)
{
    expect_error("", GYRO_ERR_DATA);
    expect_error("   \t", GYRO_ERR_DATA);
    expect_error("a++b", GYRO_ERR_DATA);
    expect_error("+a", GYRO_ERR_DATA);
    expect_error("a+", GYRO_ERR_DATA);
    expect_error("a+ +b", GYRO_ERR_DATA);
    expect_error("a..b", GYRO_ERR_DATA);
    expect_error(".a", GYRO_ERR_DATA);
    expect_error("a.", GYRO_ERR_DATA);
    expect_error("music play", GYRO_ERR_DATA);
    expect_error("a\x01" "b", GYRO_ERR_DATA);
    expect_error("a\x7f", GYRO_ERR_DATA);
    expect_error("\xff\xfe", GYRO_ERR_DATA);
    expect_error("a\xe4\xb8", GYRO_ERR_DATA);       /* truncated 3-byte sequence */
    expect_error("\xc0\xaf", GYRO_ERR_DATA);        /* overlong */
    expect_error("music\xe3\x80\x80play", GYRO_ERR_DATA);  /* U+3000 ideographic space */
    expect_error("\xef\xbb\xbfmusic", GYRO_ERR_DATA);       /* U+FEFF */
    expect_error("a\xe2\x80\x8b", GYRO_ERR_DATA);           /* U+200B zero-width space */
    expect_error("\xed\xa0\x80", GYRO_ERR_DATA);    /* surrogate */
    ck_assert_ptr_nonnull(strstr(gyro_error_message(), "byte 0"));

    char big[GYRO_LABEL_MAX_BYTES + 8];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    expect_error(big, GYRO_ERR_LIMIT);

    char many[4 * (GYRO_LABEL_MAX_ATOMS + 2)] = "";
    for (int i = 0; i < GYRO_LABEL_MAX_ATOMS + 1; i++) strcat(many, i ? "+a" : "a");
    expect_error(many, GYRO_ERR_LIMIT);

    char deep[4 * (GYRO_LABEL_MAX_DEPTH + 2)] = "";
    for (int i = 0; i < GYRO_LABEL_MAX_DEPTH + 1; i++) strcat(deep, i ? ".a" : "a");
    expect_error(deep, GYRO_ERR_LIMIT);

    gyro_label l;
    ck_assert_int_eq(gyro_label_parse(NULL, &l), GYRO_ERR_USAGE);
    ck_assert_int_eq(gyro_label_parse("a", NULL), GYRO_ERR_USAGE);
}
END_TEST

START_TEST(test_projection_and_canonical)
{
    char *s;
    ck_assert_int_eq(gyro_label_project("music.play", 0, &s), GYRO_OK);
    ck_assert_str_eq(s, "music");
    free(s);
    ck_assert_int_eq(gyro_label_project("music.play", 1, &s), GYRO_OK);
    ck_assert_str_eq(s, "music.play");
    free(s);
    ck_assert_int_eq(gyro_label_project("music.play", 7, &s), GYRO_OK);
    ck_assert_str_eq(s, "music.play");
    free(s);
    ck_assert_int_eq(gyro_label_project("b.y+a.x+b.z", 0, &s), GYRO_OK);
    ck_assert_str_eq(s, "a+b");
    free(s);
    ck_assert_int_eq(gyro_label_project("a", -1, &s), GYRO_ERR_USAGE);
    ck_assert_ptr_null(s);
    ck_assert_int_eq(gyro_label_canonical("Request.酒店+Inform.酒店+Inform.酒店", &s), GYRO_OK);
    ck_assert_str_eq(s, "Inform.酒店+Request.酒店");
    free(s);
    ck_assert_int_eq(gyro_label_canonical("a++", &s), GYRO_ERR_DATA);
    ck_assert_ptr_null(s);
}
END_TEST

START_TEST(test_set_ids_atoms_parents)
{
    gyro_label_set *s;
    ck_assert_int_eq(gyro_label_set_new(&s), GYRO_OK);
    ck_assert_int_eq(gyro_label_set_count(s), 0);
    ck_assert_int_eq(gyro_label_set_max_depth(s), 0);
    int id = -7;
    ck_assert_int_eq(gyro_label_set_add(s, "music.play", &id), GYRO_OK);
    ck_assert_int_eq(id, 0);
    ck_assert_int_eq(gyro_label_set_add(s, "query_song+play_song", &id), GYRO_OK);
    ck_assert_int_eq(id, 1);
    ck_assert_int_eq(gyro_label_set_add(s, " music.play ", &id), GYRO_OK);
    ck_assert_int_eq(id, 0);
    ck_assert_int_eq(gyro_label_set_add(s, "music", &id), GYRO_OK);
    ck_assert_int_eq(id, 2);
    ck_assert_int_eq(gyro_label_set_add(s, "play_song", NULL), GYRO_OK);
    ck_assert_int_eq(gyro_label_set_add(s, "a++b", &id), GYRO_ERR_DATA);
    ck_assert_int_eq(gyro_label_set_count(s), 4);

    ck_assert_int_eq(gyro_label_set_find(s, "music.play"), 0);
    ck_assert_int_eq(gyro_label_set_find(s, "\tmusic.play\r"), 0);
    ck_assert_int_eq(gyro_label_set_find(s, "query_song + play_song"), 1);
    ck_assert_int_eq(gyro_label_set_find(s, "play_song+query_song"), -1); /* spelling matters */
    ck_assert_int_eq(gyro_label_set_find(s, "nope"), -1);
    gyro_error_set(GYRO_ERR_IO, "earlier message");
    ck_assert_int_eq(gyro_label_set_find(s, "++"), -1);
    ck_assert_str_eq(gyro_error_message(), "earlier message");
    gyro_error_clear();
    ck_assert_int_eq(gyro_label_set_find(s, "a..b"), -1);
    ck_assert_str_eq(gyro_error_message(), "");
    ck_assert_str_eq(gyro_label_set_name(s, 1), "query_song+play_song");
    ck_assert_ptr_null(gyro_label_set_name(s, 4));
    ck_assert_ptr_null(gyro_label_set_name(s, -1));

    /* atoms: music.play, play_song, query_song, music */
    ck_assert_int_eq(gyro_label_set_atom_count(s), 4);
    ck_assert_int_eq(gyro_label_set_n_atoms(s, 1), 2);
    const int *a = gyro_label_set_atoms(s, 1);
    ck_assert_str_eq(gyro_label_set_atom_name(s, a[0]), "play_song");
    ck_assert_str_eq(gyro_label_set_atom_name(s, a[1]), "query_song");
    ck_assert_int_eq(gyro_label_set_atom_find(s, "play_song"), a[0]);
    ck_assert_int_eq(gyro_label_set_atoms(s, 3)[0], a[0]); /* class play_song shares the atom */
    ck_assert_int_eq(gyro_label_set_atom_find(s, "x"), -1);
    ck_assert_ptr_null(gyro_label_set_atom_name(s, 99));

    ck_assert_str_eq(gyro_label_set_parent(s, 0), "music");
    ck_assert_int_eq(gyro_label_set_parent_id(s, 0), 2);
    ck_assert_ptr_null(gyro_label_set_parent(s, 1));
    ck_assert_int_eq(gyro_label_set_parent_id(s, 1), -1);
    ck_assert_ptr_null(gyro_label_set_parent(s, 2));

    ck_assert_int_eq(gyro_label_set_depth(s, 0), 2);
    ck_assert_int_eq(gyro_label_set_depth(s, 1), 1);
    ck_assert_int_eq(gyro_label_set_max_depth(s), 2);
    ck_assert_str_eq(gyro_label_set_project(s, 0, 0), "music");
    ck_assert_str_eq(gyro_label_set_project(s, 0, 1), "music.play");
    ck_assert_str_eq(gyro_label_set_project(s, 0, 5), "music.play");
    ck_assert_str_eq(gyro_label_set_project(s, 1, 0), "play_song+query_song");
    ck_assert_ptr_null(gyro_label_set_project(s, 1, -1));
    gyro_label_set_free(s);
    gyro_label_set_free(NULL);
}
END_TEST

START_TEST(test_set_many_labels_stable_ids)
{
    /* enough labels to grow both hash tables several times; same order gives same ids */
    gyro_label_set *s1, *s2;
    ck_assert_int_eq(gyro_label_set_new(&s1), GYRO_OK);
    ck_assert_int_eq(gyro_label_set_new(&s2), GYRO_OK);
    char buf[64];
    for (int i = 0; i < 3000; i++) {
        snprintf(buf, sizeof buf, "d%d.i%d+x%d", i % 37, i, i % 11);
        int id1, id2;
        ck_assert_int_eq(gyro_label_set_add(s1, buf, &id1), GYRO_OK);
        ck_assert_int_eq(gyro_label_set_add(s2, buf, &id2), GYRO_OK);
        ck_assert_int_eq(id1, i);
        ck_assert_int_eq(id1, id2);
    }
    ck_assert_int_eq(gyro_label_set_count(s1), 3000);
    ck_assert_int_eq(gyro_label_set_atom_count(s1), 3000 + 11);
    for (int i = 0; i < 3000; i += 7) {
        snprintf(buf, sizeof buf, "d%d.i%d+x%d", i % 37, i, i % 11);
        ck_assert_int_eq(gyro_label_set_find(s1, buf), i);
        snprintf(buf, sizeof buf, "d%d+x%d", i % 37, i % 11);
        ck_assert_str_eq(gyro_label_set_project(s1, i, 0), buf);
    }
    gyro_label_set_free(s1);
    gyro_label_set_free(s2);
}
END_TEST


/* Random labels (atoms of 1-3 levels from a small alphabet, repeats, spaces around '+'): the
 * parse, canonical form and projections must agree with each other and with a reference built
 * here from the atoms. */
START_TEST(test_label_properties)
{
    static const char *const words[] = {"music", "play", "query_song", "酒店", "Inform", "a", "b1"};
    gyro_rng r;
    gyro_rng_seed(&r, 5);
    char text[512], want[64][64];
    for (int it = 0; it < 5000; it++) {
        int na = 1 + (int)gyro_rng_below(&r, 5), maxd = 0;
        size_t n = 0;
        text[0] = '\0';
        for (int a = 0; a < na; a++) {
            int d = 1 + (int)gyro_rng_below(&r, 3);
            if (d > maxd) maxd = d;
            want[a][0] = '\0';
            for (int l = 0; l < d; l++) {
                if (l) strcat(want[a], ".");
                strcat(want[a], words[gyro_rng_below(&r, 7)]);
            }
            const char *sep = a ? (gyro_rng_below(&r, 2) ? " + " : "+") : "";
            n += (size_t)snprintf(text + n, sizeof text - n, "%s%s", sep, want[a]);
        }
        gyro_label l;
        ck_assert_int_eq(gyro_label_parse(text, &l), GYRO_OK);
        ck_assert_int_eq(l.depth, maxd);
        /* atoms: sorted, distinct, each one of the written atoms, every written atom present */
        for (int i = 1; i < l.n_atoms; i++) ck_assert_int_lt(strcmp(l.atoms[i - 1], l.atoms[i]), 0);
        for (int a = 0; a < na; a++) {
            int found = 0;
            for (int i = 0; i < l.n_atoms; i++) found |= strcmp(l.atoms[i], want[a]) == 0;
            ck_assert(found);
        }
        /* canonical == atoms joined; canonical is idempotent; deep projection == canonical */
        char *canon, *again, *deep, *p0, *p00;
        ck_assert_int_eq(gyro_label_canonical(text, &canon), GYRO_OK);
        char joined[512] = "";
        for (int i = 0; i < l.n_atoms; i++) {
            if (i) strcat(joined, "+");
            strcat(joined, l.atoms[i]);
        }
        ck_assert_str_eq(canon, joined);
        ck_assert_int_eq(gyro_label_canonical(canon, &again), GYRO_OK);
        ck_assert_str_eq(again, canon);
        ck_assert_int_eq(gyro_label_project(text, maxd - 1, &deep), GYRO_OK);
        ck_assert_str_eq(deep, canon);
        /* projections are idempotent and contain no dot at level 0 */
        ck_assert_int_eq(gyro_label_project(text, 0, &p0), GYRO_OK);
        ck_assert_ptr_null(strchr(p0, '.'));
        ck_assert_int_eq(gyro_label_project(p0, 0, &p00), GYRO_OK);
        ck_assert_str_eq(p0, p00);
        free(canon);
        free(again);
        free(deep);
        free(p0);
        free(p00);
        gyro_label_free(&l);
    }
}
END_TEST

static Suite *labels_suite(void)
{
    Suite *s = suite_create("labels");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_parse_simple_and_hierarchy);
    tcase_add_test(tc, test_parse_composite);
    tcase_add_test(tc, test_parse_errors);
    tcase_add_test(tc, test_projection_and_canonical);
    tcase_add_test(tc, test_set_ids_atoms_parents);
    tcase_add_test(tc, test_set_many_labels_stable_ids);
    tcase_add_test(tc, test_label_properties);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(labels_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* check_metrics.c — Check suite for models/metrics: accuracy, macro-F1 (against figures
 * computed by hand, as scikit-learn's f1_score(average="macro") gives them), cross-entropy,
 * hierarchy levels with composite labels (over a models/text/labels.h label set, long labels
 * included), examples of labels the model never saw, the NLPCC 2018 task-4 intent measure and
 * fastText's P@k / R@k on small cases computed by hand, the text report and the SVG image. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "models/metrics.h"
#include "pipeline/picture.h"
#include "models/text/labels.h"

/* A label set of the n names, in order (class i = names[i]). */
static gyro_label_set *set_of(const char *const *names, int n)
{
    gyro_label_set *s = NULL;
    ck_assert_int_eq(gyro_label_set_new(&s), GYRO_OK);
    for (int i = 0; i < n; i++) {
        int id = -1;
        ck_assert_int_eq(gyro_label_set_add(s, names[i], &id), GYRO_OK);
        ck_assert_int_eq(id, i);
    }
    return s;
}

START_TEST(test_accuracy_f1)
{
    gyro_metrics m;
    ck_assert_int_eq(gyro_metrics_init(&m, 3), GYRO_OK);
    ck_assert(isnan(gyro_metrics_accuracy(&m)));
    /* truth: 0 0 0 1 1 2 ; pred: 0 0 1 1 2 2 */
    int t[] = {0, 0, 0, 1, 1, 2}, p[] = {0, 0, 1, 1, 2, 2};
    for (int i = 0; i < 6; i++) gyro_metrics_add(&m, t[i], p[i], -1);
    ck_assert_double_eq_tol(gyro_metrics_accuracy(&m), 4.0 / 6.0, 1e-12);
    /* class 0: P=1, R=2/3, F=0.8; class 1: P=1/2, R=1/2, F=0.5; class 2: P=1/2, R=1, F=2/3 */
    gyro_class_stats s0 = gyro_metrics_class(&m, 0);
    ck_assert_double_eq_tol(s0.precision, 1.0, 1e-12);
    ck_assert_double_eq_tol(s0.recall, 2.0 / 3.0, 1e-12);
    ck_assert_double_eq_tol(gyro_metrics_macro_f1(&m), (0.8 + 0.5 + 2.0 / 3.0) / 3.0, 1e-12);
    ck_assert(isnan(gyro_metrics_cross_entropy(&m)));
    gyro_metrics_add(&m, 5, 0, 0.5); /* out of range: ignored */
    ck_assert_uint_eq(m.n, 6);
    gyro_metrics_free(&m);
}
END_TEST

START_TEST(test_absent_class_and_ce)
{
    gyro_metrics m;
    ck_assert_int_eq(gyro_metrics_init(&m, 4), GYRO_OK);
    gyro_metrics_add(&m, 0, 0, 0.5);
    gyro_metrics_add(&m, 1, 0, 0.25);
    gyro_metrics_add(&m, 1, 1, 0.0); /* clamped to 1e-12 */
    ck_assert_double_eq_tol(gyro_metrics_cross_entropy(&m),
                            (log(2.0) + log(4.0) + -log(1e-12)) / 3.0, 1e-9);
    /* classes 2,3 never occur: macro over 0 and 1 only.
     * class 0: P=1/2 R=1 F=2/3; class 1: P=1 R=1/2 F=2/3 */
    ck_assert_double_eq_tol(gyro_metrics_macro_f1(&m), 2.0 / 3.0, 1e-12);
    gyro_class_stats s3 = gyro_metrics_class(&m, 3);
    ck_assert(isnan(s3.precision) && isnan(s3.recall));
    ck_assert_double_eq(s3.f1, 0.0);
    gyro_metrics_free(&m);
    ck_assert_int_eq(gyro_metrics_init(&m, 0), GYRO_ERR_USAGE);
    ck_assert_ptr_null(m.confusion);
}
END_TEST

START_TEST(test_levels)
{
    const char *labels[] = {"music.play", "music.pause", "weather.query", "music.play+weather.query",
                            "weather.query+music.pause", "other", "music.pause+weather.query"};
    gyro_metrics m;
    ck_assert_int_eq(gyro_metrics_init(&m, 7), GYRO_OK);
    gyro_metrics_add(&m, 0, 1, -1); /* level 1 right (music), level 2 wrong */
    gyro_metrics_add(&m, 0, 2, -1); /* both wrong */
    gyro_metrics_add(&m, 3, 4, -1); /* level 1: music+weather == music+weather; level 2 wrong */
    gyro_metrics_add(&m, 5, 5, -1); /* right */
    gyro_metrics_add(&m, 4, 6, -1); /* same atom set, other spelling: right at level 1 only */
    gyro_label_set *set = set_of(labels, 7);
    double acc[GYRO_METRICS_MAX_LEVELS];
    int nl = gyro_metrics_level_accuracy(&m, set, acc, GYRO_METRICS_MAX_LEVELS);
    ck_assert_int_eq(nl, 2);
    ck_assert_double_eq_tol(acc[0], 4.0 / 5.0, 1e-12);
    ck_assert_double_eq_tol(acc[1], 1.0 / 5.0, 1e-12);
    ck_assert_double_eq_tol(acc[1], gyro_metrics_accuracy(&m), 1e-12);
    /* max_levels caps the levels written */
    ck_assert_int_eq(gyro_metrics_level_accuracy(&m, set, acc, 1), 1);
    ck_assert_double_eq_tol(acc[0], gyro_metrics_accuracy(&m), 1e-12);
    /* a set of another class count, or none: nothing written */
    gyro_label_set *small = set_of(labels, 3);
    ck_assert_int_eq(gyro_metrics_level_accuracy(&m, small, acc, GYRO_METRICS_MAX_LEVELS), 0);
    ck_assert_int_eq(gyro_metrics_level_accuracy(&m, NULL, acc, GYRO_METRICS_MAX_LEVELS), 0);
    FILE *devnull = fopen("/dev/null", "w");
    ck_assert_ptr_nonnull(devnull);
    ck_assert_int_eq(gyro_metrics_write_text(&m, small, 0, NULL, devnull), GYRO_ERR_USAGE);
    fclose(devnull);
    gyro_label_set_free(small);
    gyro_label_set_free(set);
    gyro_metrics_free(&m);
}
END_TEST

/* Two classes of the longest label the set accepts (GYRO_LABEL_MAX_BYTES) that share the top
 * level: a confusion between them is right at level 1, wrong at level 2. */
START_TEST(test_levels_long_labels)
{
    char a[GYRO_LABEL_MAX_BYTES + 1], b[GYRO_LABEL_MAX_BYTES + 1];
    memcpy(a, "music.", 6);
    memcpy(b, "music.", 6);
    memset(a + 6, 'x', GYRO_LABEL_MAX_BYTES - 6);
    memset(b + 6, 'y', GYRO_LABEL_MAX_BYTES - 6);
    a[GYRO_LABEL_MAX_BYTES] = b[GYRO_LABEL_MAX_BYTES] = '\0';
    const char *names[] = {a, b};
    gyro_label_set *set = set_of(names, 2);
    gyro_metrics m;
    ck_assert_int_eq(gyro_metrics_init(&m, 2), GYRO_OK);
    gyro_metrics_add(&m, 0, 1, -1);
    gyro_metrics_add(&m, 1, 0, -1);
    double acc[GYRO_METRICS_MAX_LEVELS];
    ck_assert_int_eq(gyro_metrics_level_accuracy(&m, set, acc, GYRO_METRICS_MAX_LEVELS), 2);
    ck_assert_double_eq_tol(acc[0], 1.0, 1e-12);
    ck_assert_double_eq_tol(acc[1], 0.0, 1e-12);

    /* a composite of many long atoms: the projections compare, the deepest level is exact */
    char c[GYRO_LABEL_MAX_BYTES + 1], d[GYRO_LABEL_MAX_BYTES + 1];
    size_t off = 0;
    for (int i = 0; i < 30; i++) off += (size_t)snprintf(c + off, sizeof c - off, "%sd%02d.%026d", i ? "+" : "", i, i);
    ck_assert_uint_gt(off, 900);
    memcpy(d, c, off + 1);
    d[off - 1] = 'z'; /* last atom's second level differs */
    const char *names2[] = {c, d};
    gyro_label_set *set2 = set_of(names2, 2);
    ck_assert_int_eq(gyro_metrics_level_accuracy(&m, set2, acc, GYRO_METRICS_MAX_LEVELS), 2);
    ck_assert_double_eq_tol(acc[0], 1.0, 1e-12);
    ck_assert_double_eq_tol(acc[1], 0.0, 1e-12);
    gyro_label_set_free(set2);
    gyro_label_set_free(set);
    gyro_metrics_free(&m);
}
END_TEST

START_TEST(test_reports)
{
    const char *names[] = {"a.x", "a.y", "b<&>"};
    gyro_label_set *labels = set_of(names, 3);
    gyro_metrics m;
    ck_assert_int_eq(gyro_metrics_init(&m, 3), GYRO_OK);
    for (int i = 0; i < 10; i++) gyro_metrics_add(&m, i % 3, (i * 7) % 3, 0.5);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_int_eq(gyro_metrics_write_text(&m, labels, 0, NULL, f), GYRO_OK);
    fclose(f);
    ck_assert_ptr_nonnull(strstr(buf, "accuracy:"));
    ck_assert_ptr_nonnull(strstr(buf, "macro-F1:"));
    ck_assert_ptr_nonnull(strstr(buf, "accuracy at level 1:"));
    ck_assert_ptr_nonnull(strstr(buf, "confusion matrix"));
    free(buf);

    /* the confusion picture (pipeline/picture.h) escapes the class names */
    char *svg = NULL;
    size_t svg_len = 0;
    FILE *mem = open_memstream(&svg, &svg_len);
    ck_assert_ptr_nonnull(mem);
    ck_assert_int_eq(gyro_picture_confusion_svg(&m, labels, mem), GYRO_OK);
    fclose(mem);
    ck_assert_ptr_nonnull(strstr(svg, "<svg"));
    ck_assert_ptr_nonnull(strstr(svg, "b&lt;&amp;&gt;"));
    ck_assert_ptr_null(strstr(svg, "b<&>"));
    ck_assert_ptr_nonnull(strstr(svg, "</svg>"));
    free(svg);
    const char *two[] = {"a.x", "a.y"};
    gyro_label_set *wrong = set_of(two, 2);
    mem = open_memstream(&svg, &svg_len);
    ck_assert_int_eq(gyro_picture_confusion_svg(&m, wrong, mem), GYRO_ERR_USAGE);
    fclose(mem);
    free(svg);
    gyro_label_set_free(wrong);
    gyro_label_set_free(labels);
    gyro_metrics_free(&m);
}
END_TEST

/* A probability row of k classes with `p` at class `at` and the rest shared evenly. */
static void peak(float *row, int k, int at, float p)
{
    for (int c = 0; c < k; c++) row[c] = c == at ? p : (1.0f - p) / (float)(k - 1);
}

/* The NLPCC measure on a confusion computed by hand. Classes: OTHERS, music.play, music.pause,
 * navigation.navigation (and phone_call.cancel, never seen nor predicted, in a 5-class set).
 *   play→play ×3, play→OTHERS, pause→pause, pause→play, OTHERS→OTHERS ×2, OTHERS→nav, nav→nav ×2
 * play:  tp 3, fp 1, fn 1 → P 3/4, R 3/4
 * pause: tp 1, fp 0, fn 1 → P 1,   R 1/2
 * nav:   tp 2, fp 1, fn 0 → P 2/3, R 1
 * macro-P = 29/36, macro-R = 27/36, F1 = 2·29·27 / (36·56) = 1566/2016 (the mean of the
 * per-intent F1s, (3/4 + 2/3 + 4/5)/3 = 0.7389, is not the measure). With the fifth intent
 * (P = R = 0, as the script counts a schema intent absent from the test file): macro-P 29/48,
 * macro-R 27/48, F1 = 1566/2688. */
START_TEST(test_nlpcc)
{
    const char *names[] = {"OTHERS", "music.play", "music.pause", "navigation.navigation", "phone_call.cancel"};
    const int t[] = {1, 1, 1, 1, 2, 2, 0, 0, 0, 3, 3};
    const int p[] = {1, 1, 1, 0, 2, 1, 0, 0, 3, 3, 3};
    for (int k = 4; k <= 5; k++) {
        gyro_label_set *set = set_of(names, k);
        gyro_metrics m;
        ck_assert_int_eq(gyro_metrics_init(&m, k), GYRO_OK);
        for (int i = 0; i < 11; i++) gyro_metrics_add(&m, t[i], p[i], -1);
        gyro_nlpcc_score ns = {0};
        ck_assert_int_eq(gyro_metrics_nlpcc(&m, set, "OTHERS", &ns), 1);
        ck_assert_int_eq(ns.intents, k - 1);
        double d = k == 4 ? 36.0 : 48.0;
        ck_assert_double_eq_tol(ns.precision, 29.0 / d, 1e-12);
        ck_assert_double_eq_tol(ns.recall, 27.0 / d, 1e-12);
        ck_assert_double_eq_tol(ns.f1, k == 4 ? 1566.0 / 2016.0 : 1566.0 / 2688.0, 1e-12);
        /* the label is matched after trimming, as the label set does */
        ck_assert_int_eq(gyro_metrics_nlpcc(&m, set, " OTHERS ", &ns), 1);
        /* no such label: nothing written */
        gyro_nlpcc_score none = {.f1 = -7};
        ck_assert_int_eq(gyro_metrics_nlpcc(&m, set, "NONE", &none), 0);
        ck_assert_double_eq(none.f1, -7);
        ck_assert_int_eq(gyro_metrics_nlpcc(&m, NULL, "OTHERS", &none), 0);
        /* leaving out another label averages over the rest: without nav, the intents are
         * OTHERS (tp 2, fp 1, fn 1: 2/3, 2/3), play (3/4, 3/4), pause (1, 1/2) */
        if (k == 4) {
            ck_assert_int_eq(gyro_metrics_nlpcc(&m, set, "navigation.navigation", &ns), 1);
            double P = (2.0 / 3 + 0.75 + 1) / 3, R = (2.0 / 3 + 0.75 + 0.5) / 3;
            ck_assert_double_eq_tol(ns.f1, 2 * P * R / (P + R), 1e-12);
        }
        /* the text report names the measure */
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        ck_assert_int_eq(gyro_metrics_write_text(&m, set, 0, "OTHERS", f), GYRO_OK);
        fclose(f);
        ck_assert_ptr_nonnull(strstr(buf, k == 4 ? "NLPCC 2018 task-4 intent F1 (OTHERS left out):  77.68%"
                                                 : "NLPCC 2018 task-4 intent F1 (OTHERS left out):  58.26%"));
        free(buf);
        gyro_metrics_free(&m);
        gyro_label_set_free(set);
    }

    /* an unseen intent predicted as play: play's precision falls to 3/5 and the unseen label is
     * an intent with P = R = 0; an unseen OTHERS is still the label left out */
    gyro_label_set *set = set_of(names, 4);
    gyro_metrics m;
    ck_assert_int_eq(gyro_metrics_init(&m, 4), GYRO_OK);
    for (int i = 0; i < 11; i++) gyro_metrics_add(&m, t[i], p[i], -1);
    float row[4];
    peak(row, 4, 1, 0.9f);
    ck_assert_int_eq(gyro_metrics_add_unseen(&m, "music.hum", row), GYRO_OK);
    gyro_nlpcc_score ns;
    ck_assert_int_eq(gyro_metrics_nlpcc(&m, set, "OTHERS", &ns), 1);
    ck_assert_int_eq(ns.intents, 4);
    double P = (0.6 + 1 + 2.0 / 3 + 0) / 4, R = (0.75 + 0.5 + 1 + 0) / 4;
    ck_assert_double_eq_tol(ns.f1, 2 * P * R / (P + R), 1e-12);
    gyro_metrics_free(&m);
    gyro_label_set_free(set);

    const char *no_others[] = {"music.play", "music.pause"};
    set = set_of(no_others, 2);
    ck_assert_int_eq(gyro_metrics_init(&m, 2), GYRO_OK);
    gyro_metrics_add(&m, 0, 1, -1);
    peak(row, 2, 0, 0.75f);
    ck_assert_int_eq(gyro_metrics_add_unseen(&m, "OTHERS", row), GYRO_OK);
    ck_assert_int_eq(gyro_metrics_nlpcc(&m, set, "OTHERS", &ns), 1);
    ck_assert_int_eq(ns.intents, 2);
    /* play: tp 0, fp 1 (the OTHERS example); pause: tp 0, fp 1: all zero */
    ck_assert_double_eq(ns.f1, 0.0);
    gyro_metrics_free(&m);
    gyro_label_set_free(set);
}
END_TEST

/* P@k and R@k as fastText's Meter counts them, over atoms. Classes a, b, a+b, c (atoms a, b, c).
 * Probabilities are binary fractions, so sums and ties are exact.
 *   1. truth a,   probs (.5 .125 .25 .125)   atoms a .75 b .375 c .125  top2 {a,b}  gold {a}    hits 1
 *   2. truth a+b, probs (.125 .25 .25 .375)  atoms a .375 b .5 c .375   top2 {b,a}  gold {a,b}  hits 2
 *      (a and c tie: the lower atom id wins)
 *   3. truth c,   probs (.5 .25 .125 .125)   atoms a .625 b .375 c .125 top2 {a,b}  gold {c}    hits 0
 *   4. unseen c+d, probs (0 0 0 1)           atoms c 1, a = b = 0       top2 {c,a}  gold {c}    hits 1
 *   5. unseen zzz: no atom the model knows, left out as fastText leaves it out
 * k = 2: P = 4/8, R = 4/5 over 4 examples. k = 1: tops a, b, a, c: P = 3/4, R = 3/5. k = 5
 * (more than the 3 atoms): 3 predicted each, all gold found: P = 5/12, R = 1. Accuracy: only
 * example 1 is right (2 predicts c, 3 predicts a, 4 and 5 are unseen): 1/5. */
START_TEST(test_at_k)
{
    const char *names[] = {"a", "b", "a+b", "c"};
    gyro_label_set *set = set_of(names, 4);
    ck_assert_int_eq(gyro_label_set_atom_count(set), 3);
    const float probs[5][4] = {{.5f, .125f, .25f, .125f}, {.125f, .25f, .25f, .375f}, {.5f, .25f, .125f, .125f},
                               {0, 0, 0, 1}, {.25f, .25f, .25f, .25f}};
    const int truth[3] = {0, 2, 3};
    const int ks[3] = {2, 1, 5};
    const double want_p[3] = {4.0 / 8, 3.0 / 4, 5.0 / 12}, want_r[3] = {4.0 / 5, 3.0 / 5, 1.0};
    for (int r = 0; r < 3; r++) {
        gyro_metrics m;
        ck_assert_int_eq(gyro_metrics_init(&m, 4), GYRO_OK);
        double pk, rk;
        uint64_t n;
        ck_assert_int_eq(gyro_metrics_at_k(&m, &pk, &rk, &n), 0); /* not ranked yet */
        ck_assert_int_eq(gyro_metrics_rank(&m, set, 0), GYRO_ERR_USAGE);
        ck_assert_int_eq(gyro_metrics_rank(&m, NULL, 2), GYRO_ERR_USAGE);
        ck_assert_int_eq(gyro_metrics_rank(&m, set, ks[r]), GYRO_OK);
        for (int i = 0; i < 3; i++) gyro_metrics_add_probs(&m, truth[i], probs[i]);
        ck_assert_int_eq(gyro_metrics_add_unseen(&m, "c+d", probs[3]), GYRO_OK);
        ck_assert_int_eq(gyro_metrics_add_unseen(&m, "zzz", probs[4]), GYRO_OK);
        ck_assert_int_eq(gyro_metrics_at_k(&m, &pk, &rk, &n), ks[r]);
        ck_assert_uint_eq(n, 4);
        ck_assert_double_eq_tol(pk, want_p[r], 1e-12);
        ck_assert_double_eq_tol(rk, want_r[r], 1e-12);
        ck_assert_uint_eq(m.n, 5);
        ck_assert_uint_eq(m.n_unseen, 2);
        ck_assert_double_eq_tol(gyro_metrics_accuracy(&m), 1.0 / 5, 1e-12);
        /* cross-entropy over the three known examples only */
        ck_assert_double_eq_tol(gyro_metrics_cross_entropy(&m), -(log(.5) + log(.25) + log(.125)) / 3, 1e-6);
        gyro_metrics_free(&m);
    }
    /* without composites atoms are the classes: P@1 is the accuracy */
    const char *flat[] = {"x", "y", "z"};
    gyro_label_set *fs = set_of(flat, 3);
    gyro_metrics m;
    ck_assert_int_eq(gyro_metrics_init(&m, 3), GYRO_OK);
    ck_assert_int_eq(gyro_metrics_rank(&m, fs, 1), GYRO_OK);
    float row[3];
    for (int i = 0; i < 9; i++) {
        peak(row, 3, (i * 2) % 3, 0.6f);
        gyro_metrics_add_probs(&m, i % 3, row);
    }
    double pk, rk;
    gyro_metrics_at_k(&m, &pk, &rk, NULL);
    ck_assert_double_eq_tol(pk, gyro_metrics_accuracy(&m), 1e-12);
    ck_assert_double_eq_tol(rk, gyro_metrics_accuracy(&m), 1e-12);
    ck_assert_double_eq_tol(pk, 3.0 / 9, 1e-12);
    gyro_metrics_free(&m);
    gyro_label_set_free(fs);
    gyro_label_set_free(set);
}
END_TEST

/* Examples of labels the model never saw are errors everywhere:
 *   play→play, pause→play, unseen music.hum→pause, music.hum→weather, news.read→play
 * accuracy 1/5; play P 1/3 R 1 F1 1/2; pause P 0 (music.hum predicted as it) F1 0; weather
 * predicted once, F1 0; music.hum and news.read F1 0: macro-F1 = 0.5/5. Level 1: play→play,
 * pause→play (music), music.hum→pause (music) right: 3/5; level 2 exact: 1/5. */
START_TEST(test_unseen)
{
    const char *names[] = {"music.play", "music.pause", "weather.query"};
    gyro_label_set *set = set_of(names, 3);
    gyro_metrics m;
    ck_assert_int_eq(gyro_metrics_init(&m, 3), GYRO_OK);
    float row[3];
    peak(row, 3, 0, 0.5f);
    gyro_metrics_add_probs(&m, 0, row);
    gyro_metrics_add_probs(&m, 1, row);
    peak(row, 3, 1, 0.5f);
    ck_assert_int_eq(gyro_metrics_add_unseen(&m, "music.hum", row), GYRO_OK);
    peak(row, 3, 2, 0.5f);
    ck_assert_int_eq(gyro_metrics_add_unseen(&m, " music.hum ", row), GYRO_OK); /* trimmed: the same label */
    peak(row, 3, 0, 0.5f);
    ck_assert_int_eq(gyro_metrics_add_unseen(&m, "news.read", row), GYRO_OK);
    /* a label that does not parse: an error, nothing counted */
    ck_assert_int_eq(gyro_metrics_add_unseen(&m, "a++b", row), GYRO_ERR_DATA);
    ck_assert_int_eq(gyro_metrics_add_unseen(&m, NULL, row), GYRO_ERR_USAGE);
    ck_assert_uint_eq(m.n, 5);
    ck_assert_uint_eq(m.n_unseen, 3);
    ck_assert_int_eq(m.n_unseen_labels, 2);
    ck_assert_str_eq(gyro_metrics_unseen_label(&m, 0), "music.hum");
    ck_assert_str_eq(gyro_metrics_unseen_label(&m, 1), "news.read");
    ck_assert_ptr_null(gyro_metrics_unseen_label(&m, 2));
    ck_assert_double_eq_tol(gyro_metrics_accuracy(&m), 1.0 / 5, 1e-12);
    gyro_class_stats s = gyro_metrics_class(&m, 0);
    ck_assert_uint_eq(s.support, 1);
    ck_assert_uint_eq(s.predicted, 3);
    ck_assert_double_eq_tol(s.precision, 1.0 / 3, 1e-12);
    ck_assert_double_eq_tol(s.f1, 0.5, 1e-12);
    s = gyro_metrics_class(&m, 1);
    ck_assert_uint_eq(s.predicted, 1);
    ck_assert_double_eq(s.precision, 0.0);
    s = gyro_metrics_unseen_class(&m, 0);
    ck_assert_uint_eq(s.support, 2);
    ck_assert_uint_eq(s.predicted, 0);
    ck_assert(isnan(s.precision));
    ck_assert_double_eq(s.recall, 0.0);
    ck_assert_double_eq_tol(gyro_metrics_macro_f1(&m), 0.5 / 5, 1e-12);
    double acc[GYRO_METRICS_MAX_LEVELS];
    ck_assert_int_eq(gyro_metrics_level_accuracy(&m, set, acc, GYRO_METRICS_MAX_LEVELS), 2);
    ck_assert_double_eq_tol(acc[0], 3.0 / 5, 1e-12);
    ck_assert_double_eq_tol(acc[1], 1.0 / 5, 1e-12);
    /* over the two known examples: p(play) = .5, p(pause) = .25 */
    ck_assert_double_eq_tol(gyro_metrics_cross_entropy(&m), -(log(0.5) + log(0.25)) / 2, 1e-6);

    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_int_eq(gyro_metrics_write_text(&m, set, 0, "OTHERS", f), GYRO_OK);
    fclose(f);
    ck_assert_ptr_nonnull(strstr(buf, "unseen: 3 examples (2 labels)"));
    ck_assert_ptr_nonnull(strstr(buf, "accuracy:  20.00%"));
    ck_assert_ptr_nonnull(strstr(buf, "music.hum (unseen)"));
    ck_assert_ptr_nonnull(strstr(buf, "accuracy at level 1:  60.00%"));
    ck_assert_ptr_null(strstr(buf, "NLPCC")); /* no OTHERS label */
    free(buf);
    gyro_metrics_free(&m);
    gyro_label_set_free(set);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("metrics");
    TCase *tc = tcase_create("metrics");
    tcase_add_test(tc, test_accuracy_f1);
    tcase_add_test(tc, test_absent_class_and_ce);
    tcase_add_test(tc, test_levels);
    tcase_add_test(tc, test_levels_long_labels);
    tcase_add_test(tc, test_reports);
    tcase_add_test(tc, test_nlpcc);
    tcase_add_test(tc, test_at_k);
    tcase_add_test(tc, test_unseen);
    suite_add_tcase(s, tc);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? 1 : 0;
}

/* check_metrics.c — Check suite for models/metrics: accuracy, macro-F1 (against figures
 * computed by hand, as scikit-learn's f1_score(average="macro") gives them), cross-entropy,
 * hierarchy levels with composite labels (over a models/text/labels.h label set, long labels
 * included), the text report and the SVG image. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "models/metrics.h"
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
    ck_assert_int_eq(gyro_metrics_write_text(&m, small, 0, devnull), GYRO_ERR_USAGE);
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
    ck_assert_int_eq(gyro_metrics_write_text(&m, labels, 0, f), GYRO_OK);
    fclose(f);
    ck_assert_ptr_nonnull(strstr(buf, "accuracy:"));
    ck_assert_ptr_nonnull(strstr(buf, "macro-F1:"));
    ck_assert_ptr_nonnull(strstr(buf, "accuracy at level 1:"));
    ck_assert_ptr_nonnull(strstr(buf, "confusion matrix"));
    free(buf);

    char dir[] = "/tmp/gyro-metrics-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/cm.svg", dir);
    ck_assert_int_eq(gyro_metrics_write_svg(&m, labels, path), GYRO_OK);
    FILE *in = fopen(path, "r");
    ck_assert_ptr_nonnull(in);
    char svg[65536];
    size_t n = fread(svg, 1, sizeof svg - 1, in);
    svg[n] = '\0';
    fclose(in);
    ck_assert_ptr_nonnull(strstr(svg, "<svg"));
    ck_assert_ptr_nonnull(strstr(svg, "b&lt;&amp;&gt;"));
    ck_assert_ptr_null(strstr(svg, "b<&>"));
    ck_assert_ptr_nonnull(strstr(svg, "</svg>"));
    unlink(path);
    snprintf(path, sizeof path, "%s/no/such/dir/cm.svg", dir);
    ck_assert_int_eq(gyro_metrics_write_svg(&m, labels, path), GYRO_ERR_IO);
    const char *two[] = {"a.x", "a.y"};
    gyro_label_set *wrong = set_of(two, 2);
    snprintf(path, sizeof path, "%s/cm.svg", dir);
    ck_assert_int_eq(gyro_metrics_write_svg(&m, wrong, path), GYRO_ERR_USAGE);
    ck_assert_int_ne(access(path, F_OK), 0);
    gyro_label_set_free(wrong);
    rmdir(dir);
    gyro_label_set_free(labels);
    gyro_metrics_free(&m);
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
    suite_add_tcase(s, tc);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? 1 : 0;
}

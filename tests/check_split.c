/* check_split.c — Check suite for pipeline/split: determinism for a seed, independence from the
 * input order, sessions never cut, dev proportions, k folds that partition the data, bad
 * options, and the strmap the split groups with. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/core/rng.h"
#include "pipeline/split.h"
#include "models/text/strmap.h"

#define N_SESS 600

/* A synthetic corpus: N_SESS sessions of 1..9 examples (like NLPCC's multi-turn sessions) plus
 * 40 examples without a session. */
typedef struct corpus {
    Gyro__V1__Example ex[N_SESS * 9 + 40];
    Gyro__V1__Example *ptr[N_SESS * 9 + 40];
    char sess[N_SESS][16];
    size_t n;
} corpus;

static corpus *make_corpus(void)
{
    corpus *c = calloc(1, sizeof *c);
    gyro_rng r;
    gyro_rng_seed(&r, 11);
    for (int s = 0; s < N_SESS; s++) {
        snprintf(c->sess[s], sizeof c->sess[s], "%d", 1000 + s * 7);
        int len = 1 + (int)gyro_rng_below(&r, 9);
        for (int k = 0; k < len; k++) {
            Gyro__V1__Example *e = &c->ex[c->n];
            gyro__v1__example__init(e);
            e->source = "nlpcc:x";
            e->session = c->sess[s];
            e->line = c->n + 1;
            c->ptr[c->n] = e;
            c->n++;
        }
    }
    for (int k = 0; k < 40; k++) {
        Gyro__V1__Example *e = &c->ex[c->n];
        gyro__v1__example__init(e);
        e->source = "tsv:y";
        e->line = (uint64_t)k + 1;
        c->ptr[c->n] = e;
        c->n++;
    }
    return c;
}

/* Every session is wholly in dev or wholly in train. */
static void assert_sessions_intact(const corpus *c, const uint8_t *dev)
{
    for (size_t i = 1; i < c->n; i++)
        if (c->ex[i].session[0] && strcmp(c->ex[i].session, c->ex[i - 1].session) == 0)
            ck_assert_int_eq(dev[i], dev[i - 1]);
}

START_TEST(test_fraction_deterministic_and_intact)
{
    corpus *c = make_corpus();
    uint8_t *d1 = malloc(c->n), *d2 = malloc(c->n), *d3 = malloc(c->n);
    gyro_split_options o = {.seed = 42, .dev_fraction = 0.1};
    gyro_split_summary s1, s2;
    ck_assert_int_eq(gyro_split_examples(&o, (const Gyro__V1__Example *const *)c->ptr, c->n, d1, &s1), GYRO_OK);
    ck_assert_int_eq(gyro_split_examples(&o, (const Gyro__V1__Example *const *)c->ptr, c->n, d2, &s2), GYRO_OK);
    ck_assert_int_eq(memcmp(d1, d2, c->n), 0);
    assert_sessions_intact(c, d1);
    ck_assert_uint_eq(s1.groups, N_SESS + 40);
    ck_assert_uint_eq(s1.examples, c->n);
    size_t dev = 0;
    for (size_t i = 0; i < c->n; i++) dev += d1[i];
    ck_assert_uint_eq(dev, s1.dev_examples);
    /* closest prefix: within half of the largest session (9 examples) of the target */
    ck_assert_double_le(fabs((double)dev - 0.1 * (double)c->n), 4.5);
    ck_assert_uint_gt(s1.dev_groups, 0);

    /* another seed gives another split */
    o.seed = 43;
    ck_assert_int_eq(gyro_split_examples(&o, (const Gyro__V1__Example *const *)c->ptr, c->n, d3, NULL), GYRO_OK);
    ck_assert_int_ne(memcmp(d1, d3, c->n), 0);

    /* reversing the input order changes nothing for any example */
    o.seed = 42;
    Gyro__V1__Example **rev = malloc(c->n * sizeof *rev);
    for (size_t i = 0; i < c->n; i++) rev[i] = c->ptr[c->n - 1 - i];
    ck_assert_int_eq(gyro_split_examples(&o, (const Gyro__V1__Example *const *)rev, c->n, d3, NULL), GYRO_OK);
    for (size_t i = 0; i < c->n; i++) ck_assert_int_eq(d3[c->n - 1 - i], d1[i]);
    free(rev);
    free(d1);
    free(d2);
    free(d3);
    free(c);
}
END_TEST

START_TEST(test_fraction_extremes)
{
    corpus *c = make_corpus();
    uint8_t *d = malloc(c->n);
    gyro_split_summary s;
    gyro_split_options o = {.seed = 1, .dev_fraction = 0.0};
    ck_assert_int_eq(gyro_split_examples(&o, (const Gyro__V1__Example *const *)c->ptr, c->n, d, &s), GYRO_OK);
    ck_assert_uint_eq(s.dev_examples, 0);
    o.dev_fraction = 1.0;
    ck_assert_int_eq(gyro_split_examples(&o, (const Gyro__V1__Example *const *)c->ptr, c->n, d, &s), GYRO_OK);
    ck_assert_uint_eq(s.dev_examples, c->n);
    o.dev_fraction = 0.5;
    ck_assert_int_eq(gyro_split_examples(&o, (const Gyro__V1__Example *const *)c->ptr, c->n, d, &s), GYRO_OK);
    ck_assert_double_le(fabs((double)s.dev_examples - 0.5 * (double)c->n), 4.5);
    /* empty input */
    ck_assert_int_eq(gyro_split_examples(&o, NULL, 0, NULL, &s), GYRO_OK);
    ck_assert_uint_eq(s.examples, 0);
    free(d);
    free(c);
}
END_TEST

START_TEST(test_kfold_partition)
{
    corpus *c = make_corpus();
    const int K = 5;
    uint8_t *d = malloc(c->n);
    int *count = calloc(c->n, sizeof *count);
    for (int f = 0; f < K; f++) {
        gyro_split_options o = {.seed = 9, .folds = K, .fold = f};
        gyro_split_summary s;
        ck_assert_int_eq(gyro_split_examples(&o, (const Gyro__V1__Example *const *)c->ptr, c->n, d, &s), GYRO_OK);
        assert_sessions_intact(c, d);
        ck_assert_double_le(fabs((double)s.dev_examples - (double)c->n / K), 9.0);
        for (size_t i = 0; i < c->n; i++) count[i] += d[i];
    }
    for (size_t i = 0; i < c->n; i++) ck_assert_int_eq(count[i], 1);   /* each example in one fold */
    free(count);
    free(d);
    free(c);
}
END_TEST

START_TEST(test_groups_and_bad_options)
{
    const char *keys[] = {"a", "b", "c"};
    uint64_t sizes[] = {5, 0, 5};
    uint8_t dev[3];
    gyro_split_options o = {.seed = 1, .dev_fraction = 0.5};
    ck_assert_int_eq(gyro_split_groups(&o, keys, sizes, NULL, 3, dev), GYRO_OK);
    ck_assert_int_eq(dev[0] + dev[2], 1);   /* exactly one of the two non-empty sessions */

    o.dev_fraction = 1.5;
    ck_assert_int_eq(gyro_split_groups(&o, keys, sizes, NULL, 3, dev), GYRO_ERR_USAGE);
    o.dev_fraction = NAN;
    ck_assert_int_eq(gyro_split_groups(&o, keys, sizes, NULL, 3, dev), GYRO_ERR_USAGE);
    o.dev_fraction = 0.1;
    o.folds = 1;
    ck_assert_int_eq(gyro_split_groups(&o, keys, sizes, NULL, 3, dev), GYRO_ERR_USAGE);
    o.folds = 4;
    o.fold = 0;
    ck_assert_int_eq(gyro_split_groups(&o, keys, sizes, NULL, 3, dev), GYRO_ERR_USAGE);  /* 4 folds, 3 sessions */
    ck_assert_ptr_nonnull(strstr(gyro_error_message(), "4 folds"));
    o.folds = 3;
    o.fold = 3;
    ck_assert_int_eq(gyro_split_groups(&o, keys, sizes, NULL, 3, dev), GYRO_ERR_USAGE);
    o.fold = -1;
    ck_assert_int_eq(gyro_split_groups(&o, keys, sizes, NULL, 3, dev), GYRO_ERR_USAGE);
    ck_assert_int_eq(gyro_split_groups(NULL, keys, sizes, NULL, 3, dev), GYRO_ERR_USAGE);
    o.fold = 0;
    ck_assert_int_eq(gyro_split_groups(&o, NULL, sizes, NULL, 3, dev), GYRO_ERR_USAGE);
}
END_TEST

/* SMP-like data: one-utterance sessions over labels of very different sizes */
START_TEST(test_stratified)
{
    enum { NL = 12 };
    static const int per_label[NL] = {10, 10, 11, 13, 20, 25, 40, 57, 80, 100, 150, 300};
    size_t n = 0;
    for (int l = 0; l < NL; l++) n += (size_t)per_label[l];
    Gyro__V1__Example *ex = calloc(n, sizeof *ex);
    Gyro__V1__Example **ptr = calloc(n, sizeof *ptr);
    char (*sess)[16] = calloc(n, sizeof *sess);
    char lab[NL][16];
    int *label_of = calloc(n, sizeof *label_of);
    size_t k = 0;
    for (int l = 0; l < NL; l++) {
        snprintf(lab[l], sizeof lab[l], "d%d.i%d", l % 3, l);
        for (int j = 0; j < per_label[l]; j++, k++) {
            gyro__v1__example__init(&ex[k]);
            snprintf(sess[k], sizeof sess[k], "r%zu", k + 1);
            ex[k].source = "smp:x";
            ex[k].session = sess[k];
            ex[k].label = lab[l];
            ex[k].line = k + 1;
            ptr[k] = &ex[k];
            label_of[k] = l;
        }
    }
    uint8_t *d = malloc(n), *d2 = malloc(n);
    int *seen = calloc(n, sizeof *seen);
    const int K = 5;
    for (int f = 0; f < K; f++) {
        gyro_split_options o = {.seed = 3, .folds = K, .fold = f, .stratify = 1};
        gyro_split_summary s;
        ck_assert_int_eq(gyro_split_examples(&o, (const Gyro__V1__Example *const *)ptr, n, d, &s), GYRO_OK);
        ck_assert_int_eq(gyro_split_examples(&o, (const Gyro__V1__Example *const *)ptr, n, d2, NULL), GYRO_OK);
        ck_assert_int_eq(memcmp(d, d2, n), 0);
        /* every label: its fold share within one of per_label/K; fold sizes within one of n/K */
        int in_dev[NL] = {0};
        for (size_t i = 0; i < n; i++) {
            in_dev[label_of[i]] += d[i];
            seen[i] += d[i];
        }
        for (int l = 0; l < NL; l++)
            ck_assert_msg(abs(in_dev[l] * K - per_label[l]) <= K, "fold %d label %d: %d of %d", f,
                          l, in_dev[l], per_label[l]);
        ck_assert_double_le(fabs((double)s.dev_examples - (double)n / K), 1.0);
    }
    for (size_t i = 0; i < n; i++) ck_assert_int_eq(seen[i], 1);
    /* fraction mode: each label within one example of its share */
    gyro_split_options o = {.seed = 3, .dev_fraction = 0.2, .stratify = 1};
    gyro_split_summary s;
    ck_assert_int_eq(gyro_split_examples(&o, (const Gyro__V1__Example *const *)ptr, n, d, &s), GYRO_OK);
    int in_dev[NL] = {0};
    for (size_t i = 0; i < n; i++) in_dev[label_of[i]] += d[i];
    for (int l = 0; l < NL; l++)
        ck_assert_double_le(fabs(in_dev[l] - 0.2 * per_label[l]), 1.0);
    ck_assert_double_le(fabs((double)s.dev_examples - 0.2 * (double)n), 1.0);
    free(d);
    free(d2);
    free(seen);
    free(label_of);
    free(sess);
    free(ptr);
    free(ex);
}
END_TEST

START_TEST(test_strmap)
{
    gyro_strmap *m;
    ck_assert_int_eq(gyro_strmap_new(&m), GYRO_OK);
    ck_assert_int_eq(gyro_strmap_find(m, "x"), -1);
    char buf[64];
    for (int i = 0; i < 20000; i++) {
        snprintf(buf, sizeof buf, "key-%d", i);
        int32_t id;
        int added;
        ck_assert_int_eq(gyro_strmap_intern(m, buf, &id, &added), GYRO_OK);
        ck_assert_int_eq(id, i);
        ck_assert_int_eq(added, 1);
    }
    char big[100000];
    memset(big, 'z', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    int32_t id;
    int added;
    ck_assert_int_eq(gyro_strmap_intern(m, big, &id, &added), GYRO_OK);
    ck_assert_int_eq(id, 20000);
    ck_assert_int_eq(gyro_strmap_intern(m, "key-123", &id, &added), GYRO_OK);
    ck_assert_int_eq(id, 123);
    ck_assert_int_eq(added, 0);
    ck_assert_int_eq(gyro_strmap_intern(m, "", &id, &added), GYRO_OK);
    ck_assert_int_eq(id, 20001);
    ck_assert_uint_eq(gyro_strmap_count(m), 20002);
    ck_assert_str_eq(gyro_strmap_key(m, 19999), "key-19999");
    ck_assert_str_eq(gyro_strmap_key(m, 20000), big);
    ck_assert_ptr_null(gyro_strmap_key(m, 20002));
    ck_assert_int_eq(gyro_strmap_find(m, "key-777"), 777);
    ck_assert_int_eq(gyro_strmap_intern(m, NULL, &id, NULL), GYRO_ERR_USAGE);
    gyro_strmap_free(m);
    gyro_strmap_free(NULL);
}
END_TEST

static Suite *split_suite(void)
{
    Suite *s = suite_create("split");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_fraction_deterministic_and_intact);
    tcase_add_test(tc, test_fraction_extremes);
    tcase_add_test(tc, test_kfold_partition);
    tcase_add_test(tc, test_groups_and_bad_options);
    tcase_add_test(tc, test_stratified);
    tcase_add_test(tc, test_strmap);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(split_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* check_alloc.c — Check suite: the request path allocates nothing once warm. A Classify call's
 * model work (gyro_classifier_predict_context and gyro_classifier_predict_batch: normalization
 * with ICU, tokenization, the forward pass, softmax and top-k) on buffers made by earlier calls
 * (the per-thread scratch or batch buffers the server keeps) makes no call to malloc, calloc or
 * realloc, in gyro or in the libraries it calls.
 *
 * Allocations are counted by defining malloc, calloc, realloc, free and aligned_alloc in this
 * executable (they take precedence over libc's for every library of the process) on top of
 * glibc's __libc_* entry points, counting only while the calling thread has counting on. A
 * sanitizer build has its own allocator and interceptors: there the suite checks the results only
 * (the counts are 0 by construction) and says so. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/classifier.h"
#include "tests/support/scratch.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define COUNTING 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define COUNTING 0
#endif
#endif
#ifndef COUNTING
#define COUNTING 1
#endif

static _Thread_local int counting;
static _Thread_local long n_allocs;

#if COUNTING
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

void *malloc(size_t n)
{
    if (counting) n_allocs++;
    return __libc_malloc(n);
}

void *calloc(size_t k, size_t n)
{
    if (counting) n_allocs++;
    return __libc_calloc(k, n);
}

void *realloc(void *p, size_t n)
{
    if (counting) n_allocs++;
    return __libc_realloc(p, n);
}

void *aligned_alloc(size_t align, size_t n)
{
    if (counting) n_allocs++;
    return __libc_memalign(align, n);
}

void free(void *p) { __libc_free(p); }
#endif

static char tmpdir[64];

static void setup(void) { scratch_dir_new(tmpdir, sizeof tmpdir, "alloc"); }

static void teardown(void) { scratch_dir_remove(tmpdir); }

/* A model over a small vocabulary, saved and loaded back (a loaded transformer has its packed
 * weights, as the server's). arch 0: transformer, 1: n-grams. */
static gyro_classifier *model(int arch)
{
    gyro_label_set *ls;
    ck_assert_int_eq(gyro_label_set_new(&ls), GYRO_OK);
    const char *labels[] = {"music.play", "music.pause", "weather", "chat"};
    for (int i = 0; i < 4; i++) ck_assert_int_eq(gyro_label_set_add(ls, labels[i], NULL), GYRO_OK);
    const char *vocab[] = {"播", "放", "暂", "停", "天", "气", "歌", "的", "周", "杰"};
    gyro_classifier *m;
    if (arch == 1) {
        gyro_ngrams_config nc = gyro_ngrams_config_default(GYRO_TF_GEOMETRY_HYPERBOLIC);
        nc.dim = 16;
        ck_assert_int_eq(gyro_classifier_create_ngrams(&nc, 5, NULL, vocab, 10, ls, &m), GYRO_OK);
    } else {
        gyro_tf_config c = gyro_tf_config_default(GYRO_TF_GEOMETRY_HYPERBOLIC);
        c.dim = 32;
        c.n_layers = 2;
        c.n_heads = 4;
        c.head_dim = 8;
        c.ffn_dim = 64;
        c.max_len = 24;
        ck_assert_int_eq(gyro_classifier_create(&c, 5, NULL, vocab, 10, ls, &m), GYRO_OK);
    }
    char path[128];
    snprintf(path, sizeof path, "%s/m%d.clf", tmpdir, arch);
    ck_assert_int_eq(gyro_classifier_save(m, path), GYRO_OK);
    gyro_classifier_free(m);
    ck_assert_int_eq(gyro_classifier_load(path, &m), GYRO_OK);
    return m;
}

/* utterances of many lengths (one past max_len), Traditional and full-width input, a context */
static const char *const texts[] = {"播放周杰的歌", "停", "天氣怎麼樣", "ＡＢ 播放 歌", "暂停播放的歌",
                                    "周杰周杰周杰周杰周杰周杰周杰周杰周杰周杰周杰周杰周杰的歌",
                                    "今天的天气", "放"};
#define N_TEXTS (int)(sizeof texts / sizeof texts[0])

START_TEST(test_predict_allocates_nothing_when_warm)
{
    for (int arch = 0; arch < 2; arch++) {
        gyro_classifier *m = model(arch);
        gyro_classifier_scratch *s;
        ck_assert_int_eq(gyro_classifier_scratch_new(m, &s), GYRO_OK);
        gyro_intent out[4];
        int n;
        for (int i = 0; i < N_TEXTS; i++) /* warm: buffers grow to the longest text */
            ck_assert_int_eq(gyro_classifier_predict_context(m, s, texts[i], "播放", 4, out, &n), GYRO_OK);
        n_allocs = 0;
        counting = 1;
        int ok = 0;
        for (int r = 0; r < 20; r++)
            for (int i = 0; i < N_TEXTS; i++)
                ok += gyro_classifier_predict_context(m, s, texts[i], i % 2 ? "播放" : NULL, 1 + i % 4, out, &n) == GYRO_OK;
        counting = 0;
        ck_assert_int_eq(ok, 20 * N_TEXTS);
        if (COUNTING)
            ck_assert_msg(n_allocs == 0, "%s: %ld allocations in %d warm predictions", arch ? "n-grams" : "transformer",
                          n_allocs, 20 * N_TEXTS);
        gyro_classifier_scratch_free(s);
        gyro_classifier_free(m);
    }
}
END_TEST

START_TEST(test_predict_batch_allocates_nothing_when_warm)
{
    for (int arch = 0; arch < 2; arch++) {
        gyro_classifier *m = model(arch);
        gyro_classifier_batch *b;
        ck_assert_int_eq(gyro_classifier_batch_new(m, N_TEXTS, &b), GYRO_OK);
        gyro_intent res[N_TEXTS][4], *out[N_TEXTS];
        int k[N_TEXTS], n_out[N_TEXTS];
        gyro_status status[N_TEXTS];
        const char *ctx[N_TEXTS];
        for (int i = 0; i < N_TEXTS; i++) {
            out[i] = res[i];
            k[i] = 1 + i % 4;
            ctx[i] = i % 3 ? "天气" : NULL;
        }
        for (int r = 0; r < 2; r++)
            ck_assert_int_eq(gyro_classifier_predict_batch(m, b, N_TEXTS, texts, ctx, k, out, n_out, status), GYRO_OK);
        n_allocs = 0;
        counting = 1;
        int ok = 0;
        for (int r = 0; r < 20; r++) {
            int nb = 1 + r % N_TEXTS; /* batches of every size, different texts at each position */
            ok += gyro_classifier_predict_batch(m, b, nb, texts + (N_TEXTS - nb), ctx, k, out, n_out, status) == GYRO_OK;
            for (int i = 0; i < nb; i++) ok += status[i] == GYRO_OK ? 0 : -1000;
        }
        counting = 0;
        ck_assert_int_eq(ok, 20);
        if (COUNTING)
            ck_assert_msg(n_allocs == 0, "%s: %ld allocations in 20 warm batches", arch ? "n-grams" : "transformer",
                          n_allocs);
        gyro_classifier_batch_free(b);
        gyro_classifier_free(m);
    }
}
END_TEST

/* The counter itself counts (else the tests above could not fail). */
START_TEST(test_counter_counts)
{
    /* through pointers, so that the compiler cannot drop an allocation it sees unused */
    void *(*volatile m)(size_t) = malloc;
    void *(*volatile r)(void *, size_t) = realloc;
    void *(*volatile c)(size_t, size_t) = calloc;
    n_allocs = 0;
    counting = 1;
    void *p = m(100);
    p = r(p, 200000);
    void *q = c(3, 7);
    counting = 0;
    free(p);
    free(q);
    if (COUNTING) ck_assert_int_eq(n_allocs, 3);
    else fprintf(stderr, "check_alloc: sanitizer build: allocations not counted\n");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("alloc");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_counter_counts);
    tcase_add_test(tc, test_predict_allocates_nothing_when_warm);
    tcase_add_test(tc, test_predict_batch_allocates_nothing_when_warm);
    tcase_set_timeout(tc, 120);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nf ? EXIT_FAILURE : EXIT_SUCCESS;
}

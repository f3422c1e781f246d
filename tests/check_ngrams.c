/* check_ngrams.c — Check suite for the bag-of-n-grams classifier (models/ngrams, the Einstein
 * midpoint of models/hyp/poincare, models/train_ngrams): the midpoint against its Poincaré
 * form ½ ⊗ (Σ w λ x / Σ w (λ − 1)) and its properties, finite-difference checks of its backward
 * (float64) and of the model's backward in both geometries and both hyperbolic poolings, the
 * features (counts, boundaries, context salt, truncation), training on a small separable set in
 * both geometries, the model file round trip, and the previous turn deciding an ambiguous
 * utterance. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "models/classifier.h"
#include "models/core/rng.h"
#include "models/hyp/poincare.h"
#include "models/ngrams.h"
#include "models/train_classifier.h"
#include "tests/support/scratch.h"
#include "tests/support/toy_intents.h"

static char tmpdir[64];

static void setup(void) { scratch_dir_new(tmpdir, sizeof tmpdir, "ngr"); }

static void teardown(void) { scratch_dir_remove(tmpdir); }

/* m random points of the c-ball with norms up to r_max/√c, rows of n. */
static void random_points(double *X, int m, int n, double c, double r_max, gyro_rng *r)
{
    for (int j = 0; j < m; j++) {
        double *x = X + (size_t)j * n, nn = 0;
        for (int i = 0; i < n; i++) { x[i] = gyro_rng_normal(r); nn += x[i] * x[i]; }
        double target = r_max * gyro_rng_uniform(r) / sqrt(c);
        for (int i = 0; i < n; i++) x[i] *= target / sqrt(nn);
    }
}

START_TEST(test_midpoint_forms)
{
    gyro_rng r;
    gyro_rng_seed(&r, 11);
    const int n = 5, m = 4;
    const double cs[] = {0.1, 1.0, 3.0};
    for (int ci = 0; ci < 3; ci++) {
        double c = cs[ci], X[4 * 5], w[4] = {1, 0.5, 2, 1.5}, y[5], u[5] = {0}, s = 0, ref[5];
        random_points(X, m, n, c, 0.95, &r);
        gyro_poincare_einstein_midpoint_f64(y, X, NULL, w, c, m, n);
        for (int j = 0; j < m; j++) {
            const double *x = X + j * n;
            double xx = 0;
            for (int i = 0; i < n; i++) xx += x[i] * x[i];
            double lam = 2 / (1 - c * xx);
            for (int i = 0; i < n; i++) u[i] += w[j] * lam * x[i];
            s += w[j] * (lam - 1);
        }
        for (int i = 0; i < n; i++) u[i] /= s;
        gyro_poincare_mobius_scalar_f64(ref, u, 0.5, c, n);   /* the gyromidpoint form */
        for (int i = 0; i < n; i++) ck_assert_double_eq_tol(y[i], ref[i], 1e-12);
        double yy = 0;
        for (int i = 0; i < n; i++) yy += y[i] * y[i];
        ck_assert(c * yy < 1);
    }
    /* one point is its own midpoint; x and −x meet at the origin; weight 2 = the row twice */
    double X[3 * 5], y[5], y2[5];
    random_points(X, 1, n, 1.0, 0.9, &r);
    gyro_poincare_einstein_midpoint_f64(y, X, NULL, NULL, 1.0, 1, n);
    for (int i = 0; i < n; i++) ck_assert_double_eq_tol(y[i], X[i], 1e-12);
    for (int i = 0; i < n; i++) X[n + i] = -X[i];
    gyro_poincare_einstein_midpoint_f64(y, X, NULL, NULL, 1.0, 2, n);
    for (int i = 0; i < n; i++) ck_assert_double_eq_tol(y[i], 0, 1e-12);
    random_points(X, 2, n, 1.0, 0.9, &r);
    const int32_t idx3[3] = {0, 1, 1};
    const double w2[2] = {1, 2};
    gyro_poincare_einstein_midpoint_f64(y, X, idx3, NULL, 1.0, 3, n);
    gyro_poincare_einstein_midpoint_f64(y2, X, NULL, w2, 1.0, 2, n);
    for (int i = 0; i < n; i++) ck_assert_double_eq_tol(y[i], y2[i], 1e-12);
    /* float32 agrees with float64 */
    float Xf[2 * 5], yf[5];
    for (int i = 0; i < 2 * n; i++) Xf[i] = (float)X[i];
    gyro_poincare_einstein_midpoint_f32(yf, Xf, NULL, NULL, 1.0f, 2, n);
    gyro_poincare_einstein_midpoint_f64(y, X, NULL, NULL, 1.0, 2, n);
    for (int i = 0; i < n; i++) ck_assert_double_eq_tol(yf[i], y[i], 1e-5);
}
END_TEST

START_TEST(test_midpoint_backward_fd)
{
    gyro_rng r;
    gyro_rng_seed(&r, 12);
    const int n = 6, m = 5;
    const double cs[] = {0.1, 1.0, 2.5}, rmax[] = {0.3, 0.9, 0.99};
    for (int ci = 0; ci < 3; ci++) {
        double c = cs[ci], X[5 * 6], w[5], gy[6], y[6], dX[5 * 6] = {0};
        const int32_t idx[5] = {2, 0, 4, 1, 3};
        random_points(X, m, n, c, rmax[ci], &r);
        for (int j = 0; j < m; j++) w[j] = 0.2 + gyro_rng_uniform(&r);
        for (int i = 0; i < n; i++) gy[i] = gyro_rng_normal(&r);
        gyro_poincare_einstein_midpoint_backward_f64(dX, gy, X, idx, w, c, m, n);
        for (int j = 0; j < m; j++)
            for (int i = 0; i < n; i++) {
                double *x = &X[(size_t)idx[j] * n + i], keep = *x, h = 1e-6, lp = 0, lm = 0;
                *x = keep + h;
                gyro_poincare_einstein_midpoint_f64(y, X, idx, w, c, m, n);
                for (int k = 0; k < n; k++) lp += gy[k] * y[k];
                *x = keep - h;
                gyro_poincare_einstein_midpoint_f64(y, X, idx, w, c, m, n);
                for (int k = 0; k < n; k++) lm += gy[k] * y[k];
                *x = keep;
                double fd = (lp - lm) / (2 * h), an = dX[(size_t)j * n + i];
                ck_assert_msg(fabs(fd - an) <= 1e-6 * (1 + fabs(fd)), "c %g point %d coord %d: fd %.9g analytic %.9g",
                              c, j, i, fd, an);
            }
    }
}
END_TEST

/* Labels of the small models: with hierarchy their parents are a (labels 0, 1), b.z (1, 2) and
 * b (1, 2); a.x, a.y and c have one child each and are no parents. */
static const char *const small_labels[4] = {"a.x", "a.y+b.z", "b.z", "c"};

static gyro_ngrams_model *small_model_h(int geometry, int context, int pool, int hierarchy)
{
    gyro_ngrams_config c = gyro_ngrams_config_default(geometry);
    c.pool = pool;
    c.hierarchy = hierarchy;
    c.vocab_size = 7;
    c.n_classes = 4;
    c.dim = 6;
    c.buckets = 13;
    c.max_len = 8;
    c.context = context;
    c.curvature = 0.5f;
    gyro_ngrams_model *m;
    ck_assert_int_eq(gyro_ngrams_new(&c, small_labels, 5, 1, &m), GYRO_OK);
    gyro_rng r;
    gyro_rng_seed(&r, 6);
    /* a head away from zero, so every path carries gradient; embedding rows spread inside the ball */
    for (size_t i = 0; i < m->n_params; i++) m->params[i] = (float)(0.3 * (2 * gyro_rng_uniform(&r) - 1));
    return m;
}

static gyro_ngrams_model *small_model(int geometry, int context, int pool)
{
    return small_model_h(geometry, context, pool, 0);
}

/* loss = Σ_k g_k logit_k of one bag */
static double bag_loss(const gyro_ngrams_model *m, const int32_t *rows, const float *w, int nf, const float *g)
{
    float y[8], logits[8];
    gyro_ngrams_forward(m, rows, w, nf, y, logits);
    double l = 0;
    for (int k = 0; k < m->cfg.n_classes; k++) l += (double)g[k] * logits[k];
    return l;
}

static void check_model_backward(int geometry, int pool, int hierarchy)
{
    gyro_ngrams_model *m = small_model_h(geometry, 0, pool, hierarchy);
    const int32_t rows[4] = {1, 9, 3, 9};
    const float w[4] = {1, 1, 0.5f, 1};
    const float g[4] = {0.7f, -0.4f, 0.2f, -0.5f};
    const int C = m->cfg.dim, K = gyro_ngrams_head_rows(m);
    ck_assert_int_eq(m->cfg.n_parents, (hierarchy ? 3 : 0));
    float y[8], logits[8], dl[8] = {0}, dX[4 * 6] = {0}, dA[8 * 6] = {0}, dP[8 * 6] = {0}, dB[8] = {0};
    memcpy(dl, g, sizeof g);
    gyro_ngrams_forward(m, rows, w, 4, y, logits);
    gyro_ngrams_backward(m, rows, w, 4, y, dl, dX, dA, dP, dB);
    const double h = 1e-3;
    /* embedding rows: a row pooled twice gets the sum of its two gradient rows */
    for (int j = 0; j < 3; j++)
        for (int i = 0; i < C; i++) {
            float *x = m->emb + (size_t)rows[j] * C + i, keep = *x;
            *x = (float)(keep + h); double lp = bag_loss(m, rows, w, 4, g);
            *x = (float)(keep - h); double lm = bag_loss(m, rows, w, 4, g);
            *x = keep;
            double an = dX[j * C + i] + (rows[j] == 9 ? dX[3 * C + i] : 0), fd = (lp - lm) / (2 * h);
            ck_assert_msg(fabs(fd - an) <= 2e-2 * (1 + fabs(fd)), "emb row %d coord %d: fd %g analytic %g", rows[j], i, fd, an);
        }
    float *heads[3] = {m->head_a, m->head_p, m->head_b};
    float *grads[3] = {dA, dP, dB};
    for (int t = 0; t < 3; t++) {
        if (!heads[t]) continue;
        int size = t == 2 ? K : K * C;
        for (int i = 0; i < size; i++) {
            float *x = heads[t] + i, keep = *x;
            *x = (float)(keep + h); double lp = bag_loss(m, rows, w, 4, g);
            *x = (float)(keep - h); double lm = bag_loss(m, rows, w, 4, g);
            *x = keep;
            double fd = (lp - lm) / (2 * h);
            ck_assert_msg(fabs(fd - grads[t][i]) <= 2e-2 * (1 + fabs(fd)), "head tensor %d value %d: fd %g analytic %g",
                          t, i, fd, grads[t][i]);
        }
    }
    gyro_ngrams_free(m);
}

START_TEST(test_model_backward_fd)
{
    for (int hierarchy = 0; hierarchy <= 1; hierarchy++) {
        check_model_backward(GYRO_TF_GEOMETRY_HYPERBOLIC, GYRO_NGRAMS_POOL_TANGENT, hierarchy);
        check_model_backward(GYRO_TF_GEOMETRY_HYPERBOLIC, GYRO_NGRAMS_POOL_EINSTEIN, hierarchy);
        check_model_backward(GYRO_TF_GEOMETRY_EUCLIDEAN, GYRO_NGRAMS_POOL_TANGENT, hierarchy);
    }
}
END_TEST

START_TEST(test_features)
{
    gyro_ngrams_model *m = small_model(GYRO_TF_GEOMETRY_HYPERBOLIC, 1, GYRO_NGRAMS_POOL_TANGENT);
    const int32_t uni[5] = {1, 2, 3, 0, 4};
    uint64_t h[5];
    const char *toks[5] = {"播", "放", "音", "乐", "吧"};
    for (int i = 0; i < 5; i++) h[i] = gyro_ngrams_token_hash(toks[i]);
    int32_t a[64], b[64], c[64];
    /* 5 unigrams, EOS, 6 bigrams over BOS c1..c5 EOS */
    int na = gyro_ngrams_features(m, uni, h, 5, 0, a, 64);
    ck_assert_int_eq(na, 5 + 1 + 6);
    for (int i = 0; i < 5; i++) ck_assert_int_eq(a[i], uni[i]);
    for (int i = 5; i < na; i++) ck_assert(a[i] >= m->cfg.vocab_size && a[i] < m->cfg.vocab_size + m->cfg.buckets);
    ck_assert_int_le(na, gyro_ngram_bag_cap(m));
    /* deterministic; a context gives its unigrams and bigrams, all hashed */
    ck_assert_int_eq(gyro_ngrams_features(m, uni, h, 5, 0, b, 64), na);
    ck_assert_int_eq(memcmp(a, b, (size_t)na * sizeof *a), 0);
    int nc = gyro_ngrams_features(m, uni, h, 5, 1, c, 64);
    ck_assert_int_eq(nc, 5 + 4);
    for (int i = 0; i < nc; i++) ck_assert(c[i] >= m->cfg.vocab_size);
    /* max_len cuts an utterance's tail and a context's head */
    int32_t u20[20];
    uint64_t h20[20];
    for (int i = 0; i < 20; i++) { u20[i] = 1 + i % 6; h20[i] = gyro_ngrams_token_hash(toks[i % 5]) + (uint64_t)i; }
    ck_assert_int_eq(gyro_ngrams_features(m, u20, h20, 20, 0, b, 64), 8 + 1 + 9);
    ck_assert_int_eq(memcmp(b, u20, 8 * sizeof *b), 0);
    ck_assert_int_eq(gyro_ngrams_features(m, u20, h20, 20, 1, b, 64), 8 + 7);
    int32_t tail[16];
    ck_assert_int_eq(gyro_ngrams_features(m, u20 + 12, h20 + 12, 8, 1, tail, 16), 15);
    ck_assert_int_eq(memcmp(b, tail, 15 * sizeof *b), 0);
    /* the cap is honoured */
    ck_assert_int_eq(gyro_ngrams_features(m, uni, h, 5, 0, a, 3), 3);
    gyro_ngrams_free(m);
}
END_TEST

/* The shared generated set (tests/support/toy_intents.h), two intents. */
static void toy_data(gyro_example_set *s, int n, uint64_t seed)
{
    ck_assert_int_eq(toy_intents(s, n, seed, 2), GYRO_OK);
}

static void ngram_options(gyro_train_options *o, int geometry)
{
    gyro_train_options_init(o, (gyro_tf_geometry)geometry);
    o->arch = GYRO_ARCH_NGRAMS;
    o->model.dim = 16;
    o->ngrams.buckets = 1000;
    o->epochs = 30;
    o->quiet = 1;
    o->seed = 3;
    /* a toy set of a few hundred examples needs larger steps than the defaults (set for
     * thousands of examples) */
    o->optim.lr = geometry == GYRO_TF_GEOMETRY_HYPERBOLIC ? 0.2 : 0.5;
    o->head_lr = o->optim.lr;
    ck_assert_int_eq(gyro_train_options_complete(o, GYRO_TRAIN_SET_LR | GYRO_TRAIN_SET_DIM | GYRO_TRAIN_SET_EPOCHS),
                     GYRO_OK);
    ck_assert_int_eq(o->ngrams.dim, 16);
    ck_assert_int_eq(o->epochs, 30);
    ck_assert_double_eq(o->dev_fraction, 0);   /* the n-gram default: every example trains */
}

static void check_learns(int geometry, int hierarchy)
{
    gyro_example_set train = {0}, dev = {0};
    toy_data(&train, 300, 1);
    toy_data(&dev, 100, 2);
    gyro_train_options o;
    ngram_options(&o, geometry);
    o.ngrams.hierarchy = hierarchy;
    gyro_classifier *m = NULL, *m2 = NULL, *r = NULL;
    gyro_train_result res;
    ck_assert_int_eq(gyro_train_classifier(&o, &train, &dev, &m, &res), GYRO_OK);
    ck_assert_str_eq(gyro_classifier_arch_name(m), "ngrams");
    ck_assert_ptr_null(gyro_classifier_tf(m));
    ck_assert_double_ge(res.best_dev_accuracy, 0.99);
    ck_assert_int_eq(res.n_train, 300);
    /* the same seed gives the same model */
    ck_assert_int_eq(gyro_train_classifier(&o, &train, &dev, &m2, &res), GYRO_OK);
    const gyro_ngrams_model *a = gyro_classifier_ngrams_const(m), *b = gyro_classifier_ngrams_const(m2);
    ck_assert_int_eq(memcmp(a->params, b->params, a->n_params * sizeof *a->params), 0);
    /* the file round trip keeps every parameter and prediction */
    char path[128];
    snprintf(path, sizeof path, "%s/m.clf", tmpdir);
    ck_assert_int_eq(gyro_classifier_save(m, path), GYRO_OK);
    ck_assert_int_eq(gyro_classifier_load(path, &r), GYRO_OK);
    b = gyro_classifier_ngrams_const(r);
    ck_assert_ptr_nonnull(b);
    /* music.play and music.pause share the parent class music */
    ck_assert_int_eq(b->cfg.n_parents, (hierarchy ? 1 : 0));
    ck_assert_int_eq(b->n_params, a->n_params);
    ck_assert_int_eq(memcmp(a->params, b->params, a->n_params * sizeof *a->params), 0);
    ck_assert_ptr_nonnull(strstr(gyro_classifier_version(r), "ngrams-"));
    gyro_classifier_scratch *s;
    ck_assert_int_eq(gyro_classifier_scratch_new(r, &s), GYRO_OK);
    gyro_intent top[2];
    int k;
    ck_assert_int_eq(gyro_classifier_predict(r, s, "暂停一下", 2, top, &k), GYRO_OK);
    ck_assert_int_eq(k, 2);
    ck_assert_str_eq(top[0].label, "music.pause");
    ck_assert_float_eq_tol(top[0].probability + top[1].probability, 1.0f, 1e-5f);
    ck_assert_str_eq(gyro_classifier_scratch_normalized(s), "暂停一下");
    ck_assert_int_eq(gyro_classifier_predict(r, s, "   ", 1, top, &k), GYRO_ERR_DATA);
    /* invalid UTF-8 is repaired (U+FFFD, the normalizer's default policy), not refused */
    ck_assert_int_eq(gyro_classifier_predict(r, s, "\xff\xfe", 1, top, &k), GYRO_OK);
    gyro_metrics met;
    ck_assert_int_eq(gyro_metrics_init(&met, gyro_classifier_num_labels(r)), GYRO_OK);
    int unknown = 0;
    ck_assert_int_eq(gyro_classifier_evaluate(r, &dev, &met, &unknown), GYRO_OK);
    ck_assert_int_eq(unknown, 0);
    gyro_metrics_free(&met);
    gyro_classifier_scratch_free(s);
    gyro_classifier_free(r);
    gyro_classifier_free(m);
    gyro_classifier_free(m2);
    gyro_example_set_free(&train);
    gyro_example_set_free(&dev);
}

START_TEST(test_train_hyperbolic)
{
    check_learns(GYRO_TF_GEOMETRY_HYPERBOLIC, 0);
    check_learns(GYRO_TF_GEOMETRY_HYPERBOLIC, 1);
}
END_TEST

START_TEST(test_train_euclidean)
{
    check_learns(GYRO_TF_GEOMETRY_EUCLIDEAN, 0);
    check_learns(GYRO_TF_GEOMETRY_EUCLIDEAN, 1);
}
END_TEST

/* "取消" means cancel_navigation after a navigation turn and music.pause after a music turn:
 * only the previous turn tells them apart. */
static void session_data(gyro_example_set *s, int n, uint64_t seed)
{
    const char *nav[] = {"导航到北京", "去机场怎么走", "带我去火车站"};
    const char *mus[] = {"播放周杰伦", "来一首稻香", "我想听歌"};
    gyro_rng r;
    gyro_rng_seed(&r, seed);
    for (int i = 0; i < n; i++) {
        char session[32];
        snprintf(session, sizeof session, "s%d", i);
        int k = (int)gyro_rng_below(&r, 2);
        const char *first = k ? mus[gyro_rng_below(&r, 3)] : nav[gyro_rng_below(&r, 3)];
        const char *label = k ? "music.play" : "navigation.navigation";
        ck_assert_int_eq(gyro_example_set_add_session(s, first, label, (uint64_t)2 * i + 1, session), GYRO_OK);
        ck_assert_int_eq(gyro_example_set_add_session(s, "取消", k ? "music.pause" : "navigation.cancel_navigation",
                                                      (uint64_t)2 * i + 2, session), GYRO_OK);
    }
}

START_TEST(test_context_decides)
{
    gyro_example_set train = {0}, dev = {0};
    session_data(&train, 200, 1);
    session_data(&dev, 60, 2);
    ck_assert_ptr_null(gyro_example_set_context(&train, 0));
    ck_assert_str_eq(gyro_example_set_context(&train, 1), train.text[0]);
    ck_assert_ptr_null(gyro_example_set_context(&train, 2));
    double acc[2];
    for (int ctx = 0; ctx < 2; ctx++) {
        gyro_train_options o;
        ngram_options(&o, GYRO_TF_GEOMETRY_HYPERBOLIC);
        o.ngrams.context = ctx;
        gyro_classifier *m = NULL;
        gyro_train_result res;
        ck_assert_int_eq(gyro_train_classifier(&o, &train, &dev, &m, &res), GYRO_OK);
        acc[ctx] = res.best_dev_accuracy;
        ck_assert_int_eq(gyro_classifier_uses_context(m), ctx);
        if (ctx) {
            gyro_classifier_scratch *s;
            ck_assert_int_eq(gyro_classifier_scratch_new(m, &s), GYRO_OK);
            gyro_intent top[1];
            int k;
            ck_assert_int_eq(gyro_classifier_predict_context(m, s, "取消", "去机场怎么走", 1, top, &k), GYRO_OK);
            ck_assert_str_eq(top[0].label, "navigation.cancel_navigation");
            ck_assert_int_eq(gyro_classifier_predict_context(m, s, "取消", "来一首稻香", 1, top, &k), GYRO_OK);
            ck_assert_str_eq(top[0].label, "music.pause");
            ck_assert_int_eq(gyro_classifier_predict_context(m, s, "取消", "\xc3", 1, top, &k), GYRO_OK);
            ck_assert_int_eq(gyro_classifier_predict_context(m, s, "", "来一首稻香", 1, top, &k), GYRO_ERR_DATA);
            gyro_classifier_scratch_free(s);
        }
        gyro_classifier_free(m);
    }
    /* without the previous turn half of the 取消 turns (a quarter of all) must be wrong */
    ck_assert_double_le(acc[0], 0.80);
    ck_assert_double_ge(acc[1], 0.99);
    gyro_example_set_free(&train);
    gyro_example_set_free(&dev);
}
END_TEST

START_TEST(test_config_errors)
{
    gyro_train_options o;
    gyro_train_options_init(&o, GYRO_TF_GEOMETRY_LORENTZ);
    o.arch = GYRO_ARCH_NGRAMS;
    ck_assert_int_eq(gyro_train_options_complete(&o, 0), GYRO_ERR_USAGE);
    ck_assert_ptr_nonnull(strstr(gyro_error_message(), "lorentz"));
    gyro_train_options_init(&o, GYRO_TF_GEOMETRY_HYPERBOLIC);
    o.arch = GYRO_ARCH_NGRAMS;
    ck_assert_int_eq(o.arch, GYRO_ARCH_NGRAMS);   /* the default architecture, with context */
    ck_assert_int_eq(o.ngrams.context, 1);
    o.ngrams.buckets = 0;
    ck_assert_int_eq(gyro_train_options_complete(&o, 0), GYRO_ERR_USAGE);
    o.ngrams.max_n = 1;
    o.ngrams.context = 0;
    ck_assert_int_eq(gyro_train_options_complete(&o, 0), GYRO_OK);
    o.ngrams.context = 1;
    ck_assert_int_eq(gyro_train_options_complete(&o, 0), GYRO_ERR_USAGE);
    gyro_arch a;
    ck_assert_int_eq(gyro_arch_parse("ngrams", &a), GYRO_OK);
    ck_assert_int_eq(a, GYRO_ARCH_NGRAMS);
    ck_assert_int_eq(gyro_arch_parse("lstm", &a), GYRO_ERR_USAGE);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("ngrams");
    TCase *tc = tcase_create("ngrams");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_midpoint_forms);
    tcase_add_test(tc, test_midpoint_backward_fd);
    tcase_add_test(tc, test_model_backward_fd);
    tcase_add_test(tc, test_features);
    tcase_add_test(tc, test_train_hyperbolic);
    tcase_add_test(tc, test_train_euclidean);
    tcase_add_test(tc, test_context_decides);
    tcase_add_test(tc, test_config_errors);
    suite_add_tcase(s, tc);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? 1 : 0;
}

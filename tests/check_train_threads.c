/* check_train_threads.c — Check suite for the data-parallel steps of gyro_train_classifier
 * (opt->threads): without dropout, n threads compute the same batch gradient as one thread (the
 * shard gradients weighted by shard size), so plain SGD from the same start reaches the same
 * parameters up to float rounding, for batch sizes that the thread count does not divide and
 * with more threads than examples in a batch; every thread count is reproducible bit for bit;
 * threads 0 and 1 are the single-threaded loop; with dropout, two threads learn the toy set as
 * well as one; out-of-range counts are refused. All geometries and the MoE/MLA blocks. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "models/classifier.h"
#include "models/train_classifier.h"
#include "tests/support/toy_intents.h"

/* The shared generated set (tests/support/toy_intents.h), with the composite. */
static void toy_data(gyro_example_set *s, int n, uint64_t seed)
{
    ck_assert_int_eq(toy_intents(s, n, seed, 3), GYRO_OK);
}

static void options(gyro_train_options *o, gyro_tf_geometry g)
{
    gyro_train_options_init(o, g);
    o->arch = GYRO_ARCH_TRANSFORMER;   /* --threads steps the transformer */
    gyro_tf_config *c = &o->model;
    c->dim = 8;
    c->n_layers = 2;
    c->n_heads = 2;
    c->head_dim = 4;
    c->ffn_dim = 16;
    c->max_len = 16;
    o->optim.kind = GYRO_OPTIM_SGD;
    o->optim.lr = 0.05;
    o->optim.ball_lr = 0.05;
    o->sgdr.t0 = 0;
    o->epochs = 2;
    o->batch_size = 13; /* divided by neither 2 nor 3 */
    o->dev_fraction = 0;
    o->quiet = 1;
    o->seed = 11;
}

static gyro_classifier *train(const gyro_train_options *o, const gyro_example_set *set, int threads)
{
    gyro_train_options t = *o;
    t.threads = threads;
    gyro_classifier *m = NULL;
    gyro_train_result res;
    gyro_status st = gyro_train_classifier(&t, set, NULL, &m, &res);
    ck_assert_msg(st == GYRO_OK, "threads %d: %s", threads, gyro_error_message());
    return m;
}

static const gyro_tf_model *tfm(const gyro_classifier *m) { return gyro_classifier_tf_const(m); }

static int same_bits(const gyro_classifier *a, const gyro_classifier *b)
{
    return tfm(a)->n_params == tfm(b)->n_params &&
           memcmp(tfm(a)->params_memory, tfm(b)->params_memory, tfm(a)->n_params * sizeof(float)) == 0;
}

/* max |a − b| over the parameters, relative to max(1, max |a|) */
static double param_diff(const gyro_classifier *a, const gyro_classifier *b)
{
    const float *x = tfm(a)->params_memory, *y = tfm(b)->params_memory;
    double d = 0, scale = 1;
    for (size_t i = 0; i < tfm(a)->n_params; i++) {
        d = fmax(d, fabs((double)x[i] - y[i]));
        scale = fmax(scale, fabs((double)x[i]));
    }
    return d / scale;
}

/* One start (the seed), no dropout, SGD: threads change only the rounding of the gradient sum.
 * The parameters must also have moved, or the comparison would prove nothing. */
static void check_same_gradient(gyro_train_options *o)
{
    o->model.dropout = 0;
    gyro_example_set set = {0};
    toy_data(&set, 120, 7);
    gyro_classifier *one = train(o, &set, 1);
    gyro_classifier *zero = train(o, &set, 0);
    ck_assert_msg(same_bits(one, zero), "threads 0 is not the single-threaded loop");
    gyro_train_options start = *o;
    start.epochs = 1;
    start.optim.lr = 0;
    start.optim.ball_lr = 0;
    gyro_classifier *init = train(&start, &set, 1);
    ck_assert_msg(param_diff(one, init) > 1e-3, "training moved the parameters by %g only",
                  param_diff(one, init));
    gyro_classifier_free(init);
    const int counts[] = {2, 3, 16}; /* 16 > batch: idle shards */
    for (int i = 0; i < 3; i++) {
        gyro_classifier *n = train(o, &set, counts[i]);
        double d = param_diff(one, n);
        ck_assert_msg(d < 1e-5, "threads %d: parameters differ from one thread's by %g", counts[i], d);
        gyro_classifier *again = train(o, &set, counts[i]);
        ck_assert_msg(same_bits(n, again), "threads %d: not reproducible", counts[i]);
        gyro_classifier_free(again);
        gyro_classifier_free(n);
    }
    gyro_classifier_free(one);
    gyro_classifier_free(zero);
    gyro_example_set_free(&set);
}

START_TEST(test_same_gradient_hyperbolic)
{
    gyro_train_options o;
    options(&o, GYRO_TF_GEOMETRY_HYPERBOLIC);
    check_same_gradient(&o);
}
END_TEST

/* the seed's optimizers (RMSProp + RSGD, state per value / row, cut into per-thread pieces)
 * and a global gradient-norm clip (one optimizer after the parallel sum) */
START_TEST(test_same_gradient_rmsprop_and_clip)
{
    gyro_train_options o;
    options(&o, GYRO_TF_GEOMETRY_HYPERBOLIC);
    o.optim.kind = GYRO_OPTIM_RMSPROP;
    o.optim.lr = 1e-3;
    check_same_gradient(&o);
    options(&o, GYRO_TF_GEOMETRY_HYPERBOLIC);
    o.optim.clip_norm = 0.5;
    check_same_gradient(&o);
}
END_TEST

START_TEST(test_same_gradient_euclidean)
{
    gyro_train_options o;
    options(&o, GYRO_TF_GEOMETRY_EUCLIDEAN);
    check_same_gradient(&o);
}
END_TEST

START_TEST(test_same_gradient_lorentz)
{
    gyro_train_options o;
    options(&o, GYRO_TF_GEOMETRY_LORENTZ);
    o.model.head_dim = 3;
    check_same_gradient(&o);
}
END_TEST

START_TEST(test_same_gradient_mla)
{
    gyro_train_options o;
    options(&o, GYRO_TF_GEOMETRY_HYPERBOLIC);
    o.model.attention_kind = GYRO_TF_ATTENTION_MLA;
    ck_assert_int_eq(gyro_train_options_complete(&o, GYRO_TRAIN_SET_HEAD_DIM | GYRO_TRAIN_SET_FFN_DIM), GYRO_OK);
    check_same_gradient(&o);
}
END_TEST

/* MoE: each shard's balance loss is its own (a nonlinear function of the shard's routing), so
 * n threads train a weighted mean of shard losses, not the batch loss: a close model, not the
 * same to rounding. What must hold: reproducible, and it learns. */
START_TEST(test_moe_learns)
{
    gyro_train_options o;
    options(&o, GYRO_TF_GEOMETRY_HYPERBOLIC);
    o.model.ffn_kind = GYRO_TF_FFN_MOE;
    ck_assert_int_eq(gyro_train_options_complete(&o, GYRO_TRAIN_SET_HEAD_DIM | GYRO_TRAIN_SET_FFN_DIM), GYRO_OK);
    o.optim.kind = GYRO_OPTIM_ADAM;
    o.optim.lr = 1e-2;
    o.epochs = 8;
    gyro_example_set set = {0}, dev = {0};
    toy_data(&set, 200, 8);
    toy_data(&dev, 100, 9);
    gyro_classifier *a = train(&o, &set, 2), *b = train(&o, &set, 2);
    ck_assert(same_bits(a, b));
    gyro_metrics met;
    ck_assert_int_eq(gyro_metrics_init(&met, gyro_classifier_num_labels(a)), GYRO_OK);
    ck_assert_int_eq(gyro_classifier_evaluate(a, &dev, &met, NULL), GYRO_OK);
    ck_assert_msg(gyro_metrics_accuracy(&met) >= 0.9, "MoE, 2 threads: dev accuracy %.3f", gyro_metrics_accuracy(&met));
    gyro_metrics_free(&met);
    gyro_classifier_free(a);
    gyro_classifier_free(b);
    gyro_example_set_free(&set);
    gyro_example_set_free(&dev);
}
END_TEST

/* With dropout (each thread its own stream) two threads learn as well as one: the best dev
 * accuracy of each is >= 0.9 and within 0.05 of the other's. */
START_TEST(test_dropout_learns)
{
    gyro_train_options o;
    options(&o, GYRO_TF_GEOMETRY_HYPERBOLIC);
    o.optim.kind = GYRO_OPTIM_ADAM;
    o.optim.lr = 1e-2;
    o.optim.eps = 1e-8;
    o.model.dropout = 0.1f;
    o.epochs = 12;
    o.batch_size = 16;
    gyro_example_set set = {0}, dev = {0};
    toy_data(&set, 300, 1);
    toy_data(&dev, 100, 2);
    double acc[2];
    for (int i = 0; i < 2; i++) {
        gyro_train_options t = o;
        t.threads = i + 1;
        gyro_classifier *m;
        gyro_train_result res;
        ck_assert_int_eq(gyro_train_classifier(&t, &set, &dev, &m, &res), GYRO_OK);
        acc[i] = res.best_dev_accuracy;
        ck_assert(res.critical_seconds > 0 && isfinite(res.critical_seconds));
        ck_assert_msg(acc[i] >= 0.9, "threads %d: dev accuracy %.3f", i + 1, acc[i]);
        gyro_classifier_free(m);
    }
    ck_assert_msg(fabs(acc[0] - acc[1]) <= 0.05, "dev accuracy %.3f (1 thread) vs %.3f (2)", acc[0], acc[1]);
    gyro_example_set_free(&set);
    gyro_example_set_free(&dev);
}
END_TEST

START_TEST(test_thread_count_refused)
{
    gyro_train_options o;
    options(&o, GYRO_TF_GEOMETRY_EUCLIDEAN);
    gyro_example_set set = {0};
    toy_data(&set, 20, 3);
    gyro_classifier *m = (gyro_classifier *)&o;
    gyro_train_result res;
    o.threads = GYRO_TRAIN_MAX_THREADS + 1;
    ck_assert_int_eq(gyro_train_classifier(&o, &set, NULL, &m, &res), GYRO_ERR_USAGE);
    ck_assert_ptr_null(m);
    ck_assert_ptr_nonnull(strstr(gyro_error_message(), "threads"));
    o.threads = -1;
    ck_assert_int_eq(gyro_train_classifier(&o, &set, NULL, &m, &res), GYRO_ERR_USAGE);
    gyro_example_set_free(&set);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("train_threads");
    TCase *tc = tcase_create("train_threads");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_same_gradient_hyperbolic);
    tcase_add_test(tc, test_same_gradient_euclidean);
    tcase_add_test(tc, test_same_gradient_rmsprop_and_clip);
    tcase_add_test(tc, test_same_gradient_lorentz);
    tcase_add_test(tc, test_same_gradient_mla);
    tcase_add_test(tc, test_moe_learns);
    tcase_add_test(tc, test_dropout_learns);
    tcase_add_test(tc, test_thread_count_refused);
    suite_add_tcase(s, tc);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? 1 : 0;
}

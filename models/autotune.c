/* autotune.c — random search over the n-gram classifier's options (autotune.h). */
#include "models/autotune.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/core/progress.h"
#include "models/core/rng.h"

/* x to 3 significant digits, the precision gyro_autotune_format prints, so the printed command
 * line trains the very same model. */
static double sig3(double x)
{
    char b[32];
    snprintf(b, sizeof b, "%.3g", x);
    return strtod(b, NULL);
}

/* Draw trial options around `base` (which stay as they are where nothing is drawn). */
static void draw(gyro_rng *r, const gyro_train_options *base, int fixed_geometry, gyro_train_options *o)
{
    static const int dims[] = {50, 100, 150, 200};
    static const int buckets[] = {50000, 200000, 500000};
    static const float smooth[] = {0, 0, 0.05f, 0.1f};
    *o = *base;
    int geometry = fixed_geometry ? base->model.geometry
                   : gyro_rng_below(r, 2) ? GYRO_TF_GEOMETRY_HYPERBOLIC : GYRO_TF_GEOMETRY_EUCLIDEAN;
    o->model.geometry = (gyro_tf_geometry)geometry;
    const int hyp = geometry == GYRO_TF_GEOMETRY_HYPERBOLIC;
    o->optim.lr = sig3(GYRO_NGRAMS_DEFAULT_LR * exp(2.4 * gyro_rng_uniform(r) - 1.2));   /* ×0.3 .. ×3.3 */
    o->head_lr = sig3(o->optim.lr * (hyp ? GYRO_NGRAMS_HEAD_LR_SCALE_BALL : 1.0) * exp(1.6 * gyro_rng_uniform(r) - 0.8));
    if (!base->table) o->model.dim = dims[gyro_rng_below(r, 4)];
    o->epochs = 5 + (int)gyro_rng_below(r, 26);
    o->ngrams.max_n = 1 + (int)gyro_rng_below(r, 3);
    o->ngrams.buckets = buckets[gyro_rng_below(r, 3)];
    o->ngrams.context = (int)gyro_rng_below(r, 2);
    o->ngrams.context_weight = (float)sig3(exp(log(0.3) + gyro_rng_uniform(r) * (log(4.0) - log(0.3))));
    if (hyp) o->model.curvature = (float)sig3(exp(log(0.02) + gyro_rng_uniform(r) * (log(1.0) - log(0.02))));
    if (hyp) o->ngrams.pool = gyro_rng_below(r, 4) ? GYRO_NGRAMS_POOL_TANGENT : GYRO_NGRAMS_POOL_EINSTEIN;
    o->label_smoothing = smooth[gyro_rng_below(r, 4)];
}

void gyro_autotune_format(const gyro_train_options *o, char *buf, size_t cap)
{
    const int hyp = o->model.geometry == GYRO_TF_GEOMETRY_HYPERBOLIC;
    int n = snprintf(buf, cap, "--geometry %s --lr %.3g --head-lr %.3g --dim %d --epochs %d --max-n %d --buckets %d %s",
                     gyro_tf_geometry_name(o->model.geometry), o->optim.lr, o->head_lr, o->model.dim, o->epochs,
                     o->ngrams.max_n, o->ngrams.buckets, o->ngrams.context ? "--context" : "--no-context");
    if (n > 0 && (size_t)n < cap && o->ngrams.context)
        n += snprintf(buf + n, cap - (size_t)n, " --context-weight %.3g", o->ngrams.context_weight);
    if (n > 0 && (size_t)n < cap && hyp)
        n += snprintf(buf + n, cap - (size_t)n, " --curvature %.3g --pool %s", o->model.curvature,
                      o->ngrams.pool == GYRO_NGRAMS_POOL_TANGENT ? "tangent" : "einstein");
    if (n > 0 && (size_t)n < cap && o->label_smoothing > 0)
        snprintf(buf + n, cap - (size_t)n, " --label-smoothing %.3g", o->label_smoothing);
}

gyro_status gyro_classify_autotune(const gyro_autotune_options *ao, const gyro_train_options *base,
                                   const gyro_example_set *train, const gyro_example_set *dev,
                                   gyro_classifier **out, gyro_autotune_result *res)
{
    if (out) *out = NULL;
    if (!ao || !base || !train || !dev || !out || !res) return gyro_error_set(GYRO_ERR_USAGE, "autotune: NULL argument");
    if (!(ao->budget_seconds > 0)) return gyro_error_set(GYRO_ERR_USAGE, "autotune: the budget must be > 0 seconds");
    if (base->arch != GYRO_ARCH_NGRAMS) return gyro_error_set(GYRO_ERR_USAGE, "autotune searches the n-gram model (arch ngrams)");
    if (dev->n == 0) return gyro_error_set(GYRO_ERR_USAGE, "autotune: the dev set is empty");
    memset(res, 0, sizeof *res);
    res->best_accuracy = res->first_accuracy = NAN;
    gyro_rng rng;
    gyro_rng_seed(&rng, ao->seed ^ 0x6175746f74756e65ULL);
    const double t0 = gyro_now();
    double longest = 0;
    gyro_classifier *best = NULL;
    gyro_status st = GYRO_OK;
    for (int t = 1; ao->max_trials <= 0 || t <= ao->max_trials; t++) {
        if (t > 1 && (gyro_now() - t0) + longest > ao->budget_seconds) break;
        if (t > 1 && ao->stop && *ao->stop) break;
        gyro_train_options o = *base;
        if (t > 1) {
            draw(&rng, base, ao->fixed_geometry, &o);
            st = gyro_train_options_complete(&o, GYRO_TRAIN_SET_LR | GYRO_TRAIN_SET_DIM | GYRO_TRAIN_SET_EPOCHS |
                                                     GYRO_TRAIN_SET_DEV_FRACTION);
        }
        gyro_classifier *m = NULL;
        gyro_train_result r;
        double ts = gyro_now();
        if (!st) st = gyro_train_classifier(&o, train, dev, &m, &r);
        double took = gyro_now() - ts;
        if (took > longest) longest = took;
        char line[512];
        gyro_autotune_format(&o, line, sizeof line);
        if (st) {
            if (t == 1 || st == GYRO_ERR_INTERRUPTED || st == GYRO_ERR_NOMEM) {
                gyro_classifier_free(m);
                if (st == GYRO_ERR_INTERRUPTED && best) { st = GYRO_OK; break; }
                gyro_classifier_free(best);
                return st;
            }
            if (ao->log) fprintf(ao->log, "trial %d: failed (%s): %s\n", t, gyro_error_message(), line);
            st = GYRO_OK;
            continue;
        }
        res->trials = t;
        double acc = r.best_dev_accuracy;
        if (t == 1) {
            res->first_accuracy = acc;
            if (took > ao->budget_seconds) {
                gyro_classifier_free(m);
                return gyro_error_set(GYRO_ERR_LIMIT, "autotune: one trial took %.1f s, more than the budget of "
                                      "%.1f s; give a budget of at least %.0f s", took, ao->budget_seconds,
                                      ceil(3 * took));
            }
        }
        int better = best == NULL || acc > res->best_accuracy;
        if (better) {
            gyro_classifier_free(best);
            best = m;
            res->best_accuracy = acc;
            res->best_trial = t;
            res->best = o;
        } else {
            gyro_classifier_free(m);
        }
        if (ao->log)
            fprintf(ao->log, "trial %d: dev accuracy %.2f%% (best %.2f%%, trial %d), %.1f s: %s\n", t, 100 * acc,
                    100 * res->best_accuracy, res->best_trial, took, line);
    }
    res->seconds = gyro_now() - t0;
    *out = best;
    return GYRO_OK;
}

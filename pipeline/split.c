/* split.c — seeded session-preserving splits (see split.h for the method).
 *
 * gyro_split_groups sorts group indices by (seeded hash, key), then picks cut points on the
 * cumulative example counts: one cut for a fraction split, K-1 for k folds. Each cut is the
 * prefix length whose count is closest to its target, found by one walk of the cumulative sums;
 * cuts are kept non-decreasing so folds never overlap.
 */
#include "pipeline/split.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/text/strmap.h"

static uint64_t splitmix64(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) { h ^= (unsigned char)*s; h *= 1099511628211ull; }
    return h;
}

typedef struct order_item {
    uint64_t sh;          /* seeded hash of the stratum (0 when not stratified) */
    const char *stratum;  /* "" when not stratified */
    uint64_t h;           /* seeded hash of the group key */
    const char *key;
    size_t g;
} order_item;

static int cmp_item(const void *a, const void *b)
{
    const order_item *x = a, *y = b;
    if (x->sh != y->sh) return x->sh < y->sh ? -1 : 1;
    int c = strcmp(x->stratum, y->stratum);
    if (c) return c;
    if (x->h != y->h) return x->h < y->h ? -1 : 1;
    return strcmp(x->key, y->key);
}

/* The prefix length in [lo, n] of cum (cum[k] = count of the first k items) closest to target. */
static size_t closest_cut(const uint64_t *cum, size_t lo, size_t n, double target)
{
    size_t best = lo;
    double best_err = fabs((double)cum[lo] - target);
    for (size_t k = lo + 1; k <= n; k++) {
        double err = fabs((double)cum[k] - target);
        if (err < best_err) { best = k; best_err = err; }
        if ((double)cum[k] > target) break;   /* counts only grow: later cuts are farther */
    }
    return best;
}

gyro_status gyro_split_groups(const gyro_split_options *opt, const char *const *keys,
                              const uint64_t *sizes, const char *const *strata, size_t n_groups,
                              uint8_t *is_dev)
{
    if (!opt || (n_groups && (!keys || !sizes || !is_dev || (opt->stratify && !strata))))
        return gyro_error_set(GYRO_ERR_USAGE, "gyro_split_groups: NULL argument");
    if (opt->folds < 0 || opt->folds == 1)
        return gyro_error_set(GYRO_ERR_USAGE, "folds must be 0 (no k-fold) or at least 2, got %d",
                              opt->folds);
    if (opt->folds == 0 && (!isfinite(opt->dev_fraction) || opt->dev_fraction < 0.0 ||
                            opt->dev_fraction > 1.0))
        return gyro_error_set(GYRO_ERR_USAGE, "dev fraction must be in [0, 1], got %g",
                              opt->dev_fraction);
    if (opt->folds >= 2 && (opt->fold < 0 || opt->fold >= opt->folds))
        return gyro_error_set(GYRO_ERR_USAGE, "fold must be in [0, %d), got %d", opt->folds,
                              opt->fold);
    if (opt->folds >= 2 && (size_t)opt->folds > n_groups)
        return gyro_error_set(GYRO_ERR_USAGE, "%d folds need at least %d sessions, the data has %zu",
                              opt->folds, opt->folds, n_groups);
    if (n_groups == 0) return GYRO_OK;

    order_item *items = malloc(n_groups * sizeof *items);
    uint64_t *cum = malloc((n_groups + 1) * sizeof *cum);
    if (!items || !cum) {
        free(items);
        free(cum);
        return gyro_error_set(GYRO_ERR_NOMEM, "out of memory splitting %zu sessions", n_groups);
    }
    for (size_t g = 0; g < n_groups; g++) {
        items[g].stratum = opt->stratify ? strata[g] : "";
        items[g].sh = opt->stratify ? splitmix64(~opt->seed ^ fnv1a(strata[g])) : 0;
        items[g].h = splitmix64(opt->seed ^ fnv1a(keys[g]));
        items[g].key = keys[g];
        items[g].g = g;
    }
    qsort(items, n_groups, sizeof *items, cmp_item);
    if (opt->stratify) {   /* systematic dealing along the stratum-sorted order */
        uint64_t r = splitmix64(opt->seed ^ 0x5374726174696679ull);   /* "Stratify" */
        if (opt->folds) {
            for (size_t p = 0; p < n_groups; p++)
                is_dev[items[p].g] = (uint8_t)((p + r % (uint64_t)opt->folds) % (size_t)opt->folds ==
                                               (size_t)opt->fold);
        } else {
            double u = (double)(r >> 11) * 0x1.0p-53, f = opt->dev_fraction;
            for (size_t p = 0; p < n_groups; p++)
                is_dev[items[p].g] = (uint8_t)(floor((double)(p + 1) * f + u) >
                                               floor((double)p * f + u));
        }
        free(items);
        free(cum);
        return GYRO_OK;
    }
    cum[0] = 0;
    for (size_t k = 0; k < n_groups; k++) cum[k + 1] = cum[k] + sizes[items[k].g];
    double total = (double)cum[n_groups];

    size_t lo, hi;   /* dev = items[lo, hi) of the order */
    if (opt->folds == 0) {
        lo = 0;
        hi = closest_cut(cum, 0, n_groups, opt->dev_fraction * total);
    } else {
        size_t prev = 0;
        lo = hi = 0;
        for (int k = 1; k <= opt->folds; k++) {
            size_t cut = k == opt->folds ? n_groups
                                         : closest_cut(cum, prev, n_groups, total * k / opt->folds);
            if (k - 1 == opt->fold) { lo = prev; hi = cut; }
            prev = cut;
        }
    }
    for (size_t k = 0; k < n_groups; k++) is_dev[items[k].g] = (uint8_t)(k >= lo && k < hi);
    free(items);
    free(cum);
    return GYRO_OK;
}

gyro_status gyro_split_examples(const gyro_split_options *opt,
                                const Gyro__V1__Example *const *examples, size_t n,
                                uint8_t *is_dev, gyro_split_summary *summary)
{
    if (!opt || (n && (!examples || !is_dev)))
        return gyro_error_set(GYRO_ERR_USAGE, "gyro_split_examples: NULL argument");
    gyro_strmap *groups;
    gyro_status st = gyro_strmap_new(&groups);
    if (st != GYRO_OK) return st;
    int32_t *gid = malloc((n ? n : 1) * sizeof *gid);
    uint64_t *sizes = NULL;
    const char **keys = NULL, **strata = NULL;
    uint8_t *gdev = NULL;
    char *key = NULL;
    size_t key_cap = 0;
    if (!gid) { st = gyro_error_set(GYRO_ERR_NOMEM, "out of memory splitting"); goto out; }
    for (size_t i = 0; i < n && st == GYRO_OK; i++) {
        const Gyro__V1__Example *e = examples[i];
        const char *src = e->source ? e->source : "";
        const char *ses = e->session ? e->session : "";
        size_t need = strlen(src) + strlen(ses) + 32;
        if (need > key_cap) {
            char *k = realloc(key, need * 2);
            if (!k) { st = gyro_error_set(GYRO_ERR_NOMEM, "out of memory splitting"); break; }
            key = k;
            key_cap = need * 2;
        }
        if (*ses) snprintf(key, key_cap, "%s\t%s", src, ses);
        else if (e->line) snprintf(key, key_cap, "%s\t\tline %llu", src, (unsigned long long)e->line);
        else snprintf(key, key_cap, "%s\t\trecord %zu", src, i);
        st = gyro_strmap_intern(groups, key, &gid[i], NULL);
    }
    if (st != GYRO_OK) goto out;
    size_t ng = gyro_strmap_count(groups);
    sizes = calloc(ng ? ng : 1, sizeof *sizes);
    keys = calloc(ng ? ng : 1, sizeof *keys);
    strata = calloc(ng ? ng : 1, sizeof *strata);
    gdev = malloc(ng ? ng : 1);
    if (!sizes || !keys || !strata || !gdev) {
        st = gyro_error_set(GYRO_ERR_NOMEM, "out of memory splitting");
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        sizes[gid[i]]++;
        if (!strata[gid[i]]) strata[gid[i]] = examples[i]->label ? examples[i]->label : "";
    }
    for (size_t g = 0; g < ng; g++) keys[g] = gyro_strmap_key(groups, (int32_t)g);
    st = gyro_split_groups(opt, keys, sizes, strata, ng, gdev);
    if (st != GYRO_OK) goto out;
    gyro_split_summary s = {.groups = ng, .examples = n};
    for (size_t g = 0; g < ng; g++) s.dev_groups += gdev[g];
    for (size_t i = 0; i < n; i++) {
        is_dev[i] = gdev[gid[i]];
        s.dev_examples += is_dev[i];
    }
    if (summary) *summary = s;
out:
    free(key);
    free(gid);
    free(sizes);
    free(keys);
    free(strata);
    free(gdev);
    gyro_strmap_free(groups);
    return st;
}

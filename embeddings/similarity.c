/* similarity.c — Spearman's ρ of a character table on word-similarity files (see similarity.h). */
#include "embeddings/similarity.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/hyp/convert.h"
#include "models/hyp/lorentz.h"
#include "models/text/normalize.h"

/* ---- Spearman ------------------------------------------------------------------------------ */

typedef struct ranked { double v; int i; } ranked;

static int cmp_ranked(const void *a, const void *b)
{
    double x = ((const ranked *)a)->v, y = ((const ranked *)b)->v;
    return x < y ? -1 : x > y;
}

static int ranks(const double *v, int n, double *r)
{
    ranked *tmp = malloc((size_t)n * sizeof *tmp);
    if (!tmp) return -1;
    for (int i = 0; i < n; i++) { tmp[i].v = v[i]; tmp[i].i = i; }
    qsort(tmp, (size_t)n, sizeof *tmp, cmp_ranked);
    for (int i = 0; i < n;) {
        int j = i;
        while (j + 1 < n && tmp[j + 1].v == tmp[i].v) j++;
        double avg = 0.5 * (i + j) + 1.0;
        for (int k = i; k <= j; k++) r[tmp[k].i] = avg;
        i = j + 1;
    }
    free(tmp);
    return 0;
}

double gyro_spearman(const double *a, const double *b, int n)
{
    if (n < 2) return NAN;
    double *ra = malloc((size_t)n * sizeof *ra), *rb = malloc((size_t)n * sizeof *rb);
    double rho = NAN;
    if (ra && rb && ranks(a, n, ra) == 0 && ranks(b, n, rb) == 0) {
        double ma = 0, mb = 0;
        for (int i = 0; i < n; i++) { ma += ra[i]; mb += rb[i]; }
        ma /= n;
        mb /= n;
        double sab = 0, saa = 0, sbb = 0;
        for (int i = 0; i < n; i++) {
            sab += (ra[i] - ma) * (rb[i] - mb);
            saa += (ra[i] - ma) * (ra[i] - ma);
            sbb += (rb[i] - mb) * (rb[i] - mb);
        }
        if (saa > 0 && sbb > 0) rho = sab / sqrt(saa * sbb);
    }
    free(ra);
    free(rb);
    return rho;
}

/* ---- word points --------------------------------------------------------------------------- */

/* The word's point: the normalised Lorentz sum of its characters (hyperbolic tables, dim+1
 * doubles) or their mean (Euclidean, dim doubles). Returns 1 if covered, 0 if a character is
 * missing or the word is empty, -1 on a normalizer error. */
static int word_point(const gyro_embedding_table *t, gyro_normalizer *norm, const char *word,
                      double *out, double *tmp)
{
    gyro_normalized r;
    if (gyro_normalize_text(norm, word, strlen(word), &r)) return -1;
    int n = t->dim, hyp = t->model != GYRO_EMBEDDING_EUCLIDEAN;
    int width = hyp ? n + 1 : n;
    for (int k = 0; k < width; k++) out[k] = 0;
    int used = 0;
    for (size_t i = 0; i < r.n_chars; i++) {
        if (!strcmp(r.chars[i], " ")) continue;
        int row = gyro_embedding_table_find(t, r.chars[i]);
        if (row < 0) return 0;
        const float *x = t->vectors + (size_t)row * t->stride;
        if (t->model == GYRO_EMBEDDING_POINCARE) {
            for (int k = 0; k < n; k++) tmp[k] = x[k];
            gyro_hyp_to_hyperboloid_f64(tmp + n + 1, tmp, n);
            for (int k = 0; k <= n; k++) out[k] += tmp[n + 1 + k];
        } else {
            for (int k = 0; k < width; k++) out[k] += x[k];
        }
        used++;
    }
    if (!used) return 0;
    if (hyp) {
        /* Lorentz centroid with equal weights: μ = z/√|<z,z>_L| (Law et al. 2019) */
        double q = gyro_lorentz_inner_f64(out, out, n);
        double sc = 1.0 / sqrt(fabs(q) > 1e-300 ? fabs(q) : 1e-300);
        for (int k = 0; k <= n; k++) out[k] *= sc;
    } else {
        for (int k = 0; k < n; k++) out[k] /= used;
    }
    return 1;
}

static double word_similarity(const gyro_embedding_table *t, const double *a, const double *b)
{
    if (t->model != GYRO_EMBEDDING_EUCLIDEAN) return -gyro_lorentz_dist_f64(a, b, t->dim);
    double ab = 0, aa = 0, bb = 0;
    for (int k = 0; k < t->dim; k++) {
        ab += a[k] * b[k];
        aa += a[k] * a[k];
        bb += b[k] * b[k];
    }
    return aa > 0 && bb > 0 ? ab / sqrt(aa * bb) : 0.0;
}

/* ---- evaluation ---------------------------------------------------------------------------- */

gyro_status gyro_similarity_eval(const gyro_embedding_table *t, const char *path,
                                 gyro_similarity_result *res, FILE *pairs_out)
{
    memset(res, 0, sizeof *res);
    res->rho = NAN;
    if (t->model != GYRO_EMBEDDING_EUCLIDEAN && t->model != GYRO_EMBEDDING_HYPERBOLOID &&
        t->model != GYRO_EMBEDDING_POINCARE)
        return gyro_error_set(GYRO_ERR_USAGE, "a table of unknown model");
    if (t->model == GYRO_EMBEDDING_POINCARE && fabs(t->curvature - 1.0) > 1e-12)
        return gyro_error_set(GYRO_ERR_USAGE, "only Poincare tables of curvature 1 are supported");
    FILE *f = fopen(path, "rb");
    if (!f) return gyro_error_set(GYRO_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    gyro_normalizer *norm = NULL;
    gyro_status s = gyro_normalizer_new(NULL, &norm);
    size_t w = (size_t)t->dim + 1;
    double *pa = malloc(w * sizeof *pa), *pb = malloc(w * sizeof *pb), *tmp = malloc(2 * w * sizeof *tmp);
    double *gold = NULL, *model = NULL;
    int cap = 0;
    char *line = NULL;
    size_t lcap = 0;
    ssize_t len;
    unsigned long lineno = 0;
    if (!s && (!pa || !pb || !tmp)) s = gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    while (!s && (len = getline(&line, &lcap, f)) >= 0) {
        lineno++;
        char *p = line;
        if (lineno == 1 && !strncmp(p, "\xef\xbb\xbf", 3)) p += 3;
        char *save = NULL;
        char *w1 = strtok_r(p, " \t\r\n", &save);
        if (!w1 || w1[0] == '#') continue;
        char *w2 = strtok_r(NULL, " \t\r\n", &save), *sc = strtok_r(NULL, " \t\r\n", &save);
        char *end = NULL;
        double g = sc ? strtod(sc, &end) : NAN;
        if (!w2 || !sc || *end || !isfinite(g)) {
            s = gyro_error_set(GYRO_ERR_DATA, "%s:%lu: expected 'word1 word2 score'", path, lineno);
            break;
        }
        res->pairs++;
        int ca = word_point(t, norm, w1, pa, tmp), cb = ca > 0 ? word_point(t, norm, w2, pb, tmp) : 0;
        if (ca < 0 || cb < 0) {
            s = gyro_error_prefix(GYRO_ERR_DATA, "%s:%lu", path, lineno);
            break;
        }
        if (!ca || !cb) continue;
        if (res->covered == cap) {
            cap = cap ? 2 * cap : 256;
            double *ng = realloc(gold, (size_t)cap * sizeof *ng);
            if (ng) gold = ng;
            double *nm = realloc(model, (size_t)cap * sizeof *nm);
            if (nm) model = nm;
            if (!ng || !nm) { s = gyro_error_set(GYRO_ERR_NOMEM, "out of memory"); break; }
        }
        gold[res->covered] = g;
        model[res->covered] = word_similarity(t, pa, pb);
        if (pairs_out) fprintf(pairs_out, "%s\t%s\t%g\t%.6f\n", w1, w2, g, model[res->covered]);
        res->covered++;
    }
    if (!s && ferror(f)) s = gyro_error_set(GYRO_ERR_IO, "%s: read error", path);
    if (!s) res->rho = gyro_spearman(gold, model, res->covered);
    free(line);
    free(gold);
    free(model);
    free(pa);
    free(pb);
    free(tmp);
    gyro_normalizer_free(norm);
    fclose(f);
    return s;
}

/* table.c — embedding tables in memory (see table.h; the file format is pipeline/table_file.c). */
#include "embeddings/table.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int gyro_embedding_stride(int model, int dim)
{
    return model == GYRO_EMBEDDING_HYPERBOLOID ? dim + 1 : dim;
}

const char *gyro_embedding_model_name(int model)
{
    switch (model) {
    case GYRO_EMBEDDING_HYPERBOLOID: return "hyperboloid";
    case GYRO_EMBEDDING_POINCARE: return "poincare";
    case GYRO_EMBEDDING_EUCLIDEAN: return "euclidean";
    default: return "unspecified";
    }
}

static int model_ok(int model)
{
    return model == GYRO_EMBEDDING_HYPERBOLOID ||
           model == GYRO_EMBEDDING_POINCARE ||
           model == GYRO_EMBEDDING_EUCLIDEAN;
}

gyro_status gyro_embedding_table_new(int model, double curvature, int dim, int n,
                                     gyro_embedding_table **out)
{
    if (!model_ok(model)) return gyro_error_set(GYRO_ERR_USAGE, "unknown embedding model %d", model);
    if (dim < 1 || dim > GYRO_TABLE_MAX_DIM)
        return gyro_error_set(GYRO_ERR_USAGE, "dimension %d outside [1, %d]", dim, GYRO_TABLE_MAX_DIM);
    if (!(curvature > 0) || !isfinite(curvature))
        return gyro_error_set(GYRO_ERR_USAGE, "curvature must be a positive number");
    if (n < 0 || n > GYRO_VOCAB_MAX_SIZE) return gyro_error_set(GYRO_ERR_USAGE, "bad table size %d", n);
    gyro_embedding_table *t = calloc(1, sizeof *t);
    if (!t) return gyro_error_set(GYRO_ERR_NOMEM, "out of memory for an embedding table");
    t->model = model;
    t->curvature = curvature;
    t->dim = dim;
    t->stride = gyro_embedding_stride(model, dim);
    gyro_status s = gyro_vocab_init(&t->vocab);
    if (!s) {
        t->vectors = calloc((size_t)(n ? n : 1) * (size_t)t->stride, sizeof *t->vectors);
        if (!t->vectors) s = gyro_error_set(GYRO_ERR_NOMEM, "out of memory for %d vectors", n);
    }
    if (s) {
        gyro_embedding_table_free(t);
        return s;
    }
    t->n = n;
    *out = t;
    return GYRO_OK;
}

gyro_status gyro_embedding_table_set_token(gyro_embedding_table *t, int row, const char *token,
                                           uint64_t count)
{
    if (row != t->vocab.n || row >= t->n)
        return gyro_error_set(GYRO_ERR_USAGE, "token rows must be set in order (row %d)", row);
    size_t len = token ? strlen(token) : 0;
    if (gyro_vocab_find(&t->vocab, token ? token : "", len) >= 0)
        return gyro_error_set(GYRO_ERR_DATA, "duplicate token '%s'", token);
    int id;
    gyro_status s = gyro_vocab_add(&t->vocab, token ? token : "", len, count, &id);
    if (s) return s;
    if (count == 0) t->vocab.counts[id] = 0;
    t->tokens = t->vocab.tokens;
    t->counts = t->vocab.counts;
    return GYRO_OK;
}

int gyro_embedding_table_find(const gyro_embedding_table *t, const char *token)
{
    return gyro_vocab_find(&t->vocab, token, strlen(token));
}

void gyro_embedding_table_free(gyro_embedding_table *t)
{
    if (!t) return;
    gyro_vocab_free(&t->vocab);
    free(t->vectors);
    free(t->trained_by);
    free(t);
}

int gyro_embedding_table_first_nonfinite(const gyro_embedding_table *t)
{
    for (int i = 0; i < t->n; i++) {
        const float *x = t->vectors + (size_t)i * (size_t)t->stride;
        for (int k = 0; k < t->stride; k++)
            if (!isfinite(x[k])) return i;
    }
    return -1;
}

int gyro_embedding_table_first_outside_ball(const gyro_embedding_table *t, double *norm2)
{
    if (t->model != GYRO_EMBEDDING_POINCARE) return -1;
    for (int i = 0; i < t->n; i++) {
        const float *x = t->vectors + (size_t)i * (size_t)t->stride;
        double q = 0;
        for (int k = 0; k < t->stride; k++) q += (double)x[k] * (double)x[k];
        q *= t->curvature;
        if (!(q < 1.0)) {   /* NaN counts as outside */
            if (norm2) *norm2 = q;
            return i;
        }
    }
    return -1;
}

double gyro_embedding_table_manifold_error(const gyro_embedding_table *t, int *worst_row)
{
    double worst = 0;
    int wr = -1;
    if (t->model == GYRO_EMBEDDING_HYPERBOLOID) {
        for (int i = 0; i < t->n; i++) {
            const float *x = t->vectors + (size_t)i * (size_t)t->stride;
            double q = -(double)x[0] * (double)x[0];
            for (int k = 1; k < t->stride; k++) q += (double)x[k] * (double)x[k];
            double e = fabs(q + 1.0);
            if (!(e <= worst)) { worst = e; wr = i; } /* NaN counts as worst */
        }
    }
    if (worst_row) *worst_row = wr;
    return worst;
}

/* convert.c — model conversion and text export of embedding tables (see convert.h). */
#include "embeddings/convert.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/core/atomic_file.h"
#include "models/hyp/convert.h"
#include "models/hyp/lorentz.h"
#include "models/hyp/poincare.h"

gyro_status gyro_embedding_convert(const gyro_embedding_table *in, int to,
                                   gyro_embedding_table **out, int *clamped)
{
    const int H = GYRO_EMBEDDING_HYPERBOLOID, P = GYRO_EMBEDDING_POINCARE;
    if (clamped) *clamped = 0;
    if (to != H && to != P) return gyro_error_set(GYRO_ERR_USAGE, "can convert only to poincare or hyperboloid");
    if (in->model != H && in->model != P)
        return gyro_error_set(GYRO_ERR_USAGE, "a %s table has no hyperbolic counterpart",
                              gyro_embedding_model_name(in->model));
    if (fabs(in->curvature - 1.0) > 1e-12)
        return gyro_error_set(GYRO_ERR_USAGE, "only curvature 1 is supported (the table has %g)", in->curvature);
    gyro_embedding_table *t;
    gyro_status s = gyro_embedding_table_new(to, 1.0, in->dim, in->n, &t);
    if (s) return s;
    int n = in->dim, nclamped = 0;
    double *a = malloc((size_t)(n + 1) * sizeof *a), *b = malloc((size_t)(n + 1) * sizeof *b);
    if (!a || !b) s = gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    for (int i = 0; i < in->n && !s; i++) {
        const float *x = in->vectors + (size_t)i * in->stride;
        float *y = t->vectors + (size_t)i * t->stride;
        for (int k = 0; k < in->stride; k++) a[k] = x[k];
        if (in->model == to) {
            memcpy(y, x, (size_t)in->stride * sizeof *y);
        } else if (to == P) {
            gyro_hyp_to_poincare_f64(b, a, n);
            for (int k = 0; k < n; k++) y[k] = (float)b[k];
            if (gyro_poincare_project_f32(y, y, 1.0f, n) != 0) nclamped++;
        } else {
            gyro_hyp_to_hyperboloid_f64(b, a, n);
            for (int k = 0; k <= n; k++) y[k] = (float)b[k];
            gyro_lorentz_reproject_f32(y, n);
        }
        s = gyro_embedding_table_set_token(t, i, in->tokens[i], in->counts[i]);
    }
    free(a);
    free(b);
    if (!s && in->trained_by && !(t->trained_by = strdup(in->trained_by)))
        s = gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    if (s) {
        gyro_embedding_table_free(t);
        return s;
    }
    if (clamped) *clamped = nclamped;
    *out = t;
    return GYRO_OK;
}

/* A token with whitespace bytes replaced by U+2423, so it stays one field. */
static void put_token(FILE *f, const char *tok)
{
    for (const char *p = tok; *p; p++) {
        if (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == '\v' || *p == '\f')
            fputs("\xe2\x90\xa3", f);
        else
            fputc(*p, f);
    }
}

gyro_status gyro_embedding_export_vec(const gyro_embedding_table *t, const char *path)
{
    int bad = gyro_embedding_table_first_nonfinite(t);
    if (bad >= 0)
        return gyro_error_set(GYRO_ERR_NAN, "%s: not written: row %d ('%s') has a non-finite coordinate",
                              path, bad, t->tokens[bad]);
    gyro_atomic_file af;
    gyro_status s = gyro_atomic_open(&af, path);
    if (s) return s;
    fprintf(af.fp, "%d %d\n", t->n, t->stride);
    for (int i = 0; i < t->n; i++) {
        put_token(af.fp, t->tokens[i]);
        const float *x = t->vectors + (size_t)i * t->stride;
        for (int k = 0; k < t->stride; k++) fprintf(af.fp, " %.9g", (double)x[k]);
        fputc('\n', af.fp);
    }
    if (ferror(af.fp)) {
        gyro_atomic_abort(&af);
        return gyro_error_set(GYRO_ERR_IO, "%s: write error: %s", path, strerror(errno));
    }
    return gyro_atomic_commit(&af);
}

gyro_status gyro_embedding_export_tsv(const gyro_embedding_table *t, const char *vectors_path,
                                      const char *metadata_path)
{
    int bad = gyro_embedding_table_first_nonfinite(t);
    if (bad >= 0)
        return gyro_error_set(GYRO_ERR_NAN, "%s: not written: row %d ('%s') has a non-finite coordinate",
                              vectors_path, bad, t->tokens[bad]);
    gyro_atomic_file af;
    gyro_status s = gyro_atomic_open(&af, vectors_path);
    if (s) return s;
    for (int i = 0; i < t->n; i++) {
        const float *x = t->vectors + (size_t)i * t->stride;
        for (int k = 0; k < t->stride; k++) fprintf(af.fp, k ? "\t%.9g" : "%.9g", (double)x[k]);
        fputc('\n', af.fp);
    }
    if (ferror(af.fp)) {
        gyro_atomic_abort(&af);
        return gyro_error_set(GYRO_ERR_IO, "%s: write error: %s", vectors_path, strerror(errno));
    }
    if ((s = gyro_atomic_commit(&af))) return s;
    if ((s = gyro_atomic_open(&af, metadata_path))) return s;
    for (int i = 0; i < t->n; i++) {
        put_token(af.fp, t->tokens[i]);
        fputc('\n', af.fp);
    }
    if (ferror(af.fp)) {
        gyro_atomic_abort(&af);
        return gyro_error_set(GYRO_ERR_IO, "%s: write error: %s", metadata_path, strerror(errno));
    }
    return gyro_atomic_commit(&af);
}

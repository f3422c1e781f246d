/* plot.c — the 2-D layout of a character table in the Poincaré disk (see plot.h). */
#include "embeddings/plot.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/core/rng.h"
#include "models/hyp/convert.h"
#include "models/hyp/poincare.h"

/* axis (d) ← its part orthogonal to the unit vector prev (may be NULL), normalised; the unit
 * vector e_fallback when nothing is left. */
static void orthonormalize(double *axis, const double *prev, int d, int fallback)
{
    if (prev) {
        double p = 0;
        for (int k = 0; k < d; k++) p += axis[k] * prev[k];
        for (int k = 0; k < d; k++) axis[k] -= p * prev[k];
    }
    double nn = 0;
    for (int k = 0; k < d; k++) nn += axis[k] * axis[k];
    nn = sqrt(nn);
    for (int k = 0; k < d; k++) axis[k] = nn > 0 ? axis[k] / nn : (k == fallback);
}

/* Top principal axis of the rows of X (n, d) (centred), by power iteration, orthogonal to `prev`
 * (may be NULL). axis: (d). */
static void principal_axis(double *axis, const double *X, int n, int d, const double *prev, double *tmp)
{
    gyro_rng r;
    gyro_rng_seed(&r, prev ? 2 : 1);
    for (int k = 0; k < d; k++) axis[k] = gyro_rng_normal(&r);
    for (int it = 0; it < 100; it++) {
        orthonormalize(axis, prev, d, 0);
        /* tmp = Xᵀ X axis */
        for (int k = 0; k < d; k++) tmp[k] = 0;
        for (int i = 0; i < n; i++) {
            const double *x = X + (size_t)i * d;
            double p = 0;
            for (int k = 0; k < d; k++) p += x[k] * axis[k];
            for (int k = 0; k < d; k++) tmp[k] += p * x[k];
        }
        memcpy(axis, tmp, (size_t)d * sizeof *axis);
    }
    orthonormalize(axis, prev, d, prev ? 1 : 0);
}

gyro_status gyro_plot_layout(const gyro_embedding_table *t, double *xy, int *projected)
{
    if (t->n < 1) return gyro_error_set(GYRO_ERR_USAGE, "the table is empty");
    int d = t->dim, n = t->n, hyp = t->model != GYRO_EMBEDDING_EUCLIDEAN;
    double *X = malloc((size_t)n * d * sizeof *X), *buf = malloc((size_t)(3 * d + 3) * sizeof *buf);
    if (!X || !buf) {
        free(X); free(buf);
        return gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    }
    /* tangent vectors at the origin (hyperbolic) or the vectors themselves (Euclidean) */
    for (int i = 0; i < n; i++) {
        const float *x = t->vectors + (size_t)i * t->stride;
        double *v = X + (size_t)i * d;
        if (t->model == GYRO_EMBEDDING_HYPERBOLOID) {
            for (int k = 0; k <= d; k++) buf[k] = x[k];
            gyro_hyp_to_poincare_f64(buf + d + 1, buf, d);
            gyro_poincare_logmap0_f64(v, buf + d + 1, 1.0, d);
        } else if (hyp) {
            for (int k = 0; k < d; k++) buf[k] = x[k];
            gyro_poincare_logmap0_f64(v, buf, t->curvature, d);
        } else {
            for (int k = 0; k < d; k++) v[k] = x[k];
        }
    }
    *projected = d != 2;
    if (d == 2) {
        for (int i = 0; i < n; i++) { xy[2 * i] = X[2 * i]; xy[2 * i + 1] = X[2 * i + 1]; }
    } else {
        /* PCA of the tangent vectors around the origin (hyperbolic) or their mean (Euclidean) */
        double *mean = buf + 2 * d + 2;
        (void)mean;
        if (!hyp) {
            double *mu = calloc((size_t)d, sizeof *mu);
            if (!mu) { free(X); free(buf); return gyro_error_set(GYRO_ERR_NOMEM, "out of memory"); }
            for (int i = 0; i < n; i++) for (int k = 0; k < d; k++) mu[k] += X[(size_t)i * d + k] / n;
            for (int i = 0; i < n; i++) for (int k = 0; k < d; k++) X[(size_t)i * d + k] -= mu[k];
            free(mu);
        }
        double *a1 = malloc((size_t)d * sizeof *a1), *a2 = malloc((size_t)d * sizeof *a2);
        if (!a1 || !a2) {
            free(a1); free(a2); free(X); free(buf);
            return gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
        }
        principal_axis(a1, X, n, d, NULL, buf);
        principal_axis(a2, X, n, d, a1, buf);
        for (int i = 0; i < n; i++) {
            const double *v = X + (size_t)i * d;
            double p = 0, q = 0;
            for (int k = 0; k < d; k++) { p += v[k] * a1[k]; q += v[k] * a2[k]; }
            xy[2 * i] = p;
            xy[2 * i + 1] = q;
        }
        free(a1);
        free(a2);
    }
    if (hyp) { /* back into the 2-D disk of curvature −1 */
        for (int i = 0; i < n; i++) {
            double v[2] = {xy[2 * i], xy[2 * i + 1]}, y[2];
            gyro_poincare_expmap0_f64(y, v, 1.0, 2);
            gyro_poincare_project_f64(y, y, 1.0, 2);
            xy[2 * i] = y[0];
            xy[2 * i + 1] = y[1];
        }
    } else { /* scale into the unit square */
        double m = 1e-300;
        for (int i = 0; i < 2 * n; i++) if (fabs(xy[i]) > m) m = fabs(xy[i]);
        for (int i = 0; i < 2 * n; i++) xy[i] /= m;
    }
    free(X);
    free(buf);
    return GYRO_OK;
}

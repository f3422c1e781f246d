/* neighbors.c — brute-force k nearest neighbours in an embedding table (see neighbors.h). */
#include "embeddings/neighbors.h"

#include <math.h>

#include "models/hyp/lorentz.h"
#include "models/hyp/poincare.h"

double gyro_embedding_distance_vec(const gyro_embedding_table *t, const float *x, const float *y)
{
    switch (t->model) {
    case GYRO_EMBEDDING_HYPERBOLOID:
        return gyro_lorentz_dist_f32(x, y, t->dim);
    case GYRO_EMBEDDING_POINCARE:
        return gyro_poincare_dist_f32(x, y, (float)t->curvature, t->dim);
    default: {
        double xy = 0, xx = 0, yy = 0;
        for (int k = 0; k < t->dim; k++) {
            xy += (double)x[k] * y[k];
            xx += (double)x[k] * x[k];
            yy += (double)y[k] * y[k];
        }
        double den = sqrt(xx * yy);
        return 1.0 - (den > 0 ? xy / den : 0.0);
    }
    }
}

double gyro_embedding_distance(const gyro_embedding_table *t, int i, int j)
{
    return gyro_embedding_distance_vec(t, t->vectors + (size_t)i * t->stride,
                                       t->vectors + (size_t)j * t->stride);
}

/* max-heap on distance over out[0..n) */
static void sift_down(gyro_neighbor *h, int n, int i)
{
    for (;;) {
        int l = 2 * i + 1, r = l + 1, m = i;
        if (l < n && h[l].distance > h[m].distance) m = l;
        if (r < n && h[r].distance > h[m].distance) m = r;
        if (m == i) return;
        gyro_neighbor tmp = h[i];
        h[i] = h[m];
        h[m] = tmp;
        i = m;
    }
}

static void sift_up(gyro_neighbor *h, int i)
{
    while (i > 0) {
        int p = (i - 1) / 2;
        if (h[p].distance >= h[i].distance) return;
        gyro_neighbor tmp = h[i];
        h[i] = h[p];
        h[p] = tmp;
        i = p;
    }
}

gyro_status gyro_embedding_neighbors(const gyro_embedding_table *t, int query, int k,
                                     gyro_neighbor *out, int *n_out)
{
    if (query < 0 || query >= t->n) return gyro_error_set(GYRO_ERR_USAGE, "row %d outside the table", query);
    if (k < 1) return gyro_error_set(GYRO_ERR_USAGE, "k must be >= 1");
    int n = 0;
    for (int i = 0; i < t->n; i++) {
        if (i == query) continue;
        double d = gyro_embedding_distance(t, query, i);
        if (isnan(d)) d = INFINITY;
        if (n < k) {
            out[n].row = i;
            out[n].distance = d;
            sift_up(out, n);
            n++;
        } else if (d < out[0].distance) {
            out[0].row = i;
            out[0].distance = d;
            sift_down(out, n, 0);
        }
    }
    /* heap sort: pop the largest to the end */
    for (int m = n - 1; m > 0; m--) {
        gyro_neighbor tmp = out[0];
        out[0] = out[m];
        out[m] = tmp;
        sift_down(out, m, 0);
    }
    *n_out = n;
    return GYRO_OK;
}

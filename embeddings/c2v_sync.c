/* c2v_sync.c — combining the char2vec tables of several ranks (see c2v_sync.h). */
#include "embeddings/c2v_sync.h"

#include <stdlib.h>
#include <string.h>

#include "models/core/progress.h"
#include "models/hyp/lorentz.h"

gyro_status gyro_c2v_sync_init(gyro_c2v_sync *cs, const gyro_sync *sync, int combine,
                               const gyro_c2v_model *m)
{
    memset(cs, 0, sizeof *cs);
    cs->sync = sync;
    cs->combine = combine;
    cs->prev_in = gyro_c2v_rows_alloc(m->vocab.n, m->row);
    cs->prev_out = gyro_c2v_rows_alloc(m->vocab.n, m->row);
    cs->buf = malloc(2 * (size_t)m->vocab.n * (size_t)(m->width + 1) * sizeof *cs->buf);
    cs->scratch = malloc(3 * (size_t)m->width * sizeof *cs->scratch);
    if (!cs->prev_in || !cs->prev_out || !cs->buf || !cs->scratch) return gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    memcpy(cs->prev_in, m->in, (size_t)m->vocab.n * (size_t)m->row * sizeof(float));
    memcpy(cs->prev_out, m->out, (size_t)m->vocab.n * (size_t)m->row * sizeof(float));
    return GYRO_OK;
}

void gyro_c2v_sync_free(gyro_c2v_sync *cs)
{
    free(cs->prev_in);
    free(cs->prev_out);
    free(cs->buf);
    free(cs->scratch);
    memset(cs, 0, sizeof *cs);
}

/* This rank's contribution of row x (width floats) with common point p into b (width + 1
 * floats): log_p(x) or x − p and then 1 if the row moved, else 0 (moved); x (mean). The
 * logarithm runs in double: the displacements between two combinations are small and float
 * would lose them to rounding of a = −⟨p,x⟩_L near 1. */
static void contribution(float *b, const float *x, const float *p, int width, int hyp, int combine,
                         double *scratch)
{
    if (combine == GYRO_C2V_COMBINE_MEAN) {
        memcpy(b, x, (size_t)width * sizeof *b);
        b[width] = 1;
        return;
    }
    if (!memcmp(x, p, (size_t)width * sizeof *x)) {   /* not trained since: no displacement */
        memset(b, 0, (size_t)(width + 1) * sizeof *b);
        return;
    }
    b[width] = 1;
    if (!hyp) {
        for (int j = 0; j < width; j++) b[j] = x[j] - p[j];
        return;
    }
    double *xd = scratch, *pd = scratch + width, *v = scratch + 2 * width;
    for (int j = 0; j < width; j++) {
        xd[j] = x[j];
        pd[j] = p[j];
    }
    /* on the hyperboloid in double first: x₀ rounded to float is off by ~1e-7 relative, which
     * the logarithm would read as a displacement of ~√(2e-7) */
    gyro_lorentz_reproject_f64(xd, width - 1);
    gyro_lorentz_reproject_f64(pd, width - 1);
    gyro_lorentz_logmap_f64(v, pd, xd, width - 1);
    for (int j = 0; j < width; j++) b[j] = (float)v[j];
}

/* The combined row from the all-reduced b into x (and p): exp_p(Σ v / k) or p + Σ d / k over
 * the k ranks that moved it (moved), the Lorentz centroid or the mean (mean); then on the
 * hyperboloid again. */
static void combined(float *x, float *p, const float *b, int width, int hyp, int combine, int nranks,
                     double *scratch)
{
    const float k = b[width];
    if (combine == GYRO_C2V_COMBINE_MOVED && k == 0) {   /* no rank moved it */
        memcpy(x, p, (size_t)width * sizeof *x);
        return;
    }
    if (combine == GYRO_C2V_COMBINE_MEAN) {
        if (hyp) {
            const float one = 1.0f;
            gyro_lorentz_centroid_f32(x, b, &one, 1, width - 1);  /* z / √|⟨z,z⟩_L|, z = Σ_r x_r */
        } else {
            for (int j = 0; j < width; j++) x[j] = b[j] / (float)nranks;
        }
    } else if (hyp) {
        double *pd = scratch, *v = scratch + width, *y = scratch + 2 * width;
        for (int j = 0; j < width; j++) {
            pd[j] = p[j];
            v[j] = (double)b[j] / k;
        }
        gyro_lorentz_reproject_f64(pd, width - 1);
        gyro_lorentz_proj_tangent_f64(v, pd, v, width - 1);   /* Σ v is tangent at p up to rounding */
        gyro_lorentz_expmap_f64(y, pd, v, width - 1);
        for (int j = 0; j < width; j++) x[j] = (float)y[j];
    } else {
        for (int j = 0; j < width; j++) x[j] = p[j] + b[j] / k;
    }
    if (hyp) gyro_lorentz_reproject_f32(x, width - 1);
    memcpy(p, x, (size_t)width * sizeof *p);
}

gyro_status gyro_c2v_sync_tables(gyro_c2v_sync *cs, gyro_c2v_model *m)
{
    if (!gyro_sync_active(cs->sync)) return GYRO_OK;
    double t0 = gyro_now();
    const int V = m->vocab.n, W = m->width, B = W + 1, hyp = m->opt.geometry == GYRO_C2V_HYPERBOLIC;
    float *tabs[2] = {m->in, m->out}, *prevs[2] = {cs->prev_in, cs->prev_out};
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < V; i++)
            contribution(cs->buf + ((size_t)k * V + i) * B, tabs[k] + (size_t)i * m->row,
                         prevs[k] + (size_t)i * m->row, W, hyp, cs->combine, cs->scratch);
    gyro_status s = gyro_sync_allreduce(cs->sync, cs->buf, 2 * (size_t)V * B, GYRO_SYNC_F32, GYRO_SYNC_SUM);
    if (s) return s;
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < V; i++)
            combined(tabs[k] + (size_t)i * m->row, prevs[k] + (size_t)i * m->row,
                     cs->buf + ((size_t)k * V + i) * B, W, hyp, cs->combine, cs->sync->size, cs->scratch);
    cs->seconds += gyro_now() - t0;
    cs->rounds++;
    return GYRO_OK;
}

#define STATE_WORDS 6   /* u64 per thread state: epoch, pos, rng[4] */

gyro_status gyro_c2v_sync_states(const gyro_sync *sync, gyro_c2v_model *m)
{
    if (!gyro_sync_active(sync)) return GYRO_OK;
    const int T = m->opt.threads;
    const size_t n = (size_t)m->ranks * (size_t)T;
    uint64_t *b = calloc(n * STATE_WORDS, sizeof *b);
    if (!b) return gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    for (int t = 0; t < T; t++) {
        const gyro_c2v_thread_state *st = &m->ts[sync->rank * T + t];
        uint64_t *q = b + ((size_t)sync->rank * T + t) * STATE_WORDS;
        q[0] = st->epoch;
        q[1] = st->pos;
        memcpy(q + 2, st->rng.s, sizeof st->rng.s);
    }
    gyro_status s = gyro_sync_allreduce(sync, b, n * STATE_WORDS, GYRO_SYNC_U64, GYRO_SYNC_SUM);
    for (size_t g = 0; g < n && !s; g++) {
        const uint64_t *q = b + g * STATE_WORDS;
        m->ts[g].epoch = (uint32_t)q[0];
        m->ts[g].pos = q[1];
        memcpy(m->ts[g].rng.s, q + 2, sizeof m->ts[g].rng.s);
    }
    free(b);
    return s;
}

uint64_t gyro_c2v_model_hash(const gyro_c2v_model *m)
{
    const gyro_c2v_options *o = &m->opt;
    int64_t ints[] = {o->geometry, o->dim, o->window, o->negatives, o->epochs, o->threads, m->ranks};
    double dbl[] = {o->sample, o->lr, o->theta, o->max_step, o->init_scale, o->neg_power};
    uint64_t u[] = {o->seed, m->n_tokens, m->n_ids, m->words_done, gyro_vocab_fingerprint(&m->vocab)};
    uint64_t h = gyro_sync_hash(GYRO_SYNC_HASH_INIT, ints, sizeof ints);
    h = gyro_sync_hash(h, dbl, sizeof dbl);
    h = gyro_sync_hash(h, u, sizeof u);
    for (int i = 0; i < m->vocab.n; i++) {
        h = gyro_sync_hash(h, m->in + (size_t)i * m->row, (size_t)m->width * sizeof(float));
        h = gyro_sync_hash(h, m->out + (size_t)i * m->row, (size_t)m->width * sizeof(float));
    }
    return h;
}

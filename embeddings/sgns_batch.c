/* sgns_batch.c — the window update with shared negatives (see sgns_batch.h for the formulas and
 * the paper). The three small products are register-blocked loops over 8-float lanes (GCC/Clang
 * vector extensions: AVX on x86-64-v3 builds, two SSE halves otherwise), the steps the math-core
 * op gyro_lorentz_skipgram_step_centre_f32. */
#include "embeddings/sgns_batch.h"

#include <stdlib.h>
#include <string.h>

#include "embeddings/c2v_model.h"

typedef float v8f __attribute__((vector_size(32)));

#define V8(p) (*(v8f *)(p))
#define V8C(p) (*(const v8f *)(p))

gyro_status gyro_sgns_batch_init(gyro_sgns_batch *b, const gyro_sgns_tables *tab, int max_u, int max_v,
                                 int row, int hyp, double theta, double max_step)
{
    memset(b, 0, sizeof *b);
    if (max_u < 1 || max_v < 1 || row < 16 || row % 16)
        return gyro_error_set(GYRO_ERR_USAGE, "window update: bad sizes (contexts %d, targets %d, row %d)",
                              max_u, max_v, row);
    *b = (gyro_sgns_batch){.tab = tab, .row = row, .hyp = hyp, .theta = hyp ? theta : 0.0,
                           .max_step = max_step, .max_u = max_u, .max_v = max_v};
    b->u = malloc((size_t)max_u * sizeof *b->u);
    b->v = malloc((size_t)max_v * sizeof *b->v);
    b->mu = malloc((size_t)max_u * sizeof *b->mu);
    b->nvc = malloc((size_t)max_v * sizeof *b->nvc);
    b->w = malloc((size_t)max_u * (size_t)max_v * sizeof *b->w);
    b->hu = gyro_c2v_rows_alloc(max_u, row);
    b->hv = gyro_c2v_rows_alloc(max_v, row);
    if (!b->u || !b->v || !b->mu || !b->nvc || !b->w || !b->hu || !b->hv)
        return gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    return GYRO_OK;
}

void gyro_sgns_batch_free(gyro_sgns_batch *b)
{
    free(b->u);
    free(b->v);
    free(b->mu);
    free(b->nvc);
    free(b->w);
    free(b->hu);
    free(b->hv);
    memset(b, 0, sizeof *b);
}

/* S for a block of MU ≤ 2 context rows × MV ≤ 4 target rows, then W and the loss of the block:
 * s = Σ_i u_i v_i (float lanes, whole padded row) − 2u₀v₀ (double) = ⟨u,v⟩_L; Euclidean: the sum.
 * Returns 0, or 1 on a non-finite score. MU and MV are constants after inlining, so the
 * accumulators live in registers (8 + 6 loads of 16 ymm). */
static inline __attribute__((always_inline)) int
score_block(gyro_sgns_batch *b, int c0, int t0, int MU, int MV, double *loss)
{
    const int row = b->row;
    const float *u[2], *v[4];
    for (int a = 0; a < MU; a++) u[a] = b->u[c0 + a];
    for (int k = 0; k < MV; k++) v[k] = b->v[t0 + k];
    v8f acc[2][4];
    for (int a = 0; a < MU; a++)
        for (int k = 0; k < MV; k++) acc[a][k] = (v8f){0};
    for (int i = 0; i < row; i += 8) {
        v8f vv[4];
        for (int k = 0; k < MV; k++) vv[k] = V8C(v[k] + i);
        for (int a = 0; a < MU; a++) {
            v8f uu = V8C(u[a] + i);
            for (int k = 0; k < MV; k++) acc[a][k] += uu * vv[k];
        }
    }
    for (int a = 0; a < MU; a++) {
        for (int k = 0; k < MV; k++) {
            const int c = c0 + a, t = t0 + k;
            double s = 0;
            for (int l = 0; l < 8; l++) s += acc[a][k][l];
            if (b->hyp) s -= 2.0 * (double)u[a][0] * (double)v[k][0];
            if (!(fabs(s) < 1e30)) return 1;
            const int label = t == 0;
            double l;
            double g = label - gyro_sgns_sigmoid(b->tab, s + b->theta, label, &l);
            double m = (double)b->mu[c] * (double)b->nvc[t];
            *loss += m * l;
            b->w[(size_t)c * b->max_v + t] = (float)(m * g);
        }
    }
    return 0;
}

/* W = m·n·(y − σ(S + θ)) for the window, block by block (2 × 4, with the edges). */
static int scores(gyro_sgns_batch *b, double *loss)
{
    const int nu = b->nu, nv = b->nv;
    int c = 0;
    for (; c + 2 <= nu; c += 2) {
        int t = 0, bad = 0;
        for (; t + 4 <= nv; t += 4) bad |= score_block(b, c, t, 2, 4, loss);
        switch (nv - t) {
        case 3: bad |= score_block(b, c, t, 2, 3, loss); break;
        case 2: bad |= score_block(b, c, t, 2, 2, loss); break;
        case 1: bad |= score_block(b, c, t, 2, 1, loss); break;
        default: break;
        }
        if (bad) return 1;
    }
    if (c < nu) {
        int t = 0, bad = 0;
        for (; t + 4 <= nv; t += 4) bad |= score_block(b, c, t, 1, 4, loss);
        switch (nv - t) {
        case 3: bad |= score_block(b, c, t, 1, 3, loss); break;
        case 2: bad |= score_block(b, c, t, 1, 2, loss); break;
        case 1: bad |= score_block(b, c, t, 1, 1, loss); break;
        default: break;
        }
        if (bad) return 1;
    }
    return 0;
}

/* out_r = Σ_k coef[r·cs + k·ks] x_k for two output rows at once (one when r1 is NULL): H_U = W·V
 * (x = V, cs = max_v, ks = 1) and H_V = Wᵀ·U (x = U, cs = 1, ks = max_v). */
static void combine2(float *restrict r0, float *restrict r1, const float *coef, int cs, int ks,
                     float *const *x, int n, int row)
{
    for (int i = 0; i < row; i += 8) {
        v8f a0 = {0}, a1 = {0};
        for (int k = 0; k < n; k++) {
            v8f xk = V8C(x[k] + i);
            a0 += coef[(size_t)k * ks] * xk;
            if (r1) a1 += coef[(size_t)cs + (size_t)k * ks] * xk;
        }
        V8(r0 + i) = a0;
        if (r1) V8(r1 + i) = a1;
    }
}

int gyro_sgns_batch_step(gyro_sgns_batch *b, double lr, double *loss)
{
    const int nu = b->nu, nv = b->nv, row = b->row, ld = b->max_v;
    if (scores(b, loss)) return 1;
    /* H_U = W·V and H_V = Wᵀ·U, both from the rows before the window */
    for (int c = 0; c < nu; c += 2)
        combine2(b->hu + (size_t)c * row, c + 1 < nu ? b->hu + (size_t)(c + 1) * row : NULL,
                 b->w + (size_t)c * ld, ld, 1, b->v, nv, row);
    for (int t = 0; t < nv; t += 2)
        combine2(b->hv + (size_t)t * row, t + 1 < nv ? b->hv + (size_t)(t + 1) * row : NULL,
                 b->w + t, 1, ld, b->u, nu, row);
    /* one step per row */
    if (!b->hyp) {
        for (int c = 0; c < nu; c++) gyro_sgns_euc_centre(b->u[c], b->hu + (size_t)c * row, lr, row);
        for (int t = 0; t < nv; t++) gyro_sgns_euc_centre(b->v[t], b->hv + (size_t)t * row, lr, row);
        return 0;
    }
    int bad = 0;
    for (int c = 0; c < nu; c++)
        bad |= !(gyro_lorentz_skipgram_step_centre_f32(b->u[c], b->hu + (size_t)c * row, lr, b->max_step, row) < 1e30f);
    for (int t = 0; t < nv; t++)
        bad |= !(gyro_lorentz_skipgram_step_centre_f32(b->v[t], b->hv + (size_t)t * row, lr, b->max_step, row) < 1e30f);
    return bad;
}

/* sgns_batch.h — the window update of char2vec with negatives shared across the window
 * ("HogBatch": Ji, Shah, Satish, Dubey et al. 2016, "Parallelizing Word2Vec in Shared and
 * Distributed Memory", §3; Intel's pWord2Vec), on the hyperboloid and in Euclidean space.
 *
 * One window is a centre position i with its contexts j (|j − i| ≤ the window drawn for i). As
 * in word2vec's skip-gram loop, the context characters are the rows of the centre table A
 * ("inputs") and the centre character plus K negatives drawn ONCE for the whole window are the
 * rows of the context table B ("outputs"): stack
 *     U = [A_c]   (nu × (d+1)), the distinct context rows, row c counted m_c times;
 *     V = [B_t]   (nv × (d+1)), t = 0 the positive (the centre), t ≥ 1 the distinct negatives
 *                 (a draw equal to the positive is skipped, as in the per-pair update), row t
 *                 counted n_t times.
 * Every score of the window is one small product (J = diag(−1, 1, …, 1), Lorentz model,
 * curvature −1, time first; Euclidean: J = I, θ = 0):
 *     S = U·J·Vᵀ   (nu × nv),   S_ct = ⟨u_c, v_t⟩_L,
 * the loss  L = Σ_ct m_c n_t ℓ(S_ct),  ℓ = −log σ(±(S_ct + θ))  (+ for t = 0, − for negatives;
 * Leimeister & Wilson 2018 — the same loss as the per-pair update), and with
 *     W_ct = m_c n_t (y_t − σ(S_ct + θ))          (y_0 = 1, y_t = 0 otherwise)
 * the ascent directions (−J times the Euclidean gradient, as h in lorentz_skipgram.h) are again
 * two small products:
 *     H_U = W·V   (nu × (d+1)),    H_V = W'ᵀ·U'   (nv × (d+1)),
 * since ∂S_ct/∂u_c = J v_t and ∂S_ct/∂v_t = J u_c. H_U is taken at the rows before the window
 * and each context row takes one Riemannian step (Nickel & Kiela 2018, §3 and eq. 9): project
 * onto its tangent space, clip to max_step, exp map, re-project x₀ = √(1 + |x_s|²) —
 * gyro_lorentz_skipgram_step_centre_f32's formula with h = its row of H_U (the centre step of
 * the per-pair update, whose h is Σ_t g_t v_t over one pair's targets), run in sgns_batch.c with
 * 8-float lanes (FMA on AVX2 builds). Then the targets: U' = the stepped contexts, W' = W
 * with its positive column weighed again at U' (W'_c0 = m_c n_0 (1 − σ(⟨u'_c, v_0⟩_L + θ)); the
 * negatives keep theirs), and each target row takes the same step along its row of H_V.
 * Euclidean: x += lr·h in the same order. Rows are distinct within U and within V, and U and V
 * lie in different tables, so every row is written once. Stepping both sides of a positive pair
 * at once (both H from the rows before the window, a Jacobi step) let them pass each other: on
 * a 16-character two-topic corpus with 2 contexts per draw and window 5 rows went out to
 * x₀ ≈ 400-6000 (per pair: < 10); with the positive column weighed again at U' they stay
 * below 5. The cost is nu more scores per window.
 *
 * Cost per window of nu contexts: K + 1 target rows instead of nu·(K + 1), nu + K + 1 exp maps
 * instead of nu·(K + 2), and three products whose loaded rows are reused across a register
 * block. S is summed in float lanes over the whole padded row, minus 2u₀v₀ in double: its
 * rounding, a few ulp of |u||v| (~1e-5 for x₀ ≈ 10), is far below the 1/128 step of the
 * sigmoid table it indexes. H_U and H_V are summed in float, as h is in the per-pair update, and
 * the sums a step needs (⟨x,h⟩_L, ⟨h,h⟩_L) are taken in float lanes in the same pass that forms
 * a row of H, so a row's step is one more pass (x ← αx + βh with the re-projection's Σ x_i²,
 * float lanes, lane 0 left out): a few ulp of |x||h| in the tangent projection and of x₀² in
 * the re-projection (~1e-5 for x₀ ≈ 10; each step re-projects, so nothing accumulates), where
 * the per-pair kernels sum in double. cosh and sinh(t)/t of the step come from their series
 * (gyro_lorentz_step_cosh_sinhc: no libm call for a step of length ≤ 1). The scalar work of a
 * window runs in vector lanes too (AVX2 builds): the weights of a 2 × 4 block of scores in 4
 * double lanes (table gathers, the same operations as gyro_sgns_sigmoid, so W is the same to the
 * bit), and the coefficients of every step of one side (clip, series) 4 rows at a time, before
 * the rows' passes; with the row passes, the per-window work that does not grow with the
 * dimension was half of the time (dim 44 against 100: 2.08 against 2.80 s).
 *
 * Rows: `row` floats (a multiple of 16), 64-byte aligned, zero past the used width (kept zero).
 */
#ifndef GYRO_EMBEDDINGS_SGNS_BATCH_H
#define GYRO_EMBEDDINGS_SGNS_BATCH_H

#include "embeddings/sgns.h"
#include "models/core/status.h"

/* A worker's scratch for the window update: the window's rows and the products' buffers. */
typedef struct gyro_sgns_batch {
    const gyro_sgns_tables *tab;
    int row;              /* floats per padded row (multiple of 16) */
    int hyp;              /* 1: hyperboloid (⟨·,·⟩_L, θ, Riemannian steps); 0: Euclidean SGD */
    double theta;         /* shift of the score (hyperboloid only) */
    double max_step;      /* clip of a Riemannian step (<= 0: none) */
    int max_u, max_v;     /* capacity: contexts, targets (1 + negatives) */
    int nu, nv;           /* rows gathered for the current window */
    float **u, **v;       /* (max_u), (max_v) the window's distinct rows, in their tables */
    int *mu, *nvc;        /* (max_u), (max_v) how many times each row was added */
    float *w;             /* (max_u, max_v) scores S, then weights W */
    float *hu;            /* (max_u, row) H_U, 64-byte aligned */
    float *hv;            /* (max_v, row) H_V, 64-byte aligned */
    double *qs;           /* (2, nc) ⟨x,h⟩_L and ⟨h,h⟩_L of the rows about to step (nc: the larger of
                           * max_u and max_v, rounded up to 4) */
    float *coef;          /* (2, nc) their step coefficients al, be (x ← al·x + be·h) */
} gyro_sgns_batch;

/* Allocate the scratch of a window of at most max_u contexts and max_v targets. tab is kept
 * (not copied); theta is ignored when hyp is 0. Errors: GYRO_ERR_USAGE (a size < 1 or a row
 * not a positive multiple of 16), GYRO_ERR_NOMEM; *b can be freed after either. */
gyro_status gyro_sgns_batch_init(gyro_sgns_batch *b, const gyro_sgns_tables *tab, int max_u, int max_v,
                                 int row, int hyp, double theta, double max_step);

/* Free the buffers of b (a zeroed b is fine). */
void gyro_sgns_batch_free(gyro_sgns_batch *b);

/* Start a window: no rows. */
static inline void gyro_sgns_batch_clear(gyro_sgns_batch *b)
{
    b->nu = b->nv = 0;
}

/* Add the context row x (a row of the centre table): counted once more if already in the
 * window. At most max_u distinct rows (the caller adds at most max_u). */
static inline void gyro_sgns_batch_add_u(gyro_sgns_batch *b, float *x)
{
    for (int c = 0; c < b->nu; c++)
        if (b->u[c] == x) { b->mu[c]++; return; }
    b->u[b->nu] = x;
    b->mu[b->nu++] = 1;
}

/* Add a target row x (a row of the context table): the first one added is the positive; later
 * ones are negatives — one equal to the positive is skipped (returns 0), one already present is
 * counted once more. Returns 1 when x counts. At most max_v adds per window. */
static inline int gyro_sgns_batch_add_v(gyro_sgns_batch *b, float *x)
{
    if (b->nv > 0 && b->v[0] == x) return 0;
    for (int t = 1; t < b->nv; t++)
        if (b->v[t] == x) { b->nvc[t]++; return 1; }
    b->v[b->nv] = x;
    b->nvc[b->nv++] = 1;
    return 1;
}

/* The window's update (see above) with learning rate lr: S, W, H_U and one step of every row
 * of U, then W's positive column again, H_V and one step of every row of V, in place. Adds
 * the window's loss Σ m_c n_t ℓ(S_ct) (at the rows before the window) to *loss. Needs nu ≥ 1
 * and nv ≥ 1 (v[0] the positive). Returns 0, or 1 when a score or a row became non-finite or
 * overflowed (rows may then be partly updated: the caller stops training). */
int gyro_sgns_batch_step(gyro_sgns_batch *b, double lr, double *loss);

#endif

/* check_char2vec.c — Check suite for the char2vec trainer (its hyperbolic update is a math-core
 * op, tested in check_hyp_props and check_hyp_grad): the sigmoid tables, the series cosh and
 * sinh(t)/t of the window update's steps, its alias sampler of negatives, the window update with
 * shared negatives (sgns_batch.h) against the per-pair kernels and a double-precision reference,
 * its weights where scores leave the sigmoid table, its gradient by finite differences, training on a synthetic two-topic corpus (loss falls, topics
 * separate, rows stay on the hyperboloid, runs are reproducible), checkpoints (round trip,
 * truncation, corruption, foreign files), and training split over two ranks through the
 * collective hook (models/core/sync.h) implemented here by two threads of one process, so that
 * the protocol is tested without MPI. */
#include <check.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "embeddings/char2vec.h"
#include "embeddings/corpus.h"
#include "embeddings/neighbors.h"
#include "embeddings/sgns.h"
#include "embeddings/sgns_batch.h"
#include "models/core/rng.h"
#include "models/hyp/lorentz.h"
#include "pipeline/corpus_input.h"

static double sigm(double x) { return 1.0 / (1.0 + exp(-x)); }

START_TEST(test_sigmoid_table)
{
    gyro_sgns_tables t;
    gyro_sgns_tables_init(&t);
    double worst = 0, worst_loss = 0;
    for (double x = -10; x <= 10; x += 0.0137) {
        double l1, l0;
        double s = gyro_sgns_sigmoid(&t, x, 1, &l1);
        gyro_sgns_sigmoid(&t, x, 0, &l0);
        double e = fabs(s - sigm(x));
        if (e > worst) worst = e;
        double el = fabs(l1 - log1p(exp(-x))) + fabs(l0 - log1p(exp(x)));
        if (el > worst_loss) worst_loss = el;
    }
    ck_assert_double_lt(worst, 2e-3);
    ck_assert_double_lt(worst_loss, 1e-2);
}
END_TEST

/* ---- the window update with shared negatives (sgns_batch.h) ---------------------------------- */

enum { BROW = 16, BDIM = 9 }; /* padded row of a point of H^9: 10 used coordinates */

/* n random points of H^BDIM in padded rows (spatial coordinates uniform in ±scale). */
static float *random_points(gyro_rng *r, int n, double scale)
{
    float *x = gyro_c2v_rows_alloc(n, BROW);
    ck_assert_ptr_nonnull(x);
    for (int k = 0; k < n; k++) {
        float *p = x + (size_t)k * BROW;
        double ss = 0;
        for (int i = 1; i <= BDIM; i++) {
            p[i] = (float)(scale * (2.0 * gyro_rng_uniform(r) - 1.0));
            ss += (double)p[i] * p[i];
        }
        p[0] = (float)sqrt(1.0 + ss);
    }
    return x;
}

/* ⟨x,y⟩_L in double over the used coordinates (hyp) or the dot product. */
static double ref_inner(const float *x, const float *y, int hyp)
{
    double s = hyp ? -(double)x[0] * y[0] : (double)x[0] * y[0];
    for (int i = 1; i <= BDIM; i++) s += (double)x[i] * y[i];
    return s;
}

/* max |⟨x,x⟩_L + 1| over n rows, and whether their padding is still zero. */
static double manifold_error(const float *x, int n, int *pad_ok)
{
    double worst = 0;
    for (int k = 0; k < n; k++) {
        const float *p = x + (size_t)k * BROW;
        double e = fabs(ref_inner(p, p, 1) + 1.0);
        if (e > worst) worst = e;
        for (int i = BDIM + 1; i < BROW; i++)
            if (p[i] != 0.0f) *pad_ok = 0;
    }
    return worst;
}

static double max_abs_diff(const float *a, const float *b, int n)
{
    double w = 0;
    for (int i = 0; i < n; i++) {
        double d = fabs((double)a[i] - b[i]);
        if (d > w) w = d;
    }
    return w;
}

/* The alias sampler draws each id with the probability of its slots in the unigram table:
 * exactly (up to the 2^-32 rounding of each threshold) by summing every entry's share, and in
 * 2^20 draws within 5 standard deviations; ids without a slot are never drawn, and a table with
 * an id out of range is refused. */
START_TEST(test_alias_sampler)
{
    enum { N = 7, SZ = 1 << 12 };
    const uint32_t slots[N] = {1, 2000, 0, 37, 1, 1500, SZ - 3539};
    uint32_t *table = malloc(SZ * sizeof *table), k = 0;
    ck_assert(table);
    for (uint32_t i = 0; i < N; i++)
        for (uint32_t c = 0; c < slots[i]; c++) table[k++] = i;
    ck_assert_uint_eq(k, SZ);
    gyro_sgns_alias a;
    ck_assert_int_eq(gyro_sgns_alias_init(&a, table, SZ, N), GYRO_OK);
    double mass[N] = {0};
    for (uint32_t i = 0; i < N; i++) {
        double keep = (double)a.e[i].thr / 4294967296.0;
        if (a.e[i].alias == i) keep = 1.0;
        else ck_assert_uint_lt(a.e[i].alias, N);
        mass[i] += keep / N;
        mass[a.e[i].alias] += (1.0 - keep) / N;
    }
    for (uint32_t i = 0; i < N; i++)
        ck_assert_msg(fabs(mass[i] - (double)slots[i] / SZ) < 1e-9, "id %u: mass %.12f, table %.12f", i, mass[i],
                      (double)slots[i] / SZ);
    gyro_rng r;
    gyro_rng_seed(&r, 3);
    uint32_t count[N] = {0};
    const int draws = 1 << 20;
    for (int d = 0; d < draws; d++) {
        uint32_t id = gyro_sgns_alias_draw(&a, gyro_rng_next(&r));
        ck_assert_uint_lt(id, N);
        count[id]++;
    }
    for (uint32_t i = 0; i < N; i++) {
        double p = (double)slots[i] / SZ, mean = p * draws, sd = sqrt(draws * p * (1 - p));
        ck_assert_msg(fabs(count[i] - mean) <= 5 * sd + (p == 0 ? 0 : 1), "id %u: %u draws, expected %.0f", i,
                      count[i], mean);
    }
    gyro_sgns_alias_free(&a);
    table[5] = N;
    ck_assert_int_eq(gyro_sgns_alias_init(&a, table, SZ, N), GYRO_ERR_USAGE);
    gyro_sgns_alias_free(&a);
    free(table);
}
END_TEST

/* The step's cosh and sinh(t)/t (lorentz_skipgram.h): the series up to t = 1 against
 * gyro_hyp_cosh_sinhc (libm's sinh) to a few ulp, and the same function beyond it. */
START_TEST(test_step_cosh_sinhc)
{
    double worst = 0;
    for (double t = 0; t <= 3.0; t += 0.00137) {
        double ch, shc, ch_ref, shc_ref;
        gyro_lorentz_step_cosh_sinhc(t, GYRO_HYP_COSH_MAX_F32, &ch, &shc);
        gyro_hyp_cosh_sinhc(t, GYRO_HYP_COSH_MAX_F32, &ch_ref, &shc_ref);
        double e = fmax(fabs(ch / ch_ref - 1), fabs(shc / shc_ref - 1));
        if (t > GYRO_LORENTZ_STEP_SERIES_T) ck_assert(ch == ch_ref && shc == shc_ref);
        if (e > worst) worst = e;
        ck_assert_msg(e < 1e-15, "t %g: cosh %.17g (libm %.17g), sinhc %.17g (libm %.17g)", t, ch, ch_ref, shc, shc_ref);
    }
    /* at the end of the series, against long double */
    long double tl = GYRO_LORENTZ_STEP_SERIES_T;
    double ch, shc;
    gyro_lorentz_step_cosh_sinhc((double)tl, GYRO_HYP_COSH_MAX_F32, &ch, &shc);
    ck_assert_double_lt(fabs((double)(ch / coshl(tl) - 1)), 1e-15);
    ck_assert_double_lt(fabs((double)(shc / (sinhl(tl) / tl) - 1)), 1e-15);
    ck_assert_double_lt(worst, 1e-15);
}
END_TEST

/* The window update in double, pair by pair, for contexts drawn as rows ctx[0..nctx) of u and
 * targets tgt[0..ntgt) of v (tgt[0] the positive; a negative equal to it skipped, repeats
 * counted): S_ct = ⟨u_c,v_t⟩_L, g = y_t − σ(S_ct + θ) per (context occurrence, target
 * occurrence); h_c = Σ g v_t from the rows before the window and one step_centre per context
 * row (rows 0..nu); then g of the positive again at the stepped contexts (the negatives keep
 * theirs), h_t = Σ g u_c at the stepped contexts and one step_centre per target row (0..nv).
 * Updates u and v in place; returns the window's loss (at the rows before the window). */
static double ref_window_step(const gyro_sgns_tables *tab, float *u, int nu, float *v, int nv, const int *ctx,
                              int nctx, const int *tgt, int ntgt, double lr, double theta, double max_step, int hyp)
{
    double *hd = calloc((size_t)(nu > nv ? nu : nv) * BROW, sizeof *hd), g_old[8][8], loss = 0;
    float *h = gyro_c2v_rows_alloc(1, BROW);
    ck_assert(hd && h && nctx <= 8 && ntgt <= 8);
    for (int a = 0; a < nctx; a++)
        for (int k = 0; k < ntgt; k++) {
            if (k > 0 && tgt[k] == tgt[0]) continue;
            const float *uc = u + (size_t)ctx[a] * BROW, *vt = v + (size_t)tgt[k] * BROW;
            double s = ref_inner(uc, vt, hyp), l;
            g_old[a][k] = (k == 0) - gyro_sgns_sigmoid(tab, s + theta, k == 0, &l);
            loss += l;
            for (int i = 0; i < BROW; i++) hd[(size_t)ctx[a] * BROW + i] += g_old[a][k] * vt[i];
        }
    for (int c = 0; c < nu; c++) {
        for (int i = 0; i < BROW; i++) h[i] = (float)hd[(size_t)c * BROW + i];
        if (hyp) gyro_lorentz_skipgram_step_centre_f32(u + (size_t)c * BROW, h, lr, max_step, BROW);
        else gyro_sgns_euc_centre(u + (size_t)c * BROW, h, lr, BROW);
    }
    memset(hd, 0, (size_t)(nu > nv ? nu : nv) * BROW * sizeof *hd);
    for (int a = 0; a < nctx; a++)
        for (int k = 0; k < ntgt; k++) {
            if (k > 0 && tgt[k] == tgt[0]) continue;
            const float *uc = u + (size_t)ctx[a] * BROW;
            double l, g = g_old[a][k];
            if (k == 0) g = 1.0 - gyro_sgns_sigmoid(tab, ref_inner(uc, v + (size_t)tgt[0] * BROW, hyp) + theta, 1, &l);
            for (int i = 0; i < BROW; i++) hd[(size_t)tgt[k] * BROW + i] += g * uc[i];
        }
    for (int t = 0; t < nv; t++) {
        for (int i = 0; i < BROW; i++) h[i] = (float)hd[(size_t)t * BROW + i];
        if (hyp) gyro_lorentz_skipgram_step_centre_f32(v + (size_t)t * BROW, h, lr, max_step, BROW);
        else gyro_sgns_euc_centre(v + (size_t)t * BROW, h, lr, BROW);
    }
    free(hd);
    free(h);
    return loss;
}

/* One context and distinct targets: the context takes the centre step of train_pair's per-pair
 * update (step_centre along Σ g v_old, the same loss) to float rounding; the targets step after
 * it, at the stepped context (ref_window_step), where train_pair's step_target uses the
 * centre's old row. */
START_TEST(test_batch_one_context_equals_pair)
{
    gyro_sgns_tables tab;
    gyro_sgns_tables_init(&tab);
    gyro_rng r;
    gyro_rng_seed(&r, 5);
    for (int hyp = 1; hyp >= 0; hyp--) {
        const int nt = 6;
        float *u = random_points(&r, 1, 0.6), *v = random_points(&r, nt, 0.6);
        float *u2 = gyro_c2v_rows_alloc(1, BROW), *v2 = gyro_c2v_rows_alloc(nt, BROW), *h = gyro_c2v_rows_alloc(1, BROW);
        float *u0 = gyro_c2v_rows_alloc(1, BROW), *v0 = gyro_c2v_rows_alloc(nt, BROW);
        memcpy(u2, u, BROW * sizeof *u);
        memcpy(v2, v, (size_t)nt * BROW * sizeof *v);
        memcpy(u0, u, BROW * sizeof *u);
        memcpy(v0, v, (size_t)nt * BROW * sizeof *v);
        const double lr = 0.3, theta = hyp ? 3.0 : 0.0, max_step = 1.0;
        /* the per-pair update, as train_pair runs it */
        double loss_pair = 0;
        for (int t = 0; t < nt; t++) {
            float *vt = v2 + (size_t)t * BROW;
            double s = hyp ? gyro_lorentz_padded_inner_f32(u2, vt, BROW) : gyro_sgns_dot(u2, vt, BROW), l;
            double g = (t == 0) - gyro_sgns_sigmoid(&tab, s + theta, t == 0, &l);
            loss_pair += l;
            if (hyp) gyro_lorentz_skipgram_step_target_f32(h, vt, u2, s, g, lr, max_step, BROW);
            else gyro_sgns_euc_target(h, vt, u2, g, lr, BROW);
        }
        if (hyp) gyro_lorentz_skipgram_step_centre_f32(u2, h, lr, max_step, BROW);
        else gyro_sgns_euc_centre(u2, h, lr, BROW);
        /* the window update */
        gyro_sgns_batch b;
        ck_assert_int_eq(gyro_sgns_batch_init(&b, &tab, 4, 8, BROW, hyp, theta, max_step), GYRO_OK);
        gyro_sgns_batch_clear(&b);
        gyro_sgns_batch_add_u(&b, u);
        for (int t = 0; t < nt; t++) ck_assert_int_eq(gyro_sgns_batch_add_v(&b, v + (size_t)t * BROW), 1);
        double loss = 0;
        ck_assert_int_eq(gyro_sgns_batch_step(&b, lr, &loss), 0);
        ck_assert_double_eq_tol(loss, loss_pair, 1e-5 * (1 + loss_pair));
        float *u3 = gyro_c2v_rows_alloc(1, BROW), *v3 = gyro_c2v_rows_alloc(nt, BROW);
        memcpy(u3, u0, BROW * sizeof *u);
        memcpy(v3, v0, (size_t)nt * BROW * sizeof *v);
        const int ctx[] = {0}, tgt[] = {0, 1, 2, 3, 4, 5};
        double loss_ref = ref_window_step(&tab, u3, 1, v3, nt, ctx, 1, tgt, nt, lr, theta, max_step, hyp);
        ck_assert_double_eq_tol(loss, loss_ref, 1e-5 * (1 + loss_ref));
        double du = max_abs_diff(u, u2, BROW), dv = max_abs_diff(v, v3, nt * BROW);
        ck_assert_msg(du < 2e-6 && dv < 5e-6, "hyp %d: centre differs by %g, targets by %g", hyp, du, dv);
        free(u0); free(v0); free(u3); free(v3);
        if (hyp) {
            int pad = 1;
            ck_assert_double_lt(manifold_error(u, 1, &pad), 1e-5);
            ck_assert_double_lt(manifold_error(v, nt, &pad), 1e-5);
            ck_assert(pad);
        }
        gyro_sgns_batch_free(&b);
        free(u); free(v); free(u2); free(v2); free(h);
    }
}
END_TEST

/* A window of several contexts (one character twice) against the formulas in double, pair by
 * pair: S_ct = ⟨u_c,v_t⟩_L, W_ct = y_t − σ(S_ct + θ) for each (context occurrence, target
 * occurrence), h_c = Σ W v_t from the rows before the window and a step_centre per context
 * row, then W of the positive again and h_t = Σ W u_c at the stepped contexts and a step per
 * target row (ref_window_step). Negatives: a repeated draw counts twice, a draw equal to the
 * positive is skipped. */
START_TEST(test_batch_matches_pair_reference)
{
    gyro_sgns_tables tab;
    gyro_sgns_tables_init(&tab);
    gyro_rng r;
    gyro_rng_seed(&r, 9);
    /* learning rate and clip: the clipped steps inside the series (4 rows at a time in AVX2
     * builds), no clip and a clip above 1 (one row at a time; lr 2 takes steps past the series,
     * to libm's sinh), a clip that binds */
    const double lrs[4] = {0.2, 0.2, 2.0, 2.0}, clips[4] = {0.5, 0.0, 3.0, 0.8};
    for (int var = 0; var < 4; var++)
    for (int hyp = 1; hyp >= 0; hyp--) {
        enum { NU = 4, NV = 4 };
        float *u = random_points(&r, NU, 0.5), *v = random_points(&r, NV, 0.5);
        /* contexts as drawn: rows 0 1 2 1 3; targets: positive 0, negatives 1 2 1 0(skipped) 3 */
        const int ctx[] = {0, 1, 2, 1, 3}, tgt[] = {0, 1, 2, 1, 0, 3};
        const int nctx = 5, ntgt = 6;
        const double lr = lrs[var], theta = hyp ? 3.0 : 0.0, max_step = clips[var];
        float *u_ref = gyro_c2v_rows_alloc(NU, BROW), *v_ref = gyro_c2v_rows_alloc(NV, BROW);
        memcpy(u_ref, u, (size_t)NU * BROW * sizeof *u);
        memcpy(v_ref, v, (size_t)NV * BROW * sizeof *v);
        double loss_ref = ref_window_step(&tab, u_ref, NU, v_ref, NV, ctx, nctx, tgt, ntgt, lr, theta, max_step, hyp);
        gyro_sgns_batch b;
        ck_assert_int_eq(gyro_sgns_batch_init(&b, &tab, nctx, ntgt, BROW, hyp, theta, max_step), GYRO_OK);
        gyro_sgns_batch_clear(&b);
        for (int a = 0; a < nctx; a++) gyro_sgns_batch_add_u(&b, u + (size_t)ctx[a] * BROW);
        int counted = 0;
        for (int k = 0; k < ntgt; k++) counted += gyro_sgns_batch_add_v(&b, v + (size_t)tgt[k] * BROW);
        ck_assert_int_eq(counted, 5);
        ck_assert_int_eq(b.nu, NU);
        ck_assert_int_eq(b.nv, NV);
        double loss = 0;
        ck_assert_int_eq(gyro_sgns_batch_step(&b, lr, &loss), 0);
        ck_assert_double_eq_tol(loss, loss_ref, 1e-5 * (1 + loss_ref));
        double du = max_abs_diff(u, u_ref, NU * BROW), dv = max_abs_diff(v, v_ref, NV * BROW);
        double scale = 1.0; /* float rounding grows with the rows' size after a long step */
        for (int i = 0; i < NU * BROW; i++) scale = fmax(scale, fabs(u_ref[i]));
        for (int i = 0; i < NV * BROW; i++) scale = fmax(scale, fabs(v_ref[i]));
        ck_assert_msg(du < 5e-6 * scale && dv < 5e-6 * scale, "lr %g clip %g hyp %d: contexts differ by %g, targets by %g (rows up to %g)",
                      lr, max_step, hyp, du, dv, scale);
        if (hyp) {
            int pad = 1;
            /* x₀ is re-projected in float: |⟨x,x⟩_L + 1| is a few ulp of x₀² */
            ck_assert_double_lt(manifold_error(u, NU, &pad), 1e-5 * scale * scale);
            ck_assert_double_lt(manifold_error(v, NV, &pad), 1e-5 * scale * scale);
            ck_assert(pad);
        }
        gyro_sgns_batch_free(&b);
        free(u); free(v); free(u_ref); free(v_ref);
    }
}
END_TEST

/* Every window shape of the register blocks (2 × 4 and its edges): nu distinct contexts, nv
 * distinct targets, against the same double reference. */
START_TEST(test_batch_shapes)
{
    gyro_sgns_tables tab;
    gyro_sgns_tables_init(&tab);
    gyro_rng r;
    gyro_rng_seed(&r, 21);
    for (int hyp = 1; hyp >= 0; hyp--)
        for (int nu = 1; nu <= 5; nu++)
            for (int nv = 1; nv <= 7; nv++) {
                float *u = random_points(&r, nu, 0.5), *v = random_points(&r, nv, 0.5);
                float *u_ref = gyro_c2v_rows_alloc(nu, BROW), *v_ref = gyro_c2v_rows_alloc(nv, BROW);
                memcpy(u_ref, u, (size_t)nu * BROW * sizeof *u);
                memcpy(v_ref, v, (size_t)nv * BROW * sizeof *v);
                const double lr = 0.2, theta = hyp ? 3.0 : 0.0, max_step = 0.5;
                int ctx[8], tgt[8];
                for (int k = 0; k < 8; k++) ctx[k] = tgt[k] = k;
                double loss_ref = ref_window_step(&tab, u_ref, nu, v_ref, nv, ctx, nu, tgt, nv, lr, theta, max_step, hyp);
                gyro_sgns_batch b;
                ck_assert_int_eq(gyro_sgns_batch_init(&b, &tab, nu, nv, BROW, hyp, theta, max_step), GYRO_OK);
                gyro_sgns_batch_clear(&b);
                for (int c = 0; c < nu; c++) gyro_sgns_batch_add_u(&b, u + (size_t)c * BROW);
                for (int t = 0; t < nv; t++) gyro_sgns_batch_add_v(&b, v + (size_t)t * BROW);
                double loss = 0;
                ck_assert_int_eq(gyro_sgns_batch_step(&b, lr, &loss), 0);
                ck_assert_double_eq_tol(loss, loss_ref, 1e-5 * (1 + loss_ref));
                double du = max_abs_diff(u, u_ref, nu * BROW), dv = max_abs_diff(v, v_ref, nv * BROW);
                ck_assert_msg(du < 5e-6 && dv < 5e-6, "hyp %d nu %d nv %d: contexts differ by %g, targets by %g",
                              hyp, nu, nv, du, dv);
                gyro_sgns_batch_free(&b);
                free(u); free(v); free(u_ref); free(v_ref);
            }
}
END_TEST

/* The weights W_ct = m_c n_t (y_t − σ(S_ct + θ)) and the loss where scores leave the sigmoid
 * table on both sides (σ = 0 or 1, ℓ = 0 or linear): spread rows (spatial coordinates in ±2.5)
 * and θ = 10 on the hyperboloid, so near pairs score above the table and far pairs below; the
 * same rows in Euclidean space. With lr = 0 nothing moves, so W is checked against
 * gyro_sgns_sigmoid at scores in double (the table's step, 1/128 of a unit of x, bounds the
 * difference), for every block shape of up to 7 targets (repeats counted). */
START_TEST(test_batch_weights_saturated)
{
    gyro_sgns_tables tab;
    gyro_sgns_tables_init(&tab);
    gyro_rng r;
    gyro_rng_seed(&r, 41);
    int low = 0, high = 0;
    for (int hyp = 1; hyp >= 0; hyp--)
        for (int nu = 1; nu <= 3; nu++)
            for (int nv = 1; nv <= 7; nv++) {
                float *u = random_points(&r, nu, 2.5), *v = random_points(&r, nv, 2.5);
                if (nu > 1) memcpy(u + BROW, u, BROW * sizeof *u); /* a near pair: the same point */
                const double theta = hyp ? 10.0 : 0.0;
                gyro_sgns_batch b;
                ck_assert_int_eq(gyro_sgns_batch_init(&b, &tab, nu + 1, nv + 1, BROW, hyp, theta, 1.0), GYRO_OK);
                gyro_sgns_batch_clear(&b);
                for (int c = 0; c < nu; c++) gyro_sgns_batch_add_u(&b, u + (size_t)c * BROW);
                gyro_sgns_batch_add_u(&b, u); /* context 0 twice */
                for (int t = 0; t < nv; t++) gyro_sgns_batch_add_v(&b, v + (size_t)t * BROW);
                if (nv > 1) gyro_sgns_batch_add_v(&b, v + BROW); /* negative 1 twice */
                double loss = 0, loss_ref = 0;
                ck_assert_int_eq(gyro_sgns_batch_step(&b, 0.0, &loss), 0);
                for (int c = 0; c < b.nu; c++)
                    for (int t = 0; t < b.nv; t++) {
                        double x = ref_inner(b.u[c], b.v[t], hyp) + theta, l;
                        double m = (double)b.mu[c] * b.nvc[t];
                        double want = m * ((t == 0) - gyro_sgns_sigmoid(&tab, x, t == 0, &l));
                        loss_ref += m * l;
                        low += x <= -GYRO_SGNS_SIG_MAX;
                        high += x >= GYRO_SGNS_SIG_MAX;
                        double got = b.w[(size_t)c * b.max_v + t];
                        ck_assert_msg(fabs(got - want) <= 0.01 * m, "hyp %d nu %d nv %d: W[%d][%d] %g, want %g (x %g)",
                                      hyp, nu, nv, c, t, got, want, x);
                    }
                ck_assert_double_eq_tol(loss, loss_ref, 0.01 * (1 + fabs(loss_ref)));
                gyro_sgns_batch_free(&b);
                free(u); free(v);
            }
    ck_assert_int_gt(low, 20);
    ck_assert_int_gt(high, 20);
}
END_TEST

/* The window's loss L(U, V) = Σ m n ℓ(S_ct + θ) with the exact log-sigmoid, in double. */
static double window_loss(const gyro_sgns_batch *b, double theta, int hyp)
{
    double L = 0;
    for (int c = 0; c < b->nu; c++)
        for (int t = 0; t < b->nv; t++) {
            double x = ref_inner(b->u[c], b->v[t], hyp) + theta, xs = t == 0 ? x : -x;
            L += b->mu[c] * b->nvc[t] * (xs > 0 ? log1p(exp(-xs)) : -xs + log1p(exp(xs)));
        }
    return L;
}

/* The products of the window update are the gradient of its loss: with lr → 0 the rows do not
 * move (a zero step, max_step 0 off), and H_U, H_V left in the scratch equal −J ∂L/∂u_c and
 * −J ∂L/∂v_t by central differences (J = diag(−1, 1, …) on the hyperboloid, I in Euclidean
 * space), up to the sigmoid table's error (< 2e-3 per score, test_sigmoid_table), weighted by
 * the row entries it multiplies. */
START_TEST(test_batch_gradient_finite_differences)
{
    gyro_sgns_tables tab;
    gyro_sgns_tables_init(&tab);
    gyro_rng r;
    gyro_rng_seed(&r, 13);
    for (int hyp = 1; hyp >= 0; hyp--) {
        enum { NU = 3, NV = 4 };
        float *u = random_points(&r, NU, 0.7), *v = random_points(&r, NV, 0.7);
        const double theta = hyp ? 3.0 : 0.0;
        gyro_sgns_batch b;
        ck_assert_int_eq(gyro_sgns_batch_init(&b, &tab, NU + 1, NV + 1, BROW, hyp, theta, 0.0), GYRO_OK);
        gyro_sgns_batch_clear(&b);
        for (int c = 0; c < NU; c++) gyro_sgns_batch_add_u(&b, u + (size_t)c * BROW);
        gyro_sgns_batch_add_u(&b, u + BROW); /* context 1 twice */
        for (int t = 0; t < NV; t++) gyro_sgns_batch_add_v(&b, v + (size_t)t * BROW);
        gyro_sgns_batch_add_v(&b, v + 2 * BROW); /* negative 2 twice */
        double loss = 0;
        ck_assert_int_eq(gyro_sgns_batch_step(&b, 0.0, &loss), 0);
        /* the table's −log σ is off by at most 0.004 per score (index rounding 1/256, slope ≤ 1) */
        double scores = 0;
        for (int c = 0; c < b.nu; c++)
            for (int t = 0; t < b.nv; t++) scores += b.mu[c] * b.nvc[t];
        ck_assert_double_eq_tol(loss, window_loss(&b, theta, hyp), 0.004 * scores);
        const double eps = 1e-3;
        for (int side = 0; side < 2; side++) {
            const int n = side ? b.nv : b.nu;
            for (int k = 0; k < n; k++) {
                float *x = side ? b.v[k] : b.u[k];
                const float *hrow = (side ? b.hv : b.hu) + (size_t)k * BROW;
                /* tolerance: table error 2e-3 times Σ over the partners of m·n·|partner_i| */
                for (int i = 0; i <= BDIM; i++) {
                    double tol = 1e-4;
                    for (int o = 0; o < (side ? b.nu : b.nv); o++) {
                        const float *y = side ? b.u[o] : b.v[o];
                        tol += 2e-3 * b.mu[side ? o : k] * b.nvc[side ? k : o] * fabs((double)y[i]);
                    }
                    /* central differences on a double copy of the coordinate (float rows) */
                    float keep = x[i];
                    x[i] = (float)(keep + eps);
                    double lp = window_loss(&b, theta, hyp), xp = x[i];
                    x[i] = (float)(keep - eps);
                    double lm = window_loss(&b, theta, hyp), xm = x[i];
                    x[i] = keep;
                    double dL = (lp - lm) / (xp - xm);
                    double want = -(hyp && i == 0 ? -1.0 : 1.0) * dL; /* −J ∂L/∂x */
                    double e = fabs(hrow[i] - want);
                    ck_assert_msg(e < tol, "hyp %d side %d row %d coord %d: H %g, -J dL/dx %g", hyp, side, k,
                                  i, hrow[i], want);
                }
            }
        }
        gyro_sgns_batch_free(&b);
        free(u); free(v);
    }
}
END_TEST

/* ---- training on a synthetic corpus ---------------------------------------------------------- */

static char dir[64];

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/gyro-c2v-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}

/* Two topics with disjoint characters: documents mix characters of one topic only. */
static const char *topic[2][8] = {
    {"山", "水", "江", "河", "湖", "海", "雨", "云"},
    {"金", "银", "铜", "铁", "钱", "财", "贵", "富"},
};

static void write_corpus(const char *path, int docs)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    gyro_rng r;
    gyro_rng_seed(&r, 11);
    for (int d = 0; d < docs; d++) {
        int t = (int)gyro_rng_below(&r, 2);
        for (int i = 0; i < 12; i++) fputs(topic[t][gyro_rng_below(&r, 8)], f);
        fputc('\n', f);
    }
    fclose(f);
}

static int train_update = GYRO_C2V_UPDATE_PAIR; /* the --update and --share of train_model */
static int train_share = -1; /* the whole window */

static gyro_status train_model(gyro_c2v_model *m, gyro_corpus *c, int threads, int geometry,
                               gyro_c2v_report *rep)
{
    char in[128], ids[128];
    snprintf(in, sizeof in, "%s/corpus.txt", dir);
    snprintf(ids, sizeof ids, "%s/corpus.ids", dir);
    if (access(in, F_OK) != 0) write_corpus(in, 1500);
    gyro_corpus_input_options co;
    gyro_corpus_input_options_init(&co);
    gyro_vocab v;
    const char *inputs[] = {in};
    ck_assert_int_eq(gyro_corpus_input_encode(inputs, 1, &co, ids, &v, NULL), GYRO_OK);
    ck_assert_int_eq(gyro_corpus_open(ids, c), GYRO_OK);
    gyro_c2v_options o;
    gyro_c2v_options_init(&o);
    o.dim = 10;
    o.epochs = 5;
    o.threads = threads;
    o.sample = 0;
    o.geometry = geometry;
    ck_assert_int_eq(gyro_c2v_model_init(m, &o, &v, c->n_ids, c->n_tokens), GYRO_OK);
    gyro_vocab_free(&v);
    gyro_c2v_run run = {.quiet = 1, .update = train_update, .share = train_share};
    return gyro_c2v_train(m, c, &run, rep);
}

static double mean_distance(const gyro_embedding_table *t, int same)
{
    double sum = 0;
    int n = 0;
    for (int a = 0; a < 8; a++)
        for (int b = 0; b < 8; b++) {
            int i = gyro_embedding_table_find(t, topic[0][a]);
            int j = gyro_embedding_table_find(t, same ? topic[0][b] : topic[1][b]);
            if (i == j) continue;
            sum += gyro_embedding_distance(t, i, j);
            n++;
        }
    return sum / n;
}

static void check_topics(int threads, int geometry, int update)
{
    train_update = update;
    gyro_c2v_model m;
    gyro_corpus c;
    gyro_c2v_report rep;
    ck_assert_int_eq(train_model(&m, &c, threads, geometry, &rep), GYRO_OK);
    ck_assert_uint_eq(m.words_done, 5 * m.n_tokens);
    ck_assert(isfinite(rep.loss));
    gyro_embedding_table *t;
    ck_assert_int_eq(gyro_c2v_model_table(&m, "test", &t), GYRO_OK);
    double within = mean_distance(t, 1), across = mean_distance(t, 0);
    ck_assert_msg(within < 0.8 * across, "within-topic %.3f vs across %.3f", within, across);
    if (geometry == GYRO_C2V_HYPERBOLIC) {
        ck_assert_double_lt(rep.manifold_error, 1e-5);
        ck_assert_double_lt(gyro_embedding_table_manifold_error(t, NULL), 1e-5);
    }
    gyro_embedding_table_free(t);
    gyro_corpus_close(&c);
    gyro_c2v_model_free(&m);
}

START_TEST(test_topics_hyperbolic_1_thread) { check_topics(1, GYRO_C2V_HYPERBOLIC, GYRO_C2V_UPDATE_PAIR); }
END_TEST
START_TEST(test_topics_hyperbolic_2_threads) { check_topics(2, GYRO_C2V_HYPERBOLIC, GYRO_C2V_UPDATE_PAIR); }
END_TEST
START_TEST(test_topics_euclidean) { check_topics(1, GYRO_C2V_EUCLIDEAN, GYRO_C2V_UPDATE_PAIR); }
END_TEST
/* --update batch, negatives shared by the whole window (share -1) or by 3 contexts */
START_TEST(test_topics_hyperbolic_batch_1_thread) { check_topics(1, GYRO_C2V_HYPERBOLIC, GYRO_C2V_UPDATE_BATCH); }
END_TEST
START_TEST(test_topics_hyperbolic_batch_2_threads) { check_topics(2, GYRO_C2V_HYPERBOLIC, GYRO_C2V_UPDATE_BATCH); }
END_TEST
START_TEST(test_topics_euclidean_batch) { check_topics(2, GYRO_C2V_EUCLIDEAN, GYRO_C2V_UPDATE_BATCH); }
END_TEST
/* Negatives shared by 2 contexts at window 5 on the two-topic corpus: every row of both tables
 * stays near the origin (x₀ < 50; the per-pair update stays below 10). With the targets stepped
 * at the contexts' old rows (the simultaneous step of both sides of a positive pair) rows went
 * out to x₀ ≈ 400-6000 here. */
START_TEST(test_topics_hyperbolic_batch_share_2_bounded)
{
    train_update = GYRO_C2V_UPDATE_BATCH;
    train_share = 2;
    gyro_c2v_model m;
    gyro_corpus c;
    gyro_c2v_report rep;
    ck_assert_int_eq(train_model(&m, &c, 1, GYRO_C2V_HYPERBOLIC, &rep), GYRO_OK);
    ck_assert_int_eq(m.opt.window, 5);
    double x0 = 0;
    for (int64_t i = 0; i < (int64_t)m.vocab.n; i++) {
        x0 = fmax(x0, m.in[(size_t)i * m.row]);
        x0 = fmax(x0, m.out[(size_t)i * m.row]);
    }
    ck_assert_msg(x0 < 50, "largest x0 %g", x0);
    train_share = -1;
    train_update = GYRO_C2V_UPDATE_PAIR;
    gyro_corpus_close(&c);
    gyro_c2v_model_free(&m);
}
END_TEST
START_TEST(test_topics_hyperbolic_batch_share_3)
{
    train_share = 3;
    check_topics(1, GYRO_C2V_HYPERBOLIC, GYRO_C2V_UPDATE_BATCH);
    train_share = -1;
}
END_TEST

START_TEST(test_reproducible_single_thread)
{
    gyro_c2v_model a, b;
    gyro_corpus ca, cb;
    ck_assert_int_eq(train_model(&a, &ca, 1, GYRO_C2V_HYPERBOLIC, NULL), GYRO_OK);
    ck_assert_int_eq(train_model(&b, &cb, 1, GYRO_C2V_HYPERBOLIC, NULL), GYRO_OK);
    ck_assert_int_eq(memcmp(a.in, b.in, (size_t)a.vocab.n * a.row * sizeof(float)), 0);
    gyro_corpus_close(&ca);
    gyro_corpus_close(&cb);
    gyro_c2v_model_free(&a);
    gyro_c2v_model_free(&b);
}
END_TEST

START_TEST(test_stop_flag_interrupts)
{
    char in[128], ids[128], ck[128];
    snprintf(in, sizeof in, "%s/corpus.txt", dir);
    snprintf(ids, sizeof ids, "%s/corpus.ids", dir);
    snprintf(ck, sizeof ck, "%s/m.ckpt", dir);
    write_corpus(in, 1500);
    gyro_corpus_input_options co;
    gyro_corpus_input_options_init(&co);
    gyro_vocab v;
    const char *inputs[] = {in};
    ck_assert_int_eq(gyro_corpus_input_encode(inputs, 1, &co, ids, &v, NULL), GYRO_OK);
    gyro_corpus c;
    ck_assert_int_eq(gyro_corpus_open(ids, &c), GYRO_OK);
    gyro_c2v_options o;
    gyro_c2v_options_init(&o);
    o.dim = 10;
    o.epochs = 50;
    gyro_c2v_model m;
    ck_assert_int_eq(gyro_c2v_model_init(&m, &o, &v, c.n_ids, c.n_tokens), GYRO_OK);
    gyro_vocab_free(&v);
    volatile sig_atomic_t stop = 1; /* already requested: the run stops at once, saving state */
    gyro_c2v_run run = {.checkpoint_path = ck, .stop = &stop, .quiet = 1};
    ck_assert_int_eq(gyro_c2v_train(&m, &c, &run, NULL), GYRO_ERR_INTERRUPTED);
    gyro_c2v_model r;
    ck_assert_int_eq(gyro_c2v_checkpoint_load(ck, &r), GYRO_OK);
    ck_assert_uint_eq(r.words_done, m.words_done);
    ck_assert_uint_lt(r.words_done, (uint64_t)o.epochs * m.n_tokens);
    /* resume to the end from the checkpoint */
    gyro_c2v_run run2 = {.checkpoint_path = ck, .quiet = 1};
    ck_assert_int_eq(gyro_c2v_train(&r, &c, &run2, NULL), GYRO_OK);
    ck_assert_uint_eq(r.words_done, (uint64_t)o.epochs * r.n_tokens);
    gyro_c2v_model_free(&r);
    gyro_c2v_model_free(&m);
    gyro_corpus_close(&c);
}
END_TEST

START_TEST(test_checkpoint_round_trip_and_damage)
{
    gyro_c2v_model m;
    gyro_corpus c;
    ck_assert_int_eq(train_model(&m, &c, 2, GYRO_C2V_HYPERBOLIC, NULL), GYRO_OK);
    char ck[128];
    snprintf(ck, sizeof ck, "%s/m.ckpt", dir);
    ck_assert_int_eq(gyro_c2v_checkpoint_save(&m, ck), GYRO_OK);
    gyro_c2v_model r;
    ck_assert_int_eq(gyro_c2v_checkpoint_load(ck, &r), GYRO_OK);
    ck_assert_int_eq(r.vocab.n, m.vocab.n);
    ck_assert_int_eq(r.opt.threads, 2);
    ck_assert_uint_eq(r.words_done, m.words_done);
    ck_assert_uint_eq(gyro_vocab_fingerprint(&r.vocab), gyro_vocab_fingerprint(&m.vocab));
    for (int i = 0; i < m.vocab.n; i++) {
        ck_assert_int_eq(memcmp(r.in + (size_t)i * r.row, m.in + (size_t)i * m.row, m.width * sizeof(float)), 0);
        ck_assert_int_eq(memcmp(r.out + (size_t)i * r.row, m.out + (size_t)i * m.row, m.width * sizeof(float)), 0);
    }
    ck_assert_int_eq(memcmp(r.ts, m.ts, 2 * sizeof *m.ts), 0);
    ck_assert_int_eq(r.ranks, 1);
    gyro_c2v_model_free(&r);

    /* truncated at several lengths, one flipped byte, a foreign file: all refused */
    FILE *f = fopen(ck, "rb");
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fclose(f);
    long cuts[] = {0, 5, 16, 100, len / 2, len - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof *cuts; i++) {
        ck_assert_int_eq(gyro_c2v_checkpoint_save(&m, ck), GYRO_OK);
        ck_assert_int_eq(truncate(ck, cuts[i]), 0);
        ck_assert_int_eq(gyro_c2v_checkpoint_load(ck, &r), GYRO_ERR_FORMAT);
        gyro_c2v_model_free(&r);
    }
    ck_assert_int_eq(gyro_c2v_checkpoint_save(&m, ck), GYRO_OK);
    f = fopen(ck, "r+b");
    fseek(f, len / 3, SEEK_SET);
    int ch = fgetc(f);
    fseek(f, len / 3, SEEK_SET);
    fputc(ch ^ 0x40, f);
    fclose(f);
    ck_assert_int_eq(gyro_c2v_checkpoint_load(ck, &r), GYRO_ERR_FORMAT);
    gyro_c2v_model_free(&r);
    char ids[128];
    snprintf(ids, sizeof ids, "%s/corpus.ids", dir);
    ck_assert_int_eq(gyro_c2v_checkpoint_load(ids, &r), GYRO_ERR_FORMAT);
    gyro_c2v_model_free(&r);
    ck_assert_int_eq(gyro_c2v_checkpoint_load("/nonexistent/ckpt", &r), GYRO_ERR_IO);
    gyro_c2v_model_free(&r);
    /* a version-1 checkpoint (u64 FNV-1a instead of the CRC-32, no ranks field) still loads */
    {
        ck_assert_int_eq(gyro_c2v_checkpoint_save(&m, ck), GYRO_OK);
        f = fopen(ck, "rb");
        unsigned char *v1 = malloc((size_t)len + 8);
        ck_assert_uint_eq(fread(v1, 1, (size_t)len, f), (size_t)len);
        fclose(f);
        uint32_t one = 1, ranks;
        memcpy(v1 + 8, &one, 4);
        /* the u32 ranks of version 3 follows magic, version, mark, 6 i32, 6 f64 and the seed */
        const long at = 16 + 6 * 4 + 6 * 8 + 8;
        memcpy(&ranks, v1 + at, 4);
        ck_assert_uint_eq(ranks, 1);
        memmove(v1 + at, v1 + at + 4, (size_t)(len - at - 4));
        long len1 = len - 4;
        uint64_t h = 1469598103934665603ULL;
        for (long i = 0; i < len1 - 4; i++) { h ^= v1[i]; h *= 1099511628211ULL; }
        memcpy(v1 + len1 - 4, &h, 8);
        f = fopen(ck, "wb");
        fwrite(v1, 1, (size_t)len1 + 4, f);
        fclose(f);
        free(v1);
        ck_assert_int_eq(gyro_c2v_checkpoint_load(ck, &r), GYRO_OK);
        ck_assert_int_eq(memcmp(r.in, m.in, (size_t)m.row * sizeof(float)), 0);
        gyro_c2v_model_free(&r);
    }
    /* the encoded corpus: one flipped id bit is refused; a version-1 file (no checksum) opens */
    {
        gyro_corpus k;
        f = fopen(ids, "rb");
        fseek(f, 0, SEEK_END);
        long il = ftell(f);
        rewind(f);
        unsigned char *ib = malloc((size_t)il);
        ck_assert_uint_eq(fread(ib, 1, (size_t)il, f), (size_t)il);
        fclose(f);
        ib[64 + 4 * 10] ^= 1;
        f = fopen(ids, "wb");
        fwrite(ib, 1, (size_t)il, f);
        fclose(f);
        ck_assert_int_eq(gyro_corpus_open(ids, &k), GYRO_ERR_FORMAT);
        ck_assert_ptr_nonnull(strstr(gyro_error_message(), "checksum"));
        ib[64 + 4 * 10] ^= 1;
        ib[8] = 1;
        memset(ib + 48, 0, 4);
        f = fopen(ids, "wb");
        fwrite(ib, 1, (size_t)il, f);
        fclose(f);
        ck_assert_int_eq(gyro_corpus_open(ids, &k), GYRO_OK);
        gyro_corpus_close(&k);
        free(ib);
    }
    /* a non-finite vector: nothing written, the old checkpoint kept byte for byte */
    ck_assert_int_eq(gyro_c2v_checkpoint_save(&m, ck), GYRO_OK);
    f = fopen(ck, "rb");
    unsigned char *before = malloc((size_t)len), *after = malloc((size_t)len + 1);
    ck_assert_uint_eq(fread(before, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    float keep = m.out[(size_t)3 * m.row + 1];
    m.out[(size_t)3 * m.row + 1] = NAN;
    ck_assert_int_eq(gyro_c2v_checkpoint_save(&m, ck), GYRO_ERR_NAN);
    ck_assert_ptr_nonnull(strstr(gyro_error_message(), m.vocab.tokens[3]));
    m.out[(size_t)3 * m.row + 1] = keep;
    f = fopen(ck, "rb");
    ck_assert_uint_eq(fread(after, 1, (size_t)len + 1, f), (size_t)len);
    fclose(f);
    ck_assert_int_eq(memcmp(before, after, (size_t)len), 0);
    free(before);
    free(after);
    gyro_corpus_close(&c);
    gyro_c2v_model_free(&m);
}
END_TEST

/* The resume rules: lr, max_step and sample follow the user; everything else given with another
 * value is refused, naming both values; the checkpoint's own values are accepted. */
START_TEST(test_resume_options)
{
    gyro_c2v_options ck, user, out;
    gyro_c2v_options_init(&ck);
    ck.dim = 50;
    ck.lr = 0.05;
    ck.seed = 7;
    user = ck;
    user.lr = 0.01;
    user.max_step = 0.5;
    user.sample = 0;
    user.dim = 50;   /* given, same value: fine */
    ck_assert_int_eq(gyro_c2v_resume_options(&ck, &user, GYRO_C2V_SET_LR | GYRO_C2V_SET_MAX_STEP |
                                             GYRO_C2V_SET_SAMPLE | GYRO_C2V_SET_DIM, &out), GYRO_OK);
    ck_assert(out.lr == 0.01 && out.max_step == 0.5 && out.sample == 0 && out.dim == 50 && out.seed == 7);
    /* not given: the checkpoint's values, whatever `user` holds */
    user.dim = 9;
    user.seed = 3;
    ck_assert_int_eq(gyro_c2v_resume_options(&ck, &user, 0, &out), GYRO_OK);
    ck_assert(out.lr == 0.05 && out.dim == 50 && out.seed == 7);
    /* refused, every conflict named with both values */
    user.theta = 2;
    user.epochs = 9;
    ck_assert_int_eq(gyro_c2v_resume_options(&ck, &user, GYRO_C2V_SET_DIM | GYRO_C2V_SET_SEED |
                                             GYRO_C2V_SET_THETA | GYRO_C2V_SET_EPOCHS | GYRO_C2V_SET_LR,
                                             &out), GYRO_ERR_USAGE);
    const char *m = gyro_error_message();
    ck_assert_msg(strstr(m, "--dim 9 (the checkpoint has 50)") && strstr(m, "--seed 3 (the checkpoint has 7)") &&
                  strstr(m, "--theta 2 (the checkpoint has 3)") && strstr(m, "--epochs 9 (the checkpoint has 5)"),
                  "%s", m);
    ck_assert(out.lr == 0.05 && out.dim == 50);
    /* an honoured value that is out of range is refused too */
    user = ck;
    user.sample = -1;
    ck_assert_int_eq(gyro_c2v_resume_options(&ck, &user, GYRO_C2V_SET_SAMPLE, &out), GYRO_ERR_USAGE);
}
END_TEST

START_TEST(test_bad_inputs)
{
    gyro_c2v_options o;
    gyro_c2v_options_init(&o);
    o.dim = 0;
    ck_assert_int_eq(gyro_c2v_options_check(&o), GYRO_ERR_USAGE);
    gyro_c2v_options_init(&o);
    o.threads = 0;
    ck_assert_int_eq(gyro_c2v_options_check(&o), GYRO_ERR_USAGE);
    /* a corpus of one token is too short for a window */
    gyro_c2v_options_init(&o);
    gyro_vocab v;
    ck_assert_int_eq(gyro_vocab_init(&v), GYRO_OK);
    ck_assert_int_eq(gyro_vocab_add(&v, "水", 3, 1, NULL), GYRO_OK);
    gyro_c2v_model m;
    ck_assert_int_eq(gyro_c2v_model_init(&m, &o, &v, 2, 1), GYRO_ERR_DATA);
    gyro_c2v_model_free(&m);
    gyro_vocab_free(&v);
}
END_TEST

/* ---- several ranks, through an in-process transport --------------------------------------- */

/* Two "ranks" as two threads: each all-reduce puts both buffers side by side, waits for the
 * other, and reduces them in rank order (so both get bit-identical results, as MPI gives). */
typedef struct fake_comm {
    pthread_barrier_t b;
    void *slot[2];
} fake_comm;

typedef struct fake_rank {
    fake_comm *c;
    gyro_sync sync;
    gyro_c2v_model m;
    gyro_corpus corpus;
    gyro_c2v_run run;
    gyro_c2v_report rep;
    gyro_status st;
} fake_rank;

static gyro_status fake_allreduce(void *ctx, void *buf, size_t count, gyro_sync_type type, gyro_sync_op op)
{
    fake_rank *r = ctx;
    fake_comm *c = r->c;
    size_t es = type == GYRO_SYNC_F32 ? 4 : 8;
    void *mine = malloc(count * es);
    memcpy(mine, buf, count * es);
    c->slot[r->sync.rank] = mine;
    pthread_barrier_wait(&c->b);
    for (size_t i = 0; i < count; i++) {
        if (type == GYRO_SYNC_F32) {
            float a = ((float *)c->slot[0])[i], b = ((float *)c->slot[1])[i];
            ((float *)buf)[i] = op == GYRO_SYNC_SUM ? a + b : op == GYRO_SYNC_MIN ? fminf(a, b) : fmaxf(a, b);
        } else if (type == GYRO_SYNC_F64) {
            double a = ((double *)c->slot[0])[i], b = ((double *)c->slot[1])[i];
            ((double *)buf)[i] = op == GYRO_SYNC_SUM ? a + b : op == GYRO_SYNC_MIN ? fmin(a, b) : fmax(a, b);
        } else {
            uint64_t a = ((uint64_t *)c->slot[0])[i], b = ((uint64_t *)c->slot[1])[i];
            ((uint64_t *)buf)[i] = op == GYRO_SYNC_SUM ? a + b : op == GYRO_SYNC_MIN ? (a < b ? a : b) : (a > b ? a : b);
        }
    }
    pthread_barrier_wait(&c->b);
    free(mine);
    return GYRO_OK;
}

static gyro_status fake_barrier(void *ctx)
{
    fake_rank *r = ctx;
    pthread_barrier_wait(&r->c->b);
    return GYRO_OK;
}

static void *fake_rank_main(void *arg)
{
    fake_rank *r = arg;
    r->st = gyro_c2v_train(&r->m, &r->corpus, &r->run, &r->rep);
    return NULL;
}

/* A fresh model (not trained) on the synthetic corpus, like train_model's. */
static void new_model(gyro_c2v_model *m, gyro_corpus *c, int geometry, uint64_t seed)
{
    char in[128], ids[128];
    snprintf(in, sizeof in, "%s/corpus.txt", dir);
    snprintf(ids, sizeof ids, "%s/corpus.ids", dir);
    if (access(in, F_OK) != 0) write_corpus(in, 1500);
    gyro_corpus_input_options co;
    gyro_corpus_input_options_init(&co);
    gyro_vocab v;
    const char *inputs[] = {in};
    ck_assert_int_eq(gyro_corpus_input_encode(inputs, 1, &co, ids, &v, NULL), GYRO_OK);
    ck_assert_int_eq(gyro_corpus_open(ids, c), GYRO_OK);
    gyro_c2v_options o;
    gyro_c2v_options_init(&o);
    o.dim = 10;
    o.epochs = 5;
    o.sample = 0;
    o.geometry = geometry;
    o.seed = seed;
    ck_assert_int_eq(gyro_c2v_model_init(m, &o, &v, c->n_ids, c->n_tokens), GYRO_OK);
    gyro_vocab_free(&v);
}

/* Train on two ranks of one thread each (rank 1 from a model of seed1); returns both statuses
 * in st[2] and leaves the models in r[2] (the caller frees them). */
static void train_two_ranks(fake_rank r[2], int geometry, int combine, uint64_t seed1, gyro_status st[2])
{
    fake_comm c;
    pthread_barrier_init(&c.b, NULL, 2);
    pthread_t th[2];
    for (int k = 0; k < 2; k++) {
        memset(&r[k], 0, sizeof r[k]);
        r[k].c = &c;
        r[k].sync = (gyro_sync){.rank = k, .size = 2, .ctx = &r[k], .allreduce = fake_allreduce,
                                .barrier = fake_barrier};
        new_model(&r[k].m, &r[k].corpus, geometry, k ? seed1 : 1);
        ck_assert_int_eq(gyro_c2v_model_set_ranks(&r[k].m, 2), GYRO_OK);
        r[k].run = (gyro_c2v_run){.quiet = 1, .sync = &r[k].sync, .sync_every = 0.01, .combine = combine,
                                  .sync_tokens = geometry == GYRO_C2V_EUCLIDEAN ? 2000 : 0}; /* both triggers */
    }
    for (int k = 0; k < 2; k++) pthread_create(&th[k], NULL, fake_rank_main, &r[k]);
    for (int k = 0; k < 2; k++) pthread_join(th[k], NULL);
    for (int k = 0; k < 2; k++) {
        st[k] = r[k].st;
        gyro_corpus_close(&r[k].corpus);
    }
    pthread_barrier_destroy(&c.b);
}

static void check_two_ranks(int geometry, int combine)
{
    fake_rank r[2];
    gyro_status st[2];
    train_two_ranks(r, geometry, combine, 1, st);
    ck_assert_int_eq(st[0], GYRO_OK);
    ck_assert_int_eq(st[1], GYRO_OK);
    /* the same tables on both ranks, every token of both shards counted, states shared */
    ck_assert_int_eq(memcmp(r[0].m.in, r[1].m.in, (size_t)r[0].m.vocab.n * r[0].m.row * sizeof(float)), 0);
    ck_assert_int_eq(memcmp(r[0].m.out, r[1].m.out, (size_t)r[0].m.vocab.n * r[0].m.row * sizeof(float)), 0);
    ck_assert_uint_eq(r[0].m.words_done, 5 * r[0].m.n_tokens);
    ck_assert_uint_eq(r[1].m.words_done, 5 * r[0].m.n_tokens);
    ck_assert_int_eq(memcmp(r[0].m.ts, r[1].m.ts, 2 * sizeof *r[0].m.ts), 0);
    ck_assert_uint_ge(r[0].rep.sync_rounds, 1);
    /* each rank read only its half: the shards meet in the middle */
    uint64_t b0, e0, b1, e1;
    gyro_c2v_shard(&r[0].m, 0, 0, &b0, &e0);
    gyro_c2v_shard(&r[0].m, 1, 0, &b1, &e1);
    ck_assert_uint_eq(b0, 0);
    ck_assert_uint_eq(e0, b1);
    ck_assert_uint_eq(e1, r[0].m.n_ids);
    ck_assert_uint_lt(r[0].rep.words, r[0].m.n_tokens * 5 * 6 / 10);
    gyro_embedding_table *t;
    ck_assert_int_eq(gyro_c2v_model_table(&r[0].m, "test", &t), GYRO_OK);
    double within = mean_distance(t, 1), across = mean_distance(t, 0);
    ck_assert_msg(within < 0.8 * across, "within-topic %.3f vs across %.3f", within, across);
    if (geometry == GYRO_C2V_HYPERBOLIC) ck_assert_double_lt(gyro_embedding_table_manifold_error(t, NULL), 1e-5);
    gyro_embedding_table_free(t);
    /* the checkpoint keeps both ranks' thread states */
    char ck[128];
    snprintf(ck, sizeof ck, "%s/ranks.ckpt", dir);
    ck_assert_int_eq(gyro_c2v_checkpoint_save(&r[0].m, ck), GYRO_OK);
    gyro_c2v_model l;
    ck_assert_int_eq(gyro_c2v_checkpoint_load(ck, &l), GYRO_OK);
    ck_assert_int_eq(l.ranks, 2);
    ck_assert_int_eq(memcmp(l.ts, r[0].m.ts, 2 * sizeof *l.ts), 0);
    gyro_c2v_model_free(&l);
    for (int k = 0; k < 2; k++) gyro_c2v_model_free(&r[k].m);
}

START_TEST(test_two_ranks_moved) { check_two_ranks(GYRO_C2V_HYPERBOLIC, GYRO_C2V_COMBINE_MOVED); }
END_TEST
START_TEST(test_two_ranks_mean) { check_two_ranks(GYRO_C2V_HYPERBOLIC, GYRO_C2V_COMBINE_MEAN); }
END_TEST
START_TEST(test_two_ranks_euclidean) { check_two_ranks(GYRO_C2V_EUCLIDEAN, GYRO_C2V_COMBINE_MOVED); }
END_TEST

/* Ranks that start from different models (another seed) both refuse, with the same status. */
START_TEST(test_two_ranks_mismatch)
{
    fake_rank r[2];
    gyro_status st[2];
    train_two_ranks(r, GYRO_C2V_HYPERBOLIC, GYRO_C2V_COMBINE_MEAN, 2, st);
    ck_assert_int_eq(st[0], GYRO_ERR_USAGE);
    ck_assert_int_eq(st[1], GYRO_ERR_USAGE);
    ck_assert_uint_eq(r[0].m.words_done, 0);
    for (int k = 0; k < 2; k++) gyro_c2v_model_free(&r[k].m);
}
END_TEST

/* The combination rules on one row, with a transport that plays a second rank identical to the
 * first (its all-reduce doubles): both rules give that same point back (the centroid of two
 * equal points; the mean displacement of two equal moves), and a row no rank moved stays. */
static gyro_status doubling_allreduce(void *ctx, void *buf, size_t count, gyro_sync_type type, gyro_sync_op op)
{
    (void)ctx;
    ck_assert_int_eq(type, GYRO_SYNC_F32);
    ck_assert_int_eq(op, GYRO_SYNC_SUM);
    for (size_t i = 0; i < count; i++) ((float *)buf)[i] *= 2;
    return GYRO_OK;
}

START_TEST(test_combine_rules)
{
    gyro_sync sy = {.rank = 0, .size = 2, .allreduce = doubling_allreduce};
    for (int combine = 0; combine < 2; combine++) {
        gyro_c2v_model m;
        gyro_corpus c;
        new_model(&m, &c, GYRO_C2V_HYPERBOLIC, 1);
        gyro_corpus_close(&c);
        gyro_c2v_sync cs;
        ck_assert_int_eq(gyro_c2v_sync_init(&cs, &sy, combine, &m), GYRO_OK);
        float *p = cs.prev_in, *x = m.in, moved[16];
        x[1] += 0.01f;   /* row 0 moves; row 1 stays */
        x[2] -= 0.02f;
        gyro_lorentz_reproject_f32(x, m.opt.dim);
        memcpy(moved, x, sizeof moved);
        float p1[16];
        memcpy(p1, m.in + m.row, sizeof p1);
        double d = gyro_lorentz_dist_f32(p, x, m.opt.dim);
        float p0[16];
        memcpy(p0, p, sizeof p0);
        ck_assert_int_eq(gyro_c2v_sync_tables(&cs, &m), GYRO_OK);
        double err = fabs(gyro_lorentz_inner_f32(x, x, m.opt.dim) + 1.0);
        ck_assert_double_lt(err, 1e-5);
        /* (coordinates, not distances: arcosh of float points this close is rounding) */
        double off = 0, from_p0 = 0;
        for (int j = 0; j < m.width; j++) {
            off = fmax(off, fabs((double)x[j] - moved[j]));
            from_p0 = fmax(from_p0, fabs((double)x[j] - p0[j]));
        }
        ck_assert_double_lt(off, 1e-6);
        ck_assert_double_gt(from_p0, 0.019);
        ck_assert_double_gt(d, 0.02);
        ck_assert_int_eq(memcmp(cs.prev_in, x, (size_t)m.width * sizeof(float)), 0);  /* the new common point */
        for (int j = 0; j < m.width; j++)   /* a row no rank moved stays */
            ck_assert_double_lt(fabs((double)p1[j] - m.in[m.row + j]), 1e-6);
        gyro_c2v_sync_free(&cs);
        gyro_c2v_model_free(&m);
    }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("char2vec");
    TCase *k = tcase_create("kernels");
    tcase_add_test(k, test_sigmoid_table);
    tcase_add_test(k, test_step_cosh_sinhc);
    tcase_add_test(k, test_alias_sampler);
    tcase_add_test(k, test_batch_one_context_equals_pair);
    tcase_add_test(k, test_batch_matches_pair_reference);
    tcase_add_test(k, test_batch_shapes);
    tcase_add_test(k, test_batch_weights_saturated);
    tcase_add_test(k, test_batch_gradient_finite_differences);
    tcase_add_test(k, test_bad_inputs);
    tcase_add_test(k, test_resume_options);
    suite_add_tcase(s, k);
    TCase *t = tcase_create("training");
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_set_timeout(t, 120);
    tcase_add_test(t, test_topics_hyperbolic_1_thread);
    tcase_add_test(t, test_topics_hyperbolic_2_threads);
    tcase_add_test(t, test_topics_euclidean);
    tcase_add_test(t, test_topics_hyperbolic_batch_1_thread);
    tcase_add_test(t, test_topics_hyperbolic_batch_2_threads);
    tcase_add_test(t, test_topics_euclidean_batch);
    tcase_add_test(t, test_topics_hyperbolic_batch_share_3);
    tcase_add_test(t, test_topics_hyperbolic_batch_share_2_bounded);
    tcase_add_test(t, test_reproducible_single_thread);
    tcase_add_test(t, test_stop_flag_interrupts);
    tcase_add_test(t, test_checkpoint_round_trip_and_damage);
    tcase_add_test(t, test_two_ranks_moved);
    tcase_add_test(t, test_two_ranks_mean);
    tcase_add_test(t, test_two_ranks_euclidean);
    tcase_add_test(t, test_two_ranks_mismatch);
    tcase_add_test(t, test_combine_rules);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

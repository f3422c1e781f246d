/* check_hrm.c — Check suite for models/hrm: the one-step gradient of the whole HRM (input
 * network, f_L, f_H, output head, Q head) against central finite differences in float64 for
 * both geometries, on every parameter; the full BPTT gradient against finite differences of the
 * whole segment; the cosine between the one-step and the BPTT gradient (printed); the modes'
 * forward passes agree; activation memory does not grow with N·T in the one-step mode; a toy
 * training run whose loss falls; the persistent batch, its minimum of segments and its
 * continue-target gradient (finite differences); the model file (round trip, corrupt, truncated, newer version,
 * foreign file). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "models/core/crc32.h"
#include "models/core/rng.h"
#include "models/hrm.h"
#include "models/layers/kernels.h"
#include "tests/support/fd.h"

static gyro_hrm_config tiny_cfg(int geo, int N, int T)
{
    gyro_hrm_config c = gyro_hrm_config_default();
    c.geometry = geo;
    c.n_cells = 5;
    c.vocab = 4;
    c.n_classes = 3;
    c.dim = 4;
    c.n_heads = 2;
    c.head_dim = 2;
    c.ffn_dim = 6;
    c.n_low = N;
    c.n_high = T;
    c.m_max = 3;
    ck_assert_int_eq(gyro_hrm_config_validate(&c), GYRO_OK);
    return c;
}

enum { TB = 2 };

typedef struct fixture {
    gyro_hrm_config cfg;
    gyro_hrm_model_f64 *m;
    gyro_hrm_acts_f64 *a;
    int32_t tok[TB * 5];
    int lab[TB * 5];
    double qt[TB * 2];
    double *dlogits, dq[TB * 2];
} fixture;

static void fixture_init_pool(fixture *f, int geo, int N, int T, uint64_t seed, int q_pool)
{
    f->cfg = tiny_cfg(geo, N, T);
    f->cfg.q_pool = q_pool;
    ck_assert_int_eq(gyro_hrm_new_f64(&f->cfg, seed, &f->m), GYRO_OK);
    ck_assert_int_eq(gyro_hrm_acts_new_f64(f->m, TB, 1, 1, &f->a), GYRO_OK);
    gyro_rng r;
    gyro_rng_seed(&r, seed + 100);
    /* move every parameter off its initial value (zero biases, the Q head) so each carries a
     * gradient; ball parameters stay well inside the ball */
    gyro_hrm_tensor tab[GYRO_HRM_MAX_TENSORS];
    const int nt = gyro_hrm_tensor_table(&f->cfg, tab);
    for (int i = 0; i < nt; i++) {
        double *w = f->m->params + tab[i].offset;
        for (int j = 0; j < tab[i].rows * tab[i].cols; j++)
            w[j] = tab[i].ball ? 0.3 * w[j] + 0.1 * gyro_rng_normal(&r)
                               : w[j] + 0.2 * gyro_rng_normal(&r);
    }
    for (int i = 0; i < TB * 5; i++) {
        f->tok[i] = (int32_t)gyro_rng_below(&r, 4);
        f->lab[i] = (int)gyro_rng_below(&r, 3);
    }
    for (int i = 0; i < TB * 2; i++)
        f->qt[i] = gyro_rng_uniform(&r);
    f->dlogits = malloc(sizeof(double) * TB * 5 * 3);
}

static void fixture_init(fixture *f, int geo, int N, int T, uint64_t seed)
{
    fixture_init_pool(f, geo, N, T, seed, GYRO_HRM_QPOOL_CELLS);
}

static void fixture_free(fixture *f)
{
    gyro_hrm_acts_free_f64(f->a);
    gyro_hrm_free_f64(f->m);
    free(f->dlogits);
}

static double seg_loss(fixture *f, gyro_hrm_mode mode, int with_grad)
{
    ck_assert_int_eq(gyro_hrm_forward_f64(f->m, f->a, f->tok, TB, mode), GYRO_OK);
    return gyro_hrm_loss_f64(with_grad ? f->dlogits : NULL, with_grad ? f->dq : NULL, f->a,
                             f->lab, f->qt, TB);
}

/* Gradient of the segment loss in `mode` (ONESTEP or BPTT) from the initial carry. */
static double *grad_of(fixture *f, gyro_hrm_mode mode)
{
    double *g = calloc(f->m->lay.n_params, sizeof(double));
    gyro_hrm_carry_reset_f64(f->m, f->a, TB);
    seg_loss(f, mode, 1);
    gyro_hrm_backward_f64(f->m, f->a, g, f->dlogits, f->dq);
    return g;
}

static double cosine(const double *x, const double *y, size_t n)
{
    double xy = 0, xx = 0, yy = 0;
    for (size_t i = 0; i < n; i++) {
        xy += x[i] * y[i];
        xx += x[i] * x[i];
        yy += y[i] * y[i];
    }
    return xy / sqrt(xx * yy);
}

/* fn(f, ctx) as the objective of fd_central. */
typedef struct hrm_objective {
    fixture *f;
    double (*fn)(fixture *, const double *);
    const double *ctx;
} hrm_objective;

static double hrm_loss(void *vctx)
{
    const hrm_objective *o = vctx;
    return o->fn(o->f, o->ctx);
}

/* Compare an analytic gradient with central differences of `fn` over every parameter; relative
 * errors count where |num| + |ana| > 1e-3. */
static void fd_compare(fixture *f, const double *g, double (*fn)(fixture *, const double *),
                       const double *ctx, const char *what)
{
    const size_t np = f->m->lay.n_params;
    hrm_objective o = {f, fn, ctx};
    fd_stats st = {.floor = 1e-6, .gate = 1e-3};
    for (size_t k = 0; k < np; k++) fd_stats_add(&st, k, fd_central(&f->m->params[k], 1e-6, hrm_loss, &o), g[k]);
    const double max_abs = st.max_abs, max_rel = st.max_rel;
    const size_t worst = st.worst;
    printf("hrm %s (%s, N=%d T=%d, %zu parameters): max abs error %.2e, max rel error %.2e\n",
           what, f->cfg.geometry == GYRO_GEO_HYPERBOLIC ? "hyperbolic" : "euclidean",
           f->cfg.n_low, f->cfg.n_high, np, max_abs, max_rel);
    ck_assert_msg(max_abs < 1e-6 && max_rel < 1e-4,
                  "%s: parameter %zu: max abs %.3e rel %.3e", what, worst, max_abs, max_rel);
}

/* The one-step objective: the last L and H update from a frozen carry (ctx = z_L, z_H). */
static double tail_loss(fixture *f, const double *carry)
{
    const size_t half = (size_t)TB * f->cfg.n_cells * f->cfg.dim;
    gyro_hrm_carry_set_f64(f->a, carry, carry + half, TB);
    return seg_loss(f, GYRO_HRM_TAIL, 0);
}

/* The exact objective: the whole segment from the initial carry. */
static double full_loss(fixture *f, const double *unused)
{
    (void)unused;
    gyro_hrm_carry_reset_f64(f->m, f->a, TB);
    return seg_loss(f, GYRO_HRM_ONESTEP, 0);
}

static void check_onestep_fd_pool(int geo, int q_pool)
{
    fixture f;
    fixture_init_pool(&f, geo, 2, 2, 7 + geo, q_pool);
    const size_t half = (size_t)TB * f.cfg.n_cells * f.cfg.dim;
    double *carry = malloc(2 * half * sizeof(double));
    gyro_hrm_carry_reset_f64(f.m, f.a, TB);
    ck_assert_int_eq(gyro_hrm_forward_f64(f.m, f.a, f.tok, TB, GYRO_HRM_PREFIX), GYRO_OK);
    gyro_hrm_carry_get_f64(f.a, carry, carry + half, TB);
    /* the tail's gradient equals the one-step gradient of the whole segment */
    double *g = calloc(f.m->lay.n_params, sizeof(double));
    gyro_hrm_carry_set_f64(f.a, carry, carry + half, TB);
    seg_loss(&f, GYRO_HRM_TAIL, 1);
    gyro_hrm_backward_f64(f.m, f.a, g, f.dlogits, f.dq);
    double *g1 = grad_of(&f, GYRO_HRM_ONESTEP);
    for (size_t k = 0; k < f.m->lay.n_params; k++)
        ck_assert_msg(fabs(g[k] - g1[k]) <= 1e-12 * (1 + fabs(g[k])),
                      "TAIL and ONESTEP gradients differ at %zu", k);
    fd_compare(&f, g, tail_loss, carry, q_pool == GYRO_HRM_QPOOL_MEAN
                                            ? "one-step gradient vs finite differences, mean Q head"
                                            : "one-step gradient vs finite differences");
    free(g);
    free(g1);
    free(carry);
    fixture_free(&f);
}

START_TEST(onestep_fd_euclidean) { check_onestep_fd_pool(GYRO_GEO_EUCLIDEAN, GYRO_HRM_QPOOL_CELLS); }
END_TEST

START_TEST(onestep_fd_hyperbolic) { check_onestep_fd_pool(GYRO_GEO_HYPERBOLIC, GYRO_HRM_QPOOL_CELLS); }
END_TEST

START_TEST(onestep_fd_mean_pool) { check_onestep_fd_pool(GYRO_GEO_EUCLIDEAN, GYRO_HRM_QPOOL_MEAN); }
END_TEST

/* The CELLS Q head is logit(Π_t σ(h_t)): with a = 0 and w = 0 every h_t is the bias; a new
 * model starts at Q̂ = σ(−5) ≈ 0.007 (MEAN) or Q̂ = Π_t max_k p̂_t,k (CELLS). */
START_TEST(q_pool_product)
{
    for (int pool = 0; pool < 2; pool++) {
        fixture f;
        gyro_hrm_config c = tiny_cfg(GYRO_GEO_EUCLIDEAN, 1, 1);
        c.q_pool = pool ? GYRO_HRM_QPOOL_CELLS : GYRO_HRM_QPOOL_MEAN;
        gyro_hrm_model_f64 *m;
        ck_assert_int_eq(gyro_hrm_new_f64(&c, 3, &m), GYRO_OK);
        ck_assert_int_eq(gyro_hrm_acts_new_f64(m, TB, 0, 0, &f.a), GYRO_OK);
        for (int i = 0; i < TB * 5; i++)
            f.tok[i] = i % 4;
        gyro_hrm_carry_reset_f64(m, f.a, TB);
        ck_assert_int_eq(gyro_hrm_forward_f64(m, f.a, f.tok, TB, GYRO_HRM_ONESTEP), GYRO_OK);
        const double *q = gyro_hrm_qlogits_f64(f.a);
        const double *lg = gyro_hrm_logits_f64(f.a);
        for (int b = 0; b < TB; b++) {
            double prod = 1.0;  /* Π_t max_k softmax(logits_t)_k over the 5 cells */
            for (int t = 0; t < 5; t++) {
                const double *z = lg + (b * 5 + t) * 3;
                double mx = fmax(z[0], fmax(z[1], z[2])), se = 0.0;
                for (int k = 0; k < 3; k++)
                    se += exp(z[k] - mx);
                prod /= se;
            }
            const double want = pool ? log(prod / (1 - prod)) : -5.0;
            ck_assert_double_eq_tol(q[2 * b], want, 1e-9);
            ck_assert_double_eq_tol(q[2 * b + 1], want, 1e-9);
        }
        if (pool) {
            m->params[m->lay.q_a] = 0.0;
            m->params[m->lay.q_b] = 1.5; /* h_t = 1.5 on each of the 5 cells */
            ck_assert_int_eq(gyro_hrm_forward_f64(m, f.a, f.tok, TB, GYRO_HRM_ONESTEP), GYRO_OK);
            const double p = pow(1.0 / (1.0 + exp(-1.5)), 5);
            ck_assert_double_eq_tol(gyro_hrm_qlogits_f64(f.a)[0], log(p / (1 - p)), 1e-12);
        }
        gyro_hrm_acts_free_f64(f.a);
        gyro_hrm_free_f64(m);
    }
}
END_TEST

static void check_bptt(int geo)
{
    fixture f;
    fixture_init(&f, geo, 2, 2, 11 + geo);
    double *gb = grad_of(&f, GYRO_HRM_BPTT);
    fd_compare(&f, gb, full_loss, NULL, "BPTT gradient vs finite differences");
    double *g1 = grad_of(&f, GYRO_HRM_ONESTEP);
    const double cs = cosine(g1, gb, f.m->lay.n_params);
    printf("hrm one-step vs BPTT gradient (%s, N=2 T=2, tiny model at a random point): "
           "cosine %.4f\n", geo == GYRO_GEO_HYPERBOLIC ? "hyperbolic" : "euclidean", cs);
    ck_assert(isfinite(cs));
    free(gb);
    free(g1);
    fixture_free(&f);
}

START_TEST(bptt_fd_euclidean) { check_bptt(GYRO_GEO_EUCLIDEAN); }
END_TEST

START_TEST(bptt_fd_hyperbolic) { check_bptt(GYRO_GEO_HYPERBOLIC); }
END_TEST

/* With N = T = 1 the one-step gradient is the exact gradient. */
START_TEST(onestep_exact_when_one_step)
{
    fixture f;
    fixture_init(&f, GYRO_GEO_EUCLIDEAN, 1, 1, 3);
    double *gb = grad_of(&f, GYRO_HRM_BPTT), *g1 = grad_of(&f, GYRO_HRM_ONESTEP);
    for (size_t k = 0; k < f.m->lay.n_params; k++)
        ck_assert_msg(fabs(gb[k] - g1[k]) <= 1e-12 * (1 + fabs(gb[k])), "param %zu", k);
    ck_assert_double_eq_tol(cosine(g1, gb, f.m->lay.n_params), 1.0, 1e-12);
    free(gb);
    free(g1);
    fixture_free(&f);
}
END_TEST

/* ONESTEP, BPTT and PREFIX + TAIL compute the same forward pass. */
START_TEST(modes_agree)
{
    fixture f;
    fixture_init(&f, GYRO_GEO_HYPERBOLIC, 3, 2, 5);
    const size_t nl = (size_t)TB * f.cfg.n_cells * f.cfg.n_classes;
    double ref[TB * 5 * 3], q0[TB * 2];
    gyro_hrm_carry_reset_f64(f.m, f.a, TB);
    ck_assert_int_eq(gyro_hrm_forward_f64(f.m, f.a, f.tok, TB, GYRO_HRM_ONESTEP), GYRO_OK);
    memcpy(ref, gyro_hrm_logits_f64(f.a), nl * sizeof(double));
    memcpy(q0, gyro_hrm_qlogits_f64(f.a), sizeof q0);
    gyro_hrm_carry_reset_f64(f.m, f.a, TB);
    ck_assert_int_eq(gyro_hrm_forward_f64(f.m, f.a, f.tok, TB, GYRO_HRM_BPTT), GYRO_OK);
    for (size_t i = 0; i < nl; i++)
        ck_assert_double_eq_tol(gyro_hrm_logits_f64(f.a)[i], ref[i], 1e-13);
    gyro_hrm_carry_reset_f64(f.m, f.a, TB);
    ck_assert_int_eq(gyro_hrm_forward_f64(f.m, f.a, f.tok, TB, GYRO_HRM_PREFIX), GYRO_OK);
    ck_assert_int_eq(gyro_hrm_forward_f64(f.m, f.a, f.tok, TB, GYRO_HRM_TAIL), GYRO_OK);
    for (size_t i = 0; i < nl; i++)
        ck_assert_double_eq_tol(gyro_hrm_logits_f64(f.a)[i], ref[i], 1e-13);
    for (int i = 0; i < TB * 2; i++)
        ck_assert_double_eq_tol(gyro_hrm_qlogits_f64(f.a)[i], q0[i], 1e-13);
    /* a second segment from the carried state differs from the first */
    ck_assert_int_eq(gyro_hrm_forward_f64(f.m, f.a, f.tok, TB, GYRO_HRM_ONESTEP), GYRO_OK);
    double diff = 0;
    for (size_t i = 0; i < nl; i++)
        diff += fabs(gyro_hrm_logits_f64(f.a)[i] - ref[i]);
    ck_assert(diff > 1e-6);
    /* bad tokens and batches */
    int32_t bad[TB * 5];
    memcpy(bad, f.tok, sizeof bad);
    bad[3] = 4;
    ck_assert_int_eq(gyro_hrm_forward_f64(f.m, f.a, bad, TB, GYRO_HRM_ONESTEP), GYRO_ERR_DATA);
    ck_assert_int_eq(gyro_hrm_forward_f64(f.m, f.a, f.tok, TB + 1, GYRO_HRM_ONESTEP),
                     GYRO_ERR_USAGE);
    fixture_free(&f);
}
END_TEST

/* One-step activations do not grow with N·T; BPTT activations do. */
START_TEST(memory_flat_in_nt)
{
    size_t bytes[2], bptt_bytes[2];
    for (int i = 0; i < 2; i++) {
        gyro_hrm_config c = gyro_hrm_config_default();
        c.n_low = c.n_high = i ? 4 : 1;
        gyro_hrm_model *m;
        gyro_hrm_acts *a, *b;
        ck_assert_int_eq(gyro_hrm_new(&c, 1, &m), GYRO_OK);
        ck_assert_int_eq(gyro_hrm_acts_new(m, 2, 1, 0, &a), GYRO_OK);
        ck_assert_int_eq(gyro_hrm_acts_new(m, 2, 1, 1, &b), GYRO_OK);
        bytes[i] = gyro_hrm_acts_bytes(a);
        bptt_bytes[i] = gyro_hrm_acts_bytes(b);
        gyro_hrm_acts_free(a);
        gyro_hrm_acts_free(b);
        gyro_hrm_free(m);
    }
    printf("hrm activation bytes, batch 2: one-step N·T=1 %zu, N·T=16 %zu; BPTT N·T=16 %zu\n",
           bytes[0], bytes[1], bptt_bytes[1]);
    ck_assert_uint_eq(bytes[0], bytes[1]);
    ck_assert_uint_gt(bptt_bytes[1], 5 * bptt_bytes[0]);
}
END_TEST

/* Toy tasks on 6 cells of 3 symbols, deep supervision: Euclidean with ACT, copy the right-hand
 * neighbour (label_t = x_{(t+1) mod n}: needs attention); hyperbolic without ACT (its Q head's
 * gradient through z_H still destabilises training at this scale), copy the cell itself. The
 * mean segment cross-entropy of the last 10 batches falls below half of the first 10's, and the
 * Euclidean model ends with >= 90% of the cells right. (The Q head's BCE is left out of the
 * criterion: its bootstrapped targets make it jump whenever a confident halt turns out wrong.) */
START_TEST(toy_training_loss_falls)
{
    gyro_hrm_config c = gyro_hrm_config_default();
    c.n_cells = 6;
    c.vocab = 3;
    c.n_classes = 3;
    c.dim = 16;
    c.n_heads = 2;
    c.head_dim = 8;
    c.ffn_dim = 32;
    c.n_low = 2;
    c.n_high = 2;
    c.m_max = 3;
    for (int geo = 0; geo < 2; geo++) {
        c.geometry = geo;
        gyro_hrm_model *m;
        gyro_hrm_trainer *t;
        ck_assert_int_eq(gyro_hrm_new(&c, 2, &m), GYRO_OK);
        gyro_hrm_train_config tc = gyro_hrm_train_config_default();
        tc.max_batch = 16;
        tc.lr = 3e-3;
        tc.act = !geo;
        ck_assert_int_eq(gyro_hrm_trainer_new(m, &tc, &t), GYRO_OK);
        gyro_rng r;
        gyro_rng_seed(&r, 9);
        int32_t tok[16 * 6];
        int lab[16 * 6];
        double first = 0, last = 0, acc = 0;
        long segs = 0;
        const int batches = 500;
        for (int it = 0; it < batches; it++) {
            for (int i = 0; i < 16 * 6; i++)
                tok[i] = (int32_t)gyro_rng_below(&r, 3);
            for (int b = 0; b < 16; b++)
                for (int i = 0; i < 6; i++)
                    lab[b * 6 + i] = geo ? tok[b * 6 + i] : tok[b * 6 + (i + 1) % 6];
            gyro_hrm_batch_stats st;
            ck_assert_int_eq(gyro_hrm_train_batch(t, tok, lab, 16, &r, &st), GYRO_OK);
            ck_assert(st.segments >= 16 && st.segments <= 16 * 3);
            if (!tc.act)
                ck_assert_int_eq(st.segments, 16 * 3);
            if (it < 10)
                first += st.ce / 10;
            if (it >= batches - 10) {
                last += st.ce / 10;
                acc += st.seg_acc / 10;
                segs += st.segments;
            }
        }
        printf("hrm toy training (%s): mean segment cross-entropy %.4f (first 10 batches) -> %.4f "
               "(last 10), cell accuracy %.3f, %.2f segments per example (M_max 3)\n",
               geo ? "hyperbolic" : "euclidean", first, last, acc, segs / 160.0);
        ck_assert_msg(last < 0.5 * first, "loss %.4f -> %.4f", first, last);
        if (!geo)
            ck_assert_msg(acc >= 0.9, "accuracy %.3f", acc);
        gyro_hrm_trainer_free(t);
        gyro_hrm_free(m);
    }
}
END_TEST

/* The persistent batch (gyro_hrm_train_step) on the Euclidean toy task of copying the
 * right-hand neighbour: without ACT a slot takes a fresh example every M_max = 3 calls (all 16
 * at calls 1, 4, 7, ...); too few fresh examples for the vacant slots is a usage error. With ACT
 * the cross-entropy falls below half, >= 90% of the cells end right, and the Q head learns to
 * halt: once the first segment is right the halted examples ran fewer than 2 segments on average
 * (M_max 3; the exploration keeps some at 2-3). */
START_TEST(persistent_batch)
{
    gyro_hrm_config c = gyro_hrm_config_default();
    c.n_cells = 6;
    c.vocab = 3;
    c.n_classes = 3;
    c.dim = 16;
    c.n_heads = 2;
    c.head_dim = 8;
    c.ffn_dim = 32;
    c.n_low = 2;
    c.n_high = 2;
    c.m_max = 3;
    for (int act = 0; act < 2; act++) {
        gyro_hrm_model *m;
        gyro_hrm_trainer *t;
        ck_assert_int_eq(gyro_hrm_new(&c, 2, &m), GYRO_OK);
        gyro_hrm_train_config tc = gyro_hrm_train_config_default();
        tc.max_batch = 16;
        tc.lr = 3e-3;
        tc.act = act;
        ck_assert_int_eq(gyro_hrm_trainer_new(m, &tc, &t), GYRO_OK);
        gyro_rng r;
        gyro_rng_seed(&r, 9);
        int32_t tok[16 * 6];
        int lab[16 * 6];
        double first = 0, last = 0;
        long cells = 0, right = 0, halted = 0, segs = 0;
        const int steps = act ? 1500 : 9;
        for (int it = 0; it < steps; it++) {
            const int need = gyro_hrm_trainer_vacant(t);
            for (int i = 0; i < need * 6; i++)
                tok[i] = (int32_t)gyro_rng_below(&r, 3);
            for (int b = 0; b < need; b++)
                for (int i = 0; i < 6; i++)
                    lab[b * 6 + i] = tok[b * 6 + (i + 1) % 6];
            gyro_hrm_step_stats st;
            int used = -1;
            if (need > 0) {
                ck_assert_int_eq(gyro_hrm_train_step(t, tok, lab, need - 1, &used, &r, &st),
                                 GYRO_ERR_USAGE);
                ck_assert_int_eq(used, 0);
            }
            ck_assert_int_eq(gyro_hrm_train_step(t, tok, lab, need, &used, &r, &st), GYRO_OK);
            ck_assert_int_eq(used, need);
            ck_assert_int_eq(st.running, 16);
            if (!act) {
                ck_assert_int_eq(used, it % 3 == 0 ? 16 : 0);
                ck_assert_int_eq(st.halted, it % 3 == 2 ? 16 : 0);
                continue;
            }
            if (it < 30)
                first += st.ce / 30;
            if (it >= steps - 30) {
                last += st.ce / 30;
                cells += st.cells;
                right += st.right;
                halted += st.halted;
                segs += st.halted_segments;
            }
        }
        if (act) {
            const double acc = cells ? (double)right / cells : 0, ms = halted ? (double)segs / halted : 0;
            printf("hrm persistent batch (euclidean, ACT): cross-entropy %.4f (first 30 steps) -> "
                   "%.4f (last 30), cell accuracy %.3f, %.2f segments per halted example (M_max 3)\n",
                   first, last, acc, ms);
            ck_assert_msg(last < 0.5 * first, "loss %.4f -> %.4f", first, last);
            ck_assert_msg(acc >= 0.9, "accuracy %.3f", acc);
            ck_assert_msg(halted > 0 && ms < 2.0, "%.2f segments", ms);
        }
        gyro_hrm_trainer_free(t);
        gyro_hrm_free(m);
    }
}
END_TEST

/* gyro_hrm_trainer_set_min_segments: with a Q head that always says halt (bias +10 against −10)
 * and ACT on, every example halts after one segment; with the minimum at M_max = 3 none halts
 * before its third segment, all halt at it; back at 1, the next fresh examples halt at once
 * again (the ones already in a slot keep the minimum they entered with). */
START_TEST(min_segments)
{
    gyro_hrm_config c = tiny_cfg(GYRO_GEO_EUCLIDEAN, 1, 1);
    c.act_eps = 0;
    gyro_hrm_model *m;
    gyro_hrm_trainer *t;
    ck_assert_int_eq(gyro_hrm_new(&c, 2, &m), GYRO_OK);
    m->params[m->lay.q_b] = 10.0f;
    m->params[m->lay.q_b + 1] = -10.0f;
    gyro_hrm_train_config tc = gyro_hrm_train_config_default();
    tc.max_batch = 4;
    ck_assert_int_eq(gyro_hrm_trainer_new(m, &tc, &t), GYRO_OK);
    gyro_rng r;
    gyro_rng_seed(&r, 3);
    int32_t tok[4 * 5];
    int lab[4 * 5];
    for (int i = 0; i < 4 * 5; i++) {
        tok[i] = (int32_t)gyro_rng_below(&r, 4);
        lab[i] = (int)gyro_rng_below(&r, 3);
    }
    gyro_hrm_step_stats st;
    int used;
    ck_assert_int_eq(gyro_hrm_train_step(t, tok, lab, 4, &used, &r, &st), GYRO_OK);
    ck_assert_int_eq(st.halted, 4);
    gyro_hrm_trainer_set_min_segments(t, 3);
    for (int k = 1; k <= 3; k++) {
        ck_assert_int_eq(gyro_hrm_train_step(t, tok, lab, 4, &used, &r, &st), GYRO_OK);
        ck_assert_int_eq(used, k == 1 ? 4 : 0);
        ck_assert_int_eq(st.halted, k == 3 ? 4 : 0);
    }
    ck_assert_int_eq(st.halted_segments, 12);
    gyro_hrm_trainer_set_min_segments(t, 0); /* counts as 1 */
    ck_assert_int_eq(gyro_hrm_train_step(t, tok, lab, 4, &used, &r, &st), GYRO_OK);
    ck_assert_int_eq(used, 4);
    ck_assert_int_eq(st.halted, 4);
    gyro_hrm_trainer_free(t);
    gyro_hrm_free(m);
}
END_TEST

/* The continue target of the persistent batch: at a slot's second segment gyro_hrm_train_step
 * adds the gradient of w_Q · (1/B) Σ_b BCE(σ(x_b), G_b), where x_b is the continue logit of the
 * slot's FIRST segment (its Q-head inputs kept from the previous call) and G_b = max(Q̂_halt^2,
 * Q̂_cont^2) (M_max 3). It reaches only the Q head's continue row (q_w row 1, q_b[1], q_a[1]):
 * this segment's own continue logit has no target yet. Checked against central differences of
 * that loss, the first segment recomputed from z^0 with the continue row moved (a learning
 * rate of 1e-12 keeps the parameters of the two calls the same). */
static double continue_loss(gyro_hrm_model *m, gyro_hrm_acts *a, const int32_t *tok,
                            const double *target, int B, double wq)
{
    gyro_hrm_carry_reset(m, a, B);
    ck_assert_int_eq(gyro_hrm_forward(m, a, tok, B, GYRO_HRM_ONESTEP), GYRO_OK);
    const float *q = gyro_hrm_qlogits(a);
    double loss = 0;
    for (int b = 0; b < B; b++) {
        const double x = q[2 * b + 1];
        loss += wq * ((x > 0 ? x : 0.0) - x * target[b] + log1p(exp(-fabs(x)))) / B;
    }
    return loss;
}

START_TEST(continue_target_grad)
{
    enum { B = 4 };
    gyro_hrm_config c = tiny_cfg(GYRO_GEO_EUCLIDEAN, 1, 1);
    c.act_eps = 0;
    ck_assert_int_eq(c.q_pool, GYRO_HRM_QPOOL_CELLS);
    gyro_hrm_model *m;
    gyro_hrm_trainer *t;
    ck_assert_int_eq(gyro_hrm_new(&c, 5, &m), GYRO_OK);
    const gyro_hrm_layout *L = &m->lay;
    const int C = c.dim;
    gyro_rng r;
    gyro_rng_seed(&r, 11);
    for (int k = 0; k < 2 * C; k++)
        m->params[L->q_w + k] = (float)(0.3 * gyro_rng_normal(&r));
    m->params[L->q_b + 1] = 0.4f;
    m->params[L->q_a + 1] = 0.7f;
    float *p0 = malloc(L->n_params * sizeof(float));
    memcpy(p0, m->params, L->n_params * sizeof(float));
    gyro_hrm_train_config tc = gyro_hrm_train_config_default();
    tc.max_batch = B;
    tc.lr = 1e-12;
    tc.clip_norm = 0;
    ck_assert_int_eq(gyro_hrm_trainer_new(m, &tc, &t), GYRO_OK);
    gyro_hrm_trainer_set_min_segments(t, 3);
    int32_t tok[B * 5];
    int lab[B * 5];
    for (int i = 0; i < B * 5; i++) {
        tok[i] = (int32_t)gyro_rng_below(&r, 4);
        lab[i] = (int)gyro_rng_below(&r, 3);
    }
    gyro_hrm_step_stats st;
    int used;
    ck_assert_int_eq(gyro_hrm_train_step(t, tok, lab, B, &used, &r, &st), GYRO_OK);
    ck_assert_int_eq(gyro_hrm_train_step(t, tok, lab, 0, &used, &r, &st), GYRO_OK);
    ck_assert_int_eq(st.halted, 0);
    const float *g = gyro_hrm_trainer_grads(t);
    memcpy(m->params, p0, L->n_params * sizeof(float));
    /* the targets: Q̂ of the second segment */
    gyro_hrm_acts *a;
    ck_assert_int_eq(gyro_hrm_acts_new(m, B, 0, 0, &a), GYRO_OK);
    gyro_hrm_carry_reset(m, a, B);
    ck_assert_int_eq(gyro_hrm_forward(m, a, tok, B, GYRO_HRM_ONESTEP), GYRO_OK);
    ck_assert_int_eq(gyro_hrm_forward(m, a, tok, B, GYRO_HRM_ONESTEP), GYRO_OK);
    double target[B];
    for (int b = 0; b < B; b++) {
        const float *q = gyro_hrm_qlogits(a) + 2 * b;
        const double qh = 1 / (1 + exp(-(double)q[0])), qc = 1 / (1 + exp(-(double)q[1]));
        target[b] = qh > qc ? qh : qc;
    }
    size_t idx[64];
    int n = 0;
    for (int k = 0; k < C; k++)
        idx[n++] = L->q_w + (size_t)C + (size_t)k;
    idx[n++] = L->q_b + 1;
    idx[n++] = L->q_a + 1;
    double gmax = 0, err = 0;
    const double h = 1e-2;
    for (int i = 0; i < n; i++) {
        const float keep = m->params[idx[i]];
        m->params[idx[i]] = (float)(keep + h);
        const double up = continue_loss(m, a, tok, target, B, tc.q_weight);
        m->params[idx[i]] = (float)(keep - h);
        const double dn = continue_loss(m, a, tok, target, B, tc.q_weight);
        m->params[idx[i]] = keep;
        const double fd = (up - dn) / (2 * h);
        gmax = fmax(gmax, fabs(fd));
        err = fmax(err, fabs(fd - g[idx[i]]));
    }
    printf("hrm continue target of the persistent batch: max |FD| %.3g, max |FD − gradient| %.3g "
           "over the %d parameters of the continue row\n", gmax, err, n);
    ck_assert_msg(gmax > 1e-3, "no gradient to check (max |FD| %g)", gmax);
    ck_assert_msg(err <= 1e-2 * gmax, "continue-target gradient off by %g (max %g)", err, gmax);
    gyro_hrm_acts_free(a);
    gyro_hrm_trainer_free(t);
    gyro_hrm_free(m);
    free(p0);
}
END_TEST

START_TEST(model_file)
{
    char path[] = "/tmp/check_hrm_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    gyro_hrm_config c = tiny_cfg(GYRO_GEO_HYPERBOLIC, 2, 3);
    gyro_hrm_model *m, *m2;
    ck_assert_int_eq(gyro_hrm_new(&c, 4, &m), GYRO_OK);
    ck_assert_int_eq(gyro_hrm_save(m, path), GYRO_OK);
    ck_assert_int_eq(gyro_hrm_load(path, &m2), GYRO_OK);
    ck_assert_int_eq(m2->cfg.n_low, 2);
    ck_assert_int_eq(m2->cfg.n_high, 3);
    ck_assert_int_eq(m2->cfg.geometry, GYRO_GEO_HYPERBOLIC);
    ck_assert_mem_eq(m2->params, m->params, m->lay.n_params * sizeof(float));
    ck_assert_mem_eq(m2->z0, m->z0, 2 * c.dim * sizeof(float));
    ck_assert_int_eq(m2->cfg.q_pool, GYRO_HRM_QPOOL_CELLS);
    gyro_hrm_free(m2);
    /* format version 1 (no q_pool in the header) loads with the mean Q head */
    {
        gyro_hrm_config c1 = c;
        c1.q_pool = GYRO_HRM_QPOOL_MEAN;
        gyro_hrm_model *m1;
        ck_assert_int_eq(gyro_hrm_new(&c1, 4, &m1), GYRO_OK);
        ck_assert_int_eq(gyro_hrm_save(m1, path), GYRO_OK);
        FILE *in = fopen(path, "rb");
        unsigned char buf[1 << 16];
        const size_t len = fread(buf, 1, sizeof buf, in);
        fclose(in);
        ck_assert_uint_lt(len, sizeof buf);
        unsigned char v1[1 << 16];
        const uint32_t ver = 1, hb = 68;
        memcpy(v1, buf, 8);
        memcpy(v1 + 8, &ver, 4);
        memcpy(v1 + 12, &hb, 4);
        memcpy(v1 + 16, buf + 16, 44);                    /* the 11 int32 of version 1 */
        memcpy(v1 + 60, buf + 64, len - 4 - 64);          /* f64 ×3, n, parameters */
        const size_t body = len - 4 - 4;
        const uint32_t sum = gyro_crc32(0, v1, body);
        memcpy(v1 + body, &sum, 4);
        FILE *out = fopen(path, "wb");
        ck_assert_uint_eq(fwrite(v1, 1, body + 4, out), body + 4);
        fclose(out);
        ck_assert_int_eq(gyro_hrm_load(path, &m2), GYRO_OK);
        ck_assert_int_eq(m2->cfg.q_pool, GYRO_HRM_QPOOL_MEAN);
        ck_assert_int_eq(m2->cfg.n_high, 3);
        ck_assert_mem_eq(m2->params, m1->params, m1->lay.n_params * sizeof(float));
        gyro_hrm_free(m2);
        gyro_hrm_free(m1);
    }
    ck_assert_int_eq(gyro_hrm_save(m, path), GYRO_OK);
    /* corrupt one parameter byte */
    FILE *fp = fopen(path, "r+b");
    fseek(fp, 100, SEEK_SET);
    int ch = fgetc(fp);
    fseek(fp, 100, SEEK_SET);
    fputc(ch ^ 0x40, fp);
    fclose(fp);
    ck_assert_int_eq(gyro_hrm_load(path, &m2), GYRO_ERR_FORMAT);
    ck_assert_ptr_nonnull(strstr(gyro_error_message(), "checksum"));
    /* truncated */
    ck_assert_int_eq(gyro_hrm_save(m, path), GYRO_OK);
    ck_assert_int_eq(truncate(path, 90), 0);
    ck_assert_int_eq(gyro_hrm_load(path, &m2), GYRO_ERR_FORMAT);
    /* newer version */
    ck_assert_int_eq(gyro_hrm_save(m, path), GYRO_OK);
    fp = fopen(path, "r+b");
    fseek(fp, 8, SEEK_SET);
    fputc(9, fp);
    fclose(fp);
    ck_assert_int_eq(gyro_hrm_load(path, &m2), GYRO_ERR_VERSION);
    /* foreign */
    fp = fopen(path, "wb");
    fputs("GYRORLP1 not an HRM", fp);
    fclose(fp);
    ck_assert_int_eq(gyro_hrm_load(path, &m2), GYRO_ERR_FORMAT);
    ck_assert_int_eq(gyro_hrm_load("/nonexistent/hrm.bin", &m2), GYRO_ERR_IO);
    gyro_hrm_free(m);
    unlink(path);
}
END_TEST

static Suite *hrm_suite(void)
{
    Suite *s = suite_create("hrm");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, onestep_fd_euclidean);
    tcase_add_test(tc, onestep_fd_hyperbolic);
    tcase_add_test(tc, onestep_fd_mean_pool);
    tcase_add_test(tc, q_pool_product);
    tcase_add_test(tc, bptt_fd_euclidean);
    tcase_add_test(tc, bptt_fd_hyperbolic);
    tcase_add_test(tc, onestep_exact_when_one_step);
    tcase_add_test(tc, modes_agree);
    tcase_add_test(tc, memory_flat_in_nt);
    tcase_add_test(tc, toy_training_loss_falls);
    tcase_add_test(tc, persistent_batch);
    tcase_add_test(tc, min_segments);
    tcase_add_test(tc, continue_target_grad);
    tcase_add_test(tc, model_file);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(hrm_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

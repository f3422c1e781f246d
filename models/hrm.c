/* hrm.c — the Hierarchical Reasoning Model (hrm.h): configuration, parameter layout, the
 * float32/float64 instantiations of hrm_impl.h, deep-supervision training with ACT, inference,
 * and the model file.
 *
 * Model file (little-endian, as written by this machine's fwrite; version 2):
 *   "GYROHRM1"  u32 version  u32 header_bytes
 *   header: i32 geometry, n_cells, vocab, n_classes, dim, n_heads, head_dim, ffn_dim, n_low,
 *           n_high, m_max, [version 2: q_pool], f64 curvature, f64 act_eps, u64 init_seed
 *   (version 1, 68 header bytes, has no q_pool: its Q head is GYRO_HRM_QPOOL_MEAN)
 *   u64 n_params, n_params float32, u32 CRC-32 (zlib's, models/core/crc32.h) of everything
 *   before it.
 */
#include "models/hrm.h"

#include <assert.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "models/core/atomic_file.h"
#include "models/core/crc32.h"
#include "models/hyp/hyp_scalar.h" /* gyro_hyp_neg_log_sigmoid */
#include "models/layers/kernels.h"
#include "models/optim.h"
#include "models/transformer.h" /* gyro_tf_sublayer: the residual-and-LayerNorm sublayer of a block */

/* ---- configuration ------------------------------------------------------------------------ */

gyro_hrm_config gyro_hrm_config_default(void)
{
    gyro_hrm_config c;
    memset(&c, 0, sizeof c);
    c.geometry = GYRO_GEO_EUCLIDEAN;
    c.curvature = 1.0;
    c.n_cells = 81;
    c.vocab = 10;
    c.n_classes = 9;
    c.dim = 128;
    c.n_heads = 4;
    c.head_dim = 32;
    c.ffn_dim = 256;
    c.n_low = 1;
    c.n_high = 1;
    c.m_max = GYRO_HRM_M_MAX;
    c.act_eps = 0.1;
    c.init_seed = 1;
    c.q_pool = GYRO_HRM_QPOOL_CELLS;
    return c;
}

gyro_status gyro_hrm_config_validate(const gyro_hrm_config *c)
{
#define HRM_RANGE(field, lo, hi)                                                               \
    if (c->field < (lo) || c->field > (hi))                                                    \
        return gyro_error_set(GYRO_ERR_USAGE, "hrm: " #field " %d outside [%d, %d]",          \
                              (int)c->field, (int)(lo), (int)(hi));
    if (c->geometry != GYRO_GEO_EUCLIDEAN && c->geometry != GYRO_GEO_HYPERBOLIC)
        return gyro_error_set(GYRO_ERR_USAGE, "hrm: geometry %d is neither euclidean nor "
                              "hyperbolic", c->geometry);
    if (c->geometry == GYRO_GEO_HYPERBOLIC && !(c->curvature > 0.0 && c->curvature < 1e6))
        return gyro_error_set(GYRO_ERR_USAGE, "hrm: curvature %g must be > 0", c->curvature);
    HRM_RANGE(n_cells, 1, 4096)
    HRM_RANGE(vocab, 1, 65536)
    HRM_RANGE(n_classes, 2, 65536)
    HRM_RANGE(dim, 1, 4096)
    HRM_RANGE(n_heads, 1, 256)
    HRM_RANGE(head_dim, 1, 1024)
    HRM_RANGE(ffn_dim, 1, 65536)
    HRM_RANGE(n_low, 1, 1000)
    HRM_RANGE(n_high, 1, 1000)
    HRM_RANGE(m_max, 1, 1000)
#undef HRM_RANGE
    if (!(c->act_eps >= 0.0 && c->act_eps <= 1.0))
        return gyro_error_set(GYRO_ERR_USAGE, "hrm: act_eps %g outside [0, 1]", c->act_eps);
    if (c->q_pool != GYRO_HRM_QPOOL_MEAN && c->q_pool != GYRO_HRM_QPOOL_CELLS)
        return gyro_error_set(GYRO_ERR_USAGE, "hrm: q_pool %d is neither mean nor cells",
                              c->q_pool);
    return GYRO_OK;
}

void gyro_hrm_layout_init(gyro_hrm_layout *L, const gyro_hrm_config *cfg)
{
    const size_t C = cfg->dim, A = (size_t)cfg->n_heads * cfg->head_dim, F = cfg->ffn_dim;
    const size_t V = cfg->vocab, n = cfg->n_cells, K = cfg->n_classes;
    gyro_hrm_block_layout *b = &L->blk;
    size_t o = 0;
    b->qkvw = o;     o += 3 * A * C;
    b->attprojw = o; o += C * A;
    b->ln1g = o;     o += C;
    b->ln1b = o;     o += C;
    b->fcw = o;      o += F * C;
    b->fcb = o;      o += F;
    b->fcprojw = o;  o += C * F;
    b->fcprojb = o;  o += C;
    b->ln2g = o;     o += C;
    b->ln2b = o;     o += C;
    b->n = o;
    o = 0;
    L->wte = o;   o += V * C;
    L->pos = o;   o += n * C;
    L->low = o;   o += b->n;
    L->high = o;  o += b->n;
    L->out_a = o; o += K * C;
    L->out_p = o; o += K * C;
    L->q_w = o;   o += 2 * C;
    L->q_b = o;   o += 2;
    L->q_a = o;   o += cfg->q_pool == GYRO_HRM_QPOOL_CELLS ? 2 : 0;
    L->n_params = o;
}

int gyro_hrm_tensor_table(const gyro_hrm_config *cfg, gyro_hrm_tensor *out)
{
    gyro_hrm_layout L;
    gyro_hrm_layout_init(&L, cfg);
    const int C = cfg->dim, A = cfg->n_heads * cfg->head_dim, F = cfg->ffn_dim;
    const int hyp = cfg->geometry == GYRO_GEO_HYPERBOLIC;
    int k = 0;
#define HRM_T(nm, off, r, cl, ball_)                                                           \
    out[k++] = (gyro_hrm_tensor){nm, (off), (r), (cl), (ball_) && hyp};
    HRM_T("wte", L.wte, cfg->vocab, C, 1)
    HRM_T("pos", L.pos, cfg->n_cells, C, 1)
    static const char *names[2][10] = {
        {"L.qkvw", "L.attprojw", "L.ln1g", "L.ln1b", "L.fcw", "L.fcb", "L.fcprojw", "L.fcprojb",
         "L.ln2g", "L.ln2b"},
        {"H.qkvw", "H.attprojw", "H.ln1g", "H.ln1b", "H.fcw", "H.fcb", "H.fcprojw", "H.fcprojb",
         "H.ln2g", "H.ln2b"}};
    for (int m = 0; m < 2; m++) {
        const size_t base = m ? L.high : L.low;
        const gyro_hrm_block_layout *b = &L.blk;
        HRM_T(names[m][0], base + b->qkvw, 3 * A, C, 0)
        HRM_T(names[m][1], base + b->attprojw, C, A, 0)
        HRM_T(names[m][2], base + b->ln1g, 1, C, 0)
        HRM_T(names[m][3], base + b->ln1b, 1, C, 0)
        HRM_T(names[m][4], base + b->fcw, F, C, 0)
        HRM_T(names[m][5], base + b->fcb, 1, F, 1)
        HRM_T(names[m][6], base + b->fcprojw, C, F, 0)
        HRM_T(names[m][7], base + b->fcprojb, 1, C, 1)
        HRM_T(names[m][8], base + b->ln2g, 1, C, 0)
        HRM_T(names[m][9], base + b->ln2b, 1, C, 0)
    }
    HRM_T("out_a", L.out_a, cfg->n_classes, C, 0)
    HRM_T("out_p", L.out_p, cfg->n_classes, C, 1)
    HRM_T("q_w", L.q_w, 2, C, 0)
    HRM_T("q_b", L.q_b, 1, 2, 0)
    if (cfg->q_pool == GYRO_HRM_QPOOL_CELLS)
        HRM_T("q_a", L.q_a, 1, 2, 0)
#undef HRM_T
    assert(k <= GYRO_HRM_MAX_TENSORS);
    return k;
}

/* ---- the Q head's pooling ------------------------------------------------------------------ */

/* 1 − e^s for s = log Q̂ ≤ 0 of the CELLS pooling (hrm.h): −expm1 keeps it exact for s near 0;
 * floored at DBL_MIN (s = 0 only when every cell's logit is beyond ≈ 745). */
static double hrm_qpool_one_minus(double s)
{
    const double om = -expm1(s);
    return om < DBL_MIN ? DBL_MIN : om;
}

/* CELLS pooling: the pooled logit logit(Q̂) = s − log(1 − e^s) of s = Σ_t log σ(h_t). */
static double hrm_qpool_logit(double s)
{
    return s - log(hrm_qpool_one_minus(s));
}

/* ∂ logit(Q̂) / ∂h_t = σ(−h_t) / (1 − e^s): the factor 1 / (1 − e^s). */
static double hrm_qpool_cells_scale(double s)
{
    return 1.0 / hrm_qpool_one_minus(s);
}

/* ---- the two precisions --------------------------------------------------------------------- */

#define T float
#define S(name) name##_f32
#define P(name) name
#define MODEL gyro_hrm_model
#define ACTS gyro_hrm_acts
#include "models/hrm_impl.h"
#undef T
#undef S
#undef P
#undef MODEL
#undef ACTS

#define T double
#define S(name) name##_f64
#define P(name) name##_f64
#define MODEL gyro_hrm_model_f64
#define ACTS gyro_hrm_acts_f64
#include "models/hrm_impl.h"
#undef T
#undef S
#undef P
#undef MODEL
#undef ACTS

size_t gyro_hrm_acts_bytes(const gyro_hrm_acts *a)
{
    return a->bytes;
}

/* ---- training ------------------------------------------------------------------------------- */

gyro_hrm_train_config gyro_hrm_train_config_default(void)
{
    gyro_hrm_train_config t;
    memset(&t, 0, sizeof t);
    t.lr = 1e-3;
    t.ball_lr = 0.01;
    t.weight_decay = 0.0;
    t.clip_norm = 1.0;
    t.max_batch = 32;
    t.act = 1;
    t.bptt = 0;
    t.q_weight = 0.5;
    return t;
}

struct gyro_hrm_trainer {
    gyro_hrm_model *m;
    gyro_hrm_train_config tc;
    float *grads;          /* (n_params) */
    gyro_optim opt;
    gyro_hrm_acts *acts;   /* training activations */
    gyro_hrm_acts *look;   /* look-ahead segment of the Q targets (no gradients) */
    float *dlogits;        /* (nmax, K) */
    float *dq, *qt;        /* (max_batch, 2) */
    float *zl, *zh;        /* (nmax, C) carry copies */
    int32_t *tok;          /* (nmax) running examples' tokens */
    int *lab;              /* (nmax) */
    int *mmin, *keep;      /* (max_batch) */
    int *correct;          /* (max_batch) */
    /* the persistent batch of gyro_hrm_train_step: one slot per example */
    int *segc;             /* (max_batch) segments the slot's example ran */
    int *vac;              /* (max_batch) 1: vacant (takes a fresh example at the next step) */
    int *pend;             /* (max_batch) 1: the previous segment awaits its continue target */
    /* the previous segment's Q-head inputs, for its continue target (q_pool MEAN: one feature
     * row per slot; CELLS: a row per cell, with the cells' continue logits h_t and their s) */
    int pf_rows;           /* 1 (MEAN) or n (CELLS) */
    float *ppool;          /* (max_batch, pf_rows, C) features log0 z_H */
    float *ph;             /* (max_batch, pf_rows) per-cell continue logits (CELLS) */
    float *pl;             /* (max_batch, pf_rows) the cells' confidence ℓ_t (CELLS) */
    float *ps;             /* (max_batch) s of the continue logit (CELLS) */
    float *pq;             /* (max_batch) Q_continue logit of the previous segment */
    int min_segments;      /* gyro_hrm_train_step: every fresh example runs at least this many */
};

void gyro_hrm_trainer_free(gyro_hrm_trainer *t)
{
    if (!t)
        return;
    gyro_optim_free(&t->opt);
    gyro_hrm_acts_free(t->acts);
    gyro_hrm_acts_free(t->look);
    free(t->grads);
    free(t->dlogits);
    free(t->dq);
    free(t->qt);
    free(t->zl);
    free(t->zh);
    free(t->tok);
    free(t->lab);
    free(t->mmin);
    free(t->keep);
    free(t->correct);
    free(t->segc);
    free(t->vac);
    free(t->pend);
    free(t->ppool);
    free(t->ph);
    free(t->pl);
    free(t->ps);
    free(t->pq);
    free(t);
}

gyro_status gyro_hrm_trainer_new(gyro_hrm_model *m, const gyro_hrm_train_config *tc,
                                 gyro_hrm_trainer **out)
{
    *out = NULL;
    if (tc->max_batch < 1 || !(tc->lr > 0) || !(tc->ball_lr >= 0) || tc->clip_norm < 0 ||
        !(tc->q_weight >= 0))
        return gyro_error_set(GYRO_ERR_USAGE, "hrm: bad training configuration (batch %d, lr %g)",
                              tc->max_batch, tc->lr);
    gyro_hrm_trainer *t = calloc(1, sizeof *t);
    if (!t)
        return gyro_error_set(GYRO_ERR_NOMEM, "hrm: out of memory");
    t->m = m;
    t->tc = *tc;
    t->min_segments = 1;
    const gyro_hrm_config *cfg = &m->cfg;
    const size_t nmax = (size_t)tc->max_batch * cfg->n_cells;
    /* the look-ahead acts of gyro_hrm_train_batch are made at its first use */
    gyro_status st = gyro_hrm_acts_new(m, tc->max_batch, 1, tc->bptt, &t->acts);
    if (st != GYRO_OK) {
        gyro_hrm_trainer_free(t);
        return st;
    }
    t->grads = calloc(m->lay.n_params, sizeof(float));
    t->dlogits = malloc(nmax * cfg->n_classes * sizeof(float));
    t->dq = malloc(2 * (size_t)tc->max_batch * sizeof(float));
    t->qt = malloc(2 * (size_t)tc->max_batch * sizeof(float));
    t->zl = malloc(nmax * cfg->dim * sizeof(float));
    t->zh = malloc(nmax * cfg->dim * sizeof(float));
    t->tok = malloc(nmax * sizeof(int32_t));
    t->lab = malloc(nmax * sizeof(int));
    t->mmin = malloc((size_t)tc->max_batch * sizeof(int));
    t->keep = malloc((size_t)tc->max_batch * sizeof(int));
    t->correct = malloc((size_t)tc->max_batch * sizeof(int));
    t->segc = calloc((size_t)tc->max_batch, sizeof(int));
    t->vac = malloc((size_t)tc->max_batch * sizeof(int));
    t->pend = calloc((size_t)tc->max_batch, sizeof(int));
    t->pf_rows = cfg->q_pool == GYRO_HRM_QPOOL_CELLS ? cfg->n_cells : 1;
    t->ppool = malloc((size_t)tc->max_batch * t->pf_rows * cfg->dim * sizeof(float));
    t->ph = malloc((size_t)tc->max_batch * t->pf_rows * sizeof(float));
    t->pl = malloc((size_t)tc->max_batch * t->pf_rows * sizeof(float));
    t->ps = malloc((size_t)tc->max_batch * sizeof(float));
    t->pq = malloc((size_t)tc->max_batch * sizeof(float));
    if (t->vac)
        for (int b = 0; b < tc->max_batch; b++)
            t->vac[b] = 1;
    if (!t->segc || !t->vac || !t->pend || !t->ppool || !t->ph || !t->pl || !t->ps || !t->pq ||
        !t->correct || !t->grads || !t->dlogits || !t->dq || !t->qt || !t->zl || !t->zh || !t->tok || !t->lab || !t->mmin ||
        !t->keep) {
        gyro_hrm_trainer_free(t);
        return gyro_error_set(GYRO_ERR_NOMEM, "hrm: out of memory for the trainer");
    }
    gyro_hrm_tensor tab[GYRO_HRM_MAX_TENSORS];
    gyro_optim_tensor ot[GYRO_HRM_MAX_TENSORS];
    const int nt = gyro_hrm_tensor_table(cfg, tab);
    for (int i = 0; i < nt; i++) {
        ot[i] = (gyro_optim_tensor){tab[i].name, m->params + tab[i].offset,
                                    t->grads + tab[i].offset, (size_t)tab[i].rows,
                                    (size_t)tab[i].cols,
                                    tab[i].ball ? GYRO_OPTIM_MANIFOLD_POINCARE
                                                : GYRO_OPTIM_MANIFOLD_EUCLIDEAN,
                                    (float)cfg->curvature, 0};
    }
    gyro_optim_config oc = gyro_optim_config_default();
    oc.kind = GYRO_OPTIM_ADAM;
    oc.lr = tc->lr;
    oc.eps = 1e-8;
    oc.ball_lr = tc->ball_lr;
    oc.weight_decay = tc->weight_decay;
    oc.clip_norm = tc->clip_norm;
    st = gyro_optim_init(&t->opt, &oc, ot, nt);
    if (st != GYRO_OK) {
        gyro_hrm_trainer_free(t);
        return st;
    }
    *out = t;
    return GYRO_OK;
}

/* Argmax class of every cell of rows 0..B−1 into pred (B, n); returns in correct[b] whether
 * example b matches its labelled cells (label >= 0) exactly. */
static void hrm_predict(int *pred, int *correct, const float *logits, const int *lab, int B,
                        int n, int K)
{
    for (int b = 0; b < B; b++) {
        int ok = 1;
        for (int t = 0; t < n; t++) {
            const long r = (long)b * n + t;
            const float *z = logits + r * K;
            int best = 0;
            for (int k = 1; k < K; k++)
                if (z[k] > z[best])
                    best = k;
            if (pred)
                pred[r] = best;
            if (lab && lab[r] >= 0)
                ok &= best == lab[r];
        }
        if (correct)
            correct[b] = ok;
    }
}

static double sigmoid(double x)
{
    return 1.0 / (1.0 + exp(-x));
}

gyro_status gyro_hrm_train_batch(gyro_hrm_trainer *t, const int32_t *tokens, const int *labels,
                                 int B, gyro_rng *rng, gyro_hrm_batch_stats *stats)
{
    gyro_hrm_model *m = t->m;
    const gyro_hrm_config *cfg = &m->cfg;
    const int n = cfg->n_cells, K = cfg->n_classes, Mmax = cfg->m_max;
    memset(stats, 0, sizeof *stats);
    if (B < 1 || B > t->tc.max_batch)
        return gyro_error_set(GYRO_ERR_USAGE, "hrm: batch %d outside [1, %d]", B,
                              t->tc.max_batch);
    for (long r = 0; r < (long)B * n; r++)
        if (labels[r] < -1 || labels[r] >= K)
            return gyro_error_set(GYRO_ERR_DATA, "hrm: example %ld cell %ld: label %d outside "
                                  "[-1, %d)", r / n, r % n, labels[r], K);
    memcpy(t->tok, tokens, (size_t)B * n * sizeof(int32_t));
    memcpy(t->lab, labels, (size_t)B * n * sizeof(int));
    /* Q learning only when there is a decision to learn */
    const int use_q = t->tc.act && Mmax > 1;
    for (int b = 0; b < B; b++)
        t->mmin[b] = Mmax > 1 && gyro_rng_uniform(rng) < cfg->act_eps
                         ? 2 + (int)gyro_rng_below(rng, (uint32_t)(Mmax - 1))
                         : 1;
    gyro_hrm_carry_reset(m, t->acts, B);
    const gyro_hrm_mode mode = t->tc.bptt ? GYRO_HRM_BPTT : GYRO_HRM_ONESTEP;
    int Ba = B;
    double loss_sum = 0.0, ce_sum = 0.0;
    long blank = 0, right = 0;
    int *correct = t->correct;
    for (int seg = 1; Ba > 0; seg++) {
        gyro_status st = gyro_hrm_forward(m, t->acts, t->tok, Ba, mode);
        if (st != GYRO_OK)
            return st;
        hrm_predict(NULL, correct, gyro_hrm_logits(t->acts), t->lab, Ba, n, K);
        const float *q = gyro_hrm_qlogits(t->acts);
        if (use_q && !t->look) {
            st = gyro_hrm_acts_new(m, t->tc.max_batch, 0, 0, &t->look);
            if (st != GYRO_OK)
                return st;
        }
        if (use_q) {
            /* G_halt = 1{ŷ^m = y}; G_continue from the next segment's Q̂ (no gradient) */
            gyro_hrm_carry_get(t->acts, t->zl, t->zh, Ba);
            gyro_hrm_carry_set(t->look, t->zl, t->zh, Ba);
            st = gyro_hrm_forward(m, t->look, t->tok, Ba, GYRO_HRM_ONESTEP);
            if (st != GYRO_OK)
                return st;
            const float *qn = gyro_hrm_qlogits(t->look);
            for (int b = 0; b < Ba; b++) {
                const double qh = sigmoid(qn[2 * b]), qc = sigmoid(qn[2 * b + 1]);
                t->qt[2 * b] = (float)correct[b];
                t->qt[2 * b + 1] = (float)(seg >= Mmax ? qh : (qh > qc ? qh : qc));
            }
        }
        ce_sum += gyro_hrm_loss(NULL, NULL, t->acts, t->lab, NULL, Ba);
        loss_sum += gyro_hrm_loss(t->dlogits, t->dq, t->acts, t->lab, use_q ? t->qt : NULL, Ba);
        memset(t->grads, 0, m->lay.n_params * sizeof(float));
        gyro_hrm_backward(m, t->acts, t->grads, t->dlogits, use_q ? t->dq : NULL);
        /* examples leave the batch as they halt: a step on the few that remain is scaled by
         * their share of the batch, so that Adam's normalised step on a handful of examples
         * does not weigh as much as one on the whole batch */
        st = gyro_optim_step(&t->opt, (double)Ba / B);
        if (st != GYRO_OK)
            return st;
        stats->steps++;
        stats->segments += Ba;
        /* halting: M_max, or Q̂_halt > Q̂_continue once M_min segments ran */
        int kept = 0;
        for (int b = 0; b < Ba; b++) {
            const int halt = seg >= Mmax || (use_q && seg >= t->mmin[b] && q[2 * b] > q[2 * b + 1]);
            t->keep[b] = !halt;
            if (halt) {
                stats->solved += correct[b];
                /* labelled-cell accuracy of the example's last segment */
                for (int tt = 0; tt < n; tt++) {
                    const long r = (long)b * n + tt;
                    if (t->lab[r] >= 0) {
                        const float *z = gyro_hrm_logits(t->acts) + r * K;
                        int best = 0;
                        for (int k = 1; k < K; k++)
                            if (z[k] > z[best])
                                best = k;
                        blank++;
                        right += best == t->lab[r];
                    }
                }
            } else {
                if (kept != b) {
                    memmove(t->tok + (size_t)kept * n, t->tok + (size_t)b * n,
                            (size_t)n * sizeof(int32_t));
                    memmove(t->lab + (size_t)kept * n, t->lab + (size_t)b * n,
                            (size_t)n * sizeof(int));
                    t->mmin[kept] = t->mmin[b];
                }
                kept++;
            }
        }
        Ba = gyro_hrm_carry_keep(t->acts, t->keep, Ba);
        assert(Ba == kept);
    }
    stats->loss = stats->steps ? loss_sum / stats->steps : 0.0;
    stats->ce = stats->steps ? ce_sum / stats->steps : 0.0;
    stats->seg_acc = blank ? (double)right / blank : 1.0;
    return GYRO_OK;
}

void gyro_hrm_trainer_set_min_segments(gyro_hrm_trainer *t, int m)
{
    t->min_segments = m < 1 ? 1 : m;
}

int gyro_hrm_trainer_vacant(const gyro_hrm_trainer *t)
{
    int v = 0;
    for (int b = 0; b < t->tc.max_batch; b++)
        v += t->vac[b];
    return v;
}

const float *gyro_hrm_trainer_grads(const gyro_hrm_trainer *t)
{
    return t->grads;
}

/* BCE(σ(x), y) = max(x, 0) − x y + log(1 + e^{−|x|}) */
static double bce_logit(double x, double y)
{
    return (x > 0 ? x : 0.0) - x * y + log1p(exp(-fabs(x)));
}

gyro_status gyro_hrm_train_step(gyro_hrm_trainer *t, const int32_t *tokens, const int *labels,
                                int n_fresh, int *used, gyro_rng *rng, gyro_hrm_step_stats *stats)
{
    gyro_hrm_model *m = t->m;
    const gyro_hrm_config *cfg = &m->cfg;
    const int n = cfg->n_cells, K = cfg->n_classes, C = cfg->dim, Mmax = cfg->m_max;
    const int B = t->tc.max_batch;
    memset(stats, 0, sizeof *stats);
    *used = 0;
    const int need = gyro_hrm_trainer_vacant(t);
    if (n_fresh < need)
        return gyro_error_set(GYRO_ERR_USAGE, "hrm: %d vacant slots, %d fresh examples", need,
                              n_fresh);
    for (long r = 0; r < (long)need * n; r++) {
        if (labels[r] < -1 || labels[r] >= K)
            return gyro_error_set(GYRO_ERR_DATA, "hrm: example %ld cell %ld: label %d outside "
                                  "[-1, %d)", r / n, r % n, labels[r], K);
        if (tokens[r] < 0 || tokens[r] >= cfg->vocab)
            return gyro_error_set(GYRO_ERR_DATA, "hrm: example %ld cell %ld: token %d outside "
                                  "[0, %d)", r / n, r % n, (int)tokens[r], cfg->vocab);
    }
    const int use_q = t->tc.act && Mmax > 1;
    /* 1. fresh examples into the vacant slots */
    int f = 0;
    for (int b = 0; b < B; b++) {
        if (!t->vac[b])
            continue;
        memcpy(t->tok + (size_t)b * n, tokens + (size_t)f * n, (size_t)n * sizeof(int32_t));
        memcpy(t->lab + (size_t)b * n, labels + (size_t)f * n, (size_t)n * sizeof(int));
        gyro_hrm_carry_reset_row(m, t->acts, b);
        t->segc[b] = 0;
        t->pend[b] = 0;
        t->mmin[b] = Mmax > 1 && gyro_rng_uniform(rng) < cfg->act_eps
                         ? 2 + (int)gyro_rng_below(rng, (uint32_t)(Mmax - 1))
                         : 1;
        if (t->mmin[b] < t->min_segments)
            t->mmin[b] = t->min_segments;
        t->vac[b] = 0;
        f++;
    }
    *used = f;
    /* 2. one segment on every slot */
    const gyro_hrm_mode mode = t->tc.bptt ? GYRO_HRM_BPTT : GYRO_HRM_ONESTEP;
    gyro_status st = gyro_hrm_forward(m, t->acts, t->tok, B, mode);
    if (st != GYRO_OK)
        return st;
    int *correct = t->correct;
    hrm_predict(NULL, correct, gyro_hrm_logits(t->acts), t->lab, B, n, K);
    const float *q = gyro_hrm_qlogits(t->acts);
    /* 3. the loss: CE of the segment, BCE of Q_halt, BCE of the previous segment's Q_continue */
    const double wq = t->tc.q_weight;
    const double ce = gyro_hrm_loss(t->dlogits, t->dq, t->acts, t->lab, NULL, B);
    double qloss = 0.0;
    memset(t->grads, 0, m->lay.n_params * sizeof(float));
    const gyro_hrm_layout *L = &m->lay;
    for (int b = 0; b < B; b++) {
        t->segc[b]++;
        if (!use_q)
            continue;
        const double xh = q[2 * b];
        qloss += bce_logit(xh, correct[b]) / B;
        t->dq[2 * b] = (float)(wq * (sigmoid(xh) - correct[b]) / B);
        t->dq[2 * b + 1] = 0.0f;
        if (t->pend[b]) {
            const double qh = sigmoid(q[2 * b]), qc = sigmoid(q[2 * b + 1]);
            const double y = t->segc[b] >= Mmax ? qh : (qh > qc ? qh : qc);
            const double x = t->pq[b];
            qloss += bce_logit(x, y) / B;
            const double g = wq * (sigmoid(x) - y) / B;
            /* onto the continue row: MEAN ∂x/∂w = the pooled features; CELLS ∂x/∂h_t =
             * σ(−h_t) / (1 − e^s) (hrm.h), ∂h_t/∂w = the cell's features, ∂h_t/∂a = ℓ_t */
            const int R = t->pf_rows;
            const double scale = R > 1 ? hrm_qpool_cells_scale(t->ps[b]) : 1.0;
            float *gw = t->grads + L->q_w + (size_t)C;
            for (int r = 0; r < R; r++) {
                const size_t row = (size_t)b * R + r;
                const double gr = R > 1 ? g * scale / (1.0 + exp((double)t->ph[row])) : g;
                const float *pf = t->ppool + row * C;
                for (int k = 0; k < C; k++)
                    gw[k] += (float)(gr * pf[k]);
                t->grads[L->q_b + 1] += (float)gr;
                if (R > 1)
                    t->grads[L->q_a + 1] += (float)(gr * t->pl[row]);
            }
        }
    }
    gyro_hrm_backward(m, t->acts, t->grads, t->dlogits, use_q ? t->dq : NULL);
    st = gyro_optim_step(&t->opt, 1.0);
    if (st != GYRO_OK)
        return st;
    stats->loss = ce + wq * qloss;
    stats->ce = ce;
    stats->running = B;
    /* 4. halting; the continuing slots keep the Q-head inputs for their continue target */
    const int cells = t->pf_rows > 1;
    const float *feat = cells ? t->acts->lzh : t->acts->pool; /* (B, pf_rows, C) */
    for (int b = 0; b < B; b++) {
        const int halt = t->segc[b] >= Mmax ||
                         (use_q && t->segc[b] >= t->mmin[b] && q[2 * b] > q[2 * b + 1]);
        if (!halt) {
            t->pend[b] = use_q;
            const size_t R = (size_t)t->pf_rows;
            memcpy(t->ppool + (size_t)b * R * C, feat + (size_t)b * R * C,
                   R * C * sizeof(float));
            if (cells) {
                for (size_t r = 0; r < R; r++) {
                    t->ph[(size_t)b * R + r] = t->acts->qh[((size_t)b * R + r) * 2 + 1];
                    t->pl[(size_t)b * R + r] = t->acts->ql[(size_t)b * R + r];
                }
                t->ps[b] = t->acts->qs[2 * b + 1];
            }
            t->pq[b] = q[2 * b + 1];
            continue;
        }
        t->vac[b] = 1;
        t->pend[b] = 0;
        stats->halted++;
        stats->halted_segments += t->segc[b];
        stats->solved += correct[b];
        const float *lg = gyro_hrm_logits(t->acts);
        for (int tt = 0; tt < n; tt++) {
            const long r = (long)b * n + tt;
            if (t->lab[r] < 0)
                continue;
            const float *z = lg + r * K;
            int best = 0;
            for (int k = 1; k < K; k++)
                if (z[k] > z[best])
                    best = k;
            stats->cells++;
            stats->right += best == t->lab[r];
        }
    }
    return GYRO_OK;
}

/* ---- inference ------------------------------------------------------------------------------ */

gyro_status gyro_hrm_solve(const gyro_hrm_model *m, gyro_hrm_acts *a, const int32_t *tokens,
                           int B, int act, int *pred, int *segs, gyro_hrm_segment_fn on_segment,
                           void *ctx)
{
    const gyro_hrm_config *cfg = &m->cfg;
    const int n = cfg->n_cells, K = cfg->n_classes;
    if (B < 1 || B > a->max_batch)
        return gyro_error_set(GYRO_ERR_USAGE, "hrm: batch %d outside [1, %d]", B, a->max_batch);
    int32_t *tok = malloc((size_t)B * n * sizeof(int32_t));
    int *idx = malloc((size_t)B * sizeof(int)), *keep = malloc((size_t)B * sizeof(int));
    int *cur = malloc((size_t)B * n * sizeof(int));
    gyro_status st = GYRO_OK;
    if (!tok || !idx || !keep || !cur) {
        st = gyro_error_set(GYRO_ERR_NOMEM, "hrm: out of memory");
        goto done;
    }
    memcpy(tok, tokens, (size_t)B * n * sizeof(int32_t));
    for (int b = 0; b < B; b++)
        idx[b] = b;
    gyro_hrm_carry_reset(m, a, B);
    int Ba = B;
    for (int seg = 1; Ba > 0; seg++) {
        st = gyro_hrm_forward(m, a, tok, Ba, GYRO_HRM_ONESTEP);
        if (st != GYRO_OK)
            goto done;
        hrm_predict(cur, NULL, gyro_hrm_logits(a), NULL, Ba, n, K);
        if (on_segment)
            on_segment(ctx, seg, idx, cur, Ba);
        const float *q = gyro_hrm_qlogits(a);
        int kept = 0;
        for (int b = 0; b < Ba; b++) {
            const int halt = seg >= cfg->m_max || (act && q[2 * b] > q[2 * b + 1]);
            keep[b] = !halt;
            if (halt) {
                memcpy(pred + (size_t)idx[b] * n, cur + (size_t)b * n, (size_t)n * sizeof(int));
                if (segs)
                    segs[idx[b]] = seg;
            } else {
                if (kept != b) {
                    memmove(tok + (size_t)kept * n, tok + (size_t)b * n,
                            (size_t)n * sizeof(int32_t));
                    idx[kept] = idx[b];
                }
                kept++;
            }
        }
        Ba = gyro_hrm_carry_keep(a, keep, Ba);
    }
done:
    free(tok);
    free(idx);
    free(keep);
    free(cur);
    return st;
}

/* ---- model file ----------------------------------------------------------------------------- */

#define HRM_MAGIC "GYROHRM1"
#define HRM_VERSION 2u
#define HRM_HEADER_BYTES_V1 (4 * 11 + 8 * 3)
#define HRM_HEADER_BYTES (4 * 12 + 8 * 3)

/* Serialise the configuration field by field (no struct padding in the file; version 2). */
static void header_pack(unsigned char *buf, const gyro_hrm_config *c)
{
    size_t o = 0;
    int32_t i32[12] = {c->geometry, c->n_cells, c->vocab, c->n_classes, c->dim, c->n_heads,
                       c->head_dim, c->ffn_dim, c->n_low, c->n_high, c->m_max, c->q_pool};
    memcpy(buf + o, i32, sizeof i32);
    o += sizeof i32;
    memcpy(buf + o, &c->curvature, 8);
    o += 8;
    memcpy(buf + o, &c->act_eps, 8);
    o += 8;
    memcpy(buf + o, &c->init_seed, 8);
}

/* The header of format version `ver` (1 or 2; version 1 has no q_pool: MEAN). */
static void header_unpack(gyro_hrm_config *c, const unsigned char *buf, uint32_t ver)
{
    const int ni = ver >= 2 ? 12 : 11;
    int32_t i32[12];
    memcpy(i32, buf, (size_t)ni * 4);
    c->geometry = i32[0];
    c->n_cells = i32[1];
    c->vocab = i32[2];
    c->n_classes = i32[3];
    c->dim = i32[4];
    c->n_heads = i32[5];
    c->head_dim = i32[6];
    c->ffn_dim = i32[7];
    c->n_low = i32[8];
    c->n_high = i32[9];
    c->m_max = i32[10];
    c->q_pool = ver >= 2 ? i32[11] : GYRO_HRM_QPOOL_MEAN;
    const size_t o = (size_t)ni * 4;
    memcpy(&c->curvature, buf + o, 8);
    memcpy(&c->act_eps, buf + o + 8, 8);
    memcpy(&c->init_seed, buf + o + 16, 8);
}

gyro_status gyro_hrm_save(const gyro_hrm_model *m, const char *path)
{
    unsigned char head[16 + HRM_HEADER_BYTES];
    memcpy(head, HRM_MAGIC, 8);
    uint32_t ver = HRM_VERSION, hb = HRM_HEADER_BYTES;
    memcpy(head + 8, &ver, 4);
    memcpy(head + 12, &hb, 4);
    header_pack(head + 16, &m->cfg);
    const uint64_t n = m->lay.n_params;
    for (uint64_t i = 0; i < n; i++)   /* never write non-finite parameters */
        if (!isfinite(m->params[i]))
            return gyro_error_set(GYRO_ERR_NAN, "%s: parameter %llu is not finite; the file is left "
                                  "unchanged", path, (unsigned long long)i);
    uint32_t sum = gyro_crc32(0, head, sizeof head);
    sum = gyro_crc32(sum, &n, sizeof n);
    sum = gyro_crc32(sum, m->params, sizeof(float) * n);
    gyro_atomic_file f;
    gyro_status s = gyro_atomic_open(&f, path);
    if (s != GYRO_OK)
        return s;
    if (fwrite(head, 1, sizeof head, f.fp) != sizeof head || fwrite(&n, sizeof n, 1, f.fp) != 1 ||
        fwrite(m->params, sizeof(float), n, f.fp) != n || fwrite(&sum, sizeof sum, 1, f.fp) != 1) {
        gyro_atomic_abort(&f);
        return gyro_error_set(GYRO_ERR_IO, "%s: write failed: %s", path, strerror(errno));
    }
    return gyro_atomic_commit(&f);
}

gyro_status gyro_hrm_load(const char *path, gyro_hrm_model **out)
{
    *out = NULL;
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return gyro_error_set(GYRO_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    unsigned char head[16 + HRM_HEADER_BYTES];
    gyro_status s = GYRO_OK;
    gyro_hrm_model *m = NULL;
    uint64_t n = 0;
    uint32_t sum, stored = 0;
    uint32_t ver, hb;
    gyro_hrm_config c;
    if (fread(head, 1, 16, fp) != 16 || memcmp(head, HRM_MAGIC, 8) != 0) {
        s = gyro_error_set(GYRO_ERR_FORMAT, "%s: not a gyro HRM model file (bad magic)", path);
        goto done;
    }
    memcpy(&ver, head + 8, 4);
    memcpy(&hb, head + 12, 4);
    if (ver > HRM_VERSION) {
        s = gyro_error_set(GYRO_ERR_VERSION, "%s: HRM model format version %u is newer than this "
                           "gyro's (%u); upgrade gyro", path, ver, HRM_VERSION);
        goto done;
    }
    if (!(ver == 2 && hb == HRM_HEADER_BYTES) && !(ver == 1 && hb == HRM_HEADER_BYTES_V1)) {
        s = gyro_error_set(GYRO_ERR_FORMAT, "%s: unsupported HRM model format version %u", path,
                           ver);
        goto done;
    }
    if (fread(head + 16, 1, hb, fp) != hb || fread(&n, sizeof n, 1, fp) != 1) {
        s = gyro_error_set(GYRO_ERR_FORMAT, "%s: truncated HRM model header", path);
        goto done;
    }
    memset(&c, 0, sizeof c);
    header_unpack(&c, head + 16, ver);
    if (gyro_hrm_config_validate(&c) != GYRO_OK) {
        s = gyro_error_prefix(GYRO_ERR_FORMAT, "%s: implausible HRM configuration", path);
        goto done;
    }
    struct stat sb;   /* the sizes the header claims must be what the file holds, before allocating */
    long at = ftell(fp);
    if (fstat(fileno(fp), &sb) != 0 || at < 0 || n > (uint64_t)sb.st_size ||
        (uint64_t)sb.st_size - (uint64_t)at != n * sizeof(float) + sizeof stored) {
        s = gyro_error_set(GYRO_ERR_FORMAT, "%s: the header claims %llu parameters, the file holds "
                           "%lld bytes after it (truncated or corrupt HRM model file)", path,
                           (unsigned long long)n, (long long)sb.st_size - (long long)at);
        goto done;
    }
    gyro_hrm_layout lay; /* the configuration's size, before allocating (and initialising) it */
    gyro_hrm_layout_init(&lay, &c);
    if (n != lay.n_params) {
        s = gyro_error_set(GYRO_ERR_FORMAT, "%s: %llu parameters stored, the configuration has "
                           "%zu", path, (unsigned long long)n, lay.n_params);
        goto done;
    }
    s = gyro_hrm_new(&c, 0, &m);
    if (s != GYRO_OK)
        goto done;
    if (fread(m->params, sizeof(float), n, fp) != n || fread(&stored, sizeof stored, 1, fp) != 1) {
        s = gyro_error_set(GYRO_ERR_FORMAT, "%s: truncated HRM parameters", path);
        goto done;
    }
    sum = gyro_crc32(0, head, 16 + (size_t)hb);
    sum = gyro_crc32(sum, &n, sizeof n);
    sum = gyro_crc32(sum, m->params, sizeof(float) * n);
    if (sum != stored) {
        s = gyro_error_set(GYRO_ERR_FORMAT, "%s: checksum mismatch (corrupt HRM model file)", path);
        goto done;
    }
    for (size_t i = 0; i < n; i++)
        if (!isfinite(m->params[i])) {
            s = gyro_error_set(GYRO_ERR_FORMAT, "%s: parameter %zu is not finite", path, i);
            goto done;
        }
done:
    fclose(fp);
    if (s != GYRO_OK) {
        gyro_hrm_free(m);
        return s;
    }
    *out = m;
    return GYRO_OK;
}

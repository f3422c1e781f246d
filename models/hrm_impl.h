/* hrm_impl.h — internal template: the one implementation of the HRM's model, forward, backward
 * and loss (hrm.h), instantiated once per precision by hrm.c (no include guard on purpose). The
 * including file defines
 *   T       storage type (float or double)
 *   S(name) name with the precision suffix (_f32 / _f64): file-local helpers and the layer
 *           kernels of that precision (S(gyro_attention_forward) = gyro_attention_forward_f32)
 *   P(name) public name: name for float32, name_f64 for float64
 *   MODEL, ACTS   the precision's model and activation types
 *
 * A block cache holds every activation of one application of a transformer block (f_L or f_H)
 * to Nmax = max_batch · n rows: (Nmax, width) arrays carved in the order of HRM_CACHE_FIELDS.
 * The gradient cache is carved identically, so activation p.x has its gradient at q.x. In the
 * one-step mode every step of a segment reuses cache 0 of its module (the last step's
 * activations are what is left); in BPTT step i of f_L has cache i−1 and H-cycle k cache k−1.
 */

/* Fields of a block cache with their width in values per row (the macro HRM_WIDTHS defines
 * C, A3 = 3A, HN = H·n (attention probabilities), A, RRW and RBW (hyperbolic merge caches, 0 in
 * Euclidean space) and F). */
#ifndef HRM_CACHE_FIELDS
#define HRM_CACHE_FIELDS(X)                                                                    \
    X(ia, C) X(ib, C) X(s, C) X(in, C) X(u, C) X(qkvy, A3) X(qkvz, A3) X(qkvt, A3) X(att, HN)   \
    X(o, A) X(rr, RRW) X(rb, RBW) X(a, C) X(la, C) X(ts1, C) X(res1, C) X(lnu1, C) X(lnv1, C)  \
    X(lnm1, 1) X(lnr1, 1) X(x1, C) X(u2, C) X(y2, F) X(e2, F) X(h, F) X(g0, F) X(g1, F)        \
    X(y3, C) X(e3, C) X(f, C) X(lf, C) X(ts2, C) X(res2, C) X(lnu2, C) X(lnv2, C) X(lnm2, 1)   \
    X(lnr2, 1) X(out, C)
#define HRM_WIDTHS(cfg)                                                                        \
    const long C = (cfg)->dim, A = (long)(cfg)->n_heads * (cfg)->head_dim, A3 = 3 * A;        \
    const long HN = (long)(cfg)->n_heads * (cfg)->n_cells, F = (cfg)->ffn_dim;                 \
    const long RRW = (cfg)->geometry == GYRO_GEO_HYPERBOLIC ? (long)(cfg)->n_heads * C : 0;    \
    const long RBW = 2 * RRW;                                                                  \
    (void)C; (void)A; (void)A3; (void)HN; (void)F; (void)RRW; (void)RBW;
#endif

typedef struct S(hrm_cache) {
#define HRM_DECLARE(name, w) T *name;
    HRM_CACHE_FIELDS(HRM_DECLARE)
#undef HRM_DECLARE
} S(hrm_cache);

struct P(gyro_hrm_acts) {
    gyro_hrm_config cfg;
    int max_batch, training, bptt;
    int n_lc, n_hc;        /* block caches of f_L and f_H */
    int B;                 /* batch of the last forward (0 before) */
    int mode;              /* gyro_hrm_mode of the last forward */
    long nmax;             /* max_batch · n */
    size_t cache_values;   /* values per cache (nmax rows) */
    size_t scratch_values;
    size_t bytes;
    T *memory;             /* everything below (one allocation) */
    T *zl, *zh;            /* (nmax, C) the carry */
    T *xt;                 /* (nmax, C) x̃ = f_I(x) */
    T *lcache;             /* (n_lc, cache_values) */
    T *hcache;             /* (n_hc, cache_values) */
    T *gcache;             /* (cache_values) gradient cache (training) */
    T *logits;             /* (nmax, K) */
    T *lzh;                /* (nmax, C) log0 z_H */
    T *pool;               /* (max_batch, C) mean_t log0 z_H (q_pool MEAN) */
    T *qh;                 /* (nmax, 2) per-cell Q logits h_t (q_pool CELLS) */
    T *ql;                 /* (nmax) the cells' confidence ℓ_t (q_pool CELLS) */
    T *dlg;                /* (nmax, K) dlogits plus the Q head's part through ℓ (training) */
    T *qs;                 /* (max_batch, 2) s = Σ_t log σ(h_t) (q_pool CELLS) */
    T *q;                  /* (max_batch, 2) Q logits */
    T *dzl, *dzh, *dtmp;   /* (nmax, C) each: carry gradients (training) */
    T *dxt, *dlzh;         /* (nmax, C) */
    T *dpool;              /* (max_batch, C) */
    T *scratch;            /* (scratch_values) */
    int32_t *tokens;       /* (nmax) tokens of the last forward */
    int *len;              /* (max_batch) all n: the attention's lengths */
};

/* The cache at `base` (nmax rows) as named pointers. */
static void S(hrm_cache_ptrs)(S(hrm_cache) *p, T *base, const gyro_hrm_config *cfg, long nmax)
{
    HRM_WIDTHS(cfg)
    size_t off = 0;
#define HRM_CARVE(name, w) p->name = base + off; off += (size_t)nmax * (size_t)(w);
    HRM_CACHE_FIELDS(HRM_CARVE)
#undef HRM_CARVE
}

/* Zero the first Nr rows of every array of a (gradient) cache. */
static void S(hrm_cache_zero)(const S(hrm_cache) *q, const gyro_hrm_config *cfg, long Nr)
{
    HRM_WIDTHS(cfg)
#define HRM_ZERO(name, w) if ((w) > 0) memset(q->name, 0, (size_t)(Nr * (w)) * sizeof(T));
    HRM_CACHE_FIELDS(HRM_ZERO)
#undef HRM_ZERO
}

/* ---- parameters and the model --------------------------------------------------------------- */

static void S(hrm_init_params)(T *p, const gyro_hrm_config *cfg, const gyro_hrm_layout *L,
                               uint64_t seed)
{
    const int geo = cfg->geometry;
    const T c = (T)cfg->curvature;
    gyro_rng rng;
    gyro_rng_seed(&rng, seed);
    gyro_hrm_tensor tab[GYRO_HRM_MAX_TENSORS];
    const int nt = gyro_hrm_tensor_table(cfg, tab);
    const int C = cfg->dim;
    /* embedding scale: the states z_L, z_H are LayerNorm outputs, whose coordinates have unit
     * variance in Euclidean space (tangent norm ≈ 1 in the ball, gain 1/√C); x̃ is added to
     * them, so its coordinates start at the same scale (Euclidean sd 1 — the HRM paper
     * multiplies its embeddings by √C for the same reason; hyperbolic sd 1/√C) */
    const double esd = cfg->geometry == GYRO_GEO_HYPERBOLIC ? 1.0 / sqrt((double)C) : 1.0;
    for (int i = 0; i < nt; i++) {
        T *w = p + tab[i].offset;
        const size_t size = (size_t)tab[i].rows * tab[i].cols;
        const char *nm = tab[i].name;
        const char *dot = strchr(nm, '.');
        const char *leaf = dot ? dot + 1 : nm;
        double *u = !strcmp(nm, "pos") && cfg->n_cells == 81
                        ? malloc(27 * (size_t)C * sizeof(double)) : NULL;
        if (u) {
            /* a 9×9 grid: cell t starts at exp0((r_row + c_col + b_box)/√3) of 27 random
             * tangent vectors N(0, esd²), so cells that share a row, column or box start close;
             * the 81 rows are free parameters from there on */
            const double sd = esd;
            for (int j = 0; j < 27 * C; j++)
                u[j] = sd * gyro_rng_normal(&rng);
            for (int t = 0; t < 81; t++) {
                const int r = t / 9, cl = t % 9, bx = 3 * (r / 3) + cl / 3;
                for (int k = 0; k < C; k++)
                    w[(size_t)t * C + k] = (T)((u[r * C + k] + u[(9 + cl) * C + k] +
                                                u[(18 + bx) * C + k]) / sqrt(3.0));
            }
            S(gyro_geo_exp0)(w, C, w, C, geo, c, tab[i].rows, C);
            free(u);
        } else if (!strcmp(nm, "wte") || !strcmp(nm, "pos")) {
            const double sd = esd;
            for (size_t j = 0; j < size; j++)
                w[j] = (T)(sd * gyro_rng_normal(&rng));
            S(gyro_geo_exp0)(w, C, w, C, geo, c, tab[i].rows, C);
        } else if (!strcmp(leaf, "ln1g") || !strcmp(leaf, "ln2g")) {
            const double g0 = geo == GYRO_GEO_HYPERBOLIC ? 1.0 / sqrt((double)C) : 1.0;
            for (size_t j = 0; j < size; j++)
                w[j] = (T)g0;
        } else if (!strcmp(leaf, "ln1b") || !strcmp(leaf, "ln2b") || !strcmp(leaf, "fcb") ||
                   !strcmp(leaf, "fcprojb") || !strcmp(nm, "out_p") || !strcmp(nm, "q_w")) {
            memset(w, 0, size * sizeof(T)); /* Euclidean zero = the ball's origin */
        } else if (!strcmp(nm, "q_b")) {
            /* MEAN: Q̂ ≈ 0.007 at the start (the HRM paper's initialisation); CELLS: 0, with
             * a = 1 σ(h_t) is the cell's top probability */
            w[0] = w[1] = (T)(cfg->q_pool == GYRO_HRM_QPOOL_CELLS ? 0.0 : -5.0);
        } else if (!strcmp(nm, "q_a")) {
            w[0] = w[1] = (T)1.0;
        } else {
            /* matrices (rows = outputs, cols = inputs): Xavier-uniform */
            const double lim = sqrt(6.0 / (double)(tab[i].rows + tab[i].cols));
            for (size_t j = 0; j < size; j++)
                w[j] = (T)(lim * (2.0 * gyro_rng_uniform(&rng) - 1.0));
        }
    }
    (void)L;
}

/* z_L^0, z_H^0 (2, C): fixed random states, exp0 of N(0, s²) coordinates with s = 1 (Euclidean,
 * the scale of a LayerNorm output) or 1/√C (hyperbolic, the scale of the hyperbolic LayerNorm's
 * initial gain). */
static void S(hrm_init_states)(T *z0, const gyro_hrm_config *cfg)
{
    gyro_rng rng;
    gyro_rng_seed(&rng, cfg->init_seed ^ 0x5a17e5eedULL);
    const int C = cfg->dim;
    const double s = cfg->geometry == GYRO_GEO_HYPERBOLIC ? 1.0 / sqrt((double)C) : 1.0;
    for (int i = 0; i < 2 * C; i++)
        z0[i] = (T)(s * gyro_rng_normal(&rng));
    S(gyro_geo_exp0)(z0, C, z0, C, cfg->geometry, (T)cfg->curvature, 2, C);
}

void P(gyro_hrm_free)(MODEL *m)
{
    if (!m)
        return;
    free(m->params);
    free(m->z0);
    free(m);
}

gyro_status P(gyro_hrm_new)(const gyro_hrm_config *cfg, uint64_t seed, MODEL **out)
{
    *out = NULL;
    gyro_status st = gyro_hrm_config_validate(cfg);
    if (st != GYRO_OK)
        return st;
    MODEL *m = calloc(1, sizeof *m);
    if (!m)
        return gyro_error_set(GYRO_ERR_NOMEM, "hrm: out of memory");
    m->cfg = *cfg;
    gyro_hrm_layout_init(&m->lay, cfg);
    m->params = calloc(m->lay.n_params, sizeof(T));
    m->z0 = calloc(2 * (size_t)cfg->dim, sizeof(T));
    if (!m->params || !m->z0) {
        const size_t np = m->lay.n_params;
        P(gyro_hrm_free)(m);
        return gyro_error_set(GYRO_ERR_NOMEM, "hrm: cannot allocate %zu parameters", np);
    }
    S(hrm_init_params)(m->params, cfg, &m->lay, seed);
    S(hrm_init_states)(m->z0, cfg);
    *out = m;
    return GYRO_OK;
}

/* ---- activations ---------------------------------------------------------------------------- */

void P(gyro_hrm_acts_free)(ACTS *a)
{
    if (!a)
        return;
    free(a->memory);
    free(a->tokens);
    free(a->len);
    free(a);
}

gyro_status P(gyro_hrm_acts_new)(const MODEL *m, int max_batch, int training, int bptt,
                                 ACTS **out)
{
    *out = NULL;
    const gyro_hrm_config *cfg = &m->cfg;
    if (max_batch < 1 || max_batch > (1 << 20))
        return gyro_error_set(GYRO_ERR_USAGE, "hrm: max_batch %d outside [1, %d]", max_batch,
                              1 << 20);
    ACTS *a = calloc(1, sizeof *a);
    if (!a)
        return gyro_error_set(GYRO_ERR_NOMEM, "hrm: out of memory");
    HRM_WIDTHS(cfg)
    a->cfg = *cfg;
    a->max_batch = max_batch;
    a->training = training != 0;
    a->bptt = bptt != 0;
    a->n_lc = a->bptt ? cfg->n_low * cfg->n_high : 1;
    a->n_hc = a->bptt ? cfg->n_high : 1;
    const long nmax = (long)max_batch * cfg->n_cells;
    a->nmax = nmax;
    size_t w = 0;
#define HRM_WSUM(name, wd) w += (size_t)(wd);
    HRM_CACHE_FIELDS(HRM_WSUM)
#undef HRM_WSUM
    a->cache_values = w * (size_t)nmax;
    long wide = A3 > F ? A3 : F;
    if (C > wide)
        wide = C;
    long sc = 5 * C > 2 * wide ? 5 * C : 2 * wide;
    if ((long)cfg->n_cells * cfg->n_cells > sc)
        sc = (long)cfg->n_cells * cfg->n_cells;
    a->scratch_values = (size_t)sc;
    const size_t NC = (size_t)nmax * C, BC = (size_t)max_batch * C;
    size_t total = 3 * NC                                          /* zl, zh, xt */
                   + (size_t)(a->n_lc + a->n_hc) * a->cache_values /* forward caches */
                   + (size_t)nmax * cfg->n_classes + NC + BC + 2 * (size_t)max_batch
                   + 3 * (size_t)nmax + 2 * (size_t)max_batch + a->scratch_values;
    if (a->training)
        total += a->cache_values + 5 * NC + BC + (size_t)nmax * cfg->n_classes;
    a->memory = calloc(total, sizeof(T));
    a->tokens = calloc((size_t)nmax, sizeof(int32_t));
    a->len = malloc((size_t)max_batch * sizeof(int));
    if (!a->memory || !a->tokens || !a->len) {
        P(gyro_hrm_acts_free)(a);
        return gyro_error_set(GYRO_ERR_NOMEM, "hrm: cannot allocate %zu MiB of activations",
                              total * sizeof(T) >> 20);
    }
    a->bytes = total * sizeof(T) + (size_t)nmax * sizeof(int32_t) + (size_t)max_batch * sizeof(int);
    for (int b = 0; b < max_batch; b++)
        a->len[b] = cfg->n_cells;
    T *p = a->memory;
    a->zl = p; p += NC;
    a->zh = p; p += NC;
    a->xt = p; p += NC;
    a->lcache = p; p += (size_t)a->n_lc * a->cache_values;
    a->hcache = p; p += (size_t)a->n_hc * a->cache_values;
    a->logits = p; p += (size_t)nmax * cfg->n_classes;
    a->lzh = p; p += NC;
    a->pool = p; p += BC;
    a->qh = p; p += 2 * (size_t)nmax;
    a->ql = p; p += (size_t)nmax;
    a->qs = p; p += 2 * (size_t)max_batch;
    a->q = p; p += 2 * (size_t)max_batch;
    a->scratch = p; p += a->scratch_values;
    if (a->training) {
        a->gcache = p; p += a->cache_values;
        a->dzl = p; p += NC;
        a->dzh = p; p += NC;
        a->dtmp = p; p += NC;
        a->dxt = p; p += NC;
        a->dlzh = p; p += NC;
        a->dpool = p; p += BC;
        a->dlg = p; p += (size_t)nmax * cfg->n_classes;
    }
    *out = a;
    return GYRO_OK;
}

void P(gyro_hrm_carry_reset)(const MODEL *m, ACTS *a, int B)
{
    const int C = m->cfg.dim;
    const long rows = (long)B * m->cfg.n_cells;
    for (long r = 0; r < rows; r++) {
        memcpy(a->zl + r * C, m->z0, (size_t)C * sizeof(T));
        memcpy(a->zh + r * C, m->z0 + C, (size_t)C * sizeof(T));
    }
}

void P(gyro_hrm_carry_reset_row)(const MODEL *m, ACTS *a, int b)
{
    const int C = m->cfg.dim, n = m->cfg.n_cells;
    for (long r = (long)b * n; r < (long)(b + 1) * n; r++) {
        memcpy(a->zl + r * C, m->z0, (size_t)C * sizeof(T));
        memcpy(a->zh + r * C, m->z0 + C, (size_t)C * sizeof(T));
    }
}

void P(gyro_hrm_carry_get)(const ACTS *a, T *zl, T *zh, int B)
{
    const size_t n = (size_t)B * a->cfg.n_cells * a->cfg.dim;
    memcpy(zl, a->zl, n * sizeof(T));
    memcpy(zh, a->zh, n * sizeof(T));
}

void P(gyro_hrm_carry_set)(ACTS *a, const T *zl, const T *zh, int B)
{
    const size_t n = (size_t)B * a->cfg.n_cells * a->cfg.dim;
    memcpy(a->zl, zl, n * sizeof(T));
    memcpy(a->zh, zh, n * sizeof(T));
}

/* ---- one transformer block ------------------------------------------------------------------ */

/* The residual-and-LayerNorm sublayer of models/transformer.h (tangent residual, LayerNorm)
 * after attention (which = 1) or after the feed-forward block (which = 2), over cache p. */
static P(gyro_tf_sublayer) S(hrm_sublayer)(const S(hrm_cache) *p, int which)
{
    if (which == 1)
        return (P(gyro_tf_sublayer)){NULL, p->u, p->a, p->la, p->ts1, p->res1,
                                     p->lnu1, p->lnv1, p->lnm1, p->lnr1, p->x1};
    return (P(gyro_tf_sublayer)){NULL, p->u2, p->f, p->lf, p->ts2, p->res2,
                                 p->lnu2, p->lnv2, p->lnm2, p->lnr2, p->out};
}

/* out = block(in), in = (za ⊕ zb) ⊕ x (x NULL: in = za ⊕ zb); every activation into cache p.
 * za, zb, x: (Nr, C). The formulas are in hrm.h. */
static void S(hrm_block_forward)(const S(hrm_cache) *p, const T *w, const gyro_hrm_block_layout *bl,
                                 const T *za, const T *zb, const T *x, const int *len,
                                 const gyro_hrm_config *cfg, int B)
{
    const int geo = cfg->geometry, n = cfg->n_cells;
    const T c = (T)cfg->curvature;
    const int C = cfg->dim, H = cfg->n_heads, D = cfg->head_dim, A = H * D, F = cfg->ffn_dim;
    const int Nr = B * n;
    const size_t NC = (size_t)Nr * C;
    memcpy(p->ia, za, NC * sizeof(T));
    memcpy(p->ib, zb, NC * sizeof(T));
    S(gyro_geo_add)(p->s, p->ia, p->ib, C, geo, c, Nr, C);
    if (x)
        S(gyro_geo_add)(p->in, p->s, x, C, geo, c, Nr, C);
    else
        memcpy(p->in, p->s, NC * sizeof(T));
    /* attention: q, k, v = per-head log0 of W_qkv ⊗ in = exp0(W_qkv log0 in) */
    S(gyro_geo_log0)(p->u, C, p->in, C, geo, c, Nr, C);
    S(gyro_linear_forward)(p->qkvy, 3 * A, p->u, C, w + bl->qkvw, C, Nr, C, 3 * A);
    S(gyro_geo_exp0)(p->qkvz, 3 * A, p->qkvy, 3 * A, geo, c, Nr, 3 * A);
    S(gyro_geo_log0)(p->qkvt, D, p->qkvz, D, geo, c, Nr * 3 * H, D);
    S(gyro_attention_forward)(p->o, p->att, p->qkvt, len, B, n, H, D);
    S(gyro_merge_forward)(p->a, p->rr, p->rb, p->o, w + bl->attprojw, geo, c, Nr, H, D, C);
    /* tangent residual exp0(u + log0 a), then exp0(LN(log0 ·)) */
    const P(gyro_tf_sublayer) s1 = S(hrm_sublayer)(p, 1);
    P(gyro_tf_sublayer_forward)(&s1, w + bl->ln1g, w + bl->ln1b, GYRO_TF_RESIDUAL_TANGENT, 1, geo, c,
                                Nr, C);
    /* feed-forward M2 ⊗ ReLU⊗(M1 ⊗ x1 ⊕ b1) ⊕ b2 */
    S(gyro_geo_log0)(p->u2, C, p->x1, C, geo, c, Nr, C);
    S(gyro_linear_forward)(p->y2, F, p->u2, C, w + bl->fcw, C, Nr, C, F);
    S(gyro_geo_exp0)(p->e2, F, p->y2, F, geo, c, Nr, F);
    S(gyro_geo_add)(p->h, p->e2, w + bl->fcb, 0, geo, c, Nr, F);
    S(gyro_geo_log0)(p->g0, F, p->h, F, geo, c, Nr, F);
    S(gyro_relu_forward)(p->g1, p->g0, (long)Nr * F);
    S(gyro_linear_forward)(p->y3, C, p->g1, F, w + bl->fcprojw, F, Nr, F, C);
    S(gyro_geo_exp0)(p->e3, C, p->y3, C, geo, c, Nr, C);
    S(gyro_geo_add)(p->f, p->e3, w + bl->fcprojb, 0, geo, c, Nr, C);
    /* tangent residual and LayerNorm */
    const P(gyro_tf_sublayer) s2 = S(hrm_sublayer)(p, 2);
    P(gyro_tf_sublayer_forward)(&s2, w + bl->ln2g, w + bl->ln2b, GYRO_TF_RESIDUAL_TANGENT, 1, geo, c,
                                Nr, C);
}

/* Backward of hrm_block_forward (activations p, gradient cache q, zeroed here): from dout
 * (Nr, C) ACCUMULATE into dza, dzb, dx (each may be NULL) and the block's parameter gradients
 * gw (layout bl). */
static void S(hrm_block_backward)(T *dza, T *dzb, T *dx, T *gw, const S(hrm_cache) *q,
                                  const S(hrm_cache) *p, const T *dout, const T *w, const T *x,
                                  const gyro_hrm_block_layout *bl, T *scr, const int *len,
                                  const gyro_hrm_config *cfg, int B)
{
    const int geo = cfg->geometry, n = cfg->n_cells;
    const T c = (T)cfg->curvature;
    const int C = cfg->dim, H = cfg->n_heads, D = cfg->head_dim, A = H * D, F = cfg->ffn_dim;
    const int Nr = B * n;
    const size_t NC = (size_t)Nr * C;
    S(hrm_cache_zero)(q, cfg, Nr);
    memcpy(q->out, dout, NC * sizeof(T));
    /* LayerNorm and tangent residual after the feed-forward block */
    const P(gyro_tf_sublayer) ps2 = S(hrm_sublayer)(p, 2), qs2 = S(hrm_sublayer)(q, 2);
    P(gyro_tf_sublayer_backward)(&qs2, gw + bl->ln2g, gw + bl->ln2b, &ps2, w + bl->ln2g, scr,
                                 GYRO_TF_RESIDUAL_TANGENT, 1, geo, c, Nr, C);
    /* feed-forward */
    S(gyro_geo_add_backward)(q->e3, gw + bl->fcprojb, scr, q->f, p->f, p->e3, w + bl->fcprojb, 0,
                             geo, c, Nr, C);
    S(gyro_geo_exp0_backward)(q->y3, C, scr, q->e3, C, p->e3, C, p->y3, C, geo, c, Nr, C);
    S(gyro_linear_backward)(q->g1, F, gw + bl->fcprojw, F, q->y3, C, p->g1, F, w + bl->fcprojw, F,
                            Nr, F, C);
    S(gyro_relu_backward)(q->g0, q->g1, p->g0, (long)Nr * F);
    S(gyro_geo_log0_backward)(q->h, F, q->g0, F, p->h, F, geo, c, Nr, F);
    S(gyro_geo_add_backward)(q->e2, gw + bl->fcb, scr, q->h, p->h, p->e2, w + bl->fcb, 0, geo, c,
                             Nr, F);
    S(gyro_geo_exp0_backward)(q->y2, F, scr, q->e2, F, p->e2, F, p->y2, F, geo, c, Nr, F);
    S(gyro_linear_backward)(q->u2, C, gw + bl->fcw, C, q->y2, F, p->u2, C, w + bl->fcw, C, Nr, C,
                            F);
    S(gyro_geo_log0_backward)(q->x1, C, q->u2, C, p->x1, C, geo, c, Nr, C);
    /* LayerNorm and tangent residual after attention */
    const P(gyro_tf_sublayer) ps1 = S(hrm_sublayer)(p, 1), qs1 = S(hrm_sublayer)(q, 1);
    P(gyro_tf_sublayer_backward)(&qs1, gw + bl->ln1g, gw + bl->ln1b, &ps1, w + bl->ln1g, scr,
                                 GYRO_TF_RESIDUAL_TANGENT, 1, geo, c, Nr, C);
    /* attention */
    S(gyro_merge_backward)(q->o, gw + bl->attprojw, q->rr, scr, q->a, p->o, p->rr, p->rb,
                           w + bl->attprojw, geo, c, Nr, H, D, C);
    S(gyro_attention_backward)(q->qkvt, scr, q->o, p->qkvt, p->att, len, B, n, H, D);
    S(gyro_geo_log0_backward)(q->qkvz, D, q->qkvt, D, p->qkvz, D, geo, c, Nr * 3 * H, D);
    S(gyro_geo_exp0_backward)(q->qkvy, 3 * A, scr, q->qkvz, 3 * A, p->qkvz, 3 * A, p->qkvy, 3 * A,
                              geo, c, Nr, 3 * A);
    S(gyro_linear_backward)(q->u, C, gw + bl->qkvw, C, q->qkvy, 3 * A, p->u, C, w + bl->qkvw, C, Nr,
                            C, 3 * A);
    S(gyro_geo_log0_backward)(q->in, C, q->u, C, p->in, C, geo, c, Nr, C);
    /* the inputs */
    if (x) {
        S(gyro_geo_add_backward)(q->s, dx, scr, q->in, p->in, p->s, x, C, geo, c, Nr, C);
    } else {
        for (size_t i = 0; i < NC; i++)
            q->s[i] += q->in[i];
    }
    if (dza || dzb)
        S(gyro_geo_add_backward)(dza, dzb, scr, q->s, p->s, p->ia, p->ib, C, geo, c, Nr, C);
}

/* ---- forward -------------------------------------------------------------------------------- */

const T *P(gyro_hrm_logits)(const ACTS *a)
{
    return a->logits;
}

const T *P(gyro_hrm_qlogits)(const ACTS *a)
{
    return a->q;
}

/* The confidence of a cell's prediction (hrm.h, q_pool CELLS): ℓ = logit(p̂_max) =
 * −log r, r = Σ_{k≠m} e^{z_k − z_m} for the logits z (K) and their argmax m (*m_out), r floored at
 * 1e-30 (ℓ ≤ 69; *r_out = 0 there, ℓ then constant). ∂ℓ/∂z_m = 1 and ∂ℓ/∂z_k = −e^{z_k − z_m} / r
 * for k ≠ m (hrm_cell_confidence_backward). */
static double S(hrm_cell_confidence)(const T *z, int K, int *m_out, double *r_out)
{
    int m = 0;
    for (int k = 1; k < K; k++)
        if (z[k] > z[m])
            m = k;
    double r = 0.0;
    for (int k = 0; k < K; k++)
        if (k != m)
            r += exp((double)z[k] - z[m]);
    *m_out = m;
    *r_out = r >= 1e-30 ? r : 0.0;
    return -log(r >= 1e-30 ? r : 1e-30);
}

/* dz (K) += dℓ · ∂ℓ/∂z for the logits z of one cell. */
static void S(hrm_cell_confidence_backward)(T *dz, const T *z, int K, double dl)
{
    int m;
    double r;
    S(hrm_cell_confidence)(z, K, &m, &r);
    if (r == 0.0)
        return;
    dz[m] += (T)dl;
    for (int k = 0; k < K; k++)
        if (k != m)
            dz[k] -= (T)(dl * exp((double)z[k] - z[m]) / r);
}

gyro_status P(gyro_hrm_forward)(const MODEL *m, ACTS *a, const int32_t *tokens, int B,
                                gyro_hrm_mode mode)
{
    const gyro_hrm_config *cfg = &m->cfg;
    const int n = cfg->n_cells, C = cfg->dim, K = cfg->n_classes, V = cfg->vocab;
    if (B < 1 || B > a->max_batch)
        return gyro_error_set(GYRO_ERR_USAGE, "hrm: batch %d outside [1, %d]", B, a->max_batch);
    if (mode == GYRO_HRM_BPTT && !a->bptt)
        return gyro_error_set(GYRO_ERR_USAGE, "hrm: BPTT needs activations made with bptt");
    const long Nr = (long)B * n;
    for (long r = 0; r < Nr; r++)
        if (tokens[r] < 0 || tokens[r] >= V)
            return gyro_error_set(GYRO_ERR_DATA, "hrm: example %ld cell %ld: token %d outside "
                                  "[0, %d)", r / n, r % n, (int)tokens[r], V);
    const int geo = cfg->geometry;
    const T c = (T)cfg->curvature;
    const T *w = m->params;
    const gyro_hrm_layout *L = &m->lay;
    a->B = B;
    a->mode = mode;
    memcpy(a->tokens, tokens, (size_t)Nr * sizeof(int32_t));
    /* x̃ = E[x_t] ⊕ P_t */
    for (long r = 0; r < Nr; r++)
        S(gyro_geo_add)(a->xt + r * C, w + L->wte + (size_t)tokens[r] * C,
                        w + L->pos + (size_t)(r % n) * C, C, geo, c, 1, C);
    const int N = cfg->n_low, total = cfg->n_low * cfg->n_high;
    const int i0 = mode == GYRO_HRM_TAIL ? total : 1;
    const int i1 = mode == GYRO_HRM_PREFIX ? total - 1 : total;
    const int bptt = mode == GYRO_HRM_BPTT;
    const size_t NC = (size_t)Nr * C;
    for (int i = i0; i <= i1; i++) {
        S(hrm_cache) pl;
        S(hrm_cache_ptrs)(&pl, a->lcache + (size_t)(bptt ? i - 1 : 0) * a->cache_values, cfg,
                          a->nmax);
        S(hrm_block_forward)(&pl, w + L->low, &L->blk, a->zl, a->zh, a->xt, a->len, cfg, B);
        memcpy(a->zl, pl.out, NC * sizeof(T));
        if (i % N == 0) {
            S(hrm_cache) ph;
            S(hrm_cache_ptrs)(&ph, a->hcache + (size_t)(bptt ? i / N - 1 : 0) * a->cache_values,
                              cfg, a->nmax);
            S(hrm_block_forward)(&ph, w + L->high, &L->blk, a->zh, a->zl, NULL, a->len, cfg, B);
            memcpy(a->zh, ph.out, NC * sizeof(T));
        }
    }
    if (mode == GYRO_HRM_PREFIX)
        return GYRO_OK;
    /* f_O: per-cell MLR of z_H; the Q head on log0 z_H (hrm.h: MEAN or CELLS pooling) */
    S(gyro_mlr_forward)(a->logits, a->zh, w + L->out_p, w + L->out_a, geo, c, (int)Nr, K, C);
    S(gyro_geo_log0)(a->lzh, C, a->zh, C, geo, c, (int)Nr, C);
    for (int b = 0; b < B; b++) {
        if (cfg->q_pool == GYRO_HRM_QPOOL_CELLS) {
            double sj[2] = {0.0, 0.0};  /* s_j = Σ_t log σ(h_t,j) */
            for (int t = 0; t < n; t++) {
                const size_t r = (size_t)b * n + t;
                const T *f = a->lzh + r * C;
                int mx;
                double rr;
                const double l = S(hrm_cell_confidence)(a->logits + r * K, K, &mx, &rr);
                a->ql[r] = (T)l;
                for (int j = 0; j < 2; j++) {
                    double x = w[L->q_b + j] + (double)w[L->q_a + j] * l;
                    for (int k = 0; k < C; k++)
                        x += (double)w[L->q_w + (size_t)j * C + k] * f[k];
                    a->qh[r * 2 + j] = (T)x;
                    sj[j] -= gyro_hyp_neg_log_sigmoid(x);
                }
            }
            for (int j = 0; j < 2; j++) {
                a->q[2 * b + j] = (T)hrm_qpool_logit(sj[j]);
                a->qs[2 * b + j] = (T)sj[j];
            }
            continue;
        }
        T *pb = a->pool + (size_t)b * C;
        for (int k = 0; k < C; k++) {
            double s = 0.0;
            for (int t = 0; t < n; t++)
                s += a->lzh[((size_t)b * n + t) * C + k];
            pb[k] = (T)(s / n);
        }
        for (int j = 0; j < 2; j++) {
            double s = w[L->q_b + j];
            for (int k = 0; k < C; k++)
                s += (double)w[L->q_w + (size_t)j * C + k] * pb[k];
            a->q[2 * b + j] = (T)s;
        }
    }
    return GYRO_OK;
}

/* ---- backward ------------------------------------------------------------------------------- */

void P(gyro_hrm_backward)(const MODEL *m, ACTS *a, T *grads, const T *dlogits, const T *dq)
{
    const gyro_hrm_config *cfg = &m->cfg;
    assert(a->training && a->B > 0 && a->mode != GYRO_HRM_PREFIX);
    const int geo = cfg->geometry, n = cfg->n_cells, C = cfg->dim, K = cfg->n_classes;
    const T c = (T)cfg->curvature;
    const int B = a->B;
    const long Nr = (long)B * n;
    const size_t NC = (size_t)Nr * C;
    const T *w = m->params;
    const gyro_hrm_layout *L = &m->lay;
    T *g = grads;
    T *dzh = a->dzh, *dzl = a->dzl, *dtmp = a->dtmp;
    memset(dzh, 0, NC * sizeof(T));
    memset(dzl, 0, NC * sizeof(T));
    memset(a->dxt, 0, NC * sizeof(T));
    /* heads; the CELLS Q head's gradient through the confidence ℓ_t joins dlogits first */
    if (dq && cfg->q_pool == GYRO_HRM_QPOOL_CELLS) {
        const size_t NK = (size_t)Nr * K;
        if (dlogits)
            memcpy(a->dlg, dlogits, NK * sizeof(T));
        else
            memset(a->dlg, 0, NK * sizeof(T));
        dlogits = a->dlg;
        /* ∂logit_j/∂h_t,j = σ(−h_t,j) / (1 − e^{s_j}) (hrm.h);
         * h_t,j = a_j ℓ_t + w_j · log0 z_H,t + b_j */
        for (int b = 0; b < B; b++) {
            double scale[2];
            for (int j = 0; j < 2; j++)
                scale[j] = dq[2 * b + j] * hrm_qpool_cells_scale(a->qs[2 * b + j]);
            for (int t = 0; t < n; t++) {
                const size_t r = (size_t)b * n + t;
                const T *f = a->lzh + r * C;
                T *df = a->dlzh + r * C;
                memset(df, 0, (size_t)C * sizeof(T));
                double dl = 0.0;
                for (int j = 0; j < 2; j++) {
                    const double dh = scale[j] / (1.0 + exp((double)a->qh[r * 2 + j]));
                    g[L->q_b + j] += (T)dh;
                    g[L->q_a + j] += (T)(dh * a->ql[r]);
                    dl += dh * w[L->q_a + j];
                    for (int k = 0; k < C; k++) {
                        g[L->q_w + (size_t)j * C + k] += (T)(dh * f[k]);
                        df[k] += (T)(dh * w[L->q_w + (size_t)j * C + k]);
                    }
                }
                S(hrm_cell_confidence_backward)(a->dlg + r * K, a->logits + r * K, K, dl);
            }
        }
        S(gyro_geo_log0_backward)(dzh, C, a->dlzh, C, a->zh, C, geo, c, (int)Nr, C);
    } else if (dq) {
        memset(a->dpool, 0, (size_t)B * C * sizeof(T));
        for (int b = 0; b < B; b++)
            for (int j = 0; j < 2; j++) {
                const double gq = dq[2 * b + j];
                g[L->q_b + j] += (T)gq;
                for (int k = 0; k < C; k++) {
                    g[L->q_w + (size_t)j * C + k] += (T)(gq * a->pool[(size_t)b * C + k]);
                    a->dpool[(size_t)b * C + k] += (T)(gq * w[L->q_w + (size_t)j * C + k]);
                }
            }
        for (long r = 0; r < Nr; r++)
            for (int k = 0; k < C; k++)
                a->dlzh[r * C + k] = (T)(a->dpool[(size_t)(r / n) * C + k] / n);
        S(gyro_geo_log0_backward)(dzh, C, a->dlzh, C, a->zh, C, geo, c, (int)Nr, C);
    }
    if (dlogits)
        S(gyro_mlr_backward)(dzh, g + L->out_p, g + L->out_a, dlogits, a->zh, w + L->out_p,
                             w + L->out_a, geo, c, (int)Nr, K, C);
    /* the recurrence, newest step first */
    S(hrm_cache) q;
    S(hrm_cache_ptrs)(&q, a->gcache, cfg, a->nmax);
    const int N = cfg->n_low, total = cfg->n_low * cfg->n_high;
    const int bptt = a->mode == GYRO_HRM_BPTT;
    const int i0 = bptt ? 1 : total;
    for (int i = total; i >= i0; i--) {
        const int last = i == i0; /* one-step: the carry the steps started from is a constant */
        if (i % N == 0) {
            S(hrm_cache) ph;
            S(hrm_cache_ptrs)(&ph, a->hcache + (size_t)(bptt ? i / N - 1 : 0) * a->cache_values,
                              cfg, a->nmax);
            memset(dtmp, 0, NC * sizeof(T));
            /* z_H^i = f_H(z_H^{i−1} ⊕ z_L^i): dtmp = ∂/∂z_H^{i−1}, dzl += ∂/∂z_L^i */
            S(hrm_block_backward)(bptt ? dtmp : NULL, dzl, NULL, g + L->high, &q, &ph, dzh,
                                  w + L->high, NULL, &L->blk, a->scratch, a->len, cfg, B);
            T *t = dzh;
            dzh = dtmp;
            dtmp = t;
        }
        S(hrm_cache) pl;
        S(hrm_cache_ptrs)(&pl, a->lcache + (size_t)(bptt ? i - 1 : 0) * a->cache_values, cfg,
                          a->nmax);
        memset(dtmp, 0, NC * sizeof(T));
        /* z_L^i = f_L(z_L^{i−1} ⊕ z_H^{i−1} ⊕ x̃): dtmp = ∂/∂z_L^{i−1}, dzh += ∂/∂z_H^{i−1} */
        S(hrm_block_backward)(last ? NULL : dtmp, last ? NULL : dzh, a->dxt, g + L->low, &q, &pl,
                              dzl, w + L->low, a->xt, &L->blk, a->scratch, a->len, cfg, B);
        T *t = dzl;
        dzl = dtmp;
        dtmp = t;
    }
    /* f_I: x̃ = E[x_t] ⊕ P_t */
    for (long r = 0; r < Nr; r++) {
        const size_t tok = (size_t)a->tokens[r], t = (size_t)(r % n);
        S(gyro_geo_add_backward)(g + L->wte + tok * C, g + L->pos + t * C, a->scratch,
                                 a->dxt + r * C, a->xt + r * C, w + L->wte + tok * C,
                                 w + L->pos + t * C, C, geo, c, 1, C);
    }
}

/* ---- loss ----------------------------------------------------------------------------------- */

double P(gyro_hrm_loss)(T *dlogits, T *dq, const ACTS *a, const int *labels, const T *qtarget,
                        int B)
{
    const int n = a->cfg.n_cells, K = a->cfg.n_classes;
    double total = 0.0;
    long counted = 0;
    for (long r = 0; r < (long)B * n; r++)
        counted += labels[r] >= 0;
    const double sc = counted ? 1.0 / (double)counted : 0.0;
    for (long r = 0; r < (long)B * n; r++) {
        const T *z = a->logits + r * K;
        if (labels[r] < 0) { /* an ignored cell: no loss, no gradient */
            if (dlogits)
                memset(dlogits + r * K, 0, (size_t)K * sizeof(T));
            continue;
        }
        double mx = z[0];
        for (int k = 1; k < K; k++)
            if (z[k] > mx)
                mx = z[k];
        double s = 0.0;
        for (int k = 0; k < K; k++)
            s += exp((double)z[k] - mx);
        const double lse = mx + log(s);
        total += (lse - (double)z[labels[r]]) * sc;
        if (dlogits)
            for (int k = 0; k < K; k++)
                dlogits[r * K + k] =
                    (T)((exp((double)z[k] - lse) - (k == labels[r] ? 1.0 : 0.0)) * sc);
    }
    for (int i = 0; i < 2 * B; i++) {
        if (!qtarget) {
            if (dq)
                dq[i] = 0;
            continue;
        }
        /* BCE(σ(x), y) = max(x, 0) − x y + log(1 + e^{−|x|}); d/dx = σ(x) − y */
        const double x = a->q[i], y = qtarget[i];
        total += ((x > 0 ? x : 0.0) - x * y + log1p(exp(-fabs(x)))) / B;
        if (dq)
            dq[i] = (T)((1.0 / (1.0 + exp(-x)) - y) / B);
    }
    return total;
}

int P(gyro_hrm_carry_keep)(ACTS *a, const int *keep, int B)
{
    const size_t row = (size_t)a->cfg.n_cells * a->cfg.dim;
    int k = 0;
    for (int b = 0; b < B; b++) {
        if (!keep[b])
            continue;
        if (k != b) {
            memmove(a->zl + (size_t)k * row, a->zl + (size_t)b * row, row * sizeof(T));
            memmove(a->zh + (size_t)k * row, a->zh + (size_t)b * row, row * sizeof(T));
        }
        k++;
    }
    return k;
}

/* transformer_lorentz_impl.h — internal template: the Lorentz geometry of the transformer
 * (transformer.h, "The Lorentz geometry"), included by transformer_impl.h once per precision
 * with its T / S / P / PARAMS / MODEL / ACTS (no include guard on purpose).
 *
 * Every layer is a kernel of models/layers/lorentz.h (HyboNet, Chen et al. ACL 2022; the
 * formula and section beside each prototype there):
 *   x0   = gyro_lorentz_posenc (§3.3): hl_pe(E[tok]) with the position point p_t as bias point
 *   per layer l:
 *     q,k,v: 3H Lorentz linear layers (§3.1), one per head, each writing a (D+1)-point into its
 *            slice of the (N, H·(D+1)) Q / K / V rows
 *     O    = gyro_lorentz_mha (§3.2): softmax(−d²_L(q,k)/√D) over the valid keys, centroid of v
 *     x1   = gyro_lorentz_residual (§3.3): hl_o(mask ⊙ O) with the layer input x as bias point
 *     h    = hl_1(x1)                                              (N, F+1)
 *     xout = gyro_lorentz_residual: hl_2(mask ⊙ ReLU(h)) with x1 as bias point
 *   mu   = gyro_lorentz_pool (eq. 4) over the valid tokens; logits = gyro_lorentz_head.
 * (residual NONE: hl_o and hl_2 without bias point.) Padding rows (t >= len) are computed from
 * the origin point and never read: they are masked as keys and have weight 0 in the pooling, so
 * they receive no gradient.
 *
 * Buffers: every per-layer array is (L, Nmax, width) as in transformer_impl.h; a forward over
 * B·T rows uses the first B·T rows of each layer's slice (att and sz use their first B·H·T·T and
 * B·H·T values). The gradient block is carved identically. */

/* Widths (values per row) of the per-layer arrays. d = C+1, D1 = D+1, HD1 = H·D1, F1 = F+1. */
#define TF_LZ_LAYER_FIELDS(X)                                                                  \
    X(qkvU, 3 * H * D) X(qkvZ, 3 * H) X(qkv, 3 * HD1) X(O, HD1) X(Hco, HD1) X(mo, HD1)          \
    X(Uo, C) X(x1, d) X(U1, F) X(hf, F1) X(Hcf, F1) X(mf, F1) X(U2, C) X(xout, d)

/* Carve (or, with base == NULL, measure) one Lorentz block. Returns the number of values. */
static size_t S(tf_lz_carve)(T *base, S(tf_lz) *z, const gyro_tf_config *cfg, int bmax, int tmax)
{
    const long N = (long)bmax * tmax, L = cfg->n_layers;
    const long C = cfg->dim, d = C + 1, D = cfg->head_dim, H = cfg->n_heads, HD1 = H * (D + 1);
    const long F = cfg->ffn_dim, F1 = F + 1;
    size_t off = 0;
#define TF_LZ_TAKE(field, count)                                                               \
    do {                                                                                       \
        if (base)                                                                              \
            z->field = base + off;                                                             \
        off += (size_t)(count);                                                                \
        off = (off + 15) & ~(size_t)15;                                                        \
    } while (0)
    TF_LZ_TAKE(e, N * d);
    TF_LZ_TAKE(Upe, N * C);
    TF_LZ_TAKE(x0, N * d);
    TF_LZ_TAKE(mu, bmax * d);
    TF_LZ_TAKE(szp, bmax);
    TF_LZ_TAKE(pw, N);
    TF_LZ_TAKE(att, L * bmax * H * tmax * tmax);
    TF_LZ_TAKE(sz, L * bmax * H * tmax);
#define TF_LZ_TAKE_LAYER(name, w) TF_LZ_TAKE(name, L * N * (w));
    TF_LZ_LAYER_FIELDS(TF_LZ_TAKE_LAYER)
#undef TF_LZ_TAKE_LAYER
#undef TF_LZ_TAKE
    return off;
}

/* Values of the hlinear backward scratch (rows, m+n+1) for the widest layer (a q / k / v group
 * needs rows·H·(D+1)). */
static size_t S(tf_lz_work_values)(const gyro_tf_config *cfg, long N)
{
    long C = cfg->dim, D = cfg->head_dim, HD1 = cfg->n_heads * (D + 1), F = cfg->ffn_dim;
    long w = C + HD1; /* o layer: m = C, n + 1 = HD1 */
    if (F + C + 1 > w) w = F + C + 1; /* FFN layers 1 and 2 */
    if (HD1 > w) w = HD1;             /* a q / k / v group: G·(m+1) */
    return (size_t)(N * (w + 1));
}

/* The parameters (or gradients) of one layer, and of the position-encoding layer. */
typedef struct S(tf_lz_w) {
    T *W, *b, *v, *bt, *ll;
} S(tf_lz_w);

/* Lorentz linear layer `which` of layer l: 0..3H−1 the q|k|v heads (j = which·H + h), 3H the
 * output (residual) layer, 3H+1 FFN layer 1, 3H+2 FFN layer 2; l = −1 the position encoding. */
static S(tf_lz_w) S(tf_lz_layer)(const PARAMS *p, const gyro_tf_config *cfg, int l, int which)
{
    const long C = cfg->dim, d = C + 1, D = cfg->head_dim, H = cfg->n_heads, HD1 = H * (D + 1);
    const long F = cfg->ffn_dim;
    S(tf_lz_w) r = {0};
    if (l < 0) {
        r.W = p->lzpew;
        r.v = p->lzinv;
        r.bt = p->lztime;
        r.ll = p->lztime + 1;
        return r;
    }
    const long tix = 1 + (long)l * (3 * H + 3) + which;
    r.bt = p->lztime + 2 * tix;
    r.ll = r.bt + 1;
    if (which < 3 * H) {
        const long j = (long)l * 3 * H + which;
        r.W = p->lzqkvw + j * D * d;
        r.b = p->lzqkvb + j * D;
        r.v = p->lzinv + (1 + (long)l * (3 * H + 1) + which) * d;
    } else if (which == 3 * H) {
        r.W = p->lzow + (long)l * C * HD1;
        r.v = p->lzov + (long)l * HD1;
    } else if (which == 3 * H + 1) {
        r.W = p->lzf1w + (long)l * F * d;
        r.b = p->lzf1b + (long)l * F;
        r.v = p->lzinv + (1 + (long)l * (3 * H + 1) + 3 * H) * d;
    } else {
        r.W = p->lzf2w + (long)l * C * (F + 1);
        r.v = p->lzf2v + (long)l * (F + 1);
    }
    return r;
}

/* Named pointers of layer l in a Lorentz block (xin: the layer's input). */
typedef struct S(tf_lz_ptrs) {
    T *xin, *qkvU, *qkvZ, *Q, *Kx, *V, *O, *Hco, *mo, *Uo, *x1, *U1, *hf, *Hcf, *mf, *U2, *xout;
    T *att, *sz;
} S(tf_lz_ptrs);

static void S(tf_lz_ptrs_get)(S(tf_lz_ptrs) *p, const ACTS *a, const S(tf_lz) *z,
                              const gyro_tf_config *cfg, int l)
{
    const long N = a->nmax, C = cfg->dim, d = C + 1, D = cfg->head_dim, H = cfg->n_heads;
    const long HD1 = H * (D + 1), F = cfg->ffn_dim, F1 = F + 1;
    const long Bm = a->max_batch, Tm = a->max_len;
#define TF_LZ_PTR(name, w) T *name##_ = z->name + (long)l * N * (w);
    TF_LZ_LAYER_FIELDS(TF_LZ_PTR)
#undef TF_LZ_PTR
    p->xin = l > 0 ? z->xout + (long)(l - 1) * N * d : z->x0;
    p->qkvU = qkvU_;
    p->qkvZ = qkvZ_;
    p->Q = qkv_;
    p->Kx = qkv_ + N * HD1;
    p->V = qkv_ + 2 * N * HD1;
    p->O = O_;
    p->Hco = Hco_;
    p->mo = mo_;
    p->Uo = Uo_;
    p->x1 = x1_;
    p->U1 = U1_;
    p->hf = hf_;
    p->Hcf = Hcf_;
    p->mf = mf_;
    p->U2 = U2_;
    p->xout = xout_;
    p->att = z->att + (long)l * Bm * H * Tm * Tm;
    p->sz = z->sz + (long)l * Bm * H * Tm;
}

/* The last layer's output (the pooling input). */
static T *S(tf_lz_top)(const ACTS *a, const S(tf_lz) *z, const gyro_tf_config *cfg)
{
    const long d = cfg->dim + 1;
    return cfg->n_layers ? z->xout + (long)(cfg->n_layers - 1) * a->nmax * d : z->x0;
}

/* Dropout mask (inverted): 0 with probability p, else 1/(1−p). Drawn as gyro_dropout_forward
 * draws its masks: an element drops when a 32-bit draw falls below p·2³² (probability p within
 * 2⁻³²), each 64-bit output of the generator deciding two elements (one draw and an integer
 * compare per element pair instead of a draw and a double compare per element: ~4% of a
 * training step at C = 100). */
static void S(tf_lz_mask)(T *mask, gyro_rng *rng, double p, long n)
{
    const T keep = (T)(1.0 / (1.0 - p));
    const uint64_t thr = (uint64_t)(p * 4294967296.0);
    long i = 0;
    for (; i + 2 <= n; i += 2) {
        const uint64_t r = gyro_rng_next(rng);
        mask[i] = (r >> 32) < thr ? (T)0 : keep;
        mask[i + 1] = (r & 0xffffffffu) < thr ? (T)0 : keep;
    }
    if (i < n)
        mask[i] = (gyro_rng_next(rng) >> 32) < thr ? (T)0 : keep;
}

static void S(tf_lz_init_params)(MODEL *m, gyro_rng *rng)
{
    const gyro_tf_config *cfg = &m->cfg;
    PARAMS *w = &m->params;
    const int C = cfg->dim, d = C + 1, D = cfg->head_dim, H = cfg->n_heads, HD1 = H * (D + 1);
    const int F = cfg->ffn_dim, L = cfg->n_layers, V = cfg->vocab_size, K = cfg->n_classes;
    const double k = 1.0 / (double)cfg->curvature;
    /* points: spatial part drawn, time part lifted, x₀ = √(k + |x_s|²) */
#define TF_LZ_LIFT(row)                                                                        \
    do {                                                                                       \
        double q_ = k;                                                                         \
        for (int j_ = 1; j_ < d; j_++)                                                         \
            q_ += (double)(row)[j_] * (double)(row)[j_];                                       \
        (row)[0] = (T)sqrt(q_);                                                                \
    } while (0)
    const double sd = 1.0 / sqrt((double)C);
    for (int r = 0; r < V; r++) {
        T *x = w->wte + (size_t)r * d;
        for (int j = 1; j < d; j++)
            x[j] = (T)(sd * gyro_rng_normal(rng));
        TF_LZ_LIFT(x);
    }
    for (int t = 0; t < cfg->max_len; t++) { /* position points: the lifted s·PE */
        T *x = w->lzpos + (size_t)t * d;
        for (int j = 1; j < d; j++)
            x[j] = m->pos[(size_t)t * C + j - 1];
        TF_LZ_LIFT(x);
    }
    for (int c = 0; c < K; c++) {
        T *x = w->lzcls + (size_t)c * d;
        for (int j = 1; j < d; j++)
            x[j] = (T)(0.5 * sd * gyro_rng_normal(rng));
        TF_LZ_LIFT(x);
    }
#undef TF_LZ_LIFT
    /* the position layer starts as [0 | I]: u = E_s + p_s */
    memset(w->lzpew, 0, (size_t)C * d * sizeof(T));
    for (int i = 0; i < C; i++)
        w->lzpew[(size_t)i * d + i + 1] = 1;
    /* matrices Xavier-uniform on their (out, in) shape; b, v, b_t zero; log λ = log 4 */
#define TF_LZ_XAVIER(p, count, fo, fi)                                                         \
    do {                                                                                       \
        const double lim_ = sqrt(6.0 / (double)((fo) + (fi)));                                 \
        for (size_t j_ = 0; j_ < (size_t)(count); j_++)                                        \
            (p)[j_] = (T)(lim_ * (2.0 * gyro_rng_uniform(rng) - 1.0));                         \
    } while (0)
    TF_LZ_XAVIER(w->lzqkvw, (size_t)L * 3 * H * D * d, D, d);
    TF_LZ_XAVIER(w->lzow, (size_t)L * C * HD1, C, HD1);
    TF_LZ_XAVIER(w->lzf1w, (size_t)L * F * d, F, d);
    TF_LZ_XAVIER(w->lzf2w, (size_t)L * C * (F + 1), C, F + 1);
#undef TF_LZ_XAVIER
    memset(w->lzqkvb, 0, (size_t)L * 3 * H * D * sizeof(T));
    memset(w->lzf1b, 0, (size_t)L * F * sizeof(T));
    memset(w->lzinv, 0, (size_t)(1 + L * (3 * H + 1)) * d * sizeof(T));
    memset(w->lzov, 0, (size_t)L * HD1 * sizeof(T));
    memset(w->lzf2v, 0, (size_t)L * (F + 1) * sizeof(T));
    memset(w->lzbeta, 0, (size_t)K * sizeof(T));
    for (int i = 0; i < 1 + L * (3 * H + 3); i++) {
        w->lztime[2 * i] = 0;
        w->lztime[2 * i + 1] = (T)TF_LZ_LOG_LAMBDA0;
    }
}

/* Forward over the B·Tlen rows whose tokens and lengths the caller copied into the acts.
 * pk: the Lorentz layers packed by gyro_tf_pack_new (float32 only; NULL: the model's own
 * matrices through BLAS). With a pack and no dropout the forward is for inference: every layer
 * works in layer 0's slices (the buffers stay in cache; no per-layer caches are kept, so no
 * backward may follow) and the block input / output ping-pong between x0 and layer 0's xout. */
static void S(tf_lz_forward)(const MODEL *m, const gyro_tf_packed *pk, ACTS *a, int B, int Tlen,
                             gyro_rng *rng)
{
    const gyro_tf_config *cfg = &m->cfg;
    const int C = cfg->dim, d = C + 1, D = cfg->head_dim, D1 = D + 1, H = cfg->n_heads;
    const int HD1 = H * D1, F = cfg->ffn_dim, K = cfg->n_classes, Nr = B * Tlen;
    const double Kc = -(double)cfg->curvature, eps = TF_LZ_EPS(cfg->curvature);
    const double sk = sqrt(-1.0 / Kc);
    const int act = cfg->ffn_activation == GYRO_TF_ACTIVATION_RELU ? GYRO_LORENTZ_ACT_RELU
                                                                   : GYRO_LORENTZ_ACT_NONE;
    const int res = cfg->residual != GYRO_TF_RESIDUAL_NONE;
    const double pdrop = cfg->dropout;
    const PARAMS *w = &m->params;
    S(tf_lz) *z = &a->lz;
    const int *lengths = a->lengths;

    /* key mask and pooling weights (B, Tlen); token points, the origin on padding */
    for (int b = 0; b < B; b++)
        for (int t = 0; t < Tlen; t++) {
            const long r = (long)b * Tlen + t;
            const int valid = t < lengths[b];
            a->lz_kmask[r] = valid;
            z->pw[r] = (T)valid;
            T *e = z->e + r * d;
            if (valid) {
                memcpy(e, w->wte + (size_t)a->tokens[r] * d, (size_t)d * sizeof(T));
            } else {
                memset(e, 0, (size_t)d * sizeof(T));
                e[0] = (T)sk;
            }
        }
    const int inf = TF_PKLZ(pk, -1, 0) != NULL && !a->dropout_on;
    S(tf_lz_w) pe = S(tf_lz_layer)(w, cfg, -1, 0);
    /* position encoding: hlinear over the B·Tlen rows with p_t (row r % Tlen) as bias point */
    if (!S(tf_pk_lz_hlinear)(inf ? TF_PKLZ(pk, -1, 0) : NULL, z->x0, z->Upe, NULL, z->e, NULL,
                             w->lzpos, NULL, pe.v, pe.bt, pe.ll, eps, GYRO_LORENTZ_ACT_NONE, Kc,
                             Nr, C, C, Tlen))
        S(gyro_lorentz_posenc_forward)(z->x0, z->Upe, NULL, z->e, NULL, w->lzpos, pe.W, NULL,
                                       pe.v, pe.bt, pe.ll, eps, GYRO_LORENTZ_ACT_NONE, Kc, B, Tlen,
                                       C, C);

    T *top = z->x0; /* inference: the current block input */
    for (int l = 0; l < cfg->n_layers; l++) {
        S(tf_lz_ptrs) p;
        S(tf_lz_ptrs_get)(&p, a, z, cfg, inf ? 0 : l);
        if (inf) {
            p.xin = top;
            p.xout = top == z->x0 ? z->xout : z->x0;
            top = p.xout;
        }
        const int pl = inf ? l : -2; /* the packed layer, or none */
        /* q | k | v: one Lorentz linear layer per head; the H heads of each in one group call
         * (their W rows, b, v rows and (b_t, log λ) pairs are contiguous in the tables) */
        for (int k = 0; k < 3; k++) {
            S(tf_lz_w) q = S(tf_lz_layer)(w, cfg, l, k * H);
            T *qy = k == 0 ? p.Q : k == 1 ? p.Kx : p.V;
            T *qU = p.qkvU + (long)k * a->nmax * H * D, *qZ = p.qkvZ + (long)k * a->nmax * H;
            if (!S(tf_pk_lz_group)(pl >= 0 ? TF_PKLZ(pk, pl, 2 * k) : NULL,
                                   pl >= 0 ? TF_PKLZ(pk, pl, 2 * k + 1) : NULL, qy, qU, qZ,
                                   p.xin, q.b, q.bt, eps, Kc, Nr, C, D, H))
                S(gyro_lorentz_hlinear_group_forward)(qy, qU, qZ, p.xin, q.W, q.b, q.v, q.bt, eps,
                                                      Kc, Nr, C, D, H);
        }
        S(gyro_lorentz_mha_forward)(p.O, p.att, p.sz, p.Q, p.Kx, p.V, a->lz_kmask, Kc, B, Tlen,
                                    Tlen, H, D);
        /* output layer with the layer input as bias point (§3.3 residual) */
        const T *mo = NULL;
        if (a->dropout_on) {
            S(tf_lz_mask)(p.mo, rng, pdrop, (long)Nr * HD1);
            mo = p.mo;
        }
        S(tf_lz_w) o = S(tf_lz_layer)(w, cfg, l, 3 * H);
        if (pl >= 0)
            S(tf_pk_lz_hlinear)(TF_PKLZ(pk, pl, TF_LZ_PK_O), p.x1, p.Uo, p.Hco, p.O, mo,
                                res ? p.xin : NULL, NULL, o.v, o.bt, o.ll, eps,
                                GYRO_LORENTZ_ACT_NONE, Kc, Nr, HD1 - 1, C, Nr);
        else if (res)
            S(gyro_lorentz_residual_forward)(p.x1, p.Uo, p.Hco, p.O, mo, p.xin, o.W, NULL, o.v,
                                             o.bt, o.ll, eps, GYRO_LORENTZ_ACT_NONE, Kc, Nr,
                                             HD1 - 1, C);
        else
            S(gyro_lorentz_hlinear_forward)(p.x1, p.Uo, p.Hco, p.O, mo, NULL, o.W, NULL, o.v,
                                            o.bt, o.ll, eps, GYRO_LORENTZ_ACT_NONE, Kc, Nr,
                                            HD1 - 1, C, 1);
        /* feed-forward: hl_1, then hl_2 (ReLU and dropout inside) with x1 as bias point */
        S(tf_lz_w) f1 = S(tf_lz_layer)(w, cfg, l, 3 * H + 1);
        if (!S(tf_pk_lz_hlinear)(pl >= 0 ? TF_PKLZ(pk, pl, TF_LZ_PK_F1) : NULL, p.hf, p.U1, NULL,
                                 p.x1, NULL, NULL, f1.b, f1.v, f1.bt, f1.ll, eps,
                                 GYRO_LORENTZ_ACT_NONE, Kc, Nr, C, F, 1))
            S(gyro_lorentz_hlinear_forward)(p.hf, p.U1, NULL, p.x1, NULL, NULL, f1.W, f1.b, f1.v,
                                            f1.bt, f1.ll, eps, GYRO_LORENTZ_ACT_NONE, Kc, Nr, C,
                                            F, 1);
        const T *mf = NULL;
        if (a->dropout_on) {
            S(tf_lz_mask)(p.mf, rng, pdrop, (long)Nr * (F + 1));
            mf = p.mf;
        }
        S(tf_lz_w) f2 = S(tf_lz_layer)(w, cfg, l, 3 * H + 2);
        if (pl >= 0)
            S(tf_pk_lz_hlinear)(TF_PKLZ(pk, pl, TF_LZ_PK_F2), p.xout, p.U2, p.Hcf, p.hf, mf,
                                res ? p.x1 : NULL, NULL, f2.v, f2.bt, f2.ll, eps, act, Kc, Nr, F,
                                C, Nr);
        else if (res)
            S(gyro_lorentz_residual_forward)(p.xout, p.U2, p.Hcf, p.hf, mf, p.x1, f2.W, NULL,
                                             f2.v, f2.bt, f2.ll, eps, act, Kc, Nr, F, C);
        else
            S(gyro_lorentz_hlinear_forward)(p.xout, p.U2, p.Hcf, p.hf, mf, NULL, f2.W, NULL,
                                            f2.v, f2.bt, f2.ll, eps, act, Kc, Nr, F, C, 1);
    }
    /* centroid pooling of the valid tokens, distance head */
    S(gyro_lorentz_pool_forward)(z->mu, z->szp, inf ? top : S(tf_lz_top)(a, z, cfg), z->pw, Kc, B,
                                 Tlen, C);
    S(gyro_lorentz_head_forward)(a->a.logits, z->mu, w->lzcls, w->lzbeta, Kc, B, K, C);
}

/* Backward of the last S(tf_lz_forward): accumulates the parameter gradients into g. */
static void S(tf_lz_backward)(const MODEL *m, ACTS *a, const PARAMS *g, const T *dlogits)
{
    const gyro_tf_config *cfg = &m->cfg;
    const int B = a->B, Tlen = a->Tlen;
    const int C = cfg->dim, d = C + 1, D = cfg->head_dim, D1 = D + 1, H = cfg->n_heads;
    const int HD1 = H * D1, F = cfg->ffn_dim, K = cfg->n_classes, Nr = B * Tlen;
    const double Kc = -(double)cfg->curvature, eps = TF_LZ_EPS(cfg->curvature);
    const int act = cfg->ffn_activation == GYRO_TF_ACTIVATION_RELU ? GYRO_LORENTZ_ACT_RELU
                                                                   : GYRO_LORENTZ_ACT_NONE;
    const int res = cfg->residual != GYRO_TF_RESIDUAL_NONE;
    const PARAMS *w = &m->params;
    const S(tf_lz) *z = &a->lz;
    S(tf_lz) *dz = &a->dlz;
    T *work = a->lz_work;

    /* the gradients the kernels accumulate into: clear the live rows (the first B·Tlen of each
     * layer's slice) of exactly the fields backward reads or writes — the whole block
     * (attention weights and kernel caches for the maximum batch and length included) is
     * ~25·10⁶ values at C = 100, 3 layers, batch 32, length 64, and clearing it cost ~7% of a
     * step; the fields not listed here are never touched in the gradient block */
    {
        const long Nm = a->nmax;
        memset(dz->e, 0, (size_t)Nr * d * sizeof(T));
        memset(dz->x0, 0, (size_t)Nr * d * sizeof(T));
        memset(dz->mu, 0, (size_t)B * d * sizeof(T));
        for (int l = 0; l < cfg->n_layers; l++) {
            for (int k = 0; k < 3; k++)
                memset(dz->qkv + (long)l * Nm * 3 * HD1 + (long)k * Nm * HD1, 0,
                       (size_t)Nr * HD1 * sizeof(T));
            memset(dz->O + (long)l * Nm * HD1, 0, (size_t)Nr * HD1 * sizeof(T));
            memset(dz->x1 + (long)l * Nm * d, 0, (size_t)Nr * d * sizeof(T));
            memset(dz->hf + (long)l * Nm * (F + 1), 0, (size_t)Nr * (F + 1) * sizeof(T));
            memset(dz->xout + (long)l * Nm * d, 0, (size_t)Nr * d * sizeof(T));
        }
    }

    T *xl = S(tf_lz_top)(a, z, cfg), *dxl = S(tf_lz_top)(a, dz, cfg);
    S(gyro_lorentz_head_backward)(dz->mu, g->lzcls, g->lzbeta, dlogits, z->mu, w->lzcls, Kc, B, K,
                                  C);
    S(gyro_lorentz_pool_backward)(dxl, NULL, dz->mu, z->mu, z->szp, xl, z->pw, Kc, B, Tlen, C);

    for (int l = cfg->n_layers - 1; l >= 0; l--) {
        S(tf_lz_ptrs) p, q; /* activations, their gradients */
        S(tf_lz_ptrs_get)(&p, a, z, cfg, l);
        S(tf_lz_ptrs_get)(&q, a, dz, cfg, l);
        const T *mf = a->dropout_on ? p.mf : NULL, *mo = a->dropout_on ? p.mo : NULL;
        /* FFN layer 2 (residual into x1), FFN layer 1 */
        S(tf_lz_w) f2 = S(tf_lz_layer)(w, cfg, l, 3 * H + 2), g2 = S(tf_lz_layer)(g, cfg, l, 3 * H + 2);
        if (res)
            S(gyro_lorentz_residual_backward)(q.hf, q.x1, g2.W, NULL, g2.v, g2.bt, g2.ll, work,
                                              q.xout, p.U2, p.Hcf, p.hf, mf, p.x1, f2.W, f2.v,
                                              f2.bt, f2.ll, eps, act, Kc, Nr, F, C);
        else
            S(gyro_lorentz_hlinear_backward)(q.hf, NULL, g2.W, NULL, g2.v, g2.bt, g2.ll, work,
                                             q.xout, p.U2, p.Hcf, p.hf, mf, NULL, f2.W, f2.v,
                                             f2.bt, f2.ll, eps, act, Kc, Nr, F, C, 1);
        S(tf_lz_w) f1 = S(tf_lz_layer)(w, cfg, l, 3 * H + 1), g1 = S(tf_lz_layer)(g, cfg, l, 3 * H + 1);
        S(gyro_lorentz_hlinear_backward)(q.x1, NULL, g1.W, g1.b, g1.v, g1.bt, g1.ll, work, q.hf,
                                         p.U1, NULL, p.x1, NULL, NULL, f1.W, f1.v, f1.bt, f1.ll,
                                         eps, GYRO_LORENTZ_ACT_NONE, Kc, Nr, C, F, 1);
        /* output layer (residual into the layer input) */
        S(tf_lz_w) o = S(tf_lz_layer)(w, cfg, l, 3 * H), go = S(tf_lz_layer)(g, cfg, l, 3 * H);
        if (res)
            S(gyro_lorentz_residual_backward)(q.O, q.xin, go.W, NULL, go.v, go.bt, go.ll, work,
                                              q.x1, p.Uo, p.Hco, p.O, mo, p.xin, o.W, o.v, o.bt,
                                              o.ll, eps, GYRO_LORENTZ_ACT_NONE, Kc, Nr, HD1 - 1,
                                              C);
        else
            S(gyro_lorentz_hlinear_backward)(q.O, NULL, go.W, NULL, go.v, go.bt, go.ll, work,
                                             q.x1, p.Uo, p.Hco, p.O, mo, NULL, o.W, o.v, o.bt,
                                             o.ll, eps, GYRO_LORENTZ_ACT_NONE, Kc, Nr, HD1 - 1, C,
                                             1);
        /* attention, then the q | k | v layers (each head's gradient gathered from its slice) */
        S(gyro_lorentz_mha_backward)(q.Q, q.Kx, q.V, q.O, p.O, p.att, p.sz, p.Q, p.Kx, p.V,
                                     a->lz_kmask, Kc, B, Tlen, Tlen, H, D);
        for (int k = 0; k < 3; k++) {
            S(tf_lz_w) wk = S(tf_lz_layer)(w, cfg, l, k * H), gk = S(tf_lz_layer)(g, cfg, l, k * H);
            S(gyro_lorentz_hlinear_group_backward)(q.xin, gk.W, gk.b, gk.v, gk.bt, work,
                                                   k == 0 ? q.Q : k == 1 ? q.Kx : q.V,
                                                   p.qkvU + (long)k * a->nmax * H * D,
                                                   p.qkvZ + (long)k * a->nmax * H, p.xin, wk.W,
                                                   wk.v, wk.bt, eps, Kc, Nr, C, D, H);
        }
    }
    /* position encoding (into the position points and the token points) */
    S(tf_lz_w) pe = S(tf_lz_layer)(w, cfg, -1, 0), gpe = S(tf_lz_layer)(g, cfg, -1, 0);
    S(gyro_lorentz_posenc_backward)(dz->e, g->lzpos, gpe.W, NULL, gpe.v, gpe.bt, gpe.ll, work,
                                    dz->x0, z->Upe, NULL, z->e, NULL, w->lzpos, pe.W, pe.v, pe.bt,
                                    pe.ll, eps, GYRO_LORENTZ_ACT_NONE, Kc, B, Tlen, C, C);
    for (int b = 0; b < B; b++)
        for (int t = 0; t < a->lengths[b]; t++) {
            const long r = (long)b * Tlen + t;
            T *gw = g->wte + (size_t)a->tokens[r] * d;
            const T *de = dz->e + r * d;
            for (int j = 0; j < d; j++)
                gw[j] += de[j];
        }
}

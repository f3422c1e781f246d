/* transformer_impl.h — internal template: the one implementation of the transformer
 * (transformer.h), instantiated once per precision by transformer.c (no include guard on
 * purpose). The including file defines
 *   T           storage type (float or double)
 *   S(name)     name with the precision suffix (_f32 / _f64): file-local helpers, and the layer
 *               kernels of that precision (S(gyro_attention_forward) = gyro_attention_forward_f32)
 *   P(name)     public name: name for float32 (gyro_tf_forward), name_f64 for float64
 *   PARAMS, MODEL, ACTS   the precision's parameter, model and activation types
 * The sequence length is Tlen here (T is the storage type); transformer.h calls it T.
 *
 * Activation block layout: every per-layer activation is an (L, Nmax, width) array carved
 * from one block (Nmax = max_batch · max_len); a forward over B·T rows uses the first B·T rows
 * of each layer's slice. The activation-gradient block is carved identically, so every
 * activation `a.x` has its gradient `d.x` at the same offset. Maps that are switched off by
 * the configuration (no residual, no LayerNorm, no activation, no dropout) are not copies:
 * the next stage reads the previous buffer directly (see the alias choices in layer_ptrs),
 * and the backward follows the same aliases.
 *
 * MLA attention and MoE feed-forward replace the per-layer arrays of the blocks they replace
 * (those arrays get width 0): MLA reads the layer input and writes `a`, MoE reads x1 and writes
 * `f`. Their kernel caches (per layer; MLA also per sequence, since it runs over each
 * sequence's valid positions) are forward-only buffers outside the two blocks. MoE runs over
 * the valid tokens gathered into one (Nv, C) block so that padding neither routes nor counts
 * in the balance loss and the load.
 */

#ifndef TF_WIDTHS_DEFINED
#define TF_WIDTHS_DEFINED
/* Widths of the MHA and dense-FFN activations: 0 when MLA / MoE replaces the block. */
#define TF_AW(cfg) ((cfg)->attention_kind == GYRO_TF_ATTENTION_MLA ? 0L                       \
                    : (long)(cfg)->n_heads * (cfg)->head_dim)
#define TF_FW(cfg) ((cfg)->ffn_kind == GYRO_TF_FFN_MOE ? 0L : (long)(cfg)->ffn_dim)
/* The layer-l slice of a stacked (L, width) parameter or gradient tensor, or NULL when the
 * configuration has no such tensor (no LayerNorm, MLA instead of attention, MoE instead of
 * the dense feed-forward): the offset is never applied to a NULL base. */
#define TF_SLICE(p, l, width) ((p) ? (p) + (long)(l) * (width) : NULL)
#endif

/* Named pointers to the activations of one layer (or their gradients). */
typedef struct S(tf_layer_ptrs) {
    T *xin;    /* (N, C)   layer input (ball)                                   */
    T *u;      /* (N, C)   log0(xin)                                            */
    T *qkvy;   /* (N, 3A)  u Wqkvᵀ                                              */
    T *qkvz;   /* (N, 3A)  exp0(qkvy): the Möbius matvec output (ball, 3A-d)    */
    T *qkvt;   /* (N, 3A)  tangent q | k | v: log0 of each head's D-slice of qkvz (cfg
                *          qkv_tangent 0); with qkv_tangent 1 log0(qkvz) = qkvy, so qkvz and
                *          qkvt alias qkvy                                              */
    T *att;    /* (B, H, T, T) attention probabilities                          */
    T *o;      /* (N, A)   head outputs (tangent)                               */
    T *od;     /* (N, A)   after dropout (aliases o without dropout)            */
    T *rr;     /* (N, H, C) M_i o_i (hyperbolic merge cache)                    */
    T *rb;     /* (N, 2H, C) exp0(rr) and partial gyro-sums (forward block only) */
    T *a;      /* (N, C)   gyro-added heads (ball)                              */
    T *la;     /* (N, C)   log0(a)             (tangent residual)               */
    T *ts1;    /* (N, C)   u + la              (tangent residual)               */
    T *res1;   /* (N, C)   after the residual (aliases a without residual)      */
    T *lnu1;   /* (N, C)   log0(res1)          (LayerNorm)                      */
    T *lnv1;   /* (N, C)   LN(lnu1)                                             */
    T *lnm1;   /* (N)      LN mean                                              */
    T *lnr1;   /* (N)      LN 1/σ                                               */
    T *x1;     /* (N, C)   exp0(lnv1) (aliases res1 without LayerNorm)          */
    T *u2;     /* (N, C)   log0(x1)                                             */
    T *y2;     /* (N, F)   u2 W1ᵀ                                               */
    T *e2;     /* (N, F)   exp0(y2)                                             */
    T *h;      /* (N, F)   e2 ⊕ b1                                              */
    T *g0;     /* (N, F)   log0(h)                                              */
    T *g1;     /* (N, F)   φ(g0) (aliases g0 for the identity)                  */
    T *gd;     /* (N, F)   after dropout (aliases g1 without dropout)           */
    T *y3;     /* (N, C)   gd W2ᵀ                                               */
    T *e3;     /* (N, C)   exp0(y3)                                             */
    T *f;      /* (N, C)   e3 ⊕ b2                                              */
    T *lf;     /* (N, C)   log0(f)             (tangent residual)               */
    T *ts2;    /* (N, C)   u2 + lf             (tangent residual)               */
    T *res2;   /* (N, C)   after the residual (aliases f without residual)      */
    T *lnu2;   /* (N, C)   log0(res2)                                           */
    T *lnv2;   /* (N, C)   LN(lnu2)                                             */
    T *lnm2;   /* (N)                                                           */
    T *lnr2;   /* (N)                                                           */
    T *xout;   /* (N, C)   layer output (aliases res2 without LayerNorm)        */
    T *mask_o; /* (N, A)   dropout mask of o (forward block only)               */
    T *mask_f; /* (N, F)   dropout mask of g1 (forward block only)              */
} S(tf_layer_ptrs);

/* Per-layer arrays of one block: base pointers of (L, Nmax, width) arrays. Listed with their
 * width in values per row; `att` has Bmax·H·Tmax·Tmax values per layer. */
#define TF_LAYER_FIELDS(X)                                                                     \
    X(u, C) X(qkvy, 3 * A) X(qkvz, 3 * A) X(qkvt, 3 * A) X(o, A) X(od, A) X(rr, RRW) X(a, C)   \
    X(la, C) X(ts1, C) X(res1, C) X(lnu1, C) X(lnv1, C) X(lnm1, 1) X(lnr1, 1) X(x1, C)         \
    X(u2, C) X(y2, F) X(e2, F) X(h, F) X(g0, F) X(g1, F) X(gd, F) X(y3, C) X(e3, C) X(f, C)    \
    X(lf, C) X(ts2, C) X(res2, C) X(lnu2, C) X(lnv2, C) X(lnm2, 1) X(lnr2, 1) X(xout, C)

typedef struct S(tf_block) {
    T *x0;       /* (Nmax, C)  embeddings ⊕ positions            */
    T *lfin;     /* (Nmax, C)  log0 of the last layer's output     */
    T *pooled;   /* (Bmax, C)  max over valid positions (tangent)  */
    T *pdrop;    /* (Bmax, C)  after dropout (aliases pooled)      */
    T *pball;    /* (Bmax, C)  exp0(pdrop): the MLR input          */
    T *logits;   /* (Bmax, K)                                      */
    T *att;      /* (L, Bmax, H, Tmax, Tmax)                       */
#define TF_DECLARE_FIELD(name, w) T *name;
    TF_LAYER_FIELDS(TF_DECLARE_FIELD)
#undef TF_DECLARE_FIELD
} S(tf_block);

/* The activations of the Lorentz geometry (transformer_lorentz_impl.h); shapes there. */
typedef struct S(tf_lz) {
    T *e, *Upe, *x0;                /* (Nmax, d) token points, (Nmax, C) cache, (Nmax, d) x0 */
    T *mu, *szp, *pw;               /* (Bmax, d) pooled, (Bmax) cache, (Bmax, Tmax) weights */
    T *att, *sz;                    /* (L, Bmax, H, Tmax, Tmax), (L, Bmax, H, Tmax) */
    T *qkvU, *qkvZ, *qkv, *O, *Hco, *mo, *Uo, *x1, *U1, *hf, *Hcf, *mf, *U2, *xout; /* (L, Nmax, w) */
} S(tf_lz);

struct P(gyro_tf_acts) {
    int max_batch, max_len, training;
    int B, Tlen;                 /* sizes of the last forward (0 before the first) */
    int dropout_on;           /* the last forward drew dropout masks */
    long nmax;                /* max_batch · max_len */
    int32_t *tokens;          /* (Bmax, Tmax) copy of the last forward's tokens */
    int *lengths;             /* (Bmax) */
    int *pidx;                /* (Bmax, C) argmax of the pooling */
    T *memory;                /* the activation block (owned) */
    T *dmemory;               /* the activation-gradient block (owned; training only) */
    size_t block_values;      /* values in each block */
    S(tf_block) a, d;        /* carved activations and their gradients */
    T *mask_o;                /* (L, Nmax, A) (training only) */
    T *mask_f;                /* (L, Nmax, F) */
    T *mask_p;                /* (Bmax, C) */
    T *merge_cache;           /* unused (NULL): see gyro_tf_acts_new */
    T *scratch;               /* (scratch_values) per-row backward scratch */
    size_t scratch_values;
    /* MLA (attention_kind MLA) */
    size_t mla_np;            /* parameters per layer */
    size_t mla_nacts;         /* cache values per sequence (layout for 1 x max_len) */
    T *mla_cache;             /* (L, Bmax, mla_nacts) */
    T *mla_scratch;           /* (layout n_scratch) backward scratch (training only) */
    /* MoE (ffn_kind MOE) */
    size_t moe_np;            /* parameters per layer */
    size_t moe_nacts;         /* cache values per layer (layout for Nmax tokens) */
    size_t moe_nroute;        /* route ints per layer */
    T *moe_cache;             /* (L, moe_nacts) */
    int *moe_route;           /* (L, moe_nroute) */
    long *moe_load;           /* (L, Nr) tokens routed to each expert, last forward */
    T *moe_scratch;           /* backward scratch (training only) */
    T *moe_gin, *moe_gout;    /* (Nmax, C) valid rows gathered: input, output / its gradient */
    T *moe_gdin;              /* (Nmax, C) gradient of the gathered input (training only) */
    int moe_tokens;           /* Nv: valid tokens of the last forward */
    double balance;           /* balance loss of the last forward */
    /* Lorentz geometry (NULL otherwise) */
    S(tf_lz) lz, dlz;         /* carved activations and their gradients */
    size_t lz_values;         /* values in each Lorentz block */
    T *lz_memory, *lz_dmemory;
    int *lz_kmask;            /* (Bmax, Tmax) key mask of the last forward */
    T *lz_work;               /* hlinear backward scratch (training only) */
    const T *head_in;         /* (B, C) or Lorentz (B, C+1): the head's input, last forward */
    gyro_arena arena;         /* owns every buffer above (one allocation) */
};

/* ---- parameters --------------------------------------------------------------------------- */

static T **S(tf_slot)(PARAMS *p, int k)
{
    switch (k) {
    case GYRO_TF_T_WTE: return &p->wte;
    case GYRO_TF_T_QKVW: return &p->qkvw;
    case GYRO_TF_T_ATTPROJW: return &p->attprojw;
    case GYRO_TF_T_LN1G: return &p->ln1g;
    case GYRO_TF_T_LN1B: return &p->ln1b;
    case GYRO_TF_T_FCW: return &p->fcw;
    case GYRO_TF_T_FCB: return &p->fcb;
    case GYRO_TF_T_FCPROJW: return &p->fcprojw;
    case GYRO_TF_T_FCPROJB: return &p->fcprojb;
    case GYRO_TF_T_LN2G: return &p->ln2g;
    case GYRO_TF_T_LN2B: return &p->ln2b;
    case GYRO_TF_T_MLR_A: return &p->mlr_a;
    case GYRO_TF_T_MLA: return &p->mla;
    case GYRO_TF_T_MOE: return &p->moe;
    case GYRO_TF_T_LZPOS: return &p->lzpos;
    case GYRO_TF_T_LZPEW: return &p->lzpew;
    case GYRO_TF_T_LZQKVW: return &p->lzqkvw;
    case GYRO_TF_T_LZQKVB: return &p->lzqkvb;
    case GYRO_TF_T_LZINV: return &p->lzinv;
    case GYRO_TF_T_LZOW: return &p->lzow;
    case GYRO_TF_T_LZOV: return &p->lzov;
    case GYRO_TF_T_LZF1W: return &p->lzf1w;
    case GYRO_TF_T_LZF1B: return &p->lzf1b;
    case GYRO_TF_T_LZF2W: return &p->lzf2w;
    case GYRO_TF_T_LZF2V: return &p->lzf2v;
    case GYRO_TF_T_LZTIME: return &p->lztime;
    case GYRO_TF_T_LZCLS: return &p->lzcls;
    case GYRO_TF_T_LZBETA: return &p->lzbeta;
    default: return &p->mlr_p;
    }
}

void P(gyro_tf_carve)(const gyro_tf_config *cfg, T *block, PARAMS *out)
{
    memset(out, 0, sizeof *out);
    tf_entry e[GYRO_TF_MAX_TENSORS];
    int n = tf_entries(cfg, e);
    for (int i = 0; i < n; i++)
        *S(tf_slot)(out, e[i].slot) = block + e[i].t.offset;
}

#include "models/transformer_lorentz_impl.h"

static void S(tf_init_params)(MODEL *m, uint64_t seed)
{
    const gyro_tf_config *cfg = &m->cfg;
    const int geo = cfg->geometry;
    const T c = (T)cfg->curvature;
    gyro_rng rng;
    gyro_rng_seed(&rng, seed);
    if (geo == GYRO_TF_GEOMETRY_LORENTZ) {
        S(tf_lz_init_params)(m, &rng);
        return;
    }
    tf_entry e[GYRO_TF_MAX_TENSORS];
    int n = tf_entries(cfg, e);
    for (int i = 0; i < n; i++) {
        T *p = m->params_memory + e[i].t.offset;
        const size_t size = e[i].t.size;
        const int rows = e[i].t.rows, cols = e[i].t.cols;
        switch (e[i].slot) {
        case GYRO_TF_T_MLA: {
            gyro_mla_config mc;
            tf_mla_config(cfg, &mc);
            for (int l = 0; l < rows; l++)
                S(gyro_mla_init_params)(p + (size_t)l * cols, &mc, &rng);
            break;
        }
        case GYRO_TF_T_MOE: {
            gyro_moe_config fc;
            tf_moe_config(cfg, &fc);
            for (int l = 0; l < rows; l++)
                S(gyro_moe_init_params)(p + (size_t)l * cols, &fc, &rng);
            break;
        }
        case GYRO_TF_T_WTE: {
            /* tangent rows N(0, 1/C), then exp0 into the ball: |row| ≈ tanh(1) */
            const double sd = 1.0 / sqrt((double)cols);
            for (size_t j = 0; j < size; j++)
                p[j] = (T)(sd * gyro_rng_normal(&rng));
            S(gyro_geo_exp0)(p, cols, p, cols, geo, c, rows, cols);
            break;
        }
        case GYRO_TF_T_LN1G:
        case GYRO_TF_T_LN2G: {
            /* A normalised row has norm √C; in the ball that tangent vector would be mapped
             * to the float32 boundary (artanh(1 − ε) ≈ 3.1 is the largest tangent norm a
             * float32 ball point keeps), so the hyperbolic gains start at 1/√C (norm ≈ 1). */
            const double g0 = geo == GYRO_TF_GEOMETRY_HYPERBOLIC ? 1.0 / sqrt((double)cols) : 1.0;
            for (size_t j = 0; j < size; j++)
                p[j] = (T)g0;
            break;
        }
        case GYRO_TF_T_LN1B:
        case GYRO_TF_T_LN2B:
        case GYRO_TF_T_FCB:
        case GYRO_TF_T_FCPROJB:
        case GYRO_TF_T_MLR_P:
            memset(p, 0, size * sizeof(T)); /* Euclidean zero = the ball's origin */
            break;
        default: {
            /* matrices (stacked per layer): Xavier-uniform on (out, in) = the matrix shape */
            int fan_out = 0, fan_in = cols;
            switch (e[i].slot) {
            case GYRO_TF_T_QKVW: fan_out = 3 * cfg->n_heads * cfg->head_dim; break;
            case GYRO_TF_T_ATTPROJW: fan_out = cfg->dim; break;
            case GYRO_TF_T_FCW: fan_out = cfg->ffn_dim; break;
            case GYRO_TF_T_FCPROJW: fan_out = cfg->dim; break;
            default: fan_out = rows; break; /* mlr_a (K, C) */
            }
            const double lim = sqrt(6.0 / (double)(fan_in + fan_out));
            for (size_t j = 0; j < size; j++)
                p[j] = (T)(lim * (2.0 * gyro_rng_uniform(&rng) - 1.0));
            break;
        }
        }
    }
}

void P(gyro_tf_free)(MODEL *m)
{
    if (!m)
        return;
    free(m->params_memory);
    free(m->grads_memory);
    free(m->pos);
    free(m);
}

gyro_status P(gyro_tf_new)(const gyro_tf_config *cfg, uint64_t seed, int with_grads, MODEL **out)
{
    *out = NULL;
    gyro_status st = gyro_tf_config_validate(cfg);
    if (st != GYRO_OK)
        return st;
    MODEL *m = calloc(1, sizeof *m);
    if (!m)
        return gyro_error_set(GYRO_ERR_NOMEM, "transformer: out of memory");
    m->cfg = *cfg;
    m->n_params = gyro_tf_param_count(cfg);
    m->n_tensors = gyro_tf_tensor_table(cfg, m->tensors);
    m->params_memory = calloc(m->n_params, sizeof(T));
    m->pos = calloc((size_t)cfg->max_len * cfg->dim, sizeof(T));
    if (with_grads)
        m->grads_memory = calloc(m->n_params, sizeof(T));
    if (!m->params_memory || !m->pos || (with_grads && !m->grads_memory)) {
        P(gyro_tf_free)(m);
        return gyro_error_set(GYRO_ERR_NOMEM, "transformer: cannot allocate %zu parameters",
                              gyro_tf_param_count(cfg));
    }
    P(gyro_tf_carve)(cfg, m->params_memory, &m->params);
    if (with_grads)
        P(gyro_tf_carve)(cfg, m->grads_memory, &m->grads);
    /* Lorentz: the Euclidean s·PE table, lifted into the initial position points */
    S(gyro_embed_positions)(m->pos, cfg->geometry == GYRO_TF_GEOMETRY_HYPERBOLIC
                                        ? GYRO_TF_GEOMETRY_HYPERBOLIC : GYRO_TF_GEOMETRY_EUCLIDEAN,
                            (T)cfg->curvature, (T)cfg->pos_scale, cfg->max_len, cfg->dim);
    S(tf_init_params)(m, seed);
    *out = m;
    return GYRO_OK;
}

/* ---- activations -------------------------------------------------------------------------- */

/* Carve (or, with base == NULL, measure) one block. Returns the number of values. */
static size_t S(tf_carve_block)(T *base, S(tf_block) *blk, const gyro_tf_config *cfg, int bmax,
                                int tmax)
{
    const long N = (long)bmax * tmax;
    const long C = cfg->dim, F = TF_FW(cfg), H = cfg->n_heads, A = TF_AW(cfg);
    const long Lr = cfg->n_layers, K = cfg->n_classes;
    const long RRW = cfg->geometry == GYRO_TF_GEOMETRY_HYPERBOLIC && A ? H * C : 0;
    size_t off = 0;
#define TF_TAKE(field, count)                                                                  \
    do {                                                                                       \
        if (base)                                                                              \
            blk->field = base + off;                                                           \
        off += (size_t)(count);                                                                \
        off = (off + 15) & ~(size_t)15; /* 64-byte aligned in float32 */                     \
    } while (0)
    if (cfg->geometry == GYRO_TF_GEOMETRY_LORENTZ) { /* only the logits: the rest is in lz */
        TF_TAKE(logits, bmax * K);
        return off;
    }
    TF_TAKE(x0, N * C);
    TF_TAKE(lfin, N * C);
    TF_TAKE(pooled, bmax * C);
    TF_TAKE(pdrop, bmax * C);
    TF_TAKE(pball, bmax * C);
    TF_TAKE(logits, bmax * K);
    TF_TAKE(att, A ? Lr * bmax * H * tmax * tmax : 0);
#define TF_TAKE_LAYER(name, w) TF_TAKE(name, Lr * N * (w));
    TF_LAYER_FIELDS(TF_TAKE_LAYER)
#undef TF_TAKE_LAYER
#undef TF_TAKE
    (void)RRW;
    return off;
}

void P(gyro_tf_acts_free)(ACTS *a)
{
    if (!a)
        return;
    gyro_arena_free(&a->arena);
    free(a);
}

gyro_status P(gyro_tf_acts_new)(const MODEL *m, int max_batch, int max_len, int training,
                                ACTS **out)
{
    *out = NULL;
    const gyro_tf_config *cfg = &m->cfg;
    if (max_batch < 1 || max_batch > GYRO_TF_MAX_BATCH)
        return gyro_error_set(GYRO_ERR_USAGE, "transformer: max_batch %d outside [1, %d]",
                              max_batch, GYRO_TF_MAX_BATCH);
    if (max_len < 1 || max_len > cfg->max_len)
        return gyro_error_set(GYRO_ERR_USAGE, "transformer: max_len %d outside [1, %d]",
                              max_len, cfg->max_len);
    ACTS *a = calloc(1, sizeof *a);
    if (!a)
        return gyro_error_set(GYRO_ERR_NOMEM, "transformer: out of memory");
    const long N = (long)max_batch * max_len;
    const long C = cfg->dim, F = TF_FW(cfg), H = cfg->n_heads, A = TF_AW(cfg);
    const long Lr = cfg->n_layers;
    const int mla = cfg->attention_kind == GYRO_TF_ATTENTION_MLA;
    const int moe = cfg->ffn_kind == GYRO_TF_FFN_MOE;
    size_t mla_nscratch = 0, moe_nscratch = 0;
    long moe_nr = 0;
    if (mla) {
        gyro_mla_config mc;
        gyro_mla_layout lay;
        tf_mla_config(cfg, &mc);
        gyro_mla_layout_init(&lay, &mc, 1, max_len);
        a->mla_np = tf_mla_params(cfg);
        a->mla_nacts = lay.n_acts;
        mla_nscratch = lay.n_scratch;
    }
    if (moe) {
        gyro_moe_config fc;
        gyro_moe_layout lay;
        tf_moe_config(cfg, &fc);
        gyro_moe_layout_init(&lay, &fc, (int)N);
        a->moe_np = tf_moe_params(cfg);
        a->moe_nacts = lay.n_acts;
        a->moe_nroute = lay.n_route;
        moe_nscratch = lay.n_scratch;
        moe_nr = cfg->moe_experts;
    }
    a->max_batch = max_batch;
    a->max_len = max_len;
    a->training = training != 0;
    a->nmax = N;
    a->block_values = S(tf_carve_block)(NULL, &a->a, cfg, max_batch, max_len);
    long wide = 3 * A > F ? 3 * A : F;
    if (C > wide)
        wide = C;
    a->scratch_values = (size_t)((2 * H + 6) * C + 4 * wide + (long)max_len * max_len);
    const int lz = cfg->geometry == GYRO_TF_GEOMETRY_LORENTZ;
    if (lz) {
        a->scratch_values = 0;
        a->lz_values = S(tf_lz_carve)(NULL, &a->lz, cfg, max_batch, max_len);
    }
    const int masks = a->training && !lz; /* Lorentz masks live in its block */

    /* Everything comes from one arena: the sizes, in allocation order. */
    const size_t sizes[] = {
        a->block_values * sizeof(T),                              /* activations */
        (size_t)N * sizeof(int32_t),                              /* tokens */
        (size_t)max_batch * sizeof(int),                          /* lengths */
        (size_t)max_batch * C * sizeof(int),                      /* pidx */
        a->scratch_values * sizeof(T),                            /* scratch */
        0, /* (no merge cache: the merge backward recomputes each row's partial sums) */
        a->training ? a->block_values * sizeof(T) : 0,            /* activation gradients */
        masks ? (size_t)(Lr * N * A) * sizeof(T) : 0,             /* dropout masks */
        masks ? (size_t)(Lr * N * F) * sizeof(T) : 0,
        masks ? (size_t)max_batch * C * sizeof(T) : 0,
        (size_t)Lr * max_batch * a->mla_nacts * sizeof(T),        /* 10: MLA caches */
        a->training ? mla_nscratch * sizeof(T) : 0,
        (size_t)Lr * a->moe_nacts * sizeof(T),                    /* 12: MoE caches */
        (size_t)Lr * a->moe_nroute * sizeof(int),
        (size_t)(Lr * moe_nr) * sizeof(long),
        a->training ? moe_nscratch * sizeof(T) : 0,
        moe ? (size_t)N * C * sizeof(T) : 0,
        moe ? (size_t)N * C * sizeof(T) : 0,
        moe && a->training ? (size_t)N * C * sizeof(T) : 0,
        a->lz_values * sizeof(T),                                 /* 19: Lorentz block */
        a->training ? a->lz_values * sizeof(T) : 0,               /* its gradients */
        lz ? (size_t)N * sizeof(int) : 0,                         /* key mask */
        0,                                                        /* (unused) */
        lz && a->training ? S(tf_lz_work_values)(cfg, N) * sizeof(T) : 0,
    };
    size_t total = 0;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        total = gyro_arena_need(total, sizes[i]);
    if (gyro_arena_init(&a->arena, total) != GYRO_OK) {
        free(a);
        return gyro_error_set(GYRO_ERR_NOMEM,
                              "transformer: cannot allocate %zu MiB of activations for %d x %d "
                              "tokens", total >> 20, max_batch, max_len);
    }
    gyro_arena *ar = &a->arena;
    a->memory = gyro_arena_alloc(ar, sizes[0]);
    a->tokens = gyro_arena_alloc(ar, sizes[1]);
    a->lengths = gyro_arena_alloc(ar, sizes[2]);
    a->pidx = gyro_arena_alloc(ar, sizes[3]);
    a->scratch = gyro_arena_alloc(ar, sizes[4]);
    /* no merge cache, in training either: the forward runs the fused gyro-sum of inference
     * (gyro_merge_sum) and gyro_merge_backward recomputes each row's partial sums from the
     * heads' RR row (L1-resident then), which costs less than writing and re-reading a
     * (L, N, 2H·C) cache */
    a->merge_cache = NULL;
    if (a->training)
        a->dmemory = gyro_arena_alloc(ar, sizes[6]);
    if (masks) {
        a->mask_o = gyro_arena_alloc(ar, sizes[7]);
        a->mask_f = gyro_arena_alloc(ar, sizes[8]);
        a->mask_p = gyro_arena_alloc(ar, sizes[9]);
    }
    if (mla) {
        a->mla_cache = gyro_arena_alloc(ar, sizes[10]);
        a->mla_scratch = a->training ? gyro_arena_alloc(ar, sizes[11]) : NULL;
    }
    if (moe) {
        a->moe_cache = gyro_arena_alloc(ar, sizes[12]);
        a->moe_route = gyro_arena_alloc(ar, sizes[13]);
        a->moe_load = gyro_arena_alloc(ar, sizes[14]);
        if (a->moe_load && sizes[14])
            memset(a->moe_load, 0, sizes[14]);
        a->moe_scratch = a->training ? gyro_arena_alloc(ar, sizes[15]) : NULL;
        a->moe_gin = gyro_arena_alloc(ar, sizes[16]);
        a->moe_gout = gyro_arena_alloc(ar, sizes[17]);
        a->moe_gdin = a->training ? gyro_arena_alloc(ar, sizes[18]) : NULL;
    }
    if (lz) {
        a->lz_memory = gyro_arena_alloc(ar, sizes[19]);
        a->lz_dmemory = a->training ? gyro_arena_alloc(ar, sizes[20]) : NULL;
        a->lz_kmask = gyro_arena_alloc(ar, sizes[21]);
        a->lz_work = a->training ? gyro_arena_alloc(ar, sizes[23]) : NULL;
        S(tf_lz_carve)(a->lz_memory, &a->lz, cfg, max_batch, max_len);
        if (a->training)
            S(tf_lz_carve)(a->lz_dmemory, &a->dlz, cfg, max_batch, max_len);
    }
    S(tf_carve_block)(a->memory, &a->a, cfg, max_batch, max_len);
    if (a->training)
        S(tf_carve_block)(a->dmemory, &a->d, cfg, max_batch, max_len);
    *out = a;
    return GYRO_OK;
}

/* The aliases of one residual-and-LayerNorm sublayer (see tf_sublayer below), the same after
 * attention (y = a) and after the feed-forward block (y = f): ly = log0 y is y itself in the
 * Euclidean geometry; without a residual the result is y, with a Euclidean tangent residual it
 * is the sum ts (exp0 is the identity); without LayerNorm the output is the residual's result,
 * with a Euclidean LayerNorm its input is that result and its output is lnv. */
static void S(tf_sublayer_alias)(T **ly, T **res, T **lnu, T **out, T *y, T *ts, T *lnv,
                                 const gyro_tf_config *cfg, int eu)
{
    if (eu)
        *ly = y;
    if (cfg->residual == GYRO_TF_RESIDUAL_NONE)
        *res = y;
    else if (cfg->residual == GYRO_TF_RESIDUAL_TANGENT && eu)
        *res = ts;
    if (!cfg->layernorm) {
        *out = *res;
    } else if (eu) {
        *lnu = *res;
        *out = lnv;
    }
}

/* The pointers of layer l in block `blk` with the configuration's aliases. `fwd` selects the
 * activation block (masks and merge cache attached) or the gradient block; xin is the layer's
 * input. In the Euclidean geometry exp0 and log0 are the identity, so their outputs alias
 * their inputs instead of being copies (the geo kernels skip a map whose output is its input,
 * and its backward whose gradient buffers coincide). */
static void S(tf_layer_ptrs_get)(S(tf_layer_ptrs) *p, const ACTS *a, const S(tf_block) *blk,
                                 const gyro_tf_config *cfg, int l, int fwd, T *xin)
{
    const long N = a->nmax, C = cfg->dim, F = TF_FW(cfg), H = cfg->n_heads;
    const long A = TF_AW(cfg);
    const long RRW = cfg->geometry == GYRO_TF_GEOMETRY_HYPERBOLIC && A ? H * C : 0;
    const int eu = cfg->geometry != GYRO_TF_GEOMETRY_HYPERBOLIC;
    (void)F;
#define TF_LAYER_PTR(name, w) p->name = blk->name + (long)l * N * (w);
    TF_LAYER_FIELDS(TF_LAYER_PTR)
#undef TF_LAYER_PTR
    p->att = A ? blk->att + (long)l * a->max_batch * H * a->max_len * a->max_len : NULL;
    p->xin = xin;
    /* attention */
    if (eu)
        p->u = p->xin;
    if (eu || cfg->qkv_tangent) {
        p->qkvz = p->qkvy;
        p->qkvt = p->qkvz;
    }
    if (!a->dropout_on)
        p->od = p->o;
    /* residual and LayerNorm 1 */
    S(tf_sublayer_alias)(&p->la, &p->res1, &p->lnu1, &p->x1, p->a, p->ts1, p->lnv1, cfg, eu);
    /* feed-forward */
    if (eu) {
        p->u2 = p->x1;
        p->e2 = p->y2;
        p->g0 = p->h;
    }
    if (cfg->ffn_activation == GYRO_TF_ACTIVATION_IDENTITY)
        p->g1 = p->g0;
    if (!a->dropout_on)
        p->gd = p->g1;
    if (eu)
        p->e3 = p->y3;
    /* residual and LayerNorm 2 */
    S(tf_sublayer_alias)(&p->lf, &p->res2, &p->lnu2, &p->xout, p->f, p->ts2, p->lnv2, cfg, eu);
    p->mask_o = fwd && a->mask_o ? a->mask_o + (long)l * N * A : NULL;
    p->mask_f = fwd && a->mask_f ? a->mask_f + (long)l * N * F : NULL;
    p->rb = fwd && a->merge_cache ? a->merge_cache + (long)l * N * 2 * H * C : NULL;
}

/* The output of layer l (with aliases): what layer l+1 reads as its input (it does not depend
 * on the layer's own input). */
static T *S(tf_layer_out)(const ACTS *a, const S(tf_block) *blk, const gyro_tf_config *cfg,
                          int l)
{
    S(tf_layer_ptrs) p;
    S(tf_layer_ptrs_get)(&p, a, blk, cfg, l, 0, blk->x0);
    return p.xout;
}

static void S(tf_ptrs)(S(tf_layer_ptrs) *p, const ACTS *a, const S(tf_block) *blk,
                       const gyro_tf_config *cfg, int l, int fwd)
{
    T *xin = l > 0 ? S(tf_layer_out)(a, blk, cfg, l - 1) : blk->x0;
    S(tf_layer_ptrs_get)(p, a, blk, cfg, l, fwd, xin);
}

/* The head's buffers with the same aliases: lf = log0(xl), pd = dropout(pooled), pb = exp0(pd). */
static void S(tf_head_ptrs)(T **lf, T **pd, T **pb, const ACTS *a, const S(tf_block) *blk,
                            const gyro_tf_config *cfg, T *xl)
{
    const int eu = cfg->geometry != GYRO_TF_GEOMETRY_HYPERBOLIC;
    *lf = eu ? xl : blk->lfin;
    *pd = a->dropout_on ? blk->pdrop : blk->pooled;
    *pb = eu ? *pd : blk->pball;
}

/* ---- valid-token gather / scatter (MoE) ------------------------------------------------------ */

/* dst (Nv, C) = the rows of src (B, T, C) at valid positions, in order; returns Nv. */
static int S(tf_gather_valid)(T *dst, const T *src, const int *lengths, int B, int Tlen, int C)
{
    int nv = 0;
    for (int b = 0; b < B; b++) {
        memcpy(dst + (size_t)nv * C, src + (size_t)b * Tlen * C,
               (size_t)lengths[b] * C * sizeof(T));
        nv += lengths[b];
    }
    return nv;
}

/* dst (B, T, C): valid rows = src (Nv, C) in order (accumulate != 0: +=); with accumulate == 0
 * the padded rows are set to 0 (the origin of the ball). */
static void S(tf_scatter_valid)(T *dst, const T *src, const int *lengths, int B, int Tlen, int C,
                                int accumulate)
{
    size_t k = 0;
    for (int b = 0; b < B; b++) {
        T *row = dst + (size_t)b * Tlen * C;
        const size_t nval = (size_t)lengths[b] * C;
        if (accumulate) {
            for (size_t i = 0; i < nval; i++)
                row[i] += src[k + i];
        } else {
            memcpy(row, src + k, nval * sizeof(T));
            memset(row + nval, 0, ((size_t)Tlen * C - nval) * sizeof(T));
        }
        k += nval;
    }
}

/* ---- forward ------------------------------------------------------------------------------ */

const T *P(gyro_tf_logits)(const ACTS *a)
{
    return a->a.logits;
}

/* The residual-and-LayerNorm sublayer (gyro_tf_sublayer, transformer.h) that follows attention
 * and the feed-forward block. The same named buffers of one layer serve the forward pass and,
 * in the gradient block, the backward pass; which buffers alias which (no residual, no
 * LayerNorm, Euclidean) is settled by tf_layer_ptrs_get. */
typedef P(gyro_tf_sublayer) S(tf_sublayer);

void P(gyro_tf_sublayer_forward)(const S(tf_sublayer) *p, const T *gain, const T *bias,
                                 int residual, int layernorm, int geo, T c, int Nr, int C)
{
    if (residual == GYRO_TF_RESIDUAL_MOBIUS) {
        S(gyro_geo_add)(p->res, p->xin, p->y, C, geo, c, Nr, C);
    } else if (residual == GYRO_TF_RESIDUAL_TANGENT) {
        S(gyro_geo_log0)(p->ly, C, p->y, C, geo, c, Nr, C);
        for (long i = 0; i < (long)Nr * C; i++)
            p->ts[i] = p->u[i] + p->ly[i];
        S(gyro_geo_exp0)(p->res, C, p->ts, C, geo, c, Nr, C);
    }
    if (layernorm) {
        S(gyro_geo_log0)(p->lnu, C, p->res, C, geo, c, Nr, C);
        S(gyro_layernorm_forward)(p->lnv, p->lnm, p->lnr, p->lnu, gain, bias, Nr, C);
        S(gyro_geo_exp0)(p->out, C, p->lnv, C, geo, c, Nr, C);
    }
}

/* Backward of gyro_tf_sublayer_forward: q holds the gradient buffers (q->out filled), p the
 * forward activations; accumulates into q->xin (Möbius residual), q->u (tangent residual), q->y
 * and the LayerNorm gain and bias gradients. */
void P(gyro_tf_sublayer_backward)(const S(tf_sublayer) *q, T *dgain, T *dbias,
                                  const S(tf_sublayer) *p, const T *gain, T *scr,
                                  int residual, int layernorm, int geo, T c, int Nr, int C)
{
    if (layernorm) {
        S(gyro_geo_exp0_backward)(q->lnv, C, scr, q->out, C, p->out, C, p->lnv, C, geo, c, Nr,
                                  C);
        S(gyro_layernorm_backward)(q->lnu, dgain, dbias, q->lnv, p->lnu, p->lnm, p->lnr, gain,
                                   Nr, C);
        S(gyro_geo_log0_backward)(q->res, C, q->lnu, C, p->res, C, geo, c, Nr, C);
    }
    if (residual == GYRO_TF_RESIDUAL_MOBIUS) {
        S(gyro_geo_add_backward)(q->xin, q->y, scr, q->res, p->res, p->xin, p->y, C, geo, c, Nr,
                                 C);
    } else if (residual == GYRO_TF_RESIDUAL_TANGENT) {
        S(gyro_geo_exp0_backward)(q->ts, C, scr, q->res, C, p->res, C, p->ts, C, geo, c, Nr,
                                  C);
        for (long i = 0; i < (long)Nr * C; i++) {
            q->u[i] += q->ts[i];
            q->ly[i] += q->ts[i];
        }
        S(gyro_geo_log0_backward)(q->y, C, q->ly, C, p->y, C, geo, c, Nr, C);
    }
}

/* The sublayer after attention (which = 1) or after the feed-forward block (which = 2). */
static S(tf_sublayer) S(tf_sublayer_of)(const S(tf_layer_ptrs) *p, int which)
{
    if (which == 1)
        return (S(tf_sublayer)){p->xin, p->u, p->a, p->la, p->ts1, p->res1,
                                 p->lnu1, p->lnv1, p->lnm1, p->lnr1, p->x1};
    return (S(tf_sublayer)){p->x1, p->u2, p->f, p->lf, p->ts2, p->res2,
                             p->lnu2, p->lnv2, p->lnm2, p->lnr2, p->xout};
}

/* The inference forward of the hyperbolic block with tangent residuals and hyperbolic
 * LayerNorm (the configuration `classify train` uses) on packed weights, after the embedding:
 * every layer stays in the tangent space at the origin between its products, with the fused
 * maps of kernels.h (no ball point is stored that only a log0 would read):
 *   u → q|k|v = u Wᵀ → attention → a = merged heads (ball)
 *     → u2 = log0 exp0 LN log0 exp0(u + log0 a)                 (tangent_res_ln)
 *     → g = φ log0(exp0(u2 W1ᵀ) ⊕ b1) → f = exp0(g W2ᵀ) ⊕ b2    (ffn_mid, geo_exp0_add)
 *     → u' = log0 exp0 LN log0 exp0(u2 + log0 f)                (the next layer's u)
 * and the last u' is the head's log0 of the last layer's output. Fills the buffers the head
 * and gyro_tf_logits read (not the per-layer caches of a backward). */
static void S(tf_forward_fused)(const MODEL *m, const gyro_tf_packed *pk, ACTS *a, int B,
                                int Tlen)
{
    const gyro_tf_config *cfg = &m->cfg;
    const int geo = cfg->geometry, L = cfg->n_layers;
    const T c = (T)cfg->curvature;
    const int C = cfg->dim, F = cfg->ffn_dim, H = cfg->n_heads, D = cfg->head_dim, A = H * D;
    const int K = cfg->n_classes, Nr = B * Tlen;
    const int relu = cfg->ffn_activation == GYRO_TF_ACTIVATION_RELU;
    const PARAMS *w = &m->params;
    S(tf_block) *blk = &a->a;
    S(tf_layer_ptrs) p, next;
    S(tf_ptrs)(&p, a, blk, cfg, 0, 1);
    S(gyro_geo_log0)(p.u, C, blk->x0, C, geo, c, Nr, C);
    for (int l = 0; l < L; l++) {
        const T *wqkv = TF_SLICE(w->qkvw, l, 3 * A * C), *wo = TF_SLICE(w->attprojw, l, C * A);
        const T *w1 = TF_SLICE(w->fcw, l, F * C), *w2 = TF_SLICE(w->fcprojw, l, C * F);
        if (!S(tf_pk_linear)(TF_PK(pk, qkv, l), p.qkvy, 3 * A, p.u, C, Nr, C, 3 * A))
            S(gyro_linear_forward)(p.qkvy, 3 * A, p.u, C, wqkv, C, Nr, C, 3 * A);
        S(tf_pk_attention)(pk, p.o, p.att, p.qkvy, a->lengths, B, Tlen, H, D);
        if (!S(tf_pk_merge)(TF_PK(pk, att, l), p.a, p.rr, p.o, geo, c, Nr, H, D, C))
            S(gyro_merge_forward)(p.a, p.rr, NULL, p.o, wo, geo, c, Nr, H, D, C);
        S(gyro_tangent_res_ln)(p.u2, p.u, p.a, TF_SLICE(w->ln1g, l, C), TF_SLICE(w->ln1b, l, C),
                               c, Nr, C);
        if (!S(tf_pk_linear)(TF_PK(pk, fc, l), p.y2, F, p.u2, C, Nr, C, F))
            S(gyro_linear_forward)(p.y2, F, p.u2, C, w1, C, Nr, C, F);
        S(gyro_ffn_mid)(p.g0, p.y2, TF_SLICE(w->fcb, l, F), relu, c, Nr, F);
        if (!S(tf_pk_linear)(TF_PK(pk, fcproj, l), p.y3, C, p.g0, F, Nr, F, C))
            S(gyro_linear_forward)(p.y3, C, p.g0, F, w2, F, Nr, F, C);
        S(gyro_geo_exp0_add)(p.f, p.y3, TF_SLICE(w->fcprojb, l, C), c, Nr, C);
        T *uo = blk->lfin;
        if (l + 1 < L) {
            S(tf_ptrs)(&next, a, blk, cfg, l + 1, 1);
            uo = next.u;
        }
        S(gyro_tangent_res_ln)(uo, p.u2, p.f, TF_SLICE(w->ln2g, l, C), TF_SLICE(w->ln2b, l, C),
                               c, Nr, C);
        if (l + 1 < L)
            p = next;
    }
    /* max pooling in the tangent space, then hyperbolic MLR */
    S(gyro_pool_forward)(blk->pooled, a->pidx, blk->lfin, a->lengths, B, Tlen, C);
    S(gyro_geo_exp0)(blk->pball, C, blk->pooled, C, geo, c, B, C);
    S(gyro_mlr_forward)(blk->logits, blk->pball, w->mlr_p, w->mlr_a, geo, c, B, K, C);
    a->head_in = blk->pball;
}

/* The forward of gyro_tf_forward; pk (float32 only, else NULL) packed dense weights. */
static gyro_status S(tf_forward)(const MODEL *m, const gyro_tf_packed *pk, ACTS *a,
                                 const int32_t *tokens, const int *lengths, int B, int Tlen,
                                 gyro_rng *rng)
{
    const gyro_tf_config *cfg = &m->cfg;
    if (B < 1 || B > a->max_batch || Tlen < 1 || Tlen > a->max_len)
        return gyro_error_set(GYRO_ERR_USAGE,
                              "transformer: batch %d x %d exceeds the activations (%d x %d)", B,
                              Tlen, a->max_batch, a->max_len);
    const int want_dropout = rng != NULL && cfg->dropout > 0.0f;
    if (want_dropout && !a->training)
        return gyro_error_set(GYRO_ERR_USAGE,
                              "transformer: dropout needs activations created for training");
    for (int b = 0; b < B; b++) {
        if (lengths[b] < 1 || lengths[b] > Tlen)
            return gyro_error_set(GYRO_ERR_DATA, "transformer: sequence %d has length %d "
                                  "outside [1, %d]", b, lengths[b], Tlen);
        for (int t = 0; t < lengths[b]; t++) {
            int32_t id = tokens[(long)b * Tlen + t];
            if (id < 0 || id >= cfg->vocab_size)
                return gyro_error_set(GYRO_ERR_DATA, "transformer: sequence %d position %d: "
                                      "token id %d outside [0, %d)", b, t, (int)id,
                                      cfg->vocab_size);
        }
    }
    a->B = B;
    a->Tlen = Tlen;
    a->dropout_on = want_dropout;
    memcpy(a->tokens, tokens, (size_t)B * Tlen * sizeof(int32_t));
    memcpy(a->lengths, lengths, (size_t)B * sizeof(int));
    if (cfg->geometry == GYRO_TF_GEOMETRY_LORENTZ) {
        S(tf_lz_forward)(m, pk, a, B, Tlen, rng);
        a->head_in = a->lz.mu;
        return GYRO_OK;
    }

    const int geo = cfg->geometry;
    const T c = (T)cfg->curvature, pdrop = (T)cfg->dropout;
    const int C = cfg->dim, F = cfg->ffn_dim, H = cfg->n_heads, D = cfg->head_dim, A = H * D;
    const int K = cfg->n_classes, Nr = B * Tlen;
    const PARAMS *w = &m->params;
    S(tf_block) *blk = &a->a;

    const int mla = cfg->attention_kind == GYRO_TF_ATTENTION_MLA;
    const int moe = cfg->ffn_kind == GYRO_TF_FFN_MOE;
    gyro_mla_config mc;
    gyro_moe_config fc;
    if (mla)
        tf_mla_config(cfg, &mc);
    if (moe)
        tf_moe_config(cfg, &fc);
    a->balance = 0.0;
    a->moe_tokens = 0;

    S(gyro_embed_forward)(blk->x0, tokens, lengths, w->wte, m->pos, geo, c, B, Tlen, C);
    if (pk && !a->dropout_on && geo == GYRO_TF_GEOMETRY_HYPERBOLIC && !mla && !moe &&
        cfg->residual == GYRO_TF_RESIDUAL_TANGENT && cfg->layernorm && cfg->n_layers > 0) {
        S(tf_forward_fused)(m, pk, a, B, Tlen);
        return GYRO_OK;
    }
    for (int l = 0; l < cfg->n_layers; l++) {
        S(tf_layer_ptrs) p;
        S(tf_ptrs)(&p, a, blk, cfg, l, 1);

        S(gyro_geo_log0)(p.u, C, p.xin, C, geo, c, Nr, C);
        if (mla) {
            /* MLA per sequence over its valid positions; padded rows of `a` at the origin */
            const T *wm = TF_SLICE(w->mla, l, a->mla_np);
            for (int b = 0; b < B; b++) {
                const size_t r0 = (size_t)b * Tlen * C, n = (size_t)lengths[b];
                T *cache = a->mla_cache + ((size_t)l * a->max_batch + b) * a->mla_nacts;
                S(gyro_mla_forward)(p.a + r0, cache, p.xin + r0, wm, &mc, 1, lengths[b]);
                memset(p.a + r0 + n * C, 0, ((size_t)Tlen - n) * C * sizeof(T));
            }
        } else {
            /* attention: q|k|v = log0(W ⊗ x) = log0(exp0(W log0 x)) = W log0 x, split into
             * heads (Ganea 2018, Lemma 6: Möbius matvec); legacy models (qkv_tangent 0) take
             * log0 of each head's D-slice of W ⊗ x instead */
            const T *wqkv = TF_SLICE(w->qkvw, l, 3 * A * C), *wo = TF_SLICE(w->attprojw, l, C * A);
            if (!S(tf_pk_linear)(TF_PK(pk, qkv, l), p.qkvy, 3 * A, p.u, C, Nr, C, 3 * A))
                S(gyro_linear_forward)(p.qkvy, 3 * A, p.u, C, wqkv, C, Nr, C, 3 * A);
            if (p.qkvt != p.qkvy) {
                S(gyro_geo_exp0)(p.qkvz, 3 * A, p.qkvy, 3 * A, geo, c, Nr, 3 * A);
                S(gyro_geo_log0)(p.qkvt, D, p.qkvz, D, geo, c, Nr * 3 * H, D);
            }
            S(gyro_attention_forward)(p.o, p.att, p.qkvt, lengths, B, Tlen, H, D);
            if (a->dropout_on)
                S(gyro_dropout_forward)(p.od, p.mask_o, p.o, rng, pdrop, (long)Nr * A);
            /* inference (no merge cache): the fused gyro-sum */
            if (!S(tf_pk_merge)(TF_PK(pk, att, l), p.a, p.rr, p.od, geo, c, Nr, H, D, C))
                S(gyro_merge_forward)(p.a, p.rr, p.rb, p.od, wo, geo, c, Nr, H, D, C);
        }

        /* residual and LayerNorm after attention */
        const S(tf_sublayer) s1 = S(tf_sublayer_of)(&p, 1);
        P(gyro_tf_sublayer_forward)(&s1, TF_SLICE(w->ln1g, l, C), TF_SLICE(w->ln1b, l, C),
                                    cfg->residual, cfg->layernorm, geo, c, Nr, C);

        S(gyro_geo_log0)(p.u2, C, p.x1, C, geo, c, Nr, C);
        if (moe) {
            /* mixture of experts over the valid tokens; padded rows of f at the origin */
            T *cache = a->moe_cache + (size_t)l * a->moe_nacts;
            int *route = a->moe_route + (size_t)l * a->moe_nroute;
            long *load = a->moe_load + (size_t)l * cfg->moe_experts;
            const int nv = S(tf_gather_valid)(a->moe_gin, p.x1, lengths, B, Tlen, C);
            S(gyro_moe_forward)(a->moe_gout, cache, route, a->moe_gin,
                                TF_SLICE(w->moe, l, a->moe_np), &fc, nv);
            S(tf_scatter_valid)(p.f, a->moe_gout, lengths, B, Tlen, C, 0);
            a->balance += S(gyro_moe_balance_loss)(NULL, cache, route, &fc, nv,
                                                   (double)cfg->moe_balance);
            memset(load, 0, (size_t)cfg->moe_experts * sizeof(long));
            gyro_moe_count_load(load, route, &fc, nv);
            a->moe_tokens = nv;
        } else {
            /* feed-forward: M2 ⊗ φ⊗(M1 ⊗ x ⊕ b1) ⊕ b2 */
            const T *w1 = TF_SLICE(w->fcw, l, F * C), *b1 = TF_SLICE(w->fcb, l, F);
            const T *w2 = TF_SLICE(w->fcprojw, l, C * F), *b2 = TF_SLICE(w->fcprojb, l, C);
            if (!S(tf_pk_linear)(TF_PK(pk, fc, l), p.y2, F, p.u2, C, Nr, C, F))
                S(gyro_linear_forward)(p.y2, F, p.u2, C, w1, C, Nr, C, F);
            S(gyro_geo_exp0)(p.e2, F, p.y2, F, geo, c, Nr, F);
            S(gyro_geo_add)(p.h, p.e2, b1, 0, geo, c, Nr, F);
            S(gyro_geo_log0)(p.g0, F, p.h, F, geo, c, Nr, F);
            if (cfg->ffn_activation == GYRO_TF_ACTIVATION_RELU)
                S(gyro_relu_forward)(p.g1, p.g0, (long)Nr * F);
            if (a->dropout_on)
                S(gyro_dropout_forward)(p.gd, p.mask_f, p.g1, rng, pdrop, (long)Nr * F);
            if (!S(tf_pk_linear)(TF_PK(pk, fcproj, l), p.y3, C, p.gd, F, Nr, F, C))
                S(gyro_linear_forward)(p.y3, C, p.gd, F, w2, F, Nr, F, C);
            S(gyro_geo_exp0)(p.e3, C, p.y3, C, geo, c, Nr, C);
            S(gyro_geo_add)(p.f, p.e3, b2, 0, geo, c, Nr, C);
        }

        /* residual and LayerNorm after the feed-forward block */
        const S(tf_sublayer) s2 = S(tf_sublayer_of)(&p, 2);
        P(gyro_tf_sublayer_forward)(&s2, TF_SLICE(w->ln2g, l, C), TF_SLICE(w->ln2b, l, C),
                                    cfg->residual, cfg->layernorm, geo, c, Nr, C);
    }

    /* max pooling in the tangent space, then hyperbolic MLR */
    T *xl = cfg->n_layers ? S(tf_layer_out)(a, blk, cfg, cfg->n_layers - 1) : blk->x0;
    T *lf, *pd, *pb;
    S(tf_head_ptrs)(&lf, &pd, &pb, a, blk, cfg, xl);
    S(gyro_geo_log0)(lf, C, xl, C, geo, c, Nr, C);
    S(gyro_pool_forward)(blk->pooled, a->pidx, lf, lengths, B, Tlen, C);
    if (a->dropout_on)
        S(gyro_dropout_forward)(pd, a->mask_p, blk->pooled, rng, pdrop, (long)B * C);
    S(gyro_geo_exp0)(pb, C, pd, C, geo, c, B, C);
    S(gyro_mlr_forward)(blk->logits, pb, w->mlr_p, w->mlr_a, geo, c, B, K, C);
    a->head_in = pb;
    return GYRO_OK;
}

gyro_status P(gyro_tf_forward)(const MODEL *m, ACTS *a, const int32_t *tokens,
                               const int *lengths, int B, int Tlen, gyro_rng *rng)
{
    return S(tf_forward)(m, NULL, a, tokens, lengths, B, Tlen, rng);
}

const T *P(gyro_tf_head_input)(const ACTS *a)
{
    return a->head_in;
}

/* ---- backward ----------------------------------------------------------------------------- */

/* Zero the live gradient buffers of one layer (B·T rows each; aliases zeroed once; buffers
 * that never receive a gradient, such as the LayerNorm statistics, skipped). The layer's input
 * gradient belongs to the layer below and is not touched. */
static void S(tf_zero_layer)(const S(tf_layer_ptrs) *q, const gyro_tf_config *cfg, long Nr)
{
    const long C = cfg->dim, F = TF_FW(cfg), A = TF_AW(cfg);
    T *ptr[40];
    long width[40];
    int n = 0;
#define TF_LIVE(field, w)                                                                      \
    do {                                                                                       \
        int seen_ = (w) == 0; /* a zero-width array (MLA/MoE) shares its neighbour's address */ \
        for (int i_ = 0; i_ < n; i_++)                                                         \
            seen_ |= ptr[i_] == q->field;                                                      \
        if (!seen_) {                                                                          \
            ptr[n] = q->field;                                                                 \
            width[n++] = (w);                                                                  \
        }                                                                                      \
    } while (0)
    TF_LIVE(u, C); TF_LIVE(qkvy, 3 * A); TF_LIVE(qkvz, 3 * A); TF_LIVE(qkvt, 3 * A);
    TF_LIVE(o, A); TF_LIVE(od, A); TF_LIVE(a, C); TF_LIVE(res1, C); TF_LIVE(x1, C);
    TF_LIVE(u2, C); TF_LIVE(y2, F); TF_LIVE(g0, F);
    TF_LIVE(g1, F); TF_LIVE(gd, F); TF_LIVE(y3, C); TF_LIVE(f, C);
    if (cfg->geometry != GYRO_TF_GEOMETRY_HYPERBOLIC) {
        /* hyperbolic: the fused Möbius layer backward goes from g0 to y2 and from f to y3
         * without these intermediate gradients (Euclidean: they alias y2, g0 and y3) */
        TF_LIVE(e2, F); TF_LIVE(h, F); TF_LIVE(e3, C);
    }
    TF_LIVE(res2, C); TF_LIVE(xout, C);
    if (cfg->residual == GYRO_TF_RESIDUAL_TANGENT) {
        TF_LIVE(la, C); TF_LIVE(ts1, C); TF_LIVE(lf, C); TF_LIVE(ts2, C);
    }
    if (cfg->layernorm) {
        TF_LIVE(lnu1, C); TF_LIVE(lnv1, C); TF_LIVE(lnu2, C); TF_LIVE(lnv2, C);
    }
#undef TF_LIVE
    for (int i = 0; i < n; i++)
        memset(ptr[i], 0, (size_t)(Nr * width[i]) * sizeof(T));
}

void P(gyro_tf_backward)(const MODEL *m, ACTS *a, const PARAMS *grads, const T *dlogits)
{
    const gyro_tf_config *cfg = &m->cfg;
    assert(a->training && a->B > 0);
    if (cfg->geometry == GYRO_TF_GEOMETRY_LORENTZ) {
        S(tf_lz_backward)(m, a, grads, dlogits);
        return;
    }

    const int geo = cfg->geometry;
    const T c = (T)cfg->curvature;
    const int B = a->B, Tlen = a->Tlen;
    const int C = cfg->dim, F = cfg->ffn_dim, H = cfg->n_heads, D = cfg->head_dim, A = H * D;
    const int K = cfg->n_classes, Nr = B * Tlen;
    const int *lengths = a->lengths;
    const PARAMS *w = &m->params;
    const PARAMS *g = grads;
    S(tf_block) *fa = &a->a, *da = &a->d;
    T *scr = a->scratch;
    const int mla = cfg->attention_kind == GYRO_TF_ATTENTION_MLA;
    const int moe = cfg->ffn_kind == GYRO_TF_FFN_MOE;
    gyro_mla_config mc;
    gyro_moe_config fc;
    if (mla)
        tf_mla_config(cfg, &mc);
    if (moe)
        tf_moe_config(cfg, &fc);

    /* head: MLR, exp0, dropout, pooling, log0 */
    const int Lr = cfg->n_layers;
    T *xl = Lr ? S(tf_layer_out)(a, fa, cfg, Lr - 1) : fa->x0;
    T *dxl = Lr ? S(tf_layer_out)(a, da, cfg, Lr - 1) : da->x0;
    T *lf, *pd, *pb, *dlf, *dpd, *dpb;
    S(tf_head_ptrs)(&lf, &pd, &pb, a, fa, cfg, xl);
    S(tf_head_ptrs)(&dlf, &dpd, &dpb, a, da, cfg, dxl);
    /* zero the gradients that accumulate: the head's, the embeddings', the top layer's (each
     * lower layer is zeroed just before the layer above it starts writing into its output) */
    memset(da->x0, 0, (size_t)Nr * C * sizeof(T));
    memset(da->lfin, 0, (size_t)Nr * C * sizeof(T));
    memset(da->pooled, 0, (size_t)B * C * sizeof(T));
    memset(da->pdrop, 0, (size_t)B * C * sizeof(T));
    memset(da->pball, 0, (size_t)B * C * sizeof(T));
    if (Lr) {
        S(tf_layer_ptrs) top;
        S(tf_ptrs)(&top, a, da, cfg, Lr - 1, 0);
        S(tf_zero_layer)(&top, cfg, Nr);
    }
    S(gyro_mlr_backward)(dpb, g->mlr_p, g->mlr_a, dlogits, pb, w->mlr_p, w->mlr_a, geo, c, B, K,
                         C);
    S(gyro_geo_exp0_backward)(dpd, C, scr, dpb, C, pb, C, pd, C, geo, c, B, C);
    if (a->dropout_on)
        S(gyro_dropout_backward)(da->pooled, dpd, a->mask_p, (long)B * C);
    S(gyro_pool_backward)(dlf, da->pooled, a->pidx, B, Tlen, C);
    S(gyro_geo_log0_backward)(dxl, C, dlf, C, xl, C, geo, c, Nr, C);

    for (int l = Lr - 1; l >= 0; l--) {
        S(tf_layer_ptrs) p, q; /* activations, their gradients */
        S(tf_ptrs)(&p, a, fa, cfg, l, 1);
        S(tf_ptrs)(&q, a, da, cfg, l, 0);
        if (l > 0) {
            S(tf_layer_ptrs) below;
            S(tf_ptrs)(&below, a, da, cfg, l - 1, 0);
            S(tf_zero_layer)(&below, cfg, Nr);
        }

        /* LayerNorm and residual after the feed-forward block */
        const S(tf_sublayer) ps2 = S(tf_sublayer_of)(&p, 2), qs2 = S(tf_sublayer_of)(&q, 2);
        P(gyro_tf_sublayer_backward)(&qs2, TF_SLICE(g->ln2g, l, C), TF_SLICE(g->ln2b, l, C), &ps2,
                                     TF_SLICE(w->ln2g, l, C), scr, cfg->residual, cfg->layernorm,
                                     geo, c, Nr, C);

        if (moe) {
            /* mixture of experts (with the balance-loss gradient) over the valid tokens */
            const size_t ln = (size_t)l;
            const int nv = S(tf_gather_valid)(a->moe_gin, p.x1, lengths, B, Tlen, C);
            S(tf_gather_valid)(a->moe_gout, q.f, lengths, B, Tlen, C);
            memset(a->moe_gdin, 0, (size_t)nv * C * sizeof(T));
            S(gyro_moe_backward)(a->moe_gdin, TF_SLICE(g->moe, ln, a->moe_np), a->moe_scratch,
                                 a->moe_gout, a->moe_cache + ln * a->moe_nacts,
                                 a->moe_route + ln * a->moe_nroute, a->moe_gin,
                                 TF_SLICE(w->moe, ln, a->moe_np), &fc, nv,
                                 (double)cfg->moe_balance);
            S(tf_scatter_valid)(q.x1, a->moe_gdin, lengths, B, Tlen, C, 1);
        } else {
            /* feed-forward */
            const T *w1 = TF_SLICE(w->fcw, l, F * C), *b1 = TF_SLICE(w->fcb, l, F);
            const T *w2 = TF_SLICE(w->fcprojw, l, C * F), *b2 = TF_SLICE(w->fcprojb, l, C);
            T *gw1 = TF_SLICE(g->fcw, l, F * C), *gb1 = TF_SLICE(g->fcb, l, F);
            T *gw2 = TF_SLICE(g->fcprojw, l, C * F), *gb2 = TF_SLICE(g->fcprojb, l, C);
            /* f = proj(proj(exp0(y3)) ⊕ b2), then below g0 = log0(proj(proj(exp0(y2)) ⊕ b1)):
             * hyperbolic, each chain's backward is one fused kernel */
            if (geo == GYRO_TF_GEOMETRY_HYPERBOLIC) {
                S(gyro_mobius_layer_backward)(q.y3, gb2, q.f, p.y3, b2, 0, c, Nr, C);
            } else {
                S(gyro_geo_add_backward)(q.e3, gb2, scr, q.f, p.f, p.e3, b2, 0, geo, c, Nr, C);
                S(gyro_geo_exp0_backward)(q.y3, C, scr, q.e3, C, p.e3, C, p.y3, C, geo, c, Nr, C);
            }
            S(gyro_linear_backward)(q.gd, F, gw2, F, q.y3, C, p.gd, F, w2, F, Nr, F, C);
            if (a->dropout_on)
                S(gyro_dropout_backward)(q.g1, q.gd, p.mask_f, (long)Nr * F);
            if (cfg->ffn_activation == GYRO_TF_ACTIVATION_RELU)
                S(gyro_relu_backward)(q.g0, q.g1, p.g0, (long)Nr * F);
            if (geo == GYRO_TF_GEOMETRY_HYPERBOLIC) {
                S(gyro_mobius_layer_backward)(q.y2, gb1, q.g0, p.y2, b1, 1, c, Nr, F);
            } else {
                S(gyro_geo_log0_backward)(q.h, F, q.g0, F, p.h, F, geo, c, Nr, F);
                S(gyro_geo_add_backward)(q.e2, gb1, scr, q.h, p.h, p.e2, b1, 0, geo, c, Nr, F);
                S(gyro_geo_exp0_backward)(q.y2, F, scr, q.e2, F, p.e2, F, p.y2, F, geo, c, Nr,
                                          F);
            }
            S(gyro_linear_backward)(q.u2, C, gw1, C, q.y2, F, p.u2, C, w1, C, Nr, C, F);
        }
        S(gyro_geo_log0_backward)(q.x1, C, q.u2, C, p.x1, C, geo, c, Nr, C);

        /* LayerNorm and residual after attention */
        const S(tf_sublayer) ps1 = S(tf_sublayer_of)(&p, 1), qs1 = S(tf_sublayer_of)(&q, 1);
        P(gyro_tf_sublayer_backward)(&qs1, TF_SLICE(g->ln1g, l, C), TF_SLICE(g->ln1b, l, C), &ps1,
                                     TF_SLICE(w->ln1g, l, C), scr, cfg->residual, cfg->layernorm,
                                     geo, c, Nr, C);

        if (mla) {
            /* MLA per sequence (the padded rows of `a` carry no gradient) */
            const T *wm = TF_SLICE(w->mla, l, a->mla_np);
            T *gm = TF_SLICE(g->mla, l, a->mla_np);
            for (int b = 0; b < B; b++) {
                const size_t r0 = (size_t)b * Tlen * C;
                const T *cache = a->mla_cache + ((size_t)l * a->max_batch + b) * a->mla_nacts;
                S(gyro_mla_backward)(q.xin + r0, gm, a->mla_scratch, q.a + r0, cache,
                                     p.xin + r0, wm, &mc, 1, lengths[b]);
            }
        } else {
            /* attention */
            const T *wqkv = TF_SLICE(w->qkvw, l, 3 * A * C), *wo = TF_SLICE(w->attprojw, l, C * A);
            T *gwqkv = TF_SLICE(g->qkvw, l, 3 * A * C), *gwo = TF_SLICE(g->attprojw, l, C * A);
            S(gyro_merge_backward)(q.od, gwo, q.rr, scr, q.a, p.od, p.rr, p.rb, wo, geo, c, Nr,
                                   H, D, C);
            if (a->dropout_on)
                S(gyro_dropout_backward)(q.o, q.od, p.mask_o, (long)Nr * A);
            S(gyro_attention_backward)(q.qkvt, scr, q.o, p.qkvt, p.att, lengths, B, Tlen, H, D);
            if (p.qkvt != p.qkvy) { /* legacy per-slice log0; else q.qkvt aliases q.qkvy */
                S(gyro_geo_log0_backward)(q.qkvz, D, q.qkvt, D, p.qkvz, D, geo, c, Nr * 3 * H, D);
                S(gyro_geo_exp0_backward)(q.qkvy, 3 * A, scr, q.qkvz, 3 * A, p.qkvz, 3 * A,
                                          p.qkvy, 3 * A, geo, c, Nr, 3 * A);
            }
            S(gyro_linear_backward)(q.u, C, gwqkv, C, q.qkvy, 3 * A, p.u, C, wqkv, C, Nr, C,
                                    3 * A);
        }
        S(gyro_geo_log0_backward)(q.xin, C, q.u, C, p.xin, C, geo, c, Nr, C);
    }
    S(gyro_embed_backward)(g->wte, scr, da->x0, fa->x0, a->tokens, lengths, w->wte, m->pos, geo,
                           c, B, Tlen, C);
}

/* ---- MoE statistics ------------------------------------------------------------------------ */

double P(gyro_tf_balance_loss)(const ACTS *a)
{
    return a->balance;
}

const long *P(gyro_tf_expert_load)(const ACTS *a)
{
    return a->moe_load;
}

/* ---- loss --------------------------------------------------------------------------------- */

double P(gyro_tf_softmax_xent)(T *dlogits, T *probs, const T *logits, const int *labels, int B,
                               int K)
{
    double total = 0.0;
    for (int b = 0; b < B; b++) {
        const T *z = logits + (long)b * K;
        double mx = z[0];
        for (int k = 1; k < K; k++)
            if (z[k] > mx)
                mx = z[k];
        double sum = 0.0;
        for (int k = 0; k < K; k++)
            sum += exp((double)z[k] - mx);
        const double lse = mx + log(sum);
        total += lse - (double)z[labels[b]];
        for (int k = 0; k < K; k++) {
            double pk = exp((double)z[k] - lse);
            if (probs)
                probs[(long)b * K + k] = (T)pk;
            if (dlogits)
                dlogits[(long)b * K + k] = (T)((pk - (k == labels[b] ? 1.0 : 0.0)) / B);
        }
    }
    return total / B;
}

/* transformer.c — configuration, parameter table and the two instantiations (float32 for
 * training and serving, float64 for the gradient checks) of transformer_impl.h.
 * See transformer.h for the architecture and the API. */
#include "models/transformer.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/core/arena.h"
#include "models/layers/kernels.h"
#include "models/layers/kernels_pack.h"
#include "models/layers/lorentz.h"
#include "models/layers/mla.h"
#include "models/layers/moe.h"
#include <stdio.h>

/* Largest batch an activation object may be sized for. */
#define GYRO_TF_MAX_BATCH 65536

/* Slots of gyro_tf_params, in table order. */
enum {
    GYRO_TF_T_WTE, GYRO_TF_T_QKVW, GYRO_TF_T_ATTPROJW, GYRO_TF_T_LN1G, GYRO_TF_T_LN1B,
    GYRO_TF_T_FCW, GYRO_TF_T_FCB, GYRO_TF_T_FCPROJW, GYRO_TF_T_FCPROJB, GYRO_TF_T_LN2G,
    GYRO_TF_T_LN2B, GYRO_TF_T_MLR_A, GYRO_TF_T_MLR_P, GYRO_TF_T_MLA, GYRO_TF_T_MOE,
    GYRO_TF_T_LZPOS, GYRO_TF_T_LZPEW, GYRO_TF_T_LZQKVW, GYRO_TF_T_LZQKVB, GYRO_TF_T_LZINV,
    GYRO_TF_T_LZOW, GYRO_TF_T_LZOV, GYRO_TF_T_LZF1W, GYRO_TF_T_LZF1B, GYRO_TF_T_LZF2W,
    GYRO_TF_T_LZF2V, GYRO_TF_T_LZTIME, GYRO_TF_T_LZCLS, GYRO_TF_T_LZBETA
};

/* The constant ε of the Lorentz linear layers' time coordinate, y₀ = λσ(·) + ε: HyboNet's 1.1
 * at K = −1, scaled with the radius √k = 1/√c (lorentz.h requires ε > √k). */
#define TF_LZ_EPS(c) (1.1 / sqrt((double)(c)))
/* Initial log λ of every Lorentz linear layer: λ = 4 puts a fresh layer's points at
 * y₀ ≈ λ/2 + ε ≈ 3.1 (distance ≈ 1.8 from the origin at c = 1). HyboNet starts at λ = 10
 * (y₀ ≈ 6); with its −d²_L attention logits (2⟨q,k⟩_L/√n, which scale like y₀²) that makes the
 * first steps' attention one-hot, which 4 avoids. */
#define TF_LZ_LOG_LAMBDA0 1.3862943611198906

/* The MLA kernel configuration of a layer (cfg.attention_kind == MLA): non-causal, run per
 * sequence over its valid positions. */
static void tf_mla_config(const gyro_tf_config *cfg, gyro_mla_config *mc)
{
    memset(mc, 0, sizeof *mc);
    mc->d_model = cfg->dim;
    mc->n_heads = cfg->n_heads;
    mc->d_head = cfg->head_dim;
    mc->d_rope = cfg->mla_rope_dim;
    mc->d_kv_latent = cfg->mla_latent_dim;
    mc->d_q_latent = cfg->mla_q_latent > 0 ? cfg->mla_q_latent : cfg->mla_latent_dim;
    mc->causal = 0;
    mc->hyperbolic = cfg->geometry == GYRO_TF_GEOMETRY_HYPERBOLIC;
    mc->curvature = cfg->curvature;
    mc->rope_base = 10000.0;
}

/* The MoE kernel configuration of a layer (cfg.ffn_kind == MOE). */
static void tf_moe_config(const gyro_tf_config *cfg, gyro_moe_config *fc)
{
    memset(fc, 0, sizeof *fc);
    fc->d_model = cfg->dim;
    fc->d_ffn = cfg->ffn_dim;
    fc->n_shared = cfg->moe_shared;
    fc->n_routed = cfg->moe_experts;
    fc->top_k = cfg->moe_top_k;
    fc->hyperbolic = cfg->geometry == GYRO_TF_GEOMETRY_HYPERBOLIC;
    fc->curvature = cfg->curvature;
}

/* Parameter values of one layer's MLA / MoE block. */
static size_t tf_mla_params(const gyro_tf_config *cfg)
{
    gyro_mla_config mc;
    gyro_mla_layout lay;
    tf_mla_config(cfg, &mc);
    gyro_mla_layout_init(&lay, &mc, 1, 1);
    return lay.n_params;
}

static size_t tf_moe_params(const gyro_tf_config *cfg)
{
    gyro_moe_config fc;
    gyro_moe_layout lay;
    tf_moe_config(cfg, &fc);
    gyro_moe_layout_init(&lay, &fc, 1);
    return lay.n_params;
}

/* ---- configuration ------------------------------------------------------------------------ */

const char *gyro_tf_geometry_name(int geometry)
{
    switch (geometry) {
    case GYRO_TF_GEOMETRY_EUCLIDEAN: return "euclidean";
    case GYRO_TF_GEOMETRY_HYPERBOLIC: return "hyperbolic";
    case GYRO_TF_GEOMETRY_LORENTZ: return "lorentz";
    default: return NULL;
    }
}

gyro_status gyro_tf_geometry_parse(const char *name, gyro_tf_geometry *out)
{
    static const gyro_tf_geometry all[] = {GYRO_TF_GEOMETRY_EUCLIDEAN, GYRO_TF_GEOMETRY_HYPERBOLIC,
                                           GYRO_TF_GEOMETRY_LORENTZ};
    if (name) {
        for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
            if (strcmp(name, gyro_tf_geometry_name(all[i])) == 0) {
                *out = all[i];
                return GYRO_OK;
            }
        if (strcmp(name, "poincare") == 0) {
            *out = GYRO_TF_GEOMETRY_HYPERBOLIC;
            return GYRO_OK;
        }
    }
    return gyro_error_set(GYRO_ERR_USAGE, "geometry must be hyperbolic, lorentz or euclidean, "
                          "not '%s'", name ? name : "(null)");
}

gyro_tf_config gyro_tf_config_default(gyro_tf_geometry geometry)
{
    gyro_tf_config c;
    memset(&c, 0, sizeof c);
    c.geometry = geometry;
    c.dim = geometry == GYRO_TF_GEOMETRY_EUCLIDEAN ? 128 : 100;
    c.n_layers = 3;
    c.n_heads = 16;
    c.head_dim = (c.dim + c.n_heads - 1) / c.n_heads;
    c.ffn_dim = 4 * c.dim;
    c.max_len = 64;
    c.dropout = 0.0f;
    c.curvature = 1.0f;
    c.pos_scale = (float)sqrt(2.0 / c.dim);
    if (geometry == GYRO_TF_GEOMETRY_HYPERBOLIC) {
        c.layernorm = 0;
        c.residual = GYRO_TF_RESIDUAL_NONE;
        c.ffn_activation = GYRO_TF_ACTIVATION_IDENTITY;
    } else if (geometry == GYRO_TF_GEOMETRY_LORENTZ) {
        c.layernorm = 0;
        c.residual = GYRO_TF_RESIDUAL_MOBIUS; /* read as: the Lorentz residual (§3.3) on */
        c.ffn_activation = GYRO_TF_ACTIVATION_RELU;
    } else {
        c.layernorm = 1;
        c.residual = GYRO_TF_RESIDUAL_MOBIUS;
        c.ffn_activation = GYRO_TF_ACTIVATION_RELU;
    }
    c.attention_kind = GYRO_TF_ATTENTION_MHA;
    c.ffn_kind = GYRO_TF_FFN_DENSE;
    c.qkv_tangent = 1;
    return c;
}

#define TF_CHECK_RANGE(field, lo, hi)                                                          \
    do {                                                                                       \
        if (cfg->field < (lo) || cfg->field > (hi))                                            \
            return gyro_error_set(GYRO_ERR_USAGE,                                              \
                                  "transformer config: " #field " = %d outside [%d, %d]",      \
                                  (int)cfg->field, (int)(lo), (int)(hi));                      \
    } while (0)

gyro_status gyro_tf_config_validate(const gyro_tf_config *cfg)
{
    if (!cfg)
        return gyro_error_set(GYRO_ERR_USAGE, "transformer config: NULL");
    TF_CHECK_RANGE(geometry, GYRO_TF_GEOMETRY_EUCLIDEAN, GYRO_TF_GEOMETRY_LORENTZ);
    TF_CHECK_RANGE(vocab_size, 1, 1 << 24);
    TF_CHECK_RANGE(n_classes, 1, 1 << 20);
    TF_CHECK_RANGE(dim, 1, 4096);
    TF_CHECK_RANGE(n_layers, 0, 64);
    TF_CHECK_RANGE(n_heads, 1, 256);
    TF_CHECK_RANGE(head_dim, 1, 4096);
    TF_CHECK_RANGE(ffn_dim, 1, 16384);
    TF_CHECK_RANGE(max_len, 1, 4096);
    if ((long)cfg->n_heads * cfg->head_dim > 4096)
        return gyro_error_set(GYRO_ERR_USAGE, "transformer config: n_heads x head_dim = %ld "
                              "exceeds 4096", (long)cfg->n_heads * cfg->head_dim);
    if (!(cfg->dropout >= 0.0f && cfg->dropout < 1.0f))
        return gyro_error_set(GYRO_ERR_USAGE, "transformer config: dropout %g outside [0, 1)",
                              (double)cfg->dropout);
    if (!(cfg->curvature > 0.0f && isfinite(cfg->curvature)))
        return gyro_error_set(GYRO_ERR_USAGE, "transformer config: curvature %g must be > 0",
                              (double)cfg->curvature);
    if (!(cfg->pos_scale >= 0.0f && isfinite(cfg->pos_scale)))
        return gyro_error_set(GYRO_ERR_USAGE, "transformer config: pos_scale %g must be >= 0",
                              (double)cfg->pos_scale);
    TF_CHECK_RANGE(layernorm, 0, 1);
    TF_CHECK_RANGE(qkv_tangent, 0, 1);
    TF_CHECK_RANGE(residual, GYRO_TF_RESIDUAL_NONE, GYRO_TF_RESIDUAL_TANGENT);
    TF_CHECK_RANGE(ffn_activation, GYRO_TF_ACTIVATION_IDENTITY, GYRO_TF_ACTIVATION_RELU);
    TF_CHECK_RANGE(attention_kind, GYRO_TF_ATTENTION_MHA, GYRO_TF_ATTENTION_MLA);
    TF_CHECK_RANGE(ffn_kind, GYRO_TF_FFN_DENSE, GYRO_TF_FFN_MOE);
    if (cfg->attention_kind == GYRO_TF_ATTENTION_MLA) {
        TF_CHECK_RANGE(mla_latent_dim, 1, 4096);
        TF_CHECK_RANGE(mla_q_latent, 0, 4096);
        TF_CHECK_RANGE(mla_rope_dim, 0, 256);
        if (cfg->mla_rope_dim % 2)
            return gyro_error_set(GYRO_ERR_USAGE, "transformer config: mla_rope_dim %d must be "
                                  "even", cfg->mla_rope_dim);
    } else if (cfg->mla_latent_dim || cfg->mla_q_latent || cfg->mla_rope_dim) {
        return gyro_error_set(GYRO_ERR_USAGE, "transformer config: MLA options (latent %d, "
                              "query latent %d, RoPE %d) need attention kind MLA",
                              cfg->mla_latent_dim, cfg->mla_q_latent, cfg->mla_rope_dim);
    }
    if (cfg->ffn_kind == GYRO_TF_FFN_MOE) {
        TF_CHECK_RANGE(moe_experts, 1, GYRO_MOE_MAX_ROUTED);
        TF_CHECK_RANGE(moe_shared, 0, 64);
        TF_CHECK_RANGE(moe_top_k, 1, cfg->moe_experts);
        if (!(cfg->moe_balance >= 0.0f && isfinite(cfg->moe_balance)))
            return gyro_error_set(GYRO_ERR_USAGE, "transformer config: moe_balance %g must be "
                                  ">= 0", (double)cfg->moe_balance);
    } else if (cfg->moe_experts || cfg->moe_shared || cfg->moe_top_k ||
               cfg->moe_balance != 0.0f) {
        return gyro_error_set(GYRO_ERR_USAGE, "transformer config: MoE options (experts %d, "
                              "shared %d, top-k %d, balance %g) need feed-forward kind MoE",
                              cfg->moe_experts, cfg->moe_shared, cfg->moe_top_k,
                              (double)cfg->moe_balance);
    }
    if (cfg->geometry == GYRO_TF_GEOMETRY_LORENTZ) {
        if (cfg->layernorm)
            return gyro_error_set(GYRO_ERR_USAGE, "transformer config: the Lorentz geometry has "
                                  "no LayerNorm (its time scale bounds the points)");
        if (cfg->attention_kind != GYRO_TF_ATTENTION_MHA || cfg->ffn_kind != GYRO_TF_FFN_DENSE)
            return gyro_error_set(GYRO_ERR_USAGE, "transformer config: the Lorentz geometry has "
                                  "Lorentz MHA and a dense Lorentz feed-forward block (no MLA, "
                                  "no MoE)");
        if ((long)cfg->n_heads * (cfg->head_dim + 1) > 4096 || cfg->dim > 4095 ||
            cfg->ffn_dim > 16383)
            return gyro_error_set(GYRO_ERR_USAGE, "transformer config: Lorentz widths too large");
    }
    /* the kernels' own checks (sizes, curvature) on the derived configurations */
    if (cfg->attention_kind == GYRO_TF_ATTENTION_MLA) {
        gyro_mla_config mc;
        tf_mla_config(cfg, &mc);
        gyro_status st = gyro_mla_config_check(&mc);
        if (st != GYRO_OK)
            return st;
    }
    if (cfg->ffn_kind == GYRO_TF_FFN_MOE) {
        gyro_moe_config fc;
        tf_moe_config(cfg, &fc);
        gyro_status st = gyro_moe_config_check(&fc);
        if (st != GYRO_OK)
            return st;
    }
    return GYRO_OK;
}

/* ---- parameter table ---------------------------------------------------------------------- */

typedef struct tf_entry {
    gyro_tf_tensor t;
    int slot;          /* GYRO_TF_T_* */
} tf_entry;

static int tf_entries(const gyro_tf_config *cfg, tf_entry *e)
{
    const int V = cfg->vocab_size, C = cfg->dim, L = cfg->n_layers, F = cfg->ffn_dim;
    const int A = cfg->n_heads * cfg->head_dim, K = cfg->n_classes;
    const gyro_tf_manifold ball = cfg->geometry == GYRO_TF_GEOMETRY_HYPERBOLIC
                                      ? GYRO_TF_MANIFOLD_BALL : GYRO_TF_MANIFOLD_EUCLIDEAN;
    const gyro_tf_manifold eu = GYRO_TF_MANIFOLD_EUCLIDEAN;
    int n = 0;
    size_t off = 0;
#define TF_ENTRY(slot_, name_, rows_, cols_, man_)                                             \
    do {                                                                                       \
        e[n].slot = (slot_);                                                                   \
        e[n].t.name = (name_);                                                                 \
        e[n].t.offset = off;                                                                   \
        e[n].t.rows = (rows_);                                                                 \
        e[n].t.cols = (cols_);                                                                 \
        e[n].t.size = (size_t)(rows_) * (size_t)(cols_);                                       \
        e[n].t.manifold = (man_);                                                              \
        off += e[n].t.size;                                                                    \
        n++;                                                                                   \
    } while (0)
    if (cfg->geometry == GYRO_TF_GEOMETRY_LORENTZ) {
        const gyro_tf_manifold lz = GYRO_TF_MANIFOLD_LORENTZ;
        const int d = C + 1, D = cfg->head_dim, H = cfg->n_heads, HD1 = H * (D + 1);
        TF_ENTRY(GYRO_TF_T_WTE, "wte", V, d, lz);
        TF_ENTRY(GYRO_TF_T_LZPOS, "lz_pos", cfg->max_len, d, lz);
        TF_ENTRY(GYRO_TF_T_LZPEW, "lz_pe_w", C, d, eu);
        TF_ENTRY(GYRO_TF_T_LZQKVW, "lz_qkv_w", L * 3 * H * D, d, eu);
        TF_ENTRY(GYRO_TF_T_LZQKVB, "lz_qkv_b", L * 3 * H, D, eu);
        TF_ENTRY(GYRO_TF_T_LZINV, "lz_in_v", 1 + L * (3 * H + 1), d, eu);
        TF_ENTRY(GYRO_TF_T_LZOW, "lz_o_w", L * C, HD1, eu);
        TF_ENTRY(GYRO_TF_T_LZOV, "lz_o_v", L, HD1, eu);
        TF_ENTRY(GYRO_TF_T_LZF1W, "lz_f1_w", L * F, d, eu);
        TF_ENTRY(GYRO_TF_T_LZF1B, "lz_f1_b", L, F, eu);
        TF_ENTRY(GYRO_TF_T_LZF2W, "lz_f2_w", L * C, F + 1, eu);
        TF_ENTRY(GYRO_TF_T_LZF2V, "lz_f2_v", L, F + 1, eu);
        TF_ENTRY(GYRO_TF_T_LZTIME, "lz_time", 1 + L * (3 * H + 3), 2, eu);
        TF_ENTRY(GYRO_TF_T_LZCLS, "lz_cls", K, d, lz);
        TF_ENTRY(GYRO_TF_T_LZBETA, "lz_beta", 1, K, eu);
        return n;
    }
    TF_ENTRY(GYRO_TF_T_WTE, "wte", V, C, ball);
    const int mla = cfg->attention_kind == GYRO_TF_ATTENTION_MLA;
    const int moe = cfg->ffn_kind == GYRO_TF_FFN_MOE;
    if (mla) {
        TF_ENTRY(GYRO_TF_T_MLA, "mla", L, (int)tf_mla_params(cfg), eu);
    } else {
        TF_ENTRY(GYRO_TF_T_QKVW, "qkvw", L * 3 * A, C, eu);
        TF_ENTRY(GYRO_TF_T_ATTPROJW, "attprojw", L * C, A, eu);
    }
    if (cfg->layernorm) {
        TF_ENTRY(GYRO_TF_T_LN1G, "ln1g", L, C, eu);
        TF_ENTRY(GYRO_TF_T_LN1B, "ln1b", L, C, eu);
    }
    if (moe) {
        TF_ENTRY(GYRO_TF_T_MOE, "moe", L, (int)tf_moe_params(cfg), eu);
    } else {
        TF_ENTRY(GYRO_TF_T_FCW, "fcw", L * F, C, eu);
        TF_ENTRY(GYRO_TF_T_FCB, "fcb", L, F, ball);
        TF_ENTRY(GYRO_TF_T_FCPROJW, "fcprojw", L * C, F, eu);
        TF_ENTRY(GYRO_TF_T_FCPROJB, "fcprojb", L, C, ball);
    }
    if (cfg->layernorm) {
        TF_ENTRY(GYRO_TF_T_LN2G, "ln2g", L, C, eu);
        TF_ENTRY(GYRO_TF_T_LN2B, "ln2b", L, C, eu);
    }
    TF_ENTRY(GYRO_TF_T_MLR_A, "mlr_a", K, C, eu);
    TF_ENTRY(GYRO_TF_T_MLR_P, "mlr_p", K, C, ball);
#undef TF_ENTRY
    return n;
}

int gyro_tf_tensor_table(const gyro_tf_config *cfg, gyro_tf_tensor *out)
{
    tf_entry e[GYRO_TF_MAX_TENSORS];
    int n = tf_entries(cfg, e);
    for (int i = 0; i < n; i++)
        out[i] = e[i].t;
    return n;
}

size_t gyro_tf_param_count(const gyro_tf_config *cfg)
{
    tf_entry e[GYRO_TF_MAX_TENSORS];
    int n = tf_entries(cfg, e);
    return e[n - 1].t.offset + e[n - 1].t.size;
}

const gyro_tf_tensor *gyro_tf_first_nonfinite(const gyro_tf_model *m, const float *block, size_t *index)
{
    for (int t = 0; t < m->n_tensors; t++) {
        const gyro_tf_tensor *T = &m->tensors[t];
        const float *x = block + T->offset;
        for (size_t i = 0; i < T->size; i++)
            if (!isfinite(x[i])) {
                if (index) *index = i;
                return T;
            }
    }
    return NULL;
}

/* ---- expert load ---------------------------------------------------------------------------- */

char *gyro_tf_expert_load_format(char *buf, size_t cap, const long *counts,
                                 const gyro_tf_config *cfg)
{
    if (!buf || cap == 0)
        return buf;
    buf[0] = 0;
    if (!counts || !cfg || cfg->ffn_kind != GYRO_TF_FFN_MOE)
        return buf;
    size_t used = 0;
    const int Nr = cfg->moe_experts;
    for (int l = 0; l < cfg->n_layers && used + 1 < cap; l++) {
        const long *c = counts + (size_t)l * Nr;
        long total = 0;
        for (int i = 0; i < Nr; i++)
            total += c[i];
        int w = snprintf(buf + used, cap - used, "%sL%d ", l ? " " : "", l);
        for (int i = 0; i < Nr && w >= 0 && used + (size_t)w < cap; i++) {
            used += (size_t)w;
            double pct = total > 0 ? 100.0 * (double)c[i] / (double)total : 0.0;
            w = snprintf(buf + used, cap - used, "%s%.0f", i ? "/" : "", pct);
        }
        if (w < 0 || used + (size_t)w >= cap)
            break;
        used += (size_t)w;
        w = snprintf(buf + used, cap - used, "%%");
        if (w < 0 || used + (size_t)w >= cap)
            break;
        used += (size_t)w;
    }
    buf[cap - 1] = 0;
    return buf;
}

/* ---- packed weights for inference ---------------------------------------------------------- */

/* Lorentz: packed matrices per layer, in this order in lzw[l·TF_LZ_NPK + slot] */
enum { TF_LZ_PK_QW = 0, TF_LZ_PK_QV = 1, /* group k: W at 2k, Vt at 2k+1 (k = q, k, v) */
       TF_LZ_PK_O = 6, TF_LZ_PK_F1 = 7, TF_LZ_PK_F2 = 8, TF_LZ_NPK = 9 };

struct gyro_tf_packed {
    int n_layers;      /* layers packed: cfg.n_layers, or 0 (MLA, MoE, Lorentz: no dense pack) */
    int lorentz;       /* 1: the Lorentz linear layers are packed (lzpe, lzw) */
    float *memory;     /* every packed matrix (owned, 64-byte aligned) */
    float **qkv;       /* (L) packed q|k|v weights (3A, C); rows in the head-lane order of
                        * gyro_attention_infer_hl_f32 when qkv_lanes */
    int qkv_lanes;     /* 1: the fused hyperbolic forward reads q|k|v with the heads in lanes */
    float **att;       /* (L) packed merge weights (gyro_merge_pack_f32 of (C, A)) */
    float **fc;        /* (L) packed FFN up weights (F, C) */
    float **fcproj;    /* (L) packed FFN down weights (C, F) */
    float *lzpe;       /* Lorentz: packed position-encoding W (C, C+1) */
    float **lzw;       /* Lorentz: (L·TF_LZ_NPK) packed W of each layer: per q|k|v group W
                        * (H·D, C+1) and Vt (H, C+1); output W (C, H·(D+1)); FFN W1 (F, C+1),
                        * W2 (C, F+1) */
};

void gyro_tf_pack_free(gyro_tf_packed *pk)
{
    if (!pk)
        return;
    free(pk->memory);
    free(pk->qkv);
    free(pk->lzw);
    free(pk);
}

/* Pack every Lorentz linear layer of m (its products W h and, for the q|k|v groups, Vt x) into
 * pk->lzpe / pk->lzw, in one 64-byte aligned block. NOMEM. */
static gyro_status tf_pack_lorentz(const gyro_tf_model *m, gyro_tf_packed *pk)
{
    const gyro_tf_config *cfg = &m->cfg;
    const int L = cfg->n_layers, C = cfg->dim, d = C + 1, F = cfg->ffn_dim, H = cfg->n_heads;
    const int D = cfg->head_dim, HD1 = H * (D + 1);
    const gyro_tf_params *w = &m->params;
#define TF_LZ_PV(M, K) ((gyro_pack_values((M), (K)) + 15) & ~(size_t)15)
    const size_t n_pe = TF_LZ_PV(C, d);
    const size_t n_g = TF_LZ_PV(H * D, d), n_gv = TF_LZ_PV(H, d);
    const size_t n_o = TF_LZ_PV(C, HD1), n_f1 = TF_LZ_PV(F, d), n_f2 = TF_LZ_PV(C, F + 1);
    const size_t per = 3 * (n_g + n_gv) + n_o + n_f1 + n_f2;
    const size_t total = n_pe + (size_t)L * per;
    pk->memory = aligned_alloc(64, total * sizeof(float));
    pk->lzw = calloc((size_t)L * TF_LZ_NPK + 1, sizeof *pk->lzw);
    if (!pk->memory || !pk->lzw)
        return gyro_error_set(GYRO_ERR_NOMEM, "transformer pack: cannot allocate %zu MiB",
                              (total * sizeof(float)) >> 20);
    pk->lzpe = pk->memory;
    gyro_pack_weights_f32(pk->lzpe, w->lzpew, d, C, d);
    float *at = pk->memory + n_pe;
    for (int l = 0; l < L; l++) {
        float **s = pk->lzw + (size_t)l * TF_LZ_NPK;
        for (int k = 0; k < 3; k++) { /* the H heads of group k: W rows and v rows contiguous */
            const long j = ((long)l * 3 + k) * H;
            s[2 * k] = at;
            gyro_pack_weights_f32(at, w->lzqkvw + j * D * d, d, H * D, d);
            at += n_g;
            s[2 * k + 1] = at;
            gyro_pack_weights_f32(at, w->lzinv + (1 + (long)l * (3 * H + 1) + (long)k * H) * d,
                                  d, H, d);
            at += n_gv;
        }
        s[TF_LZ_PK_O] = at;
        gyro_pack_weights_f32(at, w->lzow + (size_t)l * C * HD1, HD1, C, HD1);
        at += n_o;
        s[TF_LZ_PK_F1] = at;
        gyro_pack_weights_f32(at, w->lzf1w + (size_t)l * F * d, d, F, d);
        at += n_f1;
        s[TF_LZ_PK_F2] = at;
        gyro_pack_weights_f32(at, w->lzf2w + (size_t)l * C * (F + 1), F + 1, C, F + 1);
        at += n_f2;
    }
#undef TF_LZ_PV
    pk->lorentz = 1;
    return GYRO_OK;
}

gyro_status gyro_tf_pack_new(const gyro_tf_model *m, gyro_tf_packed **out)
{
    *out = NULL;
    const gyro_tf_config *cfg = &m->cfg;
    gyro_tf_packed *pk = calloc(1, sizeof *pk);
    if (!pk)
        return gyro_error_set(GYRO_ERR_NOMEM, "transformer pack: out of memory");
    if (cfg->geometry == GYRO_TF_GEOMETRY_LORENTZ) {
        gyro_status st = tf_pack_lorentz(m, pk);
        if (st != GYRO_OK) {
            gyro_tf_pack_free(pk);
            return st;
        }
        *out = pk;
        return GYRO_OK;
    }
    const int dense = cfg->geometry != GYRO_TF_GEOMETRY_LORENTZ &&
                      cfg->attention_kind == GYRO_TF_ATTENTION_MHA &&
                      cfg->ffn_kind == GYRO_TF_FFN_DENSE;
    if (!dense || cfg->n_layers == 0) {
        *out = pk;
        return GYRO_OK;
    }
    const int L = cfg->n_layers, C = cfg->dim, F = cfg->ffn_dim, H = cfg->n_heads;
    const int D = cfg->head_dim, A = H * D, geo = cfg->geometry;
    const size_t n_qkv = (gyro_pack_values(3 * A, C) + 15) & ~(size_t)15;
    const size_t n_att = (gyro_merge_pack_values(geo, H, D, C) + 15) & ~(size_t)15;
    const size_t n_fc = (gyro_pack_values(F, C) + 15) & ~(size_t)15;
    const size_t n_fp = (gyro_pack_values(C, F) + 15) & ~(size_t)15;
    const size_t per = n_qkv + n_att + n_fc + n_fp;
    pk->memory = aligned_alloc(64, (size_t)L * per * sizeof(float));
    pk->qkv = calloc(4 * (size_t)L, sizeof *pk->qkv);
    if (!pk->memory || !pk->qkv) {
        gyro_tf_pack_free(pk);
        return gyro_error_set(GYRO_ERR_NOMEM, "transformer pack: cannot allocate %zu MiB",
                              ((size_t)L * per * sizeof(float)) >> 20);
    }
    pk->att = pk->qkv + L;
    pk->fc = pk->att + L;
    pk->fcproj = pk->fc + L;
    const gyro_tf_params *w = &m->params;
    /* the configuration whose inference runs the fused forward (tf_forward_fused) with its
     * heads in vector lanes: q|k|v come out of their product in that layout */
    pk->qkv_lanes = geo == GYRO_TF_GEOMETRY_HYPERBOLIC &&
                    cfg->residual == GYRO_TF_RESIDUAL_TANGENT && cfg->layernorm && D <= 8 &&
                    H % 8 == 0;
    float *perm = pk->qkv_lanes ? malloc((size_t)3 * A * C * sizeof(float)) : NULL;
    if (pk->qkv_lanes && !perm) {
        gyro_tf_pack_free(pk);
        return gyro_error_set(GYRO_ERR_NOMEM, "transformer pack: out of memory");
    }
    for (int l = 0; l < L; l++) {
        float *base = pk->memory + (size_t)l * per;
        pk->qkv[l] = base;
        pk->att[l] = base + n_qkv;
        pk->fc[l] = pk->att[l] + n_att;
        pk->fcproj[l] = pk->fc[l] + n_fc;
        const float *wq = w->qkvw + (size_t)l * 3 * A * C;
        if (perm) { /* row r of W → row gyro_qkv_lanes_row(r): output columns in lanes */
            for (int r = 0; r < 3 * A; r++)
                memcpy(perm + (size_t)gyro_qkv_lanes_row(r, H, D) * C, wq + (size_t)r * C,
                       (size_t)C * sizeof(float));
            wq = perm;
        }
        gyro_pack_weights_f32(pk->qkv[l], wq, C, 3 * A, C);
        gyro_merge_pack_f32(pk->att[l], w->attprojw + (size_t)l * C * A, geo, H, D, C);
        gyro_pack_weights_f32(pk->fc[l], w->fcw + (size_t)l * F * C, C, F, C);
        gyro_pack_weights_f32(pk->fcproj[l], w->fcprojw + (size_t)l * C * F, F, C, F);
    }
    free(perm);
    pk->n_layers = L;
    *out = pk;
    return GYRO_OK;
}

/* The packed matrices `field` of layer l, or NULL without a pack (or nothing packed). */
#define TF_PK(pk, field, l) ((pk) && (pk)->n_layers ? (const float *)(pk)->field[l] : NULL)

/* Per precision: Y = X Wᵀ on the packed weights when there are some (float32 only); returns 0
 * when the caller must run the unpacked product. */
static int tf_pk_linear_f32(const float *Wp, float *Y, int ldy, const float *X, int ldx, int N,
                            int K, int M)
{
    if (!Wp)
        return 0;
    gyro_packed_linear_f32(Y, ldy, X, ldx, Wp, N, K, M);
    return 1;
}

static int tf_pk_linear_f64(const float *Wp, double *Y, int ldy, const double *X, int ldx, int N,
                            int K, int M)
{
    (void)Wp; (void)Y; (void)ldy; (void)X; (void)ldx; (void)N; (void)K; (void)M;
    return 0;
}

static int tf_pk_merge_f32(const float *Wp, float *Y, float *RR, const float *O, int geo, float c,
                           int N, int H, int D, int C)
{
    if (!Wp)
        return 0;
    gyro_merge_forward_packed_f32(Y, RR, O, Wp, geo, c, N, H, D, C);
    return 1;
}

static int tf_pk_merge_f64(const float *Wp, double *Y, double *RR, const double *O, int geo,
                           double c, int N, int H, int D, int C)
{
    (void)Wp; (void)Y; (void)RR; (void)O; (void)geo; (void)c; (void)N; (void)H; (void)D; (void)C;
    return 0;
}

/* Per precision: the inference attention of the fused forward, on q|k|v in the head-lane
 * layout when the pack produced them so (float32 only); else gyro_attention_infer. */
static void tf_pk_attention_f32(const gyro_tf_packed *pk, float *O, float *P, const float *QKV,
                                const int *len, int B, int T, int H, int D)
{
    if (pk && pk->qkv_lanes)
        gyro_attention_infer_hl_f32(O, P, QKV, len, B, T, H, D);
    else
        gyro_attention_infer_f32(O, P, QKV, len, B, T, H, D);
}

static void tf_pk_attention_f64(const gyro_tf_packed *pk, double *O, double *P,
                                const double *QKV, const int *len, int B, int T, int H, int D)
{
    (void)pk;
    gyro_attention_infer_f64(O, P, QKV, len, B, T, H, D);
}

/* Lorentz: the packed matrix `slot` of layer l (l = −1: the position encoding), or NULL. */
#define TF_PKLZ(pk, l, slot)                                                                   \
    ((pk) && (pk)->lorentz ? (const float *)((l) < 0 ? (pk)->lzpe                              \
                                                     : (pk)->lzw[(l) * TF_LZ_NPK + (slot)])    \
                           : NULL)

/* Per precision: the Lorentz linear layer (gyro_lorentz_hlinear_forward_*) on packed weights
 * when there are some (float32 only); returns 0 when the caller must run the unpacked one. */
static int tf_pk_lz_hlinear_f32(const float *Wp, float *y, float *U, float *Hc, const float *x,
                                const float *mask, const float *Pb, const float *b,
                                const float *v, const float *bt, const float *ll, double eps,
                                int act, double K, int rows, int n, int m, int p_rows)
{
    if (!Wp)
        return 0;
    gyro_lorentz_hlinear_forward_packed_f32(y, U, Hc, x, mask, Pb, Wp, b, v, bt, ll, eps, act, K,
                                            rows, n, m, p_rows);
    return 1;
}

static int tf_pk_lz_hlinear_f64(const float *Wp, double *y, double *U, double *Hc,
                                const double *x, const double *mask, const double *Pb,
                                const double *b, const double *v, const double *bt,
                                const double *ll, double eps, int act, double K, int rows, int n,
                                int m, int p_rows)
{
    (void)Wp; (void)y; (void)U; (void)Hc; (void)x; (void)mask; (void)Pb; (void)b; (void)v;
    (void)bt; (void)ll; (void)eps; (void)act; (void)K; (void)rows; (void)n; (void)m; (void)p_rows;
    return 0;
}

/* The same for a q|k|v group (gyro_lorentz_hlinear_group_forward_*): Wp, Vtp packed W and Vt. */
static int tf_pk_lz_group_f32(const float *Wp, const float *Vtp, float *y, float *U, float *Z,
                              const float *x, const float *b, const float *tl, double eps,
                              double K, int rows, int n, int m, int G)
{
    if (!Wp)
        return 0;
    gyro_lorentz_hlinear_group_forward_packed_f32(y, U, Z, x, Wp, b, Vtp, tl, eps, K, rows, n,
                                                  m, G);
    return 1;
}

static int tf_pk_lz_group_f64(const float *Wp, const float *Vtp, double *y, double *U, double *Z,
                              const double *x, const double *b, const double *tl, double eps,
                              double K, int rows, int n, int m, int G)
{
    (void)Wp; (void)Vtp; (void)y; (void)U; (void)Z; (void)x; (void)b; (void)tl; (void)eps;
    (void)K; (void)rows; (void)n; (void)m; (void)G;
    return 0;
}

/* ---- the two precisions ------------------------------------------------------------------- */

#define T float
#define S(name) name##_f32
#define P(name) name
#define PARAMS gyro_tf_params
#define MODEL gyro_tf_model
#define ACTS gyro_tf_acts
#include "models/transformer_impl.h"
#undef T
#undef S
#undef P
#undef PARAMS
#undef MODEL
#undef ACTS

#define T double
#define S(name) name##_f64
#define P(name) name##_f64
#define PARAMS gyro_tf_params_f64
#define MODEL gyro_tf_model_f64
#define ACTS gyro_tf_acts_f64
#include "models/transformer_impl.h"
#undef T
#undef S
#undef P
#undef PARAMS
#undef MODEL
#undef ACTS

gyro_status gyro_tf_forward_packed(const gyro_tf_model *m, const gyro_tf_packed *pk,
                                   gyro_tf_acts *a, const int32_t *tokens, const int *lengths,
                                   int B, int T)
{
    return tf_forward_f32(m, pk, a, tokens, lengths, B, T, NULL);
}

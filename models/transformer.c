/* transformer.c — configuration, parameter table and the two instantiations (float32 for
 * training and serving, float64 for the gradient checks) of transformer_impl.h.
 * See transformer.h for the architecture and the API. */
#include "models/transformer.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/core/arena.h"
#include "models/layers/act.h"
#include "models/layers/attention.h"
#include "models/layers/embed.h"
#include "models/layers/geo.h"
#include "models/layers/layernorm.h"
#include "models/layers/linear.h"
#include "models/layers/merge.h"
#include "models/layers/mlr.h"
#include "models/layers/pool.h"

/* Largest batch an activation object may be sized for. */
#define GYRO_TF_MAX_BATCH 65536

/* Slots of gyro_tf_params, in table order. */
enum {
    GYRO_TF_T_WTE, GYRO_TF_T_QKVW, GYRO_TF_T_ATTPROJW, GYRO_TF_T_LN1G, GYRO_TF_T_LN1B,
    GYRO_TF_T_FCW, GYRO_TF_T_FCB, GYRO_TF_T_FCPROJW, GYRO_TF_T_FCPROJB, GYRO_TF_T_LN2G,
    GYRO_TF_T_LN2B, GYRO_TF_T_MLR_A, GYRO_TF_T_MLR_P
};

/* ---- configuration ------------------------------------------------------------------------ */

gyro_tf_config gyro_tf_config_default(gyro_tf_geometry geometry)
{
    gyro_tf_config c;
    memset(&c, 0, sizeof c);
    c.geometry = geometry;
    c.dim = geometry == GYRO_TF_GEOMETRY_HYPERBOLIC ? 100 : 128;
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
    } else {
        c.layernorm = 1;
        c.residual = GYRO_TF_RESIDUAL_MOBIUS;
        c.ffn_activation = GYRO_TF_ACTIVATION_RELU;
    }
    c.attention_kind = GYRO_TF_ATTENTION_MHA;
    c.ffn_kind = GYRO_TF_FFN_DENSE;
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
    TF_CHECK_RANGE(geometry, GYRO_TF_GEOMETRY_EUCLIDEAN, GYRO_TF_GEOMETRY_HYPERBOLIC);
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
    TF_CHECK_RANGE(residual, GYRO_TF_RESIDUAL_NONE, GYRO_TF_RESIDUAL_TANGENT);
    TF_CHECK_RANGE(ffn_activation, GYRO_TF_ACTIVATION_IDENTITY, GYRO_TF_ACTIVATION_RELU);
    if (cfg->attention_kind != GYRO_TF_ATTENTION_MHA)
        return gyro_error_set(GYRO_ERR_USAGE, "transformer config: attention kind %d is not "
                              "implemented (only multi-head attention)", cfg->attention_kind);
    if (cfg->ffn_kind != GYRO_TF_FFN_DENSE)
        return gyro_error_set(GYRO_ERR_USAGE, "transformer config: feed-forward kind %d is not "
                              "implemented (only dense)", cfg->ffn_kind);
    if (cfg->mla_latent_dim || cfg->moe_experts || cfg->moe_shared || cfg->moe_top_k)
        return gyro_error_set(GYRO_ERR_USAGE, "transformer config: MLA/MoE options must be 0 "
                              "(not implemented)");
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
    TF_ENTRY(GYRO_TF_T_WTE, "wte", V, C, ball);
    TF_ENTRY(GYRO_TF_T_QKVW, "qkvw", L * 3 * A, C, eu);
    TF_ENTRY(GYRO_TF_T_ATTPROJW, "attprojw", L * C, A, eu);
    if (cfg->layernorm) {
        TF_ENTRY(GYRO_TF_T_LN1G, "ln1g", L, C, eu);
        TF_ENTRY(GYRO_TF_T_LN1B, "ln1b", L, C, eu);
    }
    TF_ENTRY(GYRO_TF_T_FCW, "fcw", L * F, C, eu);
    TF_ENTRY(GYRO_TF_T_FCB, "fcb", L, F, ball);
    TF_ENTRY(GYRO_TF_T_FCPROJW, "fcprojw", L * C, F, eu);
    TF_ENTRY(GYRO_TF_T_FCPROJB, "fcprojb", L, C, ball);
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

/* ---- the two precisions ------------------------------------------------------------------- */

#define R float
#define TF(name) name
#define L_(name) name##_f32
#define PARAMS gyro_tf_params
#define MODEL gyro_tf_model
#define ACTS gyro_tf_acts
#include "models/transformer_impl.h"
#undef R
#undef TF
#undef L_
#undef PARAMS
#undef MODEL
#undef ACTS

#define R double
#define TF(name) name##_f64
#define L_(name) name##_f64
#define PARAMS gyro_tf_params_f64
#define MODEL gyro_tf_model_f64
#define ACTS gyro_tf_acts_f64
#include "models/transformer_impl.h"
#undef R
#undef TF
#undef L_
#undef PARAMS
#undef MODEL
#undef ACTS

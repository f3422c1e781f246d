/* moe.c — layout, configuration check, load counting and the float32/float64 instantiations of
 * the MoE kernels (formulas in moe.h, implementation in moe_impl.h). */
#include "models/layers/moe.h"

#include <math.h>
#include <string.h>

#include "models/core/blas.h"
#include "models/hyp/poincare.h"

gyro_status gyro_moe_config_check(const gyro_moe_config *cfg)
{
    if (!cfg) return gyro_error_set(GYRO_ERR_USAGE, "moe: no configuration");
    if (cfg->d_model < 1 || cfg->d_ffn < 1)
        return gyro_error_set(GYRO_ERR_USAGE, "moe: d_model %d and d_ffn %d must be positive",
                              cfg->d_model, cfg->d_ffn);
    if (cfg->n_shared < 0 || cfg->n_routed < 1 || cfg->n_routed > GYRO_MOE_MAX_ROUTED)
        return gyro_error_set(GYRO_ERR_USAGE,
                              "moe: n_shared %d must be >= 0 and n_routed %d in 1..%d",
                              cfg->n_shared, cfg->n_routed, GYRO_MOE_MAX_ROUTED);
    if (cfg->top_k < 1 || cfg->top_k > cfg->n_routed)
        return gyro_error_set(GYRO_ERR_USAGE, "moe: top_k %d must be in 1..n_routed (%d)",
                              cfg->top_k, cfg->n_routed);
    if (cfg->hyperbolic && !(cfg->curvature > 0.0))
        return gyro_error_set(GYRO_ERR_USAGE, "moe: curvature %g must be > 0", cfg->curvature);
    return GYRO_OK;
}

void gyro_moe_layout_init(gyro_moe_layout *L, const gyro_moe_config *cfg, int N)
{
    const size_t d = cfg->d_model, F = cfg->d_ffn, A = (size_t)cfg->n_shared + cfg->top_k;
    const size_t Nr = cfg->n_routed, n = (size_t)N;
    L->w1 = 0;
    L->b1 = F * d;
    L->w2 = L->b1 + F;
    L->b2 = L->w2 + d * F;
    L->expert_stride = L->b2 + d;
    L->centroids = L->expert_stride * ((size_t)cfg->n_shared + Nr);
    L->n_params = L->centroids + Nr * d;
    size_t o = 0;
    L->z = o;     o += n * d;
    L->probs = o; o += n * Nr;
    L->pre = o;   o += n * A * F;
    L->hid = o;   o += n * A * F;
    L->y = o;     o += n * A * d;
    L->e = o;     o += cfg->hyperbolic ? n * A * d : 0;
    L->s = o;     o += cfg->hyperbolic ? n * A * d : 0;
    L->gather = o; o += n * (2 * d + 2 * F);
    L->n_acts = o;
    L->route_order = n * cfg->top_k;
    L->route_offsets = 2 * n * cfg->top_k;
    L->n_route = 2 * n * cfg->top_k + Nr + 1;
    /* dz (N,d) | dY (N,A,d) | gathers z, dy, dz (N,d each) and pre, hid, dhid (N,F each) |
     * per-token dS, dE (A,d each), v, dv (d each), ds (Nr) */
    L->n_scratch = n * d + n * A * d + 3 * n * d + 3 * n * F + 2 * A * d + 2 * d + Nr;
}

void gyro_moe_count_load(long *counts, const int *route, const gyro_moe_config *cfg, int N)
{
    for (size_t i = 0; i < (size_t)N * cfg->top_k; i++)
        if (route[i] >= 0 && route[i] < cfg->n_routed) counts[route[i]]++;
}

#define T float
#define S(name) name##_f32
#define P(name) gyro_moe_##name##_f32
#define TANH tanhf
#include "models/layers/moe_impl.h"
#undef T
#undef S
#undef P
#undef TANH

#define T double
#define S(name) name##_f64
#define P(name) gyro_moe_##name##_f64
#define TANH tanh
#include "models/layers/moe_impl.h"
#undef T
#undef S
#undef P
#undef TANH

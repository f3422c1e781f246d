/* mla.c — layout, configuration check and the float32/float64 instantiations of the MLA kernels
 * (formulas in mla.h, implementation in mla_impl.h). */
#include "models/layers/mla.h"

#include <math.h>
#include <string.h>

#include "models/core/blas.h"
#include "models/hyp/poincare.h"

gyro_status gyro_mla_config_check(const gyro_mla_config *cfg)
{
    if (!cfg) return gyro_error_set(GYRO_ERR_USAGE, "mla: no configuration");
    if (cfg->d_model < 1 || cfg->n_heads < 1 || cfg->d_head < 1 || cfg->d_kv_latent < 1 ||
        cfg->d_q_latent < 1)
        return gyro_error_set(GYRO_ERR_USAGE,
                              "mla: d_model %d, n_heads %d, d_head %d, d_kv_latent %d and "
                              "d_q_latent %d must all be positive",
                              cfg->d_model, cfg->n_heads, cfg->d_head, cfg->d_kv_latent,
                              cfg->d_q_latent);
    if (cfg->d_rope < 0 || cfg->d_rope % 2)
        return gyro_error_set(GYRO_ERR_USAGE, "mla: d_rope %d must be even and >= 0", cfg->d_rope);
    if (cfg->d_rope > 0 && !(cfg->rope_base > 1.0))
        return gyro_error_set(GYRO_ERR_USAGE, "mla: rope_base %g must be > 1", cfg->rope_base);
    if (cfg->hyperbolic && !(cfg->curvature > 0.0))
        return gyro_error_set(GYRO_ERR_USAGE, "mla: curvature %g must be > 0", cfg->curvature);
    return GYRO_OK;
}

void gyro_mla_layout_init(gyro_mla_layout *L, const gyro_mla_config *cfg, int B, int T)
{
    const size_t d = cfg->d_model, H = cfg->n_heads, dh = cfg->d_head, dr = cfg->d_rope;
    const size_t dc = cfg->d_kv_latent, dcq = cfg->d_q_latent, N = (size_t)B * T;
    size_t o = 0;
    L->w_dq = o;  o += dcq * d;
    L->w_uq = o;  o += H * dh * dcq;
    L->w_qr = o;  o += H * dr * dcq;
    L->w_dkv = o; o += dc * d;
    L->w_uk = o;  o += H * dh * dc;
    L->w_uv = o;  o += H * dh * dc;
    L->w_kr = o;  o += dr * d;
    L->w_o = o;   o += d * H * dh;
    L->n_params = o;
    o = 0;
    L->z = o;   o += N * d;
    L->cq = o;  o += N * dcq;
    L->qc = o;  o += N * H * dh;
    L->qr = o;  o += N * H * dr;
    L->ckv = o; o += N * dc;
    L->kc = o;  o += N * H * dh;
    L->kr = o;  o += N * dr;
    L->v = o;   o += N * H * dh;
    L->att = o; o += (size_t)B * H * T * T;
    L->o = o;   o += N * H * dh;
    L->u = o;   o += N * d;
    L->n_acts = o;
    L->n_scratch = o;
}

#define T float
#define S(name) name##_f32
#define P(name) gyro_mla_##name##_f32
#include "models/layers/mla_impl.h"
#undef T
#undef S
#undef P

#define T double
#define S(name) name##_f64
#define P(name) gyro_mla_##name##_f64
#include "models/layers/mla_impl.h"
#undef T
#undef S
#undef P

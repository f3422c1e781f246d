/* policy_impl.h — internal template: the one implementation of the policy network's
 * forward/backward (formulas in policy.h), instantiated once per precision by policy.c (no
 * include guard on purpose). The including file defines
 *   T           storage type (float or double)
 *   S(name)     name with the precision suffix: the same-precision kernels of the math core and
 *               the layers (S(gyro_poincare_expmap0_batch), S(gyro_mla_forward))
 *   P(name)     public name, gyro_rl_policy_<name>_f32 / _f64
 * Tlen is the observation length obs_dim (one token per observed value; T is the storage type).
 * The Lorentz geometry is policy_lorentz_impl.h, dispatched to at the top of each function.
 */

#include "models/rl/policy_lorentz_impl.h"

void P(init_params)(T *params, const gyro_rl_policy_config *cfg, gyro_rng *rng)
{
    if (cfg->hyperbolic == GYRO_RL_GEOMETRY_LORENTZ) {
        S(policy_lz_init_params)(params, cfg, rng);
        return;
    }
    gyro_rl_policy_layout L;
    gyro_rl_policy_layout_init(&L, cfg, 1);
    const int Tlen = cfg->obs_dim, d = cfg->d_model, A = cfg->n_actions;
    for (size_t i = 0; i < (size_t)Tlen * d; i++) params[L.w_emb + i] = (T)gyro_rng_normal(rng);
    for (size_t i = 0; i < (size_t)Tlen * d; i++) params[L.b_emb + i] = (T)(0.5 * gyro_rng_normal(rng));
    /* keep the initial embedding inside a moderate ball: exp0 saturates beyond |u| ≈ 3 */
    for (size_t i = 0; i < (size_t)Tlen * d; i++) {
        params[L.w_emb + i] = (T)(params[L.w_emb + i] / sqrt((double)d));
        params[L.b_emb + i] = (T)(params[L.b_emb + i] / sqrt((double)d));
    }
    S(gyro_mla_init_params)(params + L.mla_p, &cfg->mla, rng);
    S(gyro_moe_init_params)(params + L.moe_p, &cfg->moe, rng);
    /* a small head: the initial policy is close to uniform */
    for (size_t i = 0; i < (size_t)A * d; i++)
        params[L.w_head + i] = (T)(0.1 * gyro_rng_normal(rng) / sqrt((double)d));
    for (int i = 0; i < A; i++) params[L.b_head + i] = 0;
}

void P(forward)(T *acts, int *route, const T *obs, const T *params,
                const gyro_rl_policy_config *cfg, int B)
{
    if (cfg->hyperbolic == GYRO_RL_GEOMETRY_LORENTZ) {
        (void)route; /* no experts */
        S(policy_lz_forward)(acts, obs, params, cfg, B);
        return;
    }
    gyro_rl_policy_layout L;
    gyro_rl_policy_layout_init(&L, cfg, B);
    const int Tlen = cfg->obs_dim, d = cfg->d_model, A = cfg->n_actions, N = B * Tlen;
    const T c = (T)cfg->curvature;
    T *u = acts + L.u, *x0 = acts + L.x0, *a = acts + L.a, *x1 = acts + L.x1;
    T *m = acts + L.m, *x2 = acts + L.x2, *lx2 = acts + L.lx2, *pool = acts + L.pool;
    T *logits = acts + L.logits, *logp = acts + L.logp;

    for (int b = 0; b < B; b++)
        for (int t = 0; t < Tlen; t++) {
            T s = obs[(size_t)b * Tlen + t];
            const T *w = params + L.w_emb + (size_t)t * d, *bb = params + L.b_emb + (size_t)t * d;
            T *ut = u + ((size_t)b * Tlen + t) * d;
            for (int k = 0; k < d; k++) ut[k] = s * w[k] + bb[k];
        }
    if (cfg->hyperbolic) S(gyro_poincare_expmap0_batch)(x0, u, c, N, d);
    else memcpy(x0, u, sizeof(T) * (size_t)N * d);

    S(gyro_mla_forward)(a, acts + L.mla_a, x0, params + L.mla_p, &cfg->mla, B, Tlen);
    if (cfg->hyperbolic) S(gyro_poincare_mobius_add_batch)(x1, x0, a, c, N, d);
    else
        for (size_t i = 0; i < (size_t)N * d; i++) x1[i] = x0[i] + a[i];

    S(gyro_moe_forward)(m, acts + L.moe_a, route, x1, params + L.moe_p, &cfg->moe, N);
    if (cfg->hyperbolic) {
        S(gyro_poincare_mobius_add_batch)(x2, x1, m, c, N, d);
        S(gyro_poincare_logmap0_batch)(lx2, x2, c, N, d);
    } else {
        for (size_t i = 0; i < (size_t)N * d; i++) x2[i] = x1[i] + m[i];
        memcpy(lx2, x2, sizeof(T) * (size_t)N * d);
    }
    for (int b = 0; b < B; b++) {
        T *pb = pool + (size_t)b * d;
        for (int k = 0; k < d; k++) {
            double acc = 0.0;
            for (int t = 0; t < Tlen; t++) acc += lx2[((size_t)b * Tlen + t) * d + k];
            pb[k] = (T)(acc / Tlen);
        }
        T *zb = logits + (size_t)b * A, *lb = logp + (size_t)b * A;
        double mx = -INFINITY;
        for (int j = 0; j < A; j++) {
            const T *w = params + L.w_head + (size_t)j * d;
            double acc = params[L.b_head + j];
            for (int k = 0; k < d; k++) acc += (double)w[k] * pb[k];
            zb[j] = (T)acc;
            if (acc > mx) mx = acc;
        }
        double sum = 0.0;
        for (int j = 0; j < A; j++) sum += exp((double)zb[j] - mx);
        double lse = mx + log(sum);
        for (int j = 0; j < A; j++) lb[j] = (T)((double)zb[j] - lse);
    }
}

void P(backward)(T *dparams, T *scratch, const T *dlogits,
                 const T *acts, const int *route, const T *obs,
                 const T *params, const gyro_rl_policy_config *cfg, int B,
                 double balance_alpha)
{
    if (cfg->hyperbolic == GYRO_RL_GEOMETRY_LORENTZ) { /* no experts: no balance loss */
        (void)route;
        (void)balance_alpha;
        S(policy_lz_backward)(dparams, scratch, dlogits, acts, obs, params, cfg, B);
        return;
    }
    gyro_rl_policy_layout L;
    gyro_rl_policy_layout_init(&L, cfg, B);
    const int Tlen = cfg->obs_dim, d = cfg->d_model, A = cfg->n_actions, N = B * Tlen;
    const T c = (T)cfg->curvature;
    const size_t Nd = (size_t)N * d;
    const T *u = acts + L.u, *x0 = acts + L.x0, *a = acts + L.a, *x1 = acts + L.x1;
    const T *m = acts + L.m, *x2 = acts + L.x2, *pool = acts + L.pool;
    T *du = scratch, *dx0 = du + Nd, *da = dx0 + Nd, *dx1 = da + Nd, *dm = dx1 + Nd;
    T *dx2 = dm + Nd, *dpool = dx2 + Nd, *mla_s = dpool + (size_t)B * d;
    T *moe_s = mla_s + L.mla.n_scratch;
    memset(scratch, 0, sizeof(T) * (6 * Nd + (size_t)B * d));

    /* head */
    for (int b = 0; b < B; b++) {
        const T *db = dlogits + (size_t)b * A, *pb = pool + (size_t)b * d;
        T *dpb = dpool + (size_t)b * d;
        for (int j = 0; j < A; j++) {
            double g = db[j];
            const T *w = params + L.w_head + (size_t)j * d;
            T *dw = dparams + L.w_head + (size_t)j * d;
            dparams[L.b_head + j] += (T)g;
            for (int k = 0; k < d; k++) {
                dw[k] += (T)(g * pb[k]);
                dpb[k] += (T)(g * w[k]);
            }
        }
    }
    /* mean pool: d(lx2)_t = dpool / T; hyperbolic: through log0 */
    T *dl = dm; /* borrow dm as d(lx2) before it is needed */
    for (int b = 0; b < B; b++)
        for (int t = 0; t < Tlen; t++)
            for (int k = 0; k < d; k++)
                dl[((size_t)b * Tlen + t) * d + k] = (T)(dpool[(size_t)b * d + k] / Tlen);
    if (cfg->hyperbolic) S(gyro_poincare_logmap0_backward_batch)(dx2, dl, x2, c, N, d);
    else memcpy(dx2, dl, sizeof(T) * Nd);
    memset(dm, 0, sizeof(T) * Nd);
    /* x2 = x1 ⊕ m */
    if (cfg->hyperbolic) S(gyro_poincare_mobius_add_backward_batch)(dx1, dm, dx2, x1, m, c, N, d);
    else
        for (size_t i = 0; i < Nd; i++) {
            dx1[i] += dx2[i];
            dm[i] += dx2[i];
        }
    S(gyro_moe_backward)(dx1, dparams + L.moe_p, moe_s, dm, acts + L.moe_a, route, x1,
                         params + L.moe_p, &cfg->moe, N, balance_alpha);
    /* x1 = x0 ⊕ a */
    if (cfg->hyperbolic) S(gyro_poincare_mobius_add_backward_batch)(dx0, da, dx1, x0, a, c, N, d);
    else
        for (size_t i = 0; i < Nd; i++) {
            dx0[i] += dx1[i];
            da[i] += dx1[i];
        }
    S(gyro_mla_backward)(dx0, dparams + L.mla_p, mla_s, da, acts + L.mla_a, x0,
                         params + L.mla_p, &cfg->mla, B, Tlen);
    if (cfg->hyperbolic) S(gyro_poincare_expmap0_backward_batch)(du, dx0, u, c, N, d);
    else memcpy(du, dx0, sizeof(T) * Nd);
    for (int b = 0; b < B; b++)
        for (int t = 0; t < Tlen; t++) {
            T s = obs[(size_t)b * Tlen + t];
            const T *dut = du + ((size_t)b * Tlen + t) * d;
            T *dw = dparams + L.w_emb + (size_t)t * d, *dbb = dparams + L.b_emb + (size_t)t * d;
            for (int k = 0; k < d; k++) {
                dw[k] += s * dut[k];
                dbb[k] += dut[k];
            }
        }
}

/* policy_impl.h — the one implementation of the policy network's forward/backward, instantiated
 * by policy.c for float32 and float64 (formulas in policy.h). Define REAL, SFX(name) and
 * POINCARE(name) before including. Not a public header: no include guard on purpose.
 */

void SFX(gyro_rl_policy_init_params)(REAL *params, const gyro_rl_policy_config *cfg, gyro_rng *rng)
{
    gyro_rl_policy_layout L;
    gyro_rl_policy_layout_init(&L, cfg, 1);
    const int T = cfg->obs_dim, d = cfg->d_model, A = cfg->n_actions;
    for (size_t i = 0; i < (size_t)T * d; i++) params[L.w_emb + i] = (REAL)gyro_rng_normal(rng);
    for (size_t i = 0; i < (size_t)T * d; i++) params[L.b_emb + i] = (REAL)(0.5 * gyro_rng_normal(rng));
    /* keep the initial embedding inside a moderate ball: exp0 saturates beyond |u| ≈ 3 */
    for (size_t i = 0; i < (size_t)T * d; i++) {
        params[L.w_emb + i] = (REAL)(params[L.w_emb + i] / sqrt((double)d));
        params[L.b_emb + i] = (REAL)(params[L.b_emb + i] / sqrt((double)d));
    }
    SFX(gyro_mla_init_params)(params + L.mla_p, &cfg->mla, rng);
    SFX(gyro_moe_init_params)(params + L.moe_p, &cfg->moe, rng);
    /* a small head: the initial policy is close to uniform */
    for (size_t i = 0; i < (size_t)A * d; i++)
        params[L.w_head + i] = (REAL)(0.1 * gyro_rng_normal(rng) / sqrt((double)d));
    for (int i = 0; i < A; i++) params[L.b_head + i] = 0;
}

void SFX(gyro_rl_policy_forward)(REAL *acts, int *route, const REAL *obs, const REAL *params,
                                 const gyro_rl_policy_config *cfg, int B)
{
    gyro_rl_policy_layout L;
    gyro_rl_policy_layout_init(&L, cfg, B);
    const int T = cfg->obs_dim, d = cfg->d_model, A = cfg->n_actions, N = B * T;
    const REAL c = (REAL)cfg->curvature;
    REAL *u = acts + L.u, *x0 = acts + L.x0, *a = acts + L.a, *x1 = acts + L.x1;
    REAL *m = acts + L.m, *x2 = acts + L.x2, *lx2 = acts + L.lx2, *pool = acts + L.pool;
    REAL *logits = acts + L.logits, *logp = acts + L.logp;

    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++) {
            REAL s = obs[(size_t)b * T + t];
            const REAL *w = params + L.w_emb + (size_t)t * d, *bb = params + L.b_emb + (size_t)t * d;
            REAL *ut = u + ((size_t)b * T + t) * d;
            for (int k = 0; k < d; k++) ut[k] = s * w[k] + bb[k];
        }
    if (cfg->hyperbolic) POINCARE(gyro_poincare_expmap0_batch)(x0, u, c, N, d);
    else memcpy(x0, u, sizeof(REAL) * (size_t)N * d);

    SFX(gyro_mla_forward)(a, acts + L.mla_a, x0, params + L.mla_p, &cfg->mla, B, T);
    if (cfg->hyperbolic) POINCARE(gyro_poincare_mobius_add_batch)(x1, x0, a, c, N, d);
    else
        for (size_t i = 0; i < (size_t)N * d; i++) x1[i] = x0[i] + a[i];

    SFX(gyro_moe_forward)(m, acts + L.moe_a, route, x1, params + L.moe_p, &cfg->moe, N);
    if (cfg->hyperbolic) {
        POINCARE(gyro_poincare_mobius_add_batch)(x2, x1, m, c, N, d);
        POINCARE(gyro_poincare_logmap0_batch)(lx2, x2, c, N, d);
    } else {
        for (size_t i = 0; i < (size_t)N * d; i++) x2[i] = x1[i] + m[i];
        memcpy(lx2, x2, sizeof(REAL) * (size_t)N * d);
    }
    for (int b = 0; b < B; b++) {
        REAL *pb = pool + (size_t)b * d;
        for (int k = 0; k < d; k++) {
            double acc = 0.0;
            for (int t = 0; t < T; t++) acc += lx2[((size_t)b * T + t) * d + k];
            pb[k] = (REAL)(acc / T);
        }
        REAL *zb = logits + (size_t)b * A, *lb = logp + (size_t)b * A;
        double mx = -INFINITY;
        for (int j = 0; j < A; j++) {
            const REAL *w = params + L.w_head + (size_t)j * d;
            double acc = params[L.b_head + j];
            for (int k = 0; k < d; k++) acc += (double)w[k] * pb[k];
            zb[j] = (REAL)acc;
            if (acc > mx) mx = acc;
        }
        double sum = 0.0;
        for (int j = 0; j < A; j++) sum += exp((double)zb[j] - mx);
        double lse = mx + log(sum);
        for (int j = 0; j < A; j++) lb[j] = (REAL)((double)zb[j] - lse);
    }
}

void SFX(gyro_rl_policy_backward)(REAL *dparams, REAL *scratch, const REAL *dlogits,
                                  const REAL *acts, const int *route, const REAL *obs,
                                  const REAL *params, const gyro_rl_policy_config *cfg, int B,
                                  double balance_alpha)
{
    gyro_rl_policy_layout L;
    gyro_rl_policy_layout_init(&L, cfg, B);
    const int T = cfg->obs_dim, d = cfg->d_model, A = cfg->n_actions, N = B * T;
    const REAL c = (REAL)cfg->curvature;
    const size_t Nd = (size_t)N * d;
    const REAL *u = acts + L.u, *x0 = acts + L.x0, *a = acts + L.a, *x1 = acts + L.x1;
    const REAL *m = acts + L.m, *x2 = acts + L.x2, *pool = acts + L.pool;
    REAL *du = scratch, *dx0 = du + Nd, *da = dx0 + Nd, *dx1 = da + Nd, *dm = dx1 + Nd;
    REAL *dx2 = dm + Nd, *dpool = dx2 + Nd, *mla_s = dpool + (size_t)B * d;
    REAL *moe_s = mla_s + L.mla.n_scratch;
    memset(scratch, 0, sizeof(REAL) * (6 * Nd + (size_t)B * d));

    /* head */
    for (int b = 0; b < B; b++) {
        const REAL *db = dlogits + (size_t)b * A, *pb = pool + (size_t)b * d;
        REAL *dpb = dpool + (size_t)b * d;
        for (int j = 0; j < A; j++) {
            double g = db[j];
            const REAL *w = params + L.w_head + (size_t)j * d;
            REAL *dw = dparams + L.w_head + (size_t)j * d;
            dparams[L.b_head + j] += (REAL)g;
            for (int k = 0; k < d; k++) {
                dw[k] += (REAL)(g * pb[k]);
                dpb[k] += (REAL)(g * w[k]);
            }
        }
    }
    /* mean pool: d(lx2)_t = dpool / T; hyperbolic: through log0 */
    REAL *dl = dm; /* borrow dm as d(lx2) before it is needed */
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++)
            for (int k = 0; k < d; k++)
                dl[((size_t)b * T + t) * d + k] = (REAL)(dpool[(size_t)b * d + k] / T);
    if (cfg->hyperbolic) POINCARE(gyro_poincare_logmap0_backward_batch)(dx2, dl, x2, c, N, d);
    else memcpy(dx2, dl, sizeof(REAL) * Nd);
    memset(dm, 0, sizeof(REAL) * Nd);
    /* x2 = x1 ⊕ m */
    if (cfg->hyperbolic) POINCARE(gyro_poincare_mobius_add_backward_batch)(dx1, dm, dx2, x1, m, c, N, d);
    else
        for (size_t i = 0; i < Nd; i++) {
            dx1[i] += dx2[i];
            dm[i] += dx2[i];
        }
    SFX(gyro_moe_backward)(dx1, dparams + L.moe_p, moe_s, dm, acts + L.moe_a, route, x1,
                           params + L.moe_p, &cfg->moe, N, balance_alpha);
    /* x1 = x0 ⊕ a */
    if (cfg->hyperbolic) POINCARE(gyro_poincare_mobius_add_backward_batch)(dx0, da, dx1, x0, a, c, N, d);
    else
        for (size_t i = 0; i < Nd; i++) {
            dx0[i] += dx1[i];
            da[i] += dx1[i];
        }
    SFX(gyro_mla_backward)(dx0, dparams + L.mla_p, mla_s, da, acts + L.mla_a, x0,
                           params + L.mla_p, &cfg->mla, B, T);
    if (cfg->hyperbolic) POINCARE(gyro_poincare_expmap0_backward_batch)(du, dx0, u, c, N, d);
    else memcpy(du, dx0, sizeof(REAL) * Nd);
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++) {
            REAL s = obs[(size_t)b * T + t];
            const REAL *dut = du + ((size_t)b * T + t) * d;
            REAL *dw = dparams + L.w_emb + (size_t)t * d, *dbb = dparams + L.b_emb + (size_t)t * d;
            for (int k = 0; k < d; k++) {
                dw[k] += s * dut[k];
                dbb[k] += dut[k];
            }
        }
}

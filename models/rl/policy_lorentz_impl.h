/* policy_lorentz_impl.h — internal template: the Lorentz backbone of the policy network
 * (policy.h, "GYRO_RL_GEOMETRY_LORENTZ"), included by policy_impl.h once per precision with its
 * T / S / P (no include guard on purpose).
 *
 * A Lorentz transformer block (HyboNet, Chen et al. ACL 2022), not a Lorentz form of MLA and MoE:
 * HyboNet defines no latent attention and no experts, and the classifier's Lorentz block
 * (transformer_lorentz_impl.h) is the tested form of the paper. Every layer is a kernel of
 * models/layers/lorentz.h (formula and section beside each prototype there):
 *   x0   = lift(u),  lift(u) = (√(k + |u|²), u),  k = 1/c         (the point of H^d over u)
 *   Q|K|V = gyro_lorentz_hlinear_group (§3.1): H Lorentz linear layers each, one per head
 *   O    = gyro_lorentz_mha (§3.2), every key valid (an observation has no padding)
 *   x1   = gyro_lorentz_residual (§3.3): hl_o(O) with x0 as bias point
 *   hf   = gyro_lorentz_hlinear: hl_1(x1)                                    (N, F+1)
 *   x2   = gyro_lorentz_residual: hl_2(ReLU(hf)) with x1 as bias point
 *   μ    = gyro_lorentz_pool (eq. 4) over the T tokens
 *   z    = gyro_lorentz_head: −d²_L(μ, lift(w_a)) + β_a;  log π = log_softmax(z)
 * The lift is the hyperboloid's chart by its spatial coordinates (the inverse of dropping x₀);
 * its Jacobian, used in the backward: ∂x₀/∂u = u/x₀, ∂x_s/∂u = I.
 * No dropout (the policy has none in any geometry). */

/* x (rows, d+1) = lift(u (rows, d)) with k = 1/c; the square root's argument in double. */
static void S(policy_lz_lift)(T *x, const T *u, double k, size_t rows, int d)
{
    for (size_t r = 0; r < rows; r++) {
        const T *ur = u + r * d;
        T *xr = x + r * (d + 1);
        double q = k;
        for (int j = 0; j < d; j++) {
            q += (double)ur[j] * ur[j];
            xr[j + 1] = ur[j];
        }
        xr[0] = (T)sqrt(q);
    }
}

/* du (rows, d) += (∂lift/∂u)ᵀ dx:  du_j += dx_{j+1} + dx_0 · u_j / x_0. */
static void S(policy_lz_lift_backward)(T *du, const T *dx, const T *x, size_t rows, int d)
{
    for (size_t r = 0; r < rows; r++) {
        const T *dxr = dx + r * (d + 1), *xr = x + r * (d + 1);
        T *dur = du + r * d;
        const double g0 = (double)dxr[0] / xr[0];
        for (int j = 0; j < d; j++) dur[j] += (T)(dxr[j + 1] + g0 * xr[j + 1]);
    }
}

static void S(policy_lz_init_params)(T *params, const gyro_rl_policy_config *cfg, gyro_rng *rng)
{
    gyro_rl_policy_layout L;
    gyro_rl_policy_layout_init(&L, cfg, 1);
    const size_t Tlen = cfg->obs_dim, d = cfg->d_model, d1 = d + 1, A = cfg->n_actions;
    const size_t H = cfg->lz_heads, D = cfg->lz_head_dim, HD1 = H * (D + 1), F = cfg->lz_ffn;
    memset(params, 0, sizeof(T) * L.n_params);
    /* the state embedding as in the other geometries: |u| ≈ 1 */
    for (size_t i = 0; i < Tlen * d; i++)
        params[L.w_emb + i] = (T)(gyro_rng_normal(rng) / sqrt((double)d));
    for (size_t i = 0; i < Tlen * d; i++)
        params[L.b_emb + i] = (T)(0.5 * gyro_rng_normal(rng) / sqrt((double)d));
    /* matrices Xavier-uniform on their (out, in) shape; b, v, b_t zero; log λ = log 4 (as the
     * Lorentz classifier) */
#define POLICY_LZ_XAVIER(off, count, fo, fi)                                                  \
    do {                                                                                       \
        const double lim_ = sqrt(6.0 / (double)((fo) + (fi)));                                 \
        for (size_t j_ = 0; j_ < (size_t)(count); j_++)                                        \
            params[(off) + j_] = (T)(lim_ * (2.0 * gyro_rng_uniform(rng) - 1.0));              \
    } while (0)
    POLICY_LZ_XAVIER(L.lz_qkvw, 3 * H * D * d1, D, d1);
    POLICY_LZ_XAVIER(L.lz_ow, d * HD1, d, HD1);
    POLICY_LZ_XAVIER(L.lz_f1w, F * d1, F, d1);
    POLICY_LZ_XAVIER(L.lz_f2w, d * (F + 1), d, F + 1);
#undef POLICY_LZ_XAVIER
    for (size_t g = 0; g < 3 * H; g++) params[L.lz_qkvt + 2 * g + 1] = (T)POLICY_LZ_LOG_LAMBDA0;
    params[L.lz_ot + 1] = params[L.lz_f1t + 1] = params[L.lz_f2t + 1] = (T)POLICY_LZ_LOG_LAMBDA0;
    /* class points near the origin: the initial policy is close to uniform */
    for (size_t i = 0; i < A * d; i++)
        params[L.w_head + i] = (T)(0.1 * gyro_rng_normal(rng) / sqrt((double)d));
}

static void S(policy_lz_forward)(T *acts, const T *obs, const T *params,
                                 const gyro_rl_policy_config *cfg, int B)
{
    gyro_rl_policy_layout L;
    gyro_rl_policy_layout_init(&L, cfg, B);
    const int Tlen = cfg->obs_dim, d = cfg->d_model, A = cfg->n_actions, N = B * Tlen;
    const int H = cfg->lz_heads, D = cfg->lz_head_dim, HD1 = H * (D + 1), F = cfg->lz_ffn;
    const double c = cfg->curvature, Kc = -c, k = 1.0 / c, eps = POLICY_LZ_EPS(c);
    T *u = acts + L.u, *x0 = acts + L.x0, *x1 = acts + L.x1, *x2 = acts + L.x2;
    T *qkv = acts + L.lz_qkv, *O = acts + L.lz_O, *hf = acts + L.lz_hf, *mu = acts + L.pool;
    T *hp = acts + L.lz_hp, *logits = acts + L.logits, *logp = acts + L.logp;
    const T *P = params;

    for (int b = 0; b < B; b++)
        for (int t = 0; t < Tlen; t++) {
            T s = obs[(size_t)b * Tlen + t];
            const T *w = P + L.w_emb + (size_t)t * d, *bb = P + L.b_emb + (size_t)t * d;
            T *ut = u + ((size_t)b * Tlen + t) * d;
            for (int j = 0; j < d; j++) ut[j] = s * w[j] + bb[j];
        }
    S(policy_lz_lift)(x0, u, k, (size_t)N, d);
    for (int g = 0; g < 3; g++)
        S(gyro_lorentz_hlinear_group_forward)(qkv + (size_t)g * N * HD1,
                                              acts + L.lz_qkvU + (size_t)g * N * H * D,
                                              acts + L.lz_qkvZ + (size_t)g * N * H, x0,
                                              P + L.lz_qkvw + (size_t)g * H * D * (d + 1),
                                              P + L.lz_qkvb + (size_t)g * H * D,
                                              P + L.lz_qkvv + (size_t)g * H * (d + 1),
                                              P + L.lz_qkvt + (size_t)g * H * 2, eps, Kc, N, d, D,
                                              H);
    S(gyro_lorentz_mha_forward)(O, acts + L.lz_att, acts + L.lz_sza, qkv, qkv + (size_t)N * HD1,
                                qkv + 2 * (size_t)N * HD1, NULL, Kc, B, Tlen, Tlen, H, D);
    S(gyro_lorentz_residual_forward)(x1, acts + L.lz_Uo, NULL, O, NULL, x0, P + L.lz_ow, NULL,
                                     P + L.lz_ov, P + L.lz_ot, P + L.lz_ot + 1, eps,
                                     GYRO_LORENTZ_ACT_NONE, Kc, N, HD1 - 1, d);
    S(gyro_lorentz_hlinear_forward)(hf, acts + L.lz_U1, NULL, x1, NULL, NULL, P + L.lz_f1w,
                                    P + L.lz_f1b, P + L.lz_f1v, P + L.lz_f1t, P + L.lz_f1t + 1, eps,
                                    GYRO_LORENTZ_ACT_NONE, Kc, N, d, F, 1);
    S(gyro_lorentz_residual_forward)(x2, acts + L.lz_U2, acts + L.lz_Hcf, hf, NULL, x1,
                                     P + L.lz_f2w, NULL, P + L.lz_f2v, P + L.lz_f2t,
                                     P + L.lz_f2t + 1, eps, GYRO_LORENTZ_ACT_RELU, Kc, N, F, d);
    S(gyro_lorentz_pool_forward)(mu, acts + L.lz_szp, x2, NULL, Kc, B, Tlen, d);
    S(policy_lz_lift)(hp, P + L.w_head, k, (size_t)A, d);
    S(gyro_lorentz_head_forward)(logits, mu, hp, P + L.b_head, Kc, B, A, d);
    for (int b = 0; b < B; b++) {
        T *zb = logits + (size_t)b * A, *lb = logp + (size_t)b * A;
        double mx = -INFINITY;
        for (int j = 0; j < A; j++)
            if (zb[j] > mx) mx = zb[j];
        double sum = 0.0;
        for (int j = 0; j < A; j++) sum += exp((double)zb[j] - mx);
        double lse = mx + log(sum);
        for (int j = 0; j < A; j++) lb[j] = (T)((double)zb[j] - lse);
    }
}

static void S(policy_lz_backward)(T *dparams, T *scratch, const T *dlogits, const T *acts,
                                  const T *obs, const T *params, const gyro_rl_policy_config *cfg,
                                  int B)
{
    gyro_rl_policy_layout L;
    gyro_rl_policy_layout_init(&L, cfg, B);
    const int Tlen = cfg->obs_dim, d = cfg->d_model, d1 = d + 1, A = cfg->n_actions, N = B * Tlen;
    const int H = cfg->lz_heads, D = cfg->lz_head_dim, HD1 = H * (D + 1), F = cfg->lz_ffn;
    const double c = cfg->curvature, Kc = -c, eps = POLICY_LZ_EPS(c);
    const T *P = params;
    T *G = dparams;
    const T *u = acts + L.u, *x0 = acts + L.x0, *x1 = acts + L.x1, *x2 = acts + L.x2;
    const T *qkv = acts + L.lz_qkv, *O = acts + L.lz_O, *hf = acts + L.lz_hf, *mu = acts + L.pool;
    const T *hp = acts + L.lz_hp;
    (void)u;
    /* scratch: du (N, d), dx0, dx1, dx2 (N, d1), dQKV (3, N, HD1), dO (N, HD1), dhf (N, F+1),
     * dmu (B, d1), dhp (A, d1), then the hlinear work rows */
    T *du = scratch, *dx0 = du + (size_t)N * d, *dx1 = dx0 + (size_t)N * d1;
    T *dx2 = dx1 + (size_t)N * d1, *dqkv = dx2 + (size_t)N * d1, *dO = dqkv + 3 * (size_t)N * HD1;
    T *dhf = dO + (size_t)N * HD1, *dmu = dhf + (size_t)N * (F + 1), *dhp = dmu + (size_t)B * d1;
    T *work = dhp + (size_t)A * d1;
    memset(scratch, 0, sizeof(T) * (size_t)(work - scratch));

    /* head: logits = −d²_L(μ, lift(w)) + β, then the lift of the class points */
    S(gyro_lorentz_head_backward)(dmu, dhp, G + L.b_head, dlogits, mu, hp, Kc, B, A, d);
    S(policy_lz_lift_backward)(G + L.w_head, dhp, hp, (size_t)A, d);
    S(gyro_lorentz_pool_backward)(dx2, NULL, dmu, mu, acts + L.lz_szp, x2, NULL, Kc, B, Tlen, d);
    /* FFN layer 2 (residual into x1), FFN layer 1 */
    S(gyro_lorentz_residual_backward)(dhf, dx1, G + L.lz_f2w, NULL, G + L.lz_f2v, G + L.lz_f2t,
                                      G + L.lz_f2t + 1, work, dx2, acts + L.lz_U2,
                                      acts + L.lz_Hcf, hf, NULL, x1, P + L.lz_f2w, P + L.lz_f2v,
                                      P + L.lz_f2t, P + L.lz_f2t + 1, eps, GYRO_LORENTZ_ACT_RELU,
                                      Kc, N, F, d);
    S(gyro_lorentz_hlinear_backward)(dx1, NULL, G + L.lz_f1w, G + L.lz_f1b, G + L.lz_f1v,
                                     G + L.lz_f1t, G + L.lz_f1t + 1, work, dhf, acts + L.lz_U1,
                                     NULL, x1, NULL, NULL, P + L.lz_f1w, P + L.lz_f1v,
                                     P + L.lz_f1t, P + L.lz_f1t + 1, eps, GYRO_LORENTZ_ACT_NONE,
                                     Kc, N, d, F, 1);
    /* output layer (residual into x0) */
    S(gyro_lorentz_residual_backward)(dO, dx0, G + L.lz_ow, NULL, G + L.lz_ov, G + L.lz_ot,
                                      G + L.lz_ot + 1, work, dx1, acts + L.lz_Uo, NULL, O, NULL,
                                      x0, P + L.lz_ow, P + L.lz_ov, P + L.lz_ot, P + L.lz_ot + 1,
                                      eps, GYRO_LORENTZ_ACT_NONE, Kc, N, HD1 - 1, d);
    /* attention, then the q | k | v groups */
    S(gyro_lorentz_mha_backward)(dqkv, dqkv + (size_t)N * HD1, dqkv + 2 * (size_t)N * HD1, dO, O,
                                 acts + L.lz_att, acts + L.lz_sza, qkv, qkv + (size_t)N * HD1,
                                 qkv + 2 * (size_t)N * HD1, NULL, Kc, B, Tlen, Tlen, H, D);
    for (int g = 0; g < 3; g++)
        S(gyro_lorentz_hlinear_group_backward)(dx0, G + L.lz_qkvw + (size_t)g * H * D * d1,
                                               G + L.lz_qkvb + (size_t)g * H * D,
                                               G + L.lz_qkvv + (size_t)g * H * d1,
                                               G + L.lz_qkvt + (size_t)g * H * 2, work,
                                               dqkv + (size_t)g * N * HD1,
                                               acts + L.lz_qkvU + (size_t)g * N * H * D,
                                               acts + L.lz_qkvZ + (size_t)g * N * H, x0,
                                               P + L.lz_qkvw + (size_t)g * H * D * d1,
                                               P + L.lz_qkvv + (size_t)g * H * d1,
                                               P + L.lz_qkvt + (size_t)g * H * 2, eps, Kc, N, d, D,
                                               H);
    /* the lift, then the state embedding */
    S(policy_lz_lift_backward)(du, dx0, x0, (size_t)N, d);
    for (int b = 0; b < B; b++)
        for (int t = 0; t < Tlen; t++) {
            T s = obs[(size_t)b * Tlen + t];
            const T *dut = du + ((size_t)b * Tlen + t) * d;
            T *dw = G + L.w_emb + (size_t)t * d, *dbb = G + L.b_emb + (size_t)t * d;
            for (int j = 0; j < d; j++) {
                dw[j] += s * dut[j];
                dbb[j] += dut[j];
            }
        }
}

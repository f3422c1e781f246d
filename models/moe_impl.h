/* moe_impl.h — the one implementation of the MoE kernels, instantiated by moe.c for float32 and
 * float64 (formulas in moe.h). Define REAL, SFX(name) and POINCARE(name) before including.
 * Not a public header: no include guard on purpose.
 */

void SFX(gyro_moe_init_params)(REAL *params, const gyro_moe_config *cfg, gyro_rng *rng)
{
    gyro_moe_layout L;
    gyro_moe_layout_init(&L, cfg, 1);
    const int d = cfg->d_model, F = cfg->d_ffn, ne = cfg->n_shared + cfg->n_routed;
    for (int e = 0; e < ne; e++) {
        REAL *P = params + (size_t)e * L.expert_stride;
        for (size_t i = 0; i < (size_t)F * d; i++) P[L.w1 + i] = (REAL)(gyro_rng_normal(rng) / sqrt((double)d));
        for (size_t i = 0; i < (size_t)F * d; i++) P[L.w2 + i] = (REAL)(0.5 * gyro_rng_normal(rng) / sqrt((double)F));
        for (int i = 0; i < F; i++) P[L.b1 + i] = 0;
        for (int i = 0; i < d; i++) P[L.b2 + i] = 0;
    }
    for (size_t i = 0; i < (size_t)cfg->n_routed * d; i++)
        params[L.centroids + i] = (REAL)(gyro_rng_normal(rng) / sqrt((double)d));
}

/* Expert index of active slot j of token t (shared first, then the routed ones). */
static int SFX(slot_expert)(const gyro_moe_config *cfg, const int *route, int t, int j)
{
    return j < cfg->n_shared ? j : cfg->n_shared + route[(size_t)t * cfg->top_k + (j - cfg->n_shared)];
}

static double SFX(slot_gate)(const gyro_moe_config *cfg, const REAL *probs, const int *route, int t, int j)
{
    if (j < cfg->n_shared) return 1.0;
    int i = route[(size_t)t * cfg->top_k + (j - cfg->n_shared)];
    return probs[(size_t)t * cfg->n_routed + i];
}

void SFX(gyro_moe_forward)(REAL *out, REAL *acts, int *route, const REAL *in, const REAL *params,
                           const gyro_moe_config *cfg, int N)
{
    gyro_moe_layout L;
    gyro_moe_layout_init(&L, cfg, N);
    const int d = cfg->d_model, F = cfg->d_ffn, Nr = cfg->n_routed, K = cfg->top_k;
    const int A = cfg->n_shared + K;
    const REAL c = (REAL)cfg->curvature;
    REAL *z = acts + L.z, *probs = acts + L.probs;
    if (cfg->hyperbolic) POINCARE(gyro_poincare_logmap0_batch)(z, in, c, N, d);
    else memcpy(z, in, sizeof(REAL) * (size_t)N * d);

    for (int t = 0; t < N; t++) {
        const REAL *zt = z + (size_t)t * d;
        /* router (27): softmax of the affinities */
        REAL *pt = probs + (size_t)t * Nr;
        double mx = -INFINITY;
        for (int i = 0; i < Nr; i++) {
            const REAL *ei = params + L.centroids + (size_t)i * d;
            double dot = 0.0;
            for (int k = 0; k < d; k++) dot += (double)zt[k] * ei[k];
            pt[i] = (REAL)dot;
            if (dot > mx) mx = dot;
        }
        double sum = 0.0;
        for (int i = 0; i < Nr; i++) {
            double ex = exp((double)pt[i] - mx);
            pt[i] = (REAL)ex;
            sum += ex;
        }
        for (int i = 0; i < Nr; i++) pt[i] = (REAL)(pt[i] / sum);
        /* top-k (26): K passes of argmax over the experts not yet taken; ties → lower index */
        int *rt = route + (size_t)t * K;
        for (int k = 0; k < K; k++) {
            int best = -1;
            for (int i = 0; i < Nr; i++) {
                int taken = 0;
                for (int q = 0; q < k; q++) taken |= rt[q] == i;
                if (!taken && (best < 0 || pt[i] > pt[best])) best = i;
            }
            rt[k] = best;
        }
        /* experts */
        REAL *ot = out + (size_t)t * d;
        if (!cfg->hyperbolic) memset(ot, 0, sizeof(REAL) * d);
        for (int j = 0; j < A; j++) {
            int e = SFX(slot_expert)(cfg, route, t, j);
            double g = SFX(slot_gate)(cfg, probs, route, t, j);
            const REAL *P = params + (size_t)e * L.expert_stride;
            size_t sj = (size_t)t * A + j;
            REAL *pre = acts + L.pre + sj * F, *hid = acts + L.hid + sj * F, *y = acts + L.y + sj * d;
            for (int f = 0; f < F; f++) {
                const REAL *w = P + L.w1 + (size_t)f * d;
                double acc = P[L.b1 + f];
                for (int k = 0; k < d; k++) acc += (double)w[k] * zt[k];
                pre[f] = (REAL)acc;
                double x3 = acc * acc * acc;
                hid[f] = (REAL)(0.5 * acc * (1.0 + tanh(0.7978845608028654 * (acc + 0.044715 * x3))));
            }
            for (int k = 0; k < d; k++) {
                const REAL *w = P + L.w2 + (size_t)k * F;
                double acc = P[L.b2 + k];
                for (int f = 0; f < F; f++) acc += (double)w[f] * hid[f];
                y[k] = (REAL)acc;
            }
            if (!cfg->hyperbolic) {
                for (int k = 0; k < d; k++) ot[k] += (REAL)(g * y[k]);
            } else {
                REAL *ej = acts + L.e + sj * d, *sjp = acts + L.s + sj * d;
                for (int k = 0; k < d; k++) ej[k] = (REAL)(g * y[k]);
                POINCARE(gyro_poincare_expmap0)(ej, ej, c, d); /* (37), gate as Möbius scalar */
                if (j == 0) memcpy(sjp, ej, sizeof(REAL) * d);
                else POINCARE(gyro_poincare_mobius_add)(sjp, sjp - d, ej, c, d); /* (38) */
            }
        }
        if (cfg->hyperbolic) memcpy(ot, acts + L.s + ((size_t)t * A + A - 1) * d, sizeof(REAL) * d);
    }
}

double SFX(gyro_moe_balance_loss)(double *f, const REAL *acts, const int *route,
                                  const gyro_moe_config *cfg, int N, double alpha)
{
    gyro_moe_layout L;
    gyro_moe_layout_init(&L, cfg, N);
    const int Nr = cfg->n_routed, K = cfg->top_k;
    double loss = 0.0;
    for (int i = 0; i < Nr; i++) {
        long cnt = 0;
        double p = 0.0;
        for (int t = 0; t < N; t++) {
            for (int k = 0; k < K; k++) cnt += route[(size_t)t * K + k] == i;
            p += acts[L.probs + (size_t)t * Nr + i];
        }
        double fi = N > 0 ? (double)Nr * cnt / ((double)K * N) : 0.0;
        double pi = N > 0 ? p / N : 0.0;
        if (f) f[i] = fi;
        loss += fi * pi;
    }
    return alpha * loss;
}

void SFX(gyro_moe_backward)(REAL *din, REAL *dparams, REAL *scratch, const REAL *dout,
                            const REAL *acts, const int *route, const REAL *in,
                            const REAL *params, const gyro_moe_config *cfg, int N, double alpha)
{
    gyro_moe_layout L;
    gyro_moe_layout_init(&L, cfg, N);
    const int d = cfg->d_model, F = cfg->d_ffn, Nr = cfg->n_routed, K = cfg->top_k;
    const int A = cfg->n_shared + K;
    const REAL c = (REAL)cfg->curvature;
    const REAL *z = acts + L.z, *probs = acts + L.probs;
    /* scratch: dz (N,d) | dS (A,d) | dE (A,d) | v (d) | dv (d) | dhid (F) | ds (Nr) */
    memset(scratch, 0, sizeof(REAL) * L.n_scratch);
    REAL *dz = scratch, *dS = dz + (size_t)N * d, *dE = dS + (size_t)A * d, *v = dE + (size_t)A * d;
    REAL *dv = v + d, *dhid = dv + d, *ds = dhid + F;
    /* balance-loss gradient: dL/ds_{i,t} = α f_i / N */
    double fbal[Nr > 0 ? Nr : 1];
    if (alpha != 0.0) SFX(gyro_moe_balance_loss)(fbal, acts, route, cfg, N, 1.0);

    for (int t = 0; t < N; t++) {
        const REAL *zt = z + (size_t)t * d, *dot = dout + (size_t)t * d;
        REAL *dzt = dz + (size_t)t * d;
        for (int i = 0; i < Nr; i++) ds[i] = alpha != 0.0 ? (REAL)(alpha * fbal[i] / N) : 0;
        if (cfg->hyperbolic) {
            /* unfold S_j = S_{j-1} ⊕ E_j from the last slot back */
            memset(dS, 0, sizeof(REAL) * (size_t)A * d);
            memset(dE, 0, sizeof(REAL) * (size_t)A * d);
            memcpy(dS + (size_t)(A - 1) * d, dot, sizeof(REAL) * d);
            for (int j = A - 1; j >= 1; j--) {
                const REAL *sprev = acts + L.s + ((size_t)t * A + j - 1) * d;
                const REAL *ej = acts + L.e + ((size_t)t * A + j) * d;
                POINCARE(gyro_poincare_mobius_add_backward)(dS + (size_t)(j - 1) * d, dE + (size_t)j * d,
                                                            dS + (size_t)j * d, sprev, ej, c, d);
            }
            for (int k = 0; k < d; k++) dE[k] += dS[k]; /* S_1 = E_1 */
        }
        for (int j = 0; j < A; j++) {
            int e = SFX(slot_expert)(cfg, route, t, j);
            double g = SFX(slot_gate)(cfg, probs, route, t, j);
            const REAL *P = params + (size_t)e * L.expert_stride;
            REAL *dP = dparams + (size_t)e * L.expert_stride;
            size_t sj = (size_t)t * A + j;
            const REAL *pre = acts + L.pre + sj * F, *hid = acts + L.hid + sj * F, *y = acts + L.y + sj * d;
            /* dv = d(loss)/d(g·y) */
            if (cfg->hyperbolic) {
                for (int k = 0; k < d; k++) v[k] = (REAL)(g * y[k]);
                memset(dv, 0, sizeof(REAL) * d);
                POINCARE(gyro_poincare_expmap0_backward)(dv, dE + (size_t)j * d, v, c, d);
            } else {
                memcpy(dv, dot, sizeof(REAL) * d);
            }
            double dg = 0.0;
            for (int k = 0; k < d; k++) dg += (double)dv[k] * y[k];
            if (j >= cfg->n_shared) ds[route[(size_t)t * K + (j - cfg->n_shared)]] += (REAL)dg;
            /* through FFN: dy = g dv */
            for (int f = 0; f < F; f++) dhid[f] = 0;
            for (int k = 0; k < d; k++) {
                double dyk = g * dv[k];
                const REAL *w = P + L.w2 + (size_t)k * F;
                REAL *dw = dP + L.w2 + (size_t)k * F;
                dP[L.b2 + k] += (REAL)dyk;
                for (int f = 0; f < F; f++) {
                    dw[f] += (REAL)(dyk * hid[f]);
                    dhid[f] += (REAL)(dyk * w[f]);
                }
            }
            for (int f = 0; f < F; f++) {
                double x = pre[f], x2 = x * x;
                double inner = 0.7978845608028654 * (x + 0.044715 * x2 * x);
                double th = tanh(inner);
                double dgelu = 0.5 * (1.0 + th) +
                               0.5 * x * (1.0 - th * th) * 0.7978845608028654 * (1.0 + 3 * 0.044715 * x2);
                double dpre = dhid[f] * dgelu;
                const REAL *w = P + L.w1 + (size_t)f * d;
                REAL *dw = dP + L.w1 + (size_t)f * d;
                dP[L.b1 + f] += (REAL)dpre;
                for (int k = 0; k < d; k++) {
                    dw[k] += (REAL)(dpre * zt[k]);
                    dzt[k] += (REAL)(dpre * w[k]);
                }
            }
        }
        /* router softmax backward: dlogit_i = s_i (ds_i − Σ_j s_j ds_j) */
        const REAL *pt = probs + (size_t)t * Nr;
        double sum = 0.0;
        for (int i = 0; i < Nr; i++) sum += (double)pt[i] * ds[i];
        for (int i = 0; i < Nr; i++) {
            double dl = pt[i] * (ds[i] - sum);
            const REAL *ei = params + L.centroids + (size_t)i * d;
            REAL *dei = dparams + L.centroids + (size_t)i * d;
            for (int k = 0; k < d; k++) {
                dei[k] += (REAL)(dl * zt[k]);
                dzt[k] += (REAL)(dl * ei[k]);
            }
        }
    }
    if (!din) return;
    if (cfg->hyperbolic) POINCARE(gyro_poincare_logmap0_backward_batch)(din, dz, in, c, N, d);
    else
        for (size_t i = 0; i < (size_t)N * d; i++) din[i] += dz[i];
}

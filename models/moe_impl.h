/* moe_impl.h — the one implementation of the MoE kernels, instantiated by moe.c for float32 and
 * float64 (formulas in moe.h). Define REAL, SFX(name), POINCARE(name), GEMM (cblas_sgemm or
 * cblas_dgemm) and TANH before including. Not a public header: no include guard on purpose.
 *
 * Expert products: shared expert j runs on all N tokens at once, reading and writing the slot-j
 * columns of the (N, A, ·) activations through BLAS leading dimensions; routed expert i gathers
 * the rows of its tokens (the forward pass groups the (token, k) pairs by expert in the route
 * buffer), multiplies them as one block and scatters the results back.
 */

#define GELU_C 0.7978845608028654 /* √(2/π) */

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

static double SFX(slot_gate)(const gyro_moe_config *cfg, const REAL *probs, const int *route, int t, int j)
{
    if (j < cfg->n_shared) return 1.0;
    int i = route[(size_t)t * cfg->top_k + (j - cfg->n_shared)];
    return probs[(size_t)t * cfg->n_routed + i];
}

/* One expert's forward on n rows: pre (rows of ld_pre), hid (ld_hid), y (ld_y) from X (ld_x).
 * pre = X W1ᵀ + b1, hid = GELU(pre), y = hid W2ᵀ + b2. */
static void SFX(expert_fwd)(REAL *pre, int ld_pre, REAL *hid, int ld_hid, REAL *y, int ld_y,
                            const REAL *X, int ld_x, const REAL *P, const gyro_moe_layout *L,
                            int n, int d, int F)
{
    if (n == 0) return;
    GEMM(CblasRowMajor, CblasNoTrans, CblasTrans, n, F, d, 1, X, ld_x, P + L->w1, d, 0, pre, ld_pre);
    for (int r = 0; r < n; r++) {
        REAL *pr = pre + (size_t)r * ld_pre, *hr = hid + (size_t)r * ld_hid;
        for (int f = 0; f < F; f++) {
            REAL x = pr[f] + P[L->b1 + f];
            pr[f] = x;
            hr[f] = (REAL)0.5 * x * ((REAL)1 + TANH((REAL)GELU_C * (x + (REAL)0.044715 * x * x * x)));
        }
    }
    GEMM(CblasRowMajor, CblasNoTrans, CblasTrans, n, d, F, 1, hid, ld_hid, P + L->w2, F, 0, y, ld_y);
    for (int r = 0; r < n; r++) {
        REAL *yr = y + (size_t)r * ld_y;
        for (int k = 0; k < d; k++) yr[k] += P[L->b2 + k];
    }
}

/* One expert's backward on n rows given dY (ld_dy): ACCUMULATES dW1, db1, dW2, db2 into dP and
 * dX (ld_dx) += dpre W1. dh (n, F) is scratch. */
static void SFX(expert_bwd)(REAL *dX, int ld_dx, REAL *dP, REAL *dh, const REAL *dY, int ld_dy,
                            const REAL *X, int ld_x, const REAL *pre, int ld_pre, const REAL *hid,
                            int ld_hid, const REAL *P, const gyro_moe_layout *L, int n, int d, int F)
{
    if (n == 0) return;
    for (int r = 0; r < n; r++) {
        const REAL *dyr = dY + (size_t)r * ld_dy;
        for (int k = 0; k < d; k++) dP[L->b2 + k] += dyr[k];
    }
    /* dW2 (d, F) += dYᵀ hid;  dh (n, F) = dY W2 */
    GEMM(CblasRowMajor, CblasTrans, CblasNoTrans, d, F, n, 1, dY, ld_dy, hid, ld_hid, 1, dP + L->w2, F);
    GEMM(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, F, d, 1, dY, ld_dy, P + L->w2, F, 0, dh, F);
    for (int r = 0; r < n; r++) {
        const REAL *pr = pre + (size_t)r * ld_pre;
        REAL *dr = dh + (size_t)r * F;
        for (int f = 0; f < F; f++) {
            double x = pr[f], x2 = x * x;
            double th = TANH((REAL)(GELU_C * (x + 0.044715 * x2 * x)));
            double dg = 0.5 * (1.0 + th) + 0.5 * x * (1.0 - th * th) * GELU_C * (1.0 + 3 * 0.044715 * x2);
            dr[f] = (REAL)(dr[f] * dg);
            dP[L->b1 + f] += dr[f];
        }
    }
    /* dW1 (F, d) += dpreᵀ X;  dX += dpre W1 */
    GEMM(CblasRowMajor, CblasTrans, CblasNoTrans, F, d, n, 1, dh, F, X, ld_x, 1, dP + L->w1, d);
    GEMM(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, d, F, 1, dh, F, P + L->w1, d, 1, dX, ld_dx);
}

void SFX(gyro_moe_forward)(REAL *out, REAL *acts, int *route, const REAL *in, const REAL *params,
                           const gyro_moe_config *cfg, int N)
{
    gyro_moe_layout L;
    gyro_moe_layout_init(&L, cfg, N);
    const int d = cfg->d_model, F = cfg->d_ffn, Nr = cfg->n_routed, K = cfg->top_k;
    const int Ns = cfg->n_shared, A = Ns + K;
    const REAL c = (REAL)cfg->curvature;
    REAL *z = acts + L.z, *probs = acts + L.probs;
    REAL *pre = acts + L.pre, *hid = acts + L.hid, *y = acts + L.y;
    int *order = route + L.route_order, *offs = route + L.route_offsets;
    if (cfg->hyperbolic) POINCARE(gyro_poincare_logmap0_batch)(z, in, c, N, d);
    else memcpy(z, in, sizeof(REAL) * (size_t)N * d);

    /* router (27) and top-k (26) */
    for (int t = 0; t < N; t++) {
        const REAL *zt = z + (size_t)t * d;
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
        /* K passes of argmax over the experts not yet taken; ties → lower index */
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
    }
    /* group the (token, k) pairs by expert (counting sort, stable in token order) */
    for (int i = 0; i <= Nr; i++) offs[i] = 0;
    for (size_t q = 0; q < (size_t)N * K; q++) offs[route[q] + 1]++;
    for (int i = 0; i < Nr; i++) offs[i + 1] += offs[i];
    {
        int *fill = order; /* reuse: write positions advance per expert via a second count */
        int pos[GYRO_MOE_MAX_ROUTED];
        for (int i = 0; i < Nr; i++) pos[i] = offs[i];
        for (size_t q = 0; q < (size_t)N * K; q++) fill[pos[route[q]]++] = (int)q;
    }

    /* shared experts: all tokens, slot j columns */
    for (int j = 0; j < Ns; j++) {
        const REAL *P = params + (size_t)j * L.expert_stride;
        SFX(expert_fwd)(pre + (size_t)j * F, A * F, hid + (size_t)j * F, A * F, y + (size_t)j * d,
                        A * d, z, d, P, &L, N, d, F);
    }
    /* routed experts: gather, multiply, scatter */
    REAL *gz = acts + L.gather, *gpre = gz + (size_t)N * d, *ghid = gpre + (size_t)N * F;
    REAL *gy = ghid + (size_t)N * F;
    for (int i = 0; i < Nr; i++) {
        int n = offs[i + 1] - offs[i];
        if (n == 0) continue;
        const int *q = order + offs[i];
        for (int r = 0; r < n; r++) memcpy(gz + (size_t)r * d, z + (size_t)(q[r] / K) * d, sizeof(REAL) * d);
        const REAL *P = params + (size_t)(Ns + i) * L.expert_stride;
        SFX(expert_fwd)(gpre, F, ghid, F, gy, d, gz, d, P, &L, n, d, F);
        for (int r = 0; r < n; r++) {
            size_t sj = (size_t)(q[r] / K) * A + Ns + q[r] % K;
            memcpy(pre + sj * F, gpre + (size_t)r * F, sizeof(REAL) * F);
            memcpy(hid + sj * F, ghid + (size_t)r * F, sizeof(REAL) * F);
            memcpy(y + sj * d, gy + (size_t)r * d, sizeof(REAL) * d);
        }
    }
    /* combine */
    for (int t = 0; t < N; t++) {
        REAL *ot = out + (size_t)t * d;
        if (!cfg->hyperbolic) memset(ot, 0, sizeof(REAL) * d);
        for (int j = 0; j < A; j++) {
            double g = SFX(slot_gate)(cfg, probs, route, t, j);
            size_t sj = (size_t)t * A + j;
            const REAL *yj = y + sj * d;
            if (!cfg->hyperbolic) {
                for (int k = 0; k < d; k++) ot[k] += (REAL)(g * yj[k]);
            } else {
                REAL *ej = acts + L.e + sj * d, *sjp = acts + L.s + sj * d;
                for (int k = 0; k < d; k++) ej[k] = (REAL)(g * yj[k]);
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
    const int Ns = cfg->n_shared, A = Ns + K;
    const REAL c = (REAL)cfg->curvature;
    const REAL *z = acts + L.z, *probs = acts + L.probs;
    const REAL *pre = acts + L.pre, *hid = acts + L.hid, *y = acts + L.y;
    const int *order = route + L.route_order, *offs = route + L.route_offsets;
    const size_t Nd = (size_t)N * d;
    REAL *dz = scratch, *dY = dz + Nd, *gz = dY + Nd * A, *gdy = gz + Nd, *gdz = gdy + Nd;
    REAL *gpre = gdz + Nd, *ghid = gpre + (size_t)N * F, *gdh = ghid + (size_t)N * F;
    REAL *dS = gdh + (size_t)N * F;
    REAL *dE = dS + (size_t)A * d, *v = dE + (size_t)A * d, *dv = v + d, *ds = dv + d;
    memset(dz, 0, sizeof(REAL) * Nd);
    double fbal[GYRO_MOE_MAX_ROUTED];
    if (alpha != 0.0) SFX(gyro_moe_balance_loss)(fbal, acts, route, cfg, N, 1.0);

    /* pass 1, per token: the combination (Möbius fold), the gates and the router */
    for (int t = 0; t < N; t++) {
        const REAL *zt = z + (size_t)t * d, *dot = dout + (size_t)t * d;
        REAL *dzt = dz + (size_t)t * d;
        for (int i = 0; i < Nr; i++) ds[i] = alpha != 0.0 ? (REAL)(alpha * fbal[i] / N) : 0;
        if (cfg->hyperbolic) {
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
            double g = SFX(slot_gate)(cfg, probs, route, t, j);
            size_t sj = (size_t)t * A + j;
            const REAL *yj = y + sj * d;
            if (cfg->hyperbolic) {
                for (int k = 0; k < d; k++) v[k] = (REAL)(g * yj[k]);
                memset(dv, 0, sizeof(REAL) * d);
                POINCARE(gyro_poincare_expmap0_backward)(dv, dE + (size_t)j * d, v, c, d);
            } else {
                memcpy(dv, dot, sizeof(REAL) * d);
            }
            double dg = 0.0;
            REAL *dyj = dY + sj * d;
            for (int k = 0; k < d; k++) {
                dg += (double)dv[k] * yj[k];
                dyj[k] = (REAL)(g * dv[k]);
            }
            if (j >= Ns) ds[route[(size_t)t * K + (j - Ns)]] += (REAL)dg;
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
    /* pass 2, per expert: the matrix products */
    for (int j = 0; j < Ns; j++) {
        const REAL *P = params + (size_t)j * L.expert_stride;
        REAL *dP = dparams + (size_t)j * L.expert_stride;
        SFX(expert_bwd)(dz, d, dP, gdh, dY + (size_t)j * d, A * d, z, d, pre + (size_t)j * F, A * F,
                        hid + (size_t)j * F, A * F, P, &L, N, d, F);
    }
    for (int i = 0; i < Nr; i++) {
        int n = offs[i + 1] - offs[i];
        if (n == 0) continue;
        const int *q = order + offs[i];
        for (int r = 0; r < n; r++) {
            size_t t = (size_t)(q[r] / K), sj = t * A + Ns + q[r] % K;
            memcpy(gz + (size_t)r * d, z + t * d, sizeof(REAL) * d);
            memcpy(gdy + (size_t)r * d, dY + sj * d, sizeof(REAL) * d);
            memcpy(gpre + (size_t)r * F, pre + sj * F, sizeof(REAL) * F);
            memcpy(ghid + (size_t)r * F, hid + sj * F, sizeof(REAL) * F);
        }
        memset(gdz, 0, sizeof(REAL) * (size_t)n * d);
        const REAL *P = params + (size_t)(Ns + i) * L.expert_stride;
        REAL *dP = dparams + (size_t)(Ns + i) * L.expert_stride;
        SFX(expert_bwd)(gdz, d, dP, gdh, gdy, d, gz, d, gpre, F, ghid, F, P, &L, n, d, F);
        for (int r = 0; r < n; r++) {
            REAL *dzt = dz + (size_t)(q[r] / K) * d;
            const REAL *g = gdz + (size_t)r * d;
            for (int k = 0; k < d; k++) dzt[k] += g[k];
        }
    }
    if (!din) return;
    if (cfg->hyperbolic) POINCARE(gyro_poincare_logmap0_backward_batch)(din, dz, in, c, N, d);
    else
        for (size_t i = 0; i < Nd; i++) din[i] += dz[i];
}

#undef GELU_C

/* moe_impl.h — internal template: the one implementation of the MoE kernels (formulas in
 * moe.h), instantiated once per precision by moe.c (no include guard on purpose). The including
 * file defines
 *   T           storage type (float or double)
 *   S(name)     name with the precision suffix: file-local helpers, and the same-precision ops
 *               of the math core (S(gyro_poincare_expmap0), S(gyro_blas_gemm))
 *   P(name)     public name, gyro_moe_<name>_f32 / _f64
 *   TANH        tanh of the precision (tanhf / tanh)
 *
 * Expert products: shared expert j runs on all N tokens at once, reading and writing the slot-j
 * columns of the (N, A, ·) activations through BLAS leading dimensions; routed expert i gathers
 * the rows of its tokens (the forward pass groups the (token, k) pairs by expert in the route
 * buffer), multiplies them as one block and scatters the results back.
 */

#define GELU_C 0.7978845608028654 /* √(2/π) */

void P(init_params)(T *params, const gyro_moe_config *cfg, gyro_rng *rng)
{
    gyro_moe_layout L;
    gyro_moe_layout_init(&L, cfg, 1);
    const int d = cfg->d_model, F = cfg->d_ffn, ne = cfg->n_shared + cfg->n_routed;
    for (int e = 0; e < ne; e++) {
        T *P = params + (size_t)e * L.expert_stride;
        for (size_t i = 0; i < (size_t)F * d; i++) P[L.w1 + i] = (T)(gyro_rng_normal(rng) / sqrt((double)d));
        for (size_t i = 0; i < (size_t)F * d; i++) P[L.w2 + i] = (T)(0.5 * gyro_rng_normal(rng) / sqrt((double)F));
        for (int i = 0; i < F; i++) P[L.b1 + i] = 0;
        for (int i = 0; i < d; i++) P[L.b2 + i] = 0;
    }
    for (size_t i = 0; i < (size_t)cfg->n_routed * d; i++)
        params[L.centroids + i] = (T)(gyro_rng_normal(rng) / sqrt((double)d));
}

static double S(slot_gate)(const gyro_moe_config *cfg, const T *probs, const int *route, int t,
                           int j)
{
    if (j < cfg->n_shared) return 1.0;
    int i = route[(size_t)t * cfg->top_k + (j - cfg->n_shared)];
    return probs[(size_t)t * cfg->n_routed + i];
}

/* One expert's forward on n rows: pre (rows of ld_pre), hid (ld_hid), y (ld_y) from X (ld_x).
 * pre = X W1ᵀ + b1, hid = GELU(pre), y = hid W2ᵀ + b2. */
static void S(expert_fwd)(T *pre, int ld_pre, T *hid, int ld_hid, T *y, int ld_y,
                          const T *X, int ld_x, const T *P, const gyro_moe_layout *L,
                          int n, int d, int F)
{
    if (n == 0) return;
    S(gyro_blas_gemm)(pre, X, P + L->w1, 0, 1, (T)1, (T)0, n, F, d, ld_x, d, ld_pre);
    for (int r = 0; r < n; r++) {
        T *pr = pre + (size_t)r * ld_pre, *hr = hid + (size_t)r * ld_hid;
        for (int f = 0; f < F; f++) {
            T x = pr[f] + P[L->b1 + f];
            pr[f] = x;
            hr[f] = (T)0.5 * x * ((T)1 + TANH((T)GELU_C * (x + (T)0.044715 * x * x * x)));
        }
    }
    S(gyro_blas_gemm)(y, hid, P + L->w2, 0, 1, (T)1, (T)0, n, d, F, ld_hid, F, ld_y);
    for (int r = 0; r < n; r++) {
        T *yr = y + (size_t)r * ld_y;
        for (int k = 0; k < d; k++) yr[k] += P[L->b2 + k];
    }
}

/* One expert's backward on n rows given dY (ld_dy): ACCUMULATES dW1, db1, dW2, db2 into dP and
 * dX (ld_dx) += dpre W1. dh (n, F) is scratch. */
static void S(expert_bwd)(T *dX, int ld_dx, T *dP, T *dh, const T *dY, int ld_dy,
                          const T *X, int ld_x, const T *pre, int ld_pre, const T *hid,
                          int ld_hid, const T *P, const gyro_moe_layout *L, int n, int d, int F)
{
    if (n == 0) return;
    for (int r = 0; r < n; r++) {
        const T *dyr = dY + (size_t)r * ld_dy;
        for (int k = 0; k < d; k++) dP[L->b2 + k] += dyr[k];
    }
    /* dW2 (d, F) += dYᵀ hid;  dh (n, F) = dY W2 */
    S(gyro_blas_gemm)(dP + L->w2, dY, hid, 1, 0, (T)1, (T)1, d, F, n, ld_dy, ld_hid, F);
    S(gyro_blas_gemm)(dh, dY, P + L->w2, 0, 0, (T)1, (T)0, n, F, d, ld_dy, F, F);
    for (int r = 0; r < n; r++) {
        const T *pr = pre + (size_t)r * ld_pre;
        T *dr = dh + (size_t)r * F;
        for (int f = 0; f < F; f++) {
            double x = pr[f], x2 = x * x;
            double th = TANH((T)(GELU_C * (x + 0.044715 * x2 * x)));
            double dg = 0.5 * (1.0 + th) + 0.5 * x * (1.0 - th * th) * GELU_C * (1.0 + 3 * 0.044715 * x2);
            dr[f] = (T)(dr[f] * dg);
            dP[L->b1 + f] += dr[f];
        }
    }
    /* dW1 (F, d) += dpreᵀ X;  dX += dpre W1 */
    S(gyro_blas_gemm)(dP + L->w1, dh, X, 1, 0, (T)1, (T)1, F, d, n, F, ld_x, d);
    S(gyro_blas_gemm)(dX, dh, P + L->w1, 0, 0, (T)1, (T)1, n, d, F, F, d, ld_dx);
}

void P(forward)(T *out, T *acts, int *route, const T *in, const T *params,
                const gyro_moe_config *cfg, int N)
{
    gyro_moe_layout L;
    gyro_moe_layout_init(&L, cfg, N);
    const int d = cfg->d_model, F = cfg->d_ffn, Nr = cfg->n_routed, K = cfg->top_k;
    const int Ns = cfg->n_shared, A = Ns + K;
    const T c = (T)cfg->curvature;
    T *z = acts + L.z, *probs = acts + L.probs;
    T *pre = acts + L.pre, *hid = acts + L.hid, *y = acts + L.y;
    int *order = route + L.route_order, *offs = route + L.route_offsets;
    if (cfg->hyperbolic) S(gyro_poincare_logmap0_batch)(z, in, c, N, d);
    else memcpy(z, in, sizeof(T) * (size_t)N * d);

    /* router (27) and top-k (26) */
    for (int t = 0; t < N; t++) {
        const T *zt = z + (size_t)t * d;
        T *pt = probs + (size_t)t * Nr;
        double mx = -INFINITY;
        for (int i = 0; i < Nr; i++) {
            const T *ei = params + L.centroids + (size_t)i * d;
            double dot = 0.0;
            for (int k = 0; k < d; k++) dot += (double)zt[k] * ei[k];
            pt[i] = (T)dot;
            if (dot > mx) mx = dot;
        }
        double sum = 0.0;
        for (int i = 0; i < Nr; i++) {
            double ex = exp((double)pt[i] - mx);
            pt[i] = (T)ex;
            sum += ex;
        }
        for (int i = 0; i < Nr; i++) pt[i] = (T)(pt[i] / sum);
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
        const T *P = params + (size_t)j * L.expert_stride;
        S(expert_fwd)(pre + (size_t)j * F, A * F, hid + (size_t)j * F, A * F, y + (size_t)j * d,
                      A * d, z, d, P, &L, N, d, F);
    }
    /* routed experts: gather, multiply, scatter */
    T *gz = acts + L.gather, *gpre = gz + (size_t)N * d, *ghid = gpre + (size_t)N * F;
    T *gy = ghid + (size_t)N * F;
    for (int i = 0; i < Nr; i++) {
        int n = offs[i + 1] - offs[i];
        if (n == 0) continue;
        const int *q = order + offs[i];
        for (int r = 0; r < n; r++) memcpy(gz + (size_t)r * d, z + (size_t)(q[r] / K) * d,
                                           sizeof(T) * d);
        const T *P = params + (size_t)(Ns + i) * L.expert_stride;
        S(expert_fwd)(gpre, F, ghid, F, gy, d, gz, d, P, &L, n, d, F);
        for (int r = 0; r < n; r++) {
            size_t sj = (size_t)(q[r] / K) * A + Ns + q[r] % K;
            memcpy(pre + sj * F, gpre + (size_t)r * F, sizeof(T) * F);
            memcpy(hid + sj * F, ghid + (size_t)r * F, sizeof(T) * F);
            memcpy(y + sj * d, gy + (size_t)r * d, sizeof(T) * d);
        }
    }
    /* combine */
    for (int t = 0; t < N; t++) {
        T *ot = out + (size_t)t * d;
        if (!cfg->hyperbolic) memset(ot, 0, sizeof(T) * d);
        for (int j = 0; j < A; j++) {
            double g = S(slot_gate)(cfg, probs, route, t, j);
            size_t sj = (size_t)t * A + j;
            const T *yj = y + sj * d;
            if (!cfg->hyperbolic) {
                for (int k = 0; k < d; k++) ot[k] += (T)(g * yj[k]);
            } else {
                T *ej = acts + L.e + sj * d, *sjp = acts + L.s + sj * d;
                for (int k = 0; k < d; k++) ej[k] = (T)(g * yj[k]);
                S(gyro_poincare_expmap0)(ej, ej, c, d); /* (37), gate as Möbius scalar */
                if (j == 0) memcpy(sjp, ej, sizeof(T) * d);
                else S(gyro_poincare_mobius_add)(sjp, sjp - d, ej, c, d); /* (38) */
            }
        }
        if (cfg->hyperbolic) memcpy(ot, acts + L.s + ((size_t)t * A + A - 1) * d, sizeof(T) * d);
    }
}

double P(balance_loss)(double *f, const T *acts, const int *route,
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

void P(backward)(T *din, T *dparams, T *scratch, const T *dout,
                 const T *acts, const int *route, const T *in,
                 const T *params, const gyro_moe_config *cfg, int N, double alpha)
{
    gyro_moe_layout L;
    gyro_moe_layout_init(&L, cfg, N);
    const int d = cfg->d_model, F = cfg->d_ffn, Nr = cfg->n_routed, K = cfg->top_k;
    const int Ns = cfg->n_shared, A = Ns + K;
    const T c = (T)cfg->curvature;
    const T *z = acts + L.z, *probs = acts + L.probs;
    const T *pre = acts + L.pre, *hid = acts + L.hid, *y = acts + L.y;
    const int *order = route + L.route_order, *offs = route + L.route_offsets;
    const size_t Nd = (size_t)N * d;
    T *dz = scratch, *dY = dz + Nd, *gz = dY + Nd * A, *gdy = gz + Nd, *gdz = gdy + Nd;
    T *gpre = gdz + Nd, *ghid = gpre + (size_t)N * F, *gdh = ghid + (size_t)N * F;
    T *dS = gdh + (size_t)N * F;
    T *dE = dS + (size_t)A * d, *v = dE + (size_t)A * d, *dv = v + d, *ds = dv + d;
    memset(dz, 0, sizeof(T) * Nd);
    double fbal[GYRO_MOE_MAX_ROUTED];
    if (alpha != 0.0) P(balance_loss)(fbal, acts, route, cfg, N, 1.0);

    /* pass 1, per token: the combination (Möbius fold), the gates and the router */
    for (int t = 0; t < N; t++) {
        const T *zt = z + (size_t)t * d, *dot = dout + (size_t)t * d;
        T *dzt = dz + (size_t)t * d;
        for (int i = 0; i < Nr; i++) ds[i] = alpha != 0.0 ? (T)(alpha * fbal[i] / N) : 0;
        if (cfg->hyperbolic) {
            memset(dS, 0, sizeof(T) * (size_t)A * d);
            memset(dE, 0, sizeof(T) * (size_t)A * d);
            memcpy(dS + (size_t)(A - 1) * d, dot, sizeof(T) * d);
            for (int j = A - 1; j >= 1; j--) {
                const T *sprev = acts + L.s + ((size_t)t * A + j - 1) * d;
                const T *ej = acts + L.e + ((size_t)t * A + j) * d;
                S(gyro_poincare_mobius_add_backward)(dS + (size_t)(j - 1) * d, dE + (size_t)j * d,
                                                     dS + (size_t)j * d, sprev, ej, c, d);
            }
            for (int k = 0; k < d; k++) dE[k] += dS[k]; /* S_1 = E_1 */
        }
        for (int j = 0; j < A; j++) {
            double g = S(slot_gate)(cfg, probs, route, t, j);
            size_t sj = (size_t)t * A + j;
            const T *yj = y + sj * d;
            if (cfg->hyperbolic) {
                for (int k = 0; k < d; k++) v[k] = (T)(g * yj[k]);
                memset(dv, 0, sizeof(T) * d);
                S(gyro_poincare_expmap0_backward)(dv, dE + (size_t)j * d, v, c, d);
            } else {
                memcpy(dv, dot, sizeof(T) * d);
            }
            double dg = 0.0;
            T *dyj = dY + sj * d;
            for (int k = 0; k < d; k++) {
                dg += (double)dv[k] * yj[k];
                dyj[k] = (T)(g * dv[k]);
            }
            if (j >= Ns) ds[route[(size_t)t * K + (j - Ns)]] += (T)dg;
        }
        /* router softmax backward: dlogit_i = s_i (ds_i − Σ_j s_j ds_j) */
        const T *pt = probs + (size_t)t * Nr;
        double sum = 0.0;
        for (int i = 0; i < Nr; i++) sum += (double)pt[i] * ds[i];
        for (int i = 0; i < Nr; i++) {
            double dl = pt[i] * (ds[i] - sum);
            const T *ei = params + L.centroids + (size_t)i * d;
            T *dei = dparams + L.centroids + (size_t)i * d;
            for (int k = 0; k < d; k++) {
                dei[k] += (T)(dl * zt[k]);
                dzt[k] += (T)(dl * ei[k]);
            }
        }
    }
    /* pass 2, per expert: the matrix products */
    for (int j = 0; j < Ns; j++) {
        const T *P = params + (size_t)j * L.expert_stride;
        T *dP = dparams + (size_t)j * L.expert_stride;
        S(expert_bwd)(dz, d, dP, gdh, dY + (size_t)j * d, A * d, z, d, pre + (size_t)j * F, A * F,
                      hid + (size_t)j * F, A * F, P, &L, N, d, F);
    }
    for (int i = 0; i < Nr; i++) {
        int n = offs[i + 1] - offs[i];
        if (n == 0) continue;
        const int *q = order + offs[i];
        for (int r = 0; r < n; r++) {
            size_t t = (size_t)(q[r] / K), sj = t * A + Ns + q[r] % K;
            memcpy(gz + (size_t)r * d, z + t * d, sizeof(T) * d);
            memcpy(gdy + (size_t)r * d, dY + sj * d, sizeof(T) * d);
            memcpy(gpre + (size_t)r * F, pre + sj * F, sizeof(T) * F);
            memcpy(ghid + (size_t)r * F, hid + sj * F, sizeof(T) * F);
        }
        memset(gdz, 0, sizeof(T) * (size_t)n * d);
        const T *P = params + (size_t)(Ns + i) * L.expert_stride;
        T *dP = dparams + (size_t)(Ns + i) * L.expert_stride;
        S(expert_bwd)(gdz, d, dP, gdh, gdy, d, gz, d, gpre, F, ghid, F, P, &L, n, d, F);
        for (int r = 0; r < n; r++) {
            T *dzt = dz + (size_t)(q[r] / K) * d;
            const T *g = gdz + (size_t)r * d;
            for (int k = 0; k < d; k++) dzt[k] += g[k];
        }
    }
    if (!din) return;
    if (cfg->hyperbolic) S(gyro_poincare_logmap0_backward_batch)(din, dz, in, c, N, d);
    else
        for (size_t i = 0; i < Nd; i++) din[i] += dz[i];
}

#undef GELU_C

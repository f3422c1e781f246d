/* mla_impl.h — internal template: the one implementation of MLA forward/backward (formulas in
 * mla.h), instantiated once per precision by mla.c (no include guard on purpose). The including
 * file defines
 *   T           storage type (float or double)
 *   S(name)     name with the precision suffix: file-local helpers, and the same-precision ops
 *               of the math core (S(gyro_poincare_expmap0_batch), S(gyro_blas_gemm))
 *   P(name)     public name, gyro_mla_<name>_f32 / _f64
 * The sequence length is Tlen here (T is the storage type); mla.h calls it T.
 */

/* Y(N, OC) (+)= X(N, C) · Wᵀ, W (OC, C). */
static void S(lin_fwd)(T *Y, const T *X, const T *W, int N, int C, int OC, T beta)
{
    S(gyro_blas_gemm)(Y, X, W, 0, 1, (T)1, beta, N, OC, C, C, C, OC);
}

/* dX(N, C) += dY(N, OC) · W;  dW(OC, C) += dYᵀ · X. Either output may be NULL. */
static void S(lin_bwd)(T *dX, T *dW, const T *dY, const T *X, const T *W, int N,
                       int C, int OC)
{
    if (dX) S(gyro_blas_gemm)(dX, dY, W, 0, 0, (T)1, (T)1, N, C, OC, OC, C, C);
    if (dW) S(gyro_blas_gemm)(dW, dY, X, 1, 0, (T)1, (T)1, OC, C, N, OC, C, C);
}

/* Rotate the pairs of x (n values, n even) for position pos: sign = +1 forward, −1 for the
 * transpose (the backward of a rotation is the opposite rotation). */
static void S(rope)(T *x, int n, int pos, double base, int sign)
{
    for (int p = 0; p < n / 2; p++) {
        double theta = pos * pow(base, -2.0 * p / n);
        double cs = cos(theta), sn = sign * sin(theta);
        double a = x[2 * p], b = x[2 * p + 1];
        x[2 * p] = (T)(a * cs - b * sn);
        x[2 * p + 1] = (T)(a * sn + b * cs);
    }
}

void P(init_params)(T *params, const gyro_mla_config *cfg, gyro_rng *rng)
{
    gyro_mla_layout L;
    gyro_mla_layout_init(&L, cfg, 1, 1);
    const int d = cfg->d_model, H = cfg->n_heads, dh = cfg->d_head, dr = cfg->d_rope;
    const int dc = cfg->d_kv_latent, dcq = cfg->d_q_latent;
    struct { size_t off; int rows, cols; double scale; } m[] = {
        {L.w_dq, dcq, d, 1.0},      {L.w_uq, H * dh, dcq, 1.0}, {L.w_qr, H * dr, dcq, 1.0},
        {L.w_dkv, dc, d, 1.0},      {L.w_uk, H * dh, dc, 1.0},  {L.w_uv, H * dh, dc, 1.0},
        {L.w_kr, dr, d, 1.0},       {L.w_o, d, H * dh, 0.5},
    };
    for (size_t k = 0; k < sizeof m / sizeof m[0]; k++) {
        double sd = m[k].scale / sqrt((double)m[k].cols);
        for (size_t i = 0; i < (size_t)m[k].rows * m[k].cols; i++)
            params[m[k].off + i] = (T)(sd * gyro_rng_normal(rng));
    }
}

void P(forward)(T *out, T *acts, const T *in, const T *params,
                const gyro_mla_config *cfg, int B, int Tlen)
{
    gyro_mla_layout L;
    gyro_mla_layout_init(&L, cfg, B, Tlen);
    const int d = cfg->d_model, H = cfg->n_heads, dh = cfg->d_head, dr = cfg->d_rope;
    const int dc = cfg->d_kv_latent, dcq = cfg->d_q_latent, N = B * Tlen;
    const T c = (T)cfg->curvature;
    T *z = acts + L.z, *cq = acts + L.cq, *qc = acts + L.qc, *qr = acts + L.qr;
    T *ckv = acts + L.ckv, *kc = acts + L.kc, *kr = acts + L.kr, *v = acts + L.v;
    T *att = acts + L.att, *o = acts + L.o, *u = acts + L.u;
    const T *P = params;

    if (cfg->hyperbolic) S(gyro_poincare_logmap0_batch)(z, in, c, N, d); /* eq. 28–30 */
    else memcpy(z, in, sizeof(T) * (size_t)N * d);

    S(lin_fwd)(cq, z, P + L.w_dq, N, d, dcq, 0);      /* (18) */
    S(lin_fwd)(qc, cq, P + L.w_uq, N, dcq, H * dh, 0); /* (19) */
    S(lin_fwd)(ckv, z, P + L.w_dkv, N, d, dc, 0);     /* (15) */
    S(lin_fwd)(kc, ckv, P + L.w_uk, N, dc, H * dh, 0); /* (16) */
    S(lin_fwd)(v, ckv, P + L.w_uv, N, dc, H * dh, 0);  /* (17) */
    if (dr > 0) {
        S(lin_fwd)(qr, cq, P + L.w_qr, N, dcq, H * dr, 0); /* (20) */
        S(lin_fwd)(kr, z, P + L.w_kr, N, d, dr, 0);        /* (21) */
        for (int r = 0; r < N; r++) {
            int pos = r % Tlen;
            for (int h = 0; h < H; h++) S(rope)(qr + (size_t)r * H * dr + h * dr, dr, pos,
                                                cfg->rope_base, 1);
            S(rope)(kr + (size_t)r * dr, dr, pos, cfg->rope_base, 1);
        }
    }
    const double scale = 1.0 / sqrt((double)(dh + dr));
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++)
            for (int t = 0; t < Tlen; t++) {
                size_t rt = (size_t)b * Tlen + t;
                T *a = att + (((size_t)b * H + h) * Tlen + t) * Tlen;
                const T *qct = qc + rt * H * dh + h * dh;
                const T *qrt = qr + rt * H * dr + h * dr;
                int smax = cfg->causal ? t + 1 : Tlen;
                double mx = -INFINITY;
                for (int s = 0; s < smax; s++) {
                    size_t rs = (size_t)b * Tlen + s;
                    const T *kcs = kc + rs * H * dh + h * dh;
                    const T *krs = kr + rs * dr;
                    double dot = 0.0;
                    for (int i = 0; i < dh; i++) dot += (double)qct[i] * kcs[i];
                    for (int i = 0; i < dr; i++) dot += (double)qrt[i] * krs[i];
                    dot *= scale;
                    a[s] = (T)dot;
                    if (dot > mx) mx = dot;
                }
                double sum = 0.0;
                for (int s = 0; s < smax; s++) {
                    double e = exp((double)a[s] - mx);
                    a[s] = (T)e;
                    sum += e;
                }
                for (int s = 0; s < smax; s++) a[s] = (T)(a[s] / sum);
                for (int s = smax; s < Tlen; s++) a[s] = 0;
                T *ot = o + rt * H * dh + h * dh;
                for (int i = 0; i < dh; i++) {
                    double acc = 0.0;
                    for (int s = 0; s < smax; s++)
                        acc += (double)a[s] * v[((size_t)b * Tlen + s) * H * dh + h * dh + i];
                    ot[i] = (T)acc;
                }
            }
    S(lin_fwd)(u, o, P + L.w_o, N, H * dh, d, 0); /* (25a) */
    if (cfg->hyperbolic) S(gyro_poincare_expmap0_batch)(out, u, c, N, d); /* (36) */
    else memcpy(out, u, sizeof(T) * (size_t)N * d);
}

void P(backward)(T *din, T *dparams, T *scratch, const T *dout,
                 const T *acts, const T *in, const T *params,
                 const gyro_mla_config *cfg, int B, int Tlen)
{
    gyro_mla_layout L;
    gyro_mla_layout_init(&L, cfg, B, Tlen);
    const int d = cfg->d_model, H = cfg->n_heads, dh = cfg->d_head, dr = cfg->d_rope;
    const int dc = cfg->d_kv_latent, dcq = cfg->d_q_latent, N = B * Tlen;
    const T c = (T)cfg->curvature;
    const T *z = acts + L.z, *cq = acts + L.cq, *qc = acts + L.qc, *qr = acts + L.qr;
    const T *ckv = acts + L.ckv, *kc = acts + L.kc, *kr = acts + L.kr, *v = acts + L.v;
    const T *att = acts + L.att, *o = acts + L.o, *u = acts + L.u;
    const T *P = params;
    T *dP = dparams;
    memset(scratch, 0, sizeof(T) * L.n_scratch);
    T *dz = scratch + L.z, *dcq_ = scratch + L.cq, *dqc = scratch + L.qc, *dqr = scratch + L.qr;
    T *dckv = scratch + L.ckv, *dkc = scratch + L.kc, *dkr = scratch + L.kr, *dv = scratch + L.v;
    T *datt = scratch + L.att, *do_ = scratch + L.o, *du = scratch + L.u;

    if (cfg->hyperbolic) S(gyro_poincare_expmap0_backward_batch)(du, dout, u, c, N, d);
    else memcpy(du, dout, sizeof(T) * (size_t)N * d);
    S(lin_bwd)(do_, dP + L.w_o, du, o, P + L.w_o, N, H * dh, d);

    const double scale = 1.0 / sqrt((double)(dh + dr));
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++)
            for (int t = 0; t < Tlen; t++) {
                size_t rt = (size_t)b * Tlen + t;
                const T *a = att + (((size_t)b * H + h) * Tlen + t) * Tlen;
                T *da = datt + (((size_t)b * H + h) * Tlen + t) * Tlen;
                const T *dot_ = do_ + rt * H * dh + h * dh;
                int smax = cfg->causal ? t + 1 : Tlen;
                double wsum = 0.0;
                for (int s = 0; s < smax; s++) {
                    size_t rs = (size_t)b * Tlen + s;
                    const T *vs = v + rs * H * dh + h * dh;
                    T *dvs = dv + rs * H * dh + h * dh;
                    double acc = 0.0;
                    for (int i = 0; i < dh; i++) {
                        acc += (double)dot_[i] * vs[i];
                        dvs[i] += a[s] * dot_[i];
                    }
                    da[s] = (T)acc;
                    wsum += acc * a[s];
                }
                const T *qct = qc + rt * H * dh + h * dh;
                const T *qrt = qr + rt * H * dr + h * dr;
                T *dqct = dqc + rt * H * dh + h * dh;
                T *dqrt = dqr + rt * H * dr + h * dr;
                for (int s = 0; s < smax; s++) {
                    double ds = a[s] * ((double)da[s] - wsum) * scale; /* softmax backward */
                    size_t rs = (size_t)b * Tlen + s;
                    const T *kcs = kc + rs * H * dh + h * dh;
                    const T *krs = kr + rs * dr;
                    T *dkcs = dkc + rs * H * dh + h * dh;
                    T *dkrs = dkr + rs * dr;
                    for (int i = 0; i < dh; i++) {
                        dqct[i] += (T)(ds * kcs[i]);
                        dkcs[i] += (T)(ds * qct[i]);
                    }
                    for (int i = 0; i < dr; i++) {
                        dqrt[i] += (T)(ds * krs[i]);
                        dkrs[i] += (T)(ds * qrt[i]);
                    }
                }
            }
    if (dr > 0) {
        for (int r = 0; r < N; r++) {
            int pos = r % Tlen;
            for (int h = 0; h < H; h++) S(rope)(dqr + (size_t)r * H * dr + h * dr, dr, pos,
                                                cfg->rope_base, -1);
            S(rope)(dkr + (size_t)r * dr, dr, pos, cfg->rope_base, -1);
        }
        S(lin_bwd)(dcq_, dP + L.w_qr, dqr, cq, P + L.w_qr, N, dcq, H * dr);
        S(lin_bwd)(dz, dP + L.w_kr, dkr, z, P + L.w_kr, N, d, dr);
    }
    S(lin_bwd)(dckv, dP + L.w_uv, dv, ckv, P + L.w_uv, N, dc, H * dh);
    S(lin_bwd)(dckv, dP + L.w_uk, dkc, ckv, P + L.w_uk, N, dc, H * dh);
    S(lin_bwd)(dz, dP + L.w_dkv, dckv, z, P + L.w_dkv, N, d, dc);
    S(lin_bwd)(dcq_, dP + L.w_uq, dqc, cq, P + L.w_uq, N, dcq, H * dh);
    S(lin_bwd)(dz, dP + L.w_dq, dcq_, z, P + L.w_dq, N, d, dcq);
    if (!din) return;
    if (cfg->hyperbolic) S(gyro_poincare_logmap0_backward_batch)(din, dz, in, c, N, d);
    else
        for (size_t i = 0; i < (size_t)N * d; i++) din[i] += dz[i];
}

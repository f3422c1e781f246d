/* mla_impl.h — the one implementation of MLA forward/backward, instantiated by mla.c for float32
 * and float64 (see mla.h for the formulas). Before including, define:
 *   REAL  the element type;  SFX(name)  name with the precision suffix;
 *   GEMM  cblas_sgemm or cblas_dgemm;  POINCARE(name)  the matching poincare.h function.
 * Not a public header: no include guard on purpose.
 */

/* Y(N, OC) (+)= X(N, C) · Wᵀ, W (OC, C). */
static void SFX(lin_fwd)(REAL *Y, const REAL *X, const REAL *W, int N, int C, int OC, REAL beta)
{
    GEMM(CblasRowMajor, CblasNoTrans, CblasTrans, N, OC, C, 1, X, C, W, C, beta, Y, OC);
}

/* dX(N, C) += dY(N, OC) · W;  dW(OC, C) += dYᵀ · X. Either output may be NULL. */
static void SFX(lin_bwd)(REAL *dX, REAL *dW, const REAL *dY, const REAL *X, const REAL *W, int N,
                         int C, int OC)
{
    if (dX) GEMM(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, C, OC, 1, dY, OC, W, C, 1, dX, C);
    if (dW) GEMM(CblasRowMajor, CblasTrans, CblasNoTrans, OC, C, N, 1, dY, OC, X, C, 1, dW, C);
}

/* Rotate the pairs of x (n values, n even) for position pos: sign = +1 forward, −1 for the
 * transpose (the backward of a rotation is the opposite rotation). */
static void SFX(rope)(REAL *x, int n, int pos, double base, int sign)
{
    for (int p = 0; p < n / 2; p++) {
        double theta = pos * pow(base, -2.0 * p / n);
        double cs = cos(theta), sn = sign * sin(theta);
        double a = x[2 * p], b = x[2 * p + 1];
        x[2 * p] = (REAL)(a * cs - b * sn);
        x[2 * p + 1] = (REAL)(a * sn + b * cs);
    }
}

void SFX(gyro_mla_init_params)(REAL *params, const gyro_mla_config *cfg, gyro_rng *rng)
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
            params[m[k].off + i] = (REAL)(sd * gyro_rng_normal(rng));
    }
}

void SFX(gyro_mla_forward)(REAL *out, REAL *acts, const REAL *in, const REAL *params,
                           const gyro_mla_config *cfg, int B, int T)
{
    gyro_mla_layout L;
    gyro_mla_layout_init(&L, cfg, B, T);
    const int d = cfg->d_model, H = cfg->n_heads, dh = cfg->d_head, dr = cfg->d_rope;
    const int dc = cfg->d_kv_latent, dcq = cfg->d_q_latent, N = B * T;
    const REAL c = (REAL)cfg->curvature;
    REAL *z = acts + L.z, *cq = acts + L.cq, *qc = acts + L.qc, *qr = acts + L.qr;
    REAL *ckv = acts + L.ckv, *kc = acts + L.kc, *kr = acts + L.kr, *v = acts + L.v;
    REAL *att = acts + L.att, *o = acts + L.o, *u = acts + L.u;
    const REAL *P = params;

    if (cfg->hyperbolic) POINCARE(gyro_poincare_logmap0_batch)(z, in, c, N, d); /* eq. 28–30 */
    else memcpy(z, in, sizeof(REAL) * (size_t)N * d);

    SFX(lin_fwd)(cq, z, P + L.w_dq, N, d, dcq, 0);      /* (18) */
    SFX(lin_fwd)(qc, cq, P + L.w_uq, N, dcq, H * dh, 0); /* (19) */
    SFX(lin_fwd)(ckv, z, P + L.w_dkv, N, d, dc, 0);     /* (15) */
    SFX(lin_fwd)(kc, ckv, P + L.w_uk, N, dc, H * dh, 0); /* (16) */
    SFX(lin_fwd)(v, ckv, P + L.w_uv, N, dc, H * dh, 0);  /* (17) */
    if (dr > 0) {
        SFX(lin_fwd)(qr, cq, P + L.w_qr, N, dcq, H * dr, 0); /* (20) */
        SFX(lin_fwd)(kr, z, P + L.w_kr, N, d, dr, 0);        /* (21) */
        for (int r = 0; r < N; r++) {
            int pos = r % T;
            for (int h = 0; h < H; h++) SFX(rope)(qr + (size_t)r * H * dr + h * dr, dr, pos, cfg->rope_base, 1);
            SFX(rope)(kr + (size_t)r * dr, dr, pos, cfg->rope_base, 1);
        }
    }
    const double scale = 1.0 / sqrt((double)(dh + dr));
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++)
            for (int t = 0; t < T; t++) {
                size_t rt = (size_t)b * T + t;
                REAL *a = att + (((size_t)b * H + h) * T + t) * T;
                const REAL *qct = qc + rt * H * dh + h * dh;
                const REAL *qrt = qr + rt * H * dr + h * dr;
                int smax = cfg->causal ? t + 1 : T;
                double mx = -INFINITY;
                for (int s = 0; s < smax; s++) {
                    size_t rs = (size_t)b * T + s;
                    const REAL *kcs = kc + rs * H * dh + h * dh;
                    const REAL *krs = kr + rs * dr;
                    double dot = 0.0;
                    for (int i = 0; i < dh; i++) dot += (double)qct[i] * kcs[i];
                    for (int i = 0; i < dr; i++) dot += (double)qrt[i] * krs[i];
                    dot *= scale;
                    a[s] = (REAL)dot;
                    if (dot > mx) mx = dot;
                }
                double sum = 0.0;
                for (int s = 0; s < smax; s++) {
                    double e = exp((double)a[s] - mx);
                    a[s] = (REAL)e;
                    sum += e;
                }
                for (int s = 0; s < smax; s++) a[s] = (REAL)(a[s] / sum);
                for (int s = smax; s < T; s++) a[s] = 0;
                REAL *ot = o + rt * H * dh + h * dh;
                for (int i = 0; i < dh; i++) {
                    double acc = 0.0;
                    for (int s = 0; s < smax; s++)
                        acc += (double)a[s] * v[((size_t)b * T + s) * H * dh + h * dh + i];
                    ot[i] = (REAL)acc;
                }
            }
    SFX(lin_fwd)(u, o, P + L.w_o, N, H * dh, d, 0); /* (25a) */
    if (cfg->hyperbolic) POINCARE(gyro_poincare_expmap0_batch)(out, u, c, N, d); /* (36) */
    else memcpy(out, u, sizeof(REAL) * (size_t)N * d);
}

void SFX(gyro_mla_backward)(REAL *din, REAL *dparams, REAL *scratch, const REAL *dout,
                            const REAL *acts, const REAL *in, const REAL *params,
                            const gyro_mla_config *cfg, int B, int T)
{
    gyro_mla_layout L;
    gyro_mla_layout_init(&L, cfg, B, T);
    const int d = cfg->d_model, H = cfg->n_heads, dh = cfg->d_head, dr = cfg->d_rope;
    const int dc = cfg->d_kv_latent, dcq = cfg->d_q_latent, N = B * T;
    const REAL c = (REAL)cfg->curvature;
    const REAL *z = acts + L.z, *cq = acts + L.cq, *qc = acts + L.qc, *qr = acts + L.qr;
    const REAL *ckv = acts + L.ckv, *kc = acts + L.kc, *kr = acts + L.kr, *v = acts + L.v;
    const REAL *att = acts + L.att, *o = acts + L.o, *u = acts + L.u;
    const REAL *P = params;
    REAL *dP = dparams;
    memset(scratch, 0, sizeof(REAL) * L.n_scratch);
    REAL *dz = scratch + L.z, *dcq_ = scratch + L.cq, *dqc = scratch + L.qc, *dqr = scratch + L.qr;
    REAL *dckv = scratch + L.ckv, *dkc = scratch + L.kc, *dkr = scratch + L.kr, *dv = scratch + L.v;
    REAL *datt = scratch + L.att, *do_ = scratch + L.o, *du = scratch + L.u;

    if (cfg->hyperbolic) POINCARE(gyro_poincare_expmap0_backward_batch)(du, dout, u, c, N, d);
    else memcpy(du, dout, sizeof(REAL) * (size_t)N * d);
    SFX(lin_bwd)(do_, dP + L.w_o, du, o, P + L.w_o, N, H * dh, d);

    const double scale = 1.0 / sqrt((double)(dh + dr));
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++)
            for (int t = 0; t < T; t++) {
                size_t rt = (size_t)b * T + t;
                const REAL *a = att + (((size_t)b * H + h) * T + t) * T;
                REAL *da = datt + (((size_t)b * H + h) * T + t) * T;
                const REAL *dot_ = do_ + rt * H * dh + h * dh;
                int smax = cfg->causal ? t + 1 : T;
                double wsum = 0.0;
                for (int s = 0; s < smax; s++) {
                    size_t rs = (size_t)b * T + s;
                    const REAL *vs = v + rs * H * dh + h * dh;
                    REAL *dvs = dv + rs * H * dh + h * dh;
                    double acc = 0.0;
                    for (int i = 0; i < dh; i++) {
                        acc += (double)dot_[i] * vs[i];
                        dvs[i] += a[s] * dot_[i];
                    }
                    da[s] = (REAL)acc;
                    wsum += acc * a[s];
                }
                const REAL *qct = qc + rt * H * dh + h * dh;
                const REAL *qrt = qr + rt * H * dr + h * dr;
                REAL *dqct = dqc + rt * H * dh + h * dh;
                REAL *dqrt = dqr + rt * H * dr + h * dr;
                for (int s = 0; s < smax; s++) {
                    double ds = a[s] * ((double)da[s] - wsum) * scale; /* softmax backward */
                    size_t rs = (size_t)b * T + s;
                    const REAL *kcs = kc + rs * H * dh + h * dh;
                    const REAL *krs = kr + rs * dr;
                    REAL *dkcs = dkc + rs * H * dh + h * dh;
                    REAL *dkrs = dkr + rs * dr;
                    for (int i = 0; i < dh; i++) {
                        dqct[i] += (REAL)(ds * kcs[i]);
                        dkcs[i] += (REAL)(ds * qct[i]);
                    }
                    for (int i = 0; i < dr; i++) {
                        dqrt[i] += (REAL)(ds * krs[i]);
                        dkrs[i] += (REAL)(ds * qrt[i]);
                    }
                }
            }
    if (dr > 0) {
        for (int r = 0; r < N; r++) {
            int pos = r % T;
            for (int h = 0; h < H; h++) SFX(rope)(dqr + (size_t)r * H * dr + h * dr, dr, pos, cfg->rope_base, -1);
            SFX(rope)(dkr + (size_t)r * dr, dr, pos, cfg->rope_base, -1);
        }
        SFX(lin_bwd)(dcq_, dP + L.w_qr, dqr, cq, P + L.w_qr, N, dcq, H * dr);
        SFX(lin_bwd)(dz, dP + L.w_kr, dkr, z, P + L.w_kr, N, d, dr);
    }
    SFX(lin_bwd)(dckv, dP + L.w_uv, dv, ckv, P + L.w_uv, N, dc, H * dh);
    SFX(lin_bwd)(dckv, dP + L.w_uk, dkc, ckv, P + L.w_uk, N, dc, H * dh);
    SFX(lin_bwd)(dz, dP + L.w_dkv, dckv, z, P + L.w_dkv, N, d, dc);
    SFX(lin_bwd)(dcq_, dP + L.w_uq, dqc, cq, P + L.w_uq, N, dcq, H * dh);
    SFX(lin_bwd)(dz, dP + L.w_dq, dcq_, z, P + L.w_dq, N, d, dcq);
    if (!din) return;
    if (cfg->hyperbolic) POINCARE(gyro_poincare_logmap0_backward_batch)(din, dz, in, c, N, d);
    else
        for (size_t i = 0; i < (size_t)N * d; i++) din[i] += dz[i];
}

/* merge_impl.h — generic body of merge.h (instantiated by merge.c). */

void S(gyro_merge_forward)(R *Y, R *RR, R *RB, const R *O, const R *W, int geo, R c, int N,
                           int H, int D, int C)
{
    const int A = H * D;
    if (geo != GYRO_GEO_HYPERBOLIC) {
        GEMM(Y, O, W, 0, 1, (R)1, (R)0, N, C, A, A, A, C);
        return;
    }
    for (int i = 0; i < H; i++) /* RR_i = O_i M_iᵀ */
        GEMM(RR + (long)i * C, O + (long)i * D, W + (long)i * D, 0, 1, (R)1, (R)0, N, C, D, A,
             A, H * C);
    for (int n = 0; n < N; n++) {
        const R *rr = RR + (long)n * H * C;
        R *rb = RB + (long)n * 2 * H * C, *ps = rb + (long)H * C;
        S(gyro_geo_exp0)(rb, C, rr, C, geo, c, H, C);          /* r_i = exp0(M_i o_i) */
        memcpy(ps, rb, (size_t)C * sizeof(R));
        for (int i = 1; i < H; i++)                             /* s_i = s_{i-1} ⊕ r_i */
            S(gyro_geo_add)(ps + (long)i * C, ps + (long)(i - 1) * C, rb + (long)i * C, C, geo,
                            c, 1, C);
        memcpy(Y + (long)n * C, ps + (long)(H - 1) * C, (size_t)C * sizeof(R));
    }
}

void S(gyro_merge_backward)(R *dO, R *dW, R *dRR, R *scratch, const R *dY, const R *O,
                            const R *RR, const R *RB, const R *W, int geo, R c, int N, int H,
                            int D, int C)
{
    const int A = H * D;
    if (geo != GYRO_GEO_HYPERBOLIC) {
        GEMM(dO, dY, W, 0, 0, (R)1, (R)1, N, A, C, C, A, A);
        GEMM(dW, dY, O, 1, 0, (R)1, (R)1, C, A, N, C, A, A);
        return;
    }
    R *g = scratch;                  /* (C) dL/ds_i */
    R *gp = g + C;                   /* (C) dL/ds_{i-1} */
    R *dr = gp + C;                  /* (C) dL/dr_i */
    R *tmp = dr + C;                 /* (2C) geo backward scratch */
    for (int n = 0; n < N; n++) {
        const R *rr = RR + (long)n * H * C;
        const R *rb = RB + (long)n * 2 * H * C, *ps = rb + (long)H * C;
        R *drr = dRR + (long)n * H * C;
        memset(drr, 0, (size_t)H * C * sizeof(R));
        memcpy(g, dY + (long)n * C, (size_t)C * sizeof(R));
        for (int i = H - 1; i >= 1; i--) {
            memset(gp, 0, (size_t)C * sizeof(R));
            memset(dr, 0, (size_t)C * sizeof(R));
            S(gyro_geo_add_backward)(gp, dr, tmp, g, ps + (long)i * C, ps + (long)(i - 1) * C,
                                     rb + (long)i * C, C, geo, c, 1, C);
            S(gyro_geo_exp0_backward)(drr + (long)i * C, C, tmp, dr, C, rb + (long)i * C, C,
                                      rr + (long)i * C, C, geo, c, 1, C);
            memcpy(g, gp, (size_t)C * sizeof(R));
        }
        S(gyro_geo_exp0_backward)(drr, C, tmp, g, C, rb, C, rr, C, geo, c, 1, C);
    }
    for (int i = 0; i < H; i++) {
        GEMM(dO + (long)i * D, dRR + (long)i * C, W + (long)i * D, 0, 0, (R)1, (R)1, N, D, C,
             H * C, A, A);
        GEMM(dW + (long)i * D, dRR + (long)i * C, O + (long)i * D, 1, 0, (R)1, (R)1, C, D, N,
             H * C, A, A);
    }
}

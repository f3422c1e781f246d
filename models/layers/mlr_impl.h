/* mlr_impl.h — generic body of mlr.h (instantiated by mlr.c). */

void S(gyro_mlr_forward)(R *Lg, const R *X, const R *P, const R *A, int geo, R c, int B, int K,
                         int C)
{
    if (geo == GYRO_GEO_HYPERBOLIC) {
        HYP(hyp_mlr_batch)(Lg, X, P, A, c, B, K, C);
        return;
    }
    GEMM(Lg, X, A, 0, 1, (R)1, (R)0, B, K, C, C, C, K);
    for (int k = 0; k < K; k++) {
        double ap = 0.0;
        for (int i = 0; i < C; i++)
            ap += (double)A[(long)k * C + i] * P[(long)k * C + i];
        for (int b = 0; b < B; b++)
            Lg[(long)b * K + k] -= (R)ap;
    }
}

void S(gyro_mlr_backward)(R *dX, R *dP, R *dA, const R *dLg, const R *X, const R *P, const R *A,
                          int geo, R c, int B, int K, int C)
{
    if (geo == GYRO_GEO_HYPERBOLIC) {
        HYP(hyp_mlr_backward_batch)(dX, dP, dA, dLg, X, P, A, c, B, K, C);
        return;
    }
    GEMM(dX, dLg, A, 0, 0, (R)1, (R)1, B, C, K, K, C, C);
    GEMM(dA, dLg, X, 1, 0, (R)1, (R)1, K, C, B, K, C, C);
    for (int k = 0; k < K; k++) {
        double s = 0.0;
        for (int b = 0; b < B; b++)
            s += dLg[(long)b * K + k];
        for (int i = 0; i < C; i++) {
            dA[(long)k * C + i] -= (R)(s * P[(long)k * C + i]);
            dP[(long)k * C + i] -= (R)(s * A[(long)k * C + i]);
        }
    }
}

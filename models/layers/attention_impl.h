/* attention_impl.h — generic body of attention.h (instantiated by attention.c). */

void S(gyro_attention_forward)(R *O, R *P, const R *QKV, const int *len, int B, int T, int H,
                               int D)
{
    const int A = H * D, ld = 3 * A;
    const R scale = (R)(1.0 / sqrt((double)D));
    for (int b = 0; b < B; b++) {
        const int n = len[b];
        for (int t = n; t < T; t++)
            memset(O + ((long)b * T + t) * A, 0, (size_t)A * sizeof(R));
        for (int h = 0; h < H; h++) {
            const R *q = QKV + (long)b * T * ld + (long)h * D;
            const R *k = q + A, *v = q + 2 * A;
            R *p = P + ((long)b * H + h) * T * T;
            GEMM(p, q, k, 0, 1, scale, (R)0, n, n, D, ld, ld, T);
            for (int i = 0; i < n; i++) {
                R *row = p + (long)i * T;
                R mx = row[0];
                for (int j = 1; j < n; j++)
                    if (row[j] > mx)
                        mx = row[j];
                double sum = 0.0;
                for (int j = 0; j < n; j++) {
                    row[j] = EXPR(row[j] - mx);
                    sum += row[j];
                }
                R inv = (R)(1.0 / sum);
                for (int j = 0; j < n; j++)
                    row[j] *= inv;
            }
            GEMM(O + (long)b * T * A + (long)h * D, p, v, 0, 0, (R)1, (R)0, n, D, n, T, ld, A);
        }
    }
}

void S(gyro_attention_backward)(R *dQKV, R *scratch, const R *dO, const R *QKV, const R *P,
                                const int *len, int B, int T, int H, int D)
{
    const int A = H * D, ld = 3 * A;
    const R scale = (R)(1.0 / sqrt((double)D));
    for (int b = 0; b < B; b++) {
        const int n = len[b];
        for (int h = 0; h < H; h++) {
            const long off = (long)b * T * ld + (long)h * D;
            const R *q = QKV + off, *k = q + A, *v = q + 2 * A;
            R *dq = dQKV + off, *dk = dq + A, *dv = dq + 2 * A;
            const R *p = P + ((long)b * H + h) * T * T;
            const R *dout = dO + (long)b * T * A + (long)h * D;
            R *dp = scratch; /* (n, n) with ld T */
            GEMM(dp, dout, v, 0, 1, (R)1, (R)0, n, n, D, A, ld, T);   /* dP = dO Vᵀ */
            GEMM(dv, p, dout, 1, 0, (R)1, (R)1, n, D, n, T, A, ld);   /* dV += Pᵀ dO */
            for (int i = 0; i < n; i++) {                              /* softmax VJP */
                const R *pr = p + (long)i * T;
                R *dr = dp + (long)i * T;
                double dot = 0.0;
                for (int j = 0; j < n; j++)
                    dot += (double)pr[j] * dr[j];
                for (int j = 0; j < n; j++)
                    dr[j] = (R)(pr[j] * (dr[j] - dot));
            }
            GEMM(dq, dp, k, 0, 0, scale, (R)1, n, D, n, T, ld, ld);   /* dQ += s dS K */
            GEMM(dk, dp, q, 1, 0, scale, (R)1, n, D, n, T, ld, ld);   /* dK += s dSᵀ Q */
        }
    }
}

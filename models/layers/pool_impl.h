/* pool_impl.h — generic body of pool.h (instantiated by pool.c). */

void S(gyro_pool_forward)(R *Y, int *idx, const R *X, const int *len, int B, int T, int C)
{
    for (int b = 0; b < B; b++) {
        R *y = Y + (long)b * C;
        int *ix = idx + (long)b * C;
        const R *x0 = X + (long)b * T * C;
        for (int i = 0; i < C; i++) {
            y[i] = x0[i];
            ix[i] = 0;
        }
        for (int t = 1; t < len[b]; t++) {
            const R *x = x0 + (long)t * C;
            for (int i = 0; i < C; i++)
                if (x[i] > y[i]) {
                    y[i] = x[i];
                    ix[i] = t;
                }
        }
    }
}

void S(gyro_pool_backward)(R *dX, const R *dY, const int *idx, int B, int T, int C)
{
    for (int b = 0; b < B; b++)
        for (int i = 0; i < C; i++)
            dX[((long)b * T + idx[(long)b * C + i]) * C + i] += dY[(long)b * C + i];
}

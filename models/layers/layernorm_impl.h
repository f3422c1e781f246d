/* layernorm_impl.h — generic body of layernorm.h (instantiated by layernorm.c). */

void S(gyro_layernorm_forward)(R *Y, R *mean, R *rstd, const R *X, const R *g, const R *b, int N,
                               int C)
{
    for (int n = 0; n < N; n++) {
        const R *x = X + (long)n * C;
        R *y = Y + (long)n * C;
        double m = 0.0, v = 0.0;
        for (int i = 0; i < C; i++)
            m += x[i];
        m /= C;
        for (int i = 0; i < C; i++)
            v += ((double)x[i] - m) * ((double)x[i] - m);
        v /= C;
        double rs = 1.0 / sqrt(v + GYRO_LAYERNORM_EPS);
        for (int i = 0; i < C; i++)
            y[i] = (R)(((double)x[i] - m) * rs * g[i] + b[i]);
        mean[n] = (R)m;
        rstd[n] = (R)rs;
    }
}

void S(gyro_layernorm_backward)(R *dX, R *dg, R *db, const R *dY, const R *X, const R *mean,
                                const R *rstd, const R *g, int N, int C)
{
    for (int n = 0; n < N; n++) {
        const R *x = X + (long)n * C, *dy = dY + (long)n * C;
        R *dx = dX + (long)n * C;
        double m = mean[n], rs = rstd[n];
        double dnorm_mean = 0.0, dnorm_norm = 0.0;
        for (int i = 0; i < C; i++) {
            double xh = ((double)x[i] - m) * rs;
            double dn = (double)g[i] * dy[i];
            dnorm_mean += dn;
            dnorm_norm += dn * xh;
        }
        dnorm_mean /= C;
        dnorm_norm /= C;
        for (int i = 0; i < C; i++) {
            double xh = ((double)x[i] - m) * rs;
            double dn = (double)g[i] * dy[i];
            db[i] += dy[i];
            dg[i] += (R)(xh * dy[i]);
            dx[i] += (R)((dn - dnorm_mean - xh * dnorm_norm) * rs);
        }
    }
}

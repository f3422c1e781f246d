/* embed_impl.h — generic body of embed.h (instantiated by embed.c). */

void S(gyro_embed_positions)(R *pos, int geo, R c, R s, int T, int C)
{
    for (int t = 0; t < T; t++) {
        R *p = pos + (long)t * C;
        for (int i = 0; i < C; i++) {
            /* PE(t, 2j) = sin(t / 10000^(2j/C)), PE(t, 2j+1) = cos(same) */
            double freq = pow(10000.0, -(double)(i - (i & 1)) / (double)C);
            double a = (double)t * freq;
            p[i] = (R)((double)s * ((i & 1) ? cos(a) : sin(a)));
        }
        S(gyro_geo_exp0)(p, C, p, C, geo, c, 1, C);
    }
}

void S(gyro_embed_forward)(R *X, const int32_t *tok, const int *len, const R *wte, const R *pos,
                           int geo, R c, int B, int T, int C)
{
    for (int b = 0; b < B; b++) {
        for (int t = 0; t < T; t++) {
            R *x = X + ((long)b * T + t) * C;
            if (t >= len[b]) {
                memset(x, 0, (size_t)C * sizeof(R));
                continue;
            }
            const R *e = wte + (long)tok[(long)b * T + t] * C;
            S(gyro_geo_add)(x, e, pos + (long)t * C, C, geo, c, 1, C);
        }
    }
}

void S(gyro_embed_backward)(R *dwte, R *scratch, const R *dX, const R *X, const int32_t *tok,
                            const int *len, const R *wte, const R *pos, int geo, R c, int B, int T, int C)
{
    for (int b = 0; b < B; b++) {
        for (int t = 0; t < len[b] && t < T; t++) {
            long row = (long)tok[(long)b * T + t] * C;
            const long xr = ((long)b * T + t) * C;
            S(gyro_geo_add_backward)(dwte + row, NULL, scratch, dX + xr, X + xr, wte + row,
                                     pos + (long)t * C, C, geo, c, 1, C);
        }
    }
}

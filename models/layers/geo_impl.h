/* geo_impl.h — generic body of geo.h, instantiated by geo.c with R = float / double and
 * S(name) = name_f32 / name_f64. HYP(name) names the models/hyp op of the same precision. */

void S(gyro_geo_exp0)(R *Y, int ldy, const R *V, int ldv, int geo, R c, int rows, int n)
{
    for (int r = 0; r < rows; r++) {
        R *y = Y + (long)r * ldy;
        const R *v = V + (long)r * ldv;
        if (geo == GYRO_GEO_HYPERBOLIC) {
            HYP(expmap0)(y, v, c, n);
            HYP(project)(y, y, c, n);
        } else if (y != v) {
            memcpy(y, v, (size_t)n * sizeof(R));
        }
    }
}

/* 1 when the forward output y (n) lies clearly inside the projection radius (1 − ε)/√c, so
 * the projection was the identity. A projected point sits on the radius up to rounding; the
 * 1e-5 margin keeps those (and points that were barely inside) on the recomputing path. */
static int S(geo_inside)(const R *y, R c, int n)
{
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0; /* four lanes: not latency-bound */
    int i = 0;
    for (; i + 4 <= n; i += 4) {
        s0 += (double)y[i] * y[i];
        s1 += (double)y[i + 1] * y[i + 1];
        s2 += (double)y[i + 2] * y[i + 2];
        s3 += (double)y[i + 3] * y[i + 3];
    }
    for (; i < n; i++)
        s0 += (double)y[i] * y[i];
    const double s = (s0 + s1) + (s2 + s3);
    const double rmax = (1.0 - BALL_EPS) * (1.0 - 1e-5);
    return (double)c * s < rmax * rmax;
}

void S(gyro_geo_exp0_backward)(R *dV, int lddv, R *scratch, const R *dY, int lddy, const R *Y,
                               int ldy, const R *V, int ldv, int geo, R c, int rows, int n)
{
    R *e = scratch, *de = scratch + n;
    for (int r = 0; r < rows; r++) {
        R *dv = dV + (long)r * lddv;
        const R *dy = dY + (long)r * lddy;
        const R *v = V + (long)r * ldv;
        if (geo == GYRO_GEO_HYPERBOLIC) {
            if (Y && S(geo_inside)(Y + (long)r * ldy, c, n)) {
                HYP(expmap0_backward)(dv, dy, v, c, n);
                continue;
            }
            HYP(expmap0)(e, v, c, n);
            memset(de, 0, (size_t)n * sizeof(R));
            HYP(project_backward)(de, dy, e, c, n);
            HYP(expmap0_backward)(dv, de, v, c, n);
        } else if (dv != dy) { /* dv == dy: the caller aliased the output to the input */
            for (int i = 0; i < n; i++)
                dv[i] += dy[i];
        }
    }
}

void S(gyro_geo_log0)(R *V, int ldv, const R *Y, int ldy, int geo, R c, int rows, int n)
{
    for (int r = 0; r < rows; r++) {
        R *v = V + (long)r * ldv;
        const R *y = Y + (long)r * ldy;
        if (geo == GYRO_GEO_HYPERBOLIC)
            HYP(logmap0)(v, y, c, n);
        else if (v != y)
            memcpy(v, y, (size_t)n * sizeof(R));
    }
}

void S(gyro_geo_log0_backward)(R *dY, int lddy, const R *dV, int lddv, const R *Y, int ldy,
                               int geo, R c, int rows, int n)
{
    for (int r = 0; r < rows; r++) {
        R *dy = dY + (long)r * lddy;
        const R *dv = dV + (long)r * lddv;
        if (geo == GYRO_GEO_HYPERBOLIC) {
            HYP(logmap0_backward)(dy, dv, Y + (long)r * ldy, c, n);
        } else if (dy != dv) {
            for (int i = 0; i < n; i++)
                dy[i] += dv[i];
        }
    }
}

void S(gyro_geo_add)(R *Z, const R *X, const R *Y, int ldy, int geo, R c, int rows, int n)
{
    for (int r = 0; r < rows; r++) {
        R *z = Z + (long)r * n;
        const R *x = X + (long)r * n;
        const R *y = Y + (long)r * ldy;
        if (geo == GYRO_GEO_HYPERBOLIC) {
            HYP(mobius_add)(z, x, y, c, n);
            HYP(project)(z, z, c, n);
        } else {
            for (int i = 0; i < n; i++)
                z[i] = x[i] + y[i];
        }
    }
}

void S(gyro_geo_add_backward)(R *dX, R *dY, R *scratch, const R *dZ, const R *Z, const R *X,
                              const R *Y, int ldy, int geo, R c, int rows, int n)
{
    R *z = scratch, *dz = scratch + n;
    for (int r = 0; r < rows; r++) {
        const R *x = X + (long)r * n;
        const R *y = Y + (long)r * ldy;
        const R *dzr = dZ + (long)r * n;
        R *dx = dX ? dX + (long)r * n : NULL;
        R *dy = dY ? dY + (long)r * ldy : NULL;
        if (geo == GYRO_GEO_HYPERBOLIC) {
            if (Z && S(geo_inside)(Z + (long)r * n, c, n)) {
                HYP(mobius_add_backward)(dx, dy, dzr, x, y, c, n);
                continue;
            }
            HYP(mobius_add)(z, x, y, c, n);
            memset(dz, 0, (size_t)n * sizeof(R));
            HYP(project_backward)(dz, dzr, z, c, n);
            HYP(mobius_add_backward)(dx, dy, dz, x, y, c, n);
        } else {
            for (int i = 0; i < n; i++) {
                if (dx)
                    dx[i] += dzr[i];
                if (dy)
                    dy[i] += dzr[i];
            }
        }
    }
}

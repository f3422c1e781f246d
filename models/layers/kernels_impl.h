/* kernels_impl.h — internal template: the one implementation of kernels.h, instantiated once
 * per precision by kernels.c (no include guard on purpose). The including file defines
 *   T           storage type (float or double)
 *   S(name)     name with the precision suffix: file-local helpers, and the same-precision ops
 *               of the math core (S(gyro_poincare_expmap0), S(gyro_blas_gemm))
 *   P(name)     public name, gyro_<name>_f32 / _f64 (P(geo_exp0) = gyro_geo_exp0_f32 …)
 *   BALL_EPS    the ball projection margin of the precision (models/hyp/hyp_consts.h)
 *   EXP         exp of the precision (expf / exp)
 *   VMATH       1: the fused inference maps take tanh(t)/t of several rows at once from the
 *               float32 vector kernels of models/hyp/vmath.h (float32 only); 0: libm per row
 * Ops follow the network from input to output, each forward before its backward (llm.c's
 * train_gpt2.c); formulas, papers and shapes are documented at each op in kernels.h. The
 * sequence length is Tlen here (T is the storage type); kernels.h calls it T.
 */

/* KERN_VEC: the GCC/Clang vector extensions with 32-byte registers are there, so the loops
 * below may use hyp_vec_impl.h's vector helpers (hyp_ld4, hyp_hsum, the hyp_vnt type) directly
 * (that file undefines its own switch at its end); KERN_VN values of T per vector. Undefined
 * at the end of this file. */
#if (defined(__GNUC__) || defined(__clang__)) && defined(__AVX__)
#define KERN_VEC 1
#define KERN_VN ((int)(32 / sizeof(T)))
#endif

/* d[i] += x[i] for i < n (the Euclidean backward of the identity maps and of x + y): 32-byte
 * vectors of T, then the scalar tail; the same additions in the same order as the plain loop.
 * d must not overlap x unless d == x (then nothing is added twice: callers skip that case). */
static inline void S(kern_acc)(T *d, const T *x, long n)
{
    long i = 0;
#ifdef KERN_VEC
    for (; i + KERN_VN <= n; i += KERN_VN) {
        S(hyp_vnt) dv, xv;
        memcpy(&dv, d + i, sizeof dv);
        memcpy(&xv, x + i, sizeof xv);
        dv += xv;
        memcpy(d + i, &dv, sizeof dv);
    }
#endif
    for (; i < n; i++)
        d[i] += x[i];
}

/* ---- geometry maps: exp0 = proj∘exp_0, log0 = log_0, add = proj∘⊕_c (Ganea 2018, Lemma 2, eq. 3);
 * the identity / x + y in the Euclidean geometry */
void P(geo_exp0)(T *Y, int ldy, const T *V, int ldv, int geo, T c, int rows, int n)
{
    for (int r = 0; r < rows; r++) {
        T *y = Y + (long)r * ldy;
        const T *v = V + (long)r * ldv;
        if (geo == GYRO_GEO_HYPERBOLIC) {
            S(gyro_poincare_expmap0)(y, v, c, n);
            S(gyro_poincare_project)(y, y, c, n);
        } else if (y != v) {
            memcpy(y, v, (size_t)n * sizeof(T));
        }
    }
}

/* 1 when the forward output y (n) lies clearly inside the projection radius (1 − ε)/√c, so
 * the projection was the identity. A projected point sits on the radius up to rounding; the
 * 1e-5 margin keeps those (and points that were barely inside) on the recomputing path. */
static int S(geo_inside)(const T *y, T c, int n)
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

void P(geo_exp0_backward)(T *dV, int lddv, T *scratch, const T *dY, int lddy, const T *Y, int ldy,
                          const T *V, int ldv, int geo, T c, int rows, int n)
{
    T *e = scratch, *de = scratch + n;
    for (int r = 0; r < rows; r++) {
        T *dv = dV + (long)r * lddv;
        const T *dy = dY + (long)r * lddy;
        const T *v = V + (long)r * ldv;
        if (geo == GYRO_GEO_HYPERBOLIC) {
            if (Y && S(geo_inside)(Y + (long)r * ldy, c, n)) {
                S(gyro_poincare_expmap0_backward)(dv, dy, v, c, n);
                continue;
            }
            S(gyro_poincare_expmap0)(e, v, c, n);
            memset(de, 0, (size_t)n * sizeof(T));
            S(gyro_poincare_project_backward)(de, dy, e, c, n);
            S(gyro_poincare_expmap0_backward)(dv, de, v, c, n);
        } else if (dv != dy) { /* dv == dy: the caller aliased the output to the input */
            S(kern_acc)(dv, dy, n);
        }
    }
}

void P(geo_log0)(T *V, int ldv, const T *Y, int ldy, int geo, T c, int rows, int n)
{
    for (int r = 0; r < rows; r++) {
        T *v = V + (long)r * ldv;
        const T *y = Y + (long)r * ldy;
        if (geo == GYRO_GEO_HYPERBOLIC)
            S(gyro_poincare_logmap0)(v, y, c, n);
        else if (v != y)
            memcpy(v, y, (size_t)n * sizeof(T));
    }
}

void P(geo_log0_backward)(T *dY, int lddy, const T *dV, int lddv, const T *Y, int ldy, int geo, T c,
                          int rows, int n)
{
    for (int r = 0; r < rows; r++) {
        T *dy = dY + (long)r * lddy;
        const T *dv = dV + (long)r * lddv;
        if (geo == GYRO_GEO_HYPERBOLIC) {
            S(gyro_poincare_logmap0_backward)(dy, dv, Y + (long)r * ldy, c, n);
        } else if (dy != dv) {
            S(kern_acc)(dy, dv, n);
        }
    }
}

void P(geo_add)(T *Z, const T *X, const T *Y, int ldy, int geo, T c, int rows, int n)
{
    for (int r = 0; r < rows; r++) {
        T *z = Z + (long)r * n;
        const T *x = X + (long)r * n;
        const T *y = Y + (long)r * ldy;
        if (geo == GYRO_GEO_HYPERBOLIC) {
            S(gyro_poincare_mobius_add)(z, x, y, c, n);
            S(gyro_poincare_project)(z, z, c, n);
        } else {
            for (int i = 0; i < n; i++)
                z[i] = x[i] + y[i];
        }
    }
}

void P(geo_add_backward)(T *dX, T *dY, T *scratch, const T *dZ, const T *Z, const T *X, const T *Y,
                         int ldy, int geo, T c, int rows, int n)
{
    T *z = scratch, *dz = scratch + n;
    for (int r = 0; r < rows; r++) {
        const T *x = X + (long)r * n;
        const T *y = Y + (long)r * ldy;
        const T *dzr = dZ + (long)r * n;
        T *dx = dX ? dX + (long)r * n : NULL;
        T *dy = dY ? dY + (long)r * ldy : NULL;
        if (geo == GYRO_GEO_HYPERBOLIC) {
            if (Z && S(geo_inside)(Z + (long)r * n, c, n)) {
                S(gyro_poincare_mobius_add_backward)(dx, dy, dzr, x, y, c, n);
                continue;
            }
            S(gyro_poincare_mobius_add)(z, x, y, c, n);
            memset(dz, 0, (size_t)n * sizeof(T));
            S(gyro_poincare_project_backward)(dz, dzr, z, c, n);
            S(gyro_poincare_mobius_add_backward)(dx, dy, dz, x, y, c, n);
        } else {
            if (dx)
                S(kern_acc)(dx, dzr, n);
            if (dy)
                S(kern_acc)(dy, dzr, n);
        }
    }
}

/* ---- fused inference chains (no caches; see kernels.h "Fused inference maps") -------------- */

/* k[j] = tanh(t_j)/t_j (tanhc) or artanh(t_j)/t_j clamped at ARTANH_MAX (artanhc) for t_j ≥ 0,
 * j < n ≤ 8: the float32 vector kernels of models/hyp/vmath.h (within 2 ulp of float32,
 * tests/check_vmath.c) or libm in float64 (VMATH 0). */
static void S(tanhc_n)(double *k, const double *t, int n)
{
#if VMATH
    float b[8];
    for (int j = 0; j < n; j++)
        b[j] = (float)t[j];
    gyro_vtanhc_f32(b, b, n);
    for (int j = 0; j < n; j++)
        k[j] = b[j];
#else
    for (int j = 0; j < n; j++)
        k[j] = gyro_hyp_tanhc(t[j], NULL);
#endif
}

static void S(artanhc_n)(double *k, const double *t, int n)
{
#if VMATH
    float b[8];
    for (int j = 0; j < n; j++)
        b[j] = (float)t[j];
    gyro_vartanhc_f32(b, b, (float)ARTANH_MAX, n);
    for (int j = 0; j < n; j++)
        k[j] = b[j];
#else
    for (int j = 0; j < n; j++)
        k[j] = gyro_hyp_artanhc(t[j], ARTANH_MAX, NULL);
#endif
}

#if VMATH
/* *aa = <a,a>, *ab = <a,b> for float32 a, b: products summed in float32 in 8 lanes (element i
 * in lane i mod 8, in order) over blocks of 64 elements, each block's lanes then added in double
 * in a fixed tree, the blocks and the tail in double. A lane sums at most 8 products in
 * float32, so each block is within about 8·2⁻²⁴ of its Σ|a_i b_i| (the norms and inner
 * products of the merge and of the FFN's exp0 ⊕ b1 and exp0 ⊕ b2; tests/check_kernels_pack.c
 * bounds both against their float64-dot forms). */
static inline void S(fdot2)(double *aa, double *ab, const float *a, const float *b, int n)
{
    double sx = 0.0, sy = 0.0;
    int i = 0;
    while (i + 8 <= n) {
        gyro_v8sf x = {0}, y = {0};
        const int end = i + 64 <= n ? i + 64 : n;
        for (; i + 8 <= end; i += 8) {
            gyro_v8sf av, bv;
            memcpy(&av, a + i, sizeof av);
            memcpy(&bv, b + i, sizeof bv);
            x += av * av;
            y += av * bv;
        }
        sx += (((double)x[0] + x[4]) + ((double)x[2] + x[6])) +
              (((double)x[1] + x[5]) + ((double)x[3] + x[7]));
        sy += (((double)y[0] + y[4]) + ((double)y[2] + y[6])) +
              (((double)y[1] + y[5]) + ((double)y[3] + y[7]));
    }
    for (; i < n; i++) {
        sx += (double)a[i] * a[i];
        sy += (double)a[i] * b[i];
    }
    *aa = sx;
    *ab = sy;
}
#endif

/* log0(proj(exp0(v))) = ρ v for a tangent vector of norm nv: 1 while exp0(v) lies inside the
 * projection radius, i.e. while s = √c|v| ≤ thr = artanh(1 − ε) (log0 undoes exp0), else
 * thr/s (the projected point's tangent norm over |v|). thr from S(fuse_rho_thr). */
static double S(fuse_rho)(double c, double nv, double thr)
{
    const double s = sqrt(c) * nv;
    return s > thr ? thr / s : 1.0;
}

static double S(fuse_rho_thr)(void)
{
    return gyro_hyp_artanh(1.0 - BALL_EPS, ARTANH_MAX);
}

/* Coefficients of proj(proj(exp0(y)) ⊕ b) = A y + B b from yy = |y|², yb = <y,b>, bb = |b|²
 * and k = tanh(√c|y|)/(√c|y|) (read only for a finite yy); returns the squared norm of the
 * result. A non-finite y maps to the origin (as proj sends a non-finite point there): A = 0. */
static double S(fuse_exp0_add_coef)(double c, double yy, double yb, double bb, double kt,
                                    double *A, double *B)
{
    const double maxn = (1.0 - BALL_EPS) / sqrt(c);
    double k = 0.0;
    if (isfinite(yy) && isfinite(yb)) {
        const double nv = sqrt(yy);
        k = kt;
        if (k * nv > maxn)
            k = maxn / nv;
    } else {
        yy = yb = 0.0;
    }
    double a, bc;
    gyro_hyp_madd_coef(c, k * k * yy, bb, k * yb, &a, &bc);
    double Ak = a * k, hh = Ak * Ak * yy + 2.0 * Ak * bc * yb + bc * bc * bb;
    if (hh < 0.0)
        hh = 0.0;
    if (hh > maxn * maxn) {
        const double f = maxn / sqrt(hh);
        Ak *= f;
        bc *= f;
        hh = maxn * maxn;
    }
    *A = Ak;
    *B = bc;
    return hh;
}

/* out = A y + B b, reading y only when A != 0 (a non-finite y is not read into the sum). */
static void S(fuse_comb)(T *out, double A, const T *y, double B, const T *b, int n)
{
    if (A != 0.0)
        S(hyp_axpby)(out, A, y, B, b, n);
    else
        S(hyp_scale)(out, B, b, n);
}

/* The proj(proj(exp0(y)) ⊕ b) coefficients of nb ≤ 8 rows of Y (nb, n): yy, yb, the rows'
 * tanh ratios in one call, then A, B and the squared norm hh of each result. */
static void S(fuse_exp0_add_rows)(double *A, double *B, double *hh, const T *Y, const T *b,
                                  double bb, double c, int nb, int n)
{
    double yy[8], yb[8], t[8], k[8];
    const double sc = sqrt(c);
    for (int j = 0; j < nb; j++) {
        const T *y = Y + (long)j * n;
#if VMATH
        S(fdot2)(&yy[j], &yb[j], y, b, n);
#else
        yy[j] = S(hyp_dot)(y, y, n);
        yb[j] = S(hyp_dot)(y, b, n);
#endif
        t[j] = isfinite(yy[j]) ? sc * sqrt(yy[j]) : 0.0;
    }
    S(tanhc_n)(k, t, nb);
    for (int j = 0; j < nb; j++)
        hh[j] = S(fuse_exp0_add_coef)(c, yy[j], yb[j], bb, k[j], &A[j], &B[j]);
}

void P(geo_exp0_add)(T *Z, const T *Y, const T *b, T c, int N, int n)
{
    const double bb = S(hyp_dot)(b, b, n);
    for (int r0 = 0; r0 < N; r0 += 8) {
        const int nb = N - r0 < 8 ? N - r0 : 8;
        double A[8], B[8], hh[8];
        S(fuse_exp0_add_rows)(A, B, hh, Y + (long)r0 * n, b, bb, (double)c, nb, n);
        for (int j = 0; j < nb; j++)
            S(fuse_comb)(Z + (long)(r0 + j) * n, A[j], Y + (long)(r0 + j) * n, B[j], b, n);
    }
}

/* g_i ← g_i > 0 ? g_i : 0 (NaN and −0 to +0), 32 bytes of T at a time: the comparison's lane
 * mask ANDed with the value (+0 is all zero bits), then the scalar tail. */
static void S(relu_inplace)(T *g, int n)
{
    int i = 0;
#if defined(__GNUC__) || defined(__clang__)
    typedef T vt __attribute__((vector_size(32)));
    typedef __typeof__((vt){0} > (vt){0}) vm;
    const int w = (int)(32 / sizeof(T));
    for (; i + w <= n; i += w) {
        vt v;
        memcpy(&v, g + i, sizeof v);
        v = (vt)((vm)v & (v > (vt){0}));
        memcpy(g + i, &v, sizeof v);
    }
#endif
    for (; i < n; i++)
        g[i] = g[i] > 0 ? g[i] : (T)0;
}

void P(ffn_mid)(T *G, const T *Y, const T *b, int relu, T c, int N, int n)
{
    const double bb = S(hyp_dot)(b, b, n), sc = sqrt((double)c);
    for (int r0 = 0; r0 < N; r0 += 8) {
        const int nb = N - r0 < 8 ? N - r0 : 8;
        double A[8], B[8], hh[8], t[8], k[8];
        S(fuse_exp0_add_rows)(A, B, hh, Y + (long)r0 * n, b, bb, (double)c, nb, n);
        for (int j = 0; j < nb; j++)
            t[j] = sc * sqrt(hh[j]);
        S(artanhc_n)(k, t, nb); /* log0 */
        for (int j = 0; j < nb; j++) {
            T *g = G + (long)(r0 + j) * n;
            S(fuse_comb)(g, k[j] * A[j], Y + (long)(r0 + j) * n, k[j] * B[j], b, n);
            if (relu)
                S(relu_inplace)(g, n);
        }
    }
}

/* o = u + k y (each element rounded to T as hyp_axpby rounds it) and, of the stored values,
 * Σ o_i (returned) and *s2 = Σ o_i², in double: one pass for the sum the tangent residual
 * forms and both LayerNorm statistics (4-lane double vectors in a fixed order where AVX is
 * available, as hyp_vec_impl.h, then the scalar tail). */
static double S(res_stats)(T *o, const T *u, double k, const T *y, int n, double *s2)
{
    const T tk = (T)k;
    int i = 0;
    double r1 = 0.0, r2 = 0.0;
#ifdef __AVX__
    gyro_hyp_v4d a1 = {0, 0, 0, 0}, a2 = {0, 0, 0, 0};
    for (; i + 4 <= n; i += 4) {
        S(hyp_v4t) uv, yv;
        memcpy(&uv, u + i, sizeof uv);
        memcpy(&yv, y + i, sizeof yv);
        const S(hyp_v4t) ov = (T)1 * uv + tk * yv;
        memcpy(o + i, &ov, sizeof ov);
        const gyro_hyp_v4d d = __builtin_convertvector(ov, gyro_hyp_v4d);
        a1 += d;
        a2 += d * d;
    }
    const gyro_hyp_v4d zero = {0, 0, 0, 0};
    r1 = S(hyp_hsum)(a1, zero);
    r2 = S(hyp_hsum)(a2, zero);
#endif
    for (; i < n; i++) {
        o[i] = (T)1 * u[i] + tk * y[i];
        r1 += (double)o[i];
        r2 += (double)o[i] * o[i];
    }
    *s2 = r2;
    return r1;
}

/* x_i ← (x_i − m) f g_i + b_i (computed in double, stored as T); returns Σ x_i² of the result. */
static double S(ln_apply)(T *x, double m, double f, const T *g, const T *b, int n)
{
    int i = 0;
    double nn = 0.0;
#if VMATH
    /* float32: (x − m)·f·g + b on 8 lanes in float32 (within a few float32 ulp of the double
     * form), the squares summed per lane in two alternating accumulators (so no one addition
     * chain is longer than n/16), their lanes then in double */
    {
        const gyro_v8sf mv = (gyro_v8sf){0} + (float)m, fv = (gyro_v8sf){0} + (float)f;
        gyro_v8sf a0 = {0}, a1 = {0};
        for (; i + 16 <= n; i += 16) {
            gyro_v8sf x0, x1, g0, g1, b0, b1;
            memcpy(&x0, x + i, sizeof x0);
            memcpy(&x1, x + i + 8, sizeof x1);
            memcpy(&g0, g + i, sizeof g0);
            memcpy(&g1, g + i + 8, sizeof g1);
            memcpy(&b0, b + i, sizeof b0);
            memcpy(&b1, b + i + 8, sizeof b1);
            x0 = (x0 - mv) * fv * g0 + b0;
            x1 = (x1 - mv) * fv * g1 + b1;
            memcpy(x + i, &x0, sizeof x0);
            memcpy(x + i + 8, &x1, sizeof x1);
            a0 += x0 * x0;
            a1 += x1 * x1;
        }
        for (; i + 8 <= n; i += 8) {
            gyro_v8sf x0, g0, b0;
            memcpy(&x0, x + i, sizeof x0);
            memcpy(&g0, g + i, sizeof g0);
            memcpy(&b0, b + i, sizeof b0);
            x0 = (x0 - mv) * fv * g0 + b0;
            memcpy(x + i, &x0, sizeof x0);
            a0 += x0 * x0;
        }
        a0 += a1;
        nn = (((double)a0[0] + a0[4]) + ((double)a0[2] + a0[6])) +
             (((double)a0[1] + a0[5]) + ((double)a0[3] + a0[7]));
    }
#elif defined(__AVX__)
    gyro_hyp_v4d acc = {0, 0, 0, 0}, zero = {0, 0, 0, 0};
    const gyro_hyp_v4d mv = {m, m, m, m}, fv = {f, f, f, f};
    for (; i + 4 <= n; i += 4) {
        gyro_hyp_v4d y = (S(hyp_ld4)(x + i) - mv) * fv * S(hyp_ld4)(g + i) + S(hyp_ld4)(b + i);
        S(hyp_v4t) t = __builtin_convertvector(y, S(hyp_v4t));
        memcpy(x + i, &t, sizeof t);
        y = __builtin_convertvector(t, gyro_hyp_v4d);
        acc += y * y;
    }
    nn = S(hyp_hsum)(acc, zero);
#endif
    for (; i < n; i++) {
        x[i] = (T)(((double)x[i] - m) * f * g[i] + b[i]);
        nn += (double)x[i] * x[i];
    }
    return nn;
}

void P(tangent_res_ln)(T *Uo, const T *U, const T *Y, const T *g, const T *bias, T c, int N,
                       int C)
{
    const double sc = sqrt((double)c), thr = S(fuse_rho_thr)();
    for (int r0 = 0; r0 < N; r0 += 8) {
        const int nb = N - r0 < 8 ? N - r0 : 8;
        double t[8], ky[8];
        for (int j = 0; j < nb; j++) {
            const T *y = Y + (long)(r0 + j) * C;
            t[j] = sc * sqrt(S(hyp_dot)(y, y, C));
        }
        S(artanhc_n)(ky, t, nb); /* log0(y) = ky y */
        for (int j = 0; j < nb; j++) {
            const long r = r0 + j;
            const T *u = U + r * C, *y = Y + r * C;
            T *o = Uo + r * C;
            /* ts = u + log0(y), with Σ ts_i and |ts|² in the same pass */
            double tt;
            const double m = S(res_stats)(o, u, ky[j], y, C, &tt) / C;
            /* lnu = log0(proj(exp0(ts))) = ρ1 ts: LayerNorm statistics of ts, scaled by ρ1;
             * the variance Σ (ts_i − m)² = |ts|² − C m² in double (a float32 square is exact
             * in double; only a mean far above the spread would lose digits) */
            double v = tt - (double)C * m * m;
            if (v < 0.0)
                v = 0.0;
            v /= C;
            const double rho1 = S(fuse_rho)((double)c, sqrt(tt), thr);
            const double rs = 1.0 / sqrt(rho1 * rho1 * v + GYRO_LAYERNORM_EPS), f = rho1 * rs;
            /* lnv = (lnu − μ)/σ ⊙ γ + β */
            const double nn = S(ln_apply)(o, m, f, g, bias, C);
            /* out = log0(proj(exp0(lnv))) */
            const double rho2 = S(fuse_rho)((double)c, sqrt(nn), thr);
            if (rho2 != 1.0)
                S(hyp_scale)(o, rho2, o, C);
        }
    }
}

/* ---- embedding: x_{b,t} = E[tok] ⊕_c exp_0(s·PE_t) (hyperbolic-chinese-nlu §4.2), PE the sine /
 * cosine table of Vaswani et al. 2017 */
void P(embed_positions)(T *pos, int geo, T c, T s, int Tlen, int C)
{
    for (int t = 0; t < Tlen; t++) {
        T *p = pos + (long)t * C;
        for (int i = 0; i < C; i++) {
            /* PE(t, 2j) = sin(t / 10000^(2j/C)), PE(t, 2j+1) = cos(same) */
            double freq = pow(10000.0, -(double)(i - (i & 1)) / (double)C);
            double a = (double)t * freq;
            p[i] = (T)((double)s * ((i & 1) ? cos(a) : sin(a)));
        }
        P(geo_exp0)(p, C, p, C, geo, c, 1, C);
    }
}

void P(embed_forward)(T *X, const int32_t *tok, const int *len, const T *wte, const T *pos, int geo,
                      T c, int B, int Tlen, int C)
{
    for (int b = 0; b < B; b++) {
        for (int t = 0; t < Tlen; t++) {
            T *x = X + ((long)b * Tlen + t) * C;
            if (t >= len[b]) {
                memset(x, 0, (size_t)C * sizeof(T));
                continue;
            }
            const T *e = wte + (long)tok[(long)b * Tlen + t] * C;
            P(geo_add)(x, e, pos + (long)t * C, C, geo, c, 1, C);
        }
    }
}

void P(embed_backward)(T *dwte, T *scratch, const T *dX, const T *X, const int32_t *tok,
                       const int *len, const T *wte, const T *pos, int geo, T c, int B, int Tlen,
                       int C)
{
    for (int b = 0; b < B; b++) {
        for (int t = 0; t < len[b] && t < Tlen; t++) {
            long row = (long)tok[(long)b * Tlen + t] * C;
            const long xr = ((long)b * Tlen + t) * C;
            P(geo_add_backward)(dwte + row, NULL, scratch, dX + xr, X + xr, wte + row,
                                pos + (long)t * C, C, geo, c, 1, C);
        }
    }
}

/* ---- linear: Y = X Wᵀ, the inner product of the Möbius matvec exp_0(M log_0 x)
 * (Ganea 2018, eq. 6) */
void P(linear_forward)(T *Y, int ldy, const T *X, int ldx, const T *W, int ldw, int N, int K, int M)
{
    S(gyro_blas_gemm)(Y, X, W, 0, 1, (T)1, (T)0, N, M, K, ldx, ldw, ldy);
}

void P(linear_backward)(T *dX, int lddx, T *dW, int lddw, const T *dY, int lddy, const T *X,
                        int ldx, const T *W, int ldw, int N, int K, int M)
{
    if (dX)
        S(gyro_blas_gemm)(dX, dY, W, 0, 0, (T)1, (T)1, N, K, M, lddy, ldw, lddx);
    if (dW)
        S(gyro_blas_gemm)(dW, dY, X, 1, 0, (T)1, (T)1, M, K, N, lddy, ldx, lddw);
}

/* ---- attention: models/layers/kernels_attention_impl.h */
#include "models/layers/kernels_attention_impl.h"

/* ---- head merge: models/layers/kernels_merge_impl.h */
#include "models/layers/kernels_merge_impl.h"

/* ---- the Möbius layer's backward, fused: G = [log0] proj(proj(exp0(Y)) ⊕ b) (Ganea 2018,
 * eq. 6 and 3; kernels.h) */

/* A vector of the fused chain as coefficients over the basis (dg, y, b) of one row. */
typedef struct S(mlb_vec) { double g, y, b; } S(mlb_vec);

void P(mobius_layer_backward)(T *dY, T *db, const T *dG, const T *Y, const T *b, int log0, T c,
                              int N, int n)
{
    const double cd = (double)c, maxn = (1.0 - BALL_EPS) / sqrt(cd);
    const double bb = S(hyp_dot)(b, b, n);
    for (int r = 0; r < N; r++) {
        const T *y = Y + (long)r * n, *dg = dG + (long)r * n;
        T *dy = dY + (long)r * n;
        /* one pass: <dg,y>, <dg,b>, |y|², <y,b> (the Gram matrix of the basis, |dg|² unused) */
        double gy = 0.0, gb = 0.0, yy = 0.0, yb = 0.0;
        int i = 0;
#ifdef KERN_VEC
        {
            gyro_hyp_v4d s0 = {0, 0, 0, 0}, s1 = s0, s2 = s0, s3 = s0, zero = s0;
            for (; i + 4 <= n; i += 4) {
                const gyro_hyp_v4d gv = S(hyp_ld4)(dg + i), yv = S(hyp_ld4)(y + i);
                const gyro_hyp_v4d bv = S(hyp_ld4)(b + i);
                s0 += gv * yv;
                s1 += gv * bv;
                s2 += yv * yv;
                s3 += yv * bv;
            }
            gy = S(hyp_hsum)(s0, zero);
            gb = S(hyp_hsum)(s1, zero);
            yy = S(hyp_hsum)(s2, zero);
            yb = S(hyp_hsum)(s3, zero);
        }
#endif
        for (; i < n; i++) {
            const double gi = dg[i], yi = y[i], bi = b[i];
            gy += gi * yi;
            gb += gi * bi;
            yy += yi * yi;
            yb += yi * bi;
        }
        if (!isfinite(gy + gb + yy + yb))
            continue; /* the forward sent this row to the origin: no gradient */
#define MLB_IY(u) ((u).g * gy + (u).y * yy + (u).b * yb) /* <u, y> */
#define MLB_IB(u) ((u).g * gb + (u).y * yb + (u).b * bb) /* <u, b> */
        /* forward: e = k y (exp0p_coef), w = A e + B b, h = s w (s < 1 when clipped) */
        double k, a1, a2;
        S(exp0p_coef)(&k, &a1, &a2, cd, yy);
        const double ee = k * k * yy, eb = k * yb;
        double A, B;
        gyro_hyp_madd_coef(cd, ee, bb, eb, &A, &B);
        const S(mlb_vec) w = {0.0, A * k, B};
        const double ww = MLB_IY(w) * w.y + MLB_IB(w) * w.b;
        const int clip = ww > maxn * maxn;
        const double sc = clip ? maxn / sqrt(ww) : 1.0;
        /* dh: the upstream gradient, through log0 when asked (dh = f dg + c f′/t <dg,h> h) */
        S(mlb_vec) dh = {1.0, 0.0, 0.0};
        if (log0) {
            const double hh = sc * sc * ww, t = sqrt(cd * hh);
            double fp;
            const double f = gyro_hyp_artanhc(t, ARTANH_MAX, &fp);
            const double kap = cd * fp * sc * (w.y * gy + w.b * gb); /* c f′/t <dg, h> */
            dh = (S(mlb_vec)){f, kap * sc * w.y, kap * sc * w.b};
        }
        /* dw: the projection's VJP, s (dh − <dh,w> w/|w|²) when clipped */
        S(mlb_vec) dw = dh;
        if (clip) {
            const double e = (MLB_IY(dh) * w.y + MLB_IB(dh) * w.b) / ww;
            dw = (S(mlb_vec)){sc * dh.g, sc * (dh.y - e * w.y), sc * (dh.b - e * w.b)};
        }
        /* Möbius addition's VJP at (e, b): de = cx0 dw + cx1 e + cx2 b, db = cb0 dw + … */
        double cx[3], cb[3];
        gyro_hyp_madd_vjp(cd, ee, bb, eb, k * MLB_IY(dw), MLB_IB(dw), cx, cb);
        const S(mlb_vec) de = {cx[0] * dw.g, cx[0] * dw.y + cx[1] * k, cx[0] * dw.b + cx[2]};
        const S(mlb_vec) dbr = {cb[0] * dw.g, cb[0] * dw.y + cb[1] * k, cb[0] * dw.b + cb[2]};
        /* exp0p's VJP: dy = a1 de + a2 <de,y> y */
        const S(mlb_vec) dyv = {a1 * de.g, a1 * de.y + a2 * MLB_IY(de), a1 * de.b};
#undef MLB_IY
#undef MLB_IB
        const T p0 = (T)dyv.g, p1 = (T)dyv.y, p2 = (T)dyv.b;
        const T q0 = (T)dbr.g, q1 = (T)dbr.y, q2 = (T)dbr.b;
        i = 0;
#ifdef KERN_VEC
        for (; i + KERN_VN <= n; i += KERN_VN) {
            S(hyp_vnt) gv, yv, bv, o;
            memcpy(&gv, dg + i, sizeof gv);
            memcpy(&yv, y + i, sizeof yv);
            memcpy(&bv, b + i, sizeof bv);
            memcpy(&o, dy + i, sizeof o);
            o += p0 * gv + p1 * yv + p2 * bv;
            memcpy(dy + i, &o, sizeof o);
            memcpy(&o, db + i, sizeof o);
            o += q0 * gv + q1 * yv + q2 * bv;
            memcpy(db + i, &o, sizeof o);
        }
#endif
        for (; i < n; i++) {
            const T gi = dg[i], yi = y[i], bi = b[i];
            dy[i] += p0 * gi + p1 * yi + p2 * bi;
            db[i] += q0 * gi + q1 * yi + q2 * bi;
        }
    }
}

/* ---- activation and dropout: ReLU φ (Ganea 2018 §3.2: φ⊗(x) = exp_0(φ(log_0 x)));
 * inverted dropout y = x ⊙ m, m_i = 1/(1−p) with probability 1−p (Srivastava 2014) */
void P(relu_forward)(T *Y, const T *X, long n)
{
    for (long i = 0; i < n; i++)
        Y[i] = X[i] > 0 ? X[i] : (T)0;
}

void P(relu_backward)(T *dX, const T *dY, const T *X, long n)
{
    long i = 0;
#ifdef KERN_VEC
    const S(hyp_vnt) zero = {0};
    for (; i + KERN_VN <= n; i += KERN_VN) {
        S(hyp_vnt) dx, dy, x;
        memcpy(&dx, dX + i, sizeof dx);
        memcpy(&dy, dY + i, sizeof dy);
        memcpy(&x, X + i, sizeof x);
        const __typeof__(x > zero) keep = x > zero; /* all ones where x > 0 */
        dx += (S(hyp_vnt))((__typeof__(keep))dy & keep);
        memcpy(dX + i, &dx, sizeof dx);
    }
#endif
    for (; i < n; i++)
        dX[i] += X[i] > 0 ? dY[i] : (T)0;
}

void P(dropout_forward)(T *Y, T *mask, const T *X, gyro_rng *rng, T p, long n)
{
    const T keep = (T)(1.0 / (1.0 - (double)p));
    /* Drop when a 32-bit draw falls below p·2³² (probability p within 2⁻³²); each 64-bit
     * output of the generator decides two elements. */
    const uint64_t thr = (uint64_t)((double)p * 4294967296.0);
    long i = 0;
    for (; i + 2 <= n; i += 2) {
        const uint64_t r = gyro_rng_next(rng);
        mask[i] = (r >> 32) < thr ? (T)0 : keep;
        mask[i + 1] = (r & 0xffffffffu) < thr ? (T)0 : keep;
    }
    if (i < n)
        mask[i] = (gyro_rng_next(rng) >> 32) < thr ? (T)0 : keep;
    for (i = 0; i < n; i++)
        Y[i] = X[i] * mask[i];
}

void P(dropout_backward)(T *dX, const T *dY, const T *mask, long n)
{
    long i = 0;
#ifdef KERN_VEC
    for (; i + KERN_VN <= n; i += KERN_VN) {
        S(hyp_vnt) dx, dy, m;
        memcpy(&dx, dX + i, sizeof dx);
        memcpy(&dy, dY + i, sizeof dy);
        memcpy(&m, mask + i, sizeof m);
        dx += dy * m;
        memcpy(dX + i, &dx, sizeof dx);
    }
#endif
    for (; i < n; i++)
        dX[i] += dY[i] * mask[i];
}

/* ---- LayerNorm: y = (x − μ)/σ ⊙ γ + β, σ = sqrt(var + 1e-5) (Ba 2016) */
void P(layernorm_forward)(T *Y, T *mean, T *rstd, const T *X, const T *g, const T *b, int N, int C)
{
    for (int n = 0; n < N; n++) {
        const T *x = X + (long)n * C;
        T *y = Y + (long)n * C;
        double m = 0.0, v = 0.0;
        for (int i = 0; i < C; i++)
            m += x[i];
        m /= C;
        for (int i = 0; i < C; i++)
            v += ((double)x[i] - m) * ((double)x[i] - m);
        v /= C;
        double rs = 1.0 / sqrt(v + GYRO_LAYERNORM_EPS);
        for (int i = 0; i < C; i++)
            y[i] = (T)(((double)x[i] - m) * rs * g[i] + b[i]);
        mean[n] = (T)m;
        rstd[n] = (T)rs;
    }
}

void P(layernorm_backward)(T *dX, T *dg, T *db, const T *dY, const T *X, const T *mean,
                           const T *rstd, const T *g, int N, int C)
{
    for (int n = 0; n < N; n++) {
        const T *x = X + (long)n * C, *dy = dY + (long)n * C;
        T *dx = dX + (long)n * C;
        double m = mean[n], rs = rstd[n];
        double dnorm_mean = 0.0, dnorm_norm = 0.0;
        int i = 0;
#ifdef KERN_VEC
        /* the same double arithmetic 4 lanes at a time (the sums: two accumulators each, lanes
         * pairwise, then the scalar tail) */
        {
            const gyro_hyp_v4d vm = {m, m, m, m}, vr = {rs, rs, rs, rs};
            gyro_hyp_v4d sm0 = {0, 0, 0, 0}, sm1 = sm0, sn0 = sm0, sn1 = sm0;
            for (; i + 8 <= C; i += 8) {
                const gyro_hyp_v4d xh0 = (S(hyp_ld4)(x + i) - vm) * vr;
                const gyro_hyp_v4d xh1 = (S(hyp_ld4)(x + i + 4) - vm) * vr;
                const gyro_hyp_v4d dn0 = S(hyp_ld4)(g + i) * S(hyp_ld4)(dy + i);
                const gyro_hyp_v4d dn1 = S(hyp_ld4)(g + i + 4) * S(hyp_ld4)(dy + i + 4);
                sm0 += dn0;
                sm1 += dn1;
                sn0 += dn0 * xh0;
                sn1 += dn1 * xh1;
            }
            dnorm_mean = S(hyp_hsum)(sm0, sm1);
            dnorm_norm = S(hyp_hsum)(sn0, sn1);
        }
#endif
        for (; i < C; i++) {
            double xh = ((double)x[i] - m) * rs;
            double dn = (double)g[i] * dy[i];
            dnorm_mean += dn;
            dnorm_norm += dn * xh;
        }
        dnorm_mean /= C;
        dnorm_norm /= C;
        i = 0;
#ifdef KERN_VEC
        {
            const gyro_hyp_v4d vm = {m, m, m, m}, vr = {rs, rs, rs, rs};
            const gyro_hyp_v4d vdm = {dnorm_mean, dnorm_mean, dnorm_mean, dnorm_mean};
            const gyro_hyp_v4d vdn = {dnorm_norm, dnorm_norm, dnorm_norm, dnorm_norm};
            for (; i + 4 <= C; i += 4) {
                const gyro_hyp_v4d xh = (S(hyp_ld4)(x + i) - vm) * vr;
                const gyro_hyp_v4d dyv = S(hyp_ld4)(dy + i);
                const gyro_hyp_v4d dn = S(hyp_ld4)(g + i) * dyv;
                S(hyp_v4t) dbv, dgv, dxv;
                memcpy(&dbv, db + i, sizeof dbv);
                memcpy(&dgv, dg + i, sizeof dgv);
                memcpy(&dxv, dx + i, sizeof dxv);
                dbv += __builtin_convertvector(dyv, S(hyp_v4t));
                dgv += __builtin_convertvector(xh * dyv, S(hyp_v4t));
                dxv += __builtin_convertvector((dn - vdm - xh * vdn) * vr, S(hyp_v4t));
                memcpy(db + i, &dbv, sizeof dbv);
                memcpy(dg + i, &dgv, sizeof dgv);
                memcpy(dx + i, &dxv, sizeof dxv);
            }
        }
#endif
        for (; i < C; i++) {
            double xh = ((double)x[i] - m) * rs;
            double dn = (double)g[i] * dy[i];
            db[i] += dy[i];
            dg[i] += (T)(xh * dy[i]);
            dx[i] += (T)((dn - dnorm_mean - xh * dnorm_norm) * rs);
        }
    }
}

/* ---- pooling: y_i = max_{t < len} x_{t,i} over the valid positions
 * (hyperbolic-chinese-nlu §4.2) */
void P(pool_forward)(T *Y, int *idx, const T *X, const int *len, int B, int Tlen, int C)
{
    for (int b = 0; b < B; b++) {
        T *y = Y + (long)b * C;
        int *ix = idx + (long)b * C;
        const T *x0 = X + (long)b * Tlen * C;
        int i0 = 0;
#if VMATH
        /* 8 channels at a time: the running maximum and the first position that holds it */
        typedef int32_t vm __attribute__((vector_size(32))); /* float lanes' masks */
        for (; i0 + 8 <= C; i0 += 8) {
            S(att_v8) m;
            memcpy(&m, x0 + i0, sizeof m);
            vm at = {0};
            for (int t = 1; t < len[b]; t++) {
                S(att_v8) x;
                memcpy(&x, x0 + (long)t * C + i0, sizeof x);
                const vm up = x > m, tv = {t, t, t, t, t, t, t, t};
                m = (S(att_v8))(((vm)x & up) | ((vm)m & ~up));
                at = (at & ~up) | (tv & up);
            }
            memcpy(y + i0, &m, sizeof m);
            for (int k = 0; k < 8; k++)
                ix[i0 + k] = (int)at[k];
        }
#endif
        for (int i = i0; i < C; i++) {
            y[i] = x0[i];
            ix[i] = 0;
        }
        for (int t = 1; t < len[b]; t++) {
            const T *x = x0 + (long)t * C;
            for (int i = i0; i < C; i++)
                if (x[i] > y[i]) {
                    y[i] = x[i];
                    ix[i] = t;
                }
        }
    }
}

void P(pool_backward)(T *dX, const T *dY, const int *idx, int B, int Tlen, int C)
{
    for (int b = 0; b < B; b++)
        for (int i = 0; i < C; i++)
            dX[((long)b * Tlen + idx[(long)b * C + i]) * C + i] += dY[(long)b * C + i];
}

/* ---- classifier head: hyperbolic MLR (Ganea 2018, eq. 25), or logit_k = <a_k, x − p_k> */
void P(mlr_forward)(T *Lg, const T *X, const T *P, const T *A, int geo, T c, int B, int K, int C)
{
    if (geo == GYRO_GEO_HYPERBOLIC) {
        S(gyro_poincare_hyp_mlr_batch)(Lg, X, P, A, c, B, K, C);
        return;
    }
    S(gyro_blas_gemm)(Lg, X, A, 0, 1, (T)1, (T)0, B, K, C, C, C, K);
    for (int k = 0; k < K; k++) {
        double ap = 0.0;
        for (int i = 0; i < C; i++)
            ap += (double)A[(long)k * C + i] * P[(long)k * C + i];
        for (int b = 0; b < B; b++)
            Lg[(long)b * K + k] -= (T)ap;
    }
}

void P(mlr_backward)(T *dX, T *dP, T *dA, const T *dLg, const T *X, const T *P, const T *A, int geo,
                     T c, int B, int K, int C)
{
    if (geo == GYRO_GEO_HYPERBOLIC) {
        S(gyro_poincare_hyp_mlr_backward_batch)(dX, dP, dA, dLg, X, P, A, c, B, K, C);
        return;
    }
    S(gyro_blas_gemm)(dX, dLg, A, 0, 0, (T)1, (T)1, B, C, K, K, C, C);
    S(gyro_blas_gemm)(dA, dLg, X, 1, 0, (T)1, (T)1, K, C, B, K, C, C);
    for (int k = 0; k < K; k++) {
        double s = 0.0;
        for (int b = 0; b < B; b++)
            s += dLg[(long)b * K + k];
        for (int i = 0; i < C; i++) {
            dA[(long)k * C + i] -= (T)(s * P[(long)k * C + i]);
            dP[(long)k * C + i] -= (T)(s * A[(long)k * C + i]);
        }
    }
}

#undef KERN_VEC
#undef KERN_VN

/* hyp_vec_impl.h — internal template: the vector loops shared by the hyperbolic kernels,
 * instantiated once per precision (no include guard on purpose). The including file defines
 *   T       the storage type (float or double)
 *   S(name) a per-precision name for file-local helpers (name ## _f32 / _f64)
 * Dot products accumulate in double in four independent lanes (a fixed summation order that a
 * compiler can map to SIMD registers without -ffast-math); element-wise loops are plain
 * a·x + b·y forms that vectorize as written.
 */

/* Σ a[i] b[i] in double. */
static inline double S(hyp_dot)(const T *restrict a, const T *restrict b, int n)
{
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    int i = 0;
    for (; i + 4 <= n; i += 4) {
        s0 += (double)a[i] * (double)b[i];
        s1 += (double)a[i + 1] * (double)b[i + 1];
        s2 += (double)a[i + 2] * (double)b[i + 2];
        s3 += (double)a[i + 3] * (double)b[i + 3];
    }
    for (; i < n; i++) s0 += (double)a[i] * (double)b[i];
    return (s0 + s1) + (s2 + s3);
}

/* Three dot products of two vectors in one pass: aa = |a|², bb = |b|², ab = <a,b>. */
static inline void S(hyp_dot3)(double *aa, double *bb, double *ab, const T *restrict a,
                               const T *restrict b, int n)
{
    double x0 = 0.0, x1 = 0.0, y0 = 0.0, y1 = 0.0, z0 = 0.0, z1 = 0.0;
    int i = 0;
    for (; i + 2 <= n; i += 2) {
        double a0 = a[i], a1 = a[i + 1], b0 = b[i], b1 = b[i + 1];
        x0 += a0 * a0; x1 += a1 * a1;
        y0 += b0 * b0; y1 += b1 * b1;
        z0 += a0 * b0; z1 += a1 * b1;
    }
    for (; i < n; i++) {
        double a0 = a[i], b0 = b[i];
        x0 += a0 * a0; y0 += b0 * b0; z0 += a0 * b0;
    }
    *aa = x0 + x1; *bb = y0 + y1; *ab = z0 + z1;
}

/* z = a x + b y (z may alias x or y). */
static inline void S(hyp_axpby)(T *z, double a, const T *x, double b, const T *y, int n)
{
    T ta = (T)a, tb = (T)b;
    for (int i = 0; i < n; i++) z[i] = ta * x[i] + tb * y[i];
}

/* z = a x (z may alias x). */
static inline void S(hyp_scale)(T *z, double a, const T *x, int n)
{
    T ta = (T)a;
    for (int i = 0; i < n; i++) z[i] = ta * x[i];
}

/* d += k[0] g + k[1] x + k[2] y (accumulating VJP). */
static inline void S(hyp_acc3)(T *restrict d, const double k[3], const T *g, const T *x,
                               const T *y, int n)
{
    T k0 = (T)k[0], k1 = (T)k[1], k2 = (T)k[2];
    for (int i = 0; i < n; i++) d[i] += k0 * g[i] + k1 * x[i] + k2 * y[i];
}

/* d += a x + b y (accumulating). */
static inline void S(hyp_acc2)(T *restrict d, double a, const T *x, double b, const T *y, int n)
{
    T ta = (T)a, tb = (T)b;
    for (int i = 0; i < n; i++) d[i] += ta * x[i] + tb * y[i];
}

/* d += a x (accumulating). */
static inline void S(hyp_acc1)(T *restrict d, double a, const T *x, int n)
{
    T ta = (T)a;
    for (int i = 0; i < n; i++) d[i] += ta * x[i];
}

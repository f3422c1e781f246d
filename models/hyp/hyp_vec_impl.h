/* hyp_vec_impl.h — internal template: the vector loops shared by the hyperbolic kernels,
 * instantiated once per precision (no include guard on purpose). The including file defines
 *   T       the storage type (float or double)
 *   S(name) a per-precision name for file-local helpers (name ## _f32 / _f64)
 *
 * Why explicit vectors: at the project's -O2, GCC 12 vectorizes a loop only when its trip count
 * needs no scalar epilogue, and it never reassociates a floating-point reduction without
 * -ffast-math (which gyro forbids). So the hot loops are written with the GCC/Clang vector
 * extensions: reductions accumulate in double in 4-lane registers (two of them, 8 elements per
 * iteration), a FIXED summation order — (lanes of acc0 + acc1) pairwise, then the scalar tail —
 * so results are deterministic and identical between runs and machines with the same ISA;
 * element-wise a·x + b·y loops use full 32-byte vectors of T. Loads and stores go through
 * memcpy (no alignment assumed). Without AVX (32-byte registers) or without the extensions the
 * plain scalar loops below each vector loop do all the work.
 */

#include <string.h>

#ifdef __AVX__
#include <immintrin.h>
#endif

#if (defined(__GNUC__) || defined(__clang__)) && defined(__AVX__)
#define GYRO_HYP_VEC 1
#ifndef GYRO_HYP_V4D_DEFINED
#define GYRO_HYP_V4D_DEFINED
typedef double gyro_hyp_v4d __attribute__((vector_size(32)));
#endif
typedef T S(hyp_v4t) __attribute__((vector_size(4 * sizeof(T)))); /* 4 lanes of T */
typedef T S(hyp_vnt) __attribute__((vector_size(32)));            /* 32 bytes of T */
#define S_VN ((int)(32 / sizeof(T)))

/* 4 elements of T at p, widened to double. The float case is one vcvtps2pd from memory
 * (GCC 12 lowers __builtin_convertvector of 4 floats to two half conversions and an insert,
 * measured 2x slower). */
static inline gyro_hyp_v4d S(hyp_ld4)(const T *p)
{
    if (sizeof(T) == sizeof(float))
        return (gyro_hyp_v4d)_mm256_cvtps_pd(_mm_loadu_ps((const float *)(const void *)p));
    S(hyp_v4t) v;
    memcpy(&v, p, sizeof v);
    return __builtin_convertvector(v, gyro_hyp_v4d);
}

static inline double S(hyp_hsum)(gyro_hyp_v4d a, gyro_hyp_v4d b)
{
    gyro_hyp_v4d s = a + b;
    return (s[0] + s[1]) + (s[2] + s[3]);
}
#endif

/* Σ a[i] b[i] in double. */
static inline double S(hyp_dot)(const T *a, const T *b, int n)
{
    int i = 0;
    double r = 0.0;
#ifdef GYRO_HYP_VEC
    gyro_hyp_v4d s0 = {0, 0, 0, 0}, s1 = {0, 0, 0, 0};
    for (; i + 8 <= n; i += 8) {
        s0 += S(hyp_ld4)(a + i) * S(hyp_ld4)(b + i);
        s1 += S(hyp_ld4)(a + i + 4) * S(hyp_ld4)(b + i + 4);
    }
    for (; i + 4 <= n; i += 4) s0 += S(hyp_ld4)(a + i) * S(hyp_ld4)(b + i);
    r = S(hyp_hsum)(s0, s1);
#endif
    for (; i < n; i++) r += (double)a[i] * (double)b[i];
    return r;
}

/* Three dot products of two vectors in one pass: aa = |a|², bb = |b|², ab = <a,b>. */
static inline void S(hyp_dot3)(double *aa, double *bb, double *ab, const T *a, const T *b, int n)
{
    int i = 0;
    double x = 0.0, y = 0.0, z = 0.0;
#ifdef GYRO_HYP_VEC
    gyro_hyp_v4d sx = {0, 0, 0, 0}, sy = {0, 0, 0, 0}, sz = {0, 0, 0, 0};
    gyro_hyp_v4d tx = {0, 0, 0, 0}, ty = {0, 0, 0, 0}, tz = {0, 0, 0, 0};
    for (; i + 8 <= n; i += 8) {
        gyro_hyp_v4d a0 = S(hyp_ld4)(a + i), b0 = S(hyp_ld4)(b + i);
        gyro_hyp_v4d a1 = S(hyp_ld4)(a + i + 4), b1 = S(hyp_ld4)(b + i + 4);
        sx += a0 * a0; sy += b0 * b0; sz += a0 * b0;
        tx += a1 * a1; ty += b1 * b1; tz += a1 * b1;
    }
    for (; i + 4 <= n; i += 4) {
        gyro_hyp_v4d a0 = S(hyp_ld4)(a + i), b0 = S(hyp_ld4)(b + i);
        sx += a0 * a0; sy += b0 * b0; sz += a0 * b0;
    }
    x = S(hyp_hsum)(sx, tx); y = S(hyp_hsum)(sy, ty); z = S(hyp_hsum)(sz, tz);
#endif
    for (; i < n; i++) {
        double a0 = a[i], b0 = b[i];
        x += a0 * a0; y += b0 * b0; z += a0 * b0;
    }
    *aa = x; *bb = y; *ab = z;
}

/* Five dot products over three vectors in one pass (the MLR's per-class products):
 * out = {|p|², <p,x>, <p,a>, <x,a>, |a|²}. */
static inline void S(hyp_dot5)(double out[5], const T *p, const T *x, const T *a, int n)
{
    int i = 0;
    double r[5] = {0.0, 0.0, 0.0, 0.0, 0.0};
#ifdef GYRO_HYP_VEC
    gyro_hyp_v4d s0 = {0, 0, 0, 0}, s1 = s0, s2 = s0, s3 = s0, s4 = s0, zero = s0;
    for (; i + 4 <= n; i += 4) {
        gyro_hyp_v4d pv = S(hyp_ld4)(p + i), xv = S(hyp_ld4)(x + i), av = S(hyp_ld4)(a + i);
        s0 += pv * pv; s1 += pv * xv; s2 += pv * av; s3 += xv * av; s4 += av * av;
    }
    r[0] = S(hyp_hsum)(s0, zero); r[1] = S(hyp_hsum)(s1, zero); r[2] = S(hyp_hsum)(s2, zero);
    r[3] = S(hyp_hsum)(s3, zero); r[4] = S(hyp_hsum)(s4, zero);
#endif
    for (; i < n; i++) {
        double pi = p[i], xi = x[i], ai = a[i];
        r[0] += pi * pi; r[1] += pi * xi; r[2] += pi * ai; r[3] += xi * ai; r[4] += ai * ai;
    }
    for (int k = 0; k < 5; k++) out[k] = r[k];
}

/* For w = p x + q y (formed element-wise in double, so a small w keeps its relative accuracy):
 * out[0] = |w|², out[1] = <w,x>, out[2] = <w,y>, out[3] = <w,g> (0 if g is NULL). */
static inline void S(hyp_comb_dots)(double out[4], double p, const T *x, double q, const T *y,
                                    const T *g, int n)
{
    int i = 0;
    double ww = 0.0, wx = 0.0, wy = 0.0, wg = 0.0;
#ifdef GYRO_HYP_VEC
    gyro_hyp_v4d s0 = {0, 0, 0, 0}, s1 = {0, 0, 0, 0}, s2 = {0, 0, 0, 0}, s3 = {0, 0, 0, 0};
    for (; i + 4 <= n; i += 4) {
        gyro_hyp_v4d xv = S(hyp_ld4)(x + i), yv = S(hyp_ld4)(y + i);
        gyro_hyp_v4d w = p * xv + q * yv;
        s0 += w * w; s1 += w * xv; s2 += w * yv;
        if (g) s3 += w * S(hyp_ld4)(g + i);
    }
    gyro_hyp_v4d zero = {0, 0, 0, 0};
    ww = S(hyp_hsum)(s0, zero); wx = S(hyp_hsum)(s1, zero); wy = S(hyp_hsum)(s2, zero);
    wg = S(hyp_hsum)(s3, zero);
#endif
    for (; i < n; i++) {
        double w = p * (double)x[i] + q * (double)y[i];
        ww += w * w; wx += w * (double)x[i]; wy += w * (double)y[i];
        if (g) wg += w * (double)g[i];
    }
    out[0] = ww; out[1] = wx; out[2] = wy; out[3] = wg;
}

/* z = a x + b y (z may alias x or y). */
static inline void S(hyp_axpby)(T *z, double a, const T *x, double b, const T *y, int n)
{
    T ta = (T)a, tb = (T)b;
    int i = 0;
#ifdef GYRO_HYP_VEC
    for (; i + S_VN <= n; i += S_VN) {
        S(hyp_vnt) xv, yv, zv;
        memcpy(&xv, x + i, sizeof xv);
        memcpy(&yv, y + i, sizeof yv);
        zv = ta * xv + tb * yv;
        memcpy(z + i, &zv, sizeof zv);
    }
#endif
    for (; i < n; i++) z[i] = ta * x[i] + tb * y[i];
}

/* z = a x (z may alias x). */
static inline void S(hyp_scale)(T *z, double a, const T *x, int n)
{
    T ta = (T)a;
    int i = 0;
#ifdef GYRO_HYP_VEC
    for (; i + S_VN <= n; i += S_VN) {
        S(hyp_vnt) xv;
        memcpy(&xv, x + i, sizeof xv);
        xv = ta * xv;
        memcpy(z + i, &xv, sizeof xv);
    }
#endif
    for (; i < n; i++) z[i] = ta * x[i];
}

/* d += k[0] g + k[1] x + k[2] y (accumulating VJP). d must not alias g, x or y. */
static inline void S(hyp_acc3)(T *d, const double k[3], const T *g, const T *x, const T *y, int n)
{
    T k0 = (T)k[0], k1 = (T)k[1], k2 = (T)k[2];
    int i = 0;
#ifdef GYRO_HYP_VEC
    for (; i + S_VN <= n; i += S_VN) {
        S(hyp_vnt) dv, gv, xv, yv;
        memcpy(&dv, d + i, sizeof dv);
        memcpy(&gv, g + i, sizeof gv);
        memcpy(&xv, x + i, sizeof xv);
        memcpy(&yv, y + i, sizeof yv);
        dv += k0 * gv + k1 * xv + k2 * yv;
        memcpy(d + i, &dv, sizeof dv);
    }
#endif
    for (; i < n; i++) d[i] += k0 * g[i] + k1 * x[i] + k2 * y[i];
}

/* d += a x + b y (accumulating). */
static inline void S(hyp_acc2)(T *d, double a, const T *x, double b, const T *y, int n)
{
    T ta = (T)a, tb = (T)b;
    int i = 0;
#ifdef GYRO_HYP_VEC
    for (; i + S_VN <= n; i += S_VN) {
        S(hyp_vnt) dv, xv, yv;
        memcpy(&dv, d + i, sizeof dv);
        memcpy(&xv, x + i, sizeof xv);
        memcpy(&yv, y + i, sizeof yv);
        dv += ta * xv + tb * yv;
        memcpy(d + i, &dv, sizeof dv);
    }
#endif
    for (; i < n; i++) d[i] += ta * x[i] + tb * y[i];
}

/* d += a x (accumulating). */
static inline void S(hyp_acc1)(T *d, double a, const T *x, int n)
{
    T ta = (T)a;
    int i = 0;
#ifdef GYRO_HYP_VEC
    for (; i + S_VN <= n; i += S_VN) {
        S(hyp_vnt) dv, xv;
        memcpy(&dv, d + i, sizeof dv);
        memcpy(&xv, x + i, sizeof xv);
        dv += ta * xv;
        memcpy(d + i, &dv, sizeof dv);
    }
#endif
    for (; i < n; i++) d[i] += ta * x[i];
}

#undef S_VN
#undef GYRO_HYP_VEC

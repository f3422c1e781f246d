/* sgns_batch.c — the window update with shared negatives (see sgns_batch.h for the formulas and
 * the paper). The three small products are register-blocked loops over 8-float lanes (GCC/Clang
 * vector extensions: AVX on x86-64-v3 builds, two SSE halves otherwise); on the hyperboloid the
 * pass that forms a row of H_U or H_V also sums what its row's step needs, the coefficients of
 * all steps of one side are computed together (4 double lanes), and each step
 * (gyro_lorentz_skipgram_step_centre_f32's formula) is one more pass over its row. */
#include "embeddings/sgns_batch.h"

#include <stdlib.h>
#include <string.h>

#include "embeddings/c2v_model.h"

typedef float v8f __attribute__((vector_size(32)));

#define V8(p) (*(v8f *)(p))
#define V8C(p) (*(const v8f *)(p))

gyro_status gyro_sgns_batch_init(gyro_sgns_batch *b, const gyro_sgns_tables *tab, int max_u, int max_v,
                                 int row, int hyp, double theta, double max_step)
{
    memset(b, 0, sizeof *b);
    if (max_u < 1 || max_v < 1 || row < 16 || row % 16)
        return gyro_error_set(GYRO_ERR_USAGE, "window update: bad sizes (contexts %d, targets %d, row %d)",
                              max_u, max_v, row);
    *b = (gyro_sgns_batch){.tab = tab, .row = row, .hyp = hyp, .theta = hyp ? theta : 0.0,
                           .max_step = max_step, .max_u = max_u, .max_v = max_v};
    b->u = malloc((size_t)max_u * sizeof *b->u);
    b->v = malloc((size_t)max_v * sizeof *b->v);
    b->mu = malloc((size_t)max_u * sizeof *b->mu);
    b->nvc = calloc((size_t)max_v + 3, sizeof *b->nvc); /* + 3: read 4 at a time (weigh4) */
    b->w = malloc((size_t)max_u * (size_t)max_v * sizeof *b->w);
    b->hu = gyro_c2v_rows_alloc(max_u, row);
    b->hv = gyro_c2v_rows_alloc(max_v, row);
    const size_t nc = (size_t)((max_u > max_v ? max_u : max_v) + 3) / 4 * 4;
    b->qs = calloc(2 * nc, sizeof *b->qs);
    b->coef = calloc(2 * nc, sizeof *b->coef);
    if (!b->u || !b->v || !b->mu || !b->nvc || !b->w || !b->hu || !b->hv || !b->qs || !b->coef)
        return gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    return GYRO_OK;
}

void gyro_sgns_batch_free(gyro_sgns_batch *b)
{
    free(b->u);
    free(b->v);
    free(b->mu);
    free(b->nvc);
    free(b->w);
    free(b->hu);
    free(b->hv);
    free(b->qs);
    free(b->coef);
    memset(b, 0, sizeof *b);
}

/* The loss and weight of one score s = ⟨u_c, v_t⟩_L (or u·v): W_ct = m_c n_t (y_t − σ(s + θ)).
 * Returns 0, or 1 when s is not finite. */
static inline int weigh(gyro_sgns_batch *b, int c, int t, double s, double *loss)
{
    if (!(fabs(s) < 1e30)) return 1;
    const int label = t == 0;
    double l;
    double g = label - gyro_sgns_sigmoid(b->tab, s + b->theta, label, &l);
    double m = (double)b->mu[c] * (double)b->nvc[t];
    *loss += m * l;
    b->w[(size_t)c * b->max_v + t] = (float)(m * g);
    return 0;
}

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>

/* Σ of each of a0..a3 (8 lanes each) as 4 floats: the horizontal-add tree. */
static inline __m128 hsum4(__m256 a0, __m256 a1, __m256 a2, __m256 a3)
{
    __m256 h = _mm256_hadd_ps(_mm256_hadd_ps(a0, a1), _mm256_hadd_ps(a2, a3));
    return _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
}

/* The scores of a block of 2 context rows × 4 target rows: 8 accumulators in registers, each
 * loaded row used 4 or 2 times. u1 may repeat u0 and v1..v3 may repeat v0 at the edges of the
 * window (their scores are computed and dropped). out[a][k] = Σ_i u_a,i v_k,i over the padded
 * row, in float lanes. */
static inline void dot_2x4(const float *u0, const float *u1, const float *const v[4], int row, float out[2][4])
{
    __m256 c00 = _mm256_setzero_ps(), c01 = c00, c02 = c00, c03 = c00;
    __m256 c10 = c00, c11 = c00, c12 = c00, c13 = c00;
    for (int i = 0; i < row; i += 8) {
        __m256 a0 = _mm256_load_ps(u0 + i), a1 = _mm256_load_ps(u1 + i);
        __m256 b0 = _mm256_load_ps(v[0] + i), b1 = _mm256_load_ps(v[1] + i);
        c00 = _mm256_fmadd_ps(a0, b0, c00);
        c10 = _mm256_fmadd_ps(a1, b0, c10);
        c01 = _mm256_fmadd_ps(a0, b1, c01);
        c11 = _mm256_fmadd_ps(a1, b1, c11);
        __m256 b2 = _mm256_load_ps(v[2] + i), b3 = _mm256_load_ps(v[3] + i);
        c02 = _mm256_fmadd_ps(a0, b2, c02);
        c12 = _mm256_fmadd_ps(a1, b2, c12);
        c03 = _mm256_fmadd_ps(a0, b3, c03);
        c13 = _mm256_fmadd_ps(a1, b3, c13);
    }
    _mm_storeu_ps(out[0], hsum4(c00, c01, c02, c03));
    _mm_storeu_ps(out[1], hsum4(c10, c11, c12, c13));
}

/* The scores of 2 context rows × 2 target rows (the last block of a window whose targets are not
 * a multiple of 4; v[2], v[3] are not read): out[a][k] for k < 2, as dot_2x4 (out[a][2..3]: 0). */
static inline void dot_2x2(const float *u0, const float *u1, const float *const v[4], int row, float out[2][4])
{
    __m256 c00 = _mm256_setzero_ps(), c01 = c00, c10 = c00, c11 = c00;
    for (int i = 0; i < row; i += 8) {
        __m256 a0 = _mm256_load_ps(u0 + i), a1 = _mm256_load_ps(u1 + i);
        __m256 b0 = _mm256_load_ps(v[0] + i), b1 = _mm256_load_ps(v[1] + i);
        c00 = _mm256_fmadd_ps(a0, b0, c00);
        c10 = _mm256_fmadd_ps(a1, b0, c10);
        c01 = _mm256_fmadd_ps(a0, b1, c01);
        c11 = _mm256_fmadd_ps(a1, b1, c11);
    }
    float o[4];
    _mm_storeu_ps(o, hsum4(c00, c01, c10, c11));
    out[0][0] = o[0];
    out[0][1] = o[1];
    out[1][0] = o[2];
    out[1][1] = o[3];
    out[0][2] = out[0][3] = out[1][2] = out[1][3] = 0.0f; /* read by weigh4's unused lanes */
}

/* Σ of the 4 double lanes of a. */
static inline double hsum_pd4(__m256d a)
{
    __m128d h = _mm_add_pd(_mm256_castpd256_pd128(a), _mm256_extractf128_pd(a, 1));
    return _mm_cvtsd_f64(_mm_add_sd(h, _mm_unpackhi_pd(h, h)));
}

/* weigh for the scores s (4 double lanes) of context row c against targets t..t+3, of which the
 * first mv count: the same table lookups and formulas as weigh and gyro_sgns_sigmoid, lane by
 * lane (gathers for the tables; the same double operations, so W is the same to the bit), the
 * losses added to *loss. Returns 0, or 1 when a counted score is not finite. */
static inline int weigh4(gyro_sgns_batch *b, int c, int t, int mv, __m256d s, double *loss)
{
    const __m256d lim = _mm256_set1_pd(GYRO_SGNS_SIG_MAX), nlim = _mm256_set1_pd(-GYRO_SGNS_SIG_MAX);
    const __m256d scale = _mm256_set1_pd(GYRO_SGNS_SIG_N / (2.0 * GYRO_SGNS_SIG_MAX)), half = _mm256_set1_pd(0.5);
    const __m256d zero = _mm256_setzero_pd(), one = _mm256_set1_pd(1.0);
    const __m128i lanes = _mm_setr_epi32(0, 1, 2, 3);
    const __m128i cnt = _mm_cmplt_epi32(lanes, _mm_set1_epi32(mv));     /* lanes that count */
    const __m256d cntd = _mm256_castsi256_pd(_mm256_cvtepi32_epi64(cnt));
    __m256d fin = _mm256_cmp_pd(_mm256_andnot_pd(_mm256_set1_pd(-0.0), s), _mm256_set1_pd(1e30), _CMP_LT_OQ);
    if (_mm256_movemask_pd(_mm256_andnot_pd(fin, cntd))) return 1;
    const __m256d lab = t == 0 ? _mm256_castsi256_pd(_mm256_setr_epi64x(-1, 0, 0, 0)) : zero;
    __m256d x = _mm256_add_pd(s, _mm256_set1_pd(b->theta));
    __m256d xs = _mm256_blendv_pd(_mm256_sub_pd(zero, x), x, lab);
    /* σ(x): the table inside (−max, max), 0 or 1 outside */
    __m256d in = _mm256_and_pd(_mm256_cmp_pd(x, nlim, _CMP_GT_OQ), _mm256_cmp_pd(x, lim, _CMP_LT_OQ));
    __m128i ix = _mm256_cvttpd_epi32(_mm256_and_pd(in, _mm256_add_pd(_mm256_mul_pd(_mm256_add_pd(x, lim), scale), half)));
    __m256d sg = _mm256_cvtps_pd(_mm_i32gather_ps(b->tab->sig, ix, 4));
    sg = _mm256_blendv_pd(_mm256_and_pd(_mm256_cmp_pd(x, lim, _CMP_GE_OQ), one), sg, in);
    /* −log σ(xs): the table inside, 0 or −xs outside */
    __m256d inl = _mm256_and_pd(_mm256_cmp_pd(xs, nlim, _CMP_GT_OQ), _mm256_cmp_pd(xs, lim, _CMP_LT_OQ));
    __m128i il = _mm256_cvttpd_epi32(_mm256_and_pd(inl, _mm256_add_pd(_mm256_mul_pd(_mm256_add_pd(xs, lim), scale), half)));
    __m256d l = _mm256_cvtps_pd(_mm_i32gather_ps(b->tab->nlsig, il, 4));
    l = _mm256_blendv_pd(_mm256_and_pd(_mm256_cmp_pd(xs, nlim, _CMP_LE_OQ), _mm256_sub_pd(zero, xs)), l, inl);
    /* W = m n (y − σ), the loss m n ℓ over the counted lanes */
    __m256d m = _mm256_mul_pd(_mm256_set1_pd((double)b->mu[c]),
                              _mm256_cvtepi32_pd(_mm_loadu_si128((const __m128i *)(b->nvc + t))));
    __m256d g = _mm256_sub_pd(_mm256_and_pd(lab, one), sg);
    *loss += hsum_pd4(_mm256_and_pd(cntd, _mm256_mul_pd(m, l)));
    _mm_maskstore_ps(b->w + (size_t)c * b->max_v + t, cnt, _mm256_cvtpd_ps(_mm256_mul_pd(m, g)));
    return 0;
}

/* r0 = Σ_k coef0[k·ks] x_k and r1 = Σ_k coef1[k·ks] x_k over whole rows (r1 may alias a
 * scratch row when there is no second output). */
static inline void combine2(float *r0, float *r1, const float *coef0, const float *coef1, int ks,
                            float *const *x, int n, int row)
{
    for (int i = 0; i < row; i += 16) {
        __m256 a0 = _mm256_setzero_ps(), a1 = a0, b0 = a0, b1 = a0;
        for (int k = 0; k < n; k++) {
            __m256 w0 = _mm256_broadcast_ss(coef0 + (size_t)k * ks), w1 = _mm256_broadcast_ss(coef1 + (size_t)k * ks);
            __m256 x0 = _mm256_load_ps(x[k] + i), x1 = _mm256_load_ps(x[k] + i + 8);
            a0 = _mm256_fmadd_ps(w0, x0, a0);
            a1 = _mm256_fmadd_ps(w0, x1, a1);
            b0 = _mm256_fmadd_ps(w1, x0, b0);
            b1 = _mm256_fmadd_ps(w1, x1, b1);
        }
        _mm256_store_ps(r0 + i, a0);
        _mm256_store_ps(r0 + i + 8, a1);
        _mm256_store_ps(r1 + i, b0);
        _mm256_store_ps(r1 + i + 8, b1);
    }
}

/* Σ of the 8 float lanes of a, in double. */
static inline double hsum_ps(__m256 a)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return (double)_mm_cvtss_f32(s);
}

/* combine2 for the hyperboloid's steps: r0 and r1 as combine2 writes them, and in the same pass
 * the sums a step along them needs, st = {Σ x0_i r0_i, Σ r0_i², Σ x1_i r1_i, Σ r1_i²} over the
 * padded rows in float lanes (x0, x1: the rows that step along r0, r1; the caller subtracts
 * the time coordinates' 2x₀r₀ and 2r₀² for ⟨x,r⟩_L and ⟨r,r⟩_L). */
static inline void combine2_hyp(float *r0, float *r1, const float *coef0, const float *coef1, int ks,
                                float *const *y, int n, int row, const float *x0, const float *x1, double st[4])
{
    __m256 q0 = _mm256_setzero_ps(), e0 = q0, q1 = q0, e1 = q0;
    for (int i = 0; i < row; i += 16) {
        __m256 a0 = _mm256_setzero_ps(), a1 = a0, b0 = a0, b1 = a0;
        for (int k = 0; k < n; k++) {
            __m256 w0 = _mm256_broadcast_ss(coef0 + (size_t)k * ks), w1 = _mm256_broadcast_ss(coef1 + (size_t)k * ks);
            __m256 y0 = _mm256_load_ps(y[k] + i), y1 = _mm256_load_ps(y[k] + i + 8);
            a0 = _mm256_fmadd_ps(w0, y0, a0);
            a1 = _mm256_fmadd_ps(w0, y1, a1);
            b0 = _mm256_fmadd_ps(w1, y0, b0);
            b1 = _mm256_fmadd_ps(w1, y1, b1);
        }
        _mm256_store_ps(r0 + i, a0);
        _mm256_store_ps(r0 + i + 8, a1);
        _mm256_store_ps(r1 + i, b0);
        _mm256_store_ps(r1 + i + 8, b1);
        q0 = _mm256_fmadd_ps(_mm256_load_ps(x0 + i), a0, q0);
        q0 = _mm256_fmadd_ps(_mm256_load_ps(x0 + i + 8), a1, q0);
        e0 = _mm256_fmadd_ps(a0, a0, e0);
        e0 = _mm256_fmadd_ps(a1, a1, e0);
        q1 = _mm256_fmadd_ps(_mm256_load_ps(x1 + i), b0, q1);
        q1 = _mm256_fmadd_ps(_mm256_load_ps(x1 + i + 8), b1, q1);
        e1 = _mm256_fmadd_ps(b0, b0, e1);
        e1 = _mm256_fmadd_ps(b1, b1, e1);
    }
    float o[4];
    _mm_storeu_ps(o, hsum4(q0, e0, q1, e1));
    for (int k = 0; k < 4; k++) st[k] = o[k];
}

/* x ← al·x + be·h over the padded row, then x₀ := √(1 + Σ_{i≥1} x_i²) (the sum in float lanes,
 * lane 0 of the first block left out). Returns the new x₀. */
static inline __attribute__((always_inline)) float axpby_reproject(float *restrict x, const float *restrict h, float alf, float bef, int row)
{
    const __m256 al = _mm256_set1_ps(alf), be = _mm256_set1_ps(bef);
    __m256 s0 = _mm256_setzero_ps(), s1 = s0;
    for (int i = 0; i < row; i += 16) {
        __m256 xa = _mm256_fmadd_ps(al, _mm256_load_ps(x + i), _mm256_mul_ps(be, _mm256_load_ps(h + i)));
        __m256 xb = _mm256_fmadd_ps(al, _mm256_load_ps(x + i + 8), _mm256_mul_ps(be, _mm256_load_ps(h + i + 8)));
        _mm256_store_ps(x + i, xa);
        _mm256_store_ps(x + i + 8, xb);
        if (i == 0) xa = _mm256_blend_ps(xa, _mm256_setzero_ps(), 1);
        s0 = _mm256_fmadd_ps(xa, xa, s0);
        s1 = _mm256_fmadd_ps(xb, xb, s1);
    }
    float x0 = sqrtf(1.0f + (float)hsum_ps(_mm256_add_ps(s0, s1)));
    x[0] = x0;
    return x0;
}

/* The scores of 2 context rows against one target row (the re-scored positive): out[a]. */
static inline void dot_2x1(const float *u0, const float *u1, const float *v, int row, float out[2])
{
    __m256 c0 = _mm256_setzero_ps(), c1 = c0;
    for (int i = 0; i < row; i += 8) {
        __m256 b0 = _mm256_load_ps(v + i);
        c0 = _mm256_fmadd_ps(_mm256_load_ps(u0 + i), b0, c0);
        c1 = _mm256_fmadd_ps(_mm256_load_ps(u1 + i), b0, c1);
    }
    float o[4];
    _mm_storeu_ps(o, hsum4(c0, c1, c0, c1));
    out[0] = o[0];
    out[1] = o[1];
}

/* step_coefs for 4 rows at a time in double lanes, when every clipped step is inside the series
 * (0 < max_step ≤ GYRO_LORENTZ_STEP_SERIES_T); the formulas of step_coef1. q, hh, al, be hold a
 * multiple of 4 entries (the ones past n are computed and ignored). */
static inline void step_coefs4(int n, const double *q, const double *hh, double lr, double max_step, float *al, float *be)
{
    const __m256d vlr = _mm256_set1_pd(lr), ms = _mm256_set1_pd(max_step), zero = _mm256_setzero_pd();
    for (int k = 0; k < n; k += 4) {
        __m256d qv = _mm256_loadu_pd(q + k);
        __m256d t2 = _mm256_max_pd(_mm256_add_pd(_mm256_loadu_pd(hh + k), _mm256_mul_pd(qv, qv)), zero);
        __m256d nr = _mm256_mul_pd(vlr, _mm256_sqrt_pd(t2));
        __m256d over = _mm256_cmp_pd(nr, ms, _CMP_GT_OQ);
        __m256d e = _mm256_blendv_pd(vlr, _mm256_div_pd(_mm256_mul_pd(vlr, ms), nr), over);
        nr = _mm256_min_pd(nr, ms);
        __m256d z = _mm256_mul_pd(nr, nr), z2 = _mm256_mul_pd(z, z), z4 = _mm256_mul_pd(z2, z2);
        __m256d z8 = _mm256_mul_pd(z4, z4);
#define C(x) _mm256_set1_pd(x)
#define P2(a, b) _mm256_add_pd(C(a), _mm256_mul_pd(z, C(b)))
        /* the series of gyro_lorentz_step_cosh_sinhc, Estrin's scheme */
        __m256d ch = _mm256_add_pd(_mm256_add_pd(_mm256_add_pd(P2(1.0, 1.0 / 2), _mm256_mul_pd(z2, P2(1.0 / 24, 1.0 / 720))),
                                                 _mm256_mul_pd(z4, _mm256_add_pd(P2(1.0 / 40320, 1.0 / 3628800),
                                                                                 _mm256_mul_pd(z2, P2(1.0 / 479001600, 1.0 / 87178291200.0))))),
                                   _mm256_mul_pd(z8, C(1.0 / 20922789888000.0)));
        __m256d sh = _mm256_add_pd(_mm256_add_pd(_mm256_add_pd(P2(1.0, 1.0 / 6), _mm256_mul_pd(z2, P2(1.0 / 120, 1.0 / 5040))),
                                                 _mm256_mul_pd(z4, _mm256_add_pd(P2(1.0 / 362880, 1.0 / 39916800),
                                                                                 _mm256_mul_pd(z2, P2(1.0 / 6227020800.0, 1.0 / 1307674368000.0))))),
                                   _mm256_mul_pd(z8, C(1.0 / 355687428096000.0)));
#undef P2
#undef C
        __m256d se = _mm256_mul_pd(sh, e);
        _mm_storeu_ps(al + k, _mm256_cvtpd_ps(_mm256_add_pd(ch, _mm256_mul_pd(se, qv))));
        _mm_storeu_ps(be + k, _mm256_cvtpd_ps(se));
    }
}
#define HAVE_STEP_COEFS4 1
#define HAVE_WEIGH4 1

#else /* the same loops with the compiler's vector extensions (two SSE halves, or scalar) */

static inline double hsum_v8(const v8f *a)
{
    float s = 0;
    for (int l = 0; l < 8; l++) s += (*a)[l];
    return (double)s;
}

static inline void combine2_hyp(float *r0, float *r1, const float *coef0, const float *coef1, int ks,
                                float *const *y, int n, int row, const float *x0, const float *x1, double st[4])
{
    v8f q0 = {0}, e0 = {0}, q1 = {0}, e1 = {0};
    for (int i = 0; i < row; i += 8) {
        v8f a = {0}, b = {0};
        for (int k = 0; k < n; k++) {
            v8f yk = V8C(y[k] + i);
            a += coef0[(size_t)k * ks] * yk;
            b += coef1[(size_t)k * ks] * yk;
        }
        V8(r0 + i) = a;
        V8(r1 + i) = b;
        q0 += V8C(x0 + i) * a;
        e0 += a * a;
        q1 += V8C(x1 + i) * b;
        e1 += b * b;
    }
    st[0] = hsum_v8(&q0);
    st[1] = hsum_v8(&e0);
    st[2] = hsum_v8(&q1);
    st[3] = hsum_v8(&e1);
}

static inline __attribute__((always_inline)) float axpby_reproject(float *restrict x, const float *restrict h, float al, float be, int row)
{
    v8f s = {0};
    for (int i = 0; i < row; i += 8) {
        v8f xn = al * V8C(x + i) + be * V8C(h + i);
        V8(x + i) = xn;
        if (i == 0) xn[0] = 0;
        s += xn * xn;
    }
    float x0 = sqrtf(1.0f + (float)hsum_v8(&s));
    x[0] = x0;
    return x0;
}

static inline void dot_2x4(const float *u0, const float *u1, const float *const v[4], int row, float out[2][4])
{
    v8f c0[4] = {{0}}, c1[4] = {{0}};
    for (int i = 0; i < row; i += 8) {
        v8f a0 = V8C(u0 + i), a1 = V8C(u1 + i);
        for (int k = 0; k < 4; k++) {
            v8f bk = V8C(v[k] + i);
            c0[k] += a0 * bk;
            c1[k] += a1 * bk;
        }
    }
    for (int k = 0; k < 4; k++) {
        float s0 = 0, s1 = 0;
        for (int l = 0; l < 8; l++) { s0 += c0[k][l]; s1 += c1[k][l]; }
        out[0][k] = s0;
        out[1][k] = s1;
    }
}

static inline void dot_2x2(const float *u0, const float *u1, const float *const v[4], int row, float out[2][4])
{
    dot_2x4(u0, u1, (const float *const[4]){v[0], v[1], v[0], v[1]}, row, out);
}

static inline void dot_2x1(const float *u0, const float *u1, const float *v, int row, float out[2])
{
    float o[2][4];
    dot_2x4(u0, u1, (const float *const[4]){v, v, v, v}, row, o);
    out[0] = o[0][0];
    out[1] = o[1][0];
}

static inline void combine2(float *r0, float *r1, const float *coef0, const float *coef1, int ks,
                            float *const *x, int n, int row)
{
    for (int i = 0; i < row; i += 8) {
        v8f a0 = {0}, a1 = {0};
        for (int k = 0; k < n; k++) {
            v8f xk = V8C(x[k] + i);
            a0 += coef0[(size_t)k * ks] * xk;
            a1 += coef1[(size_t)k * ks] * xk;
        }
        V8(r0 + i) = a0;
        V8(r1 + i) = a1;
    }
}
#endif

/* W = m·n·(y − σ(S + θ)) for the window, S = U·J·Vᵀ by blocks of 2 × 4 (s = the float sum over
 * the padded row − 2u₀v₀ in double). Returns 0, or 1 on a non-finite score. */
static int scores(gyro_sgns_batch *b, double *loss_sum)
{
    const int nu = b->nu, nv = b->nv;
    int bad = 0;
    double loss_local = 0, *loss = &loss_local;
    for (int c = 0; c < nu; c += 2) {
        const float *u0 = b->u[c], *u1 = b->u[c + 1 < nu ? c + 1 : c];
        const int mu = c + 1 < nu ? 2 : 1;
        for (int t = 0; t < nv; t += 4) {
            const float *v[4];
            const int mv = nv - t < 4 ? nv - t : 4;
            for (int k = 0; k < 4; k++) v[k] = b->v[t + (k < mv ? k : 0)];
            float out[2][4];
            if (mv <= 2) dot_2x2(u0, u1, v, b->row, out);
            else dot_2x4(u0, u1, v, b->row, out);
#ifdef HAVE_WEIGH4
            const __m256d v0 = b->hyp ? _mm256_setr_pd(2.0 * v[0][0], 2.0 * v[1][0], 2.0 * v[2][0], 2.0 * v[3][0])
                                      : _mm256_setzero_pd();
            for (int a = 0; a < mu; a++) {
                const float *ua = a ? u1 : u0;
                __m256d sa = _mm256_sub_pd(_mm256_cvtps_pd(_mm_loadu_ps(out[a])), _mm256_mul_pd(_mm256_set1_pd(ua[0]), v0));
                bad |= weigh4(b, c + a, t, mv, sa, loss);
            }
#else
            for (int a = 0; a < mu; a++) {
                const float *ua = a ? u1 : u0;
                for (int k = 0; k < mv; k++) {
                    double s = out[a][k];
                    if (b->hyp) s -= 2.0 * (double)ua[0] * (double)v[k][0];
                    bad |= weigh(b, c + a, t + k, s, loss);
                }
            }
#endif
        }
    }
    *loss_sum += loss_local;
    return bad;
}

/* One step of a row along h in Euclidean space: x += lr·h. */
static inline void step_euc(const gyro_sgns_batch *b, float *x, const float *h, double lr)
{
    gyro_sgns_euc_centre(x, h, lr, b->row);
}

/* The coefficients of a row's step x ← al·x + be·h, x ← exp_x(clip(lr·proj_x h)), given
 * q = ⟨x,h⟩_L and hh = ⟨h,h⟩_L (summed in the pass that formed h): with p = lr(h + q x),
 * ⟨p,p⟩_L = lr²(hh + q²); |p| clipped to max_step (e = lr, scaled by the clip), al = cosh|p| +
 * sinhc|p|·e·q, be = sinhc|p|·e — gyro_lorentz_skipgram_step_centre_f32's formula
 * (lorentz_skipgram.h; Nickel & Kiela 2018, eq. 9). */
static inline void step_coef1(double q, double hh, double lr, double max_step, float *al, float *be)
{
    double t2 = hh + q * q;
    double e = lr, n = lr * sqrt(t2 > 0 ? t2 : 0);
    if (max_step > 0 && n > max_step) {
        e *= max_step / n;
        n = max_step;
    }
    double ch, shc;
    gyro_lorentz_step_cosh_sinhc(n, GYRO_HYP_COSH_MAX_F32, &ch, &shc);
    *al = (float)(ch + shc * e * q);
    *be = (float)(shc * e);
}

/* step_coef1 for rows k < n (4 at a time in AVX2 builds when the clip keeps every step inside
 * the series). */
static void step_coefs(const gyro_sgns_batch *b, int n, double lr, float *al, float *be)
{
    const int nc = ((b->max_u > b->max_v ? b->max_u : b->max_v) + 3) / 4 * 4;
    const double *q = b->qs, *hh = b->qs + nc;
#ifdef HAVE_STEP_COEFS4
    if (b->max_step > 0 && b->max_step <= GYRO_LORENTZ_STEP_SERIES_T) {
        step_coefs4(n, q, hh, lr, b->max_step, al, be);
        return;
    }
#endif
    for (int k = 0; k < n; k++) step_coef1(q[k], hh[k], lr, b->max_step, al + k, be + k);
}

/* Rows r of H (H_U or H_V, `row` floats apart) as the products of W with the rows y, two at a
 * time (coefficients of output o: w[o·os + k·ks], k < n), then the step of each row x along its
 * r (hyperboloid: ⟨x,r⟩_L and ⟨r,r⟩_L summed while r is formed, the steps' coefficients for all
 * rows at once, then one pass per row). An odd last output is computed twice into the same
 * place. Returns 1 when a row overflowed. */
static int products_and_steps(gyro_sgns_batch *b, float *hbuf, float *const *x, int nx, size_t os, int ks,
                              float *const *y, int n, double lr)
{
    const int row = b->row;
    const int nc = ((b->max_u > b->max_v ? b->max_u : b->max_v) + 3) / 4 * 4;
    double *q = b->qs, *hh = b->qs + nc;
    for (int o = 0; o < nx; o += 2) {
        const int o1 = o + 1 < nx ? o + 1 : o;
        float *r0 = hbuf + (size_t)o * row, *r1 = hbuf + (size_t)o1 * row;
        const float *c0 = b->w + (size_t)o * os, *c1 = b->w + (size_t)o1 * os;
        if (!b->hyp) {
            combine2(r0, r1, c0, c1, ks, y, n, row);
            step_euc(b, x[o], r0, lr);
            if (o1 != o) step_euc(b, x[o1], r1, lr);
            continue;
        }
        double st[4];
        combine2_hyp(r0, r1, c0, c1, ks, y, n, row, x[o], x[o1], st);
        q[o] = st[0] - 2.0 * (double)x[o][0] * r0[0];
        hh[o] = st[1] - 2.0 * (double)r0[0] * r0[0];
        q[o1] = st[2] - 2.0 * (double)x[o1][0] * r1[0];
        hh[o1] = st[3] - 2.0 * (double)r1[0] * r1[0];
    }
    if (!b->hyp) return 0;
    float *al = b->coef, *be = b->coef + nc;
    step_coefs(b, nx, lr, al, be);
    int bad = 0;
    for (int o = 0; o < nx; o++) bad |= !(axpby_reproject(x[o], hbuf + (size_t)o * row, al[o], be[o], row) < 1e30f);
    return bad;
}

int gyro_sgns_batch_step(gyro_sgns_batch *b, double lr, double *loss)
{
    const int nu = b->nu, nv = b->nv, row = b->row;
    if (scores(b, loss)) return 1;
    /* H_U = W·V from the rows before the window, and each context's step */
    int bad = products_and_steps(b, b->hu, b->u, nu, (size_t)b->max_v, 1, b->v, nv, lr);
    /* the positive column of W again at the stepped contexts (the negatives keep theirs), then
     * H_V = Wᵀ·U at the stepped contexts and each target's step */
    double unused = 0;
    for (int c = 0; c < nu && !bad; c += 2) {
        const int c1 = c + 1 < nu ? c + 1 : c;
        float s2[2];
        dot_2x1(b->u[c], b->u[c1], b->v[0], row, s2);
        for (int a = 0; a < 1 + (c1 != c); a++) {
            double sc = s2[a];
            if (b->hyp) sc -= 2.0 * (double)b->u[c + a][0] * (double)b->v[0][0];
            bad |= weigh(b, c + a, 0, sc, &unused);
        }
    }
    if (bad) return 1;
    return products_and_steps(b, b->hv, b->v, nv, 1, b->max_v, b->u, nu, lr);
}

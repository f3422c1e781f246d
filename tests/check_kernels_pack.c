/* check_kernels_pack.c — Check suite for the packed-weight products of
 * models/layers/kernels_pack.c: on every instruction set the CPU supports (plain C, AVX2,
 * AVX-512), Y = X Wᵀ against the double-precision reference loop of models/core/blas.h for
 * every row count of a block and beyond, widths around the 16-column panels, depths of 1 to 400,
 * strided X and Y (Y's padding left untouched), a head's column slice packed from a wider
 * matrix; each row's result independent of the rows around it, bit for bit. The fused
 * hyperbolic head merge against the cached one (float64 and float32, heads inside the ball and
 * heads pushed onto the projection radius), the packed merge against it, and the packed
 * transformer forward against the plain one (hyperbolic and Euclidean, 1 to 12 tokens). */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/core/blas.h"
#include "models/core/rng.h"
#include "models/layers/kernels.h"
#include "models/layers/kernels_pack.h"
#include "models/transformer.h"

static float *randv(gyro_rng *r, size_t n)
{
    float *v = malloc(n * sizeof *v);
    for (size_t i = 0; i < n; i++)
        v[i] = (float)(2 * gyro_rng_uniform(r) - 1);
    return v;
}

/* Y = X W[:, col0 : col0+K]ᵀ with W (M, ldw) by the packed kernel of `isa` and by the
 * reference; max |error| / (1 + Σ_k |x_k w_k|) (a float32 sum of K terms is exact to about
 * √K·2⁻²⁴ of that), 1e9 if Y's padding changed. */
static double pack_case(gyro_isa isa, int N, int M, int K, int pad, int col0, uint64_t seed)
{
    gyro_rng r;
    gyro_rng_seed(&r, seed);
    const int ldx = K + pad, ldy = M + pad, ldw = K + col0 + pad;
    float *X = randv(&r, (size_t)N * ldx), *W = randv(&r, (size_t)M * ldw);
    float *Y = randv(&r, (size_t)N * ldy), *R = malloc((size_t)N * ldy * sizeof *R);
    float *Wp = malloc((gyro_pack_values(M, K) + 1) * sizeof *Wp);
    for (int i = 0; i < N * ldy; i++)
        R[i] = Y[i];
    gyro_pack_weights_f32(Wp, W + col0, ldw, M, K);
    gyro_packed_linear_f32_isa(isa, Y, ldy, X, ldx, Wp, N, K, M);
    gyro_blas_gemm_ref_f32(R, X, W + col0, 0, 1, 1.0f, 0.0f, N, M, K, ldx, ldw, ldy);
    double worst = 0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < ldy; j++) {
            double a = Y[i * ldy + j], b = R[i * ldy + j];
            double mag = 0;
            for (int k = 0; j < M && k < K; k++)
                mag += fabs((double)X[i * ldx + k] * W[j * ldw + col0 + k]);
            double e = j < M ? fabs(a - b) / (1.0 + mag) : (a != b ? 1e9 : 0);
            if (isnan(a)) e = 1e9;
            if (e > worst) worst = e;
        }
    free(X); free(W); free(Y); free(R); free(Wp);
    return worst;
}

START_TEST(test_pack_shapes)
{
    static const int Ks[] = {1, 3, 7, 8, 16, 17, 100, 400};
    static const int Ms[] = {1, 5, 15, 16, 17, 33, 64, 100, 112, 336};
    uint64_t seed = 1;
    for (int isa = GYRO_ISA_GENERIC; isa <= GYRO_ISA_AVX512; isa++) {
        if (!gyro_isa_supported((gyro_isa)isa))
            continue;
        double worst = 0;
        for (int N = 1; N <= 14; N++)
            for (size_t a = 0; a < sizeof Ks / sizeof Ks[0]; a++)
                for (size_t b = 0; b < sizeof Ms / sizeof Ms[0]; b++)
                    for (int pad = 0; pad < 2; pad++)
                        worst = fmax(worst, pack_case((gyro_isa)isa, N, Ms[b], Ks[a], 3 * pad,
                                                      0, seed++));
        /* the model's shapes: q|k|v, FFN up and down, a head's slice of the output projection */
        worst = fmax(worst, pack_case((gyro_isa)isa, 6, 336, 100, 0, 0, seed++));
        worst = fmax(worst, pack_case((gyro_isa)isa, 6, 400, 100, 0, 0, seed++));
        worst = fmax(worst, pack_case((gyro_isa)isa, 6, 100, 400, 0, 0, seed++));
        worst = fmax(worst, pack_case((gyro_isa)isa, 40, 100, 7, 0, 35, seed++));
        printf("packed linear (%s): X·Wᵀ vs reference, max rel error %.3g\n",
               gyro_isa_name((gyro_isa)isa), worst);
        ck_assert_double_lt(worst, 1e-5);
    }
}
END_TEST

/* Row i of a 13-row product equals the same row computed alone, bit for bit, on each ISA. */
START_TEST(test_pack_rows_independent)
{
    enum { N = 13, M = 100, K = 100 };
    gyro_rng r;
    gyro_rng_seed(&r, 9);
    float *X = randv(&r, (size_t)N * K), *W = randv(&r, (size_t)M * K);
    float *Wp = malloc(gyro_pack_values(M, K) * sizeof *Wp);
    static float Y[N * M], Y1[M];
    gyro_pack_weights_f32(Wp, W, K, M, K);
    for (int isa = GYRO_ISA_GENERIC; isa <= GYRO_ISA_AVX512; isa++) {
        if (!gyro_isa_supported((gyro_isa)isa))
            continue;
        gyro_packed_linear_f32_isa((gyro_isa)isa, Y, M, X, K, Wp, N, K, M);
        for (int i = 0; i < N; i++) {
            gyro_packed_linear_f32_isa((gyro_isa)isa, Y1, M, X + i * K, K, Wp, 1, K, M);
            for (int j = 0; j < M; j++)
                ck_assert_msg(Y1[j] == Y[i * M + j], "%s row %d col %d: %.9g vs %.9g",
                              gyro_isa_name((gyro_isa)isa), i, j, Y1[j], Y[i * M + j]);
        }
    }
    free(X); free(W); free(Wp);
}
END_TEST

START_TEST(test_isa_names)
{
    ck_assert(gyro_isa_supported(GYRO_ISA_GENERIC));
    ck_assert(gyro_isa_supported(gyro_isa_active()));
    ck_assert_str_eq(gyro_isa_name(GYRO_ISA_AVX2), "avx2");
    ck_assert_ptr_null(gyro_isa_name((gyro_isa)7));
    ck_assert_uint_eq(gyro_pack_values(17, 3), 2 * 16 * 3);
    printf("packed kernels run on: %s\n", gyro_isa_name(gyro_isa_active()));
}
END_TEST


/* ---- the fused head merge ------------------------------------------------------------------ */

/* Hyperbolic merge of N rows, H heads: the fused sum (RB NULL) against the cached path, in
 * float64 and float32, and the packed merge of every instruction set the CPU has against the
 * cached float32 path (epk[isa], each at least the value it had); `scale` sets the size of O
 * (large: heads and sums hit the projection). */
static void merge_case(int N, int H, int D, int C, double scale, uint64_t seed, double *e64,
                       double *e32, double epk[GYRO_ISA_AVX512 + 1])
{
    gyro_rng r;
    gyro_rng_seed(&r, seed);
    const int A = H * D;
    double *O = malloc(sizeof(double) * N * A), *W = malloc(sizeof(double) * C * A);
    double *Y1 = malloc(sizeof(double) * N * C), *Y2 = malloc(sizeof(double) * N * C);
    double *RR = malloc(sizeof(double) * N * H * C), *RB = malloc(sizeof(double) * N * 2 * H * C);
    float *Of = malloc(sizeof(float) * N * A), *Wf = malloc(sizeof(float) * C * A);
    float *Z1 = malloc(sizeof(float) * N * C), *Z2 = malloc(sizeof(float) * N * C);
    float *Z3 = malloc(sizeof(float) * N * C);
    float *RRf = malloc(sizeof(float) * N * H * C), *RBf = malloc(sizeof(float) * N * 2 * H * C);
    float *Wp = malloc(sizeof(float) * gyro_merge_pack_values(GYRO_GEO_HYPERBOLIC, H, D, C));
    for (int i = 0; i < N * A; i++) Of[i] = (float)(O[i] = scale * (2 * gyro_rng_uniform(&r) - 1));
    for (int i = 0; i < C * A; i++) Wf[i] = (float)(W[i] = 0.5 * (2 * gyro_rng_uniform(&r) - 1));
    gyro_merge_forward_f64(Y1, RR, RB, O, W, GYRO_GEO_HYPERBOLIC, 1.0, N, H, D, C);
    gyro_merge_forward_f64(Y2, RR, NULL, O, W, GYRO_GEO_HYPERBOLIC, 1.0, N, H, D, C);
    gyro_merge_forward_f32(Z1, RRf, RBf, Of, Wf, GYRO_GEO_HYPERBOLIC, 1.0f, N, H, D, C);
    gyro_merge_forward_f32(Z2, RRf, NULL, Of, Wf, GYRO_GEO_HYPERBOLIC, 1.0f, N, H, D, C);
    gyro_merge_pack_f32(Wp, Wf, GYRO_GEO_HYPERBOLIC, H, D, C);
    *e64 = *e32 = 0;
    for (int i = 0; i < N * C; i++) {
        *e64 = fmax(*e64, fabs(Y1[i] - Y2[i]));
        *e32 = fmax(*e32, fabs((double)Z1[i] - Z2[i]));
    }
    for (int isa = GYRO_ISA_GENERIC; isa <= GYRO_ISA_AVX512; isa++) { /* every level the CPU has */
        if (!gyro_isa_supported((gyro_isa)isa))
            continue;
        for (int i = 0; i < N * C; i++)
            Z3[i] = 99.0f; /* every row must be written */
        gyro_merge_forward_packed_f32_isa((gyro_isa)isa, Z3, RRf, Of, Wp, GYRO_GEO_HYPERBOLIC,
                                          1.0f, N, H, D, C);
        for (int i = 0; i < N * C; i++)
            epk[isa] = fmax(epk[isa], isfinite(Z3[i]) ? fabs((double)Z1[i] - Z3[i]) : 1e9);
    }
    free(O); free(W); free(Y1); free(Y2); free(RR); free(RB);
    free(Of); free(Wf); free(Z1); free(Z2); free(Z3); free(RRf); free(RBf); free(Wp);
}

START_TEST(test_merge_fused)
{
    double w64 = 0, w32 = 0, e64, e32, epk[GYRO_ISA_AVX512 + 1] = {0};
    static const double scales[] = {0.05, 0.5, 3.0, 40.0};
    /* N, H, D, C: C = 100 (the seed model; rows padded to 104 on AVX2, 112 on AVX-512), 8 + 8
     * + 3 rows, C a multiple of 16, of 8 but not 16, below 8 */
    static const int shapes[][4] = {{5, 16, 7, 100}, {3, 3, 2, 5},  {19, 16, 7, 100},
                                    {2, 1, 4, 9},    {11, 5, 3, 48}, {8, 2, 8, 16},
                                    {13, 4, 5, 24}};
    uint64_t seed = 500;
    for (size_t s = 0; s < sizeof scales / sizeof scales[0]; s++)
        for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
            merge_case(shapes[k][0], shapes[k][1], shapes[k][2], shapes[k][3], scales[s], seed++,
                       &e64, &e32, epk);
            w64 = fmax(w64, e64);
            w32 = fmax(w32, e32);
        }
    printf("fused merge vs cached: max abs difference f64 %.3g, f32 %.3g\n", w64, w32);
    ck_assert_double_lt(w64, 1e-12);
    ck_assert_double_lt(w32, 2e-6);
    for (int isa = GYRO_ISA_GENERIC; isa <= GYRO_ISA_AVX512; isa++) {
        if (!gyro_isa_supported((gyro_isa)isa)) {
            printf("packed merge on %s: not supported by this CPU\n", gyro_isa_name((gyro_isa)isa));
            continue;
        }
        printf("packed merge on %s vs cached f32: max abs difference %.3g\n",
               gyro_isa_name((gyro_isa)isa), epk[isa]);
        ck_assert_double_lt(epk[isa], 2e-6);
    }
}
END_TEST

/* ---- the packed transformer forward -------------------------------------------------------- */

static void forward_case(gyro_tf_geometry geo, int layernorm, double *worst)
{
    gyro_tf_config c = gyro_tf_config_default(geo);
    c.vocab_size = 50;
    c.n_classes = 7;
    c.max_len = 12;
    if (layernorm == 2) { /* Lorentz without residual or activation */
        c.residual = GYRO_TF_RESIDUAL_NONE;
        c.ffn_activation = GYRO_TF_ACTIVATION_IDENTITY;
    } else if (layernorm) {
        c.layernorm = 1;
        c.residual = GYRO_TF_RESIDUAL_TANGENT;
        c.ffn_activation = GYRO_TF_ACTIVATION_RELU;
    }
    gyro_tf_model *m;
    gyro_tf_acts *a1, *a2;
    gyro_tf_packed *pk;
    ck_assert_int_eq(gyro_tf_new(&c, 3, 0, &m), GYRO_OK);
    ck_assert_int_eq(gyro_tf_acts_new(m, 1, 12, 0, &a1), GYRO_OK);
    ck_assert_int_eq(gyro_tf_acts_new(m, 1, 12, 0, &a2), GYRO_OK);
    if (geo == GYRO_TF_GEOMETRY_LORENTZ) {
        /* the time-part weights v, b_t, log λ and the biases start at 0 / log 4: move them so
         * that every packed matrix (the q|k|v groups' v rows included) changes the logits */
        gyro_rng r;
        gyro_rng_seed(&r, 11);
        gyro_tf_params *w = &m->params;
        const int d = c.dim + 1, H = c.n_heads, L = c.n_layers, F = c.ffn_dim;
        const int HD1 = H * (c.head_dim + 1);
        struct { float *p; long n; double s; } pert[] = {
            {w->lzinv, (long)(1 + L * (3 * H + 1)) * d, 0.3},
            {w->lzov, (long)L * HD1, 0.3},
            {w->lzf2v, (long)L * (F + 1), 0.3},
            {w->lztime, 2L * (1 + L * (3 * H + 3)), 0.5},
            {w->lzqkvb, (long)L * 3 * H * c.head_dim, 0.2},
            {w->lzf1b, (long)L * F, 0.2},
        };
        for (size_t i = 0; i < sizeof pert / sizeof pert[0]; i++)
            for (long j = 0; j < pert[i].n; j++)
                pert[i].p[j] += (float)(pert[i].s * (2 * gyro_rng_uniform(&r) - 1));
    }
    ck_assert_int_eq(gyro_tf_pack_new(m, &pk), GYRO_OK);
    int32_t tok[12];
    for (int T = 1; T <= 12; T++) {
        for (int t = 0; t < T; t++) tok[t] = (int32_t)((7 * t + 3 * T) % 50);
        ck_assert_int_eq(gyro_tf_forward(m, a1, tok, &T, 1, T, NULL), GYRO_OK);
        ck_assert_int_eq(gyro_tf_forward_packed(m, pk, a2, tok, &T, 1, T), GYRO_OK);
        const float *l1 = gyro_tf_logits(a1), *l2 = gyro_tf_logits(a2);
        for (int k = 0; k < c.n_classes; k++)
            *worst = fmax(*worst, fabs((double)l1[k] - l2[k]) / (1.0 + fabs(l1[k])));
    }
    gyro_tf_pack_free(pk);
    gyro_tf_acts_free(a1);
    gyro_tf_acts_free(a2);
    gyro_tf_free(m);
}

START_TEST(test_forward_packed)
{
    double worst = 0;
    forward_case(GYRO_TF_GEOMETRY_HYPERBOLIC, 0, &worst);
    forward_case(GYRO_TF_GEOMETRY_HYPERBOLIC, 1, &worst);
    forward_case(GYRO_TF_GEOMETRY_EUCLIDEAN, 1, &worst);
    printf("packed forward vs plain: max rel logit difference %.3g\n", worst);
    ck_assert_double_lt(worst, 1e-4);
}
END_TEST

/* The Lorentz geometry: every Lorentz linear layer on packed weights, per-layer caches reused;
 * same logits as the plain forward for lengths 1 … max_len (defaults: residual, ReLU), and
 * without residual or activation. */
START_TEST(test_forward_packed_lorentz)
{
    double worst = 0;
    forward_case(GYRO_TF_GEOMETRY_LORENTZ, 0, &worst);
    forward_case(GYRO_TF_GEOMETRY_LORENTZ, 2, &worst);
    printf("packed Lorentz forward vs plain: max rel logit difference %.3g\n", worst);
    ck_assert_double_lt(worst, 1e-4);
}
END_TEST

/* ---- fused inference maps against the composed kernels ------------------------------------- */

/* Rows of Y (N, n) of several sizes: tiny, moderate, near and past the projection radius;
 * row 0 is zero. */
static void fill_rows(double *Y, int N, int n, gyro_rng *r)
{
    static const double sizes[] = {0.0, 1e-4, 0.3, 1.0, 2.5, 6.0, 40.0};
    for (int i = 0; i < N; i++) {
        const double s = sizes[i % 7] / sqrt((double)n);
        for (int j = 0; j < n; j++)
            Y[i * n + j] = s * (2 * gyro_rng_uniform(r) - 1) * 1.7;
    }
}

START_TEST(test_fused_maps)
{
    enum { N = 14, n = 23 };
    gyro_rng r;
    gyro_rng_seed(&r, 77);
    const double c = 1.3;
    double Y[N * n], U[N * n], E[N * n], Hb[N * n], G0[N * n], G1[N * n], Z[N * n];
    double ts[N * n], res[N * n], lnu[N * n], lnv[N * n], x[N * n], lm[N], lr[N], O[N * n];
    double b[n], g[n], bias[n];
    double worst_add = 0, worst_mid = 0, worst_ln = 0;
    for (int rep = 0; rep < 4; rep++) {
        fill_rows(Y, N, n, &r);
        fill_rows(U, N, n, &r);
        for (int j = 0; j < n; j++) {
            b[j] = (rep == 3 ? 0.9 : 0.2) / sqrt((double)n) * (2 * gyro_rng_uniform(&r) - 1);
            g[j] = (rep == 2 ? 3.0 : 0.3) * gyro_rng_uniform(&r);
            bias[j] = 0.05 * (2 * gyro_rng_uniform(&r) - 1);
        }
        /* exp0 → ⊕ b → (log0 → ReLU) */
        gyro_geo_exp0_f64(E, n, Y, n, GYRO_GEO_HYPERBOLIC, c, N, n);
        gyro_geo_add_f64(Hb, E, b, 0, GYRO_GEO_HYPERBOLIC, c, N, n);
        gyro_geo_log0_f64(G0, n, Hb, n, GYRO_GEO_HYPERBOLIC, c, N, n);
        gyro_relu_forward_f64(G1, G0, (long)N * n);
        gyro_geo_exp0_add_f64(Z, Y, b, c, N, n);
        for (int i = 0; i < N * n; i++) worst_add = fmax(worst_add, fabs(Z[i] - Hb[i]));
        gyro_ffn_mid_f64(Z, Y, b, 1, c, N, n);
        for (int i = 0; i < N * n; i++) worst_mid = fmax(worst_mid, fabs(Z[i] - G1[i]));
        gyro_ffn_mid_f64(Z, Y, b, 0, c, N, n);
        for (int i = 0; i < N * n; i++) worst_mid = fmax(worst_mid, fabs(Z[i] - G0[i]));
        /* the ball point y = exp0(Y), then the tangent residual and the hyperbolic LayerNorm */
        gyro_geo_log0_f64(lnu, n, E, n, GYRO_GEO_HYPERBOLIC, c, N, n); /* log0 y */
        for (int i = 0; i < N * n; i++) ts[i] = U[i] + lnu[i];
        gyro_geo_exp0_f64(res, n, ts, n, GYRO_GEO_HYPERBOLIC, c, N, n);
        gyro_geo_log0_f64(lnu, n, res, n, GYRO_GEO_HYPERBOLIC, c, N, n);
        gyro_layernorm_forward_f64(lnv, lm, lr, lnu, g, bias, N, n);
        gyro_geo_exp0_f64(x, n, lnv, n, GYRO_GEO_HYPERBOLIC, c, N, n);
        gyro_geo_log0_f64(O, n, x, n, GYRO_GEO_HYPERBOLIC, c, N, n);
        gyro_tangent_res_ln_f64(Z, U, E, g, bias, c, N, n);
        for (int i = 0; i < N * n; i++) worst_ln = fmax(worst_ln, fabs(Z[i] - O[i]));
    }
    printf("fused maps vs composed kernels (f64): exp0_add %.3g, ffn_mid %.3g, "
           "tangent_res_ln %.3g\n", worst_add, worst_mid, worst_ln);
    ck_assert_double_lt(worst_add, 1e-12);
    ck_assert_double_lt(worst_mid, 1e-9);
    ck_assert_double_lt(worst_ln, 1e-9);
}
END_TEST

/* The float32 fused maps (their dot products in float32 lanes, fdot2, and the one-pass
 * LayerNorm statistics) against the composed float32 kernels (per-row maps with float64 dot
 * products) on the same inputs, at the widths of a small test, the model (C = 100) and its FFN
 * (F = 400: several 64-element blocks); errors relative to 1 + |reference|. */
START_TEST(test_fused_maps_f32)
{
    enum { N = 14, NMAX = 400 };
    static const int widths[] = {23, 100, 400};
    gyro_rng r;
    gyro_rng_seed(&r, 78);
    const float c = 1.3f;
    double *Yd = malloc(sizeof(double) * N * NMAX), *Ud = malloc(sizeof(double) * N * NMAX);
    float *Y = malloc(sizeof(float) * N * NMAX), *U = malloc(sizeof(float) * N * NMAX);
    float *E = malloc(sizeof(float) * N * NMAX), *Hb = malloc(sizeof(float) * N * NMAX);
    float *G0 = malloc(sizeof(float) * N * NMAX), *G1 = malloc(sizeof(float) * N * NMAX);
    float *ts = malloc(sizeof(float) * N * NMAX), *res = malloc(sizeof(float) * N * NMAX);
    float *lnu = malloc(sizeof(float) * N * NMAX), *lnv = malloc(sizeof(float) * N * NMAX);
    float *x = malloc(sizeof(float) * N * NMAX), *O = malloc(sizeof(float) * N * NMAX);
    float *Z = malloc(sizeof(float) * N * NMAX);
    float lm[N], lr[N], b[NMAX], g[NMAX], bias[NMAX];
    double worst_add = 0, worst_mid = 0, worst_ln = 0;
#define REL(z, ref) (fabs((double)(z) - (ref)) / (1.0 + fabs((double)(ref))))
    for (size_t wi = 0; wi < sizeof widths / sizeof widths[0]; wi++)
        for (int rep = 0; rep < 4; rep++) {
            const int n = widths[wi];
            fill_rows(Yd, N, n, &r);
            fill_rows(Ud, N, n, &r);
            for (int i = 0; i < N * n; i++) {
                Y[i] = (float)Yd[i];
                U[i] = (float)Ud[i];
            }
            for (int j = 0; j < n; j++) {
                b[j] = (float)((rep == 3 ? 0.9 : 0.2) / sqrt((double)n) * (2 * gyro_rng_uniform(&r) - 1));
                g[j] = (float)((rep == 2 ? 3.0 : 0.3) * gyro_rng_uniform(&r));
                bias[j] = (float)(0.05 * (2 * gyro_rng_uniform(&r) - 1));
            }
            gyro_geo_exp0_f32(E, n, Y, n, GYRO_GEO_HYPERBOLIC, c, N, n);
            gyro_geo_add_f32(Hb, E, b, 0, GYRO_GEO_HYPERBOLIC, c, N, n);
            gyro_geo_log0_f32(G0, n, Hb, n, GYRO_GEO_HYPERBOLIC, c, N, n);
            gyro_relu_forward_f32(G1, G0, (long)N * n);
            gyro_geo_exp0_add_f32(Z, Y, b, c, N, n);
            for (int i = 0; i < N * n; i++) worst_add = fmax(worst_add, REL(Z[i], Hb[i]));
            gyro_ffn_mid_f32(Z, Y, b, 1, c, N, n);
            for (int i = 0; i < N * n; i++) worst_mid = fmax(worst_mid, REL(Z[i], G1[i]));
            gyro_ffn_mid_f32(Z, Y, b, 0, c, N, n);
            for (int i = 0; i < N * n; i++) worst_mid = fmax(worst_mid, REL(Z[i], G0[i]));
            gyro_geo_log0_f32(lnu, n, E, n, GYRO_GEO_HYPERBOLIC, c, N, n); /* log0 y */
            for (int i = 0; i < N * n; i++) ts[i] = U[i] + lnu[i];
            gyro_geo_exp0_f32(res, n, ts, n, GYRO_GEO_HYPERBOLIC, c, N, n);
            gyro_geo_log0_f32(lnu, n, res, n, GYRO_GEO_HYPERBOLIC, c, N, n);
            gyro_layernorm_forward_f32(lnv, lm, lr, lnu, g, bias, N, n);
            gyro_geo_exp0_f32(x, n, lnv, n, GYRO_GEO_HYPERBOLIC, c, N, n);
            gyro_geo_log0_f32(O, n, x, n, GYRO_GEO_HYPERBOLIC, c, N, n);
            gyro_tangent_res_ln_f32(Z, U, E, g, bias, c, N, n);
            for (int i = 0; i < N * n; i++) worst_ln = fmax(worst_ln, REL(Z[i], O[i]));
        }
#undef REL
    printf("fused maps vs composed kernels (f32): exp0_add %.3g, ffn_mid %.3g, "
           "tangent_res_ln %.3g (relative to 1 + |x|)\n", worst_add, worst_mid, worst_ln);
    ck_assert_double_lt(worst_add, 2e-6);
    ck_assert_double_lt(worst_mid, 2e-5);
    ck_assert_double_lt(worst_ln, 2e-5);
    free(Yd); free(Ud); free(Y); free(U); free(E); free(Hb); free(G0); free(G1); free(ts);
    free(res); free(lnu); free(lnv); free(x); free(O); free(Z);
}
END_TEST

/* ---- narrow-head attention (vector loops and vector exp) against a reference loop ---------- */

START_TEST(test_attention_narrow)
{
    enum { B = 2, Tn = 11, H = 3 };
    static const int len[B] = {11, 4};
    gyro_rng r;
    gyro_rng_seed(&r, 31);
    double worst = 0;
    for (int D = 1; D <= 8; D++) {
        for (int big = 0; big < 2; big++) { /* big: logits far apart (exp underflows to 0) */
            const int A = H * D, ld = 3 * A;
            float *qkv = randv(&r, (size_t)B * Tn * ld);
            for (int i = 0; i < B * Tn * ld; i++) qkv[i] *= big ? 30.0f : 1.0f;
            float *O = malloc(sizeof(float) * B * Tn * A), *P = malloc(sizeof(float) * B * H * Tn * Tn);
            gyro_attention_forward_f32(O, P, qkv, len, B, Tn, H, D);
            for (int b = 0; b < B; b++)
                for (int h = 0; h < H; h++)
                    for (int i = 0; i < len[b]; i++) {
                        const float *q = qkv + ((size_t)b * Tn + i) * ld + h * D;
                        double sc[Tn], mx = -1e300, tot = 0;
                        for (int j = 0; j < len[b]; j++) {
                            const float *k = qkv + ((size_t)b * Tn + j) * ld + A + h * D;
                            double d = 0;
                            for (int e = 0; e < D; e++) d += (double)q[e] * k[e];
                            sc[j] = d / sqrt((double)D);
                            mx = fmax(mx, sc[j]);
                        }
                        for (int j = 0; j < len[b]; j++) tot += (sc[j] = exp(sc[j] - mx));
                        for (int j = 0; j < len[b]; j++) {
                            const double pr = sc[j] / tot;
                            worst = fmax(worst, fabs(pr - P[(((size_t)b * H + h) * Tn + i) * Tn + j]));
                        }
                        for (int e = 0; e < D; e++) {
                            double o = 0;
                            for (int j = 0; j < len[b]; j++)
                                o += sc[j] / tot * qkv[((size_t)b * Tn + j) * ld + 2 * A + h * D + e];
                            const double got = O[((size_t)b * Tn + i) * A + h * D + e];
                            worst = fmax(worst, fabs(o - got) / (big ? 30.0 : 1.0));
                        }
                    }
            free(qkv); free(O); free(P);
        }
    }
    printf("narrow-head attention vs reference: max abs error %.3g\n", worst);
    ck_assert_double_lt(worst, 2e-5);
}
END_TEST

/* ---- inference attention with the heads in vector lanes against the per-head kernel -------- */

/* gyro_attention_infer against gyro_attention_forward: the same outputs bit for bit (lanes
 * compute each head's sums in the per-head kernel's order) for heads of 1 to 8 coordinates, 1
 * to 17 heads (partly filled groups of 8), 1 to 70 tokens (past 64: the per-head fallback) and
 * padded batches, in float32 and float64; padded output rows are zero. */
static int attention_infer_case(int H, int D, int B, int Tn, const int *len, double big,
                                uint64_t seed)
{
    gyro_rng r;
    gyro_rng_seed(&r, seed);
    const int A = H * D, ld = 3 * A;
    const size_t nq = (size_t)B * Tn * ld, no = (size_t)B * Tn * A, np = (size_t)B * H * Tn * Tn;
    float *qkv = randv(&r, nq), *O1 = malloc(no * sizeof *O1), *O2 = malloc(no * sizeof *O2);
    float *P1 = malloc(np * sizeof *P1), *P2 = malloc(np * sizeof *P2);
    double *qd = malloc(nq * sizeof *qd), *D1 = malloc(no * sizeof *D1), *D2 = malloc(no * sizeof *D2);
    double *Q1 = malloc(np * sizeof *Q1), *Q2 = malloc(np * sizeof *Q2);
    for (size_t i = 0; i < nq; i++)
        qd[i] = qkv[i] *= (float)big;
    for (size_t i = 0; i < no; i++) { /* garbage in the padding the kernels must clear */
        O2[i] = 7.0f;
        D2[i] = 7.0;
    }
    gyro_attention_forward_f32(O1, P1, qkv, len, B, Tn, H, D);
    gyro_attention_infer_f32(O2, P2, qkv, len, B, Tn, H, D);
    gyro_attention_forward_f64(D1, Q1, qd, len, B, Tn, H, D);
    gyro_attention_infer_f64(D2, Q2, qd, len, B, Tn, H, D);
    int bad = 0;
    for (size_t i = 0; i < no; i++)
        bad += memcmp(&O1[i], &O2[i], sizeof O1[i]) != 0 || memcmp(&D1[i], &D2[i], sizeof D1[i]) != 0;
    free(qkv); free(O1); free(O2); free(P1); free(P2); free(qd); free(D1); free(D2); free(Q1); free(Q2);
    return bad;
}

START_TEST(test_attention_infer)
{
    static const int heads[] = {1, 3, 8, 9, 16, 17};
    uint64_t seed = 900;
    int bad = 0, cases = 0;
    for (size_t hi = 0; hi < sizeof heads / sizeof heads[0]; hi++)
        for (int D = 1; D <= 8; D++)
            for (int big = 0; big < 2; big++) {
                static const int lens[][3] = {{1, 1, 1}, {5, 2, 7}, {12, 9, 1}, {64, 33, 8},
                                              {70, 65, 3}};
                for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
                    int Tn = 0;
                    for (int b = 0; b < 3; b++)
                        Tn = lens[li][b] > Tn ? lens[li][b] : Tn;
                    bad += attention_infer_case(heads[hi], D, 3, Tn, lens[li], big ? 30.0 : 1.0,
                                                seed++);
                    cases++;
                }
            }
    printf("lane attention vs per-head attention: %d cases, %d values differ\n", cases, bad);
    ck_assert_int_eq(bad, 0);
}
END_TEST

/* gyro_attention_infer_hl_f32 on q|k|v columns permuted by gyro_qkv_lanes_row against
 * gyro_attention_forward_f32 on the usual layout: the same outputs bit for bit where that
 * kernel runs its vector path (up to 64 tokens), within float rounding past it (its products
 * sum in another order), for 8 to 24 heads of 1 to 8 coordinates, lengths 1 to 100 (no limit
 * in this layout), padded batches. */
START_TEST(test_attention_infer_hl)
{
    static const int heads[] = {8, 16, 24};
    static const int lens[][3] = {{1, 1, 1}, {6, 2, 9}, {64, 65, 3}, {100, 17, 1}};
    uint64_t seed = 1900;
    int bad = 0, cases = 0;
    double far = 0;
    for (size_t hi = 0; hi < sizeof heads / sizeof heads[0]; hi++)
        for (int D = 1; D <= 8; D++)
            for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
                const int H = heads[hi], A = H * D, ld = 3 * A, B = 3;
                int Tn = 0;
                for (int b = 0; b < B; b++)
                    Tn = lens[li][b] > Tn ? lens[li][b] : Tn;
                gyro_rng r;
                gyro_rng_seed(&r, seed++);
                const size_t nq = (size_t)B * Tn * ld, no = (size_t)B * Tn * A;
                const size_t np = (size_t)B * H * Tn * Tn;
                float *qkv = randv(&r, nq), *ql = malloc(nq * sizeof *ql);
                float *O1 = malloc(no * sizeof *O1), *O2 = malloc(no * sizeof *O2);
                float *P1 = malloc(np * sizeof *P1), *P2 = malloc(np * sizeof *P2);
                for (size_t i = 0; i < nq; i++)
                    qkv[i] *= (li & 1) ? 30.0f : 1.0f;
                for (int row = 0; row < B * Tn; row++)
                    for (int col = 0; col < ld; col++)
                        ql[(size_t)row * ld + gyro_qkv_lanes_row(col, H, D)] =
                            qkv[(size_t)row * ld + col];
                for (size_t i = 0; i < no; i++)
                    O2[i] = 7.0f;
                gyro_attention_forward_f32(O1, P1, qkv, lens[li], B, Tn, H, D);
                gyro_attention_infer_hl_f32(O2, P2, ql, lens[li], B, Tn, H, D);
                for (int b = 0; b < B; b++)
                    for (size_t i = (size_t)b * Tn * A; i < (size_t)(b + 1) * Tn * A; i++) {
                        if (lens[li][b] <= 64) /* the per-head kernel's vector path: exact */
                            bad += memcmp(&O1[i], &O2[i], sizeof O1[i]) != 0;
                        else /* its product path sums in another order */
                            far = fmax(far, fabs((double)O1[i] - O2[i]) /
                                                ((li & 1) ? 30.0 : 1.0));
                    }
                cases++;
                free(qkv); free(ql); free(O1); free(O2); free(P1); free(P2);
            }
    printf("head-lane attention vs per-head attention: %d cases, %d values differ (up to 64 "
           "tokens); past 64, max abs difference %.3g\n", cases, bad, far);
    ck_assert_int_eq(bad, 0);
    ck_assert_double_lt(far, 2e-4); /* 30× inputs: scores up to ~10³, each exp within 2 ulp */
}
END_TEST

/* ---- max pooling (8 channels per vector in float32) against the reference loop ------------- */

/* gyro_pool_forward_f32 against a plain loop: the maximum over the valid positions and the
 * first position holding it (values drawn from a few levels, so ties are common), widths
 * around the 8-channel vectors, padded batches; exact. */
START_TEST(test_pool_forward)
{
    static const int widths[] = {1, 7, 8, 13, 100};
    static const int len[3] = {1, 12, 5};
    enum { B = 3, Tn = 12 };
    gyro_rng r;
    gyro_rng_seed(&r, 41);
    int bad = 0;
    for (size_t wi = 0; wi < sizeof widths / sizeof widths[0]; wi++) {
        const int C = widths[wi];
        float *X = malloc(sizeof(float) * B * Tn * C), *Y = malloc(sizeof(float) * B * C);
        int *idx = malloc(sizeof(int) * B * C);
        for (int i = 0; i < B * Tn * C; i++)
            X[i] = (float)((int)(gyro_rng_uniform(&r) * 5) - 2) * 0.5f;
        gyro_pool_forward_f32(Y, idx, X, len, B, Tn, C);
        for (int b = 0; b < B; b++)
            for (int i = 0; i < C; i++) {
                float m = X[(size_t)b * Tn * C + i];
                int at = 0;
                for (int t = 1; t < len[b]; t++)
                    if (X[((size_t)b * Tn + t) * C + i] > m) {
                        m = X[((size_t)b * Tn + t) * C + i];
                        at = t;
                    }
                bad += Y[b * C + i] != m || idx[b * C + i] != at;
            }
        free(X); free(Y); free(idx);
    }
    ck_assert_int_eq(bad, 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("kernels_pack");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_pack_shapes);
    tcase_add_test(tc, test_pack_rows_independent);
    tcase_add_test(tc, test_isa_names);
    tcase_add_test(tc, test_merge_fused);
    tcase_add_test(tc, test_forward_packed);
    tcase_add_test(tc, test_forward_packed_lorentz);
    tcase_add_test(tc, test_fused_maps);
    tcase_add_test(tc, test_fused_maps_f32);
    tcase_add_test(tc, test_attention_narrow);
    tcase_add_test(tc, test_attention_infer);
    tcase_add_test(tc, test_pool_forward);
    tcase_add_test(tc, test_attention_infer_hl);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* kernels_merge_impl.h — internal template: the head merge of kernels.h (gyro_merge_forward,
 * _sum, _backward: the heads' gyro-sum row by row, its fused backward), included by
 * kernels_impl.h at its place in the network's order, once per precision, in kernels_impl.h's
 * macro environment (T, S, P, EXP, VMATH, KERN_VEC; see its head). No include guard on purpose. */

/* ---- head merge: y = r_1 ⊕ … ⊕ r_H, r_i = exp_0(M_i o_i) (hyperbolic-chinese-nlu §4.2);
 * y = W [o_1 … o_H] in the Euclidean geometry */
void P(merge_forward)(T *Y, T *RR, T *RB, const T *O, const T *W, int geo, T c, int N, int H, int D,
                      int C)
{
    const int A = H * D;
    if (geo != GYRO_GEO_HYPERBOLIC) {
        S(gyro_blas_gemm)(Y, O, W, 0, 1, (T)1, (T)0, N, C, A, A, A, C);
        return;
    }
    for (int i = 0; i < H; i++) /* RR_i = O_i M_iᵀ */
        S(gyro_blas_gemm)(RR + (long)i * C, O + (long)i * D, W + (long)i * D, 0, 1, (T)1, (T)0, N,
                          C, D, A, A, H * C);
    if (!RB) {
        P(merge_sum)(Y, RR, c, N, H, C);
        return;
    }
    for (int n = 0; n < N; n++) {
        const T *rr = RR + (long)n * H * C;
        T *rb = RB + (long)n * 2 * H * C, *ps = rb + (long)H * C;
        P(geo_exp0)(rb, C, rr, C, geo, c, H, C); /* r_i = exp0(M_i o_i) */
        memcpy(ps, rb, (size_t)C * sizeof(T));
        for (int i = 1; i < H; i++) /* s_i = s_{i-1} ⊕ r_i */
            P(geo_add)(ps + (long)i * C, ps + (long)(i - 1) * C, rb + (long)i * C, C, geo, c, 1, C);
        memcpy(Y + (long)n * C, ps + (long)(H - 1) * C, (size_t)C * sizeof(T));
    }
}

/* The fused gyro-sum of nb ≤ 8 rows (see kernels.h), head by head across the rows (so that
 * the rows' tanh ratios of one head are one vector call): s ← proj(s ⊕ k_i rr_i) with
 * k_i rr_i = proj(exp0(rr_i)) = min(tanh(√c|rr_i|), 1 − ε)/(√c|rr_i|) · rr_i. Each head is one
 * pass for the three dot products <s,s>, <rr_i,rr_i>, <s,rr_i> and one pass for
 * s ← a s + b k_i rr_i; the norm of the result that decides the projection is
 * |z|² = a²<s,s> + 2ab k_i<s,rr_i> + b² k_i²<rr_i,rr_i>, so no vector is mapped, stored and
 * re-read on its own (in float32, <s,s> is the previous step's |z|² and the other two dots
 * run in float32 lanes, fdot2). A head whose |rr_i|² is not finite maps to the origin (and
 * adds nothing), as proj sends a non-finite point to the origin. Y (nb, C), RR (nb, H, C). */
static void S(merge_sum_rows)(T *Y, const T *RR, double c, int nb, int H, int C)
{
    const double sc = sqrt(c), maxn = (1.0 - BALL_EPS) / sc;
    double ss[8], vv[8], sv[8], t[8], kt[8];
    int first[8];
    for (int j = 0; j < nb; j++)
        first[j] = 1;
    for (int i = 0; i < H; i++) {
        for (int j = 0; j < nb; j++) {
            const T *ri = RR + ((long)j * H + i) * C;
#if VMATH /* float32: <s,s> is the previous step's |z|², the two dots in float32 lanes */
            if (first[j]) {
                S(fdot2)(&vv[j], &sv[j], ri, ri, C);
                ss[j] = sv[j] = 0.0;
            } else {
                S(fdot2)(&vv[j], &sv[j], ri, Y + (long)j * C, C);
            }
#else
            if (first[j]) {
                vv[j] = S(hyp_dot)(ri, ri, C);
                ss[j] = sv[j] = 0.0;
            } else {
                S(hyp_dot3)(&ss[j], &vv[j], &sv[j], Y + (long)j * C, ri, C);
            }
#endif
            t[j] = isfinite(vv[j]) ? sc * sqrt(vv[j]) : 0.0;
        }
        S(tanhc_n)(kt, t, nb);
        for (int j = 0; j < nb; j++) {
            if (!isfinite(vv[j]))
                continue;
            const T *ri = RR + ((long)j * H + i) * C;
            T *y = Y + (long)j * C;
            const double nv = sqrt(vv[j]);
            double k = kt[j];
            if (k * nv > maxn)
                k = maxn / nv;
            if (first[j]) {
                S(hyp_scale)(y, k, ri, C);
                ss[j] = k * k * vv[j];
                first[j] = 0;
                continue;
            }
            double a, b;
            const double yy = k * k * vv[j], xy = k * sv[j];
            gyro_hyp_madd_coef(c, ss[j], yy, xy, &a, &b);
            double zz = a * a * ss[j] + 2.0 * a * b * xy + b * b * yy;
            if (zz > maxn * maxn) {
                const double f = maxn / sqrt(zz);
                a *= f;
                b *= f;
                zz = maxn * maxn;
            }
            ss[j] = zz < 0.0 ? 0.0 : zz;
            S(hyp_axpby)(y, a, y, b * k, ri, C);
        }
    }
    for (int j = 0; j < nb; j++)
        if (first[j])
            memset(Y + (long)j * C, 0, (size_t)C * sizeof(T));
}

void P(merge_sum)(T *Y, const T *RR, T c, int N, int H, int C)
{
    for (int n = 0; n < N; n += 8)
        S(merge_sum_rows)(Y + (long)n * C, RR + (long)n * H * C, (double)c,
                          N - n < 8 ? N - n : 8, H, C);
}

/* Five dot products over three vectors in one pass (the merge backward's per-head products):
 * out = {|x|², <x,v>, <g,x>, <g,v>, |v|²}. */
static inline void S(merge_dots5)(double out[5], const T *g, const T *x, const T *v, int n)
{
    int i = 0;
    double r[5] = {0.0, 0.0, 0.0, 0.0, 0.0};
#ifdef KERN_VEC
    gyro_hyp_v4d s0 = {0, 0, 0, 0}, s1 = s0, s2 = s0, s3 = s0, s4 = s0, zero = s0;
    for (; i + 4 <= n; i += 4) {
        gyro_hyp_v4d gv = S(hyp_ld4)(g + i), xv = S(hyp_ld4)(x + i), vv = S(hyp_ld4)(v + i);
        s0 += xv * xv; s1 += xv * vv; s2 += gv * xv; s3 += gv * vv; s4 += vv * vv;
    }
    r[0] = S(hyp_hsum)(s0, zero); r[1] = S(hyp_hsum)(s1, zero); r[2] = S(hyp_hsum)(s2, zero);
    r[3] = S(hyp_hsum)(s3, zero); r[4] = S(hyp_hsum)(s4, zero);
#endif
    for (; i < n; i++) {
        double gi = g[i], xi = x[i], vi = v[i];
        r[0] += xi * xi; r[1] += xi * vi; r[2] += gi * xi; r[3] += gi * vi; r[4] += vi * vi;
    }
    for (int k = 0; k < 5; k++) out[k] = r[k];
}

/* Two dot products with one vector in one pass: *gx = <g,x>, *gv = <g,v>. */
static inline void S(merge_dots2)(double *gx, double *gv, const T *g, const T *x, const T *v,
                                  int n)
{
    int i = 0;
    double r0 = 0.0, r1 = 0.0;
#ifdef KERN_VEC
    gyro_hyp_v4d s0 = {0, 0, 0, 0}, s1 = s0, t0 = s0, t1 = s0;
    for (; i + 8 <= n; i += 8) {
        const gyro_hyp_v4d g0 = S(hyp_ld4)(g + i), g1 = S(hyp_ld4)(g + i + 4);
        s0 += g0 * S(hyp_ld4)(x + i);
        t0 += g0 * S(hyp_ld4)(v + i);
        s1 += g1 * S(hyp_ld4)(x + i + 4);
        t1 += g1 * S(hyp_ld4)(v + i + 4);
    }
    for (; i + 4 <= n; i += 4) {
        const gyro_hyp_v4d g0 = S(hyp_ld4)(g + i);
        s0 += g0 * S(hyp_ld4)(x + i);
        t0 += g0 * S(hyp_ld4)(v + i);
    }
    r0 = S(hyp_hsum)(s0, s1);
    r1 = S(hyp_hsum)(t0, t1);
#endif
    for (; i < n; i++) {
        r0 += (double)g[i] * x[i];
        r1 += (double)g[i] * v[i];
    }
    *gx = r0;
    *gv = r1;
}

/* r = proj(exp0(v)) = k v (exp0 is radial, so the projection only rescales): k = tanh(s)/s,
 * s = √c|v|, or maxn/|v| when tanh(s)/√c exceeds maxn = (1 − ε)/√c; k = 0 for a non-finite v
 * (proj sends it to the origin). Its VJP for an upstream dr: dv = a1 dr + a2 <dr,v> v with
 * a1 = k, a2 = c·(tanh(s)/s)′/s unclipped; a1 = k, a2 = −k/|v|² clipped (the tangential part
 * only: k (I − v̂v̂ᵀ)); a1 = a2 = 0 non-finite. */
static inline void S(exp0p_coef)(double *k, double *a1, double *a2, double c, double vv)
{
    if (!isfinite(vv)) {
        *k = *a1 = *a2 = 0.0;
        return;
    }
    const double sc = sqrt(c), nv = sqrt(vv), maxn = (1.0 - BALL_EPS) / sc;
    double fp;
    const double f = gyro_hyp_tanhc(sc * nv, &fp);
    if (f * nv > maxn) {
        *k = *a1 = maxn / nv;
        *a2 = -*k / vv;
    } else {
        *k = *a1 = f;
        *a2 = c * fp;
    }
}

/* The backward of one row of the gyro-sum s_0 = r_0, s_i = proj(s_{i−1} ⊕ r_i), r_i = k_i rr_i
 * (exp0p_coef), y = s_{H−1}, from scalar coefficients: every gradient in the chain is a linear
 * combination of the running gradient g = ∂L/∂s_i, the partial sum x = s_{i−1} (PS, stored by
 * the forward) and rr_i, so each head is one pass for the dot products |x|², <x,rr>, <g,x>,
 * <g,rr>, |rr|² and one pass writing dRR_i and the next g (instead of the separate
 * geo_add_backward / geo_exp0_backward and their scratch vectors). With w = a x + b r the
 * unprojected Möbius sum (Ganea 2018 eq. 3; a, b from gyro_hyp_madd_coef), the projection's VJP
 * is dz = f(g − <g,w> w/|w|²), f = maxn/|w|, when |w| > maxn, else dz = g; the Möbius VJP
 * (gyro_hyp_madd_vjp) then gives dx and dr, and dr goes through exp0p_coef. g (C) scratch
 * holding dY's row on entry; drr (H, C) overwritten. */
static void S(merge_backward_row)(T *drr, T *g, const T *rr, const T *ps, const double *dd,
                                  double c, int H, int C)
{
    const double maxn = (1.0 - BALL_EPS) / sqrt(c);
    for (int i = H - 1; i >= 1; i--) {
        const T *x = ps + (long)(i - 1) * C, *v = rr + (long)i * C;
        double d[5], k, a1, a2;
        if (dd) { /* the products of the partial sums' recomputation; only g's two here */
            d[0] = dd[3 * i];
            d[1] = dd[3 * i + 1];
            d[4] = dd[3 * i + 2];
            S(merge_dots2)(&d[2], &d[3], g, x, v, C);
        } else {
            S(merge_dots5)(d, g, x, v, C);
        }
        const double xx = d[0], xv = d[1], gx = d[2], gv = d[3], vv = d[4];
        S(exp0p_coef)(&k, &a1, &a2, c, vv);
        /* y = r_i = k v */
        const double yy = k * k * vv, xy = k * xv, gy = k * gv;
        double al = 1.0, be = 0.0, ga = 0.0; /* dz = al g + be x + ga y */
        double a, b;
        gyro_hyp_madd_coef(c, xx, yy, xy, &a, &b);
        const double ww = a * a * xx + 2.0 * a * b * xy + b * b * yy;
        if (!isfinite(ww)) { /* the forward's proj sent s_i to the origin: no gradient */
            memset(drr + (long)i * C, 0, (size_t)C * sizeof(T));
            memset(g, 0, (size_t)C * sizeof(T));
            continue;
        }
        if (ww > maxn * maxn) {
            const double f = maxn / sqrt(ww), e = -f * (a * gx + b * gy) / ww;
            al = f;
            be = e * a;
            ga = e * b;
        }
        double cx[3], cy[3];
        gyro_hyp_madd_vjp(c, xx, yy, xy, al * gx + be * xx + ga * xy, al * gy + be * xy + ga * yy,
                          cx, cy);
        /* dx = px g + qx x + tx y,  dy = py g + qy x + ty y */
        const double px = cx[0] * al, qx = cx[0] * be + cx[1], tx = cx[0] * ga + cx[2];
        const double py = cy[0] * al, qy = cy[0] * be + cy[1], ty = cy[0] * ga + cy[2];
        /* drr = a1 dy + a2 <dy,v> v, with y = k v */
        const double dyv = py * gv + qy * xv + ty * k * vv;
        const T r0 = (T)(a1 * py), r1 = (T)(a1 * qy), r2 = (T)(a1 * ty * k + a2 * dyv);
        const T g0 = (T)px, g1 = (T)qx, g2 = (T)(tx * k);
        T *dr = drr + (long)i * C;
        int j = 0;
#ifdef KERN_VEC
        for (; j + KERN_VN <= C; j += KERN_VN) {
            S(hyp_vnt) gj, xj, vj, o;
            memcpy(&gj, g + j, sizeof gj);
            memcpy(&xj, x + j, sizeof xj);
            memcpy(&vj, v + j, sizeof vj);
            o = r0 * gj + r1 * xj + r2 * vj;
            memcpy(dr + j, &o, sizeof o);
            o = g0 * gj + g1 * xj + g2 * vj;
            memcpy(g + j, &o, sizeof o);
        }
        /* a 4-wide step for the tail too: the next head reads g's last values with 4-wide
         * loads (hyp_ld4), which a store buffer can only forward from a store of the same
         * width; from scalar stores such a load waits until they reach the cache, behind
         * every store to dRR still missing it (measured: most of this function's time) */
        for (; j + 4 <= C; j += 4) {
            S(hyp_v4t) gj, xj, vj, o;
            memcpy(&gj, g + j, sizeof gj);
            memcpy(&xj, x + j, sizeof xj);
            memcpy(&vj, v + j, sizeof vj);
            o = r0 * gj + r1 * xj + r2 * vj;
            memcpy(dr + j, &o, sizeof o);
            o = g0 * gj + g1 * xj + g2 * vj;
            memcpy(g + j, &o, sizeof o);
        }
#endif
        for (; j < C; j++) {
            const T gj = g[j], xj = x[j], vj = v[j];
            dr[j] = r0 * gj + r1 * xj + r2 * vj;
            g[j] = g0 * gj + g1 * xj + g2 * vj;
        }
    }
    /* s_0 = r_0 = k rr_0 */
    double gg, vv, gv, k, a1, a2;
    S(hyp_dot3)(&gg, &vv, &gv, g, rr, C);
    S(exp0p_coef)(&k, &a1, &a2, c, vv);
    S(hyp_axpby)(drr, a1, g, a2 * gv, rr, C);
}

/* z = a x + b y like hyp_axpby, with a 4-wide step before the scalar tail, so that the next
 * head's 4-wide loads of z (hyp_dot3's tail) are forwarded from a store of their width. */
static inline void S(kern_axpby)(T *z, double a, const T *x, double b, const T *y, int n)
{
    const T ta = (T)a, tb = (T)b;
    int i = 0;
#ifdef KERN_VEC
    for (; i + KERN_VN <= n; i += KERN_VN) {
        S(hyp_vnt) xv, yv;
        memcpy(&xv, x + i, sizeof xv);
        memcpy(&yv, y + i, sizeof yv);
        xv = ta * xv + tb * yv;
        memcpy(z + i, &xv, sizeof xv);
    }
    for (; i + 4 <= n; i += 4) {
        S(hyp_v4t) xv, yv;
        memcpy(&xv, x + i, sizeof xv);
        memcpy(&yv, y + i, sizeof yv);
        xv = ta * xv + tb * yv;
        memcpy(z + i, &xv, sizeof xv);
    }
#endif
    for (; i < n; i++)
        z[i] = ta * x[i] + tb * y[i];
}

/* The partial sums s_0 … s_{H−2} of one row's gyro-sum (PS (H−1, C)), recomputed from RR's
 * row (H, C) with the arithmetic of merge_sum_rows (the forward without a merge cache) for one
 * row: s_0 = k_0 rr_0, s_i = proj(s_{i−1} ⊕ k_i rr_i) from the dot products <s,s>, <rr,rr>,
 * <s,rr>; a non-finite head adds nothing. Those products are kept for the backward (dd not
 * NULL): dd (H, 3) = {|s_{i−1}|², <s_{i−1}, rr_i>, |rr_i|²} (the first two 0 for i = 0). The rows are
 * L1-resident when merge_backward_row reads them right after. */
static void S(merge_partials_row)(T *PS, double *dd, const T *RR, double c, int H, int C)
{
    const double sc = sqrt(c), maxn = (1.0 - BALL_EPS) / sc;
    int first = 1;
    for (int i = 0; i < H; i++) {
        const T *ri = RR + (long)i * C;
        T *y = PS + (long)i * C;
        const T *prev = i ? y - C : NULL;
        double ss = 0.0, vv, sv = 0.0;
        if (first)
            vv = S(hyp_dot)(ri, ri, C);
        else
            S(hyp_dot3)(&ss, &vv, &sv, prev, ri, C);
        if (dd) {
            dd[3 * i] = ss;
            dd[3 * i + 1] = sv;
            dd[3 * i + 2] = vv;
        }
        if (i == H - 1) /* the last head's products only: s_{H−1} is the forward's output */
            break;
        if (!isfinite(vv)) {
            if (first)
                memset(y, 0, (size_t)C * sizeof(T));
            else
                memcpy(y, prev, (size_t)C * sizeof(T));
            continue;
        }
        const double t = sc * sqrt(vv), nv = sqrt(vv);
        double k;
        S(tanhc_n)(&k, &t, 1);
        if (k * nv > maxn)
            k = maxn / nv;
        if (first) {
            S(kern_axpby)(y, k, ri, 0.0, ri, C);
            first = 0;
            continue;
        }
        double a, b;
        const double yy = k * k * vv, xy = k * sv;
        gyro_hyp_madd_coef(c, ss, yy, xy, &a, &b);
        const double zz = a * a * ss + 2.0 * a * b * xy + b * b * yy;
        if (zz > maxn * maxn) {
            const double f = maxn / sqrt(zz);
            a *= f;
            b *= f;
        }
        S(kern_axpby)(y, a, prev, b * k, ri, C);
    }
}

void P(merge_backward)(T *dO, T *dW, T *dRR, T *scratch, const T *dY, const T *O, const T *RR,
                       const T *RB, const T *W, int geo, T c, int N, int H, int D, int C)
{
    const int A = H * D;
    if (geo != GYRO_GEO_HYPERBOLIC) {
        S(gyro_blas_gemm)(dO, dY, W, 0, 0, (T)1, (T)1, N, A, C, C, A, A);
        S(gyro_blas_gemm)(dW, dY, O, 1, 0, (T)1, (T)1, C, A, N, C, A, A);
        return;
    }
    T *g = scratch, *ps = scratch + C; /* (C) dL/ds_i; (H, C) partial sums without RB */
    double ddb[3 * 256]; /* (H, 3) their dot products (H <= 256 in transformer.h and hrm.h) */
    double *dd = H <= 256 ? ddb : NULL;
    /* float32 with AVX2, narrow heads: the rows in blocks of 16 whose dRR rows reuse dRR's
     * first 16 rows (so they stay in cache), each block's head products right after it
     * (kern_merge_head_block_avx2); otherwise every row's dRR, then two products per head */
    int fused = 0;
#if KERN_ATT_AVX2
    fused = sizeof(T) == sizeof(float) && D <= 8 && C <= 512;
    _Alignas(32) float wi[8 * 512], acc[8 * 512];
#endif
    const int blk = fused ? 16 : N;
    for (int n0 = 0; n0 < N; n0 += blk) {
        const int nb = N - n0 < blk ? N - n0 : blk;
        for (int r = 0; r < nb; r++) {
            const int n = n0 + r;
            const T *rr = RR + (long)n * H * C;
            T *drr = dRR + (long)(fused ? r : n) * H * C;
            memcpy(g, dY + (long)n * C, (size_t)C * sizeof(T));
            if (RB) {
                S(merge_backward_row)(drr, g, rr, RB + (long)n * 2 * H * C + (long)H * C, NULL,
                                      (double)c, H, C);
            } else {
                S(merge_partials_row)(ps, dd, rr, (double)c, H, C);
                S(merge_backward_row)(drr, g, rr, ps, dd, (double)c, H, C);
            }
        }
#if KERN_ATT_AVX2
        if (fused)
            for (int i = 0; i < H; i++)
                kern_merge_head_block_avx2((float *)(void *)(dO + (long)n0 * A),
                                           (float *)(void *)dW, (const float *)(const void *)dRR,
                                           (const float *)(const void *)(O + (long)n0 * A),
                                           (const float *)(const void *)W, nb, H, D, C, i, wi,
                                           acc);
#endif
    }
    if (fused)
        return;
    for (int i = 0; i < H; i++) {
        S(gyro_blas_gemm)(dO + (long)i * D, dRR + (long)i * C, W + (long)i * D, 0, 0, (T)1, (T)1, N,
                          D, C, H * C, A, A);
        S(gyro_blas_gemm)(dW + (long)i * D, dRR + (long)i * C, O + (long)i * D, 1, 0, (T)1, (T)1, C,
                          D, N, H * C, A, A);
    }
}

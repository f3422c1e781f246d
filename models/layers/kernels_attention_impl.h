/* kernels_attention_impl.h — internal template: the attention kernels of kernels.h
 * (gyro_attention_forward, _infer, _infer_hl, _backward), included by kernels_impl.h at its
 * place in the network's order, once per precision, in kernels_impl.h's macro environment
 * (T, S, P, EXP, VMATH, KERN_VEC; see its head). No include guard on purpose. The per-head path
 * runs two products per head (four in the backward); narrow heads (D <= 8) of up to 64 tokens
 * run on 8-lane vector loops, one head at a time (attention_head_direct, its backward) or 8
 * heads per vector at inference (attention_lanes, attention_infer_hl). */

/* ---- attention: softmax(q kᵀ/√D) v per head in the tangent space (Vaswani 2017;
 * hyperbolic-chinese-nlu §4.2) */
/* One head of attention_forward for a narrow head (D <= 8) and n <= 64 tokens: scores,
 * softmax (the vector exp of kernels.c) and the value sum on 8-lane vectors (GCC/Clang vector
 * extensions) instead of two product calls. The head's keys are transposed and its values
 * padded once: a query's scores are D vector multiply-adds over kᵀ (8 keys per vector), its
 * output n vector multiply-adds over value rows. o (n, D) row stride lo; p (n, n) row stride
 * lp; q, k, v rows of stride ld. */
typedef T S(att_v8) __attribute__((vector_size(8 * sizeof(T))));
typedef double S(att_v8d) __attribute__((vector_size(8 * sizeof(double))));
typedef __typeof__((S(att_v8)){0} > (S(att_v8)){0}) S(att_v8i); /* lane masks: 0 or −1 */
/* the same vector at any address of a T (rows of caller buffers) */
typedef T S(att_v8u) __attribute__((vector_size(8 * sizeof(T)), aligned(sizeof(T))));
static void S(attention_head_direct)(T *o, int lo, T *p, int lp, const T *q, const T *k,
                                     const T *v, int ld, T scale, int n, int D)
{
    S(att_v8) kt[8][8], vp[64]; /* kt[d][jb]: keys jb·8 … jb·8+7 at dimension d; vp[j] = v_j */
    const int nb = (n + 7) / 8;
    for (int d = 0; d < D; d++)
        for (int jb = 0; jb < nb; jb++)
            kt[d][jb] = (S(att_v8)){0};
    for (int j = 0; j < n; j++) {
        const T *vj = v + (long)j * ld, *kj = k + (long)j * ld;
        vp[j] = (S(att_v8)){0};
        for (int d = 0; d < D; d++) {
            vp[j][d] = vj[d];
            kt[d][j / 8][j % 8] = kj[d];
        }
    }
    const S(att_v8) lane = {0, 1, 2, 3, 4, 5, 6, 7};
    for (int i = 0; i < n; i++) {
        const T *qi = q + (long)i * ld;
        S(att_v8) sc[8];
        T mx = 0;
        for (int jb = 0; jb < nb; jb++) {
            S(att_v8) sv = {0};
            for (int d = 0; d < D; d++)
                sv += qi[d] * kt[d][jb];
            sc[jb] = sv * scale;
            const int cnt = n - jb * 8 < 8 ? n - jb * 8 : 8;
            for (int t = 0; t < cnt; t++)
                if ((jb == 0 && t == 0) || sc[jb][t] > mx)
                    mx = sc[jb][t];
        }
        S(att_v8d) tv = {0}; /* the sum of the exps in double, lane-wise, then a fixed tree */
        for (int jb = 0; jb < nb; jb++) {
            /* lanes past n go 1000 below the maximum, so their exp is 0 */
            const S(att_v8) past = __builtin_convertvector((T)(jb * 8 - n) + lane >= (T)0,
                                                           S(att_v8)); /* −1 or 0 */
            sc[jb] = sc[jb] - mx + (T)1000 * past;
            S(kern_vexp8)(&sc[jb]);
            tv += __builtin_convertvector(sc[jb], S(att_v8d));
        }
        const double tot = ((tv[0] + tv[4]) + (tv[2] + tv[6])) + ((tv[1] + tv[5]) + (tv[3] + tv[7]));
        const T inv = (T)(1.0 / tot);
        T *row = p + (long)i * lp;
        S(att_v8) acc0 = {0}, acc1 = {0};
        for (int jb = 0; jb < nb; jb++) {
            sc[jb] *= inv;
            const int cnt = n - jb * 8 < 8 ? n - jb * 8 : 8;
            memcpy(row + jb * 8, &sc[jb], (size_t)cnt * sizeof(T));
            int t = 0;
            for (; t + 2 <= cnt; t += 2) {
                acc0 += sc[jb][t] * vp[jb * 8 + t];
                acc1 += sc[jb][t + 1] * vp[jb * 8 + t + 1];
            }
            if (t < cnt)
                acc0 += sc[jb][t] * vp[jb * 8 + t];
        }
        acc0 += acc1;
        memcpy(o + (long)i * lo, &acc0, (size_t)D * sizeof(T));
    }
}

void P(attention_forward)(T *O, T *P, const T *QKV, const int *len, int B, int Tlen, int H, int D)
{
    const int A = H * D, ld = 3 * A;
    const T scale = (T)(1.0 / sqrt((double)D));
    for (int b = 0; b < B; b++) {
        const int n = len[b];
        for (int t = n; t < Tlen; t++)
            memset(O + ((long)b * Tlen + t) * A, 0, (size_t)A * sizeof(T));
        for (int h = 0; h < H; h++) {
            const T *q = QKV + (long)b * Tlen * ld + (long)h * D;
            const T *k = q + A, *v = q + 2 * A;
            T *p = P + ((long)b * H + h) * Tlen * Tlen;
            if (D <= 8 && n <= 64) { /* narrow heads: vector loops, no product calls */
                S(attention_head_direct)(O + (long)b * Tlen * A + (long)h * D, A, p, Tlen, q, k,
                                         v, ld, scale, n, D);
                continue;
            }
            S(gyro_blas_gemm)(p, q, k, 0, 1, scale, (T)0, n, n, D, ld, ld, Tlen);
            for (int i = 0; i < n; i++) {
                T *row = p + (long)i * Tlen;
                T mx = row[0];
                for (int j = 1; j < n; j++)
                    if (row[j] > mx)
                        mx = row[j];
                double sum = 0.0;
                for (int j = 0; j < n; j++) {
                    row[j] = EXP(row[j] - mx);
                    sum += row[j];
                }
                T inv = (T)(1.0 / sum);
                for (int j = 0; j < n; j++)
                    row[j] *= inv;
            }
            S(gyro_blas_gemm)(O + (long)b * Tlen * A + (long)h * D, p, v, 0, 0, (T)1, (T)0, n, D, n,
                              Tlen, ld, A);
        }
    }
}

/* The softmax tail shared by attention_lanes and attention_infer_hl (8 heads in the lanes):
 * sc[j] ← exp(sc[j] − mx) for the n keys (the vector exp), the exps summed in double per key
 * index mod 8 and then in attention_head_direct's fixed tree; *inv ← 1/Σ per lane. sc (n)
 * vectors, written in place. (Pointers, not vector values: no vector crosses a call's ABI.) */
static inline void S(att_lanes_softmax)(S(att_v8) *inv, S(att_v8u) *sc, int n, const S(att_v8) *mx)
{
    S(att_v8d) tv[8] = {{0}}; /* tv[t]: Σ of the exps of keys j ≡ t (mod 8), per head */
    for (int j = 0; j < n; j++) {
        S(att_v8) e = sc[j] - *mx;
        S(kern_vexp8)(&e);
        sc[j] = e;
        tv[j % 8] += __builtin_convertvector(e, S(att_v8d));
    }
    const S(att_v8d) tot = ((tv[0] + tv[4]) + (tv[2] + tv[6])) +
                           ((tv[1] + tv[5]) + (tv[3] + tv[7]));
    const S(att_v8d) one = {1, 1, 1, 1, 1, 1, 1, 1};
    *inv = __builtin_convertvector(one / tot, S(att_v8));
}

/* One sequence of attention_infer with the heads in vector lanes: 8 heads per vector, so a
 * query's scores against key j are D lane-wise multiply-adds for 8 heads at once and no head
 * runs a loop of its own. Keys and values of a group of 8 heads are transposed once into
 * kT[j][d] (lane h: head 8g + h); a query is transposed into qT[d]. Every lane computes exactly
 * what attention_head_direct computes for its head, in the same order (scores summed over d
 * from 0, the running maximum, the vector exp, the exps summed in double per key index mod 8
 * and then in attention_head_direct's fixed tree, the outputs summed over even and odd keys
 * separately), so the two agree bit for bit. o (n, A) row stride lo; qkv (n, 3A) row stride
 * ld; n <= 64, D <= 8. */
static void S(attention_lanes)(T *o, int lo, const T *qkv, int ld, T scale, int n, int H, int D)
{
    const int A = H * D;
    S(att_v8) kT[64][8], vT[64][8], sc[64]; /* [key][d], lanes = heads; scores of one query */
    for (int g = 0; g < H; g += 8) {
        const int hn = H - g < 8 ? H - g : 8;
        for (int j = 0; j < n; j++) {
            const T *kj = qkv + (long)j * ld + A + (long)g * D, *vj = kj + A;
            for (int d = 0; d < D; d++) {
                kT[j][d] = vT[j][d] = (S(att_v8)){0};
                for (int h = 0; h < hn; h++) {
                    kT[j][d][h] = kj[h * D + d];
                    vT[j][d][h] = vj[h * D + d];
                }
            }
        }
        for (int i = 0; i < n; i++) {
            const T *qi = qkv + (long)i * ld + (long)g * D;
            S(att_v8) qT[8];
            for (int d = 0; d < D; d++) {
                qT[d] = (S(att_v8)){0};
                for (int h = 0; h < hn; h++)
                    qT[d][h] = qi[h * D + d];
            }
            S(att_v8) mx = {0};
            for (int j = 0; j < n; j++) {
                S(att_v8) sv = {0};
                for (int d = 0; d < D; d++)
                    sv += qT[d] * kT[j][d];
                sc[j] = sv * scale;
                if (j == 0) {
                    mx = sc[0];
                } else { /* mx ← sc[j] where sc[j] > mx */
                    const S(att_v8i) up = sc[j] > mx;
                    mx = (S(att_v8))(((S(att_v8i))sc[j] & up) | ((S(att_v8i))mx & ~up));
                }
            }
            S(att_v8) inv;
            S(att_lanes_softmax)(&inv, (S(att_v8u) *)sc, n, &mx);
            S(att_v8) acc0[8], acc1[8];
            for (int d = 0; d < D; d++)
                acc0[d] = acc1[d] = (S(att_v8)){0};
            for (int j = 0; j < n; j++) {
                const S(att_v8) pj = sc[j] * inv;
                if (j % 2 == 0)
                    for (int d = 0; d < D; d++)
                        acc0[d] += pj * vT[j][d];
                else
                    for (int d = 0; d < D; d++)
                        acc1[d] += pj * vT[j][d];
            }
            T *oi = o + (long)i * lo + (long)g * D;
            for (int d = 0; d < D; d++) {
                const S(att_v8) od = acc0[d] + acc1[d];
                for (int h = 0; h < hn; h++)
                    oi[h * D + d] = od[h];
            }
        }
    }
}

void P(attention_infer)(T *O, T *P, const T *QKV, const int *len, int B, int Tlen, int H, int D)
{
    const int A = H * D, ld = 3 * A;
    const T scale = (T)(1.0 / sqrt((double)D));
    for (int b = 0; b < B; b++) {
        const int n = len[b];
        T *ob = O + (long)b * Tlen * A;
        const T *qb = QKV + (long)b * Tlen * ld;
        if (D > 8 || n > 64) { /* wide heads, long inputs: the per-head kernel */
            P(attention_forward)(ob, P + (long)b * H * Tlen * Tlen, qb, &len[b], 1, Tlen, H, D);
            continue;
        }
        if (n < Tlen)
            memset(ob + (long)n * A, 0, (size_t)(Tlen - n) * A * sizeof(T));
        S(attention_lanes)(ob, A, qb, ld, scale, n, H, D);
    }
}

#if VMATH
/* gyro_attention_infer_hl_f32 (kernels.h): attention_lanes on q|k|v rows already laid out with
 * the heads in lanes (gyro_qkv_lanes_row), so no head is transposed in: a query's qT[d] and a
 * key's kT[d] are 8 consecutive floats of its row. The scores of one query live in S. */
void P(attention_infer_hl)(T *O, T *Sc, const T *QKV, const int *len, int B, int Tlen, int H,
                           int D)
{
    typedef S(att_v8u) v8u;
    const int A = H * D, ld = 3 * A;
    const T scale = (T)(1.0 / sqrt((double)D));
    for (int b = 0; b < B; b++) {
        const int n = len[b];
        T *ob = O + (long)b * Tlen * A;
        const T *qb = QKV + (long)b * Tlen * ld;
        v8u *sc = (v8u *)(void *)(Sc + (long)b * H * Tlen * Tlen); /* n vectors */
        if (n < Tlen)
            memset(ob + (long)n * A, 0, (size_t)(Tlen - n) * A * sizeof(T));
        for (int g = 0; g < H; g += 8) {
            const long go = (long)g * D; /* the group's 8·D values: [d][head] */
            for (int i = 0; i < n; i++) {
                const v8u *qT = (const v8u *)(const void *)(qb + (long)i * ld + go);
                S(att_v8) mx = {0};
                for (int j = 0; j < n; j++) {
                    const v8u *kT = (const v8u *)(const void *)(qb + (long)j * ld + A + go);
                    S(att_v8) sv = {0};
                    for (int d = 0; d < D; d++)
                        sv += qT[d] * kT[d];
                    const S(att_v8) s1 = sv * scale;
                    sc[j] = s1;
                    if (j == 0) {
                        mx = s1;
                    } else { /* mx ← s1 where s1 > mx */
                        const S(att_v8i) up = s1 > mx;
                        mx = (S(att_v8))(((S(att_v8i))s1 & up) | ((S(att_v8i))mx & ~up));
                    }
                }
                S(att_v8) inv;
                S(att_lanes_softmax)(&inv, sc, n, &mx);
                S(att_v8) acc0[8], acc1[8];
                for (int d = 0; d < D; d++)
                    acc0[d] = acc1[d] = (S(att_v8)){0};
                for (int j = 0; j < n; j++) {
                    const S(att_v8) pj = sc[j] * inv;
                    const v8u *vT = (const v8u *)(const void *)(qb + (long)j * ld + 2 * A + go);
                    if (j % 2 == 0)
                        for (int d = 0; d < D; d++)
                            acc0[d] += pj * vT[d];
                    else
                        for (int d = 0; d < D; d++)
                            acc1[d] += pj * vT[d];
                }
                T *oi = ob + (long)i * A + go;
                for (int d = 0; d < D; d++) {
                    const S(att_v8) od = acc0[d] + acc1[d];
                    for (int h = 0; h < 8; h++)
                        oi[h * D + d] = od[h];
                }
            }
        }
    }
}
#endif

/* One head of attention_backward for a narrow head (D <= 8) and n <= 64 tokens, on 8-lane
 * vectors like attention_head_direct instead of four product calls (whose call overhead
 * dominates at these sizes): the head's values transposed once (vt[d][jb], 8 keys per
 * vector) and its q, k, dO rows padded to 8 lanes. Per query row i:
 *   dP_i = dO_i Vᵀ (D vector multiply-adds over vt),  dS_i = P_i ⊙ (dP_i − <P_i, dP_i>)
 *   (the softmax VJP; the dot product in double), dQ_i += s Σ_j dS_ij k_j,
 *   dK_j += s dS_ij q_i, dV_j += P_ij dO_i   (s = 1/√D)
 * with dK, dV accumulated over the rows in padded vectors and added once at the end.
 * q, k, v, dq, dk, dv rows of stride ld; p (n, n) row stride lp; dout rows of stride lo. */
static void S(attention_head_backward_direct)(T *dq, T *dk, T *dv, const T *q, const T *k,
                                              const T *v, int ld, const T *p, int lp,
                                              const T *dout, int lo, T scale, int n, int D)
{
    S(att_v8) vt[8][8], qp[64], kp[64], gp[64], dka[64], dva[64];
    const int nb = (n + 7) / 8;
    for (int d = 0; d < D; d++)
        for (int jb = 0; jb < nb; jb++)
            vt[d][jb] = (S(att_v8)){0};
    for (int j = 0; j < n; j++) {
        qp[j] = kp[j] = gp[j] = dka[j] = dva[j] = (S(att_v8)){0};
        for (int d = 0; d < D; d++) {
            qp[j][d] = q[(long)j * ld + d];
            kp[j][d] = k[(long)j * ld + d];
            gp[j][d] = dout[(long)j * lo + d];
            vt[d][j / 8][j % 8] = v[(long)j * ld + d];
        }
    }
    for (int i = 0; i < n; i++) {
        const T *pr = p + (long)i * lp;
        S(att_v8) pv[8], dpv[8];
        S(att_v8d) tv = {0};
        for (int jb = 0; jb < nb; jb++) {
            const int cnt = n - jb * 8 < 8 ? n - jb * 8 : 8;
            S(att_v8) sv = {0}, pb = {0};
            for (int d = 0; d < D; d++)
                sv += gp[i][d] * vt[d][jb];
            memcpy(&pb, pr + jb * 8, (size_t)cnt * sizeof(T)); /* lanes past n stay 0 */
            pv[jb] = pb;
            dpv[jb] = sv;
            tv += __builtin_convertvector(pb, S(att_v8d)) * __builtin_convertvector(sv, S(att_v8d));
        }
        const double dot = ((tv[0] + tv[4]) + (tv[2] + tv[6])) + ((tv[1] + tv[5]) + (tv[3] + tv[7]));
        S(att_v8) acc = {0};
        for (int jb = 0; jb < nb; jb++) {
            const int cnt = n - jb * 8 < 8 ? n - jb * 8 : 8;
            const S(att_v8) ds = pv[jb] * (dpv[jb] - (T)dot);
            for (int t = 0; t < cnt; t++) {
                const int j = jb * 8 + t;
                acc += ds[t] * kp[j];
                dka[j] += ds[t] * qp[i];
                dva[j] += pv[jb][t] * gp[i];
            }
        }
        for (int d = 0; d < D; d++)
            dq[(long)i * ld + d] += scale * acc[d];
    }
    for (int j = 0; j < n; j++)
        for (int d = 0; d < D; d++) {
            dk[(long)j * ld + d] += scale * dka[j][d];
            dv[(long)j * ld + d] += dva[j][d];
        }
}

void P(attention_backward)(T *dQKV, T *scratch, const T *dO, const T *QKV, const T *P,
                           const int *len, int B, int Tlen, int H, int D)
{
    const int A = H * D, ld = 3 * A;
    const T scale = (T)(1.0 / sqrt((double)D));
    for (int b = 0; b < B; b++) {
        const int n = len[b];
        if (b + 1 < B) { /* the next sequence's rows, which the heads visit in strided slices */
            const long r0 = (long)(b + 1) * Tlen, nr = len[b + 1];
            const long w = (long)ld * (long)sizeof(T);
            for (long r = r0; r < r0 + nr; r++)
                for (long o = 0; o < w; o += 64) {
                    __builtin_prefetch((const char *)(QKV + r * ld) + o, 0);
                    __builtin_prefetch((const char *)(dQKV + r * ld) + o, 1);
                }
        }
        for (int h = 0; h < H; h++) {
            const long off = (long)b * Tlen * ld + (long)h * D;
            const T *q = QKV + off, *k = q + A, *v = q + 2 * A;
            T *dq = dQKV + off, *dk = dq + A, *dv = dq + 2 * A;
            const T *p = P + ((long)b * H + h) * Tlen * Tlen;
            const T *dout = dO + (long)b * Tlen * A + (long)h * D;
            if (D <= 8 && n <= 64) { /* narrow heads: vector loops, no product calls */
#if KERN_ATT_AVX2
                if (sizeof(T) == sizeof(float)) { /* float32: the AVX2 version (kernels.c) */
                    kern_att_bwd_avx2((float *)(void *)dq, (float *)(void *)dk,
                                      (float *)(void *)dv, (const float *)(const void *)q,
                                      (const float *)(const void *)k,
                                      (const float *)(const void *)v, ld,
                                      (const float *)(const void *)p, Tlen,
                                      (const float *)(const void *)dout, A, (float)scale, n, D);
                    continue;
                }
#endif
                S(attention_head_backward_direct)(dq, dk, dv, q, k, v, ld, p, Tlen, dout, A, scale,
                                                  n, D);
                continue;
            }
            T *dp = scratch; /* (n, n) with ld Tlen */
            /* dP = dO Vᵀ */
            S(gyro_blas_gemm)(dp, dout, v, 0, 1, (T)1, (T)0, n, n, D, A, ld, Tlen);
            /* dV += Pᵀ dO */
            S(gyro_blas_gemm)(dv, p, dout, 1, 0, (T)1, (T)1, n, D, n, Tlen, A, ld);
            for (int i = 0; i < n; i++) { /* softmax VJP */
                const T *pr = p + (long)i * Tlen;
                T *dr = dp + (long)i * Tlen;
                double dot = 0.0;
                for (int j = 0; j < n; j++)
                    dot += (double)pr[j] * dr[j];
                for (int j = 0; j < n; j++)
                    dr[j] = (T)(pr[j] * (dr[j] - dot));
            }
            /* dQ += s dS K */
            S(gyro_blas_gemm)(dq, dp, k, 0, 0, scale, (T)1, n, D, n, Tlen, ld, ld);
            /* dK += s dSᵀ Q */
            S(gyro_blas_gemm)(dk, dp, q, 1, 0, scale, (T)1, n, D, n, Tlen, ld, ld);
        }
    }
}

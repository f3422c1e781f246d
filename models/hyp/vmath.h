/* vmath.h — float32 transcendental functions of the hyperbolic maps over arrays, vectorised.
 *
 * The coefficients of the Poincaré maps are ratios tanh(t)/t and artanh(t)/t of a norm t
 * (exp_0 and log_0 at the origin, Ganea et al. 2018, Lemma 2: exp_0(v) = tanh(√c|v|) v/(√c|v|),
 * log_0(y) = artanh(√c|y|) y/(√c|y|)). The inference kernels need one per row or per head; libm
 * evaluates them one scalar at a time in float64. These evaluate 8 lanes at once in float32 with
 * GCC vector extensions (AVX2 under the default -march=x86-64-v3; SSE pairs on plain x86-64),
 * from Cephes' float32 kernels (S. Moshier, Cephes Math Library 2.2):
 *   exp(x), x ≤ 0:  x = n ln2 + r (ln 2 in two parts), e^r by a degree-6 polynomial, 2^n by the
 *                   exponent bits; below −87 → 0
 *   log(x), x > 0:  x = m 2^e with m ∈ [√½, √2), log(m) = f − f²/2 + f³ P(f), f = m − 1
 *   tanh(t)/t:      t < 0.625: 1 + z P(z), z = t² (Cephes tanhf's minimax polynomial);
 *                   else (1 − e)/(1 + e)/t with e = exp(−2t) ≤ e^{-1.25} (no overflow, no
 *                   cancellation worse than 1 − 0.29)
 *   artanh(t)/t:    t < 0.5: Σ_{k≤11} z^k/(2k+1) (the Taylor series; the first omitted term
 *                   is < 1e-8); else ½ log((1+t)/(1−t))/t (1 − t exact for t ≥ ½)
 * Maximum errors against libm's float64 results over the whole float32 range are measured and
 * stated by tests/check_vmath.c. No -ffast-math: NaN inputs give NaN outputs, and the results
 * are the same on every build (no FMA contraction is relied on).
 *
 * All functions take n ≥ 0 values; out may equal the input array (in place), other overlaps are
 * not allowed. No allocation, no error status (every input has a defined output).
 */
#ifndef GYRO_HYP_VMATH_H
#define GYRO_HYP_VMATH_H

/* out[i] = tanh(|t_i|)/|t_i| (even; 1 at 0, 0 at ±∞, NaN for NaN). Within 4 float32 ulp. */
void gyro_vtanhc_f32(float *out, const float *t, int n);

/* out[i] = artanh(min(|t_i|, max))/|t_i| (even; 1 at 0, NaN for NaN), max in (0, 1), e.g.
 * GYRO_HYP_ARTANH_MAX_F32 (models/hyp/hyp_consts.h): the clamp keeps points on the ball's
 * boundary finite, as gyro_hyp_artanhc does. Within 4 float32 ulp for |t| ≤ max. */
void gyro_vartanhc_f32(float *out, const float *t, float max, int n);

/* out[i] = tanh(x_i) (odd, ±1 at ±∞, NaN for NaN), as x·tanhc(x). */
void gyro_vtanh_f32(float *out, const float *x, int n);

/* out[i] = artanh(x_i clamped to [−max, max]) (odd, NaN for NaN), as x·artanhc(x) — at the
 * clamp the sign-preserving artanh(±max). */
void gyro_vartanh_f32(float *out, const float *x, float max, int n);

#endif

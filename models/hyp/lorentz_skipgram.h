/* lorentz_skipgram.h — the fused Riemannian skip-gram update on the hyperboloid (curvature −1,
 * time first), for trainers that keep their points in padded, aligned rows (char2vec).
 *
 * The op is gyro_lorentz_skipgram_term (lorentz.h) fed to gyro_lorentz_rsgd_step, written in
 * closed form for the specific gradient of the skip-gram loss
 *     ℓ = −log σ(±(⟨u,v⟩_L + θ))       (Leimeister & Wilson 2018, "Skip-gram word embeddings in
 *                                        hyperbolic space"; seed §4.1 and appendix B)
 * so that one target costs two passes over a row instead of six. With s = ⟨u,v⟩_L and
 * g = y − σ(s + θ) (the derivative of the log-likelihood with respect to s; y the label):
 *   target v (a context or negative row, Nickel & Kiela 2018, "Learning Continuous Hierarchies
 *   in the Lorentz Model", §3 and eq. 9):
 *     Minkowski gradient of the log-likelihood with respect to v: g·u;
 *     tangent step p = lr·g·proj_v(u) = a(u + s v), a = lr·g, of Lorentz norm
 *       ⟨p,p⟩_L = a²(⟨u,u⟩_L + 2s⟨u,v⟩_L + s²⟨v,v⟩_L) = a²(s² − 1);
 *     clip |p|_L to max_step (scale a), then exp_v(p) = cosh|p| v + (sinh|p|/|p|) p
 *       = (cosh|p| + sinhc|p|·a·s) v + (sinhc|p|·a) u;
 *     re-project v₀ := √(1 + |v_s|²). The centre's ascent direction accumulates h += g·v_old
 *     (h = −J ∂ℓ/∂u, J = diag(−1, 1, …, 1)).
 *   centre u, once all targets of a pair are done, with q = ⟨u,h⟩_L:
 *     p = lr·proj_u(h) = lr(h + q u), ⟨p,p⟩_L = lr²(⟨h,h⟩_L + q²), clip, exp map
 *       u ← (cosh|p| + sinhc|p|·lr·q) u + (sinhc|p|·lr) h, and re-projection.
 * The steps ASCEND the log-likelihood (descend ℓ), as rsgd_step with lr on ∂ℓ does.
 *
 * Rows: `row` entries, a multiple of 16, aligned to 64 bytes, entries past the used n+1 zero
 * (the ops keep them zero). Sums (inner products, squared norms) accumulate in double lanes; the
 * row arithmetic runs in the storage precision. cosh/sinh come from gyro_hyp_cosh_sinhc with
 * the clamps GYRO_HYP_COSH_MAX_* of hyp_consts.h (unlike rsgd_step's, the clamp does not shrink
 * with x₀: the step is clipped to max_step anyway). No allocation, no I/O, no NULL arguments;
 * h, u and v are three distinct rows (restrict). Both precisions come from one template
 * (lorentz_skipgram_impl.h) as static inline functions: they sit in a trainer's innermost loop.
 */
#ifndef GYRO_HYP_LORENTZ_SKIPGRAM_H
#define GYRO_HYP_LORENTZ_SKIPGRAM_H

#include <math.h>
#include <stddef.h>

#include "models/hyp/hyp_consts.h"

/* 4-lane vectors of the padded-row kernels (GCC/Clang vector extensions). */
typedef float gyro_hyp_v4f __attribute__((vector_size(16)));
typedef double gyro_hyp_v4d __attribute__((vector_size(32)));

static inline double gyro_hyp_v4d_hsum(gyro_hyp_v4d a)
{
    return (a[0] + a[1]) + (a[2] + a[3]);
}

/* cosh t and sinh(t)/t for a step length t ≥ 0 of the skip-gram updates: their Taylor series
 *     cosh t = Σ_k t^{2k}/(2k)!,   sinh(t)/t = Σ_k t^{2k}/(2k+1)!,   k = 0..8,
 * for t ≤ GYRO_LORENTZ_STEP_SERIES_T, where the first omitted terms (t^18/18!, t^18/19!) are
 * below 2e-16 of the sums (every term is positive: no cancellation), so the values agree with
 * gyro_hyp_cosh_sinhc to a few ulp; beyond it gyro_hyp_cosh_sinhc (libm's sinh, t clamped to
 * cmax). A clipped step (max_step 1, the default) never leaves the series, so the row steps of
 * the window update (embeddings/sgns_batch.c) call no libm function but sqrt. */
#define GYRO_LORENTZ_STEP_SERIES_T 1.0
static inline __attribute__((always_inline)) void gyro_lorentz_step_cosh_sinhc(double t, double cmax, double *ch, double *shc)
{
    if (!(t <= GYRO_LORENTZ_STEP_SERIES_T)) {
        gyro_hyp_cosh_sinhc(t, cmax, ch, shc);
        return;
    }
    /* Estrin's scheme (pairs, then z², z⁴, z⁸) instead of Horner: the same terms with a
     * dependency chain of about 5 operations instead of 16 */
    double z = t * t, z2 = z * z, z4 = z2 * z2, z8 = z4 * z4;
    *ch = ((1.0 + z * (1.0 / 2)) + z2 * (1.0 / 24 + z * (1.0 / 720))) +
          z4 * ((1.0 / 40320 + z * (1.0 / 3628800)) + z2 * (1.0 / 479001600 + z * (1.0 / 87178291200.0))) +
          z8 * (1.0 / 20922789888000.0);
    *shc = ((1.0 + z * (1.0 / 6)) + z2 * (1.0 / 120 + z * (1.0 / 5040))) +
           z4 * ((1.0 / 362880 + z * (1.0 / 39916800)) + z2 * (1.0 / 6227020800.0 + z * (1.0 / 1307674368000.0))) +
           z8 * (1.0 / 355687428096000.0);
}

/* The functions below, each in _f32 (float rows) and _f64 (double rows):
 *
 * double gyro_lorentz_padded_dot_f32(const float *x, const float *y, int row);
 *     Σᵢ xᵢyᵢ over a padded row, in double.
 * double gyro_lorentz_padded_inner_f32(const float *x, const float *y, int row);
 *     ⟨x,y⟩_L = −x₀y₀ + Σᵢ xᵢyᵢ over a padded row, in double.
 * float gyro_lorentz_skipgram_step_target_f32(float *h, float *v, const float *u, double s,
 *                                             double g, double lr, double max_step, int row);
 *     h += g·v_old; v ← exp_v(clip(lr·g·proj_v u)) re-projected (see above). s = ⟨u,v⟩_L as
 *     computed by the caller, g = label − σ(s + θ). max_step ≤ 0 disables the clipping.
 *     Returns the new v₀: not finite (or huge) if the row blew up — the caller decides.
 * float gyro_lorentz_skipgram_step_centre_f32(float *u, const float *h, double lr,
 *                                             double max_step, int row);
 *     u ← exp_u(clip(lr·proj_u h)) re-projected, h the sum of the target calls. Returns the
 *     new u₀ (same convention).
 * float gyro_lorentz_axpby_reproject_f32(float *x, const float *y, double alpha, double beta,
 *                                        int row);
 *     x ← alpha·x + beta·y over the row, then x₀ := √(1 + |x_s|²); returns the new x₀.
 */
#define T float
#define VT gyro_hyp_v4f
#define L(name) gyro_lorentz_##name##_f32
#define COSH_MAX GYRO_HYP_COSH_MAX_F32
#include "models/hyp/lorentz_skipgram_impl.h"
#undef T
#undef VT
#undef L
#undef COSH_MAX

#define T double
#define VT gyro_hyp_v4d
#define L(name) gyro_lorentz_##name##_f64
#define COSH_MAX GYRO_HYP_COSH_MAX_F64
#include "models/hyp/lorentz_skipgram_impl.h"
#undef T
#undef VT
#undef L
#undef COSH_MAX

#endif

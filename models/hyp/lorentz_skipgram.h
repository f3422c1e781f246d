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

/* optim.h — optimizers for models whose parameters live on different manifolds, and the SGDR
 * learning-rate schedule.
 *
 * A model hands the optimizer a table of tensors, each tagged with its manifold (like geoopt's
 * ManifoldParameter): Euclidean tensors are updated with RMSProp, Adam or plain SGD; tensors
 * whose rows are points of the Poincaré ball (curvature −c) are updated row by row with
 * Riemannian SGD (Bonnabel 2013; Nickel & Kiela 2017):
 *     g_R = ((1 − c|x|²)² / 4) · ∇E                (egrad2rgrad, conformal factor λ_x = 2/(1−c|x|²))
 *     x  ← proj(exp_x(−η g_R))                    (Ganea et al. 2018, eq. 8 exponential map)
 * with the tangent step's Riemannian norm clipped to `ball_max_step`. Tensors whose rows are
 * points of the hyperboloid of curvature −c (time first) get Riemannian SGD there with the same
 * learning rate and clip (Nickel & Kiela 2018, §3; models/hyp/lorentz.h):
 *     g_R = proj_x(J ∇E) = J∇E + c⟨x, J∇E⟩_L x,   x ← reproject(exp_x(−η g_R)),
 * evaluated on the unit hyperboloid through y = √c·x (gyro_lorentz_rsgd_step_f32 on y with the
 * gradient ∇E·√c: the same step, since proj and exp commute with the scaling), then x = y/√c;
 * the re-projection x₀ = √(1/c + |x_s|²) keeps every row on the manifold. With ball_kind =
 * GYRO_OPTIM_BALL_RADAM the hyperboloid rows get Riemannian Adam instead (formula below). The ball math comes from
 * models/hyp/poincare.h. The seed trains kernels with RMSProp (lr 1e-3) and hyperbolic biases
 * with RSGD (lr 0.05); both learning rates are scaled by the same schedule factor.
 *
 * Optimizer state (first/second moments) is one contiguous block; a step allocates nothing.
 * Before updating, a step measures the global gradient norm in double precision: a NaN or Inf
 * stops with GYRO_ERR_NAN and leaves every parameter unchanged; with clip_norm > 0 the gradient
 * is scaled so its global norm is at most clip_norm.
 *
 * SGDR (Loshchilov & Hutter 2017): within a cycle of length T_i epochs,
 *     η_t = η_min + ½ (η_max − η_min)(1 + cos(π T_cur / T_i)),
 * then a warm restart with T_{i+1} = T_mult · T_i. gyro_sgdr_factor returns η_t / η_max.
 */
#ifndef GYRO_MODELS_OPTIM_H
#define GYRO_MODELS_OPTIM_H

#include <stddef.h>
#include <stdint.h>

#include "models/core/status.h"

typedef enum gyro_optim_manifold {
    GYRO_OPTIM_MANIFOLD_EUCLIDEAN = 0,
    GYRO_OPTIM_MANIFOLD_POINCARE = 1,  /* each row of `cols` floats is a point of the ball */
    GYRO_OPTIM_MANIFOLD_LORENTZ = 2,   /* each row of `cols` = n+1 floats (time first) is a point
                                        * of the hyperboloid ⟨x,x⟩_L = −1/c */
} gyro_optim_manifold;

/* One parameter tensor as the optimizer sees it. Pointers are borrowed from the model. */
typedef struct gyro_optim_tensor {
    const char *name;
    float *w;                      /* (rows, cols) parameters */
    float *g;                      /* (rows, cols) gradients of the loss */
    size_t rows, cols;
    gyro_optim_manifold manifold;
    float c;                       /* curvature c > 0 of POINCARE and LORENTZ tensors */
    int frozen;                    /* 1: never updated (e.g. a frozen embedding table) */
} gyro_optim_tensor;

typedef enum gyro_optim_kind {
    GYRO_OPTIM_RMSPROP = 0,        /* v ← ρv + (1−ρ)g²; w ← w − η g/(√v + ε)  (Tieleman & Hinton) */
    GYRO_OPTIM_ADAM = 1,           /* Kingma & Ba 2015, bias-corrected */
    GYRO_OPTIM_SGD = 2,
} gyro_optim_kind;

/* Optimizer of Poincaré-ball tensors. */
typedef enum gyro_optim_ball_kind {
    GYRO_OPTIM_BALL_RSGD = 0,      /* Riemannian SGD, x ← proj(exp_x(−η g_R)) (Bonnabel 2013) */
    /* Riemannian Adam (Bécigneul & Ganea 2019, as geoopt's RiemannianAdam on PoincareBall),
     * per row x with g_R = ((1−c|x|²)²/4)·∇E:
     *   m ← β1 m + (1−β1) g_R              (a tangent vector at x)
     *   v ← β2 v + (1−β2) λ_x²|g_R|²       (one scalar per row: the metric's ⟨g_R, g_R⟩_x)
     *   y = proj(x − η (m/(1−β1ᵗ)) / (√(v/(1−β2ᵗ)) + ε))   (geoopt's retraction x + u)
     *   m ← P_{x→y}(m) = (λ_x/λ_y) gyr[y, −x] m          (parallel transport, Ungar 2008)
     * with η = ball_lr · schedule factor and ε = eps; the step's Riemannian norm is clipped to
     * ball_max_step as for RSGD. Rows with a zero gradient and a zero first moment (embedding
     * rows never seen yet) are skipped. */
    /* The same kind selects Riemannian Adam for hyperboloid (LORENTZ) tensors: Bécigneul & Ganea
     * 2019, Algorithm 1, on the hyperboloid ⟨x,x⟩_L = −1/c (time first; the form of geoopt's
     * RiemannianAdam on its Lorentz manifold: second moment from the metric, exp map as the
     * retraction, the first moment moved by parallel transport). Per row x, in double:
     *   g_R = proj_x(J∇E) = J∇E + c⟨x, J∇E⟩_L x        (J = diag(−1, 1, …, 1); a tangent vector)
     *   m ← β1 m + (1−β1) g_R                          (a tangent vector at x)
     *   v ← β2 v + (1−β2) ⟨g_R, g_R⟩_L                 (one scalar per row: the metric's |g_R|²)
     *   u = −η (m/(1−β1ᵗ)) / (√(v/(1−β2ᵗ)) + ε),  |u|_L = √⟨u,u⟩_L clipped to ball_max_step
     *   y = exp_x(u) = cosh(√c|u|_L) x + sinh(√c|u|_L) u/(√c|u|_L),   y₀ := √(1/c + |y_s|²)
     *   m ← P_{x→y}(m) = m + c⟨y,m⟩_L/(1 − c⟨x,y⟩_L) · (x + y),  then m ← proj_y(m)
     * (the parallel transport along the geodesic, Nickel & Kiela 2018 / geoopt's Lorentz.transp
     * at curvature −c; the last projection only removes rounding). The state is m (rows, cols)
     * then v (rows). Rows with a zero gradient and a zero first moment are skipped. */
    GYRO_OPTIM_BALL_RADAM = 1,
} gyro_optim_ball_kind;

typedef struct gyro_optim_config {
    gyro_optim_kind kind;          /* for Euclidean tensors */
    double lr;                     /* Euclidean learning rate (η_max of the schedule) */
    double rho;                    /* RMSProp decay (0.9) */
    double beta1, beta2;           /* Adam (0.9, 0.999) */
    double eps;                    /* 1e-8 (Adam), 1e-7 (RMSProp, as Keras) */
    double weight_decay;           /* decoupled L2 on Euclidean tensors (0 = none) */
    double ball_lr;                /* RSGD learning rate for Poincaré and hyperboloid tensors */
    double ball_max_step;          /* clip of the Riemannian tangent step norm (0 = none) */
    double clip_norm;              /* global gradient-norm clip (0 = none) */
    gyro_optim_ball_kind ball_kind; /* Poincaré and hyperboloid tensors: RSGD (default) or
                                     * Riemannian Adam */
} gyro_optim_config;

/* Defaults of the seed: RMSProp lr 1e-3, ρ 0.9, ε 1e-7; RSGD lr 0.05, step clip 1.0; no clip. */
gyro_optim_config gyro_optim_config_default(void);

typedef struct gyro_optim {
    gyro_optim_config cfg;
    gyro_optim_tensor *tensors;    /* (n_tensors) copied descriptors */
    int n_tensors;
    float *state;                  /* moments per tensor: Euclidean m then v (2·rows·cols);
                                    * ball or hyperboloid with Riemannian Adam m (rows·cols)
                                    * then v (rows) */
    size_t *offset;                /* (n_tensors) start of each tensor's moments in state */
    uint64_t steps;
    double last_grad_norm;         /* global gradient norm before clipping, of the last step */
} gyro_optim;

/* Set up an optimizer over `n` tensors (descriptors are copied; the float buffers are borrowed
 * and must outlive the optimizer). Errors: GYRO_ERR_USAGE (bad config, NULL buffer, c <= 0 on a
 * ball tensor), GYRO_ERR_NOMEM. On error the optimizer owns nothing. */
gyro_status gyro_optim_init(gyro_optim *o, const gyro_optim_config *cfg,
                            const gyro_optim_tensor *tensors, int n);

/* Free the state. NULL-safe; the struct may be initialised again. */
void gyro_optim_free(gyro_optim *o);

/* Set every gradient to zero. */
void gyro_optim_zero_grad(gyro_optim *o);

/* One update of every non-frozen tensor with learning rates scaled by `lr_factor` (the schedule).
 * Gradients are read, not cleared. Returns GYRO_ERR_NAN (nothing updated, message names the
 * first non-finite tensor) when a gradient holds NaN/Inf. */
gyro_status gyro_optim_step(gyro_optim *o, double lr_factor);

/* ---- SGDR ------------------------------------------------------------------------------------ */

typedef struct gyro_sgdr {
    double t0;                     /* first cycle length in epochs (> 0); 0 disables restarts */
    double t_mult;                 /* cycle growth factor (>= 1) */
    double min_factor;             /* η_min / η_max */
} gyro_sgdr;

/* The factor η_t/η_max at fractional epoch `epoch` (>= 0). With t0 = 0 returns 1 (constant).
 * *cycle (may be NULL) receives the index of the current cycle (0 before the first restart). */
double gyro_sgdr_factor(const gyro_sgdr *s, double epoch, int *cycle);

#endif

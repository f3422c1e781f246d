/* moe.h — mixture-of-experts feed-forward (DeepSeekMoE): always-on shared experts plus routed
 * experts chosen per token by top-k gating, with the expert-level balance loss; Euclidean, or
 * hyperbolic on the Poincaré ball.
 *
 * Seed rl-hyperbolic-transformer-grpo eq. 25b–27 (after DeepSeekMoE), per token u:
 *   s_i = softmax_i(u·e_i)                    affinity to the centroid e_i of routed expert i (27)
 *   g_i = s_i if s_i ∈ TopK({s_j}, K) else 0  (no renormalisation, as in DeepSeek-V2)        (26)
 *   y   = Σ_{shared} FFN_j(u) + Σ_i g_i FFN_i(u)                                           (25b)
 *   FFN(u) = W2 GELU(W1 u + b1) + b2          (GELU, tanh form: smooth, so FD checks are exact)
 * The residual term u of eq. 25b is left to the caller (Euclidean +, or Möbius ⊕ in the ball).
 * Ties in the top-k go to the lower expert index.
 *
 * Hyperbolic (seed eq. 37–38): z = log_0(ũ); each active expert contributes the ball point
 * E_j = g_j ⊗ exp_0(FFN_j(z)) = exp_0(g_j FFN_j(z)) (Möbius scalar multiplication of a point
 * exp_0(v) by r is exp_0(r v)); the output is the Möbius sum, folded left in a fixed order
 * (shared experts, then routed experts by index): ỹ = ((E_1 ⊕ E_2) ⊕ …) ⊕ E_A. Shared experts
 * have gate 1.
 *
 * Expert-level balance loss (DeepSeekMoE): over the N tokens of a batch,
 *   L_bal = α Σ_i f_i P_i,  f_i = Nr/(K N) · #{tokens routed to i},  P_i = (1/N) Σ_t s_{i,t};
 * f is a count (no gradient); P carries the gradient to the router.
 *
 * Memory: parameters, activations (floats), routes (ints) and backward scratch are caller-owned
 * flat arrays sized by gyro_moe_layout_init; kernels never allocate. float32 and float64 come
 * from one implementation (moe_impl.h). The experts' matrix products go through gyro_blas_gemm_*
 * (models/core/blas.h): a shared expert multiplies all N tokens at once (strided into the
 * (N, A, ·) activations), a routed expert the rows of the tokens routed to it, gathered into
 * one block.
 */
#ifndef GYRO_LAYERS_MOE_H
#define GYRO_LAYERS_MOE_H

#include <stddef.h>

#include "models/core/rng.h"
#include "models/core/status.h"

#define GYRO_MOE_MAX_ROUTED 256 /* routed experts per layer, at most */

typedef struct gyro_moe_config {
    int d_model;      /* d */
    int d_ffn;        /* F: hidden width of every expert */
    int n_shared;     /* Ns ≥ 0 shared experts */
    int n_routed;     /* Nr ≥ 1 routed experts */
    int top_k;        /* K, 1 ≤ K ≤ Nr */
    int hyperbolic;   /* 1: inputs/outputs are Poincaré-ball points */
    double curvature; /* c > 0 (used when hyperbolic) */
} gyro_moe_config;

typedef struct gyro_moe_layout {
    /* parameters: experts 0 … Ns+Nr−1 (shared first), each {W1 (F,d), b1 (F), W2 (d,F), b2 (d)},
     * then the router centroids (Nr, d) */
    size_t expert_stride; /* elements per expert */
    size_t w1, b1, w2, b2; /* offsets inside an expert */
    size_t centroids;      /* (Nr, d) */
    size_t n_params;
    /* activations for N tokens, A = Ns + K active experts per token */
    size_t z;     /* (N, d)     tangent-space input (copy when Euclidean) */
    size_t probs; /* (N, Nr)    router probabilities s */
    size_t pre;   /* (N, A, F)  W1 z + b1 */
    size_t hid;   /* (N, A, F)  GELU(pre) */
    size_t y;     /* (N, A, d)  expert outputs FFN(z) */
    size_t e;     /* (N, A, d)  hyperbolic: E_j = exp_0(g_j y_j) */
    size_t s;     /* (N, A, d)  hyperbolic: partial Möbius sums S_j */
    size_t gather;/* (N, 2d + 2F) rows of one expert gathered for its matrix products */
    size_t n_acts;
    /* ints: route (N, K) routed expert indices, best first; then the (token·K + k) entries
     * grouped by expert (N·K); then Nr + 1 group offsets */
    size_t route_order, route_offsets;
    size_t n_route;
    size_t n_scratch;
} gyro_moe_layout;

/* Check a configuration; GYRO_ERR_USAGE naming the field otherwise. */
gyro_status gyro_moe_config_check(const gyro_moe_config *cfg);

/* Layout for batches of up to N tokens. cfg must pass the check. */
void gyro_moe_layout_init(gyro_moe_layout *lay, const gyro_moe_config *cfg, int N);

/* Initialise: W1, W2 ~ N(0, 1/fan_in) (W2 scaled by 1/2), biases 0, centroids N(0, 1/d). */
void gyro_moe_init_params_f32(float *params, const gyro_moe_config *cfg, gyro_rng *rng);
void gyro_moe_init_params_f64(double *params, const gyro_moe_config *cfg, gyro_rng *rng);

/* Forward over N tokens: in, out (N, d) (ball points when hyperbolic); acts (n_acts) and route
 * (n_route) are overwritten and are the cache of the backward pass. out may not alias in. */
void gyro_moe_forward_f32(float *out, float *acts, int *route, const float *in,
                          const float *params, const gyro_moe_config *cfg, int N);
void gyro_moe_forward_f64(double *out, double *acts, int *route, const double *in,
                          const double *params, const gyro_moe_config *cfg, int N);

/* The balance loss α Σ f_i P_i of the last forward pass (float64 whatever the precision); f
 * (Nr, may be NULL) receives the f_i. */
double gyro_moe_balance_loss_f32(double *f, const float *acts, const int *route,
                                 const gyro_moe_config *cfg, int N, double alpha);
double gyro_moe_balance_loss_f64(double *f, const double *acts, const int *route,
                                 const gyro_moe_config *cfg, int N, double alpha);

/* Backward: given dout (N, d), ACCUMULATE into din (N, d; may be NULL) and dparams, including
 * the gradient of the balance loss with factor alpha (0 leaves it out). scratch (n_scratch) is
 * overwritten. */
void gyro_moe_backward_f32(float *din, float *dparams, float *scratch, const float *dout,
                           const float *acts, const int *route, const float *in,
                           const float *params, const gyro_moe_config *cfg, int N, double alpha);
void gyro_moe_backward_f64(double *din, double *dparams, double *scratch, const double *dout,
                           const double *acts, const int *route, const double *in,
                           const double *params, const gyro_moe_config *cfg, int N, double alpha);

/* Add the number of tokens routed to each expert (counts: Nr entries) from a route array. */
void gyro_moe_count_load(long *counts, const int *route, const gyro_moe_config *cfg, int N);

#endif

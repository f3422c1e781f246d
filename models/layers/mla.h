/* mla.h — multi-head latent attention (DeepSeek-V2 MLA): low-rank joint compression of keys and
 * values, low-rank queries, and decoupled rotary position embedding; Euclidean, or hyperbolic in
 * the tangent space at the origin of the Poincaré ball.
 *
 * Seed rl-hyperbolic-transformer-grpo eq. 15–25 (after DeepSeek-V2), per token t of a sequence:
 *   c_q  = W_dq h_t                 (dcq)        c_kv = W_dkv h_t          (dc)       (18, 15)
 *   q^C  = W_uq c_q                 (H·dh)       k^C  = W_uk c_kv          (H·dh)     (19, 16)
 *   q^R  = RoPE(W_qr c_q)           (H·dr)       k^R  = RoPE(W_kr h_t)     (dr, shared) (20, 21)
 *   v    = W_uv c_kv                (H·dh)                                            (17)
 *   score_{t,s,i} = (q^C_{t,i}·k^C_{s,i} + q^R_{t,i}·k^R_s) / √(dh + dr)               (22–24)
 *   o_{t,i} = Σ_s softmax_s(score) v_{s,i};   u_t = W_o [o_{t,1}; …; o_{t,H}]           (24, 25a)
 * RoPE rotates coordinate pairs (2p, 2p+1) of a vector at position t by the angle
 * t · base^(−2p/dr) (Su et al., RoFormer). The paper's eq. 24 prints Σ_{j=1}^{n_h}; the sum is
 * over positions s, as in DeepSeek-V2. No biases (as in DeepSeek-V2); no RMSNorm on the latents
 * (deliberate simplification: the blocks here are one layer deep).
 *
 * Hyperbolic (seed eq. 28–36): the input tokens are points of the ball; z = log_0(h̃) maps them to
 * the tangent space at the origin, the attention above runs there, and the output is mapped back
 * with exp_0 (eq. 36). Curvature c of the ball (radius 1/√c).
 *
 * Memory: parameters, activations and backward scratch are flat arrays the caller owns, sized by
 * gyro_mla_layout_init(); the layout is fixed and documented in gyro_mla_layout. Kernels never
 * allocate.
 * Both precisions come from one implementation (mla_impl.h) instantiated twice: float32 for
 * training, float64 for the finite-difference tests. Matrix products go through
 * gyro_blas_gemm_* (models/core/blas.h).
 */
#ifndef GYRO_LAYERS_MLA_H
#define GYRO_LAYERS_MLA_H

#include <stddef.h>

#include "models/core/rng.h"
#include "models/core/status.h"

typedef struct gyro_mla_config {
    int d_model;      /* d: token width */
    int n_heads;      /* H */
    int d_head;       /* dh: per-head width of the content queries/keys/values */
    int d_rope;       /* dr: per-head width of the decoupled RoPE part (even; 0 disables RoPE) */
    int d_kv_latent;  /* dc: width of the joint KV latent c_kv */
    int d_q_latent;   /* dcq: width of the query latent c_q */
    int causal;       /* 1: position t attends to s ≤ t only */
    int hyperbolic;   /* 1: inputs/outputs are Poincaré-ball points (log_0 in, exp_0 out) */
    double curvature; /* c > 0 of the ball (used when hyperbolic) */
    double rope_base; /* RoPE frequency base, e.g. 10000 */
} gyro_mla_config;

/* Offsets (in elements) of the named tensors inside the parameter and activation blocks. */
typedef struct gyro_mla_layout {
    /* parameters */
    size_t w_dq;  /* (dcq, d) */
    size_t w_uq;  /* (H·dh, dcq) */
    size_t w_qr;  /* (H·dr, dcq) */
    size_t w_dkv; /* (dc, d) */
    size_t w_uk;  /* (H·dh, dc) */
    size_t w_uv;  /* (H·dh, dc) */
    size_t w_kr;  /* (dr, d) */
    size_t w_o;   /* (d, H·dh) */
    size_t n_params;
    /* activations for a batch of B sequences of length T (N = B·T rows) */
    size_t z;    /* (N, d)    tangent-space input (copy of the input when Euclidean) */
    size_t cq;   /* (N, dcq) */
    size_t qc;   /* (N, H·dh) */
    size_t qr;   /* (N, H·dr) after RoPE */
    size_t ckv;  /* (N, dc) */
    size_t kc;   /* (N, H·dh) */
    size_t kr;   /* (N, dr)   after RoPE */
    size_t v;    /* (N, H·dh) */
    size_t att;  /* (B, H, T, T) attention probabilities */
    size_t o;    /* (N, H·dh) */
    size_t u;    /* (N, d)    tangent-space output (before exp_0) */
    size_t n_acts;
    /* backward scratch: gradients of the activations (same shapes, same order) */
    size_t n_scratch;
} gyro_mla_layout;

/* Check a configuration: positive sizes, even d_rope ≥ 0, c > 0 when hyperbolic, rope_base > 1
 * when d_rope > 0. GYRO_ERR_USAGE with a message naming the field otherwise. */
gyro_status gyro_mla_config_check(const gyro_mla_config *cfg);

/* Compute the layout for batches of up to B sequences of length T. cfg must pass the check. */
void gyro_mla_layout_init(gyro_mla_layout *lay, const gyro_mla_config *cfg, int B, int T);

/* Initialise the parameters: each matrix N(0, 1/fan_in), W_o scaled by 1/2. */
void gyro_mla_init_params_f32(float *params, const gyro_mla_config *cfg, gyro_rng *rng);
void gyro_mla_init_params_f64(double *params, const gyro_mla_config *cfg, gyro_rng *rng);

/* Forward over B sequences of T tokens: in, out are (B, T, d) (ball points when hyperbolic).
 * acts has lay.n_acts elements (layout for at least B, T); it is overwritten and is the cache the
 * backward pass reads. out may not alias in. */
void gyro_mla_forward_f32(float *out, float *acts, const float *in, const float *params,
                          const gyro_mla_config *cfg, int B, int T);
void gyro_mla_forward_f64(double *out, double *acts, const double *in, const double *params,
                          const gyro_mla_config *cfg, int B, int T);

/* Backward: given dout (B, T, d), ACCUMULATE into din (B, T, d; may be NULL) and dparams
 * (n_params). scratch has lay.n_scratch elements and is overwritten. acts must be from the
 * forward pass on the same in/params. */
void gyro_mla_backward_f32(float *din, float *dparams, float *scratch, const float *dout,
                           const float *acts, const float *in, const float *params,
                           const gyro_mla_config *cfg, int B, int T);
void gyro_mla_backward_f64(double *din, double *dparams, double *scratch, const double *dout,
                           const double *acts, const double *in, const double *params,
                           const gyro_mla_config *cfg, int B, int T);

#endif

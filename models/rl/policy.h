/* policy.h — the policy network π_θ(a|s) of gyro's reinforcement learning: a one-block
 * transformer with multi-head latent attention and a mixture-of-experts feed-forward over the
 * observation, Euclidean ("Vanilla-T") or on the Poincaré ball ("Hyper-T"), from one
 * configuration and one code path.
 *
 * Seed rl-hyperbolic-transformer-grpo, "Hyperbolic transformer as a policy" (eq. 39–40) with the
 * hyperbolic MLA (eq. 28–36) and MoE (eq. 37–38) blocks. An observation of T = obs_dim numbers
 * becomes a sequence of T tokens (each number is one token, its position its feature index):
 *   u_t   = s_t W_e[t] + b_e[t]                        state embedding (seed: e_s = W_s s + b_s)
 *   x0    = exp_0(u)                                   (Euclidean: x0 = u)
 *   x1    = x0 ⊕ MLA(x0)                               (Euclidean: x0 + MLA(x0))
 *   x2    = x1 ⊕ MoE(x1)                               (Euclidean: x1 + MoE(x1))
 *   h     = (1/T) Σ_t log_0(x2_t)                      (Euclidean: mean_t x2_t)
 *   z     = W_h h + b_h;  log π(·|s) = log_softmax(z)  (eq. 39, 40)
 * MLA and MoE are models/layers/mla.h and models/layers/moe.h (hyperbolic: tangent space at
 * the origin, exp_0 back); the residuals are Möbius additions (seed: "HL = z̃ ⊕ HMultiHeadAtten(z̃)"). The model
 * deliberately has no LayerNorm (one block; see README).
 *
 * The third geometry, GYRO_RL_GEOMETRY_LORENTZ, is a fully hyperbolic backbone on the hyperboloid
 * ⟨x,x⟩_L = −1/c (HyboNet, Chen et al. ACL 2022; every layer a kernel of models/layers/lorentz.h,
 * the formula and section beside each there). It is NOT a Lorentz form of MLA and MoE: the block
 * is a Lorentz transformer block (HyboNet's, as in the Lorentz classifier of transformer.h),
 * which has no latent compression and no experts:
 *   u     = s_t W_e[t] + b_e[t]                        the same state embedding, (T, d) spatial
 *   x0    = (√(1/c + |u|²), u)                         lifted onto the hyperboloid (x0 ∈ H^d)
 *   q,k,v = H Lorentz linear layers each (§3.1), head h a (D+1)-point
 *   O     = LorentzMHA(q, k, v)                        softmax(−d²_L(q,k)/√D), centroid of v (§3.2)
 *   x1    = hl_o(O) with x0 as bias point              the Lorentz residual (§3.3)
 *   x2    = hl_2(ReLU(hl_1(x1))) with x1 as bias point the feed-forward, residual (§3.3)
 *   μ     = Centroid_t(x2_t)                           pooling (eq. 4)
 *   z_a   = −d²_L(μ, p_a) + β_a,  p_a = (√(1/c + |w_a|²), w_a)   the distance head of lorentz.h
 *   log π(·|s) = log_softmax(z)
 * Every parameter is Euclidean: the class points are parameterised by their spatial part w_a
 * (lifted in the forward, the lift's Jacobian in the backward), so GRPO's Adam updates the
 * Lorentz policy as it does the other two, with no Riemannian step and no re-projection. The
 * block's width (spatial d), heads H, head width D and FFN width F are d_model, lz_heads,
 * lz_head_dim and lz_ffn; the MLA and MoE configurations are cleared (no balance loss, no expert
 * load).
 *
 * Memory: one parameter block (layout below), one gradient block, activations and scratch sized
 * for a maximum batch; forward/backward never allocate. The float64 twin of the raw kernels
 * exists for the finite-difference test of the whole network.
 */
#ifndef GYRO_RL_POLICY_H
#define GYRO_RL_POLICY_H

#include <stddef.h>
#include <stdint.h>

#include "models/core/status.h"
#include "models/layers/mla.h"
#include "models/layers/moe.h"

/* Geometries of the policy (the values stored in the policy file). */
enum {
    GYRO_RL_GEOMETRY_EUCLIDEAN = 0, /* Vanilla-T */
    GYRO_RL_GEOMETRY_POINCARE = 1,  /* Hyper-T, the Poincaré ball */
    GYRO_RL_GEOMETRY_LORENTZ = 2,   /* the hyperboloid, a Lorentz transformer block */
};

/* "euclidean", "hyperbolic" (the Poincaré ball) or "lorentz"; "unknown" otherwise. Static. */
const char *gyro_rl_policy_geometry_name(int geometry);

typedef struct gyro_rl_policy_config {
    int hyperbolic;       /* the geometry, GYRO_RL_GEOMETRY_* (0 Vanilla-T, 1 Hyper-T, 2 Lorentz) */
    double curvature;     /* c > 0 of the ball or hyperboloid */
    int obs_dim;          /* T: tokens per observation */
    int n_actions;        /* |A| */
    int d_model;          /* width d */
    gyro_mla_config mla;  /* d_model, hyperbolic and curvature are overwritten from above */
    gyro_moe_config moe;  /* likewise */
    int lz_heads;         /* Lorentz block only: H attention heads */
    int lz_head_dim;      /* Lorentz block only: D spatial coordinates per head */
    int lz_ffn;           /* Lorentz block only: F spatial coordinates of the FFN's hidden layer */
} gyro_rl_policy_config;

/* The seed's backbone (Table 1): width 32, one block, MLA latent 32 (4 heads of 8, RoPE 4, query
 * latent 32), MoE with 1 shared + 4 routed experts of hidden width 32, top-1 routing, c = 1.
 * geometry: GYRO_RL_GEOMETRY_* (any other nonzero value means the Poincaré ball). The Lorentz
 * block gets the same width: 4 heads of 8, FFN 32, c = 1. */
gyro_rl_policy_config gyro_rl_policy_config_default(int geometry, int obs_dim, int n_actions);

/* Resize the backbone of `c` to width `width`: the model width and the experts' hidden width,
 * width / n_heads coordinates per attention head (at least 1), and an MLA key-value latent of
 * `latent` (what `gyro rl finetune --width --latent` asks for). The Lorentz block likewise:
 * FFN width `width`, width / lz_heads per head (latent unused). */
void gyro_rl_policy_config_resize(gyro_rl_policy_config *c, int width, int latent);

/* Validate (and propagate d_model/hyperbolic/curvature into the blocks; for the Lorentz geometry
 * clear the MLA and MoE configurations). GYRO_ERR_USAGE, naming the field, on a bad value or an
 * unknown geometry. */
gyro_status gyro_rl_policy_config_check(gyro_rl_policy_config *cfg);

typedef struct gyro_rl_policy_layout {
    int lorentz;     /* 1: the Lorentz block (the lz_* offsets below), 0: MLA + MoE */
    gyro_mla_layout mla;   /* zero for the Lorentz block */
    gyro_moe_layout moe;   /* likewise */
    /* parameters */
    size_t w_emb;    /* (T, d) */
    size_t b_emb;    /* (T, d) */
    size_t mla_p;    /* MLA block (mla.n_params) */
    size_t moe_p;    /* MoE block (moe.n_params) */
    size_t w_head;   /* (A, d) */
    size_t b_head;   /* (A) */
    /* Lorentz block (d spatial, d1 = d+1, H heads of D, HD1 = H(D+1), F): the parameters of
     * its Lorentz linear layers; mla_p is lz_qkvw and moe_p is lz_f1w, for the block names */
    size_t lz_qkvw;  /* (3, H·D, d1): the q | k | v groups, head h rows h·D..h·D+D−1 */
    size_t lz_qkvb;  /* (3, H·D) */
    size_t lz_qkvv;  /* (3, H, d1) the time-scale vectors v */
    size_t lz_qkvt;  /* (3, H, 2) (b_t, log λ) */
    size_t lz_ow;    /* (d, HD1) output layer (residual) */
    size_t lz_ov;    /* (HD1) */
    size_t lz_ot;    /* (2) */
    size_t lz_f1w;   /* (F, d1) */
    size_t lz_f1b;   /* (F) */
    size_t lz_f1v;   /* (d1) */
    size_t lz_f1t;   /* (2) */
    size_t lz_f2w;   /* (d, F+1) FFN layer 2 (ReLU inside, residual) */
    size_t lz_f2v;   /* (F+1) */
    size_t lz_f2t;   /* (2) */
    size_t n_params;
    /* activations for B observations, N = B·T tokens */
    size_t u, x0, mla_a, a, x1, moe_a, m, x2, lx2; /* (N, d) each, except mla_a/moe_a: blocks */
    /* Lorentz block: x0, x1, x2 are (N, d1); pool is (B, d1) */
    size_t lz_qkvU;  /* (3, N, H·D) caches */
    size_t lz_qkvZ;  /* (3, N, H) */
    size_t lz_qkv;   /* (3, N, HD1) the Q, K, V points */
    size_t lz_O;     /* (N, HD1) attention output */
    size_t lz_att;   /* (B, H, T, T) attention weights */
    size_t lz_sza;   /* (B, H, T) */
    size_t lz_Uo;    /* (N, d) */
    size_t lz_U1;    /* (N, F) */
    size_t lz_hf;    /* (N, F+1) FFN hidden points */
    size_t lz_Hcf;   /* (N, F+1) ReLU cache */
    size_t lz_U2;    /* (N, d) */
    size_t lz_szp;   /* (B) pooling cache */
    size_t lz_hp;    /* (A, d1) the lifted class points */
    size_t pool;     /* (B, d) */
    size_t logits;   /* (B, A) */
    size_t logp;     /* (B, A) */
    size_t n_acts;
    size_t n_route;  /* ints for the MoE routes */
    /* scratch: gradients of u, x0, a, x1, m, x2 (N, d each), pool (B, d), then the MLA and MoE
     * scratch blocks; Lorentz: gradients of u (N, d), x0, x1, x2 (N, d1), Q|K|V (3, N, HD1), O
     * (N, HD1), hf (N, F+1), pool (B, d1), class points (A, d1), then the hlinear work rows */
    size_t n_scratch;
} gyro_rl_policy_layout;

/* Layout for batches of up to B observations; cfg must have passed the check. */
void gyro_rl_policy_layout_init(gyro_rl_policy_layout *lay, const gyro_rl_policy_config *cfg, int B);

/* Raw kernels (float32 and float64). params: n_params; acts: n_acts; route: n_route;
 * obs: (B, T). After forward, acts + lay.logp holds log π (B, A).
 * backward: given dlogits (B, A), ACCUMULATES into dparams, including the MoE balance-loss
 * gradient with factor balance_alpha; scratch (n_scratch) is overwritten. */
void gyro_rl_policy_forward_f32(float *acts, int *route, const float *obs, const float *params,
                                const gyro_rl_policy_config *cfg, int B);
void gyro_rl_policy_forward_f64(double *acts, int *route, const double *obs, const double *params,
                                const gyro_rl_policy_config *cfg, int B);
void gyro_rl_policy_backward_f32(float *dparams, float *scratch, const float *dlogits,
                                 const float *acts, const int *route, const float *obs,
                                 const float *params, const gyro_rl_policy_config *cfg, int B,
                                 double balance_alpha);
void gyro_rl_policy_backward_f64(double *dparams, double *scratch, const double *dlogits,
                                 const double *acts, const int *route, const double *obs,
                                 const double *params, const gyro_rl_policy_config *cfg, int B,
                                 double balance_alpha);
void gyro_rl_policy_init_params_f32(float *params, const gyro_rl_policy_config *cfg, gyro_rng *rng);
void gyro_rl_policy_init_params_f64(double *params, const gyro_rl_policy_config *cfg, gyro_rng *rng);

/* ---- the float32 policy object used for training and inference ---------------------------- */

typedef struct gyro_rl_policy {
    gyro_rl_policy_config cfg;
    char env_name[32];           /* environment the policy was trained for ("" if none) */
    int max_batch;               /* largest B of forward/backward */
    gyro_rl_policy_layout lay;   /* for max_batch */
    float *params;               /* (n_params) owned */
    float *grads;                /* (n_params) owned */
    float *acts;                 /* (n_acts) owned */
    int *route;                  /* (n_route) owned */
    float *scratch;              /* (n_scratch) owned */
    int last_batch;              /* B of the last forward */
    const float *last_logp;      /* (last_batch, A) log π of the last forward */
    const float *last_logits;    /* (last_batch, A) logits z of the last forward */
} gyro_rl_policy;

/* Create a policy with parameters initialised from seed, buffers for batches of up to
 * max_batch observations. USAGE (bad config / max_batch < 1) or NOMEM; *out NULL on error. */
gyro_status gyro_rl_policy_new(const gyro_rl_policy_config *cfg, uint64_t seed, int max_batch,
                               gyro_rl_policy **out);

/* Free a policy; NULL is a no-op. */
void gyro_rl_policy_free(gyro_rl_policy *p);

/* Forward over B ≤ max_batch observations (B, obs_dim) with parameters `params` (NULL: the
 * policy's own; another block of n_params floats, e.g. a frozen reference, otherwise). Returns
 * the log-probabilities (B, A), valid until the next forward. */
const float *gyro_rl_policy_forward(gyro_rl_policy *p, const float *params, const float *obs, int B);

/* Backward of the last forward (which must have used the policy's own parameters): ACCUMULATES
 * into p->grads. */
void gyro_rl_policy_backward(gyro_rl_policy *p, const float *dlogits, const float *obs, int B,
                             double balance_alpha);

/* Greedy action (argmax of log π) of row b of the last forward. */
int gyro_rl_policy_argmax(const gyro_rl_policy *p, int b);

/* Save to `path` atomically: magic "GYRORLP1", format version, configuration, environment name,
 * parameters, CRC-32 (version 2; version-1 files with FNV-1a are still read). GYRO_ERR_IO on
 * failure (target unchanged); GYRO_ERR_NAN, writing
 * nothing, when a parameter is NaN or infinite. */
gyro_status gyro_rl_policy_save(const gyro_rl_policy *p, const char *path);

/* Name of the parameter block holding flat parameter index i of layout L ("MoE block", ...);
 * a static string. */
const char *gyro_rl_policy_param_block(const gyro_rl_policy_layout *L, size_t i);

/* Load a policy saved by gyro_rl_policy_save with buffers for max_batch. GYRO_ERR_IO (cannot
 * open), GYRO_ERR_FORMAT (not a policy file, truncated, bad configuration or checksum, with the
 * path in the message), GYRO_ERR_VERSION (written by a newer gyro), GYRO_ERR_NOMEM. */
gyro_status gyro_rl_policy_load(const char *path, int max_batch, gyro_rl_policy **out);

#endif

/* transformer.h — the hyperbolic transformer of the intent classifier and its Euclidean twin.
 *
 * One configuration, one code path, two geometries (shared/DESIGN.md, "The seed's intent
 * classifier"; hyperbolic-chinese-nlu §4.2 and appendix C; rl-hyperbolic-transformer-grpo for
 * the hyperbolic LayerNorm and the tangent-space residual). For a batch of token ids (B, T):
 *
 *   x0    = E[tok] ⊕ exp0(s·PE)                        (Euclidean: E[tok] + s·PE)
 *   per layer l = 1..L:
 *     qkv = W_qkv ⊗ x, split into 3H heads of D coordinates (A = H·D), each taken to the tangent
 *           space at the origin by log0; softmax(q kᵀ/√D) v per head, keys past the length masked
 *     a   = (M_1 ⊗ exp0(o_1)) ⊕ … ⊕ (M_H ⊗ exp0(o_H))  (Euclidean: Σ M_i o_i = W_O [o_1 … o_H])
 *     x   = residual(x, a), then optional hyperbolic LayerNorm exp0(LN(log0 ·))
 *     f   = M_2 ⊗ exp0(φ(log0(M_1 ⊗ x ⊕ b_1))) ⊕ b_2   (Euclidean: W_2 φ(W_1 x + b_1) + b_2)
 *     x   = residual(x, f), then optional LayerNorm
 *   pool  = exp0(max_t log0 x_t)  over the valid positions (Euclidean: max_t x_t)
 *   logits = hyperbolic MLR (Ganea 2018 eq. 25) of pool   (Euclidean: <a_k, pool − p_k>)
 *
 * Block options (rl-hyperbolic-transformer-grpo eq. 15–38, after DeepSeek-V2): attention kind
 * MLA computes a = MLA(x) instead (models/layers/mla.h; hyperbolic: exp0(MLA(log0 x)),
 * bidirectional over each sequence's valid positions), FFN kind MoE computes f = MoE(x1)
 * instead of the two Möbius layers (models/layers/moe.h; hyperbolic: Möbius sum of the experts'
 * ball points), over the valid tokens of the batch. The training loss is then cross-entropy + the balance loss
 * (gyro_tf_balance_loss), whose gradient gyro_tf_backward adds; the expert load of each
 * forward is kept in the acts (gyro_tf_expert_load). MLA and MoE have no dropout inside.
 *
 * The model owns one contiguous parameter block carved into the named pointers of
 * gyro_tf_params; gradients live in any block of the same size carved the same way, so
 * threads can own private gradient blocks. Activations (and their gradients) live in a
 * gyro_tf_acts object sized once for a maximum batch: forward and backward never allocate.
 * A model is read-only during forward/backward, so threads may share it, each with its own
 * gyro_tf_acts (and gradient block when training).
 *
 * Every parameter tensor is listed in a table with its manifold: Euclidean, or rows that are
 * points of the Poincaré ball of curvature −c (the optimizer applies Riemannian SGD to those).
 *
 * The Lorentz geometry (GYRO_TF_GEOMETRY_LORENTZ; HyboNet, Chen et al. ACL 2022, models/layers/
 * lorentz.h for every layer's formula) is a fully hyperbolic network on the hyperboloid of
 * curvature K = −c: no tangent space anywhere. `dim` C is the SPATIAL dimension (points have
 * d = C+1 coordinates, time first; a hyperboloid char2vec table of dimension C fits as is),
 * head_dim D and ffn_dim F likewise (head points D+1, FFN points F+1). Every Lorentz linear
 * layer hl(·) has its own W, b, time vector v and (b_t, log λ) (§3.1, y₀ = λσ(v·x + b_t) + ε,
 * ε = 1.1/√c):
 *   x0    = posenc(E[tok]): hl(E[tok]) with the position point p_t as bias point   (§3.3)
 *   per layer: q,k,v heads = hl_{q,h}(x), hl_{k,h}(x), hl_{v,h}(x)     (one layer per head)
 *     o   = [MHA_L(q,k,v) per head] (concatenated, H·(D+1) values)      (§3.2, centroid)
 *     x1  = hl_o(dropout(o)) with x as bias point                       (§3.3 residual)
 *     h   = hl_1(x1)                                                      (F+1 coordinates)
 *     x   = hl_2(dropout(φ(h))) with x1 as bias point                   (φ = ReLU inside)
 *   pool  = centroid of the valid tokens (eq. 4);  logit_k = −d²_L(pool, p_k) + β_k.
 * With residual NONE the two residual layers take no bias point. It has no LayerNorm (the
 * bounded time scale keeps the points within arcosh(λ+ε) of the origin) and neither MLA nor MoE.
 * Its points (embedding rows, position points, class points) are tagged LORENTZ: the optimizer
 * applies Riemannian SGD on the hyperboloid and re-projects.
 *
 * A float64 twin of the whole model (gyro_tf_model_f64, same functions with an _f64 suffix) is
 * generated from the same source; it exists for the end-to-end gradient checks.
 */
#ifndef GYRO_MODELS_TRANSFORMER_H
#define GYRO_MODELS_TRANSFORMER_H

#include <stddef.h>
#include <stdint.h>

#include "models/core/rng.h"
#include "models/core/status.h"

/* ---- configuration ------------------------------------------------------------------------ */

typedef enum gyro_tf_geometry {
    GYRO_TF_GEOMETRY_EUCLIDEAN = 0,
    GYRO_TF_GEOMETRY_HYPERBOLIC = 1,  /* Poincaré ball of curvature -c */
    GYRO_TF_GEOMETRY_LORENTZ = 2      /* the hyperboloid of curvature -c: fully Lorentz (HyboNet) */
} gyro_tf_geometry;

/* The name of a geometry as the CLI, the model file's version string and the benches spell it:
 * "euclidean", "hyperbolic" (Poincaré), "lorentz"; NULL for a value outside the enum. */
const char *gyro_tf_geometry_name(int geometry);

/* Parse a geometry name (the names above; "poincare" is accepted for "hyperbolic"). On success
 * *out is set and GYRO_OK returned; otherwise GYRO_ERR_USAGE with a message listing the names
 * (*out untouched). */
gyro_status gyro_tf_geometry_parse(const char *name, gyro_tf_geometry *out);

/* Kind of attention block. MLA replaces the Möbius-matvec QKV attention and the head merge of
 * a layer by multi-head latent attention (models/layers/mla.h: joint low-rank KV latent, query
 * latent, optional decoupled RoPE; hyperbolic: log0 in, exp0 out), run per sequence over its valid
 * positions (bidirectional, like MHA with its key mask). */
typedef enum gyro_tf_attention_kind {
    GYRO_TF_ATTENTION_MHA = 0,
    GYRO_TF_ATTENTION_MLA = 1
} gyro_tf_attention_kind;

/* Kind of feed-forward block. MOE replaces the two Möbius layers by a mixture of experts
 * (models/layers/moe.h: shared + top-k routed GELU experts; hyperbolic: Möbius sum of the experts'
 * ball points), run over the valid tokens of the batch; its balance loss (coefficient
 * moe_balance) is part of the training loss and its gradient is added by gyro_tf_backward. */
typedef enum gyro_tf_ffn_kind {
    GYRO_TF_FFN_DENSE = 0,
    GYRO_TF_FFN_MOE = 1
} gyro_tf_ffn_kind;

/* How a block's output joins its input. */
typedef enum gyro_tf_residual {
    GYRO_TF_RESIDUAL_NONE = 0,     /* seed §4.2: the block output replaces its input */
    GYRO_TF_RESIDUAL_MOBIUS = 1,   /* x ⊕ f(x)                       (Euclidean: x + f(x)) */
    GYRO_TF_RESIDUAL_TANGENT = 2   /* exp0(log0 x + log0 f(x)) (rl-grpo; Euclidean: x + f(x)) */
} gyro_tf_residual;

/* Activation between the two feed-forward layers, applied in the tangent space at the origin
 * (Ganea's φ⊗(x) = exp0(φ(log0 x))). The seed's hyperbolic FFN has none (IDENTITY). */
typedef enum gyro_tf_activation {
    GYRO_TF_ACTIVATION_IDENTITY = 0,
    GYRO_TF_ACTIVATION_RELU = 1
} gyro_tf_activation;

typedef struct gyro_tf_config {
    int geometry;          /* gyro_tf_geometry */
    int vocab_size;        /* V: rows of the embedding table */
    int n_classes;         /* K */
    int dim;               /* C: model dimension */
    int n_layers;          /* L */
    int n_heads;           /* H */
    int head_dim;          /* D: coordinates per head; A = H·D is the attention width */
    int ffn_dim;           /* F */
    int max_len;           /* Tmax: longest sequence (positional table size) */
    float dropout;         /* in [0, 1): on head outputs, FFN hidden and the pooled vector */
    float curvature;       /* c > 0 (hyperbolic only) */
    float pos_scale;       /* s: positional encodings are scaled by s before exp0 / addition */
    int layernorm;         /* 1: (hyperbolic) LayerNorm after each residual */
    int residual;          /* gyro_tf_residual */
    int ffn_activation;    /* gyro_tf_activation */
    int attention_kind;    /* gyro_tf_attention_kind */
    int ffn_kind;          /* gyro_tf_ffn_kind */
    /* MLA options (0 unless attention_kind is MLA). Heads: n_heads × head_dim as for MHA. */
    int mla_latent_dim;    /* dc: dimension of the joint key-value latent (>= 1) */
    /* MoE options (0 unless ffn_kind is MOE). Every expert has ffn_dim hidden units. */
    int moe_experts;       /* Nr: routed experts per layer, 1..256 */
    int moe_shared;        /* Ns: shared (always-on) experts per layer, >= 0 */
    int moe_top_k;         /* K: routed experts chosen per token, 1..Nr */
    int mla_q_latent;      /* dcq: query latent; 0 = the same as mla_latent_dim */
    int mla_rope_dim;      /* dr: decoupled RoPE width per head, even; 0 = no RoPE */
    float moe_balance;     /* α >= 0: weight of the expert balance loss in the training loss */
    /* Hyperbolic MHA only. 1: q | k | v = log0(W ⊗ x) of the whole 3A-d Möbius matvec output,
     * which is exactly W·log0(x), then split into heads. 0: log0 of each head's D-slice of the
     * ball point (models written before this field): a slice has norm < 1/√c, so every head's
     * tangent norm is capped near artanh(√(1/3H))/√c and the attention stays near uniform. */
    int qkv_tangent;
} gyro_tf_config;

/* The seed's settings for a geometry (hyperbolic-chinese-nlu §5): 3 layers, 16 heads of
 * D = ceil(C/16) coordinates, hyperbolic 100-d, Euclidean 128-d, FFN 4·C, max_len 64, c = 1,
 * dropout 0 (the caller sets 0.3 / 0.2). Hyperbolic: no residual, no LayerNorm and no FFN
 * activation, as in seed §4.2; Euclidean: additive residual, LayerNorm and ReLU, the standard
 * transformer the seed compares against. Positional scale s = √(2/C): the raw sine table has
 * norm √(C/2) (≈ 7 at C = 100), which exp0 sends to the float32 boundary of the ball and which
 * would drown the character embedding; scaled, |s·PE| = 1. vocab_size and n_classes are 0: the
 * caller sets them. */
/* Lorentz: as the hyperbolic defaults (C = 100 spatial, 16 heads of D = 7, F = 400, no
 * LayerNorm), with the Lorentz residual on (residual = MOBIUS, read as "on") and ReLU inside
 * the feed-forward block. */
gyro_tf_config gyro_tf_config_default(gyro_tf_geometry geometry);

/* Check a configuration. GYRO_ERR_USAGE with a message naming the bad field, or GYRO_OK. */
gyro_status gyro_tf_config_validate(const gyro_tf_config *cfg);

/* ---- parameters --------------------------------------------------------------------------- */

typedef enum gyro_tf_manifold {
    GYRO_TF_MANIFOLD_EUCLIDEAN = 0,
    GYRO_TF_MANIFOLD_BALL = 1,     /* each row of `cols` values is a Poincaré-ball point */
    GYRO_TF_MANIFOLD_LORENTZ = 2   /* each row of `cols` = C+1 values is a point of the
                                    * hyperboloid ⟨x,x⟩_L = −1/c, time first */
} gyro_tf_manifold;

/* One parameter tensor: rows × cols values at `offset` (in values) from the start of a
 * parameter / gradient / optimizer-state block. */
typedef struct gyro_tf_tensor {
    const char *name;
    size_t offset;
    size_t size;                   /* rows * cols */
    int rows, cols;
    gyro_tf_manifold manifold;
} gyro_tf_tensor;

#define GYRO_TF_MAX_TENSORS 16

/* Named pointers into a block. LayerNorm tensors are NULL (and absent from the table) when
 * cfg.layernorm is 0; qkvw/attprojw are NULL with MLA attention (mla is NULL with MHA);
 * fcw/fcb/fcprojw/fcprojb are NULL with MoE (moe is NULL with the dense FFN). Ball tensors are
 * BALL only in the hyperbolic geometry; the MLA and MoE blocks are Euclidean (their kernels
 * work in the tangent space at the origin). */
#define GYRO_TF_DEFINE_PARAMS(R, NAME)                                                         \
    typedef struct NAME {                                                                       \
        R *wte;       /* (V, C)      token embeddings               ball rows */                \
        R *qkvw;      /* (L, 3A, C)  Möbius matvec into q,k,v heads (rows: q | k | v) */        \
        R *attprojw;  /* (L, C, A)   [M_1 … M_H], M_i = columns i·D..(i+1)·D−1 */               \
        R *ln1g;      /* (L, C)      LayerNorm after attention: gain */                        \
        R *ln1b;      /* (L, C)      bias */                                                   \
        R *fcw;       /* (L, F, C)   FFN layer 1 matrix */                                     \
        R *fcb;       /* (L, F)      FFN layer 1 bias                ball rows */               \
        R *fcprojw;   /* (L, C, F)   FFN layer 2 matrix */                                     \
        R *fcprojb;   /* (L, C)      FFN layer 2 bias                ball rows */               \
        R *ln2g;      /* (L, C)      LayerNorm after FFN: gain */                              \
        R *ln2b;      /* (L, C)      bias */                                                   \
        R *mla;       /* (L, Pa)     MLA blocks (layers/mla.h layout); MLA only */             \
        R *moe;       /* (L, Pf)     MoE blocks (layers/moe.h layout); MoE only */             \
        R *mlr_a;     /* (K, C)      MLR normals a_k */                                        \
        R *mlr_p;     /* (K, C)      MLR offsets p_k                 ball rows */               \
        /* Lorentz geometry only (all NULL otherwise; d = C+1, D1 = D+1, HD1 = H·D1): */        \
        R *lzpos;     /* (Tmax, d)   position points                 hyperboloid rows */        \
        R *lzpew;     /* (C, d)      position-encoding layer W */                              \
        R *lzqkvw;    /* (L·3H·D, d) q|k|v Lorentz linear layers, one per head, W */            \
        R *lzqkvb;    /* (L·3H, D)   their biases b */                                         \
        R *lzinv;     /* (1+L(3H+1), d) time vectors v of the layers that read d-wide rows */   \
        R *lzow;      /* (L·C, HD1)  attention output layer (the residual layer) W */          \
        R *lzov;      /* (L, HD1)    its time vector v */                                      \
        R *lzf1w;     /* (L·F, d)    FFN layer 1 W */                                          \
        R *lzf1b;     /* (L, F)      FFN layer 1 b */                                          \
        R *lzf2w;     /* (L·C, F+1)  FFN layer 2 (the residual layer) W */                     \
        R *lzf2v;     /* (L, F+1)    its time vector v */                                      \
        R *lztime;    /* (1+L(3H+3), 2) (b_t, log λ) of every Lorentz linear layer */          \
        R *lzcls;     /* (K, d)      class points of the distance head   hyperboloid rows */    \
        R *lzbeta;    /* (1, K)      class biases β */                                         \
    } NAME;

GYRO_TF_DEFINE_PARAMS(float, gyro_tf_params)
GYRO_TF_DEFINE_PARAMS(double, gyro_tf_params_f64)

/* Total number of parameter values of a (valid) configuration. */
size_t gyro_tf_param_count(const gyro_tf_config *cfg);

/* The tensor table of a configuration: fills `out` (room for GYRO_TF_MAX_TENSORS) and returns
 * the number of tensors. Offsets are the same in every block of the model. */
int gyro_tf_tensor_table(const gyro_tf_config *cfg, gyro_tf_tensor *out);

/* ---- the model ---------------------------------------------------------------------------- */

typedef struct gyro_tf_model {
    gyro_tf_config cfg;
    size_t n_params;
    float *params_memory;          /* (n_params) owned */
    gyro_tf_params params;         /* carved from params_memory */
    float *grads_memory;           /* (n_params) owned; NULL unless created with grads */
    gyro_tf_params grads;          /* carved from grads_memory (all NULL without grads) */
    int n_tensors;
    gyro_tf_tensor tensors[GYRO_TF_MAX_TENSORS];
    float *pos;                    /* (max_len, C) exp0(s·PE) or s·PE; constant, owned */
} gyro_tf_model;

typedef struct gyro_tf_model_f64 {
    gyro_tf_config cfg;
    size_t n_params;
    double *params_memory;
    gyro_tf_params_f64 params;
    double *grads_memory;
    gyro_tf_params_f64 grads;
    int n_tensors;
    gyro_tf_tensor tensors[GYRO_TF_MAX_TENSORS];
    double *pos;
} gyro_tf_model_f64;

/* Create a model for a configuration (validated here) with parameters initialised from
 * `seed`: matrices Xavier-uniform, LayerNorm gains 1 (hyperbolic: 1/√C, so a normalised
 * tangent vector has norm ≈ 1 instead of √C, which exp0 would send to the float32 boundary),
 * LayerNorm and Euclidean biases 0, ball biases at the origin, embeddings exp0 of N(0, 1/C)
 * rows (Euclidean: the same Gaussian rows), MLR normals Xavier, offsets at the origin. with_grads != 0 also allocates a zeroed gradient
 * block. On failure *out is NULL and the status is USAGE (bad config) or NOMEM. The caller
 * frees with gyro_tf_free. */
gyro_status gyro_tf_new(const gyro_tf_config *cfg, uint64_t seed, int with_grads,
                        gyro_tf_model **out);
gyro_status gyro_tf_new_f64(const gyro_tf_config *cfg, uint64_t seed, int with_grads,
                            gyro_tf_model_f64 **out);

/* Free a model and everything it owns; NULL is a no-op. */
void gyro_tf_free(gyro_tf_model *m);
void gyro_tf_free_f64(gyro_tf_model_f64 *m);

/* Carve a caller-owned block of gyro_tf_param_count(cfg) values into named pointers (e.g. a
 * per-thread gradient block or an optimizer state block). */
void gyro_tf_carve(const gyro_tf_config *cfg, float *block, gyro_tf_params *out);
void gyro_tf_carve_f64(const gyro_tf_config *cfg, double *block, gyro_tf_params_f64 *out);

/* The first tensor of m's table (in table order) with a NaN or infinite value in `block`, a
 * block of gyro_tf_param_count values laid out like m->params_memory (the parameters, their
 * gradients, an optimizer state); NULL when every value is finite. *index (if not NULL) gets
 * the value's position within the tensor. The tensor belongs to m. */
const gyro_tf_tensor *gyro_tf_first_nonfinite(const gyro_tf_model *m, const float *block, size_t *index);

/* ---- activations, forward, backward ------------------------------------------------------- */

typedef struct gyro_tf_acts gyro_tf_acts;          /* opaque: activation (+ gradient) block */
typedef struct gyro_tf_acts_f64 gyro_tf_acts_f64;

/* Allocate activations for batches of up to max_batch sequences of up to max_len tokens
 * (max_len <= cfg.max_len), all carved from one arena (one allocation, 64-byte aligned
 * arrays). training != 0 also allocates the activation-gradient block that gyro_tf_backward
 * needs and the dropout masks. The model must outlive the acts. USAGE on bad sizes, NOMEM.
 * Free with gyro_tf_acts_free (NULL is a no-op). */
gyro_status gyro_tf_acts_new(const gyro_tf_model *m, int max_batch, int max_len, int training,
                             gyro_tf_acts **out);
gyro_status gyro_tf_acts_new_f64(const gyro_tf_model_f64 *m, int max_batch, int max_len,
                                 int training, gyro_tf_acts_f64 **out);
void gyro_tf_acts_free(gyro_tf_acts *a);
void gyro_tf_acts_free_f64(gyro_tf_acts_f64 *a);

/* Forward pass over tokens (B, T) row-major with lengths (B), 1 <= lengths[b] <= T; positions
 * t >= lengths[b] are ignored (their token values are not read). rng != NULL turns dropout on
 * (training; needs acts created with training != 0); NULL is inference. Logits (B, K) are
 * then available from gyro_tf_logits. USAGE if B/T exceed the acts' sizes or dropout is asked
 * of inference acts; DATA if a token id is outside [0, V) or a length is outside [1, T]. */
gyro_status gyro_tf_forward(const gyro_tf_model *m, gyro_tf_acts *a, const int32_t *tokens,
                            const int *lengths, int B, int T, gyro_rng *rng);
gyro_status gyro_tf_forward_f64(const gyro_tf_model_f64 *m, gyro_tf_acts_f64 *a,
                                const int32_t *tokens, const int *lengths, int B, int T,
                                gyro_rng *rng);

/* Weights packed for inference (models/layers/kernels_pack.h): the dense attention and
 * feed-forward matrices of a float32 model in the panel layout of gyro's own product kernels,
 * made once so that no product repacks a weight matrix per call. A pack is a snapshot: it
 * must be rebuilt (or dropped) when the model's parameters change. MLA, MoE and Lorentz
 * layers are not packed (their forward ignores the pack). */
typedef struct gyro_tf_packed gyro_tf_packed;

/* Pack the parameters of m into a new pack (*out; free with gyro_tf_pack_free, NULL is a
 * no-op). The pack does not reference m. NOMEM. */
gyro_status gyro_tf_pack_new(const gyro_tf_model *m, gyro_tf_packed **out);
void gyro_tf_pack_free(gyro_tf_packed *pk);

/* Inference forward (no dropout) as gyro_tf_forward with rng NULL, reading the dense weight
 * matrices from pk (made by gyro_tf_pack_new from m's current parameters; NULL: m's own). The
 * logits agree with gyro_tf_forward's to float32 rounding. With a pack, the hyperbolic block
 * with tangent residuals and LayerNorm runs fused maps that keep none of the per-layer caches
 * of gyro_tf_backward, and so does the Lorentz geometry (every Lorentz linear layer packed;
 * the layers share one set of buffers): no backward may follow this forward. Same errors. */
gyro_status gyro_tf_forward_packed(const gyro_tf_model *m, const gyro_tf_packed *pk,
                                   gyro_tf_acts *a, const int32_t *tokens, const int *lengths,
                                   int B, int T);

/* Logits (B, K) of the last forward pass; owned by the acts. */
const float *gyro_tf_logits(const gyro_tf_acts *a);
const double *gyro_tf_logits_f64(const gyro_tf_acts_f64 *a);

/* The head's input of the last forward pass (NULL before the first), owned by the acts:
 * Lorentz (B, C+1) the pooled hyperboloid points (centroids), hyperbolic (B, C) the pooled ball
 * point, Euclidean (B, C) the pooled vector (after dropout when it was on). */
const float *gyro_tf_head_input(const gyro_tf_acts *a);
const double *gyro_tf_head_input_f64(const gyro_tf_acts_f64 *a);

/* Backward pass of the last forward pass (same acts, created with training != 0): given
 * dlogits (B, K), ACCUMULATE (+=) the parameter gradients into `grads` (m->grads or any block
 * carved with gyro_tf_carve). Gradients of ball parameters are Euclidean gradients; the
 * optimizer converts them (egrad2rgrad). */
void gyro_tf_backward(const gyro_tf_model *m, gyro_tf_acts *a, const gyro_tf_params *grads,
                      const float *dlogits);
void gyro_tf_backward_f64(const gyro_tf_model_f64 *m, gyro_tf_acts_f64 *a,
                          const gyro_tf_params_f64 *grads, const double *dlogits);

/* Balance loss Σ_layers α Σ_i f_i P_i of the last forward pass (models/layers/moe.h; α =
 * cfg.moe_balance, N = the valid tokens of the batch); 0 without MoE. Add it to the
 * cross-entropy for the training loss: gyro_tf_backward adds its gradient. */
double gyro_tf_balance_loss(const gyro_tf_acts *a);
double gyro_tf_balance_loss_f64(const gyro_tf_acts_f64 *a);

/* Expert load of the last forward pass: (L, moe_experts) counts of the valid tokens routed to
 * each routed expert (each token counts once per chosen expert, so a layer sums to K·tokens);
 * owned by the acts; NULL without MoE. */
const long *gyro_tf_expert_load(const gyro_tf_acts *a);
const long *gyro_tf_expert_load_f64(const gyro_tf_acts_f64 *a);

/* Format load counts (L, moe_experts) — e.g. summed over a training epoch — as one line
 * "L0 31/22/25/22% L1 …": each expert's share of its layer's routings, in percent. Always
 * NUL-terminates (truncating) when cap > 0; returns buf. */
char *gyro_tf_expert_load_format(char *buf, size_t cap, const long *counts,
                                 const gyro_tf_config *cfg);

/* Mean softmax cross-entropy of logits (B, K) against labels (B) in [0, K); writes
 * dlogits = (softmax − onehot)/B when dlogits != NULL and the probabilities when probs != NULL.
 * Returns the mean loss (computed in double). */
double gyro_tf_softmax_xent(float *dlogits, float *probs, const float *logits,
                            const int *labels, int B, int K);
double gyro_tf_softmax_xent_f64(double *dlogits, double *probs, const double *logits,
                                const int *labels, int B, int K);

/* ---- the residual-and-LayerNorm sublayer (also one block of models/hrm.h) ------------------- */

/* The buffers of the sublayer that follows attention and the feed-forward block of a layer:
 *   res = xin ⊕ y (Möbius residual), exp0(log0 xin + log0 y) (tangent residual), or y;
 *   out = exp0(LN(log0 res)) with hyperbolic LayerNorm (rl-hyperbolic-transformer-grpo), or res.
 * All (Nr, C) except lnm, lnr (Nr). One struct names the activations, a second the gradients
 * at the same names. Buffers a configuration does not use may be NULL or alias their neighbour
 * (the transformer lets res alias y without a residual, out alias res without LayerNorm, and in
 * Euclidean space a log0/exp0 output alias its input). */
typedef struct gyro_tf_sublayer {
    float *xin, *u;   /* the sublayer's input and its log0 */
    float *y, *ly;    /* the block's output and its log0 (tangent residual) */
    float *ts, *res;  /* u + ly (tangent residual), the residual's result */
    float *lnu, *lnv; /* log0 res, LN(lnu) */
    float *lnm, *lnr; /* LayerNorm mean and reciprocal deviation */
    float *out;       /* the sublayer's output */
} gyro_tf_sublayer;
typedef struct gyro_tf_sublayer_f64 {
    double *xin, *u, *y, *ly, *ts, *res, *lnu, *lnv, *lnm, *lnr, *out; /* as gyro_tf_sublayer */
} gyro_tf_sublayer_f64;

/* Forward of the sublayer p: `residual` a gyro_tf_residual, `layernorm` 0 or 1, geo the
 * geometry of the kernels (models/layers/kernels.h: GYRO_GEO_EUCLIDEAN or GYRO_GEO_HYPERBOLIC,
 * the values of GYRO_TF_GEOMETRY_EUCLIDEAN / _HYPERBOLIC), c > 0 the curvature; gain, bias (C)
 * the LayerNorm parameters. Reads xin (Möbius) or u (tangent) and y; writes the rest. */
void gyro_tf_sublayer_forward(const gyro_tf_sublayer *p, const float *gain, const float *bias,
                              int residual, int layernorm, int geo, float c, int Nr, int C);
void gyro_tf_sublayer_forward_f64(const gyro_tf_sublayer_f64 *p, const double *gain,
                                  const double *bias, int residual, int layernorm, int geo,
                                  double c, int Nr, int C);

/* Backward of gyro_tf_sublayer_forward: q holds the gradients (q->out filled, the others zero
 * or accumulating), p the forward activations; accumulates into q->xin (Möbius residual),
 * q->u (tangent residual), q->y, and dgain, dbias (C). scratch: (2C). */
void gyro_tf_sublayer_backward(const gyro_tf_sublayer *q, float *dgain, float *dbias,
                               const gyro_tf_sublayer *p, const float *gain, float *scratch,
                               int residual, int layernorm, int geo, float c, int Nr, int C);
void gyro_tf_sublayer_backward_f64(const gyro_tf_sublayer_f64 *q, double *dgain, double *dbias,
                                   const gyro_tf_sublayer_f64 *p, const double *gain,
                                   double *scratch, int residual, int layernorm, int geo,
                                   double c, int Nr, int C);

#endif

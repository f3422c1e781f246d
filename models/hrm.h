/* hrm.h — the Hierarchical Reasoning Model (HRM): a reasoning network that iterates two
 * recurrent transformer blocks instead of stacking layers (seed hrm-hierarchical-reasoning-math;
 * Wang et al. 2025, "Hierarchical Reasoning Model").
 *
 * Four networks over a sequence of n cells (n = 81 for 9×9 Sudoku, one token per cell):
 *   x̃      = f_I(x)  = E[x_t] ⊕ P_t                      cell-symbol embedding + learned position
 *   z_L^i  = f_L(z_L^{i−1} ⊕ z_H^{i−1} ⊕ x̃)              the fast low-level module, every step
 *   z_H^i  = f_H(z_H^{i−1} ⊕ z_L^i)   when i ≡ 0 (mod N)   the slow high-level module
 *            z_H^{i−1}                 otherwise
 *   ŷ      = f_O(z_H^{NT}) per cell: softmax over the n_classes (the digits 1–9)
 *   Q̂_j    = Π_t σ(a_j ℓ_t + w_j · log0(z_H,t) + b_j), j ∈ {halt, continue}  (q_pool CELLS)
 *            σ(w_j · mean_t log0(z_H,t) + b_j)                            (q_pool MEAN)
 * with i = 1..N·T in one segment: L updates N times for every H update, T H-cycles. The inputs of
 * a module are combined by addition (Möbius addition ⊕ in the ball). The seed prints the H
 * condition as i ≡ 0 (mod T), but its text (and the paper) has L run N steps per H update; we
 * follow the text. f_L and f_H are each ONE transformer block with the geometry switch of
 * models/transformer.h (built from models/layers/kernels.h):
 *   in   → u = log0(in); q,k,v = per-head log0(W_qkv ⊗ in); attention; heads merged by
 *          Möbius matvecs and gyro-addition (a); x1 = exp0(LN(log0(exp0(u + log0 a))))
 *        → f = M2 ⊗ ReLU⊗(M1 ⊗ x1 ⊕ b1) ⊕ b2; out = exp0(LN(log0(exp0(log0 x1 + log0 f))))
 * i.e. a post-norm block whose residuals are taken in the tangent space at the origin
 * (rl-hyperbolic-transformer-grpo; Euclidean: the plain post-LN transformer block, x + f(x)).
 * f_O is the per-cell multinomial logistic regression of kernels.h (hyperbolic MLR in the ball,
 * <a_k, z − p_k> in Euclidean space).
 *
 * The Q head: Q̂_halt is trained towards 1{every cell right}, an AND over the cells. A linear
 * head on the mean of the cells (q_pool MEAN) sees an average and cannot tell one wrong cell
 * among 81; the default CELLS pools a per-cell probability by its product (the probability that
 * every cell is right when the cells are independent), and gives each cell, beside its state,
 * the confidence of its own prediction ℓ_t = logit(max_k softmax(ŷ_t)_k) (a linear head on z_H
 * cannot compute the margin between the top two classes):
 *   h_t,j = a_j ℓ_t + w_j · log0(z_H,t) + b_j,   log Q̂_j = s_j = Σ_t log σ(h_t,j),
 *   Q logit (gyro_hrm_qlogits) = logit(Q̂_j) = s_j − log(1 − e^{s_j}),
 *   ∂logit/∂h_t,j = σ(−h_t,j) / (1 − e^{s_j})
 * (gradients reach ŷ through ℓ_t too). It starts at a = 1, w = 0, b = 0: σ(h_t,j) = the cell's
 * top probability, Q̂_halt = Q̂_continue = Π_t max_k p̂_t,k.
 *
 * Gradients (seed eqs. 13–15, the one-step approximation): if the recurrence reaches a fixed
 * point, the implicit-function gradient (I − J_F)^{-1} ∂F/∂θ is approximated by its first
 * Neumann term, so only the LAST L update and the LAST H update of a segment get gradients;
 * the earlier N·T − 1 steps run forward without keeping activations (GYRO_HRM_ONESTEP): the
 * memory of training does not grow with N·T. GYRO_HRM_BPTT keeps every step's activations and
 * backpropagates through the whole segment (the exact gradient; for tests and comparison).
 *
 * Deep supervision: a training example runs up to M segments; the state (z_L, z_H) carries from
 * one segment to the next but is detached (no gradient crosses a segment), and every segment
 * has its own loss and optimizer step. ACT: the Q head decides after each segment whether to
 * halt; see gyro_hrm_train_batch for the targets and the exploration. Two training loops:
 * gyro_hrm_train_batch runs a batch until all its examples halted (the Q target from an extra
 * look-ahead segment); gyro_hrm_train_step keeps a persistent batch (the HRM paper's code): one
 * segment and one step per call, halted examples replaced by fresh ones, the Q target from the
 * slot's next training segment.
 *
 * A float32 model trains and serves; a float64 twin (the same code, _f64) exists for the
 * finite-difference checks. Forward and backward never allocate.
 */
#ifndef GYRO_MODELS_HRM_H
#define GYRO_MODELS_HRM_H

#include <stddef.h>
#include <stdint.h>

#include "models/core/rng.h"
#include "models/core/status.h"

/* ---- configuration ------------------------------------------------------------------------ */

typedef struct gyro_hrm_config {
    int geometry;        /* gyro_geo: GYRO_GEO_EUCLIDEAN or GYRO_GEO_HYPERBOLIC (Poincaré ball) */
    double curvature;    /* c > 0 of the ball */
    int n_cells;         /* n: tokens per example (81 for Sudoku) */
    int vocab;           /* V: input symbols (10 for Sudoku: blank, 1–9) */
    int n_classes;       /* K: output classes per cell (9 for Sudoku: digits 1–9) */
    int dim;             /* C: width of z_L, z_H, x̃ */
    int n_heads;         /* H */
    int head_dim;        /* D; A = H·D */
    int ffn_dim;         /* F */
    int n_low;           /* N: L updates per H update (>= 1) */
    int n_high;          /* T: H updates per segment (>= 1) */
    int m_max;           /* M_max: segments per example (>= 1) */
    double act_eps;      /* ε: probability of drawing M_min from {2..M_max} (ACT exploration) */
    uint64_t init_seed;  /* seed of the fixed initial states z_L^0, z_H^0 (not trained) */
    int q_pool;          /* gyro_hrm_qpool: how the Q head pools the cells */
} gyro_hrm_config;

/* How the Q head pools the n cells (see the top of this file). */
typedef enum gyro_hrm_qpool {
    GYRO_HRM_QPOOL_MEAN = 0,  /* σ(w · mean_t log0 z_H,t + b): model files of format version 1 */
    GYRO_HRM_QPOOL_CELLS = 1  /* Π_t σ(a ℓ_t + w · log0 z_H,t + b): the default */
} gyro_hrm_qpool;

/* Sudoku defaults: Euclidean, c = 1, n 81, V 10, K 9, C 128, 4 heads of 32, F 256, N = T = 1,
 * M_max GYRO_HRM_M_MAX, ε 0.1, init_seed 1, the CELLS Q head — the best configuration of
 * tests/bench/hrm_sudoku.sh (with the schedule GYRO_HRM_DS_START / GYRO_HRM_ACT_START below and
 * augmentation). */
gyro_hrm_config gyro_hrm_config_default(void);

/* The default M_max (tests/bench/hrm_sudoku.sh: M = 2 solves the most puzzles in 1,200 CPU s;
 * M = 3 with ACT from 0.6 of the budget saves a third of the segments, a few points lower). */
#define GYRO_HRM_M_MAX 2

/* GYRO_ERR_USAGE with a message naming the bad field, or GYRO_OK. */
gyro_status gyro_hrm_config_validate(const gyro_hrm_config *cfg);

/* ---- parameters --------------------------------------------------------------------------- */

/* Offsets (in values) of one transformer block's tensors inside the block's slice. */
typedef struct gyro_hrm_block_layout {
    size_t qkvw;     /* (3A, C) */
    size_t attprojw; /* (C, A)  [M_1 … M_H] */
    size_t ln1g;     /* (C) */
    size_t ln1b;     /* (C) */
    size_t fcw;      /* (F, C) */
    size_t fcb;      /* (F)     ball point */
    size_t fcprojw;  /* (C, F) */
    size_t fcprojb;  /* (C)     ball point */
    size_t ln2g;     /* (C) */
    size_t ln2b;     /* (C) */
    size_t n;        /* values per block */
} gyro_hrm_block_layout;

/* The parameter block: offsets of every tensor. */
typedef struct gyro_hrm_layout {
    gyro_hrm_block_layout blk;
    size_t wte;      /* (V, C)  cell-symbol embeddings   ball rows */
    size_t pos;      /* (n, C)  position embeddings      ball rows */
    size_t low;      /* blk.n   f_L */
    size_t high;     /* blk.n   f_H */
    size_t out_a;    /* (K, C)  MLR normals a_k */
    size_t out_p;    /* (K, C)  MLR offsets p_k          ball rows */
    size_t q_w;      /* (2, C)  Q head (halt, continue) */
    size_t q_b;      /* (2) */
    size_t q_a;      /* (2)     weights of the cells' confidence ℓ_t (q_pool CELLS; else none) */
    size_t n_params;
} gyro_hrm_layout;

void gyro_hrm_layout_init(gyro_hrm_layout *lay, const gyro_hrm_config *cfg);

/* One tensor of the parameter block for the optimizer: rows × cols values at `offset`; ball = 1
 * when each row is a point of the Poincaré ball (hyperbolic geometry only). */
typedef struct gyro_hrm_tensor {
    const char *name;
    size_t offset;
    int rows, cols;
    int ball;
} gyro_hrm_tensor;

#define GYRO_HRM_MAX_TENSORS 28

/* Fill out[] (room for GYRO_HRM_MAX_TENSORS) and return the number of tensors. */
int gyro_hrm_tensor_table(const gyro_hrm_config *cfg, gyro_hrm_tensor *out);

/* ---- the model ---------------------------------------------------------------------------- */

typedef struct gyro_hrm_model {
    gyro_hrm_config cfg;
    gyro_hrm_layout lay;
    float *params;       /* (n_params) owned */
    float *z0;           /* (2, C) owned: z_L^0, z_H^0 (fixed, from init_seed) */
} gyro_hrm_model;

typedef struct gyro_hrm_model_f64 {
    gyro_hrm_config cfg;
    gyro_hrm_layout lay;
    double *params;
    double *z0;
} gyro_hrm_model_f64;

/* Create a model (config validated here) with parameters initialised from `seed`: matrices
 * Xavier-uniform, LayerNorm gains 1 (hyperbolic 1/√C, as models/transformer.h), biases and MLR
 * offsets at the origin, embeddings exp0 of rows N(0, 1) per coordinate (hyperbolic N(0, 1/C):
 * the scale of the LayerNorm-output states they are added to; with n = 81, a 9×9 grid, the
 * position row of a cell starts as exp0 of the sum of a random row, column and box vector, so
 * cells sharing a unit start close), the Q head with Q̂_halt = Q̂_continue, so no early
 * halting (MEAN: weights 0, biases −5, Q̂ ≈ 0.007 as the paper; CELLS: a = 1, w = 0, b = 0).
 * USAGE (bad config) or NOMEM; *out NULL on error. Free with gyro_hrm_free. */
gyro_status gyro_hrm_new(const gyro_hrm_config *cfg, uint64_t seed, gyro_hrm_model **out);
gyro_status gyro_hrm_new_f64(const gyro_hrm_config *cfg, uint64_t seed, gyro_hrm_model_f64 **out);
void gyro_hrm_free(gyro_hrm_model *m);          /* NULL is a no-op */
void gyro_hrm_free_f64(gyro_hrm_model_f64 *m);

/* ---- activations, forward, backward ------------------------------------------------------- */

typedef enum gyro_hrm_mode {
    GYRO_HRM_ONESTEP = 0, /* N·T−1 steps without activations, then the last L and H update */
    GYRO_HRM_BPTT = 1,    /* every step keeps its activations (acts made with bptt != 0) */
    GYRO_HRM_PREFIX = 2,  /* only the N·T−1 gradient-free steps (the carry advances) */
    GYRO_HRM_TAIL = 3     /* only the last L and H update, from the carry (gradient checks) */
} gyro_hrm_mode;

typedef struct gyro_hrm_acts gyro_hrm_acts;       /* opaque */
typedef struct gyro_hrm_acts_f64 gyro_hrm_acts_f64;

/* Activations for batches of up to max_batch examples: the carry (z_L, z_H), one block cache
 * for f_L and one for f_H (bptt != 0: N·T and T caches, for GYRO_HRM_BPTT), and with training
 * != 0 a gradient cache. USAGE (max_batch < 1), NOMEM. Free with gyro_hrm_acts_free. */
gyro_status gyro_hrm_acts_new(const gyro_hrm_model *m, int max_batch, int training, int bptt,
                              gyro_hrm_acts **out);
gyro_status gyro_hrm_acts_new_f64(const gyro_hrm_model_f64 *m, int max_batch, int training,
                                  int bptt, gyro_hrm_acts_f64 **out);
void gyro_hrm_acts_free(gyro_hrm_acts *a);
void gyro_hrm_acts_free_f64(gyro_hrm_acts_f64 *a);

/* Bytes held by the acts (the memory of a training step besides the model and optimizer). */
size_t gyro_hrm_acts_bytes(const gyro_hrm_acts *a);

/* Set the carry of rows 0..B−1 to the initial state (z_L^0, z_H^0 on every cell). */
void gyro_hrm_carry_reset(const gyro_hrm_model *m, gyro_hrm_acts *a, int B);
void gyro_hrm_carry_reset_f64(const gyro_hrm_model_f64 *m, gyro_hrm_acts_f64 *a, int B);

/* Set the carry of row b (one example: n cells) to the initial state; rows are example slots. */
void gyro_hrm_carry_reset_row(const gyro_hrm_model *m, gyro_hrm_acts *a, int b);
void gyro_hrm_carry_reset_row_f64(const gyro_hrm_model_f64 *m, gyro_hrm_acts_f64 *a, int b);

/* Copy the carry of rows 0..B−1 out (get) or in (set): zl, zh (B, n, C). */
void gyro_hrm_carry_get_f64(const gyro_hrm_acts_f64 *a, double *zl, double *zh, int B);
void gyro_hrm_carry_set_f64(gyro_hrm_acts_f64 *a, const double *zl, const double *zh, int B);
void gyro_hrm_carry_set(gyro_hrm_acts *a, const float *zl, const float *zh, int B);
void gyro_hrm_carry_get(const gyro_hrm_acts *a, float *zl, float *zh, int B);
/* Rows of the carry (max_batch · n rows of C values each). */

/* Keep the rows b with keep[b] != 0 (in order) of the carry: the batch shrinks to the returned
 * count. Used when examples halt. */
int gyro_hrm_carry_keep(gyro_hrm_acts *a, const int *keep, int B);
int gyro_hrm_carry_keep_f64(gyro_hrm_acts_f64 *a, const int *keep, int B);

/* One segment over tokens (B, n) in [0, V), B <= max_batch, from the carry, which it advances.
 * Afterwards the logits (B, n, K) and Q logits (B, 2) are available (not for PREFIX). USAGE (B
 * out of range, BPTT on acts made without bptt), DATA (a token outside [0, V)). */
gyro_status gyro_hrm_forward(const gyro_hrm_model *m, gyro_hrm_acts *a, const int32_t *tokens,
                             int B, gyro_hrm_mode mode);
gyro_status gyro_hrm_forward_f64(const gyro_hrm_model_f64 *m, gyro_hrm_acts_f64 *a,
                                 const int32_t *tokens, int B, gyro_hrm_mode mode);

/* Logits (B, n, K) and Q logits (B, 2) = (halt, continue) of the last forward (Q̂ = σ of
 * them); owned by the acts. */
const float *gyro_hrm_logits(const gyro_hrm_acts *a);
const float *gyro_hrm_qlogits(const gyro_hrm_acts *a);
const double *gyro_hrm_logits_f64(const gyro_hrm_acts_f64 *a);
const double *gyro_hrm_qlogits_f64(const gyro_hrm_acts_f64 *a);

/* Backward of the last forward (ONESTEP, TAIL or BPTT; acts made with training != 0): from
 * dlogits (B, n, K) and dq (B, 2) (either may be NULL), ACCUMULATE the parameter gradients into
 * grads (n_params). In ONESTEP/TAIL only the last L and H update are differentiated (the carry
 * they start from is a constant); in BPTT every step of the segment (the carry the segment
 * started from is a constant). */
void gyro_hrm_backward(const gyro_hrm_model *m, gyro_hrm_acts *a, float *grads,
                       const float *dlogits, const float *dq);
void gyro_hrm_backward_f64(const gyro_hrm_model_f64 *m, gyro_hrm_acts_f64 *a, double *grads,
                           const double *dlogits, const double *dq);

/* The segment loss of the last forward:
 *   (1/|cells|) Σ_{labelled cells} CE(softmax(logits_{b,t}), labels_{b,t})
 *   + (1/B) Σ_b [ BCE(σ(q_b,halt), G_b,halt) + BCE(σ(q_b,cont), G_b,cont) ]
 * labels (B, n) in [0, K), or −1 for a cell without loss (a Sudoku clue: given, not predicted);
 * qtarget (B, 2) = (G_halt, G_continue) in [0, 1] or NULL (no Q loss). Writes the gradients
 * dlogits (B, n, K) and dq (B, 2) (when not NULL) and returns the loss (double accumulation). */
double gyro_hrm_loss(float *dlogits, float *dq, const gyro_hrm_acts *a, const int *labels,
                     const float *qtarget, int B);
double gyro_hrm_loss_f64(double *dlogits, double *dq, const gyro_hrm_acts_f64 *a,
                         const int *labels, const double *qtarget, int B);

/* ---- training and inference (float32) ----------------------------------------------------- */

typedef struct gyro_hrm_trainer gyro_hrm_trainer;

typedef struct gyro_hrm_train_config {
    double lr;           /* Adam learning rate (Euclidean tensors) */
    double ball_lr;      /* Riemannian SGD learning rate (ball rows, hyperbolic geometry) */
    double weight_decay; /* decoupled, Euclidean tensors */
    double clip_norm;    /* global gradient-norm clip (0: none) */
    int max_batch;
    int act;             /* 1: ACT halting in training; 0: every example runs M_max segments */
    int bptt;            /* 1: full BPTT through each segment instead of the one-step gradient */
    double q_weight;     /* weight of the Q head's BCE in gyro_hrm_train_step (the paper: 0.5) */
} gyro_hrm_train_config;

/* lr 1e-3, ball_lr 0.01, weight decay 0, clip 1, batch 32, ACT on, one-step gradient, Q weight
 * 0.5. */
gyro_hrm_train_config gyro_hrm_train_config_default(void);

/* The default schedule of a training run over the persistent batch (gyro_hrm_train_step; the
 * caller's loop applies it, e.g. `gyro hrm train`): the share GYRO_HRM_DS_START of the run trains
 * one segment per example (a plain pass of the recurrence, gyro_hrm_config.m_max set to 1), deep
 * supervision with every example running M_max segments follows (the Q head learning its targets,
 * gyro_hrm_trainer_set_min_segments(t, M_max)), and ACT may halt early from the share
 * GYRO_HRM_ACT_START on. The best schedule of tests/bench/hrm_sudoku.sh (1,200 CPU s, M_max 2). */
#define GYRO_HRM_DS_START 0.3
#define GYRO_HRM_ACT_START 0.9

/* A trainer over a model (borrowed; must outlive it): Adam (models/optim.h; Riemannian SGD for
 * ball rows), training acts, the slots of gyro_hrm_train_step (all vacant), and at the first
 * gyro_hrm_train_batch with ACT the look-ahead acts of its Q targets. USAGE (bad batch, lr,
 * ball_lr, clip or q_weight), NOMEM. */
gyro_status gyro_hrm_trainer_new(gyro_hrm_model *m, const gyro_hrm_train_config *tc,
                                 gyro_hrm_trainer **out);
void gyro_hrm_trainer_free(gyro_hrm_trainer *t); /* NULL is a no-op */

typedef struct gyro_hrm_batch_stats {
    double loss;         /* mean segment loss over the segments run (CE + Q BCE) */
    double ce;           /* its cross-entropy part */
    double seg_acc;      /* cell accuracy of the last segment of each example (labelled cells) */
    long segments;       /* segments run, summed over the examples */
    long steps;          /* optimizer steps (one per segment of the batch) */
    long solved;         /* examples whose last segment was exactly right */
} gyro_hrm_batch_stats;

/* Deep supervision with ACT on one batch of B <= max_batch examples: tokens (B, n) in [0, V)
 * and labels (B, n) in [0, K) or −1 (no loss on the cell; not part of "the answer is right"). Each example draws M_min (uniform from {2..M_max} with
 * probability ε, else 1); the carry starts at z^0; for m = 1, 2, …: a one-step-gradient
 * segment, then a gradient-free look-ahead segment from the new carry gives Q̂^{m+1}; targets
 *   G_halt = 1{ŷ^m = y},  G_continue = Q̂_halt^{m+1} if m >= M_max, else max(Q̂_halt^{m+1},
 *   Q̂_continue^{m+1})
 * (seed, "Adaptive Computational Time"); loss = CE + BCE (gyro_hrm_loss); one Adam step; the
 * carry is detached (it is a constant of the next segment). An example halts when m = M_max or
 * (m >= M_min and Q̂_halt > Q̂_continue) and leaves the batch. GYRO_ERR_NAN stops (parameters
 * unchanged by the failing step); DATA on a bad token or label; NOMEM when the look-ahead acts
 * cannot be made. */
gyro_status gyro_hrm_train_batch(gyro_hrm_trainer *t, const int32_t *tokens, const int *labels,
                                 int B, gyro_rng *rng, gyro_hrm_batch_stats *stats);

/* Deep supervision over a persistent batch (the "carry" of the HRM paper's code): the trainer
 * holds max_batch example slots, each with its carry (z_L, z_H), its segment count m and its
 * M_min. One call is ONE segment and ONE optimizer step:
 *   1. the vacant slots (all of them at the first call, afterwards those whose example halted in
 *      the previous call) take the next fresh examples, in order, from tokens/labels (rows
 *      0..n_fresh−1, as gyro_hrm_train_batch; *used gets how many were taken): carry z^0, m = 0,
 *      M_min drawn as in gyro_hrm_train_batch;
 *   2. a one-step-gradient segment on every slot (m += 1);
 *   3. loss = CE + w_Q · [BCE(σ(q_halt), G_halt) + BCE(σ(q_cont^{prev}), G_cont^{prev})] with
 *      G_halt = 1{ŷ^m = y}; the continue target of the slot's PREVIOUS segment is read from this
 *      segment's Q̂ (the segment the look-ahead of gyro_hrm_train_batch would have run):
 *      G_cont^{m−1} = Q̂_halt^m if m = M_max (only halting is left), else max(Q̂_halt^m,
 *      Q̂_cont^m); its gradient reaches the Q head's continue row from the features and logit kept
 *      from the previous segment (the trunk gets the CE and halt gradients of every segment); a
 *      slot that halts gets no continue target (its example leaves);
 *   4. one Adam step; the slot halts when m = M_max or (m >= M_min and Q̂_halt > Q̂_continue) and
 *      is vacant for the next call; the others carry their detached state on.
 * So every segment run is a training segment (no look-ahead forward) and fresh examples enter as
 * soon as others halt. USAGE (n_fresh < vacant slots), DATA (bad token or label: the step is not
 * taken), GYRO_ERR_NAN. */
typedef struct gyro_hrm_step_stats {
    double loss;         /* of this segment (CE + weighted Q BCE) */
    double ce;           /* its cross-entropy part */
    int running;         /* examples in the segment */
    int halted;          /* of them, examples that halted after it */
    long halted_segments; /* segments the halted examples ran, summed */
    long solved;         /* halted examples exactly right */
    long cells, right;   /* labelled cells of the halted examples, and right ones */
} gyro_hrm_step_stats;

gyro_status gyro_hrm_train_step(gyro_hrm_trainer *t, const int32_t *tokens, const int *labels,
                                int n_fresh, int *used, gyro_rng *rng, gyro_hrm_step_stats *stats);

/* From the next fresh example on, gyro_hrm_train_step gives every example that enters a slot
 * at least m segments (its M_min is max(m, the drawn M_min); m < 1 counts as 1, the default):
 * with m = M_max every example runs M_max segments and the Q head learns its targets without
 * halting anyone (a deep-supervision phase before ACT decides). */
void gyro_hrm_trainer_set_min_segments(gyro_hrm_trainer *t, int m);

/* Vacant slots: how many fresh examples the next gyro_hrm_train_step takes. */
int gyro_hrm_trainer_vacant(const gyro_hrm_trainer *t);

/* The parameter gradient (n_params, the model's layout) of the trainer's last optimizer step
 * (gyro_hrm_train_step, or the last segment of gyro_hrm_train_batch), before gradient clipping;
 * all zeros before the first step. Owned by the trainer; overwritten by the next step. */
const float *gyro_hrm_trainer_grads(const gyro_hrm_trainer *t);

/* Inference on B <= max_batch examples with acts made by gyro_hrm_acts_new (any training
 * flag): segments from z^0 until Q̂_halt > Q̂_continue (act != 0) or M_max. pred (B, n) gets
 * the argmax class per cell of each example's last segment, segs (B) (may be NULL) the
 * segments used. `on_segment` (may be NULL) is called after every segment with the current
 * predictions of the still-running examples (index into the original batch in `idx`). */
typedef void (*gyro_hrm_segment_fn)(void *ctx, int segment, const int *idx, const int *pred,
                                    int B_running);
gyro_status gyro_hrm_solve(const gyro_hrm_model *m, gyro_hrm_acts *a, const int32_t *tokens,
                           int B, int act, int *pred, int *segs, gyro_hrm_segment_fn on_segment,
                           void *ctx);

/* ---- model file --------------------------------------------------------------------------- */

/* Save atomically: magic "GYROHRM1", format version (2), configuration, parameters, CRC-32
 * checksum. GYRO_ERR_NAN when a parameter is not finite, GYRO_ERR_IO on failure (the target is
 * unchanged either way). */
gyro_status gyro_hrm_save(const gyro_hrm_model *m, const char *path);

/* Load a model saved by gyro_hrm_save (format version 1, without q_pool, loads as MEAN).
 * GYRO_ERR_IO (cannot open), GYRO_ERR_FORMAT (foreign, truncated, implausible configuration,
 * checksum mismatch, non-finite parameter; the message names the path), GYRO_ERR_VERSION (a
 * newer format), GYRO_ERR_NOMEM. */
gyro_status gyro_hrm_load(const char *path, gyro_hrm_model **out);

#endif

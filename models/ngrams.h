/* ngrams.h — the bag-of-n-grams intent classifier: fastText's architecture (Joulin et al.,
 * "Bag of Tricks for Efficient Text Classification", EACL 2017) in the Poincaré ball, as
 * HyperText did (Zhu et al., "HyperText: Endowing FastText with Hyperbolic Geometry",
 * Findings of EMNLP 2020), and its Euclidean twin.
 *
 * An utterance is a bag of features: its characters (vocabulary rows; UNK is row 0) and its
 * character n-grams of 2..max_n, hashed into `buckets` rows (fastText's hashing trick). With
 * `context`, the previous turn of the same session adds its characters and bigrams, hashed
 * with their own salt so they get rows of their own; the context features together weigh
 * `context_weight` (in units of one utterance feature: a short, ambiguous utterance leans on its
 * context more than a long one). For a bag of rows x_j with weights w_j:
 *
 *   hyperbolic: y = exp0(Σ w_j log0(x_j) / Σ w_j)   (pool "tangent", the default: the mean in
 *                   the tangent space at the origin, as HNN/HGCN aggregate), or
 *               y = Einstein midpoint of the x_j      (pool "einstein", HyperText; poincare.h),
 *               then logit_k = hyperbolic MLR (Ganea 2018 eq. 25) of y, offsets p_k, normals a_k
 *   euclidean:  y = Σ w_j x_j / Σ w_j, then logit_k = <a_k, y> + b_k          (fastText)
 *
 * With `hierarchy`, labels share parent classes read from their names: the atoms of a label
 * set "A+B" and the part of each atom before its first '.' (NLPCC's and SMP's domain in
 * "domain.intent", CrossWOZ's act in "Inform.景点"); a parent two or more labels share gets a
 * head row of its own (the same MLR, or the Euclidean dot product), and a label's logit is its
 * own plus its parents': logit_k = l_k(y) + Σ_{q ∈ parents(k)} l_{K+q}(y). The loss stays the
 * softmax over the K labels, so a parent learns from every example of its children: a rare
 * label set or intent borrows the direction its domain or atoms learned from the frequent ones
 * (the parent-prototype idea of hierarchical classifiers; Nickel & Kiela 2017 for why a
 * hierarchy suits the ball).
 *
 * Training (models/train_classifier.h, arch ngrams) takes one example at a time, as fastText
 * does: Riemannian SGD on the ball rows it touched (the embedding rows of the bag and the
 * offsets p_k), plain SGD on the rest, with a linearly decaying learning rate. The model owns
 * one parameter block described by a tensor table (the same gyro_tf_tensor records the
 * transformer uses), which the model file stores.
 */
#ifndef GYRO_MODELS_NGRAMS_H
#define GYRO_MODELS_NGRAMS_H

#include <stddef.h>
#include <stdint.h>

#include "models/core/status.h"
#include "models/transformer.h"

typedef struct gyro_ngrams_config {
    int geometry;          /* GYRO_TF_GEOMETRY_EUCLIDEAN or GYRO_TF_GEOMETRY_HYPERBOLIC */
    int vocab_size;        /* character rows including UNK (row 0); set by training */
    int n_classes;         /* set by training */
    int dim;               /* embedding dimension */
    int buckets;           /* hashed n-gram rows (0: characters only) */
    int max_n;             /* longest hashed n-gram (1: characters only) */
    int max_len;           /* characters of an utterance (and of its context) used */
    int context;           /* 1: the previous turn's features join the bag */
    float context_weight;  /* their total weight, in utterance features (> 0) */
    float curvature;       /* c of the ball (hyperbolic) */
    int pool;              /* gyro_ngrams_pool (hyperbolic) */
    int hierarchy;         /* 1: parent classes from the label names (above) */
    int n_parents;         /* P, the parent head rows; gyro_ngrams_new derives it from the labels */
} gyro_ngrams_config;

/* How the hyperbolic model pools its bag (the Euclidean one takes the weighted mean). */
typedef enum gyro_ngrams_pool {
    GYRO_NGRAMS_POOL_EINSTEIN = 0,   /* the Einstein midpoint (HyperText) */
    GYRO_NGRAMS_POOL_TANGENT = 1     /* exp0 of the weighted mean of the log0 of the rows */
} gyro_ngrams_pool;

/* Defaults: 100-d, 200,000 buckets, n-grams up to 2, 128 characters, no context (weight 1
 * when enabled), no hierarchy (a model file without the field has none; training turns both
 * on, train_classifier.h), c = 1, tangent pooling (measured on the NLPCC session dev split: 90.27%
 * against 89.61% for the Einstein midpoint, medians of 3 seeds, c = 0.1). vocab_size and n_classes are 0 (training fills them in). */
gyro_ngrams_config gyro_ngrams_config_default(int geometry);

/* GYRO_ERR_USAGE naming the bad field, or GYRO_OK. */
gyro_status gyro_ngrams_config_validate(const gyro_ngrams_config *cfg);

/* Number of parameter values of a valid configuration. */
size_t gyro_ngrams_param_count(const gyro_ngrams_config *cfg);

typedef struct gyro_ngrams_model {
    gyro_ngrams_config cfg;
    float *params;             /* (n_params) the one parameter block, owned */
    size_t n_params;
    float *emb;                /* (vocab_size + buckets, dim)  ball rows (hyperbolic) */
    float *head_a;             /* (K + P, dim)  MLR normals a_k / Euclidean class weights */
    float *head_p;             /* (K + P, dim)  MLR offsets p_k, ball rows (hyperbolic only; else NULL) */
    float *head_b;             /* (K + P)       class biases (Euclidean only; else NULL) */
    int32_t *parent_start;     /* (K + 1) label k's parents are parent_idx[start[k] .. start[k+1]) */
    int32_t *parent_idx;       /* (start[K]) parent ids in 0..P−1; both NULL without hierarchy */
    gyro_tf_tensor tensors[3]; /* offsets into params */
    int n_tensors;
} gyro_ngrams_model;

/* Create a model: with init, seeded parameters (embedding rows uniform in ±1/dim, the head at
 * zero, fastText's initialisation); without, zeros (a loader fills them). `labels` (K names)
 * gives the parent classes when cfg->hierarchy (then the model's cfg.n_parents is P, whatever
 * cfg->n_parents said); it may be NULL without hierarchy. Errors: GYRO_ERR_USAGE (bad
 * configuration, hierarchy without labels), GYRO_ERR_NOMEM. */
gyro_status gyro_ngrams_new(const gyro_ngrams_config *cfg, const char *const *labels, uint64_t seed,
                            int init, gyro_ngrams_model **out);

/* Rows of the head: K labels and P parents. Logit buffers of forward and backward hold this
 * many values. */
int gyro_ngrams_head_rows(const gyro_ngrams_model *m);

/* Free a model. NULL is a no-op. */
void gyro_ngrams_free(gyro_ngrams_model *m);

/* The hash of one token (64-bit FNV-1a of its UTF-8 bytes), the input of gyro_ngrams_features. */
uint64_t gyro_ngrams_token_hash(const char *token);

/* The feature rows of n tokens: unigram ids uni (n) (vocabulary rows, 0 = UNK) and token
 * hashes h (n). An utterance (context 0) gives its unigrams and its hashed n-grams 2..max_n;
 * a context (context 1) gives its unigrams and bigrams, all hashed with the context salt (so
 * the same character has a different row as context). At most max_len tokens are used (the
 * last ones for a context, the first ones otherwise) and at most `cap` rows written to `rows`;
 * returns the number written. */
int gyro_ngrams_features(const gyro_ngrams_model *m, const int32_t *uni, const uint64_t *h, int n,
                         int context, int32_t *rows, int cap);

/* The most rows one bag can have: max_len unigrams, max_len·(max_n − 1) n-grams and, with
 * context, 2·max_len context rows. */
int gyro_ngram_bag_cap(const gyro_ngrams_model *m);

/* Forward of one bag: rows (nf), weights w (nf, NULL for all ones; > 0), y (dim) the pooled
 * point, logits (K + P): the K labels' logits (parents' added), then the P parents' own. nf ≥ 1. */
void gyro_ngrams_forward(const gyro_ngrams_model *m, const int32_t *rows, const float *w, int nf,
                         float *y, float *logits);

/* Backward of one bag given dlogits (K + P: the first K are the labels' gradients; the last P
 * are overwritten with the parents', the sums over their children) and the forward's y: adds
 * the gradients of the bag's rows to dX (nf, dim) (row j for rows[j]), and of the head to dA
 * (K + P, dim), dP (K + P, dim, hyperbolic) and dB (K + P, Euclidean); any of them may be NULL. */
void gyro_ngrams_backward(const gyro_ngrams_model *m, const int32_t *rows, const float *w, int nf,
                          const float *y, float *dlogits, float *dX, float *dA, float *dP,
                          float *dB);

/* One SGD step from the gradients of gyro_ngrams_backward: embedding rows (rate lr) and the
 * offsets p_k (rate head_lr) take Riemannian SGD steps in the ball (poincare.h, rsgd_step),
 * the rest x −= rate·g (the head's tensors at head_lr). `freeze_below`: embedding rows <
 * freeze_below are not updated (a frozen pretrained table). */
void gyro_ngrams_step(gyro_ngrams_model *m, const int32_t *rows, int nf, const float *dX,
                      const float *dA, const float *dP, const float *dB, float lr, float head_lr,
                      int freeze_below);

/* The first non-finite parameter: its tensor (NULL if all finite) and index within it. */
const gyro_tf_tensor *gyro_ngrams_first_nonfinite(const gyro_ngrams_model *m, size_t *at);

#endif

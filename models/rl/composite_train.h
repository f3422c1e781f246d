/* composite_train.h — the composite-intent policy: supervised start, GRPO fine-tuning, and
 * exact-set evaluation (models/rl/composite.h gives the episode and the policy).
 *
 * Supervised start: every training utterance with gold atoms a_1 < … < a_n (bytewise) gives
 * n + 1 teacher-forced states — (utterance, {}) → a_1, (utterance, {a_1}) → a_2, …,
 * (utterance, {a_1..a_n}) → STOP — and the classifier is trained on them with softmax
 * cross-entropy (gyro_train_classifier: early stopping on the dev states).
 *
 * GRPO (models/rl/grpo.h, seed eq. 41–45): each iteration draws B utterances (a seeded shuffled
 * order, epoch after epoch), samples G episodes of each from the current policy (the "old"
 * policy), rewards them by F1, normalises the rewards within each group into advantages and
 * records every step's state, valid-action mask, action, log π_old and log π_ref (the frozen
 * reference, usually the supervised start). Then E gradient steps on the clipped surrogate with
 * the KL penalty, each sample weighted 1 / (B·G·len(episode)); d loss / d logp goes through the
 * masked log-softmax into the transformer's backward; Euclidean tensors take Adam steps and ball
 * rows Riemannian SGD (models/optim.h). No dropout during fine-tuning (the ratio compares the
 * same function). The same seed and data give the same policy.
 *
 * Evaluation is greedy (argmax over the valid actions) or a beam search over atom sequences
 * (gyro_composite_beam_decode): exact-set accuracy, mean F1, atom P/R/F1.
 *
 * A second start: gyro_composite_from_classifier takes a flat classifier's transformer (e.g. one
 * trained over the label sets) with a fresh head over the atoms and STOP, and
 * gyro_composite_train_supervised trains it on the teacher-forced states under the masked
 * softmax, stopping early on held-out exact-set accuracy.
 */
#ifndef GYRO_RL_COMPOSITE_TRAIN_H
#define GYRO_RL_COMPOSITE_TRAIN_H

#include <stdint.h>
#include <stdio.h>

#include "models/rl/composite.h"
#include "models/rl/grpo.h"
#include "models/train_classifier.h"

/* Utterances encoded for one policy. */
typedef struct gyro_composite_data {
    int n;
    int max_len;
    int32_t *ids;    /* (n, max_len) utterance token ids */
    int *len;        /* (n) tokens of each utterance (0 when nothing is left after normalizing) */
    int *n_gold;     /* (n) */
    int *gold;       /* (n, GYRO_LABEL_MAX_ATOMS) gold atoms as class ids, −1 unknown */
} gyro_composite_data;

/* Tokenize and encode every example of `set` for policy p. Errors: GYRO_ERR_DATA for a bad
 * label (with its record number), the tokenizer's errors, GYRO_ERR_NOMEM. */
gyro_status gyro_composite_data_build(const gyro_composite_policy *p, const gyro_example_set *set,
                                      gyro_composite_data *out);
void gyro_composite_data_free(gyro_composite_data *d);

/* The teacher-forced states of `in` (see the file comment) appended to `out`, with atom markers
 * ranked over the sorted distinct atoms atoms[0..n_atoms); examples with an atom outside that
 * list are left out and counted in *skipped (may be NULL). Errors: GYRO_ERR_DATA for a bad label,
 * GYRO_ERR_LIMIT for more atoms than markers, GYRO_ERR_NOMEM. */
gyro_status gyro_composite_teacher_forced(const gyro_example_set *in, const char *const *atoms,
                                          int n_atoms, gyro_example_set *out, int *skipped);

/* The training options of the supervised start (what `gyro rl finetune --env composite` uses):
 * gyro_train_options_init for the geometry with a model of width `dim` (dim / heads coordinates
 * per head, rounded up; feed-forward width 2·dim), `layers` blocks and `heads` heads, `epochs`
 * epochs at a constant learning rate, no dev set held out of training. The caller may change
 * any field afterwards (seed, quiet, stop...). */
void gyro_composite_supervise_options_init(gyro_train_options *o, gyro_tf_geometry geometry, int dim,
                                           int layers, int heads, int epochs);

/* Supervised start: collect the atoms of `train`, build the teacher-forced states of train and
 * dev (dev may be NULL) and train a classifier on them with `opt` (arch must be
 * GYRO_ARCH_TRANSFORMER, else GYRO_ERR_USAGE). *out owns the policy. Errors: those of
 * gyro_composite_teacher_forced and gyro_train_classifier. On
 * GYRO_ERR_INTERRUPTED (opt->stop) *out also owns a policy, the best so far, for the caller to
 * save; on every other error *out is NULL. */
gyro_status gyro_composite_supervise(const gyro_train_options *opt, const gyro_example_set *train,
                                     const gyro_example_set *dev, gyro_composite_policy **out,
                                     gyro_train_result *res);

/* A policy started from a flat transformer classifier (`gyro classify train --arch transformer`
 * over the label sets; an n-gram model is GYRO_ERR_USAGE):
 * its transformer configuration and every parameter tensor of the same shape (embeddings of its
 * tokens, blocks, positional scale...) are copied; the classes are the sorted distinct atoms of
 * `train` and STOP, whose head is fresh (seeded), and the atom markers the flat vocabulary lacks
 * get fresh embedding rows. Train it with gyro_composite_train_supervised. Errors: GYRO_ERR_DATA
 * (no example, a bad label with its record number), GYRO_ERR_LIMIT, GYRO_ERR_NOMEM, those of
 * gyro_classifier_create. */
gyro_status gyro_composite_from_classifier(const gyro_classifier *flat, const gyro_example_set *train,
                                           uint64_t seed, gyro_composite_policy **out);

typedef struct gyro_composite_sft_options {
    int epochs;              /* default 20 */
    int batch;               /* states per step (default 32, at most 256) */
    int patience;            /* epochs without a better held-out exact-set accuracy (default 5; 0 never) */
    double dev_fraction;     /* utterances held out of train without a dev set (default 0.1) */
    gyro_optim_config optim; /* gyro_optim_config_default */
    gyro_sgdr sgdr;          /* t0 0: constant learning rate (default) */
    uint64_t seed;
    volatile int *stop;      /* set non-zero to stop after the current step (INTERRUPTED) */
    FILE *log;               /* a line per epoch (NULL = none) */
} gyro_composite_sft_options;

/* The defaults above (epochs 20, batch 32, patience 5, dev fraction 0.1, gyro_optim_config_default,
 * constant learning rate, seed 1; no stop flag, no log). */
gyro_composite_sft_options gyro_composite_sft_options_default(void);

/* Supervised training of an existing policy p (e.g. from gyro_composite_from_classifier) on the
 * teacher-forced states of train (see the file comment), cross-entropy under the masked softmax
 * of the episode's valid actions (what decoding uses), dropout as p's configuration says. Early
 * stopping on the greedy exact-set accuracy of dev's utterances (NULL: dev_fraction of train's
 * utterances are held out); p ends with the best epoch's parameters. res (may be NULL): epochs,
 * best_epoch, best_dev_accuracy (exact-set), train_loss, steps, seconds, n_train (states), n_dev
 * (utterances). Errors: GYRO_ERR_USAGE (bad options), GYRO_ERR_DATA (no usable state; bad
 * labels), GYRO_ERR_NAN, GYRO_ERR_INTERRUPTED (p then holds the best parameters so far),
 * GYRO_ERR_NOMEM, the transformer's. */
gyro_status gyro_composite_train_supervised(gyro_composite_policy *p, const gyro_example_set *train,
                                            const gyro_example_set *dev,
                                            const gyro_composite_sft_options *o, gyro_train_result *res);

/* Greedy episodes over every utterance of d: exact-set accuracy and mean F1 (either may be NULL).
 * Errors: GYRO_ERR_NOMEM, the transformer's. */
gyro_status gyro_composite_evaluate(const gyro_composite_policy *p, const gyro_composite_data *d,
                                    double *exact, double *f1);

/* One greedy episode on utterance i of d, step by step. */
typedef struct gyro_composite_trace {
    gyro_composite_episode ep;                    /* the final state (gold from d) */
    int n_steps;
    int action[GYRO_COMPOSITE_MAX_STEPS + 1];     /* class ids, STOP included */
    double prob[GYRO_COMPOSITE_MAX_STEPS + 1];    /* π(action | state) */
} gyro_composite_trace;

/* Run the greedy policy on utterance i (0 <= i < d->n) and record its steps. Errors:
 * GYRO_ERR_USAGE (i out of range), GYRO_ERR_NOMEM, the transformer's. */
gyro_status gyro_composite_greedy_trace(const gyro_composite_policy *p, const gyro_composite_data *d,
                                        int i, gyro_composite_trace *out);

#define GYRO_COMPOSITE_MAX_BEAM 64   /* widest beam of gyro_composite_beam_decode */

/* Beam search over atom sequences on every utterance of d. A hypothesis is scored by the sum of
 * the log-probabilities of its steps under the masked policy, STOP included, so a set is scored
 * by its atom sequence and the decision to stop there. Each step expands every running
 * hypothesis by every valid action; finished hypotheses compete with the expansions; of two
 * hypotheses with the same emitted set (order aside) and the same done flag only the better is
 * kept (their continuations score alike); the best `width` survive. Decoding ends when every
 * survivor has stopped (or reached GYRO_COMPOSITE_MAX_STEPS atoms); the answer is the best one.
 * Width 1 is the greedy policy. pred (d->n, GYRO_COMPOSITE_MAX_STEPS) receives the emitted class
 * ids in emission order, n_pred (d->n) their counts, score (d->n, may be NULL) the best score.
 * Errors: GYRO_ERR_USAGE (width outside 1..GYRO_COMPOSITE_MAX_BEAM), GYRO_ERR_NOMEM, the
 * transformer's. */
gyro_status gyro_composite_beam_decode(const gyro_composite_policy *p, const gyro_composite_data *d,
                                       int width, int *pred, int *n_pred, double *score);

/* Figures of a decoded set of utterances. */
typedef struct gyro_composite_scores {
    int n;                    /* utterances */
    double exact;             /* exact-set accuracy: emitted set == gold set */
    double mean_f1;           /* mean set-F1 per utterance */
    int n_composite;          /* utterances whose gold set has >= 2 atoms */
    double exact_composite;   /* exact-set accuracy on those (NaN when none) */
    long tp, fp, fn;          /* atoms over all utterances (an atom unknown to the policy is a fn) */
    double atom_p, atom_r, atom_f1;   /* micro precision, recall, F1 over atoms */
} gyro_composite_scores;

/* Decode d with beam `width` (gyro_composite_beam_decode) and score it against the gold atoms.
 * Errors: those of gyro_composite_beam_decode. */
gyro_status gyro_composite_score(const gyro_composite_policy *p, const gyro_composite_data *d, int width,
                                 gyro_composite_scores *out);

typedef struct gyro_composite_grpo_options {
    gyro_grpo_config grpo;  /* clip ε, KL β, advantage floor */
    int iterations;         /* default 100 */
    int batch;              /* utterances per iteration B (default 16) */
    int group;              /* episodes per utterance G (default 8) */
    int epochs;             /* gradient steps per iteration E (default 2) */
    double lr;              /* Adam learning rate of Euclidean tensors (default 1e-4) */
    double ball_lr;         /* RSGD learning rate of ball rows (default 0.005) */
    uint64_t seed;
    int eval_every;         /* iterations between dev evaluations in the log (default 10; 0 none) */
    int quiet;              /* no progress line */
    volatile int *stop;     /* set non-zero to stop after the current iteration (INTERRUPTED) */
    FILE *log;              /* a line per evaluation (NULL = none) */
} gyro_composite_grpo_options;

/* The defaults above (100 iterations of 16 utterances x 8 episodes, 2 steps, lr 1e-4, ball lr
 * 0.005, gyro_grpo_config_default, seed 1, a log line every 10 iterations). */
gyro_composite_grpo_options gyro_composite_grpo_options_default(void);

typedef struct gyro_composite_grpo_result {
    int iterations;
    double first_reward;    /* mean sampled reward of the first iteration */
    double last_reward;     /* … and of the last */
    double kl, clip_fraction;  /* of the last gradient step */
    double ratio_dev_mean, ratio_dev_max;   /* |ρ − 1| over the samples at the last gradient step
                                               (ρ = π/π_old; the first step of an iteration has
                                               ρ = 1, so with epochs = 1 both are 0) */
    double seconds;
} gyro_composite_grpo_result;

/* Fine-tune p by GRPO on train against the frozen reference ref (same labels and vocabulary;
 * typically the supervised start). dev (may be NULL) is evaluated for the log. Errors:
 * GYRO_ERR_USAGE (bad options, ref differs from p), GYRO_ERR_DATA (empty train data), GYRO_ERR_NAN,
 * GYRO_ERR_INTERRUPTED, GYRO_ERR_NOMEM. res may be NULL. */
gyro_status gyro_composite_grpo(gyro_composite_policy *p, const gyro_composite_policy *ref,
                                const gyro_composite_data *train, const gyro_composite_data *dev,
                                const gyro_composite_grpo_options *opt,
                                gyro_composite_grpo_result *res);

#endif

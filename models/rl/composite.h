/* composite.h — composite intents, step by step: the episode, its F1 reward and the policy.
 *
 * The policy reads an utterance and emits atomic intents one at a time, then STOP
 * ("query_song", then "play_song", then STOP). An episode's state is (utterance, the set of
 * atoms emitted so far); its terminal reward is the F1 of the emitted set against the gold atom
 * set (1 exactly when the sets are equal):
 *
 *     F1 = 2 |P ∩ G| / (|P| + |G|)
 *
 * The policy is an intent classifier (models/classifier.h: the hyperbolic transformer over the
 * characters of a text, pooled, hyperbolic MLR) whose classes are the atoms plus the action
 * "<stop>". The emitted set enters the input: atom number i (in the bytewise order of the atom
 * names) is written as the private-use character U+E000 + i, and the state's text is the markers
 * of the emitted atoms, in that order, followed by the utterance. So a state is an ordinary text
 * and the supervised start is ordinary classifier training on teacher-forced states, and the
 * policy file is a classifier file. The action distribution is the classifier's softmax masked
 * to the valid actions: atoms not emitted yet, and STOP once at least one atom was emitted;
 * after GYRO_COMPOSITE_MAX_STEPS atoms the episode ends without a STOP action.
 */
#ifndef GYRO_RL_COMPOSITE_H
#define GYRO_RL_COMPOSITE_H

#include <stddef.h>
#include <stdint.h>

#include "models/classifier.h"
#include "models/core/rng.h"
#include "models/core/status.h"
#include "models/text/labels.h"

#define GYRO_COMPOSITE_STOP "<stop>"        /* the class name of the STOP action */
#define GYRO_COMPOSITE_MARK_BASE 0xE000u    /* marker of atom i: U+E000 + i */
#define GYRO_COMPOSITE_MAX_MARKS 6400       /* private-use characters U+E000..U+F8FF */
#define GYRO_COMPOSITE_MAX_STEPS 8          /* most atoms one episode emits */

/* ---- the episode -------------------------------------------------------------------------- */

typedef struct gyro_composite_episode {
    int n_gold;
    int gold[GYRO_LABEL_MAX_ATOMS];          /* gold atoms as class ids; -1: unknown to the policy */
    int n_emitted;
    int emitted[GYRO_COMPOSITE_MAX_STEPS];   /* class ids in emission order */
    int done;
} gyro_composite_episode;

/* Set-F1 of pred[0..n_pred) against gold[0..n_gold) (ids; each list free of repeats; a gold id
 * < 0 never matches). 1 when both are empty, 0 when exactly one is. */
double gyro_composite_f1(const int *gold, int n_gold, const int *pred, int n_pred);

/* Start an episode with n_gold gold ids (at most GYRO_LABEL_MAX_ATOMS are kept). */
void gyro_composite_episode_reset(gyro_composite_episode *ep, const int *gold, int n_gold);

/* valid[k] = 1 when action k (0 <= k < n_actions) may be taken now: an atom not emitted yet, or
 * `stop` once an atom was emitted. Returns the number of valid actions. */
int gyro_composite_valid(const gyro_composite_episode *ep, int stop, int n_actions,
                         unsigned char *valid);

/* Take action a: STOP (a == stop) ends the episode; an atom is appended, and the episode ends
 * once GYRO_COMPOSITE_MAX_STEPS atoms were emitted. Invalid actions (repeats, STOP first) and
 * steps after the end are ignored and return -1; otherwise 0. */
int gyro_composite_step(gyro_composite_episode *ep, int stop, int a);

/* The terminal reward: F1 of the emitted set against the gold set. */
double gyro_composite_reward(const gyro_composite_episode *ep);

/* ---- masked softmax ------------------------------------------------------------------------- */

/* logp[k] = log softmax over the valid actions (computed in double; −inf for invalid ones).
 * At least one action must be valid. Returns log Σ exp over the valid logits. */
double gyro_composite_log_softmax(double *logp, const float *logits, const unsigned char *valid,
                                  int n);

/* Backward of g · logp[a] through the masked log-softmax: dlogits[k] += g ([k = a] − p_k) for
 * valid k (p = exp(logp)), nothing for invalid k. */
void gyro_composite_log_softmax_backward(float *dlogits, const double *logp,
                                         const unsigned char *valid, int n, int a, double g);

/* ---- the policy ------------------------------------------------------------------------------ */

typedef struct gyro_composite_policy {
    gyro_classifier *clf;    /* owned */
    int n_actions;           /* classes of the classifier: the atoms and STOP */
    int stop;                /* class id of STOP */
    int *rank;               /* (n_actions) index of the class's atom in bytewise order; −1 for STOP */
    int32_t *mark;           /* (n_actions) token id of the class's marker (UNK if never seen) */
    int max_len;             /* the transformer's longest input */
} gyro_composite_policy;

/* UTF-8 of the marker of atom index i (0 <= i < GYRO_COMPOSITE_MAX_MARKS) into buf (>= 4
 * bytes + NUL). Returns the number of bytes, 0 for an index out of range. */
int gyro_composite_marker(int i, char *buf);

/* Wrap a classifier (taken over, also on error) whose label set holds GYRO_COMPOSITE_STOP and at
 * least one atom, every class a single atom. GYRO_ERR_FORMAT when it does not (the classifier is
 * freed), GYRO_ERR_NOMEM. Free with gyro_composite_policy_free. */
gyro_status gyro_composite_policy_wrap(gyro_classifier *clf, gyro_composite_policy **out);

/* Load a policy file (a classifier file as gyro_classifier_load). Errors: those of the load,
 * GYRO_ERR_FORMAT when the classifier is not a composite-intent policy. */
gyro_status gyro_composite_policy_load(const char *path, gyro_composite_policy **out);

/* A copy of p with its own classifier (same vocabulary, labels, options and parameters): the
 * frozen reference of fine-tuning. Errors: GYRO_ERR_NOMEM. */
gyro_status gyro_composite_policy_clone(const gyro_composite_policy *p, gyro_composite_policy **out);

/* Free a policy and its classifier. NULL is a no-op. */
void gyro_composite_policy_free(gyro_composite_policy *p);

/* The transformer input of a state: the markers of the emitted atoms (in atom order) followed by
 * the utterance's token ids utt[0..n_utt), truncated to max_len. Writes ids (>= max_len
 * entries) and returns the length (>= 1: an empty state is one UNK token). */
int gyro_composite_encode(const gyro_composite_policy *p, const gyro_composite_episode *ep,
                          const int32_t *utt, int n_utt, int32_t *ids);

/* Gold class ids of a label (its atoms; atoms the policy lacks are −1). Errors: those of
 * gyro_label_parse. */
gyro_status gyro_composite_gold(const gyro_composite_policy *p, const char *label, int *gold,
                                int *n_gold);

#endif

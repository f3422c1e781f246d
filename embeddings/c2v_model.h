/* c2v_model.h — the char2vec model: its options, its two tables and their set-up.
 *
 * The trainer (char2vec.h) and the checkpoint file (checkpoint.h) both build on this; it knows
 * neither. Rows are padded to 16 floats and 64-byte aligned for the trainer's inner loop
 * (char2vec.h explains the layout and the geometry).
 */
#ifndef GYRO_EMBEDDINGS_C2V_MODEL_H
#define GYRO_EMBEDDINGS_C2V_MODEL_H

#include <stdint.h>

#include "embeddings/table.h"
#include "embeddings/vocab.h"
#include "models/core/rng.h"
#include "models/core/status.h"

typedef enum gyro_c2v_geometry {
    GYRO_C2V_HYPERBOLIC = 0,
    GYRO_C2V_EUCLIDEAN = 1
} gyro_c2v_geometry;

#define GYRO_C2V_MAX_SENTENCE 1000   /* tokens per training sentence (longer documents are cut) */
#define GYRO_C2V_MAX_THREADS 256
#define GYRO_C2V_MAX_DIM 4096

typedef struct gyro_c2v_options {
    int geometry;          /* gyro_c2v_geometry (default hyperbolic) */
    int dim;               /* manifold dimension (default 100) */
    int window;            /* maximum window; drawn per centre from 1..window (default 5) */
    int negatives;         /* default 5 */
    int epochs;            /* default 5 */
    int threads;           /* default 1 */
    double sample;         /* subsampling threshold (default 1e-4; 0 = off) */
    double lr;             /* initial learning rate (default 0.05 hyperbolic, 0.025 Euclidean) */
    double theta;          /* shift θ of the score (default 3; unused in Euclidean) */
    double max_step;       /* clip of the tangent step norm (default 1; <= 0 = no clip) */
    double init_scale;     /* spatial coordinates start uniform in ±init_scale/(2·dim) (default 1) */
    double neg_power;      /* negatives ∝ count^neg_power (default 0.75) */
    uint64_t seed;         /* default 1 */
} gyro_c2v_options;

/* Fill the defaults listed above. */
void gyro_c2v_options_init(gyro_c2v_options *o);

/* Check ranges; GYRO_ERR_USAGE with a message naming the option. */
gyro_status gyro_c2v_options_check(const gyro_c2v_options *o);

/* Options given explicitly by the user (a bit each), for gyro_c2v_resume_options. */
enum {
    GYRO_C2V_SET_GEOMETRY = 1u << 0,
    GYRO_C2V_SET_DIM = 1u << 1,
    GYRO_C2V_SET_WINDOW = 1u << 2,
    GYRO_C2V_SET_NEGATIVES = 1u << 3,
    GYRO_C2V_SET_EPOCHS = 1u << 4,
    GYRO_C2V_SET_THREADS = 1u << 5,
    GYRO_C2V_SET_SAMPLE = 1u << 6,
    GYRO_C2V_SET_LR = 1u << 7,
    GYRO_C2V_SET_THETA = 1u << 8,
    GYRO_C2V_SET_MAX_STEP = 1u << 9,
    GYRO_C2V_SET_INIT_SCALE = 1u << 10,
    GYRO_C2V_SET_NEG_POWER = 1u << 11,
    GYRO_C2V_SET_SEED = 1u << 12,
};

/* The options a resumed run trains with: the checkpoint's (`ckpt`), with those the user gave
 * (`user`, the bits of `given` saying which) where a change is safe mid-run:
 *   lr        the linear decay continues from the new initial rate (how a run that went NaN is
 *             continued with a lower rate);
 *   max_step  a clip of each step, no state;
 *   sample    the keep thresholds are recomputed from it at every start, no state.
 * Every other option given with a value other than the checkpoint's is refused: geometry, dim,
 * threads, window, negatives and the initial scale shape the tables and thread states already
 * saved; epochs sets the schedule the saved progress is a fraction of; theta calibrates the
 * distances already learned; the seed's generators are restored from the checkpoint, so a new
 * seed could not be honoured. An option given with the checkpoint's own value is accepted.
 * Returns GYRO_OK and fills *out, or GYRO_ERR_USAGE naming every refused option with both values
 * ("--dim 7 (the checkpoint has 50)"); *out is then the checkpoint's options. */
gyro_status gyro_c2v_resume_options(const gyro_c2v_options *ckpt, const gyro_c2v_options *user,
                                    unsigned given, gyro_c2v_options *out);

typedef struct gyro_c2v_thread_state {
    uint32_t epoch;        /* epochs finished by this thread */
    uint64_t pos;          /* next id index to read (within the thread's shard) */
    gyro_rng rng;
} gyro_c2v_thread_state;

/* Shards: with R ranks (processes, char2vec.h "Several processes") of T threads each, rank r
 * reads ids [n_ids·r/R, n_ids·(r+1)/R) of the encoded corpus and its thread t the t-th of T
 * equal parts of that range; thread state ts[r·T + t]. One process is R = 1. */

typedef struct gyro_c2v_model {
    gyro_c2v_options opt;
    gyro_vocab vocab;      /* owned */
    int row;               /* floats per padded row in `in`/`out` (multiple of 16) */
    int width;             /* used floats per row: dim + 1 (hyperbolic) or dim */
    float *in;             /* (vocab.n, row) centre vectors A, 64-byte aligned */
    float *out;            /* (vocab.n, row) context vectors B */
    uint64_t n_tokens;     /* tokens per epoch (of the encoded corpus) */
    uint64_t n_ids;        /* ids in the encoded corpus (tokens + document ends) */
    uint64_t words_done;   /* tokens processed over all epochs and threads */
    double seconds;        /* training time so far (all runs) */
    int ranks;             /* processes the run is split over (1: a single process) */
    gyro_c2v_thread_state *ts;  /* (ranks * opt.threads), rank-major */
} gyro_c2v_model;

/* Create a model for `vocab` (moved in: *vocab is zeroed) and an encoded corpus of `n_ids` ids
 * holding `n_tokens` tokens, with tables initialised near the origin from opt->seed.
 * Errors: GYRO_ERR_USAGE (options), GYRO_ERR_DATA (empty vocabulary, or a corpus of at most
 * `window` tokens), GYRO_ERR_NOMEM. The model is safe to free after an error. */
gyro_status gyro_c2v_model_init(gyro_c2v_model *m, const gyro_c2v_options *opt, gyro_vocab *vocab,
                                uint64_t n_ids, uint64_t n_tokens);

/* Allocate the zeroed tables and m->ranks (at least 1) × opt.threads thread states for m->opt
 * and m->vocab (sets row and width). Used by gyro_c2v_model_init and the checkpoint loader.
 * GYRO_ERR_NOMEM on failure. */
gyro_status gyro_c2v_model_alloc(gyro_c2v_model *m);

/* Split a freshly initialised model (no training yet) over `ranks` processes: ranks × threads
 * thread states, each at the start of its shard (see above) with its own random stream
 * (those of the first `threads` are the single-process ones). Errors: GYRO_ERR_USAGE (ranks < 1
 * or training already started), GYRO_ERR_NOMEM (the model is unchanged). */
gyro_status gyro_c2v_model_set_ranks(gyro_c2v_model *m, int ranks);

/* The shard [*begin, *end) of the encoded corpus read by thread `t` of rank `r` (see above). */
void gyro_c2v_shard(const gyro_c2v_model *m, int r, int t, uint64_t *begin, uint64_t *end);

/* A zeroed block of n rows of `row` floats, 64-byte aligned (free with free()); NULL when out of
 * memory. */
float *gyro_c2v_rows_alloc(int n, int row);

/* Free everything (a zeroed model is fine). */
void gyro_c2v_model_free(gyro_c2v_model *m);

/* The centre vectors as an embedding table (hyperboloid or Euclidean), rows unpadded, tokens
 * and counts copied; `trained_by` is copied (may be NULL). */
gyro_status gyro_c2v_model_table(const gyro_c2v_model *m, const char *trained_by,
                                 gyro_embedding_table **out);

#endif

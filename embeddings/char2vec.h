/* char2vec.h — skip-gram with negative sampling on the hyperboloid (and its Euclidean twin).
 *
 * The model of ../shared/seeds/hyperbolic-chinese-nlu.txt §4.1 and appendix B (after
 * Leimeister & Wilson 2018): a centre table A and a context table B of points on the
 * hyperboloid (time first, ⟨x,x⟩_L = −1); for a centre c, a context w₀ and negatives w₁..w_k
 *     L = −log σ(⟨A_c,B_w₀⟩_L + θ) − Σᵢ log σ(−⟨A_c,B_wᵢ⟩_L − θ),
 * minimised by Riemannian SGD (Nickel & Kiela 2018): Minkowski gradient, projection onto the
 * tangent space, exponential map of the clipped step, re-projection x₀ = √(1+|x_s|²).
 * `--geometry euclidean` trains word2vec's skip-gram (dot product, plain SGD) in the same loop.
 *
 * Speed (word2vec's recipe): a sigmoid table, a negative table sized to the vocabulary, rows
 * aligned to 64 bytes and padded to 16 floats, dot products accumulated in double lanes, no
 * allocation in the loop, Hogwild threads over shards of the encoded corpus (corpus.h), a
 * dynamic window and subsampling. The hyperbolic update is the closed form of
 * proj → clip → exp → re-project for the specific gradients of this loss, the math-core op
 * gyro_lorentz_skipgram_step_target/centre_f32 (models/hyp/lorentz_skipgram.h), equal to
 * gyro_lorentz_rsgd_step_f32 applied to gyro_lorentz_skipgram_term_f32's gradient (check_hyp_props
 * checks that), at two passes over a row per target like word2vec's.
 *
 * Hogwild and the manifold: two threads may update the same row at once; every update writes
 * x₀ from the row's own spatial part, and after the threads join every row is re-projected
 * with gyro_lorentz_reproject_rounded_f32, so each output row satisfies |⟨x,x⟩_L + 1| well
 * below float rounding of x₀ (measured and reported).
 *
 * Checkpoints: the trainer pauses the workers at sentence boundaries, writes vocabulary, both
 * tables, per-thread position and random state atomically (checkpoint.h), and resumes. On a stop
 * request (Ctrl-C) it writes a checkpoint and returns GYRO_ERR_INTERRUPTED; on a NaN it stops
 * with GYRO_ERR_NAN and keeps the last good checkpoint.
 */
#ifndef GYRO_EMBEDDINGS_CHAR2VEC_H
#define GYRO_EMBEDDINGS_CHAR2VEC_H

#include <signal.h>
#include <stdint.h>

#include "embeddings/corpus.h"
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

typedef struct gyro_c2v_thread_state {
    uint32_t epoch;        /* epochs finished by this thread */
    uint64_t pos;          /* next id index to read (within the thread's shard) */
    gyro_rng rng;
} gyro_c2v_thread_state;

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
    gyro_c2v_thread_state *ts;  /* (opt.threads) */
} gyro_c2v_model;

/* Create a model for `vocab` (moved in: *vocab is zeroed) and an encoded corpus of `n_ids` ids
 * holding `n_tokens` tokens, with tables initialised near the origin from opt->seed.
 * Errors: GYRO_ERR_USAGE (options), GYRO_ERR_DATA (empty vocabulary, or a corpus of at most
 * `window` tokens), GYRO_ERR_NOMEM. The model is safe to free after an error. */
gyro_status gyro_c2v_model_init(gyro_c2v_model *m, const gyro_c2v_options *opt, gyro_vocab *vocab,
                                uint64_t n_ids, uint64_t n_tokens);

/* Allocate the zeroed tables and thread states for m->opt and m->vocab (sets row and width).
 * Used by gyro_c2v_model_init and the checkpoint loader. GYRO_ERR_NOMEM on failure. */
gyro_status gyro_c2v_model_alloc(gyro_c2v_model *m);

/* Free everything (a zeroed model is fine). */
void gyro_c2v_model_free(gyro_c2v_model *m);

/* Progress of a run, filled by gyro_c2v_train. */
typedef struct gyro_c2v_report {
    double seconds;            /* wall time of this run */
    double rate;               /* tokens/s/thread over this run (raw tokens, before subsampling) */
    double loss;               /* mean loss per (centre, context) pair over the last part */
    uint64_t words;            /* tokens processed in this run */
    double manifold_error;     /* max |<x,x>_L + 1| over both tables after the final re-projection */
    int checkpoints;           /* checkpoints written in this run */
} gyro_c2v_report;

typedef struct gyro_c2v_run {
    const char *checkpoint_path;    /* NULL: no checkpoints */
    double checkpoint_every;        /* seconds between checkpoints (<= 0: only on stop) */
    volatile sig_atomic_t *stop;    /* set (e.g. by SIGINT) to checkpoint and stop; may be NULL */
    int quiet;                      /* no progress line */
} gyro_c2v_run;

/* Train from the model's current state to the end of the last epoch, over the open encoded
 * corpus `c` (which must match the vocabulary: fingerprint and size are checked).
 * Returns GYRO_OK when done (rows re-projected, report filled), GYRO_ERR_INTERRUPTED after a
 * stop request (checkpoint written if a path was given), GYRO_ERR_NAN if the loss or a row
 * became non-finite (message says where; the last checkpoint is kept), GYRO_ERR_DATA for a
 * corrupt corpus id, GYRO_ERR_IO / NOMEM. `report` may be NULL. */
gyro_status gyro_c2v_train(gyro_c2v_model *m, const gyro_corpus *c, const gyro_c2v_run *run,
                           gyro_c2v_report *report);

/* The centre vectors as an embedding table (hyperboloid or Euclidean), rows unpadded, tokens
 * and counts copied; `trained_by` is copied (may be NULL). */
gyro_status gyro_c2v_model_table(const gyro_c2v_model *m, const char *trained_by,
                                 gyro_embedding_table **out);

/* Write a checkpoint atomically (checkpoint.c). GYRO_ERR_IO on failure (old file kept). */
gyro_status gyro_c2v_checkpoint_save(const gyro_c2v_model *m, const char *path);

/* Load a checkpoint into *m (initialised here; free it with gyro_c2v_model_free, also on
 * error). Errors: GYRO_ERR_IO (cannot open), GYRO_ERR_FORMAT (foreign, truncated or corrupt
 * file: bad magic, checksum mismatch, impossible sizes), GYRO_ERR_VERSION (newer file). */
gyro_status gyro_c2v_checkpoint_load(const char *path, gyro_c2v_model *m);

#endif

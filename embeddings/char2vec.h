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
 *
 * Several processes (e.g. `mpirun -np N gyro char2vec train`): given a collective hook
 * (run->sync, models/core/sync.h) of N ranks, rank r trains the r-th of N equal ranges of the
 * encoded corpus (read in place with pread: no rank copies the corpus) with its own threads and
 * its own copy of the tables, and every run->sync_every seconds the ranks pause their threads
 * and combine the tables (c2v_sync.h: the Lorentz centroid of the ranks' rows, or the mean
 * displacement of the ranks that moved a row). Each combination first all-reduces a few status words, so every rank
 * takes the same decision at the same point: a rank whose thread failed (NaN, a corrupt or
 * unreadable shard) stops every rank with its status; a stop request on any rank stops all of
 * them with a checkpoint; the run ends when every rank has finished its epochs; checkpoints
 * are decided by rank 0's clock, written by rank 0 after a combination, with every rank's
 * thread states (a --resume needs the same N). The ranks must start from the same model: a
 * hash of options, vocabulary and tables is compared first (a mismatch is GYRO_ERR_USAGE on
 * every rank).
 *
 * Files: the model, its options and set-up are c2v_model.h, the checkpoint file checkpoint.h,
 * the combination of several ranks' tables c2v_sync.h, the trainer here (c2v_model <-
 * checkpoint, c2v_sync <- char2vec: each reaches only down).
 */
#ifndef GYRO_EMBEDDINGS_CHAR2VEC_H
#define GYRO_EMBEDDINGS_CHAR2VEC_H

#include <signal.h>
#include <stdint.h>

#include "embeddings/c2v_model.h"
#include "embeddings/c2v_sync.h"
#include "embeddings/checkpoint.h"
#include "embeddings/corpus.h"
#include "models/core/status.h"
#include "models/core/sync.h"

/* Progress of a run, filled by gyro_c2v_train. */
typedef struct gyro_c2v_report {
    double seconds;            /* wall time of this run */
    double rate;               /* tokens/s/thread over this run (raw tokens, before subsampling) */
    double loss;               /* mean loss per (centre, context) pair over the last part */
    uint64_t words;            /* tokens processed in this run */
    double manifold_error;     /* max |<x,x>_L + 1| over both tables after the final re-projection */
    int checkpoints;           /* checkpoints written in this run */
    uint64_t sync_rounds;      /* combinations of the ranks' tables (several processes) */
    double sync_seconds;       /* wall time spent in them, all-reduce included */
    uint64_t sync_bytes;       /* bytes this rank contributed to each combination's all-reduce */
    double cpu_seconds;        /* CPU time of this process over the run (all threads; getrusage) */
    int alone;                 /* on error: 1 when the other ranks may not know about it (a
                                * transport failure), so the caller must abort the whole job */
} gyro_c2v_report;

/* How the pairs of a window are updated (a choice of each run, not saved in checkpoints). */
typedef enum gyro_c2v_update {
    GYRO_C2V_UPDATE_BATCH = 0,      /* default: negatives shared by `share` consecutive contexts of
                                     * a window (default 2), the window's scores and gradients as
                                     * small matrix products, one step per row
                                     * (embeddings/sgns_batch.h; pWord2Vec's HogBatch): over 2× the
                                     * per-pair update's tokens per CPU-second, ρ within 0.01 of it
                                     * at equal epochs (README, medians of 3 seeds) */
    GYRO_C2V_UPDATE_PAIR = 1        /* each (centre, context) pair with its own negatives, targets
                                     * stepped one after the other (word2vec's and fastText's
                                     * loop) */
} gyro_c2v_update;

/* The contexts that share one draw of negatives when gyro_c2v_run.share is 0. */
enum { GYRO_C2V_SHARE_DEFAULT = 2 };

typedef struct gyro_c2v_run {
    const char *checkpoint_path;    /* NULL: no checkpoints */
    double checkpoint_every;        /* seconds between checkpoints (<= 0: only on stop) */
    volatile sig_atomic_t *stop;    /* set (e.g. by SIGINT) to checkpoint and stop; may be NULL */
    int quiet;                      /* no progress line */
    const gyro_sync *sync;          /* several processes (NULL or size 1: this one alone) */
    double sync_every;              /* seconds between combinations of the ranks' tables (<= 0: 1) */
    uint64_t sync_tokens;           /* > 0: combine whenever a rank has trained this many tokens
                                     * since the last combination, instead of by time (the same
                                     * staleness whatever the machine's speed or load) */
    int combine;                    /* gyro_c2v_combine (default: the Lorentz centroid) */
    int update;                     /* gyro_c2v_update: how a window's pairs are updated */
    int share;                      /* GYRO_C2V_UPDATE_BATCH: consecutive contexts of a window that
                                     * share one draw of negatives; 0: GYRO_C2V_SHARE_DEFAULT;
                                     * < 0 (or >= 2 × window): the whole window, as pWord2Vec */
} gyro_c2v_run;

/* Train from the model's current state to the end of the last epoch, over the open encoded
 * corpus `c` (which must match the vocabulary: fingerprint and size are checked). With several
 * ranks (run->sync), every rank calls this with the same model (m->ranks must equal the number
 * of ranks: gyro_c2v_model_set_ranks) and the same run options; only rank 0 writes
 * checkpoints, every rank ends with the same tables.
 * Returns GYRO_OK when done (rows re-projected, report filled), GYRO_ERR_INTERRUPTED after a
 * stop request (checkpoint written if a path was given), GYRO_ERR_NAN if the loss or a row
 * became non-finite (message says where; the last checkpoint is kept), GYRO_ERR_DATA for a
 * corrupt corpus id, GYRO_ERR_IO / NOMEM; with several ranks, GYRO_ERR_USAGE when the ranks'
 * models differ, the failing rank's status on every rank (with a message saying which rank),
 * GYRO_ERR_UNAVAILABLE when the transport fails (report->alone set). `report` may be NULL. */
gyro_status gyro_c2v_train(gyro_c2v_model *m, const gyro_corpus *c, const gyro_c2v_run *run,
                           gyro_c2v_report *report);

#endif

/* c2v_sync.h — char2vec over several processes: combining the ranks' tables.
 *
 * Each rank trains its shard of the corpus with its own Hogwild threads (char2vec.h) on its own
 * copy of the two tables; every run->sync_every seconds the ranks pause their threads and
 * combine the tables through the collective hook of models/core/sync.h (MPI under mpirun), so
 * that every rank continues from the same tables. Two rules, both keeping each row on the
 * hyperboloid:
 *
 *  GYRO_C2V_COMBINE_MEAN (the default): model averaging, the Lorentz centroid of the ranks'
 *    rows (Law et al., "Lorentzian Distance Learning for Hyperbolic Representations", ICML
 *    2019, eq. 6 with equal weights):
 *        z = Σ_r x_r,  x_new = z / √|⟨z,z⟩_L|
 *    (gyro_lorentz_centroid_f32 with the one point z of weight 1), the point of the hyperboloid
 *    closest to the ranks' rows in squared Lorentzian distance. A row that only one rank
 *    trained since the last combination keeps 1/N of that rank's displacement.
 *  GYRO_C2V_COMBINE_MOVED: the mean of the displacements of the ranks that moved the row, in
 *    the tangent space at the last common point p (Nickel & Kiela 2018 eq. 9-10 for exp/log):
 *        x_new = exp_p( (1/k) Σ_{r moved it} log_p(x_r) ),  k = number of such ranks
 *    so a row seen by one rank only keeps that rank's whole update (the rare characters, which
 *    each rank sees on its own shard), and a row every rank moved gets the average of their
 *    displacements (to first order the centroid above). The plain sum of the displacements
 *    (Hogwild across ranks) was tried first and diverged: between two combinations a rank
 *    makes many steps on the frequent rows, both ranks' displacements point the same way, and
 *    their sum overshoots (an N-fold learning rate on the shared component).
 * In Euclidean geometry the same rules are the arithmetic mean and p + (1/k) Σ (x_r − p).
 * Either way every row is then re-projected (x₀ = √(1 + |x_s|²)).
 *
 * Cost per combination: one all-reduce of 2 · V · (dim+2) floats (both tables, unpadded, and a
 * count per row), i.e. 8·V·(dim+2) bytes per rank; V = 5,000 characters at dim 100 is 4 MB.
 */
#ifndef GYRO_EMBEDDINGS_C2V_SYNC_H
#define GYRO_EMBEDDINGS_C2V_SYNC_H

#include "embeddings/c2v_model.h"
#include "models/core/status.h"
#include "models/core/sync.h"

typedef enum gyro_c2v_combine {
    GYRO_C2V_COMBINE_MEAN = 0,
    GYRO_C2V_COMBINE_MOVED = 1
} gyro_c2v_combine;

/* The state of the combinations of one run: the tables as last combined (p above) and the
 * all-reduce buffer. */
typedef struct gyro_c2v_sync {
    const gyro_sync *sync;   /* borrowed */
    int combine;             /* gyro_c2v_combine */
    float *prev_in;          /* (V, row) the centre table after the last combination */
    float *prev_out;         /* (V, row) the context table after the last combination */
    float *buf;              /* (2, V, width + 1) the all-reduce buffer (a row and its mover count) */
    double *scratch;         /* (3, width) one row's maps in double */
    double seconds;          /* time spent combining (all-reduce included), this run */
    uint64_t rounds;         /* combinations done */
} gyro_c2v_sync;

/* Start: remember m's tables as the common point. Errors: GYRO_ERR_NOMEM (cs is then safe to
 * free). */
gyro_status gyro_c2v_sync_init(gyro_c2v_sync *cs, const gyro_sync *sync, int combine,
                               const gyro_c2v_model *m);

/* Combine m's tables with the other ranks' (collective: every rank calls it at the same point),
 * in place; afterwards the tables are the new common point. The worker threads must be paused.
 * Errors: the transport's (the tables are then unchanged). */
gyro_status gyro_c2v_sync_tables(gyro_c2v_sync *cs, gyro_c2v_model *m);

/* Share the thread states: each rank contributes its own threads' (ts[rank·T .. rank·T+T)) and
 * every rank receives all of them in m->ts (collective). Errors: the transport's, NOMEM. */
gyro_status gyro_c2v_sync_states(const gyro_sync *sync, gyro_c2v_model *m);

/* A hash of everything the ranks must agree on before training: options, ranks, corpus sizes,
 * progress, vocabulary and both tables (for gyro_sync_check_same). */
uint64_t gyro_c2v_model_hash(const gyro_c2v_model *m);

void gyro_c2v_sync_free(gyro_c2v_sync *cs);

#endif

/* sync.h — the collective operations a trainer running as several processes needs, as a small
 * callback interface.
 *
 * Data-parallel training over several processes (ranks, e.g. started by `mpirun -np N`) needs a
 * handful of collectives: an all-reduce of a buffer (sum, min or max, on every rank), and the
 * rank and the number of ranks. The library decides the policy (when to combine, what to
 * average, what to check); the transport behind these function pointers only moves numbers.
 * gyro's transport is MPI (pipeline/mpi_comm.h); models/ and embeddings/ never see it, so the
 * library builds and runs without MPI, and a test may plug in any other implementation.
 *
 * A NULL gyro_sync, or one of size 1, is a single process: every helper below is then a no-op
 * that returns GYRO_OK, so a trainer calls them unconditionally.
 *
 * Errors: a transport failure (a rank died, the network broke) comes back as a status
 * (GYRO_ERR_UNAVAILABLE with the transport's message); the trainer stops and returns it. The
 * collectives are blocking and must be called by every rank in the same order with the same
 * counts and types (MPI's rule); a trainer keeps its ranks in step by deciding every collective
 * from values all ranks already share.
 */
#ifndef GYRO_MODELS_CORE_SYNC_H
#define GYRO_MODELS_CORE_SYNC_H

#include <stddef.h>
#include <stdint.h>

#include "models/core/status.h"

typedef enum gyro_sync_type {
    GYRO_SYNC_F32 = 0,   /* float */
    GYRO_SYNC_F64 = 1,   /* double */
    GYRO_SYNC_U64 = 2    /* uint64_t */
} gyro_sync_type;

typedef enum gyro_sync_op {
    GYRO_SYNC_SUM = 0,
    GYRO_SYNC_MIN = 1,
    GYRO_SYNC_MAX = 2
} gyro_sync_op;

typedef struct gyro_sync {
    int rank;            /* this process, 0 .. size-1 */
    int size;            /* number of processes (1: a single process) */
    void *ctx;           /* the transport's state, passed to the functions below */
    /* Replace buf[0..count) on every rank by the element-wise reduction over all ranks.
     * Returns GYRO_OK or an error status with a message (gyro_error_set). */
    gyro_status (*allreduce)(void *ctx, void *buf, size_t count, gyro_sync_type type, gyro_sync_op op);
    /* Return when every rank has called it. */
    gyro_status (*barrier)(void *ctx);
} gyro_sync;

/* 1 when `s` joins several processes (not NULL, size > 1), else 0. */
int gyro_sync_active(const gyro_sync *s);

/* All-reduce buf (count elements of `type`) in place over the ranks of `s`; a no-op returning
 * GYRO_OK for a single process. Errors: the transport's status. */
gyro_status gyro_sync_allreduce(const gyro_sync *s, void *buf, size_t count, gyro_sync_type type,
                                gyro_sync_op op);

/* Wait for every rank; a no-op for a single process. */
gyro_status gyro_sync_barrier(const gyro_sync *s);

/* Check that every rank passes the same `value` (e.g. a hash of its configuration): one min and
 * one max all-reduce. Returns GYRO_OK when they agree, GYRO_ERR_USAGE with a message naming
 * `what` when they differ ("the ranks disagree on <what>: ..."), or the transport's error. Every
 * rank gets the same answer. */
gyro_status gyro_sync_check_same(const gyro_sync *s, uint64_t value, const char *what);

/* Tell every rank whether every rank succeeded at a step it did on its own (reading a file,
 * loading a model): one max all-reduce of (status, rank). Returns GYRO_OK when all did; else
 * every rank fails: a failed rank gets its own `local` status back (its message kept), the
 * others the first failed rank's status with the message "stopped: rank K failed (STATUS; its
 * message says why)". A transport failure is returned as such with *transport_failed set (may
 * be NULL). A single process gets `local` back. */
gyro_status gyro_sync_agree(const gyro_sync *s, gyro_status local, int *transport_failed);

/* FNV-1a 64 of n bytes, continuing from h (start with GYRO_SYNC_HASH_INIT), for the values
 * gyro_sync_check_same compares. */
#define GYRO_SYNC_HASH_INIT 1469598103934665603ULL
uint64_t gyro_sync_hash(uint64_t h, const void *p, size_t n);

#endif

/* mpi_comm.h — the MPI transport of the library's collective-operation hook (models/core/sync.h).
 *
 * One binary serves both cases: when gyro is built with Open MPI (the Makefile finds it with
 * `pkg-config ompi-c` and defines GYRO_HAVE_MPI), gyro_mpi_open initialises MPI only if the
 * process was started by an MPI launcher, which it sees in the environment (OMPI_COMM_WORLD_SIZE
 * from Open MPI's mpirun, PMIX_RANK from a PMIx launcher such as srun --mpi=pmix, PMI_RANK from
 * MPICH's hydra); otherwise, and in a build without MPI, it returns a single-process
 * communicator and never touches MPI (no singleton MPI_Init, whose start-up costs time and
 * may need a daemon). A build without MPI that finds itself started by mpirun with several
 * ranks refuses with a clear message instead of running N unrelated copies that would race on
 * the same output files.
 *
 * MPI errors are returned, not fatal (MPI_ERRORS_RETURN on a private duplicate of
 * MPI_COMM_WORLD): a failed collective comes back as GYRO_ERR_UNAVAILABLE with MPI's message.
 * Only the main thread calls MPI (MPI_THREAD_FUNNELED); the trainers' worker threads never do.
 * The collectives are the non-blocking ones of MPI 3 (MPI_Iallreduce, MPI_Ibarrier) completed
 * by a loop that tests and sleeps, so a waiting rank costs next to no CPU (mpi_comm.c,
 * wait_sleeping, with the measurement). Written against Open MPI 4.1 (MPI 3.1).
 */
#ifndef GYRO_PIPELINE_MPI_COMM_H
#define GYRO_PIPELINE_MPI_COMM_H

#include "models/core/status.h"
#include "models/core/sync.h"

typedef struct gyro_mpi_comm gyro_mpi_comm;

/* 1 when this gyro was built with MPI, else 0. */
int gyro_mpi_built(void);

/* The number of ranks an MPI launcher announced in the environment (OMPI_COMM_WORLD_SIZE,
 * PMI_SIZE), 1 when none did, or 0 when a launcher is present but did not say. */
int gyro_mpi_env_size(void);

/* Open the communicator: MPI_Init_thread when an MPI launcher started the process (see above),
 * else a single process. *out (free with gyro_mpi_close) is set on success. Errors:
 * GYRO_ERR_USAGE when started by mpirun with several ranks but built without MPI;
 * GYRO_ERR_UNAVAILABLE when MPI cannot start; GYRO_ERR_NOMEM. */
gyro_status gyro_mpi_open(gyro_mpi_comm **out);

/* The hook for the library (rank, size and the collectives); valid until gyro_mpi_close. Never
 * NULL for an open communicator; of size 1 for a single process. */
const gyro_sync *gyro_mpi_sync(const gyro_mpi_comm *c);

/* Close: `exit_code` 0, or a failure every rank knows about (the library agreed on it in a
 * collective), ends MPI normally (MPI_Finalize); with `alone` set, a failure only this rank saw
 * (the others may be waiting in a collective) aborts the whole job with MPI_Abort(exit_code),
 * so that no rank hangs. NULL is a no-op. */
void gyro_mpi_close(gyro_mpi_comm *c, int exit_code, int alone);

#endif

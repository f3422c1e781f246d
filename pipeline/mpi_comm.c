/* mpi_comm.c — the MPI transport of models/core/sync.h (see mpi_comm.h). */
#include "pipeline/mpi_comm.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef GYRO_HAVE_MPI
#include <mpi.h>
#endif

struct gyro_mpi_comm {
    gyro_sync sync;
    int initialized;      /* MPI_Init_thread was called here */
#ifdef GYRO_HAVE_MPI
    MPI_Comm comm;        /* a duplicate of MPI_COMM_WORLD, errors returned */
#endif
};

int gyro_mpi_built(void)
{
#ifdef GYRO_HAVE_MPI
    return 1;
#else
    return 0;
#endif
}

/* A launcher's variable: the value of the first of `names` that is set, else NULL. */
static const char *env_first(const char *const *names)
{
    for (; *names; names++) {
        const char *v = getenv(*names);
        if (v && *v) return v;
    }
    return NULL;
}

int gyro_mpi_env_size(void)
{
    static const char *const size_vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", NULL};
    static const char *const rank_vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", NULL};
    const char *v = env_first(size_vars);
    if (v) {
        long n = strtol(v, NULL, 10);
        return n >= 1 && n <= INT_MAX ? (int)n : 0;
    }
    return env_first(rank_vars) ? 0 : 1;
}

#ifdef GYRO_HAVE_MPI
static gyro_status mpi_fail(int rc, const char *what)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS) snprintf(msg, sizeof msg, "MPI error %d", rc);
    return gyro_error_set(GYRO_ERR_UNAVAILABLE, "%s failed: %s (another rank may have died)", what, msg);
}

/* Complete a request, sleeping between tests (20 µs, doubling up to 1 ms). A blocking
 * collective spins on the CPU while the rank waits for the others (Open MPI polls), and a rank
 * may wait for a slower one for a large part of a second, or for one the scheduler has not run
 * yet: CPU the trainers' threads, the other ranks on an oversubscribed node or its other tenants
 * need. Measured on this 2-core machine under load (2 ranks, 3.5 MB, one rank 20 ms late):
 * MPI_Allreduce 176 ms wall and 8-11 ms CPU per call, this 83 ms and 2-2.5 ms. */
static int wait_sleeping(MPI_Request *req)
{
    long nap_ns = 20000;
    for (;;) {
        int done = 0;
        int rc = MPI_Test(req, &done, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS || done) return rc;
        const struct timespec nap = {0, nap_ns};
        nanosleep(&nap, NULL);
        if (nap_ns < 1000000) nap_ns *= 2;
    }
}


static gyro_status mpi_allreduce(void *ctx, void *buf, size_t count, gyro_sync_type type, gyro_sync_op op)
{
    gyro_mpi_comm *c = ctx;
    MPI_Datatype dt = type == GYRO_SYNC_F32 ? MPI_FLOAT : type == GYRO_SYNC_F64 ? MPI_DOUBLE : MPI_UINT64_T;
    size_t esize = type == GYRO_SYNC_F32 ? 4 : 8;
    MPI_Op mop = op == GYRO_SYNC_SUM ? MPI_SUM : op == GYRO_SYNC_MIN ? MPI_MIN : MPI_MAX;
    char *p = buf;
    while (count > 0) {   /* MPI counts are ints: chunks of at most 2^30 elements */
        int n = count > (1u << 30) ? 1 << 30 : (int)count;
        MPI_Request req;
        int rc = MPI_Iallreduce(MPI_IN_PLACE, p, n, dt, mop, c->comm, &req);
        if (rc != MPI_SUCCESS) return mpi_fail(rc, "MPI_Iallreduce");
        if ((rc = wait_sleeping(&req)) != MPI_SUCCESS) return mpi_fail(rc, "MPI_Iallreduce");
        p += (size_t)n * esize;
        count -= (size_t)n;
    }
    return GYRO_OK;
}

static gyro_status mpi_barrier(void *ctx)
{
    gyro_mpi_comm *c = ctx;
    MPI_Request req;
    int rc = MPI_Ibarrier(c->comm, &req);
    if (rc == MPI_SUCCESS) rc = wait_sleeping(&req);
    return rc == MPI_SUCCESS ? GYRO_OK : mpi_fail(rc, "MPI_Ibarrier");
}
#endif

gyro_status gyro_mpi_open(gyro_mpi_comm **out)
{
    *out = NULL;
    int env_size = gyro_mpi_env_size();
    gyro_mpi_comm *c = calloc(1, sizeof *c);
    if (!c) return gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    c->sync.rank = 0;
    c->sync.size = 1;
    c->sync.ctx = c;
#ifdef GYRO_HAVE_MPI
    if (env_size != 1) {
        int provided = 0;
        int rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided);
        if (rc != MPI_SUCCESS) {
            free(c);
            return gyro_error_set(GYRO_ERR_UNAVAILABLE, "MPI_Init_thread failed (error %d)", rc);
        }
        c->initialized = 1;
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        if ((rc = MPI_Comm_dup(MPI_COMM_WORLD, &c->comm)) != MPI_SUCCESS) {
            gyro_status s = mpi_fail(rc, "MPI_Comm_dup");
            MPI_Abort(MPI_COMM_WORLD, 1);
            free(c);
            return s;
        }
        MPI_Comm_set_errhandler(c->comm, MPI_ERRORS_RETURN);
        MPI_Comm_rank(c->comm, &c->sync.rank);
        MPI_Comm_size(c->comm, &c->sync.size);
        c->sync.allreduce = mpi_allreduce;
        c->sync.barrier = mpi_barrier;
    }
#else
    if (env_size != 1) {
        free(c);
        return gyro_error_set(GYRO_ERR_USAGE, "started by an MPI launcher (%s ranks) but this gyro was built "
                              "without MPI: install libopenmpi-dev (make deps) and rebuild",
                              env_size ? getenv("OMPI_COMM_WORLD_SIZE") ? getenv("OMPI_COMM_WORLD_SIZE")
                                                                         : getenv("PMI_SIZE")
                                       : "several");
    }
#endif
    *out = c;
    return GYRO_OK;
}

const gyro_sync *gyro_mpi_sync(const gyro_mpi_comm *c)
{
    return c ? &c->sync : NULL;
}

void gyro_mpi_close(gyro_mpi_comm *c, int exit_code, int alone)
{
    if (!c) return;
#ifdef GYRO_HAVE_MPI
    if (c->initialized) {
        if (exit_code && alone && c->sync.size > 1) MPI_Abort(c->comm, exit_code);
        MPI_Comm_free(&c->comm);
        MPI_Finalize();
    }
#else
    (void)exit_code;
    (void)alone;
#endif
    free(c);
}

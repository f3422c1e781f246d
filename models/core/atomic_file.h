/* atomic_file.h — write a file so that a crash never leaves it half-written.
 *
 * gyro_atomic_open() creates "<path>.tmp.<pid>.<n>" beside the target; the caller writes through
 * the FILE*; gyro_atomic_commit() flushes, fsyncs, renames over the target and fsyncs the
 * directory. gyro_atomic_abort() removes the temporary file. Either commit or abort must be
 * called exactly once; both free the handle. A path of "-" writes to stdout directly (commit
 * only flushes).
 */
#ifndef GYRO_CORE_ATOMIC_FILE_H
#define GYRO_CORE_ATOMIC_FILE_H

#include <stdio.h>
#include "models/core/status.h"

typedef struct gyro_atomic_file {
    FILE *fp;        /* write here */
    char *path;      /* final path (owned) */
    char *tmp_path;  /* temporary path (owned), NULL for stdout */
} gyro_atomic_file;

/* Open a temporary file for `path`. On error returns GYRO_ERR_IO (message names the path) and
 * leaves *out untouched. */
gyro_status gyro_atomic_open(gyro_atomic_file *out, const char *path);

/* Flush, fsync, rename over the target. On any failure the temporary file is removed, the target
 * is unchanged, and GYRO_ERR_IO is returned. Frees the handle in every case. */
gyro_status gyro_atomic_commit(gyro_atomic_file *f);

/* Discard the temporary file; the target is unchanged. Frees the handle. */
void gyro_atomic_abort(gyro_atomic_file *f);

#endif

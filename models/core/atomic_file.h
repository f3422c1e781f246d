/* atomic_file.h — write a file so that a crash never leaves it half-written.
 *
 * gyro_atomic_open() creates "<path>.tmp.<pid>.<n>" beside the target; the caller writes through
 * the FILE*; gyro_atomic_commit() flushes, fsyncs, renames over the target and fsyncs the
 * directory. gyro_atomic_abort() removes the temporary file. Either commit or abort must be
 * called exactly once; both free the handle. A path of "-" writes to stdout directly (commit
 * only flushes).
 *
 * Only a regular file or an absent path is replaced by rename. Anything else that exists — a
 * character or block device (/dev/null), a FIFO, a socket, a terminal — a symbolic link under
 * /dev/ (/dev/stdout, /dev/fd/N) and every path under /proc/ (/proc/self/fd/N) is opened and written in place, so
 * `-o /dev/null` never replaces the device with a regular file. A symbolic link to a regular
 * file elsewhere is resolved and its target replaced atomically (the link stays a link).
 *
 * The temporary paths being written are also kept in a small static table so that a signal
 * handler can remove them (gyro_atomic_remove_pending); gyro_atomic_cleanup_on_signals()
 * installs such handlers for SIGINT and SIGTERM, for commands that have no handler of their own.
 */
#ifndef GYRO_CORE_ATOMIC_FILE_H
#define GYRO_CORE_ATOMIC_FILE_H

#include <stdio.h>
#include "models/core/status.h"

typedef enum gyro_atomic_mode {
    GYRO_ATOMIC_RENAME = 0,  /* temporary file renamed over a regular file or an absent path */
    GYRO_ATOMIC_STDOUT,      /* "-": standard output, never closed */
    GYRO_ATOMIC_IN_PLACE,    /* a device, FIFO, socket or /dev, /proc path: written directly */
} gyro_atomic_mode;

typedef struct gyro_atomic_file {
    FILE *fp;        /* write here */
    char *path;      /* final path (owned) */
    char *tmp_path;  /* temporary path (owned), NULL unless mode == GYRO_ATOMIC_RENAME */
    gyro_atomic_mode mode;
    int slot;        /* index in the table of pending temporary paths, -1 if none */
} gyro_atomic_file;

/* Open a temporary file for `path` (or `path` itself when it is not a regular file, see
 * above; opening a FIFO blocks until a reader opens it). On error returns GYRO_ERR_IO (message
 * names the path) or GYRO_ERR_NOMEM and leaves *out untouched. */
gyro_status gyro_atomic_open(gyro_atomic_file *out, const char *path);

/* Flush, fsync, rename over the target. On any failure the temporary file is removed, the target
 * is unchanged, and GYRO_ERR_IO is returned. In place: flush and close (fsync errors that a
 * device or pipe cannot support are ignored). Frees the handle in every case. */
gyro_status gyro_atomic_commit(gyro_atomic_file *f);

/* Discard the temporary file; the target is unchanged (in place: what was written stays
 * written). Frees the handle. */
void gyro_atomic_abort(gyro_atomic_file *f);

/* Remove `path` if it is a regular file (a scratch file such as a checkpoint that is no longer
 * needed); anything else — a device, FIFO, socket, directory, symbolic link or absent path — is
 * left alone, so `--checkpoint /dev/null` can never delete /dev/null. Returns 1 if removed. */
int gyro_atomic_remove_file(const char *path);

/* Unlink every temporary file currently open through gyro_atomic_open in this process.
 * Async-signal-safe (only unlink(2) on paths held in static storage): for signal handlers and
 * exit paths. The handles stay valid; commit will then fail and abort is harmless. */
void gyro_atomic_remove_pending(void);

/* Install SIGINT and SIGTERM handlers that remove the pending temporary files, then restore the
 * default action and re-raise the signal (so the exit status still says "killed by signal"),
 * and an atexit hook that removes them on exit(). For commands without their own handlers
 * (normalize, import). A signal ignored on entry (nohup, a background job) stays ignored.
 * Returns GYRO_ERR_IO if sigaction fails. */
gyro_status gyro_atomic_cleanup_on_signals(void);

#endif

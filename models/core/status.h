/* status.h — gyro's status codes and the per-thread error message.
 *
 * Every fallible library function returns a gyro_status. The function that detects a failure
 * records a human-readable message with gyro_error_set(), which returns the status so the idiom is
 *     return gyro_error_set(GYRO_ERR_DATA, "%s:%lu: invalid UTF-8 at byte %zu", file, line, off);
 * Callers up the stack either pass the status on unchanged or add context with
 * gyro_error_prefix(). Only `main` turns a status into an exit code (gyro_status_exit_code).
 * The message buffer is thread-local, so worker threads and gRPC handlers do not race.
 */
#ifndef GYRO_CORE_STATUS_H
#define GYRO_CORE_STATUS_H

typedef enum gyro_status {
    GYRO_OK = 0,
    GYRO_ERR_USAGE,        /* bad arguments or options (exit 2) */
    GYRO_ERR_DATA,         /* bad input data: invalid UTF-8, malformed record (exit 65) */
    GYRO_ERR_FORMAT,       /* a corrupt, truncated or foreign file (exit 65) */
    GYRO_ERR_VERSION,      /* a file written by a newer gyro (exit 65) */
    GYRO_ERR_IO,           /* the operating system refused: open, read, write, rename (exit 1) */
    GYRO_ERR_NOMEM,        /* allocation failed (exit 1) */
    GYRO_ERR_LIMIT,        /* a size limit was exceeded (exit 65) */
    GYRO_ERR_NAN,          /* a NaN or Inf appeared in training (exit 1) */
    GYRO_ERR_NOT_FOUND,    /* a named thing does not exist: label, character, file (exit 1) */
    GYRO_ERR_UNAVAILABLE,  /* a resource is not ready: no model loaded, server down (exit 1) */
    GYRO_ERR_INTERRUPTED,  /* stopped by a signal after saving state (exit 130) */
    GYRO_ERR_INTERNAL,     /* a bug in gyro (exit 1) */
    GYRO_STATUS_COUNT
} gyro_status;

/* Short stable name of a status ("GYRO_ERR_DATA"). Never NULL. */
const char *gyro_status_name(gyro_status s);

/* Process exit code for a status: 0, 1, 2, 65 or 130 as listed above. */
int gyro_status_exit_code(gyro_status s);

/* Record a formatted message for the calling thread and return `s` unchanged. The message is
 * truncated to 1 KiB. An argument may be gyro_error_message() itself, but to add context to the
 * current message use gyro_error_prefix(). */
gyro_status gyro_error_set(gyro_status s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Prepend "prefix: " (formatted) to the calling thread's message and return `s` unchanged. */
gyro_status gyro_error_prefix(gyro_status s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The calling thread's last message, or "" if none was set. Valid until the next set/clear. */
const char *gyro_error_message(void);

/* Forget the calling thread's message. */
void gyro_error_clear(void);

#endif

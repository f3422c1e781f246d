/* status.c — status names, exit codes and the thread-local error message (see status.h). */
#include "models/core/status.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define GYRO_ERROR_MAX 1024

static _Thread_local char error_buf[GYRO_ERROR_MAX];

const char *gyro_status_name(gyro_status s)
{
    static const char *const names[GYRO_STATUS_COUNT] = {
        [GYRO_OK] = "GYRO_OK",
        [GYRO_ERR_USAGE] = "GYRO_ERR_USAGE",
        [GYRO_ERR_DATA] = "GYRO_ERR_DATA",
        [GYRO_ERR_FORMAT] = "GYRO_ERR_FORMAT",
        [GYRO_ERR_VERSION] = "GYRO_ERR_VERSION",
        [GYRO_ERR_IO] = "GYRO_ERR_IO",
        [GYRO_ERR_NOMEM] = "GYRO_ERR_NOMEM",
        [GYRO_ERR_LIMIT] = "GYRO_ERR_LIMIT",
        [GYRO_ERR_NAN] = "GYRO_ERR_NAN",
        [GYRO_ERR_NOT_FOUND] = "GYRO_ERR_NOT_FOUND",
        [GYRO_ERR_UNAVAILABLE] = "GYRO_ERR_UNAVAILABLE",
        [GYRO_ERR_INTERRUPTED] = "GYRO_ERR_INTERRUPTED",
        [GYRO_ERR_INTERNAL] = "GYRO_ERR_INTERNAL",
    };
    if ((unsigned)s >= GYRO_STATUS_COUNT) return "GYRO_ERR_UNKNOWN";
    return names[s];
}

int gyro_status_exit_code(gyro_status s)
{
    switch (s) {
    case GYRO_OK: return 0;
    case GYRO_ERR_USAGE: return 2;
    case GYRO_ERR_DATA:
    case GYRO_ERR_FORMAT:
    case GYRO_ERR_VERSION:
    case GYRO_ERR_LIMIT: return 65;
    case GYRO_ERR_INTERRUPTED: return 130;
    default: return 1;
    }
}

gyro_status gyro_error_set(gyro_status s, const char *fmt, ...)
{
    /* Formatted aside first: an argument may be gyro_error_message() itself (the buffer being
     * written), which vsnprintf straight into error_buf would read while overwriting it. */
    char msg[GYRO_ERROR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    memcpy(error_buf, msg, sizeof error_buf);
    return s;
}

gyro_status gyro_error_prefix(gyro_status s, const char *fmt, ...)
{
    char prefix[GYRO_ERROR_MAX];
    char old[GYRO_ERROR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, error_buf, sizeof old);
    /* Truncation to the buffer is intended: messages are capped at GYRO_ERROR_MAX. */
    size_t n = strnlen(prefix, sizeof prefix - 1);
    memcpy(error_buf, prefix, n);
    error_buf[n] = '\0';
    if (old[0] && n + 2 < sizeof error_buf) {
        memcpy(error_buf + n, ": ", 3);
        size_t room = sizeof error_buf - n - 3;
        size_t m = strnlen(old, room);
        memcpy(error_buf + n + 2, old, m);
        error_buf[n + 2 + m] = '\0';
    }
    return s;
}

const char *gyro_error_message(void) { return error_buf; }

void gyro_error_clear(void) { error_buf[0] = '\0'; }

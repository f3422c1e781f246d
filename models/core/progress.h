/* progress.h — the progress line of long-running stages, on stderr.
 *
 *   Progress:  42.0%  chars/sec/thread: 251234  lr: 0.014500  loss: 2.3415  ETA: 0h01m12s
 *
 * On a terminal the line is redrawn in place (carriage return); otherwise a plain line is printed
 * at most every `plain_interval` seconds so logs stay readable. Not thread-safe: one thread
 * (usually the first worker or the main thread) owns the reporter.
 */
#ifndef GYRO_CORE_PROGRESS_H
#define GYRO_CORE_PROGRESS_H

#include <stdio.h>

typedef struct gyro_progress {
    FILE *out;               /* stderr unless set otherwise */
    int is_tty;
    double start;            /* monotonic seconds at init */
    double last_print;
    double tty_interval;     /* seconds between redraws on a terminal (default 0.1) */
    double plain_interval;   /* seconds between plain lines (default 5) */
    const char *rate_unit;   /* e.g. "chars/sec/thread" */
    int quiet;               /* print nothing */
} gyro_progress;

/* Monotonic clock in seconds. */
double gyro_now(void);

/* Initialise a reporter writing to stderr; `rate_unit` must outlive it. */
void gyro_progress_init(gyro_progress *p, const char *rate_unit, int quiet);

/* Report `fraction` in [0,1] done; prints if the interval elapsed or `force` is set. `rate`,
 * `lr`, `loss` of NaN are left out of the line. */
void gyro_progress_update(gyro_progress *p, double fraction, double rate, double lr, double loss,
                          int force);

/* Print the final line (100% or wherever it stopped) and a newline on a terminal. */
void gyro_progress_finish(gyro_progress *p, double fraction, double rate, double lr, double loss);

#endif

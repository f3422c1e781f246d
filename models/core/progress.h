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

/* ---- observer: the same figures for a machine ------------------------------------------------ */

/* What every reporter reports, for an observer: rate, lr and loss are NaN when the stage has
 * none, eta NaN before any progress; `final` is 1 for gyro_progress_finish. */
typedef struct gyro_progress_event {
    double fraction, rate, lr, loss;
    double elapsed, eta;       /* seconds since the reporter's init; estimated seconds left */
    const char *rate_unit;
    int final;
} gyro_progress_event;

typedef void (*gyro_progress_observer)(void *ctx, const gyro_progress_event *e);

/* Install a process-wide observer of every reporter's updates (printed or not, quiet ones too):
 * called at most every `interval` seconds and on every finish, from the thread that owns the
 * reporter (so fn must not block for long). fn NULL removes it. Set it before training starts
 * and remove it after; not thread-safe against reporters running at the time. */
void gyro_progress_set_observer(gyro_progress_observer fn, void *ctx, double interval);

#endif

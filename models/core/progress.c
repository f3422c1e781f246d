/* progress.c — progress line (see progress.h). */
#include "models/core/progress.h"

#include <math.h>
#include <time.h>
#include <unistd.h>

double gyro_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void gyro_progress_init(gyro_progress *p, const char *rate_unit, int quiet)
{
    p->out = stderr;
    p->is_tty = isatty(fileno(stderr));
    p->start = gyro_now();
    p->last_print = -1e30;
    p->tty_interval = 0.1;
    p->plain_interval = 5.0;
    p->rate_unit = rate_unit;
    p->quiet = quiet;
}

static void print_line(gyro_progress *p, double fraction, double rate, double lr, double loss,
                       double now)
{
    double elapsed = now - p->start;
    double eta = fraction > 1e-9 ? elapsed * (1.0 - fraction) / fraction : NAN;
    fprintf(p->out, "%sProgress: %5.1f%%", p->is_tty ? "\r" : "", 100.0 * fraction);
    if (!isnan(rate)) fprintf(p->out, "  %s: %.0f", p->rate_unit, rate);
    if (!isnan(lr)) fprintf(p->out, "  lr: %.6f", lr);
    if (!isnan(loss)) fprintf(p->out, "  loss: %.4f", loss);
    if (!isnan(eta) && eta < 1e7) {
        long s = (long)eta;
        fprintf(p->out, "  ETA: %ldh%02ldm%02lds", s / 3600, (s / 60) % 60, s % 60);
    }
    fputs(p->is_tty ? "\033[K" : "\n", p->out);
    fflush(p->out);
    p->last_print = now;
}

static gyro_progress_observer observer;
static void *observer_ctx;
static double observer_interval, observer_last = -1e30;

void gyro_progress_set_observer(gyro_progress_observer fn, void *ctx, double interval)
{
    observer = fn;
    observer_ctx = ctx;
    observer_interval = interval;
    observer_last = -1e30;
}

static void observe(const gyro_progress *p, double fraction, double rate, double lr, double loss,
                    int final)
{
    if (!observer) return;
    double now = gyro_now();
    if (!final && now - observer_last < observer_interval) return;
    observer_last = now;
    gyro_progress_event e = {.fraction = fraction, .rate = rate, .lr = lr, .loss = loss,
                             .elapsed = now - p->start, .rate_unit = p->rate_unit, .final = final};
    e.eta = fraction > 1e-9 ? e.elapsed * (1.0 - fraction) / fraction : NAN;
    observer(observer_ctx, &e);
}

void gyro_progress_update(gyro_progress *p, double fraction, double rate, double lr, double loss,
                          int force)
{
    observe(p, fraction, rate, lr, loss, 0);
    if (p->quiet) return;
    double now = gyro_now();
    double interval = p->is_tty ? p->tty_interval : p->plain_interval;
    if (!force && now - p->last_print < interval) return;
    print_line(p, fraction, rate, lr, loss, now);
}

void gyro_progress_finish(gyro_progress *p, double fraction, double rate, double lr, double loss)
{
    observe(p, fraction, rate, lr, loss, 1);
    if (p->quiet) return;
    print_line(p, fraction, rate, lr, loss, gyro_now());
    if (p->is_tty) fputc('\n', p->out);
}

/* progress_stream.c — TrainingProgress records from the progress reporters (see
 * progress_stream.h). */
#include "pipeline/progress_stream.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/stream.h"
#include "proto/gyro.pb-c.h"

struct gyro_progress_stream {
    FILE *fp;                 /* owned unless stdout */
    gyro_stream_writer *w;
    char *stage;
    int epochs;
    uint64_t step;
    gyro_status err;          /* the first write error */
    char err_msg[512];
};

static int open_count;

void gyro_progress_message_fill(Gyro__V1__TrainingProgress *m, const gyro_progress_event *e, const char *stage,
                                int epochs, uint64_t step)
{
    gyro__v1__training_progress__init(m);
    m->stage = (char *)stage;
    m->fraction = e->fraction;
    m->rate = e->rate;
    m->learning_rate = e->lr;
    m->loss = e->loss;
    m->eta_seconds = e->eta;
    m->elapsed_seconds = e->elapsed;
    m->step = step;
    if (epochs > 0) {
        double f = e->fraction < 0 ? 0 : e->fraction;
        int ep = (int)floor(f * epochs) + 1;
        m->epoch = (uint32_t)(ep > epochs ? epochs : ep);
    }
    m->dev_accuracy = NAN;
}

static void on_progress(void *ctx, const gyro_progress_event *e)
{
    gyro_progress_stream *ps = ctx;
    if (ps->err) return;
    Gyro__V1__TrainingProgress m;
    gyro_progress_message_fill(&m, e, ps->stage, ps->epochs, ++ps->step);
    gyro_status st = gyro_stream_write(ps->w, &m.base);
    if (!st && fflush(ps->fp) != 0) st = gyro_error_set(GYRO_ERR_IO, "progress stream: write error: %s", strerror(errno));
    if (st) {
        ps->err = st;
        snprintf(ps->err_msg, sizeof ps->err_msg, "%s", gyro_error_message());
    }
}

gyro_status gyro_progress_stream_open(const char *path, const char *stage, int epochs,
                                      double interval, gyro_progress_stream **out)
{
    *out = NULL;
    if (open_count) return gyro_error_set(GYRO_ERR_USAGE, "a progress stream is already open");
    gyro_progress_stream *ps = calloc(1, sizeof *ps);
    if (!ps || !(ps->stage = strdup(stage ? stage : ""))) {
        free(ps);
        return gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    }
    ps->epochs = epochs;
    ps->fp = strcmp(path, "-") == 0 ? stdout : fopen(path, "wb");
    if (!ps->fp) {
        gyro_status st = gyro_error_set(GYRO_ERR_IO, "%s: cannot create: %s", path, strerror(errno));
        free(ps->stage);
        free(ps);
        return st;
    }
    gyro_status st = gyro_stream_writer_open_file(ps->fp, &gyro__v1__training_progress__descriptor,
                                                  "gyro progress", &ps->w);
    if (!st && fflush(ps->fp) != 0) st = gyro_error_set(GYRO_ERR_IO, "%s: write error: %s", path, strerror(errno));
    if (st) {
        if (ps->w) gyro_stream_writer_abort(ps->w);
        if (ps->fp != stdout) fclose(ps->fp);
        free(ps->stage);
        free(ps);
        return gyro_error_prefix(st, "%s", path);
    }
    open_count = 1;
    gyro_progress_set_observer(on_progress, ps, interval);
    *out = ps;
    return GYRO_OK;
}

gyro_status gyro_progress_stream_close(gyro_progress_stream *ps)
{
    if (!ps) return GYRO_OK;
    gyro_progress_set_observer(NULL, NULL, 0);
    open_count = 0;
    gyro_status st = gyro_stream_writer_close(ps->w);
    if (ps->fp != stdout && fclose(ps->fp) != 0 && !st)
        st = gyro_error_set(GYRO_ERR_IO, "progress stream: close error: %s", strerror(errno));
    if (ps->err) st = gyro_error_set(ps->err, "%s", ps->err_msg);
    free(ps->stage);
    free(ps);
    return st;
}

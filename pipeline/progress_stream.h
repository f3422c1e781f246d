/* progress_stream.h — `--progress-stream FILE`: training progress as a gyro stream of
 * gyro.v1.TrainingProgress records, for machines (a dashboard, a notebook, a job runner), beside
 * the human progress line on stderr.
 *
 * Every progress reporter of the process (models/core/progress.h) is observed while the stream
 * is open: a record at most every `interval` seconds and one at each reporter's finish, each
 * flushed at once so a reader on a FIFO or following the file sees it live. The file is
 * therefore written in place, not atomically: it is a log, not an artifact, and after a crash
 * it holds every record up to the last one written. Fields: stage (as given), fraction, rate
 * (the stage's unit per second: chars per thread for char2vec, examples for classify, episodes
 * for rl), learning_rate, loss (NaN when the stage has none), eta_seconds, elapsed_seconds,
 * step (records written so far, 1-based), epoch (1-based, from the fraction, when the number of
 * epochs is known; else 0) and dev_accuracy (NaN: not measured by the reporters).
 */
#ifndef GYRO_PIPELINE_PROGRESS_STREAM_H
#define GYRO_PIPELINE_PROGRESS_STREAM_H

#include <stdint.h>

#include "models/core/progress.h"
#include "models/core/status.h"
#include "proto/gyro.pb-c.h"

typedef struct gyro_progress_stream gyro_progress_stream;

/* Create or truncate `path` ("-" = stdout), write the stream header and start observing.
 * `stage` (copied) names the stage in every record; `epochs` (0 = unknown) gives the epoch
 * field. Only one stream may be open at a time. Errors: GYRO_ERR_IO (cannot create or write),
 * GYRO_ERR_USAGE (one already open), GYRO_ERR_NOMEM; *out is NULL then. */
gyro_status gyro_progress_stream_open(const char *path, const char *stage, int epochs,
                                      double interval, gyro_progress_stream **out);

/* Stop observing, close the file and free the stream. Returns GYRO_ERR_IO if any record could
 * not be written (the first error's message), else GYRO_OK. NULL is a no-op. */
gyro_status gyro_progress_stream_close(gyro_progress_stream *ps);

/* The TrainingProgress record of one reporter event, as the stream writes it and as the gRPC
 * training methods (pipeline/service_train.h) send it: `stage` (borrowed: m->stage points to
 * it), the event's figures, `step`, and the 1-based epoch from the fraction when `epochs` > 0
 * (else 0); dev_accuracy NaN. The done/output_path/model_version fields are left unset. */
void gyro_progress_message_fill(Gyro__V1__TrainingProgress *m, const gyro_progress_event *e, const char *stage,
                                int epochs, uint64_t step);

#endif

/* service_train.h — training over gRPC: gyro.v1.Gyro/TrainEmbeddings and TrainClassifier.
 *
 * A gyro_trainer runs one training at a time on a thread of its own, so Classify and the other
 * methods keep being served meanwhile (the OpenBLAS and model threads of the training: 1). The
 * handlers are server-streaming handlers of pipeline/grpc_core.h that park their call
 * (GYRO_RPC_WAIT) between progress messages: the training thread turns every event of the
 * progress reporters into a gyro.v1.TrainingProgress (gyro_progress_message_fill, the record
 * `--progress-stream` writes), queues it and wakes the parked call through the `notify` hook;
 * the handler then sends what is queued. The last message has done = true and names the file
 * written and, for a classifier, the model version now served.
 *
 * Data: in the request (Documents, Examples), or a file named relative to the configured
 * directory (`gyro serve --train-dir`). A path that is absolute outside it, holds a ".."
 * component, or resolves (through symbolic links) outside it is refused: ".." and malformed
 * names INVALID_ARGUMENT, everything that resolves outside PERMISSION_DENIED; a missing file
 * NOT_FOUND. Outputs are written atomically under the directory (models/core/atomic_file.h);
 * a training that fails, is cancelled or runs out of time writes nothing.
 *
 * Limits (gyro_trainer_limits): epochs and dim above the limits are INVALID_ARGUMENT before
 * anything runs; more examples or documents than max_examples, or a data file larger than
 * max_file_bytes, INVALID_ARGUMENT; a training still running after max_seconds stops with
 * DEADLINE_EXCEEDED. The request itself is bounded by the server's --max-request-bytes.
 *
 * Cancellation: when the call ends early (the client cancels, disconnects or its deadline
 * passes; the server shuts down), the training is told to stop (the trainers' stop flags: a
 * step or 0.1 s later) and its results are dropped. A second training call while one runs gets
 * RESOURCE_EXHAUSTED.
 *
 * A classifier, once written, is served through the `install` hook (gyro_service's model swap,
 * the one SIGHUP makes); an embedding table through `install_table` (Embed and Neighbors). Empty or malformed data, unknown geometry or architecture names and
 * bad options are INVALID_ARGUMENT.
 */
#ifndef GYRO_PIPELINE_SERVICE_TRAIN_H
#define GYRO_PIPELINE_SERVICE_TRAIN_H

#include <stddef.h>

#include "models/core/status.h"
#include "pipeline/grpc_core.h"

typedef struct gyro_trainer gyro_trainer;

typedef struct gyro_trainer_limits {
    const char *dir;          /* the directory training reads and writes under (must exist) */
    int max_epochs;           /* largest epochs a request may ask for (>= 1) */
    int max_dim;              /* largest dimension (>= 1) */
    long max_examples;        /* most Examples or Documents one training reads (>= 1) */
    long max_file_bytes;      /* largest data file read from dir (>= 1) */
    double max_seconds;       /* a training running longer stops: DEADLINE_EXCEEDED (> 0) */
} gyro_trainer_limits;

#define GYRO_TRAIN_DEFAULT_MAX_EPOCHS 100
#define GYRO_TRAIN_DEFAULT_MAX_DIM 512
#define GYRO_TRAIN_DEFAULT_MAX_EXAMPLES 1000000L
#define GYRO_TRAIN_DEFAULT_MAX_FILE_BYTES (256L << 20)
#define GYRO_TRAIN_DEFAULT_MAX_SECONDS 3600.0

/* What the trainer needs from the service it belongs to (called on the training thread).
 * install: load the classifier file at `path` and serve it, writing its version into
 * version[cap]; returns the loader's status (the old model keeps serving on error).
 * notify: wake parked calls (gyro_rpc_server_notify on the running server).
 * install_table: load the embedding table file at `path` and serve it through Embed and
 * Neighbors (may be NULL: the table is only written). */
typedef struct gyro_trainer_hooks {
    void *ctx;
    gyro_status (*install)(void *ctx, const char *path, char *version, size_t cap);
    void (*notify)(void *ctx);
    gyro_status (*install_table)(void *ctx, const char *path);
} gyro_trainer_hooks;

/* Create a trainer for `lim->dir` (resolved once, here). Errors: GYRO_ERR_USAGE (not a
 * directory, a limit out of range; the message names it), GYRO_ERR_NOMEM. */
gyro_status gyro_trainer_new(const gyro_trainer_limits *lim, const gyro_trainer_hooks *hooks, gyro_trainer **out);

/* Stop a running training (as a cancellation) and wait for its thread; free the trainer. NULL
 * is a no-op. Call once no handler can run (after the server shut down). */
void gyro_trainer_free(gyro_trainer *t);

/* 1 while a training runs. */
int gyro_trainer_busy(const gyro_trainer *t);

/* The handlers (gyro_rpc_handler shape, with the trainer instead of the service; t NULL: the
 * server has no --train-dir, UNAVAILABLE). Server-streaming, not offloaded (they park). */
int gyro_trainer_handle_embeddings(gyro_trainer *t, const ProtobufCMessage *request, gyro_rpc_reply *reply);
int gyro_trainer_handle_classifier(gyro_trainer *t, const ProtobufCMessage *request, gyro_rpc_reply *reply);

#endif

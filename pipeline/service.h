/* service.h — the handlers of gyro's gRPC service, independent of the transport.
 *
 * A gyro_service owns what the handlers serve: the intent classifier (swappable at run time
 * with gyro_service_reload, e.g. on SIGHUP), the embedding table (loaded once) and the serving
 * flag of the health service. Its
 * method table (gyro.v1.Gyro, grpc.health.v1.Health Check and Watch, and server reflection,
 * grpc.reflection.v1alpha, from the descriptor set compiled into libgyro) plugs into
 * pipeline/grpc_core.h;
 * the handlers call the same stage functions as the command-line tools. A method whose backend
 * is not loaded answers UNAVAILABLE with a message naming the missing option.
 *
 * Model swap without locks on the hot path: handlers pin the current model with a per-thread
 * hazard pointer (publish, then re-check that it is still current); reload publishes the new
 * model and waits until no thread holds the old one before freeing it. In-flight calls finish
 * on the model they started with. Per-thread scratch buffers hang off each loaded model.
 */
#ifndef GYRO_PIPELINE_SERVICE_H
#define GYRO_PIPELINE_SERVICE_H

#include <stdio.h>

#include "models/core/status.h"
#include "pipeline/grpc_core.h"
#include "pipeline/service_train.h"

typedef struct gyro_service gyro_service;

typedef struct gyro_service_options {
    const char *model_path;      /* intent classifier file; NULL: Classify answers UNAVAILABLE */
    const char *embeddings_path; /* embedding table; NULL: Embed and Neighbors answer UNAVAILABLE */
    const char *policy_path;     /* RL policy (gyro rl finetune); NULL: Reason answers UNAVAILABLE */
    int n_threads;               /* handler threads (thread indices 0..n_threads-1) */
    int default_top_k;           /* top_k used when a request says 0 (e.g. 5) */
    int max_top_k;               /* larger top_k requests are clamped to it (e.g. 100) */
    const char *composite_path;  /* composite-intent policy (gyro rl finetune --env composite);
                                    NULL: Reason with environment "composite" answers UNAVAILABLE */
    size_t max_text_bytes;       /* longest text of a Classify, ClassifyStream, Embed or Reason
                                    request, and longest document of a Normalize request; longer
                                    ones get INVALID_ARGUMENT. 0: GYRO_SERVICE_DEFAULT_MAX_TEXT */
    const char *hrm_path;        /* Sudoku model (gyro hrm train); NULL: Reason with environment
                                    "sudoku" answers UNAVAILABLE (pipeline/reason_sudoku.h) */
    const char *train_dir;       /* TrainEmbeddings and TrainClassifier read and write under this
                                    directory (pipeline/service_train.h); NULL: they answer
                                    UNAVAILABLE */
    gyro_trainer_limits train_limits; /* their limits (the dir field is ignored; train_dir is
                                    used); zeros: the GYRO_TRAIN_DEFAULT_* values */
    int max_batch;               /* largest batch of Classify calls the batch handler is given
                                    (gyro_rpc_server_options.max_batch); 0 or 1: no batches */
} gyro_service_options;

#define GYRO_SERVICE_DEFAULT_MAX_TEXT ((size_t)1 << 20)

/* Create the service and load the files named in `opt`. Errors: the loader's status (message
 * names the file), GYRO_ERR_USAGE for bad options, GYRO_ERR_NOMEM. */
gyro_status gyro_service_new(const gyro_service_options *opt, gyro_service **out);

/* Load the model file again (from model_path) and swap it in; in-flight calls finish on the old
 * model, which is freed once no thread uses it. On error (corrupt, truncated or newer file) the
 * old model keeps serving and the loader's status is returned. Call from one thread at a time.
 * GYRO_ERR_USAGE if the service was started without a model path. */
gyro_status gyro_service_reload(gyro_service *svc);

/* Load the classifier file `path` and serve it, as gyro_service_reload does (in-flight calls
 * finish on the old model); from then on `path` is the file SIGHUP reloads. Serialized with
 * gyro_service_reload. Errors: the loader's status (the old model and path stay), GYRO_ERR_NOMEM.
 * Used by TrainClassifier once the trained model is written. */
gyro_status gyro_service_serve_file(gyro_service *svc, const char *path);

/* Load the embedding table file `path` (and its other hyperbolic model) and serve it through
 * Embed and Neighbors in place of the current one (in-flight calls finish on the old table,
 * which is freed once none reads it). Errors: the loader's or converter's status (the old table
 * stays), GYRO_ERR_NOMEM. Used by TrainEmbeddings once the trained table is written. */
gyro_status gyro_service_serve_table(gyro_service *svc, const char *path);

/* The file SIGHUP reloads (--model, or the last classifier TrainClassifier served), copied into
 * buf[cap]; "" without one. Thread-safe. */
void gyro_service_model_path(gyro_service *svc, char *buf, size_t cap);

/* Version string of the model being served, or "" without one (owned by the service; valid
 * until the next reload). */
const char *gyro_service_model_version(const gyro_service *svc);

/* Health: 1 SERVING, 0 NOT_SERVING (draining before shutdown). Open Health/Watch calls get the new
 * status (through gyro_rpc_server_notify on the attached server). */
void gyro_service_set_serving(gyro_service *svc, int serving);

/* Give the Stats handler access to the server's counters (NULL detaches). */
void gyro_service_attach(gyro_service *svc, const gyro_rpc_server *srv);

/* The method table for gyro_rpc_server_start (static storage). */
const gyro_rpc_method *gyro_service_methods(int *n);

/* Write the batch handlers of the method table into out[0..n) (n from gyro_service_methods; for
 * gyro_rpc_server_options.batch, so out must outlive the server): Classify has one, which
 * classifies the texts of a batch of calls in one gyro_classifier_predict_batch, each call
 * getting the response (or the error) a single call would; the other entries are NULL. */
void gyro_service_batch_handlers(gyro_rpc_batch_handler *out);

/* Free the service and its model. NULL is a no-op. No handler may be running. */
void gyro_service_free(gyro_service *svc);

/* The service's metrics in the Prometheus text exposition format (version 0.0.4): calls by
 * method and status code (grpc_server_handled_total, with go-grpc-prometheus' label names),
 * cumulative latency histograms of unary methods (grpc_server_handling_seconds), calls in
 * flight, uptime, health, the served model (gyro_model_info{version}, load time and duration),
 * reloads by result (SIGHUP and TrainClassifier swaps) and whether a training runs. `srv` is the running server of this service. *text is malloc'd (free
 * it), *len its length. Thread-safe (any thread, concurrently with handlers and reloads).
 * Errors: GYRO_ERR_NOMEM. */
gyro_status gyro_service_metrics(gyro_service *svc, const gyro_rpc_server *srv, char **text, size_t *len);

/* Write the counters as a human-readable report (per method and code, latency percentiles). */
void gyro_service_print_stats(const gyro_rpc_stats *st, FILE *out);

#endif

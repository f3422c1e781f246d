/* classify_response.h — the ClassifyResponse message of a prediction, built in one place.
 *
 * `gyro classify predict --stream` and the gRPC Classify / ClassifyStream methods answer with
 * the same gyro.v1.ClassifyResponse for the same text: the intents most probable first, each
 * with its label, probability and — for a composite label — its atoms from the model's label
 * set (sorted bytewise; a single-atom label lists none), the model version, the request id and
 * the normalized text.
 *
 * The message does not own its strings: it points at the label set, the caller's strings and the
 * reusable buffers of a gyro_classify_response_buf, so it is valid until the next fill with the
 * same buffer, a change of those strings, or the label set's end.
 */
#ifndef GYRO_PIPELINE_CLASSIFY_RESPONSE_H
#define GYRO_PIPELINE_CLASSIFY_RESPONSE_H

#include "models/classifier.h"
#include "models/core/status.h"
#include "models/text/labels.h"
#include "proto/gyro.pb-c.h"

/* Reusable storage of the Intent messages and atom pointers (zero-initialise it; grown on
 * demand; one per thread). */
typedef struct gyro_classify_response_buf {
    int cap;                  /* intents the two arrays below hold */
    Gyro__V1__Intent *imsg;   /* (cap) */
    Gyro__V1__Intent **iptr;  /* (cap) */
    char **atoms;             /* (atoms_cap) atom names, owned by the label set */
    size_t atoms_cap;
} gyro_classify_response_buf;

/* Fill *resp (initialised here) from the n intents top[0..n-1] of a classifier whose classes are
 * `labels`, and from model_version, id and normalized (any may be NULL for ""). A label that the
 * set does not know gets no atoms. Errors: GYRO_ERR_NOMEM (resp is then empty), GYRO_ERR_USAGE
 * for NULL buf / resp / labels, or top NULL with n > 0. */
gyro_status gyro_classify_response_fill(gyro_classify_response_buf *buf, const gyro_label_set *labels,
                                        const gyro_intent *top, int n, const char *model_version,
                                        const char *id, const char *normalized,
                                        Gyro__V1__ClassifyResponse *resp);

/* Free the buffers (not the struct). NULL is a no-op. */
void gyro_classify_response_buf_free(gyro_classify_response_buf *buf);

#endif

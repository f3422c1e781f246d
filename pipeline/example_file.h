/* example_file.h — the Example reader: a gyro stream of gyro.v1.Example records (the output of
 * `gyro import` and `gyro split`) read into the plain gyro_example_set the trainers take
 * (models/train_classifier.h). The trainers never see a stream or a protobuf type.
 */
#ifndef GYRO_PIPELINE_EXAMPLE_FILE_H
#define GYRO_PIPELINE_EXAMPLE_FILE_H

#include <stdint.h>

#include "models/core/status.h"
#include "models/train_classifier.h"

/* Append every Example of a gyro stream ("-" = stdin). Records with an empty text or label are
 * counted in *skipped (may be NULL) and left out. Stream errors as pipeline/stream.h. */
gyro_status gyro_example_file_read(gyro_example_set *s, const char *path, uint64_t *skipped);

#endif

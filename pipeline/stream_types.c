/* stream_types.c — the table of message types a gyro stream may hold, by full protobuf name.
 *
 * protobuf-c generates no registry of a file's messages, so `gyro dump` and the stream reader
 * find descriptors here. Every message of proto/gyro.proto, proto/health.proto,
 * proto/reflection.proto and proto/reflection_v1.proto is listed;
 * when a message is added to a .proto file, add its descriptor here too (tests/e2e/cli_basics.sh
 * checks that `gyro dump --types` lists every message of the .proto files).
 */
#include "pipeline/stream.h"

#include <string.h>

#include "proto/gyro.pb-c.h"
#include "proto/health.pb-c.h"
#include "proto/reflection.pb-c.h"
#include "proto/reflection_v1.pb-c.h"

static const ProtobufCMessageDescriptor *const known_types[] = {
    &gyro__v1__stream_header__descriptor,
    &gyro__v1__document__descriptor,
    &gyro__v1__vocab_entry__descriptor,
    &gyro__v1__vocab__descriptor,
    &gyro__v1__embedding_entry__descriptor,
    &gyro__v1__embedding_table__descriptor,
    &gyro__v1__example__descriptor,
    &gyro__v1__classify_request__descriptor,
    &gyro__v1__intent__descriptor,
    &gyro__v1__classify_response__descriptor,
    &gyro__v1__training_progress__descriptor,
    &gyro__v1__normalize_request__descriptor,
    &gyro__v1__embed_request__descriptor,
    &gyro__v1__embed_response__descriptor,
    &gyro__v1__neighbors_request__descriptor,
    &gyro__v1__neighbor__descriptor,
    &gyro__v1__neighbors_response__descriptor,
    &gyro__v1__reason_request__descriptor,
    &gyro__v1__reason_step__descriptor,
    &gyro__v1__reason_response__descriptor,
    &gyro__v1__train_embeddings_request__descriptor,
    &gyro__v1__train_classifier_request__descriptor,
    &gyro__v1__stats_request__descriptor,
    &gyro__v1__status_count__descriptor,
    &gyro__v1__latency_bucket__descriptor,
    &gyro__v1__stats_response__descriptor,
    &grpc__health__v1__health_check_request__descriptor,
    &grpc__health__v1__health_check_response__descriptor,
    &grpc__reflection__v1alpha__server_reflection_request__descriptor,
    &grpc__reflection__v1alpha__extension_request__descriptor,
    &grpc__reflection__v1alpha__server_reflection_response__descriptor,
    &grpc__reflection__v1alpha__file_descriptor_response__descriptor,
    &grpc__reflection__v1alpha__extension_number_response__descriptor,
    &grpc__reflection__v1alpha__list_service_response__descriptor,
    &grpc__reflection__v1alpha__service_response__descriptor,
    &grpc__reflection__v1alpha__error_response__descriptor,
    &grpc__reflection__v1__server_reflection_request__descriptor,
    &grpc__reflection__v1__extension_request__descriptor,
    &grpc__reflection__v1__server_reflection_response__descriptor,
    &grpc__reflection__v1__file_descriptor_response__descriptor,
    &grpc__reflection__v1__extension_number_response__descriptor,
    &grpc__reflection__v1__list_service_response__descriptor,
    &grpc__reflection__v1__service_response__descriptor,
    &grpc__reflection__v1__error_response__descriptor,
};

const ProtobufCMessageDescriptor *gyro_stream_type_find(const char *full_name)
{
    if (!full_name) return NULL;
    for (size_t i = 0; i < sizeof known_types / sizeof known_types[0]; i++)
        if (strcmp(known_types[i]->name, full_name) == 0) return known_types[i];
    return NULL;
}

const ProtobufCMessageDescriptor *gyro_stream_type_at(size_t i)
{
    return i < sizeof known_types / sizeof known_types[0] ? known_types[i] : NULL;
}

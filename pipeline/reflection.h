/* reflection.h — an index of a serialized FileDescriptorSet, for gRPC server reflection.
 *
 * The build compiles the descriptor set of the files of proto/ (protoc-c --descriptor_set_out
 * --include_imports) into libgyro (gyro_reflection_embedded). This index reads it with a small
 * protobuf wire-format walker (no dependency on descriptor.proto) and answers what the
 * grpc.reflection.v1alpha protocol asks: a file by its name, the file that declares a
 * fully-qualified symbol (package, message and nested message, field, oneof, enum, enum value,
 * service, method, extension), and a file's imports, transitively. Files are kept as the bytes
 * of their FileDescriptorProto, which is what reflection sends.
 */
#ifndef GYRO_PIPELINE_REFLECTION_H
#define GYRO_PIPELINE_REFLECTION_H

#include <stddef.h>
#include <stdint.h>

#include "models/core/status.h"

typedef struct gyro_reflection gyro_reflection;

/* Kinds of symbol (what gyro_reflection_find_symbol reports). */
enum { GYRO_REFL_PACKAGE = 1, GYRO_REFL_MESSAGE, GYRO_REFL_FIELD, GYRO_REFL_ONEOF, GYRO_REFL_ENUM,
       GYRO_REFL_ENUM_VALUE, GYRO_REFL_SERVICE, GYRO_REFL_METHOD, GYRO_REFL_EXTENSION };

/* The descriptor set compiled into libgyro (static storage; never NULL; *len > 0). */
const uint8_t *gyro_reflection_embedded(size_t *len);

/* Index the FileDescriptorSet of `len` bytes at `set` (copied). Errors: GYRO_ERR_FORMAT for bytes
 * that are not a well-formed descriptor set (bad wire format, a file without a name, an import
 * that is not in the set), GYRO_ERR_NOMEM. */
gyro_status gyro_reflection_new(const uint8_t *set, size_t len, gyro_reflection **out);

/* Free the index. NULL is a no-op. */
void gyro_reflection_free(gyro_reflection *r);

/* Number of files in the set. */
int gyro_reflection_n_files(const gyro_reflection *r);

/* The file named `name` ("gyro.proto"), or -1. */
int gyro_reflection_find_file(const gyro_reflection *r, const char *name);

/* The file that declares the fully-qualified `symbol` ("gyro.v1.Gyro.Classify"; a leading '.' is
 * accepted), or -1; *kind (may be NULL) gets its GYRO_REFL_* kind. A package name resolves to
 * its first file. */
int gyro_reflection_find_symbol(const gyro_reflection *r, const char *symbol, int *kind);

/* File `file` followed by every file it imports, transitively, each once, into out (room for
 * gyro_reflection_n_files entries); returns how many were written. */
int gyro_reflection_closure(const gyro_reflection *r, int file, int *out);

/* The serialized FileDescriptorProto of `file` (owned by the index) and its name. */
const uint8_t *gyro_reflection_file_bytes(const gyro_reflection *r, int file, size_t *len);
const char *gyro_reflection_file_name(const gyro_reflection *r, int file);

/* A method as gyro_reflection_service_methods reports it: names fully qualified without the
 * leading '.', the streaming flags 0 or 1. The strings are valid during the call only. */
typedef void (*gyro_reflection_method_fn)(void *ctx, const char *name, const char *input_type,
                                          const char *output_type, int client_streaming,
                                          int server_streaming);

/* The client side: read the serialized FileDescriptorProto of `len` bytes at `file` (as a
 * reflection response carries it) and call fn (may be NULL) for every method of the service
 * `service` ("gyro.v1.Gyro"; a leading '.' is accepted), in declaration order. Returns the
 * number of methods, or -1 when the file does not declare that service or is malformed. */
int gyro_reflection_service_methods(const uint8_t *file, size_t len, const char *service,
                                    gyro_reflection_method_fn fn, void *ctx);

#endif

/* table_file.h — embedding-table files: read and write a gyro_embedding_table (embeddings/table.h).
 *
 * The file is a gyro stream (pipeline/stream.h: StreamHeader "gyro" v1, message_type
 * "gyro.v1.EmbeddingTable", delimited records), written atomically. A table is split over
 * records of at most GYRO_TABLE_CHUNK entries so no record nears the stream's record limit
 * whatever the vocabulary; every record repeats model, curvature and dim, and the loader
 * concatenates their entries. Every record carries a CRC-32 of its values (the `checksum` field,
 * defined in gyro.proto), checked on load; records without one (older files, other writers) are
 * accepted. `gyro dump` shows it like any other stream, and other languages read it with their
 * protobuf library.
 */
#ifndef GYRO_PIPELINE_TABLE_FILE_H
#define GYRO_PIPELINE_TABLE_FILE_H

#include "embeddings/table.h"
#include "models/core/status.h"

/* Load a table file. Errors name the file and record: GYRO_ERR_IO (cannot open),
 * GYRO_ERR_FORMAT (not a gyro stream, a stream of another type, truncated, inconsistent model or
 * dimension between records, a vector of the wrong length, a non-finite coordinate, a duplicate
 * token, an empty table, a Poincaré row not strictly inside the ball, a checksum mismatch),
 * GYRO_ERR_VERSION (newer file). *out is set only on success. */
gyro_status gyro_table_file_load(const char *path, gyro_embedding_table **out);

/* Save atomically to `path` ("-" = stdout). GYRO_ERR_IO on failure (the target is unchanged);
 * GYRO_ERR_NAN, writing nothing, when a coordinate is NaN or infinite (the message names the row). */
gyro_status gyro_table_file_save(const gyro_embedding_table *t, const char *path);

#endif

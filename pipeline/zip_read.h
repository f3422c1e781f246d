/* zip_read.h — read members of a ZIP archive (stored or deflated) into memory.
 *
 * Enough of the ZIP format (PKWARE APPNOTE 6.3) to read data sets that are published zipped,
 * such as CrossWOZ's val.json.zip, without an `unzip` step: the archive is read into memory,
 * the end-of-central-directory record located, the central directory walked, and a member's
 * data inflated with zlib's raw inflate and checked against its CRC-32 and size. Every offset
 * and length read from the file is checked against the archive's size before use, so a
 * truncated or hostile archive gives GYRO_ERR_FORMAT naming the archive and the member, never
 * a crash. Not supported (GYRO_ERR_FORMAT with a clear message): ZIP64, encryption, multi-disk
 * archives, methods other than stored (0) and deflate (8).
 */
#ifndef GYRO_PIPELINE_ZIP_READ_H
#define GYRO_PIPELINE_ZIP_READ_H

#include <stddef.h>
#include <stdint.h>

#include "models/core/status.h"

/* Largest archive and largest member (uncompressed) accepted: 1 GiB each. */
#define GYRO_ZIP_MAX_BYTES ((size_t)1 << 30)

typedef struct gyro_zip gyro_zip;

/* Read the archive at `path` and its central directory. *out owns it (gyro_zip_free). Errors:
 * GYRO_ERR_IO (cannot read), GYRO_ERR_FORMAT (not a ZIP archive, truncated, unsupported
 * feature), GYRO_ERR_LIMIT (over GYRO_ZIP_MAX_BYTES), GYRO_ERR_NOMEM; *out is then NULL. */
gyro_status gyro_zip_open(const char *path, gyro_zip **out);

/* Same, over `len` bytes at `data` (copied). `name` is used in messages. */
gyro_status gyro_zip_open_memory(const void *data, size_t len, const char *name, gyro_zip **out);

/* Free an archive. NULL is a no-op. */
void gyro_zip_free(gyro_zip *z);

/* Number of members (directories included). */
size_t gyro_zip_count(const gyro_zip *z);

/* Name of member i (owned by the archive), NULL when out of range. */
const char *gyro_zip_name(const gyro_zip *z, size_t i);

/* Uncompressed size of member i as recorded in the directory; 0 when out of range. */
uint64_t gyro_zip_size(const gyro_zip *z, size_t i);

/* Index of the member named `name`, or -1. */
long gyro_zip_find(const gyro_zip *z, const char *name);

/* Extract member i: *data receives a new buffer of *len bytes plus a terminating NUL (caller
 * frees with free()). Errors: GYRO_ERR_USAGE (bad index), GYRO_ERR_FORMAT (corrupt data, CRC or
 * size mismatch, unsupported method), GYRO_ERR_LIMIT (member over GYRO_ZIP_MAX_BYTES),
 * GYRO_ERR_NOMEM; *data is then NULL. */
gyro_status gyro_zip_extract(const gyro_zip *z, size_t i, char **data, size_t *len);

#endif

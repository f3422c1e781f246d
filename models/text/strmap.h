/* strmap.h — a map from byte strings to dense ids (0, 1, 2, ... in insertion order).
 *
 * Used wherever records are grouped by a string key: sessions of an import, groups of a split.
 * Keys are copied into chunks owned by the map; lookups hash with FNV-1a into an
 * open-addressing table grown at half load. Not thread-safe while inserting.
 */
#ifndef GYRO_TEXT_STRMAP_H
#define GYRO_TEXT_STRMAP_H

#include <stddef.h>
#include <stdint.h>

#include "models/core/status.h"

typedef struct gyro_strmap gyro_strmap;

/* A new empty map in *out. GYRO_ERR_NOMEM / GYRO_ERR_USAGE (NULL out). */
gyro_status gyro_strmap_new(gyro_strmap **out);

/* Free the map and its keys. NULL is a no-op. */
void gyro_strmap_free(gyro_strmap *m);

/* Id of `key` (NUL-terminated), inserting it with the next id if absent; *id receives it and
 * *added (may be NULL) is 1 when it was inserted. Errors: GYRO_ERR_NOMEM, GYRO_ERR_LIMIT past
 * 2^31 - 1 keys, GYRO_ERR_USAGE for NULL arguments. */
gyro_status gyro_strmap_intern(gyro_strmap *m, const char *key, int32_t *id, int *added);

/* Id of `key`, or -1 when absent. */
int32_t gyro_strmap_find(const gyro_strmap *m, const char *key);

/* Number of keys. */
size_t gyro_strmap_count(const gyro_strmap *m);

/* Key of `id` (owned by the map), NULL when out of range. */
const char *gyro_strmap_key(const gyro_strmap *m, int32_t id);

#endif

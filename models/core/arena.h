/* arena.h — a bump allocator with mark/reset for scratch memory of a step or a request.
 *
 * One malloc at creation; gyro_arena_alloc hands out 64-byte aligned slices in order and
 * never frees them individually. gyro_arena_mark / gyro_arena_reset rewind to a saved point so
 * a training step or a request reuses the same memory without touching the allocator. Not
 * thread-safe: one arena per thread.
 */
#ifndef GYRO_CORE_ARENA_H
#define GYRO_CORE_ARENA_H

#include <stddef.h>

#include "models/core/status.h"

typedef struct gyro_arena {
    unsigned char *base;   /* (cap) owned */
    size_t cap;            /* bytes */
    size_t used;           /* bytes handed out, alignment padding included */
    size_t peak;           /* largest `used` seen */
} gyro_arena;

#define GYRO_ARENA_ALIGN 64

/* Reserve `bytes` of backing memory (zeroed). NOMEM on failure (arena left empty). */
gyro_status gyro_arena_init(gyro_arena *a, size_t bytes);

/* Release the backing memory; the arena becomes empty. NULL is a no-op. */
void gyro_arena_free(gyro_arena *a);

/* A 64-byte aligned slice of `bytes`, or NULL when the arena is exhausted (nothing changes
 * then). The memory is not cleared. */
void *gyro_arena_alloc(gyro_arena *a, size_t bytes);

/* Bytes an arena needs to hold slices of the given sizes allocated in order (alignment
 * included): call with the running total, e.g. total = gyro_arena_need(total, n * 4). */
size_t gyro_arena_need(size_t total, size_t bytes);

/* Current position, to rewind to with gyro_arena_reset. */
size_t gyro_arena_mark(const gyro_arena *a);

/* Rewind to a mark: every slice handed out after it is released. */
void gyro_arena_reset(gyro_arena *a, size_t mark);

#endif

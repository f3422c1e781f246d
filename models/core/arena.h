/* arena.h — gyro's one bump allocator: scratch memory of a step or a request, and the nodes of
 * a parsed document.
 *
 * A fixed arena (gyro_arena_init) makes one malloc at creation; gyro_arena_alloc hands out
 * 64-byte aligned slices in order and never frees them individually. gyro_arena_mark /
 * gyro_arena_reset rewind to a saved point so a training step or a request reuses the same
 * memory without touching the allocator. A growing arena (gyro_arena_init_growing) starts empty
 * and adds blocks as it fills (16-byte aligned slices, for trees of small nodes whose size is
 * not known in advance, such as pipeline/json.c's); everything is released at once by
 * gyro_arena_free. Not thread-safe: one arena per thread.
 */
#ifndef GYRO_CORE_ARENA_H
#define GYRO_CORE_ARENA_H

#include <stddef.h>

#include "models/core/status.h"

typedef struct gyro_arena_block gyro_arena_block;

typedef struct gyro_arena {
    unsigned char *base;      /* (cap) the current block; owned */
    size_t cap;               /* bytes */
    size_t used;              /* bytes handed out, alignment padding included */
    size_t peak;              /* largest `used` seen */
    size_t grow;              /* growing arena: size of a new block; 0 for a fixed arena */
    gyro_arena_block *full;   /* growing arena: earlier blocks, owned, freed with the arena */
} gyro_arena;

#define GYRO_ARENA_ALIGN 64

/* Reserve `bytes` of backing memory (zeroed). NOMEM on failure (arena left empty). */
gyro_status gyro_arena_init(gyro_arena *a, size_t bytes);

/* An empty growing arena: blocks of `block_bytes` (at least 4 KiB) are added as it fills; an
 * allocation larger than a quarter block gets a block of its own. Nothing is allocated yet, so
 * this cannot fail. mark/reset must not be used on a growing arena. */
void gyro_arena_init_growing(gyro_arena *a, size_t block_bytes);

/* Release the backing memory; the arena becomes empty. NULL is a no-op. */
void gyro_arena_free(gyro_arena *a);

/* A 64-byte (growing arena: 16-byte) aligned slice of `bytes`, or NULL when a fixed arena is
 * exhausted or a growing one cannot allocate a block (nothing changes then). The memory is not
 * cleared. */
void *gyro_arena_alloc(gyro_arena *a, size_t bytes);

/* Bytes an arena needs to hold slices of the given sizes allocated in order (alignment
 * included): call with the running total, e.g. total = gyro_arena_need(total, n * 4). */
size_t gyro_arena_need(size_t total, size_t bytes);

/* Current position, to rewind to with gyro_arena_reset (fixed arenas only). */
size_t gyro_arena_mark(const gyro_arena *a);

/* Rewind to a mark: every slice handed out after it is released. */
void gyro_arena_reset(gyro_arena *a, size_t mark);

#endif

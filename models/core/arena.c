/* arena.c — bump allocator with mark/reset (see arena.h). The backing block is allocated
 * with aligned_alloc so every slice start can be rounded up to GYRO_ARENA_ALIGN. */
#include "models/core/arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static size_t round_up(size_t x)
{
    return (x + (GYRO_ARENA_ALIGN - 1)) & ~(size_t)(GYRO_ARENA_ALIGN - 1);
}

gyro_status gyro_arena_init(gyro_arena *a, size_t bytes)
{
    memset(a, 0, sizeof *a);
    size_t cap = round_up(bytes ? bytes : GYRO_ARENA_ALIGN);
    if (cap < bytes)
        return gyro_error_set(GYRO_ERR_NOMEM, "arena: size %zu overflows", bytes);
    a->base = aligned_alloc(GYRO_ARENA_ALIGN, cap);
    if (!a->base)
        return gyro_error_set(GYRO_ERR_NOMEM, "arena: cannot allocate %zu bytes", cap);
    memset(a->base, 0, cap);
    a->cap = cap;
    return GYRO_OK;
}

void gyro_arena_free(gyro_arena *a)
{
    if (!a)
        return;
    free(a->base);
    memset(a, 0, sizeof *a);
}

size_t gyro_arena_need(size_t total, size_t bytes)
{
    return round_up(total) + round_up(bytes);
}

void *gyro_arena_alloc(gyro_arena *a, size_t bytes)
{
    size_t start = round_up(a->used);
    if (start > a->cap || bytes > a->cap - start)
        return NULL;
    a->used = start + bytes;
    if (a->used > a->peak)
        a->peak = a->used;
    return a->base + start;
}

size_t gyro_arena_mark(const gyro_arena *a)
{
    return a->used;
}

void gyro_arena_reset(gyro_arena *a, size_t mark)
{
    if (mark <= a->used)
        a->used = mark;
}

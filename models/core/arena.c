/* arena.c — bump allocator with mark/reset (see arena.h). A fixed arena's backing block is
 * allocated with aligned_alloc so every slice start can be rounded up to GYRO_ARENA_ALIGN; a
 * growing arena chains malloc'ed blocks (aligned for max_align_t) and rounds to 16 bytes. */
#include "models/core/arena.h"

#include <stddef.h>
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

/* A full block of a growing arena; the data follows the header. */
struct gyro_arena_block {
    gyro_arena_block *next;
    max_align_t data[];
};

#define GROW_ALIGN ((size_t)16)

void gyro_arena_init_growing(gyro_arena *a, size_t block_bytes)
{
    memset(a, 0, sizeof *a);
    a->grow = block_bytes < 4096 ? 4096 : block_bytes;
}

/* Every block of a growing arena is a gyro_arena_block; base points at its data. */
static gyro_arena_block *block_of(unsigned char *base)
{
    return (gyro_arena_block *)(void *)(base - offsetof(gyro_arena_block, data));
}

void gyro_arena_free(gyro_arena *a)
{
    if (!a)
        return;
    if (a->grow) {
        gyro_arena_block *b = a->full;
        while (b) {
            gyro_arena_block *n = b->next;
            free(b);
            b = n;
        }
        if (a->base)
            free(block_of(a->base));
    } else {
        free(a->base);
    }
    memset(a, 0, sizeof *a);
}

/* A block with `cap` bytes of data, or NULL (also when cap + header overflows). */
static gyro_arena_block *block_new(size_t cap)
{
    if (cap > SIZE_MAX - sizeof(gyro_arena_block))
        return NULL;
    return malloc(sizeof(gyro_arena_block) + cap);
}

static void *grow_alloc(gyro_arena *a, size_t bytes)
{
    size_t size = (bytes + (GROW_ALIGN - 1)) & ~(GROW_ALIGN - 1);
    if (size < bytes)
        return NULL;
    if (a->base && size <= a->cap - a->used) {
        void *p = a->base + a->used;
        a->used += size;
        return p;
    }
    if (a->base && size > a->grow / 4) {    /* a large slice: own block, keep filling this one */
        gyro_arena_block *b = block_new(size);
        if (!b)
            return NULL;
        b->next = a->full;
        a->full = b;
        return b->data;
    }
    size_t cap = size > a->grow ? size : a->grow;
    gyro_arena_block *b = block_new(cap);
    if (!b)
        return NULL;
    if (a->base) {                          /* the current block is full: retire it */
        gyro_arena_block *cur = block_of(a->base);
        cur->next = a->full;
        a->full = cur;
    }
    a->base = (unsigned char *)b->data;
    a->cap = cap;
    a->used = size;
    if (a->used > a->peak)
        a->peak = a->used;
    return a->base;
}

size_t gyro_arena_need(size_t total, size_t bytes)
{
    return round_up(total) + round_up(bytes);
}

void *gyro_arena_alloc(gyro_arena *a, size_t bytes)
{
    if (a->grow)
        return grow_alloc(a, bytes);
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

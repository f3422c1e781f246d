/* strmap.c — string -> dense id map (see strmap.h).
 *
 * Keys live in 64 KiB chunks (a longer key gets its own chunk) and are referenced from a dense
 * array indexed by id; the hash table stores ids, with -1 for an empty slot, and keeps the full
 * 64-bit hash beside each id so probing rarely compares strings.
 */
#include "models/text/strmap.h"

#include <stdlib.h>
#include <string.h>

#define KEY_CHUNK ((size_t)64 << 10)

typedef struct key_chunk {
    struct key_chunk *next;
    size_t used, cap;
    char data[];
} key_chunk;

typedef struct slot { int32_t id; uint64_t hash; } slot;

struct gyro_strmap {
    key_chunk *chunks;
    const char **keys;     /* (n) */
    size_t n, cap_keys;
    slot *table;           /* (cap) */
    size_t cap;
};

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) { h ^= (unsigned char)*s; h *= 1099511628211ull; }
    return h;
}

gyro_status gyro_strmap_new(gyro_strmap **out)
{
    if (!out) return gyro_error_set(GYRO_ERR_USAGE, "gyro_strmap_new: NULL argument");
    *out = calloc(1, sizeof **out);
    return *out ? GYRO_OK : gyro_error_set(GYRO_ERR_NOMEM, "out of memory creating a map");
}

void gyro_strmap_free(gyro_strmap *m)
{
    if (!m) return;
    key_chunk *c = m->chunks;
    while (c) {
        key_chunk *n = c->next;
        free(c);
        c = n;
    }
    free(m->keys);
    free(m->table);
    free(m);
}

static size_t probe(const gyro_strmap *m, const char *key, uint64_t h)
{
    size_t mask = m->cap - 1, i = (size_t)h & mask;
    while (m->table[i].id >= 0) {
        if (m->table[i].hash == h && strcmp(m->keys[m->table[i].id], key) == 0) return i;
        i = (i + 1) & mask;
    }
    return i;
}

static gyro_status grow(gyro_strmap *m)
{
    size_t cap = m->cap ? m->cap * 2 : 64;
    slot *t = malloc(cap * sizeof *t);
    if (!t) return gyro_error_set(GYRO_ERR_NOMEM, "out of memory growing a map");
    for (size_t i = 0; i < cap; i++) t[i].id = -1;
    for (size_t i = 0; i < m->cap; i++) {
        if (m->table[i].id < 0) continue;
        size_t j = (size_t)m->table[i].hash & (cap - 1);
        while (t[j].id >= 0) j = (j + 1) & (cap - 1);
        t[j] = m->table[i];
    }
    free(m->table);
    m->table = t;
    m->cap = cap;
    return GYRO_OK;
}

static const char *store_key(gyro_strmap *m, const char *key)
{
    size_t len = strlen(key) + 1;
    key_chunk *c = m->chunks;
    if (!c || c->cap - c->used < len) {
        size_t cap = len > KEY_CHUNK / 4 ? len : KEY_CHUNK;
        key_chunk *n = malloc(sizeof *n + cap);
        if (!n) return NULL;
        n->used = 0;
        n->cap = cap;
        if (c && cap != KEY_CHUNK) { n->next = c->next; c->next = n; }
        else { n->next = c; m->chunks = n; }
        c = n;
    }
    char *p = c->data + c->used;
    memcpy(p, key, len);
    c->used += len;
    return p;
}

gyro_status gyro_strmap_intern(gyro_strmap *m, const char *key, int32_t *id, int *added)
{
    if (added) *added = 0;
    if (!m || !key || !id) return gyro_error_set(GYRO_ERR_USAGE, "gyro_strmap_intern: NULL argument");
    uint64_t h = fnv1a(key);
    if (m->cap) {
        size_t i = probe(m, key, h);
        if (m->table[i].id >= 0) { *id = m->table[i].id; return GYRO_OK; }
    }
    if (m->n >= (size_t)INT32_MAX) return gyro_error_set(GYRO_ERR_LIMIT, "more than 2^31-1 keys");
    if (2 * (m->n + 1) > m->cap) {
        gyro_status st = grow(m);
        if (st != GYRO_OK) return st;
    }
    if (m->n == m->cap_keys) {
        size_t cap = m->cap_keys ? m->cap_keys * 2 : 64;
        const char **k = realloc(m->keys, cap * sizeof *k);
        if (!k) return gyro_error_set(GYRO_ERR_NOMEM, "out of memory growing a map");
        m->keys = k;
        m->cap_keys = cap;
    }
    const char *copy = store_key(m, key);
    if (!copy) return gyro_error_set(GYRO_ERR_NOMEM, "out of memory growing a map");
    size_t i = probe(m, key, h);
    m->keys[m->n] = copy;
    m->table[i].id = (int32_t)m->n;
    m->table[i].hash = h;
    *id = (int32_t)m->n++;
    if (added) *added = 1;
    return GYRO_OK;
}

int32_t gyro_strmap_find(const gyro_strmap *m, const char *key)
{
    if (!m || !key || !m->cap) return -1;
    return m->table[probe(m, key, fnv1a(key))].id;
}

size_t gyro_strmap_count(const gyro_strmap *m) { return m ? m->n : 0; }

const char *gyro_strmap_key(const gyro_strmap *m, int32_t id)
{
    return (m && id >= 0 && (size_t)id < m->n) ? m->keys[id] : NULL;
}

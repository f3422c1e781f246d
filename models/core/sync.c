/* sync.c — helpers over the collective-operation callbacks (see sync.h). */
#include "models/core/sync.h"

int gyro_sync_active(const gyro_sync *s)
{
    return s && s->size > 1;
}

gyro_status gyro_sync_allreduce(const gyro_sync *s, void *buf, size_t count, gyro_sync_type type,
                                gyro_sync_op op)
{
    if (!gyro_sync_active(s) || count == 0) return GYRO_OK;
    return s->allreduce(s->ctx, buf, count, type, op);
}

gyro_status gyro_sync_barrier(const gyro_sync *s)
{
    if (!gyro_sync_active(s)) return GYRO_OK;
    return s->barrier(s->ctx);
}

gyro_status gyro_sync_check_same(const gyro_sync *s, uint64_t value, const char *what)
{
    if (!gyro_sync_active(s)) return GYRO_OK;
    uint64_t lo = value, hi = value;
    gyro_status st = s->allreduce(s->ctx, &lo, 1, GYRO_SYNC_U64, GYRO_SYNC_MIN);
    if (!st) st = s->allreduce(s->ctx, &hi, 1, GYRO_SYNC_U64, GYRO_SYNC_MAX);
    if (st) return st;
    if (lo != hi)
        return gyro_error_set(GYRO_ERR_USAGE, "the %d ranks disagree on %s (this is rank %d): start every "
                              "rank with the same options and files", s->size, what, s->rank);
    return GYRO_OK;
}

gyro_status gyro_sync_agree(const gyro_sync *s, gyro_status local, int *transport_failed)
{
    if (!gyro_sync_active(s)) return local;
    uint64_t w[2] = {(uint64_t)local, local ? (uint64_t)(s->size - s->rank) : 0};
    gyro_status st = s->allreduce(s->ctx, w, 2, GYRO_SYNC_U64, GYRO_SYNC_MAX);
    if (st) {
        if (transport_failed) *transport_failed = 1;
        return st;
    }
    if (local || !w[0]) return local;
    return gyro_error_set((gyro_status)w[0], "stopped: rank %d of %d failed (%s; its message says why)",
                          s->size - (int)w[1], s->size, gyro_status_name((gyro_status)w[0]));
}

uint64_t gyro_sync_hash(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 1099511628211ULL;
    }
    return h;
}

/* stream_sniff.c — tell a gyro stream from text by its first bytes without losing them, so a
 * pipe can be sniffed (see gyro_stream_sniff in stream.h). The peeked bytes are handed back
 * through a glibc fopencookie FILE that reads them first and then the rest of the input. */
#define _GNU_SOURCE /* fopencookie */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "pipeline/stream.h"

#define SNIFF_BYTES 16 /* a varint of at most 5 bytes, then 0x0a 0x04 "gyro" */

typedef struct sniff_cookie {
    FILE *under;                  /* not owned */
    unsigned char buf[SNIFF_BYTES];
    size_t n, pos;                /* bytes peeked, bytes handed back */
} sniff_cookie;

static ssize_t sniff_read(void *cookie, char *out, size_t size)
{
    sniff_cookie *c = cookie;
    if (c->pos < c->n) {
        size_t k = c->n - c->pos < size ? c->n - c->pos : size;
        memcpy(out, c->buf + c->pos, k);
        c->pos += k;
        return (ssize_t)k;
    }
    size_t got = fread(out, 1, size, c->under);
    if (got == 0 && ferror(c->under)) return -1;
    return (ssize_t)got;
}

static int sniff_close(void *cookie)
{
    free(cookie);
    return 0;
}

int gyro_stream_looks_like(const unsigned char *b, size_t n)
{
    size_t i = 0;
    while (i < n && i < 4 && (b[i] & 0x80)) i++; /* varint length prefix: at most 5 bytes */
    i++;
    return i + 6 <= n && b[i] == 0x0a && b[i + 1] == 0x04 && !memcmp(b + i + 2, "gyro", 4);
}

gyro_status gyro_stream_sniff(FILE *raw, const char *name, FILE **out, int *is_stream)
{
    *out = NULL;
    *is_stream = 0;
    sniff_cookie *c = calloc(1, sizeof *c);
    if (!c) return gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    c->under = raw;
    c->n = fread(c->buf, 1, sizeof c->buf, raw);
    if (c->n == 0 && ferror(raw)) {
        free(c);
        return gyro_error_set(GYRO_ERR_IO, "%s: read error: %s", name, strerror(errno));
    }
    *is_stream = gyro_stream_looks_like(c->buf, c->n);
    cookie_io_functions_t io = {.read = sniff_read, .close = sniff_close};
    *out = fopencookie(c, "rb", io);
    if (!*out) {
        free(c);
        return gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    }
    return GYRO_OK;
}

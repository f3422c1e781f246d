/* stream_sniff.c — tell a gyro stream from text by its first bytes without losing them, so a
 * pipe can be sniffed (see gyro_stream_sniff in stream.h). The peeked bytes are handed back
 * through a glibc fopencookie FILE that reads them first and then the rest of the input.
 *
 * Interactive input (a terminal, or a pipe fed a line at a time, e.g. `fasttext predict -`
 * habits) must not wait for more bytes than the decision needs: the sniff reads with read(2)
 * whatever has arrived and decides as soon as a byte departs from the stream header's pattern
 * (a varint of at most 5 bytes, then 0x0a 0x04 "gyro"), which for text is almost always the
 * first or second byte. Only a first line that happens to match a prefix of that pattern (one
 * character and its newline, "a\n" or "好\n") stays undecided; then the sniff waits at most
 * SNIFF_WAIT_MS for the next bytes and, if none come, decides "text" (a gyro stream's header
 * is written in one piece, so its bytes never arrive that far apart). After the sniff the
 * wrapper also reads with read(2), returning what has arrived instead of filling its buffer,
 * so each line reaches the reader as soon as it is written.
 */
#define _GNU_SOURCE /* fopencookie */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "pipeline/stream.h"

#define SNIFF_BYTES 16    /* a varint of at most 5 bytes, then 0x0a 0x04 "gyro" */
#define SNIFF_WAIT_MS 200 /* an undecided prefix waits this long for more bytes */

typedef struct sniff_cookie {
    FILE *under;                  /* not owned */
    int fd;                       /* fileno(under), or -1: read through stdio */
    int eof;                      /* the sniff saw the end of the input */
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
    if (c->eof) return 0;
    if (c->fd >= 0) {
        for (;;) {
            ssize_t got = read(c->fd, out, size);
            if (got < 0 && errno == EINTR) continue;
            return got;
        }
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

/* 1: the n bytes start a gyro stream; 0: they cannot; -1: a prefix of one, more bytes decide. */
static int sniff_decide(const unsigned char *b, size_t n)
{
    static const unsigned char pat[6] = {0x0a, 0x04, 'g', 'y', 'r', 'o'};
    size_t i = 0;
    while (i < n && i < 4 && (b[i] & 0x80)) i++; /* varint length prefix: at most 5 bytes */
    if (i == n) return -1;
    i++;
    for (size_t k = 0; k < sizeof pat; k++) {
        if (i + k >= n) return -1;
        if (b[i + k] != pat[k]) return 0;
    }
    return 1;
}

int gyro_stream_looks_like(const unsigned char *b, size_t n)
{
    return sniff_decide(b, n) == 1;
}

gyro_status gyro_stream_sniff(FILE *raw, const char *name, FILE **out, int *is_stream)
{
    *out = NULL;
    *is_stream = 0;
    sniff_cookie *c = calloc(1, sizeof *c);
    if (!c) return gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    c->under = raw;
    c->fd = fileno(raw);
    int d = -1;
    if (c->fd < 0) {
        c->n = fread(c->buf, 1, sizeof c->buf, raw);
        if (c->n == 0 && ferror(raw)) {
            free(c);
            return gyro_error_set(GYRO_ERR_IO, "%s: read error: %s", name, strerror(errno));
        }
        d = sniff_decide(c->buf, c->n);
    } else {
        while (d < 0 && c->n < sizeof c->buf) {
            if (c->n > 0) { /* undecided: wait a little for the rest of a header */
                struct pollfd p = {.fd = c->fd, .events = POLLIN};
                int pr = poll(&p, 1, SNIFF_WAIT_MS);
                if (pr < 0 && errno == EINTR) continue;
                if (pr == 0) break;
            }
            ssize_t got = read(c->fd, c->buf + c->n, sizeof c->buf - c->n);
            if (got < 0 && errno == EINTR) continue;
            if (got < 0) {
                int e = errno;
                free(c);
                return gyro_error_set(GYRO_ERR_IO, "%s: read error: %s", name, strerror(e));
            }
            if (got == 0) {
                c->eof = 1;
                break;
            }
            c->n += (size_t)got;
            d = sniff_decide(c->buf, c->n);
        }
    }
    *is_stream = d == 1;
    cookie_io_functions_t io = {.read = sniff_read, .close = sniff_close};
    *out = fopencookie(c, "rb", io);
    if (!*out) {
        free(c);
        return gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    }
    return GYRO_OK;
}

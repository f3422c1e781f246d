/* metrics_http.c — the HTTP/1.1 metrics listener (see metrics_http.h).
 *
 * The thread polls the listening socket and a self-pipe (the stop signal). Each accepted
 * connection is handled to the end before the next: read the request head (up to the blank
 * line) within GYRO_METRICS_IO_MS, parse the request line (RFC 9112 section 3: method SP
 * request-target SP HTTP-version), answer, close. Sends use MSG_NOSIGNAL (a client gone early is
 * not a SIGPIPE).
 */
#define _GNU_SOURCE /* accept4 */
#include "pipeline/metrics_http.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define HEAD_MAX 8192

struct gyro_metrics_http {
    int fd;                      /* listening socket */
    int stop_pipe[2];            /* write end closed / written: stop */
    int port;
    pthread_t thread;
    gyro_metrics_render_fn render;
    void *ctx;
    atomic_ulong counts[4];
};

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Wait until fd is ready for `events` or the deadline passes (0: timeout or stop). */
static int wait_fd(const gyro_metrics_http *h, int fd, short events, int64_t deadline)
{
    for (;;) {
        int64_t left = deadline - now_ms();
        if (left <= 0) return 0;
        struct pollfd p[2] = {{fd, events, 0}, {h->stop_pipe[0], POLLIN, 0}};
        int r = poll(p, 2, (int)left);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0 || p[1].revents) return 0;
        if (r > 0) return 1;
    }
}

static int send_all(const gyro_metrics_http *h, int fd, const char *p, size_t n, int64_t deadline)
{
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w > 0) {
            p += w;
            n -= (size_t)w;
            continue;
        }
        if (w < 0 && errno == EINTR) continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && wait_fd(h, fd, POLLOUT, deadline)) continue;
        return 0;
    }
    return 1;
}

static void respond(gyro_metrics_http *h, int fd, int status, const char *reason, const char *extra,
                    const char *body, size_t body_len, int head_only, int64_t deadline)
{
    char hdr[512];
    int n = snprintf(hdr, sizeof hdr,
                     "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%sConnection: close\r\n\r\n",
                     status, reason,
                     status == 200 ? "text/plain; version=0.0.4; charset=utf-8" : "text/plain; charset=utf-8",
                     body_len, extra ? extra : "");
    if (send_all(h, fd, hdr, (size_t)n, deadline) && !head_only) send_all(h, fd, body, body_len, deadline);
    atomic_fetch_add(&h->counts[status < 400 ? 0 : status < 500 ? 1 : 2], 1);
}

static void error_response(gyro_metrics_http *h, int fd, int status, const char *reason, const char *extra,
                           int64_t deadline)
{
    char body[128];
    int n = snprintf(body, sizeof body, "%d %s\n", status, reason);
    respond(h, fd, status, reason, extra, body, (size_t)n, 0, deadline);
}

static int is_tchar(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || strchr("!#$%&'*+-.^_`|~", c);
}

/* Read and answer one request on fd. */
static void serve_one(gyro_metrics_http *h, int fd)
{
    int64_t deadline = now_ms() + GYRO_METRICS_IO_MS;
    char head[HEAD_MAX + 1];
    size_t n = 0;
    char *end = NULL;
    while (!end) {
        if (n == HEAD_MAX) {
            error_response(h, fd, 431, "Request Header Fields Too Large", NULL, deadline);
            return;
        }
        if (!wait_fd(h, fd, POLLIN, deadline)) {
            atomic_fetch_add(&h->counts[3], 1);
            return;
        }
        ssize_t r = recv(fd, head + n, HEAD_MAX - n, MSG_DONTWAIT);
        if (r < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
        if (r <= 0) {
            atomic_fetch_add(&h->counts[3], 1);
            return;
        }
        n += (size_t)r;
        head[n] = 0;
        if (memchr(head, 0, n)) {
            error_response(h, fd, 400, "Bad Request", NULL, deadline);
            return;
        }
        end = strstr(head, "\r\n\r\n");
        if (!end) end = strstr(head, "\n\n"); /* tolerate bare LF (RFC 9112 section 2.2) */
    }
    /* request line: method SP target SP HTTP/1.x */
    char *line_end = strpbrk(head, "\r\n");
    *line_end = 0;
    char *sp1 = strchr(head, ' '), *sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
    if (!sp1 || !sp2 || strchr(sp2 + 1, ' ') || sp1 == head || sp2 == sp1 + 1) {
        error_response(h, fd, 400, "Bad Request", NULL, deadline);
        return;
    }
    *sp1 = *sp2 = 0;
    const char *method = head, *target = sp1 + 1, *version = sp2 + 1;
    for (const char *p = method; *p; p++)
        if (!is_tchar(*p)) {
            error_response(h, fd, 400, "Bad Request", NULL, deadline);
            return;
        }
    if (strncmp(version, "HTTP/1.", 7) != 0 || !version[7] || version[8] || version[7] < '0' || version[7] > '9') {
        error_response(h, fd, strncmp(version, "HTTP/", 5) == 0 ? 505 : 400,
                       strncmp(version, "HTTP/", 5) == 0 ? "HTTP Version Not Supported" : "Bad Request", NULL, deadline);
        return;
    }
    /* a request with a body is not something this endpoint takes */
    for (char *p = line_end + 1; p < end; p++)
        if ((p == line_end + 1 || p[-1] == '\n') &&
            (!strncasecmp(p, "content-length:", 15) || !strncasecmp(p, "transfer-encoding:", 18))) {
            const char *v = strchr(p, ':') + 1;
            while (*v == ' ' || *v == '\t') v++;
            if (strncasecmp(p, "content-length:", 15) != 0 || *v != '0' || (v[1] != '\r' && v[1] != '\n')) {
                error_response(h, fd, 400, "Bad Request", NULL, deadline);
                return;
            }
        }
    int head_only = !strcmp(method, "HEAD");
    if (strcmp(method, "GET") != 0 && !head_only) {
        error_response(h, fd, 405, "Method Not Allowed", "Allow: GET, HEAD\r\n", deadline);
        return;
    }
    size_t plen = strcspn(target, "?#");
    if (!((plen == 8 && !strncmp(target, "/metrics", 8)) || (plen == 9 && !strncmp(target, "/metrics/", 9)))) {
        error_response(h, fd, 404, "Not Found", NULL, deadline);
        return;
    }
    char *text = NULL;
    size_t len = 0;
    if (h->render(h->ctx, &text, &len) != GYRO_OK) {
        free(text);
        error_response(h, fd, 500, "Internal Server Error", NULL, deadline);
        return;
    }
    respond(h, fd, 200, "OK", NULL, text, len, head_only, deadline);
    free(text);
}

static void *listener_main(void *arg)
{
    gyro_metrics_http *h = arg;
    for (;;) {
        struct pollfd p[2] = {{h->fd, POLLIN, 0}, {h->stop_pipe[0], POLLIN, 0}};
        int r = poll(p, 2, -1);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0 || p[1].revents) break;
        if (!(p[0].revents & POLLIN)) continue;
        int c = accept4(h->fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (c < 0) {
            if (errno == EMFILE || errno == ENFILE) { /* out of descriptors: back off briefly */
                struct timespec ts = {0, 100000000};
                nanosleep(&ts, NULL);
            }
            continue;
        }
        serve_one(h, c);
        shutdown(c, SHUT_WR);
        close(c);
    }
    return NULL;
}

/* Split "HOST:PORT" / "[HOST]:PORT" into host and port strings. */
static int split_addr(const char *addr, char *host, size_t host_size, char *port, size_t port_size)
{
    const char *colon;
    size_t hl;
    if (addr[0] == '[') {
        const char *close = strchr(addr, ']');
        if (!close || close[1] != ':') return 0;
        hl = (size_t)(close - addr - 1);
        memcpy(host, addr + 1, hl < host_size ? hl : 0);
        colon = close + 1;
    } else {
        colon = strrchr(addr, ':');
        if (!colon) return 0;
        hl = (size_t)(colon - addr);
        if (hl >= host_size || memchr(addr, ':', hl)) return 0;
        memcpy(host, addr, hl);
    }
    if (hl >= host_size) return 0;
    host[hl] = 0;
    size_t pl = strlen(colon + 1);
    if (pl == 0 || pl >= port_size || strspn(colon + 1, "0123456789") != pl) return 0;
    memcpy(port, colon + 1, pl + 1);
    return atol(port) <= 65535;
}

gyro_status gyro_metrics_http_start(const char *addr, gyro_metrics_render_fn render, void *ctx,
                                    gyro_metrics_http **out)
{
    *out = NULL;
    char host[256], port[8];
    if (!addr || !render || !split_addr(addr, host, sizeof host, port, sizeof port))
        return gyro_error_set(GYRO_ERR_USAGE, "metrics address '%s' is not HOST:PORT", addr ? addr : "(null)");
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    int gai = getaddrinfo(host[0] ? host : NULL, port, &hints, &res);
    if (gai != 0) return gyro_error_set(GYRO_ERR_USAGE, "metrics address %s: %s", addr, gai_strerror(gai));
    int fd = -1, err = 0;
    for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0) {
            err = errno;
            continue;
        }
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, 16) != 0) {
            err = errno;
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    if (fd < 0) return gyro_error_set(GYRO_ERR_IO, "cannot listen on %s for metrics: %s", addr, strerror(err));
    gyro_metrics_http *h = calloc(1, sizeof *h);
    if (!h) {
        close(fd);
        return gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    }
    h->fd = fd;
    h->render = render;
    h->ctx = ctx;
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0) {
        char ps[16];
        if (getnameinfo((struct sockaddr *)&ss, sl, NULL, 0, ps, sizeof ps, NI_NUMERICSERV) == 0) h->port = atoi(ps);
    }
    if (pipe(h->stop_pipe) != 0) {
        close(fd);
        free(h);
        return gyro_error_set(GYRO_ERR_IO, "cannot create a pipe: %s", strerror(errno));
    }
    fcntl(h->stop_pipe[0], F_SETFD, FD_CLOEXEC);
    fcntl(h->stop_pipe[1], F_SETFD, FD_CLOEXEC);
    if (pthread_create(&h->thread, NULL, listener_main, h) != 0) {
        close(fd);
        close(h->stop_pipe[0]);
        close(h->stop_pipe[1]);
        free(h);
        return gyro_error_set(GYRO_ERR_NOMEM, "cannot start the metrics thread");
    }
    *out = h;
    return GYRO_OK;
}

int gyro_metrics_http_port(const gyro_metrics_http *h) { return h->port; }

void gyro_metrics_http_counts(const gyro_metrics_http *h, unsigned long counts[4])
{
    for (int i = 0; i < 4; i++) counts[i] = atomic_load(&((gyro_metrics_http *)h)->counts[i]);
}

void gyro_metrics_http_stop(gyro_metrics_http *h)
{
    if (!h) return;
    close(h->stop_pipe[1]); /* POLLHUP/POLLIN on the read end wakes the thread */
    pthread_join(h->thread, NULL);
    close(h->stop_pipe[0]);
    close(h->fd);
    free(h);
}

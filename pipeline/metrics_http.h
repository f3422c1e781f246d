/* metrics_http.h — a minimal HTTP/1.1 listener that serves one text document (Prometheus
 * metrics) on its own thread.
 *
 * `GET /metrics` (or HEAD) answers 200 with the text a callback renders at that moment
 * (Content-Type: text/plain; version=0.0.4); any other path is 404, any other method 405, a
 * request line or header that does not parse 400, a request head over 8 KiB 431. One connection
 * at a time, closed after each response ("Connection: close"); a client gets GYRO_METRICS_IO_MS
 * to send its request head and to take the response, so a slow or silent client delays the next
 * scrape by at most that long and never blocks the gRPC server. Plain sockets and poll(2): no
 * TLS, no keep-alive, no chunked bodies (requests with a body are refused 400).
 */
#ifndef GYRO_PIPELINE_METRICS_HTTP_H
#define GYRO_PIPELINE_METRICS_HTTP_H

#include <stddef.h>

#include "models/core/status.h"

#define GYRO_METRICS_IO_MS 2000

/* Render the document: *text malloc'd (the listener frees it), *len its length. Runs on the
 * listener's thread. A non-OK status answers 500. */
typedef gyro_status (*gyro_metrics_render_fn)(void *ctx, char **text, size_t *len);

typedef struct gyro_metrics_http gyro_metrics_http;

/* Listen on `addr` ("HOST:PORT", "[v6]:PORT"; port 0 picks a free one) and start the thread.
 * `render` and `ctx` must outlive the listener. Errors: GYRO_ERR_USAGE (addr does not parse or
 * resolve), GYRO_ERR_IO (cannot bind or listen, message names the address and the reason),
 * GYRO_ERR_NOMEM. */
gyro_status gyro_metrics_http_start(const char *addr, gyro_metrics_render_fn render, void *ctx,
                                    gyro_metrics_http **out);

/* The bound port. */
int gyro_metrics_http_port(const gyro_metrics_http *h);

/* Requests answered so far, by class: [0] 200, [1] 4xx, [2] 5xx, [3] connections dropped (timeout
 * or reset before a full request head). Thread-safe. */
void gyro_metrics_http_counts(const gyro_metrics_http *h, unsigned long counts[4]);

/* Stop the thread (a request being answered finishes first), close the socket and free. NULL is
 * a no-op. */
void gyro_metrics_http_stop(gyro_metrics_http *h);

#endif

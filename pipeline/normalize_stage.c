/* normalize_stage.c — the normalize stage over one input (see normalize_stage.h). */
#include "pipeline/normalize_stage.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static void warn(const gyro_normalize_stage_options *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void warn(const gyro_normalize_stage_options *o, const char *fmt, ...)
{
    if (!o || !o->warn) return;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    o->warn(o->warn_ctx, msg);
}

/* Report progress over all inputs: base + this reader's bytes of the total, at the average
 * rate since progress_start. The caller prints the final line (gyro_progress_finish). */
static void progress(const gyro_normalize_stage_options *o, gyro_text_reader *in)
{
    if (!o || !o->progress || !o->progress_total) return;
    uint64_t done = o->progress_base + gyro_text_reader_bytes(in);
    double dt = gyro_now() - o->progress_start;
    double rate = dt > 0 ? (double)done / dt : NAN;
    gyro_progress_update(o->progress, (double)done / (double)o->progress_total, rate, NAN, NAN, 0);
}

gyro_status gyro_normalize_stage_run(gyro_normalizer *n, gyro_text_reader *in,
                                     gyro_stream_writer *w, FILE *text_out,
                                     const gyro_normalize_stage_options *o,
                                     gyro_normalize_stats *stats, uint64_t *next_id)
{
    if (!n || !in || !stats || !next_id || (!w && !text_out))
        return gyro_error_set(GYRO_ERR_USAGE, "normalize: NULL argument");
    const char *name = gyro_text_reader_name(in);
    uint64_t lines0 = gyro_text_reader_lines(in), bytes0 = gyro_text_reader_bytes(in);
    gyro_status s = GYRO_OK;
    uint64_t count = 0;
    for (;;) {
        gyro_text_document d;
        if ((s = gyro_text_reader_next(in, &d)) || !d.data) break;
        if ((++count & 1023) == 0) progress(o, in);
        if (d.too_long) {
            stats->skipped++;
            stats->too_long++;
            warn(o, "%s:%llu: skipped: document longer than the maximum length", name,
                 (unsigned long long)d.line);
            continue;
        }
        gyro_normalized r;
        if ((s = gyro_normalize_text(n, d.data, d.len, &r))) {
            if (s == GYRO_ERR_DATA) {
                /* "invalid UTF-8 byte 0xFF at byte 7": add the file offset */
                const char *m = gyro_error_message();
                const char *at = strstr(m, " at byte ");
                unsigned long long col = at ? strtoull(at + 9, NULL, 10) : 0;
                gyro_error_prefix(s, "%s:%llu", name, (unsigned long long)d.line);
                if (at) {
                    char buf[1100];
                    snprintf(buf, sizeof buf, "%s of the line (byte %llu of the input)",
                             gyro_error_message(), (unsigned long long)d.offset + col);
                    gyro_error_set(s, "%s", buf);
                }
            } else {
                gyro_error_prefix(s, "%s:%llu", name, (unsigned long long)d.line);
            }
            break;
        }
        if (r.skipped) {
            stats->skipped++;
            warn(o, "%s:%llu: skipped: invalid UTF-8", name, (unsigned long long)d.line);
            continue;
        }
        if (r.repairs) {
            stats->repaired++;
            warn(o, "%s:%llu: %u invalid UTF-8 sequence%s replaced by U+FFFD", name,
                 (unsigned long long)d.line, r.repairs, r.repairs == 1 ? "" : "s");
        }
        if (r.text_len == 0) {
            stats->empty++;
            if (!o || !o->keep_empty) continue;
        }
        if (w) {
            Gyro__V1__Document doc = GYRO__V1__DOCUMENT__INIT;
            gyro_normalize_stage_to_document(&r, name, d.line, *next_id, &doc);
            s = gyro_stream_write(w, &doc.base);
            if (s == GYRO_ERR_LIMIT) {
                stats->skipped++;
                stats->too_long++;
                warn(o, "%s:%llu: skipped: %s", name, (unsigned long long)d.line, gyro_error_message());
                s = GYRO_OK;
                continue;
            }
            if (s) break;
        } else {
            if (fwrite(r.text, 1, r.text_len, text_out) != r.text_len || putc('\n', text_out) == EOF) {
                s = gyro_error_set(GYRO_ERR_IO, "normalize: write failed: %s", strerror(errno));
                break;
            }
        }
        ++*next_id;
        stats->documents++;
    }
    stats->lines += gyro_text_reader_lines(in) - lines0;
    stats->bytes += gyro_text_reader_bytes(in) - bytes0;
    return s;
}

void gyro_normalize_stats_format(const gyro_normalize_stats *s, char *buf, size_t size)
{
    snprintf(buf, size,
             "%llu lines read, %llu documents written, %llu repaired, %llu skipped (%llu too long), %llu empty",
             (unsigned long long)s->lines, (unsigned long long)s->documents,
             (unsigned long long)s->repaired, (unsigned long long)s->skipped,
             (unsigned long long)s->too_long, (unsigned long long)s->empty);
}

void gyro_normalize_stage_to_document(const gyro_normalized *r, const char *source,
                                      uint64_t line, uint64_t id, Gyro__V1__Document *doc)
{
    doc->id = id;
    doc->source = (char *)(source ? source : "");
    doc->line = line;
    doc->original = (char *)r->original;
    doc->text = (char *)r->text;
    doc->n_chars = r->n_chars;
    doc->chars = r->chars;
    doc->repairs = r->repairs;
}

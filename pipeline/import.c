/* import.c — format names and dispatch to the format readers (see import.h; the record checks
 * every reader shares are import_record.c).
 */
#include "pipeline/import.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/import_readers.h"

static const char *const format_names[] = {"tsv", "nlpcc", "smp", "crosswoz", "fasttext", "conll",
                                           "jsonl"};

int gyro_import_format_parse(const char *name, gyro_import_format *out)
{
    if (!name || !out) return -1;
    for (size_t i = 0; i < sizeof format_names / sizeof *format_names; i++)
        if (strcmp(name, format_names[i]) == 0) {
            *out = (gyro_import_format)i;
            return 0;
        }
    return -1;
}

const char *gyro_import_format_name(gyro_import_format f)
{
    if (f == GYRO_IMPORT_LABELLED_TEXT) return "text";
    return (unsigned)f < sizeof format_names / sizeof *format_names ? format_names[f] : "unknown";
}

/* The import of `path` (read from fp when not NULL) in `fmt`. */
static gyro_status import_run(gyro_import_format fmt, const char *path, FILE *fp,
                              const gyro_import_options *opt, gyro_import_sink sink,
                              void *sink_ctx, gyro_import_stats *stats)
{
    if (!path) return gyro_error_set(GYRO_ERR_USAGE, "gyro_import_file: NULL path");
    gyro_import_stats local = {0};
    gyro_import_ctx c = {0};
    c.fmt = fmt;
    c.path = path;
    c.fp = fp;
    c.opt = opt;
    c.sink = sink;
    c.sink_ctx = sink_ctx;
    c.stats = stats ? stats : &local;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t n = strlen(gyro_import_format_name(fmt)) + strlen(base) + 2;
    c.source = malloc(n);
    if (!c.source) return gyro_error_set(GYRO_ERR_NOMEM, "out of memory importing %s", path);
    snprintf(c.source, n, "%s:%s", gyro_import_format_name(fmt), base);
    gyro_status st;
    switch (fmt) {
    case GYRO_IMPORT_TSV:
    case GYRO_IMPORT_NLPCC:
    case GYRO_IMPORT_FASTTEXT:
    case GYRO_IMPORT_LABELLED_TEXT: st = gyro_import_lines(&c); break;
    case GYRO_IMPORT_JSONL: st = gyro_import_jsonl(&c); break;
    case GYRO_IMPORT_CONLL:
        st = fp ? gyro_error_set(GYRO_ERR_USAGE, "conll is read from a path, not a stream")
                : gyro_import_conll(&c);
        break;
    case GYRO_IMPORT_SMP:
    case GYRO_IMPORT_CROSSWOZ:
        if (fp) {
            st = gyro_error_set(GYRO_ERR_USAGE, "%s is read from a path, not a stream",
                                gyro_import_format_name(fmt));
            break;
        }
        st = fmt == GYRO_IMPORT_SMP ? gyro_import_smp(&c) : gyro_import_crosswoz(&c);
        break;
    default: st = gyro_error_set(GYRO_ERR_USAGE, "unknown import format %d", (int)fmt);
    }
    free(c.source);
    free(c.text);
    return st;
}

gyro_status gyro_import_file(gyro_import_format fmt, const char *path,
                             const gyro_import_options *opt, gyro_import_sink sink, void *sink_ctx,
                             gyro_import_stats *stats)
{
    return import_run(fmt, path, NULL, opt, sink, sink_ctx, stats);
}

gyro_status gyro_import_fp(gyro_import_format fmt, FILE *fp, const char *name,
                           const gyro_import_options *opt, gyro_import_sink sink, void *sink_ctx,
                           gyro_import_stats *stats)
{
    if (!fp) return gyro_error_set(GYRO_ERR_USAGE, "gyro_import_fp: NULL stream");
    return import_run(fmt, name ? name : "-", fp, opt, sink, sink_ctx, stats);
}

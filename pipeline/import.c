/* import.c — format names and dispatch to the format readers (see import.h; the record checks
 * every reader shares are import_record.c).
 */
#include "pipeline/import.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/import_readers.h"

static const char *const format_names[] = {"tsv", "nlpcc", "smp", "crosswoz"};

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
    return (unsigned)f < sizeof format_names / sizeof *format_names ? format_names[f] : "unknown";
}

gyro_status gyro_import_file(gyro_import_format fmt, const char *path,
                             const gyro_import_options *opt, gyro_import_sink sink, void *sink_ctx,
                             gyro_import_stats *stats)
{
    if (!path) return gyro_error_set(GYRO_ERR_USAGE, "gyro_import_file: NULL path");
    gyro_import_stats local = {0};
    gyro_import_ctx c = {0};
    c.fmt = fmt;
    c.path = path;
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
    case GYRO_IMPORT_NLPCC: st = gyro_import_lines(&c); break;
    case GYRO_IMPORT_SMP: st = gyro_import_smp(&c); break;
    case GYRO_IMPORT_CROSSWOZ: st = gyro_import_crosswoz(&c); break;
    default: st = gyro_error_set(GYRO_ERR_USAGE, "unknown import format %d", (int)fmt);
    }
    free(c.source);
    free(c.text);
    return st;
}

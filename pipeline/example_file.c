/* example_file.c — labelled examples from a gyro stream, TSV or fastText lines into an example
 * set (see example_file.h). Text goes through the importers of pipeline/import.h (strict), so
 * `classify train data.tsv` and `gyro import -f tsv data.tsv | gyro classify train -` read the
 * same examples. */
#include "pipeline/example_file.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "pipeline/import.h"
#include "pipeline/stream.h"
#include "proto/gyro.pb-c.h"

static const char *const format_names[] = {"auto", "pb", "tsv", "fasttext"};

int gyro_example_format_parse(const char *name, gyro_example_format *out)
{
    for (size_t i = 0; name && i < sizeof format_names / sizeof *format_names; i++)
        if (strcmp(name, format_names[i]) == 0) {
            *out = (gyro_example_format)i;
            return 0;
        }
    return -1;
}

const char *gyro_example_format_name(gyro_example_format f)
{
    return (unsigned)f < sizeof format_names / sizeof *format_names ? format_names[f] : "unknown";
}

/* The Example stream on fp into s. */
static gyro_status read_stream(gyro_example_set *s, FILE *fp, const char *path,
                               gyro_example_read_stats *stats)
{
    gyro_stream_reader *r;
    gyro_status st = gyro_stream_reader_open_file(fp, path, NULL, &r);
    if (st) return st;
    const ProtobufCMessageDescriptor *d = &gyro__v1__example__descriptor;
    if (strcmp(gyro_stream_reader_message_type(r), d->name) != 0) {
        st = gyro_error_set(GYRO_ERR_FORMAT, "%s: a stream of %s, expected %s (run 'gyro import' first)",
                            path, gyro_stream_reader_message_type(r), d->name);
        gyro_stream_reader_free(r);
        return st;
    }
    for (;;) {
        ProtobufCMessage *msg;
        if ((st = gyro_stream_next(r, d, &msg)) || !msg) break;
        Gyro__V1__Example *ex = (Gyro__V1__Example *)msg;
        if (!ex->text || !ex->text[0] || !ex->label || !ex->label[0]) {
            stats->skipped++;
        } else {
            st = gyro_example_set_add_session(s, ex->text, ex->label, gyro_stream_reader_record(r),
                                              ex->session);
            if (!st) stats->examples++;
            if (!st && ex->n_labels > 1) stats->composite++;
        }
        protobuf_c_message_free_unpacked(msg, NULL);
        if (st) break;
    }
    gyro_stream_reader_free(r);
    return st;
}

typedef struct text_sink {
    gyro_example_set *set;
    int fasttext;          /* the importer read fastText lines (Example.source "fasttext:...") */
} text_sink;

static gyro_status add_example(void *ctx, const Gyro__V1__Example *ex)
{
    text_sink *t = ctx;
    t->fasttext = strncmp(ex->source, "fasttext:", 9) == 0;
    return gyro_example_set_add_session(t->set, ex->text, ex->label, ex->line, ex->session);
}

/* Text lines on fp (tsv, fasttext, or GYRO_IMPORT_LABELLED_TEXT) into s, strictly; *fmt is set to
 * the format read (for LABELLED_TEXT: the one its first line chose; tsv when there was none). */
static gyro_status read_text(gyro_example_set *s, FILE *fp, const char *path, gyro_import_format ifmt,
                             gyro_example_read_stats *stats, gyro_example_format *fmt)
{
    gyro_import_options opt = {.strict = 1};
    gyro_import_stats is = {0};
    text_sink t = {.set = s, .fasttext = ifmt == GYRO_IMPORT_FASTTEXT};
    gyro_status st = gyro_import_fp(ifmt, fp, path, &opt, add_example, &t, &is);
    stats->examples += is.examples;
    stats->composite += is.composite;
    stats->ignored += is.ignored;
    *fmt = t.fasttext ? GYRO_EXAMPLES_FASTTEXT : GYRO_EXAMPLES_TSV;
    return st;
}

gyro_status gyro_example_file_read_format(gyro_example_set *s, const char *path,
                                          gyro_example_format fmt, gyro_example_read_stats *stats)
{
    gyro_example_read_stats local = {0};
    if (!stats) stats = &local;
    if (!s || !path) return gyro_error_set(GYRO_ERR_USAGE, "gyro_example_file_read: NULL argument");
    FILE *raw = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (!raw) return gyro_error_set(GYRO_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fileno(raw), &sb) == 0 && S_ISDIR(sb.st_mode)) {
        fclose(raw);
        return gyro_error_set(GYRO_ERR_IO, "%s: is a directory", path);
    }
    gyro_status st = GYRO_OK;
    FILE *in = raw;
    int is_stream = 0;
    st = gyro_stream_sniff(raw, path, &in, &is_stream);
    if (!st && fmt == GYRO_EXAMPLES_AUTO) fmt = is_stream ? GYRO_EXAMPLES_PB : GYRO_EXAMPLES_AUTO;
    else if (!st && fmt == GYRO_EXAMPLES_PB && !is_stream)
        st = gyro_error_set(GYRO_ERR_FORMAT, "%s: not a gyro stream (it does not start with a "
                            "StreamHeader); for TSV or fastText lines use --format tsv, fasttext or "
                            "auto", path);
    else if (!st && fmt != GYRO_EXAMPLES_PB && is_stream)
        st = gyro_error_set(GYRO_ERR_FORMAT, "%s: a gyro stream, not %s lines; use --format pb or "
                            "auto", path, gyro_example_format_name(fmt));
    if (!st) {
        switch (fmt) {
        case GYRO_EXAMPLES_PB: st = read_stream(s, in, path, stats); break;
        case GYRO_EXAMPLES_TSV: st = read_text(s, in, path, GYRO_IMPORT_TSV, stats, &fmt); break;
        case GYRO_EXAMPLES_FASTTEXT:
            st = read_text(s, in, path, GYRO_IMPORT_FASTTEXT, stats, &fmt);
            break;
        default: st = read_text(s, in, path, GYRO_IMPORT_LABELLED_TEXT, stats, &fmt); break;
        }
    }
    stats->format = fmt;
    if (in && in != raw) fclose(in);
    if (raw != stdin) fclose(raw);
    return st;
}

gyro_status gyro_example_file_read(gyro_example_set *s, const char *path, uint64_t *skipped)
{
    gyro_example_read_stats stats = {0};
    gyro_status st = gyro_example_file_read_format(s, path, GYRO_EXAMPLES_AUTO, &stats);
    if (skipped) *skipped += stats.skipped;
    return st;
}

/* cmd_generate.c — `gyro generate music`: the project's labelled music-domain set.
 *
 *   gyro generate music [--data DIR] [--seed S] [-n N] [--format stream|tsv] [-o OUT]
 *
 * A thin wrapper over pipeline/generate_music.h: loads the templates and slot lists compiled
 * into libgyro (corpora/music/ of the source tree, so it works from any directory and once
 * installed) or, with --data, those of DIR; generates N examples for seed S and
 * writes them as an Example stream or as TSV (text<TAB>label<TAB>session, which `gyro import
 * --format tsv` reads back), atomically. --list prints the intents instead.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "models/core/atomic_file.h"
#include "pipeline/cli/cli.h"
#include "pipeline/cli/opts.h"
#include "pipeline/generate_music.h"
#include "pipeline/stream.h"

typedef struct generate_args {
    const char *data, *output;
    uint64_t seed;
    long count;
    int tsv, list, quiet;
} generate_args;

static const gyro_opt generate_opts[] = {
    GYRO_O_STR("data", 0, generate_args, data, "DIR", NULL,
               "templates and slot lists of DIR (default: the copy of corpora/music compiled into gyro)"),
    GYRO_O_STR(NULL, 'd', generate_args, data, "DIR", NULL, NULL), /* old letter; -d is --dev elsewhere */
    GYRO_O_SEED("seed", 's', generate_args, seed, "1", "seed"),
    GYRO_O_LONG("count", 'n', generate_args, count, "N", "16332", 0, 1000000000L,
                "number of examples (the default is the seed paper's size)"),
    GYRO_O_CHOICE("format", 'f', generate_args, tsv, "F", "stream|tsv", "stream",
                  "stream (an Example stream) or tsv"),
    GYRO_O_STR("output", 'o', generate_args, output, "FILE", "-", "output, '-' for stdout"),
    GYRO_O_FLAG("list", 'l', generate_args, list, "print the intents, one per line, and exit"),
    GYRO_O_FLAG("quiet", 'q', generate_args, quiet, "no summary line"),
    GYRO_O_END,
};

const gyro_cmd_spec gyro_spec_generate = {
    "generate", "music [options]",
    "Generate the labelled music-domain set: the 125 intents of the seed paper's appendix D "
    "(composites included) from gyro's templates and slot lists. Deterministic for a seed; every "
    "intent appears when N >= 125.",
    "Exit status: 0 OK, 1 I/O error, 2 usage, 65 malformed template files.",
    generate_opts,
    NULL,
};

typedef struct tsv_out { FILE *fp; } tsv_out;

static gyro_status write_tsv(void *ctx, const Gyro__V1__Example *e)
{
    tsv_out *t = ctx;
    if (fprintf(t->fp, "%s\t%s\t%s\n", e->text, e->label, e->session) < 0)
        return gyro_error_set(GYRO_ERR_IO, "write error");
    return GYRO_OK;
}

static gyro_status write_stream(void *ctx, const Gyro__V1__Example *e)
{
    return gyro_stream_write(ctx, &e->base);
}

int gyro_cmd_generate(int argc, char **argv)
{
    generate_args o = {0};
    int first;
    int rc = gyro_opts_parse(&gyro_spec_generate, argc, argv, &o, &first);
    if (rc != GYRO_OPTS_CONTINUE) return rc;
    const char *dir = o.data, *output = o.output;
    unsigned long long seed = o.seed;
    long count = o.count;
    int list = o.list, quiet = o.quiet, tsv = o.tsv;
    if (first >= argc) return gyro_cli_usage_error("generate", "what to generate? ('music')");
    if (strcmp(argv[first], "music") != 0)
        return gyro_cli_usage_error("generate", "unknown set '%s' (the one set is 'music')", argv[first]);
    if (first + 1 < argc) return gyro_cli_usage_error("generate", "unexpected argument '%s'", argv[first + 1]);

    if (!list && !tsv && strcmp(output, "-") == 0 && isatty(STDOUT_FILENO))
        return gyro_cli_usage_error("generate", "standard output is a terminal: use --format tsv, "
                                    "-o FILE, or pipe into 'gyro dump'");
    gyro_music_gen *g;
    gyro_status st = dir ? gyro_music_gen_load(dir, &g) : gyro_music_gen_load_default(&g);
    if (st != GYRO_OK) return gyro_cli_fail("generate", st);
    if (list) {
        for (size_t i = 0; i < gyro_music_gen_n_intents(g); i++) printf("%s\n", gyro_music_gen_intent(g, i));
        gyro_music_gen_free(g);
        return 0;
    }
    if (tsv) {
        gyro_atomic_file f;
        st = gyro_atomic_open(&f, output);
        if (st == GYRO_OK) {
            tsv_out t = {f.fp};
            st = gyro_music_generate(g, seed, (uint64_t)count, write_tsv, &t);
            if (st == GYRO_OK) st = gyro_atomic_commit(&f);
            else gyro_atomic_abort(&f);
        }
    } else {
        gyro_stream_writer *w;
        st = gyro_stream_writer_open_path(output, &gyro__v1__example__descriptor,
                                          "gyro generate music " GYRO_VERSION, &w);
        if (st == GYRO_OK) {
            st = gyro_music_generate(g, seed, (uint64_t)count, write_stream, w);
            if (st == GYRO_OK) st = gyro_stream_writer_close(w);
            else gyro_stream_writer_abort(w);
        }
    }
    if (st == GYRO_OK && !quiet)
        fprintf(stderr, "gyro generate: %ld music examples over %zu intents from %zu templates "
                "of %s (seed %llu, %s) -> %s\n", count, gyro_music_gen_n_intents(g),
                gyro_music_gen_n_templates(g), dir ? dir : "the embedded set", seed,
                tsv ? "tsv" : "stream", output);
    gyro_music_gen_free(g);
    return st == GYRO_OK ? 0 : gyro_cli_fail("generate", st);
}

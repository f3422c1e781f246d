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
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "models/core/atomic_file.h"
#include "pipeline/cli/cli.h"
#include "pipeline/generate_music.h"
#include "pipeline/stream.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: gyro generate music [options]\n"
            "\n"
            "Generate the labelled music-domain set: the 125 intents of the seed paper's\n"
            "appendix D (composites included) from gyro's templates and slot lists.\n"
            "Deterministic for a seed; every intent appears when N >= 125.\n"
            "\n"
            "  -d, --data DIR         templates and slot lists of DIR (default: the copy of\n"
            "                         corpora/music compiled into gyro)\n"
            "  -s, --seed S           seed (default 1)\n"
            "  -n, --count N          number of examples (default 16332, the seed paper's size)\n"
            "  -f, --format F         stream (Example stream, default) or tsv\n"
            "  -o, --output FILE      output (default '-': stdout)\n"
            "  -l, --list             print the intents, one per line, and exit\n"
            "  -q, --quiet            no summary line\n"
            "  -h, --help             this help\n"
            "\n"
            "Exit status: 0 OK, 1 I/O error, 2 usage, 65 malformed template files.\n");
}

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
    static const struct option opts[] = {
        {"data", required_argument, 0, 'd'},   {"seed", required_argument, 0, 's'},
        {"count", required_argument, 0, 'n'},  {"format", required_argument, 0, 'f'},
        {"output", required_argument, 0, 'o'}, {"list", no_argument, 0, 'l'},
        {"quiet", no_argument, 0, 'q'},        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    const char *dir = NULL, *format = "stream", *output = "-";
    unsigned long long seed = 1;
    long count = 16332;
    int list = 0, quiet = 0, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "d:s:n:f:o:lqh", opts, NULL)) != -1) {
        switch (c) {
        case 'd': dir = optarg; break;
        case 's': {
            uint64_t v;
            if (!gyro_cli_parse_seed("generate", "--seed", optarg, &v)) return 2;
            seed = v;
            break;
        }
        case 'n':
            if (!gyro_cli_parse_long("generate", "--count", optarg, 0, 1000000000L, &count)) return 2;
            break;
        case 'f': format = optarg; break;
        case 'o': output = optarg; break;
        case 'l': list = 1; break;
        case 'q': quiet = 1; break;
        case 'h': usage(stdout); return 0;
        default: return gyro_cli_usage_error("generate", "unknown option or missing argument");
        }
    }
    if (optind >= argc) return gyro_cli_usage_error("generate", "what to generate? ('music')");
    if (strcmp(argv[optind], "music") != 0)
        return gyro_cli_usage_error("generate", "unknown set '%s' (the one set is 'music')", argv[optind]);
    if (optind + 1 < argc) return gyro_cli_usage_error("generate", "unexpected argument '%s'", argv[optind + 1]);
    int tsv = strcmp(format, "tsv") == 0;
    if (!tsv && strcmp(format, "stream") != 0)
        return gyro_cli_usage_error("generate", "--format must be stream or tsv, got '%s'", format);

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

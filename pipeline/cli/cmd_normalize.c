/* cmd_normalize.c — `gyro normalize`: raw UTF-8 text in, a stream of gyro.v1.Document out.
 *
 * A thin wrapper around gyro_normalize_stage_run (pipeline/normalize_stage.h): parse options,
 * open the inputs one after the other, write one stream (or plain text with --text), print the
 * summary and at most a few warnings on stderr.
 */
#include "pipeline/cli/cli.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "models/core/atomic_file.h"
#include "models/core/progress.h"
#include "models/text/normalize.h"
#include "pipeline/normalize_stage.h"
#include "pipeline/stream.h"
#include "pipeline/text_reader.h"

#define MAX_WARNINGS 10

static void usage(FILE *out)
{
    fprintf(out,
            "usage: gyro normalize [options] [FILE...]\n"
            "\n"
            "Normalize UTF-8 text (FILEs, or standard input when none or '-') and write a stream of\n"
            "gyro.v1.Document records, one per line: NFKC, Traditional->Simplified, ANSI escapes and\n"
            "control characters removed, whitespace folded, grapheme clusters.\n"
            "\n"
            "  -o, --output PATH     write to PATH (atomically) instead of standard output\n"
            "      --text            write the normalized text, one document per line\n"
            "      --paragraphs      a document is a paragraph (separated by blank lines)\n"
            "      --no-t2s          keep Traditional characters (default: --t2s)\n"
            "      --case-fold       apply Unicode case folding\n"
            "      --no-nfkc         skip NFKC (NFC is still applied)\n"
            "      --invalid POLICY  invalid UTF-8: replace (U+FFFD, default), skip (drop the\n"
            "                        document), fail (exit 65 naming file, line and byte)\n"
            "      --max-line BYTES  longest document (default 16777216); longer ones are skipped\n"
            "                        and counted\n"
            "      --keep-empty      also write documents that are empty after normalization\n"
            "  -q, --quiet           no summary, warnings or progress on standard error\n"
            "  -h, --help            show this help\n"
            "\n"
            "A summary on standard error counts lines read, documents written, repaired, skipped\n"
            "and empty. A UTF-8 byte-order mark and CRLF line ends are accepted. Memory use does\n"
            "not grow with the input. Exit status: 0 ok, 1 runtime error, 2 usage, 65 bad input.\n");
}

typedef struct warn_state {
    int count;
    int quiet;
} warn_state;

static void print_warning(void *ctx, const char *message)
{
    warn_state *ws = ctx;
    ws->count++;
    if (ws->quiet) return;
    if (ws->count <= MAX_WARNINGS) fprintf(stderr, "gyro normalize: %s\n", message);
    else if (ws->count == MAX_WARNINGS + 1)
        fprintf(stderr, "gyro normalize: further warnings not shown (see the summary)\n");
}

int gyro_cmd_normalize(int argc, char **argv)
{
    enum { OPT_TEXT = 256, OPT_PARAGRAPHS, OPT_T2S, OPT_NO_T2S, OPT_CASE_FOLD, OPT_NO_NFKC,
           OPT_INVALID, OPT_MAX_LINE, OPT_KEEP_EMPTY };
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},
        {"text", no_argument, NULL, OPT_TEXT},
        {"paragraphs", no_argument, NULL, OPT_PARAGRAPHS},
        {"t2s", no_argument, NULL, OPT_T2S},
        {"no-t2s", no_argument, NULL, OPT_NO_T2S},
        {"case-fold", no_argument, NULL, OPT_CASE_FOLD},
        {"no-nfkc", no_argument, NULL, OPT_NO_NFKC},
        {"invalid", required_argument, NULL, OPT_INVALID},
        {"max-line", required_argument, NULL, OPT_MAX_LINE},
        {"keep-empty", no_argument, NULL, OPT_KEEP_EMPTY},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *cmd = "normalize", *output = "-";
    gyro_normalize_options nopt;
    gyro_normalize_options_init(&nopt);
    gyro_text_reader_options ropt = {0, 0};
    gyro_normalize_stage_options sopt;
    memset(&sopt, 0, sizeof sopt);
    int text = 0, quiet = 0;
    long v;
    optind = 0;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":o:qh", longopts, NULL)) != -1) {
        switch (c) {
        case 'o': output = optarg; break;
        case OPT_TEXT: text = 1; break;
        case OPT_PARAGRAPHS: ropt.paragraphs = 1; break;
        case OPT_T2S: nopt.t2s = 1; break;
        case OPT_NO_T2S: nopt.t2s = 0; break;
        case OPT_CASE_FOLD: nopt.case_fold = 1; break;
        case OPT_NO_NFKC: nopt.nfkc = 0; break;
        case OPT_INVALID:
            if (gyro_invalid_policy_parse(optarg, &nopt.invalid))
                return gyro_cli_usage_error(cmd, "--invalid expects replace, skip or fail, got '%s'", optarg);
            break;
        case OPT_MAX_LINE:
            if (!gyro_cli_parse_long(cmd, "--max-line", optarg, 1, 1L << 30, &v)) return 2;
            ropt.max_document = (size_t)v;
            break;
        case OPT_KEEP_EMPTY: sopt.keep_empty = 1; break;
        case 'q': quiet = 1; break;
        case 'h': usage(stdout); return 0;
        case ':': return gyro_cli_usage_error(cmd, "option '%s' needs a value", argv[optind - 1]);
        default: return gyro_cli_usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (text) nopt.segment = 0;   /* grapheme clusters are only needed for Documents */
    if (!text && strcmp(output, "-") == 0 && isatty(STDOUT_FILENO))
        return gyro_cli_usage_error(cmd, "standard output is a terminal: use --text, -o FILE, "
                                         "or pipe into 'gyro dump'");

    char *stdin_only[] = {"-"};
    char **inputs = optind < argc ? argv + optind : stdin_only;
    int n_inputs = optind < argc ? argc - optind : 1;

    /* progress over regular files of known size */
    uint64_t total = 0;
    for (int i = 0; i < n_inputs; i++) {
        struct stat st;
        if (strcmp(inputs[i], "-") == 0 || stat(inputs[i], &st) != 0 || !S_ISREG(st.st_mode)) {
            total = 0;
            break;
        }
        total += (uint64_t)st.st_size;
    }
    gyro_progress prog;
    gyro_progress_init(&prog, "bytes/sec", quiet);
    warn_state ws = {0, quiet};
    sopt.warn = print_warning;
    sopt.warn_ctx = &ws;
    sopt.progress = total >= (64u << 20) ? &prog : NULL; /* only for long runs */
    sopt.progress_total = total;
    sopt.progress_start = gyro_now();

    /* a SIGINT/SIGTERM must not leave OUT.tmp.PID.N behind */
    if (strcmp(output, "-") != 0 && gyro_atomic_cleanup_on_signals() != GYRO_OK)
        return gyro_cli_fail(cmd, GYRO_ERR_IO);
    gyro_normalizer *n = NULL;
    gyro_stream_writer *w = NULL;
    gyro_atomic_file af;
    int af_open = 0;
    gyro_status s = gyro_normalizer_new(&nopt, &n);
    if (!s) {
        if (text) {
            if (!(s = gyro_atomic_open(&af, output))) af_open = 1;
        } else {
            s = gyro_stream_writer_open_path(output, &gyro__v1__document__descriptor,
                                             "gyro normalize " GYRO_VERSION, &w);
        }
    }
    gyro_normalize_stats stats;
    memset(&stats, 0, sizeof stats);
    uint64_t next_id = 1;
    for (int i = 0; !s && i < n_inputs; i++) {
        gyro_text_reader *r;
        if ((s = gyro_text_reader_open_path(inputs[i], &ropt, &r))) break;
        s = gyro_normalize_stage_run(n, r, w, af_open ? af.fp : NULL, &sopt, &stats, &next_id);
        sopt.progress_base += gyro_text_reader_bytes(r);
        gyro_text_reader_free(r);
    }
    if (sopt.progress && !s)
        gyro_progress_finish(&prog, 1.0, (double)total / (gyro_now() - sopt.progress_start), NAN, NAN);
    if (!s) {
        if (w) s = gyro_stream_writer_close(w);
        else if (af_open) s = gyro_atomic_commit(&af);
        w = NULL;
        af_open = 0;
    }
    if (w) gyro_stream_writer_abort(w);
    if (af_open) gyro_atomic_abort(&af);
    gyro_normalizer_free(n);
    int rc = s ? gyro_cli_fail(cmd, s) : 0;
    if (!quiet) {
        char line[256];
        gyro_normalize_stats_format(&stats, line, sizeof line);
        fprintf(stderr, "gyro normalize: %s\n", line);
    }
    return rc;
}

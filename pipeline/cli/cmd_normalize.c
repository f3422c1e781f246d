/* cmd_normalize.c — `gyro normalize`: raw UTF-8 text in, a stream of gyro.v1.Document out.
 *
 * A thin wrapper around gyro_normalize_stage_run (pipeline/normalize_stage.h): parse options,
 * open the inputs one after the other, write one stream (or plain text with --text), print the
 * summary and at most a few warnings on stderr.
 */
#include "pipeline/cli/cli.h"

#include <stddef.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "models/core/atomic_file.h"
#include "models/core/progress.h"
#include "models/text/normalize.h"
#include "pipeline/cli/opts.h"
#include "pipeline/normalize_stage.h"
#include "pipeline/stream.h"
#include "pipeline/text_reader.h"

#define MAX_WARNINGS 10

typedef struct normalize_args {
    const char *output;
    int text, quiet, keep_empty, invalid;
    long max_line;
    gyro_normalize_options nopt;   /* the library's defaults (gyro_normalize_options_init) */
    gyro_text_reader_options ropt;
} normalize_args;

static const gyro_opt normalize_opts[] = {
    GYRO_O_STR("output", 'o', normalize_args, output, "PATH", NULL,
               "write to PATH (atomically) instead of standard output"),
    GYRO_O_FLAG("text", 0, normalize_args, text, "write the normalized text, one document per line"),
    GYRO_O_FLAG("paragraphs", 0, normalize_args, ropt.paragraphs, "a document is a paragraph (separated by blank lines)"),
    GYRO_O_SET("t2s", 0, normalize_args, nopt.t2s, 1, "convert Traditional to Simplified characters (the default)"),
    GYRO_O_SET("no-t2s", 0, normalize_args, nopt.t2s, -1, "keep Traditional characters"),
    GYRO_O_FLAG("case-fold", 0, normalize_args, nopt.case_fold, "apply Unicode case folding"),
    GYRO_O_SET("no-nfkc", 0, normalize_args, nopt.nfkc, -1, "skip NFKC (NFC is still applied)"),
    GYRO_O_CHOICE("invalid", 0, normalize_args, invalid, "POLICY", "replace|skip|fail", "replace",
                  "invalid UTF-8: replace each invalid sequence by U+FFFD (counted as repaired), skip the "
                  "document (counted as skipped), or fail with exit status 65 naming file, line and byte"),
    GYRO_O_LONG("max-line", 0, normalize_args, max_line, "BYTES", NULL, 1, 1L << 30,
                "longest document (default 16777216 = 16 MiB); a longer one is read to its end, skipped, "
                "reported and counted",
                .man = "A Document whose record would exceed the stream limit of 64 MiB is skipped the "
                       "same way. Peak memory is about 18 bytes per byte of the longest document (some "
                       "200 MB for a 10 MB line); lower this limit to bound it."),
    GYRO_O_FLAG("keep-empty", 0, normalize_args, keep_empty,
                "also write documents that are empty after normalization (by default they are counted only)"),
    GYRO_O_FLAG("quiet", 'q', normalize_args, quiet, "no summary, warnings or progress on standard error"),
    GYRO_O_END,
};

const gyro_cmd_spec gyro_spec_normalize = {
    "normalize", "[options] [FILE...]",
    "Normalize UTF-8 text (FILEs, or standard input when none or '-') and write a stream of "
    "gyro.v1.Document records, one per line: NFKC, Traditional->Simplified, ANSI escapes and "
    "control characters removed, whitespace folded, grapheme clusters.",
    "A summary on standard error counts lines read, documents written, repaired, skipped and "
    "empty. A UTF-8 byte-order mark and CRLF line ends are accepted. Memory use does not grow with "
    "the input. Exit status: 0 ok, 1 runtime error, 2 usage, 65 bad input.",
    normalize_opts,
    NULL,
};

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

/* Total size of the inputs when all are regular files, else 0 (no progress line). */
static uint64_t inputs_size(char **inputs, int n_inputs)
{
    uint64_t total = 0;
    for (int i = 0; i < n_inputs; i++) {
        struct stat st;
        if (strcmp(inputs[i], "-") == 0 || stat(inputs[i], &st) != 0 || !S_ISREG(st.st_mode)) return 0;
        total += (uint64_t)st.st_size;
    }
    return total;
}

/* The command line's normalizer options: the table stores -1 for --no-t2s / --no-nfkc. */
static void settle(normalize_args *o)
{
    static const gyro_invalid_policy policies[] = {GYRO_INVALID_REPLACE, GYRO_INVALID_SKIP, GYRO_INVALID_FAIL};
    if (o->nopt.t2s < 0) o->nopt.t2s = 0;
    if (o->nopt.nfkc < 0) o->nopt.nfkc = 0;
    o->nopt.invalid = policies[o->invalid];
    o->ropt.max_document = (size_t)o->max_line;
    if (o->text) o->nopt.segment = 0; /* grapheme clusters are only needed for Documents */
}

int gyro_cmd_normalize(int argc, char **argv)
{
    const char *cmd = "normalize";
    normalize_args o = {.output = "-"};
    gyro_normalize_options_init(&o.nopt);
    int optind, rc = gyro_opts_parse(&gyro_spec_normalize, argc, argv, &o, &optind);
    if (rc != GYRO_OPTS_CONTINUE) return rc;
    settle(&o);
    const char *output = o.output;
    gyro_normalize_options nopt = o.nopt;
    gyro_text_reader_options ropt = o.ropt;
    gyro_normalize_stage_options sopt;
    memset(&sopt, 0, sizeof sopt);
    sopt.keep_empty = o.keep_empty;
    int text = o.text, quiet = o.quiet;
    if (!text && strcmp(output, "-") == 0 && isatty(STDOUT_FILENO))
        return gyro_cli_usage_error(cmd, "standard output is a terminal: use --text, -o FILE, "
                                         "or pipe into 'gyro dump'");

    char *stdin_only[] = {"-"};
    char **inputs = optind < argc ? argv + optind : stdin_only;
    int n_inputs = optind < argc ? argc - optind : 1;
    uint64_t total = inputs_size(inputs, n_inputs);
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
    rc = s ? gyro_cli_fail(cmd, s) : 0;
    if (!quiet) {
        char line[256];
        gyro_normalize_stats_format(&stats, line, sizeof line);
        fprintf(stderr, "gyro normalize: %s\n", line);
    }
    return rc;
}

/* cmd_import.c — `gyro import`: labelled data sets in, one Example stream out.
 *
 *   gyro import --format tsv|nlpcc|smp|crosswoz|fasttext|conll|jsonl [--strict] [-o OUT] FILE...
 *
 * A thin wrapper over gyro_import_file (pipeline/import.h): it writes every example to the
 * output stream, prints each skipped bad record (up to --max-warnings) on stderr, and ends with a
 * summary line: examples, distinct sessions, distinct labels, composites, bad records. The
 * output is written atomically: after an error no output file appears.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pipeline/cli/cli.h"
#include "pipeline/cli/opts.h"

#include "models/core/atomic_file.h"
#include "pipeline/import.h"
#include "models/text/labels.h"
#include "pipeline/stream.h"
#include "models/text/strmap.h"

typedef struct import_args {
    const char *format, *output, *intents, *text_field, *label_field, *session_field;
    int strict, quiet;
    long max_warnings;
} import_args;

static const gyro_opt import_opts[] = {
    GYRO_O_STR("format", 'f', import_args, format, "FORMAT", NULL,
               "input format (required): tsv (text<TAB>label[<TAB>session] per line), nlpcc (NLPCC 2018 "
               "task 4: session, text, label, tagged), smp (SMP2020-ECDT JSON array of {text, domain, "
               "intent}), crosswoz (CrossWOZ dialogues, .json or the .json.zip), fasttext "
               "(fastText's '__label__x text' lines; several labels make a composite x+y), conll (one "
               "token and its BIO tag per line, blank lines between sentences, as CAIS; the intents "
               "from --intents), jsonl (JSON lines; see --text-field)"),
    GYRO_O_STR("intents", 0, import_args, intents, "FILE", NULL,
               "conll: the intent file, one intent per line for each sentence in order (CAIS's "
               "ch.train.intent); without it each sentence ends with a line holding its intent"),
    GYRO_O_STR("text-field", 0, import_args, text_field, "NAME", "text",
               "jsonl: the member holding the text (a path into nested objects with dots: a.b)"),
    GYRO_O_STR("label-field", 0, import_args, label_field, "NAME[,NAME...]", "label",
               "jsonl: the member holding the label: a string, an integer, or an array of strings "
               "(a composite, joined by '+'); several members are joined by '.' (domain,intent gives "
               "domain.intent)"),
    GYRO_O_STR("session-field", 0, import_args, session_field, "NAME", NULL,
               "jsonl: the member holding the session or dialogue id (by default each line is its own "
               "session)"),
    GYRO_O_STR("output", 'o', import_args, output, "FILE", "-", "output stream ('-': stdout)"),
    GYRO_O_FLAG("strict", 0, import_args, strict,
                "stop at the first bad record with exit status 65; by default a bad record is skipped "
                "with a message and counted"),
    GYRO_O_LONG("max-warnings", 0, import_args, max_warnings, "N", "20", 0, 1000000000L,
                "bad-record messages to print"),
    GYRO_O_FLAG("quiet", 'q', import_args, quiet, "no summary line"),
    GYRO_O_END,
};

const gyro_cmd_spec gyro_spec_import = {
    "import", "--format FORMAT [options] FILE...",
    "Import labelled utterances into a gyro.v1.Example stream ('-' reads stdin).",
    "Exit status: 0 OK, 1 I/O error, 2 usage, 65 malformed input or no examples.",
    import_opts,
    NULL,
};

typedef struct import_run {
    gyro_stream_writer *w;
    gyro_label_set *labels;
    gyro_strmap *sessions;
    char *key;               /* (key_cap) source TAB session */
    size_t key_cap;
    long max_warnings;
    unsigned long warned;
} import_run;

static gyro_status sink(void *ctx, const Gyro__V1__Example *ex)
{
    import_run *r = ctx;
    gyro_status st = gyro_stream_write(r->w, &ex->base);
    if (st != GYRO_OK) return st;
    if ((st = gyro_label_set_add(r->labels, ex->label, NULL)) != GYRO_OK) return st;
    size_t need = strlen(ex->source) + strlen(ex->session) + 2;
    if (need > r->key_cap) {
        char *k = realloc(r->key, need * 2);
        if (!k) return gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
        r->key = k;
        r->key_cap = need * 2;
    }
    snprintf(r->key, r->key_cap, "%s\t%s", ex->source, ex->session);
    int32_t id;
    return gyro_strmap_intern(r->sessions, r->key, &id, NULL);
}

static void warn(void *ctx, const char *msg)
{
    import_run *r = ctx;
    if (r->warned++ < (unsigned long)r->max_warnings) fprintf(stderr, "gyro import: skipped: %s\n", msg);
}

int gyro_cmd_import(int argc, char **argv)
{
    import_args o = {0};
    int optind, rc = gyro_opts_parse(&gyro_spec_import, argc, argv, &o, &optind);
    if (rc != GYRO_OPTS_CONTINUE) return rc;
    const char *format = o.format, *output = o.output;
    int strict = o.strict, quiet = o.quiet;
    long max_warnings = o.max_warnings;
    if (!format) return gyro_cli_usage_error("import", "--format is required");
    gyro_import_format fmt;
    if (gyro_import_format_parse(format, &fmt) != 0)
        return gyro_cli_usage_error("import", "unknown format '%s' (tsv, nlpcc, smp, crosswoz, fasttext, "
                                    "conll, jsonl)", format);
    if (o.intents && fmt != GYRO_IMPORT_CONLL)
        return gyro_cli_usage_error("import", "--intents is an option of --format conll");
    if (fmt == GYRO_IMPORT_CONLL && o.intents && argc - optind != 1)
        return gyro_cli_usage_error("import", "--intents goes with one conll file");
    if (fmt != GYRO_IMPORT_JSONL && (o.session_field || strcmp(o.text_field, "text") != 0 ||
                                     strcmp(o.label_field, "label") != 0))
        return gyro_cli_usage_error("import", "--text-field, --label-field and --session-field are "
                                    "options of --format jsonl");
    if (!*o.text_field || !*o.label_field || (o.session_field && !*o.session_field))
        return gyro_cli_usage_error("import", "an empty field name");
    if (optind >= argc) return gyro_cli_usage_error("import", "no input file ('-' reads stdin)");
    if (strcmp(output, "-") == 0 && isatty(STDOUT_FILENO))
        return gyro_cli_usage_error("import", "standard output is a terminal: use -o FILE, or pipe "
                                    "into 'gyro dump'");

    /* a SIGINT/SIGTERM must not leave OUT.tmp.PID.N behind */
    if (strcmp(output, "-") != 0 && gyro_atomic_cleanup_on_signals() != GYRO_OK)
        return gyro_cli_fail("import", GYRO_ERR_IO);
    import_run run = {0};
    run.max_warnings = max_warnings;
    gyro_status st = gyro_label_set_new(&run.labels);
    if (st == GYRO_OK) st = gyro_strmap_new(&run.sessions);
    if (st == GYRO_OK)
        st = gyro_stream_writer_open_path(output, &gyro__v1__example__descriptor,
                                          "gyro import " GYRO_VERSION, &run.w);
    gyro_import_options opt = {.strict = strict, .warn = warn, .warn_ctx = &run,
                               .intent_path = o.intents, .text_field = o.text_field,
                               .label_field = o.label_field, .session_field = o.session_field};
    gyro_import_stats stats = {0};
    for (int i = optind; i < argc && st == GYRO_OK; i++)
        st = gyro_import_file(fmt, argv[i], &opt, sink, &run, &stats);
    if (st == GYRO_OK && stats.examples == 0)
        st = gyro_error_set(GYRO_ERR_DATA, "no examples imported (%llu bad records)",
                            (unsigned long long)stats.bad);
    if (st == GYRO_OK) {
        st = gyro_stream_writer_close(run.w);
    } else {
        gyro_stream_writer_abort(run.w);
    }
    rc = 0;
    if (st != GYRO_OK) {
        rc = gyro_cli_fail("import", st);
    } else {
        if (run.warned > (unsigned long)max_warnings)
            fprintf(stderr, "gyro import: ... and %lu more bad records\n",
                    run.warned - (unsigned long)max_warnings);
        char slots[64] = "";
        if (fmt == GYRO_IMPORT_CONLL)
            snprintf(slots, sizeof slots, ", %llu slots", (unsigned long long)stats.slots);
        if (!quiet)
            fprintf(stderr,
                    "gyro import: %llu examples, %zu sessions, %d labels, %d atoms, %llu composite "
                    "(%.1f%%), %llu bad records skipped, %llu blank lines, %llu other records "
                    "ignored%s (%d file%s, format %s) -> %s\n",
                    (unsigned long long)stats.examples, gyro_strmap_count(run.sessions),
                    gyro_label_set_count(run.labels), gyro_label_set_atom_count(run.labels),
                    (unsigned long long)stats.composite,
                    100.0 * (double)stats.composite / (double)stats.examples,
                    (unsigned long long)stats.bad, (unsigned long long)stats.blank,
                    (unsigned long long)stats.ignored, slots, argc - optind, argc - optind == 1 ? "" : "s",
                    gyro_import_format_name(fmt), output);
    }
    gyro_label_set_free(run.labels);
    gyro_strmap_free(run.sessions);
    free(run.key);
    return rc;
}

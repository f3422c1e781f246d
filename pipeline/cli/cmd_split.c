/* cmd_split.c — `gyro split`: an Example stream in, a train stream and a dev stream out.
 *
 *   gyro split [--seed S] [--dev F | --folds K --fold I] [--stratify] --train-out TRAIN
 *              --dev-out DEV [IN]
 *
 * A thin wrapper over gyro_split_examples (pipeline/split.h): it reads the whole input (so it
 * works on stdin), splits by session, and writes both outputs atomically in input order.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pipeline/cli/cli.h"
#include "pipeline/cli/opts.h"
#include "pipeline/split.h"
#include "pipeline/stream.h"

typedef struct split_args {
    gyro_split_options so;
    const char *train_out, *dev_out;
    double dev;  /* NAN: --dev not given (so.dev_fraction keeps its default) */
    int quiet;
} split_args;

/* Old letters kept as hidden aliases: -k (--folds), -S (--stratify), -t (--train-out) and
 * -v (--dev-out); -k and -t mean --top-k and --table in the other commands. */
static const gyro_opt split_opts[] = {
    GYRO_O_SEED("seed", 's', split_args, so.seed, "1", "seed of the split"),
    GYRO_O_DOUBLE("dev", 'd', split_args, dev, "F", NULL, 0, 1, "fraction of the examples in dev (default 0.1)"),
    GYRO_O_INT("folds", 0, split_args, so.folds, "K", NULL, 2, 1000000, "k-fold mode: cut the sessions into K folds ..."),
    GYRO_O_INT(NULL, 'k', split_args, so.folds, "K", NULL, 2, 1000000, NULL),
    GYRO_O_INT("fold", 'i', split_args, so.fold, "I", NULL, 0, 999999, "... and put fold I (0-based) in dev"),
    GYRO_O_FLAG("stratify", 0, split_args, so.stratify,
                "spread every label evenly over the folds (or train and dev); a session's label is "
                "that of its first example"),
    GYRO_O_FLAG(NULL, 'S', split_args, so.stratify, NULL),
    GYRO_O_STR("train-out", 0, split_args, train_out, "FILE", NULL, "train stream (required)"),
    GYRO_O_STR(NULL, 't', split_args, train_out, "FILE", NULL, NULL),
    GYRO_O_STR("dev-out", 0, split_args, dev_out, "FILE", NULL, "dev stream (required)"),
    GYRO_O_STR(NULL, 'v', split_args, dev_out, "FILE", NULL, NULL),
    GYRO_O_FLAG("quiet", 'q', split_args, quiet, "no summary line"),
    GYRO_O_END,
};

const gyro_cmd_spec gyro_spec_split = {
    "split", "[options] --train-out TRAIN --dev-out DEV [IN]",
    "Split an Example stream (IN, default '-': stdin) into train and dev streams by session: a "
    "session or dialogue is never cut. Deterministic for a seed.",
    "Exit status: 0 OK, 1 I/O error, 2 usage, 65 malformed input stream.",
    split_opts,
    NULL,
};

/* Usage checks of the parsed options; returns 0 when they hold, else the usage error's exit. */
static int check_args(const split_args *o, int have_dev, int n_inputs)
{
    const gyro_split_options *so = &o->so;
    const char *tr = o->train_out, *dv = o->dev_out;
    if (!tr || !dv) return gyro_cli_usage_error("split", "--train-out and --dev-out are required");
    if (so->folds && have_dev) return gyro_cli_usage_error("split", "--dev and --folds exclude each other");
    if (so->folds && so->fold < 0) return gyro_cli_usage_error("split", "--folds needs --fold I");
    if (!so->folds && so->fold >= 0) return gyro_cli_usage_error("split", "--fold needs --folds K");
    if (so->folds && so->fold >= so->folds)
        return gyro_cli_usage_error("split", "--fold must be below --folds (%d)", so->folds);
    if (n_inputs > 1) return gyro_cli_usage_error("split", "one input stream at most");
    if (strcmp(tr, dv) == 0 && strcmp(tr, "-") != 0)
        return gyro_cli_usage_error("split", "--train-out and --dev-out name the same file");
    if (strcmp(tr, "-") == 0 && strcmp(dv, "-") == 0)
        return gyro_cli_usage_error("split", "only one of the outputs can be stdout");
    if ((strcmp(tr, "-") == 0 || strcmp(dv, "-") == 0) && isatty(STDOUT_FILENO))
        return gyro_cli_usage_error("split", "standard output is a terminal: write to files, or "
                                    "pipe into 'gyro dump'");
    return 0;
}

/* Read every Example of `in` into *msgs (n of them; the caller frees each and the array). */
static gyro_status read_all(const char *in, ProtobufCMessage ***msgs, size_t *n)
{
    gyro_stream_reader *r = NULL;
    size_t cap = 0;
    gyro_status st = gyro_stream_reader_open_path(in, NULL, &r);
    while (st == GYRO_OK) {
        ProtobufCMessage *m;
        st = gyro_stream_next(r, &gyro__v1__example__descriptor, &m);
        if (st != GYRO_OK || !m) break;
        if (*n == cap) {
            size_t ncap = cap ? cap * 2 : 1024;
            ProtobufCMessage **nm = realloc(*msgs, ncap * sizeof *nm);
            if (!nm) {
                protobuf_c_message_free_unpacked(m, NULL);
                st = gyro_error_set(GYRO_ERR_NOMEM, "out of memory reading %s", in);
                break;
            }
            *msgs = nm;
            cap = ncap;
        }
        (*msgs)[(*n)++] = m;
    }
    gyro_stream_reader_free(r);
    return st;
}

/* Write msgs[i] to the dev stream when is_dev[i], else to the train stream (both atomically). */
static gyro_status write_both(const char *train_out, const char *dev_out, ProtobufCMessage **msgs,
                              size_t n, const uint8_t *is_dev)
{
    gyro_stream_writer *wt = NULL, *wd = NULL;
    gyro_status st = gyro_stream_writer_open_path(train_out, &gyro__v1__example__descriptor,
                                                  "gyro split " GYRO_VERSION, &wt);
    if (st == GYRO_OK)
        st = gyro_stream_writer_open_path(dev_out, &gyro__v1__example__descriptor,
                                          "gyro split " GYRO_VERSION, &wd);
    for (size_t i = 0; i < n && st == GYRO_OK; i++) st = gyro_stream_write(is_dev[i] ? wd : wt, msgs[i]);
    if (st == GYRO_OK) {
        st = gyro_stream_writer_close(wt);
        wt = NULL;
        if (st == GYRO_OK) {
            st = gyro_stream_writer_close(wd);
            wd = NULL;
        }
    }
    gyro_stream_writer_abort(wt);
    gyro_stream_writer_abort(wd);
    return st;
}

static void report(const gyro_split_options *so, const gyro_split_summary *sum)
{
    if (so->folds)
        fprintf(stderr, "gyro split: fold %d of %d%s, seed %llu: ", so->fold, so->folds,
                so->stratify ? " (stratified)" : "", (unsigned long long)so->seed);
    else
        fprintf(stderr, "gyro split: dev fraction %g%s, seed %llu: ", so->dev_fraction,
                so->stratify ? " (stratified)" : "", (unsigned long long)so->seed);
    fprintf(stderr, "%zu examples in %zu sessions -> train %zu examples (%zu sessions), dev %zu "
            "examples (%zu sessions, %.1f%%)\n", sum->examples, sum->groups,
            sum->examples - sum->dev_examples, sum->groups - sum->dev_groups, sum->dev_examples,
            sum->dev_groups, sum->examples ? 100.0 * (double)sum->dev_examples / (double)sum->examples : 0.0);
}

int gyro_cmd_split(int argc, char **argv)
{
    split_args o = {.so = {.seed = 1, .dev_fraction = 0.1, .folds = 0, .fold = -1}, .dev = NAN};
    int first;
    int rc = gyro_opts_parse(&gyro_spec_split, argc, argv, &o, &first);
    if (rc != GYRO_OPTS_CONTINUE) return rc;
    int have_dev = !isnan(o.dev);
    if (have_dev) o.so.dev_fraction = o.dev;
    if ((rc = check_args(&o, have_dev, argc - first))) return rc;
    const char *in = first < argc ? argv[first] : "-";

    ProtobufCMessage **msgs = NULL;
    size_t n = 0;
    uint8_t *is_dev = NULL;
    gyro_split_summary sum = {0};
    gyro_status st = read_all(in, &msgs, &n);
    if (st == GYRO_OK) {
        is_dev = malloc(n ? n : 1);
        if (!is_dev) st = gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    }
    if (st == GYRO_OK)
        st = gyro_split_examples(&o.so, (const Gyro__V1__Example *const *)msgs, n, is_dev, &sum);
    if (st == GYRO_OK) st = write_both(o.train_out, o.dev_out, msgs, n, is_dev);
    for (size_t i = 0; i < n; i++) protobuf_c_message_free_unpacked(msgs[i], NULL);
    free(msgs);
    free(is_dev);
    if (st != GYRO_OK) return gyro_cli_fail("split", st);
    if (!o.quiet) report(&o.so, &sum);
    return 0;
}

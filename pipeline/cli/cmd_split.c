/* cmd_split.c — `gyro split`: an Example stream in, a train stream and a dev stream out.
 *
 *   gyro split [--seed S] [--dev F | --folds K --fold I] [--stratify] --train-out TRAIN
 *              --dev-out DEV [IN]
 *
 * A thin wrapper over gyro_split_examples (pipeline/split.h): it reads the whole input (so it
 * works on stdin), splits by session, and writes both outputs atomically in input order.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pipeline/cli/cli.h"
#include "pipeline/split.h"
#include "pipeline/stream.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: gyro split [options] --train-out TRAIN --dev-out DEV [IN]\n"
            "\n"
            "Split an Example stream (IN, default '-': stdin) into train and dev streams by\n"
            "session: a session or dialogue is never cut. Deterministic for a seed.\n"
            "\n"
            "  -s, --seed S           seed of the split (default 1)\n"
            "  -d, --dev F            fraction of the examples in dev (default 0.1)\n"
            "  -k, --folds K          k-fold mode: cut the sessions into K folds ...\n"
            "  -i, --fold I           ... and put fold I (0-based) in dev\n"
            "  -S, --stratify         spread every label evenly over the folds (or train/dev);\n"
            "                         a session's label is that of its first example\n"
            "  -t, --train-out FILE   train stream\n"
            "  -v, --dev-out FILE     dev stream\n"
            "  -q, --quiet            no summary line\n"
            "  -h, --help             this help\n"
            "\n"
            "Exit status: 0 OK, 1 I/O error, 2 usage, 65 malformed input stream.\n");
}

int gyro_cmd_split(int argc, char **argv)
{
    static const struct option opts[] = {
        {"seed", required_argument, 0, 's'},      {"dev", required_argument, 0, 'd'},
        {"folds", required_argument, 0, 'k'},     {"fold", required_argument, 0, 'i'},
        {"train-out", required_argument, 0, 't'}, {"dev-out", required_argument, 0, 'v'},
        {"stratify", no_argument, 0, 'S'},
        {"quiet", no_argument, 0, 'q'},           {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    gyro_split_options so = {.seed = 1, .dev_fraction = 0.1, .folds = 0, .fold = -1};
    const char *train_out = NULL, *dev_out = NULL;
    int quiet = 0, have_dev = 0;
    long v;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "s:d:k:i:t:v:Sqh", opts, NULL)) != -1) {
        switch (c) {
        case 's': {
            uint64_t v;
            if (!gyro_cli_parse_seed("split", "--seed", optarg, &v)) return 2;
            so.seed = v;
            break;
        }
        case 'd':
            if (!gyro_cli_parse_double("split", "--dev", optarg, &so.dev_fraction)) return 2;
            if (so.dev_fraction < 0 || so.dev_fraction > 1)
                return gyro_cli_usage_error("split", "--dev must be in [0, 1], got %s", optarg);
            have_dev = 1;
            break;
        case 'k':
            if (!gyro_cli_parse_long("split", "--folds", optarg, 2, 1000000, &v)) return 2;
            so.folds = (int)v;
            break;
        case 'i':
            if (!gyro_cli_parse_long("split", "--fold", optarg, 0, 999999, &v)) return 2;
            so.fold = (int)v;
            break;
        case 't': train_out = optarg; break;
        case 'v': dev_out = optarg; break;
        case 'S': so.stratify = 1; break;
        case 'q': quiet = 1; break;
        case 'h': usage(stdout); return 0;
        default: return gyro_cli_usage_error("split", "unknown option or missing argument");
        }
    }
    if (!train_out || !dev_out) return gyro_cli_usage_error("split", "--train-out and --dev-out are required");
    if (so.folds && have_dev) return gyro_cli_usage_error("split", "--dev and --folds exclude each other");
    if (so.folds && so.fold < 0) return gyro_cli_usage_error("split", "--folds needs --fold I");
    if (!so.folds && so.fold >= 0) return gyro_cli_usage_error("split", "--fold needs --folds K");
    if (so.folds && so.fold >= so.folds)
        return gyro_cli_usage_error("split", "--fold must be below --folds (%d)", so.folds);
    if (argc - optind > 1) return gyro_cli_usage_error("split", "one input stream at most");
    if (strcmp(train_out, dev_out) == 0 && strcmp(train_out, "-") != 0)
        return gyro_cli_usage_error("split", "--train-out and --dev-out name the same file");
    if (strcmp(train_out, "-") == 0 && strcmp(dev_out, "-") == 0)
        return gyro_cli_usage_error("split", "only one of the outputs can be stdout");
    if ((strcmp(train_out, "-") == 0 || strcmp(dev_out, "-") == 0) && isatty(STDOUT_FILENO))
        return gyro_cli_usage_error("split", "standard output is a terminal: write to files, or "
                                    "pipe into 'gyro dump'");
    const char *in = optind < argc ? argv[optind] : "-";

    gyro_stream_reader *r = NULL;
    gyro_stream_writer *wt = NULL, *wd = NULL;
    ProtobufCMessage **msgs = NULL;
    size_t n = 0, cap = 0;
    uint8_t *is_dev = NULL;
    gyro_split_summary sum = {0};
    gyro_status st = gyro_stream_reader_open_path(in, NULL, &r);
    while (st == GYRO_OK) {
        ProtobufCMessage *m;
        st = gyro_stream_next(r, &gyro__v1__example__descriptor, &m);
        if (st != GYRO_OK || !m) break;
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : 1024;
            ProtobufCMessage **nm = realloc(msgs, ncap * sizeof *nm);
            if (!nm) {
                protobuf_c_message_free_unpacked(m, NULL);
                st = gyro_error_set(GYRO_ERR_NOMEM, "out of memory reading %s", in);
                break;
            }
            msgs = nm;
            cap = ncap;
        }
        msgs[n++] = m;
    }
    if (st == GYRO_OK) {
        is_dev = malloc(n ? n : 1);
        if (!is_dev) st = gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    }
    if (st == GYRO_OK)
        st = gyro_split_examples(&so, (const Gyro__V1__Example *const *)msgs, n, is_dev, &sum);
    if (st == GYRO_OK)
        st = gyro_stream_writer_open_path(train_out, &gyro__v1__example__descriptor,
                                          "gyro split " GYRO_VERSION, &wt);
    if (st == GYRO_OK)
        st = gyro_stream_writer_open_path(dev_out, &gyro__v1__example__descriptor,
                                          "gyro split " GYRO_VERSION, &wd);
    for (size_t i = 0; i < n && st == GYRO_OK; i++)
        st = gyro_stream_write(is_dev[i] ? wd : wt, msgs[i]);
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
    gyro_stream_reader_free(r);
    for (size_t i = 0; i < n; i++) protobuf_c_message_free_unpacked(msgs[i], NULL);
    free(msgs);
    free(is_dev);
    if (st != GYRO_OK) return gyro_cli_fail("split", st);
    if (!quiet) {
        if (so.folds)
            fprintf(stderr, "gyro split: fold %d of %d%s, seed %llu: ", so.fold, so.folds,
                    so.stratify ? " (stratified)" : "", (unsigned long long)so.seed);
        else
            fprintf(stderr, "gyro split: dev fraction %g%s, seed %llu: ", so.dev_fraction,
                    so.stratify ? " (stratified)" : "", (unsigned long long)so.seed);
        fprintf(stderr, "%zu examples in %zu sessions -> train %zu examples (%zu sessions), dev %zu "
                "examples (%zu sessions, %.1f%%)\n", sum.examples, sum.groups,
                sum.examples - sum.dev_examples, sum.groups - sum.dev_groups, sum.dev_examples,
                sum.dev_groups, sum.examples ? 100.0 * (double)sum.dev_examples / (double)sum.examples : 0.0);
    }
    return 0;
}

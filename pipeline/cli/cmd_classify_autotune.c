/* cmd_classify_autotune.c — `gyro classify autotune`: search the n-gram classifier's options on
 * a dev split within a time budget (models/autotune.h), write the best model and print the
 * `gyro classify train` command line that trains it. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/autotune.h"
#include "models/train_classifier.h"
#include "pipeline/cli/cli.h"
#include "pipeline/cli/cmd_classify_autotune.h"
#include "pipeline/cli/opts.h"
#include "pipeline/example_file.h"
#include "pipeline/table_file.h"

#define CMD "classify"

static volatile int search_stop; /* SIGINT/SIGTERM: end the search after the current trial */

static void on_signal(int sig)
{
    (void)sig;
    search_stop = 1;
}

typedef struct autotune_args {
    const char *out, *dev, *emb, *budget;
    int geometry, trials, quiet;
    uint64_t seed;
} autotune_args;

#define GIVEN_GEOMETRY 1u

static const gyro_opt autotune_opts[] = {
    GYRO_O_STR("output", 'o', autotune_args, out, "MODEL", NULL, "the best model (required)"),
    GYRO_O_STR("dev", 0, autotune_args, dev, "DEV.pb", NULL,
               "the dev split the trials are scored on (required; gyro split makes one)"),
    GYRO_O_STR("budget", 0, autotune_args, budget, "TIME", "10m",
               "wall-clock time of the search: seconds, or a number with s, m or h"),
    GYRO_O_INT("trials", 0, autotune_args, trials, "N", NULL, 1, 1 << 20, "at most N trials (no limit but the budget)"),
    GYRO_O_CHOICE("geometry", 0, autotune_args, geometry, "G", "euclidean|hyperbolic", NULL,
                  "search only this geometry (default: both; trial 1 is the default, hyperbolic)",
                  .mark = GIVEN_GEOMETRY),
    GYRO_O_STR("embeddings", 't', autotune_args, emb, "TABLE", NULL,
               "start every trial from a char2vec table (its dimension is kept)"),
    GYRO_O_SEED("seed", 's', autotune_args, seed, NULL, "seed of the search and of the trials (1)"),
    GYRO_O_FLAG("quiet", 'q', autotune_args, quiet, "no per-trial lines"),
    GYRO_O_END,
};

const gyro_cmd_spec gyro_spec_classify_autotune = {
    "classify autotune", "[options] --dev DEV.pb -o MODEL TRAIN.pb",
    "Search the options of the n-gram classifier (learning rate, dimension, epochs, n-gram length, "
    "buckets, context and its weight, curvature, label smoothing) by random search on the dev split "
    "within the budget, as fastText's -autotune-validation does. Trial 1 is gyro classify train's "
    "defaults, so the result is never worse than them on the dev split. Prints one line per trial on "
    "stderr and, on stdout, the gyro classify train command line of the best trial; writes its model.",
    "Exit status: 0 done, 1 I/O error, 2 usage, 65 bad data or a budget shorter than one trial (the "
    "message gives the time of one trial; nothing is written), 130 interrupted before any trial ended. "
    "SIGINT or SIGTERM ends the search after the current trial and writes the best model so far.",
    autotune_opts,
    NULL,
};

/* "90", "90s", "10m", "1.5h" → seconds; 0 on a bad value. */
static double parse_budget(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || !(v > 0)) return 0;
    if (!strcmp(end, "") || !strcmp(end, "s")) return v;
    if (!strcmp(end, "m")) return 60 * v;
    if (!strcmp(end, "h")) return 3600 * v;
    return 0;
}

/* The search's options from the command line: gyro classify train's defaults for the geometry
 * (hyperbolic unless --geometry), with the table. */
static int setup(autotune_args *a, unsigned given, const gyro_embedding_table *table, gyro_train_options *base,
                 gyro_autotune_options *ao)
{
    gyro_tf_geometry geom = (given & GIVEN_GEOMETRY) ? (gyro_tf_geometry)a->geometry : GYRO_TF_GEOMETRY_HYPERBOLIC;
    gyro_train_options_init(base, geom);
    base->seed = a->seed ? a->seed : 1;
    base->quiet = 1;
    base->table = table;
    if (gyro_train_options_complete(base, 0) != GYRO_OK)
        return gyro_cli_usage_error(CMD, "%s", gyro_error_message());
    memset(ao, 0, sizeof *ao);
    ao->budget_seconds = parse_budget(a->budget ? a->budget : "10m");
    if (!(ao->budget_seconds > 0))
        return gyro_cli_usage_error(CMD, "--budget '%s': a positive number of seconds, or with s, m or h", a->budget);
    ao->max_trials = a->trials;
    ao->seed = base->seed;
    ao->fixed_geometry = (given & GIVEN_GEOMETRY) != 0;
    ao->log = a->quiet ? NULL : stderr;
    ao->stop = &search_stop;
    return GYRO_OPTS_CONTINUE;
}

static int write_best(gyro_classifier *m, const gyro_autotune_result *res, const autotune_args *a, const char *train)
{
    gyro_status st = gyro_classifier_save(m, a->out);
    if (st) return gyro_cli_fail(CMD, st);
    char line[512];
    gyro_autotune_format(&res->best, line, sizeof line);
    if (!a->quiet)
        fprintf(stderr, "gyro classify: %d trials in %.0f s; best: trial %d, dev accuracy %.2f%% (the defaults: "
                "%.2f%%); wrote %s\n", res->trials, res->seconds, res->best_trial, 100 * res->best_accuracy,
                100 * res->first_accuracy, a->out);
    printf("gyro classify train %s%s%s --seed %llu --dev %s -o %s %s\n", line, a->emb ? " --embeddings " : "",
           a->emb ? a->emb : "", (unsigned long long)res->best.seed, a->dev, a->out, train);
    return ferror(stdout) ? gyro_cli_fail(CMD, gyro_error_set(GYRO_ERR_IO, "stdout: write error")) : 0;
}

int gyro_cli_classify_autotune(int argc, char **argv)
{
    autotune_args a = {0};
    unsigned given;
    int first, rc = gyro_opts_parse_marks(&gyro_spec_classify_autotune, argc, argv, &a, &first, &given);
    if (rc != GYRO_OPTS_CONTINUE) return rc;
    if (!a.out) return gyro_cli_usage_error(CMD, "autotune needs -o MODEL");
    if (!a.dev) return gyro_cli_usage_error(CMD, "autotune needs --dev DEV.pb (make one with gyro split)");
    if (first + 1 != argc) return gyro_cli_usage_error(CMD, "autotune needs exactly one training stream");
    gyro_embedding_table *table = NULL;
    gyro_status st = a.emb ? gyro_table_file_load(a.emb, &table) : GYRO_OK;
    if (st) return gyro_cli_fail(CMD, st);
    gyro_train_options base;
    gyro_autotune_options ao;
    if ((rc = setup(&a, given, table, &base, &ao)) != GYRO_OPTS_CONTINUE) {
        gyro_embedding_table_free(table);
        return rc;
    }
    gyro_example_set train = {0}, dev = {0};
    st = gyro_example_file_read(&train, argv[first], NULL);
    if (!st) st = gyro_example_file_read(&dev, a.dev, NULL);
    if (!st && dev.n == 0) st = gyro_error_set(GYRO_ERR_DATA, "%s: no labelled example", a.dev);
    struct sigaction sa = {0}, old_int, old_term;
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    gyro_classifier *best = NULL;
    gyro_autotune_result res;
    if (!st) st = gyro_classify_autotune(&ao, &base, &train, &dev, &best, &res);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    rc = st ? gyro_cli_fail(CMD, st) : write_best(best, &res, &a, argv[first]);
    gyro_classifier_free(best);
    gyro_example_set_free(&train);
    gyro_example_set_free(&dev);
    gyro_embedding_table_free(table);
    return rc;
}

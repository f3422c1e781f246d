/* cmd_classify_eval.c — `gyro classify eval -m MODEL DATA.pb`: a classifier's metrics report on
 * an Example stream (models/metrics.h), reached from `gyro classify` (cmd_classify.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/classifier.h"
#include "models/metrics.h"
#include "models/train_classifier.h"
#include "pipeline/cli/cli.h"
#include "pipeline/cli/cmd_classify_eval.h"
#include "pipeline/cli/opts.h"
#include "pipeline/example_file.h"

#define CMD "classify"

static int fail(gyro_status s) { return gyro_cli_fail(CMD, s); }

/* ---- eval ---------------------------------------------------------------------------------- */

typedef struct eval_args {
    const char *model, *svg;
    long confusion;
} eval_args;

static const gyro_opt eval_opts[] = {
    GYRO_O_STR("model", 'm', eval_args, model, "MODEL", NULL, "the classifier file (required)"),
    GYRO_O_STR("svg", 0, eval_args, svg, "FILE", NULL, "also write the confusion matrix as an SVG image"),
    GYRO_O_LONG("confusion", 0, eval_args, confusion, "N", "20", 0, 1L << 20,
                "show the N most frequent intents in the confusion matrix (0 = all)"),
    GYRO_O_END,
};

const gyro_cmd_spec gyro_spec_classify_eval = {
    "classify eval", "-m MODEL [--svg FILE] [--confusion N] DATA.pb",
    "Evaluate a classifier on an Example stream: accuracy, macro-F1, cross-entropy, per-intent "
    "precision and recall, hierarchy levels and the confusion matrix, as text on stdout.",
    NULL,
    eval_opts,
    NULL,
};

int gyro_cli_classify_eval(int argc, char **argv)
{
    eval_args o = {0};
    int optind, rc = gyro_opts_parse(&gyro_spec_classify_eval, argc, argv, &o, &optind);
    if (rc != GYRO_OPTS_CONTINUE) return rc;
    const char *model = o.model, *svg = o.svg;
    long confusion = o.confusion;
    if (!model) return gyro_cli_usage_error(CMD, "eval needs -m MODEL");
    if (optind + 1 != argc) return gyro_cli_usage_error(CMD, "eval needs exactly one Example stream");
    gyro_classifier *m = NULL;
    gyro_status st = gyro_classifier_load(model, &m);
    if (st) return fail(st);
    gyro_example_set set = {0};
    uint64_t skipped = 0;
    gyro_metrics met = {0};
    int unknown = 0;
    st = gyro_example_file_read(&set, argv[optind], &skipped);
    if (!st) st = gyro_metrics_init(&met, gyro_classifier_num_labels(m));
    if (!st) st = gyro_classifier_evaluate(m, &set, &met, &unknown);
    if (!st) {
        const gyro_label_set *labels = gyro_classifier_labels(m);
        printf("model: %s\n", gyro_classifier_version(m));
        if (unknown) printf("skipped: %d examples whose label the model does not know\n", unknown);
        if (skipped) printf("skipped: %llu examples with an empty text or label\n", (unsigned long long)skipped);
        st = gyro_metrics_write_text(&met, labels, (int)confusion, stdout);
        if (!st && svg) st = gyro_metrics_write_svg(&met, labels, svg);
    }
    gyro_metrics_free(&met);
    gyro_example_set_free(&set);
    gyro_classifier_free(m);
    return st ? fail(st) : 0;
}

/* cmd_classify_eval.c — `gyro classify eval -m MODEL DATA.pb`: a classifier's metrics report on
 * an Example stream (models/metrics.h), reached from `gyro classify` (cmd_classify.c).
 *
 * Every example with a text and a label is scored; one whose label the model never saw is an
 * error (models/metrics.h, gyro_metrics_add_unseen), named on stderr and counted in the
 * report. The report is text on stdout, or with --json one JSON object (the field list is in
 * the spec's footer below and in the README).
 */
#include <math.h>
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
#include "pipeline/json_out.h"
#include "pipeline/picture.h"

#define CMD "classify"

static int fail(gyro_status s) { return gyro_cli_fail(CMD, s); }

/* The confusion matrix as SVG at `svg` and/or PNG at `png` (either may be NULL; pipeline/picture.h). */
static gyro_status write_confusion_picture(const gyro_metrics *met, const gyro_label_set *labels,
                                           const char *svg, const char *png)
{
    char *doc = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&doc, &len);
    if (!mem) return gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    gyro_status st = gyro_picture_confusion_svg(met, labels, mem);
    if (fclose(mem) != 0 && !st) st = gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    if (!st && svg) st = gyro_picture_save(doc, len, svg);
    if (!st && png) st = gyro_picture_png(doc, len, png);
    free(doc);
    return st;
}

typedef struct eval_args {
    const char *model, *svg, *png, *others;
    long confusion, k;
    int json, format;
} eval_args;

#define GIVEN_OTHERS 1u

static const gyro_opt eval_opts[] = {
    GYRO_O_STR("model", 'm', eval_args, model, "MODEL", NULL, "the classifier file (required)"),
    GYRO_O_CHOICE("format", 0, eval_args, format, "F", "auto|pb|tsv|fasttext", "auto",
                  "the data: a gyro Example stream (pb), TSV or fastText lines, as classify train reads "
                  "them; auto tells them apart by the first bytes"),
    GYRO_O_FLAG("json", 0, eval_args, json,
                "write every figure as one JSON object on stdout instead of the text report"),
    GYRO_O_STR("others", 0, eval_args, others, "LABEL", "OTHERS",
               "the label left out of the NLPCC 2018 task-4 intent F1, reported when the model or the data "
               "has this label", .mark = GIVEN_OTHERS),
    GYRO_O_LONG("top-k", 'k', eval_args, k, "N", "1", 1, 1L << 20,
                "P@N and R@N as fasttext test -k N computes them"),
    GYRO_O_STR("svg", 0, eval_args, svg, "FILE", NULL, "also write the confusion matrix as an SVG image"),
    GYRO_O_STR("png", 0, eval_args, png, "FILE", NULL,
               "also write the confusion matrix as PNG (rendered by rsvg-convert, librsvg2-bin)"),
    GYRO_O_LONG("confusion", 0, eval_args, confusion, "N", "20", 0, 1L << 20,
                "show the N most frequent intents in the confusion matrix (0 = all)"),
    GYRO_O_END,
};

const gyro_cmd_spec gyro_spec_classify_eval = {
    "classify eval", "-m MODEL [--json] [--others LABEL] [-k N] [--svg FILE] [--png FILE] [--confusion N] DATA",
    "Evaluate a classifier on an Example stream (or TSV or fastText lines, see --format): accuracy, macro-F1, the NLPCC 2018 task-4 intent "
    "F1 (macro-F1 over the intents with --others left out, as the task's evaluation script "
    "computes it: the F1 of macro-precision and macro-recall), P@k and R@k as fasttext test "
    "computes them (over the atoms of composite 'a+b' labels), cross-entropy, accuracy at each "
    "level of 'domain.intent' labels, per-intent precision, recall and F1, and the confusion "
    "matrix; as text, or as JSON with --json. Examples whose label the model never saw count as "
    "errors (cross-entropy leaves them out, and P@k and R@k an example with no known label, as "
    "fastText does) and are named on stderr; records with an empty text or label are left out "
    "and counted.",
    "JSON fields: model, data, n (examples scored), n_unseen, n_skipped, accuracy, macro_f1, "
    "cross_entropy, nlpcc {others, f1, precision, recall, intents} or null, k, p_at_k, r_at_k, "
    "n_at_k, level_accuracy [level 1 (domain), level 2, ...], domain_accuracy, labels [{label, "
    "seen, support, predicted, correct, precision, recall, f1}]; fractions in [0, 1], null where "
    "undefined. Exit status: 0 report written (labels the model never saw are the model's "
    "errors, not the command's), 1 a file cannot be read or written (or out of memory), 2 usage "
    "error, 65 bad data: a model or stream that is not one, no example with a text and a label, "
    "an unparsable label, a text the model's tokenizer refuses.",
    eval_opts,
    NULL,
};

/* A double as JSON in the fewer of 15 or 17 significant digits that reads back exactly; null
 * when not finite. */
static void json_num(FILE *f, double v)
{
    if (!isfinite(v)) {
        fputs("null", f);
        return;
    }
    char buf[40];
    snprintf(buf, sizeof buf, "%.15g", v);
    if (strtod(buf, NULL) != v) snprintf(buf, sizeof buf, "%.17g", v);
    fputs(buf, f);
}

static void json_str(FILE *f, const char *s) { gyro_json_write_string(f, s, strlen(s)); }

static void json_label(FILE *f, const char *name, int seen, gyro_class_stats s, int first)
{
    fputs(first ? "{\"label\":" : ",{\"label\":", f);
    json_str(f, name);
    fprintf(f, ",\"seen\":%s,\"support\":%llu,\"predicted\":%llu,\"correct\":%llu,\"precision\":",
            seen ? "true" : "false", (unsigned long long)s.support, (unsigned long long)s.predicted,
            (unsigned long long)s.correct);
    json_num(f, s.precision);
    fputs(",\"recall\":", f);
    json_num(f, s.recall);
    fputs(",\"f1\":", f);
    json_num(f, s.f1);
    fputc('}', f);
}

/* The whole report as one JSON object and a newline. */
static gyro_status write_json(FILE *f, const gyro_classifier *m, const char *data, const gyro_metrics *met,
                              uint64_t skipped, const char *others)
{
    const gyro_label_set *labels = gyro_classifier_labels(m);
    fputs("{\"model\":", f);
    json_str(f, gyro_classifier_version(m));
    fputs(",\"data\":", f);
    json_str(f, data);
    fprintf(f, ",\"n\":%llu,\"n_unseen\":%llu,\"n_skipped\":%llu,\"accuracy\":", (unsigned long long)met->n,
            (unsigned long long)met->n_unseen, (unsigned long long)skipped);
    json_num(f, gyro_metrics_accuracy(met));
    fputs(",\"macro_f1\":", f);
    json_num(f, gyro_metrics_macro_f1(met));
    fputs(",\"cross_entropy\":", f);
    json_num(f, gyro_metrics_cross_entropy(met));
    gyro_nlpcc_score ns;
    fputs(",\"nlpcc\":", f);
    if (gyro_metrics_nlpcc(met, labels, others, &ns)) {
        fputs("{\"others\":", f);
        json_str(f, others);
        fputs(",\"f1\":", f);
        json_num(f, ns.f1);
        fputs(",\"precision\":", f);
        json_num(f, ns.precision);
        fputs(",\"recall\":", f);
        json_num(f, ns.recall);
        fprintf(f, ",\"intents\":%d}", ns.intents);
    } else {
        fputs("null", f);
    }
    double pk = NAN, rk = NAN;
    uint64_t nk = 0;
    int k = gyro_metrics_at_k(met, &pk, &rk, &nk);
    fprintf(f, ",\"k\":%d,\"p_at_k\":", k);
    json_num(f, pk);
    fputs(",\"r_at_k\":", f);
    json_num(f, rk);
    fprintf(f, ",\"n_at_k\":%llu,\"level_accuracy\":[", (unsigned long long)nk);
    double lv[GYRO_METRICS_MAX_LEVELS];
    int nl = gyro_metrics_level_accuracy(met, labels, lv, GYRO_METRICS_MAX_LEVELS);
    for (int l = 0; l < nl; l++) {
        if (l) fputc(',', f);
        json_num(f, lv[l]);
    }
    fputs("],\"domain_accuracy\":", f);
    json_num(f, nl > 1 ? lv[0] : NAN);
    fputs(",\"labels\":[", f);
    for (int c = 0; c < met->k; c++) json_label(f, gyro_label_set_name(labels, c), 1, gyro_metrics_class(met, c), c == 0);
    for (int u = 0; u < met->n_unseen_labels; u++)
        json_label(f, gyro_metrics_unseen_label(met, u), 0, gyro_metrics_unseen_class(met, u), 0);
    fputs("]}\n", f);
    return ferror(f) ? gyro_error_set(GYRO_ERR_IO, "stdout: write error") : GYRO_OK;
}

/* The unseen labels on stderr: how many examples, and the most frequent labels. */
static void report_unseen(const gyro_metrics *met)
{
    if (!met->n_unseen) return;
    fprintf(stderr, "gyro classify: %llu example%s of %llu ha%s a label the model never saw, counted as errors:",
            (unsigned long long)met->n_unseen, met->n_unseen == 1 ? "" : "s", (unsigned long long)met->n,
            met->n_unseen == 1 ? "s" : "ve");
    int shown[5], ns = 0;
    for (; ns < 5 && ns < met->n_unseen_labels; ns++) { /* the five largest, by a selection */
        int best = -1;
        uint64_t bs = 0;
        for (int u = 0; u < met->n_unseen_labels; u++) {
            int taken = 0;
            for (int j = 0; j < ns; j++) taken |= shown[j] == u;
            uint64_t s = gyro_metrics_unseen_class(met, u).support;
            if (!taken && (best < 0 || s > bs)) best = u, bs = s;
        }
        shown[ns] = best;
        fprintf(stderr, "%s %s (%llu)", ns ? "," : "", gyro_metrics_unseen_label(met, best), (unsigned long long)bs);
    }
    if (met->n_unseen_labels > ns) fprintf(stderr, " and %d more labels", met->n_unseen_labels - ns);
    fputc('\n', stderr);
}

int gyro_cli_classify_eval(int argc, char **argv)
{
    eval_args o = {0};
    unsigned given = 0;
    int optind, rc = gyro_opts_parse_marks(&gyro_spec_classify_eval, argc, argv, &o, &optind, &given);
    if (rc != GYRO_OPTS_CONTINUE) return rc;
    if (!o.model) return gyro_cli_usage_error(CMD, "eval needs -m MODEL");
    if (optind + 1 != argc) return gyro_cli_usage_error(CMD, "eval needs exactly one data file");
    if (!o.others[0]) return gyro_cli_usage_error(CMD, "--others needs a label");
    const char *data = argv[optind];
    gyro_classifier *m = NULL;
    gyro_status st = gyro_classifier_load(o.model, &m);
    if (st) return fail(st);
    const gyro_label_set *labels = gyro_classifier_labels(m);
    gyro_example_set set = {0};
    uint64_t skipped = 0;
    gyro_metrics met = {0};
    int unknown = 0;
    gyro_example_read_stats rs = {0};
    st = gyro_example_file_read_format(&set, data, (gyro_example_format)o.format, &rs);
    skipped = rs.skipped;
    if (!st && set.n == 0)
        st = gyro_error_set(GYRO_ERR_DATA, "%s: no example with a text and a label (%llu left out)", data,
                            (unsigned long long)skipped);
    if (!st) st = gyro_metrics_init(&met, gyro_classifier_num_labels(m));
    if (!st) st = gyro_metrics_rank(&met, labels, (int)o.k);
    if (!st) st = gyro_classifier_evaluate(m, &set, &met, &unknown);
    if (!st) {
        report_unseen(&met);
        if (skipped && o.json) /* the text report says it on stdout */
            fprintf(stderr, "gyro classify: %llu records with an empty text or label left out\n", (unsigned long long)skipped);
        gyro_nlpcc_score ns;
        if ((given & GIVEN_OTHERS) && !gyro_metrics_nlpcc(&met, labels, o.others, &ns))
            fprintf(stderr, "gyro classify: no label '%s' in the model or the data: no NLPCC measure\n", o.others);
        if (o.json) {
            st = write_json(stdout, m, data, &met, skipped, o.others);
        } else {
            printf("model: %s\n", gyro_classifier_version(m));
            if (skipped) printf("skipped: %llu examples with an empty text or label\n", (unsigned long long)skipped);
            st = gyro_metrics_write_text(&met, labels, (int)o.confusion, o.others, stdout);
        }
        if (!st && (o.svg || o.png)) st = write_confusion_picture(&met, labels, o.svg, o.png);
    }
    gyro_metrics_free(&met);
    gyro_example_set_free(&set);
    gyro_classifier_free(m);
    if (!st && fflush(stdout) != 0) st = gyro_error_set(GYRO_ERR_IO, "stdout: write error");
    return st ? fail(st) : 0;
}

/* cmd_convert.c — `gyro convert`: change the model of an embedding table or export it as text
 * (a thin wrapper around embeddings/convert.h), or load word2vec/fastText text vectors into a
 * table (--from vec, pipeline/vec_file.h). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "embeddings/convert.h"
#include "embeddings/table.h"
#include "pipeline/cli/cli.h"
#include "pipeline/cli/opts.h"
#include "pipeline/table_file.h"
#include "pipeline/vec_file.h"

typedef struct convert_args {
    int to; /* index in "poincare|hyperboloid|vec|tsv"; -1: not given */
    int from; /* FROM_TABLE, FROM_VEC */
    int model; /* --model: index in "euclidean|poincare|hyperboloid" */
    double curvature;
    const char *output;
    int quiet;
} convert_args;

enum { FROM_TABLE, FROM_VEC };
enum { MODEL_EUCLIDEAN, MODEL_POINCARE, MODEL_HYPERBOLOID };

enum { TO_POINCARE, TO_HYPERBOLOID, TO_VEC, TO_TSV };

static const gyro_opt convert_opts[] = {
    GYRO_O_CHOICE("to", 0, convert_args, to, "TARGET", "poincare|hyperboloid|vec|tsv", NULL,
                  "poincare: the Poincare ball (c = 1), converted in float64 and projected into the "
                  "float32 ball; hyperboloid: back to the hyperboloid (time coordinate first); vec: "
                  "word2vec text format (the table's own coordinates); tsv: TensorBoard projector pair "
                  "OUTPUT.vectors.tsv and OUTPUT.metadata.tsv"),
    GYRO_O_CHOICE(NULL, 't', convert_args, to, "TARGET", "poincare|hyperboloid|vec|tsv", NULL, NULL),
    GYRO_O_CHOICE("from", 0, convert_args, from, "SOURCE", "table|vec", "table",
                  "table: a gyro embedding table; vec: word2vec's or fastText's text vectors (.vec: an "
                  "optional 'ROWS COLUMNS' header, then 'token v1 v2 ...' per line), written as a table "
                  "to -o (then --to is optional; with --to poincare or hyperboloid the loaded table is "
                  "converted)"),
    GYRO_O_CHOICE("model", 0, convert_args, model, "M", "euclidean|poincare|hyperboloid", "euclidean",
                  "--from vec: the geometry of the vectors: euclidean (word2vec, fastText), poincare "
                  "(rows inside the ball) or hyperboloid (time coordinate first, as --to vec writes a "
                  "hyperboloid table)"),
    GYRO_O_DOUBLE("curvature", 0, convert_args, curvature, "C", "1", 0, 0,
                  "--from vec --model poincare: the ball's curvature -C"),
    GYRO_O_STR("output", 'o', convert_args, output, "PATH", NULL,
               "output (default stdout for vec; required otherwise)"),
    GYRO_O_FLAG("quiet", 'q', convert_args, quiet, "no summary on stderr"),
    GYRO_O_END,
};

const gyro_cmd_spec gyro_spec_convert = {
    "convert", "--to TARGET [-o OUTPUT] TABLE\n--from vec [--model M] [--to TARGET] -o TABLE FILE.vec",
    "Convert an embedding table (from gyro char2vec train) to another model or export it; or load "
    "pretrained word2vec/fastText text vectors (.vec) into a table.",
    "Exit status: 0 done, 1 runtime error, 2 usage error, 65 unreadable or foreign table, or a "
    "malformed .vec (a header that does not match the rows, a row of the wrong dimension, a value "
    "that is not a finite number, a duplicate token; the message names the line).",
    convert_opts,
    NULL,
};

int gyro_cmd_convert(int argc, char **argv)
{
    const char *cmd = "convert";
    convert_args o = {.to = -1};
    int first;
    int rc = gyro_opts_parse(&gyro_spec_convert, argc, argv, &o, &first);
    if (rc != GYRO_OPTS_CONTINUE) return rc;
    const char *output = o.output;
    int quiet = o.quiet;
    if (o.to < 0 && o.from != FROM_VEC) return gyro_cli_usage_error(cmd, "missing --to");
    int model = o.to == TO_POINCARE ? GYRO_EMBEDDING_POINCARE : o.to == TO_HYPERBOLOID ? GYRO_EMBEDDING_HYPERBOLOID : 0;
    if (first != argc - 1) return gyro_cli_usage_error(cmd, "expected exactly one input %s", o.from == FROM_VEC ? "FILE.vec" : "TABLE");
    if (!output && o.to != TO_VEC) return gyro_cli_usage_error(cmd, "missing -o OUTPUT");
    if (!output) output = "-";
    if (!(o.curvature > 0)) return gyro_cli_usage_error(cmd, "--curvature must be > 0");

    gyro_embedding_table *t = NULL, *u = NULL;
    gyro_status s;
    if (o.from == FROM_VEC) {
        static const int models[] = {GYRO_EMBEDDING_EUCLIDEAN, GYRO_EMBEDDING_POINCARE, GYRO_EMBEDDING_HYPERBOLOID};
        int had_header = 0;
        s = gyro_vec_file_load(argv[first], models[o.model], o.model == MODEL_HYPERBOLOID ? 1.0 : o.curvature,
                               &t, &had_header);
        if (!s && !quiet)
            fprintf(stderr, "Read %s: %d rows, dim %d, %s%s\n", argv[first], t->n, t->dim,
                    gyro_embedding_model_name(t->model), had_header ? "" : " (no header line)");
        if (!s && o.to < 0) {
            s = gyro_table_file_save(t, output);
            if (!s && !quiet) fprintf(stderr, "Wrote %s: %d rows, %s, dim %d\n", output, t->n,
                                      gyro_embedding_model_name(t->model), t->dim);
            gyro_embedding_table_free(t);
            return s ? gyro_cli_fail(cmd, s) : 0;
        }
    } else {
        s = gyro_table_file_load(argv[first], &t);
    }
    if (!s && model) {
        int clamped = 0;
        s = gyro_embedding_convert(t, model, &u, &clamped);
        if (!s) s = gyro_table_file_save(u, output);
        if (!s && !quiet)
            fprintf(stderr, "Wrote %s: %d rows, %s -> %s, dim %d; %d row%s projected into the ball\n",
                    output, u->n, gyro_embedding_model_name(t->model), gyro_embedding_model_name(u->model),
                    u->dim, clamped, clamped == 1 ? "" : "s");
    } else if (!s && o.to == TO_VEC) {
        s = gyro_embedding_export_vec(t, output);
    } else if (!s) {
        size_t n = strlen(output) + 32;
        char *vp = malloc(n), *mp = malloc(n);
        if (!vp || !mp) {
            s = gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
        } else {
            snprintf(vp, n, "%s.vectors.tsv", output);
            snprintf(mp, n, "%s.metadata.tsv", output);
            s = gyro_embedding_export_tsv(t, vp, mp);
            if (!s && !quiet) fprintf(stderr, "Wrote %s and %s: %d rows\n", vp, mp, t->n);
        }
        free(vp);
        free(mp);
    }
    gyro_embedding_table_free(t);
    gyro_embedding_table_free(u);
    return s ? gyro_cli_fail(cmd, s) : 0;
}

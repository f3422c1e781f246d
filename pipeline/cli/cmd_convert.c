/* cmd_convert.c — `gyro convert`: change the model of an embedding table or export it as text
 * (a thin wrapper around embeddings/convert.h). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "embeddings/convert.h"
#include "embeddings/table.h"
#include "pipeline/cli/cli.h"
#include "pipeline/table_file.h"

static void usage(FILE *out)
{
    fprintf(out,
        "usage: gyro convert --to TARGET [-o OUTPUT] TABLE\n"
        "\n"
        "Convert an embedding table (from gyro char2vec train) to another model or export it.\n"
        "\n"
        "  -t, --to TARGET      poincare     the Poincare ball (c = 1): converted in float64,\n"
        "                                    projected into the float32 ball\n"
        "                       hyperboloid  back to the hyperboloid (time coordinate first)\n"
        "                       vec          word2vec text format (the table's own coordinates)\n"
        "                       tsv          TensorBoard projector pair: OUTPUT.vectors.tsv and\n"
        "                                    OUTPUT.metadata.tsv\n"
        "  -o, --output PATH    output (default stdout for vec; required otherwise)\n"
        "  -q, --quiet          no summary on stderr\n"
        "  -h, --help           this help\n"
        "\n"
        "Exit status: 0 done, 1 runtime error, 2 usage error, 65 unreadable or foreign table.\n");
}

int gyro_cmd_convert(int argc, char **argv)
{
    const char *cmd = "convert";
    static const struct option longopts[] = {
        {"to", required_argument, 0, 't'},
        {"output", required_argument, 0, 'o'},
        {"quiet", no_argument, 0, 'q'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    const char *to = NULL, *output = NULL;
    int quiet = 0, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "t:o:qh", longopts, NULL)) != -1) {
        switch (c) {
        case 't': to = optarg; break;
        case 'o': output = optarg; break;
        case 'q': quiet = 1; break;
        case 'h': usage(stdout); return 0;
        default: return gyro_cli_usage_error(cmd, "unknown option");
        }
    }
    if (!to) return gyro_cli_usage_error(cmd, "missing --to");
    int model = 0;
    if (!strcmp(to, "poincare")) model = GYRO_EMBEDDING_POINCARE;
    else if (!strcmp(to, "hyperboloid")) model = GYRO_EMBEDDING_HYPERBOLOID;
    else if (strcmp(to, "vec") && strcmp(to, "tsv"))
        return gyro_cli_usage_error(cmd, "--to must be poincare, hyperboloid, vec or tsv, got '%s'", to);
    if (optind != argc - 1) return gyro_cli_usage_error(cmd, "expected exactly one input TABLE");
    if (!output && strcmp(to, "vec")) return gyro_cli_usage_error(cmd, "missing -o OUTPUT");
    if (!output) output = "-";

    gyro_embedding_table *t = NULL, *u = NULL;
    gyro_status s = gyro_table_file_load(argv[optind], &t);
    if (!s && model) {
        int clamped = 0;
        s = gyro_embedding_convert(t, model, &u, &clamped);
        if (!s) s = gyro_table_file_save(u, output);
        if (!s && !quiet)
            fprintf(stderr, "Wrote %s: %d rows, %s -> %s, dim %d; %d row%s projected into the ball\n",
                    output, u->n, gyro_embedding_model_name(t->model), gyro_embedding_model_name(u->model),
                    u->dim, clamped, clamped == 1 ? "" : "s");
    } else if (!s && !strcmp(to, "vec")) {
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

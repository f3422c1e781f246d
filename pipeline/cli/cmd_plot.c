/* cmd_plot.c — `gyro plot`: an SVG picture of a character table in the Poincaré disk (a thin
 * wrapper around embeddings/plot.h). */
#include <stddef.h>
#include <stdio.h>

#include "embeddings/plot.h"
#include "embeddings/table.h"
#include "pipeline/cli/cli.h"
#include "pipeline/cli/opts.h"
#include "pipeline/table_file.h"

typedef struct plot_args {
    const char *table, *output;
    gyro_plot_options po; /* the library's defaults (gyro_plot_options_init) */
} plot_args;

static const gyro_opt plot_opts[] = {
    GYRO_O_STR("table", 't', plot_args, table, "PATH", NULL, "embedding table"),
    GYRO_O_STR("output", 'o', plot_args, output, "PATH", NULL, "SVG file ('-' = stdout)"),
    GYRO_O_INT("labels", 0, plot_args, po.labels, "N", NULL, 0, 1000000,
               "label the N most frequent characters (default 60)"),
    GYRO_O_INT("points", 0, plot_args, po.points, "N", NULL, 1, 100000000,
               "draw only the N most frequent characters (default all)"),
    GYRO_O_INT("size", 0, plot_args, po.size, "PX", NULL, 100, 20000, "width of the picture (default 800)"),
    GYRO_O_END,
};

const gyro_cmd_spec gyro_spec_plot = {
    "plot", "-t TABLE -o OUT.svg [--labels N] [--points N] [--size PX]",
    "Draw the characters of an embedding table in the Poincare disk as SVG. A 2-D table (gyro "
    "char2vec train --dim 2) is drawn as trained; a larger one is projected (log0, its two "
    "principal axes, exp0 into the disk) and the caption says so.",
    NULL,
    plot_opts,
    NULL,
};

int gyro_cmd_plot(int argc, char **argv)
{
    const char *cmd = "plot";
    plot_args o = {0};
    gyro_plot_options_init(&o.po);
    int first;
    int rc = gyro_opts_parse(&gyro_spec_plot, argc, argv, &o, &first);
    if (rc != GYRO_OPTS_CONTINUE) return rc;
    const char *table = o.table, *output = o.output;
    gyro_plot_options po = o.po;
    if (!table) return gyro_cli_usage_error(cmd, "missing -t TABLE");
    if (!output) return gyro_cli_usage_error(cmd, "missing -o OUTPUT");
    if (first != argc) return gyro_cli_usage_error(cmd, "unexpected argument '%s'", argv[first]);
    gyro_embedding_table *t = NULL;
    gyro_status s = gyro_table_file_load(table, &t);
    if (!s) s = gyro_plot_svg(t, &po, output);
    gyro_embedding_table_free(t);
    return s ? gyro_cli_fail(cmd, s) : 0;
}

/* cmd_plot.c — `gyro plot`: a picture of a character table in the Poincaré disk, as SVG and/or
 * PNG (a thin wrapper around pipeline/picture.h; the layout is embeddings/plot.h's). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "embeddings/table.h"
#include "pipeline/cli/cli.h"
#include "pipeline/cli/opts.h"
#include "pipeline/picture.h"
#include "pipeline/table_file.h"

typedef struct plot_args {
    const char *table, *output, *png;
    gyro_picture_plot_options po; /* the library's defaults (gyro_picture_plot_options_init) */
} plot_args;

static const gyro_opt plot_opts[] = {
    GYRO_O_STR("table", 't', plot_args, table, "PATH", NULL, "embedding table"),
    GYRO_O_STR("output", 'o', plot_args, output, "PATH", NULL, "SVG file ('-' = stdout)"),
    GYRO_O_STR("png", 0, plot_args, png, "PATH", NULL,
               "also (or only) a PNG, rendered by rsvg-convert (librsvg2-bin) ('-' = stdout)"),
    GYRO_O_INT("labels", 0, plot_args, po.labels, "N", NULL, 0, 1000000,
               "label at most the N most frequent characters, those whose label finds a free "
               "place (default 40); the rest are points"),
    GYRO_O_INT("points", 0, plot_args, po.points, "N", NULL, 1, 100000000,
               "draw only the N most frequent characters (default all)"),
    GYRO_O_INT("size", 0, plot_args, po.size, "PX", NULL, 100, 20000, "width of the picture (default 800)"),
    GYRO_O_END,
};

const gyro_cmd_spec gyro_spec_plot = {
    "plot", "-t TABLE [-o OUT.svg] [--png OUT.png] [--labels N] [--points N] [--size PX]",
    "Draw the characters of an embedding table in the Poincare disk as SVG (and PNG). A 2-D "
    "table (gyro char2vec train --dim 2) is drawn as trained; a larger one is projected (log0, "
    "its two principal axes, exp0 into the disk). The most frequent characters are labelled where "
    "the label stays readable, the others drawn as points; a legend says which is which. Text "
    "names a CJK font (Noto Sans CJK, WenQuanYi Micro Hei, ...) with fallbacks.",
    NULL,
    plot_opts,
    NULL,
};

int gyro_cmd_plot(int argc, char **argv)
{
    const char *cmd = "plot";
    plot_args o = {0};
    gyro_picture_plot_options_init(&o.po);
    int first;
    int rc = gyro_opts_parse(&gyro_spec_plot, argc, argv, &o, &first);
    if (rc != GYRO_OPTS_CONTINUE) return rc;
    if (!o.table) return gyro_cli_usage_error(cmd, "missing -t TABLE");
    if (!o.output && !o.png) return gyro_cli_usage_error(cmd, "missing -o OUT.svg or --png OUT.png");
    if (o.output && o.png && o.output[0] == '-' && !o.output[1] && o.png[0] == '-' && !o.png[1])
        return gyro_cli_usage_error(cmd, "-o and --png cannot both be stdout");
    if (first != argc) return gyro_cli_usage_error(cmd, "unexpected argument '%s'", argv[first]);
    gyro_embedding_table *t = NULL;
    char *svg = NULL;
    size_t len = 0;
    gyro_status s = gyro_table_file_load(o.table, &t);
    if (!s) {
        FILE *mem = open_memstream(&svg, &len);
        if (!mem) s = gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
        else {
            s = gyro_picture_plot_svg(t, &o.po, mem);
            if (fclose(mem) != 0 && !s) s = gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
        }
    }
    if (!s && o.output) s = gyro_picture_save(svg, len, o.output);
    if (!s && o.png) s = gyro_picture_png(svg, len, o.png);
    free(svg);
    gyro_embedding_table_free(t);
    return s ? gyro_cli_fail(cmd, s) : 0;
}

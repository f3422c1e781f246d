/* cmd_plot.c — `gyro plot`: an SVG picture of a character table in the Poincaré disk (a thin
 * wrapper around embeddings/plot.h). */
#include <getopt.h>
#include <stdio.h>

#include "embeddings/plot.h"
#include "embeddings/table.h"
#include "pipeline/cli/cli.h"
#include "pipeline/table_file.h"

static void usage(FILE *out)
{
    fprintf(out,
        "usage: gyro plot -t TABLE -o OUT.svg [--labels N] [--points N] [--size PX]\n"
        "\n"
        "Draw the characters of an embedding table in the Poincare disk as SVG. A 2-D table\n"
        "(gyro char2vec train --dim 2) is drawn as trained; a larger one is projected (log0,\n"
        "its two principal axes, exp0 into the disk) and the caption says so.\n"
        "\n"
        "  -t, --table PATH   embedding table\n"
        "  -o, --output PATH  SVG file ('-' = stdout)\n"
        "      --labels N     label the N most frequent characters (default 60)\n"
        "      --points N     draw only the N most frequent characters (default all)\n"
        "      --size PX      width of the picture (default 800)\n"
        "  -h, --help         this help\n");
}

int gyro_cmd_plot(int argc, char **argv)
{
    const char *cmd = "plot";
    enum { OPT_LABELS = 256, OPT_POINTS, OPT_SIZE };
    static const struct option longopts[] = {
        {"table", required_argument, 0, 't'},
        {"output", required_argument, 0, 'o'},
        {"labels", required_argument, 0, OPT_LABELS},
        {"points", required_argument, 0, OPT_POINTS},
        {"size", required_argument, 0, OPT_SIZE},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    gyro_plot_options po;
    gyro_plot_options_init(&po);
    const char *table = NULL, *output = NULL;
    long v;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "t:o:h", longopts, NULL)) != -1) {
        switch (c) {
        case 't': table = optarg; break;
        case 'o': output = optarg; break;
        case OPT_LABELS:
            if (!gyro_cli_parse_long(cmd, "--labels", optarg, 0, 1000000, &v)) return 2;
            po.labels = (int)v;
            break;
        case OPT_POINTS:
            if (!gyro_cli_parse_long(cmd, "--points", optarg, 1, 100000000, &v)) return 2;
            po.points = (int)v;
            break;
        case OPT_SIZE:
            if (!gyro_cli_parse_long(cmd, "--size", optarg, 100, 20000, &v)) return 2;
            po.size = (int)v;
            break;
        case 'h': usage(stdout); return 0;
        default: return gyro_cli_usage_error(cmd, "unknown option");
        }
    }
    if (!table) return gyro_cli_usage_error(cmd, "missing -t TABLE");
    if (!output) return gyro_cli_usage_error(cmd, "missing -o OUTPUT");
    if (optind != argc) return gyro_cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
    gyro_embedding_table *t = NULL;
    gyro_status s = gyro_table_file_load(table, &t);
    if (!s) s = gyro_plot_svg(t, &po, output);
    gyro_embedding_table_free(t);
    return s ? gyro_cli_fail(cmd, s) : 0;
}

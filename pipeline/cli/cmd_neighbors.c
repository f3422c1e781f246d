/* cmd_neighbors.c — `gyro neighbors`: the nearest characters of each query character by the
 * table's distance (a thin wrapper around embeddings/neighbors.h). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "embeddings/neighbors.h"
#include "embeddings/table.h"
#include "pipeline/cli/cli.h"
#include "pipeline/table_file.h"

static void usage(FILE *out)
{
    fprintf(out,
        "usage: gyro neighbors -t TABLE [-k N] CHAR...\n"
        "\n"
        "Print the N nearest characters of each CHAR with their distances: hyperbolic distance on\n"
        "the hyperboloid or in the Poincare ball, cosine distance for a Euclidean table.\n"
        "Output: one line per neighbour, 'CHAR<TAB>rank<TAB>neighbour<TAB>distance'.\n"
        "\n"
        "  -t, --table PATH   embedding table (gyro char2vec train or gyro convert)\n"
        "  -k N               neighbours per character (default 10)\n"
        "  -h, --help         this help\n"
        "\n"
        "A character missing from the table is reported on stderr; the exit status is then 1.\n");
}

int gyro_cmd_neighbors(int argc, char **argv)
{
    const char *cmd = "neighbors";
    static const struct option longopts[] = {
        {"table", required_argument, 0, 't'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    const char *table = NULL;
    long k = 10;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "t:k:h", longopts, NULL)) != -1) {
        switch (c) {
        case 't': table = optarg; break;
        case 'k':
            if (!gyro_cli_parse_long(cmd, "-k", optarg, 1, 100000, &k)) return 2;
            break;
        case 'h': usage(stdout); return 0;
        default: return gyro_cli_usage_error(cmd, "unknown option");
        }
    }
    if (!table) return gyro_cli_usage_error(cmd, "missing -t TABLE");
    if (optind >= argc) return gyro_cli_usage_error(cmd, "no query character");
    gyro_embedding_table *t;
    gyro_status s = gyro_table_file_load(table, &t);
    if (s) return gyro_cli_fail(cmd, s);
    gyro_neighbor *nb = malloc((size_t)k * sizeof *nb);
    if (!nb) {
        gyro_embedding_table_free(t);
        return gyro_cli_fail(cmd, gyro_error_set(GYRO_ERR_NOMEM, "out of memory"));
    }
    int missing = 0;
    for (int a = optind; a < argc; a++) {
        int row = gyro_embedding_table_find(t, argv[a]);
        if (row < 0) {
            fprintf(stderr, "gyro %s: '%s' is not in the table\n", cmd, argv[a]);
            missing++;
            continue;
        }
        int n = 0;
        s = gyro_embedding_neighbors(t, row, (int)k, nb, &n);
        if (s) break;
        for (int i = 0; i < n; i++)
            printf("%s\t%d\t%s\t%.4f\n", argv[a], i + 1, t->tokens[nb[i].row], nb[i].distance);
    }
    free(nb);
    gyro_embedding_table_free(t);
    if (s) return gyro_cli_fail(cmd, s);
    if (fflush(stdout) != 0) return gyro_cli_fail(cmd, gyro_error_set(GYRO_ERR_IO, "write error on stdout"));
    return missing ? 1 : 0;
}

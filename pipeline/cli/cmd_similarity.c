/* cmd_similarity.c — `gyro similarity`: Spearman's ρ of a character table on word-similarity
 * files (a thin wrapper around embeddings/similarity.h). */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "embeddings/similarity.h"
#include "embeddings/table.h"
#include "pipeline/cli/cli.h"
#include "pipeline/table_file.h"

static void usage(FILE *out)
{
    fprintf(out,
        "usage: gyro similarity -t TABLE [--pairs] FILE...\n"
        "\n"
        "Spearman's rho between human similarity scores and the table's, for word-similarity\n"
        "files of lines 'word1 word2 score ...' (wordsim-297, COS960). A word is the gyromidpoint\n"
        "of its characters (mean vector and cosine for a Euclidean table); pairs with a character\n"
        "missing from the table are not covered. Prints one line per FILE:\n"
        "  FILE<TAB>rho<TAB>covered<TAB>pairs\n"
        "\n"
        "  -t, --table PATH   embedding table (hyperboloid, Poincare or Euclidean)\n"
        "      --pairs        also print every covered pair: word1, word2, gold, model similarity\n"
        "  -h, --help         this help\n"
        "\n"
        "Exit status: 0 done, 1 runtime error, 2 usage error, 65 malformed file or table.\n");
}

int gyro_cmd_similarity(int argc, char **argv)
{
    const char *cmd = "similarity";
    static const struct option longopts[] = {
        {"table", required_argument, 0, 't'},
        {"pairs", no_argument, 0, 'p'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    const char *table = NULL;
    int pairs = 0, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "t:h", longopts, NULL)) != -1) {
        switch (c) {
        case 't': table = optarg; break;
        case 'p': pairs = 1; break;
        case 'h': usage(stdout); return 0;
        default: return gyro_cli_usage_error(cmd, "unknown option");
        }
    }
    if (!table) return gyro_cli_usage_error(cmd, "missing -t TABLE");
    if (optind >= argc) return gyro_cli_usage_error(cmd, "no similarity file");
    gyro_embedding_table *t;
    gyro_status s = gyro_table_file_load(table, &t);
    if (s) return gyro_cli_fail(cmd, s);
    for (int a = optind; a < argc && !s; a++) {
        gyro_similarity_result r;
        s = gyro_similarity_eval(t, argv[a], &r, pairs ? stdout : NULL);
        if (!s) printf("%s\t%.4f\t%d\t%d\n", argv[a], r.rho, r.covered, r.pairs);
    }
    gyro_embedding_table_free(t);
    if (s) return gyro_cli_fail(cmd, s);
    if (fflush(stdout) != 0) return gyro_cli_fail(cmd, gyro_error_set(GYRO_ERR_IO, "write error on stdout"));
    return 0;
}

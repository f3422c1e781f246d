/* cmd_similarity.c — `gyro similarity`: Spearman's ρ of a character table on word-similarity
 * files (a thin wrapper around embeddings/similarity.h). */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "embeddings/similarity.h"
#include "embeddings/table.h"
#include "pipeline/cli/cli.h"
#include "pipeline/cli/opts.h"

typedef struct similarity_args {
    const char *table;
    int pairs;
} similarity_args;

static const gyro_opt similarity_opts[] = {
    GYRO_O_STR("table", 't', similarity_args, table, "PATH", NULL,
               "embedding table (hyperboloid, Poincare or Euclidean)"),
    GYRO_O_FLAG("pairs", 0, similarity_args, pairs,
                "also print every covered pair: word1, word2, gold and model similarity"),
    GYRO_O_END,
};

const gyro_cmd_spec gyro_spec_similarity = {
    "similarity", "-t TABLE [--pairs] FILE...",
    "Spearman's rho between human similarity scores and the table's, for word-similarity files of "
    "lines 'word1 word2 score ...' (wordsim-297, COS960). A word is the gyromidpoint of its "
    "characters (mean vector and cosine for a Euclidean table); pairs with a character missing "
    "from the table are not covered. Prints one line per FILE: FILE<TAB>rho<TAB>covered<TAB>pairs.",
    "Exit status: 0 done, 1 runtime error, 2 usage error, 65 malformed file or table.",
    similarity_opts,
    NULL,
};

int gyro_cmd_similarity(int argc, char **argv)
{
    const char *cmd = "similarity";
    similarity_args o = {0};
    int first, rc = gyro_opts_parse(&gyro_spec_similarity, argc, argv, &o, &first);
    if (rc != GYRO_OPTS_CONTINUE) return rc;
    gyro_embedding_table *t;
    if ((rc = gyro_cli_open_table(cmd, o.table, first, argc, "similarity file", &t)) != GYRO_OPTS_CONTINUE) return rc;
    gyro_status s = GYRO_OK;
    for (int a = first; a < argc && !s; a++) {
        gyro_similarity_result r;
        s = gyro_similarity_eval(t, argv[a], &r, o.pairs ? stdout : NULL);
        if (!s) printf("%s\t%.4f\t%d\t%d\n", argv[a], r.rho, r.covered, r.pairs);
    }
    gyro_embedding_table_free(t);
    return s ? gyro_cli_fail(cmd, s) : gyro_cli_flush_stdout(cmd);
}

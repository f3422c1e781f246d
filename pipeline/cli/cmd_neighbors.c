/* cmd_neighbors.c — `gyro neighbors`: the nearest characters of each query character by the
 * table's distance (a thin wrapper around embeddings/neighbors.h). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "embeddings/neighbors.h"
#include "embeddings/table.h"
#include "pipeline/cli/cli.h"
#include "pipeline/cli/opts.h"

typedef struct neighbors_args {
    const char *table;
    long k;
} neighbors_args;

static const gyro_opt neighbors_opts[] = {
    GYRO_O_STR("table", 't', neighbors_args, table, "PATH", NULL,
               "embedding table (gyro char2vec train or gyro convert)"),
    GYRO_O_LONG("top-k", 'k', neighbors_args, k, "N", "10", 1, 100000, "neighbours per character"),
    GYRO_O_END,
};

const gyro_cmd_spec gyro_spec_neighbors = {
    "neighbors", "-t TABLE [-k N] CHAR...",
    "Print the N nearest characters of each CHAR with their distances: hyperbolic distance on "
    "the hyperboloid or in the Poincare ball, cosine distance for a Euclidean table. Output: one "
    "line per neighbour, 'CHAR<TAB>rank<TAB>neighbour<TAB>distance'.",
    "A character missing from the table is reported on stderr; the exit status is then 1.",
    neighbors_opts,
    NULL,
};

int gyro_cmd_neighbors(int argc, char **argv)
{
    const char *cmd = "neighbors";
    neighbors_args o = {0};
    int first, rc = gyro_opts_parse(&gyro_spec_neighbors, argc, argv, &o, &first);
    if (rc != GYRO_OPTS_CONTINUE) return rc;
    const long k = o.k;
    gyro_embedding_table *t;
    if ((rc = gyro_cli_open_table(cmd, o.table, first, argc, "query character", &t)) != GYRO_OPTS_CONTINUE) return rc;
    gyro_status s = GYRO_OK;
    gyro_neighbor *nb = malloc((size_t)k * sizeof *nb);
    if (!nb) {
        gyro_embedding_table_free(t);
        return gyro_cli_fail(cmd, gyro_error_set(GYRO_ERR_NOMEM, "out of memory"));
    }
    int missing = 0;
    for (int a = first; a < argc; a++) {
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
    return (rc = gyro_cli_flush_stdout(cmd)) ? rc : missing ? 1 : 0;
}

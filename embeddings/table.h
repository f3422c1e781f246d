/* table.h — an embedding table in memory.
 *
 * Its file (a gyro stream of EmbeddingTable records) is read and written by pipeline/table_file.h;
 * this header knows no file format, so embeddings/ and models/ see only rows of floats.
 *
 * In memory the vectors are one contiguous float block (n, stride): stride = dim + 1 on the
 * hyperboloid (time coordinate first), dim in the Poincaré ball or Euclidean space. Tokens and
 * counts live in a gyro_vocab, which also gives O(1) lookup by token.
 */
#ifndef GYRO_EMBEDDINGS_TABLE_H
#define GYRO_EMBEDDINGS_TABLE_H

#include <stdint.h>

#include "embeddings/vocab.h"
#include "models/core/status.h"

#define GYRO_TABLE_CHUNK 4096
#define GYRO_TABLE_MAX_DIM 65536

/* The geometry of a table's rows. The values are those of gyro.v1.EmbeddingModel (proto/gyro.proto),
 * so a table file stores them as they are (pipeline/table_file.c asserts the equality). */
typedef enum gyro_embedding_model {
    GYRO_EMBEDDING_UNSPECIFIED = 0,
    GYRO_EMBEDDING_HYPERBOLOID = 1,   /* Lorentz model, time coordinate first: stride dim + 1 */
    GYRO_EMBEDDING_POINCARE = 2,      /* Poincaré ball of curvature -curvature: stride dim */
    GYRO_EMBEDDING_EUCLIDEAN = 3      /* ordinary vectors: stride dim */
} gyro_embedding_model;

typedef struct gyro_embedding_table {
    int model;            /* gyro_embedding_model: GYRO_EMBEDDING_HYPERBOLOID / POINCARE / EUCLIDEAN */
    double curvature;     /* c > 0 of curvature -c (1 on the hyperboloid) */
    int dim;              /* manifold dimension */
    int stride;           /* floats per row: dim + 1 on the hyperboloid, else dim */
    int n;                /* rows */
    char **tokens;        /* (n) aliases vocab.tokens */
    uint64_t *counts;     /* (n) aliases vocab.counts */
    float *vectors;       /* (n, stride) owned */
    char *trained_by;     /* owned, may be NULL */
    gyro_vocab vocab;     /* owns tokens and counts; hash for gyro_embedding_table_find */
} gyro_embedding_table;

/* Floats per row of a table of this model and dimension. */
int gyro_embedding_stride(int model, int dim);

/* Allocate a table of `n` rows with zeroed vectors and no tokens yet (add them with
 * gyro_embedding_table_set_token in row order). Errors: GYRO_ERR_USAGE (bad model, dim,
 * curvature, n), GYRO_ERR_NOMEM. *out is set only on success. */
gyro_status gyro_embedding_table_new(int model, double curvature, int dim, int n,
                                     gyro_embedding_table **out);

/* Set the token of the next row (rows are filled 0, 1, ...: `row` must equal the number of
 * tokens set so far). Errors: GYRO_ERR_DATA for a duplicate or invalid token. */
gyro_status gyro_embedding_table_set_token(gyro_embedding_table *t, int row, const char *token,
                                           uint64_t count);

/* Row of `token`, or -1. */
int gyro_embedding_table_find(const gyro_embedding_table *t, const char *token);

/* Free the table (NULL is a no-op). */
void gyro_embedding_table_free(gyro_embedding_table *t);

/* Name of a model ("hyperboloid", "poincare", "euclidean", "unspecified"). */
const char *gyro_embedding_model_name(int model);

/* The first row with a NaN or infinite coordinate, or -1 when every coordinate is finite.
 * Writers call it so a diverged table never replaces a good file. */
int gyro_embedding_table_first_nonfinite(const gyro_embedding_table *t);

/* The first row of a Poincaré table that is not strictly inside the ball of curvature −c
 * (c·|x|² >= 1, or not finite), or -1 (always -1 for other models). *norm2 (may be NULL)
 * receives c·|x|² of that row, computed in double. */
int gyro_embedding_table_first_outside_ball(const gyro_embedding_table *t, double *norm2);

/* Largest |<x,x>_L + 1| over the rows of a hyperboloid table, computed in double; 0 for other
 * models. *worst_row (may be NULL) receives the row. */
double gyro_embedding_table_manifold_error(const gyro_embedding_table *t, int *worst_row);

#endif

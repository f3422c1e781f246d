/* neighbors.h — the k nearest rows of an embedding table by the distance of its model.
 *
 * Hyperboloid: d(x,y) = arcosh(−⟨x,y⟩_L) (gyro_lorentz_dist_f32); Poincaré ball:
 * d_c(x,y) = 2/√c artanh(√c|−x ⊕_c y|) (gyro_poincare_dist_f32); Euclidean: the cosine distance
 * 1 − cos(x,y), which is what word2vec's `distance` tool ranks by. Brute force over the table
 * (O(n·dim), a few milliseconds for a character vocabulary), with a bounded max-heap of k.
 */
#ifndef GYRO_EMBEDDINGS_NEIGHBORS_H
#define GYRO_EMBEDDINGS_NEIGHBORS_H

#include "embeddings/table.h"
#include "models/core/status.h"

typedef struct gyro_neighbor {
    int row;
    double distance;
} gyro_neighbor;

/* Distance between rows i and j of the table by its model (see above). */
double gyro_embedding_distance(const gyro_embedding_table *t, int i, int j);

/* Distance between two vectors of the table's model (each `stride` floats). */
double gyro_embedding_distance_vec(const gyro_embedding_table *t, const float *x, const float *y);

/* The k nearest rows to row `query` (itself excluded), nearest first, into out (k entries);
 * *n_out = min(k, n − 1). Errors: GYRO_ERR_USAGE for a bad row or k < 1. */
gyro_status gyro_embedding_neighbors(const gyro_embedding_table *t, int query, int k,
                                     gyro_neighbor *out, int *n_out);

#endif

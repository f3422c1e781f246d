/* plot.h — the layout of a character table in the Poincaré disk (pipeline/picture.h draws it).
 *
 * A 2-dimensional hyperbolic table is drawn as it is (converted to the disk). A table of higher
 * dimension is projected (the picture says so in its legend): every point is mapped to the
 * tangent space at the origin (log₀ in the ball, Ganea et al. 2018), the two principal axes of
 * those tangent vectors are found (power iteration on their covariance), each vector is
 * projected onto them and mapped back into the 2-D disk with exp₀. Distances to the origin are
 * kept up to the projection, so frequent, general characters stay near the centre and specific
 * ones move out, as in the hyperbolic layout itself. A Euclidean table is drawn the same way
 * with plain PCA.
 */
#ifndef GYRO_EMBEDDINGS_PLOT_H
#define GYRO_EMBEDDINGS_PLOT_H

#include "embeddings/table.h"
#include "models/core/status.h"

/* Project the table to 2-D disk coordinates: xy (n, 2) doubles, owned by the caller, rows in
 * table order; *projected is set to 1 when a projection was needed. Errors: GYRO_ERR_NOMEM,
 * GYRO_ERR_USAGE (empty table). */
gyro_status gyro_plot_layout(const gyro_embedding_table *t, double *xy, int *projected);

#endif

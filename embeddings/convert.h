/* convert.h — change the model of an embedding table, and export it as text.
 *
 * Hyperboloid → Poincaré ball (c = 1): each row is converted in float64 with
 * gyro_hyp_to_poincare_f64 (x ↦ x_s/(1+x₀)), rounded to float32 and projected into the float32
 * ball (norm ≤ 1 − GYRO_HYP_BALL_EPS_F32) with gyro_poincare_project_f32, so downstream models
 * never meet a point on the boundary. Poincaré → hyperboloid uses gyro_hyp_to_hyperboloid_f64
 * and re-projects x₀ = √(1+|x_s|²). Only curvature 1 is supported (the hyperboloid of gyro is
 * of curvature −1). A Euclidean table has no hyperbolic counterpart.
 *
 * Exports: word2vec's text format (`.vec`: a "rows columns" line, then "token v1 v2 …" per row,
 * the table's own coordinates, %.9g so float32 round-trips) and the TensorBoard projector's TSV
 * pair (vectors: one row of tab-separated coordinates per token; metadata: one token per line).
 * Tokens that contain whitespace would break both formats and are written with each
 * whitespace byte replaced by U+2423 (␣). Files are written atomically.
 */
#ifndef GYRO_EMBEDDINGS_CONVERT_H
#define GYRO_EMBEDDINGS_CONVERT_H

#include "embeddings/table.h"
#include "models/core/status.h"

/* A new table of model `to` (GYRO_EMBEDDING_POINCARE or _HYPERBOLOID) holding the
 * rows of `in`. Converting to the table's own model copies it. *clamped (may be NULL) receives
 * the number of rows projected back into the ball. Errors: GYRO_ERR_USAGE (Euclidean table,
 * curvature other than 1, unknown target), GYRO_ERR_NOMEM. */
gyro_status gyro_embedding_convert(const gyro_embedding_table *in, int to,
                                   gyro_embedding_table **out, int *clamped);

/* Write word2vec's text format to `path` ("-" = stdout). GYRO_ERR_IO on failure; GYRO_ERR_NAN,
 * writing nothing, when a coordinate is NaN or infinite. */
gyro_status gyro_embedding_export_vec(const gyro_embedding_table *t, const char *path);

/* Write the projector's pair `vectors_path` and `metadata_path`. GYRO_ERR_IO on failure (a
 * failure on the second file leaves the first written); GYRO_ERR_NAN, writing nothing, when a
 * coordinate is NaN or infinite. */
gyro_status gyro_embedding_export_tsv(const gyro_embedding_table *t, const char *vectors_path,
                                      const char *metadata_path);

#endif

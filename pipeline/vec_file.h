/* vec_file.h — read word2vec's and fastText's text vectors (`.vec`) into an embedding table.
 *
 * Format: an optional header line "ROWS COLUMNS", then one row a line: a token and COLUMNS
 * numbers, separated by spaces (or tabs); a trailing space (fastText writes one) and CRLF line
 * ends are accepted. Without a header (GloVe's layout) the first row sets the number of
 * columns. The rows become a table of the given model: Euclidean (what word2vec and fastText
 * train), Poincaré (COLUMNS = dim, rows strictly inside the ball of curvature −c) or the
 * hyperboloid (COLUMNS = dim + 1, time coordinate first, as `gyro convert --to vec` writes a
 * hyperboloid table; x₀ is recomputed as √(1+|x_s|²) after checking the row lies on it). A
 * .vec carries no counts: row i gets count ROWS − i, which keeps the file's order (fastText and
 * word2vec write the most frequent first) for the commands that rank rows by count.
 *
 * Errors, each naming the file and line (GYRO_ERR_DATA): a header that is not two positive
 * integers, a row with the wrong number of values, a value that is not a number or not finite,
 * a duplicate or invalid token, fewer or more rows than the header says, no rows; for the
 * hyperbolic models a row off its manifold. GYRO_ERR_IO when the file cannot be read,
 * GYRO_ERR_NOMEM.
 */
#ifndef GYRO_PIPELINE_VEC_FILE_H
#define GYRO_PIPELINE_VEC_FILE_H

#include "embeddings/table.h"
#include "models/core/status.h"

/* Load `path` ("-" = stdin) as a table of `model` (gyro_embedding_model) and `curvature` (> 0;
 * 1 for the hyperboloid). *had_header (may be NULL) says whether the file had a header line.
 * *out is set only on success (free with gyro_embedding_table_free). */
gyro_status gyro_vec_file_load(const char *path, int model, double curvature,
                               gyro_embedding_table **out, int *had_header);

#endif

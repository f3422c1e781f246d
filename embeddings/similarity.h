/* similarity.h — word-similarity evaluation of a character embedding table (Spearman's ρ).
 *
 * Files in the formats of ../shared/corpora/similarity: one pair a line, whitespace-separated
 * fields `word1 word2 score [more fields…]` (wordsim-297's tab-separated `w1 w2 score`,
 * COS960's `w1 w2 mean a1..a15`), CRLF and a UTF-8 BOM tolerated, blank lines and lines
 * starting with '#' skipped. A malformed line is an error naming the file and line.
 *
 * A word is normalized like training text (models/text/normalize.h: NFKC, Traditional →
 * Simplified) and split into characters; it is covered when every character is in the table.
 * Its point is the gyromidpoint of its characters (Ungar): computed as the Lorentz centroid
 * (Law et al. 2019) of the characters' hyperboloid points, normalised back onto the
 * hyperboloid — the Einstein midpoint, which is the Möbius gyromidpoint of the corresponding
 * Poincaré points — so the word's similarity is the negated hyperbolic distance between the two
 * midpoints. A Euclidean table uses the mean vector and cosine similarity instead.
 * ρ is Spearman's rank correlation over the covered pairs, ties given their average rank.
 */
#ifndef GYRO_EMBEDDINGS_SIMILARITY_H
#define GYRO_EMBEDDINGS_SIMILARITY_H

#include <stdio.h>

#include "embeddings/table.h"
#include "models/core/status.h"

typedef struct gyro_similarity_result {
    int pairs;        /* pairs read */
    int covered;      /* pairs whose words are both covered */
    double rho;       /* Spearman's ρ over the covered pairs (NaN if fewer than 2) */
} gyro_similarity_result;

/* Evaluate `t` on the file at `path`. If `pairs_out` is not NULL, each covered pair is printed
 * there as "word1<TAB>word2<TAB>gold<TAB>model similarity". Errors: GYRO_ERR_IO (cannot open or
 * read), GYRO_ERR_DATA (malformed line: "path:line: ..."), GYRO_ERR_USAGE (a table of an
 * unknown model), GYRO_ERR_NOMEM, and the normalizer's errors. */
gyro_status gyro_similarity_eval(const gyro_embedding_table *t, const char *path,
                                 gyro_similarity_result *res, FILE *pairs_out);

/* Spearman's rank correlation of a and b (n values each; ties get average ranks). NaN when
 * n < 2 or either side is constant. */
double gyro_spearman(const double *a, const double *b, int n);

#endif

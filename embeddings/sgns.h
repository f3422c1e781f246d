/* sgns.h — the non-hyperbolic pieces of char2vec's skip-gram negative-sampling loop: the
 * sigmoid / log-sigmoid tables and the Euclidean (word2vec) twin of the update.
 *
 * The hyperbolic update (target step with tangent-step clipping and exp map, centre step) is a
 * math-core op: gyro_lorentz_skipgram_step_target_f32 / _centre_f32 in
 * models/hyp/lorentz_skipgram.h, whose row conventions these kernels share: rows are `row`
 * floats (a multiple of 16, 64-byte aligned, zero padding past the used width), so every loop
 * runs over whole 4-float lanes without remainders and the padding stays zero; dot products
 * accumulate in double lanes (gyro_lorentz_padded_dot_f32).
 *
 * Euclidean twin (word2vec): s = u·v, g = y − σ(s); h += g v; v += lr g u; finally u += lr h.
 */
#ifndef GYRO_EMBEDDINGS_SGNS_H
#define GYRO_EMBEDDINGS_SGNS_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "models/core/status.h"
#include "models/hyp/lorentz_skipgram.h"

#define GYRO_SGNS_SIG_MAX 8.0
#define GYRO_SGNS_SIG_N 2048

/* σ(x) and −log σ(x) tabulated over [−GYRO_SGNS_SIG_MAX, GYRO_SGNS_SIG_MAX]. */
typedef struct gyro_sgns_tables {
    float sig[GYRO_SGNS_SIG_N + 1];
    float nlsig[GYRO_SGNS_SIG_N + 1];
} gyro_sgns_tables;

/* Fill the tables (double-precision formulas, stored as float). */
void gyro_sgns_tables_init(gyro_sgns_tables *t);

/* σ(x) from the table and −log σ(±x) (the loss of label 1 / 0) into *loss.
 * x must be finite. Outside the range σ is 0 or 1 and the loss is linear (−x or 0). */
static inline double gyro_sgns_sigmoid(const gyro_sgns_tables *t, double x, int label, double *loss)
{
    const double scale = GYRO_SGNS_SIG_N / (2.0 * GYRO_SGNS_SIG_MAX);
    double xs = label ? x : -x; /* loss = −log σ(xs) */
    if (xs >= GYRO_SGNS_SIG_MAX) *loss = 0.0;
    else if (xs <= -GYRO_SGNS_SIG_MAX) *loss = -xs;
    else *loss = t->nlsig[(int)((xs + GYRO_SGNS_SIG_MAX) * scale + 0.5)];
    if (x >= GYRO_SGNS_SIG_MAX) return 1.0;
    if (x <= -GYRO_SGNS_SIG_MAX) return 0.0;
    return t->sig[(int)((x + GYRO_SGNS_SIG_MAX) * scale + 0.5)];
}

/* Σ x_i y_i over a padded row, in double. */
static inline double gyro_sgns_dot(const float *x, const float *y, int row)
{
    return gyro_lorentz_padded_dot_f32(x, y, row);
}

/* Euclidean target update: h += g·v_old; v += lr·g·u. */
static inline void gyro_sgns_euc_target(float *h, float *v, const float *u, double g, double lr,
                                        int row)
{
    float gf = (float)g, a = (float)(lr * g);
    for (int i = 0; i < row; i += 4) {
        gyro_hyp_v4f vo = *(gyro_hyp_v4f *)(v + i);
        *(gyro_hyp_v4f *)(h + i) += gf * vo;
        *(gyro_hyp_v4f *)(v + i) = vo + a * *(const gyro_hyp_v4f *)(u + i);
    }
}

/* Euclidean centre update: u += lr·h. */
static inline void gyro_sgns_euc_centre(float *u, const float *h, double lr, int row)
{
    float a = (float)lr;
    for (int i = 0; i < row; i += 4) *(gyro_hyp_v4f *)(u + i) += a * *(const gyro_hyp_v4f *)(h + i);
}

/* The negative sampler of the window update: Walker's alias method (Walker 1977, "An efficient
 * method for generating discrete random variables with general distributions"; Vose 1991's
 * construction) over the SAME distribution as a unigram table (vocab.h's
 * gyro_vocab_negative_table: id i with probability slots_i / size), in n entries of 8 bytes
 * instead of `size` of 4: 36 KB for 4,519 characters where the table holds 2 MB, so a draw reads
 * a cache-resident entry instead of missing in a table of 64 slots per character. A draw splits
 * one 64-bit random number: the high 32 bits pick an entry i (multiply-shift), the low 32 bits
 * keep i when below thr_i (thr_i / 2^32 the share of entry i that is i's own, the rest goes to
 * alias_i). Built in integers: every id's probability is exact up to the 2^-32 rounding of each
 * threshold (at most 2^-32 in all per id). */
typedef struct gyro_sgns_alias_entry {
    uint32_t thr;   /* keep i when the low 32 bits of the draw are below thr (a full entry: alias = i) */
    uint32_t alias; /* the id drawn otherwise */
} gyro_sgns_alias_entry;

typedef struct gyro_sgns_alias {
    gyro_sgns_alias_entry *e; /* (n) */
    uint32_t n;
} gyro_sgns_alias;

/* Build the alias table of the distribution of `table` (size entries, ids < n; an id may be
 * absent from it: its probability is then 0). Errors: GYRO_ERR_USAGE (n or size 0, an id ≥ n), GYRO_ERR_NOMEM;
 * *a is zeroed on error and can be freed either way. */
gyro_status gyro_sgns_alias_init(gyro_sgns_alias *a, const uint32_t *table, uint32_t size, uint32_t n);

/* Free the entries of a (a zeroed a is fine). */
void gyro_sgns_alias_free(gyro_sgns_alias *a);

/* The id drawn by the 64-bit uniform random number r (see above). */
static inline uint32_t gyro_sgns_alias_draw(const gyro_sgns_alias *a, uint64_t r)
{
    uint32_t i = (uint32_t)(((r >> 32) * (uint64_t)a->n) >> 32);
    gyro_sgns_alias_entry e = a->e[i];
    return (uint32_t)r < e.thr ? i : e.alias;
}

#endif

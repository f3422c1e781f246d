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

#endif

/* sgns.c — the sigmoid and log-sigmoid tables of the skip-gram kernels (see sgns.h). */
#include "embeddings/sgns.h"

void gyro_sgns_tables_init(gyro_sgns_tables *t)
{
    for (int i = 0; i <= GYRO_SGNS_SIG_N; i++) {
        double x = -GYRO_SGNS_SIG_MAX + 2.0 * GYRO_SGNS_SIG_MAX * i / GYRO_SGNS_SIG_N;
        t->sig[i] = (float)(1.0 / (1.0 + exp(-x)));
        /* −log σ(x) = log(1 + e^{−x}), stable for both signs */
        t->nlsig[i] = (float)(x > 0 ? log1p(exp(-x)) : -x + log1p(exp(x)));
    }
}

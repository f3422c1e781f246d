/* tf_step.c — speed of the neural core alone: one training step (forward, softmax
 * cross-entropy, backward) over a batch, and single-utterance inference latency, for the
 * seed's hyperbolic and Euclidean configurations. Built and run by tf_step.sh.
 *
 *   tf_step GEOMETRY BATCH LEN STEPS [BLAS_THREADS [BLOCKS]]
 *
 * GEOMETRY 1 = hyperbolic (100-d), 0 = Euclidean (128-d); 3 layers, 16 heads, FFN 4·C,
 * vocabulary 5000, 125 classes (the seed's intents). Prints the median wall time of a step,
 * the process CPU time per step (robust on a shared machine), and the median and p99 latency
 * of a forward pass over one sequence of LEN characters. BLOCKS = 1 replaces every layer's
 * attention by MLA (latent 32, no RoPE) and its FFN by MoE (4 routed experts, top-1, balance
 * 0.01; experts of width FFN/4 so the active FFN compute per token is a quarter). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "models/core/blas.h"
#include "models/core/progress.h"
#include "models/transformer.h"

static double cpu_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: tf_step GEOMETRY BATCH LEN STEPS [BLAS_THREADS [BLOCKS]]\n");
        return 2;
    }
    const int geo = atoi(argv[1]), B = atoi(argv[2]), T = atoi(argv[3]), steps = atoi(argv[4]);
    if (B < 1 || T < 1 || T > 64 || steps < 1) {
        fprintf(stderr, "tf_step: BATCH >= 1, 1 <= LEN <= 64, STEPS >= 1\n");
        return 2;
    }
    gyro_blas_set_threads(argc > 5 ? atoi(argv[5]) : 1);
    /* GEOMETRY: 0 Euclidean, 1 hyperbolic (Poincaré), 2 Lorentz */
    gyro_tf_config c = gyro_tf_config_default(geo == 2   ? GYRO_TF_GEOMETRY_LORENTZ
                                              : geo == 1 ? GYRO_TF_GEOMETRY_HYPERBOLIC
                                                         : GYRO_TF_GEOMETRY_EUCLIDEAN);
    c.vocab_size = 5000;
    c.n_classes = 125;
    c.dropout = geo ? 0.3f : 0.2f;
    const int blocks = argc > 6 && atoi(argv[6]) == 1;
    if (blocks) {
        c.attention_kind = GYRO_TF_ATTENTION_MLA;
        c.mla_latent_dim = 32;
        c.ffn_kind = GYRO_TF_FFN_MOE;
        c.moe_experts = 4;
        c.moe_top_k = 1;
        c.moe_balance = 0.01f;
        c.ffn_dim /= 4;
    }
    gyro_tf_model *m = NULL;
    gyro_tf_acts *a = NULL, *ai = NULL;
    if (gyro_tf_new(&c, 1, 1, &m) || gyro_tf_acts_new(m, B, T, 1, &a) ||
        gyro_tf_acts_new(m, 1, T, 0, &ai)) {
        fprintf(stderr, "tf_step: %s\n", gyro_error_message());
        return 1;
    }
    int32_t *tok = malloc(sizeof(int32_t) * (size_t)B * T);
    int *len = malloc(sizeof(int) * (size_t)B), *lab = malloc(sizeof(int) * (size_t)B);
    float *dl = malloc(sizeof(float) * (size_t)B * c.n_classes);
    double *wall = malloc(sizeof(double) * (size_t)steps);
    const int n_inf = 1000;
    double *lat = malloc(sizeof(double) * n_inf);
    gyro_rng r;
    gyro_rng_seed(&r, 1);
    for (int i = 0; i < B * T; i++)
        tok[i] = (int32_t)gyro_rng_below(&r, (uint32_t)c.vocab_size);
    for (int b = 0; b < B; b++) {
        len[b] = T;
        lab[b] = (int)gyro_rng_below(&r, (uint32_t)c.n_classes);
    }
    double cpu0 = cpu_seconds();
    for (int s = 0; s < steps; s++) {
        double t0 = gyro_now();
        if (gyro_tf_forward(m, a, tok, len, B, T, &r)) {
            fprintf(stderr, "tf_step: %s\n", gyro_error_message());
            return 1;
        }
        gyro_tf_softmax_xent(dl, NULL, gyro_tf_logits(a), lab, B, c.n_classes);
        memset(m->grads_memory, 0, m->n_params * sizeof(float));
        gyro_tf_backward(m, a, &m->grads, dl);
        wall[s] = gyro_now() - t0;
    }
    double cpu_step = (cpu_seconds() - cpu0) / steps;
    for (int s = 0; s < n_inf; s++) {
        double t0 = gyro_now();
        gyro_tf_forward(m, ai, tok, &T, 1, T, NULL);
        lat[s] = gyro_now() - t0;
    }
    qsort(wall, (size_t)steps, sizeof(double), cmp_double);
    qsort(lat, n_inf, sizeof(double), cmp_double);
    printf("%-10s%s C=%d B=%d T=%d: step median %.2f ms (%.1f steps/s, %.0f tokens/s), "
           "cpu/step %.2f ms; inference T=%d median %.3f ms p99 %.3f ms\n",
           gyro_tf_geometry_name(c.geometry), blocks ? " MLA+MoE" : "", c.dim, B, T, wall[steps / 2] * 1e3,
           1.0 / wall[steps / 2], B * T / wall[steps / 2], cpu_step * 1e3, T,
           lat[n_inf / 2] * 1e3, lat[n_inf * 99 / 100] * 1e3);
    free(tok); free(len); free(lab); free(dl); free(wall); free(lat);
    gyro_tf_acts_free(a);
    gyro_tf_acts_free(ai);
    gyro_tf_free(m);
    return 0;
}

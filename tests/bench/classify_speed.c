/* classify_speed.c — training and inference speed of the intent classifier's model, the C side
 * of tests/bench/classify_speed.sh (built by that script, not by make).
 *
 *   classify_speed GEOMETRY DIM LAYERS HEADS FFN CLASSES VOCAB BATCH SEQ STEPS LAT_RUNS [DROPOUT]
 *
 * Training: STEPS optimizer steps on random token ids (B × SEQ, all lengths SEQ), each
 * forward + softmax cross-entropy + backward + RMSProp/RSGD step, exactly the work of one
 * step of `gyro classify train`. Latency: LAT_RUNS single-utterance forward passes (batch 1,
 * SEQ tokens) after a warm-up. Prints one line of `key=value` pairs. Environment TWIN_BLOCK
 * (as torch_twin.py reads it): seed (default: the configuration's block) or tangent-ln (the
 * hyperbolic block `gyro classify train --arch transformer` trains: tangent residuals,
 * hyperbolic LayerNorm, ReLU).
 *
 * Euclidean geometry: also the CPU time of the step's dense products alone (gemm_ms, the floor
 * no work around them can go below): every linear map of the step (per layer q|k|v, the head
 * merge, the two feed-forward maps; forward Y = X Wᵀ, backward dX += dY W and dW += dYᵀ X) as
 * the gyro_blas_gemm_f32 calls the step makes, on B·SEQ rows, the median of 15 repetitions.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "models/core/blas.h"
#include "models/core/progress.h"
#include "models/core/rng.h"
#include "models/optim.h"
#include "models/transformer.h"

/* CPU seconds of the process or of the calling thread (clock: CLOCK_PROCESS_CPUTIME_ID or
 * CLOCK_THREAD_CPUTIME_ID). */
static double cpu_now(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* CPU ms of the dense products of one Euclidean training step (see the top), the median of 15
 * repetitions after 2 warm-ups; -1 when the buffers cannot be allocated. */
static double gemm_floor_ms(const gyro_tf_config *c, int N)
{
    const int C = c->dim, A = c->n_heads * c->head_dim, F = c->ffn_dim;
    const int shape[4][2] = {{C, 3 * A}, {A, C}, {C, F}, {F, C}}; /* (in, out) */
    int wide = 3 * A > F ? 3 * A : F;
    if (C > wide) wide = C;
    float *X = calloc((size_t)N * wide, sizeof(float)), *Y = calloc((size_t)N * wide, sizeof(float));
    float *W = calloc((size_t)wide * wide, sizeof(float)), *G = calloc((size_t)wide * wide, sizeof(float));
    double t[15];
    int ok = X && Y && W && G;
    for (int r = -2; ok && r < 15; r++) {
        double t0 = cpu_now(CLOCK_PROCESS_CPUTIME_ID);
        for (int l = 0; l < c->n_layers; l++)
            for (int k = 0; k < 4; k++) {
                const int K = shape[k][0], M = shape[k][1];
                gyro_blas_gemm_f32(Y, X, W, 0, 1, 1.0f, 0.0f, N, M, K, K, K, M);
                gyro_blas_gemm_f32(X, Y, W, 0, 0, 1.0f, 1.0f, N, K, M, M, K, K);
                gyro_blas_gemm_f32(G, Y, X, 1, 0, 1.0f, 1.0f, M, K, N, M, K, K);
            }
        if (r >= 0) t[r] = 1e3 * (cpu_now(CLOCK_PROCESS_CPUTIME_ID) - t0);
    }
    free(X);
    free(Y);
    free(W);
    free(G);
    if (!ok) return -1;
    qsort(t, 15, sizeof *t, cmp_double);
    return t[7];
}

int main(int argc, char **argv)
{
    if (argc < 12) {
        fprintf(stderr, "usage: %s GEOMETRY DIM LAYERS HEADS FFN CLASSES VOCAB BATCH SEQ STEPS LAT_RUNS [DROPOUT]\n", argv[0]);
        return 2;
    }
    int hyp = strcmp(argv[1], "hyperbolic") == 0;
    gyro_tf_config cfg = gyro_tf_config_default(hyp ? GYRO_TF_GEOMETRY_HYPERBOLIC : GYRO_TF_GEOMETRY_EUCLIDEAN);
    cfg.dim = atoi(argv[2]);
    cfg.n_layers = atoi(argv[3]);
    cfg.n_heads = atoi(argv[4]);
    cfg.head_dim = (cfg.dim + cfg.n_heads - 1) / cfg.n_heads;
    cfg.ffn_dim = atoi(argv[5]);
    cfg.n_classes = atoi(argv[6]);
    cfg.vocab_size = atoi(argv[7]);
    int B = atoi(argv[8]), T = atoi(argv[9]), steps = atoi(argv[10]), runs = atoi(argv[11]);
    cfg.dropout = argc > 12 ? (float)atof(argv[12]) : 0.0f;
    const char *block = getenv("TWIN_BLOCK");
    if (block && strcmp(block, "tangent-ln") == 0 && hyp) {
        cfg.residual = GYRO_TF_RESIDUAL_TANGENT;
        cfg.layernorm = 1;
        cfg.ffn_activation = GYRO_TF_ACTIVATION_RELU;
    } else if (block && strcmp(block, "seed") != 0 && strcmp(block, "tangent-ln") != 0) {
        fprintf(stderr, "classify_speed: TWIN_BLOCK must be seed or tangent-ln\n");
        return 2;
    }
    if (cfg.max_len < T) cfg.max_len = T;
    gyro_tf_model *m;
    gyro_tf_acts *acts, *acts1;
    if (gyro_tf_new(&cfg, 1, 1, &m) || gyro_tf_acts_new(m, B, T, 1, &acts) || gyro_tf_acts_new(m, 1, T, 0, &acts1)) {
        fprintf(stderr, "classify_speed: %s\n", gyro_error_message());
        return 1;
    }
    gyro_optim_tensor ot[GYRO_TF_MAX_TENSORS];
    for (int t = 0; t < m->n_tensors; t++) {
        const gyro_tf_tensor *X = &m->tensors[t];
        ot[t] = (gyro_optim_tensor){.name = X->name, .w = m->params_memory + X->offset,
                                    .g = m->grads_memory + X->offset, .rows = (size_t)X->rows,
                                    .cols = (size_t)X->cols, .c = cfg.curvature,
                                    .manifold = X->manifold == GYRO_TF_MANIFOLD_BALL ? GYRO_OPTIM_MANIFOLD_POINCARE
                                                                                    : GYRO_OPTIM_MANIFOLD_EUCLIDEAN};
    }
    gyro_optim_config oc = gyro_optim_config_default();
    gyro_optim opt;
    if (gyro_optim_init(&opt, &oc, ot, m->n_tensors)) return 1;
    int32_t *tok = malloc((size_t)B * T * sizeof *tok);
    int *len = malloc((size_t)B * sizeof *len), *lab = malloc((size_t)B * sizeof *lab);
    float *dlogits = malloc((size_t)B * cfg.n_classes * sizeof *dlogits);
    gyro_rng rng, drop;
    gyro_rng_seed(&rng, 7);
    gyro_rng_seed(&drop, 8);
    for (int b = 0; b < B; b++) len[b] = T;
    double loss = 0;
    /* one warm-up step, then the timed steps */
    double t0 = 0, c0 = 0;
    for (int s = -1; s < steps; s++) {
        if (s == 0) t0 = gyro_now(), c0 = cpu_now(CLOCK_PROCESS_CPUTIME_ID);
        for (long i = 0; i < (long)B * T; i++) tok[i] = (int32_t)gyro_rng_below(&rng, (uint32_t)cfg.vocab_size);
        for (int b = 0; b < B; b++) lab[b] = (int)gyro_rng_below(&rng, (uint32_t)cfg.n_classes);
        if (gyro_tf_forward(m, acts, tok, len, B, T, &drop)) return 1;
        loss = gyro_tf_softmax_xent(dlogits, NULL, gyro_tf_logits(acts), lab, B, cfg.n_classes);
        gyro_optim_zero_grad(&opt);
        gyro_tf_backward(m, acts, &m->grads, dlogits);
        if (gyro_optim_step(&opt, 1.0)) { fprintf(stderr, "%s\n", gyro_error_message()); return 1; }
    }
    double train_s = gyro_now() - t0, train_cpu = cpu_now(CLOCK_PROCESS_CPUTIME_ID) - c0;
    double *lat = malloc((size_t)runs * sizeof *lat);
    for (int r = -10; r < runs; r++) {
        for (int t = 0; t < T; t++) tok[t] = (int32_t)gyro_rng_below(&rng, (uint32_t)cfg.vocab_size);
        double a = cpu_now(CLOCK_THREAD_CPUTIME_ID);
        if (gyro_tf_forward(m, acts1, tok, len, 1, T, NULL)) return 1;
        double e = cpu_now(CLOCK_THREAD_CPUTIME_ID) - a;
        if (r >= 0) lat[r] = e;
    }
    qsort(lat, (size_t)runs, sizeof *lat, cmp_double);
    const double gemm_ms = hyp ? 0.0 : gemm_floor_ms(&cfg, B * T);
    printf("impl=gyro geometry=%s params=%zu steps_per_s=%.3f steps_per_wall_s=%.3f ms_per_step=%.2f "
           "latency_median_ms=%.4f latency_p99_ms=%.4f loss=%.4f gemm_ms=%.3f\n",
           argv[1], m->n_params, steps / train_cpu, steps / train_s, 1e3 * train_cpu / steps, 1e3 * lat[runs / 2],
           1e3 * lat[(int)(0.99 * (runs - 1))], loss, gemm_ms);
    gyro_optim_free(&opt);
    gyro_tf_acts_free(acts);
    gyro_tf_acts_free(acts1);
    gyro_tf_free(m);
    free(tok);
    free(len);
    free(lab);
    free(dlogits);
    free(lat);
    return isfinite(loss) ? 0 : 1;
}

/* check_transformer.c — Check suite for models/transformer: the whole model's gradient checked
 * end to end by finite differences in float64 on tiny configurations (hyperbolic and
 * Euclidean; the seed's block, Möbius and tangent residuals, LayerNorm, ReLU, dropout; MLA
 * attention and MoE feed-forward, together and apart, with the balance loss in the objective),
 * the float32 model against the float64 one, padding and batch independence, the parameter
 * table, configuration and input errors, expert load statistics, and short training runs that
 * must learn a toy task. */
#include <check.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/hyp/lorentz.h"
#include "models/hyp/poincare.h"
#include "models/transformer.h"
#include "tests/support/fd.h"

static gyro_tf_config tiny(gyro_tf_geometry geo)
{
    gyro_tf_config c = gyro_tf_config_default(geo);
    c.vocab_size = 6;
    c.n_classes = 3;
    c.dim = 6;
    c.n_layers = 2;
    c.n_heads = 2;
    c.head_dim = 4; /* A = 8 != C: the attention width is independent of the model width */
    c.ffn_dim = 7;
    c.max_len = 5;
    c.curvature = 1.0f;
    c.pos_scale = (float)sqrt(2.0 / 6);
    return c;
}

/* MLA attention (latent 3, query latent 4, RoPE 2) and/or MoE feed-forward (3 routed experts,
 * 1 shared, top-2, balance 0.1) on a tiny configuration. */
static gyro_tf_config with_blocks(gyro_tf_config c, int mla, int moe)
{
    if (mla) {
        c.attention_kind = GYRO_TF_ATTENTION_MLA;
        c.mla_latent_dim = 3;
        c.mla_q_latent = 4;
        c.mla_rope_dim = 2;
    }
    if (moe) {
        c.ffn_kind = GYRO_TF_FFN_MOE;
        c.moe_experts = 3;
        c.moe_shared = 1;
        c.moe_top_k = 2;
        c.moe_balance = 0.1f;
    }
    return c;
}

static const int32_t TOK[3 * 4] = {1, 2, 3, 4, 5, 0, 9, 9, 2, 2, 1, -7};
static const int LEN[3] = {4, 2, 3};
static const int LAB[3] = {0, 2, 1};

static double loss_f64(gyro_tf_model_f64 *m, gyro_tf_acts_f64 *a, int dropout)
{
    gyro_rng r;
    gyro_rng_seed(&r, 77); /* the same dropout masks on every evaluation */
    ck_assert_int_eq(gyro_tf_forward_f64(m, a, TOK, LEN, 3, 4, dropout ? &r : NULL), GYRO_OK);
    /* the training loss: cross-entropy + the MoE balance loss (0 without MoE) */
    return gyro_tf_softmax_xent_f64(NULL, NULL, gyro_tf_logits_f64(a), LAB, 3, 3) +
           gyro_tf_balance_loss_f64(a);
}

/* loss_f64 as the objective of fd_central. */
typedef struct tf_objective {
    gyro_tf_model_f64 *m;
    gyro_tf_acts_f64 *a;
    int dropout;
} tf_objective;

static double tf_loss(void *vctx)
{
    const tf_objective *o = vctx;
    return loss_f64(o->m, o->a, o->dropout);
}

/* FD over every parameter; returns the max relative error. */
static double fd_model(const gyro_tf_config *cfg, const char *name)
{
    gyro_tf_model_f64 *m = NULL;
    gyro_tf_acts_f64 *a = NULL;
    ck_assert_int_eq(gyro_tf_new_f64(cfg, 42, 1, &m), GYRO_OK);
    /* move the ball biases and MLR offsets off the origin so their gradients are generic */
    gyro_rng r;
    gyro_rng_seed(&r, 5);
    for (int t = 0; t < m->n_tensors; t++) {
        const gyro_tf_tensor *T = &m->tensors[t];
        double *p = m->params_memory + T->offset;
        if (strcmp(T->name, "fcb") == 0 || strcmp(T->name, "fcprojb") == 0 ||
            strcmp(T->name, "mlr_p") == 0 || strcmp(T->name, "ln1b") == 0)
            for (size_t i = 0; i < T->size; i++) p[i] = 0.2 * (2 * gyro_rng_uniform(&r) - 1);
        /* Lorentz: the zero-initialised biases, time vectors, b_t and class biases, and log λ */
        if (strcmp(T->name, "lz_qkv_b") == 0 || strcmp(T->name, "lz_in_v") == 0 ||
            strcmp(T->name, "lz_o_v") == 0 || strcmp(T->name, "lz_f1_b") == 0 ||
            strcmp(T->name, "lz_f2_v") == 0 || strcmp(T->name, "lz_beta") == 0 ||
            strcmp(T->name, "lz_time") == 0)
            for (size_t i = 0; i < T->size; i++) p[i] += 0.2 * (2 * gyro_rng_uniform(&r) - 1);
    }
    ck_assert_int_eq(gyro_tf_acts_new_f64(m, 3, 4, 1, &a), GYRO_OK);
    const int dropout = cfg->dropout > 0;
    loss_f64(m, a, dropout);
    double dlogits[9];
    gyro_tf_softmax_xent_f64(dlogits, NULL, gyro_tf_logits_f64(a), LAB, 3, 3);
    memset(m->grads_memory, 0, m->n_params * sizeof(double));
    gyro_tf_backward_f64(m, a, &m->grads, dlogits);
    /* h balances truncation (h²·f''') against the rounding of a loss of order 1 (1e-16/h);
     * relative errors are taken against max(|num| + |ana|, 1e-2) so the rounding noise of
     * tiny gradients does not count as an error. */
    tf_objective o = {m, a, dropout};
    fd_stats st = {.floor = 1e-2};
    double gnorm = 0;
    for (size_t i = 0; i < m->n_params; i++) {
        const double ana = m->grads_memory[i];
        fd_stats_add(&st, i, fd_central(&m->params_memory[i], 1e-5, tf_loss, &o), ana);
        gnorm += ana * ana;
    }
    const double max_abs = st.max_abs, max_rel = st.max_rel;
    if (cfg->ffn_kind == GYRO_TF_FFN_MOE)
        ck_assert_double_gt(gyro_tf_balance_loss_f64(a), 0); /* part of the checked objective */
    printf("fd model %-34s %5zu params  |g| %.3e  max abs %.3e  max rel %.3e\n", name,
           m->n_params, sqrt(gnorm), max_abs, max_rel);
    ck_assert_double_gt(sqrt(gnorm), 1e-3); /* a vanishing gradient would pass trivially */
    gyro_tf_acts_free_f64(a);
    gyro_tf_free_f64(m);
    return max_rel;
}

#define FD_TOL 1e-5

START_TEST(test_fd_hyperbolic_seed_block)
{
    gyro_tf_config c = tiny(GYRO_TF_GEOMETRY_HYPERBOLIC);
    ck_assert_double_lt(fd_model(&c, "hyperbolic, seed §4.2 block"), FD_TOL);
    c.qkv_tangent = 0; /* models written before qkv_tangent: log0 per head slice */
    ck_assert_double_lt(fd_model(&c, "hyperbolic, seed block, per-slice q|k|v"), FD_TOL);
}
END_TEST

START_TEST(test_fd_hyperbolic_full)
{
    gyro_tf_config c = tiny(GYRO_TF_GEOMETRY_HYPERBOLIC);
    c.residual = GYRO_TF_RESIDUAL_TANGENT;
    c.layernorm = 1;
    c.ffn_activation = GYRO_TF_ACTIVATION_RELU;
    c.dropout = 0.3f;
    c.curvature = 0.7f;
    ck_assert_double_lt(fd_model(&c, "hyperbolic, tangent res + LN + drop"), FD_TOL);
    c.qkv_tangent = 0;
    ck_assert_double_lt(fd_model(&c, "hyperbolic, tangent res + LN + drop, per-slice q|k|v"),
                        FD_TOL);
    c.qkv_tangent = 1;
    c.residual = GYRO_TF_RESIDUAL_MOBIUS;
    c.dropout = 0;
    ck_assert_double_lt(fd_model(&c, "hyperbolic, Mobius res + LN"), FD_TOL);
}
END_TEST

START_TEST(test_fd_euclidean)
{
    gyro_tf_config c = tiny(GYRO_TF_GEOMETRY_EUCLIDEAN);
    c.dropout = 0.2f;
    ck_assert_double_lt(fd_model(&c, "euclidean, default + dropout"), FD_TOL);
    c.residual = GYRO_TF_RESIDUAL_NONE;
    c.layernorm = 0;
    c.dropout = 0;
    ck_assert_double_lt(fd_model(&c, "euclidean, no residual, no LN"), FD_TOL);
}
END_TEST

START_TEST(test_fd_mla_moe)
{
    static const char *kind[4] = {"", "MLA", "MoE", "MLA + MoE"};
    char name[64];
    for (int geo = 0; geo < 2; geo++)
        for (int k = 1; k < 4; k++) {
            gyro_tf_config c = with_blocks(tiny((gyro_tf_geometry)geo), k & 1, k & 2);
            snprintf(name, sizeof name, "%s, %s", geo ? "hyperbolic" : "euclidean", kind[k]);
            ck_assert_double_lt(fd_model(&c, name), FD_TOL);
        }
    /* hyperbolic with tangent residual, LayerNorm, curvature 0.7, dropout on the pooled
     * vector; Euclidean without RoPE, no shared expert, top-1, with dropout */
    gyro_tf_config c = with_blocks(tiny(GYRO_TF_GEOMETRY_HYPERBOLIC), 1, 1);
    c.residual = GYRO_TF_RESIDUAL_TANGENT;
    c.layernorm = 1;
    c.curvature = 0.7f;
    c.dropout = 0.3f;
    ck_assert_double_lt(fd_model(&c, "hyperbolic, MLA + MoE, tan res + LN"), FD_TOL);
    c = with_blocks(tiny(GYRO_TF_GEOMETRY_EUCLIDEAN), 1, 1);
    c.mla_rope_dim = 0;
    c.mla_q_latent = 0;
    c.moe_shared = 0;
    c.moe_top_k = 1;
    c.dropout = 0.2f;
    ck_assert_double_lt(fd_model(&c, "euclidean, MLA + MoE top-1, drop"), FD_TOL);
}
END_TEST

START_TEST(test_f32_matches_f64)
{
    /* Configurations whose tangent vectors stay inside the float32 range of the ball
     * (|v| < artanh(1 − 4e-3) ≈ 3.1); beyond it the two precisions clamp differently.
     * Variants 8..15 repeat 0..7 with MLA and MoE, 16..19 with one of them; 20..27 repeat
     * 0..7 with the per-head-slice q|k|v of models written before qkv_tangent. */
    for (int variant = 0; variant < 28; variant++) {
        const int geo = variant & 1, res = (variant >> 1) % 4;
        gyro_tf_config c = tiny((gyro_tf_geometry)geo);
        if (variant >= 8 && variant < 20)
            c = with_blocks(c, variant < 16 || variant >= 18, variant < 18);
        c.qkv_tangent = variant < 20;
        c.layernorm = res > 0;
        c.residual = res == 3 ? GYRO_TF_RESIDUAL_TANGENT
                     : res == 2 ? GYRO_TF_RESIDUAL_MOBIUS : GYRO_TF_RESIDUAL_NONE;
        gyro_tf_model *m = NULL;
        gyro_tf_model_f64 *md = NULL;
        gyro_tf_acts *a = NULL;
        gyro_tf_acts_f64 *ad = NULL;
        ck_assert_int_eq(gyro_tf_new(&c, 9, 1, &m), GYRO_OK);
        ck_assert_int_eq(gyro_tf_new_f64(&c, 9, 1, &md), GYRO_OK);
        ck_assert_uint_eq(m->n_params, md->n_params);
        for (size_t i = 0; i < m->n_params; i++) /* same seed, same parameters */
            ck_assert(fabs(m->params_memory[i] - md->params_memory[i]) < 1e-6);
        for (size_t i = 0; i < m->n_params; i++)
            md->params_memory[i] = m->params_memory[i];
        ck_assert_int_eq(gyro_tf_acts_new(m, 3, 4, 1, &a), GYRO_OK);
        ck_assert_int_eq(gyro_tf_acts_new_f64(md, 3, 4, 1, &ad), GYRO_OK);
        ck_assert_int_eq(gyro_tf_forward(m, a, TOK, LEN, 3, 4, NULL), GYRO_OK);
        ck_assert_int_eq(gyro_tf_forward_f64(md, ad, TOK, LEN, 3, 4, NULL), GYRO_OK);
        double worst = 0;
        for (int i = 0; i < 9; i++)
            worst = fmax(worst, fabs(gyro_tf_logits(a)[i] - gyro_tf_logits_f64(ad)[i]));
        ck_assert_double_lt(worst, 1e-4);
        /* gradients agree too */
        float dl[9];
        double dld[9];
        gyro_tf_softmax_xent(dl, NULL, gyro_tf_logits(a), LAB, 3, 3);
        gyro_tf_softmax_xent_f64(dld, NULL, gyro_tf_logits_f64(ad), LAB, 3, 3);
        gyro_tf_backward(m, a, &m->grads, dl);
        gyro_tf_backward_f64(md, ad, &md->grads, dld);
        double gw = 0, gm = 0;
        for (size_t i = 0; i < m->n_params; i++) {
            gw = fmax(gw, fabs(m->grads_memory[i] - md->grads_memory[i]));
            gm = fmax(gm, fabs(md->grads_memory[i]));
        }
        ck_assert_double_lt(gw, 1e-3 * gm + 1e-6);
        ck_assert(fabs(gyro_tf_balance_loss(a) - gyro_tf_balance_loss_f64(ad)) < 1e-5);
        gyro_tf_acts_free(a);
        gyro_tf_acts_free_f64(ad);
        gyro_tf_free(m);
        gyro_tf_free_f64(md);
    }
}
END_TEST

/* A sequence's logits do not depend on its padding, on T, or on the other sequences. */
START_TEST(test_padding_and_batch_independence)
{
    for (int variant = 0; variant < 4; variant++) {
        const int geo = variant & 1;
        gyro_tf_config c = tiny((gyro_tf_geometry)geo);
        if (variant >= 2)
            c = with_blocks(c, 1, 1);
        gyro_tf_model *m = NULL;
        gyro_tf_acts *a = NULL;
        ck_assert_int_eq(gyro_tf_new(&c, 3, 0, &m), GYRO_OK);
        ck_assert_int_eq(gyro_tf_acts_new(m, 3, 5, 0, &a), GYRO_OK);
        ck_assert_int_eq(gyro_tf_forward(m, a, TOK, LEN, 3, 4, NULL), GYRO_OK);
        float batch[9];
        memcpy(batch, gyro_tf_logits(a), sizeof batch);
        const int32_t one[2] = {5, 0};
        const int len2 = 2;
        ck_assert_int_eq(gyro_tf_forward(m, a, one, &len2, 1, 2, NULL), GYRO_OK);
        for (int k = 0; k < 3; k++)
            ck_assert(fabsf(gyro_tf_logits(a)[k] - batch[3 + k]) < 1e-5f);
        const int32_t padded[5] = {5, 0, 3, 3, 1};
        ck_assert_int_eq(gyro_tf_forward(m, a, padded, &len2, 1, 5, NULL), GYRO_OK);
        for (int k = 0; k < 3; k++)
            ck_assert(fabsf(gyro_tf_logits(a)[k] - batch[3 + k]) < 1e-5f);
        for (int k = 0; k < 9; k++)
            ck_assert(isfinite(batch[k]));
        gyro_tf_acts_free(a);
        gyro_tf_free(m);
    }
}
END_TEST

START_TEST(test_tensor_table)
{
    gyro_tf_config c = tiny(GYRO_TF_GEOMETRY_HYPERBOLIC);
    gyro_tf_tensor t[GYRO_TF_MAX_TENSORS];
    int n = gyro_tf_tensor_table(&c, t);
    ck_assert_int_eq(n, 9); /* no LayerNorm tensors */
    size_t off = 0;
    int balls = 0;
    for (int i = 0; i < n; i++) {
        ck_assert_uint_eq(t[i].offset, off);
        ck_assert_uint_eq(t[i].size, (size_t)t[i].rows * t[i].cols);
        off += t[i].size;
        if (t[i].manifold == GYRO_TF_MANIFOLD_BALL) {
            balls++;
            ck_assert(!strcmp(t[i].name, "wte") || !strcmp(t[i].name, "fcb") ||
                      !strcmp(t[i].name, "fcprojb") || !strcmp(t[i].name, "mlr_p"));
        }
    }
    ck_assert_int_eq(balls, 4);
    ck_assert_uint_eq(off, gyro_tf_param_count(&c));
    c.layernorm = 1;
    c.geometry = GYRO_TF_GEOMETRY_EUCLIDEAN;
    n = gyro_tf_tensor_table(&c, t);
    ck_assert_int_eq(n, 13);
    for (int i = 0; i < n; i++)
        ck_assert_int_eq(t[i].manifold, GYRO_TF_MANIFOLD_EUCLIDEAN);
    /* carving: named pointers at the table's offsets; ball rows inside the ball */
    gyro_tf_model *m = NULL;
    c.geometry = GYRO_TF_GEOMETRY_HYPERBOLIC;
    ck_assert_int_eq(gyro_tf_new(&c, 1, 1, &m), GYRO_OK);
    ck_assert_ptr_eq(m->params.wte, m->params_memory);
    ck_assert_ptr_eq(m->params.mlr_p, m->params_memory + m->tensors[m->n_tensors - 1].offset);
    ck_assert_ptr_eq(m->grads.mlr_p, m->grads_memory + m->tensors[m->n_tensors - 1].offset);
    for (int v = 0; v < c.vocab_size; v++) {
        double s = 0;
        for (int i = 0; i < c.dim; i++) s += (double)m->params.wte[v * c.dim + i] * m->params.wte[v * c.dim + i];
        ck_assert(s > 0 && s < 1);
    }
    gyro_tf_model *m2 = NULL, *m3 = NULL;
    ck_assert_int_eq(gyro_tf_new(&c, 1, 0, &m2), GYRO_OK);
    ck_assert_int_eq(gyro_tf_new(&c, 2, 0, &m3), GYRO_OK);
    ck_assert_ptr_null(m2->grads_memory);
    ck_assert_int_eq(memcmp(m->params_memory, m2->params_memory, m->n_params * sizeof(float)), 0);
    ck_assert_int_ne(memcmp(m->params_memory, m3->params_memory, m->n_params * sizeof(float)), 0);
    gyro_tf_free(m);
    gyro_tf_free(m2);
    gyro_tf_free(m3);
    gyro_tf_free(NULL);
}
END_TEST

/* MLA / MoE tensors replace the attention / FFN tensors, are Euclidean, one row per layer of
 * the kernels' parameter block size. */
START_TEST(test_tensor_table_mla_moe)
{
    for (int geo = 0; geo < 2; geo++) {
        gyro_tf_config c = with_blocks(tiny((gyro_tf_geometry)geo), 1, 1);
        gyro_tf_tensor t[GYRO_TF_MAX_TENSORS];
        int n = gyro_tf_tensor_table(&c, t);
        const int ln = 4 * c.layernorm; /* ln1g, ln1b, ln2g, ln2b (the Euclidean default) */
        ck_assert_int_eq(n, 5 + ln); /* wte, mla, moe, mlr_a, mlr_p */
        size_t off = 0;
        int balls = 0, seen = 0;
        for (int i = 0; i < n; i++) {
            ck_assert_uint_eq(t[i].offset, off);
            off += t[i].size;
            ck_assert(strcmp(t[i].name, "qkvw") && strcmp(t[i].name, "fcw"));
            balls += t[i].manifold == GYRO_TF_MANIFOLD_BALL;
            if (!strcmp(t[i].name, "mla") || !strcmp(t[i].name, "moe")) {
                seen++;
                ck_assert_int_eq(t[i].manifold, GYRO_TF_MANIFOLD_EUCLIDEAN);
                ck_assert_int_eq(t[i].rows, c.n_layers);
            }
        }
        ck_assert_int_eq(seen, 2);
        ck_assert_int_eq(balls, geo ? 2 : 0); /* wte and mlr_p */
        ck_assert_uint_eq(off, gyro_tf_param_count(&c));
        /* MLA: dq 4x6, uq 8x4, qr 4x4, dkv 3x6, uk 8x3, uv 8x3, kr 2x6, o 6x8 = 198;
         * MoE: 4 experts x (7x6 + 7 + 6x7 + 6) + centroids 3x6 = 406 */
        gyro_tf_model *m = NULL;
        ck_assert_int_eq(gyro_tf_new(&c, 1, 1, &m), GYRO_OK);
        ck_assert_ptr_null(m->params.qkvw);
        ck_assert_ptr_null(m->params.fcw);
        ck_assert_ptr_null(m->params.fcb);
        ck_assert_ptr_nonnull(m->params.mla);
        ck_assert_ptr_nonnull(m->grads.moe);
        for (int i = 0; i < n; i++) {
            if (!strcmp(t[i].name, "mla")) ck_assert_int_eq(t[i].cols, 198);
            if (!strcmp(t[i].name, "moe")) ck_assert_int_eq(t[i].cols, 406);
        }
        gyro_tf_free(m);
        /* MLA only / MoE only */
        c = with_blocks(tiny((gyro_tf_geometry)geo), 1, 0);
        ck_assert_int_eq(gyro_tf_tensor_table(&c, t), 8 + ln);
        c = with_blocks(tiny((gyro_tf_geometry)geo), 0, 1);
        ck_assert_int_eq(gyro_tf_tensor_table(&c, t), 6 + ln);
    }
}
END_TEST

/* Expert load of the last forward: K routings per valid token per layer, padding excluded;
 * the balance loss is positive and scales with the coefficient; the load line. */
START_TEST(test_expert_load)
{
    gyro_tf_config c = with_blocks(tiny(GYRO_TF_GEOMETRY_HYPERBOLIC), 0, 1);
    gyro_tf_model *m = NULL;
    gyro_tf_acts *a = NULL;
    ck_assert_int_eq(gyro_tf_new(&c, 2, 0, &m), GYRO_OK);
    ck_assert_int_eq(gyro_tf_acts_new(m, 3, 4, 0, &a), GYRO_OK);
    ck_assert_int_eq(gyro_tf_forward(m, a, TOK, LEN, 3, 4, NULL), GYRO_OK);
    const long *load = gyro_tf_expert_load(a);
    ck_assert_ptr_nonnull(load);
    for (int l = 0; l < c.n_layers; l++) {
        long sum = 0;
        for (int i = 0; i < c.moe_experts; i++) {
            ck_assert_int_ge(load[l * c.moe_experts + i], 0);
            sum += load[l * c.moe_experts + i];
        }
        ck_assert_int_eq(sum, (long)c.moe_top_k * (4 + 2 + 3));
    }
    const double bal = gyro_tf_balance_loss(a);
    ck_assert_double_gt(bal, 0);
    char line[128];
    gyro_tf_expert_load_format(line, sizeof line, load, &c);
    printf("expert load: %s  balance %.4f\n", line, bal);
    ck_assert_ptr_nonnull(strstr(line, "L0 "));
    ck_assert_ptr_nonnull(strstr(line, " L1 "));
    ck_assert_int_eq(line[strlen(line) - 1], '%');
    char tiny_buf[6];
    gyro_tf_expert_load_format(tiny_buf, sizeof tiny_buf, load, &c); /* truncates safely */
    ck_assert_uint_lt(strlen(tiny_buf), sizeof tiny_buf);
    /* padding neither routes nor counts: one sequence alone, exact and padded */
    const int32_t one[5] = {5, 0, 3, 3, 1};
    const int len2 = 2;
    long load1[6];
    ck_assert_int_eq(gyro_tf_forward(m, a, one, &len2, 1, 2, NULL), GYRO_OK);
    const double bal1 = gyro_tf_balance_loss(a);
    memcpy(load1, gyro_tf_expert_load(a), sizeof load1);
    ck_assert_int_eq(gyro_tf_forward(m, a, one, &len2, 1, 4, NULL), GYRO_OK);
    ck_assert(fabs(gyro_tf_balance_loss(a) - bal1) < 1e-6);
    ck_assert_int_eq(memcmp(load1, gyro_tf_expert_load(a), sizeof load1), 0);
    gyro_tf_free(m);
    gyro_tf_acts_free(a);
    /* twice the coefficient, twice the balance loss (same routing) */
    c.moe_balance *= 2;
    ck_assert_int_eq(gyro_tf_new(&c, 2, 0, &m), GYRO_OK);
    ck_assert_int_eq(gyro_tf_acts_new(m, 3, 4, 0, &a), GYRO_OK);
    ck_assert_int_eq(gyro_tf_forward(m, a, TOK, LEN, 3, 4, NULL), GYRO_OK);
    ck_assert(fabs(gyro_tf_balance_loss(a) - 2 * bal) < 1e-6);
    gyro_tf_acts_free(a);
    gyro_tf_free(m);
    /* without MoE: no load, no balance loss */
    c = tiny(GYRO_TF_GEOMETRY_HYPERBOLIC);
    ck_assert_int_eq(gyro_tf_new(&c, 2, 0, &m), GYRO_OK);
    ck_assert_int_eq(gyro_tf_acts_new(m, 3, 4, 0, &a), GYRO_OK);
    ck_assert_int_eq(gyro_tf_forward(m, a, TOK, LEN, 3, 4, NULL), GYRO_OK);
    ck_assert_ptr_null(gyro_tf_expert_load(a));
    ck_assert_double_eq(gyro_tf_balance_loss(a), 0);
    gyro_tf_expert_load_format(line, sizeof line, NULL, &c);
    ck_assert_str_eq(line, "");
    gyro_tf_acts_free(a);
    gyro_tf_free(m);
}
END_TEST

START_TEST(test_config_errors)
{
    gyro_tf_config c = tiny(GYRO_TF_GEOMETRY_HYPERBOLIC);
    ck_assert_int_eq(gyro_tf_config_validate(&c), GYRO_OK);
    gyro_tf_config b;
    b = c; b.n_heads = 0; ck_assert_int_eq(gyro_tf_config_validate(&b), GYRO_ERR_USAGE);
    b = c; b.dropout = 1.0f; ck_assert_int_eq(gyro_tf_config_validate(&b), GYRO_ERR_USAGE);
    b = c; b.dropout = NAN; ck_assert_int_eq(gyro_tf_config_validate(&b), GYRO_ERR_USAGE);
    b = c; b.curvature = 0; ck_assert_int_eq(gyro_tf_config_validate(&b), GYRO_ERR_USAGE);
    b = c; b.vocab_size = 0; ck_assert_int_eq(gyro_tf_config_validate(&b), GYRO_ERR_USAGE);
    b = c; b.residual = 9; ck_assert_int_eq(gyro_tf_config_validate(&b), GYRO_ERR_USAGE);
    /* MLA / MoE: their options are checked, and refused with the other block kinds */
    b = with_blocks(c, 1, 1); ck_assert_int_eq(gyro_tf_config_validate(&b), GYRO_OK);
    b = c; b.attention_kind = GYRO_TF_ATTENTION_MLA; /* latent 0 */
    ck_assert_int_eq(gyro_tf_config_validate(&b), GYRO_ERR_USAGE);
    ck_assert_ptr_nonnull(strstr(gyro_error_message(), "mla_latent_dim"));
    b = c; b.attention_kind = 2; ck_assert_int_eq(gyro_tf_config_validate(&b), GYRO_ERR_USAGE);
    b = with_blocks(c, 1, 0); b.mla_rope_dim = 3;
    ck_assert_int_eq(gyro_tf_config_validate(&b), GYRO_ERR_USAGE);
    b = with_blocks(c, 1, 0); b.mla_q_latent = -1;
    ck_assert_int_eq(gyro_tf_config_validate(&b), GYRO_ERR_USAGE);
    b = c; b.mla_latent_dim = 4; ck_assert_int_eq(gyro_tf_config_validate(&b), GYRO_ERR_USAGE);
    ck_assert_ptr_nonnull(strstr(gyro_error_message(), "attention kind MLA"));
    b = c; b.ffn_kind = GYRO_TF_FFN_MOE; ck_assert_int_eq(gyro_tf_config_validate(&b), GYRO_ERR_USAGE);
    b = with_blocks(c, 0, 1); b.moe_top_k = 4;
    ck_assert_int_eq(gyro_tf_config_validate(&b), GYRO_ERR_USAGE);
    b = with_blocks(c, 0, 1); b.moe_experts = 257;
    ck_assert_int_eq(gyro_tf_config_validate(&b), GYRO_ERR_USAGE);
    b = with_blocks(c, 0, 1); b.moe_shared = -1;
    ck_assert_int_eq(gyro_tf_config_validate(&b), GYRO_ERR_USAGE);
    b = with_blocks(c, 0, 1); b.moe_balance = -0.1f;
    ck_assert_int_eq(gyro_tf_config_validate(&b), GYRO_ERR_USAGE);
    b = with_blocks(c, 0, 1); b.moe_balance = NAN;
    ck_assert_int_eq(gyro_tf_config_validate(&b), GYRO_ERR_USAGE);
    b = c; b.moe_experts = 4; ck_assert_int_eq(gyro_tf_config_validate(&b), GYRO_ERR_USAGE);
    ck_assert_ptr_nonnull(strstr(gyro_error_message(), "feed-forward kind MoE"));
    b = c; b.moe_balance = 0.01f; ck_assert_int_eq(gyro_tf_config_validate(&b), GYRO_ERR_USAGE);
    gyro_tf_model *m = (gyro_tf_model *)&c;
    b = c; b.dim = -3; ck_assert_int_eq(gyro_tf_new(&b, 1, 0, &m), GYRO_ERR_USAGE);
    ck_assert_ptr_null(m);
    gyro_tf_config d = gyro_tf_config_default(GYRO_TF_GEOMETRY_HYPERBOLIC);
    ck_assert_int_eq(d.dim, 100);
    ck_assert_int_eq(d.n_heads, 16);
    ck_assert_int_eq(d.n_layers, 3);
}
END_TEST

START_TEST(test_input_errors)
{
    gyro_tf_config c = tiny(GYRO_TF_GEOMETRY_HYPERBOLIC);
    c.dropout = 0.3f;
    gyro_tf_model *m = NULL;
    gyro_tf_acts *a = NULL;
    ck_assert_int_eq(gyro_tf_new(&c, 3, 0, &m), GYRO_OK);
    ck_assert_int_eq(gyro_tf_acts_new(m, 2, 4, 0, &a), GYRO_OK);
    int32_t tok[4] = {1, 2, 6, 0};
    int len = 3;
    ck_assert_int_eq(gyro_tf_forward(m, a, tok, &len, 1, 4, NULL), GYRO_ERR_DATA);
    ck_assert_ptr_nonnull(strstr(gyro_error_message(), "token id 6"));
    tok[2] = 1;
    len = 0;
    ck_assert_int_eq(gyro_tf_forward(m, a, tok, &len, 1, 4, NULL), GYRO_ERR_DATA);
    len = 5;
    ck_assert_int_eq(gyro_tf_forward(m, a, tok, &len, 1, 4, NULL), GYRO_ERR_DATA);
    len = 3;
    ck_assert_int_eq(gyro_tf_forward(m, a, tok, &len, 3, 4, NULL), GYRO_ERR_USAGE);
    ck_assert_int_eq(gyro_tf_forward(m, a, tok, &len, 1, 5, NULL), GYRO_ERR_USAGE);
    gyro_rng r;
    gyro_rng_seed(&r, 1);
    ck_assert_int_eq(gyro_tf_forward(m, a, tok, &len, 1, 4, &r), GYRO_ERR_USAGE);
    ck_assert_int_eq(gyro_tf_forward(m, a, tok, &len, 1, 4, NULL), GYRO_OK);
    gyro_tf_acts *bad = (gyro_tf_acts *)1;
    ck_assert_int_eq(gyro_tf_acts_new(m, 0, 4, 0, &bad), GYRO_ERR_USAGE);
    ck_assert_ptr_null(bad);
    ck_assert_int_eq(gyro_tf_acts_new(m, 1, 6, 0, &bad), GYRO_ERR_USAGE);
    gyro_tf_acts_free(a);
    gyro_tf_acts_free(NULL);
    gyro_tf_free(m);
}
END_TEST

/* Backward into a separately carved block gives the same gradients as into m->grads, and
 * accumulates (+=). */
START_TEST(test_carved_grad_block)
{
    /* _i: 0 dense Euclidean, 1 MLA + MoE hyperbolic (the balance gradient accumulates too) */
    gyro_tf_config c = tiny(GYRO_TF_GEOMETRY_EUCLIDEAN);
    if (_i == 1)
        c = with_blocks(tiny(GYRO_TF_GEOMETRY_HYPERBOLIC), 1, 1);
    gyro_tf_model *m = NULL;
    gyro_tf_acts *a = NULL;
    ck_assert_int_eq(gyro_tf_new(&c, 4, 1, &m), GYRO_OK);
    ck_assert_int_eq(gyro_tf_acts_new(m, 3, 4, 1, &a), GYRO_OK);
    float *blk = calloc(m->n_params, sizeof(float));
    gyro_tf_params g;
    gyro_tf_carve(&c, blk, &g);
    ck_assert_int_eq(gyro_tf_forward(m, a, TOK, LEN, 3, 4, NULL), GYRO_OK);
    float dl[9];
    gyro_tf_softmax_xent(dl, NULL, gyro_tf_logits(a), LAB, 3, 3);
    gyro_tf_backward(m, a, &m->grads, dl);
    gyro_tf_backward(m, a, &g, dl);
    gyro_tf_backward(m, a, &g, dl);
    for (size_t i = 0; i < m->n_params; i++)
        ck_assert(fabsf(blk[i] - 2 * m->grads_memory[i]) <= 1e-6f * (1 + fabsf(blk[i])));
    free(blk);
    gyro_tf_acts_free(a);
    gyro_tf_free(m);
}
END_TEST

/* Activations sized larger than the batch (and a second, smaller batch through the same
 * activations) give the same logits and gradients as exactly sized ones; a model without
 * layers (embedding, pooling, MLR) works too. */
START_TEST(test_acts_larger_than_batch)
{
    for (int variant = 0; variant < 3; variant++) {
        const int layers = variant == 0 ? 0 : 2;
        gyro_tf_config c = tiny(GYRO_TF_GEOMETRY_HYPERBOLIC);
        if (variant == 2)
            c = with_blocks(c, 1, 1);
        c.n_layers = layers;
        c.layernorm = 1;
        c.residual = GYRO_TF_RESIDUAL_TANGENT;
        gyro_tf_model_f64 *m = NULL;
        gyro_tf_acts_f64 *a = NULL, *big = NULL;
        ck_assert_int_eq(gyro_tf_new_f64(&c, 8, 1, &m), GYRO_OK);
        ck_assert_int_eq(gyro_tf_acts_new_f64(m, 3, 4, 1, &a), GYRO_OK);
        ck_assert_int_eq(gyro_tf_acts_new_f64(m, 7, 5, 1, &big), GYRO_OK);
        double *g1 = calloc(m->n_params, sizeof(double)), *g2 = calloc(m->n_params, sizeof(double));
        gyro_tf_params_f64 p1, p2;
        gyro_tf_carve_f64(&c, g1, &p1);
        gyro_tf_carve_f64(&c, g2, &p2);
        double dl[9];
        ck_assert_int_eq(gyro_tf_forward_f64(m, a, TOK, LEN, 3, 4, NULL), GYRO_OK);
        gyro_tf_softmax_xent_f64(dl, NULL, gyro_tf_logits_f64(a), LAB, 3, 3);
        gyro_tf_backward_f64(m, a, &p1, dl);
        const int32_t other[5 * 5] = {0};
        const int olen[5] = {5, 5, 5, 5, 5};
        ck_assert_int_eq(gyro_tf_forward_f64(m, big, other, olen, 5, 5, NULL), GYRO_OK);
        ck_assert_int_eq(gyro_tf_forward_f64(m, big, TOK, LEN, 3, 4, NULL), GYRO_OK);
        for (int i = 0; i < 9; i++)
            ck_assert(fabs(gyro_tf_logits_f64(big)[i] - gyro_tf_logits_f64(a)[i]) < 1e-12);
        gyro_tf_backward_f64(m, big, &p2, dl);
        for (size_t i = 0; i < m->n_params; i++)
            ck_assert(fabs(g1[i] - g2[i]) < 1e-12);
        free(g1);
        free(g2);
        gyro_tf_acts_free_f64(a);
        gyro_tf_acts_free_f64(big);
        gyro_tf_free_f64(m);
    }
}
END_TEST

/* Threads share one model, each with its own activations: results equal the sequential ones. */
typedef struct tf_thread_job {
    const gyro_tf_model *m;
    int seed;
    float logits[8][3];
    int status;
} tf_thread_job;

static void *tf_thread_run(void *arg)
{
    tf_thread_job *j = arg;
    gyro_tf_acts *a = NULL;
    j->status = gyro_tf_acts_new(j->m, 1, 5, 0, &a);
    for (int it = 0; it < 8 && j->status == GYRO_OK; it++) {
        int32_t tok[5];
        int len = 1 + (j->seed + it) % 5;
        for (int t = 0; t < 5; t++) tok[t] = (j->seed * 7 + it * 3 + t) % 6;
        for (int rep = 0; rep < 50 && j->status == GYRO_OK; rep++)
            j->status = gyro_tf_forward(j->m, a, tok, &len, 1, 5, NULL);
        memcpy(j->logits[it], gyro_tf_logits(a), sizeof j->logits[it]);
    }
    gyro_tf_acts_free(a);
    return NULL;
}

START_TEST(test_threads_share_model)
{
    gyro_tf_config c = tiny(GYRO_TF_GEOMETRY_HYPERBOLIC);
    if (_i == 1)
        c = with_blocks(c, 1, 1);
    gyro_tf_model *m = NULL;
    ck_assert_int_eq(gyro_tf_new(&c, 5, 0, &m), GYRO_OK);
    tf_thread_job seq[4], par[4];
    pthread_t th[4];
    for (int i = 0; i < 4; i++) {
        seq[i] = (tf_thread_job){.m = m, .seed = i};
        tf_thread_run(&seq[i]);
        par[i] = (tf_thread_job){.m = m, .seed = i};
    }
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(pthread_create(&th[i], NULL, tf_thread_run, &par[i]), 0);
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < 4; i++) {
        ck_assert_int_eq(par[i].status, GYRO_OK);
        ck_assert_int_eq(memcmp(seq[i].logits, par[i].logits, sizeof seq[i].logits), 0);
    }
    gyro_tf_free(m);
}
END_TEST

/* The Lorentz geometry end to end: every parameter (token, position and class points
 * included, as ambient coordinates) against central differences in float64, with and
 * without the residual, ReLU and dropout. */
START_TEST(test_fd_lorentz)
{
    gyro_tf_config c = tiny(GYRO_TF_GEOMETRY_LORENTZ);
    ck_assert_double_lt(fd_model(&c, "lorentz (residual, ReLU)"), FD_TOL);
    c.dropout = 0.3f;
    ck_assert_double_lt(fd_model(&c, "lorentz + dropout"), FD_TOL);
    c.dropout = 0;
    c.residual = GYRO_TF_RESIDUAL_NONE;
    c.ffn_activation = GYRO_TF_ACTIVATION_IDENTITY;
    c.curvature = 2.0f;
    ck_assert_double_lt(fd_model(&c, "lorentz (no residual, c = 2)"), FD_TOL);
    c = tiny(GYRO_TF_GEOMETRY_LORENTZ);
    c.n_layers = 0;
    ck_assert_double_lt(fd_model(&c, "lorentz (no layer)"), FD_TOL);
}
END_TEST

/* Lorentz: float32 against float64, and padding / batch independence. */
START_TEST(test_lorentz_f32_padding)
{
    gyro_tf_config c = tiny(GYRO_TF_GEOMETRY_LORENTZ);
    gyro_tf_model *m = NULL;
    gyro_tf_model_f64 *md = NULL;
    gyro_tf_acts *a = NULL;
    gyro_tf_acts_f64 *ad = NULL;
    ck_assert_int_eq(gyro_tf_new(&c, 9, 1, &m), GYRO_OK);
    ck_assert_int_eq(gyro_tf_new_f64(&c, 9, 1, &md), GYRO_OK);
    for (size_t i = 0; i < m->n_params; i++)
        md->params_memory[i] = m->params_memory[i];
    ck_assert_int_eq(gyro_tf_acts_new(m, 3, 5, 1, &a), GYRO_OK);
    ck_assert_int_eq(gyro_tf_acts_new_f64(md, 3, 5, 1, &ad), GYRO_OK);
    ck_assert_int_eq(gyro_tf_forward(m, a, TOK, LEN, 3, 4, NULL), GYRO_OK);
    ck_assert_int_eq(gyro_tf_forward_f64(md, ad, TOK, LEN, 3, 4, NULL), GYRO_OK);
    float batch[9];
    memcpy(batch, gyro_tf_logits(a), sizeof batch);
    for (int i = 0; i < 9; i++)
        ck_assert(fabs(batch[i] - gyro_tf_logits_f64(ad)[i]) < 1e-4);
    float dl[9];
    double dld[9];
    gyro_tf_softmax_xent(dl, NULL, gyro_tf_logits(a), LAB, 3, 3);
    gyro_tf_softmax_xent_f64(dld, NULL, gyro_tf_logits_f64(ad), LAB, 3, 3);
    gyro_tf_backward(m, a, &m->grads, dl);
    gyro_tf_backward_f64(md, ad, &md->grads, dld);
    double gw = 0, gm = 0;
    for (size_t i = 0; i < m->n_params; i++) {
        gw = fmax(gw, fabs(m->grads_memory[i] - md->grads_memory[i]));
        gm = fmax(gm, fabs(md->grads_memory[i]));
    }
    ck_assert_double_gt(gm, 1e-3);
    ck_assert_double_lt(gw, 1e-3 * gm + 1e-6);
    /* the pooled points lie on the hyperboloid ⟨x,x⟩_L = −1/c */
    for (int b = 0; b < 3; b++) {
        const float *x = gyro_tf_head_input(a) + b * 7;
        double q = -(double)x[0] * x[0];
        for (int j = 1; j < 7; j++) q += (double)x[j] * x[j];
        ck_assert(fabs(q + 1.0) < 1e-5 * x[0] * x[0]);
    }
    const int32_t one[2] = {5, 0};
    const int len2 = 2;
    ck_assert_int_eq(gyro_tf_forward(m, a, one, &len2, 1, 2, NULL), GYRO_OK);
    for (int k = 0; k < 3; k++)
        ck_assert(fabsf(gyro_tf_logits(a)[k] - batch[3 + k]) < 1e-5f);
    const int32_t padded[5] = {5, 0, 3, 3, 1};
    ck_assert_int_eq(gyro_tf_forward(m, a, padded, &len2, 1, 5, NULL), GYRO_OK);
    for (int k = 0; k < 3; k++)
        ck_assert(fabsf(gyro_tf_logits(a)[k] - batch[3 + k]) < 1e-5f);
    /* configuration: no LayerNorm, MLA or MoE in the Lorentz geometry */
    c.layernorm = 1;
    ck_assert_int_eq(gyro_tf_config_validate(&c), GYRO_ERR_USAGE);
    c.layernorm = 0;
    c = with_blocks(c, 1, 0);
    ck_assert_int_eq(gyro_tf_config_validate(&c), GYRO_ERR_USAGE);
    gyro_tf_acts_free(a);
    gyro_tf_acts_free_f64(ad);
    gyro_tf_free(m);
    gyro_tf_free_f64(md);
}
END_TEST

START_TEST(test_geometry_names)
{
    gyro_tf_geometry g = GYRO_TF_GEOMETRY_EUCLIDEAN;
    ck_assert_int_eq(gyro_tf_geometry_parse("lorentz", &g), GYRO_OK);
    ck_assert_int_eq(g, GYRO_TF_GEOMETRY_LORENTZ);
    ck_assert_int_eq(gyro_tf_geometry_parse("hyperbolic", &g), GYRO_OK);
    ck_assert_int_eq(g, GYRO_TF_GEOMETRY_HYPERBOLIC);
    ck_assert_int_eq(gyro_tf_geometry_parse("euclidean", &g), GYRO_OK);
    ck_assert_int_eq(g, GYRO_TF_GEOMETRY_EUCLIDEAN);
    ck_assert_int_eq(gyro_tf_geometry_parse("klein", &g), GYRO_ERR_USAGE);
    ck_assert_int_eq(g, GYRO_TF_GEOMETRY_EUCLIDEAN);
    for (int k = 0; k < 3; k++) {
        ck_assert_int_eq(gyro_tf_geometry_parse(gyro_tf_geometry_name(k), &g), GYRO_OK);
        ck_assert_int_eq((int)g, k);
    }
    ck_assert_ptr_null(gyro_tf_geometry_name(3));
}
END_TEST

/* Learn a toy task: the class is the position class of the largest token. RMSProp-free plain
 * SGD (Euclidean tensors) and Riemannian SGD (ball tensors) must bring the loss far down. */
static double train_toy(gyro_tf_geometry geo, int blocks)
{
    gyro_tf_config c = gyro_tf_config_default(geo);
    c.vocab_size = 8;
    c.n_classes = 3;
    c.dim = 16;
    c.n_layers = 1;
    c.n_heads = 2;
    c.head_dim = 8;
    c.ffn_dim = 16;
    c.max_len = 6;
    c.pos_scale = (float)sqrt(2.0 / 16);
    if (blocks) { /* MLA latent 8 + MoE: 4 experts, top-1 (the seed's RL block, smaller) */
        c.attention_kind = GYRO_TF_ATTENTION_MLA;
        c.mla_latent_dim = 8;
        c.mla_rope_dim = 4;
        c.ffn_kind = GYRO_TF_FFN_MOE;
        c.moe_experts = 4;
        c.moe_top_k = 1;
        c.moe_balance = 0.01f;
    }
    long load[4] = {0};
    gyro_tf_model *m = NULL;
    gyro_tf_acts *a = NULL;
    ck_assert_int_eq(gyro_tf_new(&c, 11, 1, &m), GYRO_OK);
    ck_assert_int_eq(gyro_tf_acts_new(m, 32, 6, 1, &a), GYRO_OK);
    gyro_rng r;
    gyro_rng_seed(&r, 3);
    int32_t tok[32 * 6];
    int len[32], lab[32];
    float dl[32 * 3];
    double first = 0, last = 0;
    const float lr = geo == GYRO_TF_GEOMETRY_EUCLIDEAN ? 0.3f : 0.05f;
    for (int step = 0; step < 300; step++) {
        for (int b = 0; b < 32; b++) {
            len[b] = 2 + (int)gyro_rng_below(&r, 5);
            lab[b] = (int)gyro_rng_below(&r, 3);
            for (int t = 0; t < 6; t++)
                tok[b * 6 + t] = t < len[b] ? (int32_t)gyro_rng_below(&r, 5) : 0;
            tok[b * 6 + (int)gyro_rng_below(&r, (uint32_t)len[b])] = 5 + lab[b]; /* the cue */
        }
        ck_assert_int_eq(gyro_tf_forward(m, a, tok, len, 32, 6, NULL), GYRO_OK);
        double loss = gyro_tf_softmax_xent(dl, NULL, gyro_tf_logits(a), lab, 32, 3);
        ck_assert(isfinite(loss));
        if (blocks) {
            ck_assert(isfinite(gyro_tf_balance_loss(a)));
            for (int i = 0; i < 4; i++)
                load[i] += gyro_tf_expert_load(a)[i];
        }
        if (step < 10) first += loss / 10;
        if (step >= 290) last += loss / 10;
        memset(m->grads_memory, 0, m->n_params * sizeof(float));
        gyro_tf_backward(m, a, &m->grads, dl);
        for (int t = 0; t < m->n_tensors; t++) {
            const gyro_tf_tensor *T = &m->tensors[t];
            float *p = m->params_memory + T->offset, *g = m->grads_memory + T->offset;
            if (T->manifold == GYRO_TF_MANIFOLD_LORENTZ)
                for (int i = 0; i < T->rows; i++) /* RSGD on the hyperboloid (c = 1) */
                    gyro_lorentz_rsgd_step_f32(p + (size_t)i * T->cols, p + (size_t)i * T->cols,
                                               g + (size_t)i * T->cols, lr, 1.0f, T->cols - 1);
            else if (T->manifold == GYRO_TF_MANIFOLD_BALL)
                gyro_poincare_rsgd_step_batch_f32(p, p, g, c.curvature, lr, T->rows, T->cols);
            else
                for (size_t i = 0; i < T->size; i++) p[i] -= lr * g[i];
        }
    }
    char line[64] = "";
    if (blocks)
        gyro_tf_expert_load_format(line, sizeof line, load, &c);
    if (geo == GYRO_TF_GEOMETRY_LORENTZ) {
        /* outputs and point parameters stay on the hyperboloid ⟨x,x⟩_L = −1 */
        double worst = 0;
        for (int b = 0; b < 32; b++) {
            const float *x = gyro_tf_head_input(a) + b * (c.dim + 1);
            double q = -(double)x[0] * x[0];
            for (int j = 1; j <= c.dim; j++) q += (double)x[j] * x[j];
            worst = fmax(worst, fabs(q + 1.0) / fmax(1.0, (double)x[0] * x[0]));
        }
        for (int t = 0; t < m->n_tensors; t++) {
            const gyro_tf_tensor *T = &m->tensors[t];
            if (T->manifold != GYRO_TF_MANIFOLD_LORENTZ) continue;
            for (int i = 0; i < T->rows; i++) {
                const float *x = m->params_memory + T->offset + (size_t)i * T->cols;
                double q = -(double)x[0] * x[0];
                for (int j = 1; j < T->cols; j++) q += (double)x[j] * x[j];
                worst = fmax(worst, fabs(q + 1.0) / fmax(1.0, (double)x[0] * x[0]));
            }
        }
        printf("toy training (lorentz): worst relative |<x,x>_L + 1| %.2e\n", worst);
        ck_assert_double_lt(worst, 1e-5);
    }
    printf("toy training (%s%s): loss %.3f -> %.3f %s\n", gyro_tf_geometry_name(geo),
           blocks ? ", MLA + MoE" : "", first, last, line);
    gyro_tf_acts_free(a);
    gyro_tf_free(m);
    return last / first;
}

START_TEST(test_learns_toy_task)
{
    ck_assert_double_lt(train_toy(GYRO_TF_GEOMETRY_EUCLIDEAN, 0), 0.3);
    ck_assert_double_lt(train_toy(GYRO_TF_GEOMETRY_HYPERBOLIC, 0), 0.3);
}
END_TEST

START_TEST(test_learns_toy_task_lorentz)
{
    ck_assert_double_lt(train_toy(GYRO_TF_GEOMETRY_LORENTZ, 0), 0.3);
}
END_TEST

START_TEST(test_learns_toy_task_mla_moe)
{
    ck_assert_double_lt(train_toy(GYRO_TF_GEOMETRY_EUCLIDEAN, 1), 0.3);
    ck_assert_double_lt(train_toy(GYRO_TF_GEOMETRY_HYPERBOLIC, 1), 0.3);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("transformer");
    TCase *tc = tcase_create("model");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_fd_hyperbolic_seed_block);
    tcase_add_test(tc, test_fd_hyperbolic_full);
    tcase_add_test(tc, test_fd_euclidean);
    tcase_add_test(tc, test_fd_mla_moe);
    tcase_add_test(tc, test_f32_matches_f64);
    tcase_add_test(tc, test_padding_and_batch_independence);
    tcase_add_test(tc, test_tensor_table);
    tcase_add_test(tc, test_tensor_table_mla_moe);
    tcase_add_test(tc, test_expert_load);
    tcase_add_test(tc, test_config_errors);
    tcase_add_test(tc, test_input_errors);
    tcase_add_loop_test(tc, test_carved_grad_block, 0, 2);
    tcase_add_test(tc, test_acts_larger_than_batch);
    tcase_add_loop_test(tc, test_threads_share_model, 0, 2);
    tcase_add_test(tc, test_learns_toy_task);
    tcase_add_test(tc, test_learns_toy_task_mla_moe);
    tcase_add_test(tc, test_fd_lorentz);
    tcase_add_test(tc, test_lorentz_f32_padding);
    tcase_add_test(tc, test_geometry_names);
    tcase_add_test(tc, test_learns_toy_task_lorentz);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* check_rl_policy.c — Check suite for models/rl/policy: the whole policy network (embedding,
 * MLA, residual, MoE, residual, pooling, head, log-softmax) against central finite differences
 * in float64 for the Euclidean and Poincaré geometries, and the Lorentz backbone (lift, q/k/v
 * Lorentz linear groups, Lorentz attention, residual output layer, FFN, centroid pooling,
 * distance head over lifted class points) likewise end to end; log π normalisation, float32
 * against float64, points on the hyperboloid, and the checkpoint file (round trip, corrupt,
 * truncated, newer version, unknown geometry, foreign file). */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "models/core/crc32.h"
#include "models/core/rng.h"
#include "models/rl/policy.h"
#include "tests/support/fd.h"

static gyro_rl_policy_config small_cfg(int hyperbolic)
{
    gyro_rl_policy_config c = gyro_rl_policy_config_default(hyperbolic, 3, 4);
    if (hyperbolic == GYRO_RL_GEOMETRY_LORENTZ) { /* d 6, 2 heads of 3, FFN 4, c = 1.5 */
        c.d_model = 6;
        c.lz_heads = 2;
        c.lz_head_dim = 3;
        c.lz_ffn = 4;
        c.curvature = 1.5;
        ck_assert_int_eq(gyro_rl_policy_config_check(&c), GYRO_OK);
        return c;
    }
    c.d_model = 6;
    c.mla.n_heads = 2;
    c.mla.d_head = 3;
    c.mla.d_rope = 2;
    c.mla.d_kv_latent = 4;
    c.mla.d_q_latent = 5;
    c.moe.d_ffn = 4;
    c.moe.n_shared = 1;
    c.moe.n_routed = 3;
    c.moe.top_k = 1;
    ck_assert_int_eq(gyro_rl_policy_config_check(&c), GYRO_OK);
    return c;
}

/* objective: Σ_b w_b · logp[b, a_b] + balance loss */
static double objective(double *acts, int *route, const double *obs, const double *P,
                        const gyro_rl_policy_config *cfg, int B, const int *act, double alpha)
{
    gyro_rl_policy_layout L;
    gyro_rl_policy_layout_init(&L, cfg, B);
    gyro_rl_policy_forward_f64(acts, route, obs, P, cfg, B);
    double s = L.lorentz ? 0.0 : gyro_moe_balance_loss_f64(NULL, acts + L.moe_a, route, &cfg->moe,
                                                           B * cfg->obs_dim, alpha);
    for (int b = 0; b < B; b++) s += (b + 1.0) * acts[L.logp + (size_t)b * cfg->n_actions + act[b]];
    return s;
}

/* The objective at the current parameters for fd_central; `switched` records a routing
 * different from route0 (an expert switch, where the objective is not differentiable). */
typedef struct policy_objective {
    double *acts;
    int *route;
    const int *route0;
    const double *obs, *P;
    const gyro_rl_policy_config *cfg;
    int B, switched;
    const int *act;
    size_t n_route;
    double alpha;
} policy_objective;

static double policy_loss(void *vctx)
{
    policy_objective *o = vctx;
    double s = objective(o->acts, o->route, o->obs, o->P, o->cfg, o->B, o->act, o->alpha);
    o->switched |= memcmp(o->route, o->route0, sizeof(int) * o->n_route) != 0;
    return s;
}

static void fd_check(int hyperbolic)
{
    gyro_rl_policy_config cfg = small_cfg(hyperbolic);
    const int B = 3, A = cfg.n_actions, T = cfg.obs_dim;
    const double alpha = 0.05;
    gyro_rl_policy_layout L;
    gyro_rl_policy_layout_init(&L, &cfg, B);
    gyro_rng r;
    gyro_rng_seed(&r, 41 + hyperbolic);
    double *P = malloc(sizeof(double) * L.n_params), *dP = calloc(L.n_params, sizeof(double));
    double *acts = malloc(sizeof(double) * L.n_acts), *scr = malloc(sizeof(double) * L.n_scratch);
    int *route = malloc(sizeof(int) * (L.n_route + 1)), *route0 = malloc(sizeof(int) * (L.n_route + 1));
    double obs[9], dlogits[12];
    int act[3] = {1, 3, 0};
    gyro_rl_policy_init_params_f64(P, &cfg, &r);
    for (size_t i = L.w_head; i < L.n_params; i++) P[i] = 0.5 * gyro_rng_normal(&r); /* live head */
    if (L.lorentz) /* every parameter live: the zero-initialised b, v, b_t too */
        for (size_t i = L.lz_qkvw; i < L.w_head; i++) P[i] += 0.3 * gyro_rng_normal(&r);
    for (int i = 0; i < B * T; i++) obs[i] = gyro_rng_normal(&r);

    objective(acts, route0, obs, P, &cfg, B, act, alpha);
    /* d/dlogits of Σ w_b logp[b, a_b] = w_b (onehot − π) */
    for (int b = 0; b < B; b++)
        for (int j = 0; j < A; j++)
            dlogits[b * A + j] = (b + 1.0) * ((j == act[b]) - exp(acts[L.logp + (size_t)b * A + j]));
    gyro_rl_policy_backward_f64(dP, scr, dlogits, acts, route0, obs, P, &cfg, B, alpha);

    policy_objective o = {acts, route, route0, obs, P, &cfg, B, 0, act, L.n_route, alpha};
    fd_stats st = {.floor = 1e-3};
    int skipped = 0;
    /* step: 1e-6; the Lorentz network's objective is larger (its logits are −d²_L), so 1e-6 sits
     * in the round-off regime (max abs error 5e-8 at 1e-6, 1.6e-7 at 3e-7, 8e-9 at 1e-5,
     * 1e-6 at 1e-4: round-off below 1e-5, truncation above) */
    const double h = L.lorentz ? 1e-5 : 1e-6;
    for (size_t k = 0; k < L.n_params; k++) {
        o.switched = 0;
        double fd = fd_central(&P[k], h, policy_loss, &o);
        if (o.switched) { skipped++; continue; }
        fd_stats_add(&st, k, fd, dP[k]);
    }
    const double max_abs = st.max_abs, max_rel = st.max_rel;
    printf("policy fd (hyperbolic=%d): %zu parameters (%d at a routing switch), max abs err %.3g, "
           "max rel err %.3g\n", hyperbolic, L.n_params, skipped, max_abs, max_rel);
    ck_assert_int_eq(skipped, 0);
    ck_assert_msg(max_abs < 1e-7 && max_rel < 1e-5, "max abs %g rel %g", max_abs, max_rel);
    /* log π is normalised */
    for (int b = 0; b < B; b++) {
        double s = 0;
        for (int j = 0; j < A; j++) s += exp(acts[L.logp + (size_t)b * A + j]);
        ck_assert_double_eq_tol(s, 1.0, 1e-12);
    }
    free(P); free(dP); free(acts); free(scr); free(route); free(route0);
}

START_TEST(test_fd_euclidean) { fd_check(0); }
END_TEST
START_TEST(test_fd_hyperbolic) { fd_check(1); }
END_TEST
START_TEST(test_fd_lorentz) { fd_check(GYRO_RL_GEOMETRY_LORENTZ); }
END_TEST

START_TEST(test_object_matches_f64)
{
    for (int hyp = 0; hyp < 3; hyp++) {
        gyro_rl_policy_config cfg = gyro_rl_policy_config_default(hyp, 4, 9);
        gyro_rl_policy *p;
        ck_assert_int_eq(gyro_rl_policy_new(&cfg, 5, 16, &p), GYRO_OK);
        gyro_rl_policy_layout L;
        gyro_rl_policy_layout_init(&L, &p->cfg, 5);
        double *P = malloc(sizeof(double) * L.n_params), *acts = malloc(sizeof(double) * L.n_acts);
        int *route = malloc(sizeof(int) * (L.n_route + 1));
        for (size_t i = 0; i < L.n_params; i++) P[i] = p->params[i];
        float obs[20];
        double obsd[20];
        gyro_rng r;
        gyro_rng_seed(&r, 2);
        for (int i = 0; i < 20; i++) obsd[i] = obs[i] = (float)gyro_rng_normal(&r);
        const float *lp = gyro_rl_policy_forward(p, NULL, obs, 5);
        gyro_rl_policy_forward_f64(acts, route, obsd, P, &p->cfg, 5);
        for (int i = 0; i < 5 * 9; i++) ck_assert_double_eq_tol(lp[i], acts[L.logp + i], 1e-4);
        int a0 = gyro_rl_policy_argmax(p, 0);
        for (int j = 0; j < 9; j++) ck_assert(lp[a0] >= lp[j]);
        if (L.lorentz) { /* the block's float32 points on the hyperboloid ⟨x,x⟩_L = −1/c */
            const int d1 = p->cfg.d_model + 1;
            const size_t offs[4] = {L.x0, L.x1, L.x2, L.pool};
            const size_t rows[4] = {5 * 4, 5 * 4, 5 * 4, 5};
            for (int k = 0; k < 4; k++)
                for (size_t i = 0; i < rows[k]; i++) {
                    const float *x = p->acts + offs[k] + i * d1;
                    double q = -(double)x[0] * x[0];
                    for (int j = 1; j < d1; j++) q += (double)x[j] * x[j];
                    ck_assert_msg(fabs(q + 1.0 / p->cfg.curvature) < 1e-5 * (1 + x[0] * x[0]),
                                  "array %d row %zu: <x,x>_L = %g", k, i, q);
                }
        }
        free(P); free(acts); free(route);
        gyro_rl_policy_free(p);
    }
}
END_TEST

/* The process's peak virtual size in KiB (VmPeak of /proc/self/status): a loader that
 * allocates what a forged header claims raises it by that much even if it never touches it. */
static long vm_peak_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmPeak: %ld kB", &kb) == 1) break;
    if (f) fclose(f);
    return kb;
}

START_TEST(test_checkpoint)
{
    char dir[] = "/tmp/gyro-policy-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char path[256], bad[256];
    snprintf(path, sizeof path, "%s/p.bin", dir);
    snprintf(bad, sizeof bad, "%s/bad.bin", dir);
    gyro_rl_policy_config cfg = gyro_rl_policy_config_default(1, 3, 25);
    gyro_rl_policy *p, *q;
    ck_assert_int_eq(gyro_rl_policy_new(&cfg, 9, 4, &p), GYRO_OK);
    snprintf(p->env_name, sizeof p->env_name, "vdp");
    ck_assert_int_eq(gyro_rl_policy_save(p, path), GYRO_OK);
    ck_assert_int_eq(gyro_rl_policy_load(path, 8, &q), GYRO_OK);
    ck_assert_str_eq(q->env_name, "vdp");
    ck_assert_int_eq(q->cfg.hyperbolic, 1);
    ck_assert_int_eq(q->cfg.n_actions, 25);
    ck_assert_int_eq(q->max_batch, 8);
    ck_assert_mem_eq(q->params, p->params, sizeof(float) * p->lay.n_params);
    gyro_rl_policy_free(q);

    /* read the file, then write damaged variants */
    FILE *f = fopen(path, "rb");
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *buf = malloc(n);
    ck_assert_int_eq(fread(buf, 1, n, f), n);
    fclose(f);
    struct { long len; long flip; unsigned char val; gyro_status want; const char *what; } cases[] = {
        {n, 200, 0, GYRO_ERR_FORMAT, "checksum"},   /* a parameter byte changed */
        {n / 2, -1, 0, GYRO_ERR_FORMAT, "truncated"},
        {10, -1, 0, GYRO_ERR_FORMAT, "bad magic"},
        {n, 0, 'X', GYRO_ERR_FORMAT, "bad magic"},
        {n, 8, 9, GYRO_ERR_VERSION, "newer"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        unsigned char keep = 0;
        if (cases[i].flip >= 0) {
            keep = buf[cases[i].flip];
            buf[cases[i].flip] = cases[i].val ? cases[i].val : (unsigned char)(keep ^ 0x55);
        }
        f = fopen(bad, "wb");
        fwrite(buf, 1, cases[i].len, f);
        fclose(f);
        if (cases[i].flip >= 0) buf[cases[i].flip] = keep;
        gyro_status s = gyro_rl_policy_load(bad, 4, &q);
        ck_assert_msg(s == cases[i].want, "case %zu: got %s (%s)", i, gyro_status_name(s),
                      gyro_error_message());
        ck_assert_ptr_null(q);
        ck_assert_ptr_nonnull(strstr(gyro_error_message(), cases[i].what));
    }
    /* a header describing a network of billions of parameters over a few KB of file: refused
     * before they are allocated (the loader used to allocate them, then find the file short) */
    {
        gyro_rl_policy_config big = cfg;
        big.moe.d_ffn = 65536;
        big.moe.n_shared = 64;
        big.moe.d_model = big.d_model;
        ck_assert_int_eq(gyro_rl_policy_config_check(&big), GYRO_OK);
        gyro_rl_policy_layout L;
        gyro_rl_policy_layout_init(&L, &big, 1);
        ck_assert_uint_gt(L.n_params, (size_t)1 << 28);
        int32_t v = big.moe.d_ffn;
        memcpy(buf + 72, &v, 4);              /* header: d_ffn at 16 + 56, n_shared at 16 + 60 */
        v = big.moe.n_shared;
        memcpy(buf + 76, &v, 4);
        uint64_t np = L.n_params;
        memcpy(buf + 120, &np, 8);
        f = fopen(bad, "wb");
        fwrite(buf, 1, n, f);
        fclose(f);
        long before = vm_peak_kb();
        ck_assert_int_eq(gyro_rl_policy_load(bad, 4, &q), GYRO_ERR_FORMAT);
        ck_assert_ptr_null(q);
        ck_assert_msg(vm_peak_kb() - before < 256 * 1024, "VmPeak grew by %ld KiB loading a %ld-byte file",
                      vm_peak_kb() - before, n);
        ck_assert_ptr_nonnull(strstr(gyro_error_message(), "the file has"));
    }
    /* a version-1 file (u64 FNV-1a instead of the CRC-32) still loads */
    {
        f = fopen(path, "rb");
        ck_assert_int_eq(fread(buf, 1, n, f), n);
        fclose(f);
        unsigned char *v1 = malloc(n + 4);
        memcpy(v1, buf, n - 4);
        uint32_t one = 1;
        memcpy(v1 + 8, &one, 4);
        uint64_t h = 0xcbf29ce484222325ULL;
        for (long i = 0; i < n - 4; i++) { h ^= v1[i]; h *= 0x100000001b3ULL; }
        memcpy(v1 + n - 4, &h, 8);
        f = fopen(bad, "wb");
        fwrite(v1, 1, n + 4, f);
        fclose(f);
        free(v1);
        ck_assert_int_eq(gyro_rl_policy_load(bad, 4, &q), GYRO_OK);
        ck_assert_mem_eq(q->params, p->params, sizeof(float) * p->lay.n_params);
        gyro_rl_policy_free(q);
    }
    /* a non-finite parameter: nothing written, the old file kept */
    {
        ck_assert_int_eq(gyro_rl_policy_save(p, path), GYRO_OK);
        f = fopen(path, "rb");
        ck_assert_int_eq(fread(buf, 1, n, f), n);
        fclose(f);
        float keep = p->params[p->lay.moe_p];
        p->params[p->lay.moe_p] = INFINITY;
        ck_assert_int_eq(gyro_rl_policy_save(p, path), GYRO_ERR_NAN);
        ck_assert_ptr_nonnull(strstr(gyro_error_message(), "MoE block"));
        p->params[p->lay.moe_p] = keep;
        f = fopen(path, "rb");
        unsigned char *again = malloc(n);
        ck_assert_int_eq(fread(again, 1, n, f), n);
        ck_assert_int_eq(fgetc(f), EOF);
        fclose(f);
        ck_assert_int_eq(memcmp(again, buf, n), 0);
        free(again);
    }
    ck_assert_int_eq(gyro_rl_policy_load("/nonexistent/x", 4, &q), GYRO_ERR_IO);
    /* a Lorentz policy round-trips with its geometry and block; a geometry this gyro does not
     * know (3, with a valid checksum) is refused as a format error naming the value */
    {
        gyro_rl_policy_config lc = gyro_rl_policy_config_default(GYRO_RL_GEOMETRY_LORENTZ, 3, 9);
        gyro_rl_policy_config_resize(&lc, 12, 12);
        gyro_rl_policy *lp;
        ck_assert_int_eq(gyro_rl_policy_new(&lc, 4, 2, &lp), GYRO_OK);
        ck_assert_int_eq(lp->lay.n_route, 0);
        snprintf(lp->env_name, sizeof lp->env_name, "unicycle");
        ck_assert_int_eq(gyro_rl_policy_save(lp, path), GYRO_OK);
        ck_assert_int_eq(gyro_rl_policy_load(path, 3, &q), GYRO_OK);
        ck_assert_int_eq(q->cfg.hyperbolic, GYRO_RL_GEOMETRY_LORENTZ);
        ck_assert_int_eq(q->cfg.lz_heads, 4);
        ck_assert_int_eq(q->cfg.lz_head_dim, 3);
        ck_assert_int_eq(q->cfg.lz_ffn, 12);
        ck_assert_int_eq(q->cfg.moe.n_routed, 0);
        ck_assert_uint_eq(q->lay.n_params, lp->lay.n_params);
        ck_assert_mem_eq(q->params, lp->params, sizeof(float) * lp->lay.n_params);
        gyro_rl_policy_free(q);
        f = fopen(path, "rb");
        fseek(f, 0, SEEK_END);
        long ln = ftell(f);
        fseek(f, 0, SEEK_SET);
        unsigned char *lb = malloc(ln);
        ck_assert_int_eq(fread(lb, 1, ln, f), ln);
        fclose(f);
        int32_t geo = 3;
        memcpy(lb + 16, &geo, 4);
        uint32_t crc = gyro_crc32(0, lb, (size_t)ln - 4);
        memcpy(lb + ln - 4, &crc, 4);
        f = fopen(bad, "wb");
        fwrite(lb, 1, ln, f);
        fclose(f);
        ck_assert_int_eq(gyro_rl_policy_load(bad, 2, &q), GYRO_ERR_FORMAT);
        ck_assert_ptr_null(q);
        ck_assert_ptr_nonnull(strstr(gyro_error_message(), "unknown policy geometry 3"));
        /* and a NaN in the Lorentz block names it */
        lp->params[lp->lay.lz_f1w] = NAN;
        ck_assert_int_eq(gyro_rl_policy_save(lp, path), GYRO_ERR_NAN);
        ck_assert_ptr_nonnull(strstr(gyro_error_message(), "Lorentz feed-forward"));
        free(lb);
        gyro_rl_policy_free(lp);
    }
    free(buf);
    gyro_rl_policy_free(p);
    unlink(path);
    unlink(bad);
    rmdir(dir);
}
END_TEST

START_TEST(test_config_check)
{
    gyro_rl_policy_config c = gyro_rl_policy_config_default(1, 3, 4);
    ck_assert_int_eq(gyro_rl_policy_config_check(&c), GYRO_OK);
    ck_assert_int_eq(c.mla.d_model, 32);
    ck_assert_int_eq(c.moe.hyperbolic, 1);
    c.n_actions = 1;
    ck_assert_int_eq(gyro_rl_policy_config_check(&c), GYRO_ERR_USAGE);
    c = gyro_rl_policy_config_default(1, 3, 4);
    c.moe.top_k = 9;
    ck_assert_int_eq(gyro_rl_policy_config_check(&c), GYRO_ERR_USAGE);
    gyro_rl_policy *p;
    ck_assert_int_eq(gyro_rl_policy_new(&c, 1, 4, &p), GYRO_ERR_USAGE);
    ck_assert_ptr_null(p);
    c = gyro_rl_policy_config_default(0, 3, 4);
    ck_assert_int_eq(gyro_rl_policy_new(&c, 1, 0, &p), GYRO_ERR_USAGE);
    /* resized as rl finetune --width 64 --latent 16 asks; a width below the heads keeps 1 per head */
    c = gyro_rl_policy_config_default(1, 3, 4);
    gyro_rl_policy_config_resize(&c, 64, 16);
    ck_assert_int_eq(gyro_rl_policy_config_check(&c), GYRO_OK);
    ck_assert_int_eq(c.mla.d_model, 64);
    ck_assert_int_eq(c.mla.d_head, 16);
    ck_assert_int_eq(c.mla.d_kv_latent, 16);
    ck_assert_int_eq(c.moe.d_ffn, 64);
    gyro_rl_policy_config_resize(&c, 2, 2);
    ck_assert_int_eq(c.mla.d_head, 1);
    /* the Lorentz block: no MLA, no MoE; its own fields checked; an unknown geometry refused */
    c = gyro_rl_policy_config_default(GYRO_RL_GEOMETRY_LORENTZ, 3, 4);
    ck_assert_int_eq(c.hyperbolic, GYRO_RL_GEOMETRY_LORENTZ);
    ck_assert_int_eq(c.moe.n_routed, 0);
    ck_assert_int_eq(c.mla.n_heads, 0);
    ck_assert_int_eq(c.lz_heads, 4);
    ck_assert_int_eq(c.lz_head_dim, 8);
    gyro_rl_policy_config_resize(&c, 64, 16);
    ck_assert_int_eq(c.lz_head_dim, 16);
    ck_assert_int_eq(c.lz_ffn, 64);
    ck_assert_int_eq(gyro_rl_policy_config_check(&c), GYRO_OK);
    c.lz_heads = 0;
    ck_assert_int_eq(gyro_rl_policy_config_check(&c), GYRO_ERR_USAGE);
    c = gyro_rl_policy_config_default(GYRO_RL_GEOMETRY_LORENTZ, 3, 4);
    c.hyperbolic = 3;
    ck_assert_int_eq(gyro_rl_policy_config_check(&c), GYRO_ERR_USAGE);
    ck_assert_str_eq(gyro_rl_policy_geometry_name(GYRO_RL_GEOMETRY_LORENTZ), "lorentz");
    ck_assert_str_eq(gyro_rl_policy_geometry_name(1), "hyperbolic");
    ck_assert_str_eq(gyro_rl_policy_geometry_name(7), "unknown");
}
END_TEST

Suite *rl_policy_suite(void)
{
    Suite *s = suite_create("rl_policy");
    TCase *tc = tcase_create("policy");
    tcase_add_test(tc, test_config_check);
    tcase_add_test(tc, test_fd_euclidean);
    tcase_add_test(tc, test_fd_hyperbolic);
    tcase_add_test(tc, test_fd_lorentz);
    tcase_add_test(tc, test_object_matches_f64);
    tcase_add_test(tc, test_checkpoint);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(rl_policy_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

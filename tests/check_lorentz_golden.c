/* check_lorentz_golden.c — Check suite: every case of the HyboNet layer vectors (default
 * ../shared/golden/lorentz_layers.txt, or the file named by $GYRO_GOLDEN_LAYERS) run through
 * models/layers/lorentz.h in float64 and float32, outputs and gradients compared tensor-wise.
 *
 * The comparison is the one of check_hyp_golden.c: the error of a tensor is
 * max_i |got_i − exp_i| / max_i |exp_i| (an all-zero expected tensor must come out below 1e-12
 * absolute in float64, 1e-6 in float32), with the tolerances
 *   float64: 1e-9 for every case;
 *   float32: 1e-4 for ordinary cases, 1e-2 for f32_sensitive, 5e-2 for near_boundary
 * (the reasons are written at the top of check_hyp_golden.c). Every out and grad line is
 * compared, none is skipped: the pooling kernel differentiates its token weights too, so even
 * `grad mask` is checked.
 *
 * How the file's ops map onto the layers (lorentz.h says the same):
 *   hybonet_linear[_relu]  gyro_lorentz_hlinear_* with one row, no dropout mask, no bias point,
 *                          K = −1, ε = eps and log_lambda = log(lambda) (the layer learns log λ;
 *                          exp(log λ) is λ to 1 ulp), act = none / relu;
 *   lorentz_attention      gyro_lorentz_mha_* with B = H = 1, no key mask, K = −1;
 *   lorentz_centroid_pool  gyro_lorentz_pool_* with the mask as the token weights, K = −1.
 * An op in the file that this table lacks FAILS (test_file_loaded and its case), and every op
 * named in the file's "counts:" header must have at least one case.
 * With GYRO_GOLDEN_REPORT=1 the suite prints the largest error per op and precision.
 *
 * The handlers are written once over a storage type T: the file includes itself twice.
 */
#ifndef LG_TEMPLATE

#include <check.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/layers/lorentz.h"

#define F64_TOL 1e-9
#define F32_TOL 1e-4
#define F32_SENSITIVE_TOL 1e-2
#define F32_BOUNDARY_TOL 5e-2
#define ZERO_ABS_F64 1e-12
#define ZERO_ABS_F32 1e-6

#define LG_MAX_T 8
#define LG_NAME 48

typedef struct lg_tensor {
    char name[LG_NAME];
    int nd, d1, d2;
    size_t len;
    double *v; /* (len) */
    float *f;  /* (len) the same values rounded to float */
} lg_tensor;

typedef struct lg_case {
    char op[LG_NAME];
    int id, line;
    char tags[256];
    int np, nin, nw, nout, ngrad;
    char pname[LG_MAX_T][LG_NAME];
    double pval[LG_MAX_T];
    lg_tensor in[LG_MAX_T], w[LG_MAX_T], out[LG_MAX_T], grad[LG_MAX_T];
} lg_case;

static lg_case *g_cases;
static int g_ncases;
static char g_path[512];
static char g_load_error[1200];
static char g_header_ops[64][LG_NAME];
static int g_nheader_ops;

static int lg_has_tag(const lg_case *k, const char *tag)
{
    size_t n = strlen(tag);
    for (const char *p = k->tags; (p = strstr(p, tag)) != NULL; p += n)
        if ((p == k->tags || p[-1] == ',') && (p[n] == '\0' || p[n] == ',')) return 1;
    return 0;
}

static const lg_tensor *lg_find(const lg_tensor *t, int nt, const char *name)
{
    for (int i = 0; i < nt; i++)
        if (strcmp(t[i].name, name) == 0) return &t[i];
    return NULL;
}

/* Parses "<name> <nd> <d1> [<d2>] values..." into t. */
static int lg_parse_tensor(lg_tensor *t, char *s, int line)
{
    char *end, *tok = strtok_r(s, " \t\n", &end);
    if (!tok || strlen(tok) >= LG_NAME) goto bad;
    snprintf(t->name, sizeof t->name, "%s", tok);
    if (!(tok = strtok_r(NULL, " \t\n", &end))) goto bad;
    t->nd = atoi(tok);
    if (t->nd != 1 && t->nd != 2) goto bad;
    if (!(tok = strtok_r(NULL, " \t\n", &end))) goto bad;
    t->d1 = atoi(tok);
    t->d2 = 1;
    if (t->nd == 2) {
        if (!(tok = strtok_r(NULL, " \t\n", &end))) goto bad;
        t->d2 = atoi(tok);
    }
    if (t->d1 <= 0 || t->d2 <= 0 || t->d1 > 100000 || t->d2 > 100000) goto bad;
    t->len = (size_t)t->d1 * (size_t)t->d2;
    t->v = malloc(t->len * sizeof *t->v);
    t->f = malloc(t->len * sizeof *t->f);
    if (!t->v || !t->f) goto bad;
    for (size_t i = 0; i < t->len; i++) {
        if (!(tok = strtok_r(NULL, " \t\n", &end))) goto bad;
        char *e;
        t->v[i] = strtod(tok, &e);
        if (*e) goto bad;
        t->f[i] = (float)t->v[i];
    }
    if (strtok_r(NULL, " \t\n", &end)) goto bad;
    return 0;
bad:
    snprintf(g_load_error, sizeof g_load_error, "%s:%d: malformed tensor line", g_path, line);
    return -1;
}

static void lg_load(void)
{
    const char *env = getenv("GYRO_GOLDEN_LAYERS");
    snprintf(g_path, sizeof g_path, "%s",
             env && *env ? env : "../shared/golden/lorentz_layers.txt");
    FILE *fp = fopen(g_path, "r");
    if (!fp) {
        snprintf(g_load_error, sizeof g_load_error, "cannot open golden file %s", g_path);
        return;
    }
    size_t cap = 0;
    char *buf = NULL;
    int lineno = 0, cap_cases = 0;
    lg_case *cur = NULL;
    while (getline(&buf, &cap, fp) > 0) {
        lineno++;
        if (buf[0] == '#') {
            char *p = strstr(buf, "# counts:");
            if (p) {
                char *end, *tok = strtok_r(p + 9, " \t\n", &end);
                for (; tok; tok = strtok_r(NULL, " \t\n", &end)) {
                    char *eq = strchr(tok, '=');
                    if (eq && strncmp(tok, "total=", 6) != 0 && g_nheader_ops < 64 &&
                        eq - tok < LG_NAME) {
                        memcpy(g_header_ops[g_nheader_ops], tok, (size_t)(eq - tok));
                        g_header_ops[g_nheader_ops][eq - tok] = '\0';
                        g_nheader_ops++;
                    }
                }
            }
            continue;
        }
        char *s = buf;
        while (isspace((unsigned char)*s)) s++;
        if (*s == '\0') { cur = NULL; continue; }
        if (strncmp(s, "case ", 5) == 0) {
            if (g_ncases == cap_cases) {
                cap_cases = cap_cases ? 2 * cap_cases : 64;
                lg_case *nc = realloc(g_cases, (size_t)cap_cases * sizeof *nc);
                if (!nc) { snprintf(g_load_error, sizeof g_load_error, "out of memory"); break; }
                g_cases = nc;
            }
            cur = &g_cases[g_ncases++];
            memset(cur, 0, sizeof *cur);
            cur->line = lineno;
            if (sscanf(s + 5, "%47s %d", cur->op, &cur->id) != 2) {
                snprintf(g_load_error, sizeof g_load_error, "%s:%d: bad case line", g_path, lineno);
                break;
            }
            continue;
        }
        if (!cur) {
            snprintf(g_load_error, sizeof g_load_error, "%s:%d: line outside a case", g_path, lineno);
            break;
        }
        lg_tensor *t = NULL;
        if (strncmp(s, "tag ", 4) == 0) {
            sscanf(s + 4, "%255s", cur->tags);
        } else if (strncmp(s, "param ", 6) == 0) {
            if (cur->np == LG_MAX_T ||
                sscanf(s + 6, "%47s %lf", cur->pname[cur->np], &cur->pval[cur->np]) != 2) {
                snprintf(g_load_error, sizeof g_load_error, "%s:%d: bad param", g_path, lineno);
                break;
            }
            cur->np++;
        } else if (strncmp(s, "in ", 3) == 0 && cur->nin < LG_MAX_T) {
            t = &cur->in[cur->nin++]; s += 3;
        } else if (strncmp(s, "weight ", 7) == 0 && cur->nw < LG_MAX_T) {
            t = &cur->w[cur->nw++]; s += 7;
        } else if (strncmp(s, "out ", 4) == 0 && cur->nout < LG_MAX_T) {
            t = &cur->out[cur->nout++]; s += 4;
        } else if (strncmp(s, "grad ", 5) == 0 && cur->ngrad < LG_MAX_T) {
            t = &cur->grad[cur->ngrad++]; s += 5;
        } else {
            snprintf(g_load_error, sizeof g_load_error, "%s:%d: unknown line", g_path, lineno);
            break;
        }
        if (t && lg_parse_tensor(t, s, lineno) != 0) break;
    }
    free(buf);
    fclose(fp);
    if (!g_load_error[0] && g_ncases == 0)
        snprintf(g_load_error, sizeof g_load_error, "%s: no cases", g_path);
}

/* ---- the per-case run context ----------------------------------------------------------------- */

typedef struct lg_ctx {
    const lg_case *k;
    int nb;
    char bname[4 * LG_MAX_T][LG_NAME];
    int bkind[4 * LG_MAX_T]; /* 0 = out, 1 = grad, 2 = scratch */
    size_t blen[4 * LG_MAX_T];
    void *buf[4 * LG_MAX_T];
} lg_ctx;

static double lg_param(lg_ctx *cx, const char *name)
{
    for (int i = 0; i < cx->k->np; i++)
        if (strcmp(cx->k->pname[i], name) == 0) return cx->k->pval[i];
    ck_abort_msg("%s %d: missing param %s", cx->k->op, cx->k->id, name);
    return 0.0;
}

static const lg_tensor *lg_in_t(lg_ctx *cx, const char *name)
{
    const lg_tensor *t = lg_find(cx->k->in, cx->k->nin, name);
    if (!t) ck_abort_msg("%s %d: missing input %s", cx->k->op, cx->k->id, name);
    return t;
}

static void *lg_buf(lg_ctx *cx, int kind, const char *name, size_t len, size_t esz)
{
    ck_assert_int_lt(cx->nb, 4 * LG_MAX_T);
    int i = cx->nb++;
    snprintf(cx->bname[i], LG_NAME, "%s", name);
    cx->bkind[i] = kind;
    cx->blen[i] = len;
    cx->buf[i] = calloc(len ? len : 1, esz);
    ck_assert_ptr_nonnull(cx->buf[i]);
    return cx->buf[i];
}

static void lg_ctx_free(lg_ctx *cx)
{
    for (int i = 0; i < cx->nb; i++) free(cx->buf[i]);
    cx->nb = 0;
}

static double lg_error(const double *got, const double *exp, size_t n, double zero_abs)
{
    double emax = 0.0, dmax = 0.0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs(got[i] - exp[i]);
        if (!(d == d)) return INFINITY;
        if (d > dmax) dmax = d;
        if (fabs(exp[i]) > emax) emax = fabs(exp[i]);
    }
    if (emax == 0.0) return dmax <= zero_abs ? 0.0 : INFINITY;
    return dmax / emax;
}

typedef void (*lg_handler)(lg_ctx *cx);
typedef struct lg_op { const char *name; lg_handler f64, f32; } lg_op;

#define LG_TEMPLATE 1
#define T double
#define SFX(name) name##_f64
#include "tests/check_lorentz_golden.c"
#undef T
#undef SFX
#define T float
#define SFX(name) name##_f32
#include "tests/check_lorentz_golden.c"
#undef T
#undef SFX
#undef LG_TEMPLATE

#define LG_OP(name) {#name, h_##name##_f64, h_##name##_f32}
static const lg_op g_ops[] = {
    LG_OP(hybonet_linear),
    LG_OP(hybonet_linear_relu),
    LG_OP(lorentz_attention),
    LG_OP(lorentz_centroid_pool),
};
#define LG_NOPS ((int)(sizeof g_ops / sizeof g_ops[0]))

static const lg_op *lg_lookup(const char *name)
{
    for (int i = 0; i < LG_NOPS; i++)
        if (strcmp(g_ops[i].name, name) == 0) return &g_ops[i];
    return NULL;
}

/* Runs case k in one precision; returns the worst err/tol (≤ 1 passes), the worst raw error in
 * *worst and a description of the worst tensor in msg. */
static double lg_run_case(const lg_case *k, int f32, double *worst, char *msg, size_t msz)
{
    msg[0] = '\0';
    *worst = 0.0;
    const lg_op *op = lg_lookup(k->op);
    if (!op) {
        snprintf(msg, msz, "%s %d (line %d): op not implemented by models/layers/lorentz", k->op,
                 k->id, k->line);
        return INFINITY;
    }
    lg_ctx cx;
    memset(&cx, 0, sizeof cx);
    cx.k = k;
    if (f32) op->f32(&cx);
    else op->f64(&cx);
    double tol = F64_TOL;
    if (f32)
        tol = lg_has_tag(k, "near_boundary")   ? F32_BOUNDARY_TOL
              : lg_has_tag(k, "f32_sensitive") ? F32_SENSITIVE_TOL
                                               : F32_TOL;
    double zabs = f32 ? ZERO_ABS_F32 : ZERO_ABS_F64;
    double ratio = 0.0;
    for (int kind = 0; kind < 2; kind++) {
        const lg_tensor *exp = kind ? k->grad : k->out;
        int ne = kind ? k->ngrad : k->nout;
        for (int e = 0; e < ne; e++) {
            int b = -1;
            for (int i = 0; i < cx.nb; i++)
                if (cx.bkind[i] == kind && strcmp(cx.bname[i], exp[e].name) == 0) b = i;
            double err;
            if (b < 0 || cx.blen[b] != exp[e].len) {
                err = INFINITY;
            } else {
                double *got = malloc(exp[e].len * sizeof *got);
                ck_assert_ptr_nonnull(got);
                for (size_t i = 0; i < exp[e].len; i++)
                    got[i] = f32 ? ((float *)cx.buf[b])[i] : ((double *)cx.buf[b])[i];
                err = lg_error(got, exp[e].v, exp[e].len, zabs);
                free(got);
            }
            if (err > *worst) *worst = err;
            if (err / tol > ratio || (ratio == 0.0 && !(err / tol <= 1.0))) {
                ratio = err / tol;
                snprintf(msg, msz, "%.47s %d (line %d, %s, tags %.100s): %s %.47s error %.3g > tol %.1g%s",
                         k->op, k->id, k->line, f32 ? "f32" : "f64", k->tags,
                         kind ? "grad" : "out", exp[e].name, err, tol,
                         b < 0 ? " (not produced)" : "");
            }
        }
    }
    lg_ctx_free(&cx);
    return ratio;
}

/* ---- tests ------------------------------------------------------------------------------------ */

START_TEST(test_file_loaded)
{
    ck_assert_msg(g_load_error[0] == '\0', "%s", g_load_error);
    ck_assert_int_gt(g_ncases, 0);
    ck_assert_msg(g_nheader_ops > 0, "%s: no \"# counts:\" header line", g_path);
    for (int i = 0; i < g_nheader_ops; i++) {
        int found = 0;
        for (int c = 0; c < g_ncases && !found; c++) found = !strcmp(g_cases[c].op, g_header_ops[i]);
        ck_assert_msg(found, "%s: op %s is in the header but has no case", g_path, g_header_ops[i]);
    }
    for (int c = 0; c < g_ncases; c++)
        ck_assert_msg(lg_lookup(g_cases[c].op) != NULL, "%s:%d: op %s not implemented", g_path,
                      g_cases[c].line, g_cases[c].op);
}
END_TEST

static void lg_check(int i, int f32)
{
    ck_assert_msg(g_load_error[0] == '\0', "%s", g_load_error);
    char msg[1024];
    double worst;
    double ratio = lg_run_case(&g_cases[i], f32, &worst, msg, sizeof msg);
    ck_assert_msg(ratio <= 1.0, "%s", msg);
    ck_assert_msg(g_cases[i].nout > 0, "%s %d: no out line", g_cases[i].op, g_cases[i].id);
}

START_TEST(test_f64) { lg_check(_i, 0); }
END_TEST

START_TEST(test_f32) { lg_check(_i, 1); }
END_TEST

START_TEST(test_report)
{
    if (!getenv("GYRO_GOLDEN_REPORT") || g_load_error[0]) return;
    printf("%-24s %12s %12s %14s\n", "op", "f64 max", "f32 max", "f32 loose max");
    for (int o = 0; o < LG_NOPS; o++) {
        double m64 = 0, m32 = 0, m32l = 0;
        int any = 0;
        for (int c = 0; c < g_ncases; c++) {
            if (strcmp(g_cases[c].op, g_ops[o].name)) continue;
            any = 1;
            char msg[1024];
            double w;
            lg_run_case(&g_cases[c], 0, &w, msg, sizeof msg);
            if (w > m64) m64 = w;
            lg_run_case(&g_cases[c], 1, &w, msg, sizeof msg);
            int loose = lg_has_tag(&g_cases[c], "near_boundary") ||
                        lg_has_tag(&g_cases[c], "f32_sensitive");
            if (loose) { if (w > m32l) m32l = w; }
            else if (w > m32) m32 = w;
        }
        if (any) printf("%-24s %12.3g %12.3g %14.3g\n", g_ops[o].name, m64, m32, m32l);
    }
    fflush(stdout);
}
END_TEST

static Suite *lorentz_golden_suite(void)
{
    Suite *s = suite_create("lorentz_golden");
    TCase *tc = tcase_create("file");
    tcase_add_test(tc, test_file_loaded);
    tcase_add_test(tc, test_report);
    suite_add_tcase(s, tc);
    if (g_ncases > 0 && !g_load_error[0]) {
        TCase *t64 = tcase_create("f64");
        tcase_add_loop_test(t64, test_f64, 0, g_ncases);
        suite_add_tcase(s, t64);
        TCase *t32 = tcase_create("f32");
        tcase_add_loop_test(t32, test_f32, 0, g_ncases);
        suite_add_tcase(s, t32);
    }
    return s;
}

int main(void)
{
    lg_load();
    SRunner *sr = srunner_create(lorentz_golden_suite());
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_NORMAL);
    int nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    for (int c = 0; c < g_ncases; c++) {
        lg_tensor *lists[4] = {g_cases[c].in, g_cases[c].w, g_cases[c].out, g_cases[c].grad};
        int counts[4] = {g_cases[c].nin, g_cases[c].nw, g_cases[c].nout, g_cases[c].ngrad};
        for (int l = 0; l < 4; l++)
            for (int i = 0; i < counts[l]; i++) { free(lists[l][i].v); free(lists[l][i].f); }
    }
    free(g_cases);
    return nf == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

#else /* LG_TEMPLATE: the handlers, instantiated for T = double and T = float */

static const T *SFX(lg_in)(lg_ctx *cx, const char *name)
{
    const lg_tensor *t = lg_in_t(cx, name);
    return (const T *)(sizeof(T) == sizeof(float) ? (const void *)t->f : (const void *)t->v);
}

static const T *SFX(lg_w)(lg_ctx *cx, const char *name)
{
    const lg_tensor *t = lg_find(cx->k->w, cx->k->nw, name);
    if (!t) ck_abort_msg("%s %d: missing weight %s", cx->k->op, cx->k->id, name);
    return (const T *)(sizeof(T) == sizeof(float) ? (const void *)t->f : (const void *)t->v);
}

#define IN(nm) SFX(lg_in)(cx, nm)
#define WT(nm) SFX(lg_w)(cx, nm)
#define OUT(nm, len) ((T *)lg_buf(cx, 0, nm, len, sizeof(T)))
#define GRAD(nm) ((T *)lg_buf(cx, 1, nm, lg_in_t(cx, nm)->len, sizeof(T)))
#define SCRATCH(len) ((T *)lg_buf(cx, 2, "", len, sizeof(T)))
#define D1(nm) (lg_in_t(cx, nm)->d1)
#define D2(nm) (lg_in_t(cx, nm)->d2)
#define HAS_W (cx->k->nw > 0)

/* hybonet_linear(_relu): one row; the layer learns log λ, so λ enters as log(λ). */
static void SFX(lg_hybonet)(lg_ctx *cx, int act)
{
    int m = D1("W"), n = D2("W") - 1;
    ck_assert_int_eq(D1("x"), n + 1);
    double eps = lg_param(cx, "eps");
    T loglam = (T)log(lg_param(cx, "lambda"));
    T *U = SCRATCH((size_t)m), *Hc = SCRATCH((size_t)n + 1);
    SFX(gyro_lorentz_hlinear_forward)(OUT("y", (size_t)m + 1), U, Hc, IN("x"), NULL, NULL, IN("W"),
                                      IN("b"), IN("v"), IN("b_t"), &loglam, eps, act, -1.0, 1, n,
                                      m, 1);
    if (HAS_W) {
        T *dll = SCRATCH(1), *work = SCRATCH((size_t)m + n + 1);
        SFX(gyro_lorentz_hlinear_backward)(GRAD("x"), NULL, GRAD("W"), GRAD("b"), GRAD("v"),
                                           GRAD("b_t"), dll, work, WT("y"), U, Hc, IN("x"), NULL,
                                           NULL, IN("W"), IN("v"), IN("b_t"), &loglam, eps, act,
                                           -1.0, 1, n, m, 1);
    }
}

static void SFX(h_hybonet_linear)(lg_ctx *cx) { SFX(lg_hybonet)(cx, GYRO_LORENTZ_ACT_NONE); }
static void SFX(h_hybonet_linear_relu)(lg_ctx *cx) { SFX(lg_hybonet)(cx, GYRO_LORENTZ_ACT_RELU); }

static void SFX(h_lorentz_attention)(lg_ctx *cx)
{
    int Tq = D1("Q"), Tk = D1("K"), n = D2("Q") - 1;
    ck_assert_int_eq(D2("K"), n + 1);
    ck_assert_int_eq(D1("V"), Tk);
    T *O = OUT("O", (size_t)Tq * (n + 1));
    T *A = SCRATCH((size_t)Tq * Tk), *Sz = SCRATCH((size_t)Tq);
    SFX(gyro_lorentz_mha_forward)(O, A, Sz, IN("Q"), IN("K"), IN("V"), NULL, -1.0, 1, Tq, Tk, 1, n);
    if (HAS_W)
        SFX(gyro_lorentz_mha_backward)(GRAD("Q"), GRAD("K"), GRAD("V"), WT("O"), O, A, Sz, IN("Q"),
                                       IN("K"), IN("V"), NULL, -1.0, 1, Tq, Tk, 1, n);
}

static void SFX(h_lorentz_centroid_pool)(lg_ctx *cx)
{
    int Tn = D1("X"), n = D2("X") - 1;
    ck_assert_int_eq(D1("mask"), Tn);
    T *mu = OUT("mu", (size_t)n + 1), *Sz = SCRATCH(1);
    SFX(gyro_lorentz_pool_forward)(mu, Sz, IN("X"), IN("mask"), -1.0, 1, Tn, n);
    if (HAS_W)
        SFX(gyro_lorentz_pool_backward)(GRAD("X"), GRAD("mask"), WT("mu"), mu, Sz, IN("X"),
                                        IN("mask"), -1.0, 1, Tn, n);
}

#undef IN
#undef WT
#undef OUT
#undef GRAD
#undef SCRATCH
#undef D1
#undef D2
#undef HAS_W

#endif /* LG_TEMPLATE */

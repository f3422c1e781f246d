/* check_hyp_golden.c — Check suite: every case of the golden vectors (default
 * ../shared/golden/hyperbolic_ops.txt, or the file named by $GYRO_GOLDEN) run through
 * models/hyp/ in float64 and float32, outputs and gradients compared tensor-wise.
 *
 * The error of a tensor is max_i |got_i − exp_i| / max_i |exp_i| (an all-zero expected tensor
 * must come out below 1e-12 absolute in float64, 1e-6 in float32). Tolerances:
 *   float64: 1e-9 for every case.
 *   float32: 1e-4 for ordinary cases; 1e-2 for cases tagged f32_sensitive; 5e-2 for cases
 *            tagged near_boundary. Why: rounding the inputs to float32 moves a point at
 *            √c|x| = 0.99999 by ~1e-7, i.e. 1% of its distance to the boundary; the float32
 *            projection margin ε = 4e-3 moves RSGD outputs that end near the boundary (~4e-3);
 *            and a Riemannian gradient Jg + <x,g>x at x₀ ≈ 100 cancels ~4 digits of float32
 *            (up to 2.4e-2 measured on generated hard sets). Outputs and gradients of those
 *            cases are still compared, never skipped.
 * An op in the file that the library lacks FAILS its case. Every op named in the file's
 * header must have at least one case (a truncated file fails too).
 *
 * Each case is one Check loop iteration (test_f64 / test_f32), so a failure names the op, the
 * case id and the tensor. With GYRO_GOLDEN_REPORT=1 the suite also prints, per op and
 * precision, the largest error found (used for the figures in the README).
 *
 * The handlers are written once over a storage type T: the file includes itself twice (see the
 * bottom of the first half) with T = double and T = float.
 */
#ifndef HG_TEMPLATE

#include <check.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/hyp/convert.h"
#include "models/hyp/lorentz.h"
#include "models/hyp/poincare.h"

#define F64_TOL 1e-9
#define F32_TOL 1e-4
#define F32_SENSITIVE_TOL 1e-2 /* f32_sensitive, not near_boundary */
#define F32_BOUNDARY_TOL 5e-2  /* near_boundary */
#define ZERO_ABS_F64 1e-12
#define ZERO_ABS_F32 1e-6

#define HG_MAX_T 8
#define HG_NAME 48

/* ---- the parsed file ------------------------------------------------------------------------ */

typedef struct hg_tensor {
    char name[HG_NAME];
    int nd, d1, d2;
    size_t len;
    double *v; /* (len) */
    float *f;  /* (len) the same values rounded to float */
} hg_tensor;

typedef struct hg_case {
    char op[HG_NAME];
    int id, line;
    char tags[256];
    int np, nin, nw, nout, ngrad;
    char pname[HG_MAX_T][HG_NAME];
    double pval[HG_MAX_T];
    hg_tensor in[HG_MAX_T], w[HG_MAX_T], out[HG_MAX_T], grad[HG_MAX_T];
} hg_case;

static hg_case *g_cases;
static int g_ncases;
static char g_path[512];
static char g_load_error[1200]; /* non-empty if the file could not be read */
static char g_header_ops[64][HG_NAME]; /* ops listed in the "counts:" header line */
static int g_nheader_ops;

static int hg_has_tag(const hg_case *k, const char *tag)
{
    size_t n = strlen(tag);
    for (const char *p = k->tags; (p = strstr(p, tag)) != NULL; p += n)
        if ((p == k->tags || p[-1] == ',') && (p[n] == '\0' || p[n] == ',')) return 1;
    return 0;
}

static const hg_tensor *hg_find(const hg_tensor *t, int nt, const char *name)
{
    for (int i = 0; i < nt; i++)
        if (strcmp(t[i].name, name) == 0) return &t[i];
    return NULL;
}

/* Parses "<name> <nd> <d1> [<d2>] values..." starting at s into t. */
static int hg_parse_tensor(hg_tensor *t, char *s, int line)
{
    char *end;
    char *tok = strtok_r(s, " \t\n", &end);
    if (!tok || strlen(tok) >= HG_NAME) goto bad;
    snprintf(t->name, sizeof t->name, "%s", tok);
    tok = strtok_r(NULL, " \t\n", &end);
    if (!tok) goto bad;
    t->nd = atoi(tok);
    if (t->nd != 1 && t->nd != 2) goto bad;
    tok = strtok_r(NULL, " \t\n", &end);
    if (!tok) goto bad;
    t->d1 = atoi(tok);
    t->d2 = 1;
    if (t->nd == 2) {
        tok = strtok_r(NULL, " \t\n", &end);
        if (!tok) goto bad;
        t->d2 = atoi(tok);
    }
    if (t->d1 <= 0 || t->d2 <= 0 || t->d1 > 100000 || t->d2 > 100000) goto bad;
    t->len = (size_t)t->d1 * (size_t)t->d2;
    t->v = malloc(t->len * sizeof *t->v);
    t->f = malloc(t->len * sizeof *t->f);
    if (!t->v || !t->f) goto bad;
    for (size_t i = 0; i < t->len; i++) {
        tok = strtok_r(NULL, " \t\n", &end);
        if (!tok) goto bad;
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

static void hg_load(void)
{
    const char *env = getenv("GYRO_GOLDEN");
    snprintf(g_path, sizeof g_path, "%s",
             env && *env ? env : "../shared/golden/hyperbolic_ops.txt");
    FILE *fp = fopen(g_path, "r");
    if (!fp) {
        snprintf(g_load_error, sizeof g_load_error, "cannot open golden file %s", g_path);
        return;
    }
    size_t cap = 0;
    char *buf = NULL;
    int lineno = 0, cap_cases = 0;
    hg_case *cur = NULL;
    while (getline(&buf, &cap, fp) > 0) {
        lineno++;
        if (buf[0] == '#') {
            char *p = strstr(buf, "# counts:");
            if (p) { /* "# counts: total=517 mobius_add=20 ..." */
                char *end, *tok = strtok_r(p + 9, " \t\n", &end);
                while (tok) {
                    char *eq = strchr(tok, '=');
                    if (eq && strncmp(tok, "total=", 6) != 0 && g_nheader_ops < 64 &&
                        eq - tok < HG_NAME) {
                        memcpy(g_header_ops[g_nheader_ops], tok, (size_t)(eq - tok));
                        g_header_ops[g_nheader_ops][eq - tok] = '\0';
                        g_nheader_ops++;
                    }
                    tok = strtok_r(NULL, " \t\n", &end);
                }
            }
            continue;
        }
        char *s = buf;
        while (isspace((unsigned char)*s)) s++;
        if (*s == '\0') { cur = NULL; continue; }
        if (strncmp(s, "case ", 5) == 0) {
            if (g_ncases == cap_cases) {
                cap_cases = cap_cases ? 2 * cap_cases : 256;
                hg_case *nc = realloc(g_cases, (size_t)cap_cases * sizeof *nc);
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
            snprintf(g_load_error, sizeof g_load_error, "%s:%d: line outside a case", g_path,
                     lineno);
            break;
        }
        hg_tensor *t = NULL;
        if (strncmp(s, "tag ", 4) == 0) {
            sscanf(s + 4, "%255s", cur->tags);
        } else if (strncmp(s, "param ", 6) == 0) {
            if (cur->np == HG_MAX_T ||
                sscanf(s + 6, "%47s %lf", cur->pname[cur->np], &cur->pval[cur->np]) != 2) {
                snprintf(g_load_error, sizeof g_load_error, "%s:%d: bad param", g_path, lineno);
                break;
            }
            cur->np++;
        } else if (strncmp(s, "in ", 3) == 0 && cur->nin < HG_MAX_T) {
            t = &cur->in[cur->nin++]; s += 3;
        } else if (strncmp(s, "weight ", 7) == 0 && cur->nw < HG_MAX_T) {
            t = &cur->w[cur->nw++]; s += 7;
        } else if (strncmp(s, "out ", 4) == 0 && cur->nout < HG_MAX_T) {
            t = &cur->out[cur->nout++]; s += 4;
        } else if (strncmp(s, "grad ", 5) == 0 && cur->ngrad < HG_MAX_T) {
            t = &cur->grad[cur->ngrad++]; s += 5;
        } else {
            snprintf(g_load_error, sizeof g_load_error, "%s:%d: unknown line", g_path, lineno);
            break;
        }
        if (t && hg_parse_tensor(t, s, lineno) != 0) break;
    }
    free(buf);
    fclose(fp);
    if (!g_load_error[0] && g_ncases == 0)
        snprintf(g_load_error, sizeof g_load_error, "%s: no cases", g_path);
}

/* ---- the per-case run context ----------------------------------------------------------------- */

typedef struct hg_ctx {
    const hg_case *k;
    int f32;
    /* buffers produced by a handler, by name; kind 0 = out, 1 = grad */
    int nb;
    char bname[2 * HG_MAX_T][HG_NAME];
    int bkind[2 * HG_MAX_T];
    size_t blen[2 * HG_MAX_T];
    void *buf[2 * HG_MAX_T];
    char err[512];
} hg_ctx;

static double hg_param(hg_ctx *cx, const char *name)
{
    for (int i = 0; i < cx->k->np; i++)
        if (strcmp(cx->k->pname[i], name) == 0) return cx->k->pval[i];
    ck_abort_msg("%s %d: missing param %s", cx->k->op, cx->k->id, name);
    return 0.0;
}

static const hg_tensor *hg_in_t(hg_ctx *cx, const char *name)
{
    const hg_tensor *t = hg_find(cx->k->in, cx->k->nin, name);
    if (!t) ck_abort_msg("%s %d: missing input %s", cx->k->op, cx->k->id, name);
    return t;
}

/* A zeroed buffer of len elements of size esz registered under name. */
static void *hg_buf(hg_ctx *cx, int kind, const char *name, size_t len, size_t esz)
{
    ck_assert_int_lt(cx->nb, 2 * HG_MAX_T);
    int i = cx->nb++;
    snprintf(cx->bname[i], HG_NAME, "%s", name);
    cx->bkind[i] = kind;
    cx->blen[i] = len;
    cx->buf[i] = calloc(len ? len : 1, esz);
    ck_assert_ptr_nonnull(cx->buf[i]);
    return cx->buf[i];
}

static void hg_ctx_free(hg_ctx *cx)
{
    for (int i = 0; i < cx->nb; i++) free(cx->buf[i]);
    cx->nb = 0;
}

/* Tensor error as defined at the top; returns the error (or +inf on a shape mismatch). */
static double hg_error(const double *got, const double *exp, size_t n, double zero_abs)
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

typedef int (*hg_handler)(hg_ctx *cx);
typedef struct hg_op { const char *name; hg_handler f64, f32; } hg_op;

#define HG_TEMPLATE 1
#define T double
#define SFX(name) name##_f64
#include "tests/check_hyp_golden.c"
#undef T
#undef SFX
#define T float
#define SFX(name) name##_f32
#include "tests/check_hyp_golden.c"
#undef T
#undef SFX
#undef HG_TEMPLATE

#define HG_OP(name) {#name, h_##name##_f64, h_##name##_f32}
static const hg_op g_ops[] = {
    HG_OP(mobius_add), HG_OP(lambda_x), HG_OP(expmap0), HG_OP(logmap0), HG_OP(expmap),
    HG_OP(logmap), HG_OP(dist), HG_OP(mobius_scalar), HG_OP(mobius_matvec), HG_OP(transp0),
    HG_OP(gyration), HG_OP(hyp_mlr), HG_OP(hyp_linear), HG_OP(poincare_egrad2rgrad),
    HG_OP(poincare_rsgd_step), HG_OP(lorentz_inner), HG_OP(lorentz_dist),
    HG_OP(lorentz_proj_tangent), HG_OP(lorentz_egrad2rgrad), HG_OP(lorentz_expmap),
    HG_OP(lorentz_logmap), HG_OP(lorentz_rsgd_step), HG_OP(lorentz_lift), HG_OP(to_poincare),
    HG_OP(to_hyperboloid), HG_OP(lorentz_skipgram_loss), HG_OP(lorentz_linear),
    HG_OP(lorentz_centroid), HG_OP(roundtrip_ball), HG_OP(roundtrip_hyperboloid),
    HG_OP(dist_cross_model),
};
#define HG_NOPS ((int)(sizeof g_ops / sizeof g_ops[0]))

static const hg_op *hg_lookup(const char *name)
{
    for (int i = 0; i < HG_NOPS; i++)
        if (strcmp(g_ops[i].name, name) == 0) return &g_ops[i];
    return NULL;
}

/* Runs case k in one precision; fills msg and returns the worst error ratio err/tol (≤ 1 is a
 * pass) and the worst raw error in *worst. */
static double hg_run_case(const hg_case *k, int f32, double *worst, char *msg, size_t msz)
{
    msg[0] = '\0';
    *worst = 0.0;
    const hg_op *op = hg_lookup(k->op);
    if (!op) {
        snprintf(msg, msz, "%s %d (line %d): op not implemented by models/hyp", k->op, k->id,
                 k->line);
        return INFINITY;
    }
    hg_ctx cx;
    memset(&cx, 0, sizeof cx);
    cx.k = k;
    cx.f32 = f32;
    int rc = f32 ? op->f32(&cx) : op->f64(&cx);
    if (rc != 0) {
        snprintf(msg, msz, "%s %d (line %d): %s", k->op, k->id, k->line, cx.err);
        hg_ctx_free(&cx);
        return INFINITY;
    }
    double tol = F64_TOL;
    if (f32)
        tol = hg_has_tag(k, "near_boundary")   ? F32_BOUNDARY_TOL
              : hg_has_tag(k, "f32_sensitive") ? F32_SENSITIVE_TOL
                                               : F32_TOL;
    double zabs = f32 ? ZERO_ABS_F32 : ZERO_ABS_F64;
    double ratio = 0.0;
    for (int kind = 0; kind < 2; kind++) {
        const hg_tensor *exp = kind ? k->grad : k->out;
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
                err = hg_error(got, exp[e].v, exp[e].len, zabs);
                free(got);
            }
            if (err > *worst) *worst = err;
            if (err / tol > ratio) {
                ratio = err / tol;
                snprintf(msg, msz, "%.47s %d (line %d, %s, tags %.100s): %s %.47s error %.3g > tol %.1g%s",
                         k->op, k->id, k->line, f32 ? "f32" : "f64", k->tags,
                         kind ? "grad" : "out", exp[e].name, err, tol,
                         b < 0 ? " (not produced)" : "");
            }
        }
    }
    hg_ctx_free(&cx);
    return ratio;
}

/* ---- tests ------------------------------------------------------------------------------------ */

START_TEST(test_file_loaded)
{
    ck_assert_msg(g_load_error[0] == '\0', "%s", g_load_error);
    ck_assert_int_gt(g_ncases, 0);
    /* every op of the header has cases, and every op of the file is known */
    for (int i = 0; i < g_nheader_ops; i++) {
        int found = 0;
        for (int c = 0; c < g_ncases && !found; c++) found = !strcmp(g_cases[c].op, g_header_ops[i]);
        ck_assert_msg(found, "%s: op %s is in the header but has no case", g_path, g_header_ops[i]);
    }
    for (int c = 0; c < g_ncases; c++)
        ck_assert_msg(hg_lookup(g_cases[c].op) != NULL, "%s:%d: op %s not implemented", g_path,
                      g_cases[c].line, g_cases[c].op);
}
END_TEST

static void hg_check(int i, int f32)
{
    ck_assert_msg(g_load_error[0] == '\0', "%s", g_load_error);
    char msg[1024];
    double worst;
    double ratio = hg_run_case(&g_cases[i], f32, &worst, msg, sizeof msg);
    ck_assert_msg(ratio <= 1.0, "%s", msg);
}

START_TEST(test_f64) { hg_check(_i, 0); }
END_TEST

START_TEST(test_f32) { hg_check(_i, 1); }
END_TEST

/* With GYRO_GOLDEN_REPORT set: print the largest error per op and precision (ordinary float32
 * cases apart from near_boundary/f32_sensitive ones). Asserts nothing; test_f64/test_f32 do. */
START_TEST(test_report)
{
    if (!getenv("GYRO_GOLDEN_REPORT") || g_load_error[0]) return;
    printf("%-24s %12s %12s %14s\n", "op", "f64 max", "f32 max", "f32 loose max");
    for (int o = 0; o < HG_NOPS; o++) {
        double m64 = 0, m32 = 0, m32l = 0;
        int any = 0;
        for (int c = 0; c < g_ncases; c++) {
            if (strcmp(g_cases[c].op, g_ops[o].name)) continue;
            any = 1;
            char msg[1024];
            double w;
            hg_run_case(&g_cases[c], 0, &w, msg, sizeof msg);
            if (w > m64) m64 = w;
            hg_run_case(&g_cases[c], 1, &w, msg, sizeof msg);
            int loose = hg_has_tag(&g_cases[c], "near_boundary") ||
                        hg_has_tag(&g_cases[c], "f32_sensitive");
            if (loose) { if (w > m32l) m32l = w; }
            else if (w > m32) m32 = w;
        }
        if (any) printf("%-24s %12.3g %12.3g %14.3g\n", g_ops[o].name, m64, m32, m32l);
    }
    fflush(stdout);
}
END_TEST

static Suite *hyp_golden_suite(void)
{
    Suite *s = suite_create("hyp_golden");
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
    hg_load();
    SRunner *sr = srunner_create(hyp_golden_suite());
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_NORMAL);
    int nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    for (int c = 0; c < g_ncases; c++) {
        hg_tensor *lists[4] = {g_cases[c].in, g_cases[c].w, g_cases[c].out, g_cases[c].grad};
        int counts[4] = {g_cases[c].nin, g_cases[c].nw, g_cases[c].nout, g_cases[c].ngrad};
        for (int l = 0; l < 4; l++)
            for (int i = 0; i < counts[l]; i++) { free(lists[l][i].v); free(lists[l][i].f); }
    }
    free(g_cases);
    return nf == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

#else /* HG_TEMPLATE: the handlers, instantiated for T = double and T = float */

/* Input tensor as T (the float copy is the float64 value rounded once). */
static const T *SFX(hg_in)(hg_ctx *cx, const char *name)
{
    const hg_tensor *t = hg_in_t(cx, name);
    return (const T *)(sizeof(T) == sizeof(float) ? (const void *)t->f : (const void *)t->v);
}

static const T *SFX(hg_w)(hg_ctx *cx, const char *name)
{
    const hg_tensor *t = hg_find(cx->k->w, cx->k->nw, name);
    if (!t) ck_abort_msg("%s %d: missing weight %s", cx->k->op, cx->k->id, name);
    return (const T *)(sizeof(T) == sizeof(float) ? (const void *)t->f : (const void *)t->v);
}

static int SFX(hg_has_w)(hg_ctx *cx) { return cx->k->nw > 0; }

static T *SFX(hg_out)(hg_ctx *cx, const char *name, size_t len)
{
    return hg_buf(cx, 0, name, len, sizeof(T));
}

/* Gradient buffer shaped like input `name`. */
static T *SFX(hg_grad)(hg_ctx *cx, const char *name)
{
    return hg_buf(cx, 1, name, hg_in_t(cx, name)->len, sizeof(T));
}

#define IN(nm) SFX(hg_in)(cx, nm)
#define W(nm) SFX(hg_w)(cx, nm)
#define OUT(nm, len) SFX(hg_out)(cx, nm, len)
#define GRAD(nm) SFX(hg_grad)(cx, nm)
#define D1(nm) (hg_in_t(cx, nm)->d1)
#define D2(nm) (hg_in_t(cx, nm)->d2)
#define PAR(nm) ((T)hg_param(cx, nm))
#define HAS_W SFX(hg_has_w)(cx)

/* ---- Poincaré ball ---- */

static int SFX(h_mobius_add)(hg_ctx *cx)
{
    int n = D1("x");
    T c = PAR("c");
    SFX(gyro_poincare_mobius_add)(OUT("z", n), IN("x"), IN("y"), c, n);
    if (HAS_W)
        SFX(gyro_poincare_mobius_add_backward)(GRAD("x"), GRAD("y"), W("z"), IN("x"), IN("y"), c, n);
    return 0;
}

static int SFX(h_lambda_x)(hg_ctx *cx)
{
    int n = D1("x");
    T c = PAR("c");
    OUT("lambda", 1)[0] = SFX(gyro_poincare_lambda_x)(IN("x"), c, n);
    if (HAS_W) SFX(gyro_poincare_lambda_x_backward)(GRAD("x"), W("lambda")[0], IN("x"), c, n);
    return 0;
}

static int SFX(h_expmap0)(hg_ctx *cx)
{
    int n = D1("v");
    T c = PAR("c");
    SFX(gyro_poincare_expmap0)(OUT("y", n), IN("v"), c, n);
    if (HAS_W) SFX(gyro_poincare_expmap0_backward)(GRAD("v"), W("y"), IN("v"), c, n);
    return 0;
}

static int SFX(h_logmap0)(hg_ctx *cx)
{
    int n = D1("y");
    T c = PAR("c");
    SFX(gyro_poincare_logmap0)(OUT("v", n), IN("y"), c, n);
    if (HAS_W) SFX(gyro_poincare_logmap0_backward)(GRAD("y"), W("v"), IN("y"), c, n);
    return 0;
}

static int SFX(h_expmap)(hg_ctx *cx)
{
    int n = D1("x");
    T c = PAR("c");
    SFX(gyro_poincare_expmap)(OUT("y", n), IN("x"), IN("v"), c, n);
    if (HAS_W)
        SFX(gyro_poincare_expmap_backward)(GRAD("x"), GRAD("v"), W("y"), IN("x"), IN("v"), c, n);
    return 0;
}

static int SFX(h_logmap)(hg_ctx *cx)
{
    int n = D1("x");
    T c = PAR("c");
    SFX(gyro_poincare_logmap)(OUT("v", n), IN("x"), IN("y"), c, n);
    if (HAS_W)
        SFX(gyro_poincare_logmap_backward)(GRAD("x"), GRAD("y"), W("v"), IN("x"), IN("y"), c, n);
    return 0;
}

static int SFX(h_dist)(hg_ctx *cx)
{
    int n = D1("x");
    T c = PAR("c");
    OUT("d", 1)[0] = SFX(gyro_poincare_dist)(IN("x"), IN("y"), c, n);
    if (HAS_W)
        SFX(gyro_poincare_dist_backward)(GRAD("x"), GRAD("y"), W("d")[0], IN("x"), IN("y"), c, n);
    return 0;
}

static int SFX(h_mobius_scalar)(hg_ctx *cx)
{
    int n = D1("x");
    T c = PAR("c"), r = PAR("r");
    SFX(gyro_poincare_mobius_scalar)(OUT("y", n), IN("x"), r, c, n);
    if (HAS_W) SFX(gyro_poincare_mobius_scalar_backward)(GRAD("x"), W("y"), IN("x"), r, c, n);
    return 0;
}

static int SFX(h_mobius_matvec)(hg_ctx *cx)
{
    int m = D1("M"), n = D2("M");
    T c = PAR("c");
    if (D1("x") != n) { snprintf(cx->err, sizeof cx->err, "M and x shapes differ"); return -1; }
    SFX(gyro_poincare_mobius_matvec)(OUT("y", m), IN("M"), IN("x"), c, m, n);
    if (HAS_W)
        SFX(gyro_poincare_mobius_matvec_backward)(GRAD("M"), GRAD("x"), W("y"), IN("M"), IN("x"),
                                                  c, m, n);
    return 0;
}

static int SFX(h_transp0)(hg_ctx *cx)
{
    int n = D1("x");
    T c = PAR("c");
    SFX(gyro_poincare_transp0)(OUT("u", n), IN("x"), IN("v"), c, n);
    if (HAS_W)
        SFX(gyro_poincare_transp0_backward)(GRAD("x"), GRAD("v"), W("u"), IN("x"), IN("v"), c, n);
    return 0;
}

static int SFX(h_gyration)(hg_ctx *cx)
{
    int n = D1("a");
    T c = PAR("c");
    SFX(gyro_poincare_gyration)(OUT("g", n), IN("a"), IN("b"), IN("u"), c, n);
    if (HAS_W)
        SFX(gyro_poincare_gyration_backward)(GRAD("a"), GRAD("b"), GRAD("u"), W("g"), IN("a"),
                                             IN("b"), IN("u"), c, n);
    return 0;
}

static int SFX(h_hyp_mlr)(hg_ctx *cx)
{
    int K = D1("P"), n = D2("P");
    T c = PAR("c");
    SFX(gyro_poincare_hyp_mlr)(OUT("logits", K), IN("x"), IN("P"), IN("A"), c, K, n);
    if (HAS_W)
        SFX(gyro_poincare_hyp_mlr_backward)(GRAD("x"), GRAD("P"), GRAD("A"), W("logits"), IN("x"),
                                            IN("P"), IN("A"), c, K, n);
    return 0;
}

static int SFX(h_hyp_linear)(hg_ctx *cx)
{
    int m = D1("M"), n = D2("M");
    T c = PAR("c");
    SFX(gyro_poincare_hyp_linear)(OUT("y", m), IN("M"), IN("x"), IN("b"), c, m, n);
    if (HAS_W)
        SFX(gyro_poincare_hyp_linear_backward)(GRAD("M"), GRAD("x"), GRAD("b"), W("y"), IN("M"),
                                               IN("x"), IN("b"), c, m, n);
    return 0;
}

static int SFX(h_poincare_egrad2rgrad)(hg_ctx *cx)
{
    int n = D1("x");
    T c = PAR("c");
    SFX(gyro_poincare_egrad2rgrad)(OUT("rgrad", n), IN("x"), IN("g"), c, n);
    if (HAS_W)
        SFX(gyro_poincare_egrad2rgrad_backward)(GRAD("x"), GRAD("g"), W("rgrad"), IN("x"), IN("g"),
                                                c, n);
    return 0;
}

static int SFX(h_poincare_rsgd_step)(hg_ctx *cx)
{
    int n = D1("x");
    T c = PAR("c"), lr = PAR("lr");
    SFX(gyro_poincare_rsgd_step)(OUT("x_new", n), IN("x"), IN("egrad"), c, lr, n);
    if (HAS_W)
        SFX(gyro_poincare_rsgd_step_backward)(GRAD("x"), GRAD("egrad"), W("x_new"), IN("x"),
                                              IN("egrad"), c, lr, n);
    return 0;
}

/* ---- hyperboloid ---- */

static int SFX(h_lorentz_inner)(hg_ctx *cx)
{
    int n = D1("x") - 1;
    OUT("inner", 1)[0] = SFX(gyro_lorentz_inner)(IN("x"), IN("y"), n);
    if (HAS_W)
        SFX(gyro_lorentz_inner_backward)(GRAD("x"), GRAD("y"), W("inner")[0], IN("x"), IN("y"), n);
    return 0;
}

static int SFX(h_lorentz_dist)(hg_ctx *cx)
{
    int n = D1("x") - 1;
    OUT("d", 1)[0] = SFX(gyro_lorentz_dist)(IN("x"), IN("y"), n);
    if (HAS_W)
        SFX(gyro_lorentz_dist_backward)(GRAD("x"), GRAD("y"), W("d")[0], IN("x"), IN("y"), n);
    return 0;
}

static int SFX(h_lorentz_proj_tangent)(hg_ctx *cx)
{
    int n = D1("x") - 1;
    SFX(gyro_lorentz_proj_tangent)(OUT("u", n + 1), IN("x"), IN("v"), n);
    if (HAS_W)
        SFX(gyro_lorentz_proj_tangent_backward)(GRAD("x"), GRAD("v"), W("u"), IN("x"), IN("v"), n);
    return 0;
}

static int SFX(h_lorentz_egrad2rgrad)(hg_ctx *cx)
{
    int n = D1("x") - 1;
    SFX(gyro_lorentz_egrad2rgrad)(OUT("rgrad", n + 1), IN("x"), IN("g"), n);
    if (HAS_W)
        SFX(gyro_lorentz_egrad2rgrad_backward)(GRAD("x"), GRAD("g"), W("rgrad"), IN("x"), IN("g"),
                                               n);
    return 0;
}

static int SFX(h_lorentz_expmap)(hg_ctx *cx)
{
    int n = D1("x") - 1;
    SFX(gyro_lorentz_expmap)(OUT("y", n + 1), IN("x"), IN("v"), n);
    if (HAS_W)
        SFX(gyro_lorentz_expmap_backward)(GRAD("x"), GRAD("v"), W("y"), IN("x"), IN("v"), n);
    return 0;
}

static int SFX(h_lorentz_logmap)(hg_ctx *cx)
{
    int n = D1("x") - 1;
    SFX(gyro_lorentz_logmap)(OUT("v", n + 1), IN("x"), IN("y"), n);
    if (HAS_W)
        SFX(gyro_lorentz_logmap_backward)(GRAD("x"), GRAD("y"), W("v"), IN("x"), IN("y"), n);
    return 0;
}

static int SFX(h_lorentz_rsgd_step)(hg_ctx *cx)
{
    int n = D1("x") - 1;
    T lr = PAR("lr");
    /* the golden step has no clipping: max_step = 0 disables it */
    SFX(gyro_lorentz_rsgd_step)(OUT("x_new", n + 1), IN("x"), IN("egrad"), lr, 0, n);
    if (HAS_W)
        SFX(gyro_lorentz_rsgd_step_backward)(GRAD("x"), GRAD("egrad"), W("x_new"), IN("x"),
                                             IN("egrad"), lr, 0, n);
    return 0;
}

static int SFX(h_lorentz_lift)(hg_ctx *cx)
{
    int n = D1("xs");
    SFX(gyro_lorentz_lift)(OUT("x", n + 1), IN("xs"), n);
    if (HAS_W) SFX(gyro_lorentz_lift_backward)(GRAD("xs"), W("x"), IN("xs"), n);
    return 0;
}

static int SFX(h_to_poincare)(hg_ctx *cx)
{
    int n = D1("x") - 1;
    SFX(gyro_hyp_to_poincare)(OUT("y", n), IN("x"), n);
    if (HAS_W) SFX(gyro_hyp_to_poincare_backward)(GRAD("x"), W("y"), IN("x"), n);
    return 0;
}

static int SFX(h_to_hyperboloid)(hg_ctx *cx)
{
    int n = D1("y");
    SFX(gyro_hyp_to_hyperboloid)(OUT("x", n + 1), IN("y"), n);
    if (HAS_W) SFX(gyro_hyp_to_hyperboloid_backward)(GRAD("y"), W("x"), IN("y"), n);
    return 0;
}

static int SFX(h_lorentz_skipgram_loss)(hg_ctx *cx)
{
    int n = D1("u") - 1, k = D1("neg");
    size_t d = (size_t)n + 1;
    T theta = PAR("theta");
    T *eu = OUT("egrad_u", d), *ev = OUT("egrad_v", d), *en = OUT("egrad_neg", (size_t)k * d);
    OUT("loss", 1)[0] = SFX(gyro_lorentz_skipgram_loss)(eu, ev, en, IN("u"), IN("v"), IN("neg"),
                                                        theta, k, n);
    SFX(gyro_lorentz_egrad2rgrad)(OUT("rgrad_u", d), IN("u"), eu, n);
    SFX(gyro_lorentz_egrad2rgrad)(OUT("rgrad_v", d), IN("v"), ev, n);
    T *rn = OUT("rgrad_neg", (size_t)k * d);
    for (int j = 0; j < k; j++)
        SFX(gyro_lorentz_egrad2rgrad)(rn + (size_t)j * d, IN("neg") + (size_t)j * d,
                                      en + (size_t)j * d, n);
    if (HAS_W)
        SFX(gyro_lorentz_skipgram_loss_backward)(GRAD("u"), GRAD("v"), GRAD("neg"), W("loss")[0],
                                                 IN("u"), IN("v"), IN("neg"), theta, k, n);
    return 0;
}

static int SFX(h_lorentz_linear)(hg_ctx *cx)
{
    int m = D1("W"), n = D2("W") - 1;
    SFX(gyro_lorentz_linear)(OUT("y", (size_t)m + 1), IN("x"), IN("W"), m, n);
    if (HAS_W)
        SFX(gyro_lorentz_linear_backward)(GRAD("x"), GRAD("W"), W("y"), IN("x"), IN("W"), m, n);
    return 0;
}

static int SFX(h_lorentz_centroid)(hg_ctx *cx)
{
    int N = D1("X"), n = D2("X") - 1;
    SFX(gyro_lorentz_centroid)(OUT("mu", (size_t)n + 1), IN("X"), IN("nu"), N, n);
    if (HAS_W)
        SFX(gyro_lorentz_centroid_backward)(GRAD("X"), GRAD("nu"), W("mu"), IN("X"), IN("nu"), N,
                                            n);
    return 0;
}

/* ---- consistency ---- */

static int SFX(h_roundtrip_ball)(hg_ctx *cx)
{
    int n = D1("y");
    T *x = OUT("x", (size_t)n + 1);
    SFX(gyro_hyp_to_hyperboloid)(x, IN("y"), n);
    SFX(gyro_hyp_to_poincare)(OUT("y_rt", n), x, n);
    return 0;
}

static int SFX(h_roundtrip_hyperboloid)(hg_ctx *cx)
{
    int n = D1("x") - 1;
    T *y = OUT("y", n);
    SFX(gyro_hyp_to_poincare)(y, IN("x"), n);
    SFX(gyro_hyp_to_hyperboloid)(OUT("x_rt", (size_t)n + 1), y, n);
    return 0;
}

static int SFX(h_dist_cross_model)(hg_ctx *cx)
{
    int n = D1("y1");
    T *x1 = OUT("x1", (size_t)n + 1), *x2 = OUT("x2", (size_t)n + 1);
    SFX(gyro_hyp_to_hyperboloid)(x1, IN("y1"), n);
    SFX(gyro_hyp_to_hyperboloid)(x2, IN("y2"), n);
    OUT("d_ball", 1)[0] = SFX(gyro_poincare_dist)(IN("y1"), IN("y2"), 1, n);
    OUT("d_lorentz", 1)[0] = SFX(gyro_lorentz_dist)(x1, x2, n);
    return 0;
}

#undef IN
#undef W
#undef OUT
#undef GRAD
#undef D1
#undef D2
#undef PAR
#undef HAS_W

#endif /* HG_TEMPLATE */

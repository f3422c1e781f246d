/* golden.c — the golden-vector files and their Check suite (see golden.h). */
#include "tests/support/golden.h"

#include <check.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define F64_TOL 1e-9
#define F32_TOL 1e-4
#define F32_SENSITIVE_TOL 1e-2 /* f32_sensitive, not near_boundary */
#define F32_BOUNDARY_TOL 5e-2  /* near_boundary */
#define ZERO_ABS_F64 1e-12
#define ZERO_ABS_F32 1e-6

/* ---- the parsed file ------------------------------------------------------------------------ */

static const golden_suite *g_suite;
static golden_case *g_cases;
static int g_ncases;
static char g_path[512];
static char g_load_error[1200];                /* non-empty if the file could not be read */
static char g_header_ops[64][GOLDEN_NAME];      /* ops listed in the "counts:" header line */
static int g_nheader_ops;

int golden_has_tag(const golden_case *k, const char *tag)
{
    size_t n = strlen(tag);
    for (const char *p = k->tags; (p = strstr(p, tag)) != NULL; p += n)
        if ((p == k->tags || p[-1] == ',') && (p[n] == '\0' || p[n] == ',')) return 1;
    return 0;
}

static const golden_tensor *find(const golden_tensor *t, int nt, const char *name)
{
    for (int i = 0; i < nt; i++)
        if (strcmp(t[i].name, name) == 0) return &t[i];
    return NULL;
}

/* Parses "<name> <nd> <d1> [<d2>] values..." into t. */
static int parse_tensor(golden_tensor *t, char *s, int line)
{
    char *end, *tok = strtok_r(s, " \t\n", &end);
    if (!tok || strlen(tok) >= GOLDEN_NAME) goto bad;
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

/* "# counts: total=517 mobius_add=20 ...": the ops that must have cases. */
static void parse_counts(char *p)
{
    char *end, *tok = strtok_r(p + 9, " \t\n", &end);
    for (; tok; tok = strtok_r(NULL, " \t\n", &end)) {
        char *eq = strchr(tok, '=');
        if (eq && strncmp(tok, "total=", 6) != 0 && g_nheader_ops < 64 && eq - tok < GOLDEN_NAME) {
            memcpy(g_header_ops[g_nheader_ops], tok, (size_t)(eq - tok));
            g_header_ops[g_nheader_ops][eq - tok] = '\0';
            g_nheader_ops++;
        }
    }
}

/* A new case from its "case <op> <id>" line; NULL (g_load_error set) on failure. */
static golden_case *new_case(const char *s, int lineno, int *cap)
{
    if (g_ncases == *cap) {
        *cap = *cap ? 2 * *cap : 256;
        golden_case *nc = realloc(g_cases, (size_t)*cap * sizeof *nc);
        if (!nc) {
            snprintf(g_load_error, sizeof g_load_error, "out of memory");
            return NULL;
        }
        g_cases = nc;
    }
    golden_case *cur = &g_cases[g_ncases++];
    memset(cur, 0, sizeof *cur);
    cur->line = lineno;
    if (sscanf(s + 5, "%47s %d", cur->op, &cur->id) != 2) {
        snprintf(g_load_error, sizeof g_load_error, "%s:%d: bad case line", g_path, lineno);
        return NULL;
    }
    return cur;
}

/* One line inside a case (s: without leading space); 0, or -1 with g_load_error set. */
static int case_line(golden_case *cur, char *s, int lineno)
{
    golden_tensor *t = NULL;
    if (strncmp(s, "tag ", 4) == 0) {
        sscanf(s + 4, "%255s", cur->tags);
    } else if (strncmp(s, "param ", 6) == 0) {
        if (cur->np == GOLDEN_MAX_T || sscanf(s + 6, "%47s %lf", cur->pname[cur->np], &cur->pval[cur->np]) != 2) {
            snprintf(g_load_error, sizeof g_load_error, "%s:%d: bad param", g_path, lineno);
            return -1;
        }
        cur->np++;
    } else if (strncmp(s, "in ", 3) == 0 && cur->nin < GOLDEN_MAX_T) {
        t = &cur->in[cur->nin++]; s += 3;
    } else if (strncmp(s, "weight ", 7) == 0 && cur->nw < GOLDEN_MAX_T) {
        t = &cur->w[cur->nw++]; s += 7;
    } else if (strncmp(s, "out ", 4) == 0 && cur->nout < GOLDEN_MAX_T) {
        t = &cur->out[cur->nout++]; s += 4;
    } else if (strncmp(s, "grad ", 5) == 0 && cur->ngrad < GOLDEN_MAX_T) {
        t = &cur->grad[cur->ngrad++]; s += 5;
    } else {
        snprintf(g_load_error, sizeof g_load_error, "%s:%d: unknown line", g_path, lineno);
        return -1;
    }
    return t ? parse_tensor(t, s, lineno) : 0;
}

static void load(const golden_suite *suite)
{
    const char *env = getenv(suite->env);
    snprintf(g_path, sizeof g_path, "%s", env && *env ? env : suite->default_path);
    FILE *fp = fopen(g_path, "r");
    if (!fp) {
        snprintf(g_load_error, sizeof g_load_error, "cannot open golden file %s", g_path);
        return;
    }
    size_t cap = 0;
    char *buf = NULL;
    int lineno = 0, cap_cases = 0;
    golden_case *cur = NULL;
    while (getline(&buf, &cap, fp) > 0) {
        lineno++;
        if (buf[0] == '#') {
            char *p = strstr(buf, "# counts:");
            if (p) parse_counts(p);
            continue;
        }
        char *s = buf;
        while (isspace((unsigned char)*s)) s++;
        if (*s == '\0') {
            cur = NULL;
        } else if (strncmp(s, "case ", 5) == 0) {
            if (!(cur = new_case(s, lineno, &cap_cases))) break;
        } else if (!cur) {
            snprintf(g_load_error, sizeof g_load_error, "%s:%d: line outside a case", g_path, lineno);
            break;
        } else if (case_line(cur, s, lineno) != 0) {
            break;
        }
    }
    free(buf);
    fclose(fp);
    if (!g_load_error[0] && g_ncases == 0) snprintf(g_load_error, sizeof g_load_error, "%s: no cases", g_path);
}

static void free_cases(void)
{
    for (int c = 0; c < g_ncases; c++) {
        golden_tensor *lists[4] = {g_cases[c].in, g_cases[c].w, g_cases[c].out, g_cases[c].grad};
        int counts[4] = {g_cases[c].nin, g_cases[c].nw, g_cases[c].nout, g_cases[c].ngrad};
        for (int l = 0; l < 4; l++)
            for (int i = 0; i < counts[l]; i++) {
                free(lists[l][i].v);
                free(lists[l][i].f);
            }
    }
    free(g_cases);
    g_cases = NULL;
    g_ncases = 0;
}

/* ---- the per-case run context ----------------------------------------------------------------- */

double golden_param(golden_ctx *cx, const char *name)
{
    for (int i = 0; i < cx->k->np; i++)
        if (strcmp(cx->k->pname[i], name) == 0) return cx->k->pval[i];
    ck_abort_msg("%s %d: missing param %s", cx->k->op, cx->k->id, name);
    return 0.0;
}

const golden_tensor *golden_in(golden_ctx *cx, const char *name)
{
    const golden_tensor *t = find(cx->k->in, cx->k->nin, name);
    if (!t) ck_abort_msg("%s %d: missing input %s", cx->k->op, cx->k->id, name);
    return t;
}

const golden_tensor *golden_w(golden_ctx *cx, const char *name)
{
    const golden_tensor *t = find(cx->k->w, cx->k->nw, name);
    if (!t) ck_abort_msg("%s %d: missing weight %s", cx->k->op, cx->k->id, name);
    return t;
}

const double *golden_in_f64(golden_ctx *cx, const char *name) { return golden_in(cx, name)->v; }
const float *golden_in_f32(golden_ctx *cx, const char *name) { return golden_in(cx, name)->f; }
const double *golden_w_f64(golden_ctx *cx, const char *name) { return golden_w(cx, name)->v; }
const float *golden_w_f32(golden_ctx *cx, const char *name) { return golden_w(cx, name)->f; }

void *golden_buf(golden_ctx *cx, int kind, const char *name, size_t len, size_t esz)
{
    ck_assert_int_lt(cx->nb, GOLDEN_MAX_BUF);
    int i = cx->nb++;
    snprintf(cx->bname[i], GOLDEN_NAME, "%s", name);
    cx->bkind[i] = kind;
    cx->blen[i] = len;
    cx->buf[i] = calloc(len ? len : 1, esz);
    ck_assert_ptr_nonnull(cx->buf[i]);
    return cx->buf[i];
}

static void ctx_free(golden_ctx *cx)
{
    for (int i = 0; i < cx->nb; i++) free(cx->buf[i]);
    cx->nb = 0;
}

/* Tensor error as defined in golden.h; +inf on a NaN or a nonzero where zeros are expected. */
static double tensor_error(const double *got, const double *exp, size_t n, double zero_abs)
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

static const golden_op *lookup(const char *name)
{
    for (int i = 0; i < g_suite->nops; i++)
        if (strcmp(g_suite->ops[i].name, name) == 0) return &g_suite->ops[i];
    return NULL;
}

/* The error of expected tensor e (kind GOLDEN_OUT or GOLDEN_GRAD) against what the handler
 * registered under its name; *b gets the buffer's index, -1 when it was not produced. */
static double produced_error(const golden_ctx *cx, int kind, const golden_tensor *e, int f32, int *b)
{
    *b = -1;
    for (int i = 0; i < cx->nb; i++)
        if (cx->bkind[i] == kind && strcmp(cx->bname[i], e->name) == 0) *b = i;
    if (*b < 0 || cx->blen[*b] != e->len) return INFINITY;
    double *got = malloc(e->len * sizeof *got);
    ck_assert_ptr_nonnull(got);
    for (size_t i = 0; i < e->len; i++) got[i] = f32 ? ((float *)cx->buf[*b])[i] : ((double *)cx->buf[*b])[i];
    double err = tensor_error(got, e->v, e->len, f32 ? ZERO_ABS_F32 : ZERO_ABS_F64);
    free(got);
    return err;
}

/* Runs case k in one precision; returns the worst err/tol (≤ 1 passes), the worst raw error in
 * *worst and a description of the worst tensor in msg. */
static double run_case(const golden_case *k, int f32, double *worst, char *msg, size_t msz)
{
    msg[0] = '\0';
    *worst = 0.0;
    const golden_op *op = lookup(k->op);
    if (!op) {
        snprintf(msg, msz, "%s %d (line %d): op not implemented by %s", k->op, k->id, k->line, g_suite->library);
        return INFINITY;
    }
    golden_ctx cx;
    memset(&cx, 0, sizeof cx);
    cx.k = k;
    cx.f32 = f32;
    if ((f32 ? op->f32(&cx) : op->f64(&cx)) != 0) {
        snprintf(msg, msz, "%s %d (line %d): %s", k->op, k->id, k->line, cx.err);
        ctx_free(&cx);
        return INFINITY;
    }
    double tol = !f32                                 ? F64_TOL
                 : golden_has_tag(k, "near_boundary") ? F32_BOUNDARY_TOL
                 : golden_has_tag(k, "f32_sensitive") ? F32_SENSITIVE_TOL
                                                      : F32_TOL;
    double ratio = 0.0;
    for (int kind = GOLDEN_OUT; kind <= GOLDEN_GRAD; kind++) {
        const golden_tensor *exp = kind == GOLDEN_GRAD ? k->grad : k->out;
        int ne = kind == GOLDEN_GRAD ? k->ngrad : k->nout;
        for (int e = 0; e < ne; e++) {
            int b;
            double err = produced_error(&cx, kind, &exp[e], f32, &b);
            if (err > *worst) *worst = err;
            if (err / tol > ratio || (ratio == 0.0 && !(err / tol <= 1.0))) {
                ratio = err / tol;
                snprintf(msg, msz, "%.47s %d (line %d, %s, tags %.100s): %s %.47s error %.3g > tol %.1g%s", k->op,
                         k->id, k->line, f32 ? "f32" : "f64", k->tags, kind == GOLDEN_GRAD ? "grad" : "out",
                         exp[e].name, err, tol, b < 0 ? " (not produced)" : "");
            }
        }
    }
    ctx_free(&cx);
    return ratio;
}

/* ---- tests ------------------------------------------------------------------------------------ */

START_TEST(test_file_loaded)
{
    ck_assert_msg(g_load_error[0] == '\0', "%s", g_load_error);
    ck_assert_int_gt(g_ncases, 0);
    if (g_suite->strict) ck_assert_msg(g_nheader_ops > 0, "%s: no \"# counts:\" header line", g_path);
    /* every op of the header has cases, and every op of the file is known */
    for (int i = 0; i < g_nheader_ops; i++) {
        int found = 0;
        for (int c = 0; c < g_ncases && !found; c++) found = !strcmp(g_cases[c].op, g_header_ops[i]);
        ck_assert_msg(found, "%s: op %s is in the header but has no case", g_path, g_header_ops[i]);
    }
    for (int c = 0; c < g_ncases; c++)
        ck_assert_msg(lookup(g_cases[c].op) != NULL, "%s:%d: op %s not implemented", g_path, g_cases[c].line,
                      g_cases[c].op);
}
END_TEST

static void check_case(int i, int f32)
{
    ck_assert_msg(g_load_error[0] == '\0', "%s", g_load_error);
    char msg[1024];
    double worst;
    double ratio = run_case(&g_cases[i], f32, &worst, msg, sizeof msg);
    ck_assert_msg(ratio <= 1.0, "%s", msg);
    if (g_suite->strict) ck_assert_msg(g_cases[i].nout > 0, "%s %d: no out line", g_cases[i].op, g_cases[i].id);
}

START_TEST(test_f64) { check_case(_i, 0); }
END_TEST

START_TEST(test_f32) { check_case(_i, 1); }
END_TEST

/* With GYRO_GOLDEN_REPORT set: print the largest error per op and precision (ordinary float32
 * cases apart from near_boundary/f32_sensitive ones). Asserts nothing; test_f64/test_f32 do. */
START_TEST(test_report)
{
    if (!getenv("GYRO_GOLDEN_REPORT") || g_load_error[0]) return;
    printf("%-24s %12s %12s %14s\n", "op", "f64 max", "f32 max", "f32 loose max");
    for (int o = 0; o < g_suite->nops; o++) {
        double m64 = 0, m32 = 0, m32l = 0;
        int any = 0;
        for (int c = 0; c < g_ncases; c++) {
            if (strcmp(g_cases[c].op, g_suite->ops[o].name)) continue;
            any = 1;
            char msg[1024];
            double w;
            run_case(&g_cases[c], 0, &w, msg, sizeof msg);
            if (w > m64) m64 = w;
            run_case(&g_cases[c], 1, &w, msg, sizeof msg);
            if (golden_has_tag(&g_cases[c], "near_boundary") || golden_has_tag(&g_cases[c], "f32_sensitive")) {
                if (w > m32l) m32l = w;
            } else if (w > m32) {
                m32 = w;
            }
        }
        if (any) printf("%-24s %12.3g %12.3g %14.3g\n", g_suite->ops[o].name, m64, m32, m32l);
    }
    fflush(stdout);
}
END_TEST

int golden_main(const golden_suite *suite)
{
    g_suite = suite;
    load(suite);
    Suite *s = suite_create(suite->name);
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
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_NORMAL);
    int nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    free_cases();
    return nf == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

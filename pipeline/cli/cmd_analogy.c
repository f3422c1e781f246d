/* cmd_analogy.c — `gyro analogy`: word-analogy accuracy of an embedding table, per section, over
 * files in the usual format of word2vec's questions-words.txt and of the Chinese CA8 set:
 * ": section" lines, then one question a line, "a b c d" (a is to b as c is to d).
 *
 *   gyro analogy -t TABLE [--method cosadd|gyro] [--show N] FILE...
 *
 * A word is composed from its characters as `gyro similarity` and `gyro embed --sentence` do
 * (the mean of a Euclidean table's vectors; the Einstein midpoint of a hyperbolic table's points
 * in the Poincaré ball, a hyperboloid table's rows mapped there by x ↦ x_s/(1+x₀)); it is
 * covered when every character is in the table. A question is answered when its four words are
 * covered; the prediction is the best candidate other than a, b and c among the table's
 * characters and every word of the files (so multi-character answers can be found):
 *
 *   cosadd  3CosAdd (Mikolov et al. 2013; Levy & Goldberg 2014): argmax_d cos(d, b̂ − â + ĉ) over
 *           unit vectors — of the vectors themselves for a Euclidean table, of their log0 images
 *           (the tangent space at the origin) for a hyperbolic one.
 *   gyro    its hyperbolic form by gyrovector translation (Ungar, Analytic Hyperbolic Geometry,
 *           2008): the gyrovector ⊖a ⊕ b leading from a to b is carried to c by the gyration
 *           gyr[c, ⊖a] and added there,
 *               d* = c ⊕ gyr[c, ⊖a](⊖a ⊕ b),   gyr[u, v]w = ⊖(u ⊕ v) ⊕ (u ⊕ (v ⊕ w)),
 *           with Möbius addition ⊕ of curvature −c (models/hyp/poincare.h, Ganea et al. 2018);
 *           the prediction is the candidate nearest to d* in hyperbolic distance. In the
 *           Euclidean limit d* = c + b − a, which is 3CosAdd without the normalisation.
 * The default is gyro for a hyperbolic table and cosadd for a Euclidean one. Accuracy is over
 * the answered questions; coverage is printed beside it.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "embeddings/table.h"
#include "models/hyp/convert.h"
#include "models/hyp/poincare.h"
#include "models/text/strmap.h"
#include "models/tokenizer.h"
#include "pipeline/cli/cli.h"
#include "pipeline/cli/opts.h"
#include "pipeline/table_file.h"

#define CMD "analogy"

enum { METHOD_DEFAULT = -1, METHOD_COSADD = 0, METHOD_GYRO = 1 };

typedef struct analogy_args {
    const char *table;
    int method;
    long show;
} analogy_args;

static const gyro_opt analogy_opts[] = {
    GYRO_O_STR("table", 't', analogy_args, table, "TABLE", NULL, "the embedding table (required)"),
    GYRO_O_CHOICE("method", 0, analogy_args, method, "M", "cosadd|gyro", NULL,
                  "cosadd: 3CosAdd, argmax cos(d, b - a + c) of unit vectors (of log0 images for a "
                  "hyperbolic table); gyro: d* = c (+) gyr[c, (-)a]((-)a (+) b) by Mobius addition, the "
                  "nearest candidate in hyperbolic distance (the default for hyperbolic tables; "
                  "cosadd for Euclidean ones)"),
    GYRO_O_LONG("show", 0, analogy_args, show, "N", "0", 0, 1000000,
                "print the first N wrong answers (question, expected, predicted) on stderr"),
    GYRO_O_END,
};

const gyro_cmd_spec gyro_spec_analogy = {
    "analogy", "-t TABLE [--method cosadd|gyro] [--show N] FILE...",
    "Answer the analogy questions 'a b c d' (a is to b as c is to d) of FILEs in the format of "
    "word2vec's questions-words.txt (': section' lines start sections) with the words composed "
    "from the table's characters, and print the accuracy of each section and in total.",
    "Candidates are the table's characters and every word of the files, a, b and c excluded. "
    "Questions with a word whose characters are not all in the table are not answered; coverage "
    "is printed. Exit status: 0 done, 1 I/O error, 2 usage, 65 a malformed line (named with its "
    "file and line) or a table that is not one.",
    analogy_opts,
    NULL,
};

/* ---- words -------------------------------------------------------------------------------- */

typedef struct space {
    const gyro_embedding_table *t;
    int n;                  /* coordinates of a composed point: dim */
    double c;               /* curvature of the ball (hyperbolic tables) */
    int hyperbolic;
    gyro_tokenizer *tok;
    gyro_strmap *words;     /* word -> candidate index (table characters first) */
    double *pts;            /* (cap, n) composed points: ball points or Euclidean vectors */
    int *ok;                /* (cap) 1: covered */
    int count, cap;
    double *buf;            /* (bcap, n) the characters of a word */
    int bcap;
} space;

/* Row r of the table as a point of the space into y (n). */
static void row_point(const space *s, int r, double *y)
{
    const float *x = s->t->vectors + (size_t)r * (size_t)s->t->stride;
    if (s->t->model == GYRO_EMBEDDING_HYPERBOLOID) {
        double x0 = x[0];
        for (int k = 0; k < s->n; k++) y[k] = x[k + 1] / (1.0 + x0);   /* x_s / (1 + x0) */
    } else {
        for (int k = 0; k < s->n; k++) y[k] = x[k];
    }
}

static gyro_status add_point(space *s, const char *word, int *id)
{
    int added = 0;
    int32_t i;
    gyro_status st = gyro_strmap_intern(s->words, word, &i, &added);
    if (st) return st;
    *id = i;
    if (!added) return GYRO_OK;
    if (s->count == s->cap) {
        int cap = s->cap ? s->cap * 2 : 1024;
        double *p = realloc(s->pts, (size_t)cap * (size_t)s->n * sizeof *p);
        if (p) s->pts = p;
        int *o = p ? realloc(s->ok, (size_t)cap * sizeof *o) : NULL;
        if (o) s->ok = o;
        if (!p || !o) return gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
        s->cap = cap;
    }
    s->ok[s->count] = 0;
    s->count++;
    return GYRO_OK;
}

/* The candidate index of `word` into *id: a table character's row, or the word composed from its
 * characters and added as a candidate when new (s->ok says whether it is covered). */
static gyro_status word_point(space *s, const char *word, int *id)
{
    int32_t have = gyro_strmap_find(s->words, word);
    if (have >= 0) { *id = have; return GYRO_OK; }
    char *const *toks;
    size_t n;
    const char *norm;
    gyro_status st = gyro_tokenizer_run(s->tok, word, strlen(word), &toks, &n, &norm);
    if (st) return st;
    if (n == 1) {   /* one character of the table (perhaps spelled otherwise): its own row */
        int32_t r = gyro_strmap_find(s->words, toks[0]);
        if (r >= 0 && r < s->t->n) { *id = r; return GYRO_OK; }
    }
    if ((st = add_point(s, word, id))) return st;
    double *y = s->pts + (size_t)*id * (size_t)s->n;
    if ((int)n + 1 > s->bcap) {
        int cap = (int)n * 2 + 2;
        double *b = realloc(s->buf, (size_t)cap * (size_t)s->n * sizeof *b);
        if (!b) return gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
        s->buf = b;
        s->bcap = cap;
    }
    int k = 0;
    for (size_t i = 0; i < n; i++) {
        int r = gyro_embedding_table_find(s->t, toks[i]);
        if (r < 0) return GYRO_OK;   /* not covered */
        row_point(s, r, s->buf + (size_t)k++ * (size_t)s->n);
    }
    if (k == 0) return GYRO_OK;
    if (s->hyperbolic) {
        gyro_poincare_einstein_midpoint_f64(y, s->buf, NULL, NULL, s->c, k, s->n);
    } else {
        for (int j = 0; j < s->n; j++) {
            double v = 0;
            for (int i = 0; i < k; i++) v += s->buf[(size_t)i * (size_t)s->n + (size_t)j];
            y[j] = v / k;
        }
    }
    s->ok[*id] = 1;
    return GYRO_OK;
}

/* ---- questions ---------------------------------------------------------------------------- */

typedef struct question {
    int w[4];               /* candidate indices of a, b, c, d */
    int section;
    unsigned long long line;
    int file;
} question;

typedef struct section {
    char *name;
    int total, covered, correct;
} section;

static int split_ws(char *s, char **f, int max)
{
    int n = 0;
    for (char *p = s;;) {
        while (*p && isspace((unsigned char)*p)) p++;
        if (!*p) return n;
        if (n == max) return max + 1;
        f[n++] = p;
        while (*p && !isspace((unsigned char)*p)) p++;
        if (*p) *p++ = '\0';
    }
}

/* Unit vector of x (n) into u; the log0 image first when `tangent` (curvature c). */
static void unit(double *u, const double *x, int n, int tangent, double c)
{
    if (tangent) gyro_poincare_logmap0_f64(u, x, c, n);
    else memcpy(u, x, (size_t)n * sizeof *u);
    double s = 0;
    for (int k = 0; k < n; k++) s += u[k] * u[k];
    s = sqrt(s);
    if (s < 1e-300) s = 1e-300;
    for (int k = 0; k < n; k++) u[k] /= s;
}

int gyro_cmd_analogy(int argc, char **argv)
{
    analogy_args o = {.method = METHOD_DEFAULT};
    int first, rc = gyro_opts_parse(&gyro_spec_analogy, argc, argv, &o, &first);
    if (rc != GYRO_OPTS_CONTINUE) return rc;
    if (!o.table) return gyro_cli_usage_error(CMD, "missing -t TABLE");
    if (first >= argc) return gyro_cli_usage_error(CMD, "no analogy file");
    gyro_embedding_table *t = NULL;
    gyro_status st = gyro_table_file_load(o.table, &t);
    if (st) return gyro_cli_fail(CMD, st);
    space s = {.t = t, .n = t->dim, .c = t->model == GYRO_EMBEDDING_POINCARE ? t->curvature : 1.0,
               .hyperbolic = t->model != GYRO_EMBEDDING_EUCLIDEAN};
    int method = o.method == METHOD_DEFAULT ? (s.hyperbolic ? METHOD_GYRO : METHOD_COSADD) : o.method;
    if (method == METHOD_GYRO && !s.hyperbolic) {
        gyro_embedding_table_free(t);
        return gyro_cli_usage_error(CMD, "--method gyro needs a hyperbolic table (%s is euclidean)", o.table);
    }
    st = gyro_strmap_new(&s.words);
    if (!st) st = gyro_tokenizer_new(NULL, GYRO_TOKEN_CHARS, &s.tok);
    /* the table's characters are the first candidates */
    for (int r = 0; !st && r < t->n; r++) {
        int id;
        st = add_point(&s, t->tokens[r], &id);
        if (!st) {
            row_point(&s, r, s.pts + (size_t)id * (size_t)s.n);
            s.ok[id] = 1;
        }
    }
    question *q = NULL;
    int nq = 0, qcap = 0;
    section *sec = NULL;
    int nsec = 0;
    char *line = NULL;
    size_t lcap = 0;
    for (int fi = first; !st && fi < argc; fi++) {
        FILE *f = strcmp(argv[fi], "-") == 0 ? stdin : fopen(argv[fi], "rb");
        if (!f) { st = gyro_error_set(GYRO_ERR_IO, "%s: cannot open: %s", argv[fi], strerror(errno)); break; }
        unsigned long long lineno = 0;
        ssize_t len;
        while (!st && (len = getline(&line, &lcap, f)) != -1) {
            lineno++;
            char *p = line;
            if (lineno == 1 && len >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0) p += 3;
            while (*p && isspace((unsigned char)*p)) p++;
            if (!*p || *p == '#') continue;
            if (*p == ':') {
                char *name = p + 1;
                while (*name && isspace((unsigned char)*name)) name++;
                size_t nl = strcspn(name, "\r\n");
                while (nl && isspace((unsigned char)name[nl - 1])) nl--;
                section *ns = realloc(sec, (size_t)(nsec + 1) * sizeof *sec);
                if (!ns) { st = gyro_error_set(GYRO_ERR_NOMEM, "out of memory"); break; }
                sec = ns;
                sec[nsec] = (section){0};
                sec[nsec].name = strndup(name, nl);
                if (!sec[nsec].name) { st = gyro_error_set(GYRO_ERR_NOMEM, "out of memory"); break; }
                nsec++;
                continue;
            }
            char *w[4];
            int nf = split_ws(p, w, 4);
            if (nf != 4) {
                st = gyro_error_set(GYRO_ERR_DATA, "%s:%llu: expected four words 'a b c d' or a ': section' "
                                    "line, found %s%d field%s", argv[fi], lineno, nf > 4 ? "more than " : "",
                                    nf > 4 ? 4 : nf, nf == 1 ? "" : "s");
                break;
            }
            if (nsec == 0) {   /* questions before any section */
                sec = malloc(sizeof *sec);
                if (!sec) { st = gyro_error_set(GYRO_ERR_NOMEM, "out of memory"); break; }
                sec[0] = (section){.name = strdup("(no section)")};
                nsec = 1;
            }
            if (nq == qcap) {
                qcap = qcap ? qcap * 2 : 256;
                question *nqv = realloc(q, (size_t)qcap * sizeof *q);
                if (!nqv) { st = gyro_error_set(GYRO_ERR_NOMEM, "out of memory"); break; }
                q = nqv;
            }
            question *qq = &q[nq];
            for (int k = 0; !st && k < 4; k++) st = word_point(&s, w[k], &qq->w[k]);
            if (st) { st = gyro_error_prefix(st, "%s:%llu", argv[fi], lineno); break; }
            qq->section = nsec - 1;
            qq->line = lineno;
            qq->file = fi;
            nq++;
        }
        if (!st && ferror(f)) st = gyro_error_set(GYRO_ERR_IO, "%s: read error", argv[fi]);
        if (f != stdin) fclose(f);
    }
    free(line);
    if (!st && nq == 0) st = gyro_error_set(GYRO_ERR_DATA, "no analogy questions in the file%s", argc - first > 1 ? "s" : "");

    /* candidates as they are compared: unit vectors (cosadd) or ball points (gyro) */
    const int n = s.n;
    double *cand = NULL, *tmp = malloc((size_t)8 * (size_t)n * sizeof *tmp);
    if (!st && !tmp) st = gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    if (!st && method == METHOD_COSADD) {
        cand = malloc((size_t)s.count * (size_t)n * sizeof *cand);
        if (!cand) st = gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
        for (int i = 0; !st && i < s.count; i++)
            if (s.ok[i]) unit(cand + (size_t)i * (size_t)n, s.pts + (size_t)i * (size_t)n, n, s.hyperbolic, s.c);
    }
    long shown = 0;
    int covered = 0, correct = 0;
    for (int i = 0; !st && i < nq; i++) {
        question *qq = &q[i];
        section *se = &sec[qq->section];
        se->total++;
        if (!s.ok[qq->w[0]] || !s.ok[qq->w[1]] || !s.ok[qq->w[2]] || !s.ok[qq->w[3]]) continue;
        se->covered++;
        covered++;
        const double *A = s.pts + (size_t)qq->w[0] * (size_t)n, *B = s.pts + (size_t)qq->w[1] * (size_t)n,
                     *Cc = s.pts + (size_t)qq->w[2] * (size_t)n;
        double *target = tmp;   /* (n) */
        if (method == METHOD_COSADD) {
            const double *ua = cand + (size_t)qq->w[0] * (size_t)n, *ub = cand + (size_t)qq->w[1] * (size_t)n,
                         *uc = cand + (size_t)qq->w[2] * (size_t)n;
            for (int k = 0; k < n; k++) target[k] = ub[k] - ua[k] + uc[k];
        } else {
            /* d* = c ⊕ gyr[c, ⊖a](⊖a ⊕ b), gyr[u,v]w = ⊖(u ⊕ v) ⊕ (u ⊕ (v ⊕ w)) */
            double *na = tmp + n, *ab = tmp + 2 * n, *vw = tmp + 3 * n, *uvw = tmp + 4 * n,
                   *uv = tmp + 5 * n, *g = tmp + 6 * n;
            for (int k = 0; k < n; k++) na[k] = -A[k];                       /* ⊖a */
            gyro_poincare_mobius_add_f64(ab, na, B, s.c, n);                 /* ⊖a ⊕ b */
            gyro_poincare_mobius_add_f64(vw, na, ab, s.c, n);                /* v ⊕ w */
            gyro_poincare_mobius_add_f64(uvw, Cc, vw, s.c, n);               /* u ⊕ (v ⊕ w) */
            gyro_poincare_mobius_add_f64(uv, Cc, na, s.c, n);                /* u ⊕ v */
            for (int k = 0; k < n; k++) uv[k] = -uv[k];
            gyro_poincare_mobius_add_f64(g, uv, uvw, s.c, n);                /* gyr[c, ⊖a](⊖a ⊕ b) */
            gyro_poincare_mobius_add_f64(target, Cc, g, s.c, n);             /* d* */
            gyro_poincare_project_f64(target, target, s.c, n);
        }
        int best = -1;
        double best_score = -INFINITY;
        for (int j = 0; j < s.count; j++) {
            if (!s.ok[j] || j == qq->w[0] || j == qq->w[1] || j == qq->w[2]) continue;
            double score;
            if (method == METHOD_COSADD) {
                const double *u = cand + (size_t)j * (size_t)n;
                score = 0;
                for (int k = 0; k < n; k++) score += u[k] * target[k];
            } else {
                score = -gyro_poincare_dist_f64(target, s.pts + (size_t)j * (size_t)n, s.c, n);
            }
            if (score > best_score) { best_score = score; best = j; }
        }
        if (best == qq->w[3]) {
            se->correct++;
            correct++;
        } else if (shown < o.show) {
            shown++;
            fprintf(stderr, "gyro analogy: %s:%llu: %s : %s :: %s : %s, predicted %s\n", argv[qq->file], qq->line,
                    gyro_strmap_key(s.words, qq->w[0]), gyro_strmap_key(s.words, qq->w[1]),
                    gyro_strmap_key(s.words, qq->w[2]), gyro_strmap_key(s.words, qq->w[3]),
                    best >= 0 ? gyro_strmap_key(s.words, best) : "(none)");
        }
    }
    if (!st) {
        printf("method: %s (%s table, %d candidates)\n",
               method == METHOD_GYRO ? "gyro: d = c (+) gyr[c,(-)a]((-)a (+) b), nearest by hyperbolic distance"
                                     : s.hyperbolic ? "3CosAdd over log0 images" : "3CosAdd",
               gyro_embedding_model_name(t->model), s.count);
        for (int i = 0; i < nsec; i++)
            printf("%s: %d/%d answered, %d correct, accuracy %s%.2f%%\n", sec[i].name, sec[i].covered,
                   sec[i].total, sec[i].correct, sec[i].covered ? "" : "n/a ",
                   sec[i].covered ? 100.0 * sec[i].correct / sec[i].covered : 0.0);
        printf("total: %d/%d answered, %d correct, accuracy %.2f%%\n", covered, nq, correct,
               covered ? 100.0 * correct / covered : 0.0);
        if (fflush(stdout) != 0) st = gyro_error_set(GYRO_ERR_IO, "stdout: write error");
    }
    for (int i = 0; i < nsec; i++) free(sec[i].name);
    free(sec);
    free(q);
    free(cand);
    free(tmp);
    free(s.pts);
    free(s.ok);
    free(s.buf);
    gyro_strmap_free(s.words);
    gyro_tokenizer_free(s.tok);
    gyro_embedding_table_free(t);
    return st ? gyro_cli_fail(CMD, st) : 0;
}

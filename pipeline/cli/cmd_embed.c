/* cmd_embed.c — `gyro embed`: print character vectors or sentence vectors, as fastText's
 * print-word-vectors and print-sentence-vectors do.
 *
 *   gyro embed -t TABLE [--sentence] [IN|-]     a char2vec table (any model)
 *   gyro embed -m MODEL [--sentence] [IN|-]     an n-gram classifier (--arch ngrams)
 *
 * Input is UTF-8 text, one sentence a line, normalized and cut into characters as the table's
 * trainer (char2vec: the default normalization) or the model does. Character mode prints one
 * line per character, "char v1 v2 ...", in the source's own coordinates (a hyperboloid table's
 * rows have dim + 1, time first). Sentence mode prints one line of numbers per input line: the
 * sentence as the source composes it —
 *   table, euclidean:   the mean of the characters' vectors;
 *   table, Poincaré:    their Einstein midpoint (Ungar's gyromidpoint; models/hyp/poincare.h);
 *   table, hyperboloid: their Lorentz centroid (Law et al. 2019; models/hyp/lorentz.h), the same
 *                       point as the Einstein midpoint of the ball images (as `gyro similarity`
 *                       composes a word);
 *   n-gram model:       the pooled point y of its bag (characters and hashed n-grams, pooled as
 *                       the model was trained: tangent mean or Einstein midpoint in the ball,
 *                       the mean in Euclidean space) — the point its classifier head reads.
 * Characters missing from a table are left out of a sentence and printed at the origin in
 * character mode (fastText prints zeros for a word it cannot build); an n-gram model maps them
 * to its UNK row, as it does when classifying. Counts go to stderr at the end. On a terminal or
 * a pipe each line's output is flushed as soon as it is written.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "embeddings/table.h"
#include "models/classifier.h"
#include "models/hyp/lorentz.h"
#include "models/hyp/poincare.h"
#include "models/ngrams.h"
#include "models/tokenizer.h"
#include "pipeline/cli/cli.h"
#include "pipeline/cli/opts.h"
#include "pipeline/table_file.h"

#define CMD "embed"

typedef struct embed_args {
    const char *table, *model;
    int sentence;
} embed_args;

static const gyro_opt embed_opts[] = {
    GYRO_O_STR("table", 't', embed_args, table, "TABLE", NULL, "a char2vec embedding table"),
    GYRO_O_STR("model", 'm', embed_args, model, "MODEL", NULL,
               "an n-gram classifier (classify train --arch ngrams, the default architecture)"),
    GYRO_O_FLAG("sentence", 0, embed_args, sentence,
                "one vector per input line: the sentence as the table or model composes it (mean, "
                "Einstein midpoint or Lorentz centroid of a table's characters; an n-gram model's "
                "pooled point)"),
    GYRO_O_END,
};

const gyro_cmd_spec gyro_spec_embed = {
    "embed", "(-t TABLE | -m MODEL) [--sentence] [IN|-]",
    "Print the vector of each character of the input lines ('char v1 v2 ...', as fasttext "
    "print-word-vectors), or with --sentence one vector per line (as fasttext "
    "print-sentence-vectors), in the table's or model's own coordinates.",
    "Characters missing from a table are printed at the origin and left out of sentences; the "
    "counts go to stderr. Exit status: 0 done, 1 I/O error, 2 usage (a transformer model has no "
    "sentence vector here), 65 a table or model that is not one, invalid UTF-8 in the input.",
    embed_opts,
    NULL,
};

/* ---- sources ---------------------------------------------------------------------------------- */

typedef struct embed_src {
    const gyro_embedding_table *t;   /* or */
    const gyro_classifier *m;
    const gyro_ngrams_model *ng;
    gyro_tokenizer *tok;
    int width;                       /* floats printed per vector */
    /* scratch */
    double *acc;                     /* (rows_cap, width) the known rows of a sentence, in double */
    double *y;                       /* (width) */
    double *ones;                    /* (rows_cap) */
    int rows_cap;
    int32_t *ids, *rows;             /* model: (max_len), (bag_cap) */
    uint64_t *hash;                  /* (max_len) */
    float *w, *py, *logits;          /* (bag_cap), (dim), (K) */
    uint64_t chars, unknown, empty;  /* counts */
} embed_src;

static void print_vec_f(FILE *out, const float *x, int n)
{
    for (int k = 0; k < n; k++) fprintf(out, k ? " %.9g" : "%.9g", (double)x[k]);
}

static void print_vec_d(FILE *out, const double *x, int n)
{
    for (int k = 0; k < n; k++) fprintf(out, k ? " %.9g" : "%.9g", (double)(float)x[k]);
}

/* The origin of the table's model, in its coordinates, into y (width). */
static void origin(const embed_src *e, double *y)
{
    memset(y, 0, (size_t)e->width * sizeof *y);
    if (e->t && e->t->model == GYRO_EMBEDDING_HYPERBOLOID) y[0] = 1;
}

static gyro_status grow_rows(embed_src *e, int need)
{
    if (need <= e->rows_cap) return GYRO_OK;
    int cap = need * 2;
    double *a = realloc(e->acc, (size_t)cap * (size_t)e->width * sizeof *a);
    if (a) e->acc = a;
    double *o = a ? realloc(e->ones, (size_t)cap * sizeof *o) : NULL;
    if (o) e->ones = o;
    if (!a || !o) return gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    for (int i = e->rows_cap; i < cap; i++) e->ones[i] = 1;
    e->rows_cap = cap;
    return GYRO_OK;
}

/* One input line: its characters, or its sentence vector, on out. */
static gyro_status embed_line(embed_src *e, const char *line, int sentence, FILE *out)
{
    char *const *toks;
    size_t n;
    const char *norm;
    gyro_status st = gyro_tokenizer_run(e->tok, line, strlen(line), &toks, &n, &norm);
    if (st) return st;
    if (e->m) {
        if (!sentence) {
            for (size_t i = 0; i < n; i++) {
                int id = gyro_classifier_token_id(e->m, toks[i]);
                e->chars++;
                if (id == GYRO_CLASSIFIER_UNK) e->unknown++;
                fprintf(out, "%s ", toks[i]);
                print_vec_f(out, e->ng->emb + (size_t)id * (size_t)e->ng->cfg.dim, e->ng->cfg.dim);
                fputc('\n', out);
            }
            return GYRO_OK;
        }
        int nb = 0, n_text = 0;
        st = gyro_classifier_ngram_bag(e->m, e->tok, line, NULL, e->ids, e->hash, e->rows, e->w, &nb,
                                       &n_text, NULL);
        if (st) return st;
        e->chars += (uint64_t)n_text;
        if (n_text == 0) e->empty++;
        gyro_ngrams_forward(e->ng, e->rows, e->w, nb, e->py, e->logits);
        print_vec_f(out, e->py, e->ng->cfg.dim);
        fputc('\n', out);
        return GYRO_OK;
    }
    const gyro_embedding_table *t = e->t;
    if (!sentence) {
        for (size_t i = 0; i < n; i++) {
            int r = gyro_embedding_table_find(t, toks[i]);
            e->chars++;
            fprintf(out, "%s ", toks[i]);
            if (r < 0) {
                e->unknown++;
                origin(e, e->y);
                print_vec_d(out, e->y, e->width);
            } else {
                print_vec_f(out, t->vectors + (size_t)r * (size_t)t->stride, t->stride);
            }
            fputc('\n', out);
        }
        return GYRO_OK;
    }
    if ((st = grow_rows(e, (int)n + 1))) return st;
    int k = 0;
    for (size_t i = 0; i < n; i++) {
        int r = gyro_embedding_table_find(t, toks[i]);
        e->chars++;
        if (r < 0) { e->unknown++; continue; }
        const float *x = t->vectors + (size_t)r * (size_t)t->stride;
        for (int j = 0; j < t->stride; j++) e->acc[(size_t)k * (size_t)t->stride + (size_t)j] = x[j];
        k++;
    }
    if (k == 0) {
        e->empty++;
        origin(e, e->y);
    } else if (t->model == GYRO_EMBEDDING_POINCARE) {
        gyro_poincare_einstein_midpoint_f64(e->y, e->acc, NULL, NULL, t->curvature, k, t->dim);
    } else if (t->model == GYRO_EMBEDDING_HYPERBOLOID) {
        gyro_lorentz_centroid_f64(e->y, e->acc, e->ones, k, t->dim);
    } else {
        for (int j = 0; j < t->stride; j++) {
            double s = 0;
            for (int i = 0; i < k; i++) s += e->acc[(size_t)i * (size_t)t->stride + (size_t)j];
            e->y[j] = s / k;
        }
    }
    print_vec_d(out, e->y, e->width);
    fputc('\n', out);
    return GYRO_OK;
}

int gyro_cmd_embed(int argc, char **argv)
{
    embed_args o = {0};
    int first, rc = gyro_opts_parse(&gyro_spec_embed, argc, argv, &o, &first);
    if (rc != GYRO_OPTS_CONTINUE) return rc;
    if (!o.table == !o.model) return gyro_cli_usage_error(CMD, "give one source: -t TABLE or -m MODEL");
    if (argc - first > 1) return gyro_cli_usage_error(CMD, "at most one input file");
    const char *in_path = first < argc ? argv[first] : "-";

    embed_src e = {0};
    gyro_embedding_table *table = NULL;
    gyro_classifier *model = NULL;
    gyro_status st;
    if (o.table) {
        if ((st = gyro_table_file_load(o.table, &table))) return gyro_cli_fail(CMD, st);
        e.t = table;
        e.width = table->stride;
        st = gyro_tokenizer_new(NULL, GYRO_TOKEN_CHARS, &e.tok);
    } else {
        if ((st = gyro_classifier_load(o.model, &model))) return gyro_cli_fail(CMD, st);
        e.m = model;
        e.ng = gyro_classifier_ngrams_const(model);
        if (!e.ng) {
            gyro_classifier_free(model);
            return gyro_cli_usage_error(CMD, "%s is a %s model: gyro embed reads n-gram models "
                                        "(classify train --arch ngrams) and char2vec tables",
                                        o.model, gyro_classifier_arch_name(model));
        }
        e.width = e.ng->cfg.dim;
        int L = e.ng->cfg.max_len, cap = gyro_ngram_bag_cap(e.ng);
        e.ids = malloc((size_t)L * sizeof *e.ids);
        e.hash = malloc((size_t)L * sizeof *e.hash);
        e.rows = malloc((size_t)cap * sizeof *e.rows);
        e.w = malloc((size_t)cap * sizeof *e.w);
        e.py = malloc((size_t)e.width * sizeof *e.py);
        e.logits = malloc((size_t)gyro_ngrams_head_rows(e.ng) * sizeof *e.logits);   /* (K + P) */
        st = e.ids && e.hash && e.rows && e.w && e.py && e.logits ? GYRO_OK : gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
        if (!st) st = gyro_tokenizer_new(gyro_classifier_normalize_options(model),
                                         gyro_classifier_token_unit(model), &e.tok);
    }
    e.y = st ? NULL : malloc((size_t)e.width * sizeof *e.y);
    if (!st && !e.y) st = gyro_error_set(GYRO_ERR_NOMEM, "out of memory");

    FILE *in = NULL;
    if (!st) {
        in = strcmp(in_path, "-") == 0 ? stdin : fopen(in_path, "rb");
        if (!in) st = gyro_error_set(GYRO_ERR_IO, "%s: cannot open", in_path);
    }
    struct stat sb;
    int flush_each = in && (fstat(fileno(in), &sb) != 0 || !S_ISREG(sb.st_mode));
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    unsigned long long lineno = 0;
    while (!st && (len = getline(&line, &cap, in)) != -1) {
        lineno++;
        if (len > 0 && line[len - 1] == '\n') line[--len] = '\0';
        if (len > 0 && line[len - 1] == '\r') line[--len] = '\0';
        if ((size_t)len != strlen(line)) {
            st = gyro_error_set(GYRO_ERR_DATA, "%s:%llu: NUL byte in the text", in_path, lineno);
            break;
        }
        st = embed_line(&e, line, o.sentence, stdout);
        if (st) st = gyro_error_prefix(st, "%s:%llu", in_path, lineno);
        if (!st && flush_each) fflush(stdout);
        if (!st && ferror(stdout)) st = gyro_error_set(GYRO_ERR_IO, "stdout: write error");
    }
    if (!st && in && ferror(in)) st = gyro_error_set(GYRO_ERR_IO, "%s: read error", in_path);
    if (!st && fflush(stdout) != 0) st = gyro_error_set(GYRO_ERR_IO, "stdout: write error");
    if (!st && e.unknown)
        fprintf(stderr, "gyro embed: %llu of %llu characters not in the %s (%s)\n",
                (unsigned long long)e.unknown, (unsigned long long)e.chars, e.t ? "table" : "model",
                e.t ? (o.sentence ? "left out of their sentences" : "printed at the origin")
                    : "the model's UNK row");
    if (!st && e.empty)
        fprintf(stderr, "gyro embed: %llu line%s without a %s character (%s)\n",
                (unsigned long long)e.empty, e.empty == 1 ? "" : "s", e.t ? "known" : "single",
                e.t ? "printed at the origin" : "the point of the UNK row");
    free(line);
    if (in && in != stdin) fclose(in);
    gyro_tokenizer_free(e.tok);
    free(e.acc);
    free(e.ones);
    free(e.y);
    free(e.ids);
    free(e.hash);
    free(e.rows);
    free(e.w);
    free(e.py);
    free(e.logits);
    gyro_embedding_table_free(table);
    gyro_classifier_free(model);
    return st ? gyro_cli_fail(CMD, st) : 0;
}

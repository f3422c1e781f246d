/* vec_file.c — word2vec/fastText text vectors into an embedding table (see vec_file.h).
 *
 * One pass with getline: rows are parsed into a growing float block and a token list, then
 * copied into a table of the right size. Every check names the line, so a truncated download
 * or a file of the wrong dimension is reported where it goes wrong.
 */
#include "pipeline/vec_file.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_COLUMNS GYRO_TABLE_MAX_DIM

static int sep(char ch) { return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n'; }

/* Next field of *p: its start (NULL at the end of the line) and length; *p moves past it. */
static const char *next_field(char **p, size_t *len)
{
    char *s = *p;
    while (*s && sep(*s)) s++;
    if (!*s) { *p = s; return NULL; }
    char *e = s;
    while (*e && !sep(*e)) e++;
    *len = (size_t)(e - s);
    *p = e;
    return s;
}

/* Count the fields of a line without changing it. */
static long count_fields(const char *line)
{
    char *p = (char *)line;
    size_t len;
    long n = 0;
    while (next_field(&p, &len)) n++;
    return n;
}

/* A positive integer field; -1 if it is not one. */
static long parse_count(const char *s, size_t len)
{
    if (len == 0 || len > 12) return -1;
    long v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

typedef struct rows {
    float *v;            /* (n, cols) */
    char **tok;          /* (n) owned */
    uint64_t *line;      /* (n) */
    size_t n, cap;
} rows;

static void rows_free(rows *r)
{
    for (size_t i = 0; i < r->n; i++) free(r->tok[i]);
    free(r->v);
    free(r->tok);
    free(r->line);
}

static int rows_grow(rows *r, long cols)
{
    if (r->n < r->cap) return 0;
    size_t cap = r->cap ? r->cap * 2 : 1024;
    float *v = realloc(r->v, cap * (size_t)cols * sizeof *v);
    if (!v) return -1;
    r->v = v;
    char **t = realloc(r->tok, cap * sizeof *t);
    if (!t) return -1;
    r->tok = t;
    uint64_t *l = realloc(r->line, cap * sizeof *l);
    if (!l) return -1;
    r->line = l;
    r->cap = cap;
    return 0;
}

/* Parse one row "token v1 .. v_cols" of `line` into r. */
static gyro_status parse_row(rows *r, char *line, long cols, const char *path, uint64_t lineno)
{
    char *p = line;
    size_t len;
    const char *tok = next_field(&p, &len);
    if (!tok) return GYRO_OK; /* callers skip blank lines before */
    size_t tl = len;
    if (rows_grow(r, cols)) return gyro_error_set(GYRO_ERR_NOMEM, "out of memory reading %s", path);
    float *x = r->v + r->n * (size_t)cols;
    long k = 0;
    const char *f;
    while ((f = next_field(&p, &len))) {
        if (k == cols)
            return gyro_error_set(GYRO_ERR_DATA, "%s:%llu: %ld values after the token, expected %ld",
                                  path, (unsigned long long)lineno, count_fields(line) - 1, cols);
        char buf[64];
        if (len >= sizeof buf)
            return gyro_error_set(GYRO_ERR_DATA, "%s:%llu: value %ld is not a number", path,
                                  (unsigned long long)lineno, k + 1);
        memcpy(buf, f, len);
        buf[len] = '\0';
        char *end;
        double d = strtod(buf, &end);
        if (end == buf || *end)
            return gyro_error_set(GYRO_ERR_DATA, "%s:%llu: value %ld ('%s') is not a number", path,
                                  (unsigned long long)lineno, k + 1, buf);
        if (!isfinite(d) || !isfinite((float)d))
            return gyro_error_set(GYRO_ERR_DATA, "%s:%llu: value %ld ('%s') is not finite (in float32)",
                                  path, (unsigned long long)lineno, k + 1, buf);
        x[k++] = (float)d;
    }
    if (k != cols)
        return gyro_error_set(GYRO_ERR_DATA, "%s:%llu: %ld values after the token, expected %ld", path,
                              (unsigned long long)lineno, k, cols);
    char *t = malloc(tl + 1);
    if (!t) return gyro_error_set(GYRO_ERR_NOMEM, "out of memory reading %s", path);
    memcpy(t, tok, tl);
    t[tl] = '\0';
    r->tok[r->n] = t;
    r->line[r->n] = lineno;
    r->n++;
    return GYRO_OK;
}

gyro_status gyro_vec_file_load(const char *path, int model, double curvature,
                               gyro_embedding_table **out, int *had_header)
{
    *out = NULL;
    if (had_header) *had_header = 0;
    if (model != GYRO_EMBEDDING_EUCLIDEAN && model != GYRO_EMBEDDING_POINCARE &&
        model != GYRO_EMBEDDING_HYPERBOLOID)
        return gyro_error_set(GYRO_ERR_USAGE, "unknown embedding model %d", model);
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (!f) return gyro_error_set(GYRO_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    char *line = NULL;
    size_t cap = 0;
    ssize_t got;
    uint64_t lineno = 0;
    long header_rows = -1, cols = -1;
    rows r = {0};
    gyro_status st = GYRO_OK;
    while ((got = getline(&line, &cap, f)) != -1) {
        lineno++;
        if (lineno == 1 && got >= 3 && memcmp(line, "\xEF\xBB\xBF", 3) == 0) memmove(line, line + 3, (size_t)got - 2);
        if (memchr(line, '\0', (size_t)got)) {
            st = gyro_error_set(GYRO_ERR_DATA, "%s:%llu: NUL byte (a binary .bin file? gyro reads the "
                                "text .vec)", path, (unsigned long long)lineno);
            break;
        }
        long nf = count_fields(line);
        if (nf == 0) continue;
        if (cols < 0) {
            /* the header "ROWS COLUMNS", or the first row of a headerless file */
            char *p = line;
            size_t l1, l2;
            const char *a = next_field(&p, &l1), *b = next_field(&p, &l2);
            long ra = nf == 2 ? parse_count(a, l1) : -1, cb = nf == 2 ? parse_count(b, l2) : -1;
            if (nf == 2 && ra >= 0 && cb >= 0) {
                if (ra == 0 || cb == 0 || cb > MAX_COLUMNS) {
                    st = gyro_error_set(GYRO_ERR_DATA, "%s:1: header '%ld %ld': rows and columns must be "
                                        "positive (columns at most %d)", path, ra, cb, MAX_COLUMNS);
                    break;
                }
                header_rows = ra;
                cols = cb;
                if (had_header) *had_header = 1;
                continue;
            }
            if (nf == 1) {
                st = gyro_error_set(GYRO_ERR_DATA, "%s:%llu: a header must be two positive integers "
                                    "'ROWS COLUMNS' and a row a token and its values; found one field",
                                    path, (unsigned long long)lineno);
                break;
            }
            cols = nf - 1;
            if (cols > MAX_COLUMNS) {
                st = gyro_error_set(GYRO_ERR_DATA, "%s:%llu: %ld values, more than %d", path,
                                    (unsigned long long)lineno, cols, MAX_COLUMNS);
                break;
            }
        }
        if (header_rows >= 0 && (long)r.n == header_rows) {
            st = gyro_error_set(GYRO_ERR_DATA, "%s:%llu: more rows than the header's %ld", path,
                                (unsigned long long)lineno, header_rows);
            break;
        }
        if ((st = parse_row(&r, line, cols, path, lineno))) break;
    }
    if (!st && ferror(f)) st = gyro_error_set(GYRO_ERR_IO, "%s: read error: %s", path, strerror(errno));
    free(line);
    if (f != stdin) fclose(f);
    if (!st && r.n == 0) st = gyro_error_set(GYRO_ERR_DATA, "%s: no vectors", path);
    if (!st && header_rows >= 0 && (long)r.n != header_rows)
        st = gyro_error_set(GYRO_ERR_DATA, "%s: the header says %ld rows, the file has %zu (truncated?)",
                            path, header_rows, r.n);
    int dim = (int)cols - (model == GYRO_EMBEDDING_HYPERBOLOID);
    if (!st && dim < 1) st = gyro_error_set(GYRO_ERR_DATA, "%s: %ld columns: too few for a hyperboloid row "
                                            "(time coordinate and at least one more)", path, cols);
    if (!st && r.n > (size_t)INT32_MAX) st = gyro_error_set(GYRO_ERR_LIMIT, "%s: too many rows", path);
    gyro_embedding_table *t = NULL;
    if (!st) st = gyro_embedding_table_new(model, curvature, dim, (int)r.n, &t);
    for (size_t i = 0; !st && i < r.n; i++) {
        float *x = r.v + i * (size_t)cols;
        if (model == GYRO_EMBEDDING_HYPERBOLOID) {
            double s2 = 0;
            for (long k = 1; k < cols; k++) s2 += (double)x[k] * x[k];
            double x0 = sqrt(1.0 + s2);
            if (!(fabs(x[0] - x0) <= 1e-3 * x0)) {
                st = gyro_error_set(GYRO_ERR_DATA, "%s:%llu: '%s' is not on the hyperboloid (x0 = %g, "
                                    "sqrt(1 + |x_s|^2) = %g)", path, (unsigned long long)r.line[i],
                                    r.tok[i], (double)x[0], x0);
                break;
            }
            x[0] = (float)x0;
        } else if (model == GYRO_EMBEDDING_POINCARE) {
            double n2 = 0;
            for (long k = 0; k < cols; k++) n2 += (double)x[k] * x[k];
            if (!(curvature * n2 < 1)) {
                st = gyro_error_set(GYRO_ERR_DATA, "%s:%llu: '%s' is not inside the Poincare ball "
                                    "(c|x|^2 = %g)", path, (unsigned long long)r.line[i], r.tok[i],
                                    curvature * n2);
                break;
            }
        }
        memcpy(t->vectors + i * (size_t)t->stride, x, (size_t)cols * sizeof *x);
        st = gyro_embedding_table_set_token(t, (int)i, r.tok[i], (uint64_t)(r.n - i));
        if (st) st = gyro_error_prefix(st, "%s:%llu", path, (unsigned long long)r.line[i]);
    }
    rows_free(&r);
    if (st) {
        gyro_embedding_table_free(t);
        return st;
    }
    *out = t;
    return GYRO_OK;
}

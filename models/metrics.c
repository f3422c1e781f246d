/* metrics.c — classifier evaluation from a confusion matrix (see metrics.h).
 *
 * All figures are computed on demand from the counts, so adding an example is O(1) and the
 * matrix can be merged or re-reported at will. Hierarchy levels compare label strings cut at a
 * level; the comparison is done once per (true, predicted) cell with a non-zero count, so the
 * cost is O(k² · label length) at most, independent of the number of examples.
 */
#include "models/metrics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/core/atomic_file.h"

gyro_status gyro_metrics_init(gyro_metrics *m, int k)
{
    memset(m, 0, sizeof *m);
    if (k < 1) return gyro_error_set(GYRO_ERR_USAGE, "metrics: %d classes", k);
    m->confusion = calloc((size_t)k * (size_t)k, sizeof *m->confusion);
    if (!m->confusion) return gyro_error_set(GYRO_ERR_NOMEM, "metrics: %d×%d matrix", k, k);
    m->k = k;
    return GYRO_OK;
}

void gyro_metrics_free(gyro_metrics *m)
{
    if (!m) return;
    free(m->confusion);
    memset(m, 0, sizeof *m);
}

void gyro_metrics_add(gyro_metrics *m, int truth, int pred, double p_true)
{
    if (truth < 0 || truth >= m->k || pred < 0 || pred >= m->k) return;
    m->confusion[(size_t)truth * m->k + pred]++;
    m->n++;
    if (p_true >= 0) {
        if (!(p_true >= 1e-12)) p_true = 1e-12; /* also catches NaN */
        m->loss_sum += -log(p_true);
        m->loss_n++;
    }
}

double gyro_metrics_accuracy(const gyro_metrics *m)
{
    if (m->n == 0) return NAN;
    uint64_t ok = 0;
    for (int i = 0; i < m->k; i++) ok += m->confusion[(size_t)i * m->k + i];
    return (double)ok / (double)m->n;
}

double gyro_metrics_cross_entropy(const gyro_metrics *m)
{
    return m->loss_n ? m->loss_sum / (double)m->loss_n : NAN;
}

gyro_class_stats gyro_metrics_class(const gyro_metrics *m, int c)
{
    gyro_class_stats s = {0};
    size_t k = (size_t)m->k;
    for (size_t j = 0; j < k; j++) s.support += m->confusion[(size_t)c * k + j];
    for (size_t i = 0; i < k; i++) s.predicted += m->confusion[i * k + (size_t)c];
    s.correct = m->confusion[(size_t)c * k + (size_t)c];
    s.precision = s.predicted ? (double)s.correct / (double)s.predicted : NAN;
    s.recall = s.support ? (double)s.correct / (double)s.support : NAN;
    s.f1 = (s.correct > 0) ? 2.0 * s.precision * s.recall / (s.precision + s.recall) : 0.0;
    return s;
}

double gyro_metrics_macro_f1(const gyro_metrics *m)
{
    double sum = 0;
    int present = 0;
    for (int c = 0; c < m->k; c++) {
        gyro_class_stats s = gyro_metrics_class(m, c);
        if (s.support == 0 && s.predicted == 0) continue;
        sum += s.f1;
        present++;
    }
    return present ? sum / present : NAN;
}

/* ---- hierarchy levels ----------------------------------------------------------------------- */

/* Depth of a label: the largest number of dot-separated components of any of its atoms. */
static int label_depth(const char *label)
{
    int best = 1, cur = 1;
    for (const char *p = label; *p; p++) {
        if (*p == '.') cur++;
        else if (*p == '+') { if (cur > best) best = cur; cur = 1; }
    }
    return cur > best ? cur : best;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Write into buf the label cut at `level`: each atom cut to `level` components, atoms sorted
 * and de-duplicated, joined by '+'. Returns 0, or -1 if buf is too small / too many atoms. */
static int label_cut(const char *label, int level, char *buf, size_t cap)
{
    enum { MAX_ATOMS = 64 };
    char tmp[1024];
    size_t len = strlen(label);
    if (len >= sizeof tmp || len >= cap) return -1;
    memcpy(tmp, label, len + 1);
    char *atoms[MAX_ATOMS];
    int n = 0;
    for (char *tok = tmp, *end; tok; tok = end) {
        end = strchr(tok, '+');
        if (end) *end++ = '\0';
        if (n == MAX_ATOMS) return -1;
        int comp = 1;
        for (char *p = tok; *p; p++)
            if (*p == '.' && ++comp > level) { *p = '\0'; break; }
        atoms[n++] = tok;
    }
    qsort(atoms, (size_t)n, sizeof *atoms, cmp_str);
    size_t off = 0;
    for (int i = 0; i < n; i++) {
        if (i > 0 && strcmp(atoms[i], atoms[i - 1]) == 0) continue;
        size_t l = strlen(atoms[i]);
        if (off + l + 2 > cap) return -1;
        if (off) buf[off++] = '+';
        memcpy(buf + off, atoms[i], l);
        off += l;
    }
    buf[off] = '\0';
    return 0;
}

int gyro_metrics_level_accuracy(const gyro_metrics *m, const char *const *labels, double *acc,
                                int max_levels)
{
    int depth = 1;
    for (int c = 0; c < m->k; c++) {
        int d = label_depth(labels[c]);
        if (d > depth) depth = d;
    }
    if (depth > max_levels) depth = max_levels;
    size_t k = (size_t)m->k;
    for (int l = 1; l <= depth; l++) {
        uint64_t ok = 0;
        for (size_t i = 0; i < k; i++) {
            char a[1024];
            int bad_a = label_cut(labels[i], l, a, sizeof a);
            for (size_t j = 0; j < k; j++) {
                uint64_t cnt = m->confusion[i * k + j];
                if (!cnt) continue;
                if (i == j) { ok += cnt; continue; }
                if (l == depth) continue; /* the deepest level is exact match */
                char b[1024];
                if (bad_a == 0 && label_cut(labels[j], l, b, sizeof b) == 0 && strcmp(a, b) == 0)
                    ok += cnt;
            }
        }
        acc[l - 1] = m->n ? (double)ok / (double)m->n : NAN;
    }
    return depth;
}

/* ---- reports -------------------------------------------------------------------------------- */

typedef struct { int c; uint64_t support; } class_rank;
static int cmp_rank(const void *a, const void *b)
{
    const class_rank *x = a, *y = b;
    if (x->support != y->support) return x->support < y->support ? 1 : -1;
    return x->c - y->c;
}

static void fmt_pct(char *buf, size_t cap, double v)
{
    if (isnan(v)) snprintf(buf, cap, "%7s", "-");
    else snprintf(buf, cap, "%6.2f%%", 100.0 * v);
}

gyro_status gyro_metrics_write_text(const gyro_metrics *m, const char *const *labels,
                                    int max_confusion, FILE *out)
{
    char a[32], b[32], c[32];
    fprintf(out, "examples: %llu\n", (unsigned long long)m->n);
    fmt_pct(a, sizeof a, gyro_metrics_accuracy(m));
    fmt_pct(b, sizeof b, gyro_metrics_macro_f1(m));
    fprintf(out, "accuracy: %s\nmacro-F1: %s\n", a, b);
    double ce = gyro_metrics_cross_entropy(m);
    if (!isnan(ce)) fprintf(out, "cross-entropy: %.4f\n", ce);
    double lv[GYRO_METRICS_MAX_LEVELS];
    int nl = gyro_metrics_level_accuracy(m, labels, lv, GYRO_METRICS_MAX_LEVELS);
    if (nl > 1)
        for (int l = 0; l < nl; l++) {
            fmt_pct(a, sizeof a, lv[l]);
            fprintf(out, "accuracy at level %d: %s\n", l + 1, a);
        }

    int w = 5;
    for (int i = 0; i < m->k; i++) {
        int l = (int)strlen(labels[i]);
        if (l > w) w = l;
    }
    if (w > 48) w = 48;
    fprintf(out, "\n%-*s %8s %8s %8s %8s\n", w, "intent", "support", "precision", "recall", "F1");
    for (int i = 0; i < m->k; i++) {
        gyro_class_stats s = gyro_metrics_class(m, i);
        if (s.support == 0 && s.predicted == 0) continue;
        fmt_pct(a, sizeof a, s.precision);
        fmt_pct(b, sizeof b, s.recall);
        fmt_pct(c, sizeof c, s.f1);
        fprintf(out, "%-*.*s %8llu %9s %8s %8s\n", w, w, labels[i],
                (unsigned long long)s.support, a, b, c);
    }

    /* confusion matrix over the most frequent true classes */
    class_rank *rank = malloc((size_t)m->k * sizeof *rank);
    if (!rank) return gyro_error_set(GYRO_ERR_NOMEM, "metrics report");
    int nr = 0;
    for (int i = 0; i < m->k; i++) {
        gyro_class_stats s = gyro_metrics_class(m, i);
        if (s.support || s.predicted) rank[nr++] = (class_rank){i, s.support};
    }
    qsort(rank, (size_t)nr, sizeof *rank, cmp_rank);
    if (max_confusion > 0 && nr > max_confusion) nr = max_confusion;
    fprintf(out, "\nconfusion matrix (rows: true, columns: predicted; %d classes", nr);
    fprintf(out, nr < m->k ? ", most frequent first)\n" : ")\n");
    for (int r = 0; r < nr; r++) fprintf(out, "%4d %s\n", r, labels[rank[r].c]);
    fprintf(out, "%5s", "");
    for (int col = 0; col < nr; col++) fprintf(out, " %5d", col);
    fputc('\n', out);
    for (int r = 0; r < nr; r++) {
        fprintf(out, "%5d", r);
        for (int col = 0; col < nr; col++)
            fprintf(out, " %5llu",
                    (unsigned long long)m->confusion[(size_t)rank[r].c * m->k + rank[col].c]);
        fputc('\n', out);
    }
    free(rank);
    if (ferror(out)) return gyro_error_set(GYRO_ERR_IO, "metrics report: write error");
    return GYRO_OK;
}

static void svg_escape(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f);
        }
    }
}

gyro_status gyro_metrics_write_svg(const gyro_metrics *m, const char *const *labels,
                                   const char *path)
{
    gyro_atomic_file af;
    gyro_status st = gyro_atomic_open(&af, path);
    if (st) return st;
    FILE *f = af.fp;
    int k = m->k, cell = k > 60 ? 8 : (k > 20 ? 14 : 28), margin = 200;
    int size = margin + k * cell + 20;
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
               "font-family=\"sans-serif\" font-size=\"%d\">\n",
            size, size, cell > 10 ? 10 : 7);
    fprintf(f, "<title>confusion matrix: %llu examples, accuracy %.4f</title>\n",
            (unsigned long long)m->n, m->n ? gyro_metrics_accuracy(m) : 0.0);
    fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
    for (int i = 0; i < k; i++) {
        int y = margin + i * cell + cell / 2 + 3;
        fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", margin - 4, y);
        svg_escape(f, labels[i]);
        fprintf(f, "</text>\n<text transform=\"translate(%d,%d) rotate(-90)\">",
                margin + i * cell + cell / 2 + 3, margin - 4);
        svg_escape(f, labels[i]);
        fputs("</text>\n", f);
    }
    for (int i = 0; i < k; i++) {
        uint64_t row = 0;
        for (int j = 0; j < k; j++) row += m->confusion[(size_t)i * k + j];
        for (int j = 0; j < k; j++) {
            uint64_t cnt = m->confusion[(size_t)i * k + j];
            double frac = row ? (double)cnt / (double)row : 0.0;
            /* white → blue for the diagonal, white → red elsewhere */
            int shade = (int)lround(255.0 * (1.0 - frac));
            int r = i == j ? shade : 255, g = shade, b = i == j ? 255 : shade;
            fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#%02x%02x%02x\" "
                       "stroke=\"#ddd\"><title>",
                    margin + j * cell, margin + i * cell, cell, cell, r, g, b);
            svg_escape(f, labels[i]);
            fputs(" → ", f);
            svg_escape(f, labels[j]);
            fprintf(f, ": %llu</title></rect>\n", (unsigned long long)cnt);
            if (cnt && cell >= 20)
                fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" font-size=\"8\">%llu</text>\n",
                        margin + j * cell + cell / 2, margin + i * cell + cell / 2 + 3,
                        (unsigned long long)cnt);
        }
    }
    fputs("</svg>\n", f);
    if (ferror(f)) {
        gyro_atomic_abort(&af);
        return gyro_error_set(GYRO_ERR_IO, "%s: write error", path);
    }
    return gyro_atomic_commit(&af);
}

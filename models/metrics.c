/* metrics.c — classifier evaluation from a confusion matrix (see metrics.h).
 *
 * All figures are computed on demand from the counts, so adding an example is O(1) and the
 * matrix can be merged or re-reported at will. Hierarchy levels compare the per-class
 * projections the label set (models/text/labels.h) keeps; the comparison is done once per
 * (true, predicted) cell with a non-zero count, so the cost is O(k² · label length) at most,
 * independent of the number of examples.
 */
#include "models/metrics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>


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
    for (int i = 0; i < m->n_unseen_labels; i++) free(m->unseen_name[i]);
    free(m->unseen_name);
    free(m->unseen_confusion);
    free(m->atom_score);
    free(m->atom_gold);
    memset(m, 0, sizeof *m);
}

gyro_status gyro_metrics_rank(gyro_metrics *m, const gyro_label_set *set, int at_k)
{
    if (!set || gyro_label_set_count(set) != m->k || at_k < 1)
        return gyro_error_set(GYRO_ERR_USAGE, "metrics: P@k needs the model's label set and k >= 1");
    int na = gyro_label_set_atom_count(set);
    size_t cap = (size_t)(na > 0 ? na : 1);
    double *score = malloc(cap * sizeof *score);
    int *gold = calloc(cap, sizeof *gold);
    if (!score || !gold) {
        free(score);
        free(gold);
        return gyro_error_set(GYRO_ERR_NOMEM, "metrics: %d atoms", na);
    }
    free(m->atom_score);
    free(m->atom_gold);
    m->atom_score = score;
    m->atom_gold = gold;
    m->rank_set = set;
    m->at_k = at_k;
    return GYRO_OK;
}

/* The first class of the largest probability (NaN never wins), as the evaluation loop takes it. */
static int argmax(const float *p, int k)
{
    int best = 0;
    for (int c = 1; c < k; c++)
        if (p[c] > p[best] || (isnan(p[best]) && !isnan(p[c]))) best = c;
    return best;
}

/* fastText's Meter::log for one example whose gold atoms are marked in m->atom_gold (n_gold of
 * them, >= 1): the min(at_k, atoms) atoms of the largest summed probability are predicted.
 * Clears the marks. */
static void rank_log(gyro_metrics *m, const float *probs, int n_gold)
{
    const gyro_label_set *set = m->rank_set;
    int na = gyro_label_set_atom_count(set);
    for (int a = 0; a < na; a++) m->atom_score[a] = 0;
    for (int c = 0; c < m->k; c++) {
        int nc = gyro_label_set_n_atoms(set, c);
        const int *ids = gyro_label_set_atoms(set, c);
        double p = isnan(probs[c]) ? 0.0 : (double)probs[c];
        for (int j = 0; j < nc; j++) m->atom_score[ids[j]] += p;
    }
    int kk = m->at_k < na ? m->at_k : na;
    uint64_t hits = 0;
    /* k selection passes: O(k · atoms), k is small; a taken atom's score is set to -inf */
    for (int r = 0; r < kk; r++) {
        int best = -1;
        for (int a = 0; a < na; a++)
            if (m->atom_score[a] != -INFINITY && (best < 0 || m->atom_score[a] > m->atom_score[best])) best = a;
        if (best < 0) break;
        hits += m->atom_gold[best] != 0;
        m->atom_score[best] = -INFINITY;
    }
    for (int a = 0; a < na; a++) m->atom_gold[a] = 0;
    m->rank_n++;
    m->rank_gold += (uint64_t)n_gold;
    m->rank_predicted += (uint64_t)kk;
    m->rank_hits += hits;
}

void gyro_metrics_add_probs(gyro_metrics *m, int truth, const float *probs)
{
    if (truth < 0 || truth >= m->k) return;
    gyro_metrics_add(m, truth, argmax(probs, m->k), probs[truth]);
    if (!m->at_k) return;
    int nc = gyro_label_set_n_atoms(m->rank_set, truth);
    const int *ids = gyro_label_set_atoms(m->rank_set, truth);
    for (int j = 0; j < nc; j++) m->atom_gold[ids[j]] = 1;
    rank_log(m, probs, nc);
}

gyro_status gyro_metrics_add_unseen(gyro_metrics *m, const char *label, const float *probs)
{
    if (!m || !label || !probs || !m->confusion) return gyro_error_set(GYRO_ERR_USAGE, "metrics: NULL argument");
    gyro_label l;
    gyro_status st = gyro_label_parse(label, &l);
    if (st) return st;
    int row = -1;
    for (int i = 0; i < m->n_unseen_labels && row < 0; i++) /* few unseen labels: a linear search */
        if (strcmp(m->unseen_name[i], l.name) == 0) row = i;
    if (row < 0) {
        if (m->n_unseen_labels >= (1 << 30)) {
            gyro_label_free(&l);
            return gyro_error_set(GYRO_ERR_LIMIT, "metrics: over 2^30 unseen labels");
        }
        if (m->n_unseen_labels == m->unseen_cap) {
            int cap = m->unseen_cap ? 2 * m->unseen_cap : 8;
            char **names = realloc(m->unseen_name, (size_t)cap * sizeof *names);
            if (names) m->unseen_name = names;
            uint64_t *conf = names ? realloc(m->unseen_confusion, (size_t)cap * (size_t)m->k * sizeof *conf) : NULL;
            if (!conf) {
                gyro_label_free(&l);
                return gyro_error_set(GYRO_ERR_NOMEM, "metrics: unseen labels");
            }
            m->unseen_confusion = conf;
            m->unseen_cap = cap;
        }
        row = m->n_unseen_labels;
        m->unseen_name[row] = l.name; /* ownership moves to the metrics */
        l.name = NULL;
        memset(m->unseen_confusion + (size_t)row * m->k, 0, (size_t)m->k * sizeof *m->unseen_confusion);
        m->n_unseen_labels++;
    }
    m->unseen_confusion[(size_t)row * m->k + argmax(probs, m->k)]++;
    m->n++;
    m->n_unseen++;
    if (m->at_k) {
        int n_gold = 0;
        for (int j = 0; j < l.n_atoms; j++) {
            int a = gyro_label_set_atom_find(m->rank_set, l.atoms[j]);
            if (a >= 0 && !m->atom_gold[a]) m->atom_gold[a] = 1, n_gold++;
        }
        if (n_gold) rank_log(m, probs, n_gold); /* fastText skips an example with no known label */
    }
    gyro_label_free(&l);
    return GYRO_OK;
}

const char *gyro_metrics_unseen_label(const gyro_metrics *m, int i)
{
    return i >= 0 && i < m->n_unseen_labels ? m->unseen_name[i] : NULL;
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
    for (size_t u = 0; u < (size_t)m->n_unseen_labels; u++) s.predicted += m->unseen_confusion[u * k + (size_t)c];
    s.correct = m->confusion[(size_t)c * k + (size_t)c];
    s.precision = s.predicted ? (double)s.correct / (double)s.predicted : NAN;
    s.recall = s.support ? (double)s.correct / (double)s.support : NAN;
    s.f1 = (s.correct > 0) ? 2.0 * s.precision * s.recall / (s.precision + s.recall) : 0.0;
    return s;
}

gyro_class_stats gyro_metrics_unseen_class(const gyro_metrics *m, int i)
{
    gyro_class_stats s = {0};
    if (i < 0 || i >= m->n_unseen_labels) return s;
    for (size_t j = 0; j < (size_t)m->k; j++) s.support += m->unseen_confusion[(size_t)i * m->k + j];
    s.precision = NAN;
    s.recall = s.support ? 0.0 : NAN;
    s.f1 = 0.0;
    return s;
}

double gyro_metrics_macro_f1(const gyro_metrics *m)
{
    double sum = 0;
    int present = m->n_unseen_labels; /* each with F1 0 */
    for (int c = 0; c < m->k; c++) {
        gyro_class_stats s = gyro_metrics_class(m, c);
        if (s.support == 0 && s.predicted == 0) continue;
        sum += s.f1;
        present++;
    }
    return present ? sum / present : NAN;
}

/* The script's _divide: a / b, 0 when b is 0 (then a is 0 too). */
static double ratio0(uint64_t a, uint64_t b) { return b ? (double)a / (double)b : 0.0; }

int gyro_metrics_nlpcc(const gyro_metrics *m, const gyro_label_set *set, const char *others,
                       gyro_nlpcc_score *out)
{
    if (!set || !others || gyro_label_set_count(set) != m->k) return 0;
    int oc = gyro_label_set_find(set, others), ou = -1;
    for (int i = 0; i < m->n_unseen_labels && ou < 0 && oc < 0; i++)
        if (strcmp(m->unseen_name[i], others) == 0) ou = i;
    if (oc < 0 && ou < 0) return 0;
    double psum = 0, rsum = 0;
    int n = 0;
    for (int c = 0; c < m->k; c++) {
        if (c == oc) continue;
        gyro_class_stats s = gyro_metrics_class(m, c); /* tp = correct, tp+fp = predicted, tp+fn = support */
        psum += ratio0(s.correct, s.predicted);
        rsum += ratio0(s.correct, s.support);
        n++;
    }
    n += m->n_unseen_labels - (ou >= 0); /* unseen intents: tp = 0, so P = R = 0 */
    out->intents = n;
    out->precision = n ? psum / n : NAN;
    out->recall = n ? rsum / n : NAN;
    out->f1 = !n ? NAN : (psum + rsum > 0 ? 2.0 * out->precision * out->recall / (out->precision + out->recall) : 0.0);
    return 1;
}

int gyro_metrics_at_k(const gyro_metrics *m, double *precision, double *recall, uint64_t *n)
{
    if (!m->at_k) return 0;
    if (precision) *precision = m->rank_predicted ? (double)m->rank_hits / (double)m->rank_predicted : NAN;
    if (recall) *recall = m->rank_gold ? (double)m->rank_hits / (double)m->rank_gold : NAN;
    if (n) *n = m->rank_n;
    return m->at_k;
}

/* ---- hierarchy levels ----------------------------------------------------------------------- */

int gyro_metrics_level_accuracy(const gyro_metrics *m, const gyro_label_set *set, double *acc,
                                int max_levels)
{
    if (!set || gyro_label_set_count(set) != m->k || max_levels < 1) return 0;
    int depth = gyro_label_set_max_depth(set);
    if (depth < 1) depth = 1;
    if (depth > max_levels) depth = max_levels;
    size_t k = (size_t)m->k;
    for (int l = 1; l <= depth; l++) {
        uint64_t ok = 0;
        for (size_t i = 0; i < k; i++) {
            /* labels.h numbers levels from 0: metrics level l is projection level l - 1 */
            const char *a = gyro_label_set_project(set, (int)i, l - 1);
            for (size_t j = 0; j < k; j++) {
                uint64_t cnt = m->confusion[i * k + j];
                if (!cnt) continue;
                if (i == j) { ok += cnt; continue; }
                /* the deepest level is exact match: the set's deepest projection is the
                 * order-free form, which would equate "a+b" and "b+a+b" */
                if (l == depth) continue;
                const char *b = gyro_label_set_project(set, (int)j, l - 1);
                if (a && b && strcmp(a, b) == 0) ok += cnt;
            }
        }
        /* unseen labels: never right at the deepest level; above it, by their projection */
        for (int u = 0; u < m->n_unseen_labels && l < depth; u++) {
            char *a = NULL;
            if (gyro_label_project(m->unseen_name[u], l - 1, &a)) continue; /* parsed when added */
            for (size_t j = 0; j < k; j++) {
                uint64_t cnt = m->unseen_confusion[(size_t)u * k + j];
                const char *b = cnt ? gyro_label_set_project(set, (int)j, l - 1) : NULL;
                if (b && strcmp(a, b) == 0) ok += cnt;
            }
            free(a);
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

gyro_status gyro_metrics_write_text(const gyro_metrics *m, const gyro_label_set *set,
                                    int max_confusion, const char *others, FILE *out)
{
    if (!set || gyro_label_set_count(set) != m->k)
        return gyro_error_set(GYRO_ERR_USAGE, "metrics report: %d labels for %d classes",
                              set ? gyro_label_set_count(set) : 0, m->k);
    char a[32], b[32], c[32];
    fprintf(out, "examples: %llu\n", (unsigned long long)m->n);
    if (m->n_unseen)
        fprintf(out, "unseen: %llu examples (%d label%s) whose label the model never saw, counted as errors\n",
                (unsigned long long)m->n_unseen, m->n_unseen_labels, m->n_unseen_labels == 1 ? "" : "s");
    fmt_pct(a, sizeof a, gyro_metrics_accuracy(m));
    fmt_pct(b, sizeof b, gyro_metrics_macro_f1(m));
    fprintf(out, "accuracy: %s\nmacro-F1: %s\n", a, b);
    gyro_nlpcc_score ns;
    if (gyro_metrics_nlpcc(m, set, others, &ns)) {
        fmt_pct(a, sizeof a, ns.f1);
        fmt_pct(b, sizeof b, ns.precision);
        fmt_pct(c, sizeof c, ns.recall);
        fprintf(out, "NLPCC 2018 task-4 intent F1 (%s left out): %s (macro-P %s, macro-R %s, %d intents)\n",
                others, a, b, c, ns.intents);
    }
    double pk, rk;
    uint64_t nk;
    int k = gyro_metrics_at_k(m, &pk, &rk, &nk);
    if (k) {
        fmt_pct(a, sizeof a, pk);
        fmt_pct(b, sizeof b, rk);
        fprintf(out, "P@%d: %s\nR@%d: %s\n", k, a, k, b);
        if (nk != m->n)
            fprintf(out, "  (over %llu examples; as fasttext test, those with no label the model knows are left out)\n",
                    (unsigned long long)nk);
    }
    double ce = gyro_metrics_cross_entropy(m);
    if (!isnan(ce)) fprintf(out, "cross-entropy: %.4f\n", ce);
    double lv[GYRO_METRICS_MAX_LEVELS];
    int nl = gyro_metrics_level_accuracy(m, set, lv, GYRO_METRICS_MAX_LEVELS);
    if (nl > 1)
        for (int l = 0; l < nl; l++) {
            fmt_pct(a, sizeof a, lv[l]);
            fprintf(out, "accuracy at level %d: %s%s\n", l + 1, a,
                    l == 0 ? "  (domain: the part before the first '.')" : (l == nl - 1 ? "  (exact)" : ""));
        }

    static const char unseen_mark[] = " (unseen)";
    int w = 5;
    for (int i = 0; i < m->k; i++) {
        int l = (int)strlen(gyro_label_set_name(set, i));
        if (l > w) w = l;
    }
    for (int i = 0; i < m->n_unseen_labels; i++) {
        int l = (int)(strlen(m->unseen_name[i]) + sizeof unseen_mark - 1);
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
        fprintf(out, "%-*.*s %8llu %9s %8s %8s\n", w, w, gyro_label_set_name(set, i),
                (unsigned long long)s.support, a, b, c);
    }
    for (int i = 0; i < m->n_unseen_labels; i++) {
        gyro_class_stats s = gyro_metrics_unseen_class(m, i);
        char name[64];
        /* the mark stays visible when a long name is cut to the column */
        int keep = w - (int)(sizeof unseen_mark - 1);
        snprintf(name, sizeof name, "%.*s%s", keep, m->unseen_name[i], unseen_mark);
        fmt_pct(a, sizeof a, s.precision);
        fmt_pct(b, sizeof b, s.recall);
        fmt_pct(c, sizeof c, s.f1);
        fprintf(out, "%-*s %8llu %9s %8s %8s\n", w, name, (unsigned long long)s.support, a, b, c);
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
    fprintf(out, nr < m->k ? ", most frequent first" : "");
    fprintf(out, m->n_unseen ? "; unseen labels not shown)\n" : ")\n");
    for (int r = 0; r < nr; r++) fprintf(out, "%4d %s\n", r, gyro_label_set_name(set, rank[r].c));
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

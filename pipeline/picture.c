/* picture.c — SVG pictures of tables and confusion matrices, PNG through rsvg-convert
 * (see picture.h). */
#include "pipeline/picture.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "embeddings/plot.h"
#include "models/core/atomic_file.h"
#include "models/text/xml.h"

extern char **environ;

void gyro_picture_plot_options_init(gyro_picture_plot_options *o)
{
    o->size = 800;
    o->labels = 40;
    o->points = 0;
}

/* ---- text ------------------------------------------------------------------------------------ */

/* Estimated advance width of UTF-8 text at font size `fs`: a full em for CJK and other wide
 * characters (U+1100 and up, which CJK fonts draw square), 0.6 em for the rest (a generous
 * average for Latin sans-serif). Used only to keep labels apart, so it errs wide. */
static double text_width(const char *s, double fs)
{
    double w = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        uint32_t cp = *p;
        int len = cp < 0x80 ? 1 : cp < 0xE0 ? 2 : cp < 0xF0 ? 3 : 4;
        if (len > 1) {
            cp &= 0x3F >> (len - 1);
            for (int i = 1; i < len && p[i]; i++) cp = (cp << 6) | (p[i] & 0x3F);
        }
        for (int i = 0; i < len && *p; i++) p++;
        w += cp >= 0x1100 ? fs : 0.6 * fs;
    }
    return w;
}

/* ---- the table in the disk -------------------------------------------------------------------- */

typedef struct box { double x0, y0, x1, y1; } box;

static int box_free(const box *b, const box *placed, int n, double W, double H)
{
    if (b->x0 < 2 || b->y0 < 2 || b->x1 > W - 2 || b->y1 > H - 2) return 0;
    for (int i = 0; i < n; i++)
        if (b->x0 < placed[i].x1 + 1 && placed[i].x0 < b->x1 + 1 && b->y0 < placed[i].y1 + 1
            && placed[i].y0 < b->y1 + 1)
            return 0;
    return 1;
}

typedef struct ranked { uint64_t count; int row; } ranked;

/* most frequent first; ties in row order */
static int by_count_desc(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    if (x->count != y->count) return x->count > y->count ? -1 : 1;
    return (x->row > y->row) - (x->row < y->row);
}

gyro_status gyro_picture_plot_svg(const gyro_embedding_table *t, const gyro_picture_plot_options *o,
                                  FILE *f)
{
    if (!t || t->n < 1) return gyro_error_set(GYRO_ERR_USAGE, "the table is empty");
    if (o->size < 100) return gyro_error_set(GYRO_ERR_USAGE, "picture size %d: at least 100", o->size);
    int n = t->n;
    double *xy = malloc((size_t)n * 2 * sizeof *xy);    /* (n, 2) disk coordinates */
    int *rank = malloc((size_t)n * sizeof *rank);         /* (n) rows, most frequent first */
    int want = o->labels < 0 ? 0 : (o->labels < n ? o->labels : n);
    box *placed = malloc((size_t)(want ? want : 1) * sizeof *placed); /* (want) label boxes */
    int *at = malloc((size_t)(want ? want : 1) * sizeof *at); /* (want) where each label went */
    if (!xy || !rank || !placed || !at) {
        free(xy); free(rank); free(placed); free(at);
        return gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    }
    int projected = 0;
    gyro_status s = gyro_plot_layout(t, xy, &projected);
    if (s) { free(xy); free(rank); free(placed); free(at); return s; }
    ranked *order = malloc((size_t)n * sizeof *order); /* (n) */
    if (!order) { free(xy); free(rank); free(placed); free(at); return gyro_error_set(GYRO_ERR_NOMEM, "out of memory"); }
    for (int i = 0; i < n; i++) order[i] = (ranked){t->counts ? t->counts[i] : 0, i};
    qsort(order, (size_t)n, sizeof *order, by_count_desc);
    for (int i = 0; i < n; i++) rank[i] = order[i].row;
    free(order);

    int hyp = t->model != GYRO_EMBEDDING_EUCLIDEAN;
    double W = o->size, c = W / 2, R = W / 2 - 24, fs = o->size >= 600 ? 14 : 11;
    int npts = o->points > 0 && o->points < n ? o->points : n;
    if (want > npts) want = npts;
    /* labels, most frequent first, each where it overlaps nothing placed before */
    int nplaced = 0, dropped = 0;
    for (int r = 0; r < want; r++) {
        int i = rank[r];
        double px = c + R * xy[2 * i], py = c - R * xy[2 * i + 1];
        double w = text_width(t->tokens[i], fs), h = fs;
        box cand[4] = {
            {px - w / 2, py - 4 - h, px + w / 2, py - 4},     /* above */
            {px + 5, py - h / 2, px + 5 + w, py + h / 2},     /* right */
            {px - 5 - w, py - h / 2, px - 5, py + h / 2},     /* left */
            {px - w / 2, py + 4, px + w / 2, py + 4 + h},     /* below */
        };
        int k = 0;
        while (k < 4 && !box_free(&cand[k], placed, nplaced, W, W)) k++;
        if (k == 4) { at[r] = -1; dropped++; continue; }
        at[r] = nplaced;
        placed[nplaced++] = cand[k];
    }

    /* legend: labelled, [dropped], others, the table, [the disk]; 18 px a line */
    int nlines = 3 + (dropped > 0) + hyp;
    double lfs = W >= 600 ? 12 : 10, legend_h = 18 + 18.0 * nlines, H = W + legend_h;
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
               "font-family=\"%s\">\n",
            o->size, (int)H, o->size, (int)H, GYRO_PICTURE_FONTS);
    fprintf(f, "<title>%d characters of a %s table (dim %d)</title>\n", npts,
            gyro_embedding_model_name(t->model), t->dim);
    fputs("<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n", f);
    if (hyp)
        fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\" fill=\"#f7f7fb\" stroke=\"#333\" stroke-width=\"1.5\"/>\n",
                c, c, R);
    else
        fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#f7f7fb\" stroke=\"#333\"/>\n",
                c - R, c - R, 2 * R, 2 * R);
    /* the unlabelled points, least frequent first so frequent ones stay on top */
    fputs("<g fill=\"#3b6ea5\" fill-opacity=\"0.5\">\n", f);
    for (int r = npts - 1; r >= 0; r--) {
        int i = rank[r];
        if (r < want && at[r] >= 0) continue;
        fprintf(f, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"1.8\"/>\n", c + R * xy[2 * i], c - R * xy[2 * i + 1]);
    }
    fputs("</g>\n<g fill=\"#b22222\">\n", f);
    for (int r = 0; r < want; r++)
        if (at[r] >= 0) {
            int i = rank[r];
            fprintf(f, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"2.6\"/>\n", c + R * xy[2 * i], c - R * xy[2 * i + 1]);
        }
    fprintf(f, "</g>\n<g font-size=\"%.0f\" fill=\"#111\" stroke=\"white\" stroke-width=\"3\" "
               "stroke-linejoin=\"round\" paint-order=\"stroke\">\n", fs);
    for (int r = 0; r < want; r++)
        if (at[r] >= 0) {
            const box *b = &placed[at[r]];
            fprintf(f, "<text class=\"label\" x=\"%.2f\" y=\"%.2f\">", b->x0, b->y0 + 0.86 * fs);
            gyro_xml_escape(f, t->tokens[rank[r]]);
            fputs("</text>\n", f);
        }
    fputs("</g>\n", f);

    /* the legend */
    double ly = W + 6, y = ly + 18;
    fprintf(f, "<g font-size=\"%.0f\" fill=\"#222\">\n"
               "<rect x=\"8\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#999\"/>\n",
            lfs, ly, W - 16, legend_h - 12);
    fprintf(f, "<circle cx=\"22\" cy=\"%.1f\" r=\"3\" fill=\"#b22222\"/>\n<text x=\"32\" y=\"%.1f\">", y - 4, y);
    if (dropped) fprintf(f, "labelled: %d of the %d most frequent characters</text>\n", nplaced, want);
    else fprintf(f, "labelled: the %d most frequent characters</text>\n", nplaced);
    if (dropped) {
        y += 18;
        fprintf(f, "<text x=\"32\" y=\"%.1f\">%d more left as points: no free place for a readable label</text>\n",
                y, dropped);
    }
    y += 18;
    fprintf(f, "<circle cx=\"22\" cy=\"%.1f\" r=\"2.2\" fill=\"#3b6ea5\" fill-opacity=\"0.6\"/>\n"
               "<text x=\"32\" y=\"%.1f\">other characters: %d (%d drawn of the table's %d)</text>\n",
            y - 4, y, npts - nplaced, npts, n);
    y += 18;
    fprintf(f, "<text x=\"16\" y=\"%.1f\">%s table, dim %d%s</text>\n", y, gyro_embedding_model_name(t->model), t->dim,
            projected ? (hyp ? ", projected: log0, 2 principal axes, exp0 into the disk"
                             : ", projected on its 2 principal axes")
                      : (hyp ? ", drawn in the Poincare disk as trained" : ""));
    if (hyp) {
        y += 18;
        fprintf(f, "<text x=\"16\" y=\"%.1f\">frequent, general characters sit near the centre, "
                   "specific ones near the rim</text>\n", y);
    }
    fputs("</g>\n</svg>\n", f);
    free(xy); free(rank); free(placed); free(at);
    if (ferror(f)) return gyro_error_set(GYRO_ERR_IO, "plot: write error");
    return GYRO_OK;
}

/* ---- the confusion matrix ---------------------------------------------------------------------- */

gyro_status gyro_picture_confusion_svg(const gyro_metrics *m, const gyro_label_set *set, FILE *f)
{
    if (!set || gyro_label_set_count(set) != m->k)
        return gyro_error_set(GYRO_ERR_USAGE, "confusion image: %d labels for %d classes",
                              set ? gyro_label_set_count(set) : 0, m->k);
    int k = m->k, cell = k > 60 ? 8 : (k > 20 ? 14 : 28);
    double fs = cell > 10 ? 11 : 7, namew = 0;
    for (int i = 0; i < k; i++) {
        double w = text_width(gyro_label_set_name(set, i), fs);
        if (w > namew) namew = w;
    }
    double top = 70 + namew + 8;       /* title, axis title, column names */
    double left = 34 + namew + 8;      /* axis title, row names */
    double grid = (double)k * cell;
    double barh = grid < 120 ? 120 : (grid > 260 ? 260 : grid);
    double W = left + grid + 150, H = top + (grid > barh ? grid : barh) + 24;
    if (W < 420) W = 420;
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
               "viewBox=\"0 0 %.0f %.0f\" font-family=\"%s\" font-size=\"%.0f\">\n",
            W, H, W, H, GYRO_PICTURE_FONTS, fs);
    double acc = m->n ? gyro_metrics_accuracy(m) : 0.0;
    fprintf(f, "<title>confusion matrix: %llu examples, accuracy %.4f</title>\n", (unsigned long long)m->n, acc);
    fputs("<defs>\n"
          "<linearGradient id=\"scale-correct\" x1=\"0\" y1=\"1\" x2=\"0\" y2=\"0\">"
          "<stop offset=\"0\" stop-color=\"#ffffff\"/><stop offset=\"1\" stop-color=\"#0000ff\"/></linearGradient>\n"
          "<linearGradient id=\"scale-confused\" x1=\"0\" y1=\"1\" x2=\"0\" y2=\"0\">"
          "<stop offset=\"0\" stop-color=\"#ffffff\"/><stop offset=\"1\" stop-color=\"#ff0000\"/></linearGradient>\n"
          "</defs>\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n", f);
    fprintf(f, "<text x=\"12\" y=\"24\" font-size=\"16\" font-weight=\"bold\">Confusion matrix: %llu examples, "
               "accuracy %.2f%%</text>\n", (unsigned long long)m->n, 100.0 * acc);
    /* axis titles */
    fprintf(f, "<text x=\"%.1f\" y=\"56\" font-size=\"13\" text-anchor=\"middle\">predicted intent</text>\n",
            left + grid / 2);
    fprintf(f, "<text transform=\"translate(22,%.1f) rotate(-90)\" font-size=\"13\" text-anchor=\"middle\">"
               "true intent</text>\n", top + grid / 2);
    for (int i = 0; i < k; i++) {
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">", left - 4, top + i * cell + cell / 2.0 + fs * 0.35);
        gyro_xml_escape(f, gyro_label_set_name(set, i));
        fprintf(f, "</text>\n<text transform=\"translate(%.1f,%.1f) rotate(-90)\">",
                left + i * cell + cell / 2.0 + fs * 0.35, top - 4);
        gyro_xml_escape(f, gyro_label_set_name(set, i));
        fputs("</text>\n", f);
    }
    for (int i = 0; i < k; i++) {
        uint64_t row = 0;
        for (int j = 0; j < k; j++) row += m->confusion[(size_t)i * k + j];
        for (int j = 0; j < k; j++) {
            uint64_t cnt = m->confusion[(size_t)i * k + j];
            double frac = row ? (double)cnt / (double)row : 0.0;
            /* white -> blue on the diagonal, white -> red elsewhere (the scales on the right) */
            int shade = (int)lround(255.0 * (1.0 - frac));
            int r = i == j ? shade : 255, g = shade, b = i == j ? 255 : shade;
            fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%d\" height=\"%d\" fill=\"#%02x%02x%02x\" "
                       "stroke=\"#ddd\"><title>",
                    left + j * cell, top + i * cell, cell, cell, r, g, b);
            gyro_xml_escape(f, gyro_label_set_name(set, i));
            fputs(" → ", f);
            gyro_xml_escape(f, gyro_label_set_name(set, j));
            fprintf(f, ": %llu (%.1f%% of the row)</title></rect>\n", (unsigned long long)cnt, 100.0 * frac);
            if (cnt && cell >= 20)
                fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"9\" fill=\"%s\">%llu</text>\n",
                        left + j * cell + cell / 2.0, top + i * cell + cell / 2.0 + 3,
                        frac > 0.6 ? "white" : "black", (unsigned long long)cnt);
        }
    }
    /* colour scales: share of the row (the true intent's examples) */
    double bx = left + grid + 24, by = top;
    fprintf(f, "<g font-size=\"10\">\n"
               "<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"%.1f\" fill=\"url(#scale-correct)\" stroke=\"#666\"/>\n"
               "<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"%.1f\" fill=\"url(#scale-confused)\" stroke=\"#666\"/>\n",
            bx, by, barh, bx + 20, by, barh);
    for (int q = 0; q <= 4; q++) {
        double y = by + barh * (1.0 - q / 4.0);
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#666\"/>"
                   "<text x=\"%.1f\" y=\"%.1f\">%d%%</text>\n",
                bx + 34, y, bx + 38, y, bx + 41, y + 3.5, 25 * q);
    }
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" transform=\"rotate(-90 %.1f %.1f)\">"
               "share of the true intent</text>\n",
            bx + 84, by + barh / 2, bx + 84, by + barh / 2);
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">correct</text>\n<text x=\"%.1f\" y=\"%.1f\">confused</text>\n</g>\n",
            bx - 4, by + barh + 14, bx + 36, by + barh + 14);
    fputs("</svg>\n", f);
    if (ferror(f)) return gyro_error_set(GYRO_ERR_IO, "confusion image: write error");
    return GYRO_OK;
}

/* ---- files ------------------------------------------------------------------------------------ */

gyro_status gyro_picture_save(const char *svg, size_t len, const char *path)
{
    gyro_atomic_file af;
    gyro_status s = gyro_atomic_open(&af, path);
    if (s) return s;
    if (fwrite(svg, 1, len, af.fp) != len) {
        gyro_atomic_abort(&af);
        return gyro_error_set(GYRO_ERR_IO, "%s: write error: %s", path, strerror(errno));
    }
    return gyro_atomic_commit(&af);
}

gyro_status gyro_picture_png(const char *svg, size_t len, const char *path)
{
    /* the SVG in a temporary file (rsvg-convert reads a file), the PNG on the child's stdout,
     * which is gyro's atomic file */
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir) dir = "/tmp";
    size_t tl = strlen(dir) + 32;
    char *tmp = malloc(tl);
    if (!tmp) return gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    snprintf(tmp, tl, "%s/gyro-svg-XXXXXX", dir);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        gyro_status s = gyro_error_set(GYRO_ERR_IO, "%s: cannot create a temporary file: %s", tmp, strerror(errno));
        free(tmp);
        return s;
    }
    size_t off = 0;
    while (off < len) {
        ssize_t w = write(fd, svg + off, len - off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            gyro_status s = gyro_error_set(GYRO_ERR_IO, "%s: write error: %s", tmp, strerror(errno));
            close(fd); unlink(tmp); free(tmp);
            return s;
        }
        off += (size_t)w;
    }
    close(fd);
    gyro_atomic_file af;
    gyro_status s = gyro_atomic_open(&af, path);
    if (s) { unlink(tmp); free(tmp); return s; }
    fflush(af.fp);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fileno(af.fp), STDOUT_FILENO);
    posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    char *argv[] = {"rsvg-convert", "--format", "png", tmp, NULL};
    pid_t pid;
    int rc = posix_spawnp(&pid, "rsvg-convert", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        unlink(tmp); free(tmp);
        gyro_atomic_abort(&af);
        if (rc == ENOENT)
            return gyro_error_set(GYRO_ERR_UNAVAILABLE, "%s: PNG needs rsvg-convert (Debian package librsvg2-bin; "
                                  "make deps installs it)", path);
        return gyro_error_set(GYRO_ERR_IO, "%s: cannot run rsvg-convert: %s", path, strerror(rc));
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    unlink(tmp);
    free(tmp);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        gyro_atomic_abort(&af);
        if (WIFEXITED(status))
            return gyro_error_set(GYRO_ERR_IO, "%s: rsvg-convert failed (exit %d)", path, WEXITSTATUS(status));
        return gyro_error_set(GYRO_ERR_IO, "%s: rsvg-convert killed by signal %d", path, WTERMSIG(status));
    }
    return gyro_atomic_commit(&af);
}

/* picture.h — the pictures gyro draws for people: a character table in the Poincaré disk
 * (`gyro plot`) and the confusion matrix of an evaluation (`gyro classify eval --svg`), as SVG,
 * and PNG through a real SVG renderer.
 *
 * Text is Chinese, so every <text> names a CJK font first, with fallbacks (GYRO_PICTURE_FONTS):
 * a renderer that has none of them falls back to its sans-serif, and `make deps` installs
 * fonts-wqy-microhei so a Debian machine has one. Labels are placed only where they can be read:
 * the most frequent characters first, each label put above, right, left or below its point,
 * whichever overlaps no label already placed, and left as a plain point otherwise; the legend
 * says how many were labelled, how many could not be, and what the marks mean.
 *
 * PNG: the SVG is rendered by librsvg's command-line tool (rsvg-convert, Debian package
 * librsvg2-bin), spawned as a child process — libgyro does not link librsvg, cairo or glib.
 * Its output goes straight into gyro's atomic file (models/core/atomic_file.h).
 */
#ifndef GYRO_PIPELINE_PICTURE_H
#define GYRO_PIPELINE_PICTURE_H

#include <stdio.h>

#include "embeddings/table.h"
#include "models/core/status.h"
#include "models/metrics.h"
#include "models/text/labels.h"

/* The font-family list of every text gyro draws (CJK fonts first, then sans-serif). */
#define GYRO_PICTURE_FONTS \
    "'Noto Sans CJK SC', 'Source Han Sans SC', 'WenQuanYi Micro Hei', 'WenQuanYi Zen Hei', " \
    "'Droid Sans Fallback', 'Microsoft YaHei', 'PingFang SC', 'Hiragino Sans GB', sans-serif"

typedef struct gyro_picture_plot_options {
    int size;     /* width of the disk area in pixels (default 800) */
    int labels;   /* label at most the N most frequent characters (default 40; 0 = none) */
    int points;   /* draw only the N most frequent characters (default 0 = all) */
} gyro_picture_plot_options;

/* Defaults of the fields above. */
void gyro_picture_plot_options_init(gyro_picture_plot_options *o);

/* Write the SVG picture of table `t` (its layout from gyro_plot_layout, embeddings/plot.h) to
 * `out`. The rows are ranked by their counts (ties: row order); labels go to the most frequent
 * ones that find a free place. Errors: GYRO_ERR_USAGE (empty table, size < 100),
 * GYRO_ERR_NOMEM, GYRO_ERR_IO (write error on `out`). */
gyro_status gyro_picture_plot_svg(const gyro_embedding_table *t, const gyro_picture_plot_options *o,
                                  FILE *out);

/* Write the confusion matrix of `m` (classes named by `set`) as SVG to `out`: a title with the
 * example count and accuracy, the axis titles "true intent" (rows) and "predicted intent"
 * (columns), each cell coloured by its share of the row (blue on the diagonal, red elsewhere)
 * with both colour scales drawn, counts in the cells when they fit. Errors: GYRO_ERR_USAGE
 * (set NULL or of another class count; nothing written), GYRO_ERR_IO. */
gyro_status gyro_picture_confusion_svg(const gyro_metrics *m, const gyro_label_set *set, FILE *out);

/* Render the SVG document `svg` (len bytes) to PNG at `path` ("-" = stdout) with rsvg-convert,
 * written atomically. Errors: GYRO_ERR_UNAVAILABLE (rsvg-convert not installed: the message
 * names the package), GYRO_ERR_IO (a temporary file, the renderer failed: its exit status),
 * GYRO_ERR_NOMEM. */
gyro_status gyro_picture_png(const char *svg, size_t len, const char *path);

/* Write `len` bytes of `svg` to `path` atomically ("-" = stdout). Errors: GYRO_ERR_IO. */
gyro_status gyro_picture_save(const char *svg, size_t len, const char *path);

#endif

/* opts.c — the option tables of the gyro commands: parsing, --help and man page (see opts.h). */
#include "pipeline/cli/opts.h"

#include <getopt.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/cli/cli.h"

#define HELP_WIDTH 96 /* columns of the --help text */
#define LABEL_MAX 26  /* a longer option label puts its help line on the next line */

/* "--name" or "-x": how messages name the option of row `o`. */
static const char *opt_label(const gyro_opt *o, char *buf, size_t n)
{
    if (o->name) snprintf(buf, n, "--%s", o->name);
    else snprintf(buf, n, "-%c", o->letter);
    return buf;
}

/* Is `v` one of the '|'-separated `choices`? Returns its index or -1. */
static int choice_index(const char *choices, const char *v)
{
    size_t len = strlen(v);
    int i = 0;
    for (const char *p = choices;; i++) {
        const char *bar = strchr(p, '|');
        size_t n = bar ? (size_t)(bar - p) : strlen(p);
        if (n == len && strncmp(p, v, n) == 0) return i;
        if (!bar) return -1;
        p = bar + 1;
    }
}

/* "a, b or c" from "a|b|c". */
static void choice_list(const char *choices, char *buf, size_t n)
{
    size_t k = 0;
    const char *last = strrchr(choices, '|');
    for (const char *p = choices; *p && k + 5 < n; p++) {
        if (*p != '|') buf[k++] = *p;
        else if (p == last) k += (size_t)snprintf(buf + k, n - k, " or ");
        else k += (size_t)snprintf(buf + k, n - k, ", ");
    }
    buf[k < n ? k : n - 1] = '\0';
}

static int in_range(const gyro_opt *o, double v) { return (o->min == 0 && o->max == 0) || (v >= o->min && v <= o->max); }

/* Store `v` (the argument of row `o`) into args; 1 on success, 0 after a usage error. */
static int store(const gyro_opt *o, const char *cmd, const char *v, void *args)
{
    char *p = (char *)args + o->offset, lab[64], list[256];
    opt_label(o, lab, sizeof lab);
    long L;
    double D;
    switch (o->kind) {
    case GYRO_OPT_FLAG: *(int *)p = o->value ? o->value : 1; return 1;
    case GYRO_OPT_STR: *(const char **)p = v; return 1;
    case GYRO_OPT_INT:
    case GYRO_OPT_LONG: {
        long lo = o->kind == GYRO_OPT_INT ? INT_MIN : LONG_MIN, hi = o->kind == GYRO_OPT_INT ? INT_MAX : LONG_MAX;
        if (!(o->min == 0 && o->max == 0)) { /* the range as a double: 2^63 - 1 rounds up to 2^63 */
            if (o->min > (double)lo) lo = (long)o->min;
            if (o->max < (double)hi) hi = (long)o->max;
        }
        if (!gyro_cli_parse_long(cmd, lab, v, lo, hi, &L)) return 0;
        if (o->kind == GYRO_OPT_INT) *(int *)p = (int)L;
        else *(long *)p = L;
        return 1;
    }
    case GYRO_OPT_DOUBLE:
    case GYRO_OPT_FLOAT:
        if (!gyro_cli_parse_double(cmd, lab, v, &D)) return 0;
        if (!in_range(o, D)) {
            gyro_cli_usage_error(cmd, "%s must be in [%g, %g], got '%s'", lab, o->min, o->max, v);
            return 0;
        }
        if (o->kind == GYRO_OPT_FLOAT) *(float *)p = (float)D;
        else *(double *)p = D;
        return 1;
    case GYRO_OPT_SEED: return gyro_cli_parse_seed(cmd, lab, v, (uint64_t *)p);
    case GYRO_OPT_CHOICE: {
        int i = choice_index(o->choices, v);
        if (i < 0) {
            choice_list(o->choices, list, sizeof list);
            gyro_cli_usage_error(cmd, "%s must be %s, not '%s'", lab, list, v);
            return 0;
        }
        *(int *)p = i;
        return 1;
    }
    case GYRO_OPT_CALL: return o->fn(args, cmd, lab, v);
    default: return 1;
    }
}

/* The row of a short letter, or NULL. */
static const gyro_opt *by_letter(const gyro_opt *opts, int c)
{
    for (const gyro_opt *o = opts; o->kind; o++)
        if (o->kind != GYRO_OPT_SECTION && o->letter == c) return o;
    return NULL;
}

/* The getopt_long tables of `opts` (long option i of row i has the value 256 + i); NULL on
 * allocation failure. `shorts` gets the optstring (":" first: a missing value returns ':'). */
static struct option *getopt_tables(const gyro_opt *opts, char *shorts, size_t cap)
{
    size_t n = 0, k = 0;
    while (opts[n].kind) n++;
    struct option *lo = calloc(n + 2, sizeof *lo);
    if (!lo) return NULL;
    size_t m = 0;
    shorts[k++] = ':';
    for (size_t i = 0; i < n; i++) {
        const gyro_opt *o = &opts[i];
        if (o->kind == GYRO_OPT_SECTION) continue;
        int has_arg = o->kind == GYRO_OPT_FLAG ? no_argument : required_argument;
        if (o->name) lo[m++] = (struct option){o->name, has_arg, NULL, 256 + (int)i};
        if (o->letter && k + 3 < cap) {
            shorts[k++] = o->letter;
            if (has_arg) shorts[k++] = ':';
        }
    }
    lo[m] = (struct option){"help", no_argument, NULL, 'h'};
    shorts[k++] = 'h';
    shorts[k] = '\0';
    return lo;
}

int gyro_opts_parse(const gyro_cmd_spec *spec, int argc, char **argv, void *args, int *first)
{
    unsigned marks;
    return gyro_opts_parse_marks(spec, argc, argv, args, first, &marks);
}

int gyro_opts_parse_marks(const gyro_cmd_spec *spec, int argc, char **argv, void *args, int *first,
                          unsigned *marks)
{
    *marks = 0;
    const char *cmd = spec->name;
    for (const gyro_opt *o = spec->opts; o->kind; o++) {
        if (!o->def || o->kind == GYRO_OPT_SECTION || o->kind == GYRO_OPT_FLAG) continue;
        if (!store(o, cmd, o->def, args)) return 2; /* a bad default in a table: caught by --help tests */
    }
    char shorts[256];
    struct option *lo = getopt_tables(spec->opts, shorts, sizeof shorts);
    if (!lo) return gyro_cli_fail(cmd, gyro_error_set(GYRO_ERR_NOMEM, "out of memory"));
    int c, rc = GYRO_OPTS_CONTINUE;
    opterr = 0;
    optind = 0; /* glibc: full re-initialisation (commands may parse twice) */
    while (rc == GYRO_OPTS_CONTINUE && (c = getopt_long(argc, argv, shorts, lo, NULL)) != -1) {
        const gyro_opt *o = c >= 256 ? &spec->opts[c - 256] : c != 'h' ? by_letter(spec->opts, c) : NULL;
        if (c == 'h') {
            gyro_opts_help(spec, stdout);
            rc = 0;
        } else if (c == ':') {
            rc = gyro_cli_usage_error(cmd, "option '%s' needs a value", argv[optind - 1]);
        } else if (c == '?' || !o) {
            if (optopt && optopt < 256) rc = gyro_cli_usage_error(cmd, "unknown option '-%c'", optopt);
            else rc = gyro_cli_usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
        } else if (!store(o, cmd, optarg, args)) {
            rc = 2;
        } else {
            *marks |= o->mark;
        }
    }
    free(lo);
    *first = optind;
    return rc;
}

/* ---- --help --------------------------------------------------------------------------------- */

static int label_of(const gyro_opt *o, char *buf, size_t n)
{
    int k = snprintf(buf, n, "%s%s%s%s%s%s", o->letter ? (char[]){'-', o->letter, 0} : "  ",
                     o->letter && o->name ? ", " : o->name ? "  " : "", o->name ? "--" : "",
                     o->name ? o->name : "", o->arg ? " " : "", o->arg ? o->arg : "");
    return k < (int)n ? k : (int)n - 1;
}

/* Print `text` wrapped at HELP_WIDTH, continuation lines indented by `indent`; the first line
 * starts at column `col`. */
static void wrap(FILE *out, const char *text, int col, int indent)
{
    const char *p = text;
    while (*p) {
        const char *sp = p;
        while (*sp && *sp != ' ') sp++;
        int wlen = (int)(sp - p);
        if (col > indent && col + 1 + wlen > HELP_WIDTH) {
            fprintf(out, "\n%*s", indent, "");
            col = indent;
        } else if (col > indent) {
            fputc(' ', out);
            col++;
        }
        fwrite(p, 1, (size_t)wlen, out);
        col += wlen;
        p = sp;
        while (*p == ' ') p++;
    }
    fputc('\n', out);
}

static void help_line(FILE *out, const char *label, const char *help, const char *def, int width)
{
    char text[1024];
    snprintf(text, sizeof text, "%s%s%s%s", help, def ? " (default " : "", def ? def : "", def ? ")" : "");
    int len = fprintf(out, "  %s", label);
    if (len > width + 2) {
        fprintf(out, "\n%*s", width + 4, "");
        wrap(out, text, width + 4, width + 4);
    } else {
        fprintf(out, "%*s", width + 4 - len, "");
        wrap(out, text, width + 4, width + 4);
    }
}

void gyro_opts_help(const gyro_cmd_spec *spec, FILE *out)
{
    const char *u = spec->usage ? spec->usage : "[options]";
    for (int line = 0; *u; line++) {
        const char *nl = strchr(u, '\n');
        int n = nl ? (int)(nl - u) : (int)strlen(u);
        if (line && u[0] == ' ') /* a continuation of the previous line */
            fprintf(out, "       %*s%.*s\n", (int)strlen(spec->name) + 5, "", n - 1, u + 1);
        else
            fprintf(out, "%s gyro %s %.*s\n", line ? "      " : "usage:", spec->name, n, u);
        u += n + (nl != NULL);
    }
    if (spec->about) {
        fputc('\n', out);
        wrap(out, spec->about, 0, 0);
    }
    if (spec->more_help) {
        fputc('\n', out);
        spec->more_help(out);
    }
    int width = 10;
    char lab[128];
    for (const gyro_opt *o = spec->opts; o->kind; o++) {
        if (o->kind == GYRO_OPT_SECTION || !o->help) continue;
        int k = label_of(o, lab, sizeof lab);
        if (k > width && k <= LABEL_MAX) width = k;
    }
    fputc('\n', out);
    for (const gyro_opt *o = spec->opts; o->kind; o++) {
        if (o->kind == GYRO_OPT_SECTION) {
            fprintf(out, "\n%s\n", o->help);
            continue;
        }
        if (!o->help) continue;
        label_of(o, lab, sizeof lab);
        help_line(out, lab, o->help, o->def, width);
    }
    int sections = 0;
    for (const gyro_opt *o = spec->opts; o->kind; o++) sections |= o->kind == GYRO_OPT_SECTION;
    if (sections) fputc('\n', out);
    help_line(out, "-h, --help", "this help", NULL, width);
    if (spec->footer) {
        fputc('\n', out);
        wrap(out, spec->footer, 0, 0);
    }
}

/* ---- man page -------------------------------------------------------------------------------- */

/* Write `s` as roff text: '-' as \-, '\' as \e, a leading '.' or '\'' guarded by \&. */
static void roff(FILE *out, const char *s, int line_start)
{
    for (const char *p = s; *p; p++) {
        if (line_start && (*p == '.' || *p == '\'')) fputs("\\&", out);
        line_start = 0;
        if (*p == '-') fputs("\\-", out);
        else if (*p == '\\') fputs("\\e", out);
        else fputc(*p, out);
    }
}

void gyro_opts_man(const gyro_cmd_spec *spec, const char *key, FILE *out)
{
    fprintf(out, ".\\\" BEGIN OPTIONS %s (generated from the option table by doc/update-man.sh)\n", key);
    fputs(".PP\n", out);
    const char *u = spec->usage ? spec->usage : "[options]";
    for (int line = 0; *u; line++) { /* the synopsis, as --help prints it */
        const char *nl = strchr(u, '\n');
        size_t n = nl ? (size_t)(nl - u) : strlen(u);
        char buf[512];
        snprintf(buf, sizeof buf, "%.*s", (int)(n < sizeof buf ? n : sizeof buf - 1), u);
        if (line) fputs(".br\n", out);
        if (buf[0] == ' ') {
            fputs("\\ \\ \\ \\ ", out);
        } else {
            fputs("\\fBgyro ", out);
            roff(out, spec->name, 0);
            fputs("\\fR ", out);
        }
        roff(out, buf[0] == ' ' ? buf + 1 : buf, 0);
        fputc('\n', out);
        u += n + (nl != NULL);
    }
    for (const gyro_opt *o = spec->opts; o->kind; o++) {
        if (o->kind == GYRO_OPT_SECTION) {
            fputs(".PP\n", out);
            roff(out, o->help, 1);
            fputc('\n', out);
            continue;
        }
        if (!o->help) continue;
        fputs(".TP\n", out);
        if (o->letter) fprintf(out, "\\fB\\-%c\\fR%s", o->letter, o->name ? ", " : "");
        if (o->name) {
            fputs("\\fB\\-\\-", out);
            roff(out, o->name, 0);
            fputs("\\fR", out);
        }
        if (o->arg) {
            fputs(" \\fI", out);
            roff(out, o->arg, 0);
            fputs("\\fR", out);
        }
        fputc('\n', out);
        char first[2] = {o->help[0] >= 'a' && o->help[0] <= 'z' ? (char)(o->help[0] - 'a' + 'A') : o->help[0], 0};
        roff(out, first, 1); /* a sentence in the man page */
        roff(out, o->help + (first[0] != 0), 0);
        if (o->def) {
            fputs(" (default ", out);
            roff(out, o->def, 0);
            fputc(')', out);
        }
        fputs(".", out);
        if (o->man) {
            fputc(' ', out);
            roff(out, o->man, 0);
        }
        fputc('\n', out);
    }
    fprintf(out, ".\\\" END OPTIONS %s\n", key);
}

int gyro_opts_man_all(FILE *out)
{
    static const struct { const gyro_cmd_spec *spec; const char *key; } all[] = {
#define GYRO_SPEC(var) {&var, &#var[10]}, /* the variable's name after "gyro_spec_" */
#include "pipeline/cli/specs.def"
#undef GYRO_SPEC
    };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) gyro_opts_man(all[i].spec, all[i].key, out);
    return fflush(out) != 0 || ferror(out) ? 1 : 0;
}

/* cmd_hrm.c — `gyro hrm train|eval`: the hierarchical reasoning model (models/hrm.h) on 9×9
 * Sudoku puzzles from `gyro sudoku generate` (text lines: puzzle, solution, … separated by tabs).
 *
 *   gyro hrm train -o MODEL [options] FILE
 *   gyro hrm eval -m MODEL [--no-act] [FILE ...]
 *
 * A thin wrapper over models/hrm.h and models/rl/sudoku.h. The summaries are one line of
 * key=value pairs on stdout (the benchmarks parse them); the per-epoch progress goes to stderr.
 * The options are the tables below (pipeline/cli/opts.h); letters that mean another option in
 * other commands (-d --dev, -e --env, -b --beta) stay as hidden aliases.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "models/core/blas.h"
#include "models/core/rng.h"
#include "models/hrm.h"
#include "models/layers/kernels.h"
#include "models/rl/sudoku.h"
#include "pipeline/cli/cli.h"
#include "pipeline/cli/cmd_hrm.h"
#include "pipeline/cli/opts.h"

#define PUZZLE_ABOUT                                                                              \
    "The hierarchical reasoning model on 9x9 Sudoku: a fast module L updates N times per update " \
    "of a slow module H, T H-cycles per segment (each one transformer block over the 81 cells), " \
    "one-step gradients, deep supervision over up to M segments and a Q head that learns when to " \
    "halt (ACT). "
#define PUZZLE_FILES                                                                              \
    "FILE lines: puzzle<TAB>solution[<TAB>...] as written by 'gyro sudoku generate' (a line "     \
    "without a solution is solved by the reference solver); '-' is standard input."
#define PUZZLE_EXIT                                                                               \
    "Exit status: 0 OK, 1 I/O error, 2 usage, 65 a malformed or unsolvable puzzle (the message "   \
    "names file and line) or a corrupt model file."

static void usage(FILE *out)
{
    fprintf(out,
            "usage: gyro hrm train -o MODEL [options] FILE\n"
            "       gyro hrm eval -m MODEL [--no-act] [FILE ...]\n"
            "\n"
            "The hierarchical reasoning model on 9x9 Sudoku. 'gyro hrm train --help' and 'gyro hrm\n"
            "eval --help' give the options of each subcommand.\n");
}

/* ---- puzzle files ----------------------------------------------------------------------- */

typedef struct puzzles {
    int32_t *tok; /* (n, 81) 0 blank, 1-9 */
    int *lab;     /* (n, 81) solution digit - 1 */
    long n, cap;
} puzzles;

static int puzzles_push(puzzles *p, const gyro_sudoku *pz, const gyro_sudoku *sol)
{
    if (p->n == p->cap) {
        long cap = p->cap ? 2 * p->cap : 256;
        int32_t *t = realloc(p->tok, (size_t)cap * 81 * sizeof(int32_t));
        if (!t) return 0;
        p->tok = t;
        int *l = realloc(p->lab, (size_t)cap * 81 * sizeof(int));
        if (!l) return 0;
        p->lab = l;
        p->cap = cap;
    }
    for (int i = 0; i < 81; i++) {
        p->tok[p->n * 81 + i] = pz->cell[i];
        p->lab[p->n * 81 + i] = sol->cell[i] - 1;
    }
    p->n++;
    return 1;
}

/* Read puzzle[TAB solution] lines; returns an exit code (0 OK, 65 bad puzzle, 1 I/O). */
static int read_puzzles(const char *cmd, const char *name, puzzles *p)
{
    FILE *fp = strcmp(name, "-") ? fopen(name, "r") : stdin;
    if (!fp) {
        fprintf(stderr, "gyro %s: cannot open %s\n", cmd, name);
        return 1;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    unsigned long lineno = 0;
    int rc = 0;
    while (rc == 0 && (len = getline(&line, &cap, fp)) != -1) {
        lineno++;
        while (len && (line[len - 1] == '\n' || line[len - 1] == '\r')) len--;
        if (len == 0) continue;
        char *tab = memchr(line, '\t', (size_t)len);
        size_t l1 = tab ? (size_t)(tab - line) : (size_t)len;
        gyro_sudoku pz, sol;
        if (gyro_sudoku_parse(line, l1, &pz) != GYRO_OK) {
            fprintf(stderr, "gyro %s: %s:%lu: %s\n", cmd, name, lineno, gyro_error_message());
            rc = 65;
            break;
        }
        int have = 0;
        if (tab) {
            char *s2 = tab + 1, *end = line + len, *tab2 = memchr(s2, '\t', (size_t)(end - s2));
            size_t l2 = (size_t)((tab2 ? tab2 : end) - s2);
            if (gyro_sudoku_parse(s2, l2, &sol) != GYRO_OK) {
                fprintf(stderr, "gyro %s: %s:%lu: solution: %s\n", cmd, name, lineno,
                        gyro_error_message());
                rc = 65;
                break;
            }
            if (gyro_sudoku_clues(&sol) != 81) {
                fprintf(stderr, "gyro %s: %s:%lu: the solution has blank cells\n", cmd, name,
                        lineno);
                rc = 65;
                break;
            }
            for (int i = 0; i < 81; i++)
                if (pz.cell[i] && pz.cell[i] != sol.cell[i]) {
                    fprintf(stderr, "gyro %s: %s:%lu: the solution changes the clue at r%dc%d\n",
                            cmd, name, lineno, i / 9 + 1, i % 9 + 1);
                    rc = 65;
                    break;
                }
            if (rc) break;
            have = 1;
        }
        if (!have && gyro_sudoku_solve(&pz, 1, &sol, NULL) == 0) {
            fprintf(stderr, "gyro %s: %s:%lu: the puzzle has no solution\n", cmd, name, lineno);
            rc = 65;
            break;
        }
        if (!puzzles_push(p, &pz, &sol)) {
            fprintf(stderr, "gyro %s: out of memory\n", cmd);
            rc = 1;
        }
    }
    if (rc == 0 && ferror(fp)) {
        fprintf(stderr, "gyro %s: %s: read error\n", cmd, name);
        rc = 1;
    }
    free(line);
    if (fp != stdin) fclose(fp);
    return rc;
}

static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double peak_rss_mib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss / 1024.0; /* Linux: KiB */
}

/* ---- train ------------------------------------------------------------------------------ */

typedef struct train_args {
    gyro_hrm_config cfg;      /* the library's defaults (gyro_hrm_config_default) */
    gyro_hrm_train_config tc; /* (gyro_hrm_train_config_default) */
    const char *output;
    long epochs;
    double cpu_limit;         /* CPU seconds, 0: no limit */
    double ds_start;          /* share of the training run with one segment per puzzle */
    double act_start;         /* share of the training run before ACT may halt a puzzle early */
    uint64_t seed;
    int geometry, q_pool, no_act, plain, quiet, augment, no_augment, whole_batch;
} train_args;

#define HRM_STR2(x) #x
#define HRM_STR(x) HRM_STR2(x) /* a default of models/hrm.h as help text */
#define GIVEN_CPU_LIMIT 1u /* the marks of --cpu-seconds, --ds-start, --act-start */
#define GIVEN_DS_START 2u
#define GIVEN_ACT_START 4u

#define TA train_args
static const gyro_opt train_opts[] = {
    GYRO_O_STR("output", 'o', TA, output, "MODEL", NULL, "write the model here (atomically; required)"),
    GYRO_O_SECTION("Model:"),
    GYRO_O_CHOICE("geometry", 'g', TA, geometry, "G", "euclidean|hyperbolic", NULL,
                  "euclidean (the default) or hyperbolic (the Poincare ball)"),
    GYRO_O_INT("dim", 0, TA, cfg.dim, "C", NULL, 1, 4096, "width of the states (default 128)"),
    GYRO_O_INT(NULL, 'd', TA, cfg.dim, "C", NULL, 1, 4096, NULL), /* old letter; -d is --dev elsewhere */
    GYRO_O_INT("heads", 0, TA, cfg.n_heads, "H", NULL, 1, 256, "attention heads (default 4)"),
    GYRO_O_INT("head-dim", 0, TA, cfg.head_dim, "D", NULL, 1, 1024, "coordinates per head (default 32)"),
    GYRO_O_INT("ffn", 0, TA, cfg.ffn_dim, "F", NULL, 1, 65536, "feed-forward width (default 256)"),
    GYRO_O_INT("low", 'N', TA, cfg.n_low, "N", NULL, 1, 1000, "L updates per H update (default 1)"),
    GYRO_O_INT("high", 'T', TA, cfg.n_high, "T", NULL, 1, 1000, "H updates per segment (default 1)"),
    GYRO_O_INT("segments", 'M', TA, cfg.m_max, "M", NULL, 1, 1000, "M_max, segments per puzzle (default " HRM_STR(GYRO_HRM_M_MAX) ")"),
    GYRO_O_DOUBLE("act-eps", 0, TA, cfg.act_eps, "E", NULL, 0, 1,
                  "probability of drawing M_min from {2..M} instead of 1 (default 0.1)"),
    GYRO_O_FLAG("no-act", 0, TA, no_act, "every puzzle runs M segments (no Q head training)"),
    GYRO_O_CHOICE("q-pool", 0, TA, q_pool, "P", "cells|mean", NULL,
                  "how the Q head pools the 81 cells: cells (the default), the product of a per-cell "
                  "probability, which can see a single wrong cell; mean, a linear head on their mean"),
    GYRO_O_FLAG("bptt", 0, TA, tc.bptt, "backpropagate through the whole segment instead of the one-step "
                "gradient (the exact gradient; memory grows with N*T)"),
    GYRO_O_FLAG("plain", 0, TA, plain, "a plain two-block transformer of the same parameters: N = T = M = 1, "
                "no ACT (the baseline of the benchmark)"),
    GYRO_O_SECTION("Training:"),
    GYRO_O_FLAG("augment", 0, TA, augment, "show every puzzle of a batch under a random symmetry of Sudoku "
                "(digits relabelled, bands, stacks, rows and columns inside them permuted, transposed; "
                "the HRM paper's augmentation; the default)"),
    GYRO_O_FLAG("no-augment", 0, TA, no_augment, "every puzzle as it is in FILE"),
    GYRO_O_FLAG("whole-batch", 0, TA, whole_batch, "deep supervision batch by batch: a batch runs until all "
                "its puzzles halt, and the Q target comes from an extra look-ahead segment (default: a "
                "persistent batch, one segment and one step per call, halted puzzles replaced by fresh ones)"),
    GYRO_O_DOUBLE("ds-start", 0, TA, ds_start, "F", NULL, 0, 1,
                  "deep supervision starts after the share F of the training (of --cpu-seconds, else of the "
                  "epochs); before it every puzzle runs one segment, a plain pass of the recurrence (default "
                  HRM_STR(GYRO_HRM_DS_START) "; 0 with --whole-batch)", .mark = GIVEN_DS_START),
    GYRO_O_DOUBLE("act-start", 0, TA, act_start, "F", NULL, 0, 1,
                  "ACT may halt a puzzle before M segments only after the share F of the training; before it "
                  "(and after --ds-start) every puzzle runs M segments, each with its loss, while the Q head "
                  "learns its targets (default " HRM_STR(GYRO_HRM_ACT_START) "; 0 with --whole-batch: ACT from "
                  "the start)", .mark = GIVEN_ACT_START),
    GYRO_O_DOUBLE("q-weight", 0, TA, tc.q_weight, "W", NULL, 0, 0,
                  "weight of the Q head's loss in the persistent batch (default 0.5)"),
    GYRO_O_LONG("epochs", 'E', TA, epochs, "E", "10", 1, 1000000, "passes over FILE"),
    GYRO_O_LONG(NULL, 'e', TA, epochs, "E", NULL, 1, 1000000, NULL), /* old letter; -e is --env elsewhere */
    GYRO_O_DOUBLE("cpu-seconds", 0, TA, cpu_limit, "S", NULL, 0, 0,
                  "stop after S seconds of CPU time (default: no limit)", .mark = GIVEN_CPU_LIMIT),
    GYRO_O_INT("batch", 0, TA, tc.max_batch, "B", NULL, 1, 4096, "puzzles per batch (default 32)"),
    GYRO_O_INT(NULL, 'b', TA, tc.max_batch, "B", NULL, 1, 4096, NULL), /* old letter; -b is --beta elsewhere */
    GYRO_O_DOUBLE("lr", 'l', TA, tc.lr, "LR", NULL, 0, 0, "Adam learning rate (default 1e-3)"),
    GYRO_O_DOUBLE("ball-lr", 0, TA, tc.ball_lr, "LR", NULL, 0, 0,
                  "Riemannian SGD rate of ball parameters (default 0.01)"),
    GYRO_O_SEED("seed", 's', TA, seed, "1", "seed"),
    GYRO_O_FLAG("quiet", 'q', TA, quiet, "no progress lines"),
    GYRO_O_END,
};
#undef TA

const gyro_cmd_spec gyro_spec_hrm_train = {
    "hrm train", "-o MODEL [options] FILE",
    PUZZLE_ABOUT "The loss covers the blank cells. " PUZZLE_FILES " A progress line per epoch goes to "
    "stderr; the summary (epochs, puzzles, params, steps, loss, ce, train_cell_accuracy, train_solved, "
    "mean_segments, cpu_seconds, peak_rss_mib) is one line of key=value pairs on stdout.",
    PUZZLE_EXIT,
    train_opts,
    NULL,
};

/* Parse and check the options of `hrm train`; returns GYRO_OPTS_CONTINUE with *file the puzzle
 * file, or the exit status. */
static int train_parse(int argc, char **argv, train_args *o, const char **file)
{
    const char *cmd = gyro_spec_hrm_train.name;
    *o = (train_args){.cfg = gyro_hrm_config_default(), .tc = gyro_hrm_train_config_default(),
                      .ds_start = GYRO_HRM_DS_START, .act_start = GYRO_HRM_ACT_START};
    unsigned given;
    int first, rc = gyro_opts_parse_marks(&gyro_spec_hrm_train, argc, argv, o, &first, &given);
    if (rc != GYRO_OPTS_CONTINUE) return rc;
    if (!o->output) return gyro_cli_usage_error(cmd, "-o MODEL is required");
    if (first + 1 != argc) return gyro_cli_usage_error(cmd, "one puzzle FILE expected");
    if ((given & GIVEN_CPU_LIMIT) && !(o->cpu_limit > 0))
        return gyro_cli_usage_error(cmd, "--cpu-seconds must be > 0");
    if (!(o->tc.lr > 0)) return gyro_cli_usage_error(cmd, "--lr must be > 0");
    if (!(o->tc.ball_lr >= 0)) return gyro_cli_usage_error(cmd, "--ball-lr must be >= 0");
    if (!(o->tc.q_weight >= 0)) return gyro_cli_usage_error(cmd, "--q-weight must be >= 0");
    if (o->whole_batch && (((given & GIVEN_DS_START) && o->ds_start > 0) ||
                           ((given & GIVEN_ACT_START) && o->act_start > 0)))
        return gyro_cli_usage_error(cmd, "--ds-start and --act-start need the persistent batch (not --whole-batch)");
    if (o->whole_batch) o->ds_start = o->act_start = 0;
    if (o->augment && o->no_augment) return gyro_cli_usage_error(cmd, "--augment and --no-augment together");
    o->augment = !o->no_augment;
    if (o->geometry) o->cfg.geometry = GYRO_GEO_HYPERBOLIC;
    o->cfg.q_pool = o->q_pool ? GYRO_HRM_QPOOL_MEAN : GYRO_HRM_QPOOL_CELLS;
    if (o->no_act) o->tc.act = 0;
    if (o->plain) {
        o->cfg.n_low = o->cfg.n_high = o->cfg.m_max = 1;
        o->tc.act = 0;
    }
    if (o->cfg.m_max == 1) o->tc.act = 0;
    if (gyro_hrm_config_validate(&o->cfg) != GYRO_OK) return gyro_cli_usage_error(cmd, "%s", gyro_error_message());
    *file = argv[first];
    return GYRO_OPTS_CONTINUE;
}

/* A training run: the trainer, the data in a shuffled order, the batch buffers and the totals. */
typedef struct train_run {
    gyro_hrm_trainer *t;
    gyro_hrm_model *m;        /* the trained model (its m_max is 1 before deep supervision starts) */
    const puzzles *data;
    long *order;              /* (n) puzzle indices, reshuffled every epoch */
    long *idx;                /* (max_batch) the fresh puzzles of a persistent-batch step */
    int32_t *btok;            /* (max_batch, 81) tokens of a batch */
    int *blab;                /* (max_batch, 81) labels, -1 at the clues */
    int max_batch;
    int augment;              /* a random symmetry per puzzle and batch */
    gyro_rng rng;
    double cpu0, cpu_limit;
    double loss, ce, acc;     /* of the last epoch: mean batch loss and CE, cell accuracy */
    long segs, seen, solved, steps, epochs_done;
    int out_of_time;
} train_run;

/* Fisher-Yates over order[0..n-1]. */
static void shuffle(long *order, long n, gyro_rng *rng)
{
    for (long i = n - 1; i > 0; i--) {
        long j = (long)gyro_rng_below(rng, (uint32_t)(i + 1));
        long tmp = order[i];
        order[i] = order[j];
        order[j] = tmp;
    }
}

/* Copy the puzzles idx[0..B-1] into the batch (each under a random symmetry with augment); the
 * loss covers the blank cells: clues are given, not predicted (label -1). */
static void fill_batch(train_run *r, const long *idx, int B)
{
    for (int b = 0; b < B; b++) {
        const int32_t *tok = r->data->tok + idx[b] * 81;
        const int *lab = r->data->lab + idx[b] * 81;
        int32_t *bt = r->btok + (size_t)b * 81;
        int *bl = r->blab + (size_t)b * 81;
        if (r->augment) {
            gyro_sudoku pz, sol, pz2, sol2;
            for (int i = 0; i < 81; i++) {
                pz.cell[i] = (uint8_t)tok[i];
                sol.cell[i] = (uint8_t)(lab[i] + 1);
            }
            gyro_sudoku_symmetry sym;
            gyro_sudoku_symmetry_draw(&r->rng, &sym);
            gyro_sudoku_symmetry_apply(&sym, &pz, &pz2);
            gyro_sudoku_symmetry_apply(&sym, &sol, &sol2);
            for (int i = 0; i < 81; i++) {
                bt[i] = pz2.cell[i];
                bl[i] = pz2.cell[i] ? -1 : sol2.cell[i] - 1;
            }
            continue;
        }
        memcpy(bt, tok, 81 * sizeof(int32_t));
        for (int i = 0; i < 81; i++) bl[i] = tok[i] ? -1 : lab[i];
    }
}

/* One pass over the data in a new order (or until the CPU budget runs out); updates the totals
 * and prints the progress line unless quiet. */
static gyro_status train_epoch(train_run *r, long ep, int quiet)
{
    const long n = r->data->n;
    shuffle(r->order, n, &r->rng);
    double eloss = 0, ece = 0, eacc = 0;
    long esegs = 0, eseen = 0, esolved = 0, ebatches = 0;
    for (long s0 = 0; s0 < n; s0 += r->max_batch) {
        int B = (int)(n - s0 < r->max_batch ? n - s0 : r->max_batch);
        fill_batch(r, r->order + s0, B);
        gyro_hrm_batch_stats bs;
        gyro_status st = gyro_hrm_train_batch(r->t, r->btok, r->blab, B, &r->rng, &bs);
        if (st != GYRO_OK) return st;
        eloss += bs.loss;
        ece += bs.ce;
        eacc += bs.seg_acc * B;
        esegs += bs.segments;
        eseen += B;
        esolved += bs.solved;
        r->steps += bs.steps;
        ebatches++;
        if (r->cpu_limit > 0 && cpu_seconds() - r->cpu0 >= r->cpu_limit) {
            r->out_of_time = 1;
            break;
        }
    }
    r->loss = eloss / ebatches;
    r->ce = ece / ebatches;
    r->acc = eacc / eseen;
    r->segs += esegs;
    r->seen += eseen;
    r->solved = esolved;
    r->epochs_done = ep + 1;
    if (!quiet)
        fprintf(stderr, "gyro hrm train: epoch %ld%s: loss %.4f (ce %.4f), train cell accuracy %.4f, solved "
                "%ld/%ld, %.2f segments/puzzle, cpu %.1f s\n", ep + 1, r->out_of_time ? " (cpu limit)" : "",
                r->loss, r->ce, r->acc, esolved, eseen, (double)esegs / eseen, cpu_seconds() - r->cpu0);
    return GYRO_OK;
}

/* The persistent batch (gyro_hrm_train_step): one segment and one optimizer step per call, halted
 * puzzles replaced by the next ones of the shuffled order; an epoch ends when n fresh puzzles
 * have entered. Runs `epochs` epochs or until the CPU budget is spent; prints a progress line per
 * epoch unless quiet. */
static gyro_status train_carry(train_run *r, long epochs, double ds_start, double act_start, int quiet)
{
    const long n = r->data->n;
    const int m_max = r->m->cfg.m_max;
    /* before deep supervision starts every puzzle halts after one segment (no Q decision); the
     * switch comes when all slots are vacant */
    int one = ds_start > 0;
    if (one) r->m->cfg.m_max = 1;
    /* before act_start every puzzle runs M segments (the Q head learns, nobody halts early) */
    int full = act_start > 0 && act_start > ds_start;
    if (full) gyro_hrm_trainer_set_min_segments(r->t, m_max);
    long pos = n, entered = 0, ep = 0;
    double eloss = 0, ece = 0;
    long esteps = 0, ecells = 0, eright = 0, esegs = 0, ehalted = 0, esolved = 0;
    while (ep < epochs) {
        const int need = gyro_hrm_trainer_vacant(r->t);
        for (int i = 0; i < need; i++) {
            if (pos == n) {
                shuffle(r->order, n, &r->rng);
                pos = 0;
            }
            r->idx[i] = r->order[pos++];
        }
        fill_batch(r, r->idx, need);
        gyro_hrm_step_stats ss;
        int used;
        gyro_status st = gyro_hrm_train_step(r->t, r->btok, r->blab, need, &used, &r->rng, &ss);
        if (st != GYRO_OK) return st;
        entered += used;
        r->steps++;
        if (one && (r->cpu_limit > 0 ? cpu_seconds() - r->cpu0 >= ds_start * r->cpu_limit
                                     : entered >= (long)(ds_start * (double)epochs * (double)n))) {
            one = 0;
            r->m->cfg.m_max = m_max;
        }
        if (full && (r->cpu_limit > 0 ? cpu_seconds() - r->cpu0 >= act_start * r->cpu_limit
                                      : entered >= (long)(act_start * (double)epochs * (double)n))) {
            full = 0;
            gyro_hrm_trainer_set_min_segments(r->t, 1);
        }
        esteps++;
        eloss += ss.loss;
        ece += ss.ce;
        ecells += ss.cells;
        eright += ss.right;
        esegs += ss.halted_segments;
        ehalted += ss.halted;
        esolved += ss.solved;
        if (r->cpu_limit > 0 && cpu_seconds() - r->cpu0 >= r->cpu_limit) r->out_of_time = 1;
        if (entered >= (ep + 1) * n || r->out_of_time) {
            r->loss = eloss / esteps;
            r->ce = ece / esteps;
            r->acc = ecells ? (double)eright / ecells : 0.0;
            r->segs += esegs;
            r->seen += ehalted;
            r->solved = esolved;
            r->epochs_done = ep + 1;
            if (!quiet)
                fprintf(stderr, "gyro hrm train: epoch %ld%s: loss %.4f (ce %.4f), train cell accuracy %.4f, "
                        "solved %ld/%ld, %.2f segments/puzzle, cpu %.1f s\n", ep + 1,
                        r->out_of_time ? " (cpu limit)" : "", r->loss, r->ce, r->acc, esolved, ehalted,
                        ehalted ? (double)esegs / ehalted : 0.0, cpu_seconds() - r->cpu0);
            eloss = ece = 0;
            esteps = ecells = eright = esegs = ehalted = esolved = 0;
            ep++;
            if (r->out_of_time) break;
        }
    }
    r->m->cfg.m_max = m_max;
    return GYRO_OK;
}

/* Train a new model on `data` for the epochs of `o`, save it to o->output and print the
 * summary. Returns the exit status. */
static int train_model(const char *cmd, const train_args *o, const puzzles *data)
{
    gyro_hrm_model *m = NULL;
    train_run r = {.data = data, .m = NULL, .max_batch = o->tc.max_batch, .cpu_limit = o->cpu_limit,
                   .augment = o->augment};
    gyro_status st = gyro_hrm_new(&o->cfg, o->seed, &m);
    if (st == GYRO_OK) st = gyro_hrm_trainer_new(m, &o->tc, &r.t);
    r.m = m;
    r.order = malloc((size_t)data->n * sizeof(long));
    r.idx = malloc((size_t)r.max_batch * sizeof(long));
    r.btok = malloc((size_t)r.max_batch * 81 * sizeof(int32_t));
    r.blab = malloc((size_t)r.max_batch * 81 * sizeof(int));
    if (st == GYRO_OK && (!r.order || !r.idx || !r.btok || !r.blab)) st = gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    if (st == GYRO_OK) {
        for (long i = 0; i < data->n; i++) r.order[i] = i;
        gyro_rng_seed(&r.rng, o->seed ^ 0x68726dULL);
        r.cpu0 = cpu_seconds();
    }
    if (st == GYRO_OK && !o->whole_batch) st = train_carry(&r, o->epochs, o->ds_start, o->act_start, o->quiet);
    for (long ep = 0; st == GYRO_OK && o->whole_batch && ep < o->epochs && !r.out_of_time; ep++)
        st = train_epoch(&r, ep, o->quiet);
    if (st == GYRO_OK) st = gyro_hrm_save(m, o->output);
    if (st == GYRO_OK)
        printf("epochs=%ld puzzles=%ld params=%zu steps=%ld loss=%.6f ce=%.6f train_cell_accuracy=%.4f "
               "train_solved=%ld mean_segments=%.4f cpu_seconds=%.3f peak_rss_mib=%.1f\n", r.epochs_done,
               data->n, m->lay.n_params, r.steps, r.loss, r.ce, r.acc, r.solved,
               r.seen ? (double)r.segs / r.seen : 0.0, cpu_seconds() - r.cpu0, peak_rss_mib());
    gyro_hrm_trainer_free(r.t);
    gyro_hrm_free(m);
    free(r.order);
    free(r.idx);
    free(r.btok);
    free(r.blab);
    return st == GYRO_OK ? 0 : gyro_cli_fail(cmd, st);
}

static int cmd_train(int argc, char **argv)
{
    const char *cmd = gyro_spec_hrm_train.name, *file = NULL;
    train_args o;
    int rc = train_parse(argc, argv, &o, &file);
    if (rc != GYRO_OPTS_CONTINUE) return rc;
    gyro_blas_set_threads(1);
    puzzles data = {0};
    rc = read_puzzles(cmd, file, &data);
    if (rc == 0 && data.n == 0) {
        fprintf(stderr, "gyro %s: %s: no puzzles\n", cmd, file);
        rc = 65;
    }
    if (rc == 0) rc = train_model(cmd, &o, &data);
    free(data.tok);
    free(data.lab);
    return rc;
}

/* ---- eval ------------------------------------------------------------------------------- */

typedef struct eval_args {
    const char *model;
    long batch;
    int no_act;
    int segments; /* 0: the model's M_max */
} eval_args;

static const gyro_opt eval_opts[] = {
    GYRO_O_STR("model", 'm', eval_args, model, "MODEL", NULL, "the model from 'gyro hrm train' (required)"),
    GYRO_O_FLAG("no-act", 0, eval_args, no_act, "always run M segments (no halting by the Q head)"),
    GYRO_O_INT("segments", 'M', eval_args, segments, "M", NULL, 1, 1000,
               "at most M segments per puzzle instead of the model's M_max (more reasoning at test time)"),
    GYRO_O_LONG("batch", 0, eval_args, batch, "B", "64", 1, 4096, "puzzles per batch"),
    GYRO_O_LONG(NULL, 'b', eval_args, batch, "B", NULL, 1, 4096, NULL), /* old letter; -b is --beta elsewhere */
    GYRO_O_END,
};

const gyro_cmd_spec gyro_spec_hrm_eval = {
    "hrm eval", "-m MODEL [--no-act] [-M M] [FILE ...]",
    "Solve the puzzles of the FILEs (default standard input) and print puzzles=, cell_accuracy= (over "
    "the blank cells), exact= (fraction solved exactly) and mean_segments= (halting when Q_halt > "
    "Q_continue, or at M; --no-act: always M). " PUZZLE_FILES,
    PUZZLE_EXIT,
    eval_opts,
    NULL,
};

/* Load a Sudoku model (81 cells, 10 symbols, 9 classes) and its activations for `batch`
 * puzzles. On error returns the status with *m and *a freed and NULL. */
static gyro_status load_sudoku_model(const char *path, int batch, gyro_hrm_model **m, gyro_hrm_acts **a)
{
    *a = NULL;
    gyro_status st = gyro_hrm_load(path, m);
    if (st != GYRO_OK) return st;
    const gyro_hrm_config *c = &(*m)->cfg;
    if (c->n_cells != 81 || c->vocab != 10 || c->n_classes != 9)
        st = gyro_error_set(GYRO_ERR_FORMAT, "%s: not a Sudoku model (%d cells, %d symbols, %d classes)", path,
                            c->n_cells, c->vocab, c->n_classes);
    if (st == GYRO_OK) st = gyro_hrm_acts_new(*m, batch, 0, 0, a);
    if (st != GYRO_OK) {
        gyro_hrm_free(*m);
        *m = NULL;
    }
    return st;
}

typedef struct eval_counts {
    long blank, right, exact, seg_sum; /* blank cells, right ones, puzzles solved exactly, segments */
} eval_counts;

/* Solve the puzzles in batches and count the results. pred (batch, 81) and segs (batch) are
 * the caller's scratch. */
static gyro_status eval_puzzles(const gyro_hrm_model *m, gyro_hrm_acts *a, const puzzles *data, long batch,
                                int act, int *pred, int *segs, eval_counts *n)
{
    for (long s0 = 0; s0 < data->n; s0 += batch) {
        int B = (int)(data->n - s0 < batch ? data->n - s0 : batch);
        gyro_status st = gyro_hrm_solve(m, a, data->tok + s0 * 81, B, act, pred, segs, NULL, NULL);
        if (st != GYRO_OK) return st;
        for (int b = 0; b < B; b++) {
            int ok = 1;
            for (int i = 0; i < 81; i++) {
                const long r = (s0 + b) * 81 + i;
                if (data->tok[r] != 0) continue; /* clues are given, not predicted */
                n->blank++;
                n->right += pred[(size_t)b * 81 + i] == data->lab[r];
                ok &= pred[(size_t)b * 81 + i] == data->lab[r];
            }
            n->exact += ok;
            n->seg_sum += segs[b];
        }
    }
    return GYRO_OK;
}

static int cmd_eval(int argc, char **argv)
{
    const char *cmd = gyro_spec_hrm_eval.name;
    eval_args o = {0};
    int first, rc = gyro_opts_parse(&gyro_spec_hrm_eval, argc, argv, &o, &first);
    if (rc != GYRO_OPTS_CONTINUE) return rc;
    if (!o.model) return gyro_cli_usage_error(cmd, "-m MODEL is required");
    const int act = !o.no_act;
    gyro_blas_set_threads(1);
    puzzles data = {0};
    rc = first >= argc ? read_puzzles(cmd, "-", &data) : 0;
    for (int i = first; i < argc && rc == 0; i++) rc = read_puzzles(cmd, argv[i], &data);
    gyro_hrm_model *m = NULL;
    gyro_hrm_acts *a = NULL;
    int *pred = NULL, *segs = NULL;
    gyro_status st = rc ? GYRO_OK : load_sudoku_model(o.model, (int)o.batch, &m, &a);
    if (rc == 0 && st == GYRO_OK && o.segments > 0) m->cfg.m_max = o.segments;
    if (rc == 0 && st == GYRO_OK) {
        pred = malloc((size_t)o.batch * 81 * sizeof(int));
        segs = malloc((size_t)o.batch * sizeof(int));
        if (!pred || !segs) st = gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    }
    eval_counts n = {0};
    const double cpu0 = cpu_seconds();
    if (rc == 0 && st == GYRO_OK) st = eval_puzzles(m, a, &data, o.batch, act, pred, segs, &n);
    if (rc == 0 && st == GYRO_OK)
        printf("puzzles=%ld cell_accuracy=%.4f exact=%.4f mean_segments=%.4f m_max=%d act=%d cpu_seconds=%.3f\n",
               data.n, n.blank ? (double)n.right / n.blank : 1.0, data.n ? (double)n.exact / data.n : 0.0,
               data.n ? (double)n.seg_sum / data.n : 0.0, m->cfg.m_max, act, cpu_seconds() - cpu0);
    if (rc == 0 && st != GYRO_OK) rc = gyro_cli_fail(cmd, st);
    gyro_hrm_acts_free(a);
    gyro_hrm_free(m);
    free(pred);
    free(segs);
    free(data.tok);
    free(data.lab);
    return rc;
}

int gyro_cmd_hrm(int argc, char **argv)
{
    if (argc < 2) return gyro_cli_usage_error("hrm", "train or eval?");
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "train")) return cmd_train(argc - 1, argv + 1);
    if (!strcmp(argv[1], "eval")) return cmd_eval(argc - 1, argv + 1);
    return gyro_cli_usage_error("hrm", "unknown subcommand '%s' (train, eval)", argv[1]);
}

/* ---- gyro reason --env sudoku ------------------------------------------------------------ */

int gyro_cli_is_sudoku(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--")) break;
        if (!strcmp(argv[i], "--env=sudoku")) return 1;
        if ((!strcmp(argv[i], "--env") || !strcmp(argv[i], "-e")) && i + 1 < argc &&
            !strcmp(argv[i + 1], "sudoku"))
            return 1;
    }
    return 0;
}

typedef struct board_ctx {
    const int32_t *tok; /* (81) the puzzle */
    int prev[81];       /* predictions of the previous segment (-1 before the first) */
} board_ctx;

/* Print the board after a segment: clues as given, the model's digits in the blanks, a '*'
 * after each digit that changed since the previous segment. */
static void print_board(void *vctx, int segment, const int *idx, const int *pred, int B)
{
    board_ctx *ctx = vctx;
    (void)idx;
    if (B < 1) return;
    int changed = 0;
    for (int i = 0; i < 81; i++)
        changed += !ctx->tok[i] && pred[i] != ctx->prev[i];
    printf("segment %d (%d blank cells changed):\n", segment, changed);
    for (int r = 0; r < 9; r++) {
        if (r == 3 || r == 6) printf("-----------+----------+---------\n");
        printf(" ");
        for (int c = 0; c < 9; c++) {
            const int i = 9 * r + c;
            if (c == 3 || c == 6) printf(" |");
            const int d = ctx->tok[i] ? ctx->tok[i] : pred[i] + 1;
            printf(" %d%s", d, !ctx->tok[i] && pred[i] != ctx->prev[i] && ctx->prev[i] >= 0 ? "*" : "");
            if (!(!ctx->tok[i] && pred[i] != ctx->prev[i] && ctx->prev[i] >= 0)) printf(" ");
        }
        printf("\n");
    }
    memcpy(ctx->prev, pred, sizeof ctx->prev);
}

static int reason_one(const char *cmd, const gyro_hrm_model *m, gyro_hrm_acts *a,
                      const char *text, size_t len, const char *where, int act)
{
    gyro_sudoku pz, ref;
    if (gyro_sudoku_parse(text, len, &pz) != GYRO_OK) {
        fprintf(stderr, "gyro %s: %s: %s\n", cmd, where, gyro_error_message());
        return 65;
    }
    if (gyro_sudoku_solve(&pz, 1, &ref, NULL) == 0) {
        fprintf(stderr, "gyro %s: %s: the puzzle has no solution\n", cmd, where);
        return 65;
    }
    board_ctx ctx;
    int32_t tok[81];
    for (int i = 0; i < 81; i++) {
        tok[i] = pz.cell[i];
        ctx.prev[i] = -1;
    }
    ctx.tok = tok;
    char ps[GYRO_SUDOKU_CELLS + 1];
    gyro_sudoku_format(&pz, ps);
    printf("puzzle: %s  (%d clues)\n", ps, gyro_sudoku_clues(&pz));
    int pred[81], segs = 0;
    gyro_status st = gyro_hrm_solve(m, a, tok, 1, act, pred, &segs, print_board, &ctx);
    if (st != GYRO_OK) return gyro_cli_fail(cmd, st);
    gyro_sudoku out = pz;
    int right = 0, blank = 0;
    for (int i = 0; i < 81; i++)
        if (!pz.cell[i]) {
            out.cell[i] = (uint8_t)(pred[i] + 1);
            blank++;
            right += out.cell[i] == ref.cell[i];
        }
    char os[GYRO_SUDOKU_CELLS + 1];
    gyro_sudoku_format(&out, os);
    printf("answer: %s  after %d segment%s\nresult: %d/%d blank cells right, %s, %s\n", os, segs,
           segs == 1 ? "" : "s", right, blank, gyro_sudoku_consistent(&out) ? "no rule broken"
           : "a digit repeats in a row, column or box", right == blank ? "SOLVED" : "not solved");
    return 0;
}

typedef struct reason_sudoku_args {
    const char *env, *model;
    int no_act;
} reason_sudoku_args;

static const gyro_opt reason_sudoku_opts[] = {
    GYRO_O_STR("env", 'e', reason_sudoku_args, env, "sudoku", NULL, "the Sudoku environment"),
    GYRO_O_STR("model", 'm', reason_sudoku_args, model, "MODEL", NULL, "a model from 'gyro hrm train' (required)"),
    GYRO_O_FLAG("no-act", 0, reason_sudoku_args, no_act, "always run M_max segments (no halting by the Q head)"),
    GYRO_O_END,
};

/* Not in specs.def: the man page describes --env sudoku beside the options of `reason`. */
static const gyro_cmd_spec reason_sudoku_spec = {
    "reason", "--env sudoku --model MODEL [--no-act] [PUZZLE ...]",
    "Solve 9x9 puzzles (81 characters: digits, '.' or '0' for blanks; the arguments, or one per line "
    "of standard input) with a model from 'gyro hrm train' and print the board after every segment: "
    "clues as given, the model's digits in the blanks, '*' after a digit changed since the previous "
    "segment. The model halts when its Q head says so (or at M_max; --no-act: always M_max).",
    "Exit status: 0 OK, 1 I/O error, 2 usage, 65 a malformed or unsolvable puzzle or a bad model file.",
    reason_sudoku_opts,
    NULL,
};

/* The puzzles of standard input, one per line (the first tab-separated field). */
static int reason_stdin(const char *cmd, const gyro_hrm_model *m, gyro_hrm_acts *a, int act)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    unsigned long lineno = 0;
    int rc = 0;
    while (rc == 0 && (n = getline(&line, &cap, stdin)) != -1) {
        lineno++;
        char *tab = memchr(line, '\t', (size_t)n);
        size_t len = tab ? (size_t)(tab - line) : (size_t)n;
        while (len && (line[len - 1] == '\n' || line[len - 1] == '\r')) len--;
        if (len == 0) continue;
        char where[48];
        snprintf(where, sizeof where, "-:%lu", lineno);
        rc = reason_one(cmd, m, a, line, len, where, act);
    }
    free(line);
    return rc;
}

int gyro_cli_reason_sudoku(int argc, char **argv)
{
    const char *cmd = reason_sudoku_spec.name;
    reason_sudoku_args o = {0};
    int first, rc = gyro_opts_parse(&reason_sudoku_spec, argc, argv, &o, &first);
    if (rc != GYRO_OPTS_CONTINUE) return rc;
    if (!o.model) return gyro_cli_usage_error(cmd, "--model is required");
    gyro_blas_set_threads(1);
    gyro_hrm_model *m = NULL;
    gyro_hrm_acts *a = NULL;
    gyro_status st = load_sudoku_model(o.model, 1, &m, &a);
    if (st != GYRO_OK) return gyro_cli_fail(cmd, st);
    rc = 0;
    for (int i = first; i < argc && rc == 0; i++) {
        char where[32];
        snprintf(where, sizeof where, "argument %d", i - first + 1);
        rc = reason_one(cmd, m, a, argv[i], strlen(argv[i]), where, !o.no_act);
    }
    if (first >= argc) rc = reason_stdin(cmd, m, a, !o.no_act);
    gyro_hrm_acts_free(a);
    gyro_hrm_free(m);
    return rc;
}

/* cmd_hrm.c — `gyro hrm train|eval`: the hierarchical reasoning model (models/hrm.h) on 9×9
 * Sudoku puzzles from `gyro sudoku generate` (text lines: puzzle, solution, … separated by tabs).
 *
 *   gyro hrm train -o MODEL [options] FILE
 *   gyro hrm eval -m MODEL [--no-act] [FILE ...]
 *
 * A thin wrapper over models/hrm.h and models/rl/sudoku.h. The summaries are one line of
 * key=value pairs on stdout (the benchmarks parse them); the per-epoch progress goes to stderr.
 */
#include <getopt.h>
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

static void usage(FILE *out)
{
    fprintf(out,
            "usage: gyro hrm train -o MODEL [options] FILE\n"
            "       gyro hrm eval -m MODEL [--no-act] [FILE ...]\n"
            "\n"
            "The hierarchical reasoning model on 9x9 Sudoku: a fast module L updates N times per\n"
            "update of a slow module H, T H-cycles per segment (each one transformer block over\n"
            "the 81 cells), one-step gradients, deep supervision over up to M segments and a Q\n"
            "head that learns when to halt (ACT). The loss covers the blank cells. FILE lines: puzzle<TAB>solution[<TAB>...] as\n"
            "written by 'gyro sudoku generate' (a line without a solution is solved by the\n"
            "reference solver); '-' is standard input.\n"
            "\n"
            "train options:\n"
            "  -o, --output MODEL     write the model here (atomically; required)\n"
            "  -g, --geometry G       euclidean (default) or hyperbolic (Poincare ball)\n"
            "  -d, --dim C            width of the states (default 64)\n"
            "      --heads H          attention heads (default 4)\n"
            "      --head-dim D       coordinates per head (default 16)\n"
            "      --ffn F            feed-forward width (default 128)\n"
            "  -N, --low N            L updates per H update (default 2)\n"
            "  -T, --high T           H updates per segment (default 2)\n"
            "  -M, --segments M       M_max, segments per puzzle (default 4)\n"
            "      --act-eps E        probability of drawing M_min from {2..M} (default 0.1)\n"
            "      --no-act           every puzzle runs M segments (no Q head training)\n"
            "      --bptt             backpropagate through the whole segment instead of the\n"
            "                         one-step gradient (memory grows with N*T)\n"
            "      --plain            a plain two-block transformer: N = T = M = 1, no ACT\n"
            "  -e, --epochs E         passes over FILE (default 10)\n"
            "      --cpu-seconds S    stop after S seconds of CPU time (default: no limit)\n"
            "  -b, --batch B          puzzles per batch (default 32)\n"
            "  -l, --lr LR            Adam learning rate (default 1e-3)\n"
            "      --ball-lr LR       Riemannian SGD rate of ball parameters (default 0.01)\n"
            "  -s, --seed S           seed (default 1)\n"
            "  -q, --quiet            no progress lines\n"
            "\n"
            "eval: solve the puzzles of the FILEs (default standard input) and print\n"
            "  puzzles=  cell_accuracy= (over blank cells)  exact= (fraction solved exactly)\n"
            "  mean_segments=  (halting when Q_halt > Q_continue, or at M; --no-act: always M)\n"
            "\n"
            "Exit status: 0 OK, 1 I/O error, 2 usage, 65 a malformed or unsolvable puzzle (the\n"
            "message names file and line) or a corrupt model file.\n");
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

static int cmd_train(int argc, char **argv)
{
    enum { O_HEADS = 1000, O_HEADDIM, O_FFN, O_EPS, O_NOACT, O_BPTT, O_PLAIN, O_CPU, O_BALL };
    static const struct option opts[] = {
        {"output", required_argument, 0, 'o'}, {"geometry", required_argument, 0, 'g'},
        {"dim", required_argument, 0, 'd'}, {"heads", required_argument, 0, O_HEADS},
        {"head-dim", required_argument, 0, O_HEADDIM}, {"ffn", required_argument, 0, O_FFN},
        {"low", required_argument, 0, 'N'}, {"high", required_argument, 0, 'T'},
        {"segments", required_argument, 0, 'M'}, {"act-eps", required_argument, 0, O_EPS},
        {"no-act", no_argument, 0, O_NOACT}, {"bptt", no_argument, 0, O_BPTT},
        {"plain", no_argument, 0, O_PLAIN}, {"epochs", required_argument, 0, 'e'},
        {"cpu-seconds", required_argument, 0, O_CPU}, {"batch", required_argument, 0, 'b'},
        {"lr", required_argument, 0, 'l'}, {"ball-lr", required_argument, 0, O_BALL},
        {"seed", required_argument, 0, 's'}, {"quiet", no_argument, 0, 'q'},
        {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    const char *cmd = "hrm train", *output = NULL;
    gyro_hrm_config cfg = gyro_hrm_config_default();
    gyro_hrm_train_config tc = gyro_hrm_train_config_default();
    long v, epochs = 10;
    double cpu_limit = 0, d;
    uint64_t seed = 1;
    int quiet = 0, plain = 0, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:g:d:N:T:M:e:b:l:s:qh", opts, NULL)) != -1) {
        switch (c) {
        case 'o': output = optarg; break;
        case 'g':
            if (!strcmp(optarg, "euclidean")) cfg.geometry = GYRO_GEO_EUCLIDEAN;
            else if (!strcmp(optarg, "hyperbolic")) cfg.geometry = GYRO_GEO_HYPERBOLIC;
            else return gyro_cli_usage_error(cmd, "--geometry must be euclidean or hyperbolic");
            break;
        case 'd': if (!gyro_cli_parse_long(cmd, "--dim", optarg, 1, 4096, &v)) return 2; cfg.dim = (int)v; break;
        case O_HEADS: if (!gyro_cli_parse_long(cmd, "--heads", optarg, 1, 256, &v)) return 2; cfg.n_heads = (int)v; break;
        case O_HEADDIM: if (!gyro_cli_parse_long(cmd, "--head-dim", optarg, 1, 1024, &v)) return 2; cfg.head_dim = (int)v; break;
        case O_FFN: if (!gyro_cli_parse_long(cmd, "--ffn", optarg, 1, 65536, &v)) return 2; cfg.ffn_dim = (int)v; break;
        case 'N': if (!gyro_cli_parse_long(cmd, "--low", optarg, 1, 1000, &v)) return 2; cfg.n_low = (int)v; break;
        case 'T': if (!gyro_cli_parse_long(cmd, "--high", optarg, 1, 1000, &v)) return 2; cfg.n_high = (int)v; break;
        case 'M': if (!gyro_cli_parse_long(cmd, "--segments", optarg, 1, 1000, &v)) return 2; cfg.m_max = (int)v; break;
        case O_EPS:
            if (!gyro_cli_parse_double(cmd, "--act-eps", optarg, &d)) return 2;
            if (!(d >= 0 && d <= 1)) return gyro_cli_usage_error(cmd, "--act-eps must be in [0, 1]");
            cfg.act_eps = d;
            break;
        case O_NOACT: tc.act = 0; break;
        case O_BPTT: tc.bptt = 1; break;
        case O_PLAIN: plain = 1; break;
        case 'e': if (!gyro_cli_parse_long(cmd, "--epochs", optarg, 1, 1000000, &epochs)) return 2; break;
        case O_CPU:
            if (!gyro_cli_parse_double(cmd, "--cpu-seconds", optarg, &cpu_limit)) return 2;
            if (!(cpu_limit > 0)) return gyro_cli_usage_error(cmd, "--cpu-seconds must be > 0");
            break;
        case 'b': if (!gyro_cli_parse_long(cmd, "--batch", optarg, 1, 4096, &v)) return 2; tc.max_batch = (int)v; break;
        case 'l':
            if (!gyro_cli_parse_double(cmd, "--lr", optarg, &tc.lr)) return 2;
            if (!(tc.lr > 0)) return gyro_cli_usage_error(cmd, "--lr must be > 0");
            break;
        case O_BALL:
            if (!gyro_cli_parse_double(cmd, "--ball-lr", optarg, &tc.ball_lr)) return 2;
            if (!(tc.ball_lr >= 0)) return gyro_cli_usage_error(cmd, "--ball-lr must be >= 0");
            break;
        case 's': if (!gyro_cli_parse_seed(cmd, "--seed", optarg, &seed)) return 2; break;
        case 'q': quiet = 1; break;
        case 'h': usage(stdout); return 0;
        default: return gyro_cli_usage_error(cmd, "unknown option or missing argument");
        }
    }
    if (!output) return gyro_cli_usage_error(cmd, "-o MODEL is required");
    if (optind + 1 != argc) return gyro_cli_usage_error(cmd, "one puzzle FILE expected");
    if (plain) {
        cfg.n_low = cfg.n_high = cfg.m_max = 1;
        tc.act = 0;
    }
    if (cfg.m_max == 1) tc.act = 0;
    gyro_status st = gyro_hrm_config_validate(&cfg);
    if (st != GYRO_OK) return gyro_cli_usage_error(cmd, "%s", gyro_error_message());
    gyro_blas_set_threads(1);

    puzzles data = {0};
    int rc = read_puzzles(cmd, argv[optind], &data);
    if (rc == 0 && data.n == 0) {
        fprintf(stderr, "gyro %s: %s: no puzzles\n", cmd, argv[optind]);
        rc = 65;
    }
    gyro_hrm_model *m = NULL;
    gyro_hrm_trainer *t = NULL;
    long *order = NULL;
    int32_t *btok = NULL;
    int *blab = NULL;
    if (rc) goto done;
    st = gyro_hrm_new(&cfg, seed, &m);
    if (st == GYRO_OK) st = gyro_hrm_trainer_new(m, &tc, &t);
    if (st != GYRO_OK) {
        rc = gyro_cli_fail(cmd, st);
        goto done;
    }
    order = malloc((size_t)data.n * sizeof(long));
    btok = malloc((size_t)tc.max_batch * 81 * sizeof(int32_t));
    blab = malloc((size_t)tc.max_batch * 81 * sizeof(int));
    if (!order || !btok || !blab) {
        fprintf(stderr, "gyro %s: out of memory\n", cmd);
        rc = 1;
        goto done;
    }
    for (long i = 0; i < data.n; i++) order[i] = i;
    gyro_rng rng;
    gyro_rng_seed(&rng, seed ^ 0x68726dULL);
    const double cpu0 = cpu_seconds();
    double loss = 0, ce = 0, acc = 0;
    long segs = 0, seen = 0, solved = 0, steps = 0, ep_done = 0;
    int out_of_time = 0;
    for (long ep = 0; ep < epochs && !out_of_time; ep++) {
        for (long i = data.n - 1; i > 0; i--) { /* Fisher-Yates */
            long j = (long)gyro_rng_below(&rng, (uint32_t)(i + 1));
            long tmp = order[i];
            order[i] = order[j];
            order[j] = tmp;
        }
        double eloss = 0, ece = 0, eacc = 0;
        long esegs = 0, eseen = 0, esolved = 0, ebatches = 0;
        for (long s0 = 0; s0 < data.n; s0 += tc.max_batch) {
            int B = (int)(data.n - s0 < tc.max_batch ? data.n - s0 : tc.max_batch);
            for (int b = 0; b < B; b++) {
                memcpy(btok + (size_t)b * 81, data.tok + order[s0 + b] * 81, 81 * sizeof(int32_t));
                /* the loss covers the blank cells: clues are given, not predicted */
                for (int i = 0; i < 81; i++)
                    blab[(size_t)b * 81 + i] =
                        btok[(size_t)b * 81 + i] ? -1 : data.lab[order[s0 + b] * 81 + i];
            }
            gyro_hrm_batch_stats bs;
            st = gyro_hrm_train_batch(t, btok, blab, B, &rng, &bs);
            if (st != GYRO_OK) {
                rc = gyro_cli_fail(cmd, st);
                goto done;
            }
            eloss += bs.loss;
            ece += bs.ce;
            eacc += bs.seg_acc * B;
            esegs += bs.segments;
            eseen += B;
            esolved += bs.solved;
            steps += bs.steps;
            ebatches++;
            if (cpu_limit > 0 && cpu_seconds() - cpu0 >= cpu_limit) {
                out_of_time = 1;
                break;
            }
        }
        loss = eloss / ebatches;
        ce = ece / ebatches;
        acc = eacc / eseen;
        segs += esegs;
        seen += eseen;
        solved = esolved;
        ep_done = ep + 1;
        if (!quiet)
            fprintf(stderr, "gyro hrm train: epoch %ld%s: loss %.4f (ce %.4f), train cell accuracy "
                    "%.4f, solved %ld/%ld, %.2f segments/puzzle, cpu %.1f s\n", ep + 1,
                    out_of_time ? " (cpu limit)" : "", loss, ce, acc, esolved, eseen,
                    (double)esegs / eseen, cpu_seconds() - cpu0);
    }
    st = gyro_hrm_save(m, output);
    if (st != GYRO_OK) {
        rc = gyro_cli_fail(cmd, st);
        goto done;
    }
    {
        gyro_hrm_layout lay = m->lay;
        printf("epochs=%ld puzzles=%ld params=%zu steps=%ld loss=%.6f ce=%.6f "
               "train_cell_accuracy=%.4f train_solved=%ld mean_segments=%.4f cpu_seconds=%.3f "
               "peak_rss_mib=%.1f\n", ep_done, data.n, lay.n_params, steps, loss, ce, acc,
               solved, seen ? (double)segs / seen : 0.0, cpu_seconds() - cpu0, peak_rss_mib());
    }
done:
    gyro_hrm_trainer_free(t);
    gyro_hrm_free(m);
    free(order);
    free(btok);
    free(blab);
    free(data.tok);
    free(data.lab);
    return rc;
}

/* ---- eval ------------------------------------------------------------------------------- */

static int cmd_eval(int argc, char **argv)
{
    static const struct option opts[] = {
        {"model", required_argument, 0, 'm'}, {"no-act", no_argument, 0, 1000},
        {"batch", required_argument, 0, 'b'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    const char *cmd = "hrm eval", *model = NULL;
    int act = 1, c;
    long batch = 64;
    optind = 1;
    while ((c = getopt_long(argc, argv, "m:b:h", opts, NULL)) != -1) {
        switch (c) {
        case 'm': model = optarg; break;
        case 1000: act = 0; break;
        case 'b': if (!gyro_cli_parse_long(cmd, "--batch", optarg, 1, 4096, &batch)) return 2; break;
        case 'h': usage(stdout); return 0;
        default: return gyro_cli_usage_error(cmd, "unknown option or missing argument");
        }
    }
    if (!model) return gyro_cli_usage_error(cmd, "-m MODEL is required");
    gyro_blas_set_threads(1);
    puzzles data = {0};
    int rc = 0;
    if (optind >= argc) rc = read_puzzles(cmd, "-", &data);
    for (int i = optind; i < argc && rc == 0; i++) rc = read_puzzles(cmd, argv[i], &data);
    if (rc) {
        free(data.tok);
        free(data.lab);
        return rc;
    }
    gyro_hrm_model *m = NULL;
    gyro_hrm_acts *a = NULL;
    int *pred = NULL, *segs = NULL;
    gyro_status st = gyro_hrm_load(model, &m);
    if (st == GYRO_OK && (m->cfg.n_cells != 81 || m->cfg.vocab != 10 || m->cfg.n_classes != 9))
        st = gyro_error_set(GYRO_ERR_FORMAT, "%s: not a Sudoku model (%d cells, %d symbols, %d "
                            "classes)", model, m->cfg.n_cells, m->cfg.vocab, m->cfg.n_classes);
    if (st == GYRO_OK) st = gyro_hrm_acts_new(m, (int)batch, 0, 0, &a);
    if (st != GYRO_OK) {
        rc = gyro_cli_fail(cmd, st);
        goto done;
    }
    pred = malloc((size_t)batch * 81 * sizeof(int));
    segs = malloc((size_t)batch * sizeof(int));
    if (!pred || !segs) {
        fprintf(stderr, "gyro %s: out of memory\n", cmd);
        rc = 1;
        goto done;
    }
    long blank = 0, right = 0, exact = 0, seg_sum = 0;
    const double cpu0 = cpu_seconds();
    for (long s0 = 0; s0 < data.n; s0 += batch) {
        int B = (int)(data.n - s0 < batch ? data.n - s0 : batch);
        st = gyro_hrm_solve(m, a, data.tok + s0 * 81, B, act, pred, segs, NULL, NULL);
        if (st != GYRO_OK) {
            rc = gyro_cli_fail(cmd, st);
            goto done;
        }
        for (int b = 0; b < B; b++) {
            int ok = 1;
            for (int i = 0; i < 81; i++) {
                const long r = (s0 + b) * 81 + i;
                if (data.tok[r] != 0) continue; /* clues are given, not predicted */
                blank++;
                right += pred[(size_t)b * 81 + i] == data.lab[r];
                ok &= pred[(size_t)b * 81 + i] == data.lab[r];
            }
            exact += ok;
            seg_sum += segs[b];
        }
    }
    printf("puzzles=%ld cell_accuracy=%.4f exact=%.4f mean_segments=%.4f m_max=%d act=%d "
           "cpu_seconds=%.3f\n", data.n, blank ? (double)right / blank : 1.0,
           data.n ? (double)exact / data.n : 0.0, data.n ? (double)seg_sum / data.n : 0.0,
           m->cfg.m_max, act, cpu_seconds() - cpu0);
done:
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

int gyro_cli_reason_sudoku(int argc, char **argv)
{
    static const struct option opts[] = {
        {"env", required_argument, 0, 'e'}, {"model", required_argument, 0, 'm'},
        {"no-act", no_argument, 0, 1000}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    const char *cmd = "reason", *model = NULL;
    int act = 1, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "e:m:h", opts, NULL)) != -1) {
        switch (c) {
        case 'e': break; /* sudoku: checked by gyro_cli_is_sudoku */
        case 'm': model = optarg; break;
        case 1000: act = 0; break;
        case 'h':
            printf("usage: gyro reason --env sudoku --model MODEL [--no-act] [PUZZLE ...]\n"
                   "\n"
                   "Solve 9x9 puzzles (81 characters: digits, '.' or '0' for blanks; the\n"
                   "arguments, or one per line of standard input) with a model from 'gyro hrm\n"
                   "train' and print the board after every segment: clues as given, the model's\n"
                   "digits in the blanks, '*' after a digit changed since the previous segment.\n"
                   "The model halts when its Q head says so (or at M_max; --no-act: always M_max).\n"
                   "Exit status: 0 OK, 1 I/O error, 2 usage, 65 a malformed or unsolvable puzzle\n"
                   "or a bad model file.\n");
            return 0;
        default: return gyro_cli_usage_error(cmd, "unknown option or missing argument");
        }
    }
    if (!model) return gyro_cli_usage_error(cmd, "--model is required");
    gyro_blas_set_threads(1);
    gyro_hrm_model *m = NULL;
    gyro_hrm_acts *a = NULL;
    gyro_status st = gyro_hrm_load(model, &m);
    if (st == GYRO_OK && (m->cfg.n_cells != 81 || m->cfg.vocab != 10 || m->cfg.n_classes != 9))
        st = gyro_error_set(GYRO_ERR_FORMAT, "%s: not a Sudoku model", model);
    if (st == GYRO_OK) st = gyro_hrm_acts_new(m, 1, 0, 0, &a);
    if (st != GYRO_OK) {
        gyro_hrm_free(m);
        return gyro_cli_fail(cmd, st);
    }
    int rc = 0;
    if (optind < argc) {
        for (int i = optind; i < argc && rc == 0; i++) {
            char where[32];
            snprintf(where, sizeof where, "argument %d", i - optind + 1);
            rc = reason_one(cmd, m, a, argv[i], strlen(argv[i]), where, act);
        }
    } else {
        char *line = NULL;
        size_t cap = 0;
        ssize_t n;
        unsigned long lineno = 0;
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
    }
    gyro_hrm_acts_free(a);
    gyro_hrm_free(m);
    return rc;
}

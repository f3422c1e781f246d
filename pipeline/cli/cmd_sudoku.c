/* cmd_sudoku.c — `gyro sudoku generate|solve`: seeded 9×9 puzzles with a unique solution and
 * their grade, and the reference solver on puzzles given as 81-character lines.
 *
 *   gyro sudoku generate [--seed S] [-n N] [--clues C] [--min-nodes A] [--max-nodes B]
 *                        [--attempts K] [--format text|stream] [-o OUT] [-q]
 *   gyro sudoku solve [FILE ...]
 *
 * A thin wrapper over models/rl/sudoku.h. Text lines are puzzle<TAB>solution<TAB>clues<TAB>
 * nodes; `solve` reads the first field of each line, so generate's text output solves back.
 * The stream form is gyro.v1.Example records: text = the puzzle, label = the solution, source =
 * "sudoku:seed=S,clues=C,nodes=K", line = the puzzle's 1-based index.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "models/core/atomic_file.h"
#include "models/rl/sudoku.h"
#include "pipeline/cli/cli.h"
#include "pipeline/stream.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: gyro sudoku generate [options]\n"
            "       gyro sudoku solve [FILE ...]\n"
            "\n"
            "generate: 9x9 puzzles with a unique solution, graded by the number of clues and the\n"
            "search nodes the reference solver (bitmask backtracking, fewest candidates first)\n"
            "needs to prove the solution unique. Puzzle i of a seed is the same whatever -n is.\n"
            "  -s, --seed S           seed (default 1)\n"
            "  -n, --count N          number of puzzles (default 100)\n"
            "  -c, --clues C          blank cells down to C clues at most (17-81; default 17:\n"
            "                         until no clue can go, typically 22-27 left)\n"
            "      --min-nodes A      keep only puzzles whose grade is at least A nodes\n"
            "      --max-nodes B      ... and at most B (default: no bound)\n"
            "      --attempts K       draws per puzzle before giving up on the band (default 1000)\n"
            "  -f, --format F         text (default: puzzle, solution, clues, nodes separated by\n"
            "                         tabs) or stream (Example records: text = puzzle, label =\n"
            "                         solution, source = sudoku:seed=S,clues=C,nodes=K)\n"
            "  -o, --output FILE      output, written atomically (default '-': stdout)\n"
            "  -q, --quiet            no summary line\n"
            "\n"
            "solve: read puzzles, one per line (81 characters: digits 1-9, '.' or '0' for a blank;\n"
            "the first tab-separated field of a line; empty lines are skipped) from the FILEs or\n"
            "standard input, and print puzzle, solution, clues and nodes for each. A puzzle with\n"
            "several solutions is solved with the first and reported on stderr.\n"
            "\n"
            "Exit status: 0 OK, 1 I/O error or no puzzle in the band within the attempts,\n"
            "2 usage, 65 a malformed puzzle (wrong size, a\n"
            "character other than digits and blanks, a digit repeated in a row, column or box)\n"
            "or one without solution; the message names the file and line.\n");
}

static int cmd_generate(int argc, char **argv)
{
    static const struct option opts[] = {
        {"seed", required_argument, 0, 's'},   {"count", required_argument, 0, 'n'},
        {"clues", required_argument, 0, 'c'},  {"min-nodes", required_argument, 0, 1000},
        {"max-nodes", required_argument, 0, 1001}, {"attempts", required_argument, 0, 1002},
        {"format", required_argument, 0, 'f'}, {"output", required_argument, 0, 'o'},
        {"quiet", no_argument, 0, 'q'},        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    const char *cmd = "sudoku generate", *format = "text", *output = "-";
    gyro_sudoku_gen_config gc = gyro_sudoku_gen_config_default();
    uint64_t seed = 1;
    long count = 100, v;
    int quiet = 0, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "s:n:c:f:o:qh", opts, NULL)) != -1) {
        switch (c) {
        case 's': if (!gyro_cli_parse_seed(cmd, "--seed", optarg, &seed)) return 2; break;
        case 'n': if (!gyro_cli_parse_long(cmd, "--count", optarg, 0, 100000000L, &count)) return 2; break;
        case 'c': if (!gyro_cli_parse_long(cmd, "--clues", optarg, 17, 81, &v)) return 2; gc.clues = (int)v; break;
        case 1000: if (!gyro_cli_parse_long(cmd, "--min-nodes", optarg, 0, 1000000000000L, &v)) return 2; gc.min_nodes = (uint64_t)v; break;
        case 1001: if (!gyro_cli_parse_long(cmd, "--max-nodes", optarg, 1, 1000000000000L, &v)) return 2; gc.max_nodes = (uint64_t)v; break;
        case 1002: if (!gyro_cli_parse_long(cmd, "--attempts", optarg, 1, 100000000L, &v)) return 2; gc.max_attempts = (int)v; break;
        case 'f': format = optarg; break;
        case 'o': output = optarg; break;
        case 'q': quiet = 1; break;
        case 'h': usage(stdout); return 0;
        default: return gyro_cli_usage_error(cmd, "unknown option or missing argument");
        }
    }
    if (optind < argc) return gyro_cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
    int stream = strcmp(format, "stream") == 0;
    if (!stream && strcmp(format, "text") != 0)
        return gyro_cli_usage_error(cmd, "--format must be text or stream, got '%s'", format);
    if (gc.max_nodes && gc.max_nodes < gc.min_nodes)
        return gyro_cli_usage_error(cmd, "--max-nodes %" PRIu64 " is below --min-nodes %" PRIu64,
                                    gc.max_nodes, gc.min_nodes);
    if (stream && strcmp(output, "-") == 0 && isatty(STDOUT_FILENO))
        return gyro_cli_usage_error(cmd, "standard output is a terminal: use --format text, -o FILE, "
                                    "or pipe into 'gyro dump'");

    gyro_atomic_file f = {0};
    gyro_stream_writer *w = NULL;
    gyro_status st = stream ? gyro_stream_writer_open_path(output, &gyro__v1__example__descriptor,
                                                           "gyro sudoku generate " GYRO_VERSION, &w)
                            : gyro_atomic_open(&f, output);
    if (st != GYRO_OK) return gyro_cli_fail(cmd, st);
    double clue_sum = 0, node_sum = 0;
    for (long i = 0; i < count && st == GYRO_OK; i++) {
        gyro_sudoku p, sol;
        gyro_sudoku_grade g;
        st = gyro_sudoku_generate(seed, (uint64_t)i, &gc, &p, &sol, &g);
        if (st != GYRO_OK) break;
        clue_sum += g.clues;
        node_sum += (double)g.nodes;
        char ps[GYRO_SUDOKU_CELLS + 1], ss[GYRO_SUDOKU_CELLS + 1];
        gyro_sudoku_format(&p, ps);
        gyro_sudoku_format(&sol, ss);
        if (stream) {
            char source[96];
            snprintf(source, sizeof source, "sudoku:seed=%" PRIu64 ",clues=%d,nodes=%" PRIu64, seed,
                     g.clues, g.nodes);
            Gyro__V1__Example e = GYRO__V1__EXAMPLE__INIT;
            e.text = ps;
            e.label = ss;
            e.source = source;
            e.line = (uint64_t)i + 1;
            st = gyro_stream_write(w, &e.base);
        } else if (fprintf(f.fp, "%s\t%s\t%d\t%" PRIu64 "\n", ps, ss, g.clues, g.nodes) < 0) {
            st = gyro_error_set(GYRO_ERR_IO, "%s: write error", output);
        }
    }
    if (stream) {
        if (st == GYRO_OK) st = gyro_stream_writer_close(w);
        else gyro_stream_writer_abort(w);
    } else {
        if (st == GYRO_OK) st = gyro_atomic_commit(&f);
        else gyro_atomic_abort(&f);
    }
    if (st != GYRO_OK) return gyro_cli_fail(cmd, st);
    if (!quiet)
        fprintf(stderr, "gyro sudoku: %ld puzzles (seed %" PRIu64 ", %s), mean %.1f clues, mean %.0f "
                "search nodes -> %s\n", count, seed, format, count ? clue_sum / count : 0.0,
                count ? node_sum / count : 0.0, output);
    return 0;
}

/* Solve every puzzle of fp (named `name`); returns an exit code. */
static int solve_file(FILE *fp, const char *name)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    unsigned long lineno = 0;
    int rc = 0;
    while (rc == 0 && (n = getline(&line, &cap, fp)) != -1) {
        lineno++;
        size_t len = (size_t)n;
        char *tab = memchr(line, '\t', len);
        if (tab) len = (size_t)(tab - line);
        while (len && (line[len - 1] == '\n' || line[len - 1] == '\r')) len--;
        if (len == 0) continue;
        gyro_sudoku p, sol;
        gyro_status st = gyro_sudoku_parse(line, len, &p);
        if (st != GYRO_OK) {
            fprintf(stderr, "gyro sudoku solve: %s:%lu: %s\n", name, lineno, gyro_error_message());
            rc = 65;
            break;
        }
        uint64_t nodes;
        int k = gyro_sudoku_solve(&p, 2, &sol, &nodes);
        if (k == 0) {
            fprintf(stderr, "gyro sudoku solve: %s:%lu: the puzzle has no solution (the reference "
                    "solver searched %" PRIu64 " nodes)\n", name, lineno, nodes);
            rc = 65;
            break;
        }
        if (k > 1)
            fprintf(stderr, "gyro sudoku solve: %s:%lu: the puzzle has more than one solution; "
                    "printed the first\n", name, lineno);
        char ps[GYRO_SUDOKU_CELLS + 1], ss[GYRO_SUDOKU_CELLS + 1];
        gyro_sudoku_format(&p, ps);
        gyro_sudoku_format(&sol, ss);
        if (printf("%s\t%s\t%d\t%" PRIu64 "\n", ps, ss, gyro_sudoku_clues(&p), nodes) < 0) rc = 1;
    }
    if (rc == 0 && ferror(fp)) {
        fprintf(stderr, "gyro sudoku solve: %s: read error\n", name);
        rc = 1;
    }
    free(line);
    return rc;
}

static int cmd_solve(int argc, char **argv)
{
    static const struct option opts[] = {{"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (c == 'h') {
            usage(stdout);
            return 0;
        }
        return gyro_cli_usage_error("sudoku solve", "unknown option or missing argument");
    }
    if (optind >= argc) return solve_file(stdin, "-");
    for (int i = optind; i < argc; i++) {
        int rc;
        if (!strcmp(argv[i], "-")) {
            rc = solve_file(stdin, "-");
        } else {
            FILE *fp = fopen(argv[i], "r");
            if (!fp) {
                fprintf(stderr, "gyro sudoku solve: cannot open %s\n", argv[i]);
                return 1;
            }
            rc = solve_file(fp, argv[i]);
            fclose(fp);
        }
        if (rc) return rc;
    }
    if (fflush(stdout) != 0) {
        fprintf(stderr, "gyro sudoku solve: write error\n");
        return 1;
    }
    return 0;
}

int gyro_cmd_sudoku(int argc, char **argv)
{
    if (argc < 2) return gyro_cli_usage_error("sudoku", "generate or solve?");
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "generate")) return cmd_generate(argc - 1, argv + 1);
    if (!strcmp(argv[1], "solve")) return cmd_solve(argc - 1, argv + 1);
    return gyro_cli_usage_error("sudoku", "unknown subcommand '%s' (generate, solve)", argv[1]);
}

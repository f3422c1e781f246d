/* cmd_sudoku.c — `gyro sudoku generate|solve`: seeded 9×9 puzzles with a unique solution and
 * their grade, and the reference solver on puzzles given as 81-character lines.
 *
 *   gyro sudoku generate [--seed S] [-n N] [--clues C] [--min-nodes A] [--max-nodes B]
 *                        [--min-rounds R] [--max-rounds R2] [--attempts K]
 *                        [--format text|stream] [-o OUT] [-q]
 *   gyro sudoku solve [FILE ...]
 *
 * A thin wrapper over models/rl/sudoku.h. Text lines are puzzle<TAB>solution<TAB>clues<TAB>
 * nodes<TAB>rounds (rounds of singles propagation, -1: singles do not solve it); `solve` reads
 * the first field of each line, so generate's text output solves back. The stream form is
 * gyro.v1.Example records: text = the puzzle, label = the solution, source =
 * "sudoku:seed=S,clues=C,nodes=K,rounds=R", line = the puzzle's 1-based index.
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "models/core/atomic_file.h"
#include "models/rl/sudoku.h"
#include "pipeline/cli/cli.h"
#include "pipeline/cli/opts.h"
#include "pipeline/stream.h"

typedef struct generate_args {
    gyro_sudoku_gen_config gc; /* the library's defaults (gyro_sudoku_gen_config_default) */
    uint64_t seed;
    long count, min_nodes, max_nodes;
    int min_rounds, max_rounds;
    int stream, quiet;
    const char *output;
} generate_args;

static const gyro_opt generate_opts[] = {
    GYRO_O_SEED("seed", 's', generate_args, seed, "1", "seed"),
    GYRO_O_LONG("count", 'n', generate_args, count, "N", "100", 0, 100000000L, "number of puzzles"),
    GYRO_O_INT("clues", 'c', generate_args, gc.clues, "C", NULL, 17, 81,
               "blank cells down to C clues at most (17-81; default 17: until no clue can go, typically "
               "22-27 left)"),
    GYRO_O_LONG("min-nodes", 0, generate_args, min_nodes, "A", "0", 0, 1000000000000L,
                "keep only puzzles whose grade is at least A search nodes"),
    GYRO_O_LONG("max-nodes", 0, generate_args, max_nodes, "B", NULL, 1, 1000000000000L,
                "... and at most B (default: no bound)"),
    GYRO_O_INT("min-rounds", 0, generate_args, min_rounds, "R", "0", 0, 81,
               "keep only puzzles that singles solve in at least R rounds of propagation (a round fills "
               "every naked and hidden single of the board at once; the depth of the deduction)"),
    GYRO_O_INT("max-rounds", 0, generate_args, max_rounds, "R", NULL, 1, 81,
               "... and in at most R rounds (default: no bound); either bound keeps only puzzles that "
               "singles solve"),
    GYRO_O_INT("attempts", 0, generate_args, gc.max_attempts, "K", NULL, 1, 100000000,
               "draws per puzzle before giving up on the band (default 1000; exit status 1)"),
    GYRO_O_CHOICE("format", 'f', generate_args, stream, "F", "text|stream", "text",
                  "text (puzzle, solution, clues, nodes, rounds separated by tabs; rounds -1: singles do "
                  "not solve it) or stream (Example records: text = puzzle, label = solution, source = "
                  "sudoku:seed=S,clues=C,nodes=K,rounds=R)"),
    GYRO_O_STR("output", 'o', generate_args, output, "FILE", "-", "output, written atomically ('-': stdout)"),
    GYRO_O_FLAG("quiet", 'q', generate_args, quiet, "no summary line"),
    GYRO_O_END,
};

const gyro_cmd_spec gyro_spec_sudoku_generate = {
    "sudoku generate", "[options]",
    "9x9 puzzles with a unique solution, graded by the number of clues, the search nodes the "
    "reference solver (bitmask backtracking, fewest candidates first) needs to prove the solution "
    "unique, and the rounds of singles propagation that solve it (-1 when singles do not). Puzzle i "
    "of a seed is the same whatever -n is.",
    "Exit status: 0 OK, 1 I/O error or no puzzle in the band within the attempts, 2 usage.",
    generate_opts,
    NULL,
};

static const gyro_opt solve_opts[] = {GYRO_O_END};

const gyro_cmd_spec gyro_spec_sudoku_solve = {
    "sudoku solve", "[FILE ...]",
    "Read puzzles, one per line (81 characters: digits 1-9, '.' or '0' for a blank; the first "
    "tab-separated field of a line; empty lines are skipped) from the FILEs or standard input, and "
    "print puzzle, solution, clues, nodes and rounds (of singles propagation; -1: singles do not "
    "solve it) for each. A puzzle with several solutions is solved "
    "with the first and reported on stderr.",
    "Exit status: 0 OK, 1 I/O error, 2 usage, 65 a malformed puzzle (wrong size, a character other "
    "than digits and blanks, a digit repeated in a row, column or box) or one without solution; "
    "the message names the file and line.",
    solve_opts,
    NULL,
};

static void usage(FILE *out)
{
    fprintf(out,
            "usage: gyro sudoku generate [options]\n"
            "       gyro sudoku solve [FILE ...]\n"
            "\n"
            "Generate graded 9x9 puzzles with a unique solution, or solve puzzles with the reference\n"
            "solver. 'gyro sudoku generate --help' and 'gyro sudoku solve --help' give the details.\n");
}

static int cmd_generate(int argc, char **argv)
{
    const char *cmd = "sudoku generate";
    generate_args o = {.gc = gyro_sudoku_gen_config_default()};
    int first, rc = gyro_opts_parse(&gyro_spec_sudoku_generate, argc, argv, &o, &first);
    if (rc != GYRO_OPTS_CONTINUE) return rc;
    if (first < argc) return gyro_cli_usage_error(cmd, "unexpected argument '%s'", argv[first]);
    gyro_sudoku_gen_config gc = o.gc;
    gc.min_nodes = (uint64_t)o.min_nodes;
    if (o.max_nodes) gc.max_nodes = (uint64_t)o.max_nodes;
    gc.min_rounds = o.min_rounds;
    gc.max_rounds = o.max_rounds;
    if (gc.max_rounds && gc.max_rounds < gc.min_rounds)
        return gyro_cli_usage_error(cmd, "--max-rounds %d is below --min-rounds %d", gc.max_rounds,
                                    gc.min_rounds);
    uint64_t seed = o.seed;
    long count = o.count;
    int stream = o.stream, quiet = o.quiet;
    const char *output = o.output, *format = stream ? "stream" : "text";
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
    double clue_sum = 0, node_sum = 0, round_sum = 0;
    long round_n = 0;
    for (long i = 0; i < count && st == GYRO_OK; i++) {
        gyro_sudoku p, sol;
        gyro_sudoku_grade g;
        st = gyro_sudoku_generate(seed, (uint64_t)i, &gc, &p, &sol, &g);
        if (st != GYRO_OK) break;
        clue_sum += g.clues;
        node_sum += (double)g.nodes;
        if (g.rounds >= 0) {
            round_sum += g.rounds;
            round_n++;
        }
        char ps[GYRO_SUDOKU_CELLS + 1], ss[GYRO_SUDOKU_CELLS + 1];
        gyro_sudoku_format(&p, ps);
        gyro_sudoku_format(&sol, ss);
        if (stream) {
            char source[128];
            snprintf(source, sizeof source, "sudoku:seed=%" PRIu64 ",clues=%d,nodes=%" PRIu64 ",rounds=%d",
                     seed, g.clues, g.nodes, g.rounds);
            Gyro__V1__Example e = GYRO__V1__EXAMPLE__INIT;
            e.text = ps;
            e.label = ss;
            e.source = source;
            e.line = (uint64_t)i + 1;
            st = gyro_stream_write(w, &e.base);
        } else if (fprintf(f.fp, "%s\t%s\t%d\t%" PRIu64 "\t%d\n", ps, ss, g.clues, g.nodes, g.rounds) < 0) {
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
                "search nodes, %ld solved by singles in %.2f rounds on average -> %s\n", count, seed,
                format, count ? clue_sum / count : 0.0, count ? node_sum / count : 0.0, round_n,
                round_n ? round_sum / round_n : 0.0, output);
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
        if (printf("%s\t%s\t%d\t%" PRIu64 "\t%d\n", ps, ss, gyro_sudoku_clues(&p), nodes,
                   gyro_sudoku_rounds(&p, NULL)) < 0)
            rc = 1;
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
    int first, rc = gyro_opts_parse(&gyro_spec_sudoku_solve, argc, argv, NULL, &first);
    if (rc != GYRO_OPTS_CONTINUE) return rc;
    if (first >= argc) return solve_file(stdin, "-");
    for (int i = first; i < argc; i++) {
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

/* sudoku.h — 9×9 Sudoku as plain data: a parser for 81-character lines, a reference solver that
 * counts solutions (bitmask backtracking), a difficulty grade, and a seeded generator of puzzles
 * with a unique solution (the task of the hierarchical reasoning model, seed
 * hrm-hierarchical-reasoning-math).
 *
 * A grid is 81 cells in row-major order (cell i is row i/9, column i%9, box 3·(i/27) + (i%9)/3),
 * 0 for a blank and 1–9 for a digit. As text a grid is one line of 81 characters, digits 1–9
 * and '.' or '0' for a blank (the common format of Sudoku collections).
 *
 * The reference solver fills cells in the order of "minimum remaining values": at every node it
 * takes the blank cell with the fewest candidates (the first in row-major order on ties) and
 * tries its candidates in increasing order; a node is one placement of a digit. The grade of a
 * puzzle is (clues, nodes of the search that counts its solutions up to 2): a puzzle that naked
 * singles solve needs exactly one node per blank, and every wrong guess adds its subtree. The
 * grade also counts the rounds of singles propagation a puzzle needs (gyro_sudoku_rounds), the
 * depth of its deduction.
 *
 * The generator, for a seed and an index (puzzle `index` of a seed does not depend on how many
 * are made): a full grid by the same search with the candidates of each node shuffled, then the
 * cells in a random order, each blanked if the puzzle keeps a unique solution, until `clues`
 * clues remain or no cell can go (a minimal puzzle, typically 22–27 clues); a puzzle whose grade
 * falls outside [min_nodes, max_nodes] (or, when a rounds band is set, outside [min_rounds,
 * max_rounds] or not solvable by singles) is dropped and the next attempt drawn.
 * Every function is reentrant; none prints.
 */
#ifndef GYRO_RL_SUDOKU_H
#define GYRO_RL_SUDOKU_H

#include <stddef.h>
#include <stdint.h>

#include "models/core/rng.h"
#include "models/core/status.h"

#define GYRO_SUDOKU_CELLS 81

typedef struct gyro_sudoku {
    uint8_t cell[GYRO_SUDOKU_CELLS]; /* row-major; 0 blank, 1–9 digit */
} gyro_sudoku;

typedef struct gyro_sudoku_grade {
    int clues;      /* given digits */
    uint64_t nodes; /* placements of the reference search counting solutions up to 2 */
    int rounds;     /* rounds of singles propagation that solve it (gyro_sudoku_rounds); −1:
                       singles alone do not */
} gyro_sudoku_grade;

/* Parse one puzzle from text[0..len) (trailing spaces, tabs, CR and LF are ignored). Errors,
 * GYRO_ERR_DATA with a message naming the first problem: a character other than 1–9, '.' and
 * '0' (its position), a size other than 81 cells, a digit repeated in a row, column or box (the
 * two cells, as r<row>c<column>, 1-based). `out` is unspecified on error. */
gyro_status gyro_sudoku_parse(const char *text, size_t len, gyro_sudoku *out);

/* Write the grid as 81 characters ('.' for blanks) and a NUL into out (82 bytes). */
void gyro_sudoku_format(const gyro_sudoku *s, char out[GYRO_SUDOKU_CELLS + 1]);

/* Number of given digits. */
int gyro_sudoku_clues(const gyro_sudoku *s);

/* 1 if no digit repeats in a row, column or box (blanks allowed) and every cell is 0–9. */
int gyro_sudoku_consistent(const gyro_sudoku *s);

/* Count the solutions of s, stopping at `limit` (≥ 1). The first solution found (the least in
 * the search order) goes to `first` when it is not NULL and a solution exists; the number of
 * nodes to `nodes` when not NULL. An inconsistent grid has 0 solutions. */
int gyro_sudoku_solve(const gyro_sudoku *s, int limit, gyro_sudoku *first, uint64_t *nodes);

/* Rounds of singles propagation: a round looks at the board as it is and fills, all at once,
 * every blank cell that is a naked single (one candidate left) or a hidden single (the only
 * cell of its row, column or box where some digit can go); rounds repeat until the board is
 * full. Returns the number of rounds (0 for a full grid), or −1 when a round finds no single
 * (the puzzle needs more than singles: search or other techniques) or the grid is
 * inconsistent. The rounds measure the depth of the deduction: a cell filled in round r
 * depends on cells filled in round r − 1, so a model that fills cells by a fixed number of
 * local steps needs a number of steps that grows with the rounds. With `solved` not NULL the
 * board reached (full or stalled) is written there. */
int gyro_sudoku_rounds(const gyro_sudoku *s, gyro_sudoku *solved);

/* The grade of a puzzle (clues, the nodes of gyro_sudoku_solve with limit 2 and the rounds of
 * gyro_sudoku_rounds). */
gyro_sudoku_grade gyro_sudoku_grade_of(const gyro_sudoku *s);

typedef struct gyro_sudoku_gen_config {
    int clues;          /* stop blanking at this many clues (17–81; 17: as few as possible) */
    uint64_t min_nodes; /* difficulty band of the grade's nodes: [min_nodes, max_nodes] */
    uint64_t max_nodes; /*   (max_nodes 0: no upper bound) */
    int min_rounds;     /* band of the grade's rounds: [min_rounds, max_rounds]; with either */
    int max_rounds;     /*   bound set (min_rounds > 0 or max_rounds > 0) only puzzles that
                         *   singles solve (rounds >= 0) are kept; max_rounds 0: no upper bound */
    int max_attempts;   /* puzzles drawn before giving up on the band (≥ 1) */
} gyro_sudoku_gen_config;

/* clues 17, bands [0, unbounded) (nodes and rounds: no filter), 1000 attempts. */
gyro_sudoku_gen_config gyro_sudoku_gen_config_default(void);

/* Puzzle `index` of `seed`: a puzzle with a unique solution, its solution and its grade (any of
 * the three outputs may be NULL). Errors: GYRO_ERR_USAGE (clues outside 17–81, max_nodes below
 * min_nodes, max_rounds below min_rounds or a negative bound, max_attempts < 1), GYRO_ERR_NOT_FOUND (no puzzle in the band within max_attempts
 * draws; the message says which band and how many). */
gyro_status gyro_sudoku_generate(uint64_t seed, uint64_t index, const gyro_sudoku_gen_config *cfg,
                                 gyro_sudoku *puzzle, gyro_sudoku *solution, gyro_sudoku_grade *grade);

/* A symmetry of Sudoku: a grid keeps its rules (and a puzzle its unique solution) when its digits
 * are relabelled, its three bands (row triples) are permuted, the rows inside each band are
 * permuted, likewise the stacks (column triples) and the columns inside each stack, and the grid
 * is transposed. Cell (r, c) of the image is cell (row[r], col[c]) of the source (the transpose:
 * (col[c], row[r])), digit d becomes digit[d]. 9!·(3!)^8·2 ≈ 1.2·10^12 symmetries (the HRM
 * paper's data augmentation of Sudoku). */
typedef struct gyro_sudoku_symmetry {
    uint8_t digit[10]; /* digit[0] = 0; digit[1..9] a permutation of 1..9 */
    uint8_t row[9];    /* source row of each row: band and in-band permutations */
    uint8_t col[9];    /* source column of each column */
    int transpose;
} gyro_sudoku_symmetry;

/* A symmetry drawn uniformly from rng. */
void gyro_sudoku_symmetry_draw(gyro_rng *rng, gyro_sudoku_symmetry *sym);

/* out = the image of in under sym (out must not alias in). */
void gyro_sudoku_symmetry_apply(const gyro_sudoku_symmetry *sym, const gyro_sudoku *in,
                                gyro_sudoku *out);

#endif

/* sudoku.c — parser, reference solver, grade and generator of 9×9 Sudoku (see sudoku.h). */
#include "models/rl/sudoku.h"

#include <stdio.h>
#include <string.h>

#include "models/core/rng.h"

#define ALL 0x3FEu /* bits 1..9: digits */

static int box_of(int i)
{
    return 3 * (i / 27) + (i % 9) / 3;
}

/* The search state: used digits per row, column and box as bitmasks (bit d for digit d). */
typedef struct search {
    uint8_t g[GYRO_SUDOKU_CELLS];
    uint16_t row[9], col[9], box[9];
    int limit, found;
    uint64_t nodes;
    uint8_t first[GYRO_SUDOKU_CELLS];
    gyro_rng *rng; /* non-NULL: candidates in random order (the generator's full grids) */
} search;

static int popcount9(unsigned m)
{
    int n = 0;
    for (; m; m &= m - 1) n++;
    return n;
}

static void place(search *s, int i, int d)
{
    unsigned b = 1u << d;
    s->g[i] = (uint8_t)d;
    s->row[i / 9] |= (uint16_t)b;
    s->col[i % 9] |= (uint16_t)b;
    s->box[box_of(i)] |= (uint16_t)b;
}

static void unplace(search *s, int i, int d)
{
    unsigned b = ~(1u << d);
    s->g[i] = 0;
    s->row[i / 9] &= (uint16_t)b;
    s->col[i % 9] &= (uint16_t)b;
    s->box[box_of(i)] &= (uint16_t)b;
}

/* Depth-first search with minimum remaining values; stops once `limit` solutions are found. */
static void dfs(search *s)
{
    int best = -1, best_n = 10;
    unsigned best_m = 0;
    for (int i = 0; i < GYRO_SUDOKU_CELLS; i++) {
        if (s->g[i]) continue;
        unsigned m = ALL & ~(unsigned)(s->row[i / 9] | s->col[i % 9] | s->box[box_of(i)]);
        int n = popcount9(m);
        if (n < best_n) {
            best = i;
            best_n = n;
            best_m = m;
            if (n <= 1) break;
        }
    }
    if (best < 0) { /* no blank left: a solution */
        if (s->found++ == 0) memcpy(s->first, s->g, GYRO_SUDOKU_CELLS);
        return;
    }
    if (best_n == 0) return;
    int cand[9], nc = 0;
    for (int d = 1; d <= 9; d++)
        if (best_m & (1u << d)) cand[nc++] = d;
    if (s->rng)
        for (int k = nc - 1; k > 0; k--) {
            int j = (int)gyro_rng_below(s->rng, (uint32_t)k + 1);
            int t = cand[k];
            cand[k] = cand[j];
            cand[j] = t;
        }
    for (int k = 0; k < nc && s->found < s->limit; k++) {
        s->nodes++;
        place(s, best, cand[k]);
        dfs(s);
        unplace(s, best, cand[k]);
    }
}

/* Load a grid into the search state; 0 if it is inconsistent. */
static int load(search *s, const gyro_sudoku *p)
{
    memset(s, 0, sizeof *s);
    for (int i = 0; i < GYRO_SUDOKU_CELLS; i++) {
        int d = p->cell[i];
        if (!d) continue;
        if (d > 9) return 0;
        unsigned b = 1u << d;
        if ((s->row[i / 9] | s->col[i % 9] | s->box[box_of(i)]) & b) return 0;
        place(s, i, d);
    }
    return 1;
}

int gyro_sudoku_consistent(const gyro_sudoku *p)
{
    search s;
    return load(&s, p);
}

int gyro_sudoku_clues(const gyro_sudoku *p)
{
    int n = 0;
    for (int i = 0; i < GYRO_SUDOKU_CELLS; i++) n += p->cell[i] != 0;
    return n;
}

int gyro_sudoku_solve(const gyro_sudoku *p, int limit, gyro_sudoku *first, uint64_t *nodes)
{
    search s;
    if (nodes) *nodes = 0;
    if (!load(&s, p)) return 0;
    s.limit = limit < 1 ? 1 : limit;
    dfs(&s);
    if (first && s.found) memcpy(first->cell, s.first, GYRO_SUDOKU_CELLS);
    if (nodes) *nodes = s.nodes;
    return s.found;
}

int gyro_sudoku_rounds(const gyro_sudoku *p, gyro_sudoku *solved)
{
    search s;
    int ok = load(&s, p), rounds = 0;
    while (ok) {
        /* candidates of every blank on the board as the round starts */
        unsigned cand[GYRO_SUDOKU_CELLS];
        int blanks = 0;
        for (int i = 0; i < GYRO_SUDOKU_CELLS; i++) {
            cand[i] = 0;
            if (s.g[i]) continue;
            blanks++;
            cand[i] = ALL & ~(unsigned)(s.row[i / 9] | s.col[i % 9] | s.box[box_of(i)]);
        }
        if (!blanks) break;
        /* the singles of this board: fill[i] = the digit cell i must take, 0 if none */
        uint8_t fill[GYRO_SUDOKU_CELLS] = {0};
        int found = 0;
        for (int i = 0; i < GYRO_SUDOKU_CELLS; i++) {
            if (s.g[i]) continue;
            if (cand[i] == 0) {
                ok = 0; /* a blank without candidate: inconsistent */
                break;
            }
            if (popcount9(cand[i]) == 1) /* naked single */
                for (int d = 1; d <= 9; d++)
                    if (cand[i] == 1u << d) fill[i] = (uint8_t)d;
        }
        if (!ok) break;
        /* hidden singles: unit u of kind k (row, column, box), digit d with one place */
        for (int k = 0; k < 3; k++)
            for (int u = 0; u < 9; u++)
                for (int d = 1; d <= 9; d++) {
                    int where = -1, count = 0;
                    for (int j = 0; j < 9; j++) {
                        const int i = k == 0 ? 9 * u + j
                                    : k == 1 ? 9 * j + u
                                             : 27 * (u / 3) + 3 * (u % 3) + 9 * (j / 3) + j % 3;
                        if (!s.g[i] && (cand[i] & (1u << d))) {
                            where = i;
                            count++;
                        }
                    }
                    if (count == 1) {
                        if (fill[where] && fill[where] != d) {
                            ok = 0; /* a cell forced to two digits: inconsistent */
                            break;
                        }
                        fill[where] = (uint8_t)d;
                    }
                }
        if (!ok) break;
        for (int i = 0; i < GYRO_SUDOKU_CELLS; i++) {
            if (!fill[i]) continue;
            const unsigned b = 1u << fill[i];
            if ((s.row[i / 9] | s.col[i % 9] | s.box[box_of(i)]) & b) {
                ok = 0; /* two singles of the round clash: inconsistent */
                break;
            }
            place(&s, i, fill[i]);
            found++;
        }
        if (!ok || !found) {
            ok = 0;
            break;
        }
        rounds++;
    }
    if (solved) memcpy(solved->cell, s.g, GYRO_SUDOKU_CELLS);
    return ok ? rounds : -1;
}

gyro_sudoku_grade gyro_sudoku_grade_of(const gyro_sudoku *p)
{
    gyro_sudoku_grade g;
    g.clues = gyro_sudoku_clues(p);
    gyro_sudoku_solve(p, 2, NULL, &g.nodes);
    g.rounds = gyro_sudoku_rounds(p, NULL);
    return g;
}

void gyro_sudoku_format(const gyro_sudoku *p, char out[GYRO_SUDOKU_CELLS + 1])
{
    for (int i = 0; i < GYRO_SUDOKU_CELLS; i++)
        out[i] = p->cell[i] >= 1 && p->cell[i] <= 9 ? (char)('0' + p->cell[i]) : '.';
    out[GYRO_SUDOKU_CELLS] = 0;
}

gyro_status gyro_sudoku_parse(const char *text, size_t len, gyro_sudoku *out)
{
    while (len && (text[len - 1] == '\n' || text[len - 1] == '\r' || text[len - 1] == ' ' ||
                   text[len - 1] == '\t'))
        len--;
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)text[i];
        if ((ch >= '0' && ch <= '9') || ch == '.') continue;
        if (ch >= 0x20 && ch < 0x7f)
            return gyro_error_set(GYRO_ERR_DATA,
                                  "character %zu is '%c'; a puzzle has only digits 1-9 and blanks "
                                  "('.' or '0')", i + 1, ch);
        return gyro_error_set(GYRO_ERR_DATA,
                              "character %zu is the byte 0x%02x; a puzzle has only digits 1-9 and "
                              "blanks ('.' or '0')", i + 1, ch);
    }
    if (len != GYRO_SUDOKU_CELLS)
        return gyro_error_set(GYRO_ERR_DATA, "a puzzle is 81 cells (9 rows of 9), got %zu", len);
    for (int i = 0; i < GYRO_SUDOKU_CELLS; i++) out->cell[i] = text[i] == '.' ? 0 : (uint8_t)(text[i] - '0');
    /* repeated digits: the first conflict in row-major order of the later cell */
    for (int i = 0; i < GYRO_SUDOKU_CELLS; i++) {
        int d = out->cell[i];
        if (!d) continue;
        for (int j = 0; j < i; j++) {
            if (out->cell[j] != d) continue;
            const char *unit = NULL;
            int k = 0;
            if (j / 9 == i / 9) unit = "row", k = i / 9;
            else if (j % 9 == i % 9) unit = "column", k = i % 9;
            else if (box_of(j) == box_of(i)) unit = "box", k = box_of(i);
            if (unit)
                return gyro_error_set(GYRO_ERR_DATA, "digit %d twice in %s %d (r%dc%d and r%dc%d)", d,
                                      unit, k + 1, j / 9 + 1, j % 9 + 1, i / 9 + 1, i % 9 + 1);
        }
    }
    return GYRO_OK;
}

gyro_sudoku_gen_config gyro_sudoku_gen_config_default(void)
{
    gyro_sudoku_gen_config c = {.clues = 17, .min_nodes = 0, .max_nodes = 0, .min_rounds = 0,
                                .max_rounds = 0, .max_attempts = 1000};
    return c;
}

/* splitmix64 finaliser: decorrelates (seed, index) pairs. */
static uint64_t mix(uint64_t z)
{
    z += UINT64_C(0x9E3779B97F4A7C15);
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

gyro_status gyro_sudoku_generate(uint64_t seed, uint64_t index, const gyro_sudoku_gen_config *cfg,
                                 gyro_sudoku *puzzle, gyro_sudoku *solution, gyro_sudoku_grade *grade)
{
    if (cfg->clues < 17 || cfg->clues > 81)
        return gyro_error_set(GYRO_ERR_USAGE, "sudoku: clues must be in 17..81, got %d", cfg->clues);
    if (cfg->max_nodes && cfg->max_nodes < cfg->min_nodes)
        return gyro_error_set(GYRO_ERR_USAGE, "sudoku: the node band [%llu, %llu] is empty",
                              (unsigned long long)cfg->min_nodes, (unsigned long long)cfg->max_nodes);
    if (cfg->min_rounds < 0 || cfg->max_rounds < 0 ||
        (cfg->max_rounds && cfg->max_rounds < cfg->min_rounds))
        return gyro_error_set(GYRO_ERR_USAGE, "sudoku: the rounds band [%d, %d] is empty",
                              cfg->min_rounds, cfg->max_rounds);
    if (cfg->max_attempts < 1) return gyro_error_set(GYRO_ERR_USAGE, "sudoku: attempts must be >= 1");
    const int by_rounds = cfg->min_rounds > 0 || cfg->max_rounds > 0;
    gyro_rng rng;
    gyro_rng_seed(&rng, mix(seed) ^ mix(index ^ UINT64_C(0x5d0c0)));
    for (int attempt = 0; attempt < cfg->max_attempts; attempt++) {
        /* a random full grid */
        search s;
        memset(&s, 0, sizeof s);
        s.limit = 1;
        s.rng = &rng;
        dfs(&s);
        gyro_sudoku full, p;
        memcpy(full.cell, s.first, GYRO_SUDOKU_CELLS);
        p = full;
        /* blank cells in a random order while the solution stays unique */
        int order[GYRO_SUDOKU_CELLS];
        for (int i = 0; i < GYRO_SUDOKU_CELLS; i++) order[i] = i;
        for (int k = GYRO_SUDOKU_CELLS - 1; k > 0; k--) {
            int j = (int)gyro_rng_below(&rng, (uint32_t)k + 1);
            int t = order[k];
            order[k] = order[j];
            order[j] = t;
        }
        int clues = GYRO_SUDOKU_CELLS;
        for (int k = 0; k < GYRO_SUDOKU_CELLS && clues > cfg->clues; k++) {
            int i = order[k];
            uint8_t d = p.cell[i];
            p.cell[i] = 0;
            if (gyro_sudoku_solve(&p, 2, NULL, NULL) == 1) clues--;
            else p.cell[i] = d;
        }
        gyro_sudoku_grade g = gyro_sudoku_grade_of(&p);
        if (g.nodes < cfg->min_nodes || (cfg->max_nodes && g.nodes > cfg->max_nodes)) continue;
        if (by_rounds && (g.rounds < 0 || g.rounds < cfg->min_rounds ||
                          (cfg->max_rounds && g.rounds > cfg->max_rounds)))
            continue;
        if (puzzle) *puzzle = p;
        if (solution) *solution = full;
        if (grade) *grade = g;
        return GYRO_OK;
    }
    char hi[32], rb[64] = "";
    if (cfg->max_nodes) snprintf(hi, sizeof hi, "%llu", (unsigned long long)cfg->max_nodes);
    else snprintf(hi, sizeof hi, "inf");
    if (by_rounds && cfg->max_rounds)
        snprintf(rb, sizeof rb, " and %d..%d rounds of singles", cfg->min_rounds, cfg->max_rounds);
    else if (by_rounds)
        snprintf(rb, sizeof rb, " and %d.. rounds of singles", cfg->min_rounds);
    return gyro_error_set(GYRO_ERR_NOT_FOUND,
                          "sudoku: no puzzle blanked down to %d clues with %llu..%s search nodes%s in %d draws "
                          "(seed %llu, puzzle %llu); widen the band or change --clues",
                          cfg->clues, (unsigned long long)cfg->min_nodes, hi, rb, cfg->max_attempts,
                          (unsigned long long)seed, (unsigned long long)index);
}

/* ---- symmetries ------------------------------------------------------------------------------ */

/* Fisher-Yates over v[0..n-1]. */
static void shuffle_u8(uint8_t *v, int n, gyro_rng *rng)
{
    for (int i = n - 1; i > 0; i--) {
        int j = (int)gyro_rng_below(rng, (uint32_t)(i + 1));
        uint8_t t = v[i];
        v[i] = v[j];
        v[j] = t;
    }
}

/* A permutation of 0..8 that keeps the triples {0,1,2}, {3,4,5}, {6,7,8} as units: the triples
 * permuted among themselves and the members of each triple permuted. */
static void band_permutation(uint8_t out[9], gyro_rng *rng)
{
    uint8_t band[3] = {0, 1, 2};
    shuffle_u8(band, 3, rng);
    for (int b = 0; b < 3; b++) {
        uint8_t in[3] = {0, 1, 2};
        shuffle_u8(in, 3, rng);
        for (int k = 0; k < 3; k++)
            out[3 * b + k] = (uint8_t)(3 * band[b] + in[k]);
    }
}

void gyro_sudoku_symmetry_draw(gyro_rng *rng, gyro_sudoku_symmetry *sym)
{
    for (int d = 0; d < 10; d++)
        sym->digit[d] = (uint8_t)d;
    shuffle_u8(sym->digit + 1, 9, rng);
    band_permutation(sym->row, rng);
    band_permutation(sym->col, rng);
    sym->transpose = (int)gyro_rng_below(rng, 2);
}

void gyro_sudoku_symmetry_apply(const gyro_sudoku_symmetry *sym, const gyro_sudoku *in,
                                gyro_sudoku *out)
{
    for (int r = 0; r < 9; r++)
        for (int c = 0; c < 9; c++) {
            const int sr = sym->row[r], sc = sym->col[c];
            const int src = sym->transpose ? 9 * sc + sr : 9 * sr + sc;
            out->cell[9 * r + c] = sym->digit[in->cell[src] <= 9 ? in->cell[src] : 0];
        }
}

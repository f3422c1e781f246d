/* check_sudoku.c — Check suite for models/rl/sudoku: the parser and its errors, the reference
 * solver (a known puzzle, counting to 2, an unsolvable grid), the generator (unique solutions,
 * minimal puzzles, reproducible by seed and index, the difficulty band) and the grade (more
 * clues, fewer search nodes), the symmetries (the image of a puzzle keeps a unique solution, the
 * image of its solution; the identity; transposition and relabelling by hand), the rounds of
 * singles propagation (a hidden single by hand, a stall, a hard puzzle, a plain re-count on
 * generated puzzles) and the band of rounds. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "models/core/status.h"
#include "models/rl/sudoku.h"

/* The puzzle of Wikipedia's "Sudoku" article and its solution. */
static const char *WIKI = "53..7....6..195....98....6.8...6...34..8.3..17...2...6.6....28....419..5....8..79";
static const char *WIKI_SOL = "534678912672195348198342567859761423426853791713924856961537284287419635345286179";

static gyro_sudoku parse_ok(const char *t)
{
    gyro_sudoku s;
    gyro_status st = gyro_sudoku_parse(t, strlen(t), &s);
    ck_assert_msg(st == GYRO_OK, "parse failed: %s", gyro_error_message());
    return s;
}

static void parse_fails(const char *t, const char *needle)
{
    gyro_sudoku s;
    ck_assert_int_eq(gyro_sudoku_parse(t, strlen(t), &s), GYRO_ERR_DATA);
    ck_assert_msg(strstr(gyro_error_message(), needle), "message '%s' lacks '%s'", gyro_error_message(), needle);
}

START_TEST(test_parse)
{
    gyro_sudoku s = parse_ok(WIKI);
    ck_assert_int_eq(s.cell[0], 5);
    ck_assert_int_eq(s.cell[2], 0);
    ck_assert_int_eq(s.cell[80], 9);
    ck_assert_int_eq(gyro_sudoku_clues(&s), 30);
    char out[82];
    gyro_sudoku_format(&s, out);
    ck_assert_str_eq(out, WIKI);
    /* '0' is a blank too, and a trailing CRLF is ignored */
    char z[90];
    strcpy(z, WIKI);
    for (char *q = z; *q; q++)
        if (*q == '.') *q = '0';
    strcat(z, "\r\n");
    gyro_sudoku s2 = parse_ok(z);
    ck_assert_mem_eq(s.cell, s2.cell, 81);
    ck_assert(gyro_sudoku_consistent(&s));
}
END_TEST

START_TEST(test_parse_errors)
{
    char t[100];
    /* size */
    parse_fails("", "81 cells");
    memcpy(t, WIKI, 80);
    t[80] = 0;
    parse_fails(t, "got 80");
    strcpy(t, WIKI);
    strcat(t, "1");
    parse_fails(t, "got 82");
    /* characters */
    strcpy(t, WIKI);
    t[10] = 'x';
    parse_fails(t, "character 11 is 'x'");
    strcpy(t, WIKI);
    t[3] = (char)0xe4;
    parse_fails(t, "byte 0xe4");
    strcpy(t, WIKI);
    t[40] = ' ';
    parse_fails(t, "character 41 is ' '");
    /* repeated digits: 5 of r1c1 again in its row, 3 of r1c2 again in its column and in its box */
    strcpy(t, WIKI);
    t[2] = '5';
    parse_fails(t, "digit 5 twice in row 1 (r1c1 and r1c3)");
    strcpy(t, WIKI);
    t[8 * 9 + 1] = '3';
    parse_fails(t, "digit 3 twice in column 2 (r1c2 and r9c2)");
    strcpy(t, WIKI);
    t[1 * 9 + 2] = '3'; /* r2c3 = 3: same box as r1c2 = 3, other row and column */
    parse_fails(t, "digit 3 twice in box 1 (r1c2 and r2c3)");
}
END_TEST

START_TEST(test_solve_known)
{
    gyro_sudoku p = parse_ok(WIKI), sol;
    uint64_t nodes = 0;
    ck_assert_int_eq(gyro_sudoku_solve(&p, 2, &sol, &nodes), 1);
    char out[82];
    gyro_sudoku_format(&sol, out);
    ck_assert_str_eq(out, WIKI_SOL);
    ck_assert_uint_ge(nodes, 81 - 30); /* at least one placement per blank */
    /* the solution solves to itself with no node */
    ck_assert_int_eq(gyro_sudoku_solve(&sol, 2, NULL, &nodes), 1);
    ck_assert_uint_eq(nodes, 0);
    /* the empty grid: counting stops at the limit */
    gyro_sudoku empty;
    memset(&empty, 0, sizeof empty);
    ck_assert_int_eq(gyro_sudoku_solve(&empty, 2, NULL, NULL), 2);
    ck_assert_int_eq(gyro_sudoku_solve(&empty, 5, NULL, NULL), 5);
    /* drop clues from a puzzle until it has several solutions */
    gyro_sudoku q = p;
    q.cell[0] = q.cell[1] = q.cell[4] = q.cell[9] = q.cell[12] = q.cell[13] = 0;
    ck_assert_int_eq(gyro_sudoku_solve(&q, 2, NULL, NULL), 2);
}
END_TEST

START_TEST(test_unsolvable)
{
    /* consistent (no repeated digit) but r1c9 has no candidate: 1–8 in row 1, 9 in column 9 */
    char t[82];
    memset(t, '.', 81);
    t[81] = 0;
    for (int k = 0; k < 8; k++) t[k] = (char)('1' + k);
    t[5 * 9 + 8] = '9'; /* r6c9 */
    gyro_sudoku p = parse_ok(t);
    ck_assert(gyro_sudoku_consistent(&p));
    uint64_t nodes;
    ck_assert_int_eq(gyro_sudoku_solve(&p, 2, NULL, &nodes), 0);
    /* an inconsistent grid built directly has no solution */
    gyro_sudoku bad;
    memset(&bad, 0, sizeof bad);
    bad.cell[0] = bad.cell[1] = 4;
    ck_assert(!gyro_sudoku_consistent(&bad));
    ck_assert_int_eq(gyro_sudoku_solve(&bad, 2, NULL, NULL), 0);
    bad.cell[1] = 12;
    ck_assert(!gyro_sudoku_consistent(&bad));
}
END_TEST

START_TEST(test_generate_unique_and_minimal)
{
    gyro_sudoku_gen_config gc = gyro_sudoku_gen_config_default();
    for (uint64_t i = 0; i < 8; i++) {
        gyro_sudoku p, sol, s2;
        gyro_sudoku_grade g;
        ck_assert_int_eq(gyro_sudoku_generate(3, i, &gc, &p, &sol, &g), GYRO_OK);
        ck_assert(gyro_sudoku_consistent(&p));
        ck_assert_int_eq(gyro_sudoku_solve(&p, 2, &s2, NULL), 1);
        ck_assert_mem_eq(s2.cell, sol.cell, 81);
        for (int k = 0; k < 81; k++) {
            ck_assert(sol.cell[k] >= 1 && sol.cell[k] <= 9);
            ck_assert(p.cell[k] == 0 || p.cell[k] == sol.cell[k]);
        }
        ck_assert_int_eq(g.clues, gyro_sudoku_clues(&p));
        ck_assert(g.clues >= 17 && g.clues <= 35);
        ck_assert_uint_ge(g.nodes, (uint64_t)(81 - g.clues));
        /* minimal: every remaining clue is needed */
        if (i < 2)
            for (int k = 0; k < 81; k++) {
                if (!p.cell[k]) continue;
                gyro_sudoku q = p;
                q.cell[k] = 0;
                ck_assert_int_eq(gyro_sudoku_solve(&q, 2, NULL, NULL), 2);
            }
    }
}
END_TEST

START_TEST(test_generate_reproducible)
{
    gyro_sudoku_gen_config gc = gyro_sudoku_gen_config_default();
    gyro_sudoku a, b, c;
    ck_assert_int_eq(gyro_sudoku_generate(7, 4, &gc, &a, NULL, NULL), GYRO_OK);
    ck_assert_int_eq(gyro_sudoku_generate(7, 4, &gc, &b, NULL, NULL), GYRO_OK);
    ck_assert_mem_eq(a.cell, b.cell, 81);
    ck_assert_int_eq(gyro_sudoku_generate(8, 4, &gc, &c, NULL, NULL), GYRO_OK);
    ck_assert(memcmp(a.cell, c.cell, 81) != 0);
    ck_assert_int_eq(gyro_sudoku_generate(7, 5, &gc, &c, NULL, NULL), GYRO_OK);
    ck_assert(memcmp(a.cell, c.cell, 81) != 0);
}
END_TEST

/* More clues, fewer nodes: mean grade over 16 puzzles at 40 clues against minimal ones. */
START_TEST(test_grade_monotone)
{
    gyro_sudoku_gen_config gc = gyro_sudoku_gen_config_default();
    double mean[3] = {0, 0, 0};
    const int clues[3] = {17, 30, 45};
    for (int c = 0; c < 3; c++) {
        gc.clues = clues[c];
        for (uint64_t i = 0; i < 16; i++) {
            gyro_sudoku_grade g;
            ck_assert_int_eq(gyro_sudoku_generate(11, i, &gc, NULL, NULL, &g), GYRO_OK);
            if (c > 0) ck_assert_int_eq(g.clues, clues[c]);
            mean[c] += (double)g.nodes / 16;
        }
    }
    ck_assert_msg(mean[0] > mean[1] && mean[1] > mean[2], "mean nodes %g %g %g", mean[0], mean[1], mean[2]);
    ck_assert_double_eq_tol(mean[2], 81 - 45, 20); /* 45 clues: close to one node per blank */
}
END_TEST

START_TEST(test_band_and_errors)
{
    gyro_sudoku_gen_config gc = gyro_sudoku_gen_config_default();
    gc.min_nodes = 300;
    for (uint64_t i = 0; i < 4; i++) {
        gyro_sudoku_grade g;
        ck_assert_int_eq(gyro_sudoku_generate(2, i, &gc, NULL, NULL, &g), GYRO_OK);
        ck_assert_uint_ge(g.nodes, 300);
    }
    gc.min_nodes = 0;
    gc.max_nodes = 10; /* fewer nodes than blanks: impossible */
    gc.max_attempts = 3;
    ck_assert_int_eq(gyro_sudoku_generate(2, 0, &gc, NULL, NULL, NULL), GYRO_ERR_NOT_FOUND);
    ck_assert_ptr_nonnull(strstr(gyro_error_message(), "3 draws"));
    gc = gyro_sudoku_gen_config_default();
    gc.clues = 16;
    ck_assert_int_eq(gyro_sudoku_generate(1, 0, &gc, NULL, NULL, NULL), GYRO_ERR_USAGE);
    gc = gyro_sudoku_gen_config_default();
    gc.min_nodes = 50;
    gc.max_nodes = 40;
    ck_assert_int_eq(gyro_sudoku_generate(1, 0, &gc, NULL, NULL, NULL), GYRO_ERR_USAGE);
    gc = gyro_sudoku_gen_config_default();
    gc.max_attempts = 0;
    ck_assert_int_eq(gyro_sudoku_generate(1, 0, &gc, NULL, NULL, NULL), GYRO_ERR_USAGE);
}
END_TEST

START_TEST(test_symmetry)
{
    gyro_sudoku pz = parse_ok(WIKI), sol = parse_ok(WIKI_SOL);
    gyro_rng rng;
    gyro_rng_seed(&rng, 7);
    int moved = 0;
    for (int k = 0; k < 50; k++) {
        gyro_sudoku_symmetry sym;
        gyro_sudoku_symmetry_draw(&rng, &sym);
        gyro_sudoku p2, s2, found;
        gyro_sudoku_symmetry_apply(&sym, &pz, &p2);
        gyro_sudoku_symmetry_apply(&sym, &sol, &s2);
        ck_assert_int_eq(gyro_sudoku_clues(&p2), 30);
        ck_assert(gyro_sudoku_consistent(&s2));
        ck_assert_int_eq(gyro_sudoku_clues(&s2), 81);
        ck_assert_int_eq(gyro_sudoku_solve(&p2, 2, &found, NULL), 1); /* still unique */
        ck_assert_mem_eq(found.cell, s2.cell, 81);
        moved += memcmp(p2.cell, pz.cell, 81) != 0;
    }
    ck_assert_int_ge(moved, 49);
    /* the identity, then transposition with 1 <-> 2 swapped, checked by hand */
    gyro_sudoku_symmetry id;
    for (int i = 0; i < 10; i++) id.digit[i] = (uint8_t)i;
    for (int i = 0; i < 9; i++) id.row[i] = id.col[i] = (uint8_t)i;
    id.transpose = 0;
    gyro_sudoku out;
    gyro_sudoku_symmetry_apply(&id, &sol, &out);
    ck_assert_mem_eq(out.cell, sol.cell, 81);
    id.transpose = 1;
    id.digit[1] = 2;
    id.digit[2] = 1;
    gyro_sudoku_symmetry_apply(&id, &sol, &out);
    for (int r = 0; r < 9; r++)
        for (int c = 0; c < 9; c++) {
            int d = sol.cell[9 * c + r];
            ck_assert_int_eq(out.cell[9 * r + c], d == 1 ? 2 : d == 2 ? 1 : d);
        }
}
END_TEST

/* Rounds of singles, counted the plain way: candidates by scanning the 20 peers of a cell, hidden
 * singles by scanning each unit; -1 on a stall. Independent of the bitmask code under test. */
static int rounds_plain(const gyro_sudoku *in)
{
    gyro_sudoku b = *in;
    for (int rounds = 0;; rounds++) {
        int cand[81][10], blanks = 0;
        for (int i = 0; i < 81; i++) {
            for (int d = 0; d < 10; d++) cand[i][d] = 0;
            if (b.cell[i]) continue;
            blanks++;
            for (int d = 1; d <= 9; d++) cand[i][d] = 1;
            for (int j = 0; j < 81; j++) {
                int peer = j != i && (j / 9 == i / 9 || j % 9 == i % 9 ||
                                      (j / 27 == i / 27 && (j % 9) / 3 == (i % 9) / 3));
                if (peer && b.cell[j]) cand[i][b.cell[j]] = 0;
            }
        }
        if (!blanks) return rounds;
        int fill[81] = {0}, found = 0;
        for (int i = 0; i < 81; i++) {
            int n = 0, last = 0;
            for (int d = 1; d <= 9; d++)
                if (cand[i][d]) n++, last = d;
            if (!b.cell[i] && n == 1) fill[i] = last;
        }
        for (int u = 0; u < 27; u++)
            for (int d = 1; d <= 9; d++) {
                int n = 0, where = -1;
                for (int i = 0; i < 81; i++) {
                    int in_u = u < 9 ? i / 9 == u : u < 18 ? i % 9 == u - 9
                                                           : 3 * (i / 27) + (i % 9) / 3 == u - 18;
                    if (in_u && !b.cell[i] && cand[i][d]) n++, where = i;
                }
                if (n == 1) fill[where] = d;
            }
        for (int i = 0; i < 81; i++)
            if (fill[i]) b.cell[i] = (uint8_t)fill[i], found++;
        if (!found) return -1;
    }
}

START_TEST(test_rounds)
{
    gyro_sudoku sol = parse_ok(WIKI_SOL), out;
    ck_assert_int_eq(gyro_sudoku_rounds(&sol, &out), 0);
    ck_assert_mem_eq(out.cell, sol.cell, 81);
    gyro_sudoku one = sol;
    one.cell[40] = 0;
    ck_assert_int_eq(gyro_sudoku_rounds(&one, &out), 1);
    ck_assert_mem_eq(out.cell, sol.cell, 81);
    /* Wikipedia's puzzle falls to singles */
    gyro_sudoku w = parse_ok(WIKI);
    const int rw = gyro_sudoku_rounds(&w, &out);
    ck_assert_int_ge(rw, 2);
    ck_assert_mem_eq(out.cell, sol.cell, 81);
    ck_assert_int_eq(rw, rounds_plain(&w));
    ck_assert_int_eq(gyro_sudoku_grade_of(&w).rounds, rw);
    /* a hidden single that is not a naked one: 1 at r2c5, r3c8, r5c2, r8c3 leaves box 1 (and
     * row 1, column 1) one place for 1, r1c1, where every digit is a candidate; nothing else is
     * forced, so the next round stalls with r1c1 = 1 the only change */
    gyro_sudoku h;
    memset(&h, 0, sizeof h);
    h.cell[9 * 1 + 4] = h.cell[9 * 2 + 7] = h.cell[9 * 4 + 1] = h.cell[9 * 7 + 2] = 1;
    ck_assert_int_eq(gyro_sudoku_rounds(&h, &out), -1);
    ck_assert_int_eq(out.cell[0], 1);
    out.cell[0] = 0;
    ck_assert_mem_eq(out.cell, h.cell, 81);
    /* a hard puzzle (AI Escargot) needs more than singles; an inconsistent grid stalls */
    gyro_sudoku e = parse_ok("1....7.9..3..2...8..96..5....53..9...1..8...26....4...3......1..4......7..7...3..");
    ck_assert_int_eq(gyro_sudoku_rounds(&e, NULL), -1);
    gyro_sudoku bad;
    memset(&bad, 0, sizeof bad);
    bad.cell[0] = bad.cell[1] = 4;
    ck_assert_int_eq(gyro_sudoku_rounds(&bad, NULL), -1);
    /* generated puzzles: the plain re-count agrees, and more clues mean fewer rounds */
    gyro_sudoku_gen_config gc = gyro_sudoku_gen_config_default();
    double mean[2] = {0, 0};
    const int clues[2] = {32, 55};
    for (int c = 0; c < 2; c++) {
        gc.clues = clues[c];
        for (uint64_t i = 0; i < 12; i++) {
            gyro_sudoku p;
            gyro_sudoku_grade g;
            ck_assert_int_eq(gyro_sudoku_generate(5, i, &gc, &p, NULL, &g), GYRO_OK);
            ck_assert_int_eq(g.rounds, gyro_sudoku_rounds(&p, NULL));
            ck_assert_int_eq(g.rounds, rounds_plain(&p));
            mean[c] += g.rounds / 12.0;
        }
    }
    ck_assert_msg(mean[0] > mean[1] + 1, "mean rounds %g (32 clues) %g (55 clues)", mean[0], mean[1]);
}
END_TEST

START_TEST(test_rounds_band)
{
    gyro_sudoku_gen_config gc = gyro_sudoku_gen_config_default();
    gc.clues = 40;
    gc.min_rounds = 4;
    gc.max_rounds = 5;
    gc.max_attempts = 10000;
    for (uint64_t i = 0; i < 6; i++) {
        gyro_sudoku p, sol, out;
        gyro_sudoku_grade g;
        ck_assert_int_eq(gyro_sudoku_generate(9, i, &gc, &p, &sol, &g), GYRO_OK);
        ck_assert(g.rounds >= 4 && g.rounds <= 5);
        ck_assert_int_eq(gyro_sudoku_rounds(&p, &out), g.rounds);
        ck_assert_mem_eq(out.cell, sol.cell, 81);
    }
    /* a lower bound alone keeps singles-solvable puzzles only */
    gc.max_rounds = 0;
    gc.min_rounds = 1;
    gc.clues = 28;
    for (uint64_t i = 0; i < 4; i++) {
        gyro_sudoku_grade g;
        ck_assert_int_eq(gyro_sudoku_generate(9, i, &gc, NULL, NULL, &g), GYRO_OK);
        ck_assert_int_ge(g.rounds, 1);
    }
    /* 60 clues never need 12 rounds */
    gc.clues = 60;
    gc.min_rounds = 12;
    gc.max_attempts = 3;
    ck_assert_int_eq(gyro_sudoku_generate(9, 0, &gc, NULL, NULL, NULL), GYRO_ERR_NOT_FOUND);
    ck_assert_ptr_nonnull(strstr(gyro_error_message(), "rounds"));
    gc = gyro_sudoku_gen_config_default();
    gc.min_rounds = 5;
    gc.max_rounds = 4;
    ck_assert_int_eq(gyro_sudoku_generate(1, 0, &gc, NULL, NULL, NULL), GYRO_ERR_USAGE);
    gc.min_rounds = -1;
    gc.max_rounds = 0;
    ck_assert_int_eq(gyro_sudoku_generate(1, 0, &gc, NULL, NULL, NULL), GYRO_ERR_USAGE);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("sudoku");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_parse);
    tcase_add_test(tc, test_parse_errors);
    tcase_add_test(tc, test_solve_known);
    tcase_add_test(tc, test_unsolvable);
    tcase_add_test(tc, test_generate_unique_and_minimal);
    tcase_add_test(tc, test_generate_reproducible);
    tcase_add_test(tc, test_grade_monotone);
    tcase_add_test(tc, test_band_and_errors);
    tcase_add_test(tc, test_symmetry);
    tcase_add_test(tc, test_rounds);
    tcase_add_test(tc, test_rounds_band);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

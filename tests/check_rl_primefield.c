/* check_rl_primefield.c — Check suite for models/rl/env_primefield: the recurrence's terms, the
 * Hankel determinant that makes f the sequence's minimal polynomial, the closed continuity
 * criterion against the brute-force periods mod p^j on every prime ≡ 4 (mod 7) below 10,000,
 * the answer 9811, and the environment's episodes, observations and rewards. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/rl/env.h"
#include "models/rl/env_primefield.h"

/* a_n mod m by the companion-matrix power against the recurrence run directly. */
START_TEST(test_terms)
{
    const uint64_t q = 1000003;
    ck_assert_uint_eq(gyro_rl_pf_term_mod(0, q), 0);
    ck_assert_uint_eq(gyro_rl_pf_term_mod(3, q), 3);
    /* direct recurrence mod q */
    int64_t a[12] = {0, 1, 2, 3};
    const int64_t c[4] = {GYRO_RL_PF_C1 % (int64_t)q, GYRO_RL_PF_C2 % (int64_t)q,
                          GYRO_RL_PF_C3 % (int64_t)q, GYRO_RL_PF_C4 % (int64_t)q};
    for (int n = 4; n < 12; n++) {
        int64_t v = 0;
        for (int i = 0; i < 4; i++) v = (v + c[i] * a[n - 1 - i]) % (int64_t)q;
        a[n] = (v + (int64_t)q) % (int64_t)q;
    }
    for (int n = 0; n < 12; n++) ck_assert_uint_eq(gyro_rl_pf_term_mod((uint64_t)n, q), (uint64_t)a[n]);
    /* a_4 = 3·c1 + 2·c2 + c3 = 876576235352 exactly, below the modulus */
    const uint64_t big = (UINT64_C(1) << 61) - 1;
    ck_assert_uint_eq(gyro_rl_pf_term_mod(4, big), UINT64_C(876576235352));
}
END_TEST

/* μ = f: H4 ≠ 0 (nonzero mod 1000003); and it vanishes mod 11 and 9811 (both divide it). */
START_TEST(test_hankel)
{
    ck_assert_uint_ne(gyro_rl_pf_hankel_mod(1000003), 0);
    ck_assert_uint_eq(gyro_rl_pf_hankel_mod(11), 0);
    ck_assert_uint_eq(gyro_rl_pf_hankel_mod(9811), 0);
    ck_assert_uint_ne(gyro_rl_pf_hankel_mod(13), 0);
}
END_TEST

START_TEST(test_primes)
{
    const uint64_t primes[] = {2, 3, 5, 7, 11, 9811, 1000003};
    for (size_t i = 0; i < sizeof primes / sizeof *primes; i++) ck_assert(gyro_rl_pf_is_prime(primes[i]));
    const uint64_t composite[] = {0, 1, 4, 9, 91, 9809, 1000001};
    for (size_t i = 0; i < sizeof composite / sizeof *composite; i++)
        ck_assert(!gyro_rl_pf_is_prime(composite[i]));
}
END_TEST

/* The closed criterion against brute force on every prime ≡ 4 (mod 7) below 10,000; 9811 is
 * the only one accepted; at p = 11 precision p¹ alone is fooled, p² is not. */
START_TEST(test_criterion_vs_brute)
{
    int n_primes = 0, n_accept = 0;
    for (uint64_t p = GYRO_RL_PF_RESIDUE; p < 10000; p += GYRO_RL_PF_MODULUS) {
        if (!gyro_rl_pf_is_prime(p)) continue;
        n_primes++;
        int closed = gyro_rl_pf_continuous(p);
        int brute = gyro_rl_pf_brute(p, 2);
        ck_assert_msg(brute == closed, "p = %llu: brute force %d, criterion %d", (unsigned long long)p, brute, closed);
        if (closed) {
            n_accept++;
            ck_assert_uint_eq(p, 9811);
        } else {
            ck_assert_msg(!gyro_rl_pf_verify(p), "p = %llu accepted", (unsigned long long)p);
        }
    }
    ck_assert_int_gt(n_primes, 200);
    ck_assert_int_eq(n_accept, 1);
    ck_assert_int_eq(gyro_rl_pf_brute(11, 1), 1);
    ck_assert_int_eq(gyro_rl_pf_brute(11, 2), 0);
    ck_assert_int_eq(gyro_rl_pf_continuous(11), 0);
    /* 9811 keeps its power-of-p periods at higher precision too */
    ck_assert_int_eq(gyro_rl_pf_brute(9811, 4), 1);
    /* arguments out of range */
    ck_assert_int_eq(gyro_rl_pf_brute(9811, 5), -1);
    ck_assert_int_eq(gyro_rl_pf_brute(1, 1), -1);
    ck_assert_int_eq(gyro_rl_pf_brute(5, 0), -1);
}
END_TEST

/* Primes of other residue classes: the criterion and brute force agree too (37, 673, 811 and
 * 1453 divide some but not all of the four differences). */
START_TEST(test_criterion_other_classes)
{
    for (uint64_t p = 5; p < 2000; p++) {
        if (!gyro_rl_pf_is_prime(p)) continue;
        ck_assert_msg(gyro_rl_pf_brute(p, 2) == gyro_rl_pf_continuous(p), "p = %llu", (unsigned long long)p);
        ck_assert(!gyro_rl_pf_continuous(p));
    }
}
END_TEST

START_TEST(test_answer)
{
    ck_assert_uint_eq(gyro_rl_pf_answer(GYRO_RL_PF_LIMIT), 9811);
    ck_assert_uint_eq(gyro_rl_pf_answer(9811), 0);
    ck_assert(gyro_rl_pf_verify(9811));
    ck_assert(!gyro_rl_pf_verify(9811 + 7 * 2));
    ck_assert(!gyro_rl_pf_verify(9811 * 7 + 4));
    ck_assert(!gyro_rl_pf_verify(0));
}
END_TEST

static void play(const gyro_rl_env *e, gyro_rl_pf_state *s, const int *acts, int n)
{
    e->reset_eval(s, 0, 1);
    for (int i = 0; i < n; i++) {
        ck_assert(!e->done(s));
        e->step(s, acts[i]);
    }
}

START_TEST(test_env_registered)
{
    ck_assert_ptr_eq(gyro_rl_env_find("primefield"), &gyro_rl_env_primefield);
    const gyro_rl_env *e = &gyro_rl_env_primefield;
    ck_assert_int_eq(e->obs_dim, GYRO_RL_PF_DIGITS + 1);
    ck_assert_int_eq(e->n_actions, 11);
    ck_assert_uint_ge(e->state_size, sizeof(gyro_rl_pf_state));
}
END_TEST

START_TEST(test_env_correct)
{
    const gyro_rl_env *e = &gyro_rl_env_primefield;
    gyro_rl_pf_state s;
    const int acts[] = {9, 8, 1, 1, GYRO_RL_PF_STOP};
    play(e, &s, acts, 5);
    ck_assert(e->done(&s));
    ck_assert_uint_eq(gyro_rl_pf_candidate(&s), 9811);
    ck_assert_double_eq(e->reward(&s), 1.0);
    ck_assert_double_eq(e->metric(&s), 0.0);
    /* steps after the end change nothing */
    e->step(&s, 3);
    ck_assert_uint_eq(gyro_rl_pf_candidate(&s), 9811);
    char buf[192];
    e->format_state(&s, buf, sizeof buf);
    ck_assert_ptr_nonnull(strstr(buf, "9811"));
    ck_assert_ptr_nonnull(strstr(buf, "extends to Z_p"));
    e->format_action(GYRO_RL_PF_STOP, buf, sizeof buf);
    ck_assert_str_eq(buf, "STOP");
    e->format_action(7, buf, sizeof buf);
    ck_assert_str_eq(buf, "digit 7");
}
END_TEST

START_TEST(test_env_incorrect)
{
    const gyro_rl_env *e = &gyro_rl_env_primefield;
    gyro_rl_pf_state s;
    /* 9817 ≡ 3 (mod 7): three leading digits right, closeness only */
    const int a1[] = {9, 8, 1, 7, GYRO_RL_PF_STOP};
    play(e, &s, a1, 5);
    ck_assert_double_eq_tol(e->reward(&s), GYRO_RL_PF_W_PREFIX * 3.0 / 4.0, 1e-12);
    ck_assert_double_eq(e->metric(&s), 1.0);
    /* 11: a prime ≡ 4 (mod 7) that the criterion rejects, no digit right: the bonus alone */
    const int a2[] = {1, 1, GYRO_RL_PF_STOP};
    play(e, &s, a2, 3);
    ck_assert(e->done(&s));
    ck_assert_double_eq_tol(e->reward(&s), GYRO_RL_PF_W_VALID, 1e-12);
    ck_assert_double_eq(e->metric(&s), 1.0);
    /* 9803 ≡ 3 (mod 7) and 9839 ≡ 4 (mod 7), prime: two digits right, plus the bonus */
    ck_assert(gyro_rl_pf_is_prime(9839) && 9839 % 7 == 4);
    const int a7[] = {9, 8, 3, 9, GYRO_RL_PF_STOP};
    play(e, &s, a7, 5);
    ck_assert_double_eq_tol(e->reward(&s), GYRO_RL_PF_W_PREFIX * 2.0 / 4.0 + GYRO_RL_PF_W_VALID, 1e-12);
    /* 98110: five digits end the episode without STOP; all four digits of p* then one more */
    const int a3[] = {9, 8, 1, 1, 0};
    play(e, &s, a3, 5);
    ck_assert(e->done(&s));
    ck_assert_double_eq_tol(e->reward(&s), GYRO_RL_PF_W_PREFIX, 1e-12);
    ck_assert_double_eq(e->metric(&s), 1.0);
    /* STOP first: no answer */
    const int a4[] = {GYRO_RL_PF_STOP};
    play(e, &s, a4, 1);
    ck_assert(e->done(&s));
    ck_assert_double_eq(e->reward(&s), 0.0);
    /* a leading zero is malformed even if the value is right */
    const int a5[] = {0, 9, 8, 1, 1};
    play(e, &s, a5, 5);
    ck_assert_double_eq(e->reward(&s), 0.0);
    ck_assert_double_eq(e->metric(&s), 1.0);
    /* out-of-range actions are clamped */
    const int a6[] = {-3, 99};
    play(e, &s, a6, 2);
    ck_assert(e->done(&s));
    ck_assert_int_eq(s.n, 1);
    /* every wrong answer earns less than the right one */
    for (uint64_t p = 1; p < GYRO_RL_PF_LIMIT; p += 97) {
        if (p == 9811) continue;
        e->reset_eval(&s, 0, 1);
        char d[8];
        int n = snprintf(d, sizeof d, "%llu", (unsigned long long)p);
        for (int i = 0; i < n; i++) e->step(&s, d[i] - '0');
        if (!e->done(&s)) e->step(&s, GYRO_RL_PF_STOP);
        ck_assert(e->reward(&s) <= GYRO_RL_PF_W_PREFIX + GYRO_RL_PF_W_VALID + 1e-12);
        ck_assert(e->reward(&s) < 1.0);
    }
}
END_TEST

START_TEST(test_env_observe_and_terminate)
{
    const gyro_rl_env *e = &gyro_rl_env_primefield;
    gyro_rl_pf_state s;
    gyro_rng rng;
    gyro_rng_seed(&rng, 5);
    float obs[GYRO_RL_PF_DIGITS + 1];
    e->reset(&s, &rng);
    e->observe(&s, obs);
    for (int i = 0; i <= GYRO_RL_PF_DIGITS; i++) ck_assert_float_eq(obs[i], 0.0f);
    e->step(&s, 9);
    e->step(&s, 0);
    e->observe(&s, obs);
    ck_assert_float_eq_tol(obs[0], 1.0f, 1e-7f);
    ck_assert_float_eq_tol(obs[1], 0.1f, 1e-7f);
    ck_assert_float_eq(obs[2], 0.0f);
    ck_assert_float_eq_tol(obs[GYRO_RL_PF_DIGITS], 2.0f / GYRO_RL_PF_DIGITS, 1e-7f);
    /* random episodes end within max_steps */
    for (int ep = 0; ep < 200; ep++) {
        e->reset(&s, &rng);
        int t = 0;
        while (!e->done(&s)) {
            e->step(&s, (int)gyro_rng_below(&rng, GYRO_RL_PF_NACTIONS));
            t++;
        }
        ck_assert_int_le(t, e->max_steps);
        double r = e->reward(&s);
        ck_assert(r >= 0.0 && r <= 1.0);
    }
    ck_assert_int_eq(e->set_start(&s, NULL), 0);
    ck_assert_int_eq(s.n, 0);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("rl_primefield");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_terms);
    tcase_add_test(tc, test_hankel);
    tcase_add_test(tc, test_primes);
    tcase_add_test(tc, test_criterion_vs_brute);
    tcase_add_test(tc, test_criterion_other_classes);
    tcase_add_test(tc, test_answer);
    tcase_add_test(tc, test_env_registered);
    tcase_add_test(tc, test_env_correct);
    tcase_add_test(tc, test_env_incorrect);
    tcase_add_test(tc, test_env_observe_and_terminate);
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

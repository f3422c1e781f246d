/* env_primefield.h — the prime-field continuous-extension problem (seed rl-hyperbolic-transformer-
 * grpo, Table 2; FrontierMath sample problem 11):
 *
 *   a_n = 198130309625·a_{n−1} + 354973292077·a_{n−2} − 427761277677·a_{n−3} + 370639957·a_{n−4},
 *   a_i = i for 0 ≤ i ≤ 3. Find the smallest prime p ≡ 4 (mod 7) for which n ↦ a_n (n ∈ Z)
 *   extends to a continuous function on Z_p.
 *
 * THE VERIFIER'S MATHEMATICS. Write a_n = c₁a_{n−1} + c₂a_{n−2} + c₃a_{n−3} + c₄a_{n−4}
 * (c₃ < 0), f(x) = x⁴ − c₁x³ − c₂x² − c₃x − c₄ the characteristic polynomial, C its companion
 * matrix, s_n = (a_n, a_{n+1}, a_{n+2}, a_{n+3}) = Cⁿ s₀, S the shift (Sa)_n = a_{n+1}.
 *
 * (1) Continuity. Z is dense in the compact Z_p, so n ↦ a_n extends continuously iff it is
 *     uniformly continuous for |·|_p: for every j ≥ 1 there is a k with a_{n+p^k} ≡ a_n
 *     (mod p^j) for all n ∈ Z — the sequence mod p^j is periodic with a power of p as period.
 *     (For n < 0 the recurrence runs backwards through a division by c₄, so the values are
 *     p-adic integers only when p ∤ c₄; then C is invertible mod p^j and s_{p^k} ≡ s₀ already
 *     gives the congruence for every n ∈ Z.)
 *
 * (2) The minimal polynomial μ of a (monic generator of {g : g(S)a = 0}) divides f; its degree
 *     is the largest r with det(a_{i+j})_{0≤i,j<r} ≠ 0, a rank condition that does not depend on
 *     the field (Q or Q_p). For this a, H₄ = det(a_{i+j})_{0≤i,j<4} ≠ 0
 *     (= −5²·11²·5659·9811²·429460911801766998817; the test checks H₄ mod 1000003 ≠ 0), so μ = f.
 *
 * (3) Claim: a (minimal polynomial μ) extends continuously iff every root λ of μ in an algebraic
 *     closure of Q_p is a 1-unit, |λ − 1|_p < 1.
 *     In K = Q_p(roots), a_n = Σ_λ P_λ(n) λⁿ with P_λ ≠ 0 of degree mult(λ) − 1 (μ minimal).
 *     (⇐) λ = 1 + π, |π| < 1: λ^{p^k} → 1 and |λⁿ| = 1, and P_λ(n + p^k) − P_λ(n) is p^k times a
 *     polynomial with bounded coefficients, so a_{n+p^k} − a_n = Σ_λ [P_λ(n+p^k)λ^{p^k} − P_λ(n)]λⁿ
 *     → 0 uniformly in n.
 *     (⇒) b⁽ᵏ⁾_n = a_{n+p^k} − a_n = Σ_λ Q_{λ,k}(n) λⁿ, Q_{λ,k}(n) = P_λ(n+p^k)λ^{p^k} − P_λ(n),
 *     tends to 0 uniformly. The map from the coefficients of all Q_{λ,k} (deg μ numbers) to
 *     (b_0, …, b_{deg μ − 1}) is a fixed invertible (confluent Vandermonde) matrix, so every
 *     coefficient tends to 0, in particular the leading one lc(P_λ)(λ^{p^k} − 1): λ^{p^k} → 1.
 *     If |λ| < 1 (only possible when p | c₄), λ^{p^k} → 0. If λ is a unit with residue λ̄ in a
 *     finite field F_q, λ^{p^k} → 1 forces λ̄^{p^k} = 1 for some k; the order of λ̄ divides
 *     q − 1, prime to p, so λ̄ = 1. ∎
 *     (Roots of unity of order prime to p — the "periodic mod p with period T·p^k, T > 1" part —
 *     are exactly what breaks continuity: n ↦ ωⁿ jumps between the values ω^{p^k} as k grows.)
 *
 * (4) Closed form. μ = f has integer coefficients; the residues of its roots are the roots of
 *     f̄ = f mod p with multiplicity. So a extends continuously to Z_p iff f̄ = (x − 1)⁴ =
 *     x⁴ − 4x³ + 6x² − 4x + 1, i.e. p divides c₁ − 4, c₂ + 6, c₃ − 4 and c₄ + 1 (then p ∤ c₄).
 *     gcd(c₁ − 4, c₂ + 6, c₃ − 4, c₄ + 1) = 9811, a prime ≡ 4 (mod 7) (9811 = 7·1401 + 4): the
 *     answer is p = 9811, the only prime of any residue class that works — the seed is right.
 *
 * (5) The brute force the test compares with. When f̄ = (x − 1)⁴, C = I + N with N⁴ ≡ 0 (mod p)
 *     (Cayley–Hamilton), so for p ≥ 5, C^p ≡ I + N^p ≡ I (mod p), and C^{p^k} ≡ I (mod p^k) by
 *     induction (C^{p^k} = I + p^k X ⇒ C^{p^{k+1}} ≡ I mod p^{k+1}): period p^j mod p^j.
 *     gyro_rl_pf_brute(p, J) asks, for j = 1..J, whether some k ≤ j + 1 has C^{p^k} s₀ ≡ s₀
 *     (mod p^j), in exact modular arithmetic. Precision j = 1 alone is NOT enough: at p = 11
 *     (≡ 4 mod 7) f̄ = (x − 1)²(x² − 4x + 5) and 11² | H₄; a ≡ n (mod 11) has period 11, yet the
 *     (x² − 4x + 5)-part of a is a nonzero multiple of 11 and mod 121 no power of 11 is a period.
 *     With J = 2 the brute force agrees with (4) on every prime ≡ 4 (mod 7) below 10,000.
 *
 * THE ENVIRONMENT. The policy writes its candidate in decimal, one digit per step, most
 * significant first: actions 0–9 append a digit, action 10 (STOP) ends the answer; the episode
 * also ends after GYRO_RL_PF_DIGITS digits. Observation (GYRO_RL_PF_DIGITS + 1 floats): token i
 * is (d_i + 1)/10 for the i-th digit written, 0 for a digit not yet written; the last token is
 * (digits written)/GYRO_RL_PF_DIGITS. The start is fixed (the problem is one instance); the
 * answer p* the reward compares with is computed at reset by the verifier (never written in).
 *
 * Reward (terminal, in [0, 1]); with p the candidate, k the number of its leading decimal
 * digits that agree with p*'s and L the number of digits of p*:
 *   1                                      p = p* (prime, ≡ 4 mod 7, continuous, smallest);
 *   0.5·k/L                                digit closeness, the dense part: one more right digit
 *     + 0.2·[p prime and p ≡ 4 (mod 7)]    is worth 0.5/L at every step; and a bonus for a
 *                                          well-formed candidate that the continuity criterion
 *                                          rejects;
 *   0                                      no digits, or a leading zero.
 * A wrong answer earns at most 0.7, so the exact answer is the unique maximum. Without the
 * dense part the reward is a needle (one of ~10⁵ digit strings) that sampling never finds. The
 * closeness is counted in digits, the unit the policy acts in, rather than as |p − p*|: with
 * |p − p*|/p* the 5-digit strings 1xxxx (10000 is 189 from 9811) outscore most 4-digit ones, and
 * GRPO settled on "11111" (seed 1, both geometries); with digits, each step is a 10-armed
 * bandit whose right arm is the next digit of p* (or STOP). The validity bonus rewards the
 * checkable structure of an answer. Metric: 0 if p = p*, else 1, so its mean over evaluation
 * episodes is the seed's miss-prediction rate.
 */
#ifndef GYRO_RL_ENV_PRIMEFIELD_H
#define GYRO_RL_ENV_PRIMEFIELD_H

#include <stdint.h>

/* The recurrence a_n = Σ_i c_i a_{n−i} (i = 1..4) and its initial values a_0..a_3. */
#define GYRO_RL_PF_C1 INT64_C(198130309625)
#define GYRO_RL_PF_C2 INT64_C(354973292077)
#define GYRO_RL_PF_C3 INT64_C(-427761277677)
#define GYRO_RL_PF_C4 INT64_C(370639957)
#define GYRO_RL_PF_RESIDUE 4 /* p ≡ 4 */
#define GYRO_RL_PF_MODULUS 7 /*   (mod 7) */

#define GYRO_RL_PF_DIGITS 5          /* longest candidate: 99999 */
#define GYRO_RL_PF_STOP 10           /* the action that ends the answer */
#define GYRO_RL_PF_NACTIONS 11
#define GYRO_RL_PF_LIMIT 100000      /* candidates are below 10^GYRO_RL_PF_DIGITS */
#define GYRO_RL_PF_W_PREFIX 0.5      /* reward weight of the digit closeness k/L */
#define GYRO_RL_PF_W_VALID 0.2       /* reward of a prime ≡ 4 (mod 7) that is not the answer */

typedef struct gyro_rl_pf_state {
    int digits[GYRO_RL_PF_DIGITS]; /* written so far, most significant first */
    int n;                         /* digits written */
    int stopped;                   /* STOP was chosen */
    uint32_t answer;               /* p*, from gyro_rl_pf_answer at reset */
} gyro_rl_pf_state;

/* 1 if n is prime (trial division; n < 2^32 is fast), else 0. */
int gyro_rl_pf_is_prime(uint64_t n);

/* a_n mod m for n ≥ 0 and 2 ≤ m < 2^62 (companion-matrix power, exact). */
uint64_t gyro_rl_pf_term_mod(uint64_t n, uint64_t m);

/* H₄ = det(a_{i+j})_{0≤i,j<4} mod q for a prime q < 2^62 (Gaussian elimination mod q). */
uint64_t gyro_rl_pf_hankel_mod(uint64_t q);

/* The closed criterion (4): 1 iff f ≡ (x − 1)⁴ (mod p) — for a prime p, iff n ↦ a_n extends
 * continuously to Z_p. p ≥ 2. */
int gyro_rl_pf_continuous(uint64_t p);

/* The brute force (5): 1 iff for every j = 1..J some k ≤ j + 1 has a_{n+p^k} ≡ a_n (mod p^j)
 * for all n ∈ Z (checked on s₀ by C^{p^k} mod p^j). Needs p ≥ 2, 1 ≤ J and p^J < 2^62;
 * returns −1 when they do not hold. */
int gyro_rl_pf_brute(uint64_t p, int J);

/* The smallest prime p ≡ 4 (mod 7), p < limit, for which the criterion holds; 0 if none. */
uint64_t gyro_rl_pf_answer(uint64_t limit);

/* 1 iff p is the answer: prime, ≡ 4 (mod 7), continuous, and no smaller such prime. */
int gyro_rl_pf_verify(uint64_t p);

/* The candidate the digits of s spell (0 when none were written). */
uint64_t gyro_rl_pf_candidate(const gyro_rl_pf_state *s);

#endif

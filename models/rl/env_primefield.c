/* env_primefield.c — the prime-field continuous-extension environment and its verifier (see
 * env_primefield.h for the mathematics). */
#include "models/rl/env_primefield.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "models/rl/env.h"

#define LIM62 (UINT64_C(1) << 62)

/* a·b mod m for m < 2^62 (double-and-add when the product could overflow). */
static uint64_t mulmod(uint64_t a, uint64_t b, uint64_t m)
{
    a %= m;
    b %= m;
    if (a < (UINT64_C(1) << 32) && b < (UINT64_C(1) << 32)) return a * b % m;
    uint64_t r = 0;
    while (b) {
        if (b & 1) {
            r += a;
            if (r >= m) r -= m;
        }
        a += a;
        if (a >= m) a -= m;
        b >>= 1;
    }
    return r;
}

static uint64_t powmod(uint64_t x, uint64_t e, uint64_t m)
{
    uint64_t r = 1 % m;
    x %= m;
    while (e) {
        if (e & 1) r = mulmod(r, x, m);
        x = mulmod(x, x, m);
        e >>= 1;
    }
    return r;
}

/* c mod m in [0, m) for a signed c (m < 2^62). */
static uint64_t smod(int64_t c, uint64_t m)
{
    int64_t r = c % (int64_t)m;
    return (uint64_t)(r < 0 ? r + (int64_t)m : r);
}

typedef struct mat4 {
    uint64_t v[4][4];
} mat4;

static mat4 mat_mul(const mat4 *a, const mat4 *b, uint64_t m)
{
    mat4 r;
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            uint64_t acc = 0;
            for (int k = 0; k < 4; k++) {
                acc += mulmod(a->v[i][k], b->v[k][j], m);
                if (acc >= m) acc -= m;
            }
            r.v[i][j] = acc;
        }
    return r;
}

static mat4 mat_pow(mat4 x, uint64_t e, uint64_t m)
{
    mat4 r;
    memset(&r, 0, sizeof r);
    for (int i = 0; i < 4; i++) r.v[i][i] = 1 % m;
    while (e) {
        if (e & 1) r = mat_mul(&r, &x, m);
        x = mat_mul(&x, &x, m);
        e >>= 1;
    }
    return r;
}

/* The companion matrix C mod m: s_{n+1} = C s_n, s_n = (a_n, a_{n+1}, a_{n+2}, a_{n+3}). */
static mat4 companion(uint64_t m)
{
    mat4 c;
    memset(&c, 0, sizeof c);
    c.v[0][1] = c.v[1][2] = c.v[2][3] = 1 % m;
    c.v[3][0] = smod(GYRO_RL_PF_C4, m);
    c.v[3][1] = smod(GYRO_RL_PF_C3, m);
    c.v[3][2] = smod(GYRO_RL_PF_C2, m);
    c.v[3][3] = smod(GYRO_RL_PF_C1, m);
    return c;
}

/* 1 iff C^e s₀ ≡ s₀ (mod m) for the matrix P = C^e, s₀ = (0, 1, 2, 3). */
static int fixes_start(const mat4 *P, uint64_t m)
{
    for (int i = 0; i < 4; i++) {
        uint64_t acc = 0;
        for (int k = 0; k < 4; k++) {
            acc += mulmod(P->v[i][k], (uint64_t)k, m);
            if (acc >= m) acc -= m;
        }
        if (acc != (uint64_t)i % m) return 0;
    }
    return 1;
}

int gyro_rl_pf_is_prime(uint64_t n)
{
    if (n < 2) return 0;
    if (n % 2 == 0) return n == 2;
    for (uint64_t d = 3; d <= n / d; d += 2)
        if (n % d == 0) return 0;
    return 1;
}

uint64_t gyro_rl_pf_term_mod(uint64_t n, uint64_t m)
{
    mat4 P = mat_pow(companion(m), n, m);
    uint64_t acc = 0;
    for (int k = 0; k < 4; k++) {
        acc += mulmod(P.v[0][k], (uint64_t)k, m);
        if (acc >= m) acc -= m;
    }
    return acc;
}

uint64_t gyro_rl_pf_hankel_mod(uint64_t q)
{
    uint64_t a[7], h[4][4], det = 1;
    for (int i = 0; i < 7; i++) a[i] = gyro_rl_pf_term_mod((uint64_t)i, q);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) h[i][j] = a[i + j];
    for (int c = 0; c < 4; c++) {
        int piv = -1;
        for (int r = c; r < 4 && piv < 0; r++)
            if (h[r][c]) piv = r;
        if (piv < 0) return 0;
        if (piv != c) {
            for (int j = 0; j < 4; j++) {
                uint64_t t = h[c][j];
                h[c][j] = h[piv][j];
                h[piv][j] = t;
            }
            det = (q - det) % q;
        }
        det = mulmod(det, h[c][c], q);
        uint64_t inv = powmod(h[c][c], q - 2, q);
        for (int r = c + 1; r < 4; r++) {
            uint64_t f = mulmod(h[r][c], inv, q);
            for (int j = c; j < 4; j++) h[r][j] = (h[r][j] + q - mulmod(f, h[c][j], q)) % q;
        }
    }
    return det;
}

int gyro_rl_pf_continuous(uint64_t p)
{
    if (p < 2 || p >= LIM62) return 0;
    /* f ≡ (x − 1)⁴: c₁ ≡ 4, c₂ ≡ −6, c₃ ≡ 4, c₄ ≡ −1 (mod p) */
    return smod(GYRO_RL_PF_C1 - 4, p) == 0 && smod(GYRO_RL_PF_C2 + 6, p) == 0 &&
           smod(GYRO_RL_PF_C3 - 4, p) == 0 && smod(GYRO_RL_PF_C4 + 1, p) == 0;
}

int gyro_rl_pf_brute(uint64_t p, int J)
{
    if (p < 2 || J < 1) return -1;
    uint64_t m = 1;
    for (int j = 0; j < J; j++) {
        if (m > (LIM62 - 1) / p) return -1;
        m *= p;
    }
    m = 1;
    for (int j = 1; j <= J; j++) {
        m *= p;
        mat4 P = companion(m); /* C^{p^0} */
        int found = 0;
        for (int k = 0; k <= j + 1 && !found; k++) {
            if (fixes_start(&P, m)) found = 1;
            else P = mat_pow(P, p, m); /* C^{p^{k+1}} */
        }
        if (!found) return 0;
    }
    return 1;
}

uint64_t gyro_rl_pf_answer(uint64_t limit)
{
    for (uint64_t q = GYRO_RL_PF_RESIDUE; q < limit; q += GYRO_RL_PF_MODULUS)
        if (gyro_rl_pf_continuous(q) && gyro_rl_pf_is_prime(q)) return q;
    return 0;
}

int gyro_rl_pf_verify(uint64_t p)
{
    return p >= 2 && p % GYRO_RL_PF_MODULUS == GYRO_RL_PF_RESIDUE && gyro_rl_pf_is_prime(p) &&
           gyro_rl_pf_continuous(p) && gyro_rl_pf_answer(p) == 0;
}

uint64_t gyro_rl_pf_candidate(const gyro_rl_pf_state *s)
{
    uint64_t v = 0;
    for (int i = 0; i < s->n; i++) v = 10 * v + (uint64_t)s->digits[i];
    return v;
}

static void pf_reset_eval(void *st, int i, int n)
{
    (void)i;
    (void)n;
    gyro_rl_pf_state *s = st;
    memset(s, 0, sizeof *s);
    s->answer = (uint32_t)gyro_rl_pf_answer(GYRO_RL_PF_LIMIT);
}

static void pf_reset(void *st, gyro_rng *rng)
{
    (void)rng; /* one fixed instance: the group differs by the sampled digits */
    pf_reset_eval(st, 0, 1);
}

static int pf_set_start(void *st, const double *v)
{
    (void)v; /* the start takes no values */
    pf_reset_eval(st, 0, 1);
    return 0;
}

static int pf_done(const void *st)
{
    const gyro_rl_pf_state *s = st;
    return s->stopped || s->n >= GYRO_RL_PF_DIGITS;
}

static void pf_observe(const void *st, float *obs)
{
    const gyro_rl_pf_state *s = st;
    for (int i = 0; i < GYRO_RL_PF_DIGITS; i++) obs[i] = i < s->n ? (float)(s->digits[i] + 1) / 10.0f : 0.0f;
    obs[GYRO_RL_PF_DIGITS] = (float)s->n / GYRO_RL_PF_DIGITS;
}

static void pf_step(void *st, int a)
{
    gyro_rl_pf_state *s = st;
    if (pf_done(s)) return;
    if (a < 0) a = 0;
    if (a >= GYRO_RL_PF_STOP) {
        s->stopped = 1;
        return;
    }
    s->digits[s->n++] = a;
}

static int well_formed(const gyro_rl_pf_state *s)
{
    return s->n > 0 && s->digits[0] != 0;
}

/* Leading decimal digits the candidate shares with p* (0 ≤ k ≤ digits of p*). */
static int common_prefix(const gyro_rl_pf_state *s)
{
    char d[24];
    int len = snprintf(d, sizeof d, "%lu", (unsigned long)s->answer), k = 0;
    while (k < s->n && k < len && s->digits[k] == d[k] - '0') k++;
    return k;
}

static double pf_reward(const void *st)
{
    const gyro_rl_pf_state *s = st;
    if (!well_formed(s)) return 0.0;
    uint64_t p = gyro_rl_pf_candidate(s);
    if (s->answer && p == s->answer) return 1.0;
    double r = 0.0;
    if (s->answer) {
        char d[24];
        int len = snprintf(d, sizeof d, "%lu", (unsigned long)s->answer);
        r += GYRO_RL_PF_W_PREFIX * common_prefix(s) / len;
    }
    if (p % GYRO_RL_PF_MODULUS == GYRO_RL_PF_RESIDUE && gyro_rl_pf_is_prime(p)) r += GYRO_RL_PF_W_VALID;
    return r;
}

static double pf_metric(const void *st)
{
    const gyro_rl_pf_state *s = st;
    return well_formed(s) && s->answer && gyro_rl_pf_candidate(s) == s->answer ? 0.0 : 1.0;
}

static int pf_format_action(int a, char *buf, size_t n)
{
    if (a >= GYRO_RL_PF_STOP) return snprintf(buf, n, "STOP");
    return snprintf(buf, n, "digit %d", a < 0 ? 0 : a);
}

static int pf_format_state(const void *st, char *buf, size_t n)
{
    const gyro_rl_pf_state *s = st;
    if (s->n == 0) return snprintf(buf, n, "answer = _ (no digits yet)");
    char d[GYRO_RL_PF_DIGITS + 1];
    for (int i = 0; i < s->n; i++) d[i] = (char)('0' + s->digits[i]);
    d[s->n] = 0;
    uint64_t p = gyro_rl_pf_candidate(s);
    int prime = gyro_rl_pf_is_prime(p);
    return snprintf(buf, n, "answer = %s%s  %s  mod 7 = %d  %s", d, pf_done(s) ? "" : "_",
                    !well_formed(s) ? "leading zero" : prime ? "prime" : "not prime",
                    (int)(p % GYRO_RL_PF_MODULUS),
                    !prime ? "" : gyro_rl_pf_continuous(p) ? "f = (x-1)^4 mod p: extends to Z_p"
                                                           : "f != (x-1)^4 mod p: no extension");
}

const gyro_rl_env gyro_rl_env_primefield = {
    .name = "primefield",
    .description = "smallest prime p = 4 mod 7 where a recurrence extends to Z_p, digit by digit (seed Table 2)",
    .metric_name = "miss",
    .obs_dim = GYRO_RL_PF_DIGITS + 1, .n_actions = GYRO_RL_PF_NACTIONS, .max_steps = GYRO_RL_PF_DIGITS,
    .state_size = sizeof(gyro_rl_pf_state),
    .n_start = 0, .start_help = "empty (the problem is fixed)",
    GYRO_RL_ENV_FUNCTIONS(pf),
};

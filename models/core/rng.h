/* rng.h — small, fast, seedable random numbers (xoshiro256** seeded by splitmix64).
 *
 * Every stochastic part of gyro takes an explicit gyro_rng so runs are reproducible from a seed.
 * A gyro_rng is plain data: one per thread, no locking.
 */
#ifndef GYRO_CORE_RNG_H
#define GYRO_CORE_RNG_H

#include <stdint.h>

typedef struct gyro_rng { uint64_t s[4]; } gyro_rng;

/* Seed the generator; any seed (0 included) gives a valid, distinct stream. */
void gyro_rng_seed(gyro_rng *r, uint64_t seed);

/* Next 64 random bits. */
static inline uint64_t gyro_rng_next(gyro_rng *r)
{
    uint64_t *s = r->s;
    uint64_t x = s[1] * 5;
    uint64_t result = ((x << 7) | (x >> 57)) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = (s[3] << 45) | (s[3] >> 19);
    return result;
}

/* Uniform double in [0, 1). */
static inline double gyro_rng_uniform(gyro_rng *r)
{
    return (double)(gyro_rng_next(r) >> 11) * (1.0 / 9007199254740992.0); /* 2^-53 */
}

/* Uniform integer in [0, n); n > 0 (Lemire's multiply-shift, negligible bias for n < 2^32). */
static inline uint32_t gyro_rng_below(gyro_rng *r, uint32_t n)
{
    return (uint32_t)(((gyro_rng_next(r) >> 32) * (uint64_t)n) >> 32);
}

/* Standard normal deviate (Box–Muller; one value per call). */
double gyro_rng_normal(gyro_rng *r);

/* Shuffle a[0..n) in place (Fisher–Yates from the end: a[i] swaps with a[gyro_rng_below(i+1)]
 * for i = n−1 .. 1, n − 1 draws). */
void gyro_rng_shuffle(gyro_rng *r, int *a, int n);

#endif

/* rng.c — seeding and the normal deviate (see rng.h). */
#include "models/core/rng.h"

#include <math.h>

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void gyro_rng_seed(gyro_rng *r, uint64_t seed)
{
    uint64_t x = seed;
    for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&x);
}

double gyro_rng_normal(gyro_rng *r)
{
    double u1 = gyro_rng_uniform(r), u2 = gyro_rng_uniform(r);
    if (u1 < 1e-300) u1 = 1e-300;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

void gyro_rng_shuffle(gyro_rng *r, int *a, int n)
{
    for (int i = n - 1; i > 0; i--) {
        int j = (int)gyro_rng_below(r, (uint32_t)i + 1);
        int t = a[i]; a[i] = a[j]; a[j] = t;
    }
}

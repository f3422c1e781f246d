/* sgns.c — the sigmoid and log-sigmoid tables of the skip-gram kernels and the alias sampler of
 * negatives (see sgns.h). */
#include "embeddings/sgns.h"

#include <stdlib.h>
#include <string.h>

void gyro_sgns_tables_init(gyro_sgns_tables *t)
{
    for (int i = 0; i <= GYRO_SGNS_SIG_N; i++) {
        double x = -GYRO_SGNS_SIG_MAX + 2.0 * GYRO_SGNS_SIG_MAX * i / GYRO_SGNS_SIG_N;
        t->sig[i] = (float)(1.0 / (1.0 + exp(-x)));
        /* −log σ(x) = log(1 + e^{−x}), stable for both signs */
        t->nlsig[i] = (float)(x > 0 ? log1p(exp(-x)) : -x + log1p(exp(x)));
    }
}

gyro_status gyro_sgns_alias_init(gyro_sgns_alias *a, const uint32_t *table, uint32_t size, uint32_t n)
{
    memset(a, 0, sizeof *a);
    if (n == 0 || size == 0) return gyro_error_set(GYRO_ERR_USAGE, "alias sampler: empty distribution");
    uint64_t *p = calloc(n, sizeof *p);                /* (n) slots, then residual mass × n */
    uint32_t *small = malloc((size_t)n * sizeof *small), *large = malloc((size_t)n * sizeof *large);
    a->e = malloc((size_t)n * sizeof *a->e);
    if (!p || !small || !large || !a->e) {
        free(p); free(small); free(large); free(a->e);
        a->e = NULL;
        return gyro_error_set(GYRO_ERR_NOMEM, "out of memory for the alias sampler");
    }
    for (uint32_t k = 0; k < size; k++) {
        if (table[k] >= n) {
            free(p); free(small); free(large); free(a->e);
            a->e = NULL;
            return gyro_error_set(GYRO_ERR_USAGE, "alias sampler: id %u of the table is not below %u", table[k], n);
        }
        p[table[k]]++;
    }
    /* Vose: mass p_i = slots_i · n against a capacity of `size` per entry (Σ p = n · size) */
    uint32_t ns = 0, nl = 0;
    for (uint32_t i = 0; i < n; i++) {
        p[i] *= n;
        if (p[i] < size) small[ns++] = i;
        else large[nl++] = i;
    }
    while (ns > 0 && nl > 0) {
        uint32_t s = small[--ns], l = large[--nl];
        a->e[s] = (gyro_sgns_alias_entry){.thr = (uint32_t)((p[s] << 32) / size), .alias = l};
        p[l] -= size - p[s];
        if (p[l] < size) small[ns++] = l;
        else large[nl++] = l;
    }
    /* what is left is full (exactly, in integers) */
    while (nl > 0) { uint32_t i = large[--nl]; a->e[i] = (gyro_sgns_alias_entry){.thr = UINT32_MAX, .alias = i}; }
    while (ns > 0) { uint32_t i = small[--ns]; a->e[i] = (gyro_sgns_alias_entry){.thr = UINT32_MAX, .alias = i}; }
    a->n = n;
    free(p); free(small); free(large);
    return GYRO_OK;
}

void gyro_sgns_alias_free(gyro_sgns_alias *a)
{
    free(a->e);
    memset(a, 0, sizeof *a);
}

/* act_impl.h — generic body of act.h (instantiated by act.c). */

void S(gyro_relu_forward)(R *Y, const R *X, long n)
{
    for (long i = 0; i < n; i++)
        Y[i] = X[i] > 0 ? X[i] : (R)0;
}

void S(gyro_relu_backward)(R *dX, const R *dY, const R *X, long n)
{
    for (long i = 0; i < n; i++)
        dX[i] += X[i] > 0 ? dY[i] : (R)0; /* branch-free: vectorizes */
}

void S(gyro_dropout_forward)(R *Y, R *mask, const R *X, gyro_rng *rng, R p, long n)
{
    const R keep = (R)(1.0 / (1.0 - (double)p));
    /* Drop when a 32-bit draw falls below p·2³² (probability p within 2⁻³²); each 64-bit
     * output of the generator decides two elements. */
    const uint64_t thr = (uint64_t)((double)p * 4294967296.0);
    long i = 0;
    for (; i + 2 <= n; i += 2) {
        const uint64_t r = gyro_rng_next(rng);
        mask[i] = (r >> 32) < thr ? (R)0 : keep;
        mask[i + 1] = (r & 0xffffffffu) < thr ? (R)0 : keep;
    }
    if (i < n)
        mask[i] = (gyro_rng_next(rng) >> 32) < thr ? (R)0 : keep;
    for (i = 0; i < n; i++)
        Y[i] = X[i] * mask[i];
}

void S(gyro_dropout_backward)(R *dX, const R *dY, const R *mask, long n)
{
    for (long i = 0; i < n; i++)
        dX[i] += dY[i] * mask[i];
}

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
    for (long i = 0; i < n; i++) {
        mask[i] = gyro_rng_uniform(rng) < (double)p ? (R)0 : keep;
        Y[i] = X[i] * mask[i];
    }
}

void S(gyro_dropout_backward)(R *dX, const R *dY, const R *mask, long n)
{
    for (long i = 0; i < n; i++)
        dX[i] += dY[i] * mask[i];
}

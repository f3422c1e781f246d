/* linear_impl.h — generic body of linear.h (instantiated by linear.c). */

void S(gyro_linear_forward)(R *Y, int ldy, const R *X, int ldx, const R *W, int ldw, int N,
                            int K, int M)
{
    GEMM(Y, X, W, 0, 1, (R)1, (R)0, N, M, K, ldx, ldw, ldy);
}

void S(gyro_linear_backward)(R *dX, int lddx, R *dW, int lddw, const R *dY, int lddy,
                             const R *X, int ldx, const R *W, int ldw, int N, int K, int M)
{
    if (dX)
        GEMM(dX, dY, W, 0, 0, (R)1, (R)1, N, K, M, lddy, ldw, lddx);
    if (dW)
        GEMM(dW, dY, X, 1, 0, (R)1, (R)1, M, K, N, lddy, ldx, lddw);
}

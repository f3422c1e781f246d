/* lorentz_skipgram_impl.h — internal template: the one implementation of lorentz_skipgram.h,
 * instantiated once per precision by that header (no include guard on purpose). The including
 * file defines
 *   T          storage type (float or double)
 *   VT         4-lane vector of T (gyro_hyp_v4f / gyro_hyp_v4d)
 *   L(name)    public name, gyro_lorentz_<name>_f32 / _f64
 *   COSH_MAX   cosh/sinh argument clamp (hyp_consts.h)
 * Lane sums are widened to double with __builtin_convertvector (the identity for double).
 */

static inline double L(padded_dot)(const T *x, const T *y, int row)
{
    gyro_hyp_v4d a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0};
    for (int i = 0; i < row; i += 16) {
        a0 += __builtin_convertvector(*(const VT *)(x + i), gyro_hyp_v4d) *
              __builtin_convertvector(*(const VT *)(y + i), gyro_hyp_v4d);
        a1 += __builtin_convertvector(*(const VT *)(x + i + 4), gyro_hyp_v4d) *
              __builtin_convertvector(*(const VT *)(y + i + 4), gyro_hyp_v4d);
        a2 += __builtin_convertvector(*(const VT *)(x + i + 8), gyro_hyp_v4d) *
              __builtin_convertvector(*(const VT *)(y + i + 8), gyro_hyp_v4d);
        a3 += __builtin_convertvector(*(const VT *)(x + i + 12), gyro_hyp_v4d) *
              __builtin_convertvector(*(const VT *)(y + i + 12), gyro_hyp_v4d);
    }
    return gyro_hyp_v4d_hsum((a0 + a1) + (a2 + a3));
}

static inline double L(padded_inner)(const T *x, const T *y, int row)
{
    return L(padded_dot)(x, y, row) - 2.0 * (double)x[0] * (double)y[0];
}

static inline T L(axpby_reproject)(T *x, const T *y, double alpha, double beta, int row)
{
    T a = (T)alpha, b = (T)beta;
    gyro_hyp_v4d ss = {0};
    for (int i = 0; i < row; i += 4) {
        VT xn = a * *(VT *)(x + i) + b * *(const VT *)(y + i);
        *(VT *)(x + i) = xn;
        gyro_hyp_v4d d = __builtin_convertvector(xn, gyro_hyp_v4d);
        ss += d * d;
    }
    double s = gyro_hyp_v4d_hsum(ss) - (double)x[0] * (double)x[0];
    T x0 = (T)sqrt(1.0 + (s > 0 ? s : 0));
    x[0] = x0;
    return x0;
}

static inline T L(skipgram_step_target)(T *restrict h, T *restrict v, const T *restrict u,
                                        double s, double g, double lr, double max_step, int row)
{
    double a = lr * g;
    double s2 = s * s - 1.0; /* ⟨p,p⟩_L / a² */
    double n = fabs(a) * sqrt(s2 > 0 ? s2 : 0);
    if (max_step > 0 && n > max_step) {
        a *= max_step / n;
        n = max_step;
    }
    double ch, shc;
    gyro_hyp_cosh_sinhc(n, COSH_MAX, &ch, &shc);
    T alpha = (T)(ch + shc * a * s), beta = (T)(shc * a), gt = (T)g;
    gyro_hyp_v4d ss = {0};
    for (int i = 0; i < row; i += 4) {
        VT vo = *(VT *)(v + i);
        *(VT *)(h + i) += gt * vo;
        VT vn = alpha * vo + beta * *(const VT *)(u + i);
        *(VT *)(v + i) = vn;
        gyro_hyp_v4d d = __builtin_convertvector(vn, gyro_hyp_v4d);
        ss += d * d;
    }
    double sp = gyro_hyp_v4d_hsum(ss) - (double)v[0] * (double)v[0];
    T v0 = (T)sqrt(1.0 + (sp > 0 ? sp : 0));
    v[0] = v0;
    return v0;
}

static inline T L(skipgram_step_centre)(T *restrict u, const T *restrict h, double lr,
                                        double max_step, int row)
{
    gyro_hyp_v4d aq = {0}, ah = {0};
    for (int i = 0; i < row; i += 4) {
        gyro_hyp_v4d hd = __builtin_convertvector(*(const VT *)(h + i), gyro_hyp_v4d);
        aq += __builtin_convertvector(*(const VT *)(u + i), gyro_hyp_v4d) * hd;
        ah += hd * hd;
    }
    double q = gyro_hyp_v4d_hsum(aq) - 2.0 * (double)u[0] * (double)h[0];  /* ⟨u,h⟩_L */
    double hh = gyro_hyp_v4d_hsum(ah) - 2.0 * (double)h[0] * (double)h[0]; /* ⟨h,h⟩_L */
    double t2 = hh + q * q;
    double e = lr;
    double n = lr * sqrt(t2 > 0 ? t2 : 0);
    if (max_step > 0 && n > max_step) {
        e *= max_step / n;
        n = max_step;
    }
    double ch, shc;
    gyro_hyp_cosh_sinhc(n, COSH_MAX, &ch, &shc);
    return L(axpby_reproject)(u, h, ch + shc * e * q, shc * e, row);
}

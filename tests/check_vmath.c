/* check_vmath.c — Check suite: the vectorised float32 transcendentals of models/hyp/vmath.h
 * against libm in float64 over the whole float32 range.
 *
 * Every 997th positive float32 bit pattern from 0 to +∞ (2.1·10⁶ values: zero, subnormals,
 * tiny, the polynomial/exp switch points, large, ∞) and its negative, in arrays whose lengths
 * leave a tail (the padded path), plus the edge cases: ±0, the smallest subnormal, the branch
 * switch points 0.5 and 0.625 and their neighbours, the ball's boundary (1 − 2⁻²⁴, the clamp
 * GYRO_HYP_ARTANH_MAX_F32 and beyond), ±∞ and NaN (which must come out NaN). The measured
 * maximum errors, relative to the float64 result (t·ulp: 1 ulp = 2⁻²³ relative at most):
 *   tanhc 2.0 ulp, tanh 1.8 ulp   (bound checked: 4 ulp = 4.8e-7 relative)
 *   artanhc 1.5 ulp, artanh 1.9 ulp (same bound; |x| beyond the clamp: artanh(±max))
 * and the errors are printed by the test for the record.
 */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/hyp/hyp_consts.h"
#include "models/hyp/vmath.h"

#define STRIDE 997u
#define BLOCK 1003 /* not a multiple of 8: every block ends on the padded tail */
#define TOL (4.0 * 0x1p-24 * 2.0)

static const float amax = (float)GYRO_HYP_ARTANH_MAX_F32;

static double ref_tanhc(double t)
{
    t = fabs(t);
    return t == 0.0 ? 1.0 : isinf(t) ? 0.0 : tanh(t) / t;
}

static double ref_artanhc(double t)
{
    t = fabs(t);
    return t == 0.0 ? 1.0 : atanh(t > amax ? (double)amax : t) / t;
}

static double ref_tanh(double x) { return tanh(x); }

static double ref_artanh(double x)
{
    return atanh(x > amax ? (double)amax : x < -amax ? -(double)amax : x);
}

enum { F_TANHC, F_ARTANHC, F_TANH, F_ARTANH };

static void apply(int f, float *out, const float *in, int n)
{
    switch (f) {
    case F_TANHC: gyro_vtanhc_f32(out, in, n); break;
    case F_ARTANHC: gyro_vartanhc_f32(out, in, amax, n); break;
    case F_TANH: gyro_vtanh_f32(out, in, n); break;
    default: gyro_vartanh_f32(out, in, amax, n); break;
    }
}

static double ref(int f, double x)
{
    switch (f) {
    case F_TANHC: return ref_tanhc(x);
    case F_ARTANHC: return ref_artanhc(x);
    case F_TANH: return ref_tanh(x);
    default: return ref_artanh(x);
    }
}

/* the largest relative error of f over the values in (n), NaN inputs required to give NaN */
static double worst(int f, const float *in, int n, float *out, float *at)
{
    apply(f, out, in, n);
    double w = 0.0;
    for (int i = 0; i < n; i++) {
        if (isnan(in[i])) {
            ck_assert_msg(isnan(out[i]), "f%d(NaN) = %g", f, (double)out[i]);
            continue;
        }
        const double r = ref(f, in[i]);
        double e;
        if (r == 0.0)
            e = fabs((double)out[i]);
        else
            e = fabs(((double)out[i] - r) / r);
        ck_assert_msg(isfinite(out[i]), "f%d(%a) = %g not finite", f, (double)in[i],
                      (double)out[i]);
        if (e > w) {
            w = e;
            *at = in[i];
        }
    }
    return w;
}

static void sweep(int f, const char *name)
{
    float in[BLOCK], out[BLOCK], at = 0.0f, wat = 0.0f;
    double w = 0.0;
    int n = 0;
    for (uint64_t b = 0; b <= 0x7f800000u; b += STRIDE) {
        const uint32_t u = (uint32_t)b;
        float x;
        memcpy(&x, &u, sizeof x);
        in[n++] = x;
        if (n < BLOCK - 1 && (b / STRIDE) % 2)
            in[n++] = -x;
        if (n >= BLOCK - 1) {
            double e = worst(f, in, n, out, &at);
            if (e > w) {
                w = e;
                wat = at;
            }
            n = 0;
        }
    }
    const float edge[] = {0.0f,      -0.0f,      0x1p-149f, 1e-30f,    1e-8f,     0.49999997f,
                          0.5f,      0.50000006f, 0.62499994f, 0.625f, 0.62500006f, 1.0f - 0x1p-24f,
                          amax,      1.0f,       -1.0f,     1.5f,      9.0f,      87.0f,
                          INFINITY,  -INFINITY,  NAN,       -NAN,      -0.625f,   -amax};
    for (size_t i = 0; i < sizeof edge / sizeof *edge; i++)
        in[n++] = edge[i];
    double e = worst(f, in, n, out, &at);
    if (e > w) {
        w = e;
        wat = at;
    }
    printf("vmath %-8s max relative error %.3g (%.2f ulp of 2^-23) at x = %a\n", name, w,
           w / 0x1p-23, (double)wat);
    ck_assert_msg(w <= TOL, "%s: max relative error %g at %a exceeds %g", name, w, (double)wat,
                  TOL);
}

START_TEST(test_tanhc) { sweep(F_TANHC, "tanhc"); }
END_TEST

START_TEST(test_artanhc) { sweep(F_ARTANHC, "artanhc"); }
END_TEST

START_TEST(test_tanh) { sweep(F_TANH, "tanh"); }
END_TEST

START_TEST(test_artanh) { sweep(F_ARTANH, "artanh"); }
END_TEST

/* specific values: exact ones at 0 and ±∞, in place, n = 0 */
START_TEST(test_edges)
{
    float v[3] = {0.0f, INFINITY, -INFINITY};
    gyro_vtanhc_f32(v, v, 3);
    ck_assert(v[0] == 1.0f && v[1] == 0.0f && v[2] == 0.0f);
    float w[3] = {0.0f, INFINITY, -INFINITY};
    gyro_vtanh_f32(w, w, 3);
    ck_assert(w[0] == 0.0f && w[1] == 1.0f && w[2] == -1.0f);
    float a[3] = {0.0f, INFINITY, -INFINITY};
    gyro_vartanh_f32(a, a, amax, 3);
    ck_assert(a[0] == 0.0f && isfinite(a[1]) && a[1] == -a[2] && a[1] > 8.0f);
    float z[1] = {0.5f};
    gyro_vartanhc_f32(z, z, amax, 0); /* n = 0 writes nothing */
    ck_assert(z[0] == 0.5f);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("vmath");
    TCase *tc = tcase_create("libm");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_tanhc);
    tcase_add_test(tc, test_artanhc);
    tcase_add_test(tc, test_tanh);
    tcase_add_test(tc, test_artanh);
    tcase_add_test(tc, test_edges);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_NORMAL);
    int nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nf == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

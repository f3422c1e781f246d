/* vmath.c — the vectorised float32 transcendentals of vmath.h (formulas and sources there). */
#include "models/hyp/vmath.h"
#include "models/hyp/vexp_impl.h"

#include <stdint.h>
#include <string.h>

/* every vector function here is static: the AVX argument ABI of -Wpsabi does not apply */
#pragma GCC diagnostic ignored "-Wpsabi"

typedef gyro_v8sf vm_v8sf;
typedef gyro_v8si vm_v8si;

#define VM_SPLAT(x) {(x), (x), (x), (x), (x), (x), (x), (x)}

/* a where m is all ones, else b */
static inline vm_v8sf vm_select(vm_v8si m, vm_v8sf a, vm_v8sf b)
{
    return (vm_v8sf)(((vm_v8si)a & m) | ((vm_v8si)b & ~m));
}

/* exp(v) for lanes v ≤ 0 (NaN stays NaN); below −87 → 0 (models/hyp/vexp_impl.h). */
static inline vm_v8sf vm_exp_neg(vm_v8sf v)
{
    gyro_vexp8_f32(&v);
    return v;
}

/* log(x) for finite normal lanes x > 0 (the callers' arguments are in [3, 2²⁵]). Cephes logf. */
static inline vm_v8sf vm_log_pos(vm_v8sf x)
{
    vm_v8si bits = (vm_v8si)x;
    vm_v8si ei = ((bits >> 23) & 0xff) - 126;
    x = (vm_v8sf)((bits & 0x007fffff) | 0x3f000000); /* mantissa in [0.5, 1) */
    vm_v8sf e = __builtin_convertvector(ei, vm_v8sf);
    const vm_v8si small = x < 0.707106781186547524f;
    const vm_v8sf one = VM_SPLAT(1.0f), zero = VM_SPLAT(0.0f);
    e = e - vm_select(small, one, zero);
    x = x - 1.0f + vm_select(small, x, zero); /* m − 1, or 2m − 1 below √½ */
    const vm_v8sf z = x * x;
    vm_v8sf y = x * 7.0376836292e-2f + -1.1514610310e-1f;
    y = y * x + 1.1676998740e-1f;
    y = y * x + -1.2420140846e-1f;
    y = y * x + 1.4249322787e-1f;
    y = y * x + -1.6668057665e-1f;
    y = y * x + 2.0000714765e-1f;
    y = y * x + -2.4999993993e-1f;
    y = y * x + 3.3333331174e-1f;
    y = y * x * z;
    y = y + e * -2.12194440e-4f;
    y = y - z * 0.5f;
    return x + y + e * 0.693359375f;
}

static inline vm_v8sf vm_abs(vm_v8sf t)
{
    const vm_v8si m = VM_SPLAT(0x7fffffff);
    return (vm_v8sf)((vm_v8si)t & m);
}

/* tanh(t)/t for lanes t ≥ 0 or NaN */
static inline vm_v8sf vm_tanhc(vm_v8sf t)
{
    const vm_v8sf z = t * t;
    vm_v8sf p = z * -5.70498872745e-3f + 2.06390887954e-2f;
    p = p * z + -5.37397155531e-2f;
    p = p * z + 1.33314422036e-1f;
    p = p * z + -3.33332819422e-1f;
    const vm_v8sf small = p * z + 1.0f;
    const vm_v8si is_small = t < 0.625f;
    const vm_v8sf tl = vm_select(is_small, (vm_v8sf)VM_SPLAT(0.625f), t); /* no 0/0 */
    const vm_v8sf e = vm_exp_neg(tl * -2.0f);
    const vm_v8sf large = (1.0f - e) / ((1.0f + e) * tl);
    return vm_select(is_small, small, large);
}

/* artanh(min(t, max))/t for lanes t ≥ 0 or NaN */
static inline vm_v8sf vm_artanhc(vm_v8sf t, float max)
{
    const vm_v8sf z = t * t;
    vm_v8sf p = z * (1.0f / 23.0f) + 1.0f / 21.0f;
    p = p * z + 1.0f / 19.0f;
    p = p * z + 1.0f / 17.0f;
    p = p * z + 1.0f / 15.0f;
    p = p * z + 1.0f / 13.0f;
    p = p * z + 1.0f / 11.0f;
    p = p * z + 1.0f / 9.0f;
    p = p * z + 1.0f / 7.0f;
    p = p * z + 1.0f / 5.0f;
    p = p * z + 1.0f / 3.0f;
    const vm_v8sf small = p * z + 1.0f;
    const vm_v8si is_small = t < 0.5f;
    const vm_v8sf half = VM_SPLAT(0.5f), mx = VM_SPLAT(max);
    vm_v8sf tc = vm_select(is_small, half, t);
    tc = vm_select(tc > mx, mx, tc); /* NaN lanes stay NaN */
    const vm_v8sf q = (1.0f + tc) / (1.0f - tc);
    const vm_v8sf large = 0.5f * vm_log_pos(vm_select(q == q, q, half)) / vm_select(is_small, half, t);
    return vm_select(t == t, vm_select(is_small, small, large), t);
}

/* f on every full block of 8, then on the tail padded with zeros */
#define VM_MAP(out, in, n, EXPR)                                                               \
    do {                                                                                       \
        int i_ = 0;                                                                            \
        for (; i_ + 8 <= (n); i_ += 8) {                                                       \
            vm_v8sf v;                                                                         \
            memcpy(&v, (in) + i_, sizeof v);                                                   \
            v = EXPR;                                                                          \
            memcpy((out) + i_, &v, sizeof v);                                                  \
        }                                                                                      \
        if (i_ < (n)) {                                                                        \
            float buf_[8] = {0};                                                               \
            memcpy(buf_, (in) + i_, (size_t)((n) - i_) * sizeof(float));                       \
            vm_v8sf v;                                                                         \
            memcpy(&v, buf_, sizeof v);                                                        \
            v = EXPR;                                                                          \
            memcpy(buf_, &v, sizeof v);                                                        \
            memcpy((out) + i_, buf_, (size_t)((n) - i_) * sizeof(float));                      \
        }                                                                                      \
    } while (0)

void gyro_vtanhc_f32(float *out, const float *t, int n)
{
    VM_MAP(out, t, n, vm_tanhc(vm_abs(v)));
}

void gyro_vartanhc_f32(float *out, const float *t, float max, int n)
{
    VM_MAP(out, t, n, vm_artanhc(vm_abs(v), max));
}

/* x clamped to [−m, m] (NaN stays NaN) */
static inline vm_v8sf vm_clamp(vm_v8sf x, float m)
{
    const vm_v8sf hi = VM_SPLAT(m), lo = VM_SPLAT(-m);
    x = vm_select(x > hi, hi, x);
    return vm_select(x < lo, lo, x);
}

void gyro_vtanh_f32(float *out, const float *x, int n)
{
    /* tanh(9) = 1 − 3e-8 rounds to 1 in float32: clamping there keeps ±∞ finite */
    VM_MAP(out, x, n, vm_clamp(v, 9.0f) * vm_tanhc(vm_abs(vm_clamp(v, 9.0f))));
}

void gyro_vartanh_f32(float *out, const float *x, float max, int n)
{
    VM_MAP(out, x, n, vm_clamp(v, max) * vm_artanhc(vm_abs(vm_clamp(v, max)), max));
}

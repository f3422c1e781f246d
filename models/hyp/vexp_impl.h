/* vexp_impl.h — the 8-lane float32 exp shared by the vector kernels (models/hyp/vmath.c and the
 * softmax terms of models/layers/kernels.c). Internal: static inline, not installed.
 *
 * Cephes' expf: range reduction by ln 2 in two parts, a degree-6 polynomial on
 * [−ln2/2, ln2/2], then the exponent bits; within 2 ulp of expf for lanes in [−87, 0]. Lanes
 * below −87 (e⁻⁸⁷ ≈ 1.6e-38) give 0; NaN stays NaN. Passed by pointer: a vector passed by value
 * would change the ABI on targets without AVX. */
#ifndef GYRO_HYP_VEXP_IMPL_H
#define GYRO_HYP_VEXP_IMPL_H

#include <stdint.h>

typedef float gyro_v8sf __attribute__((vector_size(32)));
typedef int32_t gyro_v8si __attribute__((vector_size(32)));

/* *vp ← exp of its 8 lanes, for lanes <= 0. */
static inline void gyro_vexp8_f32(gyro_v8sf *vp)
{
    gyro_v8sf v = *vp;
    const gyro_v8sf lo = {-87.0f, -87.0f, -87.0f, -87.0f, -87.0f, -87.0f, -87.0f, -87.0f};
    const gyro_v8si under = v < lo; /* all ones where v < −87 */
    v = (gyro_v8sf)(((gyro_v8si)v & ~under) | ((gyro_v8si)lo & under));
    const float magic = 12582912.0f; /* 1.5·2²³: adding it rounds to an integer */
    gyro_v8sf fx = v * 1.44269504088896341f + magic;
    fx = fx - magic;
    v = v - fx * 0.693359375f;
    v = v - fx * -2.12194440e-4f;
    const gyro_v8sf z = v * v;
    gyro_v8sf y = v * 1.9875691500e-4f + 1.3981999507e-3f;
    y = y * v + 8.3334519073e-3f;
    y = y * v + 4.1665795894e-2f;
    y = y * v + 1.6666665459e-1f;
    y = y * v + 5.0000001201e-1f;
    y = y * z + v + 1.0f;
    const gyro_v8si e = (__builtin_convertvector(fx, gyro_v8si) + 127) << 23;
    y = y * (gyro_v8sf)e;
    *vp = (gyro_v8sf)((gyro_v8si)y & ~under);
}

#endif

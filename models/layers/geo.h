/* geo.h — the three maps that make one layer code serve both geometries, row by row.
 *
 * The hyperbolic transformer only ever leaves and re-enters the Poincaré ball at the origin
 * (hyperbolic-chinese-nlu §4.2: "parallel transport … to the origin using the logarithmic and
 * exponential mappings"), and combines points with Möbius addition. Its Euclidean twin is the
 * same network with those three maps replaced by their flat limits:
 *
 *   op      hyperbolic (ball of curvature −c)          Euclidean
 *   exp0    proj(exp_0(v))  (Ganea 2018, Lemma 2)      v
 *   log0    log_0(y)        (Ganea 2018, Lemma 2)      y
 *   add     proj(x ⊕_c y)   (Ganea 2018, eq. 3)        x + y
 *
 * proj is the ball projection of models/hyp (norm ≤ (1−ε)/√c): exp_0 of a long tangent vector
 * and a Möbius sum can round onto the boundary in float32, where the next Möbius addition or
 * artanh would blow up. The backward needs the Jacobian of proj at the unprojected value: when
 * the stored forward output lies clearly inside the projection radius, proj was the identity
 * and the backward goes straight to the hyp op's VJP; otherwise (or without the output) it
 * recomputes the unprojected value in a caller-provided scratch row (2·n values).
 *
 * In the Euclidean geometry exp0 and log0 are the identity: a caller may alias a map's output
 * to its input (nothing is copied) and then passes the same gradient buffer for both sides of
 * the backward, which adds nothing (the gradient is already in place).
 *
 * Each kernel exists in float32 and float64 (_f32 / _f64, one generic source geo_impl.h).
 * Rows are addressed with leading dimensions (ld*) so a head's slice of a wider row can be
 * mapped in place. Backward kernels ACCUMULATE (+=) into their gradient outputs.
 */
#ifndef GYRO_LAYERS_GEO_H
#define GYRO_LAYERS_GEO_H

/* Suffix macros of the two instantiations of every generic layer source. */
#define GYRO_F32(name) name##_f32
#define GYRO_F64(name) name##_f64

typedef enum gyro_geo {
    GYRO_GEO_EUCLIDEAN = 0,
    GYRO_GEO_HYPERBOLIC = 1
} gyro_geo;

#define GYRO_GEO_API(R, S)                                                                     \
    /* Y[r] = exp0(V[r]) for rows r < rows of n values. Y may alias V (same ld). */            \
    void S(gyro_geo_exp0)(R *Y, int ldy, const R *V, int ldv, int geo, R c, int rows, int n);  \
    /* dV[r] += (∂exp0/∂v)ᵀ dY[r]. Y: the forward output (or NULL), used to skip recomputing  \
     * exp0 where the projection was inactive. scratch: (2n). */                               \
    void S(gyro_geo_exp0_backward)(R *dV, int lddv, R *scratch, const R *dY, int lddy,         \
                                   const R *Y, int ldy, const R *V, int ldv, int geo, R c,     \
                                   int rows, int n);                                           \
    /* V[r] = log0(Y[r]). V may alias Y (same ld). */                                          \
    void S(gyro_geo_log0)(R *V, int ldv, const R *Y, int ldy, int geo, R c, int rows, int n);  \
    /* dY[r] += (∂log0/∂y)ᵀ dV[r]. */                                                           \
    void S(gyro_geo_log0_backward)(R *dY, int lddy, const R *dV, int lddv, const R *Y, int ldy,\
                                   int geo, R c, int rows, int n);                             \
    /* Z[r] = X[r] ⊕ Y[r·ldy] (ldy = 0 broadcasts one row, e.g. a bias; else ldy = n).        \
     * Z may alias X. */                                                                       \
    void S(gyro_geo_add)(R *Z, const R *X, const R *Y, int ldy, int geo, R c, int rows, int n);\
    /* dX[r] += ∂/∂x, dY[r·ldy] += ∂/∂y (with ldy = 0 the rows' gradients are summed).         \
     * dX or dY may be NULL. Z: the forward output (or NULL), as for exp0. scratch: (2n). */    \
    void S(gyro_geo_add_backward)(R *dX, R *dY, R *scratch, const R *dZ, const R *Z,           \
                                  const R *X, const R *Y, int ldy, int geo, R c, int rows,     \
                                  int n);

GYRO_GEO_API(float, GYRO_F32)
GYRO_GEO_API(double, GYRO_F64)

#endif

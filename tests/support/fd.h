/* fd.h — central finite differences for the gradient checks of the Check suites.
 *
 * fd_central perturbs one value in place and differences an objective; fd_stats keeps the
 * largest absolute and relative errors of a set of analytic-vs-numeric comparisons; fd_trial
 * is the whole check of a backward kernel with several inputs (check_hyp_grad,
 * check_lorentz_layers): s = Σ w ⊙ f(in) for random weights w, the backward's accumulate
 * contract, and every coordinate of every input against central differences of s.
 */
#ifndef GYRO_TESTS_FD_H
#define GYRO_TESTS_FD_H

#include <stddef.h>

#include "models/core/rng.h"

#define FD_MAX_IN 8 /* inputs of an fd_problem */

/* The objective at the current values of the caller's inputs. */
typedef double (*fd_fn)(void *ctx);

/* (f(x + h) − f(x − h)) / 2h, with *x perturbed in place and restored afterwards. */
double fd_central(double *x, double h, fd_fn f, void *ctx);

/* The largest errors of analytic (ana) against numeric (num) derivatives: the absolute error
 * |num − ana|, and the relative error |num − ana| / max(floor, |num| + |ana|), counted only
 * where |num| + |ana| > gate. The caller sets floor and gate, the rest starts at zero. */
typedef struct fd_stats {
    double floor, gate;
    double max_abs, max_rel;
    size_t worst; /* index k of the largest absolute error */
} fd_stats;

void fd_stats_add(fd_stats *st, size_t k, double num, double ana);

/* A kernel f: in[0..nin-1] (lengths len) -> out (outlen), with a backward that ACCUMULATES
 * din[i] += (∂out/∂in[i])ᵀ dout. ctx is passed to the three callbacks. */
typedef struct fd_problem {
    int nin;           /* at most FD_MAX_IN */
    const size_t *len; /* (nin) */
    size_t outlen;
    void *ctx;
    void (*init)(double **in, void *ctx, gyro_rng *r); /* the input values */
    void (*fwd)(double *out, double *const *in, void *ctx);
    void (*bwd)(double *const *din, const double *dout, double *const *in, void *ctx);
} fd_problem;

/* One trial of p: allocate and init the inputs, draw w ~ N(0, 1) over the output, check that
 * two backward calls give twice one (within 1e-12 (1 + |g|)) and that every gradient is finite
 * (Check assertions naming `name`), and compare the gradient of s = Σ w ⊙ out with central
 * differences of step h on every coordinate. Returns the largest absolute error; *scale gets
 * max(1, max |gradient|). */
double fd_trial(const fd_problem *p, gyro_rng *r, double h, double *scale, const char *name);

#endif

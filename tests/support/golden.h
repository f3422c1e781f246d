/* golden.h — the golden-vector files of ../shared/golden/ for the Check suites check_hyp_golden
 * and check_lorentz_golden: the parser, the per-case run context the handlers fill, the tensor
 * comparison and the whole Check suite (load, one loop test per case and precision, report).
 *
 * A file is a sequence of cases separated by blank lines; '#' lines are comments, and a
 * "# counts: total=N op=n ..." comment names the ops the file must have cases of:
 *     case <op> <id>
 *     tag <tag>[,<tag>...]
 *     param <name> <value>
 *     in|weight|out|grad <name> <nd> <d1> [<d2>] <values...>
 * A handler reads the inputs (and, when the case has weight lines, the weights of the backward
 * pass: the gradient of Σ weight ⊙ out), registers its outputs and input gradients by name with
 * golden_buf, and the suite compares them with the case's out and grad tensors.
 *
 * The error of a tensor is max_i |got_i − exp_i| / max_i |exp_i| (an all-zero expected tensor
 * must come out below 1e-12 absolute in float64, 1e-6 in float32). Tolerances: float64 1e-9;
 * float32 1e-4, 1e-2 for cases tagged f32_sensitive, 5e-2 for near_boundary (the reasons are
 * written at the top of check_hyp_golden.c). An op of the file that the suite's table lacks
 * fails, and so does an op of the header without a case. With GYRO_GOLDEN_REPORT=1 the suite
 * prints the largest error per op and precision.
 */
#ifndef GYRO_TESTS_GOLDEN_H
#define GYRO_TESTS_GOLDEN_H

#include <stddef.h>

#define GOLDEN_MAX_T 8                    /* tensors of one kind per case */
#define GOLDEN_NAME 48                    /* longest op, tensor and param name + 1 */
#define GOLDEN_MAX_BUF (4 * GOLDEN_MAX_T) /* buffers a handler may register */

typedef struct golden_tensor {
    char name[GOLDEN_NAME];
    int nd, d1, d2;
    size_t len;
    double *v; /* (len) */
    float *f;  /* (len) the same values rounded to float */
} golden_tensor;

typedef struct golden_case {
    char op[GOLDEN_NAME];
    int id, line;
    char tags[256];
    int np, nin, nw, nout, ngrad;
    char pname[GOLDEN_MAX_T][GOLDEN_NAME];
    double pval[GOLDEN_MAX_T];
    golden_tensor in[GOLDEN_MAX_T], w[GOLDEN_MAX_T], out[GOLDEN_MAX_T], grad[GOLDEN_MAX_T];
} golden_case;

enum { GOLDEN_OUT = 0, GOLDEN_GRAD = 1, GOLDEN_SCRATCH = 2 }; /* kinds of registered buffers */

/* What a handler sees of one case in one precision, and the buffers it registered. */
typedef struct golden_ctx {
    const golden_case *k;
    int f32;
    int nb;
    char bname[GOLDEN_MAX_BUF][GOLDEN_NAME];
    int bkind[GOLDEN_MAX_BUF];
    size_t blen[GOLDEN_MAX_BUF];
    void *buf[GOLDEN_MAX_BUF];
    char err[512]; /* why a handler returned -1 */
} golden_ctx;

/* Runs one case in one precision: 0, or -1 with cx->err set (a shape the op cannot take). */
typedef int (*golden_handler)(golden_ctx *cx);
typedef struct golden_op {
    const char *name;
    golden_handler f64, f32;
} golden_op;

typedef struct golden_suite {
    const char *name;         /* the Check suite */
    const char *env;          /* environment variable naming the file */
    const char *default_path; /* the file otherwise */
    const char *library;      /* what implements the ops, for messages ("models/hyp") */
    const golden_op *ops;
    int nops;
    int strict; /* 1: the file must have a counts header and every case an out line */
} golden_suite;

/* 1 when tag is one of the case's comma-separated tags. */
int golden_has_tag(const golden_case *k, const char *tag);

/* The param, input tensor or weight tensor `name` of the case; a missing one aborts the Check
 * test with a message naming the case. */
double golden_param(golden_ctx *cx, const char *name);
const golden_tensor *golden_in(golden_ctx *cx, const char *name);
const golden_tensor *golden_w(golden_ctx *cx, const char *name);

/* The values of input / weight `name` in float64, or in float32 (rounded once from the
 * file's float64 values). */
const double *golden_in_f64(golden_ctx *cx, const char *name);
const float *golden_in_f32(golden_ctx *cx, const char *name);
const double *golden_w_f64(golden_ctx *cx, const char *name);
const float *golden_w_f32(golden_ctx *cx, const char *name);

/* A zeroed buffer of len elements of esz bytes, registered under `name` as kind GOLDEN_OUT,
 * GOLDEN_GRAD or GOLDEN_SCRATCH; owned by the context (freed after the case). */
void *golden_buf(golden_ctx *cx, int kind, const char *name, size_t len, size_t esz);

/* Load the file, run the suite (test_file_loaded, test_report, then test_f64 and test_f32 over
 * every case) and free everything. Returns EXIT_SUCCESS or EXIT_FAILURE. */
int golden_main(const golden_suite *s);

#endif

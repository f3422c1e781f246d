/* reason_sudoku.c — Reason with environment "sudoku" (see reason_sudoku.h). */
#include "pipeline/reason_sudoku.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/hrm.h"
#include "models/layers/kernels.h"
#include "models/rl/sudoku.h"

/* The buffers of one handler thread, made on its first request. */
typedef struct sudoku_thread {
    gyro_hrm_acts *acts;  /* batch 1 */
    char *boards;         /* (m_max, 82) the board after each segment */
    double *qhalt;        /* (m_max) σ(Q_halt) of each segment */
    Gyro__V1__ReasonStep *steps;  /* (m_max) */
    Gyro__V1__ReasonStep **sp;    /* (m_max) */
} sudoku_thread;

struct gyro_reason_sudoku {
    gyro_hrm_model *m;    /* shared read-only */
    int n_threads;
    sudoku_thread *th;    /* (n_threads) */
    char version[96];
};

void gyro_reason_sudoku_free(gyro_reason_sudoku *r)
{
    if (!r) return;
    if (r->th)
        for (int t = 0; t < r->n_threads; t++) {
            gyro_hrm_acts_free(r->th[t].acts);
            free(r->th[t].boards);
            free(r->th[t].qhalt);
            free(r->th[t].steps);
            free(r->th[t].sp);
        }
    free(r->th);
    gyro_hrm_free(r->m);
    free(r);
}

gyro_status gyro_reason_sudoku_new(const char *path, int n_threads, gyro_reason_sudoku **out)
{
    *out = NULL;
    if (n_threads < 1) return gyro_error_set(GYRO_ERR_USAGE, "reason sudoku: %d threads", n_threads);
    gyro_reason_sudoku *r = calloc(1, sizeof *r);
    if (!r) return gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    r->n_threads = n_threads;
    r->th = calloc((size_t)n_threads, sizeof *r->th);
    if (!r->th) {
        gyro_reason_sudoku_free(r);
        return gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    }
    gyro_status st = gyro_hrm_load(path, &r->m);
    if (st != GYRO_OK) {
        gyro_reason_sudoku_free(r);
        return st;
    }
    const gyro_hrm_config *c = &r->m->cfg;
    if (c->n_cells != 81 || c->vocab != 10 || c->n_classes != 9) {
        gyro_reason_sudoku_free(r);
        return gyro_error_set(GYRO_ERR_FORMAT, "%s: not a Sudoku model (%d cells, %d symbols, %d classes)", path,
                              c->n_cells, c->vocab, c->n_classes);
    }
    snprintf(r->version, sizeof r->version, "hrm-sudoku-%s-C%d-N%dT%dM%d",
             c->geometry == GYRO_GEO_HYPERBOLIC ? "hyperbolic" : "euclidean", c->dim, c->n_low, c->n_high,
             c->m_max);
    *out = r;
    return GYRO_OK;
}

/* The thread's buffers, made on first use; NULL when out of memory. */
static sudoku_thread *thread_buffers(gyro_reason_sudoku *r, int t)
{
    sudoku_thread *s = &r->th[t];
    if (s->acts) return s;
    const size_t M = (size_t)r->m->cfg.m_max;
    s->boards = malloc(M * (GYRO_SUDOKU_CELLS + 1));
    s->qhalt = malloc(M * sizeof *s->qhalt);
    s->steps = malloc(M * sizeof *s->steps);
    s->sp = malloc(M * sizeof *s->sp);
    if (!s->boards || !s->qhalt || !s->steps || !s->sp || gyro_hrm_acts_new(r->m, 1, 0, 0, &s->acts) != GYRO_OK) {
        gyro_hrm_acts_free(s->acts);
        s->acts = NULL;
        return NULL;
    }
    return s;
}

typedef struct segment_ctx {
    const gyro_sudoku *puzzle;
    sudoku_thread *s;
    int segments;
} segment_ctx;

/* After every segment: the board (clues and the model's digits) and σ(Q_halt). */
static void on_segment(void *vctx, int segment, const int *idx, const int *pred, int B)
{
    segment_ctx *ctx = vctx;
    (void)idx;
    if (B < 1) return;
    gyro_sudoku b = *ctx->puzzle;
    for (int i = 0; i < GYRO_SUDOKU_CELLS; i++)
        if (!b.cell[i]) b.cell[i] = (uint8_t)(pred[i] + 1);
    gyro_sudoku_format(&b, ctx->s->boards + (size_t)(segment - 1) * (GYRO_SUDOKU_CELLS + 1));
    const float q = gyro_hrm_qlogits(ctx->s->acts)[0];
    ctx->s->qhalt[segment - 1] = 1.0 / (1.0 + exp(-(double)q));
    ctx->segments = segment;
}

int gyro_reason_sudoku_handle(gyro_reason_sudoku *r, int t, const Gyro__V1__ReasonRequest *rq,
                              gyro_rpc_reply *reply)
{
    if (!r)
        return gyro_rpc_reply_error(reply, GYRO_RPC_UNAVAILABLE,
                                    "no Sudoku model loaded (start gyro serve with --hrm-model)");
    const char *in = rq->input ? rq->input : "";
    gyro_sudoku pz, sol;
    if (gyro_sudoku_parse(in, strlen(in), &pz) != GYRO_OK)
        return gyro_rpc_reply_error(reply, GYRO_RPC_INVALID_ARGUMENT, "input: %s", gyro_error_message());
    if (gyro_sudoku_solve(&pz, 1, &sol, NULL) == 0)
        return gyro_rpc_reply_error(reply, GYRO_RPC_INVALID_ARGUMENT, "input: the puzzle has no solution");
    sudoku_thread *s = thread_buffers(r, t);
    if (!s) return gyro_rpc_reply_error(reply, GYRO_RPC_RESOURCE_EXHAUSTED, "out of memory");
    int32_t tok[GYRO_SUDOKU_CELLS];
    for (int i = 0; i < GYRO_SUDOKU_CELLS; i++) tok[i] = pz.cell[i];
    int pred[GYRO_SUDOKU_CELLS], segs = 0;
    segment_ctx ctx = {&pz, s, 0};
    gyro_status st = gyro_hrm_solve(r->m, s->acts, tok, 1, 1, pred, &segs, on_segment, &ctx);
    if (st != GYRO_OK) return gyro_rpc_reply_error(reply, gyro_rpc_code_from_status(st), "%s", gyro_error_message());
    char solution[GYRO_SUDOKU_CELLS + 1];
    gyro_sudoku_format(&sol, solution);
    double total = 0.0;
    for (int i = 0; i < ctx.segments; i++) {
        char *board = s->boards + (size_t)i * (GYRO_SUDOKU_CELLS + 1);
        gyro__v1__reason_step__init(&s->steps[i]);
        s->steps[i].index = (uint32_t)(i + 1);
        s->steps[i].action = "segment";
        s->steps[i].probability = s->qhalt[i];
        s->steps[i].reward = strcmp(board, solution) == 0 ? 1.0 : 0.0;
        s->steps[i].state = board;
        s->sp[i] = &s->steps[i];
        total = s->steps[i].reward;
    }
    Gyro__V1__ReasonResponse resp = GYRO__V1__REASON_RESPONSE__INIT;
    resp.n_steps = (size_t)ctx.segments;
    resp.steps = s->sp;
    resp.total_reward = total;
    resp.answer = ctx.segments ? s->boards + (size_t)(ctx.segments - 1) * (GYRO_SUDOKU_CELLS + 1) : "";
    resp.model_version = r->version;
    if (gyro_rpc_reply_send(reply, &resp.base) != GYRO_OK)
        return gyro_rpc_reply_error(reply, GYRO_RPC_RESOURCE_EXHAUSTED, "out of memory");
    return GYRO_RPC_OK;
}

/* char2vec.c — the skip-gram trainer: Hogwild workers, progress, checkpoints (see char2vec.h
 * for the design; the model and its set-up are c2v_model.c, the checkpoint file checkpoint.c,
 * the hyperbolic update models/hyp/lorentz_skipgram.h, the sigmoid tables and the Euclidean
 * twin embeddings/sgns.h). */
#include "embeddings/char2vec.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "embeddings/sgns.h"
#include "embeddings/sgns_batch.h"
#include "models/core/progress.h"
#include "models/hyp/lorentz.h"
#include "models/hyp/lorentz_skipgram.h"

#define READ_BUF 65536            /* ids read per pread */
#define PUBLISH_EVERY 10000       /* tokens between updates of the shared counters */

/* ---- training ---------------------------------------------------------------------------- */

typedef struct shared {
    gyro_c2v_model *m;
    const gyro_corpus *c;
    gyro_sgns_tables tab;
    uint64_t *keep;               /* (V) subsampling thresholds */
    uint32_t *neg;                /* negative table (the per-pair update) */
    uint32_t neg_mask;
    gyro_sgns_alias alias;        /* the same distribution as an alias table (the window update) */
    double total_words;           /* epochs * n_tokens (per rank: divided by the ranks) */
    _Atomic uint64_t words;       /* tokens processed, all epochs, all threads (of this rank) */
    uint64_t words_start;         /* `words` at the start of this run */
    int rank, nranks;             /* this process among the ranks (0 and 1 alone) */
    _Atomic int stop;             /* 1: stop request; 2: error */
    _Atomic int pause;
    pthread_mutex_t mu;
    pthread_cond_t cv_main, cv_work;
    int n_paused, n_done;
    int update;                   /* gyro_c2v_update of the run */
    int share;                    /* its share (gyro_c2v_run) */
    gyro_status err;
    char errmsg[1024];
} shared;

typedef struct worker {
    shared *sh;
    int id;                       /* thread of this rank */
    int gid;                      /* its state in m->ts: rank * threads + id */
    pthread_t th;
    float *h;                     /* (row) gradient of the centre */
    uint32_t *buf;                /* (READ_BUF) ids */
    uint32_t *sent;               /* (GYRO_C2V_MAX_SENTENCE) kept ids of a sentence */
    gyro_sgns_batch batch;        /* scratch of the window update (GYRO_C2V_UPDATE_BATCH) */
    uint32_t *ahead;              /* (negatives) the next group's negatives (window update) */
    _Atomic double loss;          /* published loss sum and pair count (owner writes) */
    _Atomic uint64_t pairs;
    char pad[64];
} worker;

static void worker_fail(shared *sh, gyro_status s, const char *msg)
{
    pthread_mutex_lock(&sh->mu);
    if (!sh->err) {
        sh->err = s;
        snprintf(sh->errmsg, sizeof sh->errmsg, "%s", msg);
    }
    atomic_store(&sh->stop, 2);
    pthread_cond_broadcast(&sh->cv_work);
    pthread_cond_broadcast(&sh->cv_main);
    pthread_mutex_unlock(&sh->mu);
}

static void worker_park(shared *sh)
{
    pthread_mutex_lock(&sh->mu);
    sh->n_paused++;
    pthread_cond_broadcast(&sh->cv_main);
    while (atomic_load(&sh->pause) && !atomic_load(&sh->stop)) pthread_cond_wait(&sh->cv_work, &sh->mu);
    sh->n_paused--;
    pthread_mutex_unlock(&sh->mu);
}

/* ---- one worker: read a sentence, subsample, schedule the rate, walk the pairs, update ---- *
 * As fastText's trainThread / skipgram / update: worker_main loops over sentences and handles
 * pauses; read_sentence fills `sent` (subsampled) from the shard; sentence_lr is the linear
 * decay; train_sentence walks the (centre, context) pairs of the dynamic window; train_pair does
 * one pair's positive and negative targets; the geometry branch (hyperboloid or Euclidean) sits
 * only in pair_score, target_step and centre_step. The random draws come in word2vec's order:
 * one per token that subsampling may drop, one window per centre, one per negative. */

/* The constants of a worker's updates (copied to the stack for each sentence). */
typedef struct sgns_step {
    const gyro_sgns_tables *tab;
    float *in, *out, *h;          /* (V, row) centre and context tables; (row) centre gradient */
    const uint32_t *neg;          /* negative table, neg_mask + 1 entries */
    uint32_t neg_mask;
    const gyro_sgns_alias *alias; /* its alias table */
    int row, window, nneg, hyp;
    int share;                    /* contexts sharing one draw of negatives (batch update, >= 1) */
    double theta, max_step;       /* shift of the score (0 in Euclidean space); clip of a step */
} sgns_step;

/* A worker's state between sentences. */
typedef struct wrun {
    worker *w;
    shared *sh;
    gyro_c2v_model *m;
    gyro_c2v_thread_state st;     /* epoch, position and rng of this thread (m->ts[id] when parked) */
    uint64_t begin, end;          /* the shard: ids [begin, end) of the encoded corpus */
    uint64_t buf_start;           /* corpus position of buf[0] */
    size_t cur, buf_len;          /* next id in buf, ids in buf */
    uint64_t unpublished, pairs;  /* tokens not yet added to sh->words; pairs trained */
    double loss;                  /* loss sum over the pairs */
    sgns_step k;                  /* the constants of its updates */
} wrun;

/* Add the unpublished tokens to the shared count and publish the loss and pair count. */
static void publish(wrun *r, memory_order mo)
{
    atomic_fetch_add_explicit(&r->sh->words, r->unpublished, mo);
    r->unpublished = 0;
    atomic_store_explicit(&r->w->loss, r->loss, mo);
    atomic_store_explicit(&r->w->pairs, r->pairs, mo);
}

/* Subsampling (word2vec): keep a token of id `id` with probability keep[id] / 2^32. One draw
 * unless the token is always kept. */
static inline int keep_token(wrun *r, uint32_t id)
{
    const uint64_t k = r->sh->keep[id];
    return k >= (1ULL << 32) || (gyro_rng_next(&r->st.rng) >> 32) < k;
}

/* Read one sentence into w->sent: the kept ids up to a document end, the sentence limit or the
 * shard end. Returns its length, or -1 after worker_fail (read error, corrupt id). */
static int read_sentence(wrun *r)
{
    shared *sh = r->sh;
    uint32_t *buf = r->w->buf, *sent = r->w->sent;
    const uint32_t V = (uint32_t)r->m->vocab.n;
    int len = 0;
    while (len < GYRO_C2V_MAX_SENTENCE) {
        uint64_t p = r->buf_start + r->cur;
        if (p >= r->end) break;
        if (r->cur == r->buf_len) {
            size_t want = r->end - p < READ_BUF ? (size_t)(r->end - p) : READ_BUF, got;
            gyro_status s = gyro_corpus_read(sh->c, p, buf, want, &got);
            if (s || got == 0) {
                worker_fail(sh, s ? s : GYRO_ERR_IO, s ? gyro_error_message() : "the encoded corpus ended early");
                return -1;
            }
            r->buf_start = p;
            r->cur = 0;
            r->buf_len = got;
        }
        uint32_t id = buf[r->cur++];
        if (id == GYRO_CORPUS_EOD) {
            if (len > 0) break;
            continue;
        }
        if (id >= V) {
            char msg[512];
            snprintf(msg, sizeof msg, "corrupt encoded corpus: id %u at position %llu, vocabulary "
                     "has %u entries", id, (unsigned long long)(p), V);
            worker_fail(sh, GYRO_ERR_DATA, msg);
            return -1;
        }
        r->unpublished++;
        if (keep_token(r, id)) sent[len++] = id;
    }
    return len;
}

/* The learning rate of the next sentence: lr0 (1 − done/total), at least lr0·1e-4, with done
 * the tokens of all threads so far. */
static double sentence_lr(const wrun *r)
{
    const double lr0 = r->m->opt.lr;
    uint64_t done = atomic_load_explicit(&r->sh->words, memory_order_relaxed) + r->unpublished;
    double lr = lr0 * (1.0 - (double)done / r->sh->total_words);
    return lr < lr0 * 1e-4 ? lr0 * 1e-4 : lr;
}

/* The score of a pair: ⟨u,v⟩_L on the hyperboloid, u·v in Euclidean space. */
static inline double pair_score(const sgns_step *k, const float *u, const float *v)
{
    return k->hyp ? gyro_lorentz_padded_inner_f32(u, v, k->row) : gyro_sgns_dot(u, v, k->row);
}

/* Step the target v for the loss gradient g (label − σ) and add its part of the centre's
 * gradient to h: the Riemannian step of lorentz_skipgram.h, or plain SGD. Returns 0, or 1 when
 * v overflowed. */
static inline int target_step(const sgns_step *k, float *v, const float *u, double s, double g, double lr)
{
    if (!k->hyp) {
        gyro_sgns_euc_target(k->h, v, u, g, lr, k->row);
        return 0;
    }
    float v0 = gyro_lorentz_skipgram_step_target_f32(k->h, v, u, s, g, lr, k->max_step, k->row);
    return !(v0 < 1e30f);
}

/* Step the centre u along its accumulated gradient h. Returns 0, or 1 when u overflowed. */
static inline int centre_step(const sgns_step *k, float *u, double lr)
{
    if (!k->hyp) {
        gyro_sgns_euc_centre(u, k->h, lr, k->row);
        return 0;
    }
    float u0 = gyro_lorentz_skipgram_step_centre_f32(u, k->h, lr, k->max_step, k->row);
    return !(u0 < 1e30f);
}

/* One (centre u, context ctx) pair: the positive target and nneg negatives drawn from the
 * table (a draw equal to ctx is skipped), then the centre's step; adds the pair's loss to
 * *loss. Returns 0, or 1 on a non-finite score or row. */
static inline int train_pair(const sgns_step *k, gyro_rng *rng, float *u, uint32_t ctx, double lr,
                             double *loss)
{
    memset(k->h, 0, (size_t)k->row * sizeof *k->h);
    for (int d = 0; d <= k->nneg; d++) {
        uint32_t t = ctx;
        int label = 1;
        if (d > 0) {
            t = k->neg[(uint32_t)(gyro_rng_next(rng) >> 32) & k->neg_mask];
            if (t == ctx) continue;
            label = 0;
        }
        float *v = k->out + (size_t)t * k->row;
        double s = pair_score(k, u, v);
        if (!(fabs(s) < 1e30)) return 1;
        double l;
        double g = label - gyro_sgns_sigmoid(k->tab, s + k->theta, label, &l);
        *loss += l;
        if (g == 0) continue;
        if (target_step(k, v, u, s, g, lr)) return 1;
    }
    return centre_step(k, u, lr);
}

/* Every centre of the sentence with the contexts of a window drawn from 1..window. Returns 0,
 * or 1 on a non-finite value. */
static int train_sentence(wrun *r, const uint32_t *sent, int len, double lr)
{
    const sgns_step k = r->k;
    gyro_rng rng = r->st.rng;
    double loss = r->loss;
    uint64_t pairs = r->pairs;
    int bad = 0;
    for (int i = 0; i < len && !bad; i++) {
        int wdw = 1 + (int)gyro_rng_below(&rng, (uint32_t)k.window);
        int j0 = i - wdw < 0 ? 0 : i - wdw, j1 = i + wdw >= len ? len - 1 : i + wdw;
        float *u = k.in + (size_t)sent[i] * k.row;
        for (int j = j0; j <= j1 && !bad; j++) {
            if (j == i) continue;
            bad = train_pair(&k, &rng, u, sent[j], lr, &loss);
            pairs += !bad;
        }
    }
    r->st.rng = rng;
    r->loss = loss;
    r->pairs = pairs;
    return bad;
}

/* Draw a group's negatives (the alias table: one random number each) into ids. */
static inline void draw_negatives(const sgns_step *k, gyro_rng *rng, uint32_t *ids)
{
    for (int d = 0; d < k->nneg; d++) ids[d] = gyro_sgns_alias_draw(k->alias, gyro_rng_next(rng));
}

/* Ask for the cache lines of a row (row floats) of a table. */
static inline void prefetch_row(const float *x, int row)
{
    for (int i = 0; i < row; i += 16) __builtin_prefetch(x + i);
}

/* The same pairs, window by window with shared negatives (sgns_batch.h): for centre i, its
 * contexts' rows of the centre table against the rows of i and of nneg negatives in the context
 * table — word2vec's and pWord2Vec's orientation, which visits the same (centre-table,
 * context-table) pairs in distribution as the per-pair loop. The contexts go in groups of
 * `share` consecutive ones (gyro_c2v_run.share resolved: 2 × window is all of it), each group with its own draw of
 * negatives (a draw equal to i skipped) and one window update. A group's negatives are drawn
 * while the group before it is gathered (the first of a sentence after its window), and their
 * rows and the next centre's are prefetched, so the rows a group reads, scattered over the
 * context table, are on their way to the cache while the group before computes; the draws stay
 * inside the sentence (a checkpoint sits between sentences). The random draws: one window per
 * centre, each group's negatives one group early. Returns 0, or 1 on a non-finite value. */
static int train_sentence_batch(wrun *r, const uint32_t *sent, int len, double lr)
{
    const sgns_step k = r->k;
    gyro_sgns_batch *b = &r->w->batch;
    uint32_t *ahead = r->w->ahead;
    gyro_rng rng = r->st.rng;
    double loss = r->loss;
    uint64_t pairs = r->pairs;
    const int share = k.share;
    int bad = 0, drawn = 0;
    for (int i = 0; i < len && !bad; i++) {
        int wdw = 1 + (int)gyro_rng_below(&rng, (uint32_t)k.window);
        int j0 = i - wdw < 0 ? 0 : i - wdw, j1 = i + wdw >= len ? len - 1 : i + wdw;
        int j = j0;
        float *pos = k.out + (size_t)sent[i] * k.row;
        while (j <= j1 && !bad) {
            gyro_sgns_batch_clear(b);
            int n = 0;
            for (; j <= j1 && n < share; j++)
                if (j != i) {
                    gyro_sgns_batch_add_u(b, k.in + (size_t)sent[j] * k.row);
                    n++;
                }
            if (n == 0) break; /* only i was left */
            if (!drawn) draw_negatives(&k, &rng, ahead);
            gyro_sgns_batch_add_v(b, pos);
            for (int d = 0; d < k.nneg; d++) gyro_sgns_batch_add_v(b, k.out + (size_t)ahead[d] * k.row);
            /* another group follows in this window (a context other than i is left) or in the
             * next one (centre i + 1 has i as a context) */
            drawn = (j <= j1 && !(j == i && i == j1)) || i + 1 < len;
            if (drawn) {
                draw_negatives(&k, &rng, ahead);
                for (int d = 0; d < k.nneg; d++) prefetch_row(k.out + (size_t)ahead[d] * k.row, k.row);
                if (i + 1 < len && j > j1) prefetch_row(k.out + (size_t)sent[i + 1] * k.row, k.row);
            }
            bad = gyro_sgns_batch_step(b, lr, &loss);
            if (!bad) pairs += (uint64_t)n;
        }
    }
    r->st.rng = rng;
    r->loss = loss;
    r->pairs = pairs;
    return bad;
}

/* Set up a worker's run from the model: its shard and the state saved for it (a position
 * outside the shard starts at its beginning). */
static void wrun_init(wrun *r, worker *w)
{
    shared *sh = w->sh;
    gyro_c2v_model *m = sh->m;
    *r = (wrun){.w = w, .sh = sh, .m = m, .st = m->ts[w->gid],
                .k = {.tab = &sh->tab, .in = m->in, .out = m->out, .h = w->h, .neg = sh->neg,
                      .neg_mask = sh->neg_mask, .alias = &sh->alias, .row = m->row, .window = m->opt.window,
                      .nneg = m->opt.negatives, .hyp = m->opt.geometry == GYRO_C2V_HYPERBOLIC,
                      .max_step = m->opt.max_step}};
    r->k.theta = r->k.hyp ? m->opt.theta : 0.0;
    gyro_c2v_shard(m, sh->rank, w->id, &r->begin, &r->end);
    r->k.share = sh->share;
    if (r->st.pos < r->begin || r->st.pos >= r->end) r->st.pos = r->begin;
    r->buf_start = r->st.pos;
}

static void *worker_main(void *arg)
{
    wrun r;
    wrun_init(&r, arg);
    shared *sh = r.sh;
    int failed = 0;
    while (!failed && r.st.epoch < (uint32_t)r.m->opt.epochs) {
        if (atomic_load_explicit(&sh->stop, memory_order_relaxed)) break;
        if (atomic_load_explicit(&sh->pause, memory_order_relaxed)) { /* a checkpoint */
            publish(&r, memory_order_seq_cst);
            r.st.pos = r.buf_start + r.cur;
            r.m->ts[r.w->gid] = r.st;
            worker_park(sh);
            continue;
        }
        int len = read_sentence(&r);
        if (len < 0) break;
        if ((sh->update == GYRO_C2V_UPDATE_BATCH ? train_sentence_batch : train_sentence)(&r, r.w->sent, len,
                                                                                      sentence_lr(&r))) {
            char msg[512];
            snprintf(msg, sizeof msg, "the loss became NaN or a vector overflowed (thread %d, epoch %u, "
                     "learning rate %.6g): try a lower --lr or --max-step", r.w->id, r.st.epoch + 1, r.m->opt.lr);
            worker_fail(sh, GYRO_ERR_NAN, msg);
            failed = 1;
        }
        if (!failed && r.buf_start + r.cur >= r.end) { /* end of this thread's shard: next epoch */
            r.st.epoch++;
            r.buf_start = r.begin;
            r.cur = r.buf_len = 0;
        }
        if (!failed && r.unpublished >= PUBLISH_EVERY) publish(&r, memory_order_relaxed);
    }
    publish(&r, memory_order_seq_cst);
    r.st.pos = r.buf_start + r.cur;
    if (atomic_load(&sh->stop) != 2) r.m->ts[r.w->gid] = r.st;
    pthread_mutex_lock(&sh->mu);
    sh->n_done++;
    pthread_cond_broadcast(&sh->cv_main);
    pthread_mutex_unlock(&sh->mu);
    return NULL;
}

/* Pause all workers at sentence boundaries (returns with sh->mu held); resume_workers lets
 * them go on. */
static void pause_workers(shared *sh)
{
    atomic_store(&sh->pause, 1);
    pthread_mutex_lock(&sh->mu);
    while (sh->n_paused + sh->n_done < sh->m->opt.threads && !atomic_load(&sh->stop))
        pthread_cond_wait(&sh->cv_main, &sh->mu);
}

static void resume_workers(shared *sh)
{
    atomic_store(&sh->pause, 0);
    pthread_cond_broadcast(&sh->cv_work);
    pthread_mutex_unlock(&sh->mu);
}

/* Pause all workers at sentence boundaries, write the checkpoint, resume them. */
static gyro_status checkpoint_now(shared *sh, const char *path)
{
    gyro_c2v_model *m = sh->m;
    pause_workers(sh);
    gyro_status s = GYRO_OK;
    if (!atomic_load(&sh->stop) || atomic_load(&sh->stop) == 1) {
        m->words_done = atomic_load(&sh->words);
        s = gyro_c2v_checkpoint_save(m, path);
    }
    resume_workers(sh);
    return s;
}

/* ---- the main thread: set-up, progress and checkpoints, the end of a run ------------------- */

/* The loss shown on the progress line: the mean loss per pair over the pairs trained since the
 * last update that saw more than `min_new` new pairs. */
typedef struct loss_window {
    double last_loss, shown;
    uint64_t last_pairs;
} loss_window;

static void loss_window_update(loss_window *lw, worker *ws, int T, uint64_t min_new)
{
    double loss = 0;
    uint64_t pairs = 0;
    for (int t = 0; t < T; t++) {
        loss += atomic_load(&ws[t].loss);
        pairs += atomic_load(&ws[t].pairs);
    }
    if (pairs > lw->last_pairs + min_new) {
        lw->shown = (loss - lw->last_loss) / (double)(pairs - lw->last_pairs);
        lw->last_loss = loss;
        lw->last_pairs = pairs;
    }
}

/* Allocate the shared state (subsampling thresholds, negative table, locks) and T workers with
 * their buffers into *out_sh and *out_ws. On NOMEM before the locks exist both are NULL; after
 * that, an error leaves them for train_free. */
static gyro_status train_setup(gyro_c2v_model *m, const gyro_corpus *c, const gyro_sync *sync,
                               shared **out_sh, worker **out_ws)
{
    const int T = m->opt.threads;
    shared *sh = calloc(1, sizeof *sh);
    worker *ws = aligned_alloc(64, ((sizeof(worker) * (size_t)T + 63) / 64) * 64);
    *out_sh = NULL;
    *out_ws = NULL;
    if (!sh || !ws) {
        free(sh); free(ws);
        return gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    }
    memset(ws, 0, sizeof(worker) * (size_t)T);
    *out_sh = sh;
    *out_ws = ws;
    sh->m = m;
    sh->c = c;
    gyro_sgns_tables_init(&sh->tab);
    sh->rank = gyro_sync_active(sync) ? sync->rank : 0;
    sh->nranks = gyro_sync_active(sync) ? sync->size : 1;
    /* each rank schedules its learning rate over its share of the tokens (the ranges are equal) */
    sh->total_words = (double)m->opt.epochs * (double)m->n_tokens / sh->nranks;
    sh->words_start = m->words_done / (uint64_t)sh->nranks;
    atomic_store(&sh->words, sh->words_start);
    pthread_mutex_init(&sh->mu, NULL);
    pthread_cond_init(&sh->cv_main, NULL);
    pthread_cond_init(&sh->cv_work, NULL);
    gyro_status s = GYRO_OK;
    uint32_t neg_size = 0;
    sh->keep = malloc((size_t)m->vocab.n * sizeof *sh->keep);
    if (!sh->keep) s = gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    if (!s) {
        gyro_vocab_keep_thresholds(&m->vocab, m->opt.sample, m->n_tokens, sh->keep);
        s = gyro_vocab_negative_table(&m->vocab, m->opt.neg_power, &sh->neg, &neg_size);
        sh->neg_mask = neg_size - 1;
    }
    if (!s) s = gyro_sgns_alias_init(&sh->alias, sh->neg, neg_size, (uint32_t)m->vocab.n);
    for (int t = 0; t < T && !s; t++) {
        ws[t].sh = sh;
        ws[t].id = t;
        ws[t].gid = sh->rank * T + t;
        ws[t].h = gyro_c2v_rows_alloc(1, m->row);
        ws[t].buf = malloc(READ_BUF * sizeof *ws[t].buf);
        ws[t].sent = malloc(GYRO_C2V_MAX_SENTENCE * sizeof *ws[t].sent);
        ws[t].ahead = malloc((size_t)(m->opt.negatives > 0 ? m->opt.negatives : 1) * sizeof *ws[t].ahead);
        if (!ws[t].h || !ws[t].buf || !ws[t].sent || !ws[t].ahead) s = gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
        if (!s) s = gyro_sgns_batch_init(&ws[t].batch, &sh->tab, 2 * m->opt.window, 1 + m->opt.negatives, m->row,
                                         m->opt.geometry == GYRO_C2V_HYPERBOLIC, m->opt.theta, m->opt.max_step);
    }
    return s;
}

static void train_free(shared *sh, worker *ws, int T)
{
    for (int t = 0; t < T; t++) {
        free(ws[t].h);
        free(ws[t].buf);
        free(ws[t].sent);
        free(ws[t].ahead);
        gyro_sgns_batch_free(&ws[t].batch);
    }
    free(ws);
    free(sh->keep);
    free(sh->neg);
    gyro_sgns_alias_free(&sh->alias);
    pthread_mutex_destroy(&sh->mu);
    pthread_cond_destroy(&sh->cv_main);
    pthread_cond_destroy(&sh->cv_work);
    free(sh);
}

/* What the main thread keeps while the workers run. */
typedef struct monitor {
    const gyro_c2v_run *run;
    gyro_progress prog;
    double t0;              /* start of this run (gyro_now) */
    uint64_t words0;        /* tokens done before this run */
    loss_window lw;
    int started;            /* workers started */
} monitor;

/* One look of the main thread at the workers: done, the clock, the tokens, the progress line's
 * figures. */
typedef struct monitor_tick {
    int all_done;           /* every started worker has finished */
    double now;             /* gyro_now() after the wait */
    uint64_t words;         /* tokens trained so far (this rank) */
    double frac, rate, lr;  /* fraction done, tokens/s/thread of this run, current learning rate */
} monitor_tick;

/* Wait until a worker finishes or poll_ns have passed, then fill *k and update the loss window. */
static void monitor_wait(shared *sh, worker *ws, monitor *mo, long poll_ns, monitor_tick *k)
{
    const gyro_c2v_model *m = sh->m;
    const int T = m->opt.threads;
    pthread_mutex_lock(&sh->mu);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += poll_ns;
    if (ts.tv_nsec >= 1000000000L) { ts.tv_sec++; ts.tv_nsec -= 1000000000L; }
    if (sh->n_done < mo->started) pthread_cond_timedwait(&sh->cv_main, &sh->mu, &ts);
    k->all_done = sh->n_done == mo->started;
    pthread_mutex_unlock(&sh->mu);
    k->now = gyro_now();
    k->words = atomic_load(&sh->words);
    k->frac = (double)k->words / sh->total_words;
    k->rate = (double)(k->words - mo->words0) / ((k->now - mo->t0) * T + 1e-9);
    loss_window_update(&mo->lw, ws, T, 1000);
    k->lr = m->opt.lr * (1.0 - k->frac);
    if (k->lr < m->opt.lr * 1e-4) k->lr = m->opt.lr * 1e-4;
}

/* The progress line from a tick. */
static void monitor_show(monitor *mo, const monitor_tick *k)
{
    gyro_progress_update(&mo->prog, k->frac > 1 ? 1 : k->frac, k->rate, k->lr, mo->lw.shown, 0);
}

/* Start the workers; on a failure the ones started are told to stop (mo->started counts them). */
static gyro_status start_workers(shared *sh, worker *ws, int T, monitor *mo)
{
    for (int t = 0; t < T; t++) {
        if (pthread_create(&ws[t].th, NULL, worker_main, &ws[t]) != 0) {
            atomic_store(&sh->stop, 2);
            return gyro_error_set(GYRO_ERR_INTERNAL, "cannot start thread %d", t);
        }
        mo->started++;
    }
    return GYRO_OK;
}

/* Until the workers are done: the progress line every 0.1 s, a checkpoint every
 * run->checkpoint_every seconds, and a stop request (*interrupted = 1). Returns a checkpoint's
 * error (the workers are then told to stop). */
static gyro_status monitor_workers(shared *sh, worker *ws, monitor *mo, gyro_c2v_report *report,
                                   int *interrupted)
{
    const gyro_c2v_run *run = mo->run;
    double last_ckpt = mo->t0;
    for (;;) {
        if (run->stop && *run->stop) {
            *interrupted = 1;
            atomic_store(&sh->stop, 1);
            return GYRO_OK;
        }
        monitor_tick k;
        monitor_wait(sh, ws, mo, 100000000L, &k);
        if (k.all_done || atomic_load(&sh->stop)) return GYRO_OK;
        monitor_show(mo, &k);
        const double now = k.now;
        if (run->checkpoint_path && run->checkpoint_every > 0 && now - last_ckpt >= run->checkpoint_every) {
            gyro_status s = checkpoint_now(sh, run->checkpoint_path);
            if (s) {
                atomic_store(&sh->stop, 2);
                return s;
            }
            report->checkpoints++;
            last_ckpt = gyro_now();
        }
    }
}

/* ---- several ranks: the main thread's loop with combinations ------------------------------ */

/* The status words of a combination round (all-reduced with MAX on every rank). */
enum { ROUND_ERR, ROUND_STOP, ROUND_RUNNING, ROUND_CKPT, ROUND_FAILED_RANK, ROUND_N };

/* Until every rank is done: the progress line, and every run->sync_every seconds or
 * run->sync_tokens tokens of this rank (at once when
 * this rank is done, failed or asked to stop) a round: all-reduce the status words (the workers
 * still training), then pause the workers and all-reduce the token count; as every rank sees
 * the same words, the same decision on every rank: a failure (every rank stops with the
 * failing rank's status, before pausing), a stop request
 * (*interrupted), the end (every rank done), or a combination of the tables followed by a
 * checkpoint when rank 0's clock says one is due. The end and a stop leave the last
 * combination to gyro_c2v_train after the workers have joined. *global_words receives the
 * tokens of all ranks over all runs at the last round. */
static gyro_status monitor_ranks(shared *sh, worker *ws, monitor *mo, gyro_c2v_sync *cs,
                                 gyro_c2v_report *report, int *interrupted, uint64_t *global_words)
{
    const gyro_c2v_run *run = mo->run;
    const gyro_sync *sy = run->sync;
    gyro_c2v_model *m = sh->m;
    const double every = run->sync_every > 0 ? run->sync_every : 1.0;
    const uint64_t words_before = m->words_done;   /* all ranks, before this run */
    double last_sync = mo->t0, last_ckpt = mo->t0;
    uint64_t words_at_sync = atomic_load(&sh->words);
    /* how often the token count or the clock is looked at: a token-based combination is not
     * late by more than 10 ms of training, a time-based one by a quarter of its interval */
    double poll = run->sync_tokens ? 0.01 : every / 4;
    if (poll > 0.1) poll = 0.1;
    const long poll_ns = (long)(poll * 1e9);
    for (;;) {
        monitor_tick k;
        monitor_wait(sh, ws, mo, poll_ns, &k);
        const int all_done = k.all_done;
        const double now = k.now;
        const uint64_t words = k.words;
        int failed = atomic_load(&sh->stop) == 2, stop_req = run->stop && *run->stop;
        if (!all_done && !failed) monitor_show(mo, &k);
        /* a rank that is done, failed or asked to stop waits in the round for the others */
        int due = run->sync_tokens ? words - words_at_sync >= run->sync_tokens : now - last_sync >= every;
        if (!all_done && !failed && !stop_req && !due) continue;

        /* the status first, while this rank's threads go on training: a rank that arrives early
         * waits here without holding its own threads back */
        uint64_t st[ROUND_N] = {0};
        st[ROUND_ERR] = failed ? (uint64_t)(sh->err ? sh->err : GYRO_ERR_INTERNAL) : 0;
        st[ROUND_FAILED_RANK] = failed ? (uint64_t)sh->rank + 1 : 0;
        st[ROUND_STOP] = (uint64_t)stop_req;
        st[ROUND_RUNNING] = (uint64_t)(!all_done && !failed);
        st[ROUND_CKPT] = sh->rank == 0 && run->checkpoint_path && run->checkpoint_every > 0 &&
                         now - last_ckpt >= run->checkpoint_every;
        gyro_status s = gyro_sync_allreduce(sy, st, ROUND_N, GYRO_SYNC_U64, GYRO_SYNC_MAX);
        if (s) {                             /* the transport failed: a rank is gone */
            atomic_store(&sh->stop, 2);
            report->alone = 1;
            return s;
        }
        if (st[ROUND_ERR]) {                 /* every rank stops with the failing rank's status */
            atomic_store(&sh->stop, 2);
            if (failed) return GYRO_OK;      /* ours: train_finish returns it with its message */
            return gyro_error_set((gyro_status)st[ROUND_ERR], "stopped: rank %d of %d failed (%s; its message "
                                  "says why)", (int)st[ROUND_FAILED_RANK] - 1, sh->nranks,
                                  gyro_status_name((gyro_status)st[ROUND_ERR]));
        }
        /* then every rank pauses its threads and counts the tokens they trained */
        pause_workers(sh);
        uint64_t done = atomic_load(&sh->words) - sh->words_start;
        s = gyro_sync_allreduce(sy, &done, 1, GYRO_SYNC_U64, GYRO_SYNC_SUM);
        if (s) {
            atomic_store(&sh->stop, 2);
            report->alone = 1;
            resume_workers(sh);
            return s;
        }
        *global_words = words_before + done;
        if (st[ROUND_STOP]) {
            *interrupted = 1;
            atomic_store(&sh->stop, 1);
            resume_workers(sh);
            return GYRO_OK;
        }
        if (!st[ROUND_RUNNING]) {            /* every rank has finished its epochs */
            resume_workers(sh);
            return GYRO_OK;
        }
        s = gyro_c2v_sync_tables(cs, m);
        if (!s && st[ROUND_CKPT]) s = gyro_c2v_sync_states(sy, m);
        if (s) {
            atomic_store(&sh->stop, 2);
            report->alone = 1;
            resume_workers(sh);
            return s;
        }
        if (st[ROUND_CKPT] && sh->rank == 0) {
            m->words_done = *global_words;
            s = gyro_c2v_checkpoint_save(m, run->checkpoint_path);
            if (s) {                         /* the other ranks learn it at the next round */
                char msg[1024];
                snprintf(msg, sizeof msg, "%s", gyro_error_message());
                pthread_mutex_unlock(&sh->mu);
                worker_fail(sh, s, msg);
                pthread_mutex_lock(&sh->mu);
            } else {
                report->checkpoints++;
            }
        }
        words_at_sync = atomic_load(&sh->words);
        resume_workers(sh);
        last_sync = gyro_now();
        if (st[ROUND_CKPT]) last_ckpt = last_sync;
    }
}

/* After the Hogwild phase: put every row of both tables back on the hyperboloid; returns the
 * largest |<x,x>_L + 1| left. */
static double reproject_tables(gyro_c2v_model *m)
{
    double worst = 0;
    for (int i = 0; i < m->vocab.n; i++) {
        float *rows[2] = {m->in + (size_t)i * m->row, m->out + (size_t)i * m->row};
        for (int k = 0; k < 2; k++) {
            float *x = rows[k];
            gyro_lorentz_reproject_rounded_f32(x, m->opt.dim); /* ~1e-10 off, not ~1e-5 */
            double q = -(double)x[0] * x[0];
            for (int j = 1; j < m->width; j++) q += (double)x[j] * x[j];
            double e = fabs(q + 1.0);
            if (e > worst) worst = e;
        }
    }
    return worst;
}

/* The end of a run whose workers have joined: the model's counters, the report, the workers'
 * error and the last progress line. Returns s, or the workers' error. */
static gyro_status train_finish(shared *sh, worker *ws, monitor *mo, gyro_c2v_report *report, gyro_status s)
{
    gyro_c2v_model *m = sh->m;
    const int T = m->opt.threads;
    double elapsed = gyro_now() - mo->t0;
    uint64_t words = atomic_load(&sh->words);
    m->words_done = words;
    m->seconds += elapsed;
    loss_window_update(&mo->lw, ws, T, 0);
    report->seconds = elapsed;
    report->words = words - mo->words0;
    report->rate = (double)report->words / (elapsed * T + 1e-9);
    report->loss = mo->lw.shown;
    if (!s && sh->err) s = gyro_error_set(sh->err, "%s", sh->errmsg);
    if (!s) {
        double frac = (double)words / sh->total_words;
        gyro_progress_finish(&mo->prog, frac > 1 ? 1 : frac, report->rate, m->opt.lr * (1.0 - (frac > 1 ? 1 : frac)),
                             mo->lw.shown);
    }
    return s;
}

/* After a stop request: the checkpoint (when the run names one) and GYRO_ERR_INTERRUPTED, or
 * the checkpoint's error. */
static gyro_status train_interrupted(shared *sh, const gyro_c2v_run *run, gyro_c2v_report *report)
{
    if (!run->checkpoint_path) return gyro_error_set(GYRO_ERR_INTERRUPTED, "interrupted");
    gyro_status s = gyro_c2v_checkpoint_save(sh->m, run->checkpoint_path);
    if (s) return s;
    report->checkpoints++;
    return gyro_error_set(GYRO_ERR_INTERRUPTED, "interrupted at %.1f%%: checkpoint written to %s (continue "
                          "with --resume)", 100.0 * (double)sh->m->words_done /
                          ((double)sh->m->opt.epochs * (double)sh->m->n_tokens),
                          run->checkpoint_path);
}

/* CPU seconds of this process so far (user + system, all threads); 0 without the clock. */
static double process_cpu(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0) return 0;
    return (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_sec +
           1e-6 * (double)ru.ru_stime.tv_usec;
}

gyro_status gyro_c2v_train(gyro_c2v_model *m, const gyro_corpus *c, const gyro_c2v_run *run,
                           gyro_c2v_report *report)
{
    gyro_c2v_run defaults = {0};
    if (!run) run = &defaults;
    gyro_c2v_report rep_local;
    if (!report) report = &rep_local;
    memset(report, 0, sizeof *report);
    if (c->vocab_size != (uint32_t)m->vocab.n || c->fingerprint != gyro_vocab_fingerprint(&m->vocab) ||
        c->n_ids != m->n_ids)
        return gyro_error_set(GYRO_ERR_FORMAT, "the encoded corpus does not belong to this model "
                              "(vocabulary or size differ)");
    const int T = m->opt.threads;
    const gyro_sync *sy = gyro_sync_active(run->sync) ? run->sync : NULL;
    if (sy) {
        if (m->ranks != sy->size)
            return gyro_error_set(GYRO_ERR_USAGE, "the model is split over %d rank%s but %d are running%s",
                                  m->ranks, m->ranks == 1 ? "" : "s", sy->size,
                                  m->words_done ? ": resume with as many ranks as the run started with "
                                                  "(mpirun -np N)" : "");
        gyro_status s = gyro_sync_check_same(sy, gyro_c2v_model_hash(m), "the model to train (options, "
                                             "vocabulary, tables or progress)");
        if (s) return s;
    } else if (m->ranks != 1) {
        return gyro_error_set(GYRO_ERR_USAGE, "the model is split over %d ranks: resume it with mpirun -np %d",
                              m->ranks, m->ranks);
    }
    shared *sh;
    worker *ws;
    gyro_status s = train_setup(m, c, sy, &sh, &ws);
    if (!sh) return s;
    gyro_c2v_sync cs = {0};
    if (!s && sy) s = gyro_c2v_sync_init(&cs, sy, run->combine, m);
    sh->update = run->update;
    sh->share = run->share == 0 ? GYRO_C2V_SHARE_DEFAULT : run->share;
    if (sh->share < 0 || sh->share > 2 * m->opt.window) sh->share = 2 * m->opt.window;
    monitor mo = {.run = run, .lw = {.shown = NAN}};
    gyro_progress_init(&mo.prog, "chars/sec/thread", run->quiet);
    const double cpu0 = process_cpu();
    mo.t0 = gyro_now();
    mo.words0 = sh->words_start;
    int interrupted = 0;
    uint64_t global_words = m->words_done;
    if (!s) s = start_workers(sh, ws, T, &mo);
    if (!s && sy) s = monitor_ranks(sh, ws, &mo, &cs, report, &interrupted, &global_words);
    else if (!s) s = monitor_workers(sh, ws, &mo, report, &interrupted);
    for (int t = 0; t < mo.started; t++) pthread_join(ws[t].th, NULL);
    if (sy && !s && !report->alone && !sh->err) {
        /* the end or a stop, agreed by every rank: the last combination and the thread states */
        s = gyro_c2v_sync_tables(&cs, m);
        if (!s) s = gyro_c2v_sync_states(sy, m);
        if (s) report->alone = 1;
    }
    s = train_finish(sh, ws, &mo, report, s);
    if (sy) {
        m->words_done = global_words;
        report->sync_rounds = cs.rounds;
        report->sync_seconds = cs.seconds;
        report->sync_bytes = 2 * (uint64_t)m->vocab.n * (uint64_t)(m->width + 1) * sizeof(float);
    }
    if (!s && m->opt.geometry == GYRO_C2V_HYPERBOLIC) report->manifold_error = reproject_tables(m);
    report->cpu_seconds = process_cpu() - cpu0;
    if (!s && interrupted) {
        if (sh->rank == 0) s = train_interrupted(sh, run, report);
        else s = gyro_error_set(GYRO_ERR_INTERRUPTED, "interrupted (rank 0 writes the checkpoint)");
    }
    if (!mo.prog.quiet && mo.prog.is_tty && s) fputc('\n', stderr);
    gyro_c2v_sync_free(&cs);
    train_free(sh, ws, T);
    return s;
}

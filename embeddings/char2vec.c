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
#include <time.h>

#include "embeddings/sgns.h"
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
    uint32_t *neg;                /* negative table */
    uint32_t neg_mask;
    double total_words;           /* epochs * n_tokens */
    _Atomic uint64_t words;       /* tokens processed, all epochs, all threads */
    _Atomic int stop;             /* 1: stop request; 2: error */
    _Atomic int pause;
    pthread_mutex_t mu;
    pthread_cond_t cv_main, cv_work;
    int n_paused, n_done;
    gyro_status err;
    char errmsg[1024];
} shared;

typedef struct worker {
    shared *sh;
    int id;
    pthread_t th;
    float *h;                     /* (row) gradient of the centre */
    uint32_t *buf;                /* (READ_BUF) ids */
    uint32_t *sent;               /* (GYRO_C2V_MAX_SENTENCE) kept ids of a sentence */
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

static void *worker_main(void *arg)
{
    worker *w = arg;
    shared *sh = w->sh;
    gyro_c2v_model *m = sh->m;
    const int T = m->opt.threads, row = m->row, window = m->opt.window, nneg = m->opt.negatives;
    const int hyp = m->opt.geometry == GYRO_C2V_HYPERBOLIC, epochs = m->opt.epochs;
    const uint32_t V = (uint32_t)m->vocab.n, mask = sh->neg_mask;
    const double theta = hyp ? m->opt.theta : 0.0, max_step = m->opt.max_step, lr0 = m->opt.lr;
    const uint64_t begin = m->n_ids * (uint64_t)w->id / (uint64_t)T;
    const uint64_t end = m->n_ids * (uint64_t)(w->id + 1) / (uint64_t)T;
    float *in = m->in, *out = m->out, *h = w->h;
    uint32_t *buf = w->buf, *sent = w->sent;
    const uint64_t *keep = sh->keep;
    const uint32_t *negt = sh->neg;
    gyro_c2v_thread_state st = m->ts[w->id];
    if (st.pos < begin || st.pos >= end) st.pos = begin;
    uint64_t buf_start = st.pos;
    size_t cur = 0, buf_len = 0;
    uint64_t unpublished = 0, pairs = 0;
    double loss = 0;
    char msg[512];

    while (st.epoch < (uint32_t)epochs) {
        if (atomic_load_explicit(&sh->stop, memory_order_relaxed)) break;
        if (atomic_load_explicit(&sh->pause, memory_order_relaxed)) {
            atomic_fetch_add(&sh->words, unpublished);
            unpublished = 0;
            atomic_store(&w->loss, loss);
            atomic_store(&w->pairs, pairs);
            st.pos = buf_start + cur;
            m->ts[w->id] = st;
            worker_park(sh);
            continue;
        }
        /* read one sentence: up to a document end, the sentence limit or the shard end */
        int len = 0;
        while (len < GYRO_C2V_MAX_SENTENCE) {
            uint64_t p = buf_start + cur;
            if (p >= end) break;
            if (cur == buf_len) {
                size_t want = end - p < READ_BUF ? (size_t)(end - p) : READ_BUF, got;
                gyro_status s = gyro_corpus_read(sh->c, p, buf, want, &got);
                if (s || got == 0) {
                    worker_fail(sh, s ? s : GYRO_ERR_IO, s ? gyro_error_message()
                                                          : "the encoded corpus ended early");
                    goto out;
                }
                buf_start = p;
                cur = 0;
                buf_len = got;
            }
            uint32_t id = buf[cur++];
            if (id == GYRO_CORPUS_EOD) {
                if (len > 0) break;
                continue;
            }
            if (id >= V) {
                snprintf(msg, sizeof msg, "corrupt encoded corpus: id %u at position %llu, vocabulary "
                         "has %u entries", id, (unsigned long long)(p), V);
                worker_fail(sh, GYRO_ERR_DATA, msg);
                goto out;
            }
            unpublished++;
            if (keep[id] < (1ULL << 32) && (gyro_rng_next(&st.rng) >> 32) >= keep[id]) continue;
            sent[len++] = id;
        }
        uint64_t done = atomic_load_explicit(&sh->words, memory_order_relaxed) + unpublished;
        double lr = lr0 * (1.0 - (double)done / sh->total_words);
        if (lr < lr0 * 1e-4) lr = lr0 * 1e-4;

        for (int i = 0; i < len; i++) {
            int wdw = 1 + (int)gyro_rng_below(&st.rng, (uint32_t)window);
            int j0 = i - wdw < 0 ? 0 : i - wdw, j1 = i + wdw >= len ? len - 1 : i + wdw;
            float *u = in + (size_t)sent[i] * row;
            for (int j = j0; j <= j1; j++) {
                if (j == i) continue;
                uint32_t ctx = sent[j];
                memset(h, 0, (size_t)row * sizeof *h);
                for (int d = 0; d <= nneg; d++) {
                    uint32_t t;
                    int label;
                    if (d == 0) {
                        t = ctx;
                        label = 1;
                    } else {
                        t = negt[(uint32_t)(gyro_rng_next(&st.rng) >> 32) & mask];
                        if (t == ctx) continue;
                        label = 0;
                    }
                    float *v = out + (size_t)t * row;
                    double s = hyp ? gyro_lorentz_padded_inner_f32(u, v, row)
                                   : gyro_sgns_dot(u, v, row);
                    if (!(fabs(s) < 1e30)) goto nan;
                    double l;
                    double g = label - gyro_sgns_sigmoid(&sh->tab, s + theta, label, &l);
                    loss += l;
                    if (g == 0) continue;
                    if (hyp) {
                        float v0 = gyro_lorentz_skipgram_step_target_f32(h, v, u, s, g, lr,
                                                                         max_step, row);
                        if (!(v0 < 1e30f)) goto nan;
                    } else {
                        gyro_sgns_euc_target(h, v, u, g, lr, row);
                    }
                }
                if (hyp) {
                    float u0 = gyro_lorentz_skipgram_step_centre_f32(u, h, lr, max_step, row);
                    if (!(u0 < 1e30f)) goto nan;
                } else {
                    gyro_sgns_euc_centre(u, h, lr, row);
                }
                pairs++;
            }
        }
        if (buf_start + cur >= end) { /* end of this thread's shard: next epoch */
            st.epoch++;
            buf_start = begin;
            cur = buf_len = 0;
        }
        if (unpublished >= PUBLISH_EVERY) {
            atomic_fetch_add_explicit(&sh->words, unpublished, memory_order_relaxed);
            unpublished = 0;
            atomic_store_explicit(&w->loss, loss, memory_order_relaxed);
            atomic_store_explicit(&w->pairs, pairs, memory_order_relaxed);
        }
    }
    goto out;
nan:
    snprintf(msg, sizeof msg, "the loss became NaN or a vector overflowed (thread %d, epoch %u, "
             "learning rate %.6g): try a lower --lr or --max-step", w->id, st.epoch + 1, lr0);
    worker_fail(sh, GYRO_ERR_NAN, msg);
out:
    atomic_fetch_add(&sh->words, unpublished);
    atomic_store(&w->loss, loss);
    atomic_store(&w->pairs, pairs);
    st.pos = buf_start + cur;
    if (atomic_load(&sh->stop) != 2) m->ts[w->id] = st;
    pthread_mutex_lock(&sh->mu);
    sh->n_done++;
    pthread_cond_broadcast(&sh->cv_main);
    pthread_mutex_unlock(&sh->mu);
    return NULL;
}

/* Pause all workers at sentence boundaries, write the checkpoint, resume them. */
static gyro_status checkpoint_now(shared *sh, const char *path)
{
    gyro_c2v_model *m = sh->m;
    atomic_store(&sh->pause, 1);
    pthread_mutex_lock(&sh->mu);
    while (sh->n_paused + sh->n_done < m->opt.threads && !atomic_load(&sh->stop))
        pthread_cond_wait(&sh->cv_main, &sh->mu);
    gyro_status s = GYRO_OK;
    if (!atomic_load(&sh->stop) || atomic_load(&sh->stop) == 1) {
        m->words_done = atomic_load(&sh->words);
        s = gyro_c2v_checkpoint_save(m, path);
    }
    atomic_store(&sh->pause, 0);
    pthread_cond_broadcast(&sh->cv_work);
    pthread_mutex_unlock(&sh->mu);
    return s;
}

static void sum_loss(worker *ws, int T, double *loss, uint64_t *pairs)
{
    *loss = 0;
    *pairs = 0;
    for (int t = 0; t < T; t++) {
        *loss += atomic_load(&ws[t].loss);
        *pairs += atomic_load(&ws[t].pairs);
    }
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
    shared *sh = calloc(1, sizeof *sh);
    worker *ws = aligned_alloc(64, ((sizeof(worker) * (size_t)T + 63) / 64) * 64);
    if (!sh || !ws) {
        free(sh); free(ws);
        return gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    }
    memset(ws, 0, sizeof(worker) * (size_t)T);
    sh->m = m;
    sh->c = c;
    gyro_sgns_tables_init(&sh->tab);
    sh->total_words = (double)m->opt.epochs * (double)m->n_tokens;
    atomic_store(&sh->words, m->words_done);
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
    int started = 0;
    for (int t = 0; t < T && !s; t++) {
        ws[t].sh = sh;
        ws[t].id = t;
        ws[t].h = gyro_c2v_rows_alloc(1, m->row);
        ws[t].buf = malloc(READ_BUF * sizeof *ws[t].buf);
        ws[t].sent = malloc(GYRO_C2V_MAX_SENTENCE * sizeof *ws[t].sent);
        if (!ws[t].h || !ws[t].buf || !ws[t].sent) s = gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    }
    gyro_progress prog;
    gyro_progress_init(&prog, "chars/sec/thread", run->quiet);
    double t0 = gyro_now(), last_ckpt = t0;
    uint64_t words0 = m->words_done;
    double last_loss = 0, shown_loss = NAN;
    uint64_t last_pairs = 0;
    for (int t = 0; t < T && !s; t++) {
        if (pthread_create(&ws[t].th, NULL, worker_main, &ws[t]) != 0) {
            s = gyro_error_set(GYRO_ERR_INTERNAL, "cannot start thread %d", t);
            atomic_store(&sh->stop, 2);
            break;
        }
        started++;
    }
    int interrupted = 0;
    while (!s) {
        if (run->stop && *run->stop) {
            interrupted = 1;
            atomic_store(&sh->stop, 1);
            break;
        }
        pthread_mutex_lock(&sh->mu);
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 100000000L;
        if (ts.tv_nsec >= 1000000000L) { ts.tv_sec++; ts.tv_nsec -= 1000000000L; }
        if (sh->n_done < started) pthread_cond_timedwait(&sh->cv_main, &sh->mu, &ts);
        int all_done = sh->n_done == started;
        pthread_mutex_unlock(&sh->mu);
        double now = gyro_now();
        uint64_t words = atomic_load(&sh->words);
        double frac = (double)words / sh->total_words;
        double rate = (double)(words - words0) / ((now - t0) * T + 1e-9);
        double lsum;
        uint64_t pairs;
        sum_loss(ws, T, &lsum, &pairs);
        if (pairs > last_pairs + 1000) {
            shown_loss = (lsum - last_loss) / (double)(pairs - last_pairs);
            last_loss = lsum;
            last_pairs = pairs;
        }
        double lr = m->opt.lr * (1.0 - frac);
        if (lr < m->opt.lr * 1e-4) lr = m->opt.lr * 1e-4;
        if (all_done || atomic_load(&sh->stop)) break;
        gyro_progress_update(&prog, frac > 1 ? 1 : frac, rate, lr, shown_loss, 0);
        if (run->checkpoint_path && run->checkpoint_every > 0 && now - last_ckpt >= run->checkpoint_every) {
            s = checkpoint_now(sh, run->checkpoint_path);
            if (s) {
                atomic_store(&sh->stop, 2);
                break;
            }
            report->checkpoints++;
            last_ckpt = gyro_now();
        }
    }
    for (int t = 0; t < started; t++) pthread_join(ws[t].th, NULL);
    double elapsed = gyro_now() - t0;
    uint64_t words = atomic_load(&sh->words);
    m->words_done = words;
    m->seconds += elapsed;
    double lsum;
    uint64_t pairs;
    sum_loss(ws, T, &lsum, &pairs);
    if (pairs > last_pairs) shown_loss = (lsum - last_loss) / (double)(pairs - last_pairs);
    report->seconds = elapsed;
    report->words = words - words0;
    report->rate = (double)report->words / (elapsed * T + 1e-9);
    report->loss = shown_loss;
    if (!s && sh->err) s = gyro_error_set(sh->err, "%s", sh->errmsg);
    if (!s) {
        double frac = (double)words / sh->total_words;
        gyro_progress_finish(&prog, frac > 1 ? 1 : frac, report->rate, m->opt.lr * (1.0 - (frac > 1 ? 1 : frac)),
                             shown_loss);
    }
    if (!s && m->opt.geometry == GYRO_C2V_HYPERBOLIC) {
        /* after the Hogwild phase: put every row of both tables back on the hyperboloid */
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
        report->manifold_error = worst;
    }
    if (!s && interrupted) {
        if (run->checkpoint_path) {
            s = gyro_c2v_checkpoint_save(m, run->checkpoint_path);
            if (!s) {
                report->checkpoints++;
                s = gyro_error_set(GYRO_ERR_INTERRUPTED, "interrupted at %.1f%%: checkpoint written to %s "
                                   "(continue with --resume)", 100.0 * (double)words / sh->total_words,
                                   run->checkpoint_path);
            }
        } else {
            s = gyro_error_set(GYRO_ERR_INTERRUPTED, "interrupted");
        }
    }
    if (!prog.quiet && prog.is_tty && s) fputc('\n', stderr);
    for (int t = 0; t < T; t++) {
        free(ws[t].h);
        free(ws[t].buf);
        free(ws[t].sent);
    }
    free(ws);
    free(sh->keep);
    free(sh->neg);
    pthread_mutex_destroy(&sh->mu);
    pthread_cond_destroy(&sh->cv_main);
    pthread_cond_destroy(&sh->cv_work);
    free(sh);
    return s;
}

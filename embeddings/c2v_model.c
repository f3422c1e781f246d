/* c2v_model.c — the char2vec model: options, tables, set-up and export (see c2v_model.h). */
#include "embeddings/c2v_model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/hyp/hyp_consts.h"
#include "models/hyp/lorentz.h"

void gyro_c2v_options_init(gyro_c2v_options *o)
{
    memset(o, 0, sizeof *o);
    o->geometry = GYRO_C2V_HYPERBOLIC;
    o->dim = 100;
    o->window = 5;
    o->negatives = 5;
    o->epochs = 5;
    o->threads = 1;
    o->sample = 1e-4;
    o->lr = 0; /* 0 = the geometry's default */
    o->theta = 3.0;
    o->max_step = GYRO_HYP_LORENTZ_MAX_STEP;
    o->init_scale = 1.0;
    o->neg_power = 0.75;
    o->seed = 1;
}

gyro_status gyro_c2v_options_check(const gyro_c2v_options *o)
{
    if (o->geometry != GYRO_C2V_HYPERBOLIC && o->geometry != GYRO_C2V_EUCLIDEAN)
        return gyro_error_set(GYRO_ERR_USAGE, "unknown geometry %d", o->geometry);
    if (o->dim < 1 || o->dim > GYRO_C2V_MAX_DIM)
        return gyro_error_set(GYRO_ERR_USAGE, "--dim must be in [1, %d]", GYRO_C2V_MAX_DIM);
    if (o->window < 1 || o->window > 100) return gyro_error_set(GYRO_ERR_USAGE, "--window must be in [1, 100]");
    if (o->negatives < 0 || o->negatives > 100)
        return gyro_error_set(GYRO_ERR_USAGE, "--negatives must be in [0, 100]");
    if (o->epochs < 1 || o->epochs > 100000) return gyro_error_set(GYRO_ERR_USAGE, "--epochs must be >= 1");
    if (o->threads < 1 || o->threads > GYRO_C2V_MAX_THREADS)
        return gyro_error_set(GYRO_ERR_USAGE, "--threads must be in [1, %d]", GYRO_C2V_MAX_THREADS);
    if (!(o->sample >= 0) || !isfinite(o->sample)) return gyro_error_set(GYRO_ERR_USAGE, "--sample must be >= 0");
    if (!(o->lr >= 0) || !isfinite(o->lr) || o->lr > 100) return gyro_error_set(GYRO_ERR_USAGE, "--lr must be in (0, 100]");
    if (!isfinite(o->theta) || fabs(o->theta) > 1e6) return gyro_error_set(GYRO_ERR_USAGE, "--theta must be a finite number");
    if (!isfinite(o->max_step)) return gyro_error_set(GYRO_ERR_USAGE, "--max-step must be finite");
    if (!(o->init_scale > 0) || !isfinite(o->init_scale))
        return gyro_error_set(GYRO_ERR_USAGE, "the init scale must be positive");
    if (!(o->neg_power >= 0) || o->neg_power > 4) return gyro_error_set(GYRO_ERR_USAGE, "the negative power must be in [0, 4]");
    return GYRO_OK;
}

static const char *geometry_name(int g) { return g == GYRO_C2V_HYPERBOLIC ? "hyperbolic" : "euclidean"; }

gyro_status gyro_c2v_resume_options(const gyro_c2v_options *ckpt, const gyro_c2v_options *user,
                                    unsigned given, gyro_c2v_options *out)
{
    gyro_c2v_options o = *ckpt;
    char msg[900] = "";
    size_t n = 0;
#define REFUSE(...) do { if (n < sizeof msg) n += (size_t)snprintf(msg + n, sizeof msg - n, __VA_ARGS__); } while (0)
#define INT_OPT(bit, field, flag) \
    if ((given & (bit)) && user->field != ckpt->field) \
        REFUSE("%s" flag " %d (the checkpoint has %d)", n ? ", " : "", user->field, ckpt->field)
#define DBL_OPT(bit, field, flag) \
    if ((given & (bit)) && user->field != ckpt->field) \
        REFUSE("%s" flag " %g (the checkpoint has %g)", n ? ", " : "", user->field, ckpt->field)
    if ((given & GYRO_C2V_SET_GEOMETRY) && user->geometry != ckpt->geometry)
        REFUSE("--geometry %s (the checkpoint has %s)", geometry_name(user->geometry), geometry_name(ckpt->geometry));
    INT_OPT(GYRO_C2V_SET_DIM, dim, "--dim");
    INT_OPT(GYRO_C2V_SET_WINDOW, window, "--window");
    INT_OPT(GYRO_C2V_SET_NEGATIVES, negatives, "--negatives");
    INT_OPT(GYRO_C2V_SET_EPOCHS, epochs, "--epochs");
    INT_OPT(GYRO_C2V_SET_THREADS, threads, "--threads");
    DBL_OPT(GYRO_C2V_SET_THETA, theta, "--theta");
    DBL_OPT(GYRO_C2V_SET_INIT_SCALE, init_scale, "the initial scale");
    DBL_OPT(GYRO_C2V_SET_NEG_POWER, neg_power, "the negative power");
    if ((given & GYRO_C2V_SET_SEED) && user->seed != ckpt->seed)
        REFUSE("%s--seed %llu (the checkpoint has %llu)", n ? ", " : "", (unsigned long long)user->seed,
               (unsigned long long)ckpt->seed);
#undef INT_OPT
#undef DBL_OPT
#undef REFUSE
    *out = o;
    if (n)
        return gyro_error_set(GYRO_ERR_USAGE, "--resume: %s: these options cannot change in the middle of "
                              "a run (only --lr, --max-step and --sample can); leave them out to continue",
                              msg);
    if (given & GYRO_C2V_SET_LR) o.lr = user->lr > 0 ? user->lr : ckpt->lr;
    if (given & GYRO_C2V_SET_MAX_STEP) o.max_step = user->max_step;
    if (given & GYRO_C2V_SET_SAMPLE) o.sample = user->sample;
    gyro_status s = gyro_c2v_options_check(&o);
    if (s) return gyro_error_prefix(s, "--resume");
    *out = o;
    return GYRO_OK;
}

static double default_lr(const gyro_c2v_options *o)
{
    if (o->lr > 0) return o->lr;
    return o->geometry == GYRO_C2V_HYPERBOLIC ? 0.05 : 0.025;
}

/* ---- model ------------------------------------------------------------------------------- */

float *gyro_c2v_rows_alloc(int n, int row)
{
    size_t bytes = (size_t)n * (size_t)row * sizeof(float);
    float *p = aligned_alloc(64, bytes ? bytes : 64);
    if (p) memset(p, 0, bytes);
    return p;
}

gyro_status gyro_c2v_model_alloc(gyro_c2v_model *m)
{
    m->width = m->opt.geometry == GYRO_C2V_HYPERBOLIC ? m->opt.dim + 1 : m->opt.dim;
    m->row = (m->width + 15) / 16 * 16;
    m->in = gyro_c2v_rows_alloc(m->vocab.n, m->row);
    m->out = gyro_c2v_rows_alloc(m->vocab.n, m->row);
    if (m->ranks < 1) m->ranks = 1;
    m->ts = calloc((size_t)m->ranks * (size_t)m->opt.threads, sizeof *m->ts);
    if (!m->in || !m->out || !m->ts)
        return gyro_error_set(GYRO_ERR_NOMEM, "out of memory for %d x %d embeddings", m->vocab.n, m->width);
    return GYRO_OK;
}

/* Every thread state at the start of its shard, thread g = r·T + t seeded from opt.seed and g. */
static void init_thread_states(gyro_c2v_model *m)
{
    const int T = m->opt.threads;
    for (int r = 0; r < m->ranks; r++)
        for (int t = 0; t < T; t++) {
            gyro_c2v_thread_state *st = &m->ts[r * T + t];
            uint64_t end;
            st->epoch = 0;
            gyro_c2v_shard(m, r, t, &st->pos, &end);
            gyro_rng_seed(&st->rng, m->opt.seed * 0x9E3779B97F4A7C15ULL + (uint64_t)(r * T + t) + 1);
        }
}

gyro_status gyro_c2v_model_init(gyro_c2v_model *m, const gyro_c2v_options *opt, gyro_vocab *vocab,
                                uint64_t n_ids, uint64_t n_tokens)
{
    memset(m, 0, sizeof *m);
    gyro_status s = gyro_c2v_options_check(opt);
    if (s) return s;
    m->opt = *opt;
    m->opt.lr = default_lr(opt);
    m->vocab = *vocab;
    memset(vocab, 0, sizeof *vocab);
    if (m->vocab.n < 1) return gyro_error_set(GYRO_ERR_DATA, "the vocabulary is empty");
    if (n_tokens < 2 || n_tokens <= (uint64_t)opt->window)
        return gyro_error_set(GYRO_ERR_DATA, "the corpus has %llu character%s after --min-count, "
                              "shorter than the window (%d) + 1: nothing to learn from",
                              (unsigned long long)n_tokens, n_tokens == 1 ? "" : "s", opt->window);
    m->n_ids = n_ids;
    m->n_tokens = n_tokens;
    if ((s = gyro_c2v_model_alloc(m))) return s;
    gyro_rng rng;
    gyro_rng_seed(&rng, opt->seed);
    double scale = m->opt.init_scale / m->opt.dim;
    int hyp = m->opt.geometry == GYRO_C2V_HYPERBOLIC;
    int off = hyp ? 1 : 0;
    for (int i = 0; i < m->vocab.n; i++) {
        float *a = m->in + (size_t)i * m->row, *b = m->out + (size_t)i * m->row;
        for (int k = 0; k < m->opt.dim; k++) a[off + k] = (float)((gyro_rng_uniform(&rng) - 0.5) * scale);
        if (hyp) {
            /* the context table also starts near (not at) the origin so that targets differ */
            for (int k = 0; k < m->opt.dim; k++) b[1 + k] = (float)((gyro_rng_uniform(&rng) - 0.5) * scale);
            gyro_lorentz_reproject_f32(a, m->opt.dim);
            gyro_lorentz_reproject_f32(b, m->opt.dim);
        }
    }
    init_thread_states(m);
    return GYRO_OK;
}

void gyro_c2v_shard(const gyro_c2v_model *m, int r, int t, uint64_t *begin, uint64_t *end)
{
    const uint64_t R = (uint64_t)(m->ranks < 1 ? 1 : m->ranks), T = (uint64_t)m->opt.threads;
    uint64_t rb = m->n_ids * (uint64_t)r / R, re = m->n_ids * (uint64_t)(r + 1) / R;
    *begin = rb + (re - rb) * (uint64_t)t / T;
    *end = rb + (re - rb) * (uint64_t)(t + 1) / T;
}

gyro_status gyro_c2v_model_set_ranks(gyro_c2v_model *m, int ranks)
{
    if (ranks < 1) return gyro_error_set(GYRO_ERR_USAGE, "ranks must be >= 1");
    if (m->words_done) return gyro_error_set(GYRO_ERR_USAGE, "a model in training cannot be split over other ranks");
    gyro_c2v_thread_state *ts = calloc((size_t)ranks * (size_t)m->opt.threads, sizeof *ts);
    if (!ts) return gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    free(m->ts);
    m->ts = ts;
    m->ranks = ranks;
    init_thread_states(m);
    return GYRO_OK;
}

void gyro_c2v_model_free(gyro_c2v_model *m)
{
    if (!m) return;
    gyro_vocab_free(&m->vocab);
    free(m->in);
    free(m->out);
    free(m->ts);
    memset(m, 0, sizeof *m);
}

gyro_status gyro_c2v_model_table(const gyro_c2v_model *m, const char *trained_by,
                                 gyro_embedding_table **out)
{
    int model = m->opt.geometry == GYRO_C2V_HYPERBOLIC ? GYRO_EMBEDDING_HYPERBOLOID
                                                       : GYRO_EMBEDDING_EUCLIDEAN;
    gyro_embedding_table *t;
    gyro_status s = gyro_embedding_table_new(model, 1.0, m->opt.dim, m->vocab.n, &t);
    if (s) return s;
    for (int i = 0; i < m->vocab.n && !s; i++) {
        memcpy(t->vectors + (size_t)i * t->stride, m->in + (size_t)i * m->row,
               (size_t)t->stride * sizeof(float));
        s = gyro_embedding_table_set_token(t, i, m->vocab.tokens[i], m->vocab.counts[i]);
    }
    if (!s && trained_by && !(t->trained_by = strdup(trained_by)))
        s = gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    if (s) {
        gyro_embedding_table_free(t);
        return s;
    }
    *out = t;
    return GYRO_OK;
}

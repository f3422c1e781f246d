/* service.c — gyro.v1.Gyro and grpc.health.v1.Health (Check, Watch) handlers (see service.h).
 *
 * Handlers run on the server's completion-queue threads or on its inference workers; each gets a
 * stable thread index and uses only its own thread_state and its own scratch of the pinned
 * model, so nothing on the request path takes a lock or allocates once the per-thread buffers
 * have grown to the largest top-k seen.
 *
 * Embed and Neighbors serve one embedding table (--embeddings, or the last table trained over
 * gRPC: TrainEmbeddings swaps it in as TrainClassifier swaps the model): the table as trained
 * plus, for a hyperbolic table of curvature 1, its conversion to the other hyperbolic model
 * (gyro convert's function), so either model is a lookup. Handlers pin the table as they pin the
 * model (a hazard slot per thread), so a swap frees the old one only once no call reads it.
 *
 * Classify is gyro_classifier_predict (the function `gyro classify` uses), wrapped as
 * ClassifyResponse{intents (label, probability, atoms), model_version, id, normalized_text} by
 * gyro_classify_response_fill, the function of `gyro classify predict --stream` too (atoms from
 * the model's label set).
 * Without --model, Classify and ClassifyStream answer UNAVAILABLE. With the server's dynamic
 * batching, h_classify_batch answers a batch of Classify calls with one
 * gyro_classifier_predict_batch on per-thread batch buffers (gyro_classifier_batch, hung off the
 * pinned model as the scratch is).
 *
 * Reason runs the --policy control policy (gyro_rl_reason), or, for environment "composite",
 * the --composite-policy intent policy (gyro_composite_reason, as `gyro reason --env
 * composite`), or, for environment "sudoku", the --hrm-model Sudoku model (pipeline/reason_sudoku.c,
 * as `gyro reason --env sudoku`); each answers UNAVAILABLE when its file is not loaded.
 */
#include "pipeline/normalize_stage.h"
#include "pipeline/service.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "embeddings/convert.h"
#include "embeddings/neighbors.h"
#include "embeddings/table.h"
#include "models/classifier.h"
#include "models/rl/composite.h"
#include "models/rl/composite_reason.h"
#include "models/rl/env.h"
#include "models/rl/policy.h"
#include "models/rl/reason.h"
#include "models/text/normalize.h"
#include "pipeline/classify_response.h"
#include "pipeline/reflection.h"
#include "pipeline/reason_sudoku.h"
#include "pipeline/table_file.h"
#include "pipeline/text_reader.h"
#include "proto/gyro.pb-c.h"
#include "proto/health.pb-c.h"
#include "proto/reflection.pb-c.h"


/* A loaded classifier with the scratch buffers of the threads that used it. */
typedef struct loaded_model {
    gyro_classifier *m;
    gyro_classifier_scratch **scratch; /* (n_threads) each created by its own thread on first use */
    gyro_classifier_batch **batch;     /* (n_threads) the same for batches of Classify calls */
    char version[128];
    double loaded_at;           /* Unix time the load finished */
    double load_seconds;        /* how long reading the file took */
} loaded_model;

/* Per-thread response buffers, grown on demand. */
typedef struct thread_state {
    int cap;                    /* intents the array below holds */
    gyro_intent *intents;       /* (cap) */
    gyro_classify_response_buf resp; /* the Intent messages of a ClassifyResponse */
    gyro_normalizer *norm[4];   /* Normalize: by (keep_traditional, case_fold), created on use */
    gyro_rl_reason_result *reason; /* Reason: the episode record, allocated on first use */
    gyro_composite_reason_result *composite; /* Reason "composite": allocated on first use */
    /* a batch of Classify calls (max_batch entries each, allocated on the first batch) */
    const char **b_texts, **b_contexts; /* the texts of the calls given to the classifier */
    int *b_k, *b_n, *b_call;            /* their top-k, results, and the call of each */
    gyro_status *b_status;
    gyro_intent **b_out;                /* (max_batch) rows of b_intents */
    gyro_intent *b_intents;             /* (max_batch, max_top_k) */
    char pad[64];               /* keep neighbouring threads off one cache line */
} thread_state;

typedef struct hazard_slot {
    _Atomic(loaded_model *) p;
    char pad[64 - sizeof(void *)];
} hazard_slot;

/* A served embedding table: as loaded, and its other hyperbolic model (or NULL). Immutable. */
typedef struct loaded_table {
    gyro_embedding_table *table;
    gyro_embedding_table *alt;
} loaded_table;

typedef struct table_hazard_slot {
    _Atomic(loaded_table *) p;
    char pad[64 - sizeof(void *)];
} table_hazard_slot;

struct gyro_service {
    gyro_service_options opt;
    char *model_path;
    _Atomic(loaded_model *) current;
    hazard_slot *hazard;        /* (n_threads) the model each thread is using, or NULL */
    thread_state *ts;           /* (n_threads) */
    _Atomic(loaded_table *) tables;   /* the served table, or NULL */
    table_hazard_slot *table_hazard;  /* (n_threads) the table each thread is using, or NULL */
    gyro_rl_policy **policies;        /* (n_threads) one copy of --policy per thread, or NULL */
    char policy_version[96];
    gyro_composite_policy *composite; /* --composite-policy (read-only, shared), or NULL */
    char composite_version[160];
    gyro_reason_sudoku *sudoku;       /* --hrm-model (Reason "sudoku"), or NULL */
    _Atomic int serving;
    _Atomic(const gyro_rpc_server *) server;
    gyro_reflection *reflection;      /* the descriptor set compiled into libgyro (read-only) */
    /* the served model as the metrics see it (a copy: the metrics thread holds no hazard slot) */
    pthread_mutex_t info_mu;
    loaded_model info;                /* version, loaded_at, load_seconds only */
    uint64_t reloads_ok, reloads_refused;
    pthread_mutex_t reload_mu;        /* one reload or swap at a time (SIGHUP, TrainClassifier) */
    gyro_trainer *trainer;            /* --train-dir: TrainEmbeddings, TrainClassifier; or NULL */
};

static void model_free(loaded_model *lm, int n_threads)
{
    if (!lm) return;
    if (lm->scratch)
        for (int i = 0; i < n_threads; i++) gyro_classifier_scratch_free(lm->scratch[i]);
    free(lm->scratch);
    if (lm->batch)
        for (int i = 0; i < n_threads; i++) gyro_classifier_batch_free(lm->batch[i]);
    free(lm->batch);
    gyro_classifier_free(lm->m);
    free(lm);
}

static gyro_status model_load(const gyro_service *svc, loaded_model **out)
{
    *out = NULL;
    loaded_model *lm = calloc(1, sizeof *lm);
    if (!lm) return gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    lm->scratch = calloc((size_t)svc->opt.n_threads, sizeof *lm->scratch);
    lm->batch = calloc((size_t)svc->opt.n_threads, sizeof *lm->batch);
    if (!lm->scratch || !lm->batch) {
        free(lm->scratch);
        free(lm->batch);
        free(lm);
        return gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    }
    struct timespec t0, t1, wall;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    gyro_status st = gyro_classifier_load(svc->model_path, &lm->m);
    if (st != GYRO_OK) {
        model_free(lm, svc->opt.n_threads);
        return st;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    clock_gettime(CLOCK_REALTIME, &wall);
    lm->load_seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    lm->loaded_at = (double)wall.tv_sec + (double)wall.tv_nsec / 1e9;
    snprintf(lm->version, sizeof lm->version, "%s", gyro_classifier_version(lm->m));
    *out = lm;
    return GYRO_OK;
}

/* Record what the metrics report about the served model (ok: a load succeeded, else refused). */
static void note_load(gyro_service *svc, const loaded_model *lm, int reload)
{
    pthread_mutex_lock(&svc->info_mu);
    if (lm) {
        memcpy(svc->info.version, lm->version, sizeof lm->version);
        svc->info.loaded_at = lm->loaded_at;
        svc->info.load_seconds = lm->load_seconds;
        if (reload) svc->reloads_ok++;
    } else {
        svc->reloads_refused++;
    }
    pthread_mutex_unlock(&svc->info_mu);
}

/* Pin the current model for thread t (NULL when none); release with unpin. */
static loaded_model *pin(gyro_service *svc, int t)
{
    loaded_model *p;
    do {
        p = atomic_load(&svc->current);
        atomic_store(&svc->hazard[t].p, p);
    } while (p != atomic_load(&svc->current));
    return p;
}

static void unpin(gyro_service *svc, int t) { atomic_store(&svc->hazard[t].p, NULL); }

static void tables_free(loaded_table *lt)
{
    if (!lt) return;
    gyro_embedding_table_free(lt->table);
    gyro_embedding_table_free(lt->alt);
    free(lt);
}

/* Read the table file at `path` and, for a hyperbolic table of curvature 1, convert it to the
 * other hyperbolic model. Errors: the loader's and the converter's (message names the path). */
static gyro_status tables_load(const char *path, loaded_table **out)
{
    loaded_table *lt = calloc(1, sizeof *lt);
    if (!lt) return gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    gyro_status st = gyro_table_file_load(path, &lt->table);
    if (st == GYRO_OK && lt->table->model != GYRO__V1__EMBEDDING_MODEL__EUCLIDEAN && lt->table->curvature == 1.0)
        st = gyro_embedding_convert(lt->table,
                                    lt->table->model == GYRO__V1__EMBEDDING_MODEL__POINCARE
                                        ? GYRO__V1__EMBEDDING_MODEL__HYPERBOLOID
                                        : GYRO__V1__EMBEDDING_MODEL__POINCARE,
                                    &lt->alt, NULL);
    if (st != GYRO_OK) {
        tables_free(lt);
        return st;
    }
    *out = lt;
    return GYRO_OK;
}

/* Pin the served table for thread t (NULL when none); release with tables_unpin. */
static loaded_table *tables_pin(gyro_service *svc, int t)
{
    loaded_table *p;
    do {
        p = atomic_load(&svc->tables);
        atomic_store(&svc->table_hazard[t].p, p);
    } while (p != atomic_load(&svc->tables));
    return p;
}

static void tables_unpin(gyro_service *svc, int t) { atomic_store(&svc->table_hazard[t].p, NULL); }

static gyro_status trainer_new(gyro_service *svc);

gyro_status gyro_service_new(const gyro_service_options *opt, gyro_service **out)
{
    *out = NULL;
    if (!opt || opt->n_threads < 1 || opt->default_top_k < 1 || opt->max_top_k < opt->default_top_k ||
        opt->max_batch < 0)
        return gyro_error_set(GYRO_ERR_USAGE, "invalid service options");
    gyro_service *svc = calloc(1, sizeof *svc);
    if (!svc) return gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    svc->opt = *opt;
    pthread_mutex_init(&svc->info_mu, NULL);
    pthread_mutex_init(&svc->reload_mu, NULL);
    if (!svc->opt.max_text_bytes) svc->opt.max_text_bytes = GYRO_SERVICE_DEFAULT_MAX_TEXT;
    if (svc->opt.max_batch < 1) svc->opt.max_batch = 1;
    svc->hazard = calloc((size_t)opt->n_threads, sizeof *svc->hazard);
    svc->table_hazard = calloc((size_t)opt->n_threads, sizeof *svc->table_hazard);
    svc->ts = calloc((size_t)opt->n_threads, sizeof *svc->ts);
    if (opt->model_path) svc->model_path = strdup(opt->model_path);
    if (!svc->hazard || !svc->table_hazard || !svc->ts || (opt->model_path && !svc->model_path)) {
        gyro_service_free(svc);
        return gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    }
    atomic_store(&svc->serving, 1);
    size_t set_len;
    const uint8_t *set = gyro_reflection_embedded(&set_len);
    gyro_status rst = gyro_reflection_new(set, set_len, &svc->reflection);
    if (rst != GYRO_OK) {
        gyro_service_free(svc);
        return rst;
    }
    if (svc->model_path) {
        loaded_model *lm;
        gyro_status st = model_load(svc, &lm);
        if (st != GYRO_OK) {
            gyro_service_free(svc);
            return st;
        }
        atomic_store(&svc->current, lm);
        note_load(svc, lm, 0);
    }
    if (opt->embeddings_path) {
        loaded_table *lt;
        gyro_status st = tables_load(opt->embeddings_path, &lt);
        if (st != GYRO_OK) {
            gyro_service_free(svc);
            return st;
        }
        atomic_store(&svc->tables, lt);
    }
    if (opt->policy_path) {
        svc->policies = calloc((size_t)opt->n_threads, sizeof *svc->policies);
        if (!svc->policies) {
            gyro_service_free(svc);
            return gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
        }
        for (int t = 0; t < opt->n_threads; t++) {
            gyro_status st = gyro_rl_policy_load(opt->policy_path, 1, &svc->policies[t]);
            if (st != GYRO_OK) {
                gyro_service_free(svc);
                return st;
            }
        }
        const gyro_rl_policy *p = svc->policies[0];
        snprintf(svc->policy_version, sizeof svc->policy_version, "%s-%s-w%d", p->env_name[0] ? p->env_name : "none",
                 gyro_rl_policy_geometry_name(p->cfg.hyperbolic), p->cfg.d_model);
    }
    if (opt->composite_path) {
        gyro_status st = gyro_composite_policy_load(opt->composite_path, &svc->composite);
        if (st != GYRO_OK) {
            gyro_service_free(svc);
            return st;
        }
        snprintf(svc->composite_version, sizeof svc->composite_version, "composite-%s",
                 gyro_classifier_version(svc->composite->clf));
    }
    if (opt->hrm_path) {
        gyro_status st = gyro_reason_sudoku_new(opt->hrm_path, opt->n_threads, &svc->sudoku);
        if (st != GYRO_OK) {
            gyro_service_free(svc);
            return st;
        }
    }
    if (opt->train_dir) {
        gyro_status st = trainer_new(svc);
        if (st != GYRO_OK) {
            gyro_service_free(svc);
            return st;
        }
    }
    *out = svc;
    return GYRO_OK;
}

/* Load model_path and swap it in (the caller holds reload_mu). */
static gyro_status reload_locked(gyro_service *svc)
{
    if (!svc->model_path) return gyro_error_set(GYRO_ERR_USAGE, "no --model to reload");
    loaded_model *lm;
    gyro_status st = model_load(svc, &lm);
    if (st != GYRO_OK) {
        note_load(svc, NULL, 1);
        return st;
    }
    note_load(svc, lm, 1);
    loaded_model *old = atomic_exchange(&svc->current, lm);
    if (!old) return GYRO_OK;
    for (;;) { /* wait until no handler still holds the old model */
        int busy = 0;
        for (int t = 0; t < svc->opt.n_threads; t++)
            if (atomic_load(&svc->hazard[t].p) == old) busy = 1;
        if (!busy) break;
        struct timespec ts = {0, 200000};
        nanosleep(&ts, NULL);
    }
    model_free(old, svc->opt.n_threads);
    return GYRO_OK;
}

gyro_status gyro_service_reload(gyro_service *svc)
{
    pthread_mutex_lock(&svc->reload_mu);
    gyro_status st = reload_locked(svc);
    pthread_mutex_unlock(&svc->reload_mu);
    return st;
}

gyro_status gyro_service_serve_file(gyro_service *svc, const char *path)
{
    char *p = strdup(path);
    if (!p) return gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    pthread_mutex_lock(&svc->reload_mu);
    char *old = svc->model_path;
    svc->model_path = p;
    gyro_status st = reload_locked(svc);
    if (st != GYRO_OK) svc->model_path = old;
    pthread_mutex_unlock(&svc->reload_mu);
    free(st != GYRO_OK ? p : old);
    return st;
}

gyro_status gyro_service_serve_table(gyro_service *svc, const char *path)
{
    loaded_table *lt;
    gyro_status st = tables_load(path, &lt);
    if (st != GYRO_OK) return st;
    pthread_mutex_lock(&svc->reload_mu);
    loaded_table *old = atomic_exchange(&svc->tables, lt);
    pthread_mutex_unlock(&svc->reload_mu);
    if (!old) return GYRO_OK;
    for (;;) { /* wait until no handler still reads the old table */
        int busy = 0;
        for (int t = 0; t < svc->opt.n_threads; t++)
            if (atomic_load(&svc->table_hazard[t].p) == old) busy = 1;
        if (!busy) break;
        struct timespec ts = {0, 200000};
        nanosleep(&ts, NULL);
    }
    tables_free(old);
    return GYRO_OK;
}

void gyro_service_model_path(gyro_service *svc, char *buf, size_t cap)
{
    pthread_mutex_lock(&svc->reload_mu);
    snprintf(buf, cap, "%s", svc->model_path ? svc->model_path : "");
    pthread_mutex_unlock(&svc->reload_mu);
}

/* The trainer's hooks: serve a trained classifier; wake the parked training calls. */
static gyro_status trainer_install(void *ctx, const char *path, char *version, size_t cap)
{
    gyro_service *svc = ctx;
    gyro_status st = gyro_service_serve_file(svc, path);
    if (st == GYRO_OK) snprintf(version, cap, "%s", gyro_service_model_version(svc));
    return st;
}

static gyro_status trainer_install_table(void *ctx, const char *path)
{
    return gyro_service_serve_table(ctx, path);
}

static void trainer_notify(void *ctx)
{
    gyro_rpc_server_notify((gyro_rpc_server *)atomic_load(&((gyro_service *)ctx)->server));
}

static gyro_status trainer_new(gyro_service *svc)
{
    gyro_trainer_limits lim = svc->opt.train_limits;
    lim.dir = svc->opt.train_dir;
    if (!lim.max_epochs) lim.max_epochs = GYRO_TRAIN_DEFAULT_MAX_EPOCHS;
    if (!lim.max_dim) lim.max_dim = GYRO_TRAIN_DEFAULT_MAX_DIM;
    if (!lim.max_examples) lim.max_examples = GYRO_TRAIN_DEFAULT_MAX_EXAMPLES;
    if (!lim.max_file_bytes) lim.max_file_bytes = GYRO_TRAIN_DEFAULT_MAX_FILE_BYTES;
    if (!(lim.max_seconds > 0)) lim.max_seconds = GYRO_TRAIN_DEFAULT_MAX_SECONDS;
    gyro_trainer_hooks hooks = {svc, trainer_install, trainer_notify, trainer_install_table};
    return gyro_trainer_new(&lim, &hooks, &svc->trainer);
}

const char *gyro_service_model_version(const gyro_service *svc)
{
    loaded_model *lm = atomic_load(&((gyro_service *)svc)->current);
    return lm ? lm->version : "";
}

void gyro_service_set_serving(gyro_service *svc, int serving)
{
    atomic_store(&svc->serving, serving != 0);
    gyro_rpc_server_notify((gyro_rpc_server *)atomic_load(&svc->server)); /* Health/Watch calls */
}

void gyro_service_attach(gyro_service *svc, const gyro_rpc_server *srv) { atomic_store(&svc->server, srv); }

void gyro_service_free(gyro_service *svc)
{
    if (!svc) return;
    gyro_trainer_free(svc->trainer); /* first: its thread may still swap a model in */
    model_free(atomic_load(&svc->current), svc->opt.n_threads);
    tables_free(atomic_load(&svc->tables));
    free(svc->table_hazard);
    if (svc->policies)
        for (int t = 0; t < svc->opt.n_threads; t++) gyro_rl_policy_free(svc->policies[t]);
    free(svc->policies);
    gyro_composite_policy_free(svc->composite);
    gyro_reflection_free(svc->reflection);
    gyro_reason_sudoku_free(svc->sudoku);
    if (svc->ts)
        for (int t = 0; t < svc->opt.n_threads; t++) {
            thread_state *s = &svc->ts[t];
            free(s->intents);
            gyro_classify_response_buf_free(&s->resp);
            for (int k = 0; k < 4; k++) gyro_normalizer_free(s->norm[k]);
            free(s->reason);
            free(s->composite);
            free(s->b_texts);
            free(s->b_contexts);
            free(s->b_k);
            free(s->b_n);
            free(s->b_call);
            free(s->b_status);
            free(s->b_out);
            free(s->b_intents);
        }
    free(svc->ts);
    free(svc->hazard);
    free(svc->model_path);
    pthread_mutex_destroy(&svc->info_mu);
    pthread_mutex_destroy(&svc->reload_mu);
    free(svc);
}

/* ---- handlers ------------------------------------------------------------------------------ */

static int grow(thread_state *s, int k)
{
    if (k <= s->cap) return 1;
    gyro_intent *a = realloc(s->intents, (size_t)k * sizeof *a);
    if (!a) return 0;
    s->intents = a;
    s->cap = k;
    return 1;
}

/* The text limit (gyro_service_options.max_text_bytes): INVALID_ARGUMENT naming the field, its
 * size and the limit when `text` is longer, else GYRO_RPC_OK. Costs and peak memory of a
 * request grow with its text (about 18 bytes per byte for Classify), so the limit bounds them
 * independently of --max-request-bytes. */
static int text_limit(const gyro_service *svc, const char *field, const char *text, gyro_rpc_reply *reply)
{
    size_t n = text ? strlen(text) : 0;
    if (n <= svc->opt.max_text_bytes) return GYRO_RPC_OK;
    return gyro_rpc_reply_error(reply, GYRO_RPC_INVALID_ARGUMENT,
                                "%s is %zu bytes, over the limit of %zu (gyro serve --max-text-bytes)",
                                field, n, svc->opt.max_text_bytes);
}

static int h_classify(void *ctx, int t, const ProtobufCMessage *request, gyro_rpc_reply *reply)
{
    gyro_service *svc = ctx;
    const Gyro__V1__ClassifyRequest *rq = (const Gyro__V1__ClassifyRequest *)request;
    int lim = text_limit(svc, "text", rq->text, reply);
    if (lim != GYRO_RPC_OK) return lim;
    loaded_model *lm = pin(svc, t);
    if (!lm) {
        unpin(svc, t);
        return gyro_rpc_reply_error(reply, GYRO_RPC_UNAVAILABLE, "no model loaded (start gyro serve with --model)");
    }
    int code = GYRO_RPC_OK;
    thread_state *s = &svc->ts[t];
    int k = rq->top_k ? (int)(rq->top_k < (uint32_t)svc->opt.max_top_k ? rq->top_k : (uint32_t)svc->opt.max_top_k)
                      : svc->opt.default_top_k;
    if (!lm->scratch[t]) {
        gyro_status st = gyro_classifier_scratch_new(lm->m, &lm->scratch[t]);
        if (st != GYRO_OK) {
            code = gyro_rpc_reply_error(reply, gyro_rpc_code_from_status(st), "%s", gyro_error_message());
            goto out;
        }
    }
    if (!grow(s, k)) {
        code = gyro_rpc_reply_error(reply, GYRO_RPC_RESOURCE_EXHAUSTED, "out of memory");
        goto out;
    }
    int n = 0;
    gyro_status st = gyro_classifier_predict_context(lm->m, lm->scratch[t], rq->text, rq->previous_turn, k,
                                                     s->intents, &n);
    if (st != GYRO_OK) {
        code = gyro_rpc_reply_error(reply, gyro_rpc_code_from_status(st), "%s", gyro_error_message());
        goto out;
    }
    Gyro__V1__ClassifyResponse resp;
    st = gyro_classify_response_fill(&s->resp, gyro_classifier_labels(lm->m), s->intents, n, lm->version, rq->id,
                                     gyro_classifier_scratch_normalized(lm->scratch[t]), &resp);
    if (st != GYRO_OK) {
        code = gyro_rpc_reply_error(reply, GYRO_RPC_RESOURCE_EXHAUSTED, "out of memory");
        goto out;
    }
    if (gyro_rpc_reply_send(reply, &resp.base) != GYRO_OK)
        code = gyro_rpc_reply_error(reply, GYRO_RPC_RESOURCE_EXHAUSTED, "out of memory");
out:
    unpin(svc, t);
    return code;
}

/* The batch buffers of thread state s (max_batch calls of up to max_top_k intents). */
static int batch_buffers(const gyro_service *svc, thread_state *s)
{
    if (s->b_intents) return 1;
    size_t nb = (size_t)svc->opt.max_batch, kk = (size_t)svc->opt.max_top_k;
    s->b_texts = malloc(nb * sizeof *s->b_texts);
    s->b_contexts = malloc(nb * sizeof *s->b_contexts);
    s->b_k = malloc(nb * sizeof *s->b_k);
    s->b_n = malloc(nb * sizeof *s->b_n);
    s->b_call = malloc(nb * sizeof *s->b_call);
    s->b_status = malloc(nb * sizeof *s->b_status);
    s->b_out = malloc(nb * sizeof *s->b_out);
    gyro_intent *in = malloc(nb * kk * sizeof *in);
    if (!s->b_texts || !s->b_contexts || !s->b_k || !s->b_n || !s->b_call || !s->b_status || !s->b_out || !in) {
        free(in);
        return 0;
    }
    for (size_t i = 0; i < nb; i++) s->b_out[i] = in + i * kk;
    s->b_intents = in;
    return 1;
}

/* Classify, a batch of n calls (the server's dynamic batching): the texts within the limit go
 * through one gyro_classifier_predict_batch on the pinned model; each call gets the response,
 * or the error, h_classify would give it. */
static void h_classify_batch(void *ctx, int t, int n, const ProtobufCMessage *const *requests,
                             gyro_rpc_reply *const *replies, int *codes)
{
    gyro_service *svc = ctx;
    thread_state *s = &svc->ts[t];
    loaded_model *lm = pin(svc, t);
    const char *fail = NULL;
    int fail_code = GYRO_RPC_RESOURCE_EXHAUSTED;
    if (!lm) {
        fail = "no model loaded (start gyro serve with --model)";
        fail_code = GYRO_RPC_UNAVAILABLE;
    } else if (n > svc->opt.max_batch || !batch_buffers(svc, s)) {
        fail = n > svc->opt.max_batch ? "batch larger than the service's max_batch" : "out of memory";
        if (n > svc->opt.max_batch) fail_code = GYRO_RPC_INTERNAL;
    } else if (!lm->batch[t]) {
        gyro_status st = gyro_classifier_batch_new(lm->m, svc->opt.max_batch, &lm->batch[t]);
        if (st != GYRO_OK) {
            fail = gyro_error_message();
            fail_code = gyro_rpc_code_from_status(st);
        }
    }
    if (fail) {
        for (int i = 0; i < n; i++) codes[i] = gyro_rpc_reply_error(replies[i], fail_code, "%s", fail);
        unpin(svc, t);
        return;
    }
    int nb = 0;
    for (int i = 0; i < n; i++) {
        const Gyro__V1__ClassifyRequest *rq = (const Gyro__V1__ClassifyRequest *)requests[i];
        codes[i] = text_limit(svc, "text", rq->text, replies[i]);
        if (codes[i] != GYRO_RPC_OK) continue;
        s->b_texts[nb] = rq->text;
        s->b_contexts[nb] = rq->previous_turn;
        s->b_k[nb] = rq->top_k ? (int)(rq->top_k < (uint32_t)svc->opt.max_top_k ? rq->top_k : (uint32_t)svc->opt.max_top_k)
                               : svc->opt.default_top_k;
        s->b_call[nb++] = i;
    }
    gyro_status st = nb ? gyro_classifier_predict_batch(lm->m, lm->batch[t], nb, s->b_texts, s->b_contexts, s->b_k,
                                                        s->b_out, s->b_n, s->b_status)
                        : GYRO_OK;
    for (int j = 0; j < nb; j++) {
        int i = s->b_call[j];
        const Gyro__V1__ClassifyRequest *rq = (const Gyro__V1__ClassifyRequest *)requests[i];
        if (st != GYRO_OK) {
            codes[i] = gyro_rpc_reply_error(replies[i], gyro_rpc_code_from_status(st), "%s", gyro_error_message());
            continue;
        }
        if (s->b_status[j] != GYRO_OK) {
            codes[i] = gyro_rpc_reply_error(replies[i], gyro_rpc_code_from_status(s->b_status[j]), "%s",
                                            gyro_classifier_batch_error(lm->batch[t], j));
            continue;
        }
        Gyro__V1__ClassifyResponse resp;
        if (gyro_classify_response_fill(&s->resp, gyro_classifier_labels(lm->m), s->b_out[j], s->b_n[j], lm->version,
                                        rq->id, gyro_classifier_batch_normalized(lm->batch[t], j), &resp) != GYRO_OK ||
            gyro_rpc_reply_send(replies[i], &resp.base) != GYRO_OK)
            codes[i] = gyro_rpc_reply_error(replies[i], GYRO_RPC_RESOURCE_EXHAUSTED, "out of memory");
    }
    unpin(svc, t);
}

/* Normalize: split the text into lines (or paragraphs) with the text reader `gyro normalize`
 * uses, normalize each with the thread's normalizer for the requested options and stream one
 * Document per line, empty lines included, so ids and lines match the input. Documents are
 * produced NORMALIZE_BATCH at a time (GYRO_RPC_CONTINUE), so a request of many short lines
 * never holds more than one batch in memory; the reader lives in the call's state. */
#define NORMALIZE_BATCH 256

typedef struct normalize_state {
    FILE *fp;
    gyro_text_reader *reader;
    uint64_t id;
} normalize_state;

static void normalize_state_free(void *p)
{
    normalize_state *ns = p;
    gyro_text_reader_free(ns->reader);
    if (ns->fp) fclose(ns->fp);
    free(ns);
}

static int h_normalize(void *ctx, int t, const ProtobufCMessage *request, gyro_rpc_reply *reply)
{
    gyro_service *svc = ctx;
    const Gyro__V1__NormalizeRequest *rq = (const Gyro__V1__NormalizeRequest *)request;
    thread_state *s = &svc->ts[t];
    int which = (rq->keep_traditional ? 1 : 0) | (rq->case_fold ? 2 : 0);
    if (!s->norm[which]) {
        gyro_normalize_options o;
        gyro_normalize_options_init(&o);
        o.t2s = !rq->keep_traditional;
        o.case_fold = rq->case_fold ? 1 : 0;
        gyro_status st = gyro_normalizer_new(&o, &s->norm[which]);
        if (st != GYRO_OK) return gyro_rpc_reply_error(reply, gyro_rpc_code_from_status(st), "%s", gyro_error_message());
    }
    const char *source = rq->source[0] ? rq->source : "-";
    normalize_state *ns = gyro_rpc_reply_state(reply);
    if (!ns) { /* first batch */
        size_t len = strlen(rq->text);
        if (len == 0) return GYRO_RPC_OK; /* no documents */
        ns = calloc(1, sizeof *ns);
        if (!ns) return gyro_rpc_reply_error(reply, GYRO_RPC_RESOURCE_EXHAUSTED, "out of memory");
        gyro_rpc_reply_set_state(reply, ns, normalize_state_free);
        ns->fp = fmemopen(rq->text, len, "r");
        if (!ns->fp) return gyro_rpc_reply_error(reply, GYRO_RPC_RESOURCE_EXHAUSTED, "out of memory");
        gyro_text_reader_options ro = {svc->opt.max_text_bytes, rq->paragraphs ? 1 : 0};
        gyro_status st = gyro_text_reader_open_file(ns->fp, source, &ro, &ns->reader);
        if (st != GYRO_OK) return gyro_rpc_reply_error(reply, gyro_rpc_code_from_status(st), "%s", gyro_error_message());
    }
    gyro_status st = GYRO_OK;
    for (int k = 0; k < NORMALIZE_BATCH; k++) {
        gyro_text_document d;
        if ((st = gyro_text_reader_next(ns->reader, &d)) != GYRO_OK) break;
        if (!d.data) { /* end of the text */
            normalize_state_free(ns);
            gyro_rpc_reply_set_state(reply, NULL, NULL);
            return GYRO_RPC_OK;
        }
        if (d.too_long)
            return gyro_rpc_reply_error(reply, GYRO_RPC_INVALID_ARGUMENT,
                                        "%s:%llu: a document over the limit of %zu bytes "
                                        "(gyro serve --max-text-bytes)",
                                        source, (unsigned long long)d.line, svc->opt.max_text_bytes);
        gyro_normalized nd;
        if ((st = gyro_normalize_text(s->norm[which], d.data, d.len, &nd)) != GYRO_OK) {
            gyro_error_prefix(st, "%s:%llu", source, (unsigned long long)d.line);
            break;
        }
        Gyro__V1__Document doc = GYRO__V1__DOCUMENT__INIT;
        gyro_normalize_stage_to_document(&nd, source, d.line, ++ns->id, &doc);
        if ((st = gyro_rpc_reply_send(reply, &doc.base)) != GYRO_OK) break;
    }
    if (st != GYRO_OK) return gyro_rpc_reply_error(reply, gyro_rpc_code_from_status(st), "%s", gyro_error_message());
    return GYRO_RPC_CONTINUE;
}

/* Embed: look up the requested tokens (and the grapheme clusters of `text`, normalized with the
 * default options, whitespace skipped) in the table of the requested model. Vectors point into
 * the immutable table; nothing is copied. */
static int embed_reply(gyro_service *svc, int t, const loaded_table *lt, const Gyro__V1__EmbedRequest *rq,
                       gyro_rpc_reply *reply);

static int h_embed(void *ctx, int t, const ProtobufCMessage *request, gyro_rpc_reply *reply)
{
    gyro_service *svc = ctx;
    const Gyro__V1__EmbedRequest *rq = (const Gyro__V1__EmbedRequest *)request;
    int lim = text_limit(svc, "text", rq->text, reply);
    if (lim != GYRO_RPC_OK) return lim;
    loaded_table *lt = tables_pin(svc, t);
    int code = embed_reply(svc, t, lt, rq, reply);
    tables_unpin(svc, t);
    return code;
}

/* Embed's work on the pinned table `lt` (NULL: none served). */
static int embed_reply(gyro_service *svc, int t, const loaded_table *lt, const Gyro__V1__EmbedRequest *rq,
                       gyro_rpc_reply *reply)
{
    if (!lt)
        return gyro_rpc_reply_error(reply, GYRO_RPC_UNAVAILABLE, "no embedding table loaded (start gyro serve with "
                                    "--embeddings, or train one with TrainEmbeddings)");
    const gyro_embedding_table *tab = NULL;
    int want = rq->model;
    if (want == GYRO__V1__EMBEDDING_MODEL__EMBEDDING_MODEL_UNSPECIFIED)
        want = lt->table->model == GYRO__V1__EMBEDDING_MODEL__EUCLIDEAN ? GYRO__V1__EMBEDDING_MODEL__EUCLIDEAN
                                                                        : GYRO__V1__EMBEDDING_MODEL__POINCARE;
    if (lt->table->model == want) tab = lt->table;
    else if (lt->alt && lt->alt->model == want) tab = lt->alt;
    if (!tab)
        return gyro_rpc_reply_error(reply, GYRO_RPC_FAILED_PRECONDITION, "the table is %s (curvature %g); it has no %s form",
                                    gyro_embedding_model_name(lt->table->model), lt->table->curvature,
                                    gyro_embedding_model_name(want));
    thread_state *s = &svc->ts[t];
    gyro_normalized nd = {0};
    if (rq->text[0]) {
        if (!s->norm[0]) {
            gyro_status st = gyro_normalizer_new(NULL, &s->norm[0]);
            if (st != GYRO_OK) return gyro_rpc_reply_error(reply, gyro_rpc_code_from_status(st), "%s", gyro_error_message());
        }
        gyro_status st = gyro_normalize_text(s->norm[0], rq->text, strlen(rq->text), &nd);
        if (st != GYRO_OK) return gyro_rpc_reply_error(reply, gyro_rpc_code_from_status(st), "%s", gyro_error_message());
    }
    size_t n = rq->n_tokens + nd.n_chars;
    Gyro__V1__EmbeddingEntry *e = calloc(n ? n : 1, sizeof *e);
    Gyro__V1__EmbeddingEntry **ep = calloc(n ? n : 1, sizeof *ep);
    char **missing = calloc(n ? n : 1, sizeof *missing);
    int code = GYRO_RPC_OK;
    if (!e || !ep || !missing) {
        code = gyro_rpc_reply_error(reply, GYRO_RPC_RESOURCE_EXHAUSTED, "out of memory");
        goto out;
    }
    size_t ne = 0, nm = 0;
    for (size_t i = 0; i < n; i++) {
        char *tok = i < rq->n_tokens ? rq->tokens[i] : nd.chars[i - rq->n_tokens];
        if (i >= rq->n_tokens) { /* whitespace clusters of the text separate, they are not tokens */
            const char *p = tok;
            while (*p == ' ') p++;
            if (!*p) continue;
        }
        int row = gyro_embedding_table_find(tab, tok);
        if (row < 0) {
            missing[nm++] = tok;
            continue;
        }
        gyro__v1__embedding_entry__init(&e[ne]);
        e[ne].token = tab->tokens[row];
        e[ne].count = tab->counts[row];
        e[ne].n_vector = (size_t)tab->stride;
        e[ne].vector = tab->vectors + (size_t)row * (size_t)tab->stride;
        ep[ne] = &e[ne];
        ne++;
    }
    Gyro__V1__EmbedResponse resp = GYRO__V1__EMBED_RESPONSE__INIT;
    resp.model = tab->model;
    resp.curvature = tab->curvature;
    resp.dim = (uint32_t)tab->dim;
    resp.n_entries = ne;
    resp.entries = ep;
    resp.n_missing = nm;
    resp.missing = missing;
    if (gyro_rpc_reply_send(reply, &resp.base) != GYRO_OK)
        code = gyro_rpc_reply_error(reply, GYRO_RPC_RESOURCE_EXHAUSTED, "out of memory");
out:
    free(e);
    free(ep);
    free(missing);
    return code;
}

/* Neighbors: the k nearest characters by the distance of the table's own model. */
static int neighbors_reply(const loaded_table *lt, const Gyro__V1__NeighborsRequest *rq, gyro_rpc_reply *reply);

static int h_neighbors(void *ctx, int t, const ProtobufCMessage *request, gyro_rpc_reply *reply)
{
    gyro_service *svc = ctx;
    const Gyro__V1__NeighborsRequest *rq = (const Gyro__V1__NeighborsRequest *)request;
    loaded_table *lt = tables_pin(svc, t);
    int code = neighbors_reply(lt, rq, reply);
    tables_unpin(svc, t);
    return code;
}

/* Neighbors' work on the pinned table `lt` (NULL: none served). */
static int neighbors_reply(const loaded_table *lt, const Gyro__V1__NeighborsRequest *rq, gyro_rpc_reply *reply)
{
    if (!lt)
        return gyro_rpc_reply_error(reply, GYRO_RPC_UNAVAILABLE, "no embedding table loaded (start gyro serve with "
                                    "--embeddings, or train one with TrainEmbeddings)");
    const gyro_embedding_table *tab = lt->table;
    int row = rq->token[0] ? gyro_embedding_table_find(tab, rq->token) : -1;
    if (row < 0) return gyro_rpc_reply_error(reply, GYRO_RPC_NOT_FOUND, "'%s' is not in the embedding table", rq->token);
    int k = rq->k ? (rq->k > 1000 ? 1000 : (int)rq->k) : 10;
    if (k > tab->n - 1) k = tab->n - 1;
    if (k < 1) return gyro_rpc_reply_error(reply, GYRO_RPC_FAILED_PRECONDITION, "the table has a single row");
    gyro_neighbor *nb = calloc((size_t)k, sizeof *nb);
    Gyro__V1__Neighbor *m = calloc((size_t)k, sizeof *m);
    Gyro__V1__Neighbor **mp = calloc((size_t)k, sizeof *mp);
    int code = GYRO_RPC_OK, n = 0;
    gyro_status st;
    if (!nb || !m || !mp) {
        code = gyro_rpc_reply_error(reply, GYRO_RPC_RESOURCE_EXHAUSTED, "out of memory");
    } else if ((st = gyro_embedding_neighbors(tab, row, k, nb, &n)) != GYRO_OK) {
        code = gyro_rpc_reply_error(reply, gyro_rpc_code_from_status(st), "%s", gyro_error_message());
    } else {
        for (int i = 0; i < n; i++) {
            gyro__v1__neighbor__init(&m[i]);
            m[i].token = tab->tokens[nb[i].row];
            m[i].distance = nb[i].distance;
            mp[i] = &m[i];
        }
        Gyro__V1__NeighborsResponse resp = GYRO__V1__NEIGHBORS_RESPONSE__INIT;
        resp.token = tab->tokens[row];
        resp.n_neighbors = (size_t)n;
        resp.neighbors = mp;
        if (gyro_rpc_reply_send(reply, &resp.base) != GYRO_OK)
            code = gyro_rpc_reply_error(reply, GYRO_RPC_RESOURCE_EXHAUSTED, "out of memory");
    }
    free(nb);
    free(m);
    free(mp);
    return code;
}

/* Reason with environment "composite": the greedy episode of the composite-intent policy
 * (gyro_composite_reason, as `gyro reason --env composite`) on the utterance in `input`. Steps:
 * each emitted atom with its probability, then "<stop>"; the state of a step is the atoms
 * emitted before it joined with '+' ("" at the start); rewards are 0 (no gold set to score
 * against). The answer is the emitted set joined with '+'. The policy is shared read-only (the
 * episode allocates its own activations). */
static int reason_composite(gyro_service *svc, int t, const Gyro__V1__ReasonRequest *rq, gyro_rpc_reply *reply)
{
    if (!svc->composite)
        return gyro_rpc_reply_error(reply, GYRO_RPC_UNAVAILABLE,
                                    "no composite policy loaded (start gyro serve with --composite-policy)");
    thread_state *s = &svc->ts[t];
    if (!s->composite && !(s->composite = malloc(sizeof *s->composite)))
        return gyro_rpc_reply_error(reply, GYRO_RPC_RESOURCE_EXHAUSTED, "out of memory");
    gyro_composite_reason_result *r = s->composite;
    gyro_status st = gyro_composite_reason(svc->composite, rq->input, r);
    if (st != GYRO_OK) return gyro_rpc_reply_error(reply, gyro_rpc_code_from_status(st), "%s", gyro_error_message());
    Gyro__V1__ReasonStep steps[GYRO_COMPOSITE_MAX_STEPS + 1];
    Gyro__V1__ReasonStep *sp[GYRO_COMPOSITE_MAX_STEPS + 1];
    char state[GYRO_COMPOSITE_MAX_STEPS + 1][GYRO_COMPOSITE_ANSWER_MAX];
    size_t used = 0;
    for (int i = 0; i < r->n_steps; i++) {
        /* the prefix of the answer before atom i: atoms are emitted in answer order */
        memcpy(state[i], r->answer, used);
        state[i][used] = 0;
        if (i < r->n_emitted) used += strlen(r->action[i]) + (i > 0);
        gyro__v1__reason_step__init(&steps[i]);
        steps[i].index = (uint32_t)(i + 1);
        steps[i].action = (char *)r->action[i];
        steps[i].probability = r->prob[i];
        steps[i].state = state[i];
        sp[i] = &steps[i];
    }
    Gyro__V1__ReasonResponse resp = GYRO__V1__REASON_RESPONSE__INIT;
    resp.n_steps = (size_t)r->n_steps;
    resp.steps = sp;
    resp.answer = r->answer;
    resp.model_version = svc->composite_version;
    if (gyro_rpc_reply_send(reply, &resp.base) != GYRO_OK)
        return gyro_rpc_reply_error(reply, GYRO_RPC_RESOURCE_EXHAUSTED, "out of memory");
    return GYRO_RPC_OK;
}

/* Reason: one episode of the served policy (gyro_rl_reason, as `gyro reason`) from the
 * request's input; every step with its action, probability and reward. Each handler thread has
 * its own copy of the policy (its activations are per object). Environment "composite" goes to
 * the composite-intent policy (reason_composite). */
static int h_reason(void *ctx, int t, const ProtobufCMessage *request, gyro_rpc_reply *reply)
{
    gyro_service *svc = ctx;
    const Gyro__V1__ReasonRequest *rq = (const Gyro__V1__ReasonRequest *)request;
    int lim = text_limit(svc, "input", rq->input, reply);
    if (lim != GYRO_RPC_OK) return lim;
    if (!strcmp(rq->environment, "composite")) return reason_composite(svc, t, rq, reply);
    if (!strcmp(rq->environment, "sudoku")) return gyro_reason_sudoku_handle(svc->sudoku, t, rq, reply);
    const gyro_rl_env *want = rq->environment[0] ? gyro_rl_env_find(rq->environment) : NULL;
    if (rq->environment[0] && !want)
        return gyro_rpc_reply_error(reply, GYRO_RPC_INVALID_ARGUMENT, "unknown environment '%s'", rq->environment);
    if (!svc->policies)
        return gyro_rpc_reply_error(reply, GYRO_RPC_UNAVAILABLE, "no policy loaded (start gyro serve with --policy)");
    gyro_rl_policy *p = svc->policies[t];
    if (want) {
        if (strcmp(want->name, p->env_name) != 0)
            return gyro_rpc_reply_error(reply, GYRO_RPC_FAILED_PRECONDITION, "the served policy is for '%s', not '%s'",
                                        p->env_name, want->name);
    }
    thread_state *s = &svc->ts[t];
    if (!s->reason && !(s->reason = malloc(sizeof *s->reason)))
        return gyro_rpc_reply_error(reply, GYRO_RPC_RESOURCE_EXHAUSTED, "out of memory");
    gyro_rl_reason_result *r = s->reason;
    int max_steps = rq->max_steps > GYRO_RL_REASON_MAX_STEPS ? GYRO_RL_REASON_MAX_STEPS : (int)rq->max_steps;
    gyro_status st = gyro_rl_reason(p, rq->input, max_steps, rq->sample, rq->seed, r);
    if (st != GYRO_OK) return gyro_rpc_reply_error(reply, gyro_rpc_code_from_status(st), "%s", gyro_error_message());
    Gyro__V1__ReasonStep steps[GYRO_RL_REASON_MAX_STEPS];
    Gyro__V1__ReasonStep *sp[GYRO_RL_REASON_MAX_STEPS];
    for (int i = 0; i < r->n_steps; i++) {
        gyro__v1__reason_step__init(&steps[i]);
        steps[i].index = (uint32_t)r->steps[i].index;
        steps[i].action = r->steps[i].action_text;
        steps[i].probability = r->steps[i].probability;
        steps[i].reward = r->steps[i].reward;
        steps[i].state = r->steps[i].state;
        sp[i] = &steps[i];
    }
    char answer[320];
    snprintf(answer, sizeof answer, "%s; %s = %.6g", r->final_state, r->env->metric_name, r->metric);
    Gyro__V1__ReasonResponse resp = GYRO__V1__REASON_RESPONSE__INIT;
    resp.n_steps = (size_t)r->n_steps;
    resp.steps = sp;
    resp.total_reward = r->reward;
    resp.answer = answer;
    resp.model_version = svc->policy_version;
    if (gyro_rpc_reply_send(reply, &resp.base) != GYRO_OK)
        return gyro_rpc_reply_error(reply, GYRO_RPC_RESOURCE_EXHAUSTED, "out of memory");
    return GYRO_RPC_OK;
}

/* The health services: "" (the whole server) and gyro.v1.Gyro; both SERVING until the drain
 * before shutdown. */
static int health_known(const char *service) { return !service[0] || !strcmp(service, "gyro.v1.Gyro"); }

static Grpc__Health__V1__HealthCheckResponse__ServingStatus health_status(const gyro_service *svc)
{
    return atomic_load(&((gyro_service *)svc)->serving) ? GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__SERVING
                                                        : GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__NOT_SERVING;
}

static int h_health(void *ctx, int t, const ProtobufCMessage *request, gyro_rpc_reply *reply)
{
    (void)t;
    gyro_service *svc = ctx;
    const Grpc__Health__V1__HealthCheckRequest *rq = (const Grpc__Health__V1__HealthCheckRequest *)request;
    if (!health_known(rq->service))
        return gyro_rpc_reply_error(reply, GYRO_RPC_NOT_FOUND, "unknown service '%s'", rq->service);
    Grpc__Health__V1__HealthCheckResponse resp = GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__INIT;
    resp.status = health_status(svc);
    if (gyro_rpc_reply_send(reply, &resp.base) != GYRO_OK)
        return gyro_rpc_reply_error(reply, GYRO_RPC_RESOURCE_EXHAUSTED, "out of memory");
    return GYRO_RPC_OK;
}

/* Health/Watch (the grpc.health.v1 protocol): the current status at once, then one message each
 * time it changes (SERVING -> NOT_SERVING when the drain before shutdown begins); an unknown
 * service gets SERVICE_UNKNOWN and the call stays open, as the protocol says. The call waits
 * parked between changes (GYRO_RPC_WAIT; gyro_service_set_serving wakes it) and ends when the
 * client cancels or the server shuts down (UNAVAILABLE). State: the last status sent + 1. */
static void watch_state_free(void *p) { free(p); }

static int h_health_watch(void *ctx, int t, const ProtobufCMessage *request, gyro_rpc_reply *reply)
{
    (void)t;
    gyro_service *svc = ctx;
    const Grpc__Health__V1__HealthCheckRequest *rq = (const Grpc__Health__V1__HealthCheckRequest *)request;
    int *last = gyro_rpc_reply_state(reply);
    if (!last) {
        if (!(last = calloc(1, sizeof *last)))
            return gyro_rpc_reply_error(reply, GYRO_RPC_RESOURCE_EXHAUSTED, "out of memory");
        gyro_rpc_reply_set_state(reply, last, watch_state_free);
    }
    int now = health_known(rq->service) ? (int)health_status(svc)
                                        : GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__SERVICE_UNKNOWN;
    if (*last != now + 1) {
        Grpc__Health__V1__HealthCheckResponse resp = GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__INIT;
        resp.status = (Grpc__Health__V1__HealthCheckResponse__ServingStatus)now;
        if (gyro_rpc_reply_send(reply, &resp.base) != GYRO_OK)
            return gyro_rpc_reply_error(reply, GYRO_RPC_RESOURCE_EXHAUSTED, "out of memory");
        *last = now + 1;
    }
    return GYRO_RPC_WAIT;
}

/* grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo and its v1 twin (bidi, one
 * response per request): list_services names the services of the method table (gyro.v1.Gyro,
 * grpc.health.v1.Health and the two reflection services); file_by_filename and file_containing_symbol answer the FileDescriptorProto of
 * the file followed by its imports, transitively, from the descriptor set compiled into libgyro
 * (pipeline/reflection.h); all_extension_numbers_of_type answers an empty list for a known
 * message (gyro declares no extensions). Errors go in an ErrorResponse, as the protocol says, and
 * the stream goes on: NOT_FOUND for an unknown file, symbol, type or extension, UNIMPLEMENTED
 * for a request that sets none of the kinds above. Every response echoes the request and its
 * host. */
#define MAX_SERVICES 8

static int h_reflection(void *ctx, int t, const ProtobufCMessage *request, gyro_rpc_reply *reply)
{
    (void)t;
    gyro_service *svc = ctx;
    const Grpc__Reflection__V1alpha__ServerReflectionRequest *rq =
        (const Grpc__Reflection__V1alpha__ServerReflectionRequest *)request;
    Grpc__Reflection__V1alpha__ServerReflectionResponse resp = GRPC__REFLECTION__V1ALPHA__SERVER_REFLECTION_RESPONSE__INIT;
    Grpc__Reflection__V1alpha__ErrorResponse err = GRPC__REFLECTION__V1ALPHA__ERROR_RESPONSE__INIT;
    Grpc__Reflection__V1alpha__FileDescriptorResponse files = GRPC__REFLECTION__V1ALPHA__FILE_DESCRIPTOR_RESPONSE__INIT;
    Grpc__Reflection__V1alpha__ExtensionNumberResponse ext = GRPC__REFLECTION__V1ALPHA__EXTENSION_NUMBER_RESPONSE__INIT;
    Grpc__Reflection__V1alpha__ListServiceResponse list = GRPC__REFLECTION__V1ALPHA__LIST_SERVICE_RESPONSE__INIT;
    Grpc__Reflection__V1alpha__ServiceResponse sr[MAX_SERVICES], *srp[MAX_SERVICES];
    char names[MAX_SERVICES][96];
    resp.valid_host = rq->host;
    resp.original_request = (Grpc__Reflection__V1alpha__ServerReflectionRequest *)rq; /* packed, not changed */
    const gyro_reflection *refl = svc->reflection;
    int nf = gyro_reflection_n_files(refl), file = -1, kind = 0;
    int *closure = calloc((size_t)(nf ? nf : 1), sizeof *closure);
    ProtobufCBinaryData *blobs = calloc((size_t)(nf ? nf : 1), sizeof *blobs);
    int code = GYRO_RPC_OK;
    if (!closure || !blobs) {
        code = gyro_rpc_reply_error(reply, GYRO_RPC_RESOURCE_EXHAUSTED, "out of memory");
        goto out;
    }
    err.error_code = GYRO_RPC_NOT_FOUND;
    switch (rq->message_request_case) {
    case GRPC__REFLECTION__V1ALPHA__SERVER_REFLECTION_REQUEST__MESSAGE_REQUEST_FILE_BY_FILENAME:
        file = gyro_reflection_find_file(refl, rq->file_by_filename);
        err.error_message = "file not found";
        break;
    case GRPC__REFLECTION__V1ALPHA__SERVER_REFLECTION_REQUEST__MESSAGE_REQUEST_FILE_CONTAINING_SYMBOL:
        file = gyro_reflection_find_symbol(refl, rq->file_containing_symbol, NULL);
        err.error_message = "symbol not found";
        break;
    case GRPC__REFLECTION__V1ALPHA__SERVER_REFLECTION_REQUEST__MESSAGE_REQUEST_FILE_CONTAINING_EXTENSION:
        err.error_message = "extension not found (the served files declare no extensions)";
        break;
    case GRPC__REFLECTION__V1ALPHA__SERVER_REFLECTION_REQUEST__MESSAGE_REQUEST_ALL_EXTENSION_NUMBERS_OF_TYPE:
        if (gyro_reflection_find_symbol(refl, rq->all_extension_numbers_of_type, &kind) >= 0 &&
            kind == GYRO_REFL_MESSAGE) {
            ext.base_type_name = rq->all_extension_numbers_of_type;
            resp.message_response_case =
                GRPC__REFLECTION__V1ALPHA__SERVER_REFLECTION_RESPONSE__MESSAGE_RESPONSE_ALL_EXTENSION_NUMBERS_RESPONSE;
            resp.all_extension_numbers_response = &ext;
        }
        err.error_message = "type not found";
        break;
    case GRPC__REFLECTION__V1ALPHA__SERVER_REFLECTION_REQUEST__MESSAGE_REQUEST_LIST_SERVICES: {
        int n_methods, ns = 0;
        const gyro_rpc_method *m = gyro_service_methods(&n_methods);
        for (int i = 0; i < n_methods; i++) {
            const char *p = m[i].path + 1, *slash = strchr(p, '/');
            size_t len = slash ? (size_t)(slash - p) : strlen(p);
            int seen = len >= sizeof names[0];
            for (int k = 0; k < ns && !seen; k++) seen = strlen(names[k]) == len && !memcmp(names[k], p, len);
            if (seen || ns == MAX_SERVICES) continue;
            memcpy(names[ns], p, len);
            names[ns][len] = 0;
            grpc__reflection__v1alpha__service_response__init(&sr[ns]);
            sr[ns].name = names[ns];
            srp[ns] = &sr[ns];
            ns++;
        }
        list.n_service = (size_t)ns;
        list.service = srp;
        resp.message_response_case = GRPC__REFLECTION__V1ALPHA__SERVER_REFLECTION_RESPONSE__MESSAGE_RESPONSE_LIST_SERVICES_RESPONSE;
        resp.list_services_response = &list;
        break;
    }
    default:
        err.error_code = GYRO_RPC_UNIMPLEMENTED;
        err.error_message = "the request sets no message_request this server knows";
        break;
    }
    if (file >= 0) {
        int n = gyro_reflection_closure(refl, file, closure);
        for (int i = 0; i < n; i++) blobs[i].data = (uint8_t *)gyro_reflection_file_bytes(refl, closure[i], &blobs[i].len);
        files.n_file_descriptor_proto = (size_t)n;
        files.file_descriptor_proto = blobs;
        resp.message_response_case = GRPC__REFLECTION__V1ALPHA__SERVER_REFLECTION_RESPONSE__MESSAGE_RESPONSE_FILE_DESCRIPTOR_RESPONSE;
        resp.file_descriptor_response = &files;
    }
    if (resp.message_response_case == GRPC__REFLECTION__V1ALPHA__SERVER_REFLECTION_RESPONSE__MESSAGE_RESPONSE__NOT_SET) {
        resp.message_response_case = GRPC__REFLECTION__V1ALPHA__SERVER_REFLECTION_RESPONSE__MESSAGE_RESPONSE_ERROR_RESPONSE;
        resp.error_response = &err;
    }
    if (gyro_rpc_reply_send(reply, &resp.base) != GYRO_OK)
        code = gyro_rpc_reply_error(reply, GYRO_RPC_RESOURCE_EXHAUSTED, "out of memory");
out:
    free(closure);
    free(blobs);
    return code;
}

static int h_stats(void *ctx, int t, const ProtobufCMessage *request, gyro_rpc_reply *reply)
{
    (void)request;
    gyro_service *svc = ctx;
    const gyro_rpc_server *srv = atomic_load(&svc->server);
    if (!srv) return gyro_rpc_reply_error(reply, GYRO_RPC_UNAVAILABLE, "statistics are not available");
    gyro_rpc_stats st;
    if (gyro_rpc_server_stats(srv, &st) != GYRO_OK)
        return gyro_rpc_reply_error(reply, GYRO_RPC_RESOURCE_EXHAUSTED, "out of memory");
    int n_methods;
    const gyro_rpc_method *methods = gyro_service_methods(&n_methods);
    size_t nrows = (size_t)(st.n_methods + 1) * GYRO_RPC_CODE_COUNT, used = 0;
    for (size_t i = 0; i < nrows; i++) used += st.counts[i] != 0;
    Gyro__V1__StatusCount *sc = calloc(used ? used : 1, sizeof *sc);
    Gyro__V1__StatusCount **scp = calloc(used ? used : 1, sizeof *scp);
    Gyro__V1__LatencyBucket lb[GYRO_RPC_LATENCY_BUCKETS];
    Gyro__V1__LatencyBucket *lbp[GYRO_RPC_LATENCY_BUCKETS];
    int code = GYRO_RPC_OK;
    if (!sc || !scp) {
        code = gyro_rpc_reply_error(reply, GYRO_RPC_RESOURCE_EXHAUSTED, "out of memory");
        goto out;
    }
    size_t j = 0;
    for (size_t i = 0; i < nrows; i++) {
        if (!st.counts[i]) continue;
        int m = (int)(i / GYRO_RPC_CODE_COUNT);
        gyro__v1__status_count__init(&sc[j]);
        sc[j].method = (char *)(m < n_methods ? methods[m].path : "(unknown method)");
        sc[j].code = (char *)gyro_rpc_code_name((int)(i % GYRO_RPC_CODE_COUNT));
        sc[j].count = st.counts[i];
        scp[j] = &sc[j];
        j++;
    }
    uint64_t below = 0;
    for (int b = 0; b < GYRO_RPC_LATENCY_BUCKETS; b++) { /* cumulative, as Prometheus' le buckets */
        below += st.latency[b];
        gyro__v1__latency_bucket__init(&lb[b]);
        lb[b].upper_us = gyro_rpc_latency_bound(b);
        lb[b].count = below;
        lbp[b] = &lb[b];
    }
    Gyro__V1__StatsResponse resp = GYRO__V1__STATS_RESPONSE__INIT;
    resp.n_status_counts = j;
    resp.status_counts = scp;
    resp.n_latency = GYRO_RPC_LATENCY_BUCKETS;
    resp.latency = lbp;
    resp.uptime_seconds = st.uptime_seconds;
    loaded_model *lm = pin(svc, t);
    resp.model_version = lm ? lm->version : "";
    if (gyro_rpc_reply_send(reply, &resp.base) != GYRO_OK)
        code = gyro_rpc_reply_error(reply, GYRO_RPC_RESOURCE_EXHAUSTED, "out of memory");
    unpin(svc, t);
out:
    free(sc);
    free(scp);
    gyro_rpc_stats_free(&st);
    return code;
}

/* TrainEmbeddings and TrainClassifier (pipeline/service_train.h): server streaming, parked between
 * progress messages; the training runs on the trainer's own thread. */
static int h_train_embeddings(void *ctx, int t, const ProtobufCMessage *request, gyro_rpc_reply *reply)
{
    (void)t;
    return gyro_trainer_handle_embeddings(((gyro_service *)ctx)->trainer, request, reply);
}

static int h_train_classifier(void *ctx, int t, const ProtobufCMessage *request, gyro_rpc_reply *reply)
{
    (void)t;
    return gyro_trainer_handle_classifier(((gyro_service *)ctx)->trainer, request, reply);
}

static const gyro_rpc_method service_methods[] = {
    {"/gyro.v1.Gyro/Classify", GYRO_RPC_UNARY, &gyro__v1__classify_request__descriptor, 1, h_classify},
    {"/gyro.v1.Gyro/ClassifyStream", GYRO_RPC_BIDI_STREAMING, &gyro__v1__classify_request__descriptor, 1,
     h_classify},
    {"/gyro.v1.Gyro/Normalize", GYRO_RPC_SERVER_STREAMING, &gyro__v1__normalize_request__descriptor, 1,
     h_normalize},
    {"/gyro.v1.Gyro/Embed", GYRO_RPC_UNARY, &gyro__v1__embed_request__descriptor, 0, h_embed},
    {"/gyro.v1.Gyro/Neighbors", GYRO_RPC_UNARY, &gyro__v1__neighbors_request__descriptor, 1, h_neighbors},
    {"/gyro.v1.Gyro/Reason", GYRO_RPC_UNARY, &gyro__v1__reason_request__descriptor, 1, h_reason},
    {"/gyro.v1.Gyro/Stats", GYRO_RPC_UNARY, &gyro__v1__stats_request__descriptor, 0, h_stats},
    {"/grpc.health.v1.Health/Check", GYRO_RPC_UNARY, &grpc__health__v1__health_check_request__descriptor, 0,
     h_health},
    {"/grpc.health.v1.Health/Watch", GYRO_RPC_SERVER_STREAMING, &grpc__health__v1__health_check_request__descriptor,
     0, h_health_watch},
    {"/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo", GYRO_RPC_BIDI_STREAMING,
     &grpc__reflection__v1alpha__server_reflection_request__descriptor, 0, h_reflection},
    /* v1 has v1alpha's messages and field numbers under another package: the same bytes on the
     * wire, so the same handler and types answer it */
    {"/grpc.reflection.v1.ServerReflection/ServerReflectionInfo", GYRO_RPC_BIDI_STREAMING,
     &grpc__reflection__v1alpha__server_reflection_request__descriptor, 0, h_reflection},
    {"/gyro.v1.Gyro/TrainEmbeddings", GYRO_RPC_SERVER_STREAMING, &gyro__v1__train_embeddings_request__descriptor, 0,
     h_train_embeddings},
    {"/gyro.v1.Gyro/TrainClassifier", GYRO_RPC_SERVER_STREAMING, &gyro__v1__train_classifier_request__descriptor, 0,
     h_train_classifier},
};

const gyro_rpc_method *gyro_service_methods(int *n)
{
    *n = (int)(sizeof service_methods / sizeof service_methods[0]);
    return service_methods;
}

void gyro_service_batch_handlers(gyro_rpc_batch_handler *out)
{
    /* Classify (unary) only; ClassifyStream's requests come one at a time on their own stream */
    for (size_t m = 0; m < sizeof service_methods / sizeof service_methods[0]; m++)
        out[m] = service_methods[m].handler == h_classify && service_methods[m].kind == GYRO_RPC_UNARY
                     ? h_classify_batch : NULL;
}

void gyro_service_print_stats(const gyro_rpc_stats *st, FILE *out)
{
    int n_methods;
    const gyro_rpc_method *methods = gyro_service_methods(&n_methods);
    uint64_t total = 0;
    fprintf(out, "gyro serve: calls by method and status (uptime %.1f s)\n", st->uptime_seconds);
    for (int m = 0; m <= st->n_methods; m++)
        for (int c = 0; c < GYRO_RPC_CODE_COUNT; c++) {
            uint64_t v = st->counts[m * GYRO_RPC_CODE_COUNT + c];
            if (!v) continue;
            total += v;
            fprintf(out, "  %-32s %-20s %llu\n", m < n_methods ? methods[m].path : "(unknown method)",
                    gyro_rpc_code_name(c), (unsigned long long)v);
        }
    fprintf(out, "  total %llu calls; latency p50 <= %.0f us, p90 <= %.0f us, p99 <= %.0f us\n",
            (unsigned long long)total, gyro_rpc_stats_percentile(st, 50), gyro_rpc_stats_percentile(st, 90),
            gyro_rpc_stats_percentile(st, 99));
    fprintf(out, "  latency histogram (us, upper bound: count):");
    for (int b = 0; b < GYRO_RPC_LATENCY_BUCKETS; b++)
        if (st->latency[b]) fprintf(out, " %g:%llu", gyro_rpc_latency_bound(b), (unsigned long long)st->latency[b]);
    fprintf(out, "\n");
    if (st->batches)
        fprintf(out, "  batches: %llu of %llu calls (mean %.2f calls)\n", (unsigned long long)st->batches,
                (unsigned long long)st->batched_calls, (double)st->batched_calls / (double)st->batches);
}

/* ---- Prometheus text format ----------------------------------------------------------------- */

/* A label value with \, " and newline escaped (the exposition format's rule). */
static void put_label(FILE *f, const char *v)
{
    for (; *v; v++) {
        if (*v == '\\') fputs("\\\\", f);
        else if (*v == '"') fputs("\\\"", f);
        else if (*v == '\n') fputs("\\n", f);
        else fputc(*v, f);
    }
}

/* The labels of method row m: grpc_type, grpc_service, grpc_method (go-grpc-prometheus' names). */
static void put_method(FILE *f, const gyro_rpc_method *methods, int n_methods, int m)
{
    static const char *const kinds[] = {"unary", "server_stream", "bidi_stream"};
    if (m >= n_methods) {
        fputs("grpc_type=\"unknown\",grpc_service=\"unknown\",grpc_method=\"unknown\"", f);
        return;
    }
    const char *p = methods[m].path + 1, *slash = strrchr(p, '/');
    int svc_len = slash ? (int)(slash - p) : 0;
    fprintf(f, "grpc_type=\"%s\",grpc_service=\"%.*s\",grpc_method=\"%s\"", kinds[methods[m].kind], svc_len, p,
            slash ? slash + 1 : p);
}

gyro_status gyro_service_metrics(gyro_service *svc, const gyro_rpc_server *srv, char **text, size_t *len)
{
    *text = NULL;
    *len = 0;
    gyro_rpc_stats st;
    gyro_status rc = gyro_rpc_server_stats(srv, &st);
    if (rc != GYRO_OK) return rc;
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    if (!f) {
        gyro_rpc_stats_free(&st);
        return gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    }
    int n_methods;
    const gyro_rpc_method *methods = gyro_service_methods(&n_methods);
    if (st.n_methods < n_methods) n_methods = st.n_methods; /* the server's table is the service's */

    fputs("# HELP grpc_server_handled_total RPCs completed on the server, by method and status code.\n"
          "# TYPE grpc_server_handled_total counter\n", f);
    for (int m = 0; m <= n_methods; m++) {
        int row = m < n_methods ? m : st.n_methods;
        for (int c = 0; c < GYRO_RPC_CODE_COUNT; c++) {
            uint64_t v = st.counts[row * GYRO_RPC_CODE_COUNT + c];
            if (!v && !(c == GYRO_RPC_OK && m < n_methods)) continue; /* every method has its OK series */
            fputs("grpc_server_handled_total{", f);
            put_method(f, methods, n_methods, m);
            fprintf(f, ",grpc_code=\"%s\"} %llu\n", gyro_rpc_code_name(c), (unsigned long long)v);
        }
    }
    fputs("# HELP grpc_server_handling_seconds Latency of unary RPCs (unknown methods included), from arrival "
          "to the end of the final batch.\n"
          "# TYPE grpc_server_handling_seconds histogram\n", f);
    for (int m = 0; m <= n_methods; m++) {
        int row = m < n_methods ? m : st.n_methods;
        const uint64_t *h = st.latency_by_method + (size_t)row * GYRO_RPC_LATENCY_BUCKETS;
        uint64_t total = 0;
        for (int b = 0; b < GYRO_RPC_LATENCY_BUCKETS; b++) total += h[b];
        if (m < n_methods ? methods[m].kind != GYRO_RPC_UNARY : total == 0) continue;
        uint64_t below = 0;
        for (int b = 0; b < GYRO_RPC_LATENCY_BUCKETS; b++) {
            below += h[b];
            double le = gyro_rpc_latency_bound(b);
            fputs("grpc_server_handling_seconds_bucket{", f);
            put_method(f, methods, n_methods, m);
            if (isinf(le)) fputs(",le=\"+Inf\"}", f);
            else fprintf(f, ",le=\"%.6g\"}", le / 1e6);
            fprintf(f, " %llu\n", (unsigned long long)below);
        }
        fputs("grpc_server_handling_seconds_sum{", f);
        put_method(f, methods, n_methods, m);
        fprintf(f, "} %.9g\n", st.latency_sum_seconds[row]);
        fputs("grpc_server_handling_seconds_count{", f);
        put_method(f, methods, n_methods, m);
        fprintf(f, "} %llu\n", (unsigned long long)total);
    }
    fprintf(f, "# HELP gyro_grpc_calls_in_flight RPCs with a client attached now (open Health/Watch streams "
               "included).\n# TYPE gyro_grpc_calls_in_flight gauge\ngyro_grpc_calls_in_flight %d\n", st.in_flight);
    fprintf(f, "# HELP gyro_batches_total Batches of two or more Classify calls run together (--max-batch).\n"
               "# TYPE gyro_batches_total counter\ngyro_batches_total %llu\n"
               "# HELP gyro_batched_calls_total Calls in those batches.\n"
               "# TYPE gyro_batched_calls_total counter\ngyro_batched_calls_total %llu\n",
            (unsigned long long)st.batches, (unsigned long long)st.batched_calls);
    fprintf(f, "# HELP gyro_uptime_seconds Seconds since the server started listening.\n"
               "# TYPE gyro_uptime_seconds gauge\ngyro_uptime_seconds %.3f\n", st.uptime_seconds);
    fprintf(f, "# HELP gyro_health_serving 1 while health says SERVING, 0 while draining before shutdown.\n"
               "# TYPE gyro_health_serving gauge\ngyro_health_serving %d\n", atomic_load(&svc->serving) ? 1 : 0);
    fprintf(f, "# HELP gyro_training_running 1 while a TrainEmbeddings or TrainClassifier call trains.\n"
               "# TYPE gyro_training_running gauge\ngyro_training_running %d\n", gyro_trainer_busy(svc->trainer));
    pthread_mutex_lock(&svc->info_mu);
    loaded_model info = svc->info;
    uint64_t ok = svc->reloads_ok, refused = svc->reloads_refused;
    pthread_mutex_unlock(&svc->info_mu);
    if (info.version[0]) {
        fputs("# HELP gyro_model_info The intent classifier being served (version: architecture, size and "
              "checksum of the file).\n# TYPE gyro_model_info gauge\ngyro_model_info{version=\"", f);
        put_label(f, info.version);
        fputs("\"} 1\n", f);
        fprintf(f, "# HELP gyro_model_loaded_timestamp_seconds Unix time the served model was loaded.\n"
                   "# TYPE gyro_model_loaded_timestamp_seconds gauge\ngyro_model_loaded_timestamp_seconds %.3f\n",
                info.loaded_at);
        fprintf(f, "# HELP gyro_model_load_duration_seconds How long loading the served model took.\n"
                   "# TYPE gyro_model_load_duration_seconds gauge\ngyro_model_load_duration_seconds %.6f\n",
                info.load_seconds);
    }
    fprintf(f, "# HELP gyro_model_reloads_total Model reloads (SIGHUP, TrainClassifier) by result.\n"
               "# TYPE gyro_model_reloads_total counter\n"
               "gyro_model_reloads_total{result=\"ok\"} %llu\ngyro_model_reloads_total{result=\"refused\"} %llu\n",
            (unsigned long long)ok, (unsigned long long)refused);
    gyro_rpc_stats_free(&st);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        free(buf);
        return gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    }
    *text = buf;
    *len = size;
    return GYRO_OK;
}

/* service_train.c — TrainEmbeddings and TrainClassifier over gRPC (see service_train.h).
 *
 * A call and its training thread share a train_job (reference-counted: the call's state and the
 * thread each hold one; whoever drops the last frees it). The job's mutex guards the queue of
 * progress messages, the result and `call_gone`; the thread calls the notify hook only while the
 * call is alive (under that mutex), so it never touches a server that has been freed: the server
 * frees a call's state before shutdown completes.
 *
 *   handler, round 1: check the request (limits, paths), take the trainer's single slot
 *                     (RESOURCE_EXHAUSTED if taken), copy the request, start the thread, park
 *   thread:           read the data, train (progress -> queue -> notify), write the output
 *                     atomically, serve a classifier (install hook), free the slot, mark done
 *   handler, later:   send the queued messages; when done, the last message and the status
 *   call ends early:  state_free sets the stop flags; the thread drops its results
 */
#include "pipeline/service_train.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "embeddings/char2vec.h"
#include "embeddings/corpus.h"
#include "embeddings/table.h"
#include "models/classifier.h"
#include "models/core/progress.h"
#include "models/train_classifier.h"
#include "models/transformer.h"
#include "pipeline/corpus_input.h"
#include "pipeline/example_file.h"
#include "pipeline/progress_stream.h"
#include "pipeline/stream.h"
#include "pipeline/table_file.h"
#include "proto/gyro.pb-c.h"

#define QUEUE_CAP 64          /* progress messages waiting for the handler; older ones coalesce */
#define PROGRESS_INTERVAL 0.25 /* seconds between progress messages */

enum { KIND_EMBEDDINGS = 0, KIND_CLASSIFIER = 1 };

struct gyro_trainer {
    gyro_trainer_limits lim;
    char dir[PATH_MAX];            /* lim.dir resolved (realpath) */
    gyro_trainer_hooks hooks;
    atomic_int busy;               /* the single training slot */
    atomic_ulong counter;          /* default output names */
    pthread_mutex_t mu;            /* thread, has_thread, current */
    pthread_t thread;
    int has_thread;
    struct train_job *current;
};

typedef struct train_job {
    gyro_trainer *t;
    int kind;
    ProtobufCMessage *req;         /* a deep copy of the request (the call's may go first) */
    char in_path[PATH_MAX];        /* resolved data file, or "" (data in the request) */
    char emb_path[PATH_MAX];       /* resolved starting table (classifier), or "" */
    char out_path[PATH_MAX];       /* the output under the directory */
    int epochs;                    /* for the epoch field of the progress */
    double t0;
    volatile int stop;             /* the classifier trainer's stop flag */
    volatile sig_atomic_t c2v_stop; /* char2vec's */
    atomic_int timed_out;
    pthread_mutex_t mu;            /* everything below */
    int refs;
    int call_gone;
    Gyro__V1__TrainingProgress q[QUEUE_CAP];
    int qn;
    uint64_t step;
    int done;                      /* the thread finished: code, details, version are final */
    int code;
    char details[512];
    char version[128];
} train_job;

static const char *const stage_name[2] = {"char2vec", "classify"};

/* ---- paths ---------------------------------------------------------------------------------- */

/* Whether `p` has a ".." component. */
static int has_dotdot(const char *p)
{
    for (const char *s = p; *s;) {
        const char *e = strchr(s, '/');
        size_t n = e ? (size_t)(e - s) : strlen(s);
        if (n == 2 && s[0] == '.' && s[1] == '.') return 1;
        if (!e) break;
        s = e + 1;
    }
    return 0;
}

/* Whether the resolved path `real` is the directory or inside it. */
static int inside(const gyro_trainer *t, const char *real)
{
    size_t n = strlen(t->dir);
    if (n == 1) return real[0] == '/'; /* the directory is / */
    return strncmp(real, t->dir, n) == 0 && (real[n] == '/' || real[n] == 0);
}

/* Resolve the data file `rel` (relative to the directory, or absolute inside it) into out. */
static int resolve_input(const gyro_trainer *t, const char *field, const char *rel, char *out,
                         gyro_rpc_reply *r)
{
    char joined[PATH_MAX * 2];
    if (strlen(rel) >= PATH_MAX)
        return gyro_rpc_reply_error(r, GYRO_RPC_INVALID_ARGUMENT, "%s is too long", field);
    if (has_dotdot(rel))
        return gyro_rpc_reply_error(r, GYRO_RPC_INVALID_ARGUMENT, "%s '%s': '..' is not allowed (paths are "
                                    "relative to the server's --train-dir)", field, rel);
    if (rel[0] == '/') snprintf(joined, sizeof joined, "%s", rel);
    else snprintf(joined, sizeof joined, "%s/%s", t->dir, rel);
    char real[PATH_MAX];
    if (!realpath(joined, real)) {
        if (errno == ENOENT || errno == ENOTDIR) {
            if (rel[0] == '/' && !inside(t, rel))
                return gyro_rpc_reply_error(r, GYRO_RPC_PERMISSION_DENIED, "%s '%s' is outside the server's "
                                            "--train-dir", field, rel);
            return gyro_rpc_reply_error(r, GYRO_RPC_NOT_FOUND, "%s '%s': no such file under the server's "
                                        "--train-dir", field, rel);
        }
        if (errno == ENAMETOOLONG)
            return gyro_rpc_reply_error(r, GYRO_RPC_INVALID_ARGUMENT, "%s: a name is too long", field);
        return gyro_rpc_reply_error(r, GYRO_RPC_PERMISSION_DENIED, "%s '%s': %s", field, rel, strerror(errno));
    }
    if (!inside(t, real))
        return gyro_rpc_reply_error(r, GYRO_RPC_PERMISSION_DENIED, "%s '%s' resolves outside the server's "
                                    "--train-dir", field, rel);
    struct stat sb;
    if (stat(real, &sb) != 0 || !S_ISREG(sb.st_mode))
        return gyro_rpc_reply_error(r, GYRO_RPC_INVALID_ARGUMENT, "%s '%s' is not a regular file", field, rel);
    if (sb.st_size > t->lim.max_file_bytes)
        return gyro_rpc_reply_error(r, GYRO_RPC_INVALID_ARGUMENT, "%s '%s' has %lld bytes, over the server's "
                                    "--train-max-file-bytes %ld", field, rel, (long long)sb.st_size,
                                    t->lim.max_file_bytes);
    snprintf(out, PATH_MAX, "%s", real);
    return GYRO_RPC_OK;
}

/* The output file: `name` (a relative path without '..', no component starting with '.', its
 * directory inside the trainer's), or a fresh default name; the full path goes to out. */
static int resolve_output(gyro_trainer *t, const char *name, const char *prefix, const char *ext, char *out,
                          gyro_rpc_reply *r)
{
    char def[128];
    if (!name[0]) {
        time_t now = time(NULL);
        struct tm tm;
        gmtime_r(&now, &tm);
        char stamp[32];
        strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
        snprintf(def, sizeof def, "%s-%s-%lu%s", prefix, stamp, (unsigned long)atomic_fetch_add(&t->counter, 1) + 1,
                 ext);
        name = def;
    }
    if (strlen(name) >= PATH_MAX / 2)
        return gyro_rpc_reply_error(r, GYRO_RPC_INVALID_ARGUMENT, "output is too long");
    if (name[0] == '/')
        return gyro_rpc_reply_error(r, GYRO_RPC_PERMISSION_DENIED, "output '%s': outputs are file names under the "
                                    "server's --train-dir, not absolute paths", name);
    if (has_dotdot(name))
        return gyro_rpc_reply_error(r, GYRO_RPC_INVALID_ARGUMENT, "output '%s': '..' is not allowed", name);
    for (const char *s = name; *s; s++)
        if ((s == name || s[-1] == '/') && (*s == '.' || *s == '/'))
            return gyro_rpc_reply_error(r, GYRO_RPC_INVALID_ARGUMENT, "output '%s': a component is empty or "
                                        "starts with '.'", name);
    for (const char *c = name; *c;) { /* room beside each name for the atomic writer's ".tmp.<pid>.<n>" */
        size_t n = strcspn(c, "/");
        if (n > NAME_MAX - 40)
            return gyro_rpc_reply_error(r, GYRO_RPC_INVALID_ARGUMENT, "output: a name is longer than %d bytes",
                                        NAME_MAX - 40);
        c += n + (c[n] == '/');
    }
    if (name[strlen(name) - 1] == '/')
        return gyro_rpc_reply_error(r, GYRO_RPC_INVALID_ARGUMENT, "output '%s' names a directory", name);
    char joined[PATH_MAX * 2], parent[PATH_MAX * 2], real[PATH_MAX];
    snprintf(joined, sizeof joined, "%s/%s", t->dir, name);
    snprintf(parent, sizeof parent, "%s", joined);
    *strrchr(parent, '/') = 0;
    if (!realpath(parent, real))
        return gyro_rpc_reply_error(r, GYRO_RPC_NOT_FOUND, "output '%s': its directory does not exist under the "
                                    "server's --train-dir", name);
    if (!inside(t, real))
        return gyro_rpc_reply_error(r, GYRO_RPC_PERMISSION_DENIED, "output '%s' resolves outside the server's "
                                    "--train-dir", name);
    struct stat sb;
    if (lstat(joined, &sb) == 0 && !S_ISREG(sb.st_mode))
        return gyro_rpc_reply_error(r, GYRO_RPC_INVALID_ARGUMENT, "output '%s' exists and is not a regular file",
                                    name);
    if (snprintf(out, PATH_MAX, "%s/%s", real, strrchr(joined, '/') + 1) >= PATH_MAX)
        return gyro_rpc_reply_error(r, GYRO_RPC_INVALID_ARGUMENT, "output is too long");
    return GYRO_RPC_OK;
}

/* ---- the job ---------------------------------------------------------------------------------- */

static void job_unref(train_job *j)
{
    pthread_mutex_lock(&j->mu);
    int left = --j->refs;
    pthread_mutex_unlock(&j->mu);
    if (left) return;
    if (j->req) protobuf_c_message_free_unpacked(j->req, NULL);
    pthread_mutex_destroy(&j->mu);
    free(j);
}

/* The call's state: the call ended (finished, cancelled, deadline, shutdown). */
static void job_call_gone(void *p)
{
    train_job *j = p;
    pthread_mutex_lock(&j->mu);
    j->call_gone = 1;
    if (!j->done) { /* ended early: the training stops and its results are dropped */
        j->stop = 1;
        j->c2v_stop = 1;
    }
    pthread_mutex_unlock(&j->mu);
    job_unref(j);
}

/* Queue a message and wake the call (unless it is gone). */
static void job_push(train_job *j, const Gyro__V1__TrainingProgress *m)
{
    pthread_mutex_lock(&j->mu);
    if (j->qn == QUEUE_CAP) j->q[QUEUE_CAP - 1] = *m; /* the handler is behind: keep the newest */
    else j->q[j->qn++] = *m;
    if (!j->call_gone && j->t->hooks.notify) j->t->hooks.notify(j->t->hooks.ctx);
    pthread_mutex_unlock(&j->mu);
}

/* The progress observer (on the training thread): one TrainingProgress per event; past the time
 * limit, the stop flags. */
static void on_progress(void *ctx, const gyro_progress_event *e)
{
    train_job *j = ctx;
    Gyro__V1__TrainingProgress m;
    pthread_mutex_lock(&j->mu);
    uint64_t step = ++j->step;
    pthread_mutex_unlock(&j->mu);
    gyro_progress_message_fill(&m, e, stage_name[j->kind], j->epochs, step);
    job_push(j, &m);
    if (gyro_now() - j->t0 > j->t->lim.max_seconds && !atomic_load(&j->timed_out)) {
        atomic_store(&j->timed_out, 1);
        j->stop = 1;
        j->c2v_stop = 1;
    }
}

/* The thread's result: its code and details, from a gyro_status (with the thread's message). */
static void job_finish(train_job *j, gyro_status st, const char *version)
{
    int code = GYRO_RPC_OK;
    char details[512] = "";
    if (st == GYRO_ERR_INTERRUPTED) {
        if (atomic_load(&j->timed_out)) {
            code = GYRO_RPC_DEADLINE_EXCEEDED;
            snprintf(details, sizeof details, "training stopped after the server's --train-max-seconds %g; "
                     "nothing was written", j->t->lim.max_seconds);
        } else {
            code = GYRO_RPC_CANCELLED;
            snprintf(details, sizeof details, "training cancelled; nothing was written");
        }
    } else if (st != GYRO_OK) {
        code = gyro_rpc_code_from_status(st);
        if (st == GYRO_ERR_NAN) code = GYRO_RPC_FAILED_PRECONDITION;
        snprintf(details, sizeof details, "%s", gyro_error_message());
    }
    pthread_mutex_lock(&j->mu);
    j->code = code;
    snprintf(j->details, sizeof j->details, "%s", details);
    if (version) snprintf(j->version, sizeof j->version, "%s", version);
    pthread_mutex_unlock(&j->mu);
}

/* ---- char2vec --------------------------------------------------------------------------------- */

/* Write the request's documents to `path` as text lines (when none has chars: normalized again
 * by the reader, as `gyro char2vec train` text) or as a Document stream (*stream = 1). */
static gyro_status write_documents(const Gyro__V1__TrainEmbeddingsRequest *rq, const char *path, int *stream)
{
    *stream = 0;
    for (size_t i = 0; i < rq->n_documents; i++)
        if (rq->documents[i]->n_chars) *stream = 1;
    if (*stream) {
        gyro_stream_writer *w;
        gyro_status st = gyro_stream_writer_open_path(path, &gyro__v1__document__descriptor, "gyro serve", &w);
        for (size_t i = 0; !st && i < rq->n_documents; i++) st = gyro_stream_write(w, &rq->documents[i]->base);
        if (st) {
            gyro_stream_writer_abort(w);
            return st;
        }
        return gyro_stream_writer_close(w);
    }
    FILE *f = fopen(path, "wb");
    if (!f) return gyro_error_set(GYRO_ERR_IO, "%s: cannot create: %s", path, strerror(errno));
    for (size_t i = 0; i < rq->n_documents; i++) {
        for (const char *s = rq->documents[i]->text; *s; s++) fputc(*s == '\n' || *s == '\r' ? ' ' : *s, f);
        fputc('\n', f);
    }
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) return gyro_error_set(GYRO_ERR_IO, "%s: write error", path);
    return GYRO_OK;
}

static gyro_status train_embeddings(train_job *j, const char *work)
{
    const Gyro__V1__TrainEmbeddingsRequest *rq = (const Gyro__V1__TrainEmbeddingsRequest *)j->req;
    char corpus_path[PATH_MAX + 64], ids[PATH_MAX + 64];
    snprintf(ids, sizeof ids, "%s/corpus.ids", work);
    gyro_corpus_input_options copt;
    gyro_corpus_input_options_init(&copt);
    copt.min_count = rq->min_count ? rq->min_count : 1;
    gyro_status st = GYRO_OK;
    if (j->in_path[0]) {
        snprintf(corpus_path, sizeof corpus_path, "%s", j->in_path);
    } else {
        int stream;
        snprintf(corpus_path, sizeof corpus_path, "%s/corpus", work);
        st = write_documents(rq, corpus_path, &stream);
        copt.format = stream ? GYRO_CORPUS_STREAM : GYRO_CORPUS_TEXT;
    }
    gyro_c2v_options co;
    gyro_c2v_options_init(&co);
    co.geometry = rq->euclidean ? GYRO_C2V_EUCLIDEAN : GYRO_C2V_HYPERBOLIC;
    if (rq->dim) co.dim = (int)rq->dim;
    if (rq->epochs) co.epochs = (int)rq->epochs;
    if (rq->window) co.window = (int)rq->window;
    if (rq->negatives) co.negatives = (int)rq->negatives;
    if (rq->seed) co.seed = rq->seed;
    co.threads = 1;
    if (!st && gyro_c2v_options_check(&co)) st = gyro_error_set(GYRO_ERR_USAGE, "%s", gyro_error_message());
    j->epochs = co.epochs;
    gyro_vocab vocab;
    memset(&vocab, 0, sizeof vocab);
    gyro_corpus_stats cs;
    memset(&cs, 0, sizeof cs);
    const char *inputs[1] = {corpus_path};
    int have_vocab = 0;
    if (!st) {
        st = gyro_corpus_input_encode(inputs, 1, &copt, ids, &vocab, &cs);
        have_vocab = 1;
        if (st == GYRO_ERR_IO && !j->in_path[0]) st = gyro_error_set(GYRO_ERR_INTERNAL, "%s", gyro_error_message());
        if (st && j->in_path[0]) /* name the file as the client did, not the resolved path */
            st = gyro_error_prefix(st, "corpus_path '%s'", rq->corpus_path);
    }
    if (!st && cs.documents > (uint64_t)j->t->lim.max_examples)
        st = gyro_error_set(GYRO_ERR_LIMIT, "the corpus has %llu documents, over the server's --train-max-examples "
                            "%ld", (unsigned long long)cs.documents, j->t->lim.max_examples);
    gyro_corpus corpus = {.fd = -1};
    gyro_c2v_model m;
    memset(&m, 0, sizeof m);
    if (!st) st = gyro_corpus_open(ids, &corpus);
    if (!st) st = gyro_c2v_model_init(&m, &co, &vocab, corpus.n_ids, corpus.n_tokens);
    if (have_vocab) gyro_vocab_free(&vocab);
    gyro_c2v_report rep;
    if (!st) {
        gyro_c2v_run run = {.stop = &j->c2v_stop, .quiet = 1};
        gyro_progress_set_observer(on_progress, j, PROGRESS_INTERVAL);
        st = gyro_c2v_train(&m, &corpus, &run, &rep);
        gyro_progress_set_observer(NULL, NULL, 0);
    }
    gyro_corpus_close(&corpus);
    if (!st && j->stop) st = gyro_error_set(GYRO_ERR_INTERRUPTED, "cancelled");
    if (!st) {
        char trained_by[512];
        snprintf(trained_by, sizeof trained_by,
                 "gyro serve TrainEmbeddings --geometry %s --dim %d --window %d --negatives %d --epochs %d "
                 "--min-count %llu --seed %llu", co.geometry == GYRO_C2V_HYPERBOLIC ? "hyperbolic" : "euclidean",
                 co.dim, co.window, co.negatives, co.epochs, (unsigned long long)copt.min_count,
                 (unsigned long long)co.seed);
        gyro_embedding_table *tab = NULL;
        st = gyro_c2v_model_table(&m, trained_by, &tab);
        if (!st) st = gyro_table_file_save(tab, j->out_path);
        gyro_embedding_table_free(tab);
        if (!st && j->t->hooks.install_table && (st = j->t->hooks.install_table(j->t->hooks.ctx, j->out_path)))
            st = gyro_error_prefix(GYRO_ERR_INTERNAL, "the table was written to %s but not served", j->out_path);
    }
    gyro_c2v_model_free(&m);
    return st;
}

/* ---- classifier -------------------------------------------------------------------------------- */

static gyro_status train_classifier(train_job *j, char *version, size_t cap)
{
    const Gyro__V1__TrainClassifierRequest *rq = (const Gyro__V1__TrainClassifierRequest *)j->req;
    gyro_example_set set = {0};
    gyro_status st = GYRO_OK;
    if (j->in_path[0]) {
        gyro_example_read_stats rs = {0};
        st = gyro_example_file_read_format(&set, j->in_path, GYRO_EXAMPLES_AUTO, &rs);
        if (st) st = gyro_error_prefix(st == GYRO_ERR_IO ? GYRO_ERR_DATA : st, "data_path '%s'", rq->data_path);
        if (!st && set.n == 0) st = gyro_error_set(GYRO_ERR_DATA, "data_path '%s' holds no example", rq->data_path);
        if (!st && set.n > j->t->lim.max_examples)
            st = gyro_error_set(GYRO_ERR_LIMIT, "data_path '%s' has %d examples, over the server's "
                                "--train-max-examples %ld", rq->data_path, set.n, j->t->lim.max_examples);
    } else {
        for (size_t i = 0; !st && i < rq->n_examples; i++) {
            const Gyro__V1__Example *e = rq->examples[i];
            st = gyro_example_set_add_session(&set, e->text, e->label, e->line ? e->line : i + 1, e->session);
        }
    }
    gyro_tf_geometry geom = GYRO_TF_GEOMETRY_HYPERBOLIC;
    if (!st && rq->geometry[0]) st = gyro_tf_geometry_parse(rq->geometry, &geom);
    gyro_train_options o;
    gyro_train_options_init(&o, geom);
    unsigned given = 0;
    gyro_arch arch;
    if (!st && rq->arch[0] && !(st = gyro_arch_parse(rq->arch, &arch))) o.arch = (int)arch;
    if (rq->dim) o.model.dim = (int)rq->dim, given |= GYRO_TRAIN_SET_DIM;
    if (rq->epochs) o.epochs = (int)rq->epochs, given |= GYRO_TRAIN_SET_EPOCHS;
    if (rq->lr > 0) o.optim.lr = rq->lr, given |= GYRO_TRAIN_SET_LR;
    if (rq->seed) o.seed = rq->seed;
    gyro_embedding_table *table = NULL;
    if (!st && j->emb_path[0]) {
        st = gyro_table_file_load(j->emb_path, &table);
        if (st) st = gyro_error_prefix(st == GYRO_ERR_IO ? GYRO_ERR_DATA : st, "embeddings_path '%s'",
                                       rq->embeddings_path);
    }
    o.table = table;
    o.threads = 1;
    o.quiet = 1;
    o.log = NULL;
    o.stop = &j->stop;
    if (!st && gyro_train_options_complete(&o, given)) st = gyro_error_set(GYRO_ERR_USAGE, "%s", gyro_error_message());
    if (!st && o.model.dim > j->t->lim.max_dim)
        st = gyro_error_set(GYRO_ERR_LIMIT, "dim %d (the table's) is over the server's --train-max-dim %d",
                            o.model.dim, j->t->lim.max_dim);
    j->epochs = o.epochs;
    gyro_classifier *m = NULL;
    gyro_train_result res;
    if (!st) {
        gyro_progress_set_observer(on_progress, j, PROGRESS_INTERVAL);
        st = gyro_train_classifier(&o, &set, NULL, &m, &res);
        gyro_progress_set_observer(NULL, NULL, 0);
    }
    if (!st && j->stop) st = gyro_error_set(GYRO_ERR_INTERRUPTED, "cancelled");
    if (!st) st = gyro_classifier_save(m, j->out_path);
    gyro_classifier_free(m);
    gyro_embedding_table_free(table);
    gyro_example_set_free(&set);
    if (!st && j->t->hooks.install) {
        st = j->t->hooks.install(j->t->hooks.ctx, j->out_path, version, cap);
        if (st) st = gyro_error_prefix(GYRO_ERR_INTERNAL, "the model was written to %s but not served", j->out_path);
    }
    return st;
}

/* ---- the thread ---------------------------------------------------------------------------------- */

static void remove_tree(const char *dir)
{
    const char *names[] = {"corpus", "corpus.ids"};
    char p[PATH_MAX + 64];
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        unlink(p);
    }
    rmdir(dir);
}

static void *train_main(void *arg)
{
    train_job *j = arg;
    gyro_trainer *t = j->t;
    char version[128] = "";
    gyro_status st;
    if (j->kind == KIND_EMBEDDINGS) {
        char work[PATH_MAX + 32];
        snprintf(work, sizeof work, "%s/.gyro-train-XXXXXX", t->dir);
        if (!mkdtemp(work)) {
            st = gyro_error_set(GYRO_ERR_INTERNAL, "cannot create a work directory in --train-dir: %s", strerror(errno));
        } else {
            st = train_embeddings(j, work);
            remove_tree(work);
        }
    } else {
        st = train_classifier(j, version, sizeof version);
    }
    job_finish(j, st, version);
    pthread_mutex_lock(&t->mu);
    t->current = NULL;
    pthread_mutex_unlock(&t->mu);
    atomic_store(&t->busy, 0); /* before done: a client that saw the end may train again at once */
    pthread_mutex_lock(&j->mu);
    j->done = 1;
    if (!j->call_gone && t->hooks.notify) t->hooks.notify(t->hooks.ctx);
    pthread_mutex_unlock(&j->mu);
    job_unref(j);
    return NULL;
}

/* ---- the trainer ------------------------------------------------------------------------------- */

gyro_status gyro_trainer_new(const gyro_trainer_limits *lim, const gyro_trainer_hooks *hooks, gyro_trainer **out)
{
    *out = NULL;
    if (!lim || !lim->dir || lim->max_epochs < 1 || lim->max_dim < 1 || lim->max_examples < 1 ||
        lim->max_file_bytes < 1 || !(lim->max_seconds > 0))
        return gyro_error_set(GYRO_ERR_USAGE, "invalid training limits");
    gyro_trainer *t = calloc(1, sizeof *t);
    if (!t) return gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    struct stat sb;
    if (!realpath(lim->dir, t->dir) || stat(t->dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        free(t);
        return gyro_error_set(GYRO_ERR_USAGE, "--train-dir %s: not a directory", lim->dir);
    }
    t->lim = *lim;
    t->lim.dir = t->dir;
    if (hooks) t->hooks = *hooks;
    pthread_mutex_init(&t->mu, NULL);
    *out = t;
    return GYRO_OK;
}

void gyro_trainer_free(gyro_trainer *t)
{
    if (!t) return;
    pthread_mutex_lock(&t->mu);
    if (t->current) {
        t->current->stop = 1;
        t->current->c2v_stop = 1;
    }
    int joinable = t->has_thread;
    t->has_thread = 0;
    pthread_mutex_unlock(&t->mu);
    if (joinable) pthread_join(t->thread, NULL);
    pthread_mutex_destroy(&t->mu);
    free(t);
}

int gyro_trainer_busy(const gyro_trainer *t) { return t && atomic_load(&((gyro_trainer *)t)->busy); }

/* Send what the thread queued; the last message and the status once it is done. */
static int drain(train_job *j, gyro_rpc_reply *reply)
{
    Gyro__V1__TrainingProgress q[QUEUE_CAP];
    pthread_mutex_lock(&j->mu);
    int n = j->qn, done = j->done, code = j->code;
    memcpy(q, j->q, (size_t)n * sizeof q[0]);
    j->qn = 0;
    uint64_t step = done ? ++j->step : 0; /* the last message follows the progress records */
    char details[512], version[128];
    memcpy(details, j->details, sizeof details);
    memcpy(version, j->version, sizeof version);
    pthread_mutex_unlock(&j->mu);
    for (int i = 0; i < n; i++)
        if (gyro_rpc_reply_send(reply, &q[i].base) != GYRO_OK)
            return gyro_rpc_reply_error(reply, GYRO_RPC_RESOURCE_EXHAUSTED, "out of memory");
    if (!done) return GYRO_RPC_WAIT;
    if (code != GYRO_RPC_OK) return gyro_rpc_reply_error(reply, code, "%s", details);
    Gyro__V1__TrainingProgress last = GYRO__V1__TRAINING_PROGRESS__INIT;
    last.stage = (char *)stage_name[j->kind];
    last.fraction = 1;
    last.step = step;
    last.epoch = (uint32_t)j->epochs;
    last.elapsed_seconds = gyro_now() - j->t0;
    last.loss = NAN;
    last.rate = NAN;
    last.learning_rate = NAN;
    last.dev_accuracy = NAN;
    last.done = 1;
    last.output_path = j->out_path;
    last.model_version = version;
    if (gyro_rpc_reply_send(reply, &last.base) != GYRO_OK)
        return gyro_rpc_reply_error(reply, GYRO_RPC_RESOURCE_EXHAUSTED, "out of memory");
    return GYRO_RPC_OK;
}

/* Check a number against its limit. */
static int over(gyro_rpc_reply *r, const char *what, unsigned v, int limit, const char *option)
{
    if ((long)v <= (long)limit) return 0;
    gyro_rpc_reply_error(r, GYRO_RPC_INVALID_ARGUMENT, "%s %u is over the server's %s %d", what, v, option, limit);
    return 1;
}

/* Round 1: take the slot, copy the request, start the thread, park. `j` is prepared (paths). */
static int start(gyro_trainer *t, train_job *j, const ProtobufCMessage *request, gyro_rpc_reply *reply)
{
    int expected = 0;
    if (!atomic_compare_exchange_strong(&t->busy, &expected, 1)) {
        free(j);
        return gyro_rpc_reply_error(reply, GYRO_RPC_RESOURCE_EXHAUSTED, "a training is already running (one at "
                                    "a time); try again when it has finished");
    }
    size_t len = protobuf_c_message_get_packed_size(request);
    uint8_t *buf = malloc(len ? len : 1);
    if (buf) {
        protobuf_c_message_pack(request, buf);
        j->req = protobuf_c_message_unpack(request->descriptor, NULL, len, buf);
        free(buf);
    }
    if (!j->req) {
        atomic_store(&t->busy, 0);
        free(j);
        return gyro_rpc_reply_error(reply, GYRO_RPC_RESOURCE_EXHAUSTED, "out of memory");
    }
    pthread_mutex_init(&j->mu, NULL);
    j->t = t;
    j->refs = 2; /* the call and the thread */
    j->t0 = gyro_now();
    pthread_mutex_lock(&t->mu);
    if (t->has_thread) pthread_join(t->thread, NULL); /* the previous training's, already finishing */
    t->has_thread = 0;
    int rc = pthread_create(&t->thread, NULL, train_main, j);
    if (rc == 0) {
        t->has_thread = 1;
        t->current = j;
    }
    pthread_mutex_unlock(&t->mu);
    if (rc != 0) {
        atomic_store(&t->busy, 0);
        protobuf_c_message_free_unpacked(j->req, NULL);
        pthread_mutex_destroy(&j->mu);
        free(j);
        return gyro_rpc_reply_error(reply, GYRO_RPC_RESOURCE_EXHAUSTED, "cannot start a training thread");
    }
    gyro_rpc_reply_set_state(reply, j, job_call_gone);
    return GYRO_RPC_WAIT;
}

static train_job *job_alloc(int kind, gyro_rpc_reply *reply, int *code)
{
    train_job *j = calloc(1, sizeof *j);
    if (!j) *code = gyro_rpc_reply_error(reply, GYRO_RPC_RESOURCE_EXHAUSTED, "out of memory");
    else j->kind = kind;
    return j;
}

int gyro_trainer_handle_embeddings(gyro_trainer *t, const ProtobufCMessage *request, gyro_rpc_reply *reply)
{
    train_job *j = gyro_rpc_reply_state(reply);
    if (j) return drain(j, reply);
    if (!t) return gyro_rpc_reply_error(reply, GYRO_RPC_UNAVAILABLE, "training needs gyro serve --train-dir DIR");
    const Gyro__V1__TrainEmbeddingsRequest *rq = (const Gyro__V1__TrainEmbeddingsRequest *)request;
    if (over(reply, "epochs", rq->epochs, t->lim.max_epochs, "--train-max-epochs") ||
        over(reply, "dim", rq->dim, t->lim.max_dim, "--train-max-dim"))
        return GYRO_RPC_INVALID_ARGUMENT;
    if (rq->window > 100 || rq->negatives > 100)
        return gyro_rpc_reply_error(reply, GYRO_RPC_INVALID_ARGUMENT, "window and negatives must be <= 100");
    if (rq->n_documents && rq->corpus_path[0])
        return gyro_rpc_reply_error(reply, GYRO_RPC_INVALID_ARGUMENT, "give documents or corpus_path, not both");
    if (!rq->n_documents && !rq->corpus_path[0])
        return gyro_rpc_reply_error(reply, GYRO_RPC_INVALID_ARGUMENT, "no corpus: give documents or corpus_path");
    if (rq->n_documents > (size_t)t->lim.max_examples)
        return gyro_rpc_reply_error(reply, GYRO_RPC_INVALID_ARGUMENT, "%zu documents, over the server's "
                                    "--train-max-examples %ld", rq->n_documents, t->lim.max_examples);
    int any = 0;
    for (size_t i = 0; i < rq->n_documents && !any; i++) any = rq->documents[i]->text[0] || rq->documents[i]->n_chars;
    if (rq->n_documents && !any)
        return gyro_rpc_reply_error(reply, GYRO_RPC_INVALID_ARGUMENT, "every document is empty");
    int code = 0;
    if (!(j = job_alloc(KIND_EMBEDDINGS, reply, &code))) return code;
    if ((rq->corpus_path[0] && (code = resolve_input(t, "corpus_path", rq->corpus_path, j->in_path, reply))) ||
        (code = resolve_output(t, rq->output, "embeddings", ".pb", j->out_path, reply))) {
        free(j);
        return code;
    }
    return start(t, j, request, reply);
}

int gyro_trainer_handle_classifier(gyro_trainer *t, const ProtobufCMessage *request, gyro_rpc_reply *reply)
{
    train_job *j = gyro_rpc_reply_state(reply);
    if (j) return drain(j, reply);
    if (!t) return gyro_rpc_reply_error(reply, GYRO_RPC_UNAVAILABLE, "training needs gyro serve --train-dir DIR");
    const Gyro__V1__TrainClassifierRequest *rq = (const Gyro__V1__TrainClassifierRequest *)request;
    if (over(reply, "epochs", rq->epochs, t->lim.max_epochs, "--train-max-epochs") ||
        over(reply, "dim", rq->dim, t->lim.max_dim, "--train-max-dim"))
        return GYRO_RPC_INVALID_ARGUMENT;
    if (!(rq->lr >= 0 && rq->lr <= 100))
        return gyro_rpc_reply_error(reply, GYRO_RPC_INVALID_ARGUMENT, "lr must be in [0, 100] (0: the default)");
    gyro_tf_geometry geom;
    gyro_arch arch;
    if (rq->geometry[0] && gyro_tf_geometry_parse(rq->geometry, &geom))
        return gyro_rpc_reply_error(reply, GYRO_RPC_INVALID_ARGUMENT, "geometry: %s", gyro_error_message());
    if (rq->arch[0] && gyro_arch_parse(rq->arch, &arch))
        return gyro_rpc_reply_error(reply, GYRO_RPC_INVALID_ARGUMENT, "arch: %s", gyro_error_message());
    if (rq->n_examples && rq->data_path[0])
        return gyro_rpc_reply_error(reply, GYRO_RPC_INVALID_ARGUMENT, "give examples or data_path, not both");
    if (!rq->n_examples && !rq->data_path[0])
        return gyro_rpc_reply_error(reply, GYRO_RPC_INVALID_ARGUMENT, "no training data: give examples or data_path");
    if (rq->n_examples > (size_t)t->lim.max_examples)
        return gyro_rpc_reply_error(reply, GYRO_RPC_INVALID_ARGUMENT, "%zu examples, over the server's "
                                    "--train-max-examples %ld", rq->n_examples, t->lim.max_examples);
    for (size_t i = 0; i < rq->n_examples; i++)
        if (!rq->examples[i]->text[0] || !rq->examples[i]->label[0])
            return gyro_rpc_reply_error(reply, GYRO_RPC_INVALID_ARGUMENT, "example %zu has an empty %s", i + 1,
                                        rq->examples[i]->text[0] ? "label" : "text");
    int code = 0;
    if (!(j = job_alloc(KIND_CLASSIFIER, reply, &code))) return code;
    if ((rq->data_path[0] && (code = resolve_input(t, "data_path", rq->data_path, j->in_path, reply))) ||
        (rq->embeddings_path[0] &&
         (code = resolve_input(t, "embeddings_path", rq->embeddings_path, j->emb_path, reply))) ||
        (code = resolve_output(t, rq->output, "classifier", ".model", j->out_path, reply))) {
        free(j);
        return code;
    }
    return start(t, j, request, reply);
}

/* fuzz_grpc.c — the gRPC request decoding and the service's validation, without a server: the
 * first byte picks a method of the service's table (gyro.v1.Gyro and Health), the rest is the
 * request's bytes, handled by gyro_rpc_call_local exactly as a call would be (unpack, UTF-8
 * check, handler, response checks). The service serves a small classifier, embedding table and
 * RL policy written at start-up into a temporary directory, and trains (TrainEmbeddings,
 * TrainClassifier) under its own subdirectory with tiny limits: a training started by an input is
 * cancelled when gyro_rpc_call_local stops it after 4 rounds, and the next inputs meanwhile get
 * RESOURCE_EXHAUSTED. A status the service never means to give (INTERNAL, UNKNOWN) is a finding. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "embeddings/table.h"
#include "models/classifier.h"
#include "models/core/blas.h"
#include "models/rl/env.h"
#include "models/rl/policy.h"
#include "pipeline/service.h"
#include "pipeline/table_file.h"
#include "tests/fuzz/fuzz.h"

static gyro_service *svc;
static const gyro_rpc_method *methods;
static int n_methods;
static char dir[64], model[96], table[96], policy[96], train[96];

/* Remove the training directory's files (outputs, a work directory's files) and itself. */
static void remove_train_dir(const char *path, int depth)
{
    DIR *d = opendir(path);
    if (!d) return;
    struct dirent *e;
    char p[512];
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        snprintf(p, sizeof p, "%s/%s", path, e->d_name);
        if (unlink(p) != 0 && depth < 1) remove_train_dir(p, depth + 1);
    }
    closedir(d);
    rmdir(path);
}

static void cleanup(void)
{
    gyro_service_free(svc);
    unlink(model);
    unlink(table);
    unlink(policy);
    remove_train_dir(train, 0);
    rmdir(dir);
}

static void must(gyro_status s, const char *what)
{
    if (s == GYRO_OK) return;
    fprintf(stderr, "fuzz_grpc: %s: %s\n", what, gyro_error_message());
    abort();
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc; (void)argv;
    gyro_blas_set_threads(1);
    snprintf(dir, sizeof dir, "/tmp/gyro-fuzz-grpc-XXXXXX");
    if (!mkdtemp(dir)) abort();
    snprintf(model, sizeof model, "%s/m.clf", dir);
    snprintf(table, sizeof table, "%s/t.poi", dir);
    snprintf(policy, sizeof policy, "%s/p.pol", dir);
    snprintf(train, sizeof train, "%s/train", dir);
    if (mkdir(train, 0700) != 0) abort();

    gyro_label_set *ls;
    must(gyro_label_set_new(&ls), "labels");
    const char *labels[] = {"music.play", "music.pause", "weather", "query_song+play_song"};
    for (int i = 0; i < 4; i++) must(gyro_label_set_add(ls, labels[i], NULL), "labels");
    const char *vocab[] = {"播", "放", "暂", "停", "天", "气", "歌"};
    gyro_tf_config c = gyro_tf_config_default(GYRO_TF_GEOMETRY_HYPERBOLIC);
    c.dim = 8; c.n_layers = 1; c.n_heads = 2; c.head_dim = 4; c.ffn_dim = 16; c.max_len = 16;
    gyro_classifier *m;
    must(gyro_classifier_create(&c, 7, NULL, vocab, 7, ls, &m), "classifier");
    must(gyro_classifier_save(m, model), "classifier save");
    gyro_classifier_free(m);

    gyro_embedding_table *t;
    must(gyro_embedding_table_new(GYRO_EMBEDDING_POINCARE, 1.0, 3, 7, &t), "table");
    for (int i = 0; i < 7; i++) {
        for (int k = 0; k < 3; k++) t->vectors[(size_t)i * t->stride + k] = 0.1f * (float)((i + k) % 5) - 0.2f;
        must(gyro_embedding_table_set_token(t, i, vocab[i], 1), "table token");
    }
    must(gyro_table_file_save(t, table), "table save");
    gyro_embedding_table_free(t);

    const gyro_rl_env *env = gyro_rl_env_find("vdp");
    if (!env) abort();
    gyro_rl_policy_config pc = gyro_rl_policy_config_default(1, env->obs_dim, env->n_actions);
    gyro_rl_policy *p;
    must(gyro_rl_policy_new(&pc, 3, 1, &p), "policy");
    snprintf(p->env_name, sizeof p->env_name, "%s", env->name);
    must(gyro_rl_policy_save(p, policy), "policy save");
    gyro_rl_policy_free(p);

    gyro_service_options o;
    memset(&o, 0, sizeof o);
    o.model_path = model;
    o.embeddings_path = table;
    o.policy_path = policy;
    o.n_threads = 1;
    o.default_top_k = 5;
    o.max_top_k = 100;
    o.train_dir = train;
    o.train_limits.max_epochs = 2;
    o.train_limits.max_dim = 8;
    o.train_limits.max_examples = 64;
    o.train_limits.max_file_bytes = 1 << 16;
    o.train_limits.max_seconds = 5;
    must(gyro_service_new(&o, &svc), "service");
    methods = gyro_service_methods(&n_methods);
    atexit(cleanup);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0) return 0;
    const gyro_rpc_method *m = &methods[data[0] % n_methods];
    char details[600];
    int code = gyro_rpc_call_local(m, svc, data + 1, size - 1, 4, details, sizeof details, NULL);
    if (code == GYRO_RPC_INTERNAL || code == GYRO_RPC_UNKNOWN) {
        fprintf(stderr, "fuzz_grpc: %s answered %d: %s\n", m->path, code, details);
        abort();
    }
    return 0;
}

/* check_classifier.c — Check suite for models/classifier and models/train_classifier: model file
 * round trip (parameters bit for bit, vocabulary, labels, predictions), corrupt / truncated /
 * foreign / newer files, prediction API errors, and training on a small separable set in both
 * geometries (learns it, reproducible from the seed, early stopping, frozen table rows). */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "models/classifier.h"
#include "models/train_classifier.h"
#include "tests/support/scratch.h"
#include "tests/support/toy_intents.h"

static char tmpdir[64];

static void setup(void) { scratch_dir_new(tmpdir, sizeof tmpdir, "clf"); }

static void teardown(void) { scratch_dir_remove(tmpdir); }

static gyro_tf_config tiny(gyro_tf_geometry g)
{
    gyro_tf_config c = gyro_tf_config_default(g);
    c.dim = 8;
    c.n_layers = 1;
    c.n_heads = 2;
    c.head_dim = 4;
    c.ffn_dim = 16;
    c.max_len = 16;
    return c;
}

static gyro_classifier *make_model(void)
{
    gyro_label_set *ls;
    ck_assert_int_eq(gyro_label_set_new(&ls), GYRO_OK);
    const char *labels[] = {"music.play", "music.pause", "weather", "query_song+play_song"};
    for (int i = 0; i < 4; i++) ck_assert_int_eq(gyro_label_set_add(ls, labels[i], NULL), GYRO_OK);
    const char *vocab[] = {"播", "放", "暂", "停", "天", "气", "歌"};
    gyro_tf_config c = tiny(GYRO_TF_GEOMETRY_HYPERBOLIC);
    gyro_classifier *m;
    ck_assert_int_eq(gyro_classifier_create(&c, 7, NULL, vocab, 7, ls, &m), GYRO_OK);
    return m;
}

static long file_size(const char *p)
{
    FILE *f = fopen(p, "rb");
    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fclose(f);
    return n;
}

static unsigned char *slurp(const char *p, long *n)
{
    *n = file_size(p);
    unsigned char *b = malloc((size_t)*n);
    FILE *f = fopen(p, "rb");
    ck_assert_uint_eq(fread(b, 1, (size_t)*n, f), (size_t)*n);
    fclose(f);
    return b;
}

static void spit(const char *p, const unsigned char *b, long n)
{
    FILE *f = fopen(p, "wb");
    ck_assert_uint_eq(fwrite(b, 1, (size_t)n, f), (size_t)n);
    fclose(f);
}

START_TEST(test_round_trip_and_predict)
{
    gyro_classifier *m = make_model();
    char path[128];
    snprintf(path, sizeof path, "%s/m.clf", tmpdir);
    ck_assert_int_eq(gyro_classifier_save(m, path), GYRO_OK);
    gyro_classifier *r;
    ck_assert_int_eq(gyro_classifier_load(path, &r), GYRO_OK);
    const gyro_tf_model *a = gyro_classifier_tf_const(m), *b = gyro_classifier_tf_const(r);
    ck_assert_uint_eq(a->n_params, b->n_params);
    ck_assert_int_eq(memcmp(a->params_memory, b->params_memory, a->n_params * sizeof(float)), 0);
    ck_assert_int_eq(memcmp(&a->cfg, &b->cfg, sizeof a->cfg), 0);
    ck_assert_str_eq(gyro_classifier_version(m), gyro_classifier_version(r));
    ck_assert_int_eq(gyro_classifier_num_labels(r), 4);
    ck_assert_str_eq(gyro_classifier_label(r, 3), "query_song+play_song");
    ck_assert_ptr_null(gyro_classifier_label(r, 4));
    ck_assert_int_eq(gyro_label_set_parent_id(gyro_classifier_labels(r), 0), -1);
    ck_assert_str_eq(gyro_label_set_parent(gyro_classifier_labels(r), 0), "music");
    ck_assert_int_eq(gyro_classifier_vocab_size(r), 8);
    ck_assert_int_eq(gyro_classifier_token_id(r, "停"), 4);
    ck_assert_int_eq(gyro_classifier_token_id(r, "猫"), GYRO_CLASSIFIER_UNK);
    ck_assert_str_eq(gyro_classifier_token(r, 1), "播");

    gyro_classifier_scratch *s1, *s2;
    ck_assert_int_eq(gyro_classifier_scratch_new(m, &s1), GYRO_OK);
    ck_assert_int_eq(gyro_classifier_scratch_new(r, &s2), GYRO_OK);
    gyro_intent t1[8], t2[8];
    int n1, n2;
    /* Traditional input, full-width letters and surrounding spaces are normalized inside */
    ck_assert_int_eq(gyro_classifier_predict(m, s1, "  播放  歌 ＡＢ 天氣 ", 10, t1, &n1), GYRO_OK);
    ck_assert_str_eq(gyro_classifier_scratch_normalized(s1), "播放 歌 AB 天气");
    ck_assert_int_eq(gyro_classifier_predict(r, s2, "  播放  歌 ＡＢ 天氣 ", 10, t2, &n2), GYRO_OK);
    ck_assert_int_eq(n1, 4);
    ck_assert_int_eq(n2, 4);
    double sum = 0;
    for (int i = 0; i < n1; i++) {
        ck_assert_str_eq(t1[i].label, t2[i].label);
        ck_assert(t1[i].probability == t2[i].probability);
        if (i) ck_assert(t1[i - 1].probability >= t1[i].probability);
        sum += t1[i].probability;
    }
    ck_assert_double_eq_tol(sum, 1.0, 1e-5);
    ck_assert_int_eq(gyro_classifier_predict(r, s2, "播放", 2, t2, &n2), GYRO_OK);
    ck_assert_int_eq(n2, 2);
    ck_assert_int_eq(gyro_classifier_predict(r, s2, "   ", 2, t2, &n2), GYRO_ERR_DATA);
    ck_assert_int_eq(n2, 0);
    ck_assert_int_eq(gyro_classifier_predict(r, s2, "播放", 0, t2, &n2), GYRO_ERR_USAGE);
    ck_assert_int_eq(gyro_classifier_predict(r, s2, NULL, 2, t2, &n2), GYRO_ERR_USAGE);
    /* a long text is truncated to max_len, not an error */
    char longtext[3 * 100 + 1] = "";
    for (int i = 0; i < 100; i++) strcat(longtext, "歌");
    ck_assert_int_eq(gyro_classifier_predict(r, s2, longtext, 1, t2, &n2), GYRO_OK);
    gyro_classifier_scratch_free(s1);
    gyro_classifier_scratch_free(s2);
    gyro_classifier_free(m);
    gyro_classifier_free(r);
    gyro_classifier_scratch_free(NULL);
    gyro_classifier_free(NULL);
}
END_TEST

/* A model of the given shape over the toy vocabulary and labels (fresh parameters). */
static gyro_classifier *make_shaped(int arch, gyro_tf_geometry g, int dim, int heads)
{
    gyro_label_set *ls;
    ck_assert_int_eq(gyro_label_set_new(&ls), GYRO_OK);
    const char *labels[] = {"music.play", "music.pause", "weather", "query_song+play_song", "chat"};
    for (int i = 0; i < 5; i++) ck_assert_int_eq(gyro_label_set_add(ls, labels[i], NULL), GYRO_OK);
    const char *vocab[] = {"播", "放", "暂", "停", "天", "气", "歌", "的", "周", "杰"};
    gyro_classifier *m;
    if (arch == 1) {
        gyro_ngrams_config nc = gyro_ngrams_config_default(g);
        nc.dim = dim;
        ck_assert_int_eq(gyro_classifier_create_ngrams(&nc, 11, NULL, vocab, 10, ls, &m), GYRO_OK);
        return m;
    }
    gyro_tf_config c = tiny(g);
    c.dim = dim;
    c.n_heads = heads;
    c.head_dim = dim / heads;
    c.ffn_dim = 2 * dim;
    c.n_layers = 2;
    c.max_len = 24;
    ck_assert_int_eq(gyro_classifier_create(&c, 11, NULL, vocab, 10, ls, &m), GYRO_OK);
    return m;
}

/* Batched prediction gives each utterance what a single prediction gives: the same classes in
 * the same order, probabilities within 1e-6, the same normalized text; utterances of different
 * lengths (1 to past max_len) in one batch; a bad item fails alone; transformers as created
 * (plain forward) and as loaded (packed weights, fused layers), hyperbolic and Euclidean; n-gram
 * models too. */
START_TEST(test_predict_batch_matches_single)
{
    const char *texts[] = {"播放周杰的歌", "停", "天气", "   ", "暂停播放歌的天气周杰周杰歌播放暂停天气的歌歌歌播放周杰的歌",
                           "播放 ＡＢ 天氣", "猫", "的的", "歌"};
    const char *ctx[] = {"", "播放", NULL, "", "天气", "", "", "停", ""};
    const int n = (int)(sizeof texts / sizeof texts[0]);
    const struct { int arch; gyro_tf_geometry g; int dim, heads, load; } cases[] = {
        {0, GYRO_TF_GEOMETRY_HYPERBOLIC, 16, 2, 1}, {0, GYRO_TF_GEOMETRY_HYPERBOLIC, 16, 2, 0},
        {0, GYRO_TF_GEOMETRY_HYPERBOLIC, 32, 4, 1}, {0, GYRO_TF_GEOMETRY_EUCLIDEAN, 16, 4, 1},
        {1, GYRO_TF_GEOMETRY_HYPERBOLIC, 16, 0, 1},
    };
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        gyro_classifier *m = make_shaped(cases[ci].arch, cases[ci].g, cases[ci].dim, cases[ci].heads);
        if (cases[ci].load) {
            char path[128];
            snprintf(path, sizeof path, "%s/b%zu.clf", tmpdir, ci);
            ck_assert_int_eq(gyro_classifier_save(m, path), GYRO_OK);
            gyro_classifier_free(m);
            ck_assert_int_eq(gyro_classifier_load(path, &m), GYRO_OK);
        }
        gyro_classifier_scratch *s;
        gyro_classifier_batch *b;
        ck_assert_int_eq(gyro_classifier_scratch_new(m, &s), GYRO_OK);
        ck_assert_int_eq(gyro_classifier_batch_new(m, n, &b), GYRO_OK);
        gyro_intent res[9][5], *out[9];
        int k[9], n_out[9];
        gyro_status status[9];
        for (int i = 0; i < n; i++) {
            out[i] = res[i];
            k[i] = 1 + i % 5;
        }
        /* the whole set, then every prefix-free slice starting at each offset (smaller batches) */
        for (int start = 0; start < n; start += 4) {
            int nb = n - start;
            ck_assert_int_eq(gyro_classifier_predict_batch(m, b, nb, texts + start, ctx + start, k + start,
                                                           out + start, n_out + start, status + start), GYRO_OK);
            for (int i = start; i < n; i++) {
                gyro_intent one[5];
                int n1;
                gyro_status st = gyro_classifier_predict_context(m, s, texts[i], ctx[i], k[i], one, &n1);
                ck_assert_int_eq(status[i], st);
                if (st != GYRO_OK) {
                    ck_assert_int_eq(n_out[i], 0);
                    ck_assert_str_ne(gyro_classifier_batch_error(b, i - start), "");
                    continue;
                }
                ck_assert_str_eq(gyro_classifier_batch_error(b, i - start), "");
                ck_assert_str_eq(gyro_classifier_batch_normalized(b, i - start), gyro_classifier_scratch_normalized(s));
                ck_assert_int_eq(n_out[i], n1);
                for (int j = 0; j < n1; j++) {
                    ck_assert_str_eq(out[i][j].label, one[j].label);
                    ck_assert_double_eq_tol(out[i][j].probability, one[j].probability, 1e-6);
                }
            }
        }
        ck_assert_int_eq(status[3], GYRO_ERR_DATA); /* "   ": empty after normalization */
        ck_assert_int_eq(gyro_classifier_predict_batch(m, b, n + 1, texts, ctx, k, out, n_out, status), GYRO_ERR_USAGE);
        ck_assert_int_eq(gyro_classifier_predict_batch(m, b, 0, texts, ctx, k, out, n_out, status), GYRO_ERR_USAGE);
        gyro_classifier_batch_free(b);
        gyro_classifier_scratch_free(s);
        gyro_classifier_free(m);
    }
    gyro_classifier_batch_free(NULL);
}
END_TEST

START_TEST(test_corrupt_files)
{
    gyro_classifier *m = make_model(), *r = (gyro_classifier *)1;
    char path[128], bad[128];
    snprintf(path, sizeof path, "%s/m.clf", tmpdir);
    snprintf(bad, sizeof bad, "%s/bad.clf", tmpdir);
    ck_assert_int_eq(gyro_classifier_save(m, path), GYRO_OK);
    long n;
    unsigned char *b = slurp(path, &n);

    /* every truncation is FORMAT, never a crash */
    for (long cut = 0; cut < n; cut += (cut < 64 ? 1 : 97)) {
        spit(bad, b, cut);
        ck_assert_int_eq(gyro_classifier_load(bad, &r), GYRO_ERR_FORMAT);
        ck_assert_ptr_null(r);
    }
    /* a flipped byte anywhere in the payload: checksum mismatch */
    for (long i = 24; i < n; i += 53) {
        b[i] ^= 0x5a;
        spit(bad, b, n);
        ck_assert_int_eq(gyro_classifier_load(bad, &r), GYRO_ERR_FORMAT);
        b[i] ^= 0x5a;
    }
    spit(bad, b, n);
    ck_assert_int_eq(gyro_classifier_load(bad, &r), GYRO_OK);
    gyro_classifier_free(r);
    /* trailing garbage */
    unsigned char *c = malloc((size_t)n + 3);
    memcpy(c, b, (size_t)n);
    memcpy(c + n, "xyz", 3);
    spit(bad, c, n + 3);
    ck_assert_int_eq(gyro_classifier_load(bad, &r), GYRO_ERR_FORMAT);
    free(c);
    /* a newer format version */
    b[8] = (unsigned char)(GYRO_CLASSIFIER_FORMAT_VERSION + 1);
    spit(bad, b, n);
    ck_assert_int_eq(gyro_classifier_load(bad, &r), GYRO_ERR_VERSION);
    ck_assert_ptr_nonnull(strstr(gyro_error_message(), "newer"));
    b[8] = 1;
    /* a foreign file */
    b[0] = 'X';
    spit(bad, b, n);
    ck_assert_int_eq(gyro_classifier_load(bad, &r), GYRO_ERR_FORMAT);
    ck_assert_ptr_nonnull(strstr(gyro_error_message(), "not a gyro classifier"));
    /* a huge payload length */
    b[0] = 'G';
    for (int i = 16; i < 24; i++) b[i] = 0xff;
    spit(bad, b, n);
    ck_assert_int_eq(gyro_classifier_load(bad, &r), GYRO_ERR_FORMAT);
    free(b);
    /* a 9 KB file whose header claims a 4 GiB payload: refused before anything that size is
     * allocated (the loader used to malloc the claim, then find the file short) */
    {
        unsigned char forged[9 * 1024];
        memset(forged, 0x41, sizeof forged);
        memcpy(forged, "GYROCLF\0\1\0\0\0\0\0\0\0", 16);
        uint64_t claim = ((uint64_t)4 << 30) - 64;
        memcpy(forged + 16, &claim, 8);   /* little-endian machine */
        spit(bad, forged, sizeof forged);
        long before = scratch_vm_peak_kb();
        ck_assert_int_eq(gyro_classifier_load(bad, &r), GYRO_ERR_FORMAT);
        ck_assert_ptr_null(r);
        ck_assert_msg(scratch_vm_peak_kb() - before < 256 * 1024, "VmPeak grew by %ld KiB loading a 9 KB file",
                      scratch_vm_peak_kb() - before);
        ck_assert_ptr_nonnull(strstr(gyro_error_message(), "the file has 9216"));
    }
    /* a model with a non-finite parameter is never written: the old file stays byte for byte */
    {
        long n0, n1;
        unsigned char *before = slurp(path, &n0);
        gyro_tf_model *tf = gyro_classifier_tf(m);
        float keep = tf->params_memory[tf->n_params - 1];
        tf->params_memory[tf->n_params - 1] = NAN;
        ck_assert_int_eq(gyro_classifier_save(m, path), GYRO_ERR_NAN);
        ck_assert_ptr_nonnull(strstr(gyro_error_message(), tf->tensors[tf->n_tensors - 1].name));
        unsigned char *after = slurp(path, &n1);
        ck_assert_int_eq(n0, n1);
        ck_assert_int_eq(memcmp(before, after, (size_t)n0), 0);
        free(before);
        free(after);
        tf->params_memory[tf->n_params - 1] = keep;
    }
    snprintf(bad, sizeof bad, "%s/none.clf", tmpdir);
    ck_assert_int_eq(gyro_classifier_load(bad, &r), GYRO_ERR_IO);
    ck_assert_int_eq(gyro_classifier_load(NULL, &r), GYRO_ERR_USAGE);
    /* saving into a missing directory fails cleanly */
    snprintf(bad, sizeof bad, "%s/no/dir/m.clf", tmpdir);
    ck_assert_int_eq(gyro_classifier_save(m, bad), GYRO_ERR_IO);
    gyro_classifier_free(m);
}
END_TEST

static uint32_t crc32_ref(const unsigned char *p, size_t n)
{
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    }
    return ~c;
}

/* Rewrite the f64 value of configuration key `key` (or rename the key to `rename`) and fix the
 * CRC, so only the semantic checks can catch the forgery. */
static void forge(const char *path, const char *out, const char *key, double value, const char *rename)
{
    long n;
    unsigned char *b = slurp(path, &n);
    size_t kl = strlen(key);
    unsigned char *hit = NULL;
    for (long i = 24; i + 4 + (long)kl + 8 <= n - 4; i++)
        if (b[i] == kl && b[i + 1] == 0 && b[i + 2] == 0 && b[i + 3] == 0 && memcmp(b + i + 4, key, kl) == 0) {
            hit = b + i + 4;
            break;
        }
    ck_assert_ptr_nonnull(hit);
    if (rename) memcpy(hit, rename, kl);
    else memcpy(hit + kl, &value, 8); /* little-endian machine */
    uint32_t crc = crc32_ref(b + 24, (size_t)n - 28);
    memcpy(b + n - 4, &crc, 4);
    spit(out, b, n);
    free(b);
}

START_TEST(test_forged_files)
{
    gyro_classifier *m = make_model(), *r;
    char path[128], bad[128];
    snprintf(path, sizeof path, "%s/m.clf", tmpdir);
    snprintf(bad, sizeof bad, "%s/forged.clf", tmpdir);
    ck_assert_int_eq(gyro_classifier_save(m, path), GYRO_OK);
    forge(path, bad, "n_layers", 1.0, NULL); /* unchanged value: loads */
    ck_assert_int_eq(gyro_classifier_load(bad, &r), GYRO_OK);
    gyro_classifier_free(r);
    forge(path, bad, "n_layers", 1000.0, NULL);
    ck_assert_int_eq(gyro_classifier_load(bad, &r), GYRO_ERR_FORMAT);
    forge(path, bad, "dim", 1e9, NULL);
    ck_assert_int_eq(gyro_classifier_load(bad, &r), GYRO_ERR_FORMAT);
    forge(path, bad, "geometry", 7.0, NULL);
    ck_assert_int_eq(gyro_classifier_load(bad, &r), GYRO_ERR_FORMAT);
    forge(path, bad, "n_heads", 0.5, NULL);
    ck_assert_int_eq(gyro_classifier_load(bad, &r), GYRO_ERR_FORMAT);
    forge(path, bad, "vocab_size", 3.0, NULL);
    ck_assert_int_eq(gyro_classifier_load(bad, &r), GYRO_ERR_FORMAT);
    forge(path, bad, "dropout", 0, "dropoux");
    ck_assert_int_eq(gyro_classifier_load(bad, &r), GYRO_ERR_VERSION);
    ck_assert_ptr_nonnull(strstr(gyro_error_message(), "dropoux"));
    forge(path, bad, "token_unit", 5.0, NULL);
    ck_assert_int_eq(gyro_classifier_load(bad, &r), GYRO_ERR_VERSION);
    /* a model written before qkv_tangent existed (the key renamed to the same-length
     * moe_balance, value 0) loads with the per-head-slice attention; new models record 1 */
    ck_assert_int_eq(gyro_classifier_tf_const(m)->cfg.qkv_tangent, 1);
    char mid[160];
    snprintf(mid, sizeof mid, "%s/forged0.clf", tmpdir);
    forge(path, mid, "qkv_tangent", 0.0, NULL);
    forge(mid, bad, "qkv_tangent", 0, "moe_balance");
    ck_assert_int_eq(gyro_classifier_load(bad, &r), GYRO_OK);
    ck_assert_int_eq(gyro_classifier_tf_const(r)->cfg.qkv_tangent, 0);
    gyro_classifier_free(r);
    ck_assert_int_eq(gyro_classifier_load(path, &r), GYRO_OK);
    ck_assert_int_eq(gyro_classifier_tf_const(r)->cfg.qkv_tangent, 1);
    gyro_classifier_free(r);
    /* a NaN in the last parameter, checksum fixed */
    long n;
    unsigned char *b = slurp(path, &n);
    float nan_value = NAN;
    memcpy(b + n - 8, &nan_value, 4);
    uint32_t crc = crc32_ref(b + 24, (size_t)n - 28);
    memcpy(b + n - 4, &crc, 4);
    spit(bad, b, n);
    free(b);
    ck_assert_int_eq(gyro_classifier_load(bad, &r), GYRO_ERR_FORMAT);
    ck_assert_ptr_nonnull(strstr(gyro_error_message(), "non-finite"));
    gyro_classifier_free(m);
}
END_TEST

/* The shared generated set (tests/support/toy_intents.h), with the composite. */
static void toy_data(gyro_example_set *s, int n, uint64_t seed)
{
    ck_assert_int_eq(toy_intents(s, n, seed, 3), GYRO_OK);
}

static void train_options(gyro_train_options *o, gyro_tf_geometry g)
{
    gyro_train_options_init(o, g);
    o->arch = GYRO_ARCH_TRANSFORMER;   /* this suite is the transformer's (check_ngrams: the other) */
    o->model = tiny(g);
    o->optim.kind = GYRO_OPTIM_ADAM;
    o->optim.lr = 1e-2;
    o->optim.eps = 1e-8;
    o->epochs = 12;
    o->batch_size = 16;
    o->quiet = 1;
    o->seed = 3;
}

static void check_learns(gyro_tf_geometry g)
{
    gyro_example_set train = {0}, dev = {0};
    toy_data(&train, 300, 1);
    toy_data(&dev, 100, 2);
    gyro_example_set_add(&dev, "播放", "unseen.label", 101);
    gyro_train_options o;
    train_options(&o, g);
    char ckpt[128];
    snprintf(ckpt, sizeof ckpt, "%s/ckpt.clf", tmpdir);
    o.checkpoint = ckpt;
    gyro_classifier *m;
    gyro_train_result res;
    ck_assert_int_eq(gyro_train_classifier(&o, &train, &dev, &m, &res), GYRO_OK);
    ck_assert_int_eq(res.n_train, 300);
    ck_assert_int_eq(res.n_dev, 100);
    ck_assert_int_eq(res.dev_unknown, 1);
    ck_assert_msg(res.best_dev_accuracy >= 0.9, "dev accuracy %.3f", res.best_dev_accuracy);
    ck_assert(res.steps > 0 && res.steps_per_second > 0);

    gyro_metrics met;
    ck_assert_int_eq(gyro_metrics_init(&met, gyro_classifier_num_labels(m)), GYRO_OK);
    int unknown = 0;
    ck_assert_int_eq(gyro_classifier_evaluate(m, &dev, &met, &unknown), GYRO_OK);
    ck_assert_int_eq(unknown, 1);
    /* training's dev accuracy leaves the unseen label out; evaluate counts it as an error */
    ck_assert_uint_eq(met.n, 101);
    ck_assert_uint_eq(met.n_unseen, 1);
    ck_assert_str_eq(gyro_metrics_unseen_label(&met, 0), "unseen.label");
    ck_assert_double_eq_tol(gyro_metrics_accuracy(&met), res.best_dev_accuracy * 100.0 / 101.0, 1e-9);
    ck_assert(gyro_metrics_cross_entropy(&met) < log(3.0));
    gyro_metrics_free(&met);

    /* the checkpoint is the best epoch's model: it evaluates the same */
    gyro_classifier *c;
    ck_assert_int_eq(gyro_classifier_load(ckpt, &c), GYRO_OK);
    ck_assert_int_eq(memcmp(gyro_classifier_tf_const(c)->params_memory, gyro_classifier_tf_const(m)->params_memory,
                            gyro_classifier_tf_const(m)->n_params * sizeof(float)), 0);
    gyro_classifier_free(c);

    /* same seed, same model */
    gyro_classifier *m2;
    ck_assert_int_eq(gyro_train_classifier(&o, &train, &dev, &m2, &res), GYRO_OK);
    ck_assert_int_eq(memcmp(gyro_classifier_tf_const(m2)->params_memory, gyro_classifier_tf_const(m)->params_memory,
                            gyro_classifier_tf_const(m)->n_params * sizeof(float)), 0);
    gyro_classifier_free(m2);
    gyro_classifier_free(m);
    gyro_example_set_free(&train);
    gyro_example_set_free(&dev);
}

START_TEST(test_train_hyperbolic) { check_learns(GYRO_TF_GEOMETRY_HYPERBOLIC); }
END_TEST

START_TEST(test_train_euclidean) { check_learns(GYRO_TF_GEOMETRY_EUCLIDEAN); }
END_TEST

START_TEST(test_train_frozen_table_and_errors)
{
    gyro_example_set train = {0};
    toy_data(&train, 120, 5);
    gyro_embedding_table *tab;
    ck_assert_int_eq(gyro_embedding_table_new(GYRO_EMBEDDING_POINCARE, 1.0, 8, 2, &tab), GYRO_OK);
    ck_assert_int_eq(gyro_embedding_table_set_token(tab, 0, "播", 10), GYRO_OK);
    ck_assert_int_eq(gyro_embedding_table_set_token(tab, 1, "龘", 1), GYRO_OK);
    for (int i = 0; i < 16; i++) tab->vectors[i] = 0.01f * (float)(i + 1);
    gyro_train_options o;
    train_options(&o, GYRO_TF_GEOMETRY_HYPERBOLIC);
    o.epochs = 2;
    o.table = tab;
    o.freeze_table = 1;
    o.dev_fraction = 0.2;
    gyro_classifier *m;
    gyro_train_result res;
    ck_assert_int_eq(gyro_train_classifier(&o, &train, NULL, &m, &res), GYRO_OK);
    ck_assert_int_eq(res.table_rows, 2);
    ck_assert_int_eq(res.n_dev, 24);
    /* table rows come first, unchanged; the model knows the table's unseen character */
    ck_assert_int_eq(gyro_classifier_token_id(m, "播"), 1);
    ck_assert_int_eq(gyro_classifier_token_id(m, "龘"), 2);
    const gyro_tf_model *tf = gyro_classifier_tf_const(m);
    ck_assert_int_eq(memcmp(tf->params.wte + 8, tab->vectors, 16 * sizeof(float)), 0);
    gyro_classifier_free(m);

    o.model.dim = 16; /* table has 8 */
    o.model.head_dim = 8;
    ck_assert_int_eq(gyro_train_classifier(&o, &train, NULL, &m, &res), GYRO_ERR_USAGE);
    ck_assert_ptr_null(m);
    gyro_embedding_table_free(tab);

    train_options(&o, GYRO_TF_GEOMETRY_HYPERBOLIC);
    o.epochs = 1;
    gyro_example_set_add(&train, "播放", "bad label", 999);
    ck_assert_int_eq(gyro_train_classifier(&o, &train, NULL, &m, &res), GYRO_ERR_DATA);
    ck_assert_ptr_nonnull(strstr(gyro_error_message(), "999"));
    gyro_example_set empty = {0};
    ck_assert_int_eq(gyro_train_classifier(&o, &empty, NULL, &m, &res), GYRO_ERR_DATA);
    train_options(&o, GYRO_TF_GEOMETRY_EUCLIDEAN);
    o.optim.lr = 1e30; /* diverges: stops with NAN, no model */
    o.optim.kind = GYRO_OPTIM_SGD;
    gyro_example_set_free(&train);
    toy_data(&train, 120, 5);
    o.epochs = 3;
    gyro_status st = gyro_train_classifier(&o, &train, NULL, &m, &res);
    ck_assert_int_eq(st, GYRO_ERR_NAN);
    ck_assert_ptr_null(m);
    gyro_example_set_free(&train);
}
END_TEST

/* The derived model defaults live in the library: what `gyro classify train` gives for a set of
 * options, gyro_train_options_complete gives a library caller. */
START_TEST(test_options_complete)
{
    gyro_train_options o;
    gyro_train_options_init(&o, GYRO_TF_GEOMETRY_HYPERBOLIC);
    o.arch = GYRO_ARCH_TRANSFORMER;
    o.model.dim = 30;
    o.model.n_heads = 4;
    ck_assert_int_eq(gyro_train_options_complete(&o, 0), GYRO_OK);
    ck_assert_int_eq(o.model.head_dim, 8);  /* ceil(30 / 4) */
    ck_assert_int_eq(o.model.ffn_dim, 120);
    ck_assert_int_eq(o.model.moe_experts, 0); /* dense: no MoE defaults */

    gyro_train_options_init(&o, GYRO_TF_GEOMETRY_HYPERBOLIC);
    o.arch = GYRO_ARCH_TRANSFORMER;
    o.model.dim = 32;
    o.model.head_dim = 5;
    o.model.attention_kind = GYRO_TF_ATTENTION_MLA;
    o.model.ffn_kind = GYRO_TF_FFN_MOE;
    o.model.moe_top_k = 2;
    ck_assert_int_eq(gyro_train_options_complete(&o, GYRO_TRAIN_SET_HEAD_DIM | GYRO_TRAIN_SET_MOE_TOP_K), GYRO_OK);
    ck_assert_int_eq(o.model.head_dim, 5);
    ck_assert_int_eq(o.model.mla_latent_dim, 16);
    ck_assert_int_eq(o.model.moe_experts, 4);
    ck_assert_int_eq(o.model.moe_top_k, 2);
    ck_assert(o.model.moe_balance == 0.01f);

    gyro_embedding_table *tab;
    ck_assert_int_eq(gyro_embedding_table_new(GYRO_EMBEDDING_POINCARE, 1.0, 12, 2, &tab), GYRO_OK);
    gyro_train_options_init(&o, GYRO_TF_GEOMETRY_HYPERBOLIC);
    o.arch = GYRO_ARCH_TRANSFORMER;
    o.table = tab;
    o.model.n_heads = 4;
    ck_assert_int_eq(gyro_train_options_complete(&o, 0), GYRO_OK);
    ck_assert_int_eq(o.model.dim, 12); /* the table's dimension */
    ck_assert_int_eq(o.model.head_dim, 3);
    gyro_embedding_table_free(tab);

    gyro_train_options_init(&o, GYRO_TF_GEOMETRY_HYPERBOLIC);
    o.arch = GYRO_ARCH_TRANSFORMER;
    o.model.moe_experts = 8; /* without --ffn moe: refused */
    ck_assert_int_eq(gyro_train_options_complete(&o, GYRO_TRAIN_SET_MOE_EXPERTS), GYRO_ERR_USAGE);
}
END_TEST

START_TEST(test_word_tokenizer)
{
    gyro_tokenizer *t;
    ck_assert_int_eq(gyro_tokenizer_new(NULL, GYRO_TOKEN_WORDS, &t), GYRO_OK);
    char *const *tok;
    size_t n;
    const char *norm;
    ck_assert_int_eq(gyro_tokenizer_run(t, "我想听周杰伦的歌 ok", strlen("我想听周杰伦的歌 ok"), &tok, &n, &norm), GYRO_OK);
    ck_assert_str_eq(norm, "我想听周杰伦的歌 ok");
    /* ICU's dictionary gives multi-character words; no token is whitespace; the bytes add up */
    size_t bytes = 0;
    int multi = 0;
    for (size_t i = 0; i < n; i++) {
        ck_assert_ptr_null(strchr(tok[i], ' '));
        bytes += strlen(tok[i]);
        multi |= strlen(tok[i]) > 3;
    }
    ck_assert(multi);
    ck_assert_uint_eq(bytes, strlen(norm) - 1);
    ck_assert_str_eq(tok[n - 1], "ok");
    ck_assert_int_eq(gyro_tokenizer_run(t, "", 0, &tok, &n, &norm), GYRO_OK);
    ck_assert_uint_eq(n, 0);
    gyro_tokenizer_free(t);

    /* a word model trains, saves its unit and predicts after reloading */
    gyro_example_set train = {0};
    toy_data(&train, 200, 9);
    gyro_train_options o;
    train_options(&o, GYRO_TF_GEOMETRY_EUCLIDEAN);
    o.token_unit = GYRO_TOKEN_WORDS;
    o.epochs = 8;
    gyro_classifier *m, *r;
    gyro_train_result res;
    ck_assert_int_eq(gyro_train_classifier(&o, &train, NULL, &m, &res), GYRO_OK);
    ck_assert_msg(res.best_dev_accuracy >= 0.9, "dev accuracy %.3f", res.best_dev_accuracy);
    ck_assert_int_ge(gyro_classifier_token_id(m, "天气"), 1);
    char path[128];
    snprintf(path, sizeof path, "%s/w.clf", tmpdir);
    ck_assert_int_eq(gyro_classifier_save(m, path), GYRO_OK);
    ck_assert_int_eq(gyro_classifier_load(path, &r), GYRO_OK);
    ck_assert_int_eq(gyro_classifier_token_unit(r), GYRO_TOKEN_WORDS);
    gyro_classifier_scratch *s;
    ck_assert_int_eq(gyro_classifier_scratch_new(r, &s), GYRO_OK);
    gyro_intent top[1];
    int k;
    ck_assert_int_eq(gyro_classifier_predict(r, s, "暂停一下", 1, top, &k), GYRO_OK);
    ck_assert_str_eq(top[0].label, "music.pause");
    gyro_classifier_scratch_free(s);
    gyro_classifier_free(r);
    gyro_classifier_free(m);
    gyro_example_set_free(&train);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("classifier");
    TCase *tc = tcase_create("classifier");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_round_trip_and_predict);
    tcase_add_test(tc, test_predict_batch_matches_single);
    tcase_add_test(tc, test_corrupt_files);
    tcase_add_test(tc, test_forged_files);
    tcase_add_test(tc, test_train_hyperbolic);
    tcase_add_test(tc, test_train_euclidean);
    tcase_add_test(tc, test_train_frozen_table_and_errors);
    tcase_add_test(tc, test_word_tokenizer);
    tcase_add_test(tc, test_options_complete);
    suite_add_tcase(s, tc);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? 1 : 0;
}

/* cmd_classify.c — `gyro classify train|eval|predict`: the intent classifier on the command line.
 *
 *   gyro classify train   [options] -o MODEL TRAIN.pb      Example stream in, model file out
 *   gyro classify eval    -m MODEL [--svg FILE] DATA.pb     metrics report on stdout
 *   gyro classify predict -m MODEL [-k K] [--stream] [IN]   text lines, or a Document/Example
 *                                                           stream (e.g. from `gyro normalize`)
 *
 * A thin wrapper: training is models/train_classifier.c, prediction models/classifier.c. The
 * input of predict is detected from its first bytes: a gyro stream header (varint length, then
 * field 1 = "gyro") means a stream, anything else is UTF-8 text with one utterance per line.
 */
#define _GNU_SOURCE /* fopencookie: re-read the bytes peeked from a pipe */
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/classifier.h"
#include "models/metrics.h"
#include "models/train_classifier.h"
#include "pipeline/cli/cli.h"
#include "pipeline/json_out.h"
#include "pipeline/example_file.h"
#include "pipeline/stream.h"
#include "pipeline/table_file.h"

#define CMD "classify"

static void usage(FILE *f)
{
    fputs("usage: gyro classify train [options] -o MODEL TRAIN.pb\n"
          "       gyro classify eval -m MODEL [--svg FILE] [--confusion N] DATA.pb\n"
          "       gyro classify predict -m MODEL [-k K] [--stream] [-o OUT] [--max-line BYTES] [IN|-]\n"
          "\n"
          "train options (defaults: hyperbolic --residual tangent --layernorm --relu --curvature 0.1\n"
          "  --dropout 0.1; lorentz and euclidean: the settings of their geometry):\n"
          "  --geometry hyperbolic|lorentz|euclidean   model geometry (hyperbolic)\n"
          "  --dim N --layers N --heads N --head-dim N --ffn N --max-len N\n"
          "  --dropout P --curvature C --layernorm --residual none|mobius|tangent --relu\n"
          "  --no-layernorm --no-relu   (with --residual none --curvature 1: the seed's block)\n"
          "  --attention mha|mla  MLA blocks: --mla-latent L (C/2) --mla-q-latent L (= latent)\n"
          "                      --mla-rope R (0: none; even)\n"
          "  --ffn dense|moe      MoE blocks (--ffn N still sets the hidden width): --experts N (4)\n"
          "                      --shared-experts N (0) --top-k K (1) --balance A (0.01)\n"
          "  --optimizer rmsprop|adam|sgd --lr X --ball-lr X --clip X\n"
          "  --ball-optimizer rsgd|radam  ball tensors: Riemannian SGD (rsgd) or Adam\n"
          "  --epochs N (20) --batch N (32) --patience N (5) --restart-epochs T (10, 0 = none)\n"
          "  --restart-mult M (1) --dev FILE.pb  --dev-fraction F (0.1) --min-count N (1) --seed N (1)\n"
          "  --bucket N (50)     batches come from runs of N batches sorted by length (0: plain shuffle)\n"
          "  --embeddings TABLE  char2vec table (its dimension sets --dim)  --freeze  keep its rows fixed\n"
          "  --checkpoint PATH   best model so far, written after every improving epoch (and on\n"
          "                      SIGINT/SIGTERM, which stop training with exit status 130;\n"
          "                      without --checkpoint the best model so far goes to -o)\n"
          "  --keep-traditional --case-fold  normalization of the model   --quiet\n"
          "  --words             tokens are ICU dictionary words instead of characters\n"
          "eval: accuracy, macro-F1, cross-entropy, per-intent precision/recall, hierarchy levels,\n"
          "  confusion matrix (--confusion N most frequent intents, 0 = all; --svg writes an image)\n"
          "predict: top-k intents as JSON lines, or a ClassifyResponse stream with --stream\n"
          "  --max-line BYTES    longest input line or record text (default 16777216, as normalize);\n"
          "                      longer ones are skipped (never held in memory), reported with their\n"
          "                      line or record number and counted in a summary\n",
          f);
}

static int fail(gyro_status s) { return gyro_cli_fail(CMD, s); }

/* ---- train ------------------------------------------------------------------------------- */

static volatile int train_stop; /* set by SIGINT/SIGTERM: training stops after the current step */

static void on_signal(int sig)
{
    (void)sig;
    train_stop = 1;
}

enum {
    O_GEOMETRY = 256, O_DIM, O_LAYERS, O_HEADS, O_HEAD_DIM, O_FFN, O_MAXLEN, O_DROPOUT, O_CURV,
    O_LN, O_NO_LN, O_RESIDUAL, O_RELU, O_NO_RELU, O_OPTIMIZER, O_BALL_OPTIMIZER, O_LR, O_BALL_LR, O_CLIP, O_EPOCHS, O_BATCH, O_PATIENCE,
    O_RESTART, O_RESTART_MULT, O_DEV, O_DEV_FRAC, O_MIN_COUNT, O_SEED, O_EMB, O_FREEZE, O_CKPT,
    O_KEEP_TRAD, O_CASE_FOLD, O_WORDS, O_BUCKET, O_QUIET, O_SVG, O_CONFUSION, O_STREAM, O_MAX_LINE, O_HELP,
    O_ATTENTION, O_MLA_LATENT, O_MLA_Q, O_MLA_ROPE, O_EXPERTS, O_SHARED, O_TOP_K, O_BALANCE
};

static int train_main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"geometry", 1, 0, O_GEOMETRY}, {"dim", 1, 0, O_DIM}, {"layers", 1, 0, O_LAYERS},
        {"heads", 1, 0, O_HEADS}, {"head-dim", 1, 0, O_HEAD_DIM}, {"ffn", 1, 0, O_FFN},
        {"max-len", 1, 0, O_MAXLEN}, {"dropout", 1, 0, O_DROPOUT}, {"curvature", 1, 0, O_CURV},
        {"layernorm", 0, 0, O_LN}, {"residual", 1, 0, O_RESIDUAL}, {"relu", 0, 0, O_RELU}, {"ball-optimizer", 1, 0, O_BALL_OPTIMIZER},
        {"no-layernorm", 0, 0, O_NO_LN}, {"no-relu", 0, 0, O_NO_RELU},
        {"optimizer", 1, 0, O_OPTIMIZER}, {"lr", 1, 0, O_LR}, {"ball-lr", 1, 0, O_BALL_LR},
        {"clip", 1, 0, O_CLIP}, {"epochs", 1, 0, O_EPOCHS}, {"batch", 1, 0, O_BATCH},
        {"patience", 1, 0, O_PATIENCE}, {"restart-epochs", 1, 0, O_RESTART},
        {"restart-mult", 1, 0, O_RESTART_MULT}, {"dev", 1, 0, O_DEV},
        {"dev-fraction", 1, 0, O_DEV_FRAC}, {"min-count", 1, 0, O_MIN_COUNT}, {"seed", 1, 0, O_SEED},
        {"embeddings", 1, 0, O_EMB}, {"freeze", 0, 0, O_FREEZE}, {"checkpoint", 1, 0, O_CKPT},
        {"keep-traditional", 0, 0, O_KEEP_TRAD}, {"case-fold", 0, 0, O_CASE_FOLD}, {"words", 0, 0, O_WORDS},
        {"bucket", 1, 0, O_BUCKET},
        {"attention", 1, 0, O_ATTENTION}, {"mla-latent", 1, 0, O_MLA_LATENT},
        {"mla-q-latent", 1, 0, O_MLA_Q}, {"mla-rope", 1, 0, O_MLA_ROPE},
        {"experts", 1, 0, O_EXPERTS}, {"shared-experts", 1, 0, O_SHARED}, {"top-k", 1, 0, O_TOP_K},
        {"balance", 1, 0, O_BALANCE},
        {"quiet", 0, 0, O_QUIET}, {"output", 1, 0, 'o'}, {"help", 0, 0, O_HELP}, {0, 0, 0, 0}};
    /* first pass: the geometry decides the defaults */
    gyro_tf_geometry geom = GYRO_TF_GEOMETRY_HYPERBOLIC;
    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        if (strncmp(argv[i], "--geometry=", 11) == 0) v = argv[i] + 11;
        else if (strcmp(argv[i], "--geometry") == 0 && i + 1 < argc) v = argv[i + 1];
        if (!v) continue;
        if (gyro_tf_geometry_parse(v, &geom)) return gyro_cli_usage_error(CMD, "--%s", gyro_error_message());
    }
    gyro_train_options o;
    gyro_train_options_init(&o, geom);
    const char *out = NULL, *dev_path = NULL, *emb = NULL;
    int head_dim_set = 0, ffn_set = 0;
    int mla_latent_set = 0, experts_set = 0, top_k_set = 0, balance_set = 0;
    long L;
    double D;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:", longopts, NULL)) != -1) {
        switch (c) {
        case O_GEOMETRY: break;
        case O_DIM: if (!gyro_cli_parse_long(CMD, "--dim", optarg, 1, 4096, &L)) return 2; o.model.dim = (int)L; break;
        case O_LAYERS: if (!gyro_cli_parse_long(CMD, "--layers", optarg, 1, 64, &L)) return 2; o.model.n_layers = (int)L; break;
        case O_HEADS: if (!gyro_cli_parse_long(CMD, "--heads", optarg, 1, 256, &L)) return 2; o.model.n_heads = (int)L; break;
        case O_HEAD_DIM: if (!gyro_cli_parse_long(CMD, "--head-dim", optarg, 1, 4096, &L)) return 2; o.model.head_dim = (int)L; head_dim_set = 1; break;
        case O_FFN:
            if (strcmp(optarg, "dense") == 0) { o.model.ffn_kind = GYRO_TF_FFN_DENSE; break; }
            if (strcmp(optarg, "moe") == 0) { o.model.ffn_kind = GYRO_TF_FFN_MOE; break; }
            if (!gyro_cli_parse_long(CMD, "--ffn", optarg, 1, 65536, &L)) return 2;
            o.model.ffn_dim = (int)L;
            ffn_set = 1;
            break;
        case O_ATTENTION:
            if (strcmp(optarg, "mha") == 0) o.model.attention_kind = GYRO_TF_ATTENTION_MHA;
            else if (strcmp(optarg, "mla") == 0) o.model.attention_kind = GYRO_TF_ATTENTION_MLA;
            else return gyro_cli_usage_error(CMD, "--attention must be mha or mla");
            break;
        case O_MLA_LATENT: if (!gyro_cli_parse_long(CMD, "--mla-latent", optarg, 1, 4096, &L)) return 2; o.model.mla_latent_dim = (int)L; mla_latent_set = 1; break;
        case O_MLA_Q: if (!gyro_cli_parse_long(CMD, "--mla-q-latent", optarg, 1, 4096, &L)) return 2; o.model.mla_q_latent = (int)L; break;
        case O_MLA_ROPE: if (!gyro_cli_parse_long(CMD, "--mla-rope", optarg, 0, 256, &L)) return 2; o.model.mla_rope_dim = (int)L; break;
        case O_EXPERTS: if (!gyro_cli_parse_long(CMD, "--experts", optarg, 1, 256, &L)) return 2; o.model.moe_experts = (int)L; experts_set = 1; break;
        case O_SHARED: if (!gyro_cli_parse_long(CMD, "--shared-experts", optarg, 0, 64, &L)) return 2; o.model.moe_shared = (int)L; break;
        case O_TOP_K: if (!gyro_cli_parse_long(CMD, "--top-k", optarg, 1, 256, &L)) return 2; o.model.moe_top_k = (int)L; top_k_set = 1; break;
        case O_BALANCE:
            if (!gyro_cli_parse_double(CMD, "--balance", optarg, &D)) return 2;
            if (!(D >= 0)) return gyro_cli_usage_error(CMD, "--balance must be >= 0");
            o.model.moe_balance = (float)D;
            balance_set = 1;
            break;
        case O_MAXLEN: if (!gyro_cli_parse_long(CMD, "--max-len", optarg, 1, 4096, &L)) return 2; o.model.max_len = (int)L; break;
        case O_DROPOUT:
            if (!gyro_cli_parse_double(CMD, "--dropout", optarg, &D)) return 2;
            if (!(D >= 0 && D < 1)) return gyro_cli_usage_error(CMD, "--dropout must be in [0, 1)");
            o.model.dropout = (float)D;
            break;
        case O_CURV:
            if (!gyro_cli_parse_double(CMD, "--curvature", optarg, &D)) return 2;
            if (!(D > 0)) return gyro_cli_usage_error(CMD, "--curvature must be > 0");
            o.model.curvature = (float)D;
            break;
        case O_LN: o.model.layernorm = 1; break;
        case O_RELU: o.model.ffn_activation = GYRO_TF_ACTIVATION_RELU; break;
        case O_NO_LN: o.model.layernorm = 0; break;
        case O_NO_RELU: o.model.ffn_activation = GYRO_TF_ACTIVATION_IDENTITY; break;
        case O_RESIDUAL:
            if (strcmp(optarg, "none") == 0) o.model.residual = GYRO_TF_RESIDUAL_NONE;
            else if (strcmp(optarg, "mobius") == 0) o.model.residual = GYRO_TF_RESIDUAL_MOBIUS;
            else if (strcmp(optarg, "tangent") == 0) o.model.residual = GYRO_TF_RESIDUAL_TANGENT;
            else return gyro_cli_usage_error(CMD, "--residual must be none, mobius or tangent");
            break;
        case O_OPTIMIZER:
            if (strcmp(optarg, "rmsprop") == 0) o.optim.kind = GYRO_OPTIM_RMSPROP;
            else if (strcmp(optarg, "adam") == 0) { o.optim.kind = GYRO_OPTIM_ADAM; o.optim.eps = 1e-8; }
            else if (strcmp(optarg, "sgd") == 0) o.optim.kind = GYRO_OPTIM_SGD;
            else return gyro_cli_usage_error(CMD, "--optimizer must be rmsprop, adam or sgd");
            break;
        case O_BALL_OPTIMIZER:
            if (strcmp(optarg, "rsgd") == 0) o.optim.ball_kind = GYRO_OPTIM_BALL_RSGD;
            else if (strcmp(optarg, "radam") == 0) o.optim.ball_kind = GYRO_OPTIM_BALL_RADAM;
            else return gyro_cli_usage_error(CMD, "--ball-optimizer must be rsgd or radam");
            break;
        case O_LR: if (!gyro_cli_parse_double(CMD, "--lr", optarg, &D)) return 2; o.optim.lr = D; break;
        case O_BALL_LR: if (!gyro_cli_parse_double(CMD, "--ball-lr", optarg, &D)) return 2; o.optim.ball_lr = D; break;
        case O_CLIP: if (!gyro_cli_parse_double(CMD, "--clip", optarg, &D)) return 2; o.optim.clip_norm = D; break;
        case O_EPOCHS: if (!gyro_cli_parse_long(CMD, "--epochs", optarg, 1, 100000, &L)) return 2; o.epochs = (int)L; break;
        case O_BATCH: if (!gyro_cli_parse_long(CMD, "--batch", optarg, 1, 65536, &L)) return 2; o.batch_size = (int)L; break;
        case O_PATIENCE: if (!gyro_cli_parse_long(CMD, "--patience", optarg, 0, 100000, &L)) return 2; o.patience = (int)L; break;
        case O_RESTART: if (!gyro_cli_parse_double(CMD, "--restart-epochs", optarg, &D)) return 2; o.sgdr.t0 = D; break;
        case O_RESTART_MULT: if (!gyro_cli_parse_double(CMD, "--restart-mult", optarg, &D)) return 2; o.sgdr.t_mult = D; break;
        case O_DEV: dev_path = optarg; break;
        case O_DEV_FRAC:
            if (!gyro_cli_parse_double(CMD, "--dev-fraction", optarg, &D)) return 2;
            if (!(D >= 0 && D < 1)) return gyro_cli_usage_error(CMD, "--dev-fraction must be in [0, 1)");
            o.dev_fraction = D;
            break;
        case O_MIN_COUNT: if (!gyro_cli_parse_long(CMD, "--min-count", optarg, 1, 1L << 30, &L)) return 2; o.min_count = (int)L; break;
        case O_SEED: if (!gyro_cli_parse_seed(CMD, "--seed", optarg, &o.seed)) return 2; break;
        case O_EMB: emb = optarg; break;
        case O_FREEZE: o.freeze_table = 1; break;
        case O_CKPT: o.checkpoint = optarg; break;
        case O_KEEP_TRAD: o.norm.t2s = 0; break;
        case O_CASE_FOLD: o.norm.case_fold = 1; break;
        case O_WORDS: o.token_unit = GYRO_TOKEN_WORDS; break;
        case O_BUCKET: if (!gyro_cli_parse_long(CMD, "--bucket", optarg, 0, 1L << 20, &L)) return 2; o.bucket = (int)L; break;
        case O_QUIET: o.quiet = 1; break;
        case 'o': out = optarg; break;
        case O_HELP: usage(stdout); return 0;
        default: return gyro_cli_usage_error(CMD, "unknown option");
        }
    }
    if (!out) return gyro_cli_usage_error(CMD, "train needs -o MODEL");
    if (optind + 1 != argc) return gyro_cli_usage_error(CMD, "train needs exactly one training stream");
    if (o.sgdr.t_mult < 1) return gyro_cli_usage_error(CMD, "--restart-mult must be >= 1");
    if (o.sgdr.t0 < 0) return gyro_cli_usage_error(CMD, "--restart-epochs must be >= 0");

    gyro_embedding_table *table = NULL;
    gyro_status st;
    if (emb) {
        if ((st = gyro_table_file_load(emb, &table))) return fail(st);
        o.model.dim = table->dim;
        o.table = table;
    }
    if (!head_dim_set) o.model.head_dim = (o.model.dim + o.model.n_heads - 1) / o.model.n_heads;
    if (!ffn_set) o.model.ffn_dim = 4 * o.model.dim;
    /* MLA / MoE defaults; their options without the block kind are left for the model's
     * configuration check to refuse (usage error, exit 2) */
    if (o.model.attention_kind == GYRO_TF_ATTENTION_MLA && !mla_latent_set)
        o.model.mla_latent_dim = o.model.dim > 1 ? o.model.dim / 2 : 1;
    if (o.model.ffn_kind == GYRO_TF_FFN_MOE) {
        if (!experts_set) o.model.moe_experts = 4;
        if (!top_k_set) o.model.moe_top_k = 1;
        if (!balance_set) o.model.moe_balance = 0.01f;
    }
    {
        gyro_tf_config probe = o.model; /* vocabulary and classes come from the data */
        probe.vocab_size = 1;
        probe.n_classes = 1;
        if (gyro_tf_config_validate(&probe) != GYRO_OK) {
            gyro_embedding_table_free(table);
            return gyro_cli_usage_error(CMD, "%s", gyro_error_message());
        }
    }
    o.log = o.quiet ? NULL : stderr;

    gyro_example_set train = {0}, dev = {0};
    uint64_t skipped = 0;
    st = gyro_example_file_read(&train, argv[optind], &skipped);
    if (!st && dev_path) st = gyro_example_file_read(&dev, dev_path, &skipped);
    if (!st && skipped && !o.quiet) fprintf(stderr, "gyro classify: skipped %llu examples with an empty text or label\n", (unsigned long long)skipped);
    gyro_classifier *m = NULL;
    gyro_train_result r;
    struct sigaction sa = {0}, old_int, old_term;
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    o.stop = &train_stop;
    if (!st) st = gyro_train_classifier(&o, &train, dev_path ? &dev : NULL, &m, &r);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    if (st == GYRO_ERR_INTERRUPTED && m && !o.checkpoint) {
        /* no checkpoint holds the best model so far: it goes to -o */
        char why[1024];
        snprintf(why, sizeof why, "%s", gyro_error_message());
        gyro_status ss = gyro_classifier_save(m, out);
        st = ss ? ss : gyro_error_set(st, "%s; the best model so far is in %s", why, out);
    }
    if (!st) st = gyro_classifier_save(m, out);
    if (!st && !o.quiet) {
        fprintf(stderr, "gyro classify: %d training and %d dev examples, %d labels, vocabulary %d (%d from the table)\n",
                r.n_train, r.n_dev, gyro_classifier_num_labels(m), gyro_classifier_vocab_size(m), r.table_rows);
        if (r.dev_unknown) fprintf(stderr, "gyro classify: %d dev examples have a label absent from training (skipped)\n", r.dev_unknown);
        fprintf(stderr, "gyro classify: %d epochs, %llu steps, %.1f steps/s; ", r.epochs,
                (unsigned long long)r.steps, r.steps_per_second);
        if (r.best_epoch) fprintf(stderr, "best dev accuracy %.2f%% at epoch %d\n", 100 * r.best_dev_accuracy, r.best_epoch);
        else fprintf(stderr, "no dev set\n");
        fprintf(stderr, "gyro classify: wrote %s (%s)\n", out, gyro_classifier_version(m));
    }
    gyro_classifier_free(m);
    gyro_example_set_free(&train);
    gyro_example_set_free(&dev);
    gyro_embedding_table_free(table);
    return st ? fail(st) : 0;
}

/* ---- eval ---------------------------------------------------------------------------------- */

static int eval_main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"model", 1, 0, 'm'}, {"svg", 1, 0, O_SVG}, {"confusion", 1, 0, O_CONFUSION},
        {"help", 0, 0, O_HELP}, {0, 0, 0, 0}};
    const char *model = NULL, *svg = NULL;
    long confusion = 20;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "m:", longopts, NULL)) != -1) {
        switch (c) {
        case 'm': model = optarg; break;
        case O_SVG: svg = optarg; break;
        case O_CONFUSION: if (!gyro_cli_parse_long(CMD, "--confusion", optarg, 0, 1L << 20, &confusion)) return 2; break;
        case O_HELP: usage(stdout); return 0;
        default: return gyro_cli_usage_error(CMD, "unknown option");
        }
    }
    if (!model) return gyro_cli_usage_error(CMD, "eval needs -m MODEL");
    if (optind + 1 != argc) return gyro_cli_usage_error(CMD, "eval needs exactly one Example stream");
    gyro_classifier *m = NULL;
    gyro_status st = gyro_classifier_load(model, &m);
    if (st) return fail(st);
    gyro_example_set set = {0};
    uint64_t skipped = 0;
    gyro_metrics met = {0};
    int unknown = 0;
    st = gyro_example_file_read(&set, argv[optind], &skipped);
    if (!st) st = gyro_metrics_init(&met, gyro_classifier_num_labels(m));
    if (!st) st = gyro_classifier_evaluate(m, &set, &met, &unknown);
    if (!st) {
        const gyro_label_set *labels = gyro_classifier_labels(m);
        printf("model: %s\n", gyro_classifier_version(m));
        if (unknown) printf("skipped: %d examples whose label the model does not know\n", unknown);
        if (skipped) printf("skipped: %llu examples with an empty text or label\n", (unsigned long long)skipped);
        st = gyro_metrics_write_text(&met, labels, (int)confusion, stdout);
        if (!st && svg) st = gyro_metrics_write_svg(&met, labels, svg);
    }
    gyro_metrics_free(&met);
    gyro_example_set_free(&set);
    gyro_classifier_free(m);
    return st ? fail(st) : 0;
}

/* ---- predict ------------------------------------------------------------------------------- */

/* A FILE* that yields `peek` bytes first and then the rest of `fp` (for format detection on a
 * pipe without losing the bytes read). */
typedef struct peek_cookie { FILE *fp; unsigned char buf[64]; size_t n, off; } peek_cookie;

static ssize_t peek_read(void *c, char *buf, size_t size)
{
    peek_cookie *p = c;
    if (p->off < p->n) {
        size_t k = p->n - p->off < size ? p->n - p->off : size;
        memcpy(buf, p->buf + p->off, k);
        p->off += k;
        return (ssize_t)k;
    }
    size_t got = fread(buf, 1, size, p->fp);
    if (got == 0 && ferror(p->fp)) return -1;
    return (ssize_t)got;
}

static int peek_close(void *c) { free(c); return 0; }

/* Is this the start of a gyro stream? varint length, then tag 0x0a, length 4, "gyro". */
static int looks_like_stream(const unsigned char *b, size_t n)
{
    size_t i = 0;
    while (i < n && i < 5 && (b[i] & 0x80)) i++;
    i++;
    return i + 6 <= n && b[i] == 0x0a && b[i + 1] == 4 && memcmp(b + i + 2, "gyro", 4) == 0;
}

/* A NUL-terminated string as a JSON string (pipeline/json_out.h escapes it). */
static void json_string(FILE *f, const char *s) { gyro_json_write_string(f, s, strlen(s)); }

typedef struct predict_ctx {
    const gyro_classifier *m;
    gyro_classifier_scratch *s;
    int k;
    gyro_intent *top;
    gyro_stream_writer *w;      /* --stream */
    uint64_t n, errors;
    size_t max_line;            /* --max-line */
    uint64_t too_long;          /* inputs skipped for it */
} predict_ctx;

/* One input over --max-line: a warning (the first ten) on stderr, and the count. */
static void predict_skip(predict_ctx *c, const char *path, unsigned long long where)
{
    if (++c->too_long <= 10)
        fprintf(stderr, "gyro classify: %s:%llu: skipped: line longer than --max-line (%zu bytes)\n",
                path, where, c->max_line);
    else if (c->too_long == 11)
        fprintf(stderr, "gyro classify: further skipped lines not shown (see the summary)\n");
}

/* Read one line of `in` into *buf (NUL-terminated, without the '\n'), keeping at most `max`
 * bytes: a longer line is read to its end and dropped (*too_long = 1, *buf undefined), so its
 * size never reaches memory. Returns the kept length, or -1 at end of input. *buf grows with
 * realloc (owned by the caller); -2 if it cannot. */
static ssize_t read_line_max(FILE *in, char **buf, size_t *cap, size_t max, int *too_long)
{
    size_t n = 0;
    int c, any = 0;
    *too_long = 0;
    while ((c = getc(in)) != EOF) {
        any = 1;
        if (c == '\n') break;
        if (*too_long) continue;
        if (n + 1 >= *cap) {
            size_t nc = *cap ? *cap * 2 : 256;
            if (nc > max + 2) nc = max + 2;
            char *b = realloc(*buf, nc);
            if (!b) return -2;
            *buf = b;
            *cap = nc;
        }
        /* one byte of slack for a '\r' before the '\n' */
        if (n >= max + 1) { *too_long = 1; continue; }
        (*buf)[n++] = (char)c;
    }
    if (!any) return -1;
    if (!*too_long && n > 0 && (*buf)[n - 1] == '\r') n--;
    if (n > max) *too_long = 1;
    if (*cap == 0) {
        if (!(*buf = malloc(1))) return -2;
        *cap = 1;
    }
    if (!*too_long) (*buf)[n] = '\0';
    return (ssize_t)n;
}

/* Classify one text and write one output record. A data error (empty text, invalid UTF-8 under
 * the model's policy) is reported in the record and counted; other errors stop. */
static gyro_status predict_one(predict_ctx *c, const char *text, const char *id)
{
    int n = 0;
    gyro_status st = gyro_classifier_predict(c->m, c->s, text, c->k, c->top, &n);
    c->n++;
    if (st && st != GYRO_ERR_DATA) return st;
    if (st) c->errors++;
    if (c->w) {
        Gyro__V1__ClassifyResponse r = GYRO__V1__CLASSIFY_RESPONSE__INIT;
        Gyro__V1__Intent in[n > 0 ? n : 1];
        Gyro__V1__Intent *ip[n > 0 ? n : 1];
        for (int i = 0; i < n; i++) {
            gyro__v1__intent__init(&in[i]);
            in[i].label = (char *)c->top[i].label;
            in[i].probability = c->top[i].probability;
            ip[i] = &in[i];
        }
        r.n_intents = (size_t)n;
        r.intents = ip;
        r.model_version = (char *)gyro_classifier_version(c->m);
        r.id = (char *)id;
        r.normalized_text = (char *)(st ? "" : gyro_classifier_scratch_normalized(c->s));
        return gyro_stream_write(c->w, &r.base);
    }
    fputs("{\"id\":", stdout);
    json_string(stdout, id);
    fputs(",\"text\":", stdout);
    json_string(stdout, st ? "" : gyro_classifier_scratch_normalized(c->s));
    fputs(",\"intents\":[", stdout);
    for (int i = 0; i < n; i++) {
        fputs(i ? ",{\"label\":" : "{\"label\":", stdout);
        json_string(stdout, c->top[i].label);
        printf(",\"probability\":%.6f}", c->top[i].probability);
    }
    fputc(']', stdout);
    if (st) {
        fputs(",\"error\":", stdout);
        json_string(stdout, gyro_error_message());
    }
    fputs("}\n", stdout);
    return ferror(stdout) ? gyro_error_set(GYRO_ERR_IO, "stdout: write error") : GYRO_OK;
}

static int predict_main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"model", 1, 0, 'm'}, {"top", 1, 0, 'k'}, {"stream", 0, 0, O_STREAM},
        {"output", 1, 0, 'o'}, {"max-line", 1, 0, O_MAX_LINE}, {"help", 0, 0, O_HELP}, {0, 0, 0, 0}};
    const char *model = NULL, *out = "-";
    long k = 1, max_line = 16L << 20;
    int stream = 0, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "m:k:o:", longopts, NULL)) != -1) {
        switch (c) {
        case 'm': model = optarg; break;
        case 'k': if (!gyro_cli_parse_long(CMD, "-k", optarg, 1, 1L << 20, &k)) return 2; break;
        case 'o': out = optarg; break;
        case O_STREAM: stream = 1; break;
        case O_MAX_LINE:
            if (!gyro_cli_parse_long(CMD, "--max-line", optarg, 1, 1L << 30, &max_line)) return 2;
            break;
        case O_HELP: usage(stdout); return 0;
        default: return gyro_cli_usage_error(CMD, "unknown option");
        }
    }
    if (!model) return gyro_cli_usage_error(CMD, "predict needs -m MODEL");
    if (argc - optind > 1) return gyro_cli_usage_error(CMD, "predict reads at most one input");
    if (!stream && strcmp(out, "-") != 0) return gyro_cli_usage_error(CMD, "-o is for --stream output; JSON lines go to stdout");
    const char *in_path = optind < argc ? argv[optind] : "-";

    predict_ctx ctx = {.k = (int)k, .max_line = (size_t)max_line};
    gyro_classifier *m = NULL;
    gyro_status st = gyro_classifier_load(model, &m);
    if (st) return fail(st);
    ctx.m = m;
    FILE *raw = strcmp(in_path, "-") == 0 ? stdin : fopen(in_path, "rb");
    if (!raw) {
        gyro_classifier_free(m);
        return fail(gyro_error_set(GYRO_ERR_IO, "%s: cannot open", in_path));
    }
    peek_cookie *pc = calloc(1, sizeof *pc);
    FILE *in = NULL;
    if (pc) {
        pc->fp = raw;
        pc->n = fread(pc->buf, 1, sizeof pc->buf, raw);
        in = fopencookie(pc, "r", (cookie_io_functions_t){.read = peek_read, .close = peek_close});
        if (!in) free(pc);
    }
    if (!in) st = gyro_error_set(GYRO_ERR_NOMEM, "input");
    int is_stream = in && looks_like_stream(pc->buf, pc->n);
    int kk = ctx.k < gyro_classifier_num_labels(m) ? ctx.k : gyro_classifier_num_labels(m);
    ctx.top = malloc((size_t)(kk > 0 ? kk : 1) * sizeof *ctx.top);
    if (!st && !ctx.top) st = gyro_error_set(GYRO_ERR_NOMEM, "predict");
    if (!st) st = gyro_classifier_scratch_new(m, &ctx.s);
    if (!st && stream)
        st = gyro_stream_writer_open_path(out, &gyro__v1__classify_response__descriptor, "gyro classify predict " GYRO_VERSION, &ctx.w);
    char idbuf[32];
    if (!st && is_stream) {
        gyro_stream_reader *r = NULL;
        st = gyro_stream_reader_open_file(in, in_path, NULL, &r);
        const char *type = st ? "" : gyro_stream_reader_message_type(r);
        int is_doc = strcmp(type, gyro__v1__document__descriptor.name) == 0;
        int is_ex = strcmp(type, gyro__v1__example__descriptor.name) == 0;
        int is_req = strcmp(type, gyro__v1__classify_request__descriptor.name) == 0;
        if (!st && !is_doc && !is_ex && !is_req)
            st = gyro_error_set(GYRO_ERR_FORMAT, "%s: a stream of %s; predict reads Document, Example or ClassifyRequest streams", in_path, type);
        const ProtobufCMessageDescriptor *d = is_doc ? &gyro__v1__document__descriptor
                                            : is_ex ? &gyro__v1__example__descriptor
                                                    : &gyro__v1__classify_request__descriptor;
        while (!st) {
            ProtobufCMessage *msg;
            if ((st = gyro_stream_next(r, d, &msg)) || !msg) break;
            const char *text, *id = idbuf;
            snprintf(idbuf, sizeof idbuf, "%llu", (unsigned long long)gyro_stream_reader_record(r));
            if (is_doc) text = ((Gyro__V1__Document *)msg)->text;
            else if (is_ex) text = ((Gyro__V1__Example *)msg)->text;
            else {
                Gyro__V1__ClassifyRequest *q = (Gyro__V1__ClassifyRequest *)msg;
                text = q->text;
                if (q->id && q->id[0]) id = q->id;
            }
            if (text && strlen(text) > ctx.max_line)
                predict_skip(&ctx, in_path, (unsigned long long)gyro_stream_reader_record(r));
            else
                st = predict_one(&ctx, text ? text : "", id);
            protobuf_c_message_free_unpacked(msg, NULL);
        }
        gyro_stream_reader_free(r);
    } else if (!st) {
        char *line = NULL;
        size_t cap = 0;
        ssize_t len;
        uint64_t lineno = 0;
        int too_long = 0;
        while (!st && (len = read_line_max(in, &line, &cap, ctx.max_line, &too_long)) != -1) {
            lineno++;
            if (len == -2) {
                st = gyro_error_set(GYRO_ERR_NOMEM, "%s:%llu: out of memory", in_path, (unsigned long long)lineno);
                break;
            }
            if (too_long) {
                predict_skip(&ctx, in_path, (unsigned long long)lineno);
                continue;
            }
            if ((size_t)len != strlen(line)) {
                st = gyro_error_set(GYRO_ERR_DATA, "%s:%llu: NUL byte in the text", in_path, (unsigned long long)lineno);
                break;
            }
            snprintf(idbuf, sizeof idbuf, "%llu", (unsigned long long)lineno);
            st = predict_one(&ctx, line, idbuf);
        }
        if (!st && ferror(in)) st = gyro_error_set(GYRO_ERR_IO, "%s: read error", in_path);
        free(line);
    }
    if (ctx.w) {
        if (st) gyro_stream_writer_abort(ctx.w);
        else st = gyro_stream_writer_close(ctx.w);
    }
    if (ctx.too_long)
        fprintf(stderr, "gyro classify: %llu line%s skipped (longer than --max-line)\n",
                (unsigned long long)ctx.too_long, ctx.too_long == 1 ? "" : "s");
    if (!st && ctx.errors)
        fprintf(stderr, "gyro classify: %llu of %llu inputs could not be classified (see their \"error\")\n",
                (unsigned long long)ctx.errors, (unsigned long long)ctx.n);
    if (in) fclose(in);
    if (raw != stdin) fclose(raw);
    gyro_classifier_scratch_free(ctx.s);
    free(ctx.top);
    gyro_classifier_free(m);
    if (!st && fflush(stdout) != 0) st = gyro_error_set(GYRO_ERR_IO, "stdout: write error");
    return st ? fail(st) : 0;
}

int gyro_cmd_classify(int argc, char **argv)
{
    if (argc < 2) return gyro_cli_usage_error(CMD, "missing subcommand: train, eval or predict");
    const char *sub = argv[1];
    if (strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0) { usage(stdout); return 0; }
    if (strcmp(sub, "train") == 0) return train_main(argc - 1, argv + 1);
    if (strcmp(sub, "eval") == 0) return eval_main(argc - 1, argv + 1);
    if (strcmp(sub, "predict") == 0) return predict_main(argc - 1, argv + 1);
    return gyro_cli_usage_error(CMD, "unknown subcommand '%s' (train, eval or predict)", sub);
}

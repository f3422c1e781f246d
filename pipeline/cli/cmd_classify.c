/* cmd_classify.c — `gyro classify train|eval|predict`: the intent classifier on the command line.
 *
 *   gyro classify train   [options] -o MODEL TRAIN         Example stream, TSV or fastText
 *                                                           lines in, model file out
 *   gyro classify eval    -m MODEL [--svg FILE] DATA.pb     metrics report on stdout
 *                                                           (cmd_classify_eval.c)
 *   gyro classify predict -m MODEL [-k K] [--stream] [IN]   text lines, or a Document/Example
 *                                                           stream (e.g. from `gyro normalize`)
 *
 * A thin wrapper: training is models/train_classifier.c, prediction models/classifier.c. The
 * input of predict is detected from its first bytes: a gyro stream header (varint length, then
 * field 1 = "gyro") means a stream, anything else is UTF-8 text with one utterance per line.
 * On a terminal or a pipe the decision needs only the first byte or two and each line's answer
 * is written and flushed as soon as the line arrives, as `fasttext predict model.bin -` does.
 */
#include <stddef.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "models/classifier.h"
#include "models/train_classifier.h"
#include "pipeline/classify_response.h"
#include "pipeline/cli/cli.h"
#include "pipeline/cli/cmd_classify_autotune.h"
#include "pipeline/cli/cmd_classify_eval.h"
#include "pipeline/cli/opts.h"
#include "pipeline/json_out.h"
#include "pipeline/mpi_comm.h"
#include "pipeline/example_file.h"
#include "pipeline/stream.h"
#include "pipeline/progress_stream.h"
#include "pipeline/table_file.h"
#include "models/text/strmap.h"

#define CMD "classify"

static void usage(FILE *f)
{
    fputs("usage: gyro classify train [options] -o MODEL TRAIN.pb\n"
          "       gyro classify eval -m MODEL [--json] [--others LABEL] [-k N] [--svg FILE] [--confusion N] DATA.pb\n"
          "       gyro classify predict -m MODEL [-k K] [--stream] [-o OUT] [--format F] [--max-line BYTES] [IN|-]\n"
          "       gyro classify autotune [--budget TIME] --dev DEV.pb -o MODEL TRAIN.pb\n"
          "\n"
          "'gyro classify SUBCOMMAND --help' gives the options of each subcommand.\n",
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

typedef struct train_args {
    gyro_train_options o;   /* gyro_train_options_init for the geometry, then the options */
    int geometry;           /* gyro_tf_geometry */
    int ffn_dim_given, keep_trad, words, no_layernorm, no_relu, no_context, no_hierarchy;
    int format;             /* gyro_example_format */
    const char *out, *dev, *emb, *progress;
} train_args;

/* marks of our own, beside the library's GYRO_TRAIN_SET_* */
#define GIVEN_OPTIMIZER (1u << 16)
#define GIVEN_TF_ONLY (1u << 17)   /* an option only the transformer has */
#define GIVEN_NG_ONLY (1u << 18)   /* an option only the n-gram model has */
#define GIVEN_ARCH (1u << 19)

/* --ffn dense|moe (the block kind) or N (the hidden width). */
static int parse_ffn(void *args, const char *cmd, const char *opt, const char *v)
{
    train_args *a = args;
    long n;
    if (!strcmp(v, "dense")) a->o.model.ffn_kind = GYRO_TF_FFN_DENSE;
    else if (!strcmp(v, "moe")) a->o.model.ffn_kind = GYRO_TF_FFN_MOE;
    else if (!gyro_cli_parse_long(cmd, opt, v, 1, 65536, &n)) return 0;
    else a->o.model.ffn_dim = (int)n, a->ffn_dim_given = 1;
    return 1;
}

#define TA train_args
static const gyro_opt train_opts[] = {
    GYRO_O_STR("output", 'o', TA, out, "MODEL", NULL, "the classifier file (required)"),
    GYRO_O_CHOICE("format", 0, TA, format, "F", "auto|pb|tsv|fasttext", "auto",
                  "the training and --dev files: pb (a gyro Example stream, from gyro import), tsv "
                  "(text<TAB>label[<TAB>session] lines; a header line 'label<TAB>text' reorders the "
                  "columns), fasttext ('__label__x text' lines; several labels make the composite x+y); "
                  "auto tells them apart by the first bytes. A bad text line stops with its line number "
                  "and exit status 65"),
    GYRO_O_CHOICE("geometry", 0, TA, geometry, "G", "euclidean|hyperbolic|lorentz", "hyperbolic",
                  "model geometry: hyperbolic (the Poincare ball), lorentz (the hyperboloid, HyboNet) or "
                  "euclidean; the defaults of the other options are the seed's settings for the geometry"),
    GYRO_O_CHOICE("arch", 0, TA, o.arch, "A", "transformer|ngrams", NULL,
                  "architecture: ngrams, a bag of character n-grams (fastText's model; in the Poincare ball "
                  "with --geometry hyperbolic, HyperText), the default, which trains in seconds; or the "
                  "transformer (the default with --geometry lorentz, or when a transformer option is given)",
                  .mark = GIVEN_ARCH),
    GYRO_O_SECTION("Model:"),
    GYRO_O_INT("dim", 0, TA, o.model.dim, "N", NULL, 1, 4096, "model dimension (100; euclidean transformer 128)",
               .mark = GYRO_TRAIN_SET_DIM),
    GYRO_O_INT("layers", 0, TA, o.model.n_layers, "N", NULL, 1, 64, "transformer layers (3)", .mark = GIVEN_TF_ONLY),
    GYRO_O_INT("heads", 0, TA, o.model.n_heads, "N", NULL, 1, 256, "attention heads (16)", .mark = GIVEN_TF_ONLY),
    GYRO_O_INT("head-dim", 0, TA, o.model.head_dim, "N", NULL, 1, 4096, "coordinates per head (dim / heads)",
               .mark = GYRO_TRAIN_SET_HEAD_DIM | GIVEN_TF_ONLY),
    GYRO_O_CALL("ffn", 0, parse_ffn, "N|dense|moe", NULL,
                "hidden width of the feed-forward blocks (4 dim; of every expert with MoE), or their "
                "kind: dense (the default) or moe (mixture of experts)", .mark = GIVEN_TF_ONLY),
    GYRO_O_INT("max-len", 0, TA, o.model.max_len, "N", NULL, 1, 4096, "longest sequence, longer texts are cut (64)"),
    GYRO_O_FLOAT("dropout", 0, TA, o.model.dropout, "P", NULL, 0, 0, "dropout probability in [0, 1) (hyperbolic 0.1, else 0)", .mark = GIVEN_TF_ONLY),
    GYRO_O_FLOAT("curvature", 0, TA, o.model.curvature, "C", NULL, 0, 0, "curvature (hyperbolic 0.1, else 1)"),
    GYRO_O_FLAG("layernorm", 0, TA, o.model.layernorm, "LayerNorm after each residual", .mark = GIVEN_TF_ONLY),
    GYRO_O_CHOICE("residual", 0, TA, o.model.residual, "R", "none|mobius|tangent", NULL,
                  "residual connection of the blocks: none, mobius or tangent", .mark = GIVEN_TF_ONLY),
    GYRO_O_SET("relu", 0, TA, o.model.ffn_activation, GYRO_TF_ACTIVATION_RELU, "ReLU activation in the feed-forward blocks", .mark = GIVEN_TF_ONLY),
    GYRO_O_FLAG("no-layernorm", 0, TA, no_layernorm, "no LayerNorm (with --residual none --curvature 1 --no-relu: the seed's block)", .mark = GIVEN_TF_ONLY),
    GYRO_O_FLAG("no-relu", 0, TA, no_relu, "identity activation in the feed-forward blocks", .mark = GIVEN_TF_ONLY),
    GYRO_O_CHOICE("attention", 0, TA, o.model.attention_kind, "A", "mha|mla", NULL,
                  "attention: multi-head (mha, the default) or multi-head latent attention (mla)", .mark = GIVEN_TF_ONLY),
    GYRO_O_INT("mla-latent", 0, TA, o.model.mla_latent_dim, "L", NULL, 1, 4096, "MLA joint key-value latent dimension (dim / 2)",
               .mark = GYRO_TRAIN_SET_MLA_LATENT | GIVEN_TF_ONLY),
    GYRO_O_INT("mla-q-latent", 0, TA, o.model.mla_q_latent, "L", NULL, 1, 4096,
               "MLA query latent dimension (the same as --mla-latent)", .mark = GIVEN_TF_ONLY),
    GYRO_O_INT("mla-rope", 0, TA, o.model.mla_rope_dim, "R", NULL, 0, 256, "MLA decoupled RoPE width per head (even; 0 = none)", .mark = GIVEN_TF_ONLY),
    GYRO_O_INT("experts", 0, TA, o.model.moe_experts, "N", NULL, 1, 256, "MoE routed experts per layer (4)",
               .mark = GYRO_TRAIN_SET_MOE_EXPERTS | GIVEN_TF_ONLY),
    GYRO_O_INT("shared-experts", 0, TA, o.model.moe_shared, "N", NULL, 0, 64, "MoE shared, always-on experts per layer (0)", .mark = GIVEN_TF_ONLY),
    GYRO_O_INT("moe-top-k", 0, TA, o.model.moe_top_k, "K", NULL, 1, 256, "MoE routed experts chosen per token (1)",
               .mark = GYRO_TRAIN_SET_MOE_TOP_K | GIVEN_TF_ONLY),
    GYRO_O_INT("top-k", 0, TA, o.model.moe_top_k, "K", NULL, 1, 256, NULL, .mark = GYRO_TRAIN_SET_MOE_TOP_K | GIVEN_TF_ONLY),
    GYRO_O_FLOAT("balance", 0, TA, o.model.moe_balance, "A", NULL, 0, 0,
                 "weight of the MoE balance loss (0.01); the reported training loss includes it, and the "
                 "per-epoch line shows each layer's expert load over the epoch", .mark = GYRO_TRAIN_SET_MOE_BALANCE | GIVEN_TF_ONLY),
    GYRO_O_SECTION("N-gram model (--arch ngrams):"),
    GYRO_O_INT("buckets", 0, TA, o.ngrams.buckets, "N", NULL, 0, 1 << 26, "rows of the hashed n-grams (200000)", .mark = GIVEN_NG_ONLY),
    GYRO_O_CHOICE("pool", 0, TA, o.ngrams.pool, "P", "einstein|tangent", NULL,
                  "hyperbolic pooling of the bag: tangent (exp0 of the mean of the rows' log0, the default) "
                  "or einstein (the Einstein midpoint, HyperText)", .mark = GIVEN_NG_ONLY),
    GYRO_O_INT("max-n", 0, TA, o.ngrams.max_n, "N", NULL, 1, 8, "longest character n-gram (2)", .mark = GIVEN_NG_ONLY),
    GYRO_O_FLAG("context", 0, TA, o.ngrams.context,
                "the previous turn of the session (Example.session) adds its characters and bigrams (the default)",
                .mark = GIVEN_NG_ONLY),
    GYRO_O_FLAG("no-context", 0, TA, no_context, "no context features", .mark = GIVEN_NG_ONLY),
    GYRO_O_FLOAT("context-weight", 0, TA, o.ngrams.context_weight, "W", NULL, 0, 0,
                 "total weight of the previous turn's features, in features of the utterance (1)", .mark = GIVEN_NG_ONLY),
    GYRO_O_FLAG("hierarchy", 0, TA, o.ngrams.hierarchy,
                "labels share parent classes read from their names: the atoms of a set 'A+B' and the domain "
                "before '.' (the default)", .mark = GIVEN_NG_ONLY),
    GYRO_O_FLAG("no-hierarchy", 0, TA, no_hierarchy, "one head row per label, no parent classes", .mark = GIVEN_NG_ONLY),
    GYRO_O_DOUBLE("head-lr", 0, TA, o.head_lr, "X", NULL, 0, 0,
                  "learning rate of the classifier head (euclidean: --lr; hyperbolic: --lr / 5)", .mark = GIVEN_NG_ONLY),
    GYRO_O_FLOAT("label-smoothing", 0, TA, o.label_smoothing, "E", NULL, 0, 0,
                 "train toward (1 - E) on the label and E spread over all labels (0)", .mark = GIVEN_NG_ONLY),
    GYRO_O_SECTION("Training:"),
    GYRO_O_CHOICE("optimizer", 0, TA, o.optim.kind, "O", "rmsprop|adam|sgd", NULL, "optimizer: rmsprop (the default), adam or sgd",
                  .mark = GIVEN_OPTIMIZER | GIVEN_TF_ONLY),
    GYRO_O_CHOICE("ball-optimizer", 0, TA, o.optim.ball_kind, "B", "rsgd|radam", NULL,
                  "ball and hyperboloid tensors: Riemannian SGD (rsgd) or Riemannian Adam (radam) (lorentz radam, else rsgd)", .mark = GIVEN_TF_ONLY),
    GYRO_O_DOUBLE("lr", 0, TA, o.optim.lr, "X", NULL, 0, 0, "learning rate (transformer 1e-3, euclidean 1e-4, lorentz 5e-4; ngrams 0.5 for the embeddings, decaying linearly to 0)",
                  .mark = GYRO_TRAIN_SET_LR),
    GYRO_O_DOUBLE("ball-lr", 0, TA, o.optim.ball_lr, "X", NULL, 0, 0, "learning rate of ball and hyperboloid parameters (lorentz 0.03, else 0.05)", .mark = GIVEN_TF_ONLY),
    GYRO_O_DOUBLE("clip", 0, TA, o.optim.clip_norm, "X", NULL, 0, 0, "gradient clip", .mark = GIVEN_TF_ONLY),
    GYRO_O_INT("epochs", 0, TA, o.epochs, "N", NULL, 1, 100000, "epochs (transformer 20, ngrams 25)",
               .mark = GYRO_TRAIN_SET_EPOCHS),
    GYRO_O_INT("batch", 0, TA, o.batch_size, "N", NULL, 1, 65536, "batch size (32)", .mark = GIVEN_TF_ONLY),
    GYRO_O_INT("patience", 0, TA, o.patience, "N", NULL, 0, 100000, "epochs without dev improvement before stopping (5)"),
    GYRO_O_DOUBLE("restart-epochs", 0, TA, o.sgdr.t0, "T", NULL, 0, 0, "warm restarts of the learning rate every T epochs (10; 0 = none)", .mark = GIVEN_TF_ONLY),
    GYRO_O_DOUBLE("restart-mult", 0, TA, o.sgdr.t_mult, "M", NULL, 0, 0, "... the period growing by M (1)", .mark = GIVEN_TF_ONLY),
    GYRO_O_STR("dev", 0, TA, dev, "FILE.pb", NULL, "dev set"),
    GYRO_O_DOUBLE("dev-fraction", 0, TA, o.dev_fraction, "F", NULL, 0, 0,
                  "without --dev, the fraction of the training set held out as dev for early stopping "
                  "(transformer 0.1; ngrams 0: every example trains, all epochs run)",
                  .mark = GYRO_TRAIN_SET_DEV_FRACTION),
    GYRO_O_INT("min-count", 0, TA, o.min_count, "N", NULL, 1, 1 << 30, "drop characters seen fewer times (1)"),
    GYRO_O_SEED("seed", 's', TA, o.seed, NULL, "seed (1)"),
    GYRO_O_INT("bucket", 0, TA, o.bucket, "N", NULL, 0, 1 << 20,
               "batches come from runs of N batches sorted by length (50; 0 = plain shuffle)", .mark = GIVEN_TF_ONLY),
    GYRO_O_INT("threads", 'j', TA, o.threads, "N", NULL, 1, GYRO_TRAIN_MAX_THREADS, "data-parallel threads of a transformer step (1; the n-gram model trains on one)"),
    GYRO_O_STR("embeddings", 't', TA, emb, "TABLE", NULL, "start from a char2vec table (its dimension sets --dim)"),
    GYRO_O_FLAG("freeze", 0, TA, o.freeze_table, "keep the rows of the table fixed"),
    GYRO_O_STR("checkpoint", 0, TA, o.checkpoint, "PATH", NULL,
               "the best model so far, written after every improving epoch and on SIGINT/SIGTERM, which "
               "stop training with exit status 130; without --checkpoint a signal writes the best model so far "
               "to -o"),
    GYRO_O_FLAG("keep-traditional", 0, TA, keep_trad, "normalization of the model: keep Traditional characters"),
    GYRO_O_FLAG("case-fold", 0, TA, o.norm.case_fold, "normalization of the model: Unicode case folding"),
    GYRO_O_FLAG("words", 0, TA, words, "tokens are ICU dictionary words instead of characters"),
    GYRO_O_FLAG("quiet", 'q', TA, o.quiet, "no progress or per-epoch lines"),
    GYRO_O_STR("progress-stream", 0, TA, progress, "FILE", NULL,
               "also write the progress as a gyro stream of TrainingProgress records (stage "
               "\"classify\"; one a second and a last one at the end, each flushed: FILE may be a FIFO; "
               "'-': stdout)"),
    GYRO_O_END,
};
#undef TA

const gyro_cmd_spec gyro_spec_classify_train = {
    "classify train", "[options] -o MODEL TRAIN",
    "Train the hyperbolic (or Lorentz, or Euclidean) transformer intent classifier on an Example "
    "stream. The defaults, in parentheses, are those of the geometry (hyperbolic: tangent residuals, "
    "LayerNorm, ReLU, curvature 0.1, dropout 0.1). --top-k is an old spelling "
    "of --moe-top-k.",
    NULL,
    train_opts,
    NULL,
};

/* The options of the command line over gyro_train_options_init of their geometry, completed by
 * the library (gyro_train_options_complete); *table is the loaded --embeddings. Returns
 * GYRO_OPTS_CONTINUE, or the exit status. */
static int train_parse(int argc, char **argv, train_args *a, int *first, gyro_embedding_table **table)
{
    train_args probe = {0}; /* a first pass finds the geometry, which decides the defaults */
    int rc = gyro_opts_parse(&gyro_spec_classify_train, argc, argv, &probe, first);
    if (rc != GYRO_OPTS_CONTINUE) return rc;
    gyro_tf_geometry geom = (gyro_tf_geometry)probe.geometry;
    memset(a, 0, sizeof *a);
    gyro_train_options_init(&a->o, geom);
    a->geometry = (int)geom;
    unsigned given;
    rc = gyro_opts_parse_marks(&gyro_spec_classify_train, argc, argv, a, first, &given);
    if (rc != GYRO_OPTS_CONTINUE) return rc;
    if (a->ffn_dim_given) given |= GYRO_TRAIN_SET_FFN_DIM;
    if (!(given & GIVEN_ARCH) && (given & GIVEN_TF_ONLY) && a->o.arch != GYRO_ARCH_TRANSFORMER) {
        /* command lines written for the transformer, before n-grams were the default */
        if (!a->o.quiet)
            fprintf(stderr, "gyro classify: notice: transformer options given: training the transformer "
                    "(--arch transformer)\n");
        a->o.arch = GYRO_ARCH_TRANSFORMER;
    }
    if (a->o.arch == GYRO_ARCH_NGRAMS && (given & GIVEN_TF_ONLY))
        return gyro_cli_usage_error(CMD, "--arch ngrams takes no transformer option (layers, heads, ffn, "
                                    "dropout, optimizer, batch, ...); see 'gyro classify train --help'");
    if (a->o.arch == GYRO_ARCH_TRANSFORMER && (given & GIVEN_NG_ONLY))
        return gyro_cli_usage_error(CMD, "--buckets, --max-n, --context, --context-weight, --hierarchy, --head-lr and "
                                    "--label-smoothing are options of --arch ngrams");
    if ((given & GIVEN_OPTIMIZER) && a->o.optim.kind == GYRO_OPTIM_ADAM) a->o.optim.eps = 1e-8;
    if (a->keep_trad) a->o.norm.t2s = 0;
    if (a->words) a->o.token_unit = GYRO_TOKEN_WORDS;
    if (a->no_layernorm) a->o.model.layernorm = 0;
    if (a->no_relu) a->o.model.ffn_activation = GYRO_TF_ACTIVATION_IDENTITY;
    if (a->no_context) a->o.ngrams.context = 0;
    if (a->no_hierarchy) a->o.ngrams.hierarchy = 0;
    if (!a->out) return gyro_cli_usage_error(CMD, "train needs -o MODEL");
    if (*first + 1 != argc) return gyro_cli_usage_error(CMD, "train needs exactly one training file");
    if (!(a->o.model.dropout >= 0 && a->o.model.dropout < 1)) return gyro_cli_usage_error(CMD, "--dropout must be in [0, 1)");
    if (!(a->o.model.curvature > 0)) return gyro_cli_usage_error(CMD, "--curvature must be > 0");
    if (!(a->o.model.moe_balance >= 0)) return gyro_cli_usage_error(CMD, "--balance must be >= 0");
    if (!(a->o.dev_fraction >= 0 && a->o.dev_fraction < 1)) return gyro_cli_usage_error(CMD, "--dev-fraction must be in [0, 1)");
    if (a->o.sgdr.t_mult < 1) return gyro_cli_usage_error(CMD, "--restart-mult must be >= 1");
    if (a->o.sgdr.t0 < 0) return gyro_cli_usage_error(CMD, "--restart-epochs must be >= 0");
    gyro_status st;
    if (a->emb && (st = gyro_table_file_load(a->emb, table))) return fail(st);
    a->o.table = *table;
    if (gyro_train_options_complete(&a->o, given) != GYRO_OK) /* MLA/MoE defaults, the model check */
        return gyro_cli_usage_error(CMD, "%s", gyro_error_message());
    a->o.log = a->o.quiet ? NULL : stderr;
    return GYRO_OPTS_CONTINUE;
}

static void train_report(const gyro_classifier *m, const gyro_train_result *r, const char *out)
{
    fprintf(stderr, "gyro classify: %d training and %d dev examples, %d labels, vocabulary %d (%d from the table)\n",
            r->n_train, r->n_dev, gyro_classifier_num_labels(m), gyro_classifier_vocab_size(m), r->table_rows);
    if (r->dev_unknown) fprintf(stderr, "gyro classify: %d dev examples have a label absent from training (skipped)\n", r->dev_unknown);
    fprintf(stderr, "gyro classify: %d epochs, %llu steps, %.1f steps/s; ", r->epochs,
            (unsigned long long)r->steps, r->steps_per_second);
    if (r->best_epoch) fprintf(stderr, "best dev accuracy %.2f%% at epoch %d\n", 100 * r->best_dev_accuracy, r->best_epoch);
    else fprintf(stderr, "no dev set\n");
    fprintf(stderr, "gyro classify: wrote %s (%s)\n", out, gyro_classifier_version(m));
}

/* The data, before training: what was read, in which format, its labels. GYRO_ERR_NOMEM. */
static gyro_status data_summary(const char *path, const gyro_example_set *train,
                                const gyro_example_read_stats *rs, const char *dev_path,
                                const gyro_example_set *dev, const gyro_example_read_stats *ds)
{
    gyro_strmap *labels = NULL, *sessions = NULL;
    int32_t id;
    gyro_status st = gyro_strmap_new(&labels);
    if (!st) st = gyro_strmap_new(&sessions);
    for (int i = 0; !st && i < train->n; i++) {
        st = gyro_strmap_intern(labels, train->label[i], &id, NULL);
        if (!st && train->session[i] && train->session[i][0])
            st = gyro_strmap_intern(sessions, train->session[i], &id, NULL);
    }
    if (!st) {
        fprintf(stderr, "gyro classify: data: %s (%s): %d examples, %zu labels, %llu composite, %zu sessions",
                path, gyro_example_format_name(rs->format), train->n, gyro_strmap_count(labels),
                (unsigned long long)rs->composite, gyro_strmap_count(sessions));
        if (dev_path) {
            int unseen = 0;
            for (int i = 0; i < dev->n; i++) unseen += gyro_strmap_find(labels, dev->label[i]) < 0;
            fprintf(stderr, "; dev %s (%s): %d examples, %d with a label absent from training",
                    dev_path, gyro_example_format_name(ds->format), dev->n, unseen);
        }
        fputc('\n', stderr);
    }
    gyro_strmap_free(labels);
    gyro_strmap_free(sessions);
    return st;
}

/* Under mpirun (pipeline/mpi_comm.h) every rank reads the same files and trains its part of every
 * batch (gyro_train_classifier, several ranks); rank 0 alone prints, checkpoints and writes -o. */
static int train_main(int argc, char **argv)
{
    train_args a;
    gyro_embedding_table *table = NULL;
    int first, rc = train_parse(argc, argv, &a, &first, &table);
    if (rc != GYRO_OPTS_CONTINUE) {
        gyro_embedding_table_free(table);
        return rc;
    }
    gyro_mpi_comm *comm = NULL;
    gyro_status st = gyro_mpi_open(&comm);
    if (st) {
        gyro_embedding_table_free(table);
        return fail(st);
    }
    const gyro_sync *sy = gyro_mpi_sync(comm);
    int alone = 0;
    if (sy->rank != 0) {
        a.o.quiet = 1;
        a.o.log = NULL;
        a.progress = NULL;
    }
    a.o.sync = sy;
    if (sy->size > 1 && !a.o.quiet)
        fprintf(stderr, "gyro classify: training over %d ranks (%d thread%s each), gradients all-reduced every step\n",
                sy->size, a.o.threads > 1 ? a.o.threads : 1, a.o.threads > 1 ? "s" : "");
    st = gyro_sync_check_same(sy, gyro_cli_args_hash(argc, argv), "the command line");
    gyro_example_set train = {0}, dev = {0};
    gyro_example_read_stats rs = {0}, ds = {0};
    if (!st) st = gyro_example_file_read_format(&train, argv[first], (gyro_example_format)a.format, &rs);
    if (!st && a.dev) st = gyro_example_file_read_format(&dev, a.dev, (gyro_example_format)a.format, &ds);
    if (!st && rs.skipped + ds.skipped && !a.o.quiet)
        fprintf(stderr, "gyro classify: skipped %llu examples with an empty text or label\n",
                (unsigned long long)(rs.skipped + ds.skipped));
    if (!st && !a.o.quiet) st = data_summary(argv[first], &train, &rs, a.dev, &dev, &ds);
    if (sy->size > 1) st = gyro_sync_agree(sy, st, &alone);
    gyro_classifier *m = NULL;
    gyro_train_result r;
    struct sigaction sa = {0}, old_int, old_term;
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    a.o.stop = &train_stop;
    gyro_progress_stream *ps = NULL;
    if (!st && a.progress) st = gyro_progress_stream_open(a.progress, "classify", a.o.epochs, 1.0, &ps);
    if (sy->size > 1 && !alone) st = gyro_sync_agree(sy, st, &alone);
    if (!st) {
        st = gyro_train_classifier(&a.o, &train, a.dev ? &dev : NULL, &m, &r);
        alone = st == GYRO_ERR_UNAVAILABLE && sy->size > 1;   /* the all-reduce failed: a rank died */
    }
    if (ps) {
        gyro_status ps_st = gyro_progress_stream_close(ps);
        if (!st) st = ps_st;
    }
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    if (sy->rank != 0) {   /* rank 0 writes the model */
        gyro_classifier_free(m);
        m = NULL;
        if (!st) st = GYRO_OK;
    }
    if (st == GYRO_ERR_INTERRUPTED && m && !a.o.checkpoint) {
        /* no checkpoint holds the best model so far: it goes to -o */
        char why[1024];
        snprintf(why, sizeof why, "%s", gyro_error_message());
        gyro_status ss = gyro_classifier_save(m, a.out);
        st = ss ? ss : gyro_error_set(st, "%s; the best model so far is in %s", why, a.out);
    }
    if (!st && m) st = gyro_classifier_save(m, a.out);
    if (!st && m && !a.o.quiet) train_report(m, &r, a.out);
    gyro_classifier_free(m);
    gyro_example_set_free(&train);
    gyro_example_set_free(&dev);
    gyro_embedding_table_free(table);
    if (st && sy->size > 1) st = gyro_error_prefix(st, "rank %d", sy->rank);
    rc = st ? fail(st) : 0;
    gyro_mpi_close(comm, rc, alone);
    return rc;
}

/* ---- predict ------------------------------------------------------------------------------- */

/* A NUL-terminated string as a JSON string (pipeline/json_out.h escapes it). */
static void json_string(FILE *f, const char *s) { gyro_json_write_string(f, s, strlen(s)); }

typedef struct predict_ctx {
    const gyro_classifier *m;
    gyro_classifier_scratch *s;
    int k;
    gyro_intent *top;
    gyro_stream_writer *w;      /* --stream */
    gyro_classify_response_buf resp; /* --stream: the Intent messages */
    uint64_t n, errors;
    size_t max_line;            /* --max-line */
    int format;                 /* PREDICT_*: what a text line holds */
    int text_col;               /* tsv: the text column (a header may move it) */
    uint64_t too_long;          /* inputs skipped for it */
    int flush_each;             /* input from a terminal or a pipe: each answer is flushed */
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
static gyro_status predict_one(predict_ctx *c, const char *text, const char *previous, const char *id)
{
    int n = 0;
    gyro_status st = gyro_classifier_predict_context(c->m, c->s, text, previous, c->k, c->top, &n);
    c->n++;
    if (st && st != GYRO_ERR_DATA) return st;
    if (st) c->errors++;
    if (c->w) { /* the message the gRPC Classify method sends (pipeline/classify_response.h) */
        Gyro__V1__ClassifyResponse r;
        gyro_status fs = gyro_classify_response_fill(&c->resp, gyro_classifier_labels(c->m), c->top, n,
                                                     gyro_classifier_version(c->m), id,
                                                     st ? "" : gyro_classifier_scratch_normalized(c->s), &r);
        if (!fs) fs = gyro_stream_write(c->w, &r.base);
        if (!fs && c->flush_each) fs = gyro_stream_writer_flush(c->w);
        return fs;
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
    if (c->flush_each) fflush(stdout);
    return ferror(stdout) ? gyro_error_set(GYRO_ERR_IO, "stdout: write error") : GYRO_OK;
}

typedef struct predict_args {
    const char *model, *out;
    long k, max_line;
    int stream, format;
} predict_args;

enum { PREDICT_AUTO, PREDICT_TEXT, PREDICT_TSV, PREDICT_FASTTEXT };

static const gyro_opt predict_opts[] = {
    GYRO_O_STR("model", 'm', predict_args, model, "MODEL", NULL, "the classifier file (required)"),
    GYRO_O_LONG("top-k", 'k', predict_args, k, "K", "1", 1, 1L << 20, "intents per text"),
    GYRO_O_LONG("top", 0, predict_args, k, "K", NULL, 1, 1L << 20, NULL), /* the old spelling */
    GYRO_O_FLAG("stream", 0, predict_args, stream,
                "write a ClassifyResponse stream (the message of the gRPC Classify method) instead of JSON lines"),
    GYRO_O_STR("output", 'o', predict_args, out, "OUT", "-", "the --stream output ('-': stdout)"),
    GYRO_O_CHOICE("format", 0, predict_args, format, "F", "auto|text|tsv|fasttext", "auto",
                  "text input: text (each line is the utterance), tsv (the text column of labelled TSV, "
                  "as classify train reads it: the first, or the one a 'text' header names), fasttext "
                  "(the line without its __label__ tokens, as fasttext predict reads a test file); auto: a "
                  "stream is detected, and a line starting with __label__ loses its labels"),
    GYRO_O_LONG("max-line", 0, predict_args, max_line, "BYTES", "16777216", 1, 1L << 30,
                "longest input line or record text (as normalize); longer ones are skipped (never held in "
                "memory), reported with their line or record number and counted in a summary"),
    GYRO_O_END,
};

const gyro_cmd_spec gyro_spec_classify_predict = {
    "classify predict", "-m MODEL [-k K] [--stream] [-o OUT] [--format F] [--max-line BYTES] [IN|-]",
    "Classify text lines, or the texts of a Document, Example or ClassifyRequest stream (e.g. from "
    "gyro normalize), read from IN or stdin: the top-k intents as JSON lines "
    "{id, text, intents: [{label, probability}]}, or a ClassifyResponse stream with --stream.",
    NULL,
    predict_opts,
    NULL,
};

/* Remember an Example's text and session as the previous turn of the next one. GYRO_ERR_NOMEM. */
static gyro_status keep_turn(char **text, char **session, const Gyro__V1__Example *ex)
{
    free(*text);
    free(*session);
    *text = strdup(ex->text ? ex->text : "");
    *session = strdup(ex->session ? ex->session : "");
    return *text && *session ? GYRO_OK : gyro_error_set(GYRO_ERR_NOMEM, "previous turn");
}

/* Classify every record of the stream `in` (a Document, Example or ClassifyRequest stream). The
 * previous turn of an Example is the Example before it when both have the same non-empty
 * session; a ClassifyRequest carries its own (previous_turn). */
static gyro_status predict_stream(predict_ctx *ctx, FILE *in, const char *in_path)
{
    gyro_stream_reader *r = NULL;
    char idbuf[32], *prev_text = NULL, *prev_session = NULL;
    gyro_status st = gyro_stream_reader_open_file(in, in_path, NULL, &r);
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
        const char *text, *id = idbuf, *previous = NULL;
        snprintf(idbuf, sizeof idbuf, "%llu", (unsigned long long)gyro_stream_reader_record(r));
        if (is_doc) text = ((Gyro__V1__Document *)msg)->text;
        else if (is_ex) {
            const Gyro__V1__Example *ex = (const Gyro__V1__Example *)msg;
            text = ex->text;
            if (prev_session && prev_session[0] && ex->session && strcmp(ex->session, prev_session) == 0)
                previous = prev_text;
        } else {
            Gyro__V1__ClassifyRequest *q = (Gyro__V1__ClassifyRequest *)msg;
            text = q->text;
            previous = q->previous_turn;
            if (q->id && q->id[0]) id = q->id;
        }
        if (text && strlen(text) > ctx->max_line)
            predict_skip(ctx, in_path, (unsigned long long)gyro_stream_reader_record(r));
        else
            st = predict_one(ctx, text ? text : "", previous, id);
        if (!st && is_ex) st = keep_turn(&prev_text, &prev_session, (const Gyro__V1__Example *)msg);
        protobuf_c_message_free_unpacked(msg, NULL);
    }
    free(prev_text);
    free(prev_session);
    gyro_stream_reader_free(r);
    return st;
}

/* The utterance of a labelled line, in place: fastText's line without its __label__ tokens (the
 * other tokens joined by one space), or the text column of a TSV line. Returns the text. */
static char *strip_labels(char *line)
{
    char *w = line, *p = line;
    for (;;) {
        while (*p == ' ' || *p == '\t') p++;
        if (!*p) break;
        char *e = p;
        while (*e && *e != ' ' && *e != '\t') e++;
        size_t n = (size_t)(e - p);
        if (!(n >= 9 && memcmp(p, "__label__", 9) == 0)) {
            if (w != line) *w++ = ' ';
            memmove(w, p, n);
            w += n;
        }
        p = e;
    }
    *w = '\0';
    return line;
}

static char *tsv_column(char *line, int col)
{
    char *p = line;
    for (int i = 0; i < col && p; i++) {
        p = strchr(p, '\t');
        if (p) p++;
    }
    if (!p) return NULL;
    char *t = strchr(p, '\t');
    if (t) *t = '\0';
    return p;
}

/* Classify every line of `in` (UTF-8 text; the id is the line number). */
static gyro_status predict_lines(predict_ctx *ctx, FILE *in, const char *in_path)
{
    char *line = NULL, idbuf[32];
    size_t cap = 0;
    ssize_t len;
    uint64_t lineno = 0;
    gyro_status st = GYRO_OK;
    int too_long = 0;
    while (!st && (len = read_line_max(in, &line, &cap, ctx->max_line, &too_long)) != -1) {
        lineno++;
        if (len == -2) {
            st = gyro_error_set(GYRO_ERR_NOMEM, "%s:%llu: out of memory", in_path, (unsigned long long)lineno);
            break;
        }
        if (too_long) {
            predict_skip(ctx, in_path, (unsigned long long)lineno);
            continue;
        }
        if ((size_t)len != strlen(line)) {
            st = gyro_error_set(GYRO_ERR_DATA, "%s:%llu: NUL byte in the text", in_path, (unsigned long long)lineno);
            break;
        }
        snprintf(idbuf, sizeof idbuf, "%llu", (unsigned long long)lineno);
        char *text = line;
        if (ctx->format == PREDICT_TSV) {
            if (lineno == 1) { /* a header naming the columns */
                int col = -1, i = 0, named = 1;
                for (char *c = line, *e; c; c = e ? e + 1 : NULL, i++) {
                    e = strchr(c, '\t');
                    size_t n = e ? (size_t)(e - c) : strlen(c);
                    if (n == 4 && strncasecmp(c, "text", 4) == 0) col = i;
                    else if (!((n == 5 && strncasecmp(c, "label", 5) == 0) ||
                               (n == 7 && strncasecmp(c, "session", 7) == 0))) named = 0;
                }
                if (named && col >= 0) {
                    ctx->text_col = col;
                    continue;
                }
            }
            if (!(text = tsv_column(line, ctx->text_col))) {
                st = gyro_error_set(GYRO_ERR_DATA, "%s:%llu: no column %d (the text) in this TSV line",
                                    in_path, (unsigned long long)lineno, ctx->text_col + 1);
                break;
            }
        } else if (ctx->format == PREDICT_FASTTEXT ||
                   (ctx->format == PREDICT_AUTO && strncmp(line + strspn(line, " \t"), "__label__", 9) == 0)) {
            text = strip_labels(line);
        }
        st = predict_one(ctx, text, NULL, idbuf);
    }
    if (!st && ferror(in)) st = gyro_error_set(GYRO_ERR_IO, "%s: read error", in_path);
    free(line);
    return st;
}

static int predict_main(int argc, char **argv)
{
    predict_args o = {0};
    int first, rc = gyro_opts_parse(&gyro_spec_classify_predict, argc, argv, &o, &first);
    if (rc != GYRO_OPTS_CONTINUE) return rc;
    if (!o.model) return gyro_cli_usage_error(CMD, "predict needs -m MODEL");
    if (argc - first > 1) return gyro_cli_usage_error(CMD, "predict reads at most one input");
    if (!o.stream && strcmp(o.out, "-") != 0) return gyro_cli_usage_error(CMD, "-o is for --stream output; JSON lines go to stdout");
    const char *in_path = first < argc ? argv[first] : "-";

    predict_ctx ctx = {.k = (int)o.k, .max_line = (size_t)o.max_line, .format = o.format};
    gyro_classifier *m = NULL;
    gyro_status st = gyro_classifier_load(o.model, &m);
    if (st) return fail(st);
    ctx.m = m;
    FILE *raw = strcmp(in_path, "-") == 0 ? stdin : fopen(in_path, "rb");
    if (!raw) {
        gyro_classifier_free(m);
        return fail(gyro_error_set(GYRO_ERR_IO, "%s: cannot open", in_path));
    }
    int is_stream = 0;
    FILE *in = NULL;
    struct stat sb;
    /* a terminal or a pipe: answer each line as it comes (fasttext predict model.bin -) */
    ctx.flush_each = fstat(fileno(raw), &sb) != 0 || !S_ISREG(sb.st_mode);
    st = gyro_stream_sniff(raw, in_path, &in, &is_stream);
    int kk = ctx.k < gyro_classifier_num_labels(m) ? ctx.k : gyro_classifier_num_labels(m);
    ctx.top = malloc((size_t)(kk > 0 ? kk : 1) * sizeof *ctx.top);
    if (!st && !ctx.top) st = gyro_error_set(GYRO_ERR_NOMEM, "predict");
    if (!st) st = gyro_classifier_scratch_new(m, &ctx.s);
    if (!st && o.stream)
        st = gyro_stream_writer_open_path(o.out, &gyro__v1__classify_response__descriptor, "gyro classify predict " GYRO_VERSION, &ctx.w);
    if (!st && is_stream && o.format != PREDICT_AUTO)
        st = gyro_error_set(GYRO_ERR_FORMAT, "%s: a gyro stream, not %s lines; use --format auto", in_path,
                            o.format == PREDICT_TSV ? "tsv" : o.format == PREDICT_FASTTEXT ? "fasttext" : "text");
    if (!st) st = is_stream ? predict_stream(&ctx, in, in_path) : predict_lines(&ctx, in, in_path);
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
    gyro_classify_response_buf_free(&ctx.resp);
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
    if (strcmp(sub, "eval") == 0) return gyro_cli_classify_eval(argc - 1, argv + 1);
    if (strcmp(sub, "autotune") == 0) return gyro_cli_classify_autotune(argc - 1, argv + 1);
    if (strcmp(sub, "predict") == 0) return predict_main(argc - 1, argv + 1);
    return gyro_cli_usage_error(CMD, "unknown subcommand '%s' (train, eval or predict)", sub);
}

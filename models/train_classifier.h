/* train_classifier.h — training and batch evaluation of the intent classifier.
 *
 * Training (seed hyperbolic-chinese-nlu §4.2/§5): every example is normalized with the model's
 * options and cut into grapheme clusters; the vocabulary is the char2vec table's tokens (when
 * one is given; their rows start from the table's Poincaré vectors, frozen or fine-tuned) plus
 * the training characters seen at least min_count times (learned from scratch), plus UNK.
 * Mini-batches are drawn in a seeded shuffled order each epoch; the loss is softmax
 * cross-entropy; Euclidean tensors take RMSProp/Adam steps and ball rows Riemannian SGD
 * (models/optim.h), both scaled by the SGDR schedule. After every epoch the dev split is
 * evaluated; the best parameters are kept (and checkpointed atomically when a path is given),
 * and training stops after `patience` epochs without improvement. A non-finite loss or
 * gradient stops training with GYRO_ERR_NAN. The same seed and data give the same model.
 */
#ifndef GYRO_MODELS_TRAIN_CLASSIFIER_H
#define GYRO_MODELS_TRAIN_CLASSIFIER_H

#include <stdint.h>
#include <stdio.h>

#include "embeddings/table.h"
#include "models/classifier.h"
#include "models/ngrams.h"
#include "models/metrics.h"
#include "models/optim.h"
#include "models/core/sync.h"

/* ---- labelled texts ------------------------------------------------------------------------ */

typedef struct gyro_example_set {
    int n, cap;
    char **text;        /* (n) raw UTF-8, owned */
    char **label;       /* (n) label as written, owned */
    uint64_t *line;     /* (n) record number in the source (1-based) */
    char **session;     /* (n) session or dialogue id, owned; NULL entries: none */
} gyro_example_set;

/* Append a copy of (text, label). GYRO_ERR_NOMEM. (A file of Example records is read into a set
 * by gyro_example_file_read, pipeline/example_file.h.) */
gyro_status gyro_example_set_add(gyro_example_set *s, const char *text, const char *label,
                                 uint64_t line);

/* The same with the example's session id (copied; NULL or "" for none). */
gyro_status gyro_example_set_add_session(gyro_example_set *s, const char *text, const char *label,
                                         uint64_t line, const char *session);

/* The previous turn of example i: the text of example i − 1 when both belong to the same
 * (non-empty) session, else NULL. Sets keep the order of their source, so this is the
 * utterance said just before within the dialogue. */
const char *gyro_example_set_context(const gyro_example_set *s, int i);

/* Free the strings; the set may be reused. NULL-safe. */
void gyro_example_set_free(gyro_example_set *s);

/* ---- training -------------------------------------------------------------------------------- */

/* The classifier architectures. */
typedef enum gyro_arch {
    GYRO_ARCH_TRANSFORMER = 0,     /* transformer.h (the seed's model) */
    GYRO_ARCH_NGRAMS = 1           /* ngrams.h: a bag of character n-grams (HyperText) */
} gyro_arch;

/* The name of an architecture ("transformer", "ngrams"), NULL outside the enum. */
const char *gyro_arch_name(int arch);

/* Parse an architecture name. GYRO_ERR_USAGE listing the names when unknown. */
gyro_status gyro_arch_parse(const char *name, gyro_arch *out);

#define GYRO_TRAIN_MAX_THREADS 64

typedef struct gyro_train_options {
    int arch;                      /* gyro_arch */
    gyro_tf_config model;          /* vocab_size and n_classes are filled in by training */
    gyro_ngrams_config ngrams;     /* the n-gram model (arch ngrams); its geometry and dim follow
                                      model.geometry and model.dim (gyro_train_options_complete) */
    gyro_optim_config optim;
    gyro_sgdr sgdr;                /* t0 in epochs; t0 = 0: constant learning rate */
    gyro_normalize_options norm;
    gyro_token_unit token_unit;    /* characters (default) or ICU words */
    int epochs;                    /* maximum epochs (default 20) */
    int batch_size;                /* default 32 */
    int bucket;                    /* batches are cut from runs of bucket·batch_size examples
                                      sorted by length (default 50; <= 1: plain shuffle) */
    int threads;                   /* data-parallel threads of a step, 1..GYRO_TRAIN_MAX_THREADS
                                      (default 1; 0 is taken as 1): see gyro_train_classifier */
    int patience;                  /* epochs without dev improvement before stopping (default 5; 0 = never) */
    double dev_fraction;           /* held out of the training set when no dev set is given (0.1) */
    int min_count;                 /* training characters seen fewer times map to UNK (default 1) */
    float label_smoothing;         /* ε in [0, 1): target (1 − ε)·onehot + ε/K (arch ngrams; 0) */
    double head_lr;                /* arch ngrams: the learning rate of the classifier head (the
                                      embeddings take optim.lr); 0: derived by
                                      gyro_train_options_complete (GYRO_NGRAMS_HEAD_LR_SCALE_BALL) */
    uint64_t seed;
    const gyro_embedding_table *table; /* optional char2vec table (borrowed) */
    int freeze_table;              /* 1: table rows are not updated */
    const char *checkpoint;        /* optional path: best model so far, written atomically */
    int quiet;                     /* no progress line */
    volatile int *stop;            /* optional: set non-zero (e.g. from a SIGINT handler) to stop
                                      after the current step with GYRO_ERR_INTERRUPTED; the
                                      checkpoint, when given, then holds the best model so far */
    FILE *log;                     /* per-epoch summary lines (NULL = none) */
    const gyro_sync *sync;         /* several processes, synchronous data parallelism (arch
                                      transformer): see gyro_train_classifier; NULL: one */
} gyro_train_options;

/* Defaults for a geometry: the bag-of-n-grams model with context features and parent classes
 * from the label names (the Lorentz geometry:
 * the transformer), completed by gyro_train_options_complete (100-d, 25 epochs over every
 * training example, SGD 0.5 on the embeddings, the head 0.1 in the ball, 0.5 Euclidean). The
 * transformer's part, used when the caller sets arch = GYRO_ARCH_TRANSFORMER: tangent
 * residuals, LayerNorm, ReLU, c = 0.1,
 * dropout 0.1, 100-d, 3 layers, 16 heads, RMSProp 1e-3 + RSGD 0.05, one warm restart, 20
 * epochs with early stopping on a tenth held out; the Euclidean twin 128-d, lr 1e-4. */
void gyro_train_options_init(gyro_train_options *o, gyro_tf_geometry geometry);

/* The model options whose defaults derive from others, as a bit set: the caller's `set` says
 * which of them it gave explicitly (gyro_train_options_complete leaves those alone). */
enum {
    GYRO_TRAIN_SET_HEAD_DIM = 1 << 0,    /* else ceil(dim / n_heads) */
    GYRO_TRAIN_SET_FFN_DIM = 1 << 1,     /* else 4 · dim */
    GYRO_TRAIN_SET_MLA_LATENT = 1 << 2,  /* else dim / 2 (at least 1) with MLA attention */
    GYRO_TRAIN_SET_MOE_EXPERTS = 1 << 3, /* else 4 with MoE blocks */
    GYRO_TRAIN_SET_MOE_TOP_K = 1 << 4,   /* else 1 with MoE blocks */
    GYRO_TRAIN_SET_MOE_BALANCE = 1 << 5, /* else 0.01 with MoE blocks */
    GYRO_TRAIN_SET_LR = 1 << 6,          /* else GYRO_NGRAMS_DEFAULT_LR for arch ngrams */
    GYRO_TRAIN_SET_DIM = 1 << 7,         /* else 100 for arch ngrams (both geometries) */
    GYRO_TRAIN_SET_EPOCHS = 1 << 8,      /* else 15 for arch ngrams */
    GYRO_TRAIN_SET_DEV_FRACTION = 1 << 9,/* else 0 for arch ngrams (fastText's protocol: all the
                                            training examples train, every epoch runs) */
};

/* The learning rates of the n-gram model's SGD when none is given (fastText's default is 0.1):
 * 0.5 for the embeddings in both geometries; the head takes the same rate in the Euclidean
 * model and a fifth of it in the ball. Measured on the NLPCC, SMP and CrossWOZ dev splits
 * (README, "The bag of n-grams"): near the origin the hyperbolic MLR's logits are ~4 times as
 * steep as the Euclidean ones (λ_p = 2 twice) while Riemannian steps on the rows are λ² = 4
 * times shorter, so one rate for both either leaves the embeddings 10 times slower than the
 * Euclidean twin's (CrossWOZ 68.6% against 82.8%) or makes the MLR offsets diverge. */
#define GYRO_NGRAMS_DEFAULT_LR 0.5
#define GYRO_NGRAMS_HEAD_LR_SCALE_BALL 0.2

/* Complete o->model after the caller changed the options of gyro_train_options_init: with
 * o->table the model dimension is the table's; then every derived option not in `set` gets the
 * default above (MLA and MoE options given without their block kind are left for the check to
 * refuse). Finally the configuration is checked as gyro_train_classifier will (vocabulary and
 * classes aside), so a caller learns of a bad option before reading any data. `gyro classify
 * train` calls this with the options its command line gave, so a library caller doing the same
 * gets the same model. Errors: GYRO_ERR_USAGE (message names the option), o unchanged apart
 * from the completed fields. */
gyro_status gyro_train_options_complete(gyro_train_options *o, unsigned set);

typedef struct gyro_train_result {
    int epochs;                    /* epochs run */
    int best_epoch;                /* 1-based epoch of the kept parameters (0: last, no dev) */
    double best_dev_accuracy;      /* NaN without a dev set */
    double train_loss;             /* mean loss of the last epoch */
    uint64_t steps;
    double seconds;                /* wall time of the training loop (evaluation included) */
    double steps_per_second;       /* optimizer steps per second, evaluation excluded */
    double critical_seconds;       /* CPU time on the training loop's critical path (evaluation
                                      excluded): the calling thread's outside the parallel jobs
                                      plus, per job, the slowest thread's; about the loop's wall
                                      time on an idle machine with a core per thread */
    int n_train, n_dev;            /* examples used */
    int dev_unknown;               /* dev examples whose label the training set lacks (skipped) */
    int table_rows;                /* vocabulary rows initialised from the table */
} gyro_train_result;

/* Train a classifier on `train`, stopping early on `dev` (NULL: dev_fraction of train is held
 * out; an empty dev set with dev_fraction 0 disables early stopping). On success *out owns the
 * model (best dev epoch). Errors: GYRO_ERR_USAGE (bad options, table dimension differs),
 * GYRO_ERR_DATA (no usable example, a bad label with its record number), GYRO_ERR_NAN,
 * GYRO_ERR_IO (checkpoint), GYRO_ERR_INTERRUPTED (opt->stop), GYRO_ERR_NOMEM. On
 * GYRO_ERR_INTERRUPTED *out also owns a model, the best so far (the best dev epoch's, or the
 * current parameters before any dev evaluation), for the caller to save; on every other error
 * *out is NULL. OpenBLAS runs on the calling thread during training (gyro_blas_set_threads(1),
 * the caller's setting restored on return): a caller running BLAS products on other threads
 * meanwhile should set 1 itself.
 *
 * With opt->threads = n > 1 every mini-batch of b examples is cut into n consecutive shards of
 * ⌊b/n⌋ or ⌈b/n⌉ examples; n threads (the caller's and n − 1 workers started here) each run
 * forward and backward on one shard into a private gradient block, with a dropout stream of
 * their own; the batch gradient is the shard gradients weighted by shard size (the batch mean
 * of the cross-entropy), summed in shard order, and the optimizer step follows, each thread
 * updating its piece of the parameters (one optimizer on the calling thread with a gradient
 * clip). The dev evaluation is split over the threads too. The model depends on the seed, the
 * data and n, not on scheduling; n = 1 is the single-threaded loop. With MoE blocks each shard
 * has its own balance loss (of its own routing), so n threads train the shard-weighted mean of
 * those instead of the batch's.
 *
 * With opt->sync of R > 1 ranks (e.g. `mpirun -np R gyro classify train`), every rank calls
 * this with the same options and data: they build the same model and draw the same shuffles,
 * and rank r takes the r-th of R consecutive parts of every batch (cut further over its own
 * threads as above). After forward and backward the ranks agree on the step (a failure or a stop
 * request on any rank stops all of them with the same status), then all-reduce the gradient
 * weighted by each part's share of the batch (and the loss), so every rank makes the same
 * optimizer step on the gradient of the whole batch: the model of one process up to float
 * summation order (exactly that of one process with R threads when dropout is off; each
 * rank's dropout streams are its own). Every rank scores the whole dev set (the same numbers,
 * the same early stopping); only rank 0 writes the checkpoint, the log and the progress line.
 * The n-gram model trains by Hogwild SGD, not in synchronous steps: with R > 1 it is refused
 * (GYRO_ERR_USAGE). A failed all-reduce returns GYRO_ERR_UNAVAILABLE. */
gyro_status gyro_train_classifier(const gyro_train_options *opt, const gyro_example_set *train,
                                  const gyro_example_set *dev, gyro_classifier **out,
                                  gyro_train_result *res);

/* Classify every example of `set` in batches and count the results into `metrics`
 * (initialised by the caller with gyro_classifier_num_labels classes; P@k is counted when the
 * caller set it up with gyro_metrics_rank). Examples whose label the model does not know are
 * counted in *unknown (may be NULL) and, when metrics is not NULL, predicted too and counted
 * as errors (gyro_metrics_add_unseen); empty texts after normalization are predicted from the
 * UNK token. OpenBLAS runs on the calling thread meanwhile, as in gyro_train_classifier.
 * Errors: GYRO_ERR_DATA (a text the tokenizer refuses, an unparsable unknown label; with its
 * record number), GYRO_ERR_NOMEM. */
gyro_status gyro_classifier_evaluate(const gyro_classifier *m, const gyro_example_set *set,
                                     gyro_metrics *metrics, int *unknown);

#endif

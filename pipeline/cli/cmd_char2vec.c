/* cmd_char2vec.c — `gyro char2vec train`: character embeddings on the hyperboloid.
 *
 * A thin wrapper: parse options, encode the corpus (embeddings/corpus.h), train
 * (embeddings/char2vec.h) with checkpoints and Ctrl-C handling, save the table
 * (embeddings/table.h). The checkpoint is <output>.ckpt unless --checkpoint says otherwise; the
 * encoded corpus lives beside it as <checkpoint>.ids so --resume works even when the text came
 * from a pipe. Both are removed after a successful run unless --keep-checkpoint.
 *
 * Under mpirun (pipeline/mpi_comm.h) the run is split over the ranks (embeddings/char2vec.h
 * "Several processes"): rank 0 reads the inputs, encodes the corpus and writes the first
 * checkpoint; every other rank loads that checkpoint and opens the encoded corpus, so the
 * checkpoint's directory must be one all ranks see (one machine, or a shared file system), and
 * each rank reads only its range of the encoded corpus. Only rank 0 prints progress, writes
 * checkpoints and the output. Every rank must be given the same command line (checked: a hash
 * of the arguments is compared first). A failure on one rank is told to all (the same exit
 * status everywhere); a failure of the transport (a rank died) aborts the job.
 */
#include <stddef.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "embeddings/char2vec.h"
#include "embeddings/corpus.h"
#include "embeddings/table.h"
#include "models/core/atomic_file.h"
#include "pipeline/cli/cli.h"
#include "pipeline/cli/opts.h"
#include "pipeline/corpus_input.h"
#include "pipeline/mpi_comm.h"
#include "pipeline/progress_stream.h"
#include "pipeline/table_file.h"

static volatile sig_atomic_t c2v_stop;

static void on_signal(int sig)
{
    (void)sig;
    c2v_stop = 1;
}

static void usage(FILE *out)
{
    fprintf(out,
        "usage: gyro char2vec train [options] -o OUTPUT [FILE...]\n"
        "       gyro char2vec tokens [--format F] [--keep-traditional] [FILE...]\n"
        "\n"
        "'gyro char2vec train --help' and 'gyro char2vec tokens --help' give the options.\n");
}

/* Each option of the model carries its GYRO_C2V_SET_* bit as its mark, so the parse reports
 * which were given and gyro_c2v_resume_options (embeddings/c2v_model.h) applies the resume
 * rules. */

typedef struct train_args {
    gyro_c2v_options opt;              /* the library's defaults (gyro_c2v_options_init) */
    gyro_corpus_input_options copt;    /* (gyro_corpus_input_options_init) */
    const char *output, *ckpt, *progress;
    double ckpt_every, sync_every;
    long sync_tokens;
    int resume, keep_ckpt, quiet, keep_trad, geometry, format, combine, update, share;
    long min_count;
} train_args;

#define TA train_args
static const gyro_opt train_opts[] = {
    GYRO_O_SECTION("Output:"),
    GYRO_O_STR("output", 'o', TA, output, "PATH", NULL,
               "embedding table (a gyro stream of one EmbeddingTable), written atomically"),
    GYRO_O_STR("checkpoint", 0, TA, ckpt, "PATH", NULL, "checkpoint file (default OUTPUT.ckpt; the encoded corpus is PATH.ids)"),
    GYRO_O_DOUBLE("checkpoint-every", 0, TA, ckpt_every, "S", "60", 0, 0, "seconds between checkpoints (0 = only on Ctrl-C)"),
    GYRO_O_FLAG("resume", 0, TA, resume, "continue from the checkpoint (the inputs are not read again); --lr, "
                "--max-step and --sample may change, other options must match the checkpoint's"),
    GYRO_O_FLAG("keep-checkpoint", 0, TA, keep_ckpt, "keep the checkpoint and the encoded corpus after success"),
    GYRO_O_SECTION("Model:"),
    GYRO_O_CHOICE("geometry", 0, TA, geometry, "G", "hyperbolic|euclidean|hyperboloid", NULL,
                  "hyperbolic (the default) or euclidean (word2vec's skip-gram)", .mark = GYRO_C2V_SET_GEOMETRY),
    GYRO_O_INT("dim", 0, TA, opt.dim, "N", NULL, 1, GYRO_C2V_MAX_DIM,
               "dimension (default 100; hyperboloid rows have N+1 coordinates)", .mark = GYRO_C2V_SET_DIM),
    GYRO_O_INT("window", 0, TA, opt.window, "N", NULL, 1, 100, "maximum window, drawn per centre from 1..N (default 5)",
               .mark = GYRO_C2V_SET_WINDOW),
    GYRO_O_INT("negatives", 0, TA, opt.negatives, "N", NULL, 0, 100, "negative samples per pair (default 5)", .mark = GYRO_C2V_SET_NEGATIVES),
    GYRO_O_INT("epochs", 0, TA, opt.epochs, "N", NULL, 1, 100000, "passes over the corpus (default 5)", .mark = GYRO_C2V_SET_EPOCHS),
    GYRO_O_DOUBLE("lr", 0, TA, opt.lr, "X", NULL, 0, 0, "initial learning rate, decaying linearly (default 0.05; euclidean 0.025)",
                  .mark = GYRO_C2V_SET_LR),
    GYRO_O_DOUBLE("theta", 0, TA, opt.theta, "X", NULL, 0, 0, "shift of the score <u,v>_L + theta (default 3)",
                  .mark = GYRO_C2V_SET_THETA),
    GYRO_O_DOUBLE("max-step", 0, TA, opt.max_step, "X", NULL, 0, 0, "clip of the Riemannian step norm (default 1; 0 = none)",
                  .mark = GYRO_C2V_SET_MAX_STEP),
    GYRO_O_SEED("seed", 's', TA, opt.seed, NULL, "random seed (default 1)", .mark = GYRO_C2V_SET_SEED),
    GYRO_O_CHOICE("update", 0, TA, update, "U", "pair|batch", "batch",
                  "batch: negatives shared by --share consecutive contexts of a window, the window's pairs as "
                  "small matrix products and one step per row (pWord2Vec's HogBatch; over 2x the per-pair tokens "
                  "per CPU-second, similarity scores within 0.01 of it at equal epochs with --share 2); "
                  "pair: each (centre, context) pair with its own negatives, stepped in turn (word2vec's loop). "
                  "May change on --resume"),
    GYRO_O_INT("share", 0, TA, share, "N", "2", 0, 200,
               "with --update batch: consecutive contexts of a window that share one draw of negatives "
               "(0 = the whole window, as pWord2Vec: faster, lower similarity scores). May change on --resume"),
    GYRO_O_SECTION("Vocabulary:"),
    GYRO_O_LONG("min-count", 0, TA, min_count, "N", "5", 1, 9.2e18, "drop characters seen fewer times"),
    GYRO_O_INT("max-vocab", 0, TA, copt.max_vocab, "N", NULL, 1, GYRO_VOCAB_MAX_SIZE,
               "keep at most the N most frequent characters (default: all)"),
    GYRO_O_DOUBLE("sample", 0, TA, opt.sample, "X", NULL, 0, 0, "subsampling threshold of frequent characters (default 1e-4; 0 = off)",
                  .mark = GYRO_C2V_SET_SAMPLE),
    GYRO_O_SECTION("Input:"),
    GYRO_O_CHOICE("format", 0, TA, format, "F", "auto|text|stream", "auto", "auto, text or stream"),
    GYRO_O_FLAG("keep-traditional", 0, TA, keep_trad, "do not convert Traditional to Simplified characters (plain text input)"),
    GYRO_O_SECTION("Run:"),
    GYRO_O_INT("threads", 'j', TA, opt.threads, "N", NULL, 1, GYRO_C2V_MAX_THREADS, "worker threads (default 1)",
               .mark = GYRO_C2V_SET_THREADS),
    GYRO_O_FLAG("quiet", 'q', TA, quiet, "no progress line"),
    GYRO_O_SECTION("Several processes (mpirun -np N gyro char2vec train ...):"),
    GYRO_O_DOUBLE("sync-every", 0, TA, sync_every, "S", "1", 0.001, 1e6,
                  "seconds between combinations of the ranks' tables"),
    GYRO_O_LONG("sync-tokens", 0, TA, sync_tokens, "N", "0", 0, 9.2e18,
                "combine whenever a rank has trained N tokens since the last combination, instead of "
                "by time (0: by time)"),
    GYRO_O_CHOICE("combine", 0, TA, combine, "C", "mean|moved", "mean",
                  "mean: the Lorentz centroid of the ranks' rows (model averaging); moved: the mean "
                  "displacement of the ranks that moved a row (a row one rank trained keeps its whole update)"),
    GYRO_O_STR("progress-stream", 0, TA, progress, "FILE", NULL,
               "also write the progress as a gyro stream of TrainingProgress records (stage "
               "\"char2vec\"; one a second and a last one at the end, each flushed: FILE may be a FIFO; "
               "'-': stdout)"),
    GYRO_O_END,
};
#undef TA

const gyro_cmd_spec gyro_spec_char2vec_train = {
    "char2vec train", "[options] -o OUTPUT [FILE...]",
    "Learn an embedding of every character of the corpus on the hyperboloid (skip-gram with negative "
    "sampling, Riemannian SGD). FILEs are UTF-8 text (normalized on the fly, one document per line) "
    "or Document streams from 'gyro normalize'; none or '-' reads stdin.",
    "A progress line (percent, chars/sec/thread, learning rate, loss, ETA) goes to stderr. Ctrl-C "
    "writes a checkpoint and exits with status 130; a NaN loss stops with status 1. Exit status: 0 "
    "done, 1 runtime error, 2 usage error, 65 bad input, 130 interrupted.",
    train_opts,
    NULL,
};

typedef struct tokens_args {
    int format, keep_trad;
} tokens_args;

static const gyro_opt tokens_opts[] = {
    GYRO_O_CHOICE("format", 0, tokens_args, format, "F", "auto|text|stream", "auto", "auto, text or stream"),
    GYRO_O_FLAG("keep-traditional", 0, tokens_args, keep_trad, "do not convert Traditional to Simplified characters"),
    GYRO_O_END,
};

const gyro_cmd_spec gyro_spec_char2vec_tokens = {
    "char2vec tokens", "[--format F] [--keep-traditional] [FILE...]",
    "Print the characters training sees, space-separated, one document per line, so other tools "
    "(word2vec, fastText) can train on the same token stream.",
    NULL,
    tokens_opts,
    NULL,
};

static char *cat2(const char *a, const char *b)
{
    size_t n = strlen(a) + strlen(b) + 1;
    char *s = malloc(n);
    if (s) snprintf(s, n, "%s%s", a, b);
    return s;
}

/* Parse the options into a (over the library's defaults); returns GYRO_OPTS_CONTINUE or the
 * exit status. *given receives the GYRO_C2V_SET_* bits of the options given. */
static int train_parse(const char *cmd, int argc, char **argv, train_args *a, int *first, unsigned *given)
{
    memset(a, 0, sizeof *a);
    gyro_c2v_options_init(&a->opt);
    gyro_corpus_input_options_init(&a->copt);
    int rc = gyro_opts_parse_marks(&gyro_spec_char2vec_train, argc, argv, a, first, given);
    if (rc != GYRO_OPTS_CONTINUE) return rc;
    a->opt.geometry = a->geometry == 1 ? GYRO_C2V_EUCLIDEAN : GYRO_C2V_HYPERBOLIC;
    a->copt.format = (gyro_corpus_format)a->format;
    a->copt.min_count = (uint64_t)a->min_count;
    if (a->keep_trad) a->copt.norm.t2s = 0;
    if ((*given & GYRO_C2V_SET_LR) && (!(a->opt.lr > 0) || a->opt.lr > 100)) return gyro_cli_usage_error(cmd, "--lr must be in (0, 100]");
    if (a->opt.max_step < 0) return gyro_cli_usage_error(cmd, "--max-step must be >= 0");
    if (a->opt.sample < 0) return gyro_cli_usage_error(cmd, "--sample must be >= 0");
    if (!a->output) return gyro_cli_usage_error(cmd, "missing -o OUTPUT");
    if (!strcmp(a->output, "-")) return gyro_cli_usage_error(cmd, "the output must be a file (checkpoints live beside it)");
    if (gyro_c2v_options_check(&a->opt)) return gyro_cli_usage_error(cmd, "%s", gyro_error_message());
    return GYRO_OPTS_CONTINUE;
}

/* --resume: the model of checkpoint `ckpt` and its encoded corpus `ids`, with the options given
 * on the command line merged by the library's resume rules (gyro_c2v_resume_options: --lr,
 * --max-step and --sample may change, others must agree). Returns 0, or the exit status of a
 * usage error; *s is the status of the loading. */
static int resume_model(const char *cmd, const train_args *a, unsigned given, const char *ckpt, const char *ids,
                        gyro_c2v_model *m, gyro_corpus *corpus, gyro_status *s)
{
    gyro_c2v_options merged;
    *s = gyro_c2v_checkpoint_load(ckpt, m);
    if (!*s && (*s = gyro_c2v_resume_options(&m->opt, &a->opt, given, &merged)) == GYRO_ERR_USAGE) {
        *s = GYRO_OK;
        return gyro_cli_usage_error(cmd, "%s", gyro_error_message());
    }
    if (!*s && !a->quiet && (merged.lr != m->opt.lr || merged.max_step != m->opt.max_step ||
                             merged.sample != m->opt.sample))
        fprintf(stderr, "gyro %s: --resume: continuing with --lr %g --max-step %g --sample %g "
                "(the checkpoint had %g, %g, %g)\n", cmd, merged.lr, merged.max_step, merged.sample,
                m->opt.lr, m->opt.max_step, m->opt.sample);
    if (!*s) m->opt = merged;
    if (!*s) *s = gyro_corpus_open(ids, corpus);
    if (!*s && !a->quiet)
        fprintf(stderr, "Resuming %s at %.1f%% (%d characters, dim %d, %d thread%s)\n", ckpt,
                100.0 * (double)m->words_done / ((double)m->opt.epochs * (double)m->n_tokens),
                m->vocab.n, m->opt.dim, m->opt.threads, m->opt.threads > 1 ? "s" : "");
    return 0;
}

/* A fresh run: encode the inputs into `ids`, a new model (split over `ranks` processes), its
 * first checkpoint. */
static gyro_status new_model(const train_args *a, int n_inputs, const char *const *inputs, const char *ckpt,
                             const char *ids, int ranks, gyro_c2v_model *m, gyro_corpus *corpus)
{
    gyro_vocab vocab;
    gyro_corpus_stats st;
    gyro_status s = gyro_corpus_input_encode(inputs, n_inputs, &a->copt, ids, &vocab, &st);
    int encoded = !s;
    if (!s && !a->quiet)
        fprintf(stderr, "Read %llu documents, %llu characters: %d distinct characters with count >= %llu "
                "(of %llu), %llu tokens to train on\n", (unsigned long long)st.documents,
                (unsigned long long)st.chars, vocab.n, (unsigned long long)a->copt.min_count,
                (unsigned long long)st.distinct, (unsigned long long)st.kept);
    if (!s) s = gyro_corpus_open(ids, corpus);
    if (!s) s = gyro_c2v_model_init(m, &a->opt, &vocab, corpus->n_ids, corpus->n_tokens);
    if (!s && ranks > 1) s = gyro_c2v_model_set_ranks(m, ranks);
    gyro_vocab_free(&vocab);
    if (!s) s = gyro_c2v_checkpoint_save(m, ckpt);
    if (s && encoded) unlink(ids); /* this run's encoded corpus is of no further use */
    return s;
}

/* Write the trained table to `output` (its trained_by line records the options). */
static gyro_status save_table(const gyro_c2v_model *m, const gyro_c2v_report *rep, const char *output, int quiet)
{
    char trained_by[512];
    snprintf(trained_by, sizeof trained_by,
             "gyro char2vec train --geometry %s --dim %d --window %d --negatives %d --epochs %d "
             "--lr %g --theta %g --max-step %g --sample %g --seed %llu",
             m->opt.geometry == GYRO_C2V_HYPERBOLIC ? "hyperbolic" : "euclidean", m->opt.dim,
             m->opt.window, m->opt.negatives, m->opt.epochs, m->opt.lr, m->opt.theta, m->opt.max_step,
             m->opt.sample, (unsigned long long)m->opt.seed);
    gyro_embedding_table *t = NULL;
    gyro_status s = gyro_c2v_model_table(m, trained_by, &t);
    if (!s) s = gyro_table_file_save(t, output);
    if (!s && !quiet) {
        fprintf(stderr, "Wrote %s: %d characters, %s, dim %d; %.1f s, %.0f chars/sec/thread",
                output, t->n, gyro_embedding_model_name(t->model), t->dim, rep->seconds, rep->rate);
        if (m->opt.geometry == GYRO_C2V_HYPERBOLIC)
            fprintf(stderr, "; max |<x,x>_L + 1| = %.3g over both tables", rep->manifold_error);
        fputc('\n', stderr);
    }
    gyro_embedding_table_free(t);
    return s;
}

/* Several ranks: tell every rank how the set-up of each went (this rank's usage exit status rc
 * or status *s; gyro_sync_agree). Afterwards either every rank has rc == 0 and *s == GYRO_OK,
 * or every rank fails. A transport failure sets *alone. */
static void agree_setup(const gyro_sync *sy, int *rc, gyro_status *s, int *alone)
{
    if (!gyro_sync_active(sy)) return;
    if (*rc) gyro_sync_agree(sy, GYRO_ERR_USAGE, alone);   /* its message is printed already */
    else *s = gyro_sync_agree(sy, *s, alone);
}

static int train(int argc, char **argv)
{
    const char *cmd = "char2vec train";
    train_args a;
    unsigned given = 0;
    int first, rc = train_parse(cmd, argc, argv, &a, &first, &given);
    if (rc != GYRO_OPTS_CONTINUE) return rc;
    gyro_mpi_comm *comm = NULL;
    gyro_status s = gyro_mpi_open(&comm);
    if (s) return gyro_cli_fail(cmd, s);
    const gyro_sync *sy = gyro_mpi_sync(comm);
    const int rank = sy->rank, ranks = sy->size;
    int alone = 0;
    if (rank != 0) a.quiet = 1;
    if (ranks > 1 && !a.quiet) {
        char every[64];
        if (a.sync_tokens > 0) snprintf(every, sizeof every, "%ld tokens of a rank", a.sync_tokens);
        else snprintf(every, sizeof every, "%g s", a.sync_every);
        fprintf(stderr, "Training over %d ranks (%d thread%s each), combining every %s (%s)\n", ranks,
                a.opt.threads, a.opt.threads > 1 ? "s" : "", every, a.combine ? "moved" : "mean");
    }
    s = gyro_sync_check_same(sy, gyro_cli_args_hash(argc, argv), "the command line");
    if (s) {
        rc = gyro_cli_fail(cmd, s);
        gyro_mpi_close(comm, rc, s != GYRO_ERR_USAGE);
        return rc;
    }
    char *ckpt = a.ckpt ? strdup(a.ckpt) : cat2(a.output, ".ckpt");
    char *ids = ckpt ? cat2(ckpt, ".ids") : NULL;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    gyro_c2v_model m;
    memset(&m, 0, sizeof m);
    gyro_corpus corpus = {.fd = -1};
    rc = 0;
    if (!ckpt || !ids) {
        s = gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    } else if (a.resume) {
        if (first < argc && !a.quiet)
            fprintf(stderr, "gyro %s: --resume: the inputs are not read again (the encoded corpus %s is used)\n", cmd, ids);
        rc = resume_model(cmd, &a, given, ckpt, ids, &m, &corpus, &s);
    } else if (rank == 0) {
        const char *stdin_only[] = {"-"};
        const char *const *inputs = first < argc ? (const char *const *)argv + first : stdin_only;
        s = new_model(&a, first < argc ? argc - first : 1, inputs, ckpt, ids, ranks, &m, &corpus);
    }
    agree_setup(sy, &rc, &s, &alone);
    if (!a.resume && ranks > 1 && !rc && !s && !alone) {
        /* the other ranks start from the model rank 0 has just written */
        if (rank != 0) {
            s = gyro_c2v_checkpoint_load(ckpt, &m);
            if (s == GYRO_ERR_IO)
                s = gyro_error_set(s, "%s (rank 0 wrote it: the checkpoint's directory must be one every rank "
                                   "sees)", gyro_error_message());
            if (!s) s = gyro_corpus_open(ids, &corpus);
        }
        agree_setup(sy, &rc, &s, &alone);
    }
    gyro_c2v_report rep;
    memset(&rep, 0, sizeof rep);
    if (!rc && !s && !alone) {
        gyro_c2v_run run = {.checkpoint_path = ckpt, .checkpoint_every = a.ckpt_every, .stop = &c2v_stop,
                            .quiet = a.quiet, .sync = sy, .sync_every = a.sync_every,
                            .sync_tokens = (uint64_t)a.sync_tokens,
                            .combine = a.combine ? GYRO_C2V_COMBINE_MOVED : GYRO_C2V_COMBINE_MEAN,
                            .update = a.update == 1 ? GYRO_C2V_UPDATE_BATCH : GYRO_C2V_UPDATE_PAIR,
                            .share = a.share > 0 ? a.share : -1};
        gyro_progress_stream *ps = NULL;
        if (a.progress && rank == 0) s = gyro_progress_stream_open(a.progress, "char2vec", m.opt.epochs, 1.0, &ps);
        if (ranks > 1) agree_setup(sy, &rc, &s, &alone);
        if (!s && !alone) {
            s = gyro_c2v_train(&m, &corpus, &run, &rep);
            alone = rep.alone;
        }
        gyro_status ps_st = gyro_progress_stream_close(ps);
        if (!s) s = ps_st;
        if (!s && ranks > 1 && !a.quiet)
            fprintf(stderr, "Combined the %d ranks' tables %llu times (%.2f s in all, %.1f ms each, %.2f MB "
                    "all-reduced per rank each time)\n", ranks, (unsigned long long)rep.sync_rounds, rep.sync_seconds,
                    rep.sync_rounds ? 1e3 * rep.sync_seconds / (double)rep.sync_rounds : 0.0,
                    (double)rep.sync_bytes / 1e6);
        if (!s && !a.quiet)
            fprintf(stderr, "Training used %.2f s of CPU%s: %.0f tokens per CPU-second\n", rep.cpu_seconds,
                    ranks > 1 ? " on rank 0" : "", rep.cpu_seconds > 0 ? (double)rep.words / rep.cpu_seconds : 0.0);
    }
    gyro_corpus_close(&corpus);
    if (!rc && !s && rank == 0) s = save_table(&m, &rep, a.output, a.quiet);
    if (!rc && !s && rank == 0 && !a.keep_ckpt) {
        gyro_atomic_remove_file(ckpt);   /* never a device or FIFO given as --checkpoint */
        gyro_atomic_remove_file(ids);
    }
    gyro_c2v_model_free(&m);
    free(ckpt);
    free(ids);
    if (!rc && s) {
        if (ranks > 1) s = gyro_error_prefix(s, "rank %d", rank);
        rc = gyro_cli_fail(cmd, s);
    }
    gyro_mpi_close(comm, rc, alone);
    return rc;
}

/* `gyro char2vec tokens`: the token stream as text, for other tools in comparisons. */
static int tokens(int argc, char **argv)
{
    const char *cmd = "char2vec tokens";
    tokens_args o = {0};
    int optind, rc = gyro_opts_parse(&gyro_spec_char2vec_tokens, argc, argv, &o, &optind);
    if (rc != GYRO_OPTS_CONTINUE) return rc;
    gyro_corpus_input_options copt;
    gyro_corpus_input_options_init(&copt);
    copt.format = (gyro_corpus_format)o.format;
    if (o.keep_trad) copt.norm.t2s = 0;
    const char *stdin_only[] = {"-"};
    const char *const *inputs = optind < argc ? (const char *const *)argv + optind : stdin_only;
    int n_inputs = optind < argc ? argc - optind : 1;
    gyro_status s = gyro_corpus_input_write_tokens(inputs, n_inputs, &copt, stdout, NULL);
    return s ? gyro_cli_fail(cmd, s) : 0;
}

int gyro_cmd_char2vec(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        if (argc < 2) {
            usage(stderr);
            return 2;
        }
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "train")) return train(argc - 1, argv + 1);
    if (!strcmp(argv[1], "tokens")) return tokens(argc - 1, argv + 1);
    return gyro_cli_usage_error("char2vec", "unknown subcommand '%s' (expected: train, tokens)", argv[1]);
}

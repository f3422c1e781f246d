/* cmd_char2vec.c — `gyro char2vec train`: character embeddings on the hyperboloid.
 *
 * A thin wrapper: parse options, encode the corpus (embeddings/corpus.h), train
 * (embeddings/char2vec.h) with checkpoints and Ctrl-C handling, save the table
 * (embeddings/table.h). The checkpoint is <output>.ckpt unless --checkpoint says otherwise; the
 * encoded corpus lives beside it as <checkpoint>.ids so --resume works even when the text came
 * from a pipe. Both are removed after a successful run unless --keep-checkpoint.
 */
#include <getopt.h>
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
#include "pipeline/corpus_input.h"
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
        "       gyro char2vec tokens [FILE...]   (the token stream as text, see --help there)\n"
        "\n"
        "Learn an embedding of every character of the corpus on the hyperboloid (skip-gram with\n"
        "negative sampling, Riemannian SGD). FILEs are UTF-8 text (normalized on the fly, one\n"
        "document per line) or Document streams from `gyro normalize`; none or '-' reads stdin.\n"
        "\n"
        "Output:\n"
        "  -o, --output PATH         embedding table (gyro stream of EmbeddingTable), written atomically\n"
        "      --checkpoint PATH     checkpoint file (default OUTPUT.ckpt; the encoded corpus is PATH.ids)\n"
        "      --checkpoint-every S  seconds between checkpoints (default 60; 0 = only on Ctrl-C)\n"
        "      --resume              continue from the checkpoint (inputs are not read again);\n"
        "                            --lr, --max-step and --sample may change, other options\n"
        "                            must match the checkpoint's\n"
        "      --keep-checkpoint     keep checkpoint and encoded corpus after success\n"
        "Model:\n"
        "      --geometry G          hyperbolic (default) or euclidean (word2vec's skip-gram)\n"
        "      --dim N               dimension (default 100; hyperboloid rows have N+1 coordinates)\n"
        "      --window N            maximum window, drawn per centre from 1..N (default 5)\n"
        "      --negatives N         negative samples per pair (default 5)\n"
        "      --epochs N            passes over the corpus (default 5)\n"
        "      --lr X                initial learning rate, decays linearly (default 0.05; euclidean 0.025)\n"
        "      --theta X             shift of the score <u,v>_L + theta (default 3)\n"
        "      --max-step X          clip of the Riemannian step norm (default 1; 0 = none)\n"
        "      --seed N              random seed (default 1)\n"
        "Vocabulary:\n"
        "      --min-count N         drop characters seen fewer times (default 5)\n"
        "      --max-vocab N         keep at most the N most frequent characters (default: all)\n"
        "      --sample X            subsampling threshold of frequent characters (default 1e-4; 0 = off)\n"
        "Input:\n"
        "      --format F            auto (default), text or stream\n"
        "      --keep-traditional    do not convert Traditional to Simplified (plain text input)\n"
        "Run:\n"
        "      --threads N           worker threads (default 1)\n"
        "  -q, --quiet               no progress line\n"
        "  -h, --help                this help\n"
        "\n"
        "A progress line (percent, chars/sec/thread, learning rate, loss, ETA) goes to stderr.\n"
        "Ctrl-C writes a checkpoint and exits with status 130; a NaN loss stops with status 1.\n"
        "Exit status: 0 done, 1 runtime error, 2 usage error, 65 bad input, 130 interrupted.\n");
}

enum {
    OPT_CKPT = 256, OPT_CKPT_EVERY, OPT_RESUME, OPT_KEEP_CKPT, OPT_GEOMETRY, OPT_DIM, OPT_WINDOW,
    OPT_NEG, OPT_EPOCHS, OPT_LR, OPT_THETA, OPT_MAX_STEP, OPT_SEED, OPT_MIN_COUNT, OPT_MAX_VOCAB,
    OPT_SAMPLE, OPT_FORMAT, OPT_KEEP_TRAD, OPT_THREADS
};

/* --format auto|text|stream; prints a usage error and returns 0 on anything else. */
static int parse_format(const char *cmd, const char *arg, gyro_corpus_format *out)
{
    if (!strcmp(arg, "auto")) *out = GYRO_CORPUS_AUTO;
    else if (!strcmp(arg, "text")) *out = GYRO_CORPUS_TEXT;
    else if (!strcmp(arg, "stream")) *out = GYRO_CORPUS_STREAM;
    else return gyro_cli_usage_error(cmd, "--format must be auto, text or stream, got '%s'", arg), 0;
    return 1;
}

static char *cat2(const char *a, const char *b)
{
    size_t n = strlen(a) + strlen(b) + 1;
    char *s = malloc(n);
    if (s) snprintf(s, n, "%s%s", a, b);
    return s;
}

static int train(int argc, char **argv)
{
    const char *cmd = "char2vec train";
    static const struct option longopts[] = {
        {"output", required_argument, 0, 'o'},
        {"checkpoint", required_argument, 0, OPT_CKPT},
        {"checkpoint-every", required_argument, 0, OPT_CKPT_EVERY},
        {"resume", no_argument, 0, OPT_RESUME},
        {"keep-checkpoint", no_argument, 0, OPT_KEEP_CKPT},
        {"geometry", required_argument, 0, OPT_GEOMETRY},
        {"dim", required_argument, 0, OPT_DIM},
        {"window", required_argument, 0, OPT_WINDOW},
        {"negatives", required_argument, 0, OPT_NEG},
        {"epochs", required_argument, 0, OPT_EPOCHS},
        {"lr", required_argument, 0, OPT_LR},
        {"theta", required_argument, 0, OPT_THETA},
        {"max-step", required_argument, 0, OPT_MAX_STEP},
        {"seed", required_argument, 0, OPT_SEED},
        {"min-count", required_argument, 0, OPT_MIN_COUNT},
        {"max-vocab", required_argument, 0, OPT_MAX_VOCAB},
        {"sample", required_argument, 0, OPT_SAMPLE},
        {"format", required_argument, 0, OPT_FORMAT},
        {"keep-traditional", no_argument, 0, OPT_KEEP_TRAD},
        {"threads", required_argument, 0, OPT_THREADS},
        {"quiet", no_argument, 0, 'q'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    gyro_c2v_options opt;
    gyro_c2v_options_init(&opt);
    gyro_corpus_input_options copt;
    gyro_corpus_input_options_init(&copt);
    const char *output = NULL, *ckpt_arg = NULL;
    double ckpt_every = 60;
    int resume = 0, keep_ckpt = 0, quiet = 0;
    unsigned given = 0; /* GYRO_C2V_SET_* bits of the options given (--resume checks them) */
    long v;
    double d;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:qh", longopts, NULL)) != -1) {
        switch (c) {
        case 'o': output = optarg; break;
        case OPT_CKPT: ckpt_arg = optarg; break;
        case OPT_CKPT_EVERY:
            if (!gyro_cli_parse_double(cmd, "--checkpoint-every", optarg, &ckpt_every)) return 2;
            break;
        case OPT_RESUME: resume = 1; break;
        case OPT_KEEP_CKPT: keep_ckpt = 1; break;
        case OPT_GEOMETRY:
            given |= GYRO_C2V_SET_GEOMETRY;
            if (!strcmp(optarg, "hyperbolic") || !strcmp(optarg, "hyperboloid")) opt.geometry = GYRO_C2V_HYPERBOLIC;
            else if (!strcmp(optarg, "euclidean")) opt.geometry = GYRO_C2V_EUCLIDEAN;
            else return gyro_cli_usage_error(cmd, "--geometry must be hyperbolic or euclidean, got '%s'", optarg);
            break;
        case OPT_DIM:
            given |= GYRO_C2V_SET_DIM;
            if (!gyro_cli_parse_long(cmd, "--dim", optarg, 1, GYRO_C2V_MAX_DIM, &v)) return 2;
            opt.dim = (int)v;
            break;
        case OPT_WINDOW:
            given |= GYRO_C2V_SET_WINDOW;
            if (!gyro_cli_parse_long(cmd, "--window", optarg, 1, 100, &v)) return 2;
            opt.window = (int)v;
            break;
        case OPT_NEG:
            given |= GYRO_C2V_SET_NEGATIVES;
            if (!gyro_cli_parse_long(cmd, "--negatives", optarg, 0, 100, &v)) return 2;
            opt.negatives = (int)v;
            break;
        case OPT_EPOCHS:
            given |= GYRO_C2V_SET_EPOCHS;
            if (!gyro_cli_parse_long(cmd, "--epochs", optarg, 1, 100000, &v)) return 2;
            opt.epochs = (int)v;
            break;
        case OPT_LR:
            given |= GYRO_C2V_SET_LR;
            if (!gyro_cli_parse_double(cmd, "--lr", optarg, &d)) return 2;
            if (!(d > 0) || d > 100) return gyro_cli_usage_error(cmd, "--lr must be in (0, 100]");
            opt.lr = d;
            break;
        case OPT_THETA:
            given |= GYRO_C2V_SET_THETA;
            if (!gyro_cli_parse_double(cmd, "--theta", optarg, &opt.theta)) return 2;
            break;
        case OPT_MAX_STEP:
            given |= GYRO_C2V_SET_MAX_STEP;
            if (!gyro_cli_parse_double(cmd, "--max-step", optarg, &opt.max_step)) return 2;
            if (opt.max_step < 0) return gyro_cli_usage_error(cmd, "--max-step must be >= 0");
            break;
        case OPT_SEED:
            given |= GYRO_C2V_SET_SEED;
            if (!gyro_cli_parse_seed(cmd, "--seed", optarg, &opt.seed)) return 2;
            break;
        case OPT_MIN_COUNT:
            if (!gyro_cli_parse_long(cmd, "--min-count", optarg, 1, 0x7fffffffffffffffL, &v)) return 2;
            copt.min_count = (uint64_t)v;
            break;
        case OPT_MAX_VOCAB:
            if (!gyro_cli_parse_long(cmd, "--max-vocab", optarg, 1, GYRO_VOCAB_MAX_SIZE, &v)) return 2;
            copt.max_vocab = (int)v;
            break;
        case OPT_SAMPLE:
            given |= GYRO_C2V_SET_SAMPLE;
            if (!gyro_cli_parse_double(cmd, "--sample", optarg, &opt.sample)) return 2;
            if (opt.sample < 0) return gyro_cli_usage_error(cmd, "--sample must be >= 0");
            break;
        case OPT_FORMAT:
            if (!parse_format(cmd, optarg, &copt.format)) return 2;
            break;
        case OPT_KEEP_TRAD: copt.norm.t2s = 0; break;
        case OPT_THREADS:
            given |= GYRO_C2V_SET_THREADS;
            if (!gyro_cli_parse_long(cmd, "--threads", optarg, 1, GYRO_C2V_MAX_THREADS, &v)) return 2;
            opt.threads = (int)v;
            break;
        case 'q': quiet = 1; break;
        case 'h': usage(stdout); return 0;
        default: return gyro_cli_usage_error(cmd, "unknown option");
        }
    }
    if (!output) return gyro_cli_usage_error(cmd, "missing -o OUTPUT");
    if (!strcmp(output, "-")) return gyro_cli_usage_error(cmd, "the output must be a file (checkpoints live beside it)");
    gyro_status s = gyro_c2v_options_check(&opt);
    if (s) return gyro_cli_usage_error(cmd, "%s", gyro_error_message());

    char *ckpt = ckpt_arg ? strdup(ckpt_arg) : cat2(output, ".ckpt");
    char *ids = ckpt ? cat2(ckpt, ".ids") : NULL;
    if (!ckpt || !ids) {
        free(ckpt); free(ids);
        return gyro_cli_fail(cmd, gyro_error_set(GYRO_ERR_NOMEM, "out of memory"));
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    gyro_c2v_model m;
    memset(&m, 0, sizeof m);
    gyro_corpus corpus = {.fd = -1};
    if (resume) {
        if (optind < argc && !quiet)
            fprintf(stderr, "gyro %s: --resume: the inputs are not read again (the encoded corpus %s is used)\n", cmd, ids);
        s = gyro_c2v_checkpoint_load(ckpt, &m);
        gyro_c2v_options merged;
        if (!s && (s = gyro_c2v_resume_options(&m.opt, &opt, given, &merged)) == GYRO_ERR_USAGE) {
            gyro_c2v_model_free(&m);
            free(ckpt);
            free(ids);
            return gyro_cli_usage_error(cmd, "%s", gyro_error_message());
        }
        if (!s && !quiet && (merged.lr != m.opt.lr || merged.max_step != m.opt.max_step ||
                             merged.sample != m.opt.sample))
            fprintf(stderr, "gyro %s: --resume: continuing with --lr %g --max-step %g --sample %g "
                    "(the checkpoint had %g, %g, %g)\n", cmd, merged.lr, merged.max_step, merged.sample,
                    m.opt.lr, m.opt.max_step, m.opt.sample);
        if (!s) m.opt = merged;
        if (!s) s = gyro_corpus_open(ids, &corpus);
        if (!s && !quiet)
            fprintf(stderr, "Resuming %s at %.1f%% (%d characters, dim %d, %d thread%s)\n", ckpt,
                    100.0 * (double)m.words_done / ((double)m.opt.epochs * (double)m.n_tokens),
                    m.vocab.n, m.opt.dim, m.opt.threads, m.opt.threads > 1 ? "s" : "");
    } else {
        const char *stdin_only[] = {"-"};
        const char *const *inputs = optind < argc ? (const char *const *)argv + optind : stdin_only;
        int n_inputs = optind < argc ? argc - optind : 1;
        gyro_vocab vocab;
        gyro_corpus_stats st;
        s = gyro_corpus_input_encode(inputs, n_inputs, &copt, ids, &vocab, &st);
        int encoded = !s;
        if (!s && !quiet)
            fprintf(stderr, "Read %llu documents, %llu characters: %d distinct characters with count >= %llu "
                    "(of %llu), %llu tokens to train on\n", (unsigned long long)st.documents,
                    (unsigned long long)st.chars, vocab.n, (unsigned long long)copt.min_count,
                    (unsigned long long)st.distinct, (unsigned long long)st.kept);
        if (!s) s = gyro_corpus_open(ids, &corpus);
        if (!s) s = gyro_c2v_model_init(&m, &opt, &vocab, corpus.n_ids, corpus.n_tokens);
        gyro_vocab_free(&vocab);
        if (!s) s = gyro_c2v_checkpoint_save(&m, ckpt);
        if (s && encoded) unlink(ids); /* this run's encoded corpus is of no further use */
    }
    gyro_c2v_report rep;
    if (!s) {
        gyro_c2v_run run = {ckpt, ckpt_every, &c2v_stop, quiet};
        s = gyro_c2v_train(&m, &corpus, &run, &rep);
    }
    gyro_corpus_close(&corpus);
    if (!s) {
        char trained_by[512];
        snprintf(trained_by, sizeof trained_by,
                 "gyro char2vec train --geometry %s --dim %d --window %d --negatives %d --epochs %d "
                 "--lr %g --theta %g --max-step %g --sample %g --seed %llu",
                 m.opt.geometry == GYRO_C2V_HYPERBOLIC ? "hyperbolic" : "euclidean", m.opt.dim,
                 m.opt.window, m.opt.negatives, m.opt.epochs, m.opt.lr, m.opt.theta, m.opt.max_step,
                 m.opt.sample, (unsigned long long)m.opt.seed);
        gyro_embedding_table *t = NULL;
        s = gyro_c2v_model_table(&m, trained_by, &t);
        if (!s) s = gyro_table_file_save(t, output);
        if (!s && !quiet) {
            fprintf(stderr, "Wrote %s: %d characters, %s, dim %d; %.1f s, %.0f chars/sec/thread",
                    output, t->n, gyro_embedding_model_name(t->model), t->dim, rep.seconds, rep.rate);
            if (m.opt.geometry == GYRO_C2V_HYPERBOLIC)
                fprintf(stderr, "; max |<x,x>_L + 1| = %.3g over both tables", rep.manifold_error);
            fputc('\n', stderr);
        }
        gyro_embedding_table_free(t);
        if (!s && !keep_ckpt) {
            gyro_atomic_remove_file(ckpt);   /* never a device or FIFO given as --checkpoint */
            gyro_atomic_remove_file(ids);
        }
    }
    gyro_c2v_model_free(&m);
    free(ckpt);
    free(ids);
    if (s) return gyro_cli_fail(cmd, s);
    return 0;
}

/* `gyro char2vec tokens`: the token stream as text, for other tools in comparisons. */
static int tokens(int argc, char **argv)
{
    const char *cmd = "char2vec tokens";
    static const struct option longopts[] = {
        {"format", required_argument, 0, OPT_FORMAT},
        {"keep-traditional", no_argument, 0, OPT_KEEP_TRAD},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    gyro_corpus_input_options copt;
    gyro_corpus_input_options_init(&copt);
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_FORMAT:
            if (!parse_format(cmd, optarg, &copt.format)) return 2;
            break;
        case OPT_KEEP_TRAD: copt.norm.t2s = 0; break;
        case 'h':
            printf("usage: gyro char2vec tokens [--format F] [--keep-traditional] [FILE...]\n\n"
                   "Print the characters training sees, space-separated, one document per line, so\n"
                   "other tools (word2vec, fastText) can train on the same token stream.\n");
            return 0;
        default: return gyro_cli_usage_error(cmd, "unknown option");
        }
    }
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

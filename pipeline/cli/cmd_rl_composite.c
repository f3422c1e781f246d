/* cmd_rl_composite.c — the composite-intent environment on the command line:
 *
 *   gyro rl finetune --env composite --train T.examples [--dev D.examples] [--init SFT] --out M
 *   gyro reason --env composite --model M "utterance"
 *
 * finetune trains the supervised start (unless --init gives one), measures greedy exact-set
 * accuracy and mean F1 on the dev set, fine-tunes by GRPO against the frozen start and measures
 * again. The summary is one line of key=value pairs on stdout. Called from cmd_rl.c and
 * cmd_reason.c when --env composite is given; library side in models/rl/composite_train.h and
 * models/rl/composite_reason.h (shared with the gRPC Reason method).
 */
#include "pipeline/cli/cmd_rl_composite.h"

#include <stddef.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/core/blas.h"
#include "models/core/progress.h"
#include "models/rl/composite_reason.h"
#include "models/rl/composite_train.h"
#include "pipeline/cli/cli.h"
#include "pipeline/cli/opts.h"
#include "pipeline/example_file.h"
#include "pipeline/table_file.h"

int gyro_cli_is_composite(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--")) break;
        if (!strcmp(argv[i], "--env=composite")) return 1;
        if ((!strcmp(argv[i], "--env") || !strcmp(argv[i], "-e")) && i + 1 < argc &&
            !strcmp(argv[i + 1], "composite"))
            return 1;
    }
    return 0;
}

typedef struct composite_args {
    const char *env, *train, *dev, *init, *from, *sft_out, *out, *emb;
    int geometry, log, no_layernorm, beam;
    gyro_train_options sft;         /* gyro_train_options_init of the geometry (classify train's
                                       defaults), then the options below */
    gyro_composite_grpo_options go; /* the library's defaults (gyro_composite_grpo_options_default) */
} composite_args;

#define CA composite_args
/* -t (--train) is kept as a hidden alias: -t is --table in the other commands; -S (--states) too. */
static const gyro_opt composite_opts[] = {
    GYRO_O_STR("env", 'e', CA, env, "composite", NULL, "the composite-intent environment"),
    GYRO_O_STR("train", 0, CA, train, "FILE", NULL, "training Examples (gyro import / generate / split)"),
    GYRO_O_STR(NULL, 't', CA, train, "FILE", NULL, NULL),
    GYRO_O_STR("dev", 'd', CA, dev, "FILE", NULL,
               "held-out Examples: early stopping of the supervised start and the figures (without "
               "it, --dev-fraction of the training utterances are held out for early stopping)"),
    GYRO_O_STR("init", 'i', CA, init, "MODEL", NULL,
               "start from this supervised policy (skips supervised training)"),
    GYRO_O_STR("from", 0, CA, from, "CLASSIFIER", NULL,
               "start from a flat intent classifier (gyro classify train over the label sets): its "
               "transformer and parameters, a fresh head over the atoms and STOP; then the supervised "
               "epochs (early stopping on held-out exact-set accuracy)"),
    GYRO_O_STR("sft-out", 0, CA, sft_out, "MODEL", NULL, "also write the supervised start here"),
    GYRO_O_STR("out", 'o', CA, out, "MODEL", NULL, "write the fine-tuned policy here (atomically)"),
    GYRO_O_STR("output", 0, CA, out, "MODEL", NULL, NULL),
    GYRO_O_INT("beam", 0, CA, beam, "W", "1", 1, GYRO_COMPOSITE_MAX_BEAM,
               "beam width of the dev figures (1: greedy)"),
    GYRO_O_SECTION("The supervised start (defaults: those of gyro classify train for the geometry)"),
    GYRO_O_CHOICE("geometry", 'g', CA, geometry, "G", "hyperbolic|euclidean", "hyperbolic",
                  "hyperbolic or euclidean"),
    GYRO_O_INT("dim", 0, CA, sft.model.dim, "C", NULL, 2, 4096, "model width"),
    GYRO_O_INT("layers", 0, CA, sft.model.n_layers, "L", NULL, 1, 64, "transformer layers"),
    GYRO_O_INT("heads", 0, CA, sft.model.n_heads, "H", NULL, 1, 256, "attention heads"),
    GYRO_O_INT("head-dim", 0, CA, sft.model.head_dim, "D", NULL, 1, 4096, "coordinates per head",
               .mark = GYRO_TRAIN_SET_HEAD_DIM),
    GYRO_O_INT("ffn-dim", 0, CA, sft.model.ffn_dim, "F", NULL, 1, 65536, "feed-forward width",
               .mark = GYRO_TRAIN_SET_FFN_DIM),
    GYRO_O_CHOICE("residual", 0, CA, sft.model.residual, "R", "none|mobius|tangent", NULL,
                  "residual connection of the blocks"),
    GYRO_O_FLAG("layernorm", 0, CA, sft.model.layernorm, "LayerNorm after each residual"),
    GYRO_O_FLAG("no-layernorm", 0, CA, no_layernorm, "no LayerNorm"),
    GYRO_O_FLOAT("curvature", 0, CA, sft.model.curvature, "C", NULL, 0, 0, "curvature"),
    GYRO_O_FLOAT("dropout", 0, CA, sft.model.dropout, "P", NULL, 0, 0, "dropout of the supervised start"),
    GYRO_O_STR("embeddings", 0, CA, emb, "TABLE", NULL,
               "start the character rows from a char2vec table (its dimension sets --dim)"),
    GYRO_O_FLAG("freeze-table", 0, CA, sft.freeze_table, "keep the table's rows fixed"),
    GYRO_O_INT("sft-epochs", 0, CA, sft.epochs, "N", NULL, 1, 100000, "supervised epochs (at most)"),
    GYRO_O_INT("patience", 0, CA, sft.patience, "N", NULL, 0, 100000,
               "epochs without improvement of the held-out state accuracy before stopping (0: never)"),
    GYRO_O_DOUBLE("dev-fraction", 0, CA, sft.dev_fraction, "F", NULL, 0, 0,
                  "training utterances held out for early stopping without --dev"),
    GYRO_O_DOUBLE("sft-lr", 0, CA, sft.optim.lr, "LR", NULL, 0, 0, "learning rate of the supervised start"),
    GYRO_O_SECTION("GRPO"),
    GYRO_O_INT("iterations", 'n', CA, go.iterations, "N", NULL, 0, 100000000,
               "GRPO iterations (default 100; 0: the supervised start only)"),
    GYRO_O_INT("states", 0, CA, go.batch, "N", NULL, 1, 65536, "utterances per iteration (default 16)"),
    GYRO_O_INT(NULL, 'S', CA, go.batch, "N", NULL, 1, 65536, NULL),
    GYRO_O_INT("group", 'G', CA, go.group, "G", NULL, 2, 4096, "episodes per utterance (default 8)"),
    GYRO_O_INT("epochs", 'E', CA, go.epochs, "E", NULL, 1, 1000, "gradient steps per iteration (default 2)"),
    GYRO_O_DOUBLE("lr", 'l', CA, go.lr, "LR", NULL, 0, 0, "Adam learning rate (default 1e-4)"),
    GYRO_O_DOUBLE("ball-lr", 0, CA, go.ball_lr, "LR", NULL, 0, 0,
                  "RSGD learning rate of ball rows (default 0.005)"),
    GYRO_O_DOUBLE("clip", 'c', CA, go.grpo.clip_eps, "EPS", NULL, 0, 0, "ratio clip epsilon (default 0.2)"),
    GYRO_O_DOUBLE("beta", 'b', CA, go.grpo.kl_beta, "BETA", NULL, 0, 0, "KL penalty weight (default 0.04)"),
    GYRO_O_SEED("seed", 's', CA, go.seed, "1", "seed"),
    GYRO_O_FLAG("log", 0, CA, log, "dev figures on stderr every --eval-every iterations"),
    GYRO_O_INT("eval-every", 0, CA, go.eval_every, "K", NULL, 0, 100000000,
               "iterations between the --log lines (default 10)"),
    GYRO_O_FLAG("quiet", 'q', CA, go.quiet, "no progress lines"),
    GYRO_O_END,
};

const gyro_cmd_spec gyro_spec_rl_composite = {
    "rl finetune", "--env composite --train T.examples [--dev D.examples] [--init SFT] [--sft-out SFT]\n"
                   " [options] --out MODEL",
    "Composite intents, step by step: the policy reads an utterance and emits atomic intents one at "
    "a time, then STOP; the reward is the F1 of the emitted set against the gold atoms (1 for the "
    "exact set). The supervised start (teacher-forced cross-entropy on the sorted atoms) is trained "
    "first unless --init gives one; then GRPO fine-tunes it against the frozen start. Greedy "
    "exact-set accuracy and F1 on --dev are reported before and after GRPO.",
    "Output: one summary line of key=value pairs on stdout. SIGINT or SIGTERM stops after the "
    "current iteration and saves the policy to --out (exit 130).",
    composite_opts,
    NULL,
};

static volatile sig_atomic_t stop_flag;
static volatile int stop_int;

static void on_signal(int sig)
{
    (void)sig;
    stop_flag = 1;
    stop_int = 1;
}

/* The Example sets of --train and --dev. */
static gyro_status read_sets(const composite_args *o, gyro_example_set *train, gyro_example_set *dev)
{
    gyro_status s = gyro_example_file_read(train, o->train, NULL);
    if (s) s = gyro_error_prefix(s, "%s", o->train);
    if (!s && o->dev && (s = gyro_example_file_read(dev, o->dev, NULL))) s = gyro_error_prefix(s, "%s", o->dev);
    if (!s && train->n == 0) s = gyro_error_set(GYRO_ERR_DATA, "%s: no example", o->train);
    return s;
}

/* The starting policy *p and its frozen copy *ref: loaded from --init, or trained supervised on
 * train (written to --sft-out when given); *sft_seconds and *tr describe that training. A
 * signal during the supervised start keeps the best policy so far and sets *interrupted (no
 * reference is made then: GRPO is skipped). */
static gyro_status start_policy(composite_args *o, const gyro_example_set *train,
                                const gyro_example_set *dev, gyro_composite_policy **p,
                                gyro_composite_policy **ref, gyro_train_result *tr, double *sft_seconds,
                                int *interrupted)
{
    if (o->init) {
        gyro_status s = gyro_composite_policy_load(o->init, p);
        return s ? s : gyro_composite_policy_load(o->init, ref);
    }
    double t0 = gyro_now();
    gyro_status s;
    if (o->from) {   /* a flat classifier's transformer, a fresh head; our own supervised loop */
        gyro_classifier *flat = NULL;
        s = gyro_classifier_load(o->from, &flat);
        if (s) return gyro_error_prefix(s, "%s", o->from);
        s = gyro_composite_from_classifier(flat, train, o->go.seed, p);
        gyro_classifier_free(flat);
        if (s) return s;
        gyro_composite_sft_options so = gyro_composite_sft_options_default();
        so.epochs = o->sft.epochs;
        so.batch = o->sft.batch_size;
        so.patience = o->sft.patience;
        so.dev_fraction = o->sft.dev_fraction;
        so.optim = o->sft.optim;
        so.sgdr = o->sft.sgdr;
        so.seed = o->go.seed;
        so.stop = &stop_int;
        so.log = o->go.quiet ? NULL : stderr;
        s = gyro_composite_train_supervised(*p, train, o->dev ? dev : NULL, &so, tr);
    } else {
        gyro_train_options to = o->sft;
        to.seed = o->go.seed;
        to.quiet = o->go.quiet;
        to.stop = &stop_int;
        to.log = o->go.quiet ? NULL : stderr;
        s = gyro_composite_supervise(&to, train, o->dev ? dev : NULL, p, tr);
    }
    *sft_seconds = gyro_now() - t0;
    if (s == GYRO_ERR_INTERRUPTED && *p) {   /* the best supervised policy so far */
        if (!o->go.quiet) fprintf(stderr, "gyro rl finetune: %s\n", gyro_error_message());
        *interrupted = 1;
        s = GYRO_OK;
    }
    if (!s && o->sft_out) s = gyro_classifier_save((*p)->clf, o->sft_out);
    if (!s && !*interrupted) s = gyro_composite_policy_clone(*p, ref); /* the frozen reference */
    return s;
}

/* GRPO from p against ref; a signal (see the handlers installed by the caller) stops it after the
 * current iteration (*interrupted = 1, status OK). */
static gyro_status run_grpo(composite_args *o, gyro_composite_policy *p, gyro_composite_policy *ref,
                            const gyro_composite_data *dtrain, const gyro_composite_data *ddev,
                            gyro_composite_grpo_result *gr, int *interrupted)
{
    o->go.stop = &stop_int;
    o->go.log = o->log ? stderr : NULL;
    gyro_status s = gyro_composite_grpo(p, ref, dtrain, o->dev ? ddev : NULL, &o->go, gr);
    if (s == GYRO_ERR_INTERRUPTED) *interrupted = 1, s = GYRO_OK;
    return s;
}

/* The options of `rl finetune --env composite` into *o (two passes: the first finds the geometry,
 * which decides the defaults), checked, with the --embeddings table loaded into *table (owned by
 * the caller; o->sft.table points to it). Returns GYRO_OPTS_CONTINUE, or the exit status of
 * --help or of the reported error. */
static int parse_args(int argc, char **argv, composite_args *o, gyro_embedding_table **table)
{
    const char *cmd = "rl finetune";
    composite_args probe = {0};
    int first;
    *table = NULL;
    int rc = gyro_opts_parse(&gyro_spec_rl_composite, argc, argv, &probe, &first);
    if (rc != GYRO_OPTS_CONTINUE) return rc;
    memset(o, 0, sizeof *o);
    o->go = gyro_composite_grpo_options_default();
    gyro_tf_geometry geom = probe.geometry ? GYRO_TF_GEOMETRY_EUCLIDEAN : GYRO_TF_GEOMETRY_HYPERBOLIC;
    gyro_train_options_init(&o->sft, geom);
    o->sft.arch = GYRO_ARCH_TRANSFORMER;   /* the policy is a transformer: classify train --arch transformer's defaults */
    o->geometry = probe.geometry;
    unsigned given;
    rc = gyro_opts_parse_marks(&gyro_spec_rl_composite, argc, argv, o, &first, &given);
    if (rc != GYRO_OPTS_CONTINUE) return rc;
    if (o->no_layernorm) o->sft.model.layernorm = 0;
    if (!(o->sft.model.dropout >= 0 && o->sft.model.dropout < 1)) return gyro_cli_usage_error(cmd, "--dropout must be in [0, 1)");
    if (!(o->sft.model.curvature > 0)) return gyro_cli_usage_error(cmd, "--curvature must be > 0");
    if (!(o->sft.dev_fraction >= 0 && o->sft.dev_fraction < 1)) return gyro_cli_usage_error(cmd, "--dev-fraction must be in [0, 1)");
    if (!(o->sft.optim.lr > 0)) return gyro_cli_usage_error(cmd, "--sft-lr must be positive");
    if (o->env && strcmp(o->env, "composite")) return gyro_cli_usage_error(cmd, "--env composite expected");
    if (first < argc) return gyro_cli_usage_error(cmd, "unexpected argument '%s'", argv[first]);
    if (!o->train) return gyro_cli_usage_error(cmd, "--train is required with --env composite");
    if (!(o->go.lr > 0) || !(o->go.ball_lr > 0) || !(o->go.grpo.clip_eps > 0) || !(o->go.grpo.kl_beta >= 0))
        return gyro_cli_usage_error(cmd, "--lr, --ball-lr and --clip must be positive, --beta >= 0");
    if (o->init && o->from) return gyro_cli_usage_error(cmd, "--init and --from exclude each other");
    if (o->emb && o->from) return gyro_cli_usage_error(cmd, "--embeddings and --from exclude each other");
    if (o->emb && !o->init) {
        gyro_status st = gyro_table_file_load(o->emb, table);
        if (st) return gyro_cli_fail(cmd, gyro_error_prefix(st, "%s", o->emb));
        o->sft.table = *table;
    }
    if (gyro_train_options_complete(&o->sft, given) != GYRO_OK) {
        gyro_embedding_table_free(*table);
        *table = NULL;
        return gyro_cli_usage_error(cmd, "%s", gyro_error_message());
    }
    return GYRO_OPTS_CONTINUE;
}

/* What a finetune run did, for its summary line. */
typedef struct finetune_run {
    gyro_example_set train, dev;
    gyro_composite_policy *p, *ref;
    gyro_train_result tr;               /* the supervised start */
    gyro_composite_grpo_result gr;
    double sft_seconds;
    double ex0, f0, ex1, f1;            /* dev exact-set accuracy and F1 before and after GRPO */
    int interrupted;
} finetune_run;

/* The supervised start (or --init), then GRPO, with dev scores before and after, under
 * SIGINT/SIGTERM handlers that stop either after the current step (r->interrupted). */
static gyro_status finetune(composite_args *o, finetune_run *r)
{
    gyro_composite_data dtrain = {0}, ddev = {0};
    r->ex0 = r->f0 = r->ex1 = r->f1 = NAN;
    /* SIGINT/SIGTERM stop the supervised start and GRPO alike after the current step; what was
     * trained so far is saved */
    struct sigaction sa, old_int, old_term;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    gyro_status s = read_sets(o, &r->train, &r->dev);
    if (!s) s = start_policy(o, &r->train, &r->dev, &r->p, &r->ref, &r->tr, &r->sft_seconds, &r->interrupted);
    if (!s && stop_flag) r->interrupted = 1;   /* a signal after the supervised start: no GRPO */
    if (!s && !r->interrupted) {
        s = gyro_composite_data_build(r->p, &r->train, &dtrain);
        if (!s && o->dev) s = gyro_composite_data_build(r->p, &r->dev, &ddev);
        gyro_composite_scores sc;
        if (!s && o->dev && !(s = gyro_composite_score(r->p, &ddev, o->beam, &sc))) r->ex0 = sc.exact, r->f0 = sc.mean_f1;
        if (!s && o->log) fprintf(stderr, "supervised start: dev exact %.4f  dev F1 %.4f\n", r->ex0, r->f0);
        if (!s) s = run_grpo(o, r->p, r->ref, &dtrain, &ddev, &r->gr, &r->interrupted);
        if (!s && o->dev && r->gr.iterations > 0 && !(s = gyro_composite_score(r->p, &ddev, o->beam, &sc)))
            r->ex1 = sc.exact, r->f1 = sc.mean_f1;
        else if (!s && r->gr.iterations == 0) r->ex1 = r->ex0, r->f1 = r->f0;
    }
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    gyro_composite_data_free(&dtrain);
    gyro_composite_data_free(&ddev);
    return s;
}

int gyro_cli_rl_composite_finetune(int argc, char **argv)
{
    const char *cmd = "rl finetune";
    composite_args o;
    gyro_embedding_table *table;
    int rc = parse_args(argc, argv, &o, &table);
    if (rc != GYRO_OPTS_CONTINUE) return rc;
    gyro_blas_set_threads(1);
    finetune_run r = {0};
    gyro_status s = finetune(&o, &r);
    if (!s && o.out) s = gyro_classifier_save(r.p->clf, o.out);
    if (!s)
        printf("env=composite n_train=%d n_dev=%d actions=%d sft_epochs=%d sft_seconds=%.2f "
               "beam=%d dev_exact_before=%.4f dev_f1_before=%.4f iterations=%d reward_first=%.4f "
               "reward_last=%.4f kl=%.4g clip_fraction=%.4f ratio_dev_max=%.4g grpo_seconds=%.2f dev_exact_after=%.4f "
               "dev_f1_after=%.4f\n",
               r.train.n, r.dev.n, r.p->n_actions, r.tr.epochs, r.sft_seconds, o.beam, r.ex0, r.f0, r.gr.iterations,
               r.gr.first_reward, r.gr.last_reward, r.gr.kl, r.gr.clip_fraction, r.gr.ratio_dev_max, r.gr.seconds,
               r.ex1, r.f1);
    gyro_composite_policy_free(r.p);
    gyro_composite_policy_free(r.ref);
    gyro_example_set_free(&r.train);
    gyro_example_set_free(&r.dev);
    gyro_embedding_table_free(table);
    if (s) return gyro_cli_fail(cmd, s);
    if (r.interrupted || stop_flag) {
        fprintf(stderr, "gyro %s: interrupted after %d iterations%s%s\n", cmd, r.gr.iterations,
                o.out ? "; policy saved to " : "", o.out ? o.out : "");
        return 130;
    }
    return 0;
}

typedef struct composite_eval_args {
    const char *env, *model;
    int beam;
} composite_eval_args;

static const gyro_opt composite_eval_opts[] = {
    GYRO_O_STR("env", 'e', composite_eval_args, env, "composite", NULL, "the composite-intent environment"),
    GYRO_O_STR("model", 'm', composite_eval_args, model, "MODEL", NULL,
               "the policy (gyro rl finetune --env composite; required)"),
    GYRO_O_INT("beam", 0, composite_eval_args, beam, "W", "1", 1, GYRO_COMPOSITE_MAX_BEAM,
               "beam width (1: greedy)"),
    GYRO_O_END,
};

const gyro_cmd_spec gyro_spec_rl_composite_eval = {
    "rl eval", "--env composite --model MODEL [--beam W] EXAMPLES...",
    "Decode every utterance of the Example files with the composite-intent policy (greedy, or by "
    "beam search over atom sequences scored by the sum of their log-probabilities, STOP included) "
    "and score the emitted sets against the gold atoms.",
    "Output: one line of key=value pairs per file: n, exact (exact-set accuracy), mean_f1 (set-F1 "
    "per utterance), n_composite and exact_composite (gold sets of two or more atoms), atom_p, "
    "atom_r, atom_f1 (micro over atoms; a gold atom the policy lacks is a miss). A bad file exits "
    "65.",
    composite_eval_opts,
    NULL,
};

int gyro_cli_rl_composite_eval(int argc, char **argv)
{
    const char *cmd = "rl eval";
    composite_eval_args o = {0};
    int first;
    int rc = gyro_opts_parse(&gyro_spec_rl_composite_eval, argc, argv, &o, &first);
    if (rc != GYRO_OPTS_CONTINUE) return rc;
    if (o.env && strcmp(o.env, "composite")) return gyro_cli_usage_error(cmd, "--env composite expected");
    if (!o.model) return gyro_cli_usage_error(cmd, "--model is required");
    if (first >= argc) return gyro_cli_usage_error(cmd, "an Example file is required");
    gyro_blas_set_threads(1);
    gyro_composite_policy *p;
    gyro_status s = gyro_composite_policy_load(o.model, &p);
    if (s) return gyro_cli_fail(cmd, s);
    for (int f = first; !s && f < argc; f++) {
        gyro_example_set set = {0};
        gyro_composite_data d = {0};
        gyro_composite_scores sc;
        s = gyro_example_file_read(&set, argv[f], NULL);
        if (!s && set.n == 0) s = gyro_error_set(GYRO_ERR_DATA, "no example");
        if (!s) s = gyro_composite_data_build(p, &set, &d);
        if (s) s = gyro_error_prefix(s, "%s", argv[f]);
        if (!s) s = gyro_composite_score(p, &d, o.beam, &sc);
        if (!s)
            printf("file=%s beam=%d n=%d exact=%.4f mean_f1=%.4f n_composite=%d exact_composite=%.4f "
                   "atom_p=%.4f atom_r=%.4f atom_f1=%.4f\n",
                   argv[f], o.beam, sc.n, sc.exact, sc.mean_f1, sc.n_composite, sc.exact_composite,
                   sc.atom_p, sc.atom_r, sc.atom_f1);
        gyro_composite_data_free(&d);
        gyro_example_set_free(&set);
    }
    gyro_composite_policy_free(p);
    return s ? gyro_cli_fail(cmd, s) : 0;
}

int gyro_cli_reason_composite(const char *model, int n, char **utterances)
{
    const char *cmd = "reason";
    if (n < 1) return gyro_cli_usage_error(cmd, "an utterance is required");
    gyro_blas_set_threads(1);
    gyro_composite_policy *p;
    gyro_status s = gyro_composite_policy_load(model, &p);
    if (s) return gyro_cli_fail(cmd, s);
    gyro_composite_reason_result *r = malloc(sizeof *r);
    if (!r) s = gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    for (int i = 0; !s && i < n; i++) {
        s = gyro_composite_reason(p, utterances[i], r);
        if (s) break;
        printf("utterance: %s\n", utterances[i]);
        for (int k = 0; k < r->n_steps; k++)
            printf("step %d: %s  (p = %.4f)\n", k + 1, r->action[k], r->prob[k]);
        printf("intents: %s\n", r->answer);
    }
    free(r);
    gyro_composite_policy_free(p);
    return s ? gyro_cli_fail(cmd, s) : 0;
}

/* cmd_rl.c — `gyro rl finetune`: GRPO fine-tuning of the MLA + MoE policy on an environment.
 *
 *   gyro rl finetune --env root|vdp|unicycle [--geometry hyperbolic|euclidean|lorentz] [options] --out M
 *   gyro rl eval --model M [--eval N]
 *
 * A thin wrapper over gyro_rl_train / gyro_rl_evaluate (models/rl/grpo_train.h). The summary is
 * one line of key=value pairs on stdout (machine-readable: the benchmarks parse it); the
 * progress line goes to stderr.
 */
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "models/core/blas.h"
#include "models/core/rng.h"
#include "models/rl/env.h"
#include "models/rl/env_model.h"
#include "models/rl/grpo_train.h"
#include "models/rl/policy.h"
#include "models/rl/transition.h"
#include "pipeline/cli/cli.h"
#include "pipeline/cli/opts.h"
#include "pipeline/mpi_comm.h"
#include "pipeline/progress_stream.h"
#include "pipeline/cli/cmd_rl_composite.h"

/* The environments, one per line (in `gyro rl --help` and `gyro rl finetune --help`). */
static void list_envs(FILE *out)
{
    for (const gyro_rl_env *const *e = gyro_rl_env_all(); *e; e++)
        fprintf(out, "  %-10s %s\n", (*e)->name, (*e)->description);
    fprintf(out,
            "  %-10s %s\n", "composite",
            "composite intents step by step from Examples ('gyro rl finetune --env composite --help')");
}

static void finetune_more_help(FILE *out)
{
    fprintf(out, "Environments:\n");
    list_envs(out);
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: gyro rl finetune --env ENV [options] [--out MODEL]\n"
            "       gyro rl eval --model MODEL [--eval N] [--greedy-eval] [--seed S]\n"
            "       gyro rl transition --env ENV [--geometry G] [--episodes N] [--test-episodes N]\n"
            "                          [--epochs E] [--batch B] [--lr LR] [--seed S] [-q]\n"
            "                          [--out T]\n"
            "\n"
            "Fine-tune a policy (one-block transformer with multi-head latent attention and a\n"
            "mixture-of-experts FFN, Euclidean or on the Poincare ball; or a Lorentz transformer\n"
            "block on the hyperboloid, --geometry lorentz) by GRPO: G episodes per\n"
            "start state from the current policy, group-relative advantages, clipped surrogate,\n"
            "KL penalty to a frozen reference, several epochs per batch. Seeded and reproducible.\n"
            "\n"
            "Environments:\n");
    list_envs(out);
    fprintf(out,
            "\n"
            "'gyro rl finetune --help', 'gyro rl eval --help' and 'gyro rl transition --help' list the\n"
            "options of each subcommand.\n"
            "Output: one summary line of key=value pairs on stdout. SIGINT or SIGTERM stops\n"
            "after the current iteration and saves the policy to --out (exit 130).\n"
            "Exit status: 0 OK, 1 runtime error (I/O, NaN), 2 usage, 65 bad model file,\n"
            "130 interrupted.\n");
}

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

/* --log: one line per evaluation on stderr (after the progress line's own line). */
static void log_report(void *ctx, int iteration, const gyro_rl_train_result *r, const double *load,
                       int n_experts)
{
    const gyro_rl_env *env = ctx;
    /* on a terminal the progress line is being redrawn in place: end it first */
    fprintf(stderr, "%siteration %d  steps %ld  %s %.4g  reward %.4g  kl %.4g  clip %.3f  expert load",
            isatty(STDERR_FILENO) ? "\n" : "", iteration, r->steps, env->metric_name, r->final_metric, r->final_reward, r->kl,
            r->clip_fraction);
    for (int i = 0; i < n_experts; i++) fprintf(stderr, " %.3f", load[i]);
    fprintf(stderr, "\n");
}

#define GEOMETRIES "hyperbolic|euclidean|hyper|vanilla" /* index 0 or 2: hyperbolic */
/* finetune's choices: GEOMETRIES, then lorentz (index 4) */
#define FINETUNE_GEOMETRIES GEOMETRIES "|lorentz"

/* The policy geometry (GYRO_RL_GEOMETRY_*) of a FINETUNE_GEOMETRIES index. */
static int finetune_geometry(int index)
{
    return index == 4 ? GYRO_RL_GEOMETRY_LORENTZ
           : index % 2 == 0 ? GYRO_RL_GEOMETRY_POINCARE : GYRO_RL_GEOMETRY_EUCLIDEAN;
}

typedef struct finetune_args {
    gyro_rl_train_config tc; /* the library's defaults (gyro_rl_train_config_default) */
    const char *env, *init, *ref, *out, *transition, *progress;
    int geometry, batch, width, latent, experts, top_k, log;
    double curvature;
} finetune_args;

/* The options of the MLA + MoE block (a usage error with --geometry lorentz). */
#define MARK_MLA_MOE 1u

/* Hidden aliases: -S (--states; -S is no common letter), --top-k (the experts per token, now
 * --moe-top-k: -k/--top-k mean results per query elsewhere, and finetune has no such option, so
 * the old spelling stays unambiguous here) and --output (of --out). */
static const gyro_opt finetune_opts[] = {
    GYRO_O_STR("env", 'e', finetune_args, env, "ENV", NULL,
               "environment: root, vdp, unicycle, primefield (see 'gyro rl --help') or composite (required "
               "unless --init gives one)"),
    GYRO_O_CHOICE("geometry", 'g', finetune_args, geometry, "G", FINETUNE_GEOMETRIES, NULL,
                  "hyperbolic (Hyper-T, default), euclidean (Vanilla-T) or lorentz (a Lorentz "
                  "transformer block on the hyperboloid: heads, FFN and width from --width; no MLA, "
                  "no MoE)"),
    GYRO_O_STR("init", 'i', finetune_args, init, "MODEL", NULL, "start from a saved policy instead of a fresh one"),
    GYRO_O_STR("ref", 'r', finetune_args, ref, "MODEL", NULL, "frozen KL reference (default: the starting policy)"),
    GYRO_O_STR("out", 'o', finetune_args, out, "MODEL", NULL, "write the policy here (atomically; checkpoints too)"),
    GYRO_O_STR("output", 0, finetune_args, out, "MODEL", NULL, NULL),
    GYRO_O_INT("iterations", 'n', finetune_args, tc.iterations, "N", NULL, 0, 100000000, "GRPO iterations (default 200)"),
    GYRO_O_INT("states", 0, finetune_args, tc.n_states, "N", NULL, 1, 1000000, "start states per batch (default 16)"),
    GYRO_O_INT(NULL, 'S', finetune_args, tc.n_states, "N", NULL, 1, 1000000, NULL),
    GYRO_O_INT("group", 'G', finetune_args, tc.group, "G", NULL, 2, 100000, "episodes per start state (default 8)"),
    GYRO_O_INT("epochs", 'E', finetune_args, tc.epochs, "E", NULL, 1, 10000, "gradient steps per batch (default 2)"),
    GYRO_O_DOUBLE("lr", 'l', finetune_args, tc.lr, "LR", NULL, 0, 0, "Adam learning rate (default 3e-4)"),
    GYRO_O_DOUBLE("clip", 'c', finetune_args, tc.grpo.clip_eps, "EPS", NULL, 0, 0, "ratio clip epsilon (default 0.2)"),
    GYRO_O_DOUBLE("beta", 'b', finetune_args, tc.grpo.kl_beta, "BETA", NULL, 0, 0, "KL penalty weight (default 0.04)"),
    GYRO_O_DOUBLE("balance", 'a', finetune_args, tc.balance_alpha, "ALPHA", NULL, 0, 0,
                  "MoE balance-loss weight (default 0.001)"),
    GYRO_O_SEED("seed", 's', finetune_args, tc.seed, NULL, "seed of initialisation and sampling (default 1)"),
    GYRO_O_INT("eval", 0, finetune_args, tc.eval_episodes, "N", NULL, 1, 1000000, "evaluation episodes (default 32)"),
    GYRO_O_FLAG("greedy-eval", 0, finetune_args, tc.eval_greedy, "evaluate the argmax policy (default: sampled actions)"),
    GYRO_O_FLAG("log", 0, finetune_args, log,
                "after each evaluation, a line on stderr: metric, reward, KL, clip fraction and the "
                "experts' load since the last report"),
    GYRO_O_INT("eval-every", 0, finetune_args, tc.eval_every, "K", NULL, 1, 100000000,
               "iterations between evaluations (default 5)"),
    GYRO_O_DOUBLE("target", 0, finetune_args, tc.target, "T", NULL, 0, 0,
                  "record the first step whose metric is below T (default 1e-6)"),
    GYRO_O_INT("checkpoint-every", 0, finetune_args, tc.checkpoint_every, "K", NULL, 0, 100000000,
               "iterations between checkpoints (default 50)"),
    GYRO_O_INT("batch", 0, finetune_args, batch, "B", "1024", 1, 1 << 20, "rows per forward/backward chunk"),
    GYRO_O_INT("width", 0, finetune_args, width, "D", "32", 2, 4096, "model width"),
    GYRO_O_INT("latent", 0, finetune_args, latent, "C", "32", 1, 4096, "MLA key-value latent width",
               .mark = MARK_MLA_MOE),
    GYRO_O_INT("experts", 0, finetune_args, experts, "N", "4", 1, GYRO_RL_MAX_EXPERTS, "routed experts",
               .mark = MARK_MLA_MOE),
    GYRO_O_INT("moe-top-k", 0, finetune_args, top_k, "K", "1", 1, GYRO_RL_MAX_EXPERTS, "experts per token",
               .mark = MARK_MLA_MOE),
    GYRO_O_INT("top-k", 0, finetune_args, top_k, "K", NULL, 1, GYRO_RL_MAX_EXPERTS, NULL, .mark = MARK_MLA_MOE),
    GYRO_O_DOUBLE("curvature", 0, finetune_args, curvature, "C", "1", 0, 0, "curvature of the ball or hyperboloid"),
    GYRO_O_STR("transition", 0, finetune_args, transition, "T", NULL,
               "vdp, unicycle: sample the GRPO rollouts from the learned transition model T ('rl "
               "transition --out T') instead of the true dynamics; evaluation uses the true dynamics"),
    GYRO_O_FLAG("quiet", 'q', finetune_args, tc.quiet, "no progress line"),
    GYRO_O_STR("progress-stream", 0, finetune_args, progress, "FILE", NULL,
               "also write the progress as a gyro stream of TrainingProgress records (stage \"rl\"; "
               "one a second and a last one at the end, each flushed: FILE may be a FIFO; '-': stdout)"),
    GYRO_O_END,
};

const gyro_cmd_spec gyro_spec_rl_finetune = {
    "rl finetune", "--env ENV [options] [--out MODEL]",
    "Fine-tune a policy (one-block transformer with multi-head latent attention and a "
    "mixture-of-experts FFN, Euclidean or on the Poincare ball; or a Lorentz transformer block on "
    "the hyperboloid) by GRPO: G episodes per start "
    "state from the current policy, group-relative advantages, clipped surrogate, KL penalty to "
    "a frozen reference, several epochs per batch. Seeded and reproducible. 'gyro rl --help' "
    "describes the environments; --env composite has options of its own ('gyro rl finetune --env "
    "composite --help').",
    "Output: one summary line of key=value pairs on stdout. SIGINT or SIGTERM stops after the "
    "current iteration and saves the policy to --out (exit 130). Exit status: 0 OK, 1 runtime "
    "error (I/O, NaN), 2 usage, 65 bad model file, 130 interrupted.",
    finetune_opts,
    finetune_more_help,
};

/* The range checks the table cannot say (open intervals); 0 when they hold. */
static int finetune_check(const char *cmd, const finetune_args *o)
{
    if (!(o->tc.lr > 0)) return gyro_cli_usage_error(cmd, "--lr must be > 0");
    if (!(o->tc.grpo.clip_eps > 0 && o->tc.grpo.clip_eps < 1)) return gyro_cli_usage_error(cmd, "--clip must be in (0, 1)");
    if (!(o->tc.grpo.kl_beta >= 0)) return gyro_cli_usage_error(cmd, "--beta must be >= 0");
    if (!(o->tc.balance_alpha >= 0)) return gyro_cli_usage_error(cmd, "--balance must be >= 0");
    if (!(o->curvature > 0)) return gyro_cli_usage_error(cmd, "--curvature must be > 0");
    if (o->top_k > o->experts)
        return gyro_cli_usage_error(cmd, "--moe-top-k %d exceeds --experts %d", o->top_k, o->experts);
    return 0;
}

/* The policy to train: loaded from --init or new (shaped by the options); its environment in
 * o->tc.env. Returns 0, or the exit status after an error (nothing left allocated). */
static int finetune_policy(const char *cmd, finetune_args *o, gyro_rl_policy **out)
{
    gyro_rl_policy *p = NULL;
    const char *env_name = o->env;
    gyro_status s;
    if (o->init) {
        if ((s = gyro_rl_policy_load(o->init, o->batch, &p)) != GYRO_OK) return gyro_cli_fail(cmd, s);
        if (!env_name) env_name = p->env_name;
    }
    if (!env_name || !*env_name || !(o->tc.env = gyro_rl_env_find(env_name))) {
        gyro_rl_policy_free(p);
        if (!env_name || !*env_name) return gyro_cli_usage_error(cmd, "--env is required");
        return gyro_cli_usage_error(cmd, "unknown environment '%s' (root, vdp, unicycle)", env_name);
    }
    if (!p) {
        const int geo = finetune_geometry(o->geometry);
        gyro_rl_policy_config pc = gyro_rl_policy_config_default(geo, o->tc.env->obs_dim, o->tc.env->n_actions);
        gyro_rl_policy_config_resize(&pc, o->width, o->latent);
        pc.curvature = o->curvature;
        if (geo != GYRO_RL_GEOMETRY_LORENTZ) {
            pc.moe.n_routed = o->experts;
            pc.moe.top_k = o->top_k;
        }
        if ((s = gyro_rl_policy_new(&pc, o->tc.seed, o->batch, &p)) != GYRO_OK) return gyro_cli_fail(cmd, s);
    }
    snprintf(p->env_name, sizeof p->env_name, "%s", o->tc.env->name);
    *out = p;
    return 0;
}

/* The frozen reference (--ref) and the learned transition model (--transition) of training. */
static gyro_status finetune_ref(finetune_args *o, const gyro_rl_policy *p, gyro_rl_policy **ref)
{
    gyro_status s;
    if (o->ref) {
        if ((s = gyro_rl_policy_load(o->ref, 1, ref)) != GYRO_OK) return s;
        if ((*ref)->lay.n_params != p->lay.n_params || (*ref)->cfg.hyperbolic != p->cfg.hyperbolic)
            return gyro_error_set(GYRO_ERR_USAGE, "%s: the reference policy has another shape", o->ref);
        o->tc.ref_params = (*ref)->params;
    }
    if (o->transition) { /* rollouts from the learned model, evaluation on the true dynamics */
        const gyro_rl_env *menv;
        if ((s = gyro_rl_env_model_open(o->tc.env, o->transition, &menv)) != GYRO_OK) return s;
        o->tc.eval_env = o->tc.env;
        o->tc.env = menv;
    }
    return GYRO_OK;
}

static void finetune_summary(const gyro_rl_train_config *tc, const gyro_rl_policy *p, const gyro_rl_train_result *r)
{
    long total = 0;
    for (int i = 0; i < r->n_experts; i++) total += r->expert_load[i];
    printf("env=%s geometry=%s seed=%llu iterations=%d steps=%ld steps_to_target=%ld "
           "target=%g metric=%s final_metric=%.6g best_metric=%.6g final_reward=%.6g "
           "batch_reward=%.6g kl=%.4g clip_fraction=%.4g seconds=%.3f cpu_seconds=%.3f expert_load=",
           tc->env->name, gyro_rl_policy_geometry_name(p->cfg.hyperbolic),
           (unsigned long long)tc->seed, tc->iterations, r->steps, r->steps_to_target, tc->target,
           tc->env->metric_name, r->final_metric, r->best_metric, r->final_reward, r->batch_reward,
           r->kl, r->clip_fraction, r->seconds, r->cpu_seconds);
    for (int i = 0; i < r->n_experts; i++)
        printf("%s%.3f", i ? "," : "", total ? (double)r->expert_load[i] / total : 0.0);
    printf("\n");
}

static int finetune(int argc, char **argv)
{
    const char *cmd = "rl finetune";
    finetune_args o = {.tc = gyro_rl_train_config_default()};
    unsigned marks = 0;
    int first, rc = gyro_opts_parse_marks(&gyro_spec_rl_finetune, argc, argv, &o, &first, &marks);
    if (rc != GYRO_OPTS_CONTINUE) return rc;
    if (first < argc) return gyro_cli_usage_error(cmd, "unexpected argument '%s'", argv[first]);
    if ((rc = finetune_check(cmd, &o))) return rc;
    if ((marks & MARK_MLA_MOE) && finetune_geometry(o.geometry) == GYRO_RL_GEOMETRY_LORENTZ)
        return gyro_cli_usage_error(cmd, "--latent, --experts and --moe-top-k shape the MLA + MoE "
                                    "block; the Lorentz policy has none (its block: --width)");
    /* under mpirun: synchronous data parallelism over the ranks (grpo_train.h); rank 0 prints,
     * checkpoints and writes --out */
    gyro_mpi_comm *comm = NULL;
    gyro_status s = gyro_mpi_open(&comm);
    if (s != GYRO_OK) return gyro_cli_fail(cmd, s);
    const gyro_sync *sy = gyro_mpi_sync(comm);
    int alone = 0;
    if (sy->rank != 0) {
        o.log = 0;
        o.tc.quiet = 1;
        o.progress = NULL;
    }
    o.tc.sync = sy;
    if (o.log) o.tc.report = log_report;
    s = gyro_sync_check_same(sy, gyro_cli_args_hash(argc, argv), "the command line");
    if (s != GYRO_OK) {
        rc = gyro_cli_fail(cmd, s);
        gyro_mpi_close(comm, rc, s != GYRO_ERR_USAGE);
        return rc;
    }
    if (sy->size > 1 && !o.tc.quiet)
        fprintf(stderr, "gyro rl finetune: training over %d ranks, gradients all-reduced every step\n", sy->size);

    gyro_rl_policy *p = NULL, *ref = NULL;
    gyro_blas_set_threads(1); /* the products are small: threads cost more than they save */
    if ((rc = finetune_policy(cmd, &o, &p))) {
        gyro_sync_agree(sy, GYRO_ERR_USAGE, &alone);   /* its message is printed already */
        gyro_mpi_close(comm, rc, alone);
        return rc;
    }
    o.tc.checkpoint = o.out;
    o.tc.report_ctx = (void *)o.tc.env;
    s = finetune_ref(&o, p, &ref);
    s = gyro_sync_agree(sy, s, &alone);
    gyro_rl_train_result r;
    if (s == GYRO_OK) {
        o.tc.stop = &stop_requested;
        struct sigaction sa, old_int, old_term;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, &old_int);
        sigaction(SIGTERM, &sa, &old_term);
        gyro_progress_stream *ps = NULL;
        if (o.progress) s = gyro_progress_stream_open(o.progress, "rl", 0, 1.0, &ps);
        if (s == GYRO_OK) {
            s = gyro_rl_train(p, &o.tc, &r);
            alone = s == GYRO_ERR_UNAVAILABLE && sy->size > 1;   /* the all-reduce failed: a rank died */
        }
        gyro_status ps_st = gyro_progress_stream_close(ps);
        if (s == GYRO_OK) s = ps_st;
        sigaction(SIGINT, &old_int, NULL);
        sigaction(SIGTERM, &old_term, NULL);
    }
    if (s == GYRO_OK && sy->rank == 0) finetune_summary(&o.tc, p, &r);
    gyro_rl_policy_free(p);
    gyro_rl_policy_free(ref);
    gyro_rl_env_model_close();
    if (s != GYRO_OK && sy->size > 1) s = gyro_error_prefix(s, "rank %d", sy->rank);
    rc = s == GYRO_OK ? 0 : gyro_cli_fail(cmd, s);
    gyro_mpi_close(comm, rc, alone);
    return rc;
}

typedef struct eval_args {
    const char *model;
    int episodes, greedy;
    uint64_t seed;
} eval_args;

static const gyro_opt eval_opts[] = {
    GYRO_O_STR("model", 'm', eval_args, model, "MODEL", NULL, "the policy file (required)"),
    GYRO_O_INT("eval", 0, eval_args, episodes, "N", "32", 1, 1000000, "evaluation episodes"),
    GYRO_O_FLAG("greedy-eval", 0, eval_args, greedy, "evaluate the argmax policy (default: sampled actions)"),
    GYRO_O_SEED("seed", 's', eval_args, seed, "1", "seed of the sampled actions"),
    GYRO_O_END,
};

const gyro_cmd_spec gyro_spec_rl_eval = {
    "rl eval", "--model MODEL [--eval N] [--greedy-eval] [--seed S]",
    "Evaluate a policy of 'gyro rl finetune' on its environment: mean metric and reward over N "
    "episodes, printed as one line of key=value pairs.",
    NULL,
    eval_opts,
    NULL,
};

static int eval_cmd(int argc, char **argv)
{
    const char *cmd = "rl eval";
    eval_args o = {0};
    int first, rc = gyro_opts_parse(&gyro_spec_rl_eval, argc, argv, &o, &first);
    if (rc != GYRO_OPTS_CONTINUE) return rc;
    if (first < argc) return gyro_cli_usage_error(cmd, "unexpected argument '%s'", argv[first]);
    if (!o.model) return gyro_cli_usage_error(cmd, "--model is required");
    gyro_rl_policy *p;
    gyro_blas_set_threads(1);
    gyro_status s = gyro_rl_policy_load(o.model, 256, &p);
    if (s != GYRO_OK) return gyro_cli_fail(cmd, s);
    const gyro_rl_env *env = gyro_rl_env_find(p->env_name);
    if (!env) {
        gyro_rl_policy_free(p);
        return gyro_cli_fail(cmd, gyro_error_set(GYRO_ERR_FORMAT, "%s: unknown environment '%s' in the model",
                                                 o.model, p->env_name));
    }
    double metric, reward;
    gyro_rng rng;
    gyro_rng_seed(&rng, o.seed);
    s = gyro_rl_evaluate(p, env, o.episodes, o.greedy ? NULL : &rng, &metric, &reward);
    if (s == GYRO_OK)
        printf("env=%s geometry=%s episodes=%d policy=%s metric=%s mean_metric=%.6g mean_reward=%.6g\n",
               env->name, gyro_rl_policy_geometry_name(p->cfg.hyperbolic), o.episodes,
               o.greedy ? "greedy" : "sampled", env->metric_name, metric, reward);
    gyro_rl_policy_free(p);
    return s == GYRO_OK ? 0 : gyro_cli_fail(cmd, s);
}

typedef struct transition_args {
    gyro_rl_transition_config tc; /* the library's defaults (gyro_rl_transition_config_default) */
    const char *env;
    int geometry;
} transition_args;

static const gyro_opt transition_opts[] = {
    GYRO_O_STR("env", 'e', transition_args, env, "ENV", NULL, "environment: root, vdp, unicycle or primefield (required)"),
    GYRO_O_CHOICE("geometry", 'g', transition_args, geometry, "G", GEOMETRIES, NULL,
                  "hyperbolic (Hyper-T, default) or euclidean (Vanilla-T)"),
    GYRO_O_INT("episodes", 0, transition_args, tc.train_episodes, "N", NULL, 1, 1000000,
               "episodes of training data (default 200)"),
    GYRO_O_INT("test-episodes", 0, transition_args, tc.test_episodes, "N", NULL, 1, 1000000,
               "held-out episodes (default 50)"),
    GYRO_O_INT("epochs", 'E', transition_args, tc.epochs, "E", NULL, 0, 100000, "passes over the training set (default 20)"),
    GYRO_O_INT("batch", 0, transition_args, tc.batch, "B", NULL, 1, 1 << 20, "rows per Adam step (default 256)"),
    GYRO_O_DOUBLE("lr", 'l', transition_args, tc.lr, "LR", NULL, 0, 0, "Adam learning rate (default 1e-3)"),
    GYRO_O_SEED("seed", 's', transition_args, tc.seed, NULL, "seed (default 1)"),
    GYRO_O_STR("out", 'o', transition_args, tc.out, "T", NULL,
               "save the model (atomically, with a checksum) for finetune --transition"),
    GYRO_O_FLAG("quiet", 'q', transition_args, tc.quiet, "no progress line"),
    GYRO_O_END,
};

const gyro_cmd_spec gyro_spec_rl_transition = {
    "rl transition", "--env ENV [--geometry G] [--episodes N] [--test-episodes N] [--epochs E]\n"
                     " [--batch B] [--lr LR] [--seed S] [-q] [--out T]",
    "Learn the environment's transition (s, a) -> (s' - s, stage cost) with the policy's network on "
    "random rollouts and report the one-step error on held-out rollouts (standardised MSE; raw RMSE "
    "of s' against the copy baseline s' = s), as one line of key=value pairs.",
    NULL,
    transition_opts,
    NULL,
};

static int transition_cmd(int argc, char **argv)
{
    const char *cmd = "rl transition";
    transition_args o = {.tc = gyro_rl_transition_config_default()};
    o.geometry = o.tc.hyperbolic ? 0 : 1;
    int first, rc = gyro_opts_parse(&gyro_spec_rl_transition, argc, argv, &o, &first);
    if (rc != GYRO_OPTS_CONTINUE) return rc;
    gyro_rl_transition_config tc = o.tc;
    tc.hyperbolic = o.geometry % 2 == 0;
    if (first < argc) return gyro_cli_usage_error(cmd, "unexpected argument '%s'", argv[first]);
    if (!(tc.lr > 0)) return gyro_cli_usage_error(cmd, "--lr must be > 0");
    if (!o.env) return gyro_cli_usage_error(cmd, "--env is required");
    tc.env = gyro_rl_env_find(o.env);
    if (!tc.env) return gyro_cli_usage_error(cmd, "unknown environment '%s' (root, vdp, unicycle)", o.env);
    gyro_blas_set_threads(1);
    gyro_rl_transition_result r;
    tc.stop = &stop_requested;
    struct sigaction sa, old_int, old_term;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    gyro_status s = gyro_rl_transition_fit(&tc, &r);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    if (s == GYRO_ERR_INTERRUPTED) {   /* the model so far is measured and saved: report it */
        fprintf(stderr, "gyro %s: %s\n", cmd, gyro_error_message());
    } else if (s != GYRO_OK) {
        return gyro_cli_fail(cmd, s);
    }
    printf("env=%s geometry=%s seed=%llu train_rows=%ld test_rows=%ld epochs=%d train_mse=%.6g "
           "test_mse=%.6g test_state_rmse=%.6g copy_state_rmse=%.6g seconds=%.3f\n",
           tc.env->name, tc.hyperbolic ? "hyperbolic" : "euclidean", (unsigned long long)tc.seed,
           r.train_rows, r.test_rows, tc.epochs, r.train_mse, r.test_mse, r.test_state_rmse,
           r.test_copy_rmse, r.seconds);
    return s == GYRO_ERR_INTERRUPTED ? gyro_status_exit_code(s) : 0;
}

int gyro_cmd_rl(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "finetune"))
        return gyro_cli_is_composite(argc - 1, argv + 1)
                   ? gyro_cli_rl_composite_finetune(argc - 1, argv + 1)
                   : finetune(argc - 1, argv + 1);
    if (!strcmp(argv[1], "eval"))
        return gyro_cli_is_composite(argc - 1, argv + 1) ? gyro_cli_rl_composite_eval(argc - 1, argv + 1)
                                                         : eval_cmd(argc - 1, argv + 1);
    if (!strcmp(argv[1], "transition")) return transition_cmd(argc - 1, argv + 1);
    return gyro_cli_usage_error("rl", "unknown subcommand '%s' (finetune, eval, transition)", argv[1]);
}

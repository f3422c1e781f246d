/* cmd_rl.c — `gyro rl finetune`: GRPO fine-tuning of the MLA + MoE policy on an environment.
 *
 *   gyro rl finetune --env root|vdp|unicycle [--geometry hyperbolic|euclidean] [options] --out M
 *   gyro rl eval --model M [--eval N]
 *
 * A thin wrapper over gyro_rl_train / gyro_rl_evaluate (models/rl/grpo_train.h). The summary is
 * one line of key=value pairs on stdout (machine-readable: the benchmarks parse it); the
 * progress line goes to stderr.
 */
#include <getopt.h>
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
#include "pipeline/cli/cmd_rl_composite.h"

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
            "mixture-of-experts FFN, Euclidean or on the Poincare ball) by GRPO: G episodes per\n"
            "start state from the current policy, group-relative advantages, clipped surrogate,\n"
            "KL penalty to a frozen reference, several epochs per batch. Seeded and reproducible.\n"
            "\n"
            "Environments:\n");
    for (const gyro_rl_env *const *e = gyro_rl_env_all(); *e; e++)
        fprintf(out, "  %-10s %s\n", (*e)->name, (*e)->description);
    fprintf(out,
            "  %-10s %s\n", "composite",
            "composite intents step by step from Examples ('gyro rl finetune --env composite --help')");
    fprintf(out,
            "\n"
            "finetune options:\n"
            "  -e, --env ENV            environment (required unless --init gives one)\n"
            "  -g, --geometry G         hyperbolic (Hyper-T, default) or euclidean (Vanilla-T)\n"
            "  -i, --init MODEL         start from a saved policy instead of a fresh one\n"
            "  -r, --ref MODEL          frozen KL reference (default: the starting policy)\n"
            "  -o, --out MODEL          write the policy here (atomically; checkpoints too)\n"
            "  -n, --iterations N       GRPO iterations (default 200)\n"
            "  -S, --states N           start states per batch (default 16)\n"
            "  -G, --group G            episodes per start state (default 8)\n"
            "  -E, --epochs E           gradient steps per batch (default 2)\n"
            "  -l, --lr LR              Adam learning rate (default 3e-4)\n"
            "  -c, --clip EPS           ratio clip epsilon (default 0.2)\n"
            "  -b, --beta BETA          KL penalty weight (default 0.04)\n"
            "  -a, --balance ALPHA      MoE balance-loss weight (default 0.001)\n"
            "  -s, --seed S             seed of initialisation and sampling (default 1)\n"
            "      --eval N             evaluation episodes (default 32)\n"
            "      --greedy-eval        evaluate the argmax policy (default: sampled actions)\n"
            "      --log                after each evaluation, a line on stderr: metric, reward,\n"
            "                           KL, clip fraction and the experts' load since the last\n"
            "                           report\n"
            "      --eval-every K       iterations between evaluations (default 5)\n"
            "      --target T           record the first step whose metric is below T (1e-6)\n"
            "      --checkpoint-every K iterations between checkpoints (default 50)\n"
            "      --batch B            rows per forward/backward chunk (default 1024)\n"
            "      --width D            model width (default 32)\n"
            "      --latent C           MLA KV latent width (default 32)\n"
            "      --experts N          routed experts (default 4)\n"
            "      --top-k K            experts per token (default 1)\n"
            "      --curvature C        ball curvature (default 1)\n"
            "      --transition T       vdp, unicycle: sample the GRPO rollouts from the learned\n"
            "                           transition model T ('rl transition --out T') instead of\n"
            "                           the true dynamics; evaluation uses the true dynamics\n"
            "  -q, --quiet              no progress line\n"
            "  -h, --help               this help\n"
            "\n"
            "transition: learn the environment's transition (s, a) -> (s' - s, stage cost) with\n"
            "the same network on random rollouts and report the one-step error on held-out\n"
            "rollouts (standardised MSE; raw RMSE of s' against the copy baseline s' = s).\n"
            "--out T saves the model (atomically, with a checksum) for finetune --transition.\n"
            "\n"
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

static int parse_geometry(const char *s, int *hyp)
{
    if (!strcmp(s, "hyperbolic") || !strcmp(s, "hyper")) *hyp = 1;
    else if (!strcmp(s, "euclidean") || !strcmp(s, "vanilla")) *hyp = 0;
    else return 0;
    return 1;
}

enum { OPT_EVAL = 1000, OPT_EVAL_EVERY, OPT_TARGET, OPT_CKPT_EVERY, OPT_BATCH, OPT_WIDTH,
       OPT_LATENT, OPT_EXPERTS, OPT_TOPK, OPT_CURV, OPT_MODEL, OPT_GREEDY, OPT_SEED, OPT_LOG, OPT_TRANSITION };

static int finetune(int argc, char **argv)
{
    static const struct option opts[] = {
        {"env", required_argument, 0, 'e'},        {"geometry", required_argument, 0, 'g'},
        {"init", required_argument, 0, 'i'},       {"ref", required_argument, 0, 'r'},
        {"out", required_argument, 0, 'o'},        {"iterations", required_argument, 0, 'n'},
        {"states", required_argument, 0, 'S'},     {"group", required_argument, 0, 'G'},
        {"epochs", required_argument, 0, 'E'},     {"lr", required_argument, 0, 'l'},
        {"clip", required_argument, 0, 'c'},       {"beta", required_argument, 0, 'b'},
        {"balance", required_argument, 0, 'a'},    {"seed", required_argument, 0, 's'},
        {"eval", required_argument, 0, OPT_EVAL},  {"eval-every", required_argument, 0, OPT_EVAL_EVERY},
        {"target", required_argument, 0, OPT_TARGET},
        {"checkpoint-every", required_argument, 0, OPT_CKPT_EVERY},
        {"batch", required_argument, 0, OPT_BATCH}, {"width", required_argument, 0, OPT_WIDTH},
        {"latent", required_argument, 0, OPT_LATENT}, {"experts", required_argument, 0, OPT_EXPERTS},
        {"top-k", required_argument, 0, OPT_TOPK}, {"curvature", required_argument, 0, OPT_CURV},
        {"greedy-eval", no_argument, 0, OPT_GREEDY}, {"log", no_argument, 0, OPT_LOG},
        {"transition", required_argument, 0, OPT_TRANSITION},
        {"quiet", no_argument, 0, 'q'},            {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    const char *cmd = "rl finetune";
    gyro_rl_train_config tc = gyro_rl_train_config_default();
    const char *env_name = NULL, *init = NULL, *ref_path = NULL, *out = NULL, *trans = NULL;
    int hyp = 1, batch = 1024, width = 32, latent = 32, experts = 4, top_k = 1;
    double curvature = 1.0, d;
    long v;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "e:g:i:r:o:n:S:G:E:l:c:b:a:s:qh", opts, NULL)) != -1) {
        switch (c) {
        case 'e': env_name = optarg; break;
        case 'g':
            if (!parse_geometry(optarg, &hyp))
                return gyro_cli_usage_error(cmd, "--geometry must be hyperbolic or euclidean, got '%s'", optarg);
            break;
        case 'i': init = optarg; break;
        case 'r': ref_path = optarg; break;
        case 'o': out = optarg; break;
        case 'n': if (!gyro_cli_parse_long(cmd, "--iterations", optarg, 0, 100000000, &v)) return 2; tc.iterations = (int)v; break;
        case 'S': if (!gyro_cli_parse_long(cmd, "--states", optarg, 1, 1000000, &v)) return 2; tc.n_states = (int)v; break;
        case 'G': if (!gyro_cli_parse_long(cmd, "--group", optarg, 2, 100000, &v)) return 2; tc.group = (int)v; break;
        case 'E': if (!gyro_cli_parse_long(cmd, "--epochs", optarg, 1, 10000, &v)) return 2; tc.epochs = (int)v; break;
        case 'l':
            if (!gyro_cli_parse_double(cmd, "--lr", optarg, &tc.lr)) return 2;
            if (!(tc.lr > 0)) return gyro_cli_usage_error(cmd, "--lr must be > 0");
            break;
        case 'c':
            if (!gyro_cli_parse_double(cmd, "--clip", optarg, &tc.grpo.clip_eps)) return 2;
            if (!(tc.grpo.clip_eps > 0 && tc.grpo.clip_eps < 1)) return gyro_cli_usage_error(cmd, "--clip must be in (0, 1)");
            break;
        case 'b':
            if (!gyro_cli_parse_double(cmd, "--beta", optarg, &tc.grpo.kl_beta)) return 2;
            if (tc.grpo.kl_beta < 0) return gyro_cli_usage_error(cmd, "--beta must be >= 0");
            break;
        case 'a':
            if (!gyro_cli_parse_double(cmd, "--balance", optarg, &tc.balance_alpha)) return 2;
            if (tc.balance_alpha < 0) return gyro_cli_usage_error(cmd, "--balance must be >= 0");
            break;
        case 's': if (!gyro_cli_parse_seed(cmd, "--seed", optarg, &tc.seed)) return 2; break;
        case OPT_EVAL: if (!gyro_cli_parse_long(cmd, "--eval", optarg, 1, 1000000, &v)) return 2; tc.eval_episodes = (int)v; break;
        case OPT_EVAL_EVERY: if (!gyro_cli_parse_long(cmd, "--eval-every", optarg, 1, 100000000, &v)) return 2; tc.eval_every = (int)v; break;
        case OPT_TARGET: if (!gyro_cli_parse_double(cmd, "--target", optarg, &tc.target)) return 2; break;
        case OPT_CKPT_EVERY: if (!gyro_cli_parse_long(cmd, "--checkpoint-every", optarg, 0, 100000000, &v)) return 2; tc.checkpoint_every = (int)v; break;
        case OPT_BATCH: if (!gyro_cli_parse_long(cmd, "--batch", optarg, 1, 1 << 20, &v)) return 2; batch = (int)v; break;
        case OPT_WIDTH: if (!gyro_cli_parse_long(cmd, "--width", optarg, 2, 4096, &v)) return 2; width = (int)v; break;
        case OPT_LATENT: if (!gyro_cli_parse_long(cmd, "--latent", optarg, 1, 4096, &v)) return 2; latent = (int)v; break;
        case OPT_EXPERTS: if (!gyro_cli_parse_long(cmd, "--experts", optarg, 1, GYRO_RL_MAX_EXPERTS, &v)) return 2; experts = (int)v; break;
        case OPT_TOPK: if (!gyro_cli_parse_long(cmd, "--top-k", optarg, 1, GYRO_RL_MAX_EXPERTS, &v)) return 2; top_k = (int)v; break;
        case OPT_CURV:
            if (!gyro_cli_parse_double(cmd, "--curvature", optarg, &d)) return 2;
            if (!(d > 0)) return gyro_cli_usage_error(cmd, "--curvature must be > 0");
            curvature = d;
            break;
        case OPT_GREEDY: tc.eval_greedy = 1; break;
        case OPT_LOG: tc.report = log_report; break;
        case OPT_TRANSITION: trans = optarg; break;
        case 'q': tc.quiet = 1; break;
        case 'h': usage(stdout); return 0;
        default: return gyro_cli_usage_error(cmd, "unknown option or missing argument");
        }
    }
    if (optind < argc) return gyro_cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
    if (top_k > experts) return gyro_cli_usage_error(cmd, "--top-k %d exceeds --experts %d", top_k, experts);

    gyro_rl_policy *p = NULL, *ref = NULL;
    gyro_status s;
    gyro_blas_set_threads(1); /* the products are small: threads cost more than they save */
    if (init) {
        s = gyro_rl_policy_load(init, batch, &p);
        if (s != GYRO_OK) return gyro_cli_fail(cmd, s);
        if (!env_name) env_name = p->env_name;
    }
    if (!env_name || !*env_name) {
        gyro_rl_policy_free(p);
        return gyro_cli_usage_error(cmd, "--env is required");
    }
    tc.env = gyro_rl_env_find(env_name);
    if (!tc.env) {
        gyro_rl_policy_free(p);
        return gyro_cli_usage_error(cmd, "unknown environment '%s' (root, vdp, unicycle)", env_name);
    }
    if (!p) {
        gyro_rl_policy_config pc = gyro_rl_policy_config_default(hyp, tc.env->obs_dim, tc.env->n_actions);
        pc.curvature = curvature;
        pc.d_model = width;
        pc.mla.d_kv_latent = latent;
        pc.mla.d_head = width / pc.mla.n_heads > 0 ? width / pc.mla.n_heads : 1;
        pc.moe.d_ffn = width;
        pc.moe.n_routed = experts;
        pc.moe.top_k = top_k;
        s = gyro_rl_policy_new(&pc, tc.seed, batch, &p);
        if (s != GYRO_OK) return gyro_cli_fail(cmd, s);
    }
    snprintf(p->env_name, sizeof p->env_name, "%s", tc.env->name);
    if (ref_path) {
        s = gyro_rl_policy_load(ref_path, 1, &ref);
        if (s != GYRO_OK) {
            gyro_rl_policy_free(p);
            return gyro_cli_fail(cmd, s);
        }
        if (ref->lay.n_params != p->lay.n_params || ref->cfg.hyperbolic != p->cfg.hyperbolic) {
            gyro_rl_policy_free(p);
            gyro_rl_policy_free(ref);
            return gyro_cli_fail(cmd, gyro_error_set(GYRO_ERR_USAGE,
                                                     "%s: the reference policy has another shape", ref_path));
        }
        tc.ref_params = ref->params;
    }
    tc.checkpoint = out;
    tc.report_ctx = (void *)tc.env;
    if (trans) { /* rollouts from the learned model, evaluation on the true dynamics */
        const gyro_rl_env *menv;
        s = gyro_rl_env_model_open(tc.env, trans, &menv);
        if (s != GYRO_OK) {
            gyro_rl_policy_free(p);
            gyro_rl_policy_free(ref);
            return gyro_cli_fail(cmd, s);
        }
        tc.eval_env = tc.env;
        tc.env = menv;
    }
    tc.stop = &stop_requested;
    struct sigaction sa, old_int, old_term;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    gyro_rl_train_result r;
    s = gyro_rl_train(p, &tc, &r);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    if (s == GYRO_OK) {
        long total = 0;
        for (int i = 0; i < r.n_experts; i++) total += r.expert_load[i];
        printf("env=%s geometry=%s seed=%llu iterations=%d steps=%ld steps_to_target=%ld "
               "target=%g metric=%s final_metric=%.6g best_metric=%.6g final_reward=%.6g "
               "batch_reward=%.6g kl=%.4g clip_fraction=%.4g seconds=%.3f cpu_seconds=%.3f expert_load=",
               tc.env->name, p->cfg.hyperbolic ? "hyperbolic" : "euclidean",
               (unsigned long long)tc.seed, tc.iterations, r.steps, r.steps_to_target, tc.target,
               tc.env->metric_name, r.final_metric, r.best_metric, r.final_reward, r.batch_reward,
               r.kl, r.clip_fraction, r.seconds, r.cpu_seconds);
        for (int i = 0; i < r.n_experts; i++)
            printf("%s%.3f", i ? "," : "", total ? (double)r.expert_load[i] / total : 0.0);
        printf("\n");
    }
    gyro_rl_policy_free(p);
    gyro_rl_policy_free(ref);
    gyro_rl_env_model_close();
    return s == GYRO_OK ? 0 : gyro_cli_fail(cmd, s);
}

static int eval_cmd(int argc, char **argv)
{
    static const struct option opts[] = {
        {"model", required_argument, 0, OPT_MODEL}, {"eval", required_argument, 0, OPT_EVAL},
        {"greedy-eval", no_argument, 0, OPT_GREEDY}, {"seed", required_argument, 0, OPT_SEED},
        {"help", no_argument, 0, 'h'},              {0, 0, 0, 0}};
    const char *cmd = "rl eval", *model = NULL;
    int n = 32, c, greedy = 0;
    unsigned long long seed = 1;
    long v;
    optind = 1;
    while ((c = getopt_long(argc, argv, "m:h", opts, NULL)) != -1) {
        switch (c) {
        case 'm':
        case OPT_MODEL: model = optarg; break;
        case OPT_EVAL: if (!gyro_cli_parse_long(cmd, "--eval", optarg, 1, 1000000, &v)) return 2; n = (int)v; break;
        case OPT_GREEDY: greedy = 1; break;
        case OPT_SEED: {
            uint64_t v;
            if (!gyro_cli_parse_seed(cmd, "--seed", optarg, &v)) return 2;
            seed = v;
            break;
        }
        case 'h': usage(stdout); return 0;
        default: return gyro_cli_usage_error(cmd, "unknown option or missing argument");
        }
    }
    if (optind < argc) return gyro_cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
    if (!model) return gyro_cli_usage_error(cmd, "--model is required");
    gyro_rl_policy *p;
    gyro_blas_set_threads(1);
    gyro_status s = gyro_rl_policy_load(model, 256, &p);
    if (s != GYRO_OK) return gyro_cli_fail(cmd, s);
    const gyro_rl_env *env = gyro_rl_env_find(p->env_name);
    if (!env) {
        gyro_rl_policy_free(p);
        return gyro_cli_fail(cmd, gyro_error_set(GYRO_ERR_FORMAT, "%s: unknown environment '%s' in the model",
                                                 model, p->env_name));
    }
    double metric, reward;
    gyro_rng rng;
    gyro_rng_seed(&rng, seed);
    s = gyro_rl_evaluate(p, env, n, greedy ? NULL : &rng, &metric, &reward);
    if (s == GYRO_OK)
        printf("env=%s geometry=%s episodes=%d policy=%s metric=%s mean_metric=%.6g mean_reward=%.6g\n",
               env->name, p->cfg.hyperbolic ? "hyperbolic" : "euclidean", n,
               greedy ? "greedy" : "sampled", env->metric_name, metric, reward);
    gyro_rl_policy_free(p);
    return s == GYRO_OK ? 0 : gyro_cli_fail(cmd, s);
}

enum { OPT_EPISODES = 2000, OPT_TEST_EPISODES };

static int transition_cmd(int argc, char **argv)
{
    static const struct option opts[] = {
        {"env", required_argument, 0, 'e'},     {"geometry", required_argument, 0, 'g'},
        {"episodes", required_argument, 0, OPT_EPISODES},
        {"test-episodes", required_argument, 0, OPT_TEST_EPISODES},
        {"epochs", required_argument, 0, 'E'},  {"batch", required_argument, 0, OPT_BATCH},
        {"lr", required_argument, 0, 'l'},      {"seed", required_argument, 0, 's'},
        {"quiet", no_argument, 0, 'q'},         {"help", no_argument, 0, 'h'},
        {"out", required_argument, 0, 'o'},
        {0, 0, 0, 0}};
    const char *cmd = "rl transition", *env_name = NULL;
    gyro_rl_transition_config tc = gyro_rl_transition_config_default();
    long v;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "e:g:E:l:s:o:qh", opts, NULL)) != -1) {
        switch (c) {
        case 'o': tc.out = optarg; break;
        case 'e': env_name = optarg; break;
        case 'g':
            if (!parse_geometry(optarg, &tc.hyperbolic))
                return gyro_cli_usage_error(cmd, "--geometry must be hyperbolic or euclidean, got '%s'", optarg);
            break;
        case OPT_EPISODES: if (!gyro_cli_parse_long(cmd, "--episodes", optarg, 1, 1000000, &v)) return 2; tc.train_episodes = (int)v; break;
        case OPT_TEST_EPISODES: if (!gyro_cli_parse_long(cmd, "--test-episodes", optarg, 1, 1000000, &v)) return 2; tc.test_episodes = (int)v; break;
        case 'E': if (!gyro_cli_parse_long(cmd, "--epochs", optarg, 0, 100000, &v)) return 2; tc.epochs = (int)v; break;
        case OPT_BATCH: if (!gyro_cli_parse_long(cmd, "--batch", optarg, 1, 1 << 20, &v)) return 2; tc.batch = (int)v; break;
        case 'l':
            if (!gyro_cli_parse_double(cmd, "--lr", optarg, &tc.lr)) return 2;
            if (!(tc.lr > 0)) return gyro_cli_usage_error(cmd, "--lr must be > 0");
            break;
        case 's': if (!gyro_cli_parse_seed(cmd, "--seed", optarg, &tc.seed)) return 2; break;
        case 'q': tc.quiet = 1; break;
        case 'h': usage(stdout); return 0;
        default: return gyro_cli_usage_error(cmd, "unknown option or missing argument");
        }
    }
    if (optind < argc) return gyro_cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
    if (!env_name) return gyro_cli_usage_error(cmd, "--env is required");
    tc.env = gyro_rl_env_find(env_name);
    if (!tc.env) return gyro_cli_usage_error(cmd, "unknown environment '%s' (root, vdp, unicycle)", env_name);
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
    if (!strcmp(argv[1], "eval")) return eval_cmd(argc - 1, argv + 1);
    if (!strcmp(argv[1], "transition")) return transition_cmd(argc - 1, argv + 1);
    return gyro_cli_usage_error("rl", "unknown subcommand '%s' (finetune, eval, transition)", argv[1]);
}

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

#include <getopt.h>
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
#include "pipeline/example_file.h"

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

static void finetune_usage(FILE *out)
{
    fprintf(out,
            "usage: gyro rl finetune --env composite --train T.examples [--dev D.examples]\n"
            "                        [--init SFT] [--sft-out SFT] [options] --out MODEL\n"
            "\n"
            "Composite intents, step by step: the policy reads an utterance and emits atomic\n"
            "intents one at a time, then STOP; the reward is the F1 of the emitted set against the\n"
            "gold atoms (1 for the exact set). The supervised start (teacher-forced cross-entropy\n"
            "on the sorted atoms) is trained first unless --init gives one; then GRPO fine-tunes\n"
            "it against the frozen start. Greedy exact-set accuracy and F1 on --dev are reported\n"
            "before and after GRPO.\n"
            "\n"
            "  -t, --train FILE       training Examples (gyro import / generate / split)\n"
            "  -d, --dev FILE         held-out Examples (early stopping and the figures)\n"
            "  -i, --init MODEL       start from this supervised policy (skips supervised training)\n"
            "      --sft-out MODEL    also write the supervised start here\n"
            "  -o, --out MODEL        write the fine-tuned policy here (atomically)\n"
            "  -g, --geometry G       hyperbolic (default) or euclidean\n"
            "      --dim C            model width (default 64)\n"
            "      --layers L         transformer layers (default 2)\n"
            "      --heads H          attention heads (default 8)\n"
            "      --sft-epochs N     supervised epochs (default 10)\n"
            "  -n, --iterations N     GRPO iterations (default 100)\n"
            "  -S, --states N         utterances per iteration (default 16)\n"
            "  -G, --group G          episodes per utterance (default 8)\n"
            "  -E, --epochs E         gradient steps per iteration (default 2)\n"
            "  -l, --lr LR            Adam learning rate (default 1e-4)\n"
            "      --ball-lr LR       RSGD learning rate of ball rows (default 0.005)\n"
            "  -c, --clip EPS         ratio clip epsilon (default 0.2)\n"
            "  -b, --beta BETA        KL penalty weight (default 0.04)\n"
            "  -s, --seed S           seed (default 1)\n"
            "      --log              dev figures on stderr every --eval-every iterations\n"
            "      --eval-every K     (default 10)\n"
            "  -q, --quiet            no progress lines\n"
            "  -h, --help             this help\n"
            "\n"
            "Output: one summary line of key=value pairs on stdout. SIGINT or SIGTERM stops after\n"
            "the current iteration and saves the policy to --out (exit 130).\n");
}

static volatile sig_atomic_t stop_flag;
static volatile int stop_int;

static void on_signal(int sig)
{
    (void)sig;
    stop_flag = 1;
    stop_int = 1;
}

enum { O_SFT_OUT = 1000, O_DIM, O_LAYERS, O_HEADS, O_SFT_EPOCHS, O_BALL_LR, O_LOG, O_EVAL_EVERY };

int gyro_cli_rl_composite_finetune(int argc, char **argv)
{
    static const struct option opts[] = {
        {"env", required_argument, 0, 'e'},      {"train", required_argument, 0, 't'},
        {"dev", required_argument, 0, 'd'},      {"init", required_argument, 0, 'i'},
        {"sft-out", required_argument, 0, O_SFT_OUT}, {"out", required_argument, 0, 'o'},
        {"geometry", required_argument, 0, 'g'}, {"dim", required_argument, 0, O_DIM},
        {"layers", required_argument, 0, O_LAYERS}, {"heads", required_argument, 0, O_HEADS},
        {"sft-epochs", required_argument, 0, O_SFT_EPOCHS},
        {"iterations", required_argument, 0, 'n'}, {"states", required_argument, 0, 'S'},
        {"group", required_argument, 0, 'G'},    {"epochs", required_argument, 0, 'E'},
        {"lr", required_argument, 0, 'l'},       {"ball-lr", required_argument, 0, O_BALL_LR},
        {"clip", required_argument, 0, 'c'},     {"beta", required_argument, 0, 'b'},
        {"seed", required_argument, 0, 's'},     {"log", no_argument, 0, O_LOG},
        {"eval-every", required_argument, 0, O_EVAL_EVERY},
        {"quiet", no_argument, 0, 'q'},          {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    const char *cmd = "rl finetune";
    const char *train_path = NULL, *dev_path = NULL, *init = NULL, *sft_out = NULL, *out = NULL;
    gyro_composite_grpo_options go = gyro_composite_grpo_options_default();
    long dim = 64, layers = 2, heads = 8, sft_epochs = 10, v;
    int hyp = 1, log = 0, c;
    double d;
    optind = 1;
    while ((c = getopt_long(argc, argv, "e:t:d:i:o:g:n:S:G:E:l:c:b:s:qh", opts, NULL)) != -1) {
        switch (c) {
        case 'e': if (strcmp(optarg, "composite")) return gyro_cli_usage_error(cmd, "--env composite expected"); break;
        case 't': train_path = optarg; break;
        case 'd': dev_path = optarg; break;
        case 'i': init = optarg; break;
        case O_SFT_OUT: sft_out = optarg; break;
        case 'o': out = optarg; break;
        case 'g':
            if (!strcmp(optarg, "hyperbolic")) hyp = 1;
            else if (!strcmp(optarg, "euclidean")) hyp = 0;
            else return gyro_cli_usage_error(cmd, "--geometry: hyperbolic or euclidean, got '%s'", optarg);
            break;
        case O_DIM: if (!gyro_cli_parse_long(cmd, "--dim", optarg, 2, 4096, &dim)) return 2; break;
        case O_LAYERS: if (!gyro_cli_parse_long(cmd, "--layers", optarg, 1, 64, &layers)) return 2; break;
        case O_HEADS: if (!gyro_cli_parse_long(cmd, "--heads", optarg, 1, 256, &heads)) return 2; break;
        case O_SFT_EPOCHS: if (!gyro_cli_parse_long(cmd, "--sft-epochs", optarg, 1, 100000, &sft_epochs)) return 2; break;
        case 'n': if (!gyro_cli_parse_long(cmd, "--iterations", optarg, 0, 100000000, &v)) return 2; go.iterations = (int)v; break;
        case 'S': if (!gyro_cli_parse_long(cmd, "--states", optarg, 1, 65536, &v)) return 2; go.batch = (int)v; break;
        case 'G': if (!gyro_cli_parse_long(cmd, "--group", optarg, 2, 4096, &v)) return 2; go.group = (int)v; break;
        case 'E': if (!gyro_cli_parse_long(cmd, "--epochs", optarg, 1, 1000, &v)) return 2; go.epochs = (int)v; break;
        case 'l': if (!gyro_cli_parse_double(cmd, "--lr", optarg, &d)) return 2; go.lr = d; break;
        case O_BALL_LR: if (!gyro_cli_parse_double(cmd, "--ball-lr", optarg, &d)) return 2; go.ball_lr = d; break;
        case 'c': if (!gyro_cli_parse_double(cmd, "--clip", optarg, &d)) return 2; go.grpo.clip_eps = d; break;
        case 'b': if (!gyro_cli_parse_double(cmd, "--beta", optarg, &d)) return 2; go.grpo.kl_beta = d; break;
        case 's': if (!gyro_cli_parse_seed(cmd, "--seed", optarg, &go.seed)) return 2; break;
        case O_LOG: log = 1; break;
        case O_EVAL_EVERY: if (!gyro_cli_parse_long(cmd, "--eval-every", optarg, 0, 100000000, &v)) return 2; go.eval_every = (int)v; break;
        case 'q': go.quiet = 1; break;
        case 'h': finetune_usage(stdout); return 0;
        default: return gyro_cli_usage_error(cmd, "unknown option or missing argument");
        }
    }
    if (optind < argc) return gyro_cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
    if (!train_path) return gyro_cli_usage_error(cmd, "--train is required with --env composite");
    if (!(go.lr > 0) || !(go.ball_lr > 0) || !(go.grpo.clip_eps > 0) || !(go.grpo.kl_beta >= 0))
        return gyro_cli_usage_error(cmd, "--lr, --ball-lr and --clip must be positive, --beta >= 0");
    gyro_blas_set_threads(1);

    gyro_example_set train = {0}, dev = {0};
    gyro_composite_data dtrain = {0}, ddev = {0};
    gyro_composite_policy *p = NULL, *ref = NULL;
    gyro_status s = gyro_example_file_read(&train, train_path, NULL);
    if (s) s = gyro_error_prefix(s, "%s", train_path);
    if (!s && dev_path && (s = gyro_example_file_read(&dev, dev_path, NULL)))
        s = gyro_error_prefix(s, "%s", dev_path);
    if (!s && train.n == 0) s = gyro_error_set(GYRO_ERR_DATA, "%s: no example", train_path);
    gyro_train_result tr = {0};
    double t0 = gyro_now(), sft_seconds = 0;
    int interrupted = 0;
    /* SIGINT/SIGTERM stop the supervised start and GRPO alike after the current step; what was
     * trained so far is saved */
    struct sigaction sa, old_int, old_term;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    if (!s && init) {
        s = gyro_composite_policy_load(init, &p);
        if (!s) s = gyro_composite_policy_load(init, &ref);
    } else if (!s) {
        gyro_train_options to;
        gyro_train_options_init(&to, hyp ? GYRO_TF_GEOMETRY_HYPERBOLIC : GYRO_TF_GEOMETRY_EUCLIDEAN);
        to.model.dim = (int)dim;
        to.model.n_layers = (int)layers;
        to.model.n_heads = (int)heads;
        to.model.head_dim = (int)((dim + heads - 1) / heads);
        to.model.ffn_dim = 2 * (int)dim;
        to.epochs = (int)sft_epochs;
        to.sgdr.t0 = 0;
        to.seed = go.seed;
        to.quiet = go.quiet;
        to.dev_fraction = 0;
        to.stop = &stop_int;
        s = gyro_composite_supervise(&to, &train, dev_path ? &dev : NULL, &p, &tr);
        sft_seconds = gyro_now() - t0;
        if (s == GYRO_ERR_INTERRUPTED && p) {   /* the best supervised policy so far */
            if (!go.quiet) fprintf(stderr, "gyro %s: %s\n", cmd, gyro_error_message());
            interrupted = 1;
            s = GYRO_OK;
        }
        if (!s && sft_out) s = gyro_classifier_save(p->clf, sft_out);
        if (!s && !interrupted) s = gyro_composite_policy_clone(p, &ref);   /* the frozen reference */
    }
    if (!s && stop_flag) interrupted = 1;   /* a signal after the supervised start: no GRPO */
    double ex0 = NAN, f0 = NAN, ex1 = NAN, f1 = NAN;
    gyro_composite_grpo_result gr = {0};
    if (!s && !interrupted) {
        s = gyro_composite_data_build(p, &train, &dtrain);
        if (!s && dev_path) s = gyro_composite_data_build(p, &dev, &ddev);
        if (!s && dev_path) s = gyro_composite_evaluate(p, &ddev, &ex0, &f0);
        if (!s && log) fprintf(stderr, "supervised start: dev exact %.4f  dev F1 %.4f\n", ex0, f0);
    }
    if (!s && !interrupted) {
        go.stop = &stop_int;
        go.log = log ? stderr : NULL;
        s = gyro_composite_grpo(p, ref, &dtrain, dev_path ? &ddev : NULL, &go, &gr);
        if (s == GYRO_ERR_INTERRUPTED) interrupted = 1, s = GYRO_OK;
        if (!s && dev_path) s = gyro_composite_evaluate(p, &ddev, &ex1, &f1);
    }
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    if (!s && out) s = gyro_classifier_save(p->clf, out);
    if (!s)
        printf("env=composite n_train=%d n_dev=%d actions=%d sft_epochs=%d sft_seconds=%.2f "
               "dev_exact_before=%.4f dev_f1_before=%.4f iterations=%d reward_first=%.4f "
               "reward_last=%.4f kl=%.4g grpo_seconds=%.2f dev_exact_after=%.4f dev_f1_after=%.4f\n",
               train.n, dev.n, p->n_actions, tr.epochs, sft_seconds, ex0, f0, gr.iterations,
               gr.first_reward, gr.last_reward, gr.kl, gr.seconds, ex1, f1);
    gyro_composite_data_free(&dtrain);
    gyro_composite_data_free(&ddev);
    gyro_composite_policy_free(p);
    gyro_composite_policy_free(ref);
    gyro_example_set_free(&train);
    gyro_example_set_free(&dev);
    if (s) return gyro_cli_fail(cmd, s);
    if (interrupted || stop_flag) {
        fprintf(stderr, "gyro %s: interrupted after %d iterations%s%s\n", cmd, gr.iterations,
                out ? "; policy saved to " : "", out ? out : "");
        return 130;
    }
    return 0;
}

int gyro_cli_reason_composite(int argc, char **argv)
{
    static const struct option opts[] = {
        {"env", required_argument, 0, 'e'}, {"model", required_argument, 0, 'm'},
        {"help", no_argument, 0, 'h'},      {0, 0, 0, 0}};
    const char *cmd = "reason", *model = NULL;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "e:m:h", opts, NULL)) != -1) {
        switch (c) {
        case 'e': if (strcmp(optarg, "composite")) return gyro_cli_usage_error(cmd, "--env composite expected"); break;
        case 'm': model = optarg; break;
        case 'h':
            printf("usage: gyro reason --env composite --model MODEL \"utterance\" ...\n"
                   "\n"
                   "Run a composite-intent policy (gyro rl finetune --env composite) greedily on each\n"
                   "utterance and print its steps: the atom emitted at each step with its probability,\n"
                   "then STOP, and the composite label of the emitted set.\n");
            return 0;
        default: return gyro_cli_usage_error(cmd, "unknown option or missing argument");
        }
    }
    if (!model) return gyro_cli_usage_error(cmd, "--model is required");
    if (optind >= argc) return gyro_cli_usage_error(cmd, "an utterance is required");
    gyro_blas_set_threads(1);
    gyro_composite_policy *p;
    gyro_status s = gyro_composite_policy_load(model, &p);
    if (s) return gyro_cli_fail(cmd, s);
    gyro_composite_reason_result *r = malloc(sizeof *r);
    if (!r) s = gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    for (int i = optind; !s && i < argc; i++) {
        s = gyro_composite_reason(p, argv[i], r);
        if (s) break;
        printf("utterance: %s\n", argv[i]);
        for (int k = 0; k < r->n_steps; k++)
            printf("step %d: %s  (p = %.4f)\n", k + 1, r->action[k], r->prob[k]);
        printf("intents: %s\n", r->answer);
    }
    free(r);
    gyro_composite_policy_free(p);
    return s ? gyro_cli_fail(cmd, s) : 0;
}

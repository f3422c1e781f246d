/* check_rl_composite.c — Check suite for models/rl/composite*: the F1 reward, the episode rules
 * (valid actions, STOP, repeats, the step limit), the masked log-softmax and a finite-difference
 * check of its backward, the atom markers through the tokenizer, the teacher-forced states, and
 * a small supervised + GRPO run that must learn a toy composite-intent set. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/rl/composite.h"
#include "models/rl/composite_train.h"

START_TEST(test_f1)
{
    int g[] = {3, 5}, p1[] = {5, 3}, p2[] = {3}, p3[] = {3, 7}, p4[] = {7}, u[] = {-1, 3};
    ck_assert_double_eq_tol(gyro_composite_f1(g, 2, p1, 2), 1.0, 1e-15);
    ck_assert_double_eq_tol(gyro_composite_f1(g, 2, p2, 1), 2.0 / 3.0, 1e-15);
    ck_assert_double_eq_tol(gyro_composite_f1(g, 2, p3, 2), 0.5, 1e-15);
    ck_assert_double_eq_tol(gyro_composite_f1(g, 2, p4, 1), 0.0, 1e-15);
    ck_assert_double_eq_tol(gyro_composite_f1(g, 2, NULL, 0), 0.0, 1e-15);
    ck_assert_double_eq_tol(gyro_composite_f1(NULL, 0, NULL, 0), 1.0, 1e-15);
    /* an unknown gold atom (-1) never matches, not even a -1 prediction */
    int pm[] = {-1, 3};
    ck_assert_double_eq_tol(gyro_composite_f1(u, 2, pm, 2), 0.5, 1e-15);
}
END_TEST

START_TEST(test_episode)
{
    enum { K = 4, STOP = 2 };
    int gold[] = {0, 3};
    gyro_composite_episode ep;
    unsigned char v[K];
    gyro_composite_episode_reset(&ep, gold, 2);
    ck_assert_int_eq(gyro_composite_valid(&ep, STOP, K, v), 3);
    ck_assert_int_eq(v[STOP], 0);                          /* no STOP before the first atom */
    ck_assert_int_eq(gyro_composite_step(&ep, STOP, STOP), -1);
    ck_assert_int_eq(gyro_composite_step(&ep, STOP, 3), 0);
    ck_assert_int_eq(gyro_composite_step(&ep, STOP, 3), -1); /* repeat */
    ck_assert_int_eq(gyro_composite_valid(&ep, STOP, K, v), 3);
    ck_assert(v[STOP] && !v[3] && v[0] && v[1]);
    ck_assert_double_eq_tol(gyro_composite_reward(&ep), 2.0 / 3.0, 1e-15);
    ck_assert_int_eq(gyro_composite_step(&ep, STOP, 0), 0);
    ck_assert_int_eq(ep.done, 0);
    ck_assert_int_eq(gyro_composite_step(&ep, STOP, STOP), 0);
    ck_assert_int_eq(ep.done, 1);
    ck_assert_int_eq(gyro_composite_step(&ep, STOP, 1), -1); /* after the end */
    ck_assert_int_eq(ep.n_emitted, 2);
    ck_assert_double_eq_tol(gyro_composite_reward(&ep), 1.0, 1e-15);

    /* the step limit ends an episode without STOP */
    gyro_composite_episode_reset(&ep, gold, 2);
    for (int a = 0; a < GYRO_COMPOSITE_MAX_STEPS; a++) {
        ck_assert_int_eq(ep.done, 0);
        ck_assert_int_eq(gyro_composite_step(&ep, 100, a), 0);
    }
    ck_assert_int_eq(ep.done, 1);
    ck_assert_double_eq_tol(gyro_composite_reward(&ep), 2.0 * 2 / (2 + GYRO_COMPOSITE_MAX_STEPS), 1e-15);
}
END_TEST

START_TEST(test_log_softmax_grad)
{
    enum { K = 5 };
    float z[K] = {0.3f, -1.2f, 2.0f, 0.7f, -0.1f};
    unsigned char valid[K] = {1, 0, 1, 1, 1};
    double lp[K], lp2[K];
    double lse = gyro_composite_log_softmax(lp, z, valid, K);
    ck_assert(isinf(lp[1]) && lp[1] < 0);
    double sum = 0;
    for (int k = 0; k < K; k++)
        if (valid[k]) sum += exp(lp[k]);
    ck_assert_double_eq_tol(sum, 1.0, 1e-12);
    ck_assert_double_eq_tol(lse, log(exp(0.3) + exp(2.0) + exp(0.7) + exp(-0.1)), 1e-6);
    /* FD check of d(g·logp[a])/dz, in double around float logits (step 1e-3, central) */
    for (int a = 0; a < K; a++) {
        if (!valid[a]) continue;
        float d[K] = {0};
        const double g = 0.7;
        gyro_composite_log_softmax_backward(d, lp, valid, K, a, g);
        ck_assert_float_eq(d[1], 0.0f);
        for (int k = 0; k < K; k++) {
            if (!valid[k]) continue;
            float zp[K], zm[K];
            memcpy(zp, z, sizeof z);
            memcpy(zm, z, sizeof z);
            const float h = 1e-3f;
            zp[k] += h;
            zm[k] -= h;
            gyro_composite_log_softmax(lp2, zp, valid, K);
            double fp = g * lp2[a];
            gyro_composite_log_softmax(lp2, zm, valid, K);
            double fm = g * lp2[a];
            double fd = (fp - fm) / ((double)zp[k] - (double)zm[k]);
            ck_assert_msg(fabs(fd - d[k]) < 1e-5, "a=%d k=%d fd %g analytic %g", a, k, fd, d[k]);
        }
    }
}
END_TEST

START_TEST(test_marker_tokens)
{
    char m[4];
    ck_assert_int_eq(gyro_composite_marker(0, m), 3);
    ck_assert_str_eq(m, "\xEE\x80\x80");                   /* U+E000 */
    ck_assert_int_eq(gyro_composite_marker(65, m), 3);
    ck_assert_str_eq(m, "\xEE\x81\x81");                   /* U+E041 */
    ck_assert_int_eq(gyro_composite_marker(GYRO_COMPOSITE_MAX_MARKS, m), 0);
    ck_assert_int_eq(gyro_composite_marker(-1, m), 0);
    /* markers survive normalization as tokens of their own, ahead of the utterance */
    gyro_tokenizer *t;
    ck_assert_int_eq(gyro_tokenizer_new(NULL, GYRO_TOKEN_CHARS, &t), GYRO_OK);
    char text[64];
    gyro_composite_marker(3, text);
    gyro_composite_marker(7, text + 3);
    strcpy(text + 6, "播放歌曲");
    char *const *toks;
    size_t n;
    const char *norm;
    ck_assert_int_eq(gyro_tokenizer_run(t, text, strlen(text), &toks, &n, &norm), GYRO_OK);
    ck_assert_uint_eq(n, 6);
    gyro_composite_marker(3, m);
    ck_assert_str_eq(toks[0], m);
    gyro_composite_marker(7, m);
    ck_assert_str_eq(toks[1], m);
    ck_assert_str_eq(toks[2], "播");
    gyro_tokenizer_free(t);
}
END_TEST

START_TEST(test_teacher_forced)
{
    gyro_example_set in = {0}, out = {0};
    ck_assert_int_eq(gyro_example_set_add(&in, "查一下然后播放", "query_song+play_song", 1), GYRO_OK);
    ck_assert_int_eq(gyro_example_set_add(&in, "未知", "other", 2), GYRO_OK);
    ck_assert_int_eq(gyro_example_set_add(&in, "播放", "play_song", 3), GYRO_OK);
    const char *atoms[] = {"play_song", "query_song"};
    int skipped = 0;
    ck_assert_int_eq(gyro_composite_teacher_forced(&in, atoms, 2, &out, &skipped), GYRO_OK);
    ck_assert_int_eq(skipped, 1);
    ck_assert_int_eq(out.n, 5);
    char m0[4], m1[4], buf[64];
    gyro_composite_marker(0, m0);
    gyro_composite_marker(1, m1);
    ck_assert_str_eq(out.text[0], "查一下然后播放");
    ck_assert_str_eq(out.label[0], "play_song");           /* sorted: play_song first */
    snprintf(buf, sizeof buf, "%s查一下然后播放", m0);
    ck_assert_str_eq(out.text[1], buf);
    ck_assert_str_eq(out.label[1], "query_song");
    snprintf(buf, sizeof buf, "%s%s查一下然后播放", m0, m1);
    ck_assert_str_eq(out.text[2], buf);
    ck_assert_str_eq(out.label[2], GYRO_COMPOSITE_STOP);
    ck_assert_str_eq(out.label[3], "play_song");
    ck_assert_str_eq(out.label[4], GYRO_COMPOSITE_STOP);
    ck_assert_int_eq((int)out.line[4], 3);
    gyro_example_set_free(&out);
    /* a bad label names its record */
    ck_assert_int_eq(gyro_example_set_add(&in, "坏", "a++b", 9), GYRO_OK);
    ck_assert_int_eq(gyro_composite_teacher_forced(&in, atoms, 2, &out, NULL), GYRO_ERR_DATA);
    ck_assert_ptr_nonnull(strstr(gyro_error_message(), "record 9"));
    gyro_example_set_free(&out);
    gyro_example_set_free(&in);
}
END_TEST

/* A toy set: three utterance families, one composite. */
static void toy(gyro_example_set *s)
{
    static const char *text[][2] = {
        {"播放周杰伦的晴天", "play_song"},         {"放一首晴天", "play_song"},
        {"这是什么歌", "query_song"},             {"查一下这首歌叫什么", "query_song"},
        {"这是什么歌然后播放它", "query_song+play_song"}, {"查一下再放一遍", "query_song+play_song"},
        {"把这首歌加入收藏", "add_to_favourite"}, {"收藏这首歌", "add_to_favourite"},
    };
    for (int r = 0; r < 6; r++)
        for (size_t i = 0; i < sizeof text / sizeof *text; i++)
            ck_assert_int_eq(gyro_example_set_add(s, text[i][0], text[i][1], i + 1), GYRO_OK);
}

START_TEST(test_supervise_and_grpo)
{
    gyro_example_set set = {0};
    toy(&set);
    gyro_train_options to;
    gyro_composite_supervise_options_init(&to, GYRO_TF_GEOMETRY_HYPERBOLIC, 16, 1, 2, 60);
    ck_assert_int_eq(to.model.head_dim, 8);  /* dim / heads */
    ck_assert_int_eq(to.model.ffn_dim, 32);  /* 2 dim */
    ck_assert_int_eq(to.model.n_layers, 1);
    ck_assert(to.dev_fraction == 0 && to.sgdr.t0 == 0);
    to.model.max_len = 24;
    to.optim.lr = 5e-3;
    to.patience = 0;
    to.sgdr.t0 = 0;
    to.dev_fraction = 0;
    to.quiet = 1;
    gyro_composite_policy *p = NULL, *ref = NULL;
    ck_assert_int_eq(gyro_composite_supervise(&to, &set, NULL, &p, NULL), GYRO_OK);
    ck_assert_int_eq(p->n_actions, 4);                     /* 3 atoms + STOP */
    ck_assert_int_eq(gyro_composite_policy_clone(p, &ref), GYRO_OK);
    const gyro_tf_model *a = gyro_classifier_tf_const(p->clf), *b = gyro_classifier_tf_const(ref->clf);
    ck_assert_uint_eq(a->n_params, b->n_params);
    ck_assert(!memcmp(a->params_memory, b->params_memory, a->n_params * sizeof *a->params_memory));
    ck_assert_int_eq(ref->stop, p->stop);
    for (int k = 0; k < p->n_actions; k++) ck_assert_int_eq(ref->mark[k], p->mark[k]);
    gyro_composite_data d = {0};
    ck_assert_int_eq(gyro_composite_data_build(p, &set, &d), GYRO_OK);
    double ex0, f0;
    ck_assert_int_eq(gyro_composite_evaluate(p, &d, &ex0, &f0), GYRO_OK);
    ck_assert_msg(ex0 >= 0.75, "supervised exact-set accuracy %g on its training set", ex0);
    ck_assert(f0 >= ex0);

    /* the greedy trace ends with STOP and agrees with the evaluation of that utterance */
    gyro_composite_trace tr;
    ck_assert_int_eq(gyro_composite_greedy_trace(p, &d, 4, &tr), GYRO_OK);
    ck_assert_int_eq(tr.action[tr.n_steps - 1], p->stop);
    ck_assert_int_eq(tr.ep.n_emitted, tr.n_steps - 1);
    for (int k = 0; k < tr.n_steps; k++) ck_assert(tr.prob[k] > 0 && tr.prob[k] <= 1);
    ck_assert_int_eq(gyro_composite_greedy_trace(p, &d, d.n, &tr), GYRO_ERR_USAGE);

    gyro_composite_grpo_options go = gyro_composite_grpo_options_default();
    go.iterations = 6;
    go.batch = 4;
    go.group = 4;
    go.quiet = 1;
    gyro_composite_grpo_result gr;
    ck_assert_int_eq(gyro_composite_grpo(p, ref, &d, NULL, &go, &gr), GYRO_OK);
    ck_assert_int_eq(gr.iterations, 6);
    ck_assert(gr.first_reward >= 0 && gr.first_reward <= 1 && isfinite(gr.kl) && gr.kl >= 0);
    double ex1;
    ck_assert_int_eq(gyro_composite_evaluate(p, &d, &ex1, NULL), GYRO_OK);
    ck_assert_msg(ex1 >= 0.75, "exact-set accuracy %g after GRPO", ex1);

    go.group = 1;
    ck_assert_int_eq(gyro_composite_grpo(p, ref, &d, NULL, &go, NULL), GYRO_ERR_USAGE);
    volatile int stop = 1;
    go.group = 4;
    go.stop = &stop;
    ck_assert_int_eq(gyro_composite_grpo(p, ref, &d, NULL, &go, &gr), GYRO_ERR_INTERRUPTED);
    ck_assert_int_eq(gr.iterations, 0);

    gyro_composite_data_free(&d);
    gyro_composite_policy_free(p);
    gyro_composite_policy_free(ref);

    /* from an under-trained start, GRPO raises the sampled reward */
    to.epochs = 3;
    ck_assert_int_eq(gyro_composite_supervise(&to, &set, NULL, &p, NULL), GYRO_OK);
    ck_assert_int_eq(gyro_composite_policy_clone(p, &ref), GYRO_OK);
    ck_assert_int_eq(gyro_composite_data_build(p, &set, &d), GYRO_OK);
    double e0, e1, g0, g1;
    ck_assert_int_eq(gyro_composite_evaluate(p, &d, &e0, &g0), GYRO_OK);
    go = gyro_composite_grpo_options_default();
    go.iterations = 40;
    go.batch = 8;
    go.group = 8;
    go.lr = 3e-3;
    go.ball_lr = 0.05;
    go.quiet = 1;
    ck_assert_int_eq(gyro_composite_grpo(p, ref, &d, NULL, &go, &gr), GYRO_OK);
    ck_assert_int_eq(gyro_composite_evaluate(p, &d, &e1, &g1), GYRO_OK);
    fprintf(stderr, "reward %g -> %g, exact %g -> %g, F1 %g -> %g, kl %g\n", gr.first_reward,
            gr.last_reward, e0, e1, g0, g1, gr.kl);
    ck_assert_msg(gr.last_reward > gr.first_reward + 0.05, "sampled reward %g -> %g",
                  gr.first_reward, gr.last_reward);
    ck_assert(g1 > g0);
    /* the second gradient step of an iteration sees the policy moved away from the sampling one */
    ck_assert_msg(gr.ratio_dev_max > 1e-3, "|ratio - 1| %g after a step at lr 3e-3", gr.ratio_dev_max);
    /* one step per iteration: the ratio is taken against the policy that sampled, so it is 1 */
    go.iterations = 3;
    go.epochs = 1;
    ck_assert_int_eq(gyro_composite_grpo(p, ref, &d, NULL, &go, &gr), GYRO_OK);
    ck_assert_msg(gr.ratio_dev_max < 1e-4, "|ratio - 1| %g on the first step", gr.ratio_dev_max);
    ck_assert(gr.clip_fraction == 0.0);
    /* many large steps on one batch push the ratio past the clip */
    go.epochs = 8;
    go.lr = 3e-2;
    ck_assert_int_eq(gyro_composite_grpo(p, ref, &d, NULL, &go, &gr), GYRO_OK);
    ck_assert_msg(gr.ratio_dev_max > go.grpo.clip_eps, "|ratio - 1| %g after 8 steps at lr 3e-2",
                  gr.ratio_dev_max);
    gyro_composite_data_free(&d);
    gyro_composite_policy_free(p);
    gyro_composite_policy_free(ref);
    gyro_example_set_free(&set);
}
END_TEST

/* log π(a | state of ep) for one state, through the policy's transformer. */
static double state_logp(const gyro_composite_policy *p, const gyro_composite_data *d, int i,
                         const gyro_composite_episode *ep, int a)
{
    const gyro_tf_model *tf = gyro_classifier_tf_const(p->clf);
    gyro_tf_acts *acts = NULL;
    ck_assert_int_eq(gyro_tf_acts_new(tf, 1, p->max_len, 0, &acts), GYRO_OK);
    int32_t tok[64];
    ck_assert_int_le(p->max_len, 64);
    int len = gyro_composite_encode(p, ep, d->ids + (size_t)i * d->max_len, d->len[i], tok);
    ck_assert_int_eq(gyro_tf_forward(tf, acts, tok, &len, 1, len, NULL), GYRO_OK);
    unsigned char valid[16];
    double lp[16];
    ck_assert_int_le(p->n_actions, 16);
    gyro_composite_valid(ep, p->stop, p->n_actions, valid);
    gyro_composite_log_softmax(lp, gyro_tf_logits(acts), valid, p->n_actions);
    gyro_tf_acts_free(acts);
    return lp[a];
}

/* Best score over every atom sequence (then STOP) from ep, by exhaustive search. */
static double best_sequence(const gyro_composite_policy *p, const gyro_composite_data *d, int i,
                            const gyro_composite_episode *ep)
{
    double best = -INFINITY;
    if (ep->n_emitted > 0) best = state_logp(p, d, i, ep, p->stop);
    for (int a = 0; a < p->n_actions; a++) {
        if (a == p->stop) continue;
        int dup = 0;
        for (int k = 0; k < ep->n_emitted; k++) dup |= ep->emitted[k] == a;
        if (dup) continue;
        gyro_composite_episode next = *ep;
        double s = state_logp(p, d, i, ep, a);
        gyro_composite_step(&next, p->stop, a);
        s += next.done ? 0.0 : best_sequence(p, d, i, &next);
        if (s > best) best = s;
    }
    return best;
}

START_TEST(test_beam)
{
    gyro_example_set set = {0};
    toy(&set);
    gyro_train_options to;
    gyro_composite_supervise_options_init(&to, GYRO_TF_GEOMETRY_HYPERBOLIC, 16, 1, 2, 4);
    to.model.max_len = 24;
    to.optim.lr = 5e-3;
    to.patience = 0;
    to.quiet = 1;
    gyro_composite_policy *p = NULL;
    ck_assert_int_eq(gyro_composite_supervise(&to, &set, NULL, &p, NULL), GYRO_OK);
    gyro_composite_data d = {0};
    ck_assert_int_eq(gyro_composite_data_build(p, &set, &d), GYRO_OK);
    int n = d.n;
    int *pred = malloc((size_t)n * GYRO_COMPOSITE_MAX_STEPS * sizeof *pred), *np = malloc((size_t)n * sizeof *np);
    double *sc = malloc((size_t)n * sizeof *sc);
    /* width 1 is the greedy policy */
    ck_assert_int_eq(gyro_composite_beam_decode(p, &d, 1, pred, np, sc), GYRO_OK);
    for (int i = 0; i < n; i++) {
        gyro_composite_trace tr;
        ck_assert_int_eq(gyro_composite_greedy_trace(p, &d, i, &tr), GYRO_OK);
        ck_assert_int_eq(np[i], tr.ep.n_emitted);
        double lp = 0;
        for (int k = 0; k < tr.n_steps; k++) lp += log(tr.prob[k]);
        ck_assert_double_eq_tol(sc[i], lp, 1e-5);
        for (int k = 0; k < np[i]; k++) ck_assert_int_eq(pred[i * GYRO_COMPOSITE_MAX_STEPS + k], tr.ep.emitted[k]);
    }
    gyro_composite_scores s1;
    double ex, f1;
    ck_assert_int_eq(gyro_composite_score(p, &d, 1, &s1), GYRO_OK);
    ck_assert_int_eq(gyro_composite_evaluate(p, &d, &ex, &f1), GYRO_OK);
    ck_assert_double_eq_tol(s1.exact, ex, 1e-12);
    ck_assert_double_eq_tol(s1.mean_f1, f1, 1e-12);
    ck_assert(s1.atom_p >= 0 && s1.atom_p <= 1 && s1.atom_r >= 0 && s1.atom_r <= 1);
    ck_assert_int_eq(s1.n_composite, 12);   /* two composite families x 6 */
    /* 3 atoms: at most 2^3 sets x {running, done} states, so width 16 searches exhaustively */
    ck_assert_int_eq(p->n_actions, 4);
    ck_assert_int_eq(gyro_composite_beam_decode(p, &d, 16, pred, np, sc), GYRO_OK);
    for (int i = 0; i < 8; i++) {
        gyro_composite_episode ep;
        gyro_composite_episode_reset(&ep, NULL, 0);
        double best = best_sequence(p, &d, i, &ep);
        ck_assert_msg(fabs(sc[i] - best) < 1e-4, "utterance %d: beam %g, exhaustive %g", i, sc[i], best);
    }
    ck_assert_int_eq(gyro_composite_beam_decode(p, &d, 0, pred, np, sc), GYRO_ERR_USAGE);
    ck_assert_int_eq(gyro_composite_beam_decode(p, &d, GYRO_COMPOSITE_MAX_BEAM + 1, pred, np, sc), GYRO_ERR_USAGE);
    free(pred);
    free(np);
    free(sc);
    gyro_composite_data_free(&d);
    gyro_composite_policy_free(p);
    gyro_example_set_free(&set);
}
END_TEST

/* Without a dev set, the supervised start holds out whole utterances (all their states). */
START_TEST(test_holdout)
{
    gyro_example_set set = {0};
    toy(&set);
    gyro_train_options to;
    gyro_composite_supervise_options_init(&to, GYRO_TF_GEOMETRY_HYPERBOLIC, 16, 1, 2, 1);
    to.model.max_len = 24;
    to.quiet = 1;
    to.dev_fraction = 0.25;
    gyro_composite_policy *p = NULL;
    gyro_train_result r;
    ck_assert_int_eq(gyro_composite_supervise(&to, &set, NULL, &p, &r), GYRO_OK);
    /* 48 utterances, 12 held out; 12 composites of 2 atoms: 3 states, the others 2 */
    ck_assert_int_eq(r.n_train + r.n_dev, 36 * 2 + 12 * 3);
    ck_assert_int_eq(r.n_dev >= 12 * 2 && r.n_dev <= 12 * 3, 1);
    gyro_composite_policy_free(p);
    gyro_example_set_free(&set);
}
END_TEST

/* A start from a flat classifier over the label sets: its transformer carried over, a fresh head,
 * then supervised training under the masked softmax. */
START_TEST(test_from_classifier)
{
    gyro_example_set set = {0};
    toy(&set);
    gyro_train_options to;
    gyro_composite_supervise_options_init(&to, GYRO_TF_GEOMETRY_HYPERBOLIC, 16, 1, 2, 20);
    to.model.max_len = 24;
    to.optim.lr = 5e-3;
    to.patience = 0;
    to.quiet = 1;
    gyro_classifier *flat = NULL;
    ck_assert_int_eq(gyro_train_classifier(&to, &set, NULL, &flat, NULL), GYRO_OK);
    gyro_composite_policy *p = NULL;
    ck_assert_int_eq(gyro_composite_from_classifier(flat, &set, 7, &p), GYRO_OK);
    ck_assert_int_eq(p->n_actions, 4);   /* 3 atoms + STOP, where the flat model has 4 label sets */
    const gyro_tf_model *a = gyro_classifier_tf_const(flat), *b = gyro_classifier_tf_const(p->clf);
    ck_assert_int_eq(b->cfg.dim, a->cfg.dim);
    ck_assert_int_eq(b->cfg.n_layers, a->cfg.n_layers);
    int nv = gyro_classifier_vocab_size(flat);
    ck_assert_int_eq(gyro_classifier_vocab_size(p->clf), nv + 3);   /* + the 3 markers */
    for (int i = 1; i < nv; i++) ck_assert_str_eq(gyro_classifier_token(p->clf, i), gyro_classifier_token(flat, i));
    ck_assert(!memcmp(b->params.wte, a->params.wte, (size_t)nv * a->cfg.dim * sizeof(float)));
    int same = 0, differ = 0;
    for (int t = 0; t < b->n_tensors; t++) {
        const gyro_tf_tensor *X = &b->tensors[t], *Y = &a->tensors[t];
        ck_assert_str_eq(X->name, Y->name);
        if (X->rows == Y->rows && X->cols == Y->cols) {
            ck_assert_msg(!memcmp(b->params_memory + X->offset, a->params_memory + Y->offset, X->size * sizeof(float)),
                          "tensor %s not copied", X->name);
            same++;
        } else {
            differ++;
        }
    }
    ck_assert(same > 3 && differ >= 1);   /* the head and the embeddings differ in shape */
    gyro_composite_sft_options so = gyro_composite_sft_options_default();
    so.epochs = 15;
    so.patience = 0;
    so.dev_fraction = 0;
    so.optim.lr = 5e-3;
    gyro_train_result r;
    ck_assert_int_eq(gyro_composite_train_supervised(p, &set, NULL, &so, &r), GYRO_OK);
    ck_assert_int_eq(r.epochs, 15);
    ck_assert_int_eq(r.n_train, 36 * 2 + 12 * 3);
    gyro_composite_data d = {0};
    ck_assert_int_eq(gyro_composite_data_build(p, &set, &d), GYRO_OK);
    double ex;
    ck_assert_int_eq(gyro_composite_evaluate(p, &d, &ex, NULL), GYRO_OK);
    ck_assert_msg(ex >= 0.75, "exact-set accuracy %g on the training set", ex);
    /* with a held-out part: early stopping keeps the best epoch */
    so.dev_fraction = 0.25;
    so.epochs = 3;
    ck_assert_int_eq(gyro_composite_train_supervised(p, &set, NULL, &so, &r), GYRO_OK);
    ck_assert_int_eq(r.n_dev, 12);
    ck_assert(r.best_epoch >= 1 && r.best_epoch <= 3 && r.best_dev_accuracy >= 0 && r.best_dev_accuracy <= 1);
    so.batch = 0;
    ck_assert_int_eq(gyro_composite_train_supervised(p, &set, NULL, &so, &r), GYRO_ERR_USAGE);
    gyro_composite_data_free(&d);
    gyro_composite_policy_free(p);
    gyro_classifier_free(flat);
    gyro_example_set_free(&set);
}
END_TEST

static Suite *rl_composite_suite(void)
{
    Suite *s = suite_create("rl_composite");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_f1);
    tcase_add_test(tc, test_episode);
    tcase_add_test(tc, test_log_softmax_grad);
    tcase_add_test(tc, test_marker_tokens);
    tcase_add_test(tc, test_teacher_forced);
    tcase_add_test(tc, test_supervise_and_grpo);
    tcase_add_test(tc, test_beam);
    tcase_add_test(tc, test_holdout);
    tcase_add_test(tc, test_from_classifier);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(rl_composite_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

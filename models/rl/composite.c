/* composite.c — the composite-intent episode, its F1 reward, the masked softmax and the policy
 * wrapper around an intent classifier (see composite.h for the design). */
#include "models/rl/composite.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- the episode -------------------------------------------------------------------------- */

double gyro_composite_f1(const int *gold, int n_gold, const int *pred, int n_pred)
{
    if (n_gold == 0 && n_pred == 0) return 1.0;
    int hit = 0;
    for (int i = 0; i < n_pred; i++)
        for (int j = 0; j < n_gold; j++)
            if (gold[j] >= 0 && gold[j] == pred[i]) {
                hit++;
                break;
            }
    return 2.0 * hit / (double)(n_gold + n_pred);
}

void gyro_composite_episode_reset(gyro_composite_episode *ep, const int *gold, int n_gold)
{
    memset(ep, 0, sizeof *ep);
    if (n_gold > GYRO_LABEL_MAX_ATOMS) n_gold = GYRO_LABEL_MAX_ATOMS;
    for (int i = 0; i < n_gold; i++) ep->gold[i] = gold[i];
    ep->n_gold = n_gold < 0 ? 0 : n_gold;
}

static int emitted(const gyro_composite_episode *ep, int a)
{
    for (int i = 0; i < ep->n_emitted; i++)
        if (ep->emitted[i] == a) return 1;
    return 0;
}

int gyro_composite_valid(const gyro_composite_episode *ep, int stop, int n_actions,
                         unsigned char *valid)
{
    int n = 0;
    for (int k = 0; k < n_actions; k++) {
        valid[k] = (unsigned char)(k == stop ? ep->n_emitted > 0 : !emitted(ep, k));
        n += valid[k];
    }
    return n;
}

int gyro_composite_step(gyro_composite_episode *ep, int stop, int a)
{
    if (ep->done || a < 0) return -1;
    if (a == stop) {
        if (ep->n_emitted == 0) return -1;
        ep->done = 1;
        return 0;
    }
    if (emitted(ep, a)) return -1;
    ep->emitted[ep->n_emitted++] = a;
    if (ep->n_emitted == GYRO_COMPOSITE_MAX_STEPS) ep->done = 1;
    return 0;
}

double gyro_composite_reward(const gyro_composite_episode *ep)
{
    return gyro_composite_f1(ep->gold, ep->n_gold, ep->emitted, ep->n_emitted);
}

/* ---- masked softmax ------------------------------------------------------------------------- */

double gyro_composite_log_softmax(double *logp, const float *logits, const unsigned char *valid,
                                  int n)
{
    double mx = -INFINITY;
    for (int k = 0; k < n; k++)
        if (valid[k] && logits[k] > mx) mx = logits[k];
    double z = 0.0;
    for (int k = 0; k < n; k++)
        if (valid[k]) z += exp((double)logits[k] - mx);
    double lse = mx + log(z);
    for (int k = 0; k < n; k++) logp[k] = valid[k] ? (double)logits[k] - lse : -INFINITY;
    return lse;
}

void gyro_composite_log_softmax_backward(float *dlogits, const double *logp,
                                         const unsigned char *valid, int n, int a, double g)
{
    for (int k = 0; k < n; k++)
        if (valid[k]) dlogits[k] += (float)(g * ((k == a) - exp(logp[k])));
}

/* ---- the policy ------------------------------------------------------------------------------ */

int gyro_composite_marker(int i, char *buf)
{
    if (i < 0 || i >= GYRO_COMPOSITE_MAX_MARKS) return 0;
    unsigned cp = GYRO_COMPOSITE_MARK_BASE + (unsigned)i;   /* three UTF-8 bytes: 1110xxxx 10.. 10.. */
    buf[0] = (char)(0xE0 | (cp >> 12));
    buf[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
    buf[2] = (char)(0x80 | (cp & 0x3F));
    buf[3] = '\0';
    return 3;
}

static _Thread_local const gyro_label_set *tl_set;   /* qsort context of by_name */

static int by_name(const void *a, const void *b)
{
    return strcmp(gyro_label_set_name(tl_set, *(const int *)a),
                  gyro_label_set_name(tl_set, *(const int *)b));
}

gyro_status gyro_composite_policy_wrap(gyro_classifier *clf, gyro_composite_policy **out)
{
    *out = NULL;
    const gyro_label_set *ls = gyro_classifier_labels(clf);
    int K = gyro_label_set_count(ls), stop = gyro_label_set_find(ls, GYRO_COMPOSITE_STOP);
    if (stop < 0 || K < 2 || K - 1 > GYRO_COMPOSITE_MAX_MARKS) {
        gyro_classifier_free(clf);
        return gyro_error_set(GYRO_ERR_FORMAT, "not a composite-intent policy (%s)",
                              stop < 0 ? "no " GYRO_COMPOSITE_STOP " class" : "bad class count");
    }
    for (int k = 0; k < K; k++)
        if (gyro_label_set_n_atoms(ls, k) != 1) {
            gyro_classifier_free(clf);
            return gyro_error_set(GYRO_ERR_FORMAT,
                                  "not a composite-intent policy (class '%s' is a composite)",
                                  gyro_label_set_name(ls, k));
        }
    gyro_composite_policy *p = calloc(1, sizeof *p);
    int *order = malloc((size_t)K * sizeof *order);
    if (p) {
        p->rank = malloc((size_t)K * sizeof *p->rank);
        p->mark = malloc((size_t)K * sizeof *p->mark);
    }
    if (!p || !order || !p->rank || !p->mark) {
        free(order);
        if (p) {
            free(p->rank);
            free(p->mark);
        }
        free(p);
        gyro_classifier_free(clf);
        return gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    }
    int n = 0;
    for (int k = 0; k < K; k++)
        if (k != stop) order[n++] = k;
    tl_set = ls;
    qsort(order, (size_t)n, sizeof *order, by_name);
    p->rank[stop] = -1;
    p->mark[stop] = GYRO_CLASSIFIER_UNK;
    for (int i = 0; i < n; i++) {
        char m[4];
        gyro_composite_marker(i, m);
        p->rank[order[i]] = i;
        p->mark[order[i]] = gyro_classifier_token_id(clf, m);
    }
    free(order);
    p->clf = clf;
    p->n_actions = K;
    p->stop = stop;
    p->max_len = gyro_classifier_tf_const(clf)->cfg.max_len;
    *out = p;
    return GYRO_OK;
}

gyro_status gyro_composite_policy_load(const char *path, gyro_composite_policy **out)
{
    gyro_classifier *clf;
    *out = NULL;
    gyro_status s = gyro_classifier_load(path, &clf);
    if (s != GYRO_OK) return s;
    s = gyro_composite_policy_wrap(clf, out);
    if (s != GYRO_OK)
        return gyro_error_prefix(s, "%s", path);
    return GYRO_OK;
}

gyro_status gyro_composite_policy_clone(const gyro_composite_policy *p, gyro_composite_policy **out)
{
    *out = NULL;
    const gyro_classifier *c = p->clf;
    const gyro_label_set *ls = gyro_classifier_labels(c);
    const gyro_tf_model *tf = gyro_classifier_tf_const(c);
    int nv = gyro_classifier_vocab_size(c) - 1;
    const char **vocab = malloc(((size_t)nv + 1) * sizeof *vocab);
    gyro_label_set *labels = NULL;
    gyro_status s = vocab ? gyro_label_set_new(&labels) : gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    for (int k = 0; !s && k < gyro_label_set_count(ls); k++)
        s = gyro_label_set_add(labels, gyro_label_set_name(ls, k), NULL);
    for (int i = 0; !s && i < nv; i++) vocab[i] = gyro_classifier_token(c, i + 1);
    gyro_classifier *copy = NULL;
    if (!s) {
        s = gyro_classifier_create(&tf->cfg, 0, gyro_classifier_normalize_options(c), vocab, nv,
                                   labels, &copy);   /* takes the label set over */
        labels = NULL;
    }
    gyro_label_set_free(labels);
    free(vocab);
    if (s) return s;
    gyro_classifier_set_token_unit(copy, gyro_classifier_token_unit(c));
    gyro_tf_model *ct = gyro_classifier_tf(copy);
    memcpy(ct->params_memory, tf->params_memory, tf->n_params * sizeof *tf->params_memory);
    return gyro_composite_policy_wrap(copy, out);
}

void gyro_composite_policy_free(gyro_composite_policy *p)
{
    if (!p) return;
    gyro_classifier_free(p->clf);
    free(p->rank);
    free(p->mark);
    free(p);
}

int gyro_composite_encode(const gyro_composite_policy *p, const gyro_composite_episode *ep,
                          const int32_t *utt, int n_utt, int32_t *ids)
{
    int em[GYRO_COMPOSITE_MAX_STEPS], n = ep->n_emitted, len = 0;
    memcpy(em, ep->emitted, (size_t)n * sizeof *em);
    for (int i = 1; i < n; i++)                 /* insertion sort by atom rank */
        for (int j = i; j > 0 && p->rank[em[j - 1]] > p->rank[em[j]]; j--) {
            int t = em[j];
            em[j] = em[j - 1];
            em[j - 1] = t;
        }
    for (int i = 0; i < n && len < p->max_len; i++) ids[len++] = p->mark[em[i]];
    for (int i = 0; i < n_utt && len < p->max_len; i++) ids[len++] = utt[i];
    if (len == 0) ids[len++] = GYRO_CLASSIFIER_UNK;
    return len;
}

gyro_status gyro_composite_gold(const gyro_composite_policy *p, const char *label, int *gold,
                                int *n_gold)
{
    gyro_label l;
    gyro_status s = gyro_label_parse(label, &l);
    if (s != GYRO_OK) return s;
    const gyro_label_set *ls = gyro_classifier_labels(p->clf);
    for (int i = 0; i < l.n_atoms; i++) {
        int id = gyro_label_set_find(ls, l.atoms[i]);
        gold[i] = id == p->stop ? -1 : id;
    }
    *n_gold = l.n_atoms;
    gyro_label_free(&l);
    return GYRO_OK;
}

/* intent_diag.c — why does the hyperbolic transformer learn worse than its Euclidean twin?
 * Trains the classifier's transformer (models/transformer.h, models/optim.h) with the
 * library's own kernels and optimizer on an Example stream and prints, every `log` steps, on
 * the current batch:
 *   - gradient norms per tensor and per layer (Euclidean gradients, as backward gives them; for
 *     ball tensors also the Riemannian norm ((1 − c|x|²)²/4)·|∇E| that RSGD uses),
 *   - the relative size of the optimizer's update |Δw|/|w| per tensor and layer,
 *   - per layer, the norm √c|x| of every ball activation (1 = the boundary) with the share of
 *     rows above 0.99 (artanh' = 1/(1−r²) > 50 there), the tanh argument √c|y| of each
 *     exp0 (share above 3: tanh' < 0.01, the map is flat), and the gradient norm reaching the
 *     layer output,
 *   - for the hyperbolic head merge ⊕_i exp0(M_i o_i): |log0(a)| against |Σ_i M_i o_i| (what
 *     a tangent-space sum would give), their cosine, and the distance between the Möbius sum
 *     taken in order and in reverse order (gyro addition is neither commutative nor
 *     associative);
 * and after every epoch the accuracy on the dev stream. Tokens are the normalizer's grapheme
 * clusters (gyro_tokenizer, default normalization), as `gyro classify train`.
 *
 *   intent_diag params MODEL.clf            parameter count of a classifier file
 *   intent_diag train TRAIN.pb DEV.pb [key=value ...]
 *     geometry=hyp|euc dim= layers= heads= ffn= residual=none|mobius|tangent layernorm=0|1
 *     relu=0|1 curvature= dropout= optim=rmsprop|adam|sgd lr= ball_lr= clip= wd= epochs=
 *     batch= seed= log= (steps between reports) max_steps= (0: no limit) restart= (SGDR t0)
 *     emb_scale= (multiplies the tangent vectors of the initial embedding rows)
 *     emb_lr= (RSGD learning rate of the embedding table alone, a second optimizer; 0: ball_lr)
 *     ball_optim=rsgd|radam (optimizer of the ball tensors)
 *     qkv=tangent|slice (hyperbolic q|k|v: log0 of the whole Möbius matvec output, the
 *     default, or log0 per head slice as models written before the qkv_tangent field)
 *     acts=0|1 (activation statistics; they read the activation block through a mirror of the
 *     private layout of models/transformer_impl.h and are checked against B and T)
 * Built and run by hand:
 *   cc -std=c11 -O2 -I. $(pkg-config --cflags openblas) tests/bench/intent_diag.c \
 *      build/libgyro.a $(pkg-config --libs icu-uc icu-i18n libutf8proc openblas libprotobuf-c zlib) \
 *      -lm -lpthread -o /tmp/intent_diag
 * (tests/bench/intent_quality.sh builds it the same way for the parameter counts).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "models/classifier.h"
#include "models/optim.h"
#include "models/train_classifier.h"
#include "models/transformer.h"
#include "models/text/labels.h"
#include "pipeline/example_file.h"

/* ---- a mirror of the activation block (models/transformer_impl.h, R = float) ------------- */
#define M_LAYER_FIELDS(X)                                                                      \
    X(u) X(qkvy) X(qkvz) X(qkvt) X(o) X(od) X(rr) X(a) X(la) X(ts1) X(res1) X(lnu1) X(lnv1)    \
    X(lnm1) X(lnr1) X(x1) X(u2) X(y2) X(e2) X(h) X(g0) X(g1) X(gd) X(y3) X(e3) X(f) X(lf)      \
    X(ts2) X(res2) X(lnu2) X(lnv2) X(lnm2) X(lnr2) X(xout)
typedef struct mblock {
    float *x0, *lfin, *pooled, *pdrop, *pball, *logits, *att;
#define M_DECL(n) float *n;
    M_LAYER_FIELDS(M_DECL)
#undef M_DECL
} mblock;
typedef struct macts {
    int max_batch, max_len, training;
    int B, T;
    int dropout_on;
    long nmax;
    int32_t *tokens;
    int *lengths;
    int *pidx;
    float *memory, *dmemory;
    size_t block_values;
    mblock a, d;
} macts;

static const int *g_len; /* lengths the qsort comparator reads */
static int by_len(const void *a, const void *b)
{
    int x = g_len[*(const int *)a], y = g_len[*(const int *)b];
    return (x > y) - (x < y);
}

static double cpu_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double norm(const float *x, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++) s += (double)x[i] * x[i];
    return sqrt(s);
}

/* ---- vocabulary: open-addressing hash of token strings ------------------------------------ */
typedef struct vocab {
    char **tok;
    int n, cap;
    int *slot;   /* (hcap) token index + 1, 0 = empty */
    size_t hcap;
} vocab;

static uint64_t fnv(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static int vocab_find(vocab *v, const char *s, int add)
{
    if (!v->hcap) {
        v->hcap = 1 << 16;
        v->slot = calloc(v->hcap, sizeof *v->slot);
    }
    size_t i = fnv(s) & (v->hcap - 1);
    while (v->slot[i]) {
        if (!strcmp(v->tok[v->slot[i] - 1], s)) return v->slot[i];
        i = (i + 1) & (v->hcap - 1);
    }
    if (!add || (size_t)v->n * 2 >= v->hcap) return 0; /* 0 = UNK */
    if (v->n == v->cap) {
        v->cap = v->cap ? 2 * v->cap : 1024;
        v->tok = realloc(v->tok, (size_t)v->cap * sizeof *v->tok);
    }
    v->tok[v->n++] = strdup(s);
    v->slot[i] = v->n;
    return v->n; /* id = index + 1 */
}

typedef struct encoded {
    int n, T;
    int32_t *tok; /* (n, T) */
    int *len, *lab;
} encoded;

static int encode(const gyro_example_set *s, gyro_tokenizer *tk, vocab *v, gyro_label_set *ls,
                  int add, int T, encoded *e)
{
    e->n = 0;
    e->T = T;
    e->tok = calloc((size_t)s->n * T, sizeof *e->tok);
    e->len = calloc((size_t)s->n, sizeof *e->len);
    e->lab = calloc((size_t)s->n, sizeof *e->lab);
    for (int i = 0; i < s->n; i++) {
        char *const *toks;
        size_t nt;
        const char *normd;
        if (gyro_tokenizer_run(tk, s->text[i], strlen(s->text[i]), &toks, &nt, &normd)) continue;
        int lab = -1;
        if (add) {
            if (gyro_label_set_add(ls, s->label[i], &lab)) continue;
        } else {
            lab = gyro_label_set_find(ls, s->label[i]);
        }
        int k = 0;
        for (size_t j = 0; j < nt && k < T; j++) {
            if (toks[j][0] == ' ' || toks[j][0] == 0) continue;
            e->tok[(size_t)e->n * T + k++] = vocab_find(v, toks[j], add);
        }
        if (k == 0) e->tok[(size_t)e->n * T + k++] = 0;
        e->len[e->n] = k;
        e->lab[e->n] = lab; /* -1: unknown label, counted as an error */
        e->n++;
    }
    return 0;
}

/* ---- ball helpers (double) ---------------------------------------------------------------- */
/* Möbius addition (Ganea et al. 2018, eq. 3):
 * x ⊕ y = ((1 + 2c<x,y> + c|y|²) x + (1 − c|x|²) y) / (1 + 2c<x,y> + c²|x|²|y|²) */
static void madd(double *z, const double *x, const double *y, double c, int n)
{
    double xy = 0, xx = 0, yy = 0;
    for (int i = 0; i < n; i++) xy += x[i] * y[i], xx += x[i] * x[i], yy += y[i] * y[i];
    double a = 1 + 2 * c * xy + c * yy, b = 1 - c * xx, d = 1 + 2 * c * xy + c * c * xx * yy;
    for (int i = 0; i < n; i++) z[i] = (a * x[i] + b * y[i]) / d;
}
/* exp0(v) = tanh(√c|v|) v / (√c|v|), projected inside the ball (Ganea 2018, eq. 13) */
static void exp0d(double *z, const float *v, double c, int n)
{
    double s = 0;
    for (int i = 0; i < n; i++) s += (double)v[i] * v[i];
    s = sqrt(s) * sqrt(c);
    double f = s > 1e-15 ? tanh(s) / s : 1;
    if (f * s > 1 - 1e-5) f = (1 - 1e-5) / s;
    for (int i = 0; i < n; i++) z[i] = f * v[i];
}

/* share-above statistics of row norms ×√c over the valid rows of (B·T, w) */
typedef struct rstat { double mean, max, above; } rstat;
static rstat rows_stat(const float *x, int w, const int *len, int B, int T, double sc, double thr)
{
    rstat r = {0, 0, 0};
    long n = 0;
    for (int b = 0; b < B; b++)
        for (int t = 0; t < len[b]; t++) {
            double v = sc * norm(x + ((size_t)b * T + t) * w, (size_t)w);
            r.mean += v;
            if (v > r.max) r.max = v;
            if (v > thr) r.above++;
            n++;
        }
    if (n) r.mean /= n, r.above /= n;
    return r;
}

typedef struct opts {
    int hyp, dim, layers, heads, ffn, residual, layernorm, relu, optim, epochs, batch, log,
        acts, max_steps, qkv, ball_optim;
    double curvature, dropout, lr, ball_lr, clip, wd, restart, emb_scale, emb_lr;
    uint64_t seed;
} opts;

static void report(const gyro_tf_model *m, const macts *A, const int *len, int B, int T,
                   const float *before, double loss, long step, double epoch, const opts *o)
{
    const gyro_tf_config *cfg = &m->cfg;
    const double c = cfg->curvature, sc = o->hyp ? sqrt(c) : 1;
    printf("step %ld (epoch %.2f) loss %.4f\n", step, epoch, loss);
    /* gradients and updates per tensor and layer */
    for (int t = 0; t < m->n_tensors; t++) {
        const gyro_tf_tensor *X = &m->tensors[t];
        int L = (X->rows % cfg->n_layers == 0 && strstr("qkvw attprojw ln1g ln1b fcw fcb fcprojw fcprojb ln2g ln2b mla moe", X->name))
                    ? cfg->n_layers : 1;
        size_t per = X->size / (size_t)L;
        printf("  %-9s %-6s", X->name, X->manifold == GYRO_TF_MANIFOLD_BALL ? "ball" : "eucl");
        for (int l = 0; l < L; l++) {
            const float *w = m->params_memory + X->offset + l * per;
            const float *g = m->grads_memory + X->offset + l * per;
            const float *w0 = before + X->offset + l * per;
            double gn = norm(g, per), wn = norm(w, per), dn = 0, rg = 0, rn = 0;
            for (size_t i = 0; i < per; i++) dn += (double)(w[i] - w0[i]) * (w[i] - w0[i]);
            dn = sqrt(dn);
            if (X->manifold == GYRO_TF_MANIFOLD_BALL) { /* Riemannian norm and row radius */
                for (int r = 0; r < (int)(per / X->cols); r++) {
                    double xx = 0, gg = 0;
                    for (int j = 0; j < X->cols; j++) {
                        xx += (double)w[(size_t)r * X->cols + j] * w[(size_t)r * X->cols + j];
                        gg += (double)g[(size_t)r * X->cols + j] * g[(size_t)r * X->cols + j];
                    }
                    double f = (1 - c * xx) * (1 - c * xx) / 4;
                    rg += f * f * gg;
                    rn = fmax(rn, sqrt(c * xx));
                }
                printf(" | L%d |g| %.2e rg %.2e |dw|/|w| %.2e rmax %.3f", l, gn, sqrt(rg), wn > 0 ? dn / wn : 0, rn);
            } else {
                printf(" | L%d |g| %.2e |dw|/|w| %.2e", l, gn, wn > 0 ? dn / wn : 0);
            }
        }
        printf("\n");
    }
    if (!A) return;
    /* activations, hyperbolic only (the Euclidean ones have no boundary) */
    const long N = A->nmax, C = cfg->dim, F = cfg->ffn_dim, H = cfg->n_heads,
               D = cfg->head_dim, AW = H * D;
    rstat s0 = rows_stat(A->a.x0, (int)C, len, B, T, sc, 0.99);
    printf("  acts: x0 √c|x| mean %.3f max %.3f >0.99 %.1f%%; |d x0| %.2e\n", s0.mean, s0.max,
           100 * s0.above, norm(A->d.x0, (size_t)B * T * C));
    for (int l = 0; l < cfg->n_layers; l++) {
#define LP(blk, name, w) ((blk).name + (long)l * N * (w))
        const int eu = !o->hyp;
        float *res1 = cfg->residual == GYRO_TF_RESIDUAL_NONE ? LP(A->a, a, C) : LP(A->a, res1, C);
        float *res2 = cfg->residual == GYRO_TF_RESIDUAL_NONE ? LP(A->a, f, C) : LP(A->a, res2, C);
        float *xout = cfg->layernorm ? LP(A->a, xout, C) : res2;
        float *dres2 = cfg->residual == GYRO_TF_RESIDUAL_NONE ? LP(A->d, f, C) : LP(A->d, res2, C);
        float *dxout = cfg->layernorm ? (eu ? LP(A->d, lnv2, C) : LP(A->d, xout, C)) : dres2;
        if (eu && cfg->residual == GYRO_TF_RESIDUAL_TANGENT && !cfg->layernorm) dxout = LP(A->d, ts2, C);
        { /* attention: tangent norms of q and k heads, mean max probability vs uniform */
            const float *qt = eu || cfg->qkv_tangent ? LP(A->a, qkvy, 3 * AW) : LP(A->a, qkvt, 3 * AW);
            const float *att = A->a.att + (long)l * A->max_batch * H * A->max_len * A->max_len;
            double qn = 0, kn = 0, pmax = 0, unif = 0, rowsum = 0;
            long n = 0, na = 0;
            for (int b = 0; b < B; b++)
                for (int t = 0; t < len[b]; t++, n++)
                    for (int h = 0; h < H; h++) {
                        qn += norm(qt + ((size_t)b * T + t) * 3 * AW + (size_t)h * D, (size_t)D);
                        kn += norm(qt + ((size_t)b * T + t) * 3 * AW + AW + (size_t)h * D, (size_t)D);
                        const float *row = att + (((size_t)b * H + h) * T + t) * T;
                        double mx = 0, sm = 0;
                        for (int j = 0; j < len[b]; j++) mx = fmax(mx, row[j]), sm += row[j];
                        pmax += mx;
                        rowsum += sm;
                        unif += 1.0 / len[b];
                        na++;
                    }
            if (n)
                printf("  L%d attention: |q_h| %.3f |k_h| %.3f (tangent), mean max prob %.3f vs uniform %.3f (row sums %.3f)\n",
                       l, qn / na, kn / na, pmax / na, unif / na, rowsum / na);
        }
        rstat qy = rows_stat(LP(A->a, qkvy, 3 * AW), (int)(3 * AW), len, B, T, sc, 3);
        rstat aa = rows_stat(LP(A->a, a, C), (int)C, len, B, T, sc, 0.99);
        rstat r1 = rows_stat(res1, (int)C, len, B, T, sc, 0.99);
        rstat y2 = rows_stat(LP(A->a, y2, F), (int)F, len, B, T, sc, 3);
        rstat hh = rows_stat(LP(A->a, h, F), (int)F, len, B, T, sc, 0.99);
        rstat y3 = rows_stat(LP(A->a, y3, C), (int)C, len, B, T, sc, 3);
        rstat ff = rows_stat(LP(A->a, f, C), (int)C, len, B, T, sc, 0.99);
        rstat xo = rows_stat(xout, (int)C, len, B, T, sc, 0.99);
        printf("  L%d tanh-arg qkv %.2f (>3 %.0f%%) ffn1 %.2f (>3 %.0f%%) ffn2 %.2f (>3 %.0f%%)"
               " | ball heads⊕ %.3f (>.99 %.0f%%) res1 %.3f h %.3f (>.99 %.0f%%) f %.3f (>.99 %.0f%%)"
               " out %.3f max %.3f (>.99 %.0f%%) | |d out| %.2e\n",
               l, qy.mean, 100 * qy.above, y2.mean, 100 * y2.above, y3.mean, 100 * y3.above,
               aa.mean, 100 * aa.above, r1.mean, hh.mean, 100 * hh.above, ff.mean, 100 * ff.above,
               xo.mean, xo.max, 100 * xo.above, norm(dxout, (size_t)B * T * C));
        if (eu) {
            printf("  L%d |d xout| %.2e\n", l, norm(dxout, (size_t)B * T * C));
            continue;
        }
        /* the head merge: Möbius sum in order vs tangent sum vs reverse order */
        const float *rr = LP(A->a, rr, H * C);
        double *acc = malloc(sizeof(double) * C * 4), *e = acc + C, *rev = acc + 2 * C,
               *tmp = acc + 3 * C;
        double sum_cos = 0, sum_ratio = 0, sum_rev = 0, sum_tn = 0;
        long n = 0;
        for (int b = 0; b < B; b++)
            for (int t = 0; t < len[b]; t++) {
                const float *r = rr + ((size_t)b * T + t) * H * C;
                const float *a = LP(A->a, a, C) + ((size_t)b * T + t) * C;
                /* log0(a) direction and norm; tangent sum Σ r_i */
                double an = sc * norm(a, (size_t)C), la = atanh(fmin(an, 1 - 1e-7)) / sc;
                double ts = 0, dot = 0;
                for (int j = 0; j < C; j++) {
                    double s = 0;
                    for (int i = 0; i < H; i++) s += r[(size_t)i * C + j];
                    ts += s * s;
                    dot += s * a[j];
                }
                ts = sqrt(ts);
                sum_cos += (ts > 0 && an > 0) ? dot / (ts * an / sc) : 0;
                sum_ratio += ts > 0 ? la / ts : 0;
                sum_tn += ts;
                /* Möbius sum, in order and reversed */
                exp0d(acc, r, c, (int)C);
                for (int i = 1; i < H; i++) {
                    exp0d(e, r + (size_t)i * C, c, (int)C);
                    madd(tmp, acc, e, c, (int)C);
                    memcpy(acc, tmp, sizeof(double) * C);
                }
                exp0d(rev, r + (size_t)(H - 1) * C, c, (int)C);
                for (int i = H - 2; i >= 0; i--) {
                    exp0d(e, r + (size_t)i * C, c, (int)C);
                    madd(tmp, rev, e, c, (int)C);
                    memcpy(rev, tmp, sizeof(double) * C);
                }
                /* hyperbolic distance d(x,y) = (2/√c) artanh(√c |−x ⊕ y|) */
                for (int j = 0; j < C; j++) e[j] = -acc[j];
                madd(tmp, e, rev, c, (int)C);
                double q = 0;
                for (int j = 0; j < C; j++) q += tmp[j] * tmp[j];
                sum_rev += 2 / sc * atanh(fmin(sqrt(c * q), 1 - 1e-12));
                n++;
            }
        free(acc);
        if (n)
            printf("  L%d merge: |Σ M_i o_i| %.3f, |log0 ⊕| / |Σ| %.3f, cos %.3f, d(order, reverse) %.3f\n",
                   l, sum_tn / n, sum_ratio / n, sum_cos / n, sum_rev / n);
#undef LP
    }
    rstat pb = rows_stat(A->a.pball, (int)C, (int[]){1}, 1, 1, sc, 0.99);
    (void)pb;
    double pm = 0, pmax = 0;
    for (int b = 0; b < B; b++) {
        double v = sc * norm(A->a.pball + (size_t)b * C, (size_t)C);
        pm += v / B;
        pmax = fmax(pmax, v);
    }
    printf("  pooled (MLR input) √c|x| mean %.3f max %.3f\n", pm, pmax);
}

static int parse(opts *o, const char *kv)
{
    const char *eq = strchr(kv, '=');
    if (!eq) return -1;
    size_t k = (size_t)(eq - kv);
    const char *v = eq + 1;
#define KEY(s) (k == strlen(s) && !strncmp(kv, s, k))
    if (KEY("geometry")) o->hyp = !strcmp(v, "hyp");
    else if (KEY("dim")) o->dim = atoi(v);
    else if (KEY("layers")) o->layers = atoi(v);
    else if (KEY("heads")) o->heads = atoi(v);
    else if (KEY("ffn")) o->ffn = atoi(v);
    else if (KEY("residual")) o->residual = !strcmp(v, "tangent") ? GYRO_TF_RESIDUAL_TANGENT : !strcmp(v, "mobius") ? GYRO_TF_RESIDUAL_MOBIUS : GYRO_TF_RESIDUAL_NONE;
    else if (KEY("layernorm")) o->layernorm = atoi(v);
    else if (KEY("relu")) o->relu = atoi(v);
    else if (KEY("curvature")) o->curvature = atof(v);
    else if (KEY("dropout")) o->dropout = atof(v);
    else if (KEY("optim")) o->optim = !strcmp(v, "adam") ? GYRO_OPTIM_ADAM : !strcmp(v, "sgd") ? GYRO_OPTIM_SGD : GYRO_OPTIM_RMSPROP;
    else if (KEY("lr")) o->lr = atof(v);
    else if (KEY("ball_lr")) o->ball_lr = atof(v);
    else if (KEY("clip")) o->clip = atof(v);
    else if (KEY("wd")) o->wd = atof(v);
    else if (KEY("epochs")) o->epochs = atoi(v);
    else if (KEY("batch")) o->batch = atoi(v);
    else if (KEY("seed")) o->seed = (uint64_t)atoll(v);
    else if (KEY("log")) o->log = atoi(v);
    else if (KEY("acts")) o->acts = atoi(v);
    else if (KEY("max_steps")) o->max_steps = atoi(v);
    else if (KEY("restart")) o->restart = atof(v);
    else if (KEY("emb_scale")) o->emb_scale = atof(v);
    else if (KEY("emb_lr")) o->emb_lr = atof(v);
    else if (KEY("ball_optim")) o->ball_optim = !strcmp(v, "radam");
    else if (KEY("qkv")) o->qkv = !strcmp(v, "slice") ? 0 : 1;
    else return -1;
#undef KEY
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "params")) {
        gyro_classifier *m = NULL;
        if (gyro_classifier_load(argv[2], &m)) {
            fprintf(stderr, "intent_diag: %s\n", gyro_error_message());
            return 65;
        }
        printf("%zu\n", gyro_classifier_param_count(m));
        gyro_classifier_free(m);
        return 0;
    }
    if (argc < 4 || strcmp(argv[1], "train")) {
        fprintf(stderr, "usage: intent_diag params MODEL | intent_diag train TRAIN.pb DEV.pb [key=value ...]\n");
        return 2;
    }
    gyro_train_options to;
    opts o = {.hyp = 1, .residual = -1, .layernorm = -1, .relu = -1, .epochs = 2, .batch = 32,
              .log = 100, .acts = 1, .seed = 1, .lr = -1, .ball_lr = -1, .curvature = -1,
              .dropout = -1, .optim = -1, .restart = -1, .emb_scale = 1, .qkv = -1};
    for (int i = 4; i < argc; i++)
        if (parse(&o, argv[i])) {
            fprintf(stderr, "intent_diag: bad option %s\n", argv[i]);
            return 2;
        }
    gyro_train_options_init(&to, o.hyp ? GYRO_TF_GEOMETRY_HYPERBOLIC : GYRO_TF_GEOMETRY_EUCLIDEAN);
    gyro_tf_config cfg = to.model;
    if (o.dim) { cfg.dim = o.dim; cfg.head_dim = (o.dim + cfg.n_heads - 1) / cfg.n_heads; cfg.ffn_dim = 4 * o.dim; cfg.pos_scale = (float)sqrt(2.0 / o.dim); }
    if (o.heads) { cfg.n_heads = o.heads; cfg.head_dim = (cfg.dim + o.heads - 1) / o.heads; }
    if (o.layers) cfg.n_layers = o.layers;
    if (o.ffn) cfg.ffn_dim = o.ffn;
    if (o.residual >= 0) cfg.residual = o.residual;
    if (o.layernorm >= 0) cfg.layernorm = o.layernorm;
    if (o.relu >= 0) cfg.ffn_activation = o.relu ? GYRO_TF_ACTIVATION_RELU : GYRO_TF_ACTIVATION_IDENTITY;
    if (o.curvature > 0) cfg.curvature = (float)o.curvature;
    if (o.dropout >= 0) cfg.dropout = (float)o.dropout;
    if (o.qkv >= 0) cfg.qkv_tangent = o.qkv;
    gyro_optim_config oc = to.optim;
    if (o.optim >= 0) oc.kind = o.optim;
    if (o.lr > 0) oc.lr = o.lr;
    if (o.ball_lr > 0) oc.ball_lr = o.ball_lr;
    if (o.clip > 0) oc.clip_norm = o.clip;
    if (o.ball_optim) oc.ball_kind = GYRO_OPTIM_BALL_RADAM;
    if (o.wd > 0) oc.weight_decay = o.wd;
    gyro_sgdr sg = to.sgdr;
    if (o.restart >= 0) sg.t0 = o.restart;

    gyro_example_set tr = {0}, dv = {0};
    if (gyro_example_file_read(&tr, argv[2], NULL) || gyro_example_file_read(&dv, argv[3], NULL)) {
        fprintf(stderr, "intent_diag: %s\n", gyro_error_message());
        return 65;
    }
    gyro_tokenizer *tk = NULL;
    gyro_label_set *ls = NULL;
    if (gyro_tokenizer_new(NULL, GYRO_TOKEN_CHARS, &tk) || gyro_label_set_new(&ls)) {
        fprintf(stderr, "intent_diag: %s\n", gyro_error_message());
        return 1;
    }
    vocab v = {0};
    encoded et, ed;
    const int T = cfg.max_len;
    encode(&tr, tk, &v, ls, 1, T, &et);
    encode(&dv, tk, &v, ls, 0, T, &ed);
    cfg.vocab_size = v.n + 1;
    cfg.n_classes = gyro_label_set_count(ls);
    gyro_tf_model *m = NULL;
    gyro_tf_acts *acts = NULL, *inf = NULL;
    if (gyro_tf_new(&cfg, o.seed, 1, &m) || gyro_tf_acts_new(m, o.batch, T, 1, &acts) ||
        gyro_tf_acts_new(m, 64, T, 0, &inf)) {
        fprintf(stderr, "intent_diag: %s\n", gyro_error_message());
        return 1;
    }
    if (o.emb_scale != 1) { /* rescale the initial embeddings in the tangent space */
        const int C = cfg.dim;
        for (int r = 0; r < cfg.vocab_size; r++) {
            float *x = m->params.wte + (size_t)r * C;
            double n = norm(x, (size_t)C), sc = o.hyp ? sqrt(cfg.curvature) : 1;
            if (n <= 0) continue;
            double f = o.hyp ? tanh(o.emb_scale * atanh(fmin(sc * n, 1 - 1e-7))) / (sc * n) : o.emb_scale;
            for (int j = 0; j < C; j++) x[j] = (float)(x[j] * f);
        }
    }
    printf("intent_diag: %d train / %d dev, vocab %d, %d labels, %zu params; %s C=%d L=%d H=%d D=%d F=%d "
           "residual %d LN %d relu %d c %.3g dropout %.2g; optim %d lr %.3g ball_lr %.3g clip %.3g wd %.3g sgdr t0 %.3g\n",
           et.n, ed.n, cfg.vocab_size, cfg.n_classes, m->n_params, o.hyp ? "hyperbolic" : "euclidean",
           cfg.dim, cfg.n_layers, cfg.n_heads, cfg.head_dim, cfg.ffn_dim, cfg.residual, cfg.layernorm,
           cfg.ffn_activation, cfg.curvature, cfg.dropout, oc.kind, oc.lr, oc.ball_lr, oc.clip_norm,
           oc.weight_decay, sg.t0);
    gyro_optim_tensor ot[GYRO_TF_MAX_TENSORS];
    for (int t = 0; t < m->n_tensors; t++) {
        const gyro_tf_tensor *X = &m->tensors[t];
        ot[t] = (gyro_optim_tensor){
            .name = X->name, .w = m->params_memory + X->offset, .g = m->grads_memory + X->offset,
            .rows = (size_t)X->rows, .cols = (size_t)X->cols,
            .manifold = X->manifold == GYRO_TF_MANIFOLD_BALL ? GYRO_OPTIM_MANIFOLD_POINCARE : GYRO_OPTIM_MANIFOLD_EUCLIDEAN,
            .c = cfg.curvature};
    }
    gyro_optim opt, eopt = {0};
    int nt = m->n_tensors;
    if (o.emb_lr > 0) { /* the embedding table (tensor 0) gets its own optimizer */
        gyro_optim_config ec = oc;
        ec.ball_lr = o.emb_lr;
        if (gyro_optim_init(&eopt, &ec, ot, 1)) {
            fprintf(stderr, "intent_diag: %s\n", gyro_error_message());
            return 1;
        }
    }
    if (gyro_optim_init(&opt, &oc, o.emb_lr > 0 ? ot + 1 : ot, o.emb_lr > 0 ? nt - 1 : nt)) {
        fprintf(stderr, "intent_diag: %s\n", gyro_error_message());
        return 1;
    }
    const int B = o.batch, K = cfg.n_classes, C = cfg.dim;
    int *order = malloc(sizeof(int) * et.n), *len = malloc(sizeof(int) * B), *lab = malloc(sizeof(int) * B);
    int32_t *tok = malloc(sizeof(int32_t) * B * T);
    float *dl = malloc(sizeof(float) * B * K), *before = malloc(sizeof(float) * m->n_params);
    gyro_rng rng;
    gyro_rng_seed(&rng, o.seed);
    for (int i = 0; i < et.n; i++) order[i] = i;
    const int spe = et.n / B;
    int *border = malloc(sizeof(int) * (spe + 1));
    for (int i = 0; i < spe; i++) border[i] = i;
    long step = 0;
    double t0 = cpu_seconds();
    (void)C;
    for (int ep = 0; ep < o.epochs; ep++) {
        for (int i = et.n - 1; i > 0; i--) {
            int j = (int)gyro_rng_below(&rng, (uint32_t)(i + 1)), x = order[i];
            order[i] = order[j], order[j] = x;
        }
        /* batches cut from runs of 50 batches sorted by length (as --bucket 50), in shuffled
         * order, so that little is padded */
        for (int r0 = 0; r0 < spe * B; r0 += 50 * B) {
            int n = spe * B - r0 < 50 * B ? spe * B - r0 : 50 * B;
            g_len = et.len;
            qsort(order + r0, (size_t)n, sizeof(int), by_len);
        }
        for (int i = spe - 1; i > 0; i--) {
            int j = (int)gyro_rng_below(&rng, (uint32_t)(i + 1)), x = border[i];
            border[i] = border[j], border[j] = x;
        }
        double eloss = 0;
        for (int si = 0; si < spe; si++, step++) {
            const int s = border[si];
            int Tb = 1;
            for (int b = 0; b < B; b++) {
                int e = order[s * B + b];
                len[b] = et.len[e];
                lab[b] = et.lab[e];
                if (len[b] > Tb) Tb = len[b];
            }
            for (int b = 0; b < B; b++)
                memcpy(tok + (size_t)b * Tb, et.tok + (size_t)order[s * B + b] * T, sizeof(int32_t) * Tb);
            gyro_optim_zero_grad(&opt);
            if (o.emb_lr > 0) gyro_optim_zero_grad(&eopt);
            if (gyro_tf_forward(m, acts, tok, len, B, Tb, cfg.dropout > 0 ? &rng : NULL)) {
                fprintf(stderr, "intent_diag: %s\n", gyro_error_message());
                return 1;
            }
            double loss = gyro_tf_softmax_xent(dl, NULL, gyro_tf_logits(acts), lab, B, K);
            eloss += loss;
            gyro_tf_backward(m, acts, &m->grads, dl);
            const int rep = o.log > 0 && step % o.log == 0;
            if (rep) memcpy(before, m->params_memory, sizeof(float) * m->n_params);
            double f = gyro_sgdr_factor(&sg, ep + (double)si / spe, NULL);
            if (gyro_optim_step(&opt, f) || (o.emb_lr > 0 && gyro_optim_step(&eopt, f))) {
                fprintf(stderr, "intent_diag: step %ld: %s\n", step, gyro_error_message());
                return 1;
            }
            if (rep) {
                const macts *A = (const macts *)acts;
                int ok = o.acts && A->B == B && A->T == Tb && A->nmax == (long)B * T;
                report(m, ok ? A : NULL, len, B, Tb, before, loss, step, ep + (double)si / spe, &o);
                printf("  global |g| %.3e (before clipping)\n", opt.last_grad_norm);
                fflush(stdout);
            }
            if (o.max_steps && step + 1 >= o.max_steps) break;
        }
        /* dev accuracy */
        long ok = 0;
        for (int s = 0; s < ed.n; s += 64) {
            int nb = ed.n - s < 64 ? ed.n - s : 64, Tb = 1;
            for (int b = 0; b < nb; b++) if (ed.len[s + b] > Tb) Tb = ed.len[s + b];
            int32_t tb[64 * 64];
            for (int b = 0; b < nb; b++) memcpy(tb + (size_t)b * Tb, ed.tok + (size_t)(s + b) * T, sizeof(int32_t) * Tb);
            gyro_tf_forward(m, inf, tb, ed.len + s, nb, Tb, NULL);
            const float *lg = gyro_tf_logits(inf);
            for (int b = 0; b < nb; b++) {
                int best = 0;
                for (int k = 1; k < K; k++) if (lg[(size_t)b * K + k] > lg[(size_t)b * K + best]) best = k;
                ok += best == ed.lab[s + b];
            }
        }
        printf("epoch %d: train loss %.4f dev accuracy %.2f%% cpu %.1f s\n", ep + 1, eloss / spe,
               100.0 * ok / ed.n, cpu_seconds() - t0);
        fflush(stdout);
        if (o.max_steps && step + 1 >= o.max_steps) break;
    }
    return 0;
}

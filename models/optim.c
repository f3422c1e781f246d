/* optim.c — RMSProp / Adam / SGD for Euclidean tensors, Riemannian SGD or Adam for Poincaré-ball
 * and hyperboloid rows, and the SGDR schedule (see optim.h for the formulas and papers).
 *
 * The update loops run in float32 over contiguous buffers (8 lanes with AVX); the
 * global gradient norm and the per-row ball norms accumulate in double. Ball rows use the ops
 * of models/hyp/poincare.h so the clamps live in one place (hyp_consts.h).
 */
#include "models/optim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef __AVX__
#include <immintrin.h>
#endif

#include "models/hyp/hyp_consts.h"
#include "models/hyp/lorentz.h"
#include "models/hyp/poincare.h"

gyro_optim_config gyro_optim_config_default(void)
{
    gyro_optim_config c = {
        .kind = GYRO_OPTIM_RMSPROP,
        .lr = 1e-3,
        .rho = 0.9,
        .beta1 = 0.9,
        .beta2 = 0.999,
        .eps = 1e-7,
        .weight_decay = 0.0,
        .ball_lr = 0.05,
        .ball_max_step = 1.0,
        .clip_norm = 0.0,
    };
    return c;
}

/* Floats of optimizer state a tensor needs: Euclidean m and v; a ball tensor under Riemannian
 * Adam m (rows, cols) then v (rows); none under RSGD. */
static size_t state_floats(const gyro_optim_tensor *t, const gyro_optim_config *cfg)
{
    if (t->manifold == GYRO_OPTIM_MANIFOLD_EUCLIDEAN) return 2 * t->rows * t->cols;
    if ((t->manifold == GYRO_OPTIM_MANIFOLD_POINCARE || t->manifold == GYRO_OPTIM_MANIFOLD_LORENTZ) &&
        cfg->ball_kind == GYRO_OPTIM_BALL_RADAM)
        return t->rows * t->cols + t->rows;
    return 0;
}

gyro_status gyro_optim_init(gyro_optim *o, const gyro_optim_config *cfg,
                            const gyro_optim_tensor *tensors, int n)
{
    memset(o, 0, sizeof *o);
    if (!cfg || (n > 0 && !tensors) || n < 0)
        return gyro_error_set(GYRO_ERR_USAGE, "optimizer: NULL argument");
    if (cfg->kind != GYRO_OPTIM_RMSPROP && cfg->kind != GYRO_OPTIM_ADAM && cfg->kind != GYRO_OPTIM_SGD)
        return gyro_error_set(GYRO_ERR_USAGE, "optimizer: unknown kind %d", (int)cfg->kind);
    if (cfg->ball_kind != GYRO_OPTIM_BALL_RSGD && cfg->ball_kind != GYRO_OPTIM_BALL_RADAM)
        return gyro_error_set(GYRO_ERR_USAGE, "optimizer: unknown ball optimizer %d",
                              (int)cfg->ball_kind);
    if (!(cfg->lr >= 0) || !(cfg->ball_lr >= 0) || !(cfg->eps > 0) || !(cfg->rho >= 0 && cfg->rho < 1) ||
        !(cfg->beta1 >= 0 && cfg->beta1 < 1) || !(cfg->beta2 >= 0 && cfg->beta2 < 1) ||
        !(cfg->clip_norm >= 0) || !(cfg->ball_max_step >= 0) || !(cfg->weight_decay >= 0))
        return gyro_error_set(GYRO_ERR_USAGE, "optimizer: invalid hyper-parameters");
    size_t total = 0;
    for (int i = 0; i < n; i++) {
        const gyro_optim_tensor *t = &tensors[i];
        if (!t->w || !t->g)
            return gyro_error_set(GYRO_ERR_USAGE, "optimizer: tensor %s has no buffer",
                                  t->name ? t->name : "?");
        if ((t->manifold == GYRO_OPTIM_MANIFOLD_POINCARE || t->manifold == GYRO_OPTIM_MANIFOLD_LORENTZ) &&
            !(t->c > 0))
            return gyro_error_set(GYRO_ERR_USAGE, "optimizer: manifold tensor %s needs c > 0",
                                  t->name ? t->name : "?");
        if (t->manifold == GYRO_OPTIM_MANIFOLD_LORENTZ && t->cols < 2)
            return gyro_error_set(GYRO_ERR_USAGE, "optimizer: hyperboloid tensor %s needs >= 2 "
                                  "columns", t->name ? t->name : "?");
        if (t->manifold != GYRO_OPTIM_MANIFOLD_EUCLIDEAN && t->manifold != GYRO_OPTIM_MANIFOLD_POINCARE &&
            t->manifold != GYRO_OPTIM_MANIFOLD_LORENTZ)
            return gyro_error_set(GYRO_ERR_USAGE, "optimizer: tensor %s has unknown manifold %d",
                                  t->name ? t->name : "?", (int)t->manifold);
        total += state_floats(t, cfg);
    }
    o->tensors = malloc((size_t)(n ? n : 1) * sizeof *o->tensors);
    o->offset = malloc((size_t)(n ? n : 1) * sizeof *o->offset);
    o->state = calloc(total ? total : 1, sizeof *o->state);
    if (!o->tensors || !o->offset || !o->state) {
        gyro_optim_free(o);
        return gyro_error_set(GYRO_ERR_NOMEM, "optimizer: %zu floats of state", total);
    }
    memcpy(o->tensors, tensors, (size_t)n * sizeof *tensors);
    size_t off = 0;
    for (int i = 0; i < n; i++) {
        o->offset[i] = off;
        off += state_floats(&tensors[i], cfg);
    }
    o->n_tensors = n;
    o->cfg = *cfg;
    return GYRO_OK;
}

void gyro_optim_free(gyro_optim *o)
{
    if (!o) return;
    free(o->tensors);
    free(o->offset);
    free(o->state);
    memset(o, 0, sizeof *o);
}

void gyro_optim_zero_grad(gyro_optim *o)
{
    for (int i = 0; i < o->n_tensors; i++)
        memset(o->tensors[i].g, 0, o->tensors[i].rows * o->tensors[i].cols * sizeof(float));
}

/* ---- Euclidean updates ---------------------------------------------------------------------- */

/* The Euclidean updates below run 8 floats at a time with AVX (the default x86-64-v3 build):
 * the same float32 operations in the same order as the scalar loop after them (separate
 * multiplies and adds, no FMA contraction, IEEE sqrt and division), so both give bit-identical
 * results; the scalar loop does the tail and the whole work without AVX. (GCC does not
 * vectorise the scalar loop itself: sqrtf may set errno.) */
static void step_rmsprop(float *w, float *v, const float *g, size_t n, float gs, float lr,
                         float rho, float eps, float wd)
{
    size_t i = 0;
#ifdef __AVX__
    const __m256 vgs = _mm256_set1_ps(gs), vlr = _mm256_set1_ps(lr), vrho = _mm256_set1_ps(rho);
    const __m256 vomr = _mm256_set1_ps(1.0f - rho), veps = _mm256_set1_ps(eps);
    const __m256 vwd = _mm256_set1_ps(wd);
    for (; i + 8 <= n; i += 8) {
        const __m256 gi = _mm256_mul_ps(_mm256_loadu_ps(g + i), vgs);
        const __m256 vi = _mm256_add_ps(_mm256_mul_ps(vrho, _mm256_loadu_ps(v + i)),
                                        _mm256_mul_ps(_mm256_mul_ps(vomr, gi), gi));
        _mm256_storeu_ps(v + i, vi);
        const __m256 wi = _mm256_loadu_ps(w + i);
        const __m256 u = _mm256_add_ps(_mm256_div_ps(gi, _mm256_add_ps(_mm256_sqrt_ps(vi), veps)),
                                       _mm256_mul_ps(vwd, wi));
        _mm256_storeu_ps(w + i, _mm256_sub_ps(wi, _mm256_mul_ps(vlr, u)));
    }
#endif
    for (; i < n; i++) {
        float gi = g[i] * gs;
        v[i] = rho * v[i] + (1.0f - rho) * gi * gi;
        w[i] -= lr * (gi / (sqrtf(v[i]) + eps) + wd * w[i]);
    }
}

static void step_adam(float *w, float *m, float *v, const float *g, size_t n, float gs, float lr,
                      float b1, float b2, float bc1, float bc2, float eps, float wd)
{
    size_t i = 0;
#ifdef __AVX__
    const __m256 vgs = _mm256_set1_ps(gs), vlr = _mm256_set1_ps(lr), vb1 = _mm256_set1_ps(b1);
    const __m256 vb2 = _mm256_set1_ps(b2), vomb1 = _mm256_set1_ps(1.0f - b1);
    const __m256 vomb2 = _mm256_set1_ps(1.0f - b2), vbc1 = _mm256_set1_ps(bc1);
    const __m256 vbc2 = _mm256_set1_ps(bc2), veps = _mm256_set1_ps(eps), vwd = _mm256_set1_ps(wd);
    for (; i + 8 <= n; i += 8) {
        const __m256 gi = _mm256_mul_ps(_mm256_loadu_ps(g + i), vgs);
        const __m256 mi = _mm256_add_ps(_mm256_mul_ps(vb1, _mm256_loadu_ps(m + i)),
                                        _mm256_mul_ps(vomb1, gi));
        const __m256 vi = _mm256_add_ps(_mm256_mul_ps(vb2, _mm256_loadu_ps(v + i)),
                                        _mm256_mul_ps(_mm256_mul_ps(vomb2, gi), gi));
        _mm256_storeu_ps(m + i, mi);
        _mm256_storeu_ps(v + i, vi);
        const __m256 mh = _mm256_div_ps(mi, vbc1), vh = _mm256_div_ps(vi, vbc2);
        const __m256 wi = _mm256_loadu_ps(w + i);
        const __m256 u = _mm256_add_ps(_mm256_div_ps(mh, _mm256_add_ps(_mm256_sqrt_ps(vh), veps)),
                                       _mm256_mul_ps(vwd, wi));
        _mm256_storeu_ps(w + i, _mm256_sub_ps(wi, _mm256_mul_ps(vlr, u)));
    }
#endif
    for (; i < n; i++) {
        float gi = g[i] * gs;
        m[i] = b1 * m[i] + (1.0f - b1) * gi;
        v[i] = b2 * v[i] + (1.0f - b2) * gi * gi;
        float mh = m[i] / bc1, vh = v[i] / bc2;
        w[i] -= lr * (mh / (sqrtf(vh) + eps) + wd * w[i]);
    }
}

/* Σ g[i]² in double: with AVX four lanes in two accumulators (8 elements per iteration, a fixed
 * order: lanes of acc0 + acc1 pairwise, then the scalar tail), else one scalar sum. The order
 * differs from a left-to-right sum only by double rounding (relative ~1e-16 · log n). */
static double sum_squares(const float *g, size_t n)
{
    size_t i = 0;
    double r = 0.0;
#ifdef __AVX__
    __m256d s0 = _mm256_setzero_pd(), s1 = _mm256_setzero_pd();
    for (; i + 8 <= n; i += 8) {
        const __m256d a = _mm256_cvtps_pd(_mm_loadu_ps(g + i));
        const __m256d b = _mm256_cvtps_pd(_mm_loadu_ps(g + i + 4));
        s0 = _mm256_add_pd(s0, _mm256_mul_pd(a, a));
        s1 = _mm256_add_pd(s1, _mm256_mul_pd(b, b));
    }
    double l[4];
    _mm256_storeu_pd(l, _mm256_add_pd(s0, s1));
    r = (l[0] + l[1]) + (l[2] + l[3]);
#endif
    for (; i < n; i++) r += (double)g[i] * g[i];
    return r;
}

static void step_sgd(float *w, const float *g, size_t n, float gs, float lr, float wd)
{
    for (size_t i = 0; i < n; i++) w[i] -= lr * (g[i] * gs + wd * w[i]);
}

/* ---- Riemannian SGD on the hyperboloid ------------------------------------------------------- */

/* One row x (n+1 floats, ⟨x,x⟩_L = −1/c): y = √c x on the unit hyperboloid, one
 * gyro_lorentz_rsgd_step_f32 with the gradient √c·gs·∇E (so the step is −η proj_x(J∇E) in x's
 * coordinates), then x = y/√c. `tmp` holds 2·(n+1) floats. */
static void step_lorentz_row(float *x, const float *g, float gs, float lr, float max_step,
                             float c, float *tmp, int n)
{
    const double sc = sqrt((double)c);
    float *y = tmp, *eg = tmp + n + 1;
    for (int i = 0; i <= n; i++) {
        y[i] = (float)(sc * x[i]);
        eg[i] = (float)(sc * gs * g[i]);
    }
    gyro_lorentz_rsgd_step_f32(y, y, eg, lr, max_step, n);
    for (int i = 0; i <= n; i++) x[i] = (float)(y[i] / sc);
}

/* ---- Riemannian Adam on the hyperboloid ------------------------------------------------------ */

/* Minkowski inner product ⟨a,b⟩_L = −a₀b₀ + Σ aᵢbᵢ of (n+1) doubles. */
static double minkowski(const double *a, const double *b, int n)
{
    double s = -a[0] * b[0];
    for (int i = 1; i <= n; i++) s += a[i] * b[i];
    return s;
}

/* One row of Riemannian Adam on the hyperboloid ⟨x,x⟩_L = −1/c (optim.h, GYRO_OPTIM_BALL_RADAM):
 * x (n+1) the point, m (n+1) its first moment (tangent at x), *v its second moment. `tmp` holds
 * 3·(n+1) doubles. */
static void step_lorentz_radam_row(float *x, float *m, float *v, const float *g, float gs,
                                   double lr, double b1, double b2, double bc1, double bc2,
                                   double eps, double max_step, double c, double *tmp, int n)
{
    double *xd = tmp, *rg = tmp + n + 1, *y = tmp + 2 * (n + 1);
    for (int i = 0; i <= n; i++) {
        xd[i] = x[i];
        rg[i] = (double)g[i] * gs;
    }
    rg[0] = -rg[0]; /* J∇E */
    const double xh = minkowski(xd, rg, n);
    for (int i = 0; i <= n; i++) rg[i] += c * xh * xd[i]; /* g_R = proj_x(J∇E) */
    const double vv = b2 * v[0] + (1.0 - b2) * fmax(minkowski(rg, rg, n), 0.0);
    v[0] = (float)vv;
    const double denom = sqrt(vv / bc2) + eps;
    for (int i = 0; i <= n; i++) {
        const double mi = b1 * m[i] + (1.0 - b1) * rg[i];
        rg[i] = mi;                       /* rg now holds the new first moment m */
        y[i] = -lr * (mi / bc1) / denom;  /* y holds the step u for now */
    }
    double un = sqrt(fmax(minkowski(y, y, n), 0.0));
    if (max_step > 0 && un > max_step) {
        for (int i = 0; i <= n; i++) y[i] *= max_step / un;
        un = max_step;
    }
    /* y = exp_x(u); the cosh/sinh argument clamped as the math core does */
    const double sc = sqrt(c), a = fmin(sc * un, GYRO_HYP_COSH_MAX_F32);
    const double ch = cosh(a), sh = a > 0 ? sinh(a) / (sc * un) : 1.0;
    for (int i = 0; i <= n; i++) y[i] = ch * xd[i] + sh * y[i];
    double q = 1.0 / c;
    for (int i = 1; i <= n; i++) q += y[i] * y[i];
    y[0] = sqrt(q);
    /* m ← P_{x→y}(m), then proj_y */
    const double xy = minkowski(xd, y, n), ym = minkowski(y, rg, n);
    const double f = c * ym / fmax(1.0 - c * xy, GYRO_HYP_MIN_NORM);
    for (int i = 0; i <= n; i++) rg[i] += f * (xd[i] + y[i]);
    const double ym2 = minkowski(y, rg, n);
    for (int i = 0; i <= n; i++) {
        m[i] = (float)(rg[i] + c * ym2 * y[i]);
        x[i] = (float)y[i];
    }
}

/* ---- Riemannian SGD in the ball --------------------------------------------------------------- */

/* One row: g_R = ((1−c|x|²)²/4)·∇E; v = −η g_R with |v|_x = λ_x|v| clipped to max_step;
 * x ← proj(exp_x(v)) (Ganea et al. 2018, Lemma 2). `tmp` holds 2·n floats. */
static void step_ball_row(float *x, const float *g, float gs, float lr, float max_step, float c,
                          float *tmp, int n)
{
    float *v = tmp, *y = tmp + n;
    for (int i = 0; i < n; i++) y[i] = g[i] * gs;
    gyro_poincare_egrad2rgrad_f32(v, x, y, c, n);
    double nv = 0, nx = 0;
    for (int i = 0; i < n; i++) {
        v[i] *= -lr;
        nv += (double)v[i] * v[i];
        nx += (double)x[i] * x[i];
    }
    if (max_step > 0) {
        double lam = 2.0 / fmax(1.0 - c * nx, 1e-15);
        double rn = lam * sqrt(nv);
        if (rn > max_step) {
            float s = (float)(max_step / rn);
            for (int i = 0; i < n; i++) v[i] *= s;
        }
    }
    gyro_poincare_expmap_f32(y, x, v, c, n);
    gyro_poincare_project_f32(x, y, c, n);
}

/* One row of Riemannian Adam (optim.h, GYRO_OPTIM_BALL_RADAM): x (n) the point, m (n) its first
 * moment, *v its second moment; the row math runs in double. `tmp` holds 2·n doubles.
 * Parallel transport P_{x→y}(w) = (λ_x/λ_y) gyr[y, −x] w with the closed-form gyration
 * gyr[a, b]w = w + 2(αa + βb)/δ, α = −c²⟨a,w⟩|b|² + c⟨b,w⟩ + 2c²⟨a,b⟩⟨b,w⟩,
 * β = −c²⟨b,w⟩|a|² − c⟨a,w⟩, δ = 1 + 2c⟨a,b⟩ + c²|a|²|b|² (Ungar 2008, Thm 3.4; geoopt's
 * math.gyration with κ = −c). */
static void step_ball_radam_row(float *x, float *m, float *v, const float *g, float gs, double lr,
                                double b1, double b2, double bc1, double bc2, double eps,
                                double max_step, double c, double *tmp, int n)
{
    double *rg = tmp, *y = tmp + n;
    double xx = 0, rr = 0;
    for (int i = 0; i < n; i++) xx += (double)x[i] * x[i];
    const double lx = 2.0 / fmax(1.0 - c * xx, 1e-15); /* λ_x */
    for (int i = 0; i < n; i++) {
        rg[i] = (double)g[i] * gs / (lx * lx); /* g_R = ∇E / λ_x² */
        rr += rg[i] * rg[i];
    }
    const double vv = b2 * v[0] + (1.0 - b2) * lx * lx * rr;
    v[0] = (float)vv;
    const double denom = sqrt(vv / bc2) + eps;
    double un = 0;
    for (int i = 0; i < n; i++) {
        const double mi = b1 * m[i] + (1.0 - b1) * rg[i];
        m[i] = (float)mi;
        y[i] = -lr * (mi / bc1) / denom; /* the step u */
        un += y[i] * y[i];
    }
    double s = 1.0;
    if (max_step > 0 && lx * sqrt(un) > max_step) s = max_step / (lx * sqrt(un));
    for (int i = 0; i < n; i++) y[i] = x[i] + s * y[i]; /* retraction x + u */
    gyro_poincare_project_f64(y, y, c, n);
    /* transport m from x to y: a = y, b = −x */
    double aa = 0, ab = 0, aw = 0, bw = 0;
    for (int i = 0; i < n; i++) {
        aa += y[i] * y[i];
        ab -= y[i] * x[i];
        aw += y[i] * m[i];
        bw -= (double)x[i] * m[i];
    }
    const double bb = xx, c2 = c * c;
    const double al = -c2 * aw * bb + c * bw + 2 * c2 * ab * bw;
    const double be = -c2 * bw * aa - c * aw;
    const double de = fmax(1.0 + 2 * c * ab + c2 * aa * bb, 1e-15);
    const double ly = 2.0 / fmax(1.0 - c * aa, 1e-15);
    for (int i = 0; i < n; i++) {
        const double gw = m[i] + 2 * (al * y[i] - be * x[i]) / de;
        m[i] = (float)(gw * lx / ly);
        x[i] = (float)y[i];
    }
}

gyro_status gyro_optim_step(gyro_optim *o, double lr_factor)
{
    double sq = 0;
    for (int t = 0; t < o->n_tensors; t++) {
        const gyro_optim_tensor *T = &o->tensors[t];
        if (T->frozen) continue;
        size_t n = T->rows * T->cols;
        const double s = sum_squares(T->g, n);
        if (!isfinite(s))
            return gyro_error_set(GYRO_ERR_NAN, "non-finite gradient in %s at step %llu",
                                  T->name ? T->name : "?", (unsigned long long)o->steps + 1);
        sq += s;
    }
    double norm = sqrt(sq);
    o->last_grad_norm = norm;
    float gs = 1.0f;
    if (o->cfg.clip_norm > 0 && norm > o->cfg.clip_norm) gs = (float)(o->cfg.clip_norm / norm);
    o->steps++;
    const gyro_optim_config *c = &o->cfg;
    float lr = (float)(c->lr * lr_factor), blr = (float)(c->ball_lr * lr_factor);
    float wd = (float)c->weight_decay;
    float bc1 = (float)(1.0 - pow(c->beta1, (double)o->steps));
    float bc2 = (float)(1.0 - pow(c->beta2, (double)o->steps));
    for (int t = 0; t < o->n_tensors; t++) {
        gyro_optim_tensor *T = &o->tensors[t];
        if (T->frozen) continue;
        size_t n = T->rows * T->cols;
        if (T->manifold == GYRO_OPTIM_MANIFOLD_LORENTZ) {
            float tmp[2 * 1024];
            if (T->cols > 1024) return gyro_error_set(GYRO_ERR_LIMIT, "hyperboloid tensor %s: %zu columns over 1024",
                                                      T->name ? T->name : "?", T->cols);
            if (c->ball_kind == GYRO_OPTIM_BALL_RADAM) {
                double dtmp[3 * 1024];
                float *bm = o->state + o->offset[t], *bv = bm + n;
                for (size_t r = 0; r < T->rows; r++) {
                    const float *g = T->g + r * T->cols;
                    float *mr = bm + r * T->cols;
                    size_t j = 0;
                    while (j < T->cols && g[j] == 0.0f && mr[j] == 0.0f) j++;
                    if (j == T->cols) continue; /* never-seen row: nothing to move */
                    step_lorentz_radam_row(T->w + r * T->cols, mr, bv + r, g, gs, blr, c->beta1,
                                           c->beta2, bc1, bc2, c->eps, c->ball_max_step, T->c,
                                           dtmp, (int)T->cols - 1);
                }
                continue;
            }
            for (size_t r = 0; r < T->rows; r++) {
                const float *g = T->g + r * T->cols; /* rows absent from the batch stay */
                size_t j = 0;
                while (j < T->cols && g[j] == 0.0f) j++;
                if (j == T->cols) continue;
                step_lorentz_row(T->w + r * T->cols, g, gs, blr, (float)c->ball_max_step, T->c, tmp,
                                 (int)T->cols - 1);
            }
            continue;
        }
        if (T->manifold == GYRO_OPTIM_MANIFOLD_POINCARE) {
            float tmp[2 * 1024];
            float *buf = tmp;
            if (T->cols > 1024) return gyro_error_set(GYRO_ERR_LIMIT, "ball tensor %s: %zu columns over 1024",
                                                      T->name ? T->name : "?", T->cols);
            if (c->ball_kind == GYRO_OPTIM_BALL_RADAM) {
                double dtmp[2 * 1024];
                float *bm = o->state + o->offset[t], *bv = bm + n;
                for (size_t r = 0; r < T->rows; r++) {
                    const float *g = T->g + r * T->cols;
                    float *mr = bm + r * T->cols;
                    size_t j = 0;
                    while (j < T->cols && g[j] == 0.0f && mr[j] == 0.0f) j++;
                    if (j == T->cols) continue; /* never-seen row: nothing to move */
                    step_ball_radam_row(T->w + r * T->cols, mr, bv + r, g, gs, blr, c->beta1,
                                        c->beta2, bc1, bc2, c->eps, c->ball_max_step, T->c, dtmp,
                                        (int)T->cols);
                }
                continue;
            }
            for (size_t r = 0; r < T->rows; r++) {
                /* RSGD has no state: a row with a zero gradient (an embedding row absent from
                 * the batch) would not move, so skip its exp map and projection */
                const float *g = T->g + r * T->cols;
                size_t j = 0;
                while (j < T->cols && g[j] == 0.0f) j++;
                if (j == T->cols) continue;
                step_ball_row(T->w + r * T->cols, g, gs, blr, (float)c->ball_max_step, T->c, buf,
                              (int)T->cols);
            }
            continue;
        }
        float *m = o->state + o->offset[t], *v = m + n;
        switch (c->kind) {
        case GYRO_OPTIM_RMSPROP: step_rmsprop(T->w, v, T->g, n, gs, lr, (float)c->rho, (float)c->eps, wd); break;
        case GYRO_OPTIM_ADAM:
            step_adam(T->w, m, v, T->g, n, gs, lr, (float)c->beta1, (float)c->beta2, bc1, bc2, (float)c->eps, wd);
            break;
        case GYRO_OPTIM_SGD: step_sgd(T->w, T->g, n, gs, lr, wd); break;
        }
    }
    return GYRO_OK;
}

/* ---- SGDR ------------------------------------------------------------------------------------ */

double gyro_sgdr_factor(const gyro_sgdr *s, double epoch, int *cycle)
{
    if (cycle) *cycle = 0;
    if (!s || !(s->t0 > 0)) return 1.0;
    double t_i = s->t0, t_cur = epoch < 0 ? 0 : epoch, mult = s->t_mult < 1 ? 1 : s->t_mult;
    int k = 0;
    while (t_cur >= t_i && k < 1000) {
        t_cur -= t_i;
        t_i *= mult;
        k++;
    }
    if (cycle) *cycle = k;
    double lo = s->min_factor;
    return lo + 0.5 * (1.0 - lo) * (1.0 + cos(M_PI * t_cur / t_i));
}

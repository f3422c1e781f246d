/* policy.c — configuration, layout, the float32/float64 instantiations of the policy network
 * (policy_impl.h), the float32 policy object, and its checkpoint file (see policy.h).
 *
 * Checkpoint format (little-endian, as written by this machine's fwrite; version 2):
 *   "GYRORLP1"  u32 version  u32 header_bytes
 *   header: i32 geometry (0 Euclidean, 1 Poincaré, 2 Lorentz; any other value is refused with
 *           GYRO_ERR_FORMAT, the value named), f64 curvature, i32 obs_dim, n_actions, d_model,
 *           i32 mla {n_heads, d_head, d_rope, d_kv_latent, d_q_latent, causal}, f64 rope_base,
 *           i32 moe {d_ffn, n_shared, n_routed, top_k}, char env[32]
 *   (Lorentz: n_heads, d_head and d_ffn hold lz_heads, lz_head_dim and lz_ffn, the other MLA
 *   and MoE fields are 0; a gyro older than the Lorentz policy refuses such a file as an
 *   implausible configuration.)
 *   u64 n_params, then n_params float32, then u32 CRC-32 (zlib's, models/core/crc32.h) of
 *   everything before it. Version 1 ended with a u64 FNV-1a instead; it is still read.
 */
#include "models/rl/policy.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "models/core/atomic_file.h"
#include "models/core/crc32.h"
#include "models/hyp/poincare.h"
#include "models/layers/lorentz.h"

/* Lorentz block constants, as in the Lorentz classifier (transformer.c): ε = 1.1/√c > √(1/c) in
 * the time coordinate y₀ = λσ(·) + ε (HyboNet's 1.1 at c = 1), and λ starting at 4. */
#define POLICY_LZ_EPS(c) (1.1 / sqrt((double)(c)))
#define POLICY_LZ_LOG_LAMBDA0 1.3862943611198906 /* log 4 */

const char *gyro_rl_policy_geometry_name(int geometry)
{
    switch (geometry) {
    case GYRO_RL_GEOMETRY_EUCLIDEAN: return "euclidean";
    case GYRO_RL_GEOMETRY_POINCARE: return "hyperbolic";
    case GYRO_RL_GEOMETRY_LORENTZ: return "lorentz";
    default: return "unknown";
    }
}

gyro_rl_policy_config gyro_rl_policy_config_default(int geometry, int obs_dim, int n_actions)
{
    gyro_rl_policy_config c;
    memset(&c, 0, sizeof c);
    c.hyperbolic = geometry == GYRO_RL_GEOMETRY_LORENTZ ? GYRO_RL_GEOMETRY_LORENTZ
                   : geometry ? GYRO_RL_GEOMETRY_POINCARE : GYRO_RL_GEOMETRY_EUCLIDEAN;
    c.curvature = 1.0;
    c.obs_dim = obs_dim;
    c.n_actions = n_actions;
    c.d_model = 32;
    c.mla.n_heads = 4;
    c.mla.d_head = 8;
    c.mla.d_rope = 4;
    c.mla.d_kv_latent = 32;
    c.mla.d_q_latent = 32;
    c.mla.causal = 0;
    c.mla.rope_base = 10000.0;
    c.moe.d_ffn = 32;
    c.moe.n_shared = 1;
    c.moe.n_routed = 4;
    c.moe.top_k = 1;
    c.lz_heads = 4;
    c.lz_head_dim = 8;
    c.lz_ffn = 32;
    gyro_rl_policy_config_check(&c);
    return c;
}

void gyro_rl_policy_config_resize(gyro_rl_policy_config *c, int width, int latent)
{
    c->d_model = width;
    c->mla.d_kv_latent = latent;
    c->mla.d_head = c->mla.n_heads > 0 && width / c->mla.n_heads > 0 ? width / c->mla.n_heads : 1;
    c->moe.d_ffn = width;
    c->lz_head_dim = c->lz_heads > 0 && width / c->lz_heads > 0 ? width / c->lz_heads : 1;
    c->lz_ffn = width;
}

gyro_status gyro_rl_policy_config_check(gyro_rl_policy_config *cfg)
{
    if (!cfg) return gyro_error_set(GYRO_ERR_USAGE, "policy: no configuration");
    if (cfg->obs_dim < 1 || cfg->obs_dim > 4096 || cfg->n_actions < 2 || cfg->n_actions > 65536 ||
        cfg->d_model < 1 || cfg->d_model > 65536)
        return gyro_error_set(GYRO_ERR_USAGE,
                              "policy: obs_dim %d, n_actions %d (>= 2) or d_model %d out of range",
                              cfg->obs_dim, cfg->n_actions, cfg->d_model);
    if (cfg->hyperbolic < GYRO_RL_GEOMETRY_EUCLIDEAN || cfg->hyperbolic > GYRO_RL_GEOMETRY_LORENTZ)
        return gyro_error_set(GYRO_ERR_USAGE, "policy: unknown geometry %d (0 Euclidean, 1 Poincaré, "
                              "2 Lorentz)", cfg->hyperbolic);
    if (cfg->hyperbolic && !(cfg->curvature > 0.0 && cfg->curvature < 1e6))
        return gyro_error_set(GYRO_ERR_USAGE, "policy: curvature %g must be > 0", cfg->curvature);
    if (cfg->hyperbolic == GYRO_RL_GEOMETRY_LORENTZ) {
        if (cfg->lz_heads < 1 || cfg->lz_heads > 1024 || cfg->lz_head_dim < 1 ||
            cfg->lz_head_dim > 4096 || cfg->lz_ffn < 1 || cfg->lz_ffn > 65536)
            return gyro_error_set(GYRO_ERR_USAGE, "policy: Lorentz heads %d, head width %d or FFN "
                                  "width %d out of range", cfg->lz_heads, cfg->lz_head_dim,
                                  cfg->lz_ffn);
        memset(&cfg->mla, 0, sizeof cfg->mla);   /* no MLA, no MoE in the Lorentz block */
        memset(&cfg->moe, 0, sizeof cfg->moe);
        return GYRO_OK;
    }
    cfg->mla.d_model = cfg->moe.d_model = cfg->d_model;
    cfg->mla.hyperbolic = cfg->moe.hyperbolic = cfg->hyperbolic;
    cfg->mla.curvature = cfg->moe.curvature = cfg->curvature;
    gyro_status s = gyro_mla_config_check(&cfg->mla);
    if (s == GYRO_OK) s = gyro_moe_config_check(&cfg->moe);
    return s;
}

/* The Lorentz block's layout (policy.h); every offset not used by it is 0. */
static void layout_init_lorentz(gyro_rl_policy_layout *L, const gyro_rl_policy_config *cfg, int B)
{
    const size_t T = cfg->obs_dim, d = cfg->d_model, d1 = d + 1, A = cfg->n_actions;
    const size_t N = (size_t)B * T, H = cfg->lz_heads, D = cfg->lz_head_dim, HD1 = H * (D + 1);
    const size_t F = cfg->lz_ffn;
    memset(L, 0, sizeof *L);
    L->lorentz = 1;
    size_t o = 0;
    L->w_emb = o;   o += T * d;
    L->b_emb = o;   o += T * d;
    L->lz_qkvw = o; o += 3 * H * D * d1;
    L->lz_qkvb = o; o += 3 * H * D;
    L->lz_qkvv = o; o += 3 * H * d1;
    L->lz_qkvt = o; o += 3 * H * 2;
    L->lz_ow = o;   o += d * HD1;
    L->lz_ov = o;   o += HD1;
    L->lz_ot = o;   o += 2;
    L->lz_f1w = o;  o += F * d1;
    L->lz_f1b = o;  o += F;
    L->lz_f1v = o;  o += d1;
    L->lz_f1t = o;  o += 2;
    L->lz_f2w = o;  o += d * (F + 1);
    L->lz_f2v = o;  o += F + 1;
    L->lz_f2t = o;  o += 2;
    L->w_head = o;  o += A * d;
    L->b_head = o;  o += A;
    L->n_params = o;
    L->mla_p = L->lz_qkvw;
    L->moe_p = L->lz_f1w;
    o = 0;
    L->u = o;       o += N * d;
    L->x0 = o;      o += N * d1;
    L->lz_qkvU = o; o += 3 * N * H * D;
    L->lz_qkvZ = o; o += 3 * N * H;
    L->lz_qkv = o;  o += 3 * N * HD1;
    L->lz_O = o;    o += N * HD1;
    L->lz_att = o;  o += (size_t)B * H * T * T;
    L->lz_sza = o;  o += (size_t)B * H * T;
    L->lz_Uo = o;   o += N * d;
    L->x1 = o;      o += N * d1;
    L->lz_U1 = o;   o += N * F;
    L->lz_hf = o;   o += N * (F + 1);
    L->lz_Hcf = o;  o += N * (F + 1);
    L->lz_U2 = o;   o += N * d;
    L->x2 = o;      o += N * d1;
    L->pool = o;    o += (size_t)B * d1;
    L->lz_szp = o;  o += (size_t)B;
    L->lz_hp = o;   o += A * d1;
    L->logits = o;  o += (size_t)B * A;
    L->logp = o;    o += (size_t)B * A;
    L->n_acts = o;
    L->n_route = 0;
    /* hlinear work: (rows, m+n+1) of the widest layer, and (rows, H·(D+1)) of a group */
    size_t work = d + HD1;
    if (F + d1 > work) work = F + d1;
    L->n_scratch = N * d + 3 * N * d1 + 3 * N * HD1 + N * HD1 + N * (F + 1) + (size_t)B * d1 +
                   A * d1 + N * work;
}

void gyro_rl_policy_layout_init(gyro_rl_policy_layout *L, const gyro_rl_policy_config *cfg, int B)
{
    const size_t T = cfg->obs_dim, d = cfg->d_model, A = cfg->n_actions, N = (size_t)B * T;
    if (cfg->hyperbolic == GYRO_RL_GEOMETRY_LORENTZ) {
        layout_init_lorentz(L, cfg, B);
        return;
    }
    L->lorentz = 0;
    gyro_mla_layout_init(&L->mla, &cfg->mla, B, (int)T);
    gyro_moe_layout_init(&L->moe, &cfg->moe, (int)N);
    size_t o = 0;
    L->w_emb = o;  o += T * d;
    L->b_emb = o;  o += T * d;
    L->mla_p = o;  o += L->mla.n_params;
    L->moe_p = o;  o += L->moe.n_params;
    L->w_head = o; o += A * d;
    L->b_head = o; o += A;
    L->n_params = o;
    o = 0;
    L->u = o;      o += N * d;
    L->x0 = o;     o += N * d;
    L->mla_a = o;  o += L->mla.n_acts;
    L->a = o;      o += N * d;
    L->x1 = o;     o += N * d;
    L->moe_a = o;  o += L->moe.n_acts;
    L->m = o;      o += N * d;
    L->x2 = o;     o += N * d;
    L->lx2 = o;    o += N * d;
    L->pool = o;   o += (size_t)B * d;
    L->logits = o; o += (size_t)B * A;
    L->logp = o;   o += (size_t)B * A;
    L->n_acts = o;
    L->n_route = L->moe.n_route;
    L->n_scratch = 6 * N * d + (size_t)B * d + L->mla.n_scratch + L->moe.n_scratch;
}

#define T float
#define S(name) name##_f32
#define P(name) gyro_rl_policy_##name##_f32
#include "models/rl/policy_impl.h"
#undef T
#undef S
#undef P

#define T double
#define S(name) name##_f64
#define P(name) gyro_rl_policy_##name##_f64
#include "models/rl/policy_impl.h"
#undef T
#undef S
#undef P

const char *gyro_rl_policy_param_block(const gyro_rl_policy_layout *L, size_t i)
{
    if (L->lorentz)
        return i < L->b_emb ? "input embedding weights" : i < L->lz_qkvw ? "input embedding biases"
             : i < L->lz_ow ? "Lorentz attention (q, k, v layers)" : i < L->lz_f1w ? "Lorentz attention output layer"
             : i < L->w_head ? "Lorentz feed-forward block" : i < L->b_head ? "head class points" : "head biases";
    return i < L->b_emb ? "input embedding weights" : i < L->mla_p ? "input embedding biases"
         : i < L->moe_p ? "attention (MLA) block" : i < L->w_head ? "MoE block"
         : i < L->b_head ? "head weights" : "head biases";
}

/* ---- the policy object ------------------------------------------------------------------- */

static gyro_status policy_alloc(const gyro_rl_policy_config *cfg, int max_batch,
                                gyro_rl_policy **out)
{
    *out = NULL;
    if (max_batch < 1 || max_batch > (1 << 24))
        return gyro_error_set(GYRO_ERR_USAGE, "policy: max_batch %d out of range", max_batch);
    gyro_rl_policy *p = calloc(1, sizeof *p);
    if (!p) return gyro_error_set(GYRO_ERR_NOMEM, "policy: out of memory");
    p->cfg = *cfg;
    gyro_status s = gyro_rl_policy_config_check(&p->cfg);
    if (s != GYRO_OK) {
        free(p);
        return s;
    }
    p->max_batch = max_batch;
    gyro_rl_policy_layout_init(&p->lay, &p->cfg, max_batch);
    p->params = calloc(p->lay.n_params, sizeof(float));
    p->grads = calloc(p->lay.n_params, sizeof(float));
    p->acts = calloc(p->lay.n_acts, sizeof(float));
    p->route = calloc(p->lay.n_route ? p->lay.n_route : 1, sizeof(int));
    p->scratch = calloc(p->lay.n_scratch, sizeof(float));
    if (!p->params || !p->grads || !p->acts || !p->route || !p->scratch) {
        gyro_rl_policy_free(p);
        return gyro_error_set(GYRO_ERR_NOMEM, "policy: out of memory for a batch of %d", max_batch);
    }
    *out = p;
    return GYRO_OK;
}

gyro_status gyro_rl_policy_new(const gyro_rl_policy_config *cfg, uint64_t seed, int max_batch,
                               gyro_rl_policy **out)
{
    gyro_status s = policy_alloc(cfg, max_batch, out);
    if (s != GYRO_OK) return s;
    gyro_rng rng;
    gyro_rng_seed(&rng, seed);
    gyro_rl_policy_init_params_f32((*out)->params, &(*out)->cfg, &rng);
    return GYRO_OK;
}

void gyro_rl_policy_free(gyro_rl_policy *p)
{
    if (!p) return;
    free(p->params);
    free(p->grads);
    free(p->acts);
    free(p->route);
    free(p->scratch);
    free(p);
}

const float *gyro_rl_policy_forward(gyro_rl_policy *p, const float *params, const float *obs, int B)
{
    gyro_rl_policy_forward_f32(p->acts, p->route, obs, params ? params : p->params, &p->cfg, B);
    gyro_rl_policy_layout L; /* offsets for a batch of B (smaller batches pack tighter) */
    gyro_rl_policy_layout_init(&L, &p->cfg, B);
    p->last_batch = B;
    p->last_logp = p->acts + L.logp;
    p->last_logits = p->acts + L.logits;
    return p->last_logp;
}

void gyro_rl_policy_backward(gyro_rl_policy *p, const float *dlogits, const float *obs, int B,
                             double balance_alpha)
{
    gyro_rl_policy_backward_f32(p->grads, p->scratch, dlogits, p->acts, p->route, obs, p->params,
                                &p->cfg, B, balance_alpha);
}

int gyro_rl_policy_argmax(const gyro_rl_policy *p, int b)
{
    const float *lp = p->last_logp + (size_t)b * p->cfg.n_actions;
    int best = 0;
    for (int j = 1; j < p->cfg.n_actions; j++)
        if (lp[j] > lp[best]) best = j;
    return best;
}

/* ---- checkpoint file ---------------------------------------------------------------------- */

#define POLICY_MAGIC "GYRORLP1"
#define POLICY_VERSION 2u

static uint64_t fnv1a(uint64_t h, const void *data, size_t n)
{
    const unsigned char *b = data;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

typedef struct policy_header {
    int32_t hyperbolic;
    double curvature;
    int32_t obs_dim, n_actions, d_model;
    int32_t n_heads, d_head, d_rope, d_kv_latent, d_q_latent, causal;
    double rope_base;
    int32_t d_ffn, n_shared, n_routed, top_k;
    char env[32];
} policy_header;

/* Serialise field by field so the file does not depend on struct padding. */
static size_t header_pack(unsigned char *buf, const policy_header *h)
{
    size_t o = 0;
#define PUT(x) (memcpy(buf + o, &(x), sizeof(x)), o += sizeof(x))
    PUT(h->hyperbolic); PUT(h->curvature); PUT(h->obs_dim); PUT(h->n_actions); PUT(h->d_model);
    PUT(h->n_heads); PUT(h->d_head); PUT(h->d_rope); PUT(h->d_kv_latent); PUT(h->d_q_latent);
    PUT(h->causal); PUT(h->rope_base); PUT(h->d_ffn); PUT(h->n_shared); PUT(h->n_routed);
    PUT(h->top_k);
    memcpy(buf + o, h->env, sizeof h->env);
    o += sizeof h->env;
#undef PUT
    return o;
}

static void header_unpack(policy_header *h, const unsigned char *buf)
{
    size_t o = 0;
#define GET(x) (memcpy(&(x), buf + o, sizeof(x)), o += sizeof(x))
    GET(h->hyperbolic); GET(h->curvature); GET(h->obs_dim); GET(h->n_actions); GET(h->d_model);
    GET(h->n_heads); GET(h->d_head); GET(h->d_rope); GET(h->d_kv_latent); GET(h->d_q_latent);
    GET(h->causal); GET(h->rope_base); GET(h->d_ffn); GET(h->n_shared); GET(h->n_routed);
    GET(h->top_k);
    memcpy(h->env, buf + o, sizeof h->env);
#undef GET
    h->env[sizeof h->env - 1] = 0;
}

#define HEADER_BYTES (4 * 14 + 8 * 2 + 32)

gyro_status gyro_rl_policy_save(const gyro_rl_policy *p, const char *path)
{
    for (size_t i = 0; i < p->lay.n_params; i++)   /* a diverged policy never replaces a good file */
        if (!isfinite(p->params[i]))
            return gyro_error_set(GYRO_ERR_NAN, "%s: not written: parameter %zu (%s) is not finite "
                                  "(the file is left as it was)", path, i, gyro_rl_policy_param_block(&p->lay, i));
    policy_header h;
    memset(&h, 0, sizeof h);
    const gyro_rl_policy_config *c = &p->cfg;
    h.hyperbolic = c->hyperbolic; h.curvature = c->curvature; h.obs_dim = c->obs_dim;
    h.n_actions = c->n_actions; h.d_model = c->d_model; h.n_heads = c->mla.n_heads;
    h.d_head = c->mla.d_head; h.d_rope = c->mla.d_rope; h.d_kv_latent = c->mla.d_kv_latent;
    h.d_q_latent = c->mla.d_q_latent; h.causal = c->mla.causal; h.rope_base = c->mla.rope_base;
    h.d_ffn = c->moe.d_ffn; h.n_shared = c->moe.n_shared; h.n_routed = c->moe.n_routed;
    h.top_k = c->moe.top_k;
    if (c->hyperbolic == GYRO_RL_GEOMETRY_LORENTZ) {
        h.n_heads = c->lz_heads;
        h.d_head = c->lz_head_dim;
        h.d_ffn = c->lz_ffn;
    }
    snprintf(h.env, sizeof h.env, "%s", p->env_name);
    unsigned char head[8 + 4 + 4 + HEADER_BYTES];
    memcpy(head, POLICY_MAGIC, 8);
    uint32_t ver = POLICY_VERSION, hb = HEADER_BYTES;
    memcpy(head + 8, &ver, 4);
    memcpy(head + 12, &hb, 4);
    header_pack(head + 16, &h);
    uint64_t n = p->lay.n_params;
    uint32_t sum = gyro_crc32(0, head, sizeof head);
    sum = gyro_crc32(sum, &n, sizeof n);
    sum = gyro_crc32(sum, p->params, sizeof(float) * n);

    gyro_atomic_file f;
    gyro_status s = gyro_atomic_open(&f, path);
    if (s != GYRO_OK) return s;
    if (fwrite(head, 1, sizeof head, f.fp) != sizeof head || fwrite(&n, sizeof n, 1, f.fp) != 1 ||
        fwrite(p->params, sizeof(float), n, f.fp) != n || fwrite(&sum, sizeof sum, 1, f.fp) != 1) {
        gyro_atomic_abort(&f);
        return gyro_error_set(GYRO_ERR_IO, "%s: write failed: %s", path, strerror(errno));
    }
    return gyro_atomic_commit(&f);
}

gyro_status gyro_rl_policy_load(const char *path, int max_batch, gyro_rl_policy **out)
{
    *out = NULL;
    FILE *fp = fopen(path, "rb");
    if (!fp) return gyro_error_set(GYRO_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    unsigned char head[8 + 4 + 4 + HEADER_BYTES];
    gyro_status s = GYRO_OK;
    gyro_rl_policy *p = NULL;
    uint64_t n = 0;
    if (fread(head, 1, 16, fp) != 16 || memcmp(head, POLICY_MAGIC, 8) != 0) {
        s = gyro_error_set(GYRO_ERR_FORMAT, "%s: not a gyro policy file (bad magic)", path);
        goto done;
    }
    uint32_t ver, hb;
    memcpy(&ver, head + 8, 4);
    memcpy(&hb, head + 12, 4);
    if (ver > POLICY_VERSION) {
        s = gyro_error_set(GYRO_ERR_VERSION,
                           "%s: policy format version %u is newer than this gyro's (%u); upgrade gyro",
                           path, ver, POLICY_VERSION);
        goto done;
    }
    if (ver < 1 || hb != HEADER_BYTES) {
        s = gyro_error_set(GYRO_ERR_FORMAT, "%s: unsupported policy format version %u", path, ver);
        goto done;
    }
    if (fread(head + 16, 1, HEADER_BYTES, fp) != HEADER_BYTES || fread(&n, sizeof n, 1, fp) != 1) {
        s = gyro_error_set(GYRO_ERR_FORMAT, "%s: truncated policy header", path);
        goto done;
    }
    policy_header h;
    header_unpack(&h, head + 16);
    gyro_rl_policy_config c;
    memset(&c, 0, sizeof c);
    c.hyperbolic = h.hyperbolic; c.curvature = h.curvature; c.obs_dim = h.obs_dim;
    c.n_actions = h.n_actions; c.d_model = h.d_model; c.mla.n_heads = h.n_heads;
    c.mla.d_head = h.d_head; c.mla.d_rope = h.d_rope; c.mla.d_kv_latent = h.d_kv_latent;
    c.mla.d_q_latent = h.d_q_latent; c.mla.causal = h.causal; c.mla.rope_base = h.rope_base;
    c.moe.d_ffn = h.d_ffn; c.moe.n_shared = h.n_shared; c.moe.n_routed = h.n_routed;
    c.moe.top_k = h.top_k;
    if (h.hyperbolic == GYRO_RL_GEOMETRY_LORENTZ) {
        c.lz_heads = h.n_heads;
        c.lz_head_dim = h.d_head;
        c.lz_ffn = h.d_ffn;
    }
    if (h.hyperbolic < GYRO_RL_GEOMETRY_EUCLIDEAN || h.hyperbolic > GYRO_RL_GEOMETRY_LORENTZ) {
        s = gyro_error_set(GYRO_ERR_FORMAT, "%s: unknown policy geometry %d (this gyro knows 0 "
                           "euclidean, 1 hyperbolic, 2 lorentz)", path, (int)h.hyperbolic);
        goto done;
    }
    if (h.d_model > 4096 || h.n_heads > 1024 ||
        h.d_head > 4096 || h.d_rope > 4096 || h.d_kv_latent > 4096 || h.d_q_latent > 4096 ||
        h.d_ffn > 65536 || h.n_shared > 64 || h.n_routed > 1024) {
        s = gyro_error_set(GYRO_ERR_FORMAT, "%s: implausible policy configuration", path);
        goto done;
    }
    /* Compare the parameter count and the file's size before allocating anything for them. */
    if (gyro_rl_policy_config_check(&c) != GYRO_OK) {
        s = gyro_error_prefix(GYRO_ERR_FORMAT, "%s: bad configuration", path);
        goto done;
    }
    gyro_rl_policy_layout L;
    gyro_rl_policy_layout_init(&L, &c, 1);
    if (n != L.n_params) {
        s = gyro_error_set(GYRO_ERR_FORMAT, "%s: %llu parameters stored, the configuration has %zu",
                           path, (unsigned long long)n, L.n_params);
        goto done;
    }
    const size_t sum_bytes = ver == 1 ? 8 : 4;   /* version 1: u64 FNV-1a; 2: u32 CRC-32 */
    struct stat sb;
    long at = ftell(fp);
    if (at >= 0 && fstat(fileno(fp), &sb) == 0 && S_ISREG(sb.st_mode) &&
        (uint64_t)sb.st_size - (uint64_t)at != n * sizeof(float) + sum_bytes) {
        s = gyro_error_set(GYRO_ERR_FORMAT, "%s: %llu parameters need %llu bytes, the file has %llu left "
                           "(truncated or corrupt policy file)", path, (unsigned long long)n,
                           (unsigned long long)(n * sizeof(float) + sum_bytes),
                           (unsigned long long)((uint64_t)sb.st_size - (uint64_t)at));
        goto done;
    }
    s = policy_alloc(&c, max_batch, &p);
    if (s != GYRO_OK) {
        if (s == GYRO_ERR_USAGE) s = gyro_error_prefix(GYRO_ERR_FORMAT, "%s: bad configuration", path);
        goto done;
    }
    if (n != p->lay.n_params) {
        s = gyro_error_set(GYRO_ERR_FORMAT, "%s: %llu parameters stored, the configuration has %zu",
                           path, (unsigned long long)n, p->lay.n_params);
        goto done;
    }
    unsigned char stored[8];
    if (fread(p->params, sizeof(float), n, fp) != n || fread(stored, 1, sum_bytes, fp) != sum_bytes) {
        s = gyro_error_set(GYRO_ERR_FORMAT, "%s: truncated policy parameters", path);
        goto done;
    }
    int sum_ok;
    if (ver == 1) {
        uint64_t sum = 0xcbf29ce484222325ULL, want;
        sum = fnv1a(sum, head, sizeof head);
        sum = fnv1a(sum, &n, sizeof n);
        sum = fnv1a(sum, p->params, sizeof(float) * n);
        memcpy(&want, stored, 8);
        sum_ok = sum == want;
    } else {
        uint32_t sum = gyro_crc32(0, head, sizeof head), want;
        sum = gyro_crc32(sum, &n, sizeof n);
        sum = gyro_crc32(sum, p->params, sizeof(float) * n);
        memcpy(&want, stored, 4);
        sum_ok = sum == want;
    }
    if (!sum_ok) {
        s = gyro_error_set(GYRO_ERR_FORMAT, "%s: checksum mismatch (corrupt policy file)", path);
        goto done;
    }
    for (size_t i = 0; i < n; i++)
        if (!isfinite(p->params[i])) {
            s = gyro_error_set(GYRO_ERR_FORMAT, "%s: parameter %zu is not finite", path, i);
            goto done;
        }
    snprintf(p->env_name, sizeof p->env_name, "%s", h.env);
done:
    fclose(fp);
    if (s != GYRO_OK) {
        gyro_rl_policy_free(p);
        return s;
    }
    *out = p;
    return GYRO_OK;
}

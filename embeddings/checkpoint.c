/* checkpoint.c — char2vec checkpoints: everything needed to continue a run after a crash.
 *
 * A little-endian binary file (the tables are large and read back exactly), written atomically:
 *     "GYROC2VK"  u32 version  u32 byte-order mark 0x01020304
 *     options: i32 geometry dim window negatives epochs threads;
 *              f64 sample lr theta max_step init_scale neg_power; u64 seed
 *     u32 ranks (version 3)
 *     u64 n_tokens n_ids words_done; f64 seconds; u32 vocab size; u64 vocab fingerprint
 *     per thread of each rank (ranks × threads, rank-major): u32 epoch; u64 pos; u64 rng[4]
 *     per token: u16 length; bytes; u64 count
 *     centre table then context table: vocab × width f32 (rows unpadded)
 *     u32 CRC-32 (zlib's, models/core/crc32.h) of every byte before it
 * Version 1 ended with a u64 FNV-1a of every byte before it instead; it is still read, as is
 * version 2 (no ranks field: one process).
 * The loader reads the file into memory, checks the checksum before anything else (so a
 * truncated or altered file is refused), then parses with bounds checks.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "embeddings/checkpoint.h"
#include "models/core/atomic_file.h"
#include "models/core/crc32.h"

#define CKPT_MAGIC "GYROC2VK"
#define CKPT_VERSION 3u
#define CKPT_BOM 0x01020304u

typedef struct wctx {
    FILE *fp;
    uint32_t crc;
    int err;
} wctx;

static void hash_bytes(uint64_t *h, const void *p, size_t n)
{
    const unsigned char *b = p;
    uint64_t x = *h;
    for (size_t i = 0; i < n; i++) {
        x ^= b[i];
        x *= 1099511628211ULL;
    }
    *h = x;
}

static void put(wctx *w, const void *p, size_t n)
{
    if (w->err) return;
    w->crc = gyro_crc32(w->crc, p, n);
    if (fwrite(p, 1, n, w->fp) != n) w->err = errno ? errno : EIO;
}
#define PUT(w, v) do { __typeof__(v) _v = (v); put((w), &_v, sizeof _v); } while (0)

gyro_status gyro_c2v_checkpoint_save(const gyro_c2v_model *m, const char *path)
{
    for (int k = 0; k < 2; k++) {   /* a diverged run must never replace a good checkpoint */
        const float *tab = k ? m->out : m->in;
        for (int i = 0; i < m->vocab.n; i++)
            for (int j = 0; j < m->width; j++)
                if (!isfinite(tab[(size_t)i * m->row + j]))
                    return gyro_error_set(GYRO_ERR_NAN, "%s: not written: the %s vector of '%s' is not "
                                          "finite (the checkpoint is left as it was)", path,
                                          k ? "context" : "centre", m->vocab.tokens[i]);
    }
    gyro_atomic_file af;
    gyro_status s = gyro_atomic_open(&af, path);
    if (s) return s;
    wctx w = {af.fp, 0, 0};
    const gyro_c2v_options *o = &m->opt;
    put(&w, CKPT_MAGIC, 8);
    PUT(&w, (uint32_t)CKPT_VERSION);
    PUT(&w, (uint32_t)CKPT_BOM);
    int32_t ints[6] = {o->geometry, o->dim, o->window, o->negatives, o->epochs, o->threads};
    put(&w, ints, sizeof ints);
    double dbl[6] = {o->sample, o->lr, o->theta, o->max_step, o->init_scale, o->neg_power};
    put(&w, dbl, sizeof dbl);
    PUT(&w, (uint64_t)o->seed);
    const int ranks = m->ranks < 1 ? 1 : m->ranks;
    PUT(&w, (uint32_t)ranks);
    PUT(&w, (uint64_t)m->n_tokens);
    PUT(&w, (uint64_t)m->n_ids);
    PUT(&w, (uint64_t)m->words_done);
    PUT(&w, (double)m->seconds);
    PUT(&w, (uint32_t)m->vocab.n);
    PUT(&w, (uint64_t)gyro_vocab_fingerprint(&m->vocab));
    for (int t = 0; t < ranks * o->threads; t++) {
        PUT(&w, (uint32_t)m->ts[t].epoch);
        PUT(&w, (uint64_t)m->ts[t].pos);
        put(&w, m->ts[t].rng.s, sizeof m->ts[t].rng.s);
    }
    for (int i = 0; i < m->vocab.n; i++) {
        size_t len = strlen(m->vocab.tokens[i]);
        PUT(&w, (uint16_t)len);
        put(&w, m->vocab.tokens[i], len);
        PUT(&w, (uint64_t)m->vocab.counts[i]);
    }
    for (int k = 0; k < 2; k++) {
        const float *tab = k ? m->out : m->in;
        for (int i = 0; i < m->vocab.n; i++) put(&w, tab + (size_t)i * m->row, (size_t)m->width * sizeof(float));
    }
    uint32_t crc = w.crc;
    put(&w, &crc, sizeof crc);
    if (w.err) {
        gyro_atomic_abort(&af);
        return gyro_error_set(GYRO_ERR_IO, "%s: cannot write the checkpoint: %s", path, strerror(w.err));
    }
    return gyro_atomic_commit(&af);
}

/* ---- load -------------------------------------------------------------------------------- */

typedef struct rctx {
    const unsigned char *p, *end;
    int short_read;
} rctx;

static void get(rctx *r, void *out, size_t n)
{
    if ((size_t)(r->end - r->p) < n) {
        r->short_read = 1;
        memset(out, 0, n);
        return;
    }
    memcpy(out, r->p, n);
    r->p += n;
}
#define GET(r, v) get((r), &(v), sizeof(v))

/* The whole file at path into *data (malloc'd, *len bytes). GYRO_ERR_IO, GYRO_ERR_NOMEM. */
static gyro_status read_file(const char *path, unsigned char **data, size_t *len)
{
    *data = NULL;
    *len = 0;
    FILE *fp = fopen(path, "rb");
    if (!fp) return gyro_error_set(GYRO_ERR_IO, "%s: cannot open the checkpoint: %s", path, strerror(errno));
    size_t cap = 0;
    for (;;) {
        if (*len == cap) {
            cap = cap ? cap * 2 : 1 << 20;
            unsigned char *d = realloc(*data, cap);
            if (!d) {
                free(*data);
                *data = NULL;
                fclose(fp);
                return gyro_error_set(GYRO_ERR_NOMEM, "out of memory reading %s", path);
            }
            *data = d;
        }
        size_t got = fread(*data + *len, 1, cap - *len, fp);
        *len += got;
        if (got == 0) break;
    }
    int rerr = ferror(fp);
    fclose(fp);
    return rerr ? gyro_error_set(GYRO_ERR_IO, "%s: read error", path) : GYRO_OK;
}

/* The envelope of a checkpoint of len bytes: magic, byte order, version (1: a u64 FNV-1a
 * trailer; 2: a u32 CRC-32) and the checksum over everything before the trailer, whose size
 * goes to *sum_bytes. GYRO_ERR_FORMAT, GYRO_ERR_VERSION (newer). */
static gyro_status check_envelope(const char *path, const unsigned char *data, size_t len, size_t *sum_bytes,
                                  uint32_t *version_out)
{
    if (len < 16 || memcmp(data, CKPT_MAGIC, 8) != 0)
        return gyro_error_set(GYRO_ERR_FORMAT, "%s: not a gyro char2vec checkpoint (bad magic)", path);
    uint32_t version, bom;
    memcpy(&version, data + 8, 4);
    memcpy(&bom, data + 12, 4);
    if (bom != CKPT_BOM)
        return gyro_error_set(GYRO_ERR_FORMAT, "%s: checkpoint of another byte order or corrupt", path);
    if (version > CKPT_VERSION)
        return gyro_error_set(GYRO_ERR_VERSION, "%s: checkpoint version %u is newer than this gyro's (%u); "
                              "resume with the gyro that wrote it", path, version, CKPT_VERSION);
    if (version == 0) return gyro_error_set(GYRO_ERR_FORMAT, "%s: corrupt checkpoint (version 0)", path);
    *version_out = version;
    *sum_bytes = version == 1 ? 8 : 4;   /* version 1: u64 FNV-1a; 2 and 3: u32 CRC-32 */
    if (len < 16 + *sum_bytes) return gyro_error_set(GYRO_ERR_FORMAT, "%s: truncated checkpoint", path);
    int sum_ok;
    if (version == 1) {
        uint64_t want = 1469598103934665603ULL, stored;
        hash_bytes(&want, data, len - 8);
        memcpy(&stored, data + len - 8, 8);
        sum_ok = want == stored;
    } else {
        uint32_t stored;
        memcpy(&stored, data + len - 4, 4);
        sum_ok = gyro_crc32(0, data, len - 4) == stored;
    }
    if (!sum_ok)
        return gyro_error_set(GYRO_ERR_FORMAT, "%s: truncated or corrupt checkpoint (checksum mismatch)", path);
    return GYRO_OK;
}

gyro_status gyro_c2v_checkpoint_load(const char *path, gyro_c2v_model *m)
{
    memset(m, 0, sizeof *m);
    unsigned char *data;
    size_t len, sum_bytes = 0;
    uint32_t version = 0, ranks = 1;
    gyro_status s = read_file(path, &data, &len);
    if (!s) s = check_envelope(path, data, len, &sum_bytes, &version);
    if (s) goto done;
    rctx r = {data + 16, data + len - sum_bytes, 0};
    gyro_c2v_options o;
    gyro_c2v_options_init(&o);
    int32_t ints[6];
    double dbl[6];
    uint64_t seed, n_tokens, n_ids, words_done, fp_stored;
    double seconds;
    uint32_t vn;
    GET(&r, ints);
    GET(&r, dbl);
    GET(&r, seed);
    if (version >= 3) GET(&r, ranks);
    GET(&r, n_tokens);
    GET(&r, n_ids);
    GET(&r, words_done);
    GET(&r, seconds);
    GET(&r, vn);
    GET(&r, fp_stored);
    o.geometry = ints[0]; o.dim = ints[1]; o.window = ints[2]; o.negatives = ints[3];
    o.epochs = ints[4]; o.threads = ints[5];
    o.sample = dbl[0]; o.lr = dbl[1]; o.theta = dbl[2]; o.max_step = dbl[3];
    o.init_scale = dbl[4]; o.neg_power = dbl[5]; o.seed = seed;
    if (r.short_read || gyro_c2v_options_check(&o) || vn < 1 || vn > GYRO_VOCAB_MAX_SIZE ||
        n_tokens < 2 || n_tokens > n_ids || ranks < 1 || ranks > 1u << 20) {
        s = gyro_error_set(GYRO_ERR_FORMAT, "%s: corrupt checkpoint (impossible options or sizes)", path);
        goto done;
    }
    m->opt = o;
    m->n_tokens = n_tokens;
    m->n_ids = n_ids;
    m->words_done = words_done;
    m->seconds = seconds;
    m->ranks = (int)ranks;
    if ((s = gyro_vocab_init(&m->vocab))) goto done;
    const int n_states = (int)ranks * o.threads;
    gyro_c2v_thread_state *ts = calloc((size_t)n_states, sizeof *ts);
    if (!ts) { s = gyro_error_set(GYRO_ERR_NOMEM, "out of memory"); goto done; }
    for (int t = 0; t < n_states && !r.short_read; t++) {
        GET(&r, ts[t].epoch);
        GET(&r, ts[t].pos);
        GET(&r, ts[t].rng.s);
        if (ts[t].epoch > (uint32_t)o.epochs || ts[t].pos > n_ids) r.short_read = 1;
    }
    for (uint32_t i = 0; i < vn && !r.short_read && !s; i++) {
        uint16_t tl;
        uint64_t count;
        GET(&r, tl);
        if (tl == 0 || tl > GYRO_VOCAB_MAX_TOKEN || (size_t)(r.end - r.p) < tl) { r.short_read = 1; break; }
        const char *tok = (const char *)r.p;
        r.p += tl;
        GET(&r, count);
        int id;
        if (gyro_vocab_find(&m->vocab, tok, tl) >= 0) { r.short_read = 1; break; }
        s = gyro_vocab_add(&m->vocab, tok, tl, count, &id);
    }
    if (!s && !r.short_read && gyro_vocab_fingerprint(&m->vocab) != fp_stored) r.short_read = 1;
    if (!s && !r.short_read) {   /* the two tables must be exactly what is left, before allocating them */
        uint64_t w = (uint64_t)(o.geometry == GYRO_C2V_HYPERBOLIC ? o.dim + 1 : o.dim);
        if ((uint64_t)(r.end - r.p) != 2 * (uint64_t)vn * w * sizeof(float)) r.short_read = 1;
    }
    if (!s && !r.short_read) {
        s = gyro_c2v_model_alloc(m);
        free(m->ts);
        m->ts = ts;
        ts = NULL;
    }
    for (int k = 0; k < 2 && !s && !r.short_read; k++) {
        float *tab = k ? m->out : m->in;
        for (uint32_t i = 0; i < vn; i++) {
            float *x = tab + (size_t)i * m->row;
            get(&r, x, (size_t)m->width * sizeof(float));
            for (int j = 0; j < m->width; j++)
                if (!isfinite(x[j])) r.short_read = 1;
        }
    }
    if (!s && (r.short_read || r.p != r.end))
        s = gyro_error_set(GYRO_ERR_FORMAT, "%s: corrupt checkpoint (inconsistent contents)", path);
    free(ts);
done:
    free(data);
    return s;
}

/* corpus.c — count and encode the training corpus, one document of characters at a time
 * (see corpus.h; reading files and streams is pipeline/corpus_input.c). */
#include "embeddings/corpus.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "models/core/atomic_file.h"
#include "models/core/crc32.h"

#define CORPUS_VERSION 2u

/* ---- pass 1: count and write provisional ids, one document at a time ---------------------- */

struct gyro_corpus_builder {
    gyro_vocab *vocab;
    FILE *scratch;      /* provisional ids, unlinked */
    char *path;         /* the encoded corpus to write at finish */
    gyro_corpus_stats *st;
    FILE *text_out;     /* gyro_corpus_builder_new_tokens: tokens go here instead */
};

typedef gyro_corpus_builder encoder;

static int is_space_cluster(const char *s)
{
    for (; *s; s++)
        if (*s != ' ' && *s != '\t' && *s != '\n' && *s != '\r') return 0;
    return 1;
}

static gyro_status write_tokens(encoder *e, char *const *chars, size_t n)
{
    size_t written = 0;
    for (size_t i = 0; i < n; i++) {
        const char *c = chars[i];
        if (!c || !*c || is_space_cluster(c) || strlen(c) > GYRO_VOCAB_MAX_TOKEN) continue;
        if (written++) putc_unlocked(' ', e->text_out);
        fputs(c, e->text_out);
    }
    e->st->chars += written;
    e->st->kept += written;
    if (written) putc_unlocked('\n', e->text_out);
    if (ferror(e->text_out)) return gyro_error_set(GYRO_ERR_IO, "write error: %s", strerror(errno));
    return GYRO_OK;
}

static gyro_status encode_doc(encoder *e, char *const *chars, size_t n)
{
    if (e->text_out) return write_tokens(e, chars, n);
    size_t written = 0;
    for (size_t i = 0; i < n; i++) {
        const char *c = chars[i];
        if (!c || !*c || is_space_cluster(c)) continue;
        size_t len = strlen(c);
        if (len > GYRO_VOCAB_MAX_TOKEN) continue; /* an absurd cluster (e.g. 60 combining marks) */
        int id;
        gyro_status s = gyro_vocab_add(e->vocab, c, len, 1, &id);
        if (s) return s;
        uint32_t u = (uint32_t)id;
        if (fwrite(&u, sizeof u, 1, e->scratch) != 1)
            return gyro_error_set(GYRO_ERR_IO, "cannot write the scratch corpus: %s", strerror(errno));
        written++;
    }
    e->st->chars += written;
    if (written) {
        uint32_t eod = GYRO_CORPUS_EOD;
        if (fwrite(&eod, sizeof eod, 1, e->scratch) != 1)
            return gyro_error_set(GYRO_ERR_IO, "cannot write the scratch corpus: %s", strerror(errno));
    }
    return GYRO_OK;
}

/* ---- pass 2: remap to final ids ------------------------------------------------------------ */

static void put_u32(unsigned char *p, uint32_t v) { for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i)); }
static void put_u64(unsigned char *p, uint64_t v) { for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i)); }
static uint32_t get_u32(const unsigned char *p) { uint32_t v = 0; for (int i = 3; i >= 0; i--) v = v << 8 | p[i]; return v; }
static uint64_t get_u64(const unsigned char *p) { uint64_t v = 0; for (int i = 7; i >= 0; i--) v = v << 8 | p[i]; return v; }

static gyro_status write_final(FILE *scratch, const int32_t *remap, const gyro_vocab *v,
                               const char *ids_path, gyro_corpus_stats *st)
{
    gyro_atomic_file af;
    gyro_status s = gyro_atomic_open(&af, ids_path);
    if (s) return s;
    unsigned char hdr[GYRO_CORPUS_HEADER_BYTES] = {0};
    uint32_t *in = malloc(65536 * sizeof *in), *out = malloc(65536 * sizeof *out);
    if (!in || !out) { s = gyro_error_set(GYRO_ERR_NOMEM, "out of memory"); goto fail; }
    if (fwrite(hdr, 1, sizeof hdr, af.fp) != sizeof hdr) goto io;
    rewind(scratch);
    uint64_t n_ids = 0, n_tokens = 0, n_docs = 0;
    uint32_t crc = 0;   /* of the ids as written, then of the header's first 48 bytes */
    int open_doc = 0;
    size_t got;
    while ((got = fread(in, sizeof *in, 65536, scratch)) > 0) {
        size_t k = 0;
        for (size_t i = 0; i < got; i++) {
            uint32_t id = in[i];
            if (id == GYRO_CORPUS_EOD) {
                if (open_doc) { out[k++] = GYRO_CORPUS_EOD; n_docs++; open_doc = 0; }
            } else if (remap[id] >= 0) {
                out[k++] = (uint32_t)remap[id];
                n_tokens++;
                open_doc = 1;
            }
        }
        if (k && fwrite(out, sizeof *out, k, af.fp) != k) goto io;
        crc = gyro_crc32(crc, out, k * sizeof *out);
        n_ids += k;
    }
    if (ferror(scratch)) { s = gyro_error_set(GYRO_ERR_IO, "cannot read the scratch corpus"); goto fail; }
    if (open_doc) {
        uint32_t eod = GYRO_CORPUS_EOD;
        if (fwrite(&eod, sizeof eod, 1, af.fp) != 1) goto io;
        crc = gyro_crc32(crc, &eod, sizeof eod);
        n_ids++; n_docs++;
    }
    memcpy(hdr, "GYROIDS", 8);
    put_u32(hdr + 8, CORPUS_VERSION);
    put_u32(hdr + 12, (uint32_t)v->n);
    put_u64(hdr + 16, gyro_vocab_fingerprint(v));
    put_u64(hdr + 24, n_ids);
    put_u64(hdr + 32, n_tokens);
    put_u64(hdr + 40, n_docs);
    put_u32(hdr + 48, gyro_crc32(crc, hdr, 48));
    if (fseek(af.fp, 0, SEEK_SET) != 0 || fwrite(hdr, 1, sizeof hdr, af.fp) != sizeof hdr) goto io;
    st->kept = n_tokens;
    free(in); free(out);
    return gyro_atomic_commit(&af);
io:
    s = gyro_error_set(GYRO_ERR_IO, "%s: write error: %s", ids_path, strerror(errno));
fail:
    free(in); free(out);
    gyro_atomic_abort(&af);
    return s;
}

/* An unlinked scratch file beside `path` (same file system as the output, usually roomier than
 * /tmp); falls back to tmpfile(). */
static FILE *scratch_open(const char *path)
{
    size_t n = strlen(path);
    char *t = malloc(n + 32);
    if (!t) return NULL;
    snprintf(t, n + 32, "%s.scratch.XXXXXX", path);
    int fd = mkstemp(t);
    FILE *f = NULL;
    if (fd >= 0) {
        unlink(t);
        f = fdopen(fd, "w+b");
        if (!f) close(fd);
    }
    free(t);
    return f ? f : tmpfile();
}

gyro_status gyro_corpus_builder_new(const char *ids_path, gyro_vocab *vocab,
                                    gyro_corpus_stats *stats, gyro_corpus_builder **out)
{
    if (!ids_path || !vocab || !stats || !out)
        return gyro_error_set(GYRO_ERR_USAGE, "gyro_corpus_builder_new: NULL argument");
    gyro_corpus_builder *b = calloc(1, sizeof *b);
    if (!b) return gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    b->path = strdup(ids_path);
    if (!b->path) {
        free(b);
        return gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    }
    b->scratch = scratch_open(ids_path);
    if (!b->scratch) {
        free(b->path);
        free(b);
        return gyro_error_set(GYRO_ERR_IO, "cannot create a scratch file: %s", strerror(errno));
    }
    b->vocab = vocab;
    b->st = stats;
    *out = b;
    return GYRO_OK;
}

gyro_status gyro_corpus_builder_new_tokens(FILE *text_out, gyro_corpus_stats *stats,
                                           gyro_corpus_builder **out)
{
    if (!text_out || !stats || !out)
        return gyro_error_set(GYRO_ERR_USAGE, "gyro_corpus_builder_new_tokens: NULL argument");
    gyro_corpus_builder *b = calloc(1, sizeof *b);
    if (!b) return gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    b->text_out = text_out;
    b->st = stats;
    *out = b;
    return GYRO_OK;
}

gyro_status gyro_corpus_builder_add(gyro_corpus_builder *b, char *const *chars, size_t n)
{
    return encode_doc(b, chars, n);
}

gyro_status gyro_corpus_builder_finish(gyro_corpus_builder *b, uint64_t min_count, int max_vocab)
{
    if (b->text_out) {
        if (fflush(b->text_out) != 0) return gyro_error_set(GYRO_ERR_IO, "write error: %s", strerror(errno));
        return GYRO_OK;
    }
    gyro_corpus_stats *stats = b->st;
    gyro_vocab *vocab = b->vocab;
    gyro_status s = GYRO_OK;
    if (fflush(b->scratch) != 0)
        s = gyro_error_set(GYRO_ERR_IO, "cannot write the scratch corpus: %s", strerror(errno));
    if (!s && vocab->n == 0)
        s = gyro_error_set(GYRO_ERR_DATA, "the corpus is empty: no character");
    int32_t *remap = NULL;
    if (!s) {
        stats->distinct = (uint64_t)vocab->n;
        remap = malloc((size_t)vocab->n * sizeof *remap);
        if (!remap) s = gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    }
    if (!s) s = gyro_vocab_finalize(vocab, min_count, max_vocab, remap);
    if (!s && vocab->n == 0)
        s = gyro_error_set(GYRO_ERR_DATA, "nothing above --min-count %llu: %llu distinct characters, "
                           "the most frequent seen fewer times", (unsigned long long)min_count,
                           (unsigned long long)stats->distinct);
    if (!s) s = write_final(b->scratch, remap, vocab, b->path, stats);
    free(remap);
    return s;
}

void gyro_corpus_builder_free(gyro_corpus_builder *b)
{
    if (!b) return;
    if (b->scratch) fclose(b->scratch);
    free(b->path);
    free(b);
}

/* ---- reading ---------------------------------------------------------------------------- */

/* Version 2 and later: the CRC-32 of every id, then of the header's first 48 bytes, is stored at
 * byte 48. One sequential read of the file, before training starts. */
static gyro_status check_crc(const gyro_corpus *c, const unsigned char *h, const char *path)
{
    enum { CHUNK = 1 << 18 };
    unsigned char *buf = malloc(CHUNK);
    if (!buf) return gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    uint32_t crc = 0;
    uint64_t left = 4 * c->n_ids;
    off_t at = GYRO_CORPUS_HEADER_BYTES;
    while (left > 0) {
        size_t want = left < CHUNK ? (size_t)left : CHUNK;
        ssize_t r = pread(c->fd, buf, want, at);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            free(buf);
            return r < 0 ? gyro_error_set(GYRO_ERR_IO, "%s: read error: %s", path, strerror(errno))
                         : gyro_error_set(GYRO_ERR_FORMAT, "%s: truncated encoded corpus", path);
        }
        crc = gyro_crc32(crc, buf, (size_t)r);
        at += r;
        left -= (uint64_t)r;
    }
    free(buf);
    if (gyro_crc32(crc, h, 48) != get_u32(h + 48))
        return gyro_error_set(GYRO_ERR_FORMAT, "%s: corrupt encoded corpus (checksum mismatch); encode the "
                              "corpus again (train without --resume)", path);
    return GYRO_OK;
}

gyro_status gyro_corpus_open(const char *path, gyro_corpus *c)
{
    memset(c, 0, sizeof *c);
    c->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (c->fd < 0) return gyro_error_set(GYRO_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    unsigned char h[GYRO_CORPUS_HEADER_BYTES];
    ssize_t got = pread(c->fd, h, sizeof h, 0);
    gyro_status s = GYRO_OK;
    struct stat st;
    if (got != (ssize_t)sizeof h || memcmp(h, "GYROIDS", 8) != 0) {
        s = gyro_error_set(GYRO_ERR_FORMAT, "%s: not a gyro encoded corpus (bad magic or truncated header)", path);
    } else if (get_u32(h + 8) > CORPUS_VERSION) {
        s = gyro_error_set(GYRO_ERR_VERSION, "%s: encoded corpus version %u is newer than this gyro's (%u)",
                           path, get_u32(h + 8), CORPUS_VERSION);
    } else {
        c->vocab_size = get_u32(h + 12);
        c->fingerprint = get_u64(h + 16);
        c->n_ids = get_u64(h + 24);
        c->n_tokens = get_u64(h + 32);
        c->n_docs = get_u64(h + 40);
        if (fstat(c->fd, &st) != 0)
            s = gyro_error_set(GYRO_ERR_IO, "%s: cannot stat: %s", path, strerror(errno));
        else if (c->n_ids > (UINT64_MAX - sizeof h) / 4 ||
                 (uint64_t)st.st_size != sizeof h + 4 * c->n_ids || c->n_tokens > c->n_ids)
            s = gyro_error_set(GYRO_ERR_FORMAT, "%s: truncated or corrupt encoded corpus "
                               "(%lld bytes, header says %llu ids)", path, (long long)st.st_size,
                               (unsigned long long)c->n_ids);
        else if (get_u32(h + 8) >= 2)
            s = check_crc(c, h, path);
    }
    if (s) gyro_corpus_close(c);
    return s;
}

gyro_status gyro_corpus_read(const gyro_corpus *c, uint64_t pos, uint32_t *buf, size_t n,
                             size_t *got)
{
    *got = 0;
    if (pos >= c->n_ids) return GYRO_OK;
    if (n > c->n_ids - pos) n = (size_t)(c->n_ids - pos);
    size_t done = 0;
    while (done < n) {
        ssize_t r = pread(c->fd, (char *)buf + 4 * done, 4 * (n - done),
                          (off_t)(GYRO_CORPUS_HEADER_BYTES + 4 * (pos + done)));
        if (r < 0) {
            if (errno == EINTR) continue;
            return gyro_error_set(GYRO_ERR_IO, "cannot read the encoded corpus: %s", strerror(errno));
        }
        if (r == 0) break;
        done += (size_t)r / 4;
        if (r % 4) return gyro_error_set(GYRO_ERR_IO, "short read in the encoded corpus");
    }
    *got = done;
    return GYRO_OK;
}

void gyro_corpus_close(gyro_corpus *c)
{
    if (c->fd > 0) close(c->fd);
    c->fd = -1;
}

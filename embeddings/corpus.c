/* corpus.c — read, normalize, count and encode the training corpus (see corpus.h). */
#define _GNU_SOURCE /* fopencookie: give back the bytes peeked from a pipe to the stream reader */
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
#include "pipeline/stream.h"

#define CORPUS_VERSION 1u
#define MAX_DOC_BYTES ((size_t)1 << 20) /* a longer line is cut into documents of this size */

void gyro_corpus_options_init(gyro_corpus_options *opt)
{
    memset(opt, 0, sizeof *opt);
    gyro_normalize_options_init(&opt->norm);
    opt->format = GYRO_CORPUS_AUTO;
    opt->min_count = 5;
    opt->max_vocab = 0;
}

/* ---- a FILE that first returns peeked bytes, then the rest of another FILE ------------------ */

typedef struct peek_cookie {
    FILE *under;
    unsigned char buf[16];
    size_t n, pos;
} peek_cookie;

static ssize_t peek_read(void *cookie, char *out, size_t size)
{
    peek_cookie *c = cookie;
    if (c->pos < c->n) {
        size_t k = c->n - c->pos < size ? c->n - c->pos : size;
        memcpy(out, c->buf + c->pos, k);
        c->pos += k;
        return (ssize_t)k;
    }
    size_t got = fread(out, 1, size, c->under);
    if (got == 0 && ferror(c->under)) return -1;
    return (ssize_t)got;
}

static int peek_close(void *cookie)
{
    free(cookie);
    return 0;
}

/* ---- one input --------------------------------------------------------------------------- */

typedef struct input {
    const char *name;
    FILE *raw;          /* the file or stdin */
    FILE *fp;           /* what we read: raw, or the peek wrapper */
    int is_stream;
} input;

static int looks_like_stream(const unsigned char *b, size_t n)
{
    size_t i = 0;
    while (i < n && i < 3 && (b[i] & 0x80)) i++; /* varint length prefix */
    i++;
    return i + 6 <= n && b[i] == 0x0a && b[i + 1] == 0x04 && !memcmp(b + i + 2, "gyro", 4);
}

static gyro_status input_open(input *in, const char *name, gyro_corpus_format fmt)
{
    memset(in, 0, sizeof *in);
    in->name = name;
    if (!strcmp(name, "-")) {
        in->raw = stdin;
    } else {
        in->raw = fopen(name, "rb");
        if (!in->raw) return gyro_error_set(GYRO_ERR_IO, "%s: cannot open: %s", name, strerror(errno));
        struct stat st;
        if (fstat(fileno(in->raw), &st) == 0 && S_ISDIR(st.st_mode)) {
            fclose(in->raw);
            in->raw = NULL;
            return gyro_error_set(GYRO_ERR_IO, "%s: is a directory", name);
        }
    }
    if (fmt != GYRO_CORPUS_AUTO) {
        in->fp = in->raw;
        in->is_stream = fmt == GYRO_CORPUS_STREAM;
        return GYRO_OK;
    }
    peek_cookie *c = calloc(1, sizeof *c);
    if (!c) return gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    c->under = in->raw;
    c->n = fread(c->buf, 1, 10, in->raw);
    if (c->n == 0 && ferror(in->raw)) {
        free(c);
        return gyro_error_set(GYRO_ERR_IO, "%s: read error: %s", name, strerror(errno));
    }
    in->is_stream = looks_like_stream(c->buf, c->n);
    cookie_io_functions_t io = {.read = peek_read, .close = peek_close};
    in->fp = fopencookie(c, "rb", io);
    if (!in->fp) {
        free(c);
        return gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    }
    return GYRO_OK;
}

static void input_close(input *in)
{
    if (in->fp && in->fp != in->raw) fclose(in->fp);
    if (in->raw && in->raw != stdin) fclose(in->raw);
    in->fp = in->raw = NULL;
}

/* ---- pass 1: count and write provisional ids ------------------------------------------------ */

typedef struct encoder {
    gyro_vocab *vocab;
    FILE *scratch;
    gyro_corpus_stats *st;
    FILE *text_out;     /* gyro_corpus_write_tokens: tokens go here instead */
} encoder;

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

static gyro_status read_text(encoder *e, input *in, gyro_normalizer *norm)
{
    char *buf = malloc(MAX_DOC_BYTES);
    if (!buf) return gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    gyro_status s = GYRO_OK;
    uint64_t line = 1;
    size_t len = 0;
    int ch, eof = 0;
    while (!eof) {
        ch = getc_unlocked(in->fp);
        if (ch == EOF) {
            eof = 1;
            if (ferror(in->fp)) {
                s = gyro_error_set(GYRO_ERR_IO, "%s: read error: %s", in->name, strerror(errno));
                break;
            }
            if (len == 0) break;
        } else if (ch != '\n') {
            buf[len++] = (char)ch;
            if (len < MAX_DOC_BYTES) continue;
            /* cut an over-long line at a UTF-8 boundary; the tail starts the next document */
            size_t cut = len;
            while (cut > len - 4 && ((unsigned char)buf[cut - 1] & 0xC0) == 0x80) cut--;
            if (cut > 0 && ((unsigned char)buf[cut - 1] & 0xC0) == 0xC0) cut--;
            if (cut == 0) cut = len;
            gyro_normalized r;
            s = gyro_normalize_text(norm, buf, cut, &r);
            if (s) { gyro_error_prefix(s, "%s:%llu", in->name, (unsigned long long)line); break; }
            e->st->documents++;
            if (r.repairs) e->st->repaired++;
            if ((s = encode_doc(e, r.chars, r.n_chars))) break;
            memmove(buf, buf + cut, len - cut);
            len -= cut;
            continue;
        }
        gyro_normalized r;
        s = gyro_normalize_text(norm, buf, len, &r);
        if (s) { gyro_error_prefix(s, "%s:%llu", in->name, (unsigned long long)line); break; }
        e->st->documents++;
        if (r.repairs) e->st->repaired++;
        if ((s = encode_doc(e, r.chars, r.n_chars))) break;
        len = 0;
        line++;
    }
    free(buf);
    return s;
}

static gyro_status read_stream(encoder *e, input *in, gyro_normalizer *norm)
{
    gyro_stream_reader *r;
    gyro_status s = gyro_stream_reader_open_file(in->fp, in->name, NULL, &r);
    if (s) return s;
    const char *type = gyro_stream_reader_message_type(r);
    if (strcmp(type, gyro__v1__document__descriptor.name) != 0) {
        s = gyro_error_set(GYRO_ERR_FORMAT, "%s: a stream of %s, expected gyro.v1.Document "
                           "(the output of gyro normalize)", in->name, type);
        gyro_stream_reader_free(r);
        return s;
    }
    for (;;) {
        ProtobufCMessage *m;
        if ((s = gyro_stream_next(r, &gyro__v1__document__descriptor, &m))) break;
        if (!m) break;
        Gyro__V1__Document *d = (Gyro__V1__Document *)m;
        e->st->documents++;
        if (d->repairs) e->st->repaired++;
        if (d->n_chars > 0) {
            s = encode_doc(e, d->chars, d->n_chars);
        } else if (d->text && d->text[0]) {
            /* a Document written without its clusters: segment its (normalized) text */
            gyro_normalized nr;
            s = gyro_normalize_text(norm, d->text, strlen(d->text), &nr);
            if (!s) s = encode_doc(e, nr.chars, nr.n_chars);
            else gyro_error_prefix(s, "%s: record %llu", in->name,
                                   (unsigned long long)gyro_stream_reader_record(r));
        }
        protobuf_c_message_free_unpacked(m, NULL);
        if (s) break;
    }
    gyro_stream_reader_free(r);
    return s;
}

/* Every input in turn, as a Document stream or as text. */
static gyro_status read_inputs(encoder *e, const char *const *inputs, int n_inputs,
                               gyro_corpus_format fmt, gyro_normalizer *norm)
{
    gyro_status s = GYRO_OK;
    for (int i = 0; i < n_inputs && !s; i++) {
        input in;
        if (!(s = input_open(&in, inputs[i], fmt)))
            s = in.is_stream ? read_stream(e, &in, norm) : read_text(e, &in, norm);
        input_close(&in);
    }
    return s;
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
        n_ids += k;
    }
    if (ferror(scratch)) { s = gyro_error_set(GYRO_ERR_IO, "cannot read the scratch corpus"); goto fail; }
    if (open_doc) {
        uint32_t eod = GYRO_CORPUS_EOD;
        if (fwrite(&eod, sizeof eod, 1, af.fp) != 1) goto io;
        n_ids++; n_docs++;
    }
    memcpy(hdr, "GYROIDS", 8);
    put_u32(hdr + 8, CORPUS_VERSION);
    put_u32(hdr + 12, (uint32_t)v->n);
    put_u64(hdr + 16, gyro_vocab_fingerprint(v));
    put_u64(hdr + 24, n_ids);
    put_u64(hdr + 32, n_tokens);
    put_u64(hdr + 40, n_docs);
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

gyro_status gyro_corpus_encode(const char *const *inputs, int n_inputs,
                               const gyro_corpus_options *opt, const char *ids_path,
                               gyro_vocab *vocab, gyro_corpus_stats *stats)
{
    gyro_corpus_stats local;
    if (!stats) stats = &local;
    memset(stats, 0, sizeof *stats);
    gyro_status s = gyro_vocab_init(vocab);
    if (s) return s;
    if (n_inputs < 1) return gyro_error_set(GYRO_ERR_USAGE, "no input");
    gyro_normalizer *norm = NULL;
    if ((s = gyro_normalizer_new(&opt->norm, &norm))) return s;
    FILE *scratch = scratch_open(ids_path);
    if (!scratch) {
        gyro_normalizer_free(norm);
        return gyro_error_set(GYRO_ERR_IO, "cannot create a scratch file: %s", strerror(errno));
    }
    encoder e = {vocab, scratch, stats, NULL};
    s = read_inputs(&e, inputs, n_inputs, opt->format, norm);
    gyro_normalizer_free(norm);
    if (!s && fflush(scratch) != 0)
        s = gyro_error_set(GYRO_ERR_IO, "cannot write the scratch corpus: %s", strerror(errno));
    if (!s && vocab->n == 0)
        s = gyro_error_set(GYRO_ERR_DATA, "the corpus is empty: no character in %d input%s",
                           n_inputs, n_inputs > 1 ? "s" : "");
    int32_t *remap = NULL;
    if (!s) {
        stats->distinct = (uint64_t)vocab->n;
        remap = malloc((size_t)vocab->n * sizeof *remap);
        if (!remap) s = gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    }
    if (!s) s = gyro_vocab_finalize(vocab, opt->min_count, opt->max_vocab, remap);
    if (!s && vocab->n == 0)
        s = gyro_error_set(GYRO_ERR_DATA, "nothing above --min-count %llu: %llu distinct characters, "
                           "the most frequent seen fewer times", (unsigned long long)opt->min_count,
                           (unsigned long long)stats->distinct);
    if (!s) s = write_final(scratch, remap, vocab, ids_path, stats);
    free(remap);
    fclose(scratch);
    return s;
}

gyro_status gyro_corpus_write_tokens(const char *const *inputs, int n_inputs,
                                     const gyro_corpus_options *opt, FILE *out,
                                     gyro_corpus_stats *stats)
{
    gyro_corpus_stats local;
    if (!stats) stats = &local;
    memset(stats, 0, sizeof *stats);
    if (n_inputs < 1) return gyro_error_set(GYRO_ERR_USAGE, "no input");
    gyro_normalizer *norm = NULL;
    gyro_status s = gyro_normalizer_new(&opt->norm, &norm);
    if (s) return s;
    encoder e = {NULL, NULL, stats, out};
    s = read_inputs(&e, inputs, n_inputs, opt->format, norm);
    gyro_normalizer_free(norm);
    if (!s && fflush(out) != 0) s = gyro_error_set(GYRO_ERR_IO, "write error: %s", strerror(errno));
    return s;
}

/* ---- reading ---------------------------------------------------------------------------- */

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

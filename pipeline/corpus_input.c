/* corpus_input.c — corpus input for char2vec: detect a Document stream, read text or Documents,
 * hand each document's grapheme clusters to the corpus builder (see corpus_input.h).
 */
#include "pipeline/corpus_input.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "pipeline/stream.h"
#include "proto/gyro.pb-c.h"

#define MAX_DOC_BYTES ((size_t)1 << 20) /* a longer line is cut into documents of this size */

void gyro_corpus_input_options_init(gyro_corpus_input_options *opt)
{
    memset(opt, 0, sizeof *opt);
    gyro_normalize_options_init(&opt->norm);
    opt->format = GYRO_CORPUS_AUTO;
    opt->min_count = 5;
    opt->max_vocab = 0;
}

/* ---- one input --------------------------------------------------------------------------- */

typedef struct input {
    const char *name;
    FILE *raw;          /* the file or stdin */
    FILE *fp;           /* what we read: raw, or the peek wrapper */
    int is_stream;
} input;

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
    return gyro_stream_sniff(in->raw, name, &in->fp, &in->is_stream);
}

static void input_close(input *in)
{
    if (in->fp && in->fp != in->raw) fclose(in->fp);
    if (in->raw && in->raw != stdin) fclose(in->raw);
    in->fp = in->raw = NULL;
}

/* ---- documents to the builder ------------------------------------------------------------- */

typedef struct reader {
    gyro_corpus_builder *b;
    gyro_corpus_stats *st;   /* documents and repaired are counted here */
} reader;

static gyro_status read_text(reader *e, input *in, gyro_normalizer *norm)
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
            if ((s = gyro_corpus_builder_add(e->b, r.chars, r.n_chars))) break;
            memmove(buf, buf + cut, len - cut);
            len -= cut;
            continue;
        }
        gyro_normalized r;
        s = gyro_normalize_text(norm, buf, len, &r);
        if (s) { gyro_error_prefix(s, "%s:%llu", in->name, (unsigned long long)line); break; }
        e->st->documents++;
        if (r.repairs) e->st->repaired++;
        if ((s = gyro_corpus_builder_add(e->b, r.chars, r.n_chars))) break;
        len = 0;
        line++;
    }
    free(buf);
    return s;
}

static gyro_status read_stream(reader *e, input *in, gyro_normalizer *norm)
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
            s = gyro_corpus_builder_add(e->b, d->chars, d->n_chars);
        } else if (d->text && d->text[0]) {
            /* a Document written without its clusters: segment its (normalized) text */
            gyro_normalized nr;
            s = gyro_normalize_text(norm, d->text, strlen(d->text), &nr);
            if (!s) s = gyro_corpus_builder_add(e->b, nr.chars, nr.n_chars);
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
static gyro_status read_inputs(reader *e, const char *const *inputs, int n_inputs,
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

gyro_status gyro_corpus_input_encode(const char *const *inputs, int n_inputs,
                                     const gyro_corpus_input_options *opt, const char *ids_path,
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
    gyro_corpus_builder *b = NULL;
    if ((s = gyro_corpus_builder_new(ids_path, vocab, stats, &b))) {
        gyro_normalizer_free(norm);
        return s;
    }
    reader e = {b, stats};
    s = read_inputs(&e, inputs, n_inputs, opt->format, norm);
    gyro_normalizer_free(norm);
    if (!s && vocab->n == 0)
        s = gyro_error_set(GYRO_ERR_DATA, "the corpus is empty: no character in %d input%s",
                           n_inputs, n_inputs > 1 ? "s" : "");
    if (!s) s = gyro_corpus_builder_finish(b, opt->min_count, opt->max_vocab);
    gyro_corpus_builder_free(b);
    return s;
}

gyro_status gyro_corpus_input_write_tokens(const char *const *inputs, int n_inputs,
                                           const gyro_corpus_input_options *opt, FILE *out,
                                           gyro_corpus_stats *stats)
{
    gyro_corpus_stats local;
    if (!stats) stats = &local;
    memset(stats, 0, sizeof *stats);
    if (n_inputs < 1) return gyro_error_set(GYRO_ERR_USAGE, "no input");
    gyro_normalizer *norm = NULL;
    gyro_status s = gyro_normalizer_new(&opt->norm, &norm);
    if (s) return s;
    gyro_corpus_builder *b = NULL;
    if ((s = gyro_corpus_builder_new_tokens(out, stats, &b))) {
        gyro_normalizer_free(norm);
        return s;
    }
    reader e = {b, stats};
    s = read_inputs(&e, inputs, n_inputs, opt->format, norm);
    gyro_normalizer_free(norm);
    if (!s) s = gyro_corpus_builder_finish(b, 0, 0);
    gyro_corpus_builder_free(b);
    return s;
}

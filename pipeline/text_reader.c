/* text_reader.c — line and paragraph reader with a bounded document buffer (see text_reader.h).
 *
 * Bytes come through getc_unlocked (stdio's buffer), so a reader on a pipe returns each line as
 * soon as it arrives and NUL bytes inside a line survive. The document buffer grows by
 * doubling up to max_document + 1 bytes; bytes past the limit are counted but not stored.
 */
#include "pipeline/text_reader.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct gyro_text_reader {
    FILE *fp;
    int owns_fp;
    char *name;
    size_t max_document;
    int paragraphs;
    char *doc;          /* (cap) current document, NUL-terminated */
    size_t len, cap;
    int overflow;       /* current document exceeded max_document */
    int line_blank;     /* the line last read held only spaces, tabs and CR */
    uint64_t lines;     /* lines consumed */
    uint64_t bytes;     /* bytes consumed */
    int eof;
};

static gyro_status reserve(gyro_text_reader *r, size_t need)
{
    if (need <= r->cap) return GYRO_OK;
    size_t cap = r->cap ? r->cap : 256;
    while (cap < need) cap *= 2;
    if (cap > r->max_document + 1) cap = r->max_document + 1;
    char *nd = realloc(r->doc, cap);
    if (!nd) return gyro_error_set(GYRO_ERR_NOMEM, "%s: out of memory for a %zu-byte line", r->name, cap);
    r->doc = nd;
    r->cap = cap;
    return GYRO_OK;
}

/* Append one line (without its "\n" and a final "\r") to the document buffer. *had = 0 when the
 * input ended before any byte of a new line. */
static gyro_status read_line(gyro_text_reader *r, int *had)
{
    size_t start = r->len;
    int ended = 0;
    *had = 0;
    r->line_blank = 1;
    if (r->eof) return GYRO_OK;
    for (;;) {
        int c = getc_unlocked(r->fp);
        if (c == EOF) break;
        *had = 1;
        r->bytes++;
        if (c == '\n') {
            ended = 1;
            break;
        }
        if (c != ' ' && c != '\t' && c != '\r') r->line_blank = 0;
        if (r->len < r->max_document) {
            if (r->len + 1 >= r->cap) {
                gyro_status s = reserve(r, r->len + 2);
                if (s) return s;
            }
            r->doc[r->len++] = (char)c;
        } else {
            r->overflow = 1;
        }
    }
    if (!ended) {
        if (ferror(r->fp))
            return gyro_error_set(GYRO_ERR_IO, "%s:%llu: read error: %s", r->name,
                                  (unsigned long long)r->lines + 1, strerror(errno));
        r->eof = 1;
    }
    if (!*had) return GYRO_OK;
    r->lines++;
    if (r->lines == 1 && r->len - start >= 3 && memcmp(r->doc + start, "\xEF\xBB\xBF", 3) == 0) {
        memmove(r->doc + start, r->doc + start + 3, r->len - start - 3);
        r->len -= 3;
    }
    if (r->len > start && r->doc[r->len - 1] == '\r') r->len--;
    return GYRO_OK;
}

gyro_status gyro_text_reader_next(gyro_text_reader *r, gyro_text_document *doc)
{
    if (!r || !doc) return gyro_error_set(GYRO_ERR_USAGE, "text reader: NULL argument");
    memset(doc, 0, sizeof *doc);
    r->len = 0;
    r->overflow = 0;
    gyro_status s = reserve(r, 1);
    if (s) return s;
    int had;
    if (!r->paragraphs) {
        uint64_t offset = r->bytes;
        if ((s = read_line(r, &had))) return s;
        if (!had) return GYRO_OK;
        doc->line = r->lines;
        doc->offset = offset;
    } else {
        /* skip blank lines, then gather lines up to the next blank line */
        for (;;) {
            uint64_t offset = r->bytes;
            if ((s = read_line(r, &had))) return s;
            if (!had) return GYRO_OK;
            if (r->line_blank) {
                r->len = 0;
                r->overflow = 0;
                continue;
            }
            doc->line = r->lines;
            doc->offset = offset;
            break;
        }
        for (;;) {
            size_t mark = r->len;
            int overflow = r->overflow, room = r->len < r->max_document;
            if (room) r->doc[r->len++] = '\n';   /* reserve() keeps room for one more byte */
            if ((s = read_line(r, &had))) return s;
            if (!had || r->line_blank) {
                r->len = mark;
                r->overflow = overflow;
                break;
            }
            if (!room) r->overflow = 1;
        }
    }
    r->doc[r->len] = '\0';
    doc->data = r->doc;
    doc->len = r->len;
    doc->too_long = r->overflow;
    return GYRO_OK;
}

gyro_status gyro_text_reader_open_file(FILE *fp, const char *name,
                                       const gyro_text_reader_options *opt, gyro_text_reader **out)
{
    if (!fp || !out) return gyro_error_set(GYRO_ERR_USAGE, "text reader: NULL file or output");
    gyro_text_reader *r = calloc(1, sizeof *r);
    if (!r || !(r->name = strdup(name ? name : "-"))) {
        free(r);
        return gyro_error_set(GYRO_ERR_NOMEM, "text reader: out of memory");
    }
    r->fp = fp;
    r->max_document = opt && opt->max_document ? opt->max_document : GYRO_TEXT_DEFAULT_MAX_DOCUMENT;
    r->paragraphs = opt ? opt->paragraphs : 0;
    *out = r;
    return GYRO_OK;
}

gyro_status gyro_text_reader_open_path(const char *path, const gyro_text_reader_options *opt,
                                       gyro_text_reader **out)
{
    if (!path || !out) return gyro_error_set(GYRO_ERR_USAGE, "text reader: NULL path or output");
    if (strcmp(path, "-") == 0) return gyro_text_reader_open_file(stdin, "-", opt, out);
    FILE *fp = fopen(path, "rb");
    if (!fp) return gyro_error_set(GYRO_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    gyro_status s = gyro_text_reader_open_file(fp, path, opt, out);
    if (s) {
        fclose(fp);
        return s;
    }
    (*out)->owns_fp = 1;
    return GYRO_OK;
}

uint64_t gyro_text_reader_lines(const gyro_text_reader *r) { return r ? r->lines : 0; }
uint64_t gyro_text_reader_bytes(const gyro_text_reader *r) { return r ? r->bytes : 0; }
const char *gyro_text_reader_name(const gyro_text_reader *r) { return r ? r->name : "-"; }

void gyro_text_reader_free(gyro_text_reader *r)
{
    if (!r) return;
    if (r->owns_fp) fclose(r->fp);
    free(r->name);
    free(r->doc);
    free(r);
}

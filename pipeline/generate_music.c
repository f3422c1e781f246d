/* generate_music.c — load the music-set templates and generate labelled utterances
 * (see generate_music.h for the files and the sampling scheme).
 *
 * The files come from a directory (`--data DIR`) or from the copy of corpora/music/ compiled into
 * libgyro (pipeline/embedded.h); both go through one line reader (a FILE*, or a walk over the
 * bytes of an embedded file), so the checks and the error messages are the same.
 *
 * Templates are compiled at load time into segments (a literal, or a slot list index with a
 * "draw a different value" flag for {song2}-style repeats), so generation is a walk over
 * segments appending to one reusable buffer: no parsing and no allocation per example once the
 * buffer has grown.
 */
#include "pipeline/generate_music.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/core/rng.h"
#include "pipeline/embedded.h"
#include "models/text/labels.h"
#include "models/text/utf8.h"

/* ---- data ------------------------------------------------------------------------------------- */

typedef struct str_list {
    char *name;       /* slot name, or the file's role */
    char **v;         /* (n) */
    size_t n, cap;
} str_list;

typedef struct segment {
    int slot;         /* -1: literal; else index into slots */
    int again;        /* 1: draw a value different from the slot's previous draw ({song2}) */
    char *lit;        /* literal text (slot == -1) */
    size_t len;
} segment;

typedef struct template_ {
    segment *seg;     /* (n) */
    size_t n;
} template_;

typedef struct atom_templates {
    char *atom;
    template_ *t;     /* (n) */
    size_t n, cap;
    int used;         /* occurs in some intent */
} atom_templates;

typedef struct intent {
    gyro_label label; /* parsed: name as written, sorted atoms */
    size_t *parts;    /* (n_parts) atom_templates index of each written atom, in order */
    size_t n_parts;
} intent;

struct gyro_music_gen {
    intent *intents;          /* (n_intents) */
    size_t n_intents;
    atom_templates *atoms;    /* (n_atoms) */
    size_t n_atoms, cap_atoms;
    str_list *slots;          /* (n_slots) */
    size_t n_slots, cap_slots;
    str_list connectors, prefixes, suffixes;
    size_t n_templates;
};

/* ---- file reading ------------------------------------------------------------------------------- */

/* Where the files of a set come from: a directory, or in-memory files. */
typedef struct source {
    const char *dir;              /* directory, or NULL: files */
    const gyro_data_file *files;  /* (n_files) when dir is NULL */
    size_t n_files;
    const char *origin;           /* names the in-memory files in messages */
} source;

/* The name of file `rel` of the set in messages (and, for a directory, its path). */
static void source_path(const source *src, const char *rel, char *out, size_t size)
{
    snprintf(out, size, "%s/%s", src->dir ? src->dir : src->origin, rel);
}

/* Lines of one file: from a FILE*, or from the bytes of an in-memory file. */
typedef struct line_reader {
    FILE *fp;
    const unsigned char *mem;     /* (len) when fp is NULL */
    size_t len, pos;
    char *buf;                    /* (cap) the current line, NUL-terminated */
    size_t cap;
} line_reader;

/* The next line with its '\n' into r->buf; its length, -1 at the end (or on a read error of
 * the FILE*: check ferror), -2 out of memory. */
static ssize_t read_line(line_reader *r)
{
    if (r->fp) return getline(&r->buf, &r->cap, r->fp);
    if (r->pos >= r->len) return -1;
    const unsigned char *s = r->mem + r->pos;
    const unsigned char *nl = memchr(s, '\n', r->len - r->pos);
    size_t n = nl ? (size_t)(nl - s) + 1 : r->len - r->pos;
    if (n + 1 > r->cap) {
        char *b = realloc(r->buf, n + 1);
        if (!b) return -2;
        r->buf = b;
        r->cap = n + 1;
    }
    memcpy(r->buf, s, n);
    r->buf[n] = '\0';
    r->pos += n;
    return (ssize_t)n;
}

typedef gyro_status (*line_fn)(gyro_music_gen *g, void *ctx, const char *path, unsigned long line,
                               char *text);

/* Call fn for every non-blank, non-comment line of file `rel` of the set (CR and a leading BOM
 * removed). A missing file is GYRO_ERR_IO. */
static gyro_status for_lines(gyro_music_gen *g, const source *src, const char *rel, line_fn fn,
                             void *ctx)
{
    char path[4096];
    source_path(src, rel, path, sizeof path);
    line_reader r = {0};
    if (src->dir) {
        if (!(r.fp = fopen(path, "rb")))
            return gyro_error_set(GYRO_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    } else {
        const gyro_data_file *f = gyro_data_file_find(src->files, src->n_files, rel);
        if (!f || (!f->bytes && f->length))
            return gyro_error_set(GYRO_ERR_IO, "%s: no such embedded file", path);
        r.mem = f->bytes;
        r.len = f->length;
    }
    ssize_t len;
    unsigned long line = 0;
    gyro_status st = GYRO_OK;
    while (st == GYRO_OK && (len = read_line(&r)) >= 0) {
        line++;
        char *s = r.buf;
        if (line == 1 && len >= 3 && memcmp(s, "\xEF\xBB\xBF", 3) == 0) { s += 3; len -= 3; }
        if ((size_t)len != strlen(s)) {
            st = gyro_error_set(GYRO_ERR_DATA, "%s:%lu: NUL byte", path, line);
            break;
        }
        while (len > 0 && (s[len - 1] == '\n' || s[len - 1] == '\r')) s[--len] = '\0';
        size_t bad = gyro_utf8_find_invalid((const uint8_t *)s, (size_t)len);
        if (bad < (size_t)len) {
            st = gyro_error_set(GYRO_ERR_DATA, "%s:%lu: invalid UTF-8 at byte %zu", path, line, bad);
            break;
        }
        size_t k = 0;
        while (s[k] == ' ' || s[k] == '\t') k++;
        if (s[k] == '\0' || s[k] == '#') continue;
        st = fn(g, ctx, path, line, s);
    }
    if (st == GYRO_OK && len == -2)
        st = gyro_error_set(GYRO_ERR_NOMEM, "%s: out of memory", path);
    if (st == GYRO_OK && r.fp && ferror(r.fp))
        st = gyro_error_set(GYRO_ERR_IO, "%s: read error: %s", path, strerror(errno));
    free(r.buf);
    if (r.fp) fclose(r.fp);
    return st;
}

static gyro_status nomem(void) { return gyro_error_set(GYRO_ERR_NOMEM, "out of memory loading the music set"); }

static gyro_status list_push(str_list *l, const char *s)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        char **v = realloc(l->v, cap * sizeof *v);
        if (!v) return nomem();
        l->v = v;
        l->cap = cap;
    }
    if (!(l->v[l->n] = strdup(s))) return nomem();
    l->n++;
    return GYRO_OK;
}

static void list_free(str_list *l)
{
    for (size_t i = 0; i < l->n; i++) free(l->v[i]);
    free(l->v);
    free(l->name);
}

static gyro_status add_value(gyro_music_gen *g, void *ctx, const char *path, unsigned long line,
                             char *text)
{
    (void)g; (void)path; (void)line;
    return list_push(ctx, text);
}

/* ---- templates -------------------------------------------------------------------------------- */

static long find_atom(const gyro_music_gen *g, const char *atom)
{
    for (size_t i = 0; i < g->n_atoms; i++)
        if (strcmp(g->atoms[i].atom, atom) == 0) return (long)i;
    return -1;
}

/* Index of the slot list `name`, loading slots/<name>.txt on first use. */
static gyro_status slot_index(gyro_music_gen *g, const source *src, const char *name,
                              const char *path, unsigned long line, int *out)
{
    for (size_t i = 0; i < g->n_slots; i++)
        if (strcmp(g->slots[i].name, name) == 0) { *out = (int)i; return GYRO_OK; }
    if (g->n_slots == g->cap_slots) {
        size_t cap = g->cap_slots ? g->cap_slots * 2 : 16;
        str_list *s = realloc(g->slots, cap * sizeof *s);
        if (!s) return nomem();
        g->slots = s;
        g->cap_slots = cap;
    }
    str_list *l = &g->slots[g->n_slots];
    memset(l, 0, sizeof *l);
    if (!(l->name = strdup(name))) return nomem();
    g->n_slots++;
    char rel[96], file[4096];
    snprintf(rel, sizeof rel, "slots/%s.txt", name);
    source_path(src, rel, file, sizeof file);
    gyro_status st = for_lines(g, src, rel, add_value, l);
    if (st == GYRO_ERR_IO)
        return gyro_error_set(GYRO_ERR_DATA, "%s:%lu: unknown slot {%s} (no %s)", path, line, name, file);
    if (st != GYRO_OK) return st;
    if (l->n == 0) return gyro_error_set(GYRO_ERR_DATA, "%s: no values for slot {%s}", file, name);
    *out = (int)(g->n_slots - 1);
    return GYRO_OK;
}

static gyro_status push_seg(template_ *t, size_t *cap, segment s)
{
    if (t->n == *cap) {
        size_t nc = *cap ? *cap * 2 : 8;
        segment *v = realloc(t->seg, nc * sizeof *v);
        if (!v) return nomem();
        t->seg = v;
        *cap = nc;
    }
    t->seg[t->n++] = s;
    return GYRO_OK;
}

static void template_free(template_ *t)
{
    for (size_t i = 0; i < t->n; i++) free(t->seg[i].lit);
    free(t->seg);
}

/* Compile "literal{slot}literal..." into segments. */
static gyro_status compile(gyro_music_gen *g, const source *src, const char *path,
                           unsigned long line, const char *text, template_ *t)
{
    size_t cap = 0;
    const char *p = text;
    gyro_status st = GYRO_OK;
    while (*p && st == GYRO_OK) {
        if (*p == '}')
            return gyro_error_set(GYRO_ERR_DATA, "%s:%lu: '}' without '{'", path, line);
        if (*p != '{') {
            const char *q = p;
            while (*q && *q != '{' && *q != '}') q++;
            segment s = {.slot = -1, .len = (size_t)(q - p)};
            if (!(s.lit = strndup(p, s.len))) return nomem();
            if ((st = push_seg(t, &cap, s)) != GYRO_OK) { free(s.lit); return st; }
            p = q;
            continue;
        }
        const char *close = strchr(p, '}');
        if (!close) return gyro_error_set(GYRO_ERR_DATA, "%s:%lu: '{' without '}'", path, line);
        char name[64];
        size_t n = (size_t)(close - p - 1);
        if (n == 0 || n >= sizeof name)
            return gyro_error_set(GYRO_ERR_DATA, "%s:%lu: bad slot name", path, line);
        memcpy(name, p + 1, n);
        name[n] = '\0';
        int again = 0;
        while (n > 0 && name[n - 1] >= '0' && name[n - 1] <= '9') { name[--n] = '\0'; again = 1; }
        for (size_t k = 0; k < n; k++)
            if (!((name[k] >= 'a' && name[k] <= 'z') || name[k] == '_'))
                return gyro_error_set(GYRO_ERR_DATA, "%s:%lu: bad slot name {%.*s}", path, line,
                                      (int)(close - p - 1), p + 1);
        if (n == 0) return gyro_error_set(GYRO_ERR_DATA, "%s:%lu: bad slot name", path, line);
        segment s = {.again = again};
        if ((st = slot_index(g, src, name, path, line, &s.slot)) != GYRO_OK) return st;
        if ((st = push_seg(t, &cap, s)) != GYRO_OK) return st;
        p = close + 1;
    }
    if (t->n == 0) return gyro_error_set(GYRO_ERR_DATA, "%s:%lu: empty template", path, line);
    return st;
}

static gyro_status add_template(gyro_music_gen *g, void *ctx, const char *path, unsigned long line,
                                char *text)
{
    char *tab = strchr(text, '\t');
    if (!tab || strchr(tab + 1, '\t'))
        return gyro_error_set(GYRO_ERR_DATA, "%s:%lu: expected atom<TAB>template", path, line);
    *tab = '\0';
    gyro_label l;
    gyro_status st = gyro_label_parse(text, &l);
    if (st != GYRO_OK) return gyro_error_prefix(st, "%s:%lu", path, line);
    int composite = l.n_atoms != 1 || strchr(l.name, '+') != NULL;
    long a = find_atom(g, l.name);
    gyro_label_free(&l);
    if (composite)
        return gyro_error_set(GYRO_ERR_DATA, "%s:%lu: templates belong to single atoms, not '%s'",
                              path, line, text);
    if (a < 0) {
        if (g->n_atoms == g->cap_atoms) {
            size_t cap = g->cap_atoms ? g->cap_atoms * 2 : 64;
            atom_templates *v = realloc(g->atoms, cap * sizeof *v);
            if (!v) return nomem();
            g->atoms = v;
            g->cap_atoms = cap;
        }
        atom_templates *at = &g->atoms[g->n_atoms];
        memset(at, 0, sizeof *at);
        if (!(at->atom = strdup(text))) return nomem();
        a = (long)g->n_atoms++;
    }
    atom_templates *at = &g->atoms[a];
    if (at->n == at->cap) {
        size_t cap = at->cap ? at->cap * 2 : 4;
        template_ *v = realloc(at->t, cap * sizeof *v);
        if (!v) return nomem();
        at->t = v;
        at->cap = cap;
    }
    template_ *t = &at->t[at->n];
    memset(t, 0, sizeof *t);
    at->n++;   /* counted before compiling so a failure frees its segments */
    g->n_templates++;
    return compile(g, ctx, path, line, tab + 1, t);
}

/* ---- intents ---------------------------------------------------------------------------------- */

typedef struct intent_ctx { size_t cap; const char *templates_path; } intent_ctx;

static gyro_status add_intent(gyro_music_gen *g, void *ctx, const char *path, unsigned long line,
                              char *text)
{
    intent_ctx *ic = ctx;
    if (g->n_intents == ic->cap) {
        size_t cap = ic->cap ? ic->cap * 2 : 128;
        intent *v = realloc(g->intents, cap * sizeof *v);
        if (!v) return nomem();
        g->intents = v;
        ic->cap = cap;
    }
    intent *in = &g->intents[g->n_intents];
    memset(in, 0, sizeof *in);
    gyro_status st = gyro_label_parse(text, &in->label);
    if (st != GYRO_OK) return gyro_error_prefix(st, "%s:%lu", path, line);
    g->n_intents++;
    for (size_t i = 0; i + 1 < g->n_intents; i++)
        if (strcmp(g->intents[i].label.name, in->label.name) == 0)
            return gyro_error_set(GYRO_ERR_DATA, "%s:%lu: intent '%s' listed twice", path, line,
                                  in->label.name);
    /* the written order of atoms: split the name on '+' */
    size_t parts = 1;
    for (const char *p = in->label.name; *p; p++) parts += *p == '+';
    in->parts = malloc(parts * sizeof *in->parts);
    if (!in->parts) return nomem();
    char *copy = strdup(in->label.name);
    if (!copy) return nomem();
    char *save = NULL;
    for (char *tok = strtok_r(copy, "+", &save); tok; tok = strtok_r(NULL, "+", &save)) {
        long a = find_atom(g, tok);
        if (a < 0) {
            st = gyro_error_set(GYRO_ERR_DATA, "%s:%lu: atom '%s' of intent '%s' has no template in "
                                "%s", path, line, tok, in->label.name, ic->templates_path);
            break;
        }
        g->atoms[a].used = 1;
        in->parts[in->n_parts++] = (size_t)a;
    }
    free(copy);
    return st;
}

/* ---- public API ------------------------------------------------------------------------------- */

void gyro_music_gen_free(gyro_music_gen *g)
{
    if (!g) return;
    for (size_t i = 0; i < g->n_intents; i++) {
        gyro_label_free(&g->intents[i].label);
        free(g->intents[i].parts);
    }
    free(g->intents);
    for (size_t i = 0; i < g->n_atoms; i++) {
        for (size_t k = 0; k < g->atoms[i].n; k++) template_free(&g->atoms[i].t[k]);
        free(g->atoms[i].t);
        free(g->atoms[i].atom);
    }
    free(g->atoms);
    for (size_t i = 0; i < g->n_slots; i++) list_free(&g->slots[i]);
    free(g->slots);
    list_free(&g->connectors);
    list_free(&g->prefixes);
    list_free(&g->suffixes);
    free(g);
}

static gyro_status load(const source *src, gyro_music_gen **out)
{
    *out = NULL;
    gyro_music_gen *g = calloc(1, sizeof *g);
    if (!g) return nomem();
    char path[4096], tpath[4096];
    source_path(src, "templates.tsv", tpath, sizeof tpath);
    gyro_status st = for_lines(g, src, "templates.tsv", add_template, (void *)src);
    intent_ctx ic = {.templates_path = tpath};
    if (st == GYRO_OK) {
        source_path(src, "intents.txt", path, sizeof path);
        st = for_lines(g, src, "intents.txt", add_intent, &ic);
        if (st == GYRO_OK && g->n_intents == 0)
            st = gyro_error_set(GYRO_ERR_DATA, "%s: no intents", path);
    }
    for (size_t i = 0; st == GYRO_OK && i < g->n_atoms; i++)
        if (!g->atoms[i].used)
            st = gyro_error_set(GYRO_ERR_DATA, "%s: atom '%s' has templates but is part of no intent "
                                "in %s", tpath, g->atoms[i].atom, path);
    static const char *const files[] = {"connectors.txt", "prefixes.txt", "suffixes.txt"};
    str_list *lists[] = {&g->connectors, &g->prefixes, &g->suffixes};
    for (int k = 0; k < 3 && st == GYRO_OK; k++) {
        source_path(src, files[k], path, sizeof path);
        st = for_lines(g, src, files[k], add_value, lists[k]);
        if (st == GYRO_OK && lists[k]->n == 0) st = gyro_error_set(GYRO_ERR_DATA, "%s: empty", path);
    }
    if (st != GYRO_OK) {
        gyro_music_gen_free(g);
        return st;
    }
    *out = g;
    return GYRO_OK;
}

gyro_status gyro_music_gen_load(const char *dir, gyro_music_gen **out)
{
    if (out) *out = NULL;
    if (!dir || !out) return gyro_error_set(GYRO_ERR_USAGE, "gyro_music_gen_load: NULL argument");
    source src = {.dir = dir};
    return load(&src, out);
}

gyro_status gyro_music_gen_load_files(const gyro_data_file *files, size_t n, const char *origin,
                                      gyro_music_gen **out)
{
    if (out) *out = NULL;
    if ((!files && n) || !out)
        return gyro_error_set(GYRO_ERR_USAGE, "gyro_music_gen_load_files: NULL argument");
    source src = {.files = files, .n_files = n, .origin = origin ? origin : "[embedded]"};
    return load(&src, out);
}

gyro_status gyro_music_gen_load_default(gyro_music_gen **out)
{
    return gyro_music_gen_load_files(gyro_music_files, gyro_music_n_files,
                                     GYRO_MUSIC_EMBEDDED_ORIGIN, out);
}

size_t gyro_music_gen_n_intents(const gyro_music_gen *g) { return g ? g->n_intents : 0; }

const char *gyro_music_gen_intent(const gyro_music_gen *g, size_t i)
{
    return (g && i < g->n_intents) ? g->intents[i].label.name : NULL;
}

size_t gyro_music_gen_n_templates(const gyro_music_gen *g) { return g ? g->n_templates : 0; }

/* ---- generation ------------------------------------------------------------------------------- */

typedef struct buf { char *s; size_t len, cap; } buf;

static int buf_add(buf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = (b->len + n + 1) * 2;
        char *p = realloc(b->s, cap);
        if (!p) return -1;
        b->s = p;
        b->cap = cap;
    }
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
    return 0;
}

static const char *pick(const str_list *l, gyro_rng *r)
{
    return l->v[gyro_rng_below(r, (uint32_t)l->n)];
}

gyro_status gyro_music_generate(const gyro_music_gen *g, uint64_t seed, uint64_t n,
                                gyro_import_sink sink, void *ctx)
{
    if (!g || !sink) return gyro_error_set(GYRO_ERR_USAGE, "gyro_music_generate: NULL argument");
    gyro_rng r;
    gyro_rng_seed(&r, seed);
    size_t k = g->n_intents;
    size_t *order = malloc(k * sizeof *order);
    size_t *last = malloc((g->n_slots ? g->n_slots : 1) * sizeof *last);
    if (!order || !last) {
        free(order);
        free(last);
        return nomem();
    }
    for (size_t i = 0; i < k; i++) order[i] = i;
    for (size_t i = 0; i < g->n_slots; i++) last[i] = SIZE_MAX;
    char source[64], session[64];
    snprintf(source, sizeof source, "music:seed=%llu", (unsigned long long)seed);
    buf text = {0};
    gyro_status st = GYRO_OK;
    uint64_t session_id = 0, session_left = 0;
    for (uint64_t i = 0; i < n && st == GYRO_OK; i++) {
        if (i % k == 0)   /* a new permutation of the intents each cycle */
            for (size_t a = k - 1; a > 0; a--) {
                size_t b = gyro_rng_below(&r, (uint32_t)(a + 1));
                size_t t = order[a];
                order[a] = order[b];
                order[b] = t;
            }
        if (session_left == 0) {
            session_id++;
            session_left = 1 + gyro_rng_below(&r, 4);
        }
        session_left--;
        const intent *in = &g->intents[order[i % k]];
        text.len = 0;
        int fail = 0;
        if (gyro_rng_uniform(&r) < 0.35) {
            const char *p = pick(&g->prefixes, &r);
            fail |= buf_add(&text, p, strlen(p));
        }
        for (size_t j = 0; j < in->n_parts; j++) {
            if (j) {
                const char *c = pick(&g->connectors, &r);
                fail |= buf_add(&text, c, strlen(c));
            }
            const atom_templates *at = &g->atoms[in->parts[j]];
            const template_ *t = &at->t[gyro_rng_below(&r, (uint32_t)at->n)];
            for (size_t s = 0; s < t->n; s++) {
                const segment *sg = &t->seg[s];
                if (sg->slot < 0) {
                    fail |= buf_add(&text, sg->lit, sg->len);
                    continue;
                }
                const str_list *l = &g->slots[sg->slot];
                size_t v = gyro_rng_below(&r, (uint32_t)l->n);
                if (sg->again && l->n > 1 && v == last[sg->slot])
                    v = (v + 1 + gyro_rng_below(&r, (uint32_t)(l->n - 1))) % l->n;
                last[sg->slot] = v;
                fail |= buf_add(&text, l->v[v], strlen(l->v[v]));
            }
        }
        if (gyro_rng_uniform(&r) < 0.25) {
            const char *s = pick(&g->suffixes, &r);
            fail |= buf_add(&text, s, strlen(s));
        }
        if (fail) {
            st = nomem();
            break;
        }
        snprintf(session, sizeof session, "m%llu-%llu", (unsigned long long)seed,
                 (unsigned long long)session_id);
        Gyro__V1__Example ex = GYRO__V1__EXAMPLE__INIT;
        ex.text = text.s;
        ex.label = in->label.name;
        ex.n_labels = (size_t)in->label.n_atoms;
        ex.labels = in->label.atoms;
        ex.source = source;
        ex.session = session;
        ex.line = i + 1;
        st = sink(ctx, &ex);
    }
    free(text.s);
    free(order);
    free(last);
    return st;
}

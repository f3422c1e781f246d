/* labels.c — parsing of intent labels and the label set (see labels.h for the grammar).
 *
 * Parsing is one pass over the bytes: split on '+', trim ASCII whitespace around each atom,
 * check every level (non-empty, no whitespace or control characters, valid UTF-8), then sort
 * and deduplicate the atoms. The label set interns class names and atom names in two
 * string maps (models/text/strmap.h: ids in insertion order) and precomputes for
 * each class its atom ids, depth, parent and projections, so lookups at evaluation time are
 * allocation-free.
 */
#include "models/text/labels.h"
#include "models/text/strmap.h"
#include "models/text/utf8.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- parsing --------------------------------------------------------------------------------- */

typedef struct span { size_t off, len; } span;

static int is_space(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

/* Unicode spaces and invisible characters that must not hide inside a label. */
static int is_invisible(uint32_t cp)
{
    return cp == 0xA0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200F) || cp == 0x2028 ||
           cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000 || cp == 0xFEFF;
}

/* Split and validate; atoms[] receives the trimmed atoms in written order. */
static gyro_status label_split(const char *text, span *atoms, int *n_atoms, int *depth)
{
    const unsigned char *t = (const unsigned char *)text;
    size_t n = strlen(text);
    size_t b = 0, e = n;
    while (b < e && is_space(t[b])) b++;
    while (e > b && is_space(t[e - 1])) e--;
    if (b == e) return gyro_error_set(GYRO_ERR_DATA, "empty label");
    if (e - b > GYRO_LABEL_MAX_BYTES)
        return gyro_error_set(GYRO_ERR_LIMIT, "label of %zu bytes (limit %d)", e - b,
                              GYRO_LABEL_MAX_BYTES);
    int na = 0, maxd = 0;
    size_t start = b;
    for (size_t i = b; i <= e; i++) {
        if (i < e && t[i] != '+') continue;
        size_t ab = start, ae = i;
        while (ab < ae && is_space(t[ab])) ab++;
        while (ae > ab && is_space(t[ae - 1])) ae--;
        if (ab == ae)
            return gyro_error_set(GYRO_ERR_DATA, "empty atom at byte %zu of '%.*s'", start,
                                  (int)(e - b), text + b);
        if (na == GYRO_LABEL_MAX_ATOMS)
            return gyro_error_set(GYRO_ERR_LIMIT, "more than %d atoms in '%.*s'",
                                  GYRO_LABEL_MAX_ATOMS, (int)(e - b), text + b);
        int d = 1;
        size_t lv = ab;
        for (size_t j = ab; j < ae;) {
            unsigned char c = t[j];
            if (c == '.') {
                if (j == lv)
                    return gyro_error_set(GYRO_ERR_DATA, "empty level at byte %zu of '%.*s'",
                                          j, (int)(e - b), text + b);
                d++;
                lv = ++j;
                continue;
            }
            if (c < 0x20 || c == 0x7F || is_space(c))
                return gyro_error_set(GYRO_ERR_DATA,
                                      "whitespace or control character at byte %zu of a label",
                                      j);
            int32_t cp;
            size_t l = gyro_utf8_decode(t + j, ae - j, &cp);
            if (cp < 0 || (cp >= 0x80 && cp <= 0x9F)) /* ill-formed, or a C1 control */
                return gyro_error_set(GYRO_ERR_DATA, "invalid UTF-8 at byte %zu of a label", j);
            if (is_invisible(cp))
                return gyro_error_set(GYRO_ERR_DATA, "space or invisible character U+%04X at byte "
                                      "%zu of a label", (unsigned)cp, j);
            j += l;
        }
        if (lv == ae)
            return gyro_error_set(GYRO_ERR_DATA, "empty level at byte %zu of '%.*s'", ae,
                                  (int)(e - b), text + b);
        if (d > GYRO_LABEL_MAX_DEPTH)
            return gyro_error_set(GYRO_ERR_LIMIT, "more than %d levels in '%.*s'",
                                  GYRO_LABEL_MAX_DEPTH, (int)(e - b), text + b);
        if (d > maxd) maxd = d;
        atoms[na].off = ab;
        atoms[na].len = ae - ab;
        na++;
        start = i + 1;
    }
    *n_atoms = na;
    *depth = maxd;
    return GYRO_OK;
}

static char *dup_span(const char *text, span s)
{
    char *p = malloc(s.len + 1);
    if (!p) return NULL;
    memcpy(p, text + s.off, s.len);
    p[s.len] = '\0';
    return p;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sort strings and drop duplicates (freeing them); returns the new count. */
static int sort_unique(char **v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_str);
    int m = 0;
    for (int i = 0; i < n; i++) {
        if (m > 0 && strcmp(v[m - 1], v[i]) == 0) { free(v[i]); continue; }
        v[m++] = v[i];
    }
    return m;
}

/* Join strings with '+' into a new string. */
static char *join_plus(char *const *v, int n)
{
    size_t len = 0;
    for (int i = 0; i < n; i++) len += strlen(v[i]) + 1;
    char *out = malloc(len ? len : 1);
    if (!out) return NULL;
    char *p = out;
    for (int i = 0; i < n; i++) {
        size_t l = strlen(v[i]);
        if (i) *p++ = '+';
        memcpy(p, v[i], l);
        p += l;
    }
    *p = '\0';
    return out;
}

gyro_status gyro_label_parse(const char *text, gyro_label *out)
{
    if (out) memset(out, 0, sizeof *out);
    if (!text || !out) return gyro_error_set(GYRO_ERR_USAGE, "gyro_label_parse: NULL argument");
    span sp[GYRO_LABEL_MAX_ATOMS];
    int na = 0, depth = 0;
    gyro_status st = label_split(text, sp, &na, &depth);
    if (st != GYRO_OK) return st;

    size_t len = 0;
    for (int i = 0; i < na; i++) len += sp[i].len + 1;
    out->name = malloc(len);
    out->atoms = calloc((size_t)na, sizeof *out->atoms);
    if (!out->name || !out->atoms) goto nomem;
    char *p = out->name;
    for (int i = 0; i < na; i++) {
        if (i) *p++ = '+';
        memcpy(p, text + sp[i].off, sp[i].len);
        p += sp[i].len;
        out->atoms[i] = dup_span(text, sp[i]);
        if (!out->atoms[i]) { out->n_atoms = i; goto nomem; }
    }
    *p = '\0';
    out->n_atoms = sort_unique(out->atoms, na);
    out->depth = depth;
    return GYRO_OK;
nomem:
    if (!out->atoms) out->n_atoms = 0;
    gyro_label_free(out);
    return gyro_error_set(GYRO_ERR_NOMEM, "out of memory parsing a label");
}

void gyro_label_free(gyro_label *l)
{
    if (!l) return;
    for (int i = 0; i < l->n_atoms; i++) free(l->atoms[i]);
    free(l->atoms);
    free(l->name);
    memset(l, 0, sizeof *l);
}

/* Projection of already parsed atoms: keep the first level+1 levels, sort, dedupe, join. */
static char *project_atoms(char *const *atoms, int n, int level)
{
    char **tmp = calloc((size_t)n, sizeof *tmp);
    if (!tmp) return NULL;
    char *res = NULL;
    int i;
    for (i = 0; i < n; i++) {
        const char *a = atoms[i];
        size_t cut = strlen(a);
        int seen = 0;
        for (size_t j = 0; a[j]; j++)
            if (a[j] == '.' && seen++ == level) { cut = j; break; }
        tmp[i] = malloc(cut + 1);
        if (!tmp[i]) goto out;
        memcpy(tmp[i], a, cut);
        tmp[i][cut] = '\0';
    }
    n = sort_unique(tmp, n);
    i = n;
    res = join_plus(tmp, n);
out:
    for (int k = 0; k < i; k++) free(tmp[k]);
    free(tmp);
    return res;
}

gyro_status gyro_label_canonical(const char *text, char **out)
{
    return gyro_label_project(text, GYRO_LABEL_MAX_DEPTH, out);
}

gyro_status gyro_label_project(const char *text, int level, char **out)
{
    if (out) *out = NULL;
    if (!text || !out || level < 0)
        return gyro_error_set(GYRO_ERR_USAGE, "gyro_label_project: bad argument");
    gyro_label l;
    gyro_status st = gyro_label_parse(text, &l);
    if (st != GYRO_OK) return st;
    *out = project_atoms(l.atoms, l.n_atoms, level);
    gyro_label_free(&l);
    if (!*out) return gyro_error_set(GYRO_ERR_NOMEM, "out of memory projecting a label");
    return GYRO_OK;
}

/* ---- the label set --------------------------------------------------------------------------- */

typedef struct label_class {
    char *name;
    int n_atoms;
    int *atoms;        /* (n_atoms) atom ids, sorted by atom name */
    int depth;
    char **proj;       /* (depth) projections at levels 0..depth-1 */
    char *parent;      /* NULL for composites and top-level simple labels */
} label_class;

struct gyro_label_set {
    label_class *classes;  /* (n_classes) */
    int n_classes, cap_classes;
    char **atoms;          /* (n_atoms) atom names */
    int n_atoms, cap_atoms;
    int max_depth;
    gyro_strmap *class_ids;  /* class name -> class id (ids in insertion order) */
    gyro_strmap *atom_ids;   /* atom name -> atom id */
};

gyro_status gyro_label_set_new(gyro_label_set **out)
{
    if (!out) return gyro_error_set(GYRO_ERR_USAGE, "gyro_label_set_new: NULL argument");
    gyro_label_set *s = calloc(1, sizeof *s);
    if (!s) return gyro_error_set(GYRO_ERR_NOMEM, "out of memory creating a label set");
    gyro_status st = gyro_strmap_new(&s->class_ids);
    if (st == GYRO_OK) st = gyro_strmap_new(&s->atom_ids);
    if (st != GYRO_OK) {
        gyro_label_set_free(s);
        return st;
    }
    *out = s;
    return GYRO_OK;
}

static void class_free(label_class *c)
{
    free(c->name);
    free(c->atoms);
    if (c->proj)
        for (int l = 0; l < c->depth; l++) free(c->proj[l]);
    free(c->proj);
    free(c->parent);
}

void gyro_label_set_free(gyro_label_set *s)
{
    if (!s) return;
    for (int i = 0; i < s->n_classes; i++) class_free(&s->classes[i]);
    free(s->classes);
    for (int i = 0; i < s->n_atoms; i++) free(s->atoms[i]);
    free(s->atoms);
    gyro_strmap_free(s->class_ids);
    gyro_strmap_free(s->atom_ids);
    free(s);
}

/* Intern an atom name; *id receives its atom id. */
static gyro_status atom_intern(gyro_label_set *s, const char *atom, int *id)
{
    int found = gyro_strmap_find(s->atom_ids, atom);
    if (found >= 0) { *id = found; return GYRO_OK; }
    if (s->n_atoms == s->cap_atoms) {
        int cap = s->cap_atoms ? 2 * s->cap_atoms : 16;
        char **a = realloc(s->atoms, (size_t)cap * sizeof *a);
        if (!a) return gyro_error_set(GYRO_ERR_NOMEM, "out of memory adding an atom");
        s->atoms = a;
        s->cap_atoms = cap;
    }
    char *copy = strdup(atom);
    if (!copy) return gyro_error_set(GYRO_ERR_NOMEM, "out of memory adding an atom");
    int32_t mid;
    gyro_status st = gyro_strmap_intern(s->atom_ids, atom, &mid, NULL);
    if (st != GYRO_OK) { free(copy); return st; }
    s->atoms[s->n_atoms] = copy;   /* mid == n_atoms: both grow in lockstep */
    *id = s->n_atoms++;
    return GYRO_OK;
}

gyro_status gyro_label_set_add(gyro_label_set *s, const char *label, int *id)
{
    if (!s || !label) return gyro_error_set(GYRO_ERR_USAGE, "gyro_label_set_add: NULL argument");
    gyro_label l;
    gyro_status st = gyro_label_parse(label, &l);
    if (st != GYRO_OK) return st;
    int found = gyro_strmap_find(s->class_ids, l.name);
    if (found >= 0) {
        gyro_label_free(&l);
        if (id) *id = found;
        return GYRO_OK;
    }
    if (s->n_classes >= (1 << 30)) {
        gyro_label_free(&l);
        return gyro_error_set(GYRO_ERR_LIMIT, "more than 2^30 labels");
    }
    if (s->n_classes == s->cap_classes) {
        int cap = s->cap_classes ? 2 * s->cap_classes : 16;
        label_class *c = realloc(s->classes, (size_t)cap * sizeof *c);
        if (!c) { gyro_label_free(&l); return gyro_error_set(GYRO_ERR_NOMEM, "out of memory"); }
        s->classes = c;
        s->cap_classes = cap;
    }
    label_class c = {0};
    c.n_atoms = l.n_atoms;
    c.depth = l.depth;
    c.atoms = malloc((size_t)l.n_atoms * sizeof *c.atoms);
    c.proj = calloc((size_t)l.depth, sizeof *c.proj);
    if (!c.atoms || !c.proj) goto nomem;
    for (int a = 0; a < l.n_atoms; a++) {
        st = atom_intern(s, l.atoms[a], &c.atoms[a]);
        if (st != GYRO_OK) goto fail;
    }
    for (int lv = 0; lv < l.depth; lv++) {
        c.proj[lv] = project_atoms(l.atoms, l.n_atoms, lv);
        if (!c.proj[lv]) goto nomem;
    }
    if (l.n_atoms == 1 && strchr(l.name, '+') == NULL) {
        char *dot = strrchr(l.name, '.');
        if (dot) {
            c.parent = malloc((size_t)(dot - l.name) + 1);
            if (!c.parent) goto nomem;
            memcpy(c.parent, l.name, (size_t)(dot - l.name));
            c.parent[dot - l.name] = '\0';
        }
    }
    int32_t cid;
    st = gyro_strmap_intern(s->class_ids, l.name, &cid, NULL);  /* cid == n_classes */
    if (st != GYRO_OK) goto fail;
    c.name = l.name;   /* take ownership */
    l.name = NULL;
    gyro_label_free(&l);
    s->classes[s->n_classes] = c;
    if (c.depth > s->max_depth) s->max_depth = c.depth;
    if (id) *id = s->n_classes;
    s->n_classes++;
    return GYRO_OK;
nomem:
    st = gyro_error_set(GYRO_ERR_NOMEM, "out of memory adding a label");
fail:
    class_free(&c);
    gyro_label_free(&l);
    return st;
}

int gyro_label_set_find(const gyro_label_set *s, const char *label)
{
    if (!s || !label) return -1;
    int id = gyro_strmap_find(s->class_ids, label);
    if (id >= 0) return id;
    /* an unparsable name is simply absent: keep the caller's error message as it was */
    char saved[1024];
    snprintf(saved, sizeof saved, "%s", gyro_error_message());
    gyro_label l;
    if (gyro_label_parse(label, &l) != GYRO_OK) {
        if (saved[0]) gyro_error_set(GYRO_ERR_DATA, "%s", saved);
        else gyro_error_clear();
        return -1;
    }
    id = gyro_strmap_find(s->class_ids, l.name);
    gyro_label_free(&l);
    return id;
}

int gyro_label_set_count(const gyro_label_set *s) { return s ? s->n_classes : 0; }

static const label_class *get_class(const gyro_label_set *s, int id)
{
    return (s && id >= 0 && id < s->n_classes) ? &s->classes[id] : NULL;
}

const char *gyro_label_set_name(const gyro_label_set *s, int id)
{
    const label_class *c = get_class(s, id);
    return c ? c->name : NULL;
}

int gyro_label_set_n_atoms(const gyro_label_set *s, int id)
{
    const label_class *c = get_class(s, id);
    return c ? c->n_atoms : 0;
}

const int *gyro_label_set_atoms(const gyro_label_set *s, int id)
{
    const label_class *c = get_class(s, id);
    return c ? c->atoms : NULL;
}

int gyro_label_set_atom_count(const gyro_label_set *s) { return s ? s->n_atoms : 0; }

const char *gyro_label_set_atom_name(const gyro_label_set *s, int atom_id)
{
    return (s && atom_id >= 0 && atom_id < s->n_atoms) ? s->atoms[atom_id] : NULL;
}

int gyro_label_set_atom_find(const gyro_label_set *s, const char *atom)
{
    if (!s || !atom) return -1;
    return gyro_strmap_find(s->atom_ids, atom);
}

int gyro_label_set_depth(const gyro_label_set *s, int id)
{
    const label_class *c = get_class(s, id);
    return c ? c->depth : 0;
}

int gyro_label_set_max_depth(const gyro_label_set *s) { return s ? s->max_depth : 0; }

const char *gyro_label_set_project(const gyro_label_set *s, int id, int level)
{
    const label_class *c = get_class(s, id);
    if (!c || level < 0) return NULL;
    return c->proj[level < c->depth ? level : c->depth - 1];
}

const char *gyro_label_set_parent(const gyro_label_set *s, int id)
{
    const label_class *c = get_class(s, id);
    return c ? c->parent : NULL;
}

int gyro_label_set_parent_id(const gyro_label_set *s, int id)
{
    const label_class *c = get_class(s, id);
    if (!c || !c->parent) return -1;
    return gyro_strmap_find(s->class_ids, c->parent);
}

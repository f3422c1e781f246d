/* reflection.c — the FileDescriptorSet index of gRPC server reflection (see reflection.h).
 *
 * Wire format (protobuf encoding): each field is a varint key (number << 3 | wire type) followed
 * by a varint (type 0), 8 bytes (type 1), a varint length and that many bytes (type 2), or 4
 * bytes (type 5). The messages read, from google/protobuf/descriptor.proto:
 *   FileDescriptorSet     1 file (FileDescriptorProto)
 *   FileDescriptorProto   1 name  2 package  3 dependency  4 message_type  5 enum_type
 *                         6 service  7 extension
 *   DescriptorProto       1 name  2 field  3 nested_type  4 enum_type  6 extension  8 oneof_decl
 *   FieldDescriptorProto, OneofDescriptorProto, EnumValueDescriptorProto, MethodDescriptorProto:
 *                         1 name
 *   EnumDescriptorProto   1 name  2 value
 *   ServiceDescriptorProto 1 name  2 method
 * Enum values are scoped like their enum's siblings (package.VALUE, Message.VALUE), as protoc
 * scopes them. Groups (wire types 3, 4) do not occur in descriptors and are refused.
 */
#include "pipeline/reflection.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/embedded.h"

/* $(BUILD)/gen/proto/descriptor_set.c (corpora/embed-data.sh over the descriptor set). */
extern const gyro_data_file gyro_descriptor_set_files[];
extern const size_t gyro_descriptor_set_n_files;

const uint8_t *gyro_reflection_embedded(size_t *len)
{
    *len = gyro_descriptor_set_files[0].length;
    return gyro_descriptor_set_files[0].bytes;
}

typedef struct refl_file {
    char *name;
    uint8_t *bytes;     /* (len) the FileDescriptorProto */
    size_t len;
    int *deps;          /* (n_deps) file indices */
    int n_deps;
} refl_file;

typedef struct refl_symbol {
    char *name;         /* fully qualified, no leading '.' */
    int file;
    int kind;
} refl_symbol;

struct gyro_reflection {
    refl_file *files;   /* (n_files) */
    int n_files, cap_files;
    refl_symbol *syms;  /* (n_syms) */
    int n_syms, cap_syms;
};

/* ---- wire format --------------------------------------------------------------------------- */

typedef struct wire {
    const uint8_t *p, *end;
} wire;

static int rd_varint(wire *w, uint64_t *v)
{
    uint64_t x = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (w->p >= w->end) return 0;
        uint8_t b = *w->p++;
        x |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = x;
            return 1;
        }
    }
    return 0;
}

/* Next field: its number, and for a length-delimited one its bytes (sub); other wire types are
 * skipped (*is_len = 0). Returns 0 at the end, -1 on malformed input. */
static int rd_field(wire *w, uint32_t *number, int *is_len, wire *sub)
{
    if (w->p >= w->end) return 0;
    uint64_t key, v;
    if (!rd_varint(w, &key) || (key >> 3) == 0 || (key >> 3) > 0x1fffffff) return -1;
    *number = (uint32_t)(key >> 3);
    *is_len = 0;
    switch (key & 7) {
    case 0: return rd_varint(w, &v) ? 1 : -1;
    case 1:
        if (w->end - w->p < 8) return -1;
        w->p += 8;
        return 1;
    case 5:
        if (w->end - w->p < 4) return -1;
        w->p += 4;
        return 1;
    case 2:
        if (!rd_varint(w, &v) || v > (uint64_t)(w->end - w->p)) return -1;
        sub->p = w->p;
        sub->end = w->p + v;
        w->p += v;
        *is_len = 1;
        return 1;
    default: return -1;
    }
}

/* The string field `number` (the last occurrence) of the message in w, malloc'd; "" if absent;
 * NULL on malformed input or out of memory. */
static char *rd_string(wire w, uint32_t number)
{
    uint32_t n;
    int is_len, r;
    wire sub, found = {NULL, NULL};
    while ((r = rd_field(&w, &n, &is_len, &sub)) > 0)
        if (n == number && is_len) found = sub;
    if (r < 0) return NULL;
    size_t len = found.p ? (size_t)(found.end - found.p) : 0;
    char *s = malloc(len + 1);
    if (!s) return NULL;
    if (len) memcpy(s, found.p, len);
    s[len] = 0;
    if (memchr(s, 0, len)) { /* names never hold NUL */
        free(s);
        return NULL;
    }
    return s;
}

/* ---- the index ----------------------------------------------------------------------------- */

static gyro_status add_symbol(gyro_reflection *r, const char *scope, const char *name, int file, int kind)
{
    if (!name[0]) return gyro_error_set(GYRO_ERR_FORMAT, "descriptor set: a declaration without a name");
    if (r->n_syms == r->cap_syms) {
        int cap = r->cap_syms ? 2 * r->cap_syms : 64;
        refl_symbol *p = realloc(r->syms, (size_t)cap * sizeof *p);
        if (!p) return gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
        r->syms = p;
        r->cap_syms = cap;
    }
    size_t ls = strlen(scope), ln = strlen(name);
    char *full = malloc(ls + 1 + ln + 1);
    if (!full) return gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    if (ls) {
        memcpy(full, scope, ls);
        full[ls] = '.';
        memcpy(full + ls + 1, name, ln + 1);
    } else {
        memcpy(full, name, ln + 1);
    }
    r->syms[r->n_syms++] = (refl_symbol){full, file, kind};
    return GYRO_OK;
}

/* Add the declaration in `msg` (field `name_field` 1) under `scope` with `kind`; for kinds with
 * members, recurse. `value_scope` is where enum values go (the enum's own scope). */
static gyro_status index_decl(gyro_reflection *r, wire msg, const char *scope, int file, int kind);

static gyro_status index_members(gyro_reflection *r, wire msg, const char *self, const char *scope, int file,
                                 int kind)
{
    uint32_t n;
    int is_len, rc;
    wire sub;
    gyro_status st = GYRO_OK;
    while (st == GYRO_OK && (rc = rd_field(&msg, &n, &is_len, &sub)) > 0) {
        if (!is_len) continue;
        if (kind == GYRO_REFL_MESSAGE) {
            if (n == 2) st = index_decl(r, sub, self, file, GYRO_REFL_FIELD);
            else if (n == 3) st = index_decl(r, sub, self, file, GYRO_REFL_MESSAGE);
            else if (n == 4) st = index_decl(r, sub, self, file, GYRO_REFL_ENUM);
            else if (n == 6) st = index_decl(r, sub, self, file, GYRO_REFL_EXTENSION);
            else if (n == 8) st = index_decl(r, sub, self, file, GYRO_REFL_ONEOF);
        } else if (kind == GYRO_REFL_ENUM) {
            if (n == 2) st = index_decl(r, sub, scope, file, GYRO_REFL_ENUM_VALUE); /* sibling scope */
        } else if (kind == GYRO_REFL_SERVICE) {
            if (n == 2) st = index_decl(r, sub, self, file, GYRO_REFL_METHOD);
        }
    }
    if (st == GYRO_OK && rc < 0) st = gyro_error_set(GYRO_ERR_FORMAT, "descriptor set: malformed declaration");
    return st;
}

static gyro_status index_decl(gyro_reflection *r, wire msg, const char *scope, int file, int kind)
{
    char *name = rd_string(msg, 1);
    if (!name) return gyro_error_set(GYRO_ERR_FORMAT, "descriptor set: malformed declaration");
    gyro_status st = add_symbol(r, scope, name, file, kind);
    free(name);
    if (st != GYRO_OK) return st;
    if (kind != GYRO_REFL_MESSAGE && kind != GYRO_REFL_ENUM && kind != GYRO_REFL_SERVICE) return GYRO_OK;
    /* the symbol's own name may move when syms grows: copy it */
    char *self = strdup(r->syms[r->n_syms - 1].name);
    if (!self) return gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    st = index_members(r, msg, self, scope, file, kind);
    free(self);
    return st;
}

static gyro_status index_file(gyro_reflection *r, int fi)
{
    refl_file *f = &r->files[fi];
    wire w = {f->bytes, f->bytes + f->len};
    char *pkg = rd_string(w, 2);
    if (!pkg) return gyro_error_set(GYRO_ERR_FORMAT, "descriptor set: malformed file %s", f->name);
    gyro_status st = GYRO_OK;
    if (pkg[0]) st = add_symbol(r, "", pkg, fi, GYRO_REFL_PACKAGE);
    uint32_t n;
    int is_len, rc;
    wire sub;
    while (st == GYRO_OK && (rc = rd_field(&w, &n, &is_len, &sub)) > 0) {
        if (!is_len) continue;
        if (n == 4) st = index_decl(r, sub, pkg, fi, GYRO_REFL_MESSAGE);
        else if (n == 5) st = index_decl(r, sub, pkg, fi, GYRO_REFL_ENUM);
        else if (n == 6) st = index_decl(r, sub, pkg, fi, GYRO_REFL_SERVICE);
        else if (n == 7) st = index_decl(r, sub, pkg, fi, GYRO_REFL_EXTENSION);
    }
    if (st == GYRO_OK && rc < 0) st = gyro_error_set(GYRO_ERR_FORMAT, "descriptor set: malformed file %s", f->name);
    free(pkg);
    return st;
}

/* Resolve the imports (field 3) of file fi to file indices. */
static gyro_status link_file(gyro_reflection *r, int fi)
{
    refl_file *f = &r->files[fi];
    wire w = {f->bytes, f->bytes + f->len}, sub;
    uint32_t n;
    int is_len, rc, count = 0;
    while ((rc = rd_field(&w, &n, &is_len, &sub)) > 0) count += n == 3 && is_len;
    if (rc < 0) return gyro_error_set(GYRO_ERR_FORMAT, "descriptor set: malformed file %s", f->name);
    f->deps = calloc((size_t)(count ? count : 1), sizeof *f->deps);
    if (!f->deps) return gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    w = (wire){f->bytes, f->bytes + f->len};
    while (rd_field(&w, &n, &is_len, &sub) > 0) {
        if (n != 3 || !is_len) continue;
        size_t len = (size_t)(sub.end - sub.p);
        int d = -1;
        for (int k = 0; k < r->n_files && d < 0; k++)
            if (strlen(r->files[k].name) == len && !memcmp(r->files[k].name, sub.p, len)) d = k;
        if (d < 0)
            return gyro_error_set(GYRO_ERR_FORMAT, "descriptor set: %s imports %.*s, which is not in the set",
                                  f->name, (int)(len > 200 ? 200 : len), (const char *)sub.p);
        f->deps[f->n_deps++] = d;
    }
    return GYRO_OK;
}

gyro_status gyro_reflection_new(const uint8_t *set, size_t len, gyro_reflection **out)
{
    *out = NULL;
    if (!set && len) return gyro_error_set(GYRO_ERR_USAGE, "gyro_reflection_new: NULL set");
    gyro_reflection *r = calloc(1, sizeof *r);
    if (!r) return gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    wire w = {set, set + len}, sub;
    uint32_t n;
    int is_len, rc;
    gyro_status st = GYRO_OK;
    while (st == GYRO_OK && (rc = rd_field(&w, &n, &is_len, &sub)) > 0) {
        if (n != 1 || !is_len) continue;
        if (r->n_files == r->cap_files) {
            int cap = r->cap_files ? 2 * r->cap_files : 8;
            refl_file *p = realloc(r->files, (size_t)cap * sizeof *p);
            if (!p) {
                st = gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
                break;
            }
            r->files = p;
            r->cap_files = cap;
        }
        refl_file *f = &r->files[r->n_files];
        memset(f, 0, sizeof *f);
        f->len = (size_t)(sub.end - sub.p);
        f->bytes = malloc(f->len ? f->len : 1);
        f->name = rd_string(sub, 1);
        r->n_files++;
        if (!f->bytes || !f->name) {
            st = f->name || !f->bytes ? gyro_error_set(GYRO_ERR_NOMEM, "out of memory")
                                      : gyro_error_set(GYRO_ERR_FORMAT, "descriptor set: malformed file");
            break;
        }
        memcpy(f->bytes, sub.p, f->len);
        if (!f->name[0]) st = gyro_error_set(GYRO_ERR_FORMAT, "descriptor set: a file without a name");
    }
    if (st == GYRO_OK && rc < 0) st = gyro_error_set(GYRO_ERR_FORMAT, "descriptor set: malformed wire format");
    for (int i = 0; st == GYRO_OK && i < r->n_files; i++) st = link_file(r, i);
    for (int i = 0; st == GYRO_OK && i < r->n_files; i++) st = index_file(r, i);
    if (st != GYRO_OK) {
        gyro_reflection_free(r);
        return st;
    }
    *out = r;
    return GYRO_OK;
}

void gyro_reflection_free(gyro_reflection *r)
{
    if (!r) return;
    for (int i = 0; i < r->n_files; i++) {
        free(r->files[i].name);
        free(r->files[i].bytes);
        free(r->files[i].deps);
    }
    for (int i = 0; i < r->n_syms; i++) free(r->syms[i].name);
    free(r->files);
    free(r->syms);
    free(r);
}

int gyro_reflection_n_files(const gyro_reflection *r) { return r->n_files; }

int gyro_reflection_find_file(const gyro_reflection *r, const char *name)
{
    for (int i = 0; i < r->n_files; i++)
        if (!strcmp(r->files[i].name, name)) return i;
    return -1;
}

int gyro_reflection_find_symbol(const gyro_reflection *r, const char *symbol, int *kind)
{
    if (symbol[0] == '.') symbol++;
    for (int i = 0; i < r->n_syms; i++)
        if (!strcmp(r->syms[i].name, symbol)) {
            if (kind) *kind = r->syms[i].kind;
            return r->syms[i].file;
        }
    return -1;
}

int gyro_reflection_closure(const gyro_reflection *r, int file, int *out)
{
    if (file < 0 || file >= r->n_files) return 0;
    int n = 0;
    out[n++] = file;
    for (int k = 0; k < n; k++) { /* breadth first over the imports; each file once */
        const refl_file *f = &r->files[out[k]];
        for (int d = 0; d < f->n_deps; d++) {
            int seen = 0;
            for (int j = 0; j < n && !seen; j++) seen = out[j] == f->deps[d];
            if (!seen) out[n++] = f->deps[d];
        }
    }
    return n;
}

const uint8_t *gyro_reflection_file_bytes(const gyro_reflection *r, int file, size_t *len)
{
    *len = r->files[file].len;
    return r->files[file].bytes;
}

const char *gyro_reflection_file_name(const gyro_reflection *r, int file) { return r->files[file].name; }

/* ---- reading a service from a file (the client side of reflection) ------------------------------ */

/* The bool (varint) field `number` of the message in w: its last value, 0 if absent, -1 on
 * malformed input. */
static int rd_bool(wire w, uint32_t number)
{
    int v = 0;
    while (w.p < w.end) {
        uint64_t key, x;
        if (!rd_varint(&w, &key)) return -1;
        switch (key & 7) {
        case 0:
            if (!rd_varint(&w, &x)) return -1;
            if ((key >> 3) == number) v = x != 0;
            break;
        case 1:
            if (w.end - w.p < 8) return -1;
            w.p += 8;
            break;
        case 5:
            if (w.end - w.p < 4) return -1;
            w.p += 4;
            break;
        case 2:
            if (!rd_varint(&w, &x) || x > (uint64_t)(w.end - w.p)) return -1;
            w.p += x;
            break;
        default: return -1;
        }
    }
    return v;
}

int gyro_reflection_service_methods(const uint8_t *file, size_t len, const char *service,
                                    gyro_reflection_method_fn fn, void *ctx)
{
    wire w = {file, file + len};
    char *pkg = rd_string(w, 2);
    if (!pkg) return -1;
    uint32_t n;
    int is_len, r, found = -1;
    wire svc;
    while (found < 0 && (r = rd_field(&w, &n, &is_len, &svc)) > 0) {
        if (n != 6 || !is_len) continue;
        char *name = rd_string(svc, 1);
        if (!name) break;
        char full[512];
        snprintf(full, sizeof full, "%s%s%s", pkg, pkg[0] ? "." : "", name);
        free(name);
        if (strcmp(full, service[0] == '.' ? service + 1 : service)) continue;
        found = 0;
        wire m, sw = svc;
        while ((r = rd_field(&sw, &n, &is_len, &m)) > 0) {
            if (n != 2 || !is_len) continue;
            char *mname = rd_string(m, 1), *in = rd_string(m, 2), *out = rd_string(m, 3);
            int cs = rd_bool(m, 5), ss = rd_bool(m, 6);
            if (mname && in && out && cs >= 0 && ss >= 0) {
                if (fn) fn(ctx, mname, in[0] == '.' ? in + 1 : in, out[0] == '.' ? out + 1 : out, cs, ss);
                found++;
            } else {
                r = -1;
            }
            free(mname);
            free(in);
            free(out);
            if (r < 0) break;
        }
        if (r < 0) found = -1;
        break;
    }
    free(pkg);
    return found;
}

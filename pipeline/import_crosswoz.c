/* import_crosswoz.c — CrossWOZ dialogue importer (see import.h).
 *
 * CrossWOZ (Zhu et al. 2020, thu-coai) stores dialogues as {id: {"messages": [{"role",
 * "content", "dialog_act": [[act, domain, slot, value], ...]}, ...]}, ...}. A user turn often
 * carries several acts ("Inform 酒店" and "Request 酒店"), which makes it a real composite
 * intent: the label is the set of "act.domain" atoms, sorted and deduplicated, joined by '+'.
 * The data set is published zipped; a path ending in ".zip" (or a file starting with the ZIP
 * signature) is opened with zip_read and each member named "*.json" is imported in archive
 * order, so no unzip step is needed; the examples' source then names the member too
 * ("crosswoz:val.json.zip:val.json"), so dialogues of different members never share a session.
 */
#include "pipeline/import_readers.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/json.h"
#include "models/text/labels.h"
#include "pipeline/zip_read.h"

/* A dialogue-act piece must be one non-empty level of a label. */
static int bad_piece(const char *s, size_t len)
{
    return len == 0 || strlen(s) != len || strpbrk(s, "+. \t\r\n") != NULL;
}

typedef struct label_buf { char *s; size_t len, cap; } label_buf;

static int label_append(label_buf *b, const char *act, const char *domain)
{
    size_t need = b->len + strlen(act) + strlen(domain) + 3;
    if (need > b->cap) {
        char *n = realloc(b->s, need * 2);
        if (!n) return -1;
        b->s = n;
        b->cap = need * 2;
    }
    b->len += (size_t)sprintf(b->s + b->len, "%s%s.%s", b->len ? "+" : "", act, domain);
    return 0;
}

static gyro_status import_turn(gyro_import_ctx *c, const gyro_json *m, const char *dialogue,
                               label_buf *lb)
{
    if (m->type != GYRO_JSON_OBJECT)
        return gyro_import_bad(c, m->line, "dialogue %s: a message is %s, expected an object",
                               dialogue, gyro_json_type_name(m->type));
    const char *role = gyro_json_string(gyro_json_get(m, "role"));
    if (!role)
        return gyro_import_bad(c, m->line, "dialogue %s: message without a \"role\" string",
                               dialogue);
    if (strcmp(role, "usr") != 0) {
        c->stats->ignored++;
        return GYRO_OK;
    }
    const gyro_json *content = gyro_json_get(m, "content");
    if (!content || content->type != GYRO_JSON_STRING)
        return gyro_import_bad(c, m->line, "dialogue %s: user turn without a \"content\" string",
                               dialogue);
    const gyro_json *acts = gyro_json_get(m, "dialog_act");
    if (!acts || acts->type != GYRO_JSON_ARRAY)
        return gyro_import_bad(c, m->line, "dialogue %s: user turn without a \"dialog_act\" array",
                               dialogue);
    if (gyro_json_size(acts) == 0)
        return gyro_import_bad(c, m->line, "dialogue %s: user turn with no dialogue act", dialogue);
    lb->len = 0;
    for (size_t k = 0; k < gyro_json_size(acts); k++) {
        const gyro_json *a = gyro_json_at(acts, k);
        const gyro_json *act = gyro_json_at(a, 0), *dom = gyro_json_at(a, 1);
        if (!a || a->type != GYRO_JSON_ARRAY || !act || act->type != GYRO_JSON_STRING || !dom ||
            dom->type != GYRO_JSON_STRING)
            return gyro_import_bad(c, a ? a->line : m->line, "dialogue %s: dialogue act %zu is not "
                                   "[act, domain, slot, value]", dialogue, k + 1);
        if (bad_piece(act->u.s.str, act->u.s.len) || bad_piece(dom->u.s.str, dom->u.s.len))
            return gyro_import_bad(c, a->line, "dialogue %s: dialogue act %zu has an act or domain "
                                   "that is empty or holds '+', '.' or whitespace", dialogue, k + 1);
        if (label_append(lb, act->u.s.str, dom->u.s.str) != 0)
            return gyro_error_set(GYRO_ERR_NOMEM, "out of memory reading %s", c->path);
    }
    char *canon;
    gyro_status st = gyro_label_canonical(lb->s, &canon);
    if (st == GYRO_ERR_LIMIT || st == GYRO_ERR_DATA)
        return gyro_import_bad(c, m->line, "dialogue %s: %s", dialogue, gyro_error_message());
    if (st != GYRO_OK) return st;
    st = gyro_import_emit(c, content->u.s.str, content->u.s.len, canon, dialogue, m->line);
    free(canon);
    return st;
}

/* Import one parsed document. */
static gyro_status import_doc(gyro_import_ctx *c, const gyro_json_doc *doc)
{
    const gyro_json *root = gyro_json_root(doc);
    if (root->type != GYRO_JSON_OBJECT)
        return gyro_error_set(GYRO_ERR_DATA, "%s:%u:%u: expected a JSON object of CrossWOZ "
                              "dialogues, found %s", c->path, root->line,
                              gyro_json_column(doc, root), gyro_json_type_name(root->type));
    label_buf lb = {0};
    gyro_status st = GYRO_OK;
    for (size_t i = 0; i < gyro_json_size(root) && st == GYRO_OK; i++) {
        const char *id = gyro_json_key_at(root, i);
        const gyro_json *dlg = gyro_json_at(root, i);
        const gyro_json *msgs = gyro_json_get(dlg, "messages");
        if (!msgs || msgs->type != GYRO_JSON_ARRAY) {
            st = gyro_import_bad(c, dlg->line, "dialogue %s: no \"messages\" array", id);
            continue;
        }
        for (size_t j = 0; j < gyro_json_size(msgs) && st == GYRO_OK; j++)
            st = import_turn(c, gyro_json_at(msgs, j), id, &lb);
    }
    free(lb.s);
    return st;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static int looks_like_zip(const char *path)
{
    if (strcmp(path, "-") == 0) return 0;
    if (ends_with(path, ".zip")) return 1;
    FILE *fp = fopen(path, "rb");
    if (!fp) return 0;
    unsigned char sig[4] = {0};
    size_t n = fread(sig, 1, 4, fp);
    fclose(fp);
    return n == 4 && memcmp(sig, "PK\3\4", 4) == 0;
}

gyro_status gyro_import_crosswoz(gyro_import_ctx *c)
{
    if (!looks_like_zip(c->path)) {
        gyro_json_doc *doc;
        gyro_status st = gyro_json_parse_file(c->path, &doc);
        if (st != GYRO_OK) return st;
        st = import_doc(c, doc);
        gyro_json_doc_free(doc);
        return st;
    }
    gyro_zip *z;
    gyro_status st = gyro_zip_open(c->path, &z);
    if (st != GYRO_OK) return st;
    const char *archive = c->path;
    size_t members = 0;
    for (size_t i = 0; i < gyro_zip_count(z) && st == GYRO_OK; i++) {
        const char *name = gyro_zip_name(z, i);
        if (!ends_with(name, ".json")) continue;
        members++;
        char *data;
        size_t len;
        st = gyro_zip_extract(z, i, &data, &len);
        if (st != GYRO_OK) break;
        size_t n = strlen(archive) + strlen(name) + 2;
        char *where = malloc(n);
        if (!where) {
            free(data);
            st = gyro_error_set(GYRO_ERR_NOMEM, "out of memory reading %s", archive);
            break;
        }
        snprintf(where, n, "%s:%s", archive, name);
        char *source = malloc(strlen(c->source) + strlen(name) + 2);
        if (!source) {
            free(where);
            free(data);
            st = gyro_error_set(GYRO_ERR_NOMEM, "out of memory reading %s", archive);
            break;
        }
        sprintf(source, "%s:%s", c->source, name);
        gyro_json_doc *doc;
        st = gyro_json_parse(data, len, where, &doc);
        if (st == GYRO_OK) {
            char *archive_source = c->source;
            c->path = where;     /* bad-record messages name the member, */
            c->source = source;  /* and so do the examples: "crosswoz:val.json.zip:val.json" */
            st = import_doc(c, doc);
            c->path = archive;
            c->source = archive_source;
            gyro_json_doc_free(doc);
        }
        free(source);
        free(where);
        free(data);
    }
    if (st == GYRO_OK && members == 0)
        st = gyro_error_set(GYRO_ERR_FORMAT, "%s: the archive holds no .json member", archive);
    gyro_zip_free(z);
    return st;
}

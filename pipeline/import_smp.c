/* import_smp.c — SMP2020-ECDT task 1 importer (see import.h).
 *
 * The file is one JSON array of records {"text", "domain", "intent", "slots"}. The label joins
 * domain and intent with a dot, so SMP's 91 labels form a two-level hierarchy under its 45
 * domains (`music.PLAY`, `music.SEARCH` under `music`). A record without an intent (empty string
 * or null) is labelled with its domain alone. The records carry no dialogue structure, so each
 * is its own session ("r<index>", 1-based).
 */
#include "pipeline/import_readers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/json.h"

gyro_status gyro_import_smp(gyro_import_ctx *c)
{
    gyro_json_doc *doc;
    gyro_status st = gyro_json_parse_file(c->path, &doc);
    if (st != GYRO_OK) return st;
    const gyro_json *root = gyro_json_root(doc);
    if (root->type != GYRO_JSON_ARRAY) {
        st = gyro_error_set(GYRO_ERR_DATA, "%s:%u:%u: expected a JSON array of SMP records, found "
                            "%s", c->path, root->line, gyro_json_column(doc, root),
                            gyro_json_type_name(root->type));
        gyro_json_doc_free(doc);
        return st;
    }
    char *label = NULL;
    size_t label_cap = 0;
    for (size_t i = 0; i < gyro_json_size(root) && st == GYRO_OK; i++) {
        const gyro_json *rec = gyro_json_at(root, i);
        if (rec->type != GYRO_JSON_OBJECT) {
            st = gyro_import_bad(c, rec->line, "record %zu: expected an object, found %s", i + 1,
                                 gyro_json_type_name(rec->type));
            continue;
        }
        const gyro_json *text = gyro_json_get(rec, "text");
        const gyro_json *domain = gyro_json_get(rec, "domain");
        const gyro_json *intent = gyro_json_get(rec, "intent");
        if (!text || text->type != GYRO_JSON_STRING) {
            st = gyro_import_bad(c, rec->line, "record %zu: \"text\" is %s, expected a string",
                                 i + 1, text ? gyro_json_type_name(text->type) : "missing");
            continue;
        }
        if (!domain || domain->type != GYRO_JSON_STRING) {
            st = gyro_import_bad(c, rec->line, "record %zu: \"domain\" is %s, expected a string",
                                 i + 1, domain ? gyro_json_type_name(domain->type) : "missing");
            continue;
        }
        if (intent && intent->type != GYRO_JSON_STRING && intent->type != GYRO_JSON_NULL) {
            st = gyro_import_bad(c, rec->line, "record %zu: \"intent\" is %s, expected a string "
                                 "or null", i + 1, gyro_json_type_name(intent->type));
            continue;
        }
        const char *d = domain->u.s.str;
        int has_intent = intent && intent->type == GYRO_JSON_STRING;
        const char *in = has_intent ? intent->u.s.str : "";
        if (strlen(d) != domain->u.s.len || strlen(in) != (has_intent ? intent->u.s.len : 0)) {
            st = gyro_import_bad(c, rec->line, "record %zu: NUL character in the label", i + 1);
            continue;
        }
        size_t need = strlen(d) + strlen(in) + 2;
        if (need > label_cap) {
            char *nl = realloc(label, need * 2);
            if (!nl) { st = gyro_error_set(GYRO_ERR_NOMEM, "out of memory reading %s", c->path); break; }
            label = nl;
            label_cap = need * 2;
        }
        if (*in) snprintf(label, label_cap, "%s.%s", d, in);
        else snprintf(label, label_cap, "%s", d);
        char session[32];
        snprintf(session, sizeof session, "r%zu", i + 1);
        st = gyro_import_emit(c, text->u.s.str, text->u.s.len, label, session, rec->line);
    }
    free(label);
    gyro_json_doc_free(doc);
    return st;
}

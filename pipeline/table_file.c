/* table_file.c — embedding-table files: a gyro stream of EmbeddingTable records (see table_file.h).
 *
 * The in-memory table (embeddings/table.h) knows nothing of protobuf; this file maps it to and
 * from gyro.v1.EmbeddingTable records. Its model codes are the values of gyro.v1.EmbeddingModel,
 * which the assertions below keep in step.
 */
#include "pipeline/table_file.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/core/crc32.h"
#include "pipeline/stream.h"
#include "proto/gyro.pb-c.h"

_Static_assert((int)GYRO_EMBEDDING_UNSPECIFIED == (int)GYRO__V1__EMBEDDING_MODEL__EMBEDDING_MODEL_UNSPECIFIED &&
               (int)GYRO_EMBEDDING_HYPERBOLOID == (int)GYRO__V1__EMBEDDING_MODEL__HYPERBOLOID &&
               (int)GYRO_EMBEDDING_POINCARE == (int)GYRO__V1__EMBEDDING_MODEL__POINCARE &&
               (int)GYRO_EMBEDDING_EUCLIDEAN == (int)GYRO__V1__EMBEDDING_MODEL__EUCLIDEAN,
               "gyro_embedding_model must equal gyro.v1.EmbeddingModel");

/* ---- checksum ---------------------------------------------------------------------------- */

static uint32_t crc_u32(uint32_t crc, uint32_t v)
{
    unsigned char b[4];
    for (int i = 0; i < 4; i++) b[i] = (unsigned char)(v >> (8 * i));
    return gyro_crc32(crc, b, 4);
}

static uint32_t crc_u64(uint32_t crc, uint64_t v)
{
    unsigned char b[8];
    for (int i = 0; i < 8; i++) b[i] = (unsigned char)(v >> (8 * i));
    return gyro_crc32(crc, b, 8);
}

static uint32_t crc_str(uint32_t crc, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    crc = crc_u32(crc, (uint32_t)n);
    return n ? gyro_crc32(crc, s, n) : crc;
}

/* The record's checksum field as defined in gyro.proto: (1 << 32) | CRC-32 of its values. */
static uint64_t record_checksum(const Gyro__V1__EmbeddingTable *m)
{
    uint64_t cbits;
    memcpy(&cbits, &m->curvature, 8);
    uint32_t crc = crc_u32(0, (uint32_t)m->model);
    crc = crc_u64(crc, cbits);
    crc = crc_u32(crc, m->dim);
    crc = crc_str(crc, m->trained_by);
    for (size_t i = 0; i < m->n_entries; i++) {
        const Gyro__V1__EmbeddingEntry *e = m->entries[i];
        crc = crc_str(crc, e->token);
        crc = crc_u64(crc, e->count);
        crc = crc_u32(crc, (uint32_t)e->n_vector);
        for (size_t k = 0; k < e->n_vector; k++) {
            uint32_t bits;
            memcpy(&bits, &e->vector[k], 4);
            crc = crc_u32(crc, bits);
        }
    }
    return (uint64_t)1 << 32 | crc;
}

/* ---- save -------------------------------------------------------------------------------- */

gyro_status gyro_table_file_save(const gyro_embedding_table *t, const char *path)
{
    if (t->vocab.n != t->n)
        return gyro_error_set(GYRO_ERR_USAGE, "table has %d rows but %d tokens", t->n, t->vocab.n);
    int bad = gyro_embedding_table_first_nonfinite(t);
    if (bad >= 0)
        return gyro_error_set(GYRO_ERR_NAN, "%s: not written: row %d ('%s') has a non-finite coordinate "
                              "(the file is left as it was)", path, bad, t->tokens[bad]);
    gyro_stream_writer *w;
    gyro_status s = gyro_stream_writer_open_path(path, &gyro__v1__embedding_table__descriptor,
                                                 "gyro " "char2vec", &w);
    if (s) return s;
    Gyro__V1__EmbeddingEntry *entries = malloc(GYRO_TABLE_CHUNK * sizeof *entries);
    Gyro__V1__EmbeddingEntry **ptrs = malloc(GYRO_TABLE_CHUNK * sizeof *ptrs);
    if (!entries || !ptrs) {
        free(entries); free(ptrs);
        gyro_stream_writer_abort(w);
        return gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
    }
    int start = 0;
    do {
        int m = t->n - start < GYRO_TABLE_CHUNK ? t->n - start : GYRO_TABLE_CHUNK;
        for (int i = 0; i < m; i++) {
            int r = start + i;
            gyro__v1__embedding_entry__init(&entries[i]);
            entries[i].token = t->tokens[r];
            entries[i].count = t->counts[r];
            entries[i].n_vector = (size_t)t->stride;
            entries[i].vector = t->vectors + (size_t)r * (size_t)t->stride;
            ptrs[i] = &entries[i];
        }
        Gyro__V1__EmbeddingTable msg;
        gyro__v1__embedding_table__init(&msg);
        msg.model = (Gyro__V1__EmbeddingModel)t->model;
        msg.curvature = t->curvature;
        msg.dim = (uint32_t)t->dim;
        msg.n_entries = (size_t)m;
        msg.entries = ptrs;
        msg.trained_by = (char *)(t->trained_by && start == 0 ? t->trained_by : "");
        msg.checksum = record_checksum(&msg);
        s = gyro_stream_write(w, &msg.base);
        start += m;
    } while (!s && start < t->n);
    free(entries);
    free(ptrs);
    if (s) {
        gyro_stream_writer_abort(w);
        return s;
    }
    return gyro_stream_writer_close(w);
}

/* ---- load -------------------------------------------------------------------------------- */

gyro_status gyro_table_file_load(const char *path, gyro_embedding_table **out)
{
    gyro_stream_reader *r;
    gyro_status s = gyro_stream_reader_open_path(path, NULL, &r);
    if (s == GYRO_ERR_LIMIT || s == GYRO_ERR_FORMAT) { /* no gyro header: foreign or truncated */
        const char *why = gyro_error_message();   /* "PATH: record 0 at byte 0: ..." */
        size_t n = strlen(path);
        if (strncmp(why, path, n) == 0 && why[n] == ':' && why[n + 1] == ' ') why += n + 2;
        return gyro_error_set(GYRO_ERR_FORMAT, "%s: not a gyro embedding table (%s)", path, why);
    }
    if (s) return s;
    const char *type = gyro_stream_reader_message_type(r);
    if (strcmp(type, gyro__v1__embedding_table__descriptor.name) != 0) {
        s = gyro_error_set(GYRO_ERR_FORMAT, "%s: a stream of %s, not an embedding table", path, type);
        gyro_stream_reader_free(r);
        return s;
    }
    gyro_embedding_table *t = NULL;
    size_t cap = 0;
    for (;;) {
        ProtobufCMessage *m;
        if ((s = gyro_stream_next(r, &gyro__v1__embedding_table__descriptor, &m))) break;
        if (!m) break;
        Gyro__V1__EmbeddingTable *e = (Gyro__V1__EmbeddingTable *)m;
        unsigned long long rec = (unsigned long long)gyro_stream_reader_record(r);
        if (e->checksum != 0 && e->checksum != record_checksum(e)) {
            s = gyro_error_set(GYRO_ERR_FORMAT, "%s: record %llu: checksum mismatch (the file was altered "
                               "or damaged)", path, rec);
            protobuf_c_message_free_unpacked(m, NULL);
            break;
        }
        if (!t) {
            s = gyro_embedding_table_new((int)e->model, e->curvature, (int)e->dim, 0, &t);
            if (s) {
                s = gyro_error_prefix(GYRO_ERR_FORMAT, "%s: record %llu", path, rec);
            } else if (e->trained_by && e->trained_by[0] && !(t->trained_by = strdup(e->trained_by))) {
                s = gyro_error_set(GYRO_ERR_NOMEM, "out of memory");
            }
        } else if ((int)e->model != t->model || (int)e->dim != t->dim || e->curvature != t->curvature) {
            s = gyro_error_set(GYRO_ERR_FORMAT, "%s: record %llu: model/dim/curvature (%s, %u, %g) "
                               "differ from the first record's (%s, %d, %g)", path, rec,
                               gyro_embedding_model_name((int)e->model), e->dim, e->curvature,
                               gyro_embedding_model_name(t->model), t->dim, t->curvature);
        }
        for (size_t i = 0; !s && i < e->n_entries; i++) {
            const Gyro__V1__EmbeddingEntry *en = e->entries[i];
            if (en->n_vector != (size_t)t->stride) {
                s = gyro_error_set(GYRO_ERR_FORMAT, "%s: record %llu: entry '%s' has %zu coordinates, "
                                   "a %s table of dim %d needs %d", path, rec, en->token, en->n_vector,
                                   gyro_embedding_model_name(t->model), t->dim, t->stride);
                break;
            }
            for (size_t k = 0; k < en->n_vector; k++)
                if (!isfinite(en->vector[k])) {
                    s = gyro_error_set(GYRO_ERR_FORMAT, "%s: record %llu: entry '%s' has a non-finite "
                                       "coordinate", path, rec, en->token);
                    break;
                }
            if (s) break;
            if ((size_t)t->n == cap) {
                size_t nc = cap ? cap * 2 : 1024;
                float *v = realloc(t->vectors, nc * (size_t)t->stride * sizeof *v);
                if (!v) { s = gyro_error_set(GYRO_ERR_NOMEM, "out of memory loading %s", path); break; }
                t->vectors = v;
                cap = nc;
            }
            memcpy(t->vectors + (size_t)t->n * (size_t)t->stride, en->vector,
                   (size_t)t->stride * sizeof(float));
            t->n++;
            s = gyro_embedding_table_set_token(t, t->n - 1, en->token, en->count);
            if (s) s = gyro_error_prefix(GYRO_ERR_FORMAT, "%s: record %llu", path, rec);
        }
        protobuf_c_message_free_unpacked(m, NULL);
        if (s) break;
    }
    gyro_stream_reader_free(r);
    if (!s && (!t || t->n == 0)) s = gyro_error_set(GYRO_ERR_FORMAT, "%s: the embedding table is empty", path);
    double q;
    int out_row = s ? -1 : gyro_embedding_table_first_outside_ball(t, &q);
    if (out_row >= 0)
        s = gyro_error_set(GYRO_ERR_FORMAT, "%s: row %d ('%s') is outside the Poincaré ball (c·|x|² = %.9g, "
                           "must be < 1)", path, out_row, t->tokens[out_row], q);
    if (s) {
        gyro_embedding_table_free(t);
        return s;
    }
    *out = t;
    return GYRO_OK;
}

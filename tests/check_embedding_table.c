/* check_embedding_table.c — Check suite for embeddings/table, convert and neighbors: file round
 * trip over several records, refusal of truncated, foreign and inconsistent files, conversion
 * hyperboloid ↔ Poincaré (distances preserved, rows inside the ball), text exports, k nearest. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "embeddings/convert.h"
#include "embeddings/neighbors.h"
#include "embeddings/plot.h"
#include "pipeline/picture.h"
#include "embeddings/similarity.h"
#include "embeddings/table.h"
#include "models/core/rng.h"
#include "models/hyp/lorentz.h"
#include "pipeline/stream.h"
#include "pipeline/table_file.h"

static char dir[64];

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/gyro-table-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}

/* A hyperboloid table of n rows at random distances up to ~3 from the origin. */
static gyro_embedding_table *random_table(int n, int dim, uint64_t seed)
{
    gyro_embedding_table *t;
    ck_assert_int_eq(gyro_embedding_table_new(GYRO__V1__EMBEDDING_MODEL__HYPERBOLOID, 1.0, dim, n, &t), GYRO_OK);
    gyro_rng r;
    gyro_rng_seed(&r, seed);
    char tok[32];
    for (int i = 0; i < n; i++) {
        float *x = t->vectors + (size_t)i * t->stride;
        double rad = 3.0 * gyro_rng_uniform(&r);
        for (int k = 1; k <= dim; k++) x[k] = (float)(gyro_rng_normal(&r) * rad / sqrt(dim));
        gyro_lorentz_reproject_f32(x, dim);
        snprintf(tok, sizeof tok, "字%d", i);
        ck_assert_int_eq(gyro_embedding_table_set_token(t, i, tok, (uint64_t)(n - i)), GYRO_OK);
    }
    return t;
}

static void path(char *out, const char *name) { snprintf(out, 128, "%s/%s", dir, name); }

START_TEST(test_round_trip_chunks)
{
    gyro_embedding_table *t = random_table(GYRO_TABLE_CHUNK * 2 + 17, 7, 1);
    t->trained_by = strdup("unit test");
    char p[128];
    path(p, "t.hyp");
    ck_assert_int_eq(gyro_table_file_save(t, p), GYRO_OK);
    gyro_embedding_table *u;
    ck_assert_int_eq(gyro_table_file_load(p, &u), GYRO_OK);
    ck_assert_int_eq(u->n, t->n);
    ck_assert_int_eq(u->dim, 7);
    ck_assert_int_eq(u->stride, 8);
    ck_assert_int_eq(u->model, GYRO__V1__EMBEDDING_MODEL__HYPERBOLOID);
    ck_assert_str_eq(u->trained_by, "unit test");
    ck_assert_int_eq(memcmp(u->vectors, t->vectors, (size_t)t->n * t->stride * sizeof(float)), 0);
    for (int i = 0; i < t->n; i += 101) {
        ck_assert_str_eq(u->tokens[i], t->tokens[i]);
        ck_assert_uint_eq(u->counts[i], t->counts[i]);
        ck_assert_int_eq(gyro_embedding_table_find(u, t->tokens[i]), i);
    }
    ck_assert_int_eq(gyro_embedding_table_find(u, "nope"), -1);
    ck_assert_double_lt(gyro_embedding_table_manifold_error(u, NULL), 1e-5);
    /* the file is a gyro stream of three EmbeddingTable records */
    gyro_stream_reader *r;
    ck_assert_int_eq(gyro_stream_reader_open_path(p, NULL, &r), GYRO_OK);
    ck_assert_str_eq(gyro_stream_reader_message_type(r), "gyro.v1.EmbeddingTable");
    int recs = 0;
    const uint8_t *d;
    size_t len;
    while (gyro_stream_next_raw(r, &d, &len) == GYRO_OK && d) recs++;
    gyro_stream_reader_free(r);
    ck_assert_int_eq(recs, 3);
    gyro_embedding_table_free(t);
    gyro_embedding_table_free(u);
}
END_TEST

START_TEST(test_truncated_and_foreign_files)
{
    gyro_embedding_table *t = random_table(50, 5, 2), *u = NULL;
    char p[128];
    path(p, "t.hyp");
    ck_assert_int_eq(gyro_table_file_save(t, p), GYRO_OK);
    FILE *f = fopen(p, "rb");
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fclose(f);
    for (long cut = 0; cut < len; cut += len / 23 + 1) {
        ck_assert_int_eq(gyro_table_file_save(t, p), GYRO_OK);
        ck_assert_int_eq(truncate(p, cut), 0);
        gyro_status s = gyro_table_file_load(p, &u);
        ck_assert_msg(s == GYRO_ERR_FORMAT, "cut at %ld: status %d (%s)", cut, s, gyro_error_message());
    }
    /* a plain text file and a stream of another type */
    f = fopen(p, "w");
    fputs("水 0.1 0.2\n", f);
    fclose(f);
    ck_assert_int_eq(gyro_table_file_load(p, &u), GYRO_ERR_FORMAT);
    /* the message names the file once and says what it is not, once */
    {
        const char *m = gyro_error_message(), *what = "not a gyro embedding table";
        ck_assert_msg(strstr(m, p) == m && !strstr(m + 1, p), "the path not once in: %s", m);
        const char *first = strstr(m, what);
        ck_assert_msg(first && !strstr(first + 1, what), "repeated or missing: %s", m);
        ck_assert_msg(strncmp(m, "0:", 2) != 0 && !strstr(m, ": 0:"), "garbled: %s", m);
    }
    ck_assert_int_eq(truncate(p, 3), 0);
    ck_assert_int_eq(gyro_table_file_load(p, &u), GYRO_ERR_FORMAT);
    ck_assert_msg(strstr(gyro_error_message(), p) != NULL, "no path in: %s", gyro_error_message());
    gyro_stream_writer *w;
    ck_assert_int_eq(gyro_stream_writer_open_path(p, &gyro__v1__document__descriptor, "test", &w), GYRO_OK);
    Gyro__V1__Document doc;
    gyro__v1__document__init(&doc);
    doc.text = "水";
    ck_assert_int_eq(gyro_stream_write(w, &doc.base), GYRO_OK);
    ck_assert_int_eq(gyro_stream_writer_close(w), GYRO_OK);
    ck_assert_int_eq(gyro_table_file_load(p, &u), GYRO_ERR_FORMAT);
    ck_assert_ptr_nonnull(strstr(gyro_error_message(), "Document"));
    ck_assert_int_eq(gyro_table_file_load("/nonexistent/t.hyp", &u), GYRO_ERR_IO);
    gyro_embedding_table_free(t);
}
END_TEST

/* A flipped bit in a coordinate keeps the stream well formed and the value finite: only the
 * record checksum can tell (it used to load silently). */
START_TEST(test_bit_flip_refused)
{
    gyro_embedding_table *t = random_table(300, 6, 4), *u = NULL;
    char p[128];
    path(p, "t.hyp");
    ck_assert_int_eq(gyro_table_file_save(t, p), GYRO_OK);
    FILE *f = fopen(p, "rb");
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    unsigned char *b = malloc((size_t)n);
    ck_assert_int_eq(fread(b, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    unsigned char want[4];
    memcpy(want, &t->vectors[150 * t->stride + 3], 4);
    long at = -1;
    for (long i = 0; i + 4 <= n && at < 0; i++)
        if (memcmp(b + i, want, 4) == 0) at = i;
    ck_assert_int_ge(at, 0);
    b[at] ^= 1;   /* the lowest mantissa bit (little-endian) */
    f = fopen(p, "wb");
    fwrite(b, 1, (size_t)n, f);
    fclose(f);
    ck_assert_int_eq(gyro_table_file_load(p, &u), GYRO_ERR_FORMAT);
    ck_assert_msg(strstr(gyro_error_message(), "checksum mismatch"), "%s", gyro_error_message());
    b[at] ^= 1;
    f = fopen(p, "wb");
    fwrite(b, 1, (size_t)n, f);
    fclose(f);
    ck_assert_int_eq(gyro_table_file_load(p, &u), GYRO_OK);
    gyro_embedding_table_free(u);
    gyro_embedding_table_free(t);
    free(b);
}
END_TEST

/* Hand-made records: a vector of the wrong length, a NaN, a duplicate token, mixed dims. */
static gyro_status load_records(const char *p, int dim2, int n_vec, float bad, const char *tok2)
{
    gyro_stream_writer *w;
    ck_assert_int_eq(gyro_stream_writer_open_path(p, &gyro__v1__embedding_table__descriptor, "t", &w), GYRO_OK);
    float v[4] = {0.5f, 0, 0, bad};   /* Poincaré rows, inside the unit ball */
    Gyro__V1__EmbeddingEntry e1, e2, *pe1[] = {&e1}, *pe2[] = {&e2};
    gyro__v1__embedding_entry__init(&e1);
    gyro__v1__embedding_entry__init(&e2);
    e1.token = "一";
    e1.n_vector = 3;
    e1.vector = v;
    e2.token = (char *)tok2;
    e2.n_vector = (size_t)n_vec;
    e2.vector = v + 1;
    Gyro__V1__EmbeddingTable a, b;
    gyro__v1__embedding_table__init(&a);
    gyro__v1__embedding_table__init(&b);
    a.model = b.model = GYRO__V1__EMBEDDING_MODEL__POINCARE;
    a.curvature = b.curvature = 1.0;
    a.dim = 3;
    b.dim = (uint32_t)dim2;
    a.n_entries = b.n_entries = 1;
    a.entries = pe1;
    b.entries = pe2;
    ck_assert_int_eq(gyro_stream_write(w, &a.base), GYRO_OK);
    ck_assert_int_eq(gyro_stream_write(w, &b.base), GYRO_OK);
    ck_assert_int_eq(gyro_stream_writer_close(w), GYRO_OK);
    gyro_embedding_table *t = NULL;
    gyro_status s = gyro_table_file_load(p, &t);
    gyro_embedding_table_free(t);
    return s;
}

/* Writers refuse a non-finite row and keep the old file; a Poincaré row on or outside the
 * boundary is refused when loaded, naming the row. */
START_TEST(test_nonfinite_and_outside_ball)
{
    gyro_embedding_table *t = random_table(20, 4, 3), *u = NULL;
    char p[128], v[128];
    path(p, "t.hyp");
    path(v, "t.vec");
    ck_assert_int_eq(gyro_table_file_save(t, p), GYRO_OK);
    ck_assert_int_eq(gyro_embedding_export_vec(t, v), GYRO_OK);
    struct stat a0, v0, a1, v1;
    ck_assert_int_eq(stat(p, &a0), 0);
    ck_assert_int_eq(stat(v, &v0), 0);
    t->vectors[7 * t->stride + 2] = INFINITY;
    ck_assert_int_eq(gyro_table_file_save(t, p), GYRO_ERR_NAN);
    ck_assert_ptr_nonnull(strstr(gyro_error_message(), "row 7"));
    ck_assert_int_eq(gyro_embedding_export_vec(t, v), GYRO_ERR_NAN);
    ck_assert_int_eq(stat(p, &a1), 0);
    ck_assert_int_eq(stat(v, &v1), 0);
    ck_assert(a0.st_ino == a1.st_ino && a0.st_size == a1.st_size);   /* not replaced */
    ck_assert(v0.st_ino == v1.st_ino && v0.st_size == v1.st_size);
    gyro_embedding_table_free(t);

    /* Poincaré rows: 0.5 inside, then exactly on and beyond the unit sphere */
    float rows[3][3] = {{0.5f, 0, 0}, {0.6f, 0.8f, 0}, {3, 0, 0}};
    for (int bad = 1; bad <= 2; bad++) {
        ck_assert_int_eq(gyro_embedding_table_new(GYRO__V1__EMBEDDING_MODEL__POINCARE, 1.0, 3, 2, &t), GYRO_OK);
        memcpy(t->vectors, rows[0], sizeof rows[0]);
        memcpy(t->vectors + t->stride, rows[bad], sizeof rows[bad]);
        ck_assert_int_eq(gyro_embedding_table_set_token(t, 0, "内", 1), GYRO_OK);
        ck_assert_int_eq(gyro_embedding_table_set_token(t, 1, "外", 1), GYRO_OK);
        ck_assert_int_eq(gyro_table_file_save(t, p), GYRO_OK);
        gyro_embedding_table_free(t);
        ck_assert_int_eq(gyro_table_file_load(p, &u), GYRO_ERR_FORMAT);
        ck_assert_msg(strstr(gyro_error_message(), "row 1 ('外') is outside the Poincaré ball"), "%s",
                      gyro_error_message());
    }
}
END_TEST

START_TEST(test_inconsistent_records)
{
    char p[128];
    path(p, "bad.tab");
    ck_assert_int_eq(load_records(p, 3, 3, 0.5f, "二"), GYRO_OK);
    ck_assert_int_eq(load_records(p, 4, 3, 0.5f, "二"), GYRO_ERR_FORMAT);  /* dim differs */
    ck_assert_int_eq(load_records(p, 3, 2, 0.5f, "二"), GYRO_ERR_FORMAT);  /* short vector */
    ck_assert_ptr_nonnull(strstr(gyro_error_message(), "coordinates"));
    ck_assert_int_eq(load_records(p, 3, 3, NAN, "二"), GYRO_ERR_FORMAT);   /* NaN */
    ck_assert_int_eq(load_records(p, 3, 3, 0.5f, "一"), GYRO_ERR_FORMAT);  /* duplicate */
    {   /* "FILE: record N: <the table's reason>" once, not the reason formatted over itself */
        const char *m = gyro_error_message();
        ck_assert_msg(strncmp(m, p, strlen(p)) == 0 && strstr(m, "record 2: "), "garbled: %s", m);
        const char *why = strstr(m, "record 2: ") + strlen("record 2: ");
        ck_assert_msg(strncmp(why, p, strlen(p)) != 0 && !strstr(why, "record 2"), "repeated: %s", m);
    }
    ck_assert_int_eq(load_records(p, 3, 3, 0.5f, ""), GYRO_ERR_FORMAT);    /* empty token */
}
END_TEST

START_TEST(test_convert_round_trip_preserves_distances)
{
    gyro_embedding_table *h = random_table(60, 6, 3), *p, *back;
    int clamped;
    ck_assert_int_eq(gyro_embedding_convert(h, GYRO__V1__EMBEDDING_MODEL__POINCARE, &p, &clamped), GYRO_OK);
    ck_assert_int_eq(p->stride, 6);
    ck_assert_int_eq(clamped, 0); /* distance ≤ 3 from the origin is well inside the float ball */
    for (int i = 0; i < p->n; i++) {
        double nn = 0;
        for (int k = 0; k < 6; k++) nn += (double)p->vectors[i * 6 + k] * p->vectors[i * 6 + k];
        ck_assert_double_lt(sqrt(nn), 1.0 - 4e-3 + 1e-7);
    }
    for (int i = 0; i < 20; i++)
        for (int j = i + 1; j < 20; j++) {
            double dh = gyro_embedding_distance(h, i, j), dp = gyro_embedding_distance(p, i, j);
            ck_assert_double_eq_tol(dp, dh, 2e-3 * (1 + dh));
        }
    ck_assert_int_eq(gyro_embedding_convert(p, GYRO__V1__EMBEDDING_MODEL__HYPERBOLOID, &back, NULL), GYRO_OK);
    ck_assert_double_lt(gyro_embedding_table_manifold_error(back, NULL), 1e-5);
    for (int i = 0; i < h->n * h->stride; i++)
        ck_assert_double_eq_tol(back->vectors[i], h->vectors[i], 1e-4 * (1 + fabs(h->vectors[i])));
    /* a point far out is projected into the ball */
    float *far = h->vectors;
    for (int k = 1; k <= 6; k++) far[k] = 3000.0f;
    gyro_lorentz_reproject_f32(far, 6);
    gyro_embedding_table *p2;
    ck_assert_int_eq(gyro_embedding_convert(h, GYRO__V1__EMBEDDING_MODEL__POINCARE, &p2, &clamped), GYRO_OK);
    ck_assert_int_eq(clamped, 1);
    gyro_embedding_table *e;
    ck_assert_int_eq(gyro_embedding_table_new(GYRO__V1__EMBEDDING_MODEL__EUCLIDEAN, 1.0, 6, 0, &e), GYRO_OK);
    gyro_embedding_table *x = NULL;
    ck_assert_int_eq(gyro_embedding_convert(e, GYRO__V1__EMBEDDING_MODEL__POINCARE, &x, NULL), GYRO_ERR_USAGE);
    gyro_embedding_table_free(e);
    gyro_embedding_table_free(p2);
    gyro_embedding_table_free(h);
    gyro_embedding_table_free(p);
    gyro_embedding_table_free(back);
}
END_TEST

START_TEST(test_exports)
{
    gyro_embedding_table *t;
    ck_assert_int_eq(gyro_embedding_table_new(GYRO__V1__EMBEDDING_MODEL__POINCARE, 1.0, 2, 2, &t), GYRO_OK);
    ck_assert_int_eq(gyro_embedding_table_set_token(t, 0, "水", 5), GYRO_OK);
    ck_assert_int_eq(gyro_embedding_table_set_token(t, 1, "a b", 3), GYRO_OK);
    float v[4] = {0.5f, -0.25f, 0.1f, 0.2f};
    memcpy(t->vectors, v, sizeof v);
    char p[128], q[128], buf[256];
    path(p, "t.vec");
    ck_assert_int_eq(gyro_embedding_export_vec(t, p), GYRO_OK);
    FILE *f = fopen(p, "r");
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    ck_assert_str_eq(buf, "2 2\n水 0.5 -0.25\na\xe2\x90\xa3" "b 0.100000001 0.200000003\n");
    path(p, "v.tsv");
    path(q, "m.tsv");
    ck_assert_int_eq(gyro_embedding_export_tsv(t, p, q), GYRO_OK);
    f = fopen(p, "r");
    n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    ck_assert_str_eq(buf, "0.5\t-0.25\n0.100000001\t0.200000003\n");
    f = fopen(q, "r");
    n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    ck_assert_str_eq(buf, "水\na\xe2\x90\xa3" "b\n");
    gyro_embedding_table_free(t);
}
END_TEST

START_TEST(test_neighbors_order)
{
    gyro_embedding_table *t = random_table(200, 4, 9);
    gyro_neighbor nb[10];
    int n;
    ck_assert_int_eq(gyro_embedding_neighbors(t, 17, 10, nb, &n), GYRO_OK);
    ck_assert_int_eq(n, 10);
    /* nearest first, and nothing outside the list is nearer than the 10th */
    for (int i = 1; i < n; i++) ck_assert_double_le(nb[i - 1].distance, nb[i].distance);
    int nearer = 0;
    for (int i = 0; i < t->n; i++)
        if (i != 17 && gyro_embedding_distance(t, 17, i) < nb[9].distance) nearer++;
    ck_assert_int_eq(nearer, 9);
    for (int i = 0; i < n; i++) ck_assert_int_ne(nb[i].row, 17);
    ck_assert_int_eq(gyro_embedding_neighbors(t, 200, 10, nb, &n), GYRO_ERR_USAGE);
    gyro_neighbor all[300];
    ck_assert_int_eq(gyro_embedding_neighbors(t, 0, 300, all, &n), GYRO_OK);
    ck_assert_int_eq(n, 199);
    gyro_embedding_table_free(t);
}
END_TEST

START_TEST(test_spearman)
{
    double a[5] = {1, 2, 3, 4, 5}, b[5] = {10, 20, 30, 40, 50}, c[5] = {5, 4, 3, 2, 1};
    ck_assert_double_eq_tol(gyro_spearman(a, b, 5), 1.0, 1e-12);
    ck_assert_double_eq_tol(gyro_spearman(a, c, 5), -1.0, 1e-12);
    /* ties: ranks of {1,1,2} are {1.5,1.5,3}; against {1,2,3}: rho = 0.866 */
    double t[3] = {1, 1, 2}, u[3] = {1, 2, 3};
    ck_assert_double_eq_tol(gyro_spearman(t, u, 3), sqrt(3.0) / 2.0, 1e-12);
    ck_assert(isnan(gyro_spearman(a, b, 1)));
    double k[3] = {2, 2, 2};
    ck_assert(isnan(gyro_spearman(k, u, 3)));
}
END_TEST

START_TEST(test_similarity_file)
{
    /* 水 and 河 close together, 火 far: the pair (水, 河) must rank above (水, 火) */
    gyro_embedding_table *t;
    ck_assert_int_eq(gyro_embedding_table_new(GYRO__V1__EMBEDDING_MODEL__POINCARE, 1.0, 2, 3, &t), GYRO_OK);
    const char *tok[3] = {"水", "河", "火"};
    float v[6] = {0.5f, 0.0f, 0.45f, 0.1f, -0.6f, 0.0f};
    memcpy(t->vectors, v, sizeof v);
    for (int i = 0; i < 3; i++) ck_assert_int_eq(gyro_embedding_table_set_token(t, i, tok[i], 1), GYRO_OK);
    char p[128];
    path(p, "sim.txt");
    FILE *f = fopen(p, "w");
    fputs("\xef\xbb\xbf水\t河\t9.0\r\n# comment\n\n水 火 1.0 1 1 1\n河水 火 2.0\n水 冰 5\n", f);
    fclose(f);
    gyro_similarity_result r;
    ck_assert_int_eq(gyro_similarity_eval(t, p, &r, NULL), GYRO_OK);
    ck_assert_int_eq(r.pairs, 4);
    ck_assert_int_eq(r.covered, 3); /* 冰 is missing */
    ck_assert_double_eq_tol(r.rho, 1.0, 1e-12);
    f = fopen(p, "w");
    fputs("水 河 9\n水 河\n", f);
    fclose(f);
    ck_assert_int_eq(gyro_similarity_eval(t, p, &r, NULL), GYRO_ERR_DATA);
    ck_assert_ptr_nonnull(strstr(gyro_error_message(), ":2:"));
    ck_assert_int_eq(gyro_similarity_eval(t, "/nonexistent", &r, NULL), GYRO_ERR_IO);
    gyro_embedding_table_free(t);
}
END_TEST

START_TEST(test_plot_layout)
{
    /* a 2-D Poincare table is drawn as trained */
    gyro_embedding_table *t;
    ck_assert_int_eq(gyro_embedding_table_new(GYRO__V1__EMBEDDING_MODEL__POINCARE, 1.0, 2, 2, &t), GYRO_OK);
    float v[4] = {0.5f, -0.25f, -0.1f, 0.7f};
    memcpy(t->vectors, v, sizeof v);
    ck_assert_int_eq(gyro_embedding_table_set_token(t, 0, "<&>", 2), GYRO_OK);
    ck_assert_int_eq(gyro_embedding_table_set_token(t, 1, "水", 1), GYRO_OK);
    double xy[4];
    int projected;
    ck_assert_int_eq(gyro_plot_layout(t, xy, &projected), GYRO_OK);
    ck_assert_int_eq(projected, 0);
    for (int i = 0; i < 4; i++) ck_assert_double_eq_tol(xy[i], v[i], 1e-6);
    char *buf = NULL;
    size_t blen = 0;
    FILE *f = open_memstream(&buf, &blen);
    ck_assert_ptr_nonnull(f);
    gyro_picture_plot_options po;
    gyro_picture_plot_options_init(&po);
    ck_assert_int_eq(gyro_picture_plot_svg(t, &po, f), GYRO_OK);
    fclose(f);
    ck_assert_ptr_nonnull(strstr(buf, "&lt;&amp;&gt;</text>")); /* labels are escaped */
    ck_assert_ptr_nonnull(strstr(buf, "as trained"));
    free(buf);
    gyro_embedding_table_free(t);
    /* a 6-D hyperboloid table is projected: points inside the disk, no farther out than before */
    gyro_embedding_table *h = random_table(100, 6, 5);
    double *q = malloc(200 * sizeof *q);
    ck_assert_int_eq(gyro_plot_layout(h, q, &projected), GYRO_OK);
    ck_assert_int_eq(projected, 1);
    for (int i = 0; i < 100; i++) {
        double r = hypot(q[2 * i], q[2 * i + 1]);
        ck_assert_double_lt(r, 1.0);
        /* distance to the origin: 2 artanh(r) in the disk, arcosh(x0) on the hyperboloid */
        ck_assert_double_le(2 * atanh(r), acosh(h->vectors[(size_t)i * h->stride]) + 1e-6);
    }
    free(q);
    gyro_embedding_table_free(h);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("embedding_table");
    TCase *tc = tcase_create("table");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_round_trip_chunks);
    tcase_add_test(tc, test_truncated_and_foreign_files);
    tcase_add_test(tc, test_nonfinite_and_outside_ball);
    tcase_add_test(tc, test_bit_flip_refused);
    tcase_add_test(tc, test_inconsistent_records);
    tcase_add_test(tc, test_convert_round_trip_preserves_distances);
    tcase_add_test(tc, test_exports);
    tcase_add_test(tc, test_neighbors_order);
    tcase_add_test(tc, test_spearman);
    tcase_add_test(tc, test_similarity_file);
    tcase_add_test(tc, test_plot_layout);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

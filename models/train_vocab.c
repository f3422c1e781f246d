/* train_vocab.c — labels and vocabulary of a classifier from its training set (train_vocab.h). */
#include "models/train_vocab.h"

#include <stdlib.h>
#include <string.h>

#include "models/train_classifier.h"

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Sorted distinct labels into v->labels. */
static gyro_status build_labels(gyro_train_vocab *v, const gyro_example_set *train)
{
    gyro_label_set *seen = NULL;
    const char **names = NULL;
    gyro_status st = gyro_label_set_new(&v->labels);
    if (!st) st = gyro_label_set_new(&seen);
    for (int i = 0; !st && i < train->n; i++) {
        st = gyro_label_set_add(seen, train->label[i], NULL);
        if (st) st = gyro_error_prefix(st, "training record %llu", (unsigned long long)train->line[i]);
    }
    int n = st ? 0 : gyro_label_set_count(seen);
    if (!st) {
        names = malloc((size_t)(n ? n : 1) * sizeof *names);
        if (!names) st = gyro_error_set(GYRO_ERR_NOMEM, "labels");
    }
    for (int i = 0; !st && i < n; i++) names[i] = gyro_label_set_name(seen, i);
    if (!st) qsort(names, (size_t)n, sizeof *names, cmp_str);
    for (int i = 0; !st && i < n; i++) st = gyro_label_set_add(v->labels, names[i], NULL);
    free(names);
    gyro_label_set_free(seen);
    return st;
}

/* Count the training tokens into v->seen / v->counts. */
static gyro_status count_tokens(gyro_train_vocab *v, const gyro_example_set *train, gyro_tokenizer *nz)
{
    size_t cap = 0;
    gyro_status st = gyro_strmap_new(&v->seen);
    for (int i = 0; !st && i < train->n; i++) {
        char *const *toks;
        size_t n_toks;
        const char *norm;
        st = gyro_tokenizer_run(nz, train->text[i], strlen(train->text[i]), &toks, &n_toks, &norm);
        if (st) return gyro_error_prefix(st, "training record %llu", (unsigned long long)train->line[i]);
        for (size_t c = 0; !st && c < n_toks; c++) {
            if (strcmp(toks[c], " ") == 0) continue;
            int32_t id;
            if ((st = gyro_strmap_intern(v->seen, toks[c], &id, NULL))) break;
            if ((size_t)id >= cap) {
                size_t nc = cap ? 2 * cap : 1024;
                uint64_t *p = realloc(v->counts, nc * sizeof *p);
                if (!p) return gyro_error_set(GYRO_ERR_NOMEM, "vocabulary");
                memset(p + cap, 0, (nc - cap) * sizeof *p);
                v->counts = p;
                cap = nc;
            }
            v->counts[id]++;
        }
    }
    return st;
}

typedef struct counted { uint64_t count; const char *s; } counted;

/* Most frequent first, ties in byte order. */
static int cmp_count_desc(const void *a, const void *b)
{
    const counted *x = a, *y = b;
    if (x->count != y->count) return x->count < y->count ? 1 : -1;
    return strcmp(x->s, y->s);
}

gyro_status gyro_train_vocab_build(gyro_train_vocab *v, const gyro_example_set *train,
                                   gyro_tokenizer *nz, const gyro_embedding_table *table,
                                   int min_count)
{
    memset(v, 0, sizeof *v);
    counted *order = NULL;
    gyro_status st = build_labels(v, train);
    if (!st) st = count_tokens(v, train, nz);
    int ns = st ? 0 : (int)gyro_strmap_count(v->seen), nt = table ? table->n : 0;
    if (!st) {
        v->tokens = malloc((size_t)(nt + ns + 1) * sizeof *v->tokens);
        order = malloc((size_t)(ns + 1) * sizeof *order);
        if (!v->tokens || !order) st = gyro_error_set(GYRO_ERR_NOMEM, "vocabulary");
    }
    if (!st) {
        for (int i = 0; i < nt; i++) v->tokens[v->n++] = table->tokens[i];
        for (int i = 0; i < ns; i++) order[i] = (counted){v->counts[i], gyro_strmap_key(v->seen, i)};
        qsort(order, (size_t)ns, sizeof *order, cmp_count_desc);
        uint64_t min = (uint64_t)(min_count > 1 ? min_count : 1);
        for (int i = 0; i < ns; i++) {
            const char *tok = order[i].s;
            if (order[i].count < min) continue;
            if (table && gyro_embedding_table_find(table, tok) >= 0) continue;
            v->tokens[v->n++] = tok;
        }
    }
    free(order);
    if (st) gyro_train_vocab_free(v);
    return st;
}

void gyro_train_vocab_free(gyro_train_vocab *v)
{
    if (!v) return;
    gyro_label_set_free(v->labels);
    free(v->tokens);
    gyro_strmap_free(v->seen);
    free(v->counts);
    memset(v, 0, sizeof *v);
}

/* example_set.c — labelled texts in memory (gyro_example_set, train_classifier.h). */
#include <stdlib.h>
#include <string.h>

#include "models/train_classifier.h"

gyro_status gyro_example_set_add_session(gyro_example_set *s, const char *text, const char *label,
                                         uint64_t line, const char *session)
{
    if (s->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 1024;
        char **t = realloc(s->text, (size_t)cap * sizeof *t);
        if (t) s->text = t;
        char **l = realloc(s->label, (size_t)cap * sizeof *l);
        if (l) s->label = l;
        uint64_t *n = realloc(s->line, (size_t)cap * sizeof *n);
        if (n) s->line = n;
        char **q = realloc(s->session, (size_t)cap * sizeof *q);
        if (q) s->session = q;
        if (!t || !l || !n || !q) return gyro_error_set(GYRO_ERR_NOMEM, "example set of %d", cap);
        s->cap = cap;
    }
    char *a = strdup(text), *b = strdup(label), *c = NULL;
    if (session && session[0]) c = strdup(session);
    if (!a || !b || (session && session[0] && !c)) {
        free(a); free(b); free(c);
        return gyro_error_set(GYRO_ERR_NOMEM, "example set");
    }
    s->text[s->n] = a;
    s->label[s->n] = b;
    s->line[s->n] = line;
    s->session[s->n] = c;
    s->n++;
    return GYRO_OK;
}

gyro_status gyro_example_set_add(gyro_example_set *s, const char *text, const char *label,
                                 uint64_t line)
{
    return gyro_example_set_add_session(s, text, label, line, NULL);
}

const char *gyro_example_set_context(const gyro_example_set *s, int i)
{
    if (!s || !s->session || i <= 0 || i >= s->n) return NULL;
    const char *a = s->session[i], *b = s->session[i - 1];
    return a && b && strcmp(a, b) == 0 ? s->text[i - 1] : NULL;
}

void gyro_example_set_free(gyro_example_set *s)
{
    if (!s) return;
    for (int i = 0; i < s->n; i++) {
        free(s->text[i]);
        free(s->label[i]);
        if (s->session) free(s->session[i]);
    }
    free(s->text);
    free(s->label);
    free(s->line);
    free(s->session);
    memset(s, 0, sizeof *s);
}

/* classify_response.c — a ClassifyResponse from a prediction and the label set (see
 * classify_response.h). */
#include "pipeline/classify_response.h"

#include <stdlib.h>
#include <string.h>

static int grow(gyro_classify_response_buf *b, int n, size_t atoms)
{
    if (n > b->cap) {
        Gyro__V1__Intent *im = realloc(b->imsg, (size_t)n * sizeof *im);
        if (im) b->imsg = im;
        Gyro__V1__Intent **ip = realloc(b->iptr, (size_t)n * sizeof *ip);
        if (ip) b->iptr = ip;
        if (!im || !ip) return 0;
        b->cap = n;
    }
    if (atoms > b->atoms_cap) {
        char **a = realloc(b->atoms, atoms * sizeof *a);
        if (!a) return 0;
        b->atoms = a;
        b->atoms_cap = atoms;
    }
    return 1;
}

static void sort_names(char **a, size_t n) /* insertion sort: a label has few atoms */
{
    for (size_t x = 1; x < n; x++)
        for (size_t y = x; y > 0 && strcmp(a[y - 1], a[y]) > 0; y--) {
            char *t = a[y];
            a[y] = a[y - 1];
            a[y - 1] = t;
        }
}

gyro_status gyro_classify_response_fill(gyro_classify_response_buf *buf, const gyro_label_set *labels,
                                        const gyro_intent *top, int n, const char *model_version,
                                        const char *id, const char *normalized,
                                        Gyro__V1__ClassifyResponse *resp)
{
    if (!buf || !resp || !labels || n < 0 || (n > 0 && !top))
        return gyro_error_set(GYRO_ERR_USAGE, "gyro_classify_response_fill: bad arguments");
    gyro__v1__classify_response__init(resp);
    size_t atoms = 0;
    for (int i = 0; i < n; i++) {
        int c = gyro_label_set_find(labels, top[i].label);
        int na = c < 0 ? 0 : gyro_label_set_n_atoms(labels, c);
        atoms += na > 1 ? (size_t)na : 0;
    }
    if (!grow(buf, n, atoms)) return gyro_error_set(GYRO_ERR_NOMEM, "out of memory building a ClassifyResponse");
    char **ap = buf->atoms;
    for (int i = 0; i < n; i++) {
        Gyro__V1__Intent *im = &buf->imsg[i];
        gyro__v1__intent__init(im);
        im->label = (char *)top[i].label;
        im->probability = top[i].probability;
        int c = gyro_label_set_find(labels, top[i].label);
        int na = c < 0 ? 0 : gyro_label_set_n_atoms(labels, c);
        if (na > 1) { /* a composite: its atoms; a simple label lists none */
            const int *ids = gyro_label_set_atoms(labels, c);
            for (int a = 0; a < na; a++) ap[a] = (char *)gyro_label_set_atom_name(labels, ids[a]);
            sort_names(ap, (size_t)na);
            im->atoms = ap;
            im->n_atoms = (size_t)na;
            ap += na;
        }
        buf->iptr[i] = im;
    }
    resp->n_intents = (size_t)n;
    resp->intents = n ? buf->iptr : NULL;
    resp->model_version = (char *)(model_version ? model_version : "");
    resp->id = (char *)(id ? id : "");
    resp->normalized_text = (char *)(normalized ? normalized : "");
    return GYRO_OK;
}

void gyro_classify_response_buf_free(gyro_classify_response_buf *buf)
{
    if (!buf) return;
    free(buf->imsg);
    free(buf->iptr);
    free(buf->atoms);
    memset(buf, 0, sizeof *buf);
}

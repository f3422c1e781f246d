/* train_best.c — early stopping of the classifier's training loops (see train_best.h). */
#include "models/train_best.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

gyro_status gyro_train_best_init(gyro_train_best *b, float *params, size_t n)
{
    memset(b, 0, sizeof *b);
    b->copy = malloc((n ? n : 1) * sizeof *b->copy);
    if (!b->copy) return gyro_error_set(GYRO_ERR_NOMEM, "train buffers");
    b->params = params;
    b->n = n;
    return GYRO_OK;
}

void gyro_train_best_free(gyro_train_best *b)
{
    free(b->copy);
    memset(b, 0, sizeof *b);
}

gyro_status gyro_train_best_epoch(gyro_train_best *b, const gyro_train_options *opt, gyro_classifier *m,
                                  gyro_train_result *R, int epoch, int have_dev, double acc, int *done)
{
    if (!have_dev) return opt->checkpoint ? gyro_classifier_save(m, opt->checkpoint) : GYRO_OK;
    if (isnan(R->best_dev_accuracy) || acc > R->best_dev_accuracy) {
        R->best_dev_accuracy = acc;
        R->best_epoch = epoch + 1;
        memcpy(b->copy, b->params, b->n * sizeof *b->copy);
        b->since = 0;
        return opt->checkpoint ? gyro_classifier_save(m, opt->checkpoint) : GYRO_OK;
    }
    *done = opt->patience > 0 && ++b->since >= opt->patience;
    return GYRO_OK;
}

void gyro_train_best_restore(const gyro_train_best *b, const gyro_train_result *R)
{
    if (R->best_epoch > 0) memcpy(b->params, b->copy, b->n * sizeof *b->copy);
}

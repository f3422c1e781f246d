/* model_params.c — print the parameter count and the version string of classifier files
 * (tests/bench/geometry_compare.sh): "params=N version=V" per file. */
#include <stdio.h>

#include "models/classifier.h"

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s MODEL...\n", argv[0]);
        return 2;
    }
    for (int i = 1; i < argc; i++) {
        gyro_classifier *m = NULL;
        if (gyro_classifier_load(argv[i], &m) != GYRO_OK) {
            fprintf(stderr, "%s: %s\n", argv[i], gyro_error_message());
            return 65;
        }
        printf("params=%zu version=%s\n", gyro_classifier_param_count(m),
               gyro_classifier_version(m));
        gyro_classifier_free(m);
    }
    return 0;
}

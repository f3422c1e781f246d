/* fuzz_classifier.c — the classifier model loader (models/classifier.h): header, sizes, CRC,
 * configuration, vocabulary, labels, tensors; a model that loads also predicts once. */
#include <string.h>

#include "models/classifier.h"
#include "models/core/blas.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc; (void)argv;
    gyro_blas_set_threads(1);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    int fd = fuzz_file(data, size, path);
    gyro_classifier *m;
    if (gyro_classifier_load(path, &m) == GYRO_OK) {
        gyro_classifier_scratch *s;
        if (gyro_classifier_scratch_new(m, &s) == GYRO_OK) {
            gyro_intent top[4];
            int n;
            (void)gyro_classifier_predict(m, s, "播放周杰伦的稻香", 4, top, &n);
            gyro_classifier_scratch_free(s);
        }
        gyro_classifier_free(m);
    }
    close(fd);
    return 0;
}

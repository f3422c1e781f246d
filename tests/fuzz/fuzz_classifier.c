/* fuzz_classifier.c — the classifier model loader (models/classifier.h): header, sizes, CRC,
 * configuration (transformer or n-gram), vocabulary, labels, tensors; a model that loads also
 * predicts once, with a previous turn. Each input is tried as is, then with the header's length
 * and the CRC made consistent with it, so the mutations reach the payload parser instead of
 * stopping at the checksum. */
#include <string.h>

#include "models/classifier.h"
#include "models/core/blas.h"
#include "models/core/crc32.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc; (void)argv;
    gyro_blas_set_threads(1);
    return 0;
}

static void try_load(const uint8_t *data, size_t size)
{
    char path[64];
    int fd = fuzz_file(data, size, path);
    gyro_classifier *m;
    if (gyro_classifier_load(path, &m) == GYRO_OK) {
        gyro_classifier_scratch *s;
        if (gyro_classifier_scratch_new(m, &s) == GYRO_OK) {
            gyro_intent top[4];
            int n;
            (void)gyro_classifier_predict_context(m, s, "播放周杰伦的稻香", "导航到机场", 4, top, &n);
            gyro_classifier_scratch_free(s);
        }
        gyro_classifier_free(m);
    }
    close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    try_load(data, size);
    if (size >= 28 && memcmp(data, "GYROCLF", 8) == 0) {   /* header 24 bytes, payload, CRC 4 */
        uint8_t *b = malloc(size);
        memcpy(b, data, size);
        uint64_t len = size - 28;
        for (int i = 0; i < 8; i++) b[16 + i] = (uint8_t)(len >> (8 * i));
        uint32_t crc = gyro_crc32(0, b + 24, (size_t)len);
        for (int i = 0; i < 4; i++) b[size - 4 + i] = (uint8_t)(crc >> (8 * i));
        try_load(b, size);
        free(b);
    }
    return 0;
}

/* fuzz_hrm.c — the HRM model file loader (models/hrm.h, gyro_hrm_load): magic, version, header
 * size, configuration bounds, the parameter count against the file and the configuration,
 * CRC-32, finite parameters. Each input is tried as is, then with its trailing CRC-32 made to
 * match the bytes before it, so the mutations reach the configuration and size checks instead
 * of stopping at the checksum. A model that loads also gets the activations for a batch of one
 * (their sizes follow the configuration). No forward pass: with coverage instrumentation one
 * Sudoku-sized solve costs ~7 ms and would cut the loader's executions twentyfold; the forward
 * pass has its own checks (check_hrm). */
#include <string.h>

#include "models/core/blas.h"
#include "models/core/crc32.h"
#include "models/hrm.h"
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
    gyro_hrm_model *m;
    if (gyro_hrm_load(path, &m) == GYRO_OK) {
        gyro_hrm_acts *a; /* what serving it would allocate next: sized by the configuration */
        if (gyro_hrm_acts_new(m, 1, 0, 0, &a) == GYRO_OK) gyro_hrm_acts_free(a);
        gyro_hrm_free(m);
    }
    close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    try_load(data, size);
    if (size >= 20 && memcmp(data, "GYROHRM1", 8) == 0) { /* ..., CRC-32 of what precedes it */
        uint8_t *b = malloc(size);
        memcpy(b, data, size);
        uint32_t crc = gyro_crc32(0, b, size - 4);
        memcpy(b + size - 4, &crc, 4);
        try_load(b, size);
        free(b);
    }
    return 0;
}

/* fuzz_policy.c — the RL policy file loader (models/rl/policy.h), versions 1 and 2: header,
 * configuration bounds, sizes against the file, checksum, finite parameters. Each input is
 * tried as is, then (as version 2) with its trailing CRC-32 made to match, so the mutations
 * reach the configuration checks instead of stopping at the checksum. */
#include <string.h>

#include "models/core/blas.h"
#include "models/core/crc32.h"
#include "models/rl/policy.h"
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
    gyro_rl_policy *p;
    if (gyro_rl_policy_load(path, 2, &p) == GYRO_OK) gyro_rl_policy_free(p);
    close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    try_load(data, size);
    if (size >= 20 && memcmp(data, "GYRORLP1", 8) == 0) {
        uint8_t *b = malloc(size);
        memcpy(b, data, size);
        b[8] = 2; b[9] = b[10] = b[11] = 0;
        uint32_t crc = gyro_crc32(0, b, size - 4);
        memcpy(b + size - 4, &crc, 4);
        try_load(b, size);
        free(b);
    }
    return 0;
}

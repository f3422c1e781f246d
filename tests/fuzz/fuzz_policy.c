/* fuzz_policy.c — the RL policy file loader (models/rl/policy.h), versions 1 and 2: header,
 * configuration bounds, sizes against the file, checksum, finite parameters. */
#include "models/core/blas.h"
#include "models/rl/policy.h"
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
    gyro_rl_policy *p;
    if (gyro_rl_policy_load(path, 2, &p) == GYRO_OK) gyro_rl_policy_free(p);
    close(fd);
    return 0;
}

/* fuzz_zip.c — the ZIP reader (pipeline/zip_read.h): central directory, local headers, inflate,
 * CRC-32 check of every member. */
#include <stdlib.h>

#include "pipeline/zip_read.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gyro_zip *z;
    if (gyro_zip_open_memory(data, size, "fuzz.zip", &z) != GYRO_OK) return 0;
    size_t n = gyro_zip_count(z);
    for (size_t i = 0; i < n && i < 64; i++) {
        const char *name = gyro_zip_name(z, i);
        if (name) (void)gyro_zip_find(z, name);
        char *out;
        size_t len;
        if (gyro_zip_extract(z, i, &out, &len) == GYRO_OK) free(out);
    }
    gyro_zip_free(z);
    return 0;
}

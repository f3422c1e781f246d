/* fuzz_reflection.c — the FileDescriptorSet index of server reflection (pipeline/reflection.h):
 * the wire-format walker over arbitrary bytes; an index that builds answers lookups and import
 * closures. Seeds: the descriptor set compiled into gyro. */
#include <stdlib.h>

#include "pipeline/reflection.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gyro_reflection *r;
    if (gyro_reflection_new(data, size, &r) != GYRO_OK) return 0;
    int n = gyro_reflection_n_files(r);
    int *out = malloc((size_t)(n ? n : 1) * sizeof *out);
    for (int f = 0; f < n && out; f++) {
        int k = gyro_reflection_closure(r, f, out);
        for (int i = 0; i < k; i++) {
            size_t len;
            (void)gyro_reflection_file_bytes(r, out[i], &len);
            (void)gyro_reflection_find_file(r, gyro_reflection_file_name(r, out[i]));
        }
    }
    int kind;
    (void)gyro_reflection_find_symbol(r, "gyro.v1.Gyro.Classify", &kind);
    (void)gyro_reflection_find_symbol(r, ".p.A", &kind);
    free(out);
    gyro_reflection_free(r);
    return 0;
}

/* fuzz_table.c — the embedding-table loader (pipeline/table_file.h): stream framing, record
 * consistency, checksums, finite coordinates, the Poincaré ball; a table that loads answers a
 * nearest-neighbour query. */
#include "embeddings/neighbors.h"
#include "pipeline/table_file.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    int fd = fuzz_file(data, size, path);
    gyro_embedding_table *t;
    if (gyro_table_file_load(path, &t) == GYRO_OK) {
        gyro_neighbor nb[3];
        int n;
        (void)gyro_embedding_neighbors(t, 0, 3, nb, &n);
        gyro_embedding_table_free(t);
    }
    close(fd);
    return 0;
}

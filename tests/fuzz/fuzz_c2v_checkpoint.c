/* fuzz_c2v_checkpoint.c — the char2vec checkpoint loader (embeddings/checkpoint.h), versions 1
 * and 2, and the encoded corpus (.ids) opener (embeddings/corpus.h), which --resume reads
 * together. An input starting with "GYROIDS" goes to the corpus opener (and, if it opens, every
 * id is read back), anything else to the checkpoint loader. Each input is tried as is, then with
 * its checksum made to match (version 2 of either format), so the mutations reach the parsers
 * instead of stopping at the checksum. */
#include <string.h>

#include "embeddings/checkpoint.h"
#include "embeddings/corpus.h"
#include "models/core/crc32.h"
#include "tests/fuzz/fuzz.h"

static void try_load(const uint8_t *data, size_t size)
{
    char path[64];
    int fd = fuzz_file(data, size, path);
    if (size >= 7 && memcmp(data, "GYROIDS", 7) == 0) {
        gyro_corpus c;
        if (gyro_corpus_open(path, &c) == GYRO_OK) {
            uint32_t buf[256];
            size_t got;
            for (uint64_t pos = 0; pos < c.n_ids; pos += got)
                if (gyro_corpus_read(&c, pos, buf, 256, &got) != GYRO_OK || got == 0) break;
            gyro_corpus_close(&c);
        }
    } else {
        gyro_c2v_model m;
        (void)gyro_c2v_checkpoint_load(path, &m);
        gyro_c2v_model_free(&m);
    }
    close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    try_load(data, size);
    uint8_t *b = malloc(size ? size : 1);
    memcpy(b, data, size);
    if (size >= 64 && memcmp(data, "GYROIDS", 7) == 0) {   /* crc at 48: ids, then header[0..48) */
        b[8] = 2; b[9] = b[10] = b[11] = 0;
        uint32_t crc = gyro_crc32(gyro_crc32(0, b + 64, (size - 64) / 4 * 4), b, 48);
        memcpy(b + 48, &crc, 4);
        try_load(b, size);
    } else if (size >= 20 && memcmp(data, "GYROC2VK", 8) == 0) {
        b[8] = 2; b[9] = b[10] = b[11] = 0;
        uint32_t crc = gyro_crc32(0, b, size - 4);
        memcpy(b + size - 4, &crc, 4);
        try_load(b, size);
    }
    free(b);
    return 0;
}

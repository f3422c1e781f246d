/* fuzz_c2v_checkpoint.c — the char2vec checkpoint loader (embeddings/checkpoint.h), versions 1
 * and 2, and the encoded corpus (.ids) opener (embeddings/corpus.h), which --resume reads
 * together. An input starting with "GYROIDS" goes to the corpus opener (and, if it opens, every
 * id is read back), anything else to the checkpoint loader. */
#include <string.h>

#include "embeddings/checkpoint.h"
#include "embeddings/corpus.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
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
    return 0;
}

/* crc32.h — the one checksum of gyro's files: zlib's CRC-32 (IEEE 802.3, reflected polynomial
 * 0xEDB88320, initial and final XOR 0xFFFFFFFF; crc32("123456789") = 0xCBF43926).
 *
 * Every format with a checksum (classifier model, RL policy, char2vec checkpoint, encoded corpus,
 * embedding table) uses it through this wrapper, which only lifts zlib's 32-bit length limit.
 */
#ifndef GYRO_CORE_CRC32_H
#define GYRO_CORE_CRC32_H

#include <stddef.h>
#include <stdint.h>

/* Continue CRC-32 `crc` (0 to start) over n bytes at p and return it; n may exceed 4 GiB. Pure:
 * no state, safe from any thread. */
uint32_t gyro_crc32(uint32_t crc, const void *p, size_t n);

#endif

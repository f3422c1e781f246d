/* crc32.c — gyro_crc32 over zlib's crc32 (see crc32.h). */
#include "models/core/crc32.h"

#include <zlib.h>

uint32_t gyro_crc32(uint32_t crc, const void *p, size_t n)
{
    const Bytef *b = p;
    uLong c = crc;
    while (n > 0) {   /* zlib takes a uInt length */
        uInt k = n > (1u << 30) ? (1u << 30) : (uInt)n;
        c = crc32(c, b, k);
        b += k;
        n -= k;
    }
    return (uint32_t)c;
}

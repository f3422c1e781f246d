/* utf8.c — strict UTF-8 decoding with maximal-subpart error lengths (see utf8.h).
 *
 * Table 3-7 of the Unicode Standard lists the well-formed byte sequences; the second byte's
 * range depends on the lead byte (E0: A0..BF, ED: 80..9F, F0: 90..BF, F4: 80..8F), the others
 * are 80..BF. A sequence is cut at the first byte outside its range: the bytes before it form
 * the maximal subpart.
 */
#include "models/text/utf8.h"

size_t gyro_utf8_decode(const uint8_t *s, size_t len, int32_t *cp)
{
    uint8_t b0 = s[0];
    if (b0 < 0x80) {
        *cp = b0;
        return 1;
    }
    int need;
    uint8_t lo = 0x80, hi = 0xbf;
    int32_t v;
    if (b0 >= 0xc2 && b0 <= 0xdf) { need = 1; v = b0 & 0x1f; }
    else if (b0 >= 0xe0 && b0 <= 0xef) {
        need = 2; v = b0 & 0x0f;
        if (b0 == 0xe0) lo = 0xa0;
        else if (b0 == 0xed) hi = 0x9f;
    } else if (b0 >= 0xf0 && b0 <= 0xf4) {
        need = 3; v = b0 & 0x07;
        if (b0 == 0xf0) lo = 0x90;
        else if (b0 == 0xf4) hi = 0x8f;
    } else {
        *cp = -1;   /* 80..C1, F5..FF: never valid as a lead byte */
        return 1;
    }
    size_t i = 1;
    for (int k = 0; k < need; k++, i++) {
        if (i >= len || s[i] < lo || s[i] > hi) {
            *cp = -1;
            return i;
        }
        v = (v << 6) | (s[i] & 0x3f);
        lo = 0x80;
        hi = 0xbf;
    }
    *cp = v;
    return i;
}

size_t gyro_utf8_encode(char *out, int32_t cp)
{
    uint8_t *o = (uint8_t *)out;
    if (cp < 0) return 0;
    if (cp < 0x80) { o[0] = (uint8_t)cp; return 1; }
    if (cp < 0x800) {
        o[0] = (uint8_t)(0xc0 | (cp >> 6));
        o[1] = (uint8_t)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        if (cp >= 0xd800 && cp <= 0xdfff) return 0;
        o[0] = (uint8_t)(0xe0 | (cp >> 12));
        o[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f));
        o[2] = (uint8_t)(0x80 | (cp & 0x3f));
        return 3;
    }
    if (cp <= 0x10ffff) {
        o[0] = (uint8_t)(0xf0 | (cp >> 18));
        o[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3f));
        o[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f));
        o[3] = (uint8_t)(0x80 | (cp & 0x3f));
        return 4;
    }
    return 0;
}

size_t gyro_utf8_find_invalid(const uint8_t *s, size_t len)
{
    size_t i = 0;
    while (i < len) {
        if (s[i] < 0x80) { i++; continue; }
        int32_t cp;
        size_t n = gyro_utf8_decode(s + i, len - i, &cp);
        if (cp < 0) return i;
        i += n;
    }
    return len;
}

/* utf8.h — strict UTF-8 decoding and encoding (Unicode 15, Table 3-7 "well-formed sequences").
 *
 * The decoder rejects overlong forms, surrogates (U+D800..U+DFFF) and values above U+10FFFF.
 * On an ill-formed sequence it reports the length of the "maximal subpart" (the longest prefix
 * of a well-formed sequence, at least one byte), so a caller replacing each such subpart by
 * U+FFFD follows the W3C/WHATWG and Unicode "best practice" for U+FFFD substitution.
 */
#ifndef GYRO_TEXT_UTF8_H
#define GYRO_TEXT_UTF8_H

#include <stddef.h>
#include <stdint.h>

#define GYRO_UTF8_REPLACEMENT 0xFFFD

/* Decode the sequence starting at s[0] (len > 0 bytes available). Returns the number of bytes
 * consumed (1..4). *cp is the code point, or -1 if the bytes are ill-formed (then the return
 * value is the length of the maximal subpart to skip). */
size_t gyro_utf8_decode(const uint8_t *s, size_t len, int32_t *cp);

/* Encode code point `cp` (0..0x10FFFF, not a surrogate) into out (at least 4 bytes); returns the
 * number of bytes written, or 0 for an invalid code point. */
size_t gyro_utf8_encode(char *out, int32_t cp);

/* Byte offset of the first ill-formed sequence in s[0..len), or len if all of it is valid. */
size_t gyro_utf8_find_invalid(const uint8_t *s, size_t len);

#endif

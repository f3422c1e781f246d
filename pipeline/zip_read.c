/* zip_read.c — ZIP central directory walk and member extraction (see zip_read.h).
 *
 * Layout used (APPNOTE 6.3, little-endian): end of central directory record "PK\5\6" (22 bytes
 * + comment, so searched for in the last 65,557 bytes), central directory headers "PK\1\2"
 * (46 bytes + name + extra + comment) and local headers "PK\3\4" (30 bytes + name + extra).
 * Sizes and CRC are taken from the central directory, which is authoritative even when the
 * local header defers them to a data descriptor (flag bit 3). Deflated data is inflated in one
 * call into a buffer of the recorded size (zlib raw inflate, windowBits -15); the member is
 * accepted only when inflate reaches the end of the stream with exactly that many bytes and the
 * CRC-32 matches.
 */
#include "pipeline/zip_read.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

typedef struct zip_entry {
    char *name;
    uint16_t method, flags;
    uint32_t crc, csize, usize, local_offset;
} zip_entry;

struct gyro_zip {
    unsigned char *data;   /* (len) the whole archive */
    size_t len;
    char *name;
    zip_entry *entries;    /* (n) */
    size_t n;
};

static uint16_t rd16(const unsigned char *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static uint32_t rd32(const unsigned char *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

void gyro_zip_free(gyro_zip *z)
{
    if (!z) return;
    for (size_t i = 0; i < z->n; i++) free(z->entries[i].name);
    free(z->entries);
    free(z->data);
    free(z->name);
    free(z);
}

/* Parse the directory of z->data; on error the caller frees z. */
static gyro_status zip_parse(gyro_zip *z)
{
    const unsigned char *d = z->data;
    size_t len = z->len;
    if (len < 22) return gyro_error_set(GYRO_ERR_FORMAT, "%s: not a ZIP archive (too short)", z->name);
    size_t lo = len > 65557 ? len - 65557 : 0;
    size_t eocd = (size_t)-1;
    for (size_t i = len - 22 + 1; i-- > lo;) {
        if (d[i] == 'P' && d[i + 1] == 'K' && d[i + 2] == 5 && d[i + 3] == 6) {
            /* the comment must reach exactly the end of the file */
            if (i + 22 + rd16(d + i + 20) == len) { eocd = i; break; }
        }
    }
    if (eocd == (size_t)-1)
        return gyro_error_set(GYRO_ERR_FORMAT,
                              "%s: not a ZIP archive (no end of central directory record)", z->name);
    const unsigned char *e = d + eocd;
    uint16_t disk = rd16(e + 4), cd_disk = rd16(e + 6), n_disk = rd16(e + 8), n_total = rd16(e + 10);
    uint32_t cd_size = rd32(e + 12), cd_off = rd32(e + 16);
    if (n_total == 0xFFFF || cd_size == 0xFFFFFFFFu || cd_off == 0xFFFFFFFFu)
        return gyro_error_set(GYRO_ERR_FORMAT, "%s: ZIP64 archives are not supported", z->name);
    if (disk != 0 || cd_disk != 0 || n_disk != n_total)
        return gyro_error_set(GYRO_ERR_FORMAT, "%s: multi-disk ZIP archives are not supported",
                              z->name);
    if ((uint64_t)cd_off + cd_size > eocd)
        return gyro_error_set(GYRO_ERR_FORMAT, "%s: central directory (offset %u, %u bytes) "
                              "lies outside the archive", z->name, cd_off, cd_size);
    z->entries = calloc(n_total ? n_total : 1, sizeof *z->entries);
    if (!z->entries) return gyro_error_set(GYRO_ERR_NOMEM, "%s: out of memory", z->name);
    size_t p = cd_off, end = (size_t)cd_off + cd_size;
    for (size_t i = 0; i < n_total; i++) {
        if (p + 46 > end || rd32(d + p) != 0x02014b50u)
            return gyro_error_set(GYRO_ERR_FORMAT, "%s: central directory entry %zu is corrupt "
                                  "(at byte %zu)", z->name, i + 1, p);
        const unsigned char *h = d + p;
        size_t nlen = rd16(h + 28), xlen = rd16(h + 30), clen = rd16(h + 32);
        if (p + 46 + nlen + xlen + clen > end)
            return gyro_error_set(GYRO_ERR_FORMAT, "%s: central directory entry %zu overruns the "
                                  "directory", z->name, i + 1);
        zip_entry *en = &z->entries[i];
        en->flags = rd16(h + 8);
        en->method = rd16(h + 10);
        en->crc = rd32(h + 16);
        en->csize = rd32(h + 20);
        en->usize = rd32(h + 24);
        en->local_offset = rd32(h + 42);
        en->name = malloc(nlen + 1);
        if (!en->name) return gyro_error_set(GYRO_ERR_NOMEM, "%s: out of memory", z->name);
        memcpy(en->name, h + 46, nlen);
        en->name[nlen] = '\0';
        z->n = i + 1;
        if (memchr(en->name, '\0', nlen))
            return gyro_error_set(GYRO_ERR_FORMAT, "%s: member %zu has a NUL in its name",
                                  z->name, i + 1);
        p += 46 + nlen + xlen + clen;
    }
    return GYRO_OK;
}

gyro_status gyro_zip_open_memory(const void *data, size_t len, const char *name, gyro_zip **out)
{
    if (!out || (!data && len)) return gyro_error_set(GYRO_ERR_USAGE, "gyro_zip_open_memory: NULL argument");
    *out = NULL;
    if (len > GYRO_ZIP_MAX_BYTES)
        return gyro_error_set(GYRO_ERR_LIMIT, "%s: archive over %zu bytes", name ? name : "-",
                              GYRO_ZIP_MAX_BYTES);
    gyro_zip *z = calloc(1, sizeof *z);
    if (!z) return gyro_error_set(GYRO_ERR_NOMEM, "out of memory opening a ZIP archive");
    z->name = strdup(name ? name : "-");
    z->data = malloc(len ? len : 1);
    if (!z->name || !z->data) {
        gyro_zip_free(z);
        return gyro_error_set(GYRO_ERR_NOMEM, "out of memory opening a ZIP archive");
    }
    if (len) memcpy(z->data, data, len);
    z->len = len;
    gyro_status st = zip_parse(z);
    if (st != GYRO_OK) { gyro_zip_free(z); return st; }
    *out = z;
    return GYRO_OK;
}

gyro_status gyro_zip_open(const char *path, gyro_zip **out)
{
    if (!path || !out) return gyro_error_set(GYRO_ERR_USAGE, "gyro_zip_open: NULL argument");
    *out = NULL;
    FILE *fp = fopen(path, "rb");
    if (!fp) return gyro_error_set(GYRO_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    gyro_zip *z = calloc(1, sizeof *z);
    if (!z || !(z->name = strdup(path))) {
        free(z);
        fclose(fp);
        return gyro_error_set(GYRO_ERR_NOMEM, "out of memory opening %s", path);
    }
    gyro_status st = GYRO_OK;
    size_t cap = 0;
    while (st == GYRO_OK) {
        if (z->len == cap) {
            if (cap >= GYRO_ZIP_MAX_BYTES) {
                st = gyro_error_set(GYRO_ERR_LIMIT, "%s: archive over %zu bytes", path,
                                    GYRO_ZIP_MAX_BYTES);
                break;
            }
            size_t ncap = cap ? cap * 2 : (size_t)1 << 20;
            if (ncap > GYRO_ZIP_MAX_BYTES) ncap = GYRO_ZIP_MAX_BYTES;
            unsigned char *nd = realloc(z->data, ncap);
            if (!nd) { st = gyro_error_set(GYRO_ERR_NOMEM, "%s: out of memory", path); break; }
            z->data = nd;
            cap = ncap;
        }
        size_t got = fread(z->data + z->len, 1, cap - z->len, fp);
        z->len += got;
        if (got == 0) {
            if (ferror(fp)) st = gyro_error_set(GYRO_ERR_IO, "%s: read error: %s", path, strerror(errno));
            break;
        }
    }
    fclose(fp);
    if (st == GYRO_OK) st = zip_parse(z);
    if (st != GYRO_OK) { gyro_zip_free(z); return st; }
    *out = z;
    return GYRO_OK;
}

size_t gyro_zip_count(const gyro_zip *z) { return z ? z->n : 0; }

const char *gyro_zip_name(const gyro_zip *z, size_t i)
{
    return (z && i < z->n) ? z->entries[i].name : NULL;
}

uint64_t gyro_zip_size(const gyro_zip *z, size_t i)
{
    return (z && i < z->n) ? z->entries[i].usize : 0;
}

long gyro_zip_find(const gyro_zip *z, const char *name)
{
    if (!z || !name) return -1;
    for (size_t i = 0; i < z->n; i++)
        if (strcmp(z->entries[i].name, name) == 0) return (long)i;
    return -1;
}

gyro_status gyro_zip_extract(const gyro_zip *z, size_t i, char **data, size_t *len)
{
    if (data) *data = NULL;
    if (len) *len = 0;
    if (!z || !data || !len || i >= z->n)
        return gyro_error_set(GYRO_ERR_USAGE, "gyro_zip_extract: bad argument");
    const zip_entry *en = &z->entries[i];
    if (en->flags & 1)
        return gyro_error_set(GYRO_ERR_FORMAT, "%s: %s is encrypted (not supported)", z->name, en->name);
    if (en->csize == 0xFFFFFFFFu || en->usize == 0xFFFFFFFFu || en->local_offset == 0xFFFFFFFFu)
        return gyro_error_set(GYRO_ERR_FORMAT, "%s: %s needs ZIP64 (not supported)", z->name, en->name);
    if (en->method != 0 && en->method != 8)
        return gyro_error_set(GYRO_ERR_FORMAT, "%s: %s uses compression method %u (only stored "
                              "and deflate are supported)", z->name, en->name, en->method);
    if (en->usize > GYRO_ZIP_MAX_BYTES)
        return gyro_error_set(GYRO_ERR_LIMIT, "%s: %s expands to %u bytes (limit %zu)", z->name,
                              en->name, en->usize, GYRO_ZIP_MAX_BYTES);
    size_t lh = en->local_offset;
    if (lh + 30 > z->len || rd32(z->data + lh) != 0x04034b50u)
        return gyro_error_set(GYRO_ERR_FORMAT, "%s: %s: local header at byte %zu is missing or "
                              "corrupt", z->name, en->name, lh);
    size_t start = lh + 30 + rd16(z->data + lh + 26) + rd16(z->data + lh + 28);
    if (start > z->len || z->len - start < en->csize)
        return gyro_error_set(GYRO_ERR_FORMAT, "%s: %s: data (%u bytes at byte %zu) is truncated",
                              z->name, en->name, en->csize, start);
    if (en->method == 0 && en->csize != en->usize)
        return gyro_error_set(GYRO_ERR_FORMAT, "%s: %s: stored member with differing sizes",
                              z->name, en->name);
    /* deflate expands at most ~1032:1, so a larger claim is a lie: refused before the
     * uncompressed size is allocated (a few bytes used to make it allocate up to 1 GiB) */
    if (en->method == 8 && (uint64_t)en->usize > (uint64_t)en->csize * 1033u + 64u)
        return gyro_error_set(GYRO_ERR_FORMAT, "%s: %s: %u compressed bytes cannot inflate to the %u "
                              "bytes recorded", z->name, en->name, en->csize, en->usize);
    char *buf = malloc((size_t)en->usize + 1);
    if (!buf) return gyro_error_set(GYRO_ERR_NOMEM, "%s: %s: out of memory", z->name, en->name);
    if (en->method == 0) {
        memcpy(buf, z->data + start, en->usize);
    } else {
        z_stream zs;
        memset(&zs, 0, sizeof zs);
        if (inflateInit2(&zs, -MAX_WBITS) != Z_OK) {
            free(buf);
            return gyro_error_set(GYRO_ERR_NOMEM, "%s: %s: cannot start inflate", z->name, en->name);
        }
        zs.next_in = (Bytef *)(z->data + start);
        zs.avail_in = en->csize;
        zs.next_out = (Bytef *)buf;
        zs.avail_out = en->usize;
        int rc = inflate(&zs, Z_FINISH);
        uLong out_n = zs.total_out;
        const char *msg = zs.msg;
        inflateEnd(&zs);
        if (rc != Z_STREAM_END || out_n != en->usize) {
            free(buf);
            return gyro_error_set(GYRO_ERR_FORMAT, "%s: %s: corrupt deflate data (%s after %lu of "
                                  "%u bytes)", z->name, en->name,
                                  msg ? msg : (rc == Z_BUF_ERROR ? "longer than recorded"
                                                                 : "ends early"),
                                  (unsigned long)out_n, en->usize);
        }
    }
    uLong crc = crc32(0L, Z_NULL, 0);
    crc = crc32(crc, (const Bytef *)buf, en->usize);
    if ((uint32_t)crc != en->crc) {
        free(buf);
        return gyro_error_set(GYRO_ERR_FORMAT, "%s: %s: CRC-32 mismatch (recorded %08x, computed "
                              "%08lx)", z->name, en->name, en->crc, (unsigned long)crc);
    }
    buf[en->usize] = '\0';
    *data = buf;
    *len = en->usize;
    return GYRO_OK;
}

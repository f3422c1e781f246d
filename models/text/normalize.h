/* normalize.h — gyro's text normalizer: one reusable object per thread.
 *
 * gyro_normalize_text() turns one document of raw bytes into normalized UTF-8 and its grapheme
 * clusters, in this order:
 *   1. UTF-8 decoding with the invalid-sequence policy (replace by U+FFFD / skip the document /
 *      fail naming the byte); a leading BOM (U+FEFF) is dropped;
 *   2. ANSI escape sequences removed (CSI "ESC [ ... final", OSC "ESC ] ... BEL|ESC \", other
 *      two-byte "ESC x", and the C1 CSI U+009B form);
 *   3. NFKC with utf8proc (ＡＢＣ１２３ → ABC123), optionally with Unicode case folding;
 *   4. Traditional → Simplified with ICU's "Traditional-Simplified" transliterator (utrans)
 *      (學生 → 学生, 微波爐 → 微波炉), on by default, applied only to lines holding Han;
 *   5. control characters (Cc) and stray U+FEFF removed, whitespace (Unicode White_Space, incl.
 *      tab, CR, LF, U+3000) folded to one ASCII space, leading/trailing whitespace trimmed;
 *      whitespace holding a line break between two CJK characters is removed altogether
 *      (wrapped Chinese text has no spaces);
 *   6. segmentation into extended grapheme clusters with ICU's break iterator (UBRK_CHARACTER):
 *      an emoji with a variation selector, a ZWJ sequence or a letter with a combining mark is
 *      one unit.
 * All buffers belong to the normalizer and are reused from call to call (no allocation once
 * they have grown to the longest document seen), so results are valid until the next call.
 *
 * This library knows no file or stream: the caller hands it bytes. In the pipeline, documents
 * come from gyro_text_reader (pipeline/text_reader.h), which streams a file line by
 * line (or paragraph by paragraph) with constant memory and a maximum document length.
 */
#ifndef GYRO_TEXT_NORMALIZE_H
#define GYRO_TEXT_NORMALIZE_H

#include <stddef.h>
#include <stdint.h>

#include "models/core/status.h"

typedef enum gyro_invalid_policy {
    GYRO_INVALID_REPLACE = 0, /* each maximal invalid subsequence → U+FFFD (the default) */
    GYRO_INVALID_SKIP,        /* drop the whole document (gyro_normalized.skipped = 1) */
    GYRO_INVALID_FAIL         /* GYRO_ERR_DATA naming the byte offset and value */
} gyro_invalid_policy;

typedef struct gyro_normalize_options {
    int t2s;                      /* Traditional → Simplified (default 1) */
    int nfkc;                     /* NFKC (default 1) */
    int case_fold;                /* Unicode case folding (default 0) */
    int strip_ansi;               /* remove ANSI escape sequences (default 1) */
    int strip_controls;           /* remove Cc characters and stray U+FEFF (default 1) */
    int fold_whitespace;          /* fold runs of whitespace to one space and trim (default 1) */
    int segment;                  /* produce grapheme clusters (default 1) */
    gyro_invalid_policy invalid;  /* default GYRO_INVALID_REPLACE */
} gyro_normalize_options;

/* Fill `opt` with the defaults listed above. */
void gyro_normalize_options_init(gyro_normalize_options *opt);

/* Parse a policy name ("replace", "skip", "fail"); returns 0 and sets *out on success, -1 if
 * the name is unknown. */
int gyro_invalid_policy_parse(const char *name, gyro_invalid_policy *out);

/* Name of a policy ("replace", "skip", "fail"). */
const char *gyro_invalid_policy_name(gyro_invalid_policy p);

typedef struct gyro_normalizer gyro_normalizer;

/* The result of one call. Every pointer is owned by the normalizer and stays valid until the
 * next gyro_normalize_text() on the same normalizer or its free. */
typedef struct gyro_normalized {
    const char *original;     /* the input after invalid-UTF-8 repair, NUL-terminated ("" if skipped) */
    size_t original_len;      /* bytes */
    const char *text;         /* the normalized text, NUL-terminated, valid UTF-8 */
    size_t text_len;          /* bytes */
    char **chars;             /* (n_chars) NUL-terminated grapheme clusters of `text` */
    size_t n_chars;
    uint32_t repairs;         /* invalid sequences met (replaced, or the reason for a skip) */
    int skipped;              /* 1: dropped under GYRO_INVALID_SKIP; text is "" and n_chars 0 */
} gyro_normalized;

/* Create a normalizer with options `opt` (copied; NULL = defaults). Opens the ICU
 * transliterator and break iterator once. Errors: GYRO_ERR_USAGE for a bad option value,
 * GYRO_ERR_UNAVAILABLE if ICU cannot open "Traditional-Simplified" (ICU data missing),
 * GYRO_ERR_NOMEM. *out is set only on success. */
gyro_status gyro_normalizer_new(const gyro_normalize_options *opt, gyro_normalizer **out);

/* Free a normalizer and its buffers. NULL is a no-op. */
void gyro_normalizer_free(gyro_normalizer *n);

/* The options the normalizer was created with. */
const gyro_normalize_options *gyro_normalizer_options(const gyro_normalizer *n);

/* Normalize `len` bytes at `in` (need not be NUL-terminated or valid UTF-8; may contain NUL
 * bytes, which are control characters). On success fills *out (see gyro_normalized). Errors:
 * GYRO_ERR_DATA under GYRO_INVALID_FAIL, with the message
 *     "invalid UTF-8 byte 0xFF at byte 7"   (0-based offset into `in`)
 * for the caller to prefix with file and line; GYRO_ERR_NOMEM; GYRO_ERR_INTERNAL if ICU fails.
 * `in` may be NULL when len is 0. */
gyro_status gyro_normalize_text(gyro_normalizer *n, const char *in, size_t len,
                                gyro_normalized *out);

#endif

/* fuzz_normalize.c — the normalizer (models/text/normalize.h): invalid UTF-8 repair, ANSI and
 * control stripping, NFKC, Traditional → Simplified, case folding, grapheme clusters. The first
 * byte picks the options (invalid-UTF-8 policy, case folding, t2s), the rest is the text. The
 * output must be valid UTF-8 and its grapheme clusters must concatenate to the text. */
#include <stdlib.h>
#include <string.h>

#include "models/text/normalize.h"
#include "models/text/utf8.h"
#include "tests/fuzz/fuzz.h"

static gyro_normalizer *norm[8];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc; (void)argv;
    for (int i = 0; i < 8; i++) {
        gyro_normalize_options o;
        gyro_normalize_options_init(&o);
        o.invalid = (i & 1) ? GYRO_INVALID_FAIL : GYRO_INVALID_REPLACE;
        o.case_fold = (i >> 1) & 1;
        o.t2s = !((i >> 2) & 1);
        if (gyro_normalizer_new(&o, &norm[i]) != GYRO_OK) abort();
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0) return 0;
    gyro_normalizer *n = norm[data[0] & 7];
    gyro_normalized r;
    if (gyro_normalize_text(n, (const char *)data + 1, size - 1, &r) != GYRO_OK) return 0;
    if (gyro_utf8_find_invalid((const uint8_t *)r.text, r.text_len) < r.text_len) abort();
    if (strlen(r.text) != r.text_len) abort();
    size_t at = 0;
    for (size_t i = 0; i < r.n_chars; i++) {
        size_t k = strlen(r.chars[i]);
        if (k == 0 || at + k > r.text_len || memcmp(r.text + at, r.chars[i], k) != 0) abort();
        at += k;
    }
    if (r.n_chars && at != r.text_len) abort();
    return 0;
}

/* fuzz_json.c — the JSON parser (pipeline/json.h): parse, then walk every value as the importers
 * do (types, keys, strings, line and column). */
#include "pipeline/json.h"
#include "tests/fuzz/fuzz.h"

static void walk(const gyro_json_doc *d, const gyro_json *v, int depth)
{
    if (!v || depth > 200) return;
    (void)gyro_json_column(d, v);
    (void)gyro_json_type_name(v->type);
    const char *s = gyro_json_string(v);
    if (s) (void)s[0];
    size_t n = gyro_json_size(v);
    for (size_t i = 0; i < n; i++) {
        const char *k = gyro_json_key_at(v, i);
        if (k) (void)gyro_json_get(v, k);
        walk(d, gyro_json_at(v, i), depth + 1);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gyro_json_doc *d;
    if (gyro_json_parse((const char *)data, size, "fuzz", &d) == GYRO_OK) {
        walk(d, gyro_json_root(d), 0);
        gyro_json_doc_free(d);
    }
    return 0;
}

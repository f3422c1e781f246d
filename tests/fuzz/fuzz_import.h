/* fuzz_import.h — the body of the importer targets (fuzz_import_<format>.c): import the input
 * as FUZZ_FORMAT, once lenient (bad records skipped and reported) and once strict, and check
 * every example handed to the sink. */
#include <stdlib.h>
#include <string.h>

#include "models/text/utf8.h"
#include "pipeline/import.h"
#include "tests/fuzz/fuzz.h"

static gyro_status sink(void *ctx, const Gyro__V1__Example *e)
{
    (void)ctx;
    /* an example that reaches the sink has a non-empty valid UTF-8 text and a label */
    if (!e->text || !e->text[0] || !e->label || !e->label[0]) abort();
    if (gyro_utf8_find_invalid((const uint8_t *)e->text, strlen(e->text)) < strlen(e->text)) abort();
    return GYRO_OK;
}

static void warn(void *ctx, const char *m) { (void)ctx; (void)m; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    int fd = fuzz_file(data, size, path);
    for (int strict = 0; strict < 2; strict++) {
        gyro_import_options opt;
        memset(&opt, 0, sizeof opt);
        opt.strict = strict;
        opt.warn = warn;
        gyro_import_stats st;
        memset(&st, 0, sizeof st);
        (void)gyro_import_file(FUZZ_FORMAT, path, &opt, sink, NULL, &st);
    }
    close(fd);
    return 0;
}

/* fuzz_stream.c — the gyro stream reader (pipeline/stream.h): header, varint framing, record
 * limits, and unpacking each record as the type the header names. */
#include <string.h>

#include "pipeline/stream.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FILE *fp = fmemopen((void *)data, size ? size : 1, "rb");
    if (!fp) return 0;
    if (!size) { fclose(fp); return 0; }
    gyro_stream_reader_options opt;
    memset(&opt, 0, sizeof opt);
    opt.max_record = 1 << 20;
    if (data[0] == 0x7f) opt.headerless_type = "gyro.v1.Example";   /* also the headerless mode */
    gyro_stream_reader *r;
    if (gyro_stream_reader_open_file(fp, "fuzz", &opt, &r) == GYRO_OK) {
        const ProtobufCMessageDescriptor *type = gyro_stream_type_find(gyro_stream_reader_message_type(r));
        for (int i = 0; i < 10000; i++) {
            ProtobufCMessage *m = NULL;
            if (type) {
                if (gyro_stream_next(r, type, &m) != GYRO_OK || !m) break;
                protobuf_c_message_free_unpacked(m, NULL);
            } else {
                const uint8_t *p;
                size_t n;
                if (gyro_stream_next_raw(r, &p, &n) != GYRO_OK || !p) break;
            }
        }
        gyro_stream_reader_free(r);
    }
    fclose(fp);
    return 0;
}

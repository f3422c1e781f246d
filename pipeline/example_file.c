/* example_file.c — read a stream of gyro.v1.Example records into an example set (see example_file.h). */
#include "pipeline/example_file.h"

#include <string.h>

#include "pipeline/stream.h"
#include "proto/gyro.pb-c.h"

gyro_status gyro_example_file_read(gyro_example_set *s, const char *path, uint64_t *skipped)
{
    gyro_stream_reader *r;
    gyro_status st = gyro_stream_reader_open_path(path, NULL, &r);
    if (st) return st;
    const ProtobufCMessageDescriptor *d = &gyro__v1__example__descriptor;
    if (strcmp(gyro_stream_reader_message_type(r), d->name) != 0) {
        st = gyro_error_set(GYRO_ERR_FORMAT, "%s: a stream of %s, expected %s (run 'gyro import' first)",
                            path, gyro_stream_reader_message_type(r), d->name);
        gyro_stream_reader_free(r);
        return st;
    }
    for (;;) {
        ProtobufCMessage *msg;
        if ((st = gyro_stream_next(r, d, &msg)) || !msg) break;
        Gyro__V1__Example *ex = (Gyro__V1__Example *)msg;
        if (!ex->text || !ex->text[0] || !ex->label || !ex->label[0]) {
            if (skipped) (*skipped)++;
        } else {
            st = gyro_example_set_add_session(s, ex->text, ex->label, gyro_stream_reader_record(r),
                                              ex->session);
        }
        protobuf_c_message_free_unpacked(msg, NULL);
        if (st) break;
    }
    gyro_stream_reader_free(r);
    return st;
}

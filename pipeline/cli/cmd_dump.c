/* cmd_dump.c — `gyro dump`: print any gyro stream as JSON lines.
 *
 * The stream's header names the record type; its descriptor comes from the table of known types
 * (pipeline/stream_types.c) and every record is printed by pipeline/json_out.h. A corrupt or
 * truncated stream stops the command with exit status 65 after the records before the damage
 * have been printed.
 */
#include "pipeline/cli/cli.h"
#include "pipeline/cli/opts.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/json_out.h"
#include "pipeline/stream.h"

typedef struct dump_args {
    int header, defaults, types;
    const char *type;
    long limit, max_record;
} dump_args;

static const gyro_opt dump_opts[] = {
    GYRO_O_FLAG("header", 0, dump_args, header, "print each stream's header first, as {\"header\": {...}}"),
    GYRO_O_STR("type", 0, dump_args, type, "NAME", NULL,
               "record type of a stream without header (e.g. gyro.v1.Document)"),
    GYRO_O_FLAG("defaults", 0, dump_args, defaults, "also print fields at their default value"),
    GYRO_O_LONG("limit", 'n', dump_args, limit, "N", NULL, 0, 1L << 62, "print at most N records of each stream"),
    GYRO_O_LONG("max-record", 0, dump_args, max_record, "B", "67108864", 1, 1L << 40,
                "largest record accepted, in bytes"),
    GYRO_O_FLAG("types", 0, dump_args, types, "list the record types gyro knows, one per line, and exit"),
    GYRO_O_END,
};

const gyro_cmd_spec gyro_spec_dump = {
    "dump", "[options] [FILE...]",
    "Print the records of gyro streams (FILEs, or standard input when none or '-') as JSON, one "
    "object per line, in protobuf's JSON mapping with the proto field names.",
    "Exit status: 0 ok, 1 runtime error, 2 usage, 65 truncated or corrupt stream.",
    dump_opts,
    NULL,
};

static gyro_status dump_one(const char *path, const gyro_stream_reader_options *ropt,
                            const gyro_json_out_options *jopt, int header, long limit)
{
    gyro_stream_reader *r;
    gyro_status s = gyro_stream_reader_open_path(path, ropt, &r);
    if (s) return s;
    const char *type_name = gyro_stream_reader_message_type(r);
    const ProtobufCMessageDescriptor *type = gyro_stream_type_find(type_name);
    if (!type) {
        s = gyro_error_set(GYRO_ERR_FORMAT, "%s: records of type '%.200s' are unknown to this gyro "
                           "(see 'gyro dump --types')", path, type_name);
        gyro_stream_reader_free(r);
        return s;
    }
    if (header) {
        fputs("{\"header\":", stdout);
        s = gyro_json_write_message(stdout, &gyro_stream_reader_header(r)->base, jopt);
        fputs("}\n", stdout);
    }
    for (long k = 0; !s && (limit < 0 || k < limit); k++) {
        ProtobufCMessage *m;
        if ((s = gyro_stream_next(r, type, &m)) || !m) break;
        s = gyro_json_write_message(stdout, m, jopt);
        putchar('\n');
        protobuf_c_message_free_unpacked(m, NULL);
    }
    gyro_stream_reader_free(r);
    return s;
}

int gyro_cmd_dump(int argc, char **argv)
{
    const char *cmd = "dump";
    dump_args o = {.limit = -1};
    int first;
    int rc = gyro_opts_parse(&gyro_spec_dump, argc, argv, &o, &first);
    if (rc != GYRO_OPTS_CONTINUE) return rc;
    if (o.type && !gyro_stream_type_find(o.type))
        return gyro_cli_usage_error(cmd, "unknown record type '%s' (see --types)", o.type);
    gyro_stream_reader_options ropt = {(size_t)o.max_record, o.type};
    gyro_json_out_options jopt = {.emit_defaults = o.defaults};
    int header = o.header, list_types = o.types;
    long limit = o.limit;
    if (list_types) {
        for (size_t i = 0; gyro_stream_type_at(i); i++) puts(gyro_stream_type_at(i)->name);
        return 0;
    }
    char *stdin_only[] = {"-"};
    char **inputs = first < argc ? argv + first : stdin_only;
    int n_inputs = first < argc ? argc - first : 1;
    gyro_status s = GYRO_OK;
    for (int i = 0; i < n_inputs && !s; i++) s = dump_one(inputs[i], &ropt, &jopt, header, limit);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        if (!s) s = gyro_error_set(GYRO_ERR_IO, "write to standard output failed: %s", strerror(errno));
    }
    return s ? gyro_cli_fail(cmd, s) : 0;
}

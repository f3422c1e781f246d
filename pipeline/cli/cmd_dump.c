/* cmd_dump.c — `gyro dump`: print any gyro stream as JSON lines.
 *
 * The stream's header names the record type; its descriptor comes from the table of known types
 * (pipeline/stream_types.c) and every record is printed by pipeline/json_out.h. A corrupt or
 * truncated stream stops the command with exit status 65 after the records before the damage
 * have been printed.
 */
#include "pipeline/cli/cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/json_out.h"
#include "pipeline/stream.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: gyro dump [options] [FILE...]\n"
            "\n"
            "Print the records of gyro streams (FILEs, or standard input when none or '-') as JSON,\n"
            "one object per line, in protobuf's JSON mapping with the proto field names.\n"
            "\n"
            "      --header          print each stream's header first, as {\"header\": {...}}\n"
            "      --type NAME       record type of a stream without header (e.g. gyro.v1.Document)\n"
            "      --defaults        also print fields at their default value\n"
            "  -n, --limit N         print at most N records of each stream\n"
            "      --max-record B    largest record accepted, in bytes (default 67108864)\n"
            "      --types           list the record types gyro knows, one per line, and exit\n"
            "  -h, --help            show this help\n"
            "\n"
            "Exit status: 0 ok, 1 runtime error, 2 usage, 65 truncated or corrupt stream.\n");
}

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
    enum { OPT_HEADER = 256, OPT_TYPE, OPT_DEFAULTS, OPT_MAX_RECORD, OPT_TYPES };
    static const struct option longopts[] = {
        {"header", no_argument, NULL, OPT_HEADER},
        {"type", required_argument, NULL, OPT_TYPE},
        {"defaults", no_argument, NULL, OPT_DEFAULTS},
        {"limit", required_argument, NULL, 'n'},
        {"max-record", required_argument, NULL, OPT_MAX_RECORD},
        {"types", no_argument, NULL, OPT_TYPES},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *cmd = "dump";
    gyro_stream_reader_options ropt = {0, NULL};
    gyro_json_out_options jopt = {0};
    int header = 0, list_types = 0;
    long limit = -1, v;
    optind = 0;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":n:h", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_HEADER: header = 1; break;
        case OPT_TYPE:
            if (!gyro_stream_type_find(optarg))
                return gyro_cli_usage_error(cmd, "unknown record type '%s' (see --types)", optarg);
            ropt.headerless_type = optarg;
            break;
        case OPT_DEFAULTS: jopt.emit_defaults = 1; break;
        case 'n':
            if (!gyro_cli_parse_long(cmd, "--limit", optarg, 0, 1L << 62, &limit)) return 2;
            break;
        case OPT_MAX_RECORD:
            if (!gyro_cli_parse_long(cmd, "--max-record", optarg, 1, 1L << 40, &v)) return 2;
            ropt.max_record = (size_t)v;
            break;
        case OPT_TYPES: list_types = 1; break;
        case 'h': usage(stdout); return 0;
        case ':': return gyro_cli_usage_error(cmd, "option '%s' needs a value", argv[optind - 1]);
        default: return gyro_cli_usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (list_types) {
        for (size_t i = 0; gyro_stream_type_at(i); i++) puts(gyro_stream_type_at(i)->name);
        return 0;
    }
    char *stdin_only[] = {"-"};
    char **inputs = optind < argc ? argv + optind : stdin_only;
    int n_inputs = optind < argc ? argc - optind : 1;
    gyro_status s = GYRO_OK;
    for (int i = 0; i < n_inputs && !s; i++) s = dump_one(inputs[i], &ropt, &jopt, header, limit);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        if (!s) s = gyro_error_set(GYRO_ERR_IO, "write to standard output failed: %s", strerror(errno));
    }
    return s ? gyro_cli_fail(cmd, s) : 0;
}

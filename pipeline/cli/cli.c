/* cli.c — error printing and option parsing shared by the gyro commands (see cli.h). */
#include "pipeline/cli/cli.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include <string.h>

#include "embeddings/table.h"
#include "models/core/sync.h"
#include "pipeline/cli/opts.h"
#include "pipeline/table_file.h"

uint64_t gyro_cli_args_hash(int argc, char **argv)
{
    uint64_t h = GYRO_SYNC_HASH_INIT;
    for (int i = 0; i < argc; i++) h = gyro_sync_hash(h, argv[i], strlen(argv[i]) + 1);
    return h;
}

int gyro_cli_fail(const char *cmd, gyro_status s)
{
    const char *msg = gyro_error_message();
    fprintf(stderr, "gyro %s: %s\n", cmd, msg[0] ? msg : gyro_status_name(s));
    return gyro_status_exit_code(s);
}

int gyro_cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "gyro %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry 'gyro %s --help'.\n", cmd);
    return 2;
}

int gyro_cli_parse_long(const char *cmd, const char *opt, const char *text, long min, long max, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || end == text || *end || v < min || v > max) {
        gyro_cli_usage_error(cmd, "%s expects an integer in [%ld, %ld], got '%s'", opt, min, max, text);
        return 0;
    }
    *out = v;
    return 1;
}

int gyro_cli_parse_double(const char *cmd, const char *opt, const char *text, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (errno || end == text || *end || !isfinite(v)) {
        gyro_cli_usage_error(cmd, "%s expects a number, got '%s'", opt, text);
        return 0;
    }
    *out = v;
    return 1;
}

int gyro_cli_parse_seed(const char *cmd, const char *opt, const char *text, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno || end == text || *end || text[0] == '-' || text[0] == '+' || text[0] == ' ') {
        gyro_cli_usage_error(cmd, "%s expects a non-negative integer, got '%s'", opt, text);
        return 0;
    }
    *out = (uint64_t)v;
    return 1;
}

int gyro_cli_open_table(const char *cmd, const char *path, int first, int argc, const char *operand,
                        gyro_embedding_table **t)
{
    *t = NULL;
    if (!path) return gyro_cli_usage_error(cmd, "missing -t TABLE");
    if (first >= argc) return gyro_cli_usage_error(cmd, "no %s", operand);
    gyro_status s = gyro_table_file_load(path, t);
    return s ? gyro_cli_fail(cmd, s) : GYRO_OPTS_CONTINUE;
}

int gyro_cli_flush_stdout(const char *cmd)
{
    if (fflush(stdout) != 0) return gyro_cli_fail(cmd, gyro_error_set(GYRO_ERR_IO, "write error on stdout"));
    return 0;
}

/* cli.h — shared helpers of the `gyro` command-line tool and the declarations of its commands.
 *
 * Conventions (fastText-like): `gyro <command> [options] [files]`, `-` is stdin/stdout, every
 * command and subcommand has --help (its own usage on stdout, exit 0), an unknown option or a
 * missing argument prints the usage line on stderr and exits 2, bad input data exits 65, other
 * runtime errors exit 1. A command describes its options once, in a table (pipeline/cli/opts.h),
 * from which getopt, --help and the man page's option lists come; the letters mean the same
 * everywhere: -o output, -q quiet, -m model, -k top-k, -t embedding table, -s seed, -j threads.
 */
#ifndef GYRO_CLI_H
#define GYRO_CLI_H

#include <stdint.h>

#include "models/core/status.h"

#define GYRO_VERSION "0.1.0"

struct gyro_embedding_table;

#define GYRO_COMMAND(name, fn, desc) int fn(int argc, char **argv);
#include "pipeline/cli/commands.def"
#undef GYRO_COMMAND

/* Print "gyro <cmd>: <message of the calling thread>" on stderr and return the exit code of `s`. */
int gyro_cli_fail(const char *cmd, gyro_status s);

/* Print "gyro <cmd>: <formatted message>" and "Try 'gyro <cmd> --help'." on stderr; returns 2. */
int gyro_cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Parse a non-negative integer / a double option value; on failure print a usage error and
 * return 0 (the caller returns 2). */
int gyro_cli_parse_long(const char *cmd, const char *opt, const char *text, long min, long max, long *out);
int gyro_cli_parse_double(const char *cmd, const char *opt, const char *text, double *out);

/* Parse a seed: a non-negative decimal integer up to 2^64 - 1. On failure print a usage error
 * naming `opt` and return 0 (the caller returns 2). */
int gyro_cli_parse_seed(const char *cmd, const char *opt, const char *text, uint64_t *out);

/* The embedding table of a command that reads `-t TABLE` and at least one operand (operands
 * argv[first .. argc); `operand` names one for the usage error, "query character"): on success
 * *t owns the table loaded from `path` (the caller frees it with gyro_embedding_table_free) and
 * the result is GYRO_OPTS_CONTINUE (−1); otherwise *t is NULL and the result is the exit status
 * of the reported error (2 without -t or operand, the load's status for an unreadable table). */
int gyro_cli_open_table(const char *cmd, const char *path, int first, int argc, const char *operand,
                        struct gyro_embedding_table **t);

/* A hash of the arguments argv[0..argc), which the ranks of a training started by mpirun compare
 * (gyro_sync_check_same: each rank must be given the same command line). */
uint64_t gyro_cli_args_hash(int argc, char **argv);

/* Flush stdout at the end of a command: 0, or the exit status of a write error (reported). */
int gyro_cli_flush_stdout(const char *cmd);

#endif

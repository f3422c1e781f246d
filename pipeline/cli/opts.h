/* opts.h — one option table per command: getopt_long, --help and the man page from one source.
 *
 * A command describes its options once, as a static table of gyro_opt rows; each row names the
 * long option, its short letter, the argument, the help line, the default and the kind (with its
 * range) of the value, and where the value goes: an offset into the command's own argument
 * struct. gyro_opts_parse applies the defaults, runs getopt_long over the table and stores the
 * values; gyro_opts_help prints the --help text and gyro_opts_man the man page's option list
 * (doc/gyro.1 carries that list between generated-block markers; `gyro help --man` prints every
 * block and tests/e2e/cli_basics.sh fails when the committed page differs).
 *
 * The letters mean the same in every command: -o output, -q quiet, -m model, -k top-k (results
 * per query), -t embedding table, -s seed, -j threads, -h help. A row without a help line is a
 * hidden alias: parsed (an old spelling a user may already type) but not listed.
 */
#ifndef GYRO_CLI_OPTS_H
#define GYRO_CLI_OPTS_H

#include <stddef.h>
#include <stdio.h>

typedef enum gyro_opt_kind {
    GYRO_OPT_END = 0, /* ends a table */
    GYRO_OPT_FLAG,    /* no argument: stores `value` (1 when 0) into an int */
    GYRO_OPT_STR,     /* const char *: the argument itself (argv or the default literal) */
    GYRO_OPT_INT,     /* int in [min, max] */
    GYRO_OPT_LONG,    /* long in [min, max] */
    GYRO_OPT_DOUBLE,  /* double in [min, max] (no range when both are 0) */
    GYRO_OPT_FLOAT,   /* float, parsed as a double in [min, max] */
    GYRO_OPT_SEED,    /* uint64_t: a non-negative decimal integer up to 2^64 - 1 */
    GYRO_OPT_CHOICE,  /* int: the index of the argument among `choices` ("a|b|c") */
    GYRO_OPT_CALL,    /* fn(args, cmd, option, argument) does the parsing */
    GYRO_OPT_SECTION, /* not an option: a heading in the help and the man page */
} gyro_opt_kind;

/* Parse `value` of option `opt` (e.g. "--ffn") into the command's argument struct `args`.
 * Returns 1, or prints a usage error (gyro_cli_usage_error) and returns 0. */
typedef int (*gyro_opt_fn)(void *args, const char *cmd, const char *opt, const char *value);

typedef struct gyro_opt {
    gyro_opt_kind kind;
    const char *name;    /* long name without "--"; NULL: a short letter only */
    char letter;         /* short letter, 0: none */
    size_t offset;       /* where the value goes: offsetof(the command's struct, field) */
    const char *arg;     /* argument name in the help ("N", "PATH"); NULL for flags */
    const char *def;     /* default, parsed like an argument before the command line and shown
                            as "(default DEF)"; NULL: none, or a default the help line explains */
    const char *help;    /* help line; NULL: a hidden alias (parsed, not listed) */
    double min, max;     /* closed range of INT, LONG, DOUBLE, FLOAT (0, 0: no range) */
    const char *choices; /* CHOICE: "a|b|c" */
    int value;           /* FLAG: the value stored (0 stores 1) */
    gyro_opt_fn fn;      /* CALL */
    const char *man;     /* more text for the man page only, after the help line; may be NULL */
    unsigned mark;       /* bits gyro_opts_parse_marks reports when the option is given (e.g.
                            the library's "given explicitly" flags); 0: none */
} gyro_opt;

typedef struct gyro_cmd_spec {
    const char *name;     /* "neighbors", "classify train" */
    const char *usage;    /* what follows "gyro NAME " in the usage line; lines separated by
                             '\n' become further "       gyro NAME ..." lines */
    const char *about;    /* paragraph printed after the usage (may be NULL) */
    const char *footer;   /* text printed after the options (may be NULL) */
    const gyro_opt *opts; /* ends with a row of kind GYRO_OPT_END */
    void (*more_help)(FILE *out); /* optional: prints a list the library knows (e.g. the RL
                                     environments) after `about` in --help; not in the man page */
} gyro_cmd_spec;

/* Table rows. T is the command's argument struct, F a field of it; HELP NULL makes a hidden
 * alias; further designated initializers (e.g. .man = "...") may follow HELP. */
#define GYRO_O_FLAG(NAME, L, T, F, HELP, ...) \
    {.kind = GYRO_OPT_FLAG, .name = NAME, .letter = L, .offset = offsetof(T, F), .help = HELP, __VA_ARGS__}
#define GYRO_O_SET(NAME, L, T, F, V, HELP, ...) \
    {.kind = GYRO_OPT_FLAG, .name = NAME, .letter = L, .offset = offsetof(T, F), .value = V, .help = HELP, __VA_ARGS__}
#define GYRO_O_STR(NAME, L, T, F, ARG, DEF, HELP, ...) \
    {.kind = GYRO_OPT_STR, .name = NAME, .letter = L, .offset = offsetof(T, F), .arg = ARG, .def = DEF, \
     .help = HELP, __VA_ARGS__}
#define GYRO_O_INT(NAME, L, T, F, ARG, DEF, LO, HI, HELP, ...) \
    {.kind = GYRO_OPT_INT, .name = NAME, .letter = L, .offset = offsetof(T, F), .arg = ARG, .def = DEF, \
     .min = LO, .max = HI, .help = HELP, __VA_ARGS__}
#define GYRO_O_LONG(NAME, L, T, F, ARG, DEF, LO, HI, HELP, ...) \
    {.kind = GYRO_OPT_LONG, .name = NAME, .letter = L, .offset = offsetof(T, F), .arg = ARG, .def = DEF, \
     .min = LO, .max = HI, .help = HELP, __VA_ARGS__}
#define GYRO_O_DOUBLE(NAME, L, T, F, ARG, DEF, LO, HI, HELP, ...) \
    {.kind = GYRO_OPT_DOUBLE, .name = NAME, .letter = L, .offset = offsetof(T, F), .arg = ARG, .def = DEF, \
     .min = LO, .max = HI, .help = HELP, __VA_ARGS__}
#define GYRO_O_FLOAT(NAME, L, T, F, ARG, DEF, LO, HI, HELP, ...) \
    {.kind = GYRO_OPT_FLOAT, .name = NAME, .letter = L, .offset = offsetof(T, F), .arg = ARG, .def = DEF, \
     .min = LO, .max = HI, .help = HELP, __VA_ARGS__}
#define GYRO_O_SEED(NAME, L, T, F, DEF, HELP, ...) \
    {.kind = GYRO_OPT_SEED, .name = NAME, .letter = L, .offset = offsetof(T, F), .arg = "S", .def = DEF, \
     .help = HELP, __VA_ARGS__}
#define GYRO_O_CHOICE(NAME, L, T, F, ARG, CHOICES, DEF, HELP, ...) \
    {.kind = GYRO_OPT_CHOICE, .name = NAME, .letter = L, .offset = offsetof(T, F), .arg = ARG, \
     .choices = CHOICES, .def = DEF, .help = HELP, __VA_ARGS__}
#define GYRO_O_CALL(NAME, L, FN, ARG, DEF, HELP, ...) \
    {.kind = GYRO_OPT_CALL, .name = NAME, .letter = L, .fn = FN, .arg = ARG, .def = DEF, .help = HELP, __VA_ARGS__}
#define GYRO_O_SECTION(TEXT) {.kind = GYRO_OPT_SECTION, .help = TEXT}
#define GYRO_O_END {.kind = GYRO_OPT_END}

/* gyro_opts_parse returns this when the command should go on with its operands. */
#define GYRO_OPTS_CONTINUE (-1)

/* Apply the defaults of `spec` to `args`, then parse argv[1..argc-1] (argv[0] is the command
 * or subcommand name) with getopt_long, options and operands in any order. On success returns
 * GYRO_OPTS_CONTINUE with *first the index of the first operand (operands are argv[*first ..
 * argc-1]). --help or -h prints the help on stdout and returns 0; an unknown option, a missing
 * or malformed value prints a usage error on stderr and returns 2. Not thread-safe (getopt). */
int gyro_opts_parse(const gyro_cmd_spec *spec, int argc, char **argv, void *args, int *first);

/* gyro_opts_parse that also ORs into *marks (set to 0 first) the `mark` bits of every option
 * the command line gives, so a command can tell a default from an explicit value. */
int gyro_opts_parse_marks(const gyro_cmd_spec *spec, int argc, char **argv, void *args, int *first,
                          unsigned *marks);

/* Print the --help text of `spec`: usage lines, about, the listed options, footer. */
void gyro_opts_help(const gyro_cmd_spec *spec, FILE *out);

/* Print the man page's synopsis and option list of `spec` (roff: a .TP paragraph per listed
 * option) between the marker comments, named `key`, that doc/gyro.1 keeps around it. */
void gyro_opts_man(const gyro_cmd_spec *spec, const char *key, FILE *out);

/* Print the man page's option lists of every command (the specs of specs.def) in order; the
 * output is what doc/gyro.1 holds between its markers. Returns 0, or 1 on a write error. */
int gyro_opts_man_all(FILE *out);

/* The specs of every command, declared from specs.def (defined in the cmd_*.c files); a spec's
 * man page block is named after its variable without "gyro_spec_". */
#define GYRO_SPEC(var) extern const gyro_cmd_spec var;
#include "pipeline/cli/specs.def"
#undef GYRO_SPEC

#endif

/* main.c — `gyro <command> [options]`: dispatch to the subcommands listed in commands.def.
 *
 * The only place in gyro that calls exit(): commands return their exit code to here.
 */
#include "pipeline/cli/cli.h"

#include <stdio.h>
#include <string.h>

typedef struct command {
    const char *name;
    int (*fn)(int, char **);
    const char *desc;
} command;

static const command commands[] = {
#define GYRO_COMMAND(name, fn, desc) {#name, fn, desc},
#include "pipeline/cli/commands.def"
#undef GYRO_COMMAND
    {NULL, NULL, NULL},
};

static void usage(FILE *out)
{
    fprintf(out,
            "usage: gyro <command> [options]\n"
            "\n"
            "gyro " GYRO_VERSION " — Chinese natural-language understanding in hyperbolic space.\n"
            "\n"
            "Commands:\n");
    for (const command *c = commands; c->name; c++)
        fprintf(out, "  %-12s %s\n", c->name, c->desc);
    fprintf(out,
            "  %-12s %s\n"
            "\n"
            "Run 'gyro <command> --help' for the options of a command.\n"
            "Exit status: 0 success, 1 runtime error, 2 usage error, 65 bad input data.\n",
            "version", "Print the version");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *name = argv[1];
    if (!strcmp(name, "--help") || !strcmp(name, "-h") || !strcmp(name, "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(name, "version") || !strcmp(name, "--version")) {
        printf("gyro %s\n", GYRO_VERSION);
        return 0;
    }
    for (const command *c = commands; c->name; c++)
        if (!strcmp(c->name, name)) return c->fn(argc - 1, argv + 1);
    fprintf(stderr, "gyro: unknown command '%s'\nTry 'gyro --help'.\n", name);
    return 2;
}

/* main.c — `gyro <command> [options]`: dispatch to the subcommands listed in commands.def.
 *
 * The only place in gyro that calls exit(): commands return their exit code to here.
 *
 * `gyro serve` takes SIGHUP, SIGINT and SIGTERM in one thread with sigwait, so every other
 * thread must block them: a signal is delivered to any thread that does not, and its default
 * action ends the process. Blocking them first thing in main is not early enough: libopenblas's
 * constructor (gotoblas_init -> blas_thread_init) starts its worker threads when the library
 * is loaded, before main, with the signals unblocked (seen in /proc/PID/task/N/status SigBlk,
 * 0.3.21 on two cores: one extra thread). A constructor of ours cannot run first either: shared
 * libraries are initialised before the executable. The signal mask, however, survives execve.
 * So `serve` blocks the signals and re-executes itself once (/proc/self/exe, same argv and
 * environment) when they were not already blocked at entry; in the new image every library
 * thread, OpenBLAS's included, inherits the blocked mask. If the re-execution fails, serve runs
 * on with a warning (the old behaviour).
 */
#include "pipeline/cli/cli.h"
#include "pipeline/cli/opts.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* For `gyro serve`: make sure SIGHUP, SIGINT and SIGTERM are blocked in every thread of the
 * process (see the top of this file). Returns only if they already were, or if re-executing
 * failed (then with a warning on stderr). */
static void serve_block_signals(char **argv)
{
    sigset_t want, cur;
    sigemptyset(&want);
    sigaddset(&want, SIGHUP);
    sigaddset(&want, SIGINT);
    sigaddset(&want, SIGTERM);
    if (sigprocmask(SIG_BLOCK, &want, &cur) != 0) return;
    if (sigismember(&cur, SIGHUP) == 1 && sigismember(&cur, SIGINT) == 1 && sigismember(&cur, SIGTERM) == 1)
        return;   /* blocked before this image was loaded: every library thread has them blocked */
    execv("/proc/self/exe", argv);
    fprintf(stderr, "gyro serve: warning: cannot re-execute with the signals blocked (%s): a "
                    "thread started by a library may still take SIGHUP or SIGTERM\n", strerror(errno));
}

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
    if (argc >= 2 && strcmp(argv[1], "serve") == 0) serve_block_signals(argv);
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *name = argv[1];
    if (!strcmp(name, "help") && argc == 3 && !strcmp(argv[2], "--man")) /* doc/update-man.sh */
        return gyro_opts_man_all(stdout);
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

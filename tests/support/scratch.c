/* scratch.c — temporary directories and the peak virtual size for the Check suites (scratch.h). */
#include "tests/support/scratch.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

void scratch_dir_new(char *dir, size_t n, const char *tag)
{
    ck_assert_int_lt(snprintf(dir, n, "/tmp/gyro-%s-XXXXXX", tag), (int)n);
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

void scratch_dir_remove(const char *dir)
{
    char cmd[256];
    ck_assert_int_lt(snprintf(cmd, sizeof cmd, "rm -rf %s", dir), (int)sizeof cmd);
    ck_assert_int_eq(system(cmd), 0);
}

long scratch_vm_peak_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmPeak: %ld kB", &kb) == 1) break;
    if (f) fclose(f);
    return kb;
}

/* scratch.h — what the Check suites need of the file system: a fresh temporary directory per
 * test (made by a fixture's setup, removed with its contents by the teardown) and the process's
 * peak virtual size (for loaders that must not allocate what a forged header claims).
 */
#ifndef GYRO_TESTS_SCRATCH_H
#define GYRO_TESTS_SCRATCH_H

#include <stddef.h>

/* Make the directory /tmp/gyro-<tag>-XXXXXX (mkdtemp) and write its path to dir (n bytes);
 * fails the test when it cannot. */
void scratch_dir_new(char *dir, size_t n, const char *tag);

/* Remove dir and everything in it; fails the test when that fails. */
void scratch_dir_remove(const char *dir);

/* The process's peak virtual size in KiB (VmPeak of /proc/self/status), −1 when unknown. */
long scratch_vm_peak_kb(void);

#endif

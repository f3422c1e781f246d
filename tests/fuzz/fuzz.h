/* fuzz.h — helpers shared by the libFuzzer targets of tests/fuzz/.
 *
 * The loaders take paths, so each input is written to an anonymous in-memory file (memfd) and
 * handed over as /proc/self/fd/N: a regular file, no disk traffic, nothing left behind.
 */
#ifndef GYRO_FUZZ_H
#define GYRO_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* Write the input to a fresh memfd; *path gets its /proc/self/fd/N name. Returns the fd (close
 * it when done) or aborts: the harness itself failing is not a finding to explore. */
static inline int fuzz_file(const uint8_t *data, size_t size, char path[64])
{
    int fd = memfd_create("gyro-fuzz", MFD_CLOEXEC);
    if (fd < 0) { perror("memfd_create"); abort(); }
    size_t done = 0;
    while (done < size) {
        ssize_t w = write(fd, data + done, size - done);
        if (w <= 0) { perror("write"); abort(); }
        done += (size_t)w;
    }
    snprintf(path, 64, "/proc/self/fd/%d", fd);
    return fd;
}

#endif

/* alloc_count.c — an LD_PRELOAD library for tests/e2e/serve_allocs.sh (built there with cc, not
 * part of libgyro): counts malloc, calloc and realloc calls of the whole process, and those made
 * from the main executable's own code (return address in its executable segment: gyro's code,
 * libgyro.a being linked in, but not gRPC core, protobuf-c, ICU or libc), and prints
 * "ALLOCS all N exe M" on stderr at exit. */
#define _GNU_SOURCE
#include <link.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);

static atomic_long all, exe;
static uintptr_t lo, hi; /* the main executable's executable segment */

static int first_object(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    (void)data;
    for (int k = 0; k < info->dlpi_phnum; k++)
        if (info->dlpi_phdr[k].p_type == PT_LOAD && (info->dlpi_phdr[k].p_flags & PF_X)) {
            lo = info->dlpi_addr + info->dlpi_phdr[k].p_vaddr;
            hi = lo + info->dlpi_phdr[k].p_memsz;
        }
    return 1; /* the first object is the main program */
}

__attribute__((constructor)) static void init(void) { dl_iterate_phdr(first_object, NULL); }

static void note(void *ra)
{
    atomic_fetch_add_explicit(&all, 1, memory_order_relaxed);
    if ((uintptr_t)ra >= lo && (uintptr_t)ra < hi) atomic_fetch_add_explicit(&exe, 1, memory_order_relaxed);
}

void *malloc(size_t n)
{
    note(__builtin_return_address(0));
    return __libc_malloc(n);
}

void *calloc(size_t k, size_t n)
{
    note(__builtin_return_address(0));
    return __libc_calloc(k, n);
}

void *realloc(void *p, size_t n)
{
    note(__builtin_return_address(0));
    return __libc_realloc(p, n);
}

__attribute__((destructor)) static void fini(void)
{
    fprintf(stderr, "ALLOCS all %ld exe %ld\n", atomic_load(&all), atomic_load(&exe));
}

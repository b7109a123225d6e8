/* failalloc: the allocation fault loop's lever (tests/run/t6180), an
 * LD_PRELOAD library. SERVELAB_FAILALLOC=N makes the N-th call to malloc,
 * calloc or realloc in the process return NULL with ENOMEM, and every call
 * after it succeed (one failure a run, SQLite's habit); N = 0 fails none.
 * SERVELAB_FAILALLOC_COUNT=FILE writes the number of calls made to FILE
 * when the process exits, so the loop knows how many points a command
 * has. glibc lets a program replace malloc and calls the replacement for
 * its own allocations too (fopen, getaddrinfo, qsort): those fail as well.
 * The two variables and LD_PRELOAD leave the environment at start, so a
 * process the command starts (a simulator) is not failed along with it.
 * Built apart (make's $(BUILD)/failalloc.so), never into servelab. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);

static atomic_ulong calls;
static unsigned long fail_at;
static char count_path[4096];

static int fails_now(void) {
    unsigned long k = atomic_fetch_add(&calls, 1) + 1;
    if (fail_at && k == fail_at) {
        errno = ENOMEM;
        return 1;
    }
    return 0;
}

void *malloc(size_t n) {
    return fails_now() ? NULL : __libc_malloc(n);
}

void *calloc(size_t n, size_t size) {
    return fails_now() ? NULL : __libc_calloc(n, size);
}

void *realloc(void *p, size_t n) {
    return fails_now() ? NULL : __libc_realloc(p, n);
}

__attribute__((constructor)) static void failalloc_start(void) {
    const char *n = getenv("SERVELAB_FAILALLOC"), *path = getenv("SERVELAB_FAILALLOC_COUNT");
    if (path)
        snprintf(count_path, sizeof count_path, "%s", path);
    unsetenv("SERVELAB_FAILALLOC");
    unsetenv("SERVELAB_FAILALLOC_COUNT");
    unsetenv("LD_PRELOAD");
    atomic_store(&calls, 0);
    fail_at = n ? strtoul(n, NULL, 10) : 0;
}

__attribute__((destructor)) static void failalloc_end(void) {
    if (!count_path[0])
        return;
    FILE *f = fopen(count_path, "w");
    if (f) {
        fprintf(f, "%lu\n", (unsigned long)atomic_load(&calls));
        fclose(f);
    }
}

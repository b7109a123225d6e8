/* mapfile: mapping a file for one pass, handing back what it passed, and
 * the guard that turns a SIGBUS from a file shrinking under its mapping
 * into an error (see mapfile.h). The guard is a per-thread sigsetjmp point:
 * the handler, installed once for the process, jumps back to the innermost
 * guard of the faulting thread, or, on a thread with none, restores the
 * default action so the fault kills the process as it would have. Which
 * file it was is looked up after the jump, outside the handler, in a list
 * of the mappings alive (kept under a mutex the handler never takes). */
#include "common/mapfile.h"
#include "common/files.h"
#include "common/util.h"

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct mapping {
    const char *map;
    size_t size;
    char *path;
} mapping;

static pthread_mutex_t known_lock = PTHREAD_MUTEX_INITIALIZER;
static mapping *known;
static size_t n_known, cap_known;

void mapfile_note(const void *map, size_t size, const char *path) {
    pthread_mutex_lock(&known_lock);
    if (n_known == cap_known) {
        cap_known = cap_known ? 2 * cap_known : 16;
        known = xrealloc(known, cap_known * sizeof *known);
    }
    known[n_known++] = (mapping){map, size, xstrdup(path)};
    pthread_mutex_unlock(&known_lock);
}

void mapfile_forget(const void *map) {
    pthread_mutex_lock(&known_lock);
    for (size_t i = n_known; i-- > 0;)
        if (known[i].map == map) {
            free(known[i].path);
            known[i] = known[--n_known];
            break;
        }
    pthread_mutex_unlock(&known_lock);
}

/* The path of the mapping holding addr, copied into out ("a mapped file"
 * when none does). */
static void path_of(const void *addr, char *out, size_t cap) {
    snprintf(out, cap, "a mapped file");
    uintptr_t a = (uintptr_t)addr;
    pthread_mutex_lock(&known_lock);
    for (size_t i = 0; i < n_known; i++) {
        uintptr_t lo = (uintptr_t)known[i].map;
        if (a >= lo && a - lo < known[i].size) {
            snprintf(out, cap, "%s", known[i].path);
            break;
        }
    }
    pthread_mutex_unlock(&known_lock);
}

int mapfile_open(mapfile *f, const char *path) {
    *f = (mapfile){0};
    struct stat st;
    int fd = open_regular(path, &st);
    if (fd < 0)
        return errno == ENOENT ? 1 : -1;
    if (st.st_size == 0) {
        close(fd);
        return 1;
    }
    void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    int e = errno;
    close(fd);
    errno = e;
    if (p == MAP_FAILED)
        return -1;
    *f = (mapfile){p, (size_t)st.st_size, 0,
                   (mapfile_id){st.st_dev, st.st_ino, (size_t)st.st_size, st.st_mtim}};
    mapfile_note(p, f->size, path);
    return 0;
}

int mapfile_same(const mapfile_id *a, const mapfile_id *b) {
    return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
           a->mtime.tv_sec == b->mtime.tv_sec && a->mtime.tv_nsec == b->mtime.tv_nsec;
}

void mapfile_release(const char *map, size_t *released, size_t upto, size_t step) {
    if (upto < *released || upto - *released < step)
        return;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    upto -= upto % page;
    madvise((char *)map + *released, upto - *released, MADV_DONTNEED);
    *released = upto;
}

void mapfile_close(mapfile *f) {
    if (f->map) {
        mapfile_forget(f->map);
        munmap((void *)f->map, f->size);
    }
    *f = (mapfile){0};
}

/* This thread's innermost guard, and where its fault was. */
static _Thread_local sigjmp_buf *guard_at;
static _Thread_local void *volatile fault_addr;

static void on_sigbus(int sig, siginfo_t *si, void *ctx) {
    (void)ctx;
    if (!guard_at) { /* not ours: the default action, on the fault's return */
        struct sigaction dfl = {.sa_handler = SIG_DFL};
        sigemptyset(&dfl.sa_mask);
        sigaction(sig, &dfl, NULL);
        return;
    }
    fault_addr = si->si_addr;
    siglongjmp(*guard_at, 1);
}

static void install(void) {
    struct sigaction sa = {.sa_sigaction = on_sigbus, .sa_flags = SA_SIGINFO};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGBUS, &sa, NULL);
}

int mapfile_guard(int (*fn)(void *), void *arg, char *err, int errlen) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, install);
    sigjmp_buf here;
    sigjmp_buf *volatile outer = guard_at;
    if (sigsetjmp(here, 1)) {
        guard_at = outer;
        char path[4096];
        path_of(fault_addr, path, sizeof path);
        snprintf(err, (size_t)errlen,
                 "%s changed while it was read (truncated by another process): read it again "
                 "once nothing writes it",
                 path);
        return -1;
    }
    guard_at = &here;
    int rc = fn(arg);
    guard_at = outer;
    return rc;
}

/* util: checked allocation, strict parsing, hashing. */
#include "common/util.h"
#include "common/notice.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>

/* Out of memory: nothing sensible is left to do, and a core file says
 * where (as redis's allocator does). */
_Noreturn static void out_of_memory(size_t n) {
    notice(notice_default(), NOTICE_FATAL, "out of memory allocating %zu bytes", n);
    abort();
}

void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p)
        out_of_memory(n);
    return p;
}

void *xcalloc(size_t n, size_t size) {
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        out_of_memory(n * size);
    return p;
}

void *xrealloc(void *p, size_t n) {
    void *q = realloc(p, n ? n : 1);
    if (!q)
        out_of_memory(n);
    return q;
}

char *xstrdup(const char *s) {
    size_t n = strlen(s) + 1;
    char *p = xmalloc(n);
    memcpy(p, s, n);
    return p;
}

int parse_int(const char *s, long *out) {
    if (!s || !*s)
        return -1;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end)
        return -1;
    *out = v;
    return 0;
}

int parse_double(const char *s, double *out) {
    if (!s || !*s)
        return -1;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end || isnan(v))
        return -1;
    *out = v;
    return 0;
}

int parse_duration_ms(const char *s, double *out_ms) {
    if (!s || !*s)
        return -1;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || isnan(v) || v < 0)
        return -1;
    double scale;
    if (!*end || !strcmp(end, "s"))
        scale = 1000;
    else if (!strcmp(end, "ms"))
        scale = 1;
    else if (!strcmp(end, "us"))
        scale = 0.001;
    else if (!strcmp(end, "m"))
        scale = 60000;
    else
        return -1;
    *out_ms = v * scale;
    return 0;
}

uint64_t mix64(uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

uint64_t hash_bytes(const void *data, size_t n, uint64_t seed) {
    const unsigned char *p = data;
    uint64_t h = 0xcbf29ce484222325ULL ^ mix64(seed);
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ULL;
    }
    return mix64(h);
}

void raise_fd_limit(void) {
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

void fd_table_reserve(long fds) {
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        (rlim_t)fds >= rl.rlim_cur)
        fds = (long)rl.rlim_cur - 1;
    if (fds > 65536)
        fds = 65536;
    if (fds < 1)
        return;
    int fd = fcntl(2, F_DUPFD_CLOEXEC, (int)fds - 1); /* the table now reaches fds */
    if (fd >= 0)
        close(fd);
}

char *redact_url(const char *url) {
    const char *scheme = strstr(url, "://");
    const char *host = scheme ? scheme + 3 : url;
    const char *at = strchr(host, '@'), *slash = strchr(host, '/');
    if (!at || (slash && at > slash))
        return xstrdup(url);
    size_t n = strlen(url) + 16;
    char *out = xmalloc(n);
    snprintf(out, n, "%.*s<redacted>%s", (int)(host - url), url, at);
    return out;
}

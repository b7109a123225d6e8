/* fuzz_common: the few helpers the libFuzzer targets in this folder share.
 * A target that reads files gets a private temporary directory, made once
 * per process and removed at exit; a broken invariant aborts with a message,
 * which libFuzzer records as a crash together with the input. Everything is
 * static inline so that each target stays one translation unit. */
#ifndef SERVELAB_FUZZ_COMMON_H
#define SERVELAB_FUZZ_COMMON_H

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FUZZ_CHECK(cond)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: fuzz invariant failed: %s\n", __FILE__, __LINE__, #cond);      \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

static char fuzz_dir_path[256];

static inline void fuzz_remove_dir(void) {
    DIR *d = opendir(fuzz_dir_path);
    if (d) {
        struct dirent *e;
        char path[600];
        while ((e = readdir(d)))
            if (e->d_name[0] != '.') {
                snprintf(path, sizeof path, "%s/%s", fuzz_dir_path, e->d_name);
                unlink(path);
            }
        closedir(d);
    }
    rmdir(fuzz_dir_path);
}

/* A private directory for this process's files, removed at exit. */
static inline const char *fuzz_dir(void) {
    if (!fuzz_dir_path[0]) {
        const char *tmp = getenv("TMPDIR");
        snprintf(fuzz_dir_path, sizeof fuzz_dir_path, "%s/servelab-fuzz-XXXXXX",
                 tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(fuzz_dir_path)) {
            perror("fuzz: mkdtemp");
            abort();
        }
        atexit(fuzz_remove_dir);
    }
    return fuzz_dir_path;
}

/* Write data[0..n) to `path`, replacing the file. */
static inline void fuzz_write_file(const char *path, const uint8_t *data, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f || (n && fwrite(data, 1, n, f) != n) || fclose(f)) {
        perror(path);
        abort();
    }
}

/* FNV-1a, to fold many callbacks' output into one value to compare. */
static inline uint64_t fuzz_hash(uint64_t h, const void *p, size_t n) {
    const unsigned char *s = p;
    if (!h)
        h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < n; i++) {
        h ^= s[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

/* Is s[0..n) valid UTF-8 (no overlongs, no surrogates, at most U+10FFFF)? */
static inline int fuzz_utf8_valid(const char *s, size_t n) {
    const unsigned char *p = (const unsigned char *)s, *e = p + n;
    while (p < e) {
        unsigned c = *p++;
        int more;
        unsigned cp;
        if (c < 0x80)
            continue;
        else if (c >= 0xC2 && c <= 0xDF)
            more = 1, cp = c & 0x1F;
        else if (c >= 0xE0 && c <= 0xEF)
            more = 2, cp = c & 0x0F;
        else if (c >= 0xF0 && c <= 0xF4)
            more = 3, cp = c & 0x07;
        else
            return 0;
        if (e - p < more)
            return 0;
        for (int k = 0; k < more; k++) {
            if ((p[k] & 0xC0) != 0x80)
                return 0;
            cp = (cp << 6) | (p[k] & 0x3F);
        }
        p += more;
        if ((more == 2 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
            (more == 3 && (cp < 0x10000 || cp > 0x10FFFF)))
            return 0;
    }
    return 1;
}

/* Open descriptors of this process (a target checks it leaks none). */
static inline int fuzz_count_fds(void) {
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        n += e->d_name[0] != '.';
    closedir(d);
    return n - 1; /* the directory's own descriptor */
}

#endif

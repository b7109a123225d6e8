/* util: small helpers every module uses: checked allocation, and string
 * parsing with error reporting. Kept tiny on purpose. (Warnings go through
 * common/notice.h.) */
#ifndef SERVELAB_UTIL_H
#define SERVELAB_UTIL_H

#include <stddef.h>
#include <stdint.h>

#define SERVELAB_VERSION "0.1.0"

/* Allocation that cannot fail: out of memory is a NOTICE_FATAL line, then abort. */
void *xmalloc(size_t n) __attribute__((returns_nonnull, malloc));
void *xcalloc(size_t n, size_t size) __attribute__((returns_nonnull, malloc));
void *xrealloc(void *p, size_t n) __attribute__((returns_nonnull));
char *xstrdup(const char *s) __attribute__((returns_nonnull, malloc));

/* Strict number parsing: the whole string must be a number. Return 0 on
 * success, -1 on error (value untouched). */
int parse_int(const char *s, long *out);
int parse_double(const char *s, double *out);
/* A duration: "750ms", "1.5s", "2m", "30" (seconds) -> milliseconds. */
int parse_duration_ms(const char *s, double *out_ms);

/* 64-bit mixing hash (splitmix64 finaliser) and FNV-1a over bytes. */
uint64_t mix64(uint64_t x);
uint64_t hash_bytes(const void *data, size_t n, uint64_t seed);

/* A copy of url with any credentials in it (user:pass@) replaced by
 * <redacted>: what may be written to files and logs. */
char *redact_url(const char *url);

/* Raise the open-file limit to its hard maximum (load tools need many
 * sockets). */
void raise_fd_limit(void);
/* Grows this process's descriptor table to hold `fds` descriptors now
 * (within RLIMIT_NOFILE, at most 65536), while it has one thread: the
 * kernel grows the table by doubling, and in a process of several threads
 * each growth waits for an RCU grace period, milliseconds during which the
 * thread opening a socket stands still (seen as 11 ms of schedule lag at
 * the 256th and 512th connection once a second thread existed). */
void fd_table_reserve(long fds);

#endif

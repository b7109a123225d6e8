/* filesink: a file written through two buffers, the full one written by a
 * thread of its own while the next fills. For a writer that makes gigabytes
 * (merge): on the 2-core VM of docs/performance.md, the kernel's copy into
 * new page-cache pages costs about as much as making the rows, and so runs
 * beside it rather than after each buffer. Past SINK_DIRECT_AFTER bytes the
 * file is written past the page cache (O_DIRECT, whole aligned blocks; the
 * last part and any file system that refuses it, through the cache as
 * before): a file that large would only push other files out of the cache,
 * and new cache pages cost ~2.7 s of kernel CPU a GB there against ~0.1 s
 * direct. One writer a sink; the first error of a write is kept and
 * returned by the next call and by sink_close. */
#ifndef SERVELAB_FILESINK_H
#define SERVELAB_FILESINK_H

#include <pthread.h>
#include <stddef.h>

#define SINK_BYTES (4u << 20)           /* a buffer */
#define SINK_ALIGN 4096u                /* a direct write's block */
#define SINK_DIRECT_AFTER (64ull << 20) /* bytes through the cache first */

typedef struct sink {
    int fd;      /* -1 before sink_open */
    char *fill;  /* the buffer being filled: sink_room's bytes are here */
    size_t used; /* its bytes so far: the caller adds what it put at sink_room */
    /* private */
    char *out; /* the buffer the writer has (NULL: none) */
    size_t out_len;
    unsigned long long wrote; /* the writer's: bytes in the file */
    int direct;               /* the writer's: 1 direct, -1 never */
    int failed, errnum, stop, started;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t writer;
    char *bufs[2];
} sink;

/* path created (or truncated) for writing: 0, or -1 with errno. */
int sink_open(sink *o, const char *path);
/* n bytes at p after what is waiting. 0, or -1 with errno. */
int sink_put(sink *o, const char *p, size_t n);
/* Room for n bytes (n <= SINK_BYTES) at o->fill + o->used, the buffer
 * handed on first when it has not; the caller writes there and adds what
 * it wrote to o->used. NULL when writing failed. */
char *sink_room(sink *o, size_t n);
/* Everything written, the thread stopped, the file closed and the buffers
 * freed (also after a failed sink_open, or on {.fd = -1}). 0, or -1 with
 * errno. */
int sink_close(sink *o);

#endif

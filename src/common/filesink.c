/* filesink: a file written through two buffers, the full one by a thread
 * of its own while the other fills (see filesink.h). Ours: stdio writes in
 * the caller's thread, and the point is to take the kernel's copy off it. */
#include "common/filesink.h"
#include "common/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int write_all_of(int fd, const char *p, size_t n) {
    for (size_t at = 0; at < n;) {
        ssize_t k = write(fd, p + at, n - at);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        at += (size_t)k;
    }
    return 0;
}

/* The file's writes through the page cache from now on. */
static void cached_from_now(sink *o) {
    int fl = fcntl(o->fd, F_GETFL);
    if (fl >= 0)
        fcntl(o->fd, F_SETFL, fl & ~O_DIRECT);
    o->direct = -1;
}

/* The writer's write of n bytes at p, at the file's offset o->wrote: past
 * SINK_DIRECT_AFTER, whole blocks direct (p is block-aligned: a buffer's
 * start), and what is left of a last part through the cache; a file system
 * that refuses direct writes is written through the cache throughout. */
static int write_chunk(sink *o, const char *p, size_t n) {
    if (!o->direct && o->wrote >= SINK_DIRECT_AFTER && o->wrote % SINK_ALIGN == 0) {
        int fl = fcntl(o->fd, F_GETFL);
        o->direct = fl >= 0 && fcntl(o->fd, F_SETFL, fl | O_DIRECT) == 0 ? 1 : -1;
    }
    for (size_t at = 0; at < n;) {
        size_t want = n - at;
        if (o->direct == 1) {
            want -= want % SINK_ALIGN;
            if (!want || (at % SINK_ALIGN)) {
                cached_from_now(o);
                want = n - at;
            }
        }
        ssize_t k = write(o->fd, p + at, want);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0 && errno == EINVAL && o->direct == 1) {
            cached_from_now(o);
            continue;
        }
        if (k <= 0)
            return -1;
        at += (size_t)k;
        o->wrote += (unsigned long long)k;
    }
    return 0;
}

static void *sink_writer(void *arg) {
    sink *o = arg;
    pthread_mutex_lock(&o->mu);
    for (;;) {
        while (!o->out && !o->stop)
            pthread_cond_wait(&o->cv, &o->mu);
        if (!o->out)
            break;
        char *p = o->out;
        size_t n = o->out_len;
        int failed = o->failed;
        pthread_mutex_unlock(&o->mu);
        int rc = failed ? 0 : write_chunk(o, p, n), e = errno;
        pthread_mutex_lock(&o->mu);
        if (rc && !o->failed) {
            o->failed = 1;
            o->errnum = e;
        }
        o->out = NULL;
        pthread_cond_broadcast(&o->cv);
    }
    pthread_mutex_unlock(&o->mu);
    return NULL;
}

int sink_open(sink *o, const char *path) {
    memset(o, 0, sizeof *o);
    o->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (o->fd < 0)
        return -1;
    /* a block more than SINK_BYTES: the part shorter than a block carried
     * over from the last buffer, before a full SINK_BYTES of room */
    for (int i = 0; i < 2; i++) {
        o->bufs[i] = aligned_alloc(SINK_ALIGN, SINK_BYTES + SINK_ALIGN);
        if (!o->bufs[i])
            o->bufs[i] = xmalloc(SINK_BYTES + SINK_ALIGN); /* never direct then */
    }
    o->fill = o->bufs[0];
    o->direct = ((uintptr_t)o->bufs[0] | (uintptr_t)o->bufs[1]) % SINK_ALIGN ? -1 : 0;
    pthread_mutex_init(&o->mu, NULL);
    pthread_cond_init(&o->cv, NULL);
    o->started = pthread_create(&o->writer, NULL, sink_writer, o) == 0;
    return 0;
}

/* The filled buffer handed to the writer (once it has written the last),
 * or written here when there is no writer thread. Unless last, the part
 * after the last whole block stays, moved to the start of the next buffer,
 * so that every write but the last starts and ends on a block. */
static int hand_on(sink *o, int last) {
    if (!o->started) {
        int rc = write_all_of(o->fd, o->fill, o->used);
        o->used = 0;
        return rc;
    }
    pthread_mutex_lock(&o->mu);
    while (o->out)
        pthread_cond_wait(&o->cv, &o->mu);
    int failed = o->failed;
    size_t keep = last ? 0 : o->used % SINK_ALIGN;
    if (!failed && o->used > keep) {
        o->out = o->fill;
        o->out_len = o->used - keep;
        o->fill = o->fill == o->bufs[0] ? o->bufs[1] : o->bufs[0];
        memcpy(o->fill, o->out + o->out_len, keep);
        pthread_cond_broadcast(&o->cv);
    }
    pthread_mutex_unlock(&o->mu);
    o->used = keep;
    if (failed)
        errno = o->errnum;
    return failed ? -1 : 0;
}

int sink_put(sink *o, const char *p, size_t n) {
    if (o->used + n > SINK_BYTES && hand_on(o, 0))
        return -1;
    while (o->used + n > SINK_BYTES) { /* a row larger than the buffer, in pieces */
        size_t take = SINK_BYTES - o->used;
        memcpy(o->fill + o->used, p, take);
        o->used = SINK_BYTES;
        if (hand_on(o, 0))
            return -1;
        p += take;
        n -= take;
    }
    memcpy(o->fill + o->used, p, n);
    o->used += n;
    return 0;
}

/* Room for n bytes (at most SINK_BYTES) at the end of what is waiting,
 * the buffer handed on first when it has not; NULL when writing failed. */
char *sink_room(sink *o, size_t n) {
    if (o->used + n > SINK_BYTES && hand_on(o, 0))
        return NULL;
    return o->fill + o->used;
}

/* Everything written and the file closed: 0, or -1 with errno. */
int sink_close(sink *o) {
    int rc = o->fd >= 0 ? hand_on(o, 1) : -1, e = errno;
    if (o->started) {
        pthread_mutex_lock(&o->mu);
        while (o->out)
            pthread_cond_wait(&o->cv, &o->mu);
        if (!rc && o->failed) {
            rc = -1;
            e = o->errnum;
        }
        o->stop = 1;
        pthread_cond_broadcast(&o->cv);
        pthread_mutex_unlock(&o->mu);
        pthread_join(o->writer, NULL);
    }
    if (o->fd >= 0 && close(o->fd) && !rc) {
        rc = -1;
        e = errno;
    }
    if (o->fd >= 0) {
        pthread_mutex_destroy(&o->mu);
        pthread_cond_destroy(&o->cv);
    }
    free(o->bufs[0]);
    free(o->bufs[1]);
    errno = e;
    return rc;
}

/* filesink: a file written through two buffers, the full one by a thread
 * of its own while the other fills (see filesink.h). Ours: stdio writes in
 * the caller's thread, and the point is to take the kernel's copy off it. */
#include "common/filesink.h"
#include "common/util.h"

#include <errno.h>
#include <fcntl.h>
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
        int rc = failed ? 0 : write_all_of(o->fd, p, n), e = errno;
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
    o->bufs[0] = o->fill = xmalloc(SINK_BYTES);
    o->bufs[1] = xmalloc(SINK_BYTES);
    pthread_mutex_init(&o->mu, NULL);
    pthread_cond_init(&o->cv, NULL);
    o->started = pthread_create(&o->writer, NULL, sink_writer, o) == 0;
    return 0;
}

/* The filled buffer handed to the writer (once it has written the last),
 * or written here when there is no writer thread. */
int sink_flush(sink *o) {
    if (!o->started) {
        int rc = write_all_of(o->fd, o->fill, o->used);
        o->used = 0;
        return rc;
    }
    pthread_mutex_lock(&o->mu);
    while (o->out)
        pthread_cond_wait(&o->cv, &o->mu);
    int failed = o->failed;
    if (!failed && o->used) {
        o->out = o->fill;
        o->out_len = o->used;
        o->fill = o->fill == o->bufs[0] ? o->bufs[1] : o->bufs[0];
        pthread_cond_broadcast(&o->cv);
    }
    pthread_mutex_unlock(&o->mu);
    o->used = 0;
    if (failed)
        errno = o->errnum;
    return failed ? -1 : 0;
}

int sink_put(sink *o, const char *p, size_t n) {
    if (o->used + n > SINK_BYTES && sink_flush(o))
        return -1;
    while (n > SINK_BYTES) { /* a row larger than the buffer, in pieces */
        memcpy(o->fill, p, SINK_BYTES);
        o->used = SINK_BYTES;
        if (sink_flush(o))
            return -1;
        p += SINK_BYTES;
        n -= SINK_BYTES;
    }
    memcpy(o->fill + o->used, p, n);
    o->used += n;
    return 0;
}

/* Room for n bytes (at most SINK_BYTES) at the end of what is waiting,
 * the buffer handed on first when it has not; NULL when writing failed. */
char *sink_room(sink *o, size_t n) {
    if (o->used + n > SINK_BYTES && sink_flush(o))
        return NULL;
    return o->fill + o->used;
}

/* Everything written and the file closed: 0, or -1 with errno. */
int sink_close(sink *o) {
    int rc = o->fd >= 0 ? sink_flush(o) : -1, e = errno;
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

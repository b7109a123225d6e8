/* rowwriter: CSV rows of requests and chunks, written so that nothing that
 * finished is lost and no partial line is ever on disk. */
#include "client/rowwriter.h"
#include "common/record.h"
#include "common/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CHUNK_FLUSH_BYTES (256 * 1024)

/* Write whole lines or nothing: when the disk fills (or any write fails)
 * halfway, the file is cut back to where it was, so every line on disk
 * stays complete. After a failure nothing more is written. */
static int write_locked(row_writer *w, int fd, const char *p, size_t n);

static int write_all(row_writer *w, int fd, const char *p, size_t n) {
    if (w->write_error)
        return -1;
    pthread_mutex_lock(w->shared);
    int rc = write_locked(w, fd, p, n);
    pthread_mutex_unlock(w->shared);
    return rc;
}

/* Under the lock, so that another thread's lines are never cut back. */
static int write_locked(row_writer *w, int fd, const char *p, size_t n) {
    struct stat st;
    off_t before = fstat(fd, &st) == 0 ? st.st_size : -1;
    while (n > 0) {
        ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            w->write_error = k < 0 ? errno : EIO;
            if (before >= 0 && ftruncate(fd, before) != 0)
                w->write_error = errno ? errno : EIO;
            return -1;
        }
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

int request_id_format(char *buf, size_t cap, uint32_t index) {
    return snprintf(buf, cap, "req-%u", index);
}

int row_writer_open(row_writer *w, const char *dir, char *err, int errlen) {
    memset(w, 0, sizeof *w);
    pthread_mutex_init(&w->lock, NULL);
    w->shared = &w->lock;
    char path[4096];
    snprintf(path, sizeof path, "%s/requests.csv", dir);
    w->req_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
    if (w->req_fd < 0) {
        snprintf(err, errlen, "--out %s: cannot create requests.csv: %s", dir, strerror(errno));
        return -1;
    }
    snprintf(path, sizeof path, "%s/chunks.csv", dir);
    w->chunk_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
    if (w->chunk_fd < 0) {
        snprintf(err, errlen, "--out %s: cannot create chunks.csv: %s", dir, strerror(errno));
        close(w->req_fd);
        return -1;
    }
    w->owns_fds = 1;
    w->cap = CHUNK_FLUSH_BYTES + 4096;
    w->buf = xmalloc(w->cap);
    if (write_all(w, w->req_fd, REQUESTS_CSV_HEADER, strlen(REQUESTS_CSV_HEADER)) ||
        write_all(w, w->chunk_fd, CHUNKS_CSV_HEADER, strlen(CHUNKS_CSV_HEADER))) {
        snprintf(err, errlen, "--out %s: cannot write: %s", dir, strerror(w->write_error));
        return -1;
    }
    return 0;
}

/* Appends "%.3f" of us/1000 or nothing, then a comma. */
static char *put_ms(char *p, int64_t us) {
    if (us >= 0)
        p += sprintf(p, "%lld.%03lld", (long long)(us / 1000), (long long)(us % 1000));
    *p++ = ',';
    return p;
}

static char *put_int(char *p, long v) {
    if (v >= 0)
        p += sprintf(p, "%ld", v);
    *p++ = ',';
    return p;
}

void row_writer_request(row_writer *w, const request_row *r) {
    char line[512], *p = line;
    p += request_id_format(p, 32, r->index);
    *p++ = ',';
    p += snprintf(p, 64, "%s,", r->cls);
    p = put_ms(p, r->scheduled_us);
    p = put_ms(p, r->sent_us);
    p = put_ms(p, r->first_us);
    p = put_ms(p, r->last_us);
    p = put_ms(p, r->end_us);
    p = put_int(p, r->prompt_tokens);
    p = put_int(p, r->output_tokens);
    p = put_ms(p, r->first_us >= 0 && r->sent_us >= 0 ? r->first_us - r->sent_us : -1);
    if (r->output_tokens >= 2 && r->first_us >= 0 && r->last_us >= 0)
        p += sprintf(p, "%.3f",
                     (double)(r->last_us - r->first_us) / 1000.0 / (r->output_tokens - 1));
    *p++ = ',';
    p = put_ms(p, r->end_us >= 0 && r->sent_us >= 0 ? r->end_us - r->sent_us : -1);
    p += snprintf(p, 32, "%s,", r->finish_reason ? r->finish_reason : "");
    if (r->http_status > 0)
        p += sprintf(p, "%d", r->http_status);
    *p++ = ',';
    p += snprintf(p, 32, "%s,%d,", err_class_name(r->error), r->chunks);
    p = put_ms(p, r->dispatched_us >= 0 ? r->dispatched_us - r->scheduled_us : -1);
    p[-1] = '\n';
    write_all(w, w->req_fd, line, (size_t)(p - line));
}

static void flush_chunks(row_writer *w) {
    if (w->n)
        write_all(w, w->chunk_fd, w->buf, w->n);
    w->n = 0;
}

void row_writer_chunks(row_writer *w, uint32_t index, const int64_t *t_us, const int32_t *tokens,
                       int n) {
    char id[32];
    request_id_format(id, sizeof id, index);
    for (int i = 0; i < n; i++) {
        if (w->n + 128 > w->cap)
            flush_chunks(w);
        w->n += (size_t)sprintf(w->buf + w->n, "%s,%d,%lld.%03lld,%d\n", id, i,
                                (long long)(t_us[i] / 1000), (long long)(t_us[i] % 1000),
                                tokens ? tokens[i] : 1);
    }
    if (w->n >= CHUNK_FLUSH_BYTES)
        flush_chunks(w);
}

void row_writer_clone(const row_writer *owner, row_writer *w) {
    memset(w, 0, sizeof *w);
    w->req_fd = owner->req_fd;
    w->chunk_fd = owner->chunk_fd;
    w->shared = owner->shared;
    w->cap = CHUNK_FLUSH_BYTES + 4096;
    w->buf = xmalloc(w->cap);
}

int row_writer_close(row_writer *w) {
    flush_chunks(w);
    if (!w->owns_fds) {
        free(w->buf);
        w->buf = NULL;
        return w->write_error;
    }
    if (w->req_fd >= 0 && fsync(w->req_fd) < 0 && errno != EINVAL && !w->write_error)
        w->write_error = errno;
    if (w->req_fd >= 0)
        close(w->req_fd);
    if (w->chunk_fd >= 0)
        close(w->chunk_fd);
    w->req_fd = w->chunk_fd = -1;
    free(w->buf);
    w->buf = NULL;
    return w->write_error;
}

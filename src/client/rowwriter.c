/* rowwriter: CSV rows of requests and chunks, written so that nothing that
 * finished is lost and no partial line is ever on disk. A finished request
 * costs one lock and two write() calls, its chunk rows then its request row,
 * however many chunks it had: no write per chunk on the hot path, and no
 * chunk row held back once its request row is on disk. */
#include "client/rowwriter.h"
#include "workload/workload.h"
#include "common/csv.h"
#include "model/record.h"
#include "common/util.h"
#include "rundir/columns.h"

#include <errno.h>
#include <stdint.h>
#include <math.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Where a finished request's rows wait for its two writes: each buffer
 * starts with the room most requests need and grows for one that needs
 * more; one grown past its _KEEP size is given back after the write. */
#define CHUNK_BUF_BYTES (16 * 1024)
#define CHUNK_BUF_KEEP (4 * 1024 * 1024)
#define ROW_BUF_BYTES 1024
#define ROW_BUF_KEEP (64 * 1024)

/* Write whole lines or nothing, under the shared lock (so that another
 * thread's lines are never cut back): when the disk fills (or any write
 * fails) halfway, what this call wrote is cut off again, so every line on
 * disk stays complete. The file's end is known without asking for it
 * before each write: every write to it goes through this lock, appending. */
static int write_locked(row_writer *w, int fd, const char *p, size_t n) {
    size_t done = 0;
    while (done < n) {
        ssize_t k = write(fd, p + done, n - done);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            w->write_error = k < 0 ? errno : EIO;
            struct stat st;
            if (done > 0 && (fstat(fd, &st) != 0 || ftruncate(fd, st.st_size - (off_t)done) != 0))
                w->write_error = errno ? errno : EIO;
            return -1;
        }
        done += (size_t)k;
    }
    return 0;
}

/* After a failure nothing more is written. */
static int write_all(row_writer *w, int fd, const char *p, size_t n) {
    if (w->write_error)
        return -1;
    pthread_mutex_lock(w->shared);
    int rc = write_locked(w, fd, p, n);
    pthread_mutex_unlock(w->shared);
    return rc;
}

/* The pending rows to disk: the chunk rows first, then the request row, so
 * that a request row on disk always has its chunk rows before it. A request
 * row whose chunk rows could not be written is not written either. */
static void flush_pending(row_writer *w) {
    if ((w->n || w->row_n) && !w->write_error) {
        pthread_mutex_lock(w->shared);
        if (!w->n || w->chunk_fd < 0 || write_locked(w, w->chunk_fd, w->buf, w->n) == 0)
            if (w->row_n)
                write_locked(w, w->req_fd, w->row, w->row_n);
        pthread_mutex_unlock(w->shared);
    }
    w->n = w->row_n = 0;
    if (w->cap > CHUNK_BUF_KEEP) {
        free(w->buf);
        w->buf = xmalloc(w->cap = CHUNK_BUF_BYTES);
    }
    if (w->row_cap > ROW_BUF_KEEP) {
        free(w->row);
        w->row = xmalloc(w->row_cap = ROW_BUF_BYTES);
    }
}

static void buffers_init(row_writer *w) {
    w->buf = xmalloc(w->cap = CHUNK_BUF_BYTES);
    w->row = xmalloc(w->row_cap = ROW_BUF_BYTES);
    w->n = w->row_n = 0;
}

static void buffers_free(row_writer *w) {
    free(w->buf);
    free(w->row);
    w->buf = w->row = NULL;
    w->cap = w->row_cap = 0;
}

void request_row_init(request_row *r, const workload *w, uint32_t index, int64_t due_us) {
    memset(r, 0, sizeof *r);
    r->index = index;
    r->cls = workload_class_of(w, index);
    r->scheduled_us = due_us;
    r->dispatched_us = r->sent_us = r->first_us = r->last_us = r->end_us = -1;
    r->connect_us = r->written_us = r->first_byte_us = -1;
    r->prompt_tokens = r->output_tokens = -1;
    r->server_prompt_ms = r->server_decode_ms = -1;
    r->server_prompt_n = r->server_decode_n = r->server_cache_n = r->cached_tokens = -1;
    r->conversation = r->turn = -1;
    r->first_answer_us = r->reasoning_server = -1;
    r->first_tool_us = -1;
    r->tool_calls = r->answer_valid = -1;
    r->server_draft_n = r->server_draft_accepted = -1;
    if (workload_multi_turn(w) && index < w->conv.n_requests) {
        r->conversation = (long)w->conv.conv[index];
        r->turn = (long)w->conv.turn[index];
    }
    r->trace_line = replay_trace_line(w->replay, index);
}

long request_row_reasoning(const request_row *r) {
    if (r->chunks <= 0)
        return -1;
    return r->reasoning_server >= 0 ? r->reasoning_server : r->reasoning_counted;
}

req_rec request_row_record(const request_row *r) {
    req_rec rec = req_rec_unknown();
    rec.scheduled_ms = r->scheduled_us / 1000.0;
    rec.sent_ms = r->sent_us >= 0 ? r->sent_us / 1000.0 : NAN;
    rec.first_ms = r->first_us >= 0 ? r->first_us / 1000.0 : NAN;
    rec.last_ms = r->last_us >= 0 ? r->last_us / 1000.0 : NAN;
    rec.end_ms = r->end_us >= 0 ? r->end_us / 1000.0 : NAN;
    rec.lag_ms = r->dispatched_us >= 0 ? (r->dispatched_us - r->scheduled_us) / 1000.0 : NAN;
    rec.prompt_tokens = r->prompt_tokens;
    rec.output_tokens = r->output_tokens;
    rec.error = (uint8_t)r->error;
    rec.cls = 0;
    rec.part = 0;
    rec.connect_ms = r->connect_us >= 0 ? (float)(r->connect_us / 1000.0) : NAN;
    rec.written_ms = r->written_us >= 0 ? r->written_us / 1000.0 : NAN;
    rec.first_byte_ms = r->first_byte_us >= 0 ? r->first_byte_us / 1000.0 : NAN;
    rec.first_coalesced = (int8_t)(r->chunks > 0 ? r->first_coalesced != 0 : -1);
    /* as requests.csv has them: a server's duration past 1e12 ms is not written */
    rec.server_prompt_ms =
        r->server_prompt_ms >= 0 && r->server_prompt_ms < 1e12 ? (float)r->server_prompt_ms : NAN;
    rec.server_decode_ms =
        r->server_decode_ms >= 0 && r->server_decode_ms < 1e12 ? (float)r->server_decode_ms : NAN;
    rec.server_decode_n = r->server_decode_n >= 0 && r->server_decode_n <= INT32_MAX
                              ? (int32_t)r->server_decode_n
                              : -1;
    rec.server_prompt_n = r->server_prompt_n >= 0 && r->server_prompt_n <= INT32_MAX
                              ? (int32_t)r->server_prompt_n
                              : -1;
    rec.cached_tokens =
        r->cached_tokens >= 0 && r->cached_tokens <= INT32_MAX ? (int32_t)r->cached_tokens : -1;
    rec.turn = (uint16_t)(r->turn > 0 ? r->turn : 0);
    rec.first_answer_ms = r->first_answer_us >= 0 ? r->first_answer_us / 1000.0 : NAN;
    long think = request_row_reasoning(r);
    rec.reasoning_tokens = think >= 0 && think <= INT32_MAX ? (int32_t)think : -1;
    rec.reasoning_server = r->reasoning_server >= 0;
    rec.first_tool_ms = r->first_tool_us >= 0 ? r->first_tool_us / 1000.0 : NAN;
    rec.answer_valid = (int8_t)r->answer_valid;
    rec.server_draft_n =
        r->server_draft_n >= 0 && r->server_draft_n <= INT32_MAX ? (int32_t)r->server_draft_n : -1;
    rec.server_draft_accepted =
        r->server_draft_accepted >= 0 && r->server_draft_accepted <= INT32_MAX
            ? (int32_t)r->server_draft_accepted
            : -1;
    rec.tool_calls = (int16_t)(r->tool_calls < 0       ? -1
                               : r->tool_calls > 32767 ? 32767
                                                       : r->tool_calls);
    return rec;
}

int request_id_format(char *buf, size_t cap, uint32_t index) {
    return snprintf(buf, cap, "req-%u", index); /* at most 14 bytes: callers give 32 */
}

int row_writer_open(row_writer *w, const char *dir, char *err, int errlen) {
    return row_writer_open_rows(w, dir, 1, err, errlen);
}

int row_writer_open_rows(row_writer *w, const char *dir, int chunks, char *err, int errlen) {
    memset(w, 0, sizeof *w);
    w->chunk_fd = -1;
    pthread_mutex_init(&w->lock, NULL);
    w->shared = &w->lock;
    char path[4096];
    if (snprintf(path, sizeof path, "%s/requests.csv", dir) >= (int)sizeof path) {
        snprintf(err, errlen, "--out %s: path too long", dir);
        return -1;
    }
    w->req_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
    if (w->req_fd < 0) {
        snprintf(err, errlen, "--out %s: cannot create requests.csv: %s", dir, strerror(errno));
        return -1;
    }
    snprintf(path, sizeof path, "%s/chunks.csv", dir);
    if (chunks)
        w->chunk_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
    if (chunks && w->chunk_fd < 0) {
        snprintf(err, errlen, "--out %s: cannot create chunks.csv: %s", dir, strerror(errno));
        close(w->req_fd);
        return -1;
    }
    w->owns_fds = 1;
    buffers_init(w);
    char req_header[1024], chunk_header[256]; /* the tables' (rundir/columns.h) */
    size_t req_n = rundir_header(&rundir_requests, req_header, sizeof req_header),
           chunk_n = rundir_header(&rundir_chunks, chunk_header, sizeof chunk_header);
    if (write_all(w, w->req_fd, req_header, req_n) ||
        (chunks && write_all(w, w->chunk_fd, chunk_header, chunk_n))) {
        snprintf(err, errlen, "--out %s: cannot write: %s", dir, strerror(w->write_error));
        close(w->req_fd);
        if (chunks)
            close(w->chunk_fd);
        buffers_free(w);
        return -1;
    }
    return 0;
}

/* A row being built in buf[0, cap). Every append is bounded; one that does
 * not fit marks the row as overflowed and the row is not written. */
typedef struct row_line {
    char *buf;
    size_t n, cap;
    int overflow;
} row_line;

static void put_fmt(row_line *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put_fmt(row_line *l, const char *fmt, ...) {
    if (l->overflow)
        return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(l->buf + l->n, l->cap - l->n, fmt, ap);
    va_end(ap);
    if (k < 0 || (size_t)k >= l->cap - l->n)
        l->overflow = 1;
    else
        l->n += (size_t)k;
}

static void put_bytes(row_line *l, const char *s, size_t n) {
    if (l->overflow || n >= l->cap - l->n) {
        l->overflow = 1;
        return;
    }
    memcpy(l->buf + l->n, s, n);
    l->n += n;
}

/* "%.3f" of us/1000 (exactly, from the integer) or nothing when unset,
 * then a comma. */
static void put_ms(row_line *l, int64_t us) {
    if (us >= 0)
        put_fmt(l, "%lld.%03lld", (long long)(us / 1000), (long long)(us % 1000));
    put_bytes(l, ",", 1);
}

static void put_count(row_line *l, long v) {
    if (v >= 0)
        put_fmt(l, "%ld", v);
    put_bytes(l, ",", 1);
}

/* A duration the server reported (ms, finite and >= 0), or nothing. */
static void put_server_ms(row_line *l, double ms) {
    if (ms >= 0 && ms < 1e12)
        put_fmt(l, "%.3f", ms);
    put_bytes(l, ",", 1);
}

/* A text field, quoted when it holds a comma, a quote, CR or LF. */
static void put_text(row_line *l, const char *s) {
    size_t n = s ? strlen(s) : 0;
    if (!l->overflow && csv_field_bytes(s, n) < l->cap - l->n)
        l->n = (size_t)(csv_put_field(l->buf + l->n, s, n) - l->buf);
    else
        l->overflow = 1;
    put_bytes(l, ",", 1);
}

/* Room for every field but the two texts (class and finish_reason, which
 * are sized as written): a field of at most 24 bytes a column. */
#define ROW_FIXED_BYTES 1024
_Static_assert(RQ_N * 24 <= ROW_FIXED_BYTES, "room for every column of requests.csv");

/* The fields in the order of rundir/columns.h's requests table. */
static void format_request(row_line *l, const request_row *r) {
    char id[32];
    request_id_format(id, sizeof id, r->index);
    put_text(l, id);
    put_text(l, r->cls);
    put_ms(l, r->scheduled_us);
    put_ms(l, r->sent_us);
    put_ms(l, r->first_us);
    put_ms(l, r->last_us);
    put_ms(l, r->end_us);
    put_count(l, r->prompt_tokens);
    put_count(l, r->output_tokens);
    put_ms(l, r->first_us >= 0 && r->sent_us >= 0 ? r->first_us - r->sent_us : -1);
    if (r->output_tokens >= 2 && r->first_us >= 0 && r->last_us >= 0)
        put_fmt(l, "%.3f", (double)(r->last_us - r->first_us) / 1000.0 / (r->output_tokens - 1));
    put_bytes(l, ",", 1);
    put_ms(l, r->end_us >= 0 && r->sent_us >= 0 ? r->end_us - r->sent_us : -1);
    put_text(l, r->finish_reason);
    if (r->http_status > 0)
        put_fmt(l, "%d", r->http_status);
    put_bytes(l, ",", 1);
    put_text(l, err_class_name(r->error));
    put_count(l, r->chunks);
    put_ms(l, r->dispatched_us >= 0 ? r->dispatched_us - r->scheduled_us : -1);
    put_ms(l, r->connect_us);
    put_ms(l, r->written_us);
    put_ms(l, r->first_byte_us);
    put_count(l, r->chunks > 0 ? r->coalesced : -1);
    put_count(l, r->chunks > 0 ? r->first_coalesced : -1);
    put_server_ms(l, r->server_prompt_ms);
    put_server_ms(l, r->server_decode_ms);
    put_count(l, r->server_prompt_n);
    put_count(l, r->server_decode_n);
    put_count(l, r->server_cache_n);
    put_count(l, r->cached_tokens);
    put_count(l, r->turn > 0 ? r->conversation : -1); /* a row without a turn has neither */
    put_count(l, r->turn > 0 ? r->turn : -1);
    put_count(l, r->trace_line > 0 ? r->trace_line : -1);
    put_ms(l, r->first_answer_us);
    long think = request_row_reasoning(r);
    put_count(l, think);
    put_text(l, think < 0 ? "" : r->reasoning_server >= 0 ? "server" : "counted");
    put_count(l, r->tool_calls);
    put_ms(l, r->first_tool_us);
    put_count(l, r->answer_valid);
    put_count(l, r->server_draft_n);
    put_count(l, r->server_draft_accepted);
    if (!l->overflow)
        l->buf[l->n - 1] = '\n'; /* the last comma ends the line */
}

void row_writer_request(row_writer *w, const request_row *r) {
    flush_pending(w); /* a row whose chunks never came goes now, alone */
    size_t need =
        ROW_FIXED_BYTES + csv_field_bytes(r->cls, r->cls ? strlen(r->cls) : 0) +
        csv_field_bytes(r->finish_reason, r->finish_reason ? strlen(r->finish_reason) : 0);
    if (need > w->row_cap) {
        free(w->row);
        w->row = xmalloc(w->row_cap = need);
    }
    row_line l = {w->row, 0, w->row_cap, 0};
    format_request(&l, r);
    if (l.overflow) {
        if (!w->write_error)
            w->write_error = EOVERFLOW; /* cannot happen with the room above; never a torn row */
        return;
    }
    w->row_n = l.n;
}

/* One chunk row: at most 14 + 11 + 24 + 11 bytes and four separators. */
#define CHUNK_ROW_BYTES 128

void row_writer_chunks(row_writer *w, uint32_t index, const int64_t *t_us, const int32_t *tokens,
                       const uint8_t *coalesced, int n) {
    char id[32];
    request_id_format(id, sizeof id, index);
    for (int i = 0; i < n; i++) {
        if (w->n + CHUNK_ROW_BYTES > w->cap)
            w->buf = xrealloc(w->buf, w->cap *= 2); /* one request's rows stay one write */
        int64_t t = t_us[i] < 0 ? 0 : t_us[i];      /* times run from the start: never negative */
        int k = snprintf(w->buf + w->n, w->cap - w->n, "%s,%d,%lld.%03lld,%d,%d\n", id, i,
                         (long long)(t / 1000), (long long)(t % 1000), tokens ? tokens[i] : 1,
                         coalesced ? coalesced[i] != 0 : 0);
        if (k < 0 || (size_t)k >= w->cap - w->n) {
            if (!w->write_error)
                w->write_error = EOVERFLOW; /* cannot happen: the row is bounded above */
            w->n = w->row_n = 0;
            return;
        }
        w->n += (size_t)k;
    }
    flush_pending(w);
}

void row_writer_clone(const row_writer *owner, row_writer *w) {
    memset(w, 0, sizeof *w);
    w->req_fd = owner->req_fd;
    w->chunk_fd = owner->chunk_fd;
    w->shared = owner->shared;
    buffers_init(w);
}

int row_writer_close(row_writer *w) {
    flush_pending(w);
    buffers_free(w);
    if (!w->owns_fds)
        return w->write_error;
    if (w->req_fd >= 0 && fsync(w->req_fd) < 0 && errno != EINVAL && !w->write_error)
        w->write_error = errno;
    if (w->req_fd >= 0)
        close(w->req_fd);
    if (w->chunk_fd >= 0)
        close(w->chunk_fd);
    w->req_fd = w->chunk_fd = -1;
    return w->write_error;
}

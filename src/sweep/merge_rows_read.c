/* merge_rows_read: the first pass of a merge (see merge_rows.h): every
 * shard's file mapped and read by as many threads as the process has CPUs
 * (at most 8), each row's id checked to be the shard's own, and only where
 * each request's rows lie kept (24 bytes a request row, and 24 a request's
 * block of chunk rows), so that memory grows with the requests, not with
 * the bytes. Plain rows (no quote, no CR: nearly all) are split only as far
 * as the fields the index needs; any other row is csv_next's. */
#include "sweep/merge_rows_internal.h"
#include "common/bytescan.h"
#include "common/csv.h"
#include "common/files.h"
#include "common/mapfile.h"
#include "common/stop.h"
#include "common/util.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- ids ---- */

/* The id in row r (line `line` of `path`) is one of this shard's: its
 * index, or -1 with err. */
static long long id_of(worker *w, const shard_in *s, const csv_row *r, int col, const char *path,
                       int line) {
    size_t len = col >= 0 && col < r->n && col < CSV_MAX_FIELDS ? r->len[col] : 0;
    long long k = len ? id_index(r->f[col], len) : -1;
    if (k < 0)
        snprintf(w->err, sizeof w->err, "merge: %s:%d: request_id '%.*s' is not req-N", path, line,
                 (int)(len < 40 ? len : 40), len ? r->f[col] : "");
    else if (k >= s->schedule)
        snprintf(w->err, sizeof w->err,
                 "merge: %s:%d: req-%lld is past the schedule's %lld requests", path, line, k,
                 s->schedule);
    else if (k % s->count != s->index)
        snprintf(w->err, sizeof w->err,
                 "merge: %s:%d: req-%lld is shard %lld's (%lld mod %d), not %d's", path, line, k,
                 k % s->count, k, s->count, s->index);
    else
        return k;
    return -1;
}

/* ---- where each shard's rows lie ---- */

static void add_entry(worker *w, uint64_t index, uint64_t off, uint32_t len, uint32_t shard) {
    if (w->n == w->cap)
        w->e = xrealloc(w->e, (w->cap = w->cap ? 2 * w->cap : 4096) * sizeof *w->e);
    w->e[w->n++] = (entry){index, off, len, shard};
}

/* Field col of row r as the merged file's reader will read it (moved by
 * shift as merge_row_text moves it), into w->max when it is the largest. */
static void note_max(worker *w, const csv_row *r, int col, double shift) {
    double v;
    if (col >= r->n || col >= CSV_MAX_FIELDS)
        return;
    if (merge_moves(w->m->is_time, r, col, shift, &v)) {
        char t[MERGE_MS_ROOM];
        csv_row moved = {.n = 1, .f = {t}, .len = {merge_put_ms(t, v + shift)}};
        csv_number(&moved, 0, &v);
    } else if (csv_number(r, col, &v)) {
        return;
    }
    if (!isnan(v) && (isnan(w->max) || v > w->max))
        w->max = v;
}

/* The row at p (before end; line `line`) as index_shard needs it, when it
 * is plain (no quote, no CR) and its id is its first field: the fields up
 * to `upto` split into *r (r->n says how many were split), and the byte
 * after its LF returned; NULL when the row is not such a row, for csv_next
 * to read. */
static const char *plain_index_row(bytescan *fields, bytescan *lines, const char *p,
                                   const char *end, int upto, csv_row *r) {
    const char *st = p, *x = p;
    int k = 0;
    for (;;) {
        x = x < end ? bytescan_next(fields, x) : end;
        if (x == end || *x != ',')
            return NULL; /* a quote, a CR, or a row of fewer fields: csv_next's */
        r->f[k] = st;
        r->len[k] = (size_t)(x - st);
        st = ++x;
        if (k++ == upto)
            break;
    }
    r->n = k;
    r->error = NULL;
    r->known = 0;
    x = x < end ? bytescan_next(lines, x) : end;
    if (x < end && *x != '\n')
        return NULL;
    return x < end ? x + 1 : end;
}

/* How many LFs in [p, e). */
static int lf_count(const char *p, const char *e) {
    int k = 0;
    while (p < e && (p = memchr(p, '\n', (size_t)(e - p)))) {
        k++;
        p++;
    }
    return k;
}

/* Shard k's rows read and their ids checked; where each lies kept (a
 * request's chunk rows, one after another, as one block). A plain row is
 * split only as far as its id (and the column whose largest value is
 * kept), and a chunk row whose id is the last row's is not checked again;
 * any other row is csv_next's. 0, or -1 with w->err. */
static int index_shard(worker *w, int k) {
    const merger *m = w->m;
    const shard_in *s = &m->s[k];
    char path[4400];
    snprintf(path, sizeof path, "%s/%s", s->dir, m->f->name);
    mapfile src;
    int rc = mapfile_open(&src, path);
    if (rc > 0 && !m->f->once)
        return 0; /* read_headers (merge_rows.c) checked that every shard's is missing */
    if (rc) {
        snprintf(w->err, sizeof w->err, "merge: %s: %s", path,
                 rc > 0 ? "missing or empty" : file_why(errno));
        return -1;
    }
    m->ids[k] = src.id;
    const char *base = src.map, *end = base + src.size;
    csv_file v = {0};
    csv_row r;
    csv_view(&v, base, src.size);
    csv_next(&v, &r); /* the header: read_headers's */
    const char *p = base + csv_offset(&v);
    int line = 1 + lf_count(base, p), upto = m->max_col > m->col ? m->max_col : m->col;
    int fast = m->col == 0, col = m->col;
    bytescan fields, lines;
    bytescan_init(&fields, end, end, 1);
    bytescan_init(&lines, end, end, 0);
    long long rows = 0, prev = -1;
    const char *prev_id = NULL;
    size_t prev_len = 0;
    rc = 0;
    while (!rc && p < end) {
        release_behind(&src, (uint64_t)(p - base));
        if ((rows & 0xffff) == 0xffff && stop_signal()) {
            snprintf(w->err, sizeof w->err, "merge: stopped by a signal");
            rc = -1;
            break;
        }
        const char *start = p,
                   *next = fast ? plain_index_row(&fields, &lines, p, end, upto, &r) : NULL;
        int here = line;
        if (next) {
            line++;
        } else {
            csv_view(&v, p, (size_t)(end - p));
            csv_next(&v, &r);
            next = p + csv_offset(&v);
            line += lf_count(p, next);
            if (csv_row_blank(&r)) {
                p = next;
                continue;
            }
        }
        p = next;
        long long id = -1;
        int has_id = col >= 0 && col < r.n && col < CSV_MAX_FIELDS;
        if (r.error)
            snprintf(w->err, sizeof w->err, "merge: %s:%d: %s", path, here, r.error);
        else if (!m->f->once && prev_id && has_id && r.len[col] == prev_len &&
                 !memcmp(r.f[col], prev_id, prev_len))
            id = prev; /* the request's chunk rows go on: checked on its first */
        else
            id = id_of(w, s, &r, col, path, here);
        if (id < 0) {
            rc = -1;
            break;
        }
        if (m->max_col >= 0)
            note_max(w, &r, m->max_col, s->shift_ms);
        uint64_t off = (uint64_t)(start - base);
        size_t len = (size_t)(next - start);
        entry *last = w->n ? &w->e[w->n - 1] : NULL;
        if (!m->f->once && id == prev && last && last->off + last->len == off &&
            last->len <= UINT32_MAX - len)
            last->len += (uint32_t)len;
        else if (len <= UINT32_MAX)
            add_entry(w, (uint64_t)id, off, (uint32_t)len, (uint32_t)k);
        else {
            snprintf(w->err, sizeof w->err, "merge: %s:%d: a row of %zu bytes", path, here, len);
            rc = -1;
        }
        prev = id;
        /* a quoted id lives in the view's memory, not the file's: no shortcut */
        prev_id = has_id && r.f[col] >= base && r.f[col] < end ? r.f[col] : NULL;
        prev_len = prev_id ? r.len[col] : 0;
        rows++;
    }
    if (!rc && m->f->once && rows != s->requests) {
        snprintf(w->err, sizeof w->err,
                 "merge: %s holds %lld rows, its meta.json's shard.requests is %lld", path, rows,
                 s->requests);
        rc = -1;
    }
    csv_close(&v);
    mapfile_close(&src);
    return rc;
}

typedef struct shard_job {
    worker *w;
    int k;
} shard_job;

static int index_job(void *arg) {
    shard_job *j = arg;
    return index_shard(j->w, j->k);
}

/* Each shard read under a mapfile guard of this thread's own: a file cut
 * short under its mapping is an error naming it, not a SIGBUS. */
static void *work(void *arg) {
    worker *w = arg;
    for (int k = w->id; k < w->m->n_shards; k += w->m->threads) {
        shard_job j = {w, k};
        char why[4400];
        w->err[0] = 0;
        if (mapfile_guard(index_job, &j, why, sizeof why)) {
            if (!w->err[0])
                snprintf(w->err, sizeof w->err, "merge: %s", why);
            w->err_shard = k;
            break;
        }
    }
    return NULL;
}

/* Every thread's shards read; the first shard (by index into s) whose
 * row stopped a thread names the error. */
int merge_rows_read(const merger *m, worker *w, char *err, int errlen) {
    pthread_t *tid = xcalloc((size_t)m->threads, sizeof *tid);
    int rc = 0, started = 0;
    for (int t = 0; t < m->threads; t++)
        w[t] = (worker){.m = m, .id = t, .err_shard = -1, .max = NAN};
    for (int t = 0; t < m->threads && !rc; t++, started++)
        if (pthread_create(&tid[t], NULL, work, &w[t])) {
            snprintf(err, errlen, "merge: cannot start a thread");
            rc = -1;
        }
    for (int t = 0; t < started; t++)
        pthread_join(tid[t], NULL);
    free(tid);
    int first = -1;
    for (int t = 0; t < m->threads; t++)
        if (w[t].err_shard >= 0 && (first < 0 || w[t].err_shard < w[first].err_shard))
            first = t;
    if (!rc && first >= 0) {
        snprintf(err, errlen, "%s", w[first].err);
        rc = -1;
    }
    return rc;
}

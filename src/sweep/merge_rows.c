/* merge_rows: the shards' request and chunk rows into one file, streamed
 * through a spool and put in request order by a radix sort of where each
 * request's rows lie (see merge_rows.h). Ours rather than a library's: the
 * job is the merge's own, and the first version (a string per row, qsort)
 * spent its time in malloc, printf and comparisons. */
#include "sweep/merge_rows.h"
#include "common/bytescan.h"
#include "common/csv.h"
#include "common/filesink.h"
#include "common/jobs.h"
#include "common/mapfile.h"
#include "common/util.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Where one request's row (or block of chunk rows) lies in its shard's file. */
typedef struct entry {
    uint64_t index; /* the global request index */
    uint64_t off;   /* from the start of the shard's file */
    uint32_t len;
    uint32_t shard; /* into the shard array */
} entry;

/* What every thread reads: the shards, the file, its header. */
typedef struct merger {
    const shard_in *s;
    int n_shards, threads;
    const merge_rows_file *f;
    const char *out;
    char *header;      /* the first shard's header row, as written */
    int header_fields; /* its fields, those past CSV_MAX_FIELDS counted too */
    int is_time[CSV_MAX_FIELDS], col;
    int max_col; /* f->max_of's column; -1: none */
} merger;

/* One thread's share of the reading: shards id, id + threads, ... */
typedef struct worker {
    const merger *m;
    int id;
    entry *e;
    size_t n, cap;
    int err_shard; /* the shard whose row stopped it; -1: none */
    char err[4600];
    double max; /* the largest of f->max_of as read back; NAN: none yet */
} worker;

/* ---- ids ---- */

/* "req-K" as K, or -1. */
static long long id_index(const char *f, size_t len) {
    if (len < 5 || len > 22 || memcmp(f, "req-", 4))
        return -1;
    long long k = 0;
    for (size_t i = 4; i < len; i++) {
        if (f[i] < '0' || f[i] > '9' || k > (LLONG_MAX - 9) / 10)
            return -1;
        k = k * 10 + (f[i] - '0');
    }
    return k;
}

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

/* ---- the headers ---- */

/* The first shard's header becomes the file's (with its time columns and
 * id column); another shard's must be the same, field for field (written
 * the same, and as many). 0, or -1 with err. */
static int take_header(merger *m, const csv_row *h, const char *path, char *err, int errlen) {
    char *line = NULL;
    size_t cap = 0;
    merge_row_text(&line, &cap, h, (int[CSV_MAX_FIELDS]){0}, 0, NULL);
    if (!m->header) {
        int col[CSV_MAX_FIELDS];
        char why[4400];
        if (m->f->table->n > CSV_MAX_FIELDS ||
            rundir_columns_find(m->f->table, h, col, path, why, sizeof why)) {
            snprintf(err, errlen, "merge: %s", why);
            free(line);
            return -1;
        }
        m->header = line;
        m->header_fields = h->n;
        merge_time_columns(h, m->f->times, m->is_time);
        m->col = m->f->id_column_first ? 0 : col[RQ_request_id]; /* the table's request_id */
        m->max_col = m->f->max_of ? csv_column(h, m->f->max_of) : -1;
        return 0;
    }
    int same = h->n == m->header_fields && !strcmp(line, m->header);
    free(line);
    if (same)
        return 0;
    snprintf(err, errlen,
             "merge: %s:1: its columns are not those of the first shard's %s (shards written by "
             "different servelab versions?)",
             path, m->f->name);
    return -1;
}

/* Every shard's header read (a shard without the file: only requests.csv
 * is refused). 0, or -1 with err. */
static int read_headers(merger *m, char *err, int errlen) {
    for (int k = 0; k < m->n_shards; k++) {
        char path[4400];
        snprintf(path, sizeof path, "%s/%s", m->s[k].dir, m->f->name);
        csv_file c;
        int rc = csv_open(&c, path);
        if (rc > 0 && !m->f->once)
            continue;
        if (rc) {
            snprintf(err, errlen, "merge: %s: %s", path, rc > 0 ? "missing" : strerror(errno));
            return -1;
        }
        csv_row h;
        rc = csv_next(&c, &h) && !h.error ? take_header(m, &h, path, err, errlen) : 0;
        csv_close(&c);
        if (rc)
            return -1;
    }
    return 0;
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

/* ---- the shards' files, mapped ---- */

/* A shard's file is mapped (common/mapfile.h) and what lies wholly behind
 * the last read is handed back now and then, so that the process does not
 * hold every shard's file resident; a row read again later (a shard's rows
 * are a little out of order) reads back from the page cache. */
#define RELEASE_STEP (32u << 20)
#define RELEASE_BEHIND (8u << 20)
static void release_behind(mapfile *src, uint64_t off) {
    if (off > RELEASE_BEHIND)
        mapfile_release(src->map, &src->released, (size_t)(off - RELEASE_BEHIND), RELEASE_STEP);
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
        return 0;
    if (rc) {
        snprintf(w->err, sizeof w->err, "merge: %s: %s", path,
                 rc > 0 ? "missing" : strerror(errno));
        return -1;
    }
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

static void *work(void *arg) {
    worker *w = arg;
    for (int k = w->id; k < w->m->n_shards; k += w->m->threads)
        if (index_shard(w, k)) {
            w->err_shard = k;
            break;
        }
    return NULL;
}

/* ---- in request order ---- */

/* The entries by index, stable (an LSD radix sort, 11 bits a pass, over
 * the bits the largest index uses): a request's blocks keep their order. */
static void sort_entries(entry *e, size_t n) {
    uint64_t max = 0;
    for (size_t i = 0; i < n; i++)
        max = e[i].index > max ? e[i].index : max;
    entry *tmp = xmalloc((n ? n : 1) * sizeof *tmp), *from = e, *to = tmp;
    for (int shift = 0; shift < 64 && (max >> shift); shift += 11) {
        size_t count[2049] = {0};
        for (size_t i = 0; i < n; i++)
            count[((from[i].index >> shift) & 2047) + 1]++;
        for (int d = 0; d < 2048; d++)
            count[d + 1] += count[d];
        for (size_t i = 0; i < n; i++)
            to[count[(from[i].index >> shift) & 2047]++] = from[i];
        entry *t = from;
        from = to;
        to = t;
    }
    if (from != e)
        memcpy(e, from, n * sizeof *e);
    free(tmp);
}

/* The lines of shard k's FILE that hold req-K: the first two into a, b. */
static void lines_of(const merger *m, int k, long long id, int *a, int *b) {
    char path[4400];
    snprintf(path, sizeof path, "%s/%s", m->s[k].dir, m->f->name);
    *a = *b = 0;
    csv_file c;
    if (csv_open(&c, path))
        return;
    csv_row r;
    int col = -1;
    while (csv_next(&c, &r) && !*b) {
        if (c.line == 1)
            col = csv_column(&r, m->f->table->col[RQ_request_id].name);
        else if (col >= 0 && col < r.n && id_index(r.f[col], r.len[col]) == id)
            *(*a ? b : a) = c.line;
    }
    csv_close(&c);
}

/* requests.csv: no index twice. 0, or -1 with err. */
static int check_once(const merger *m, const entry *e, size_t n, char *err, int errlen) {
    for (size_t i = 1; i < n; i++) {
        if (e[i].index != e[i - 1].index)
            continue;
        int k = (int)e[i].shard, a, b;
        lines_of(m, k, (long long)e[i].index, &a, &b);
        snprintf(err, errlen, "merge: %s/%s:%d: req-%llu again (first on line %d)", m->s[k].dir,
                 m->f->name, b, (unsigned long long)e[i].index, a);
        return -1;
    }
    return 0;
}

/* ---- the copy, in request order ---- */

/* Every shard's FILE mapped (one without it, or empty: none). 0, or -1. */
static int map_sources(const merger *m, mapfile *src, char *err, int errlen) {
    for (int k = 0; k < m->n_shards; k++) {
        char path[4400];
        snprintf(path, sizeof path, "%s/%s", m->s[k].dir, m->f->name);
        if (mapfile_open(&src[k], path) < 0) {
            snprintf(err, errlen, "merge: reading %s: %s", path, strerror(errno));
            return -1;
        }
    }
    return 0;
}

/* The merged file's header handed to the feed, as its reader would see it. */
static int feed_header(const merger *m, rows_feed *feed, const char *path, char *err, int errlen) {
    if (!feed || !m->f->feed_header)
        return 0;
    csv_file v = {0};
    csv_row h;
    csv_view(&v, m->header, strlen(m->header));
    int rc = csv_next(&v, &h) ? m->f->feed_header(feed, &h, path, err, errlen) : 0;
    csv_close(&v);
    return rc;
}

/* The bytes that end a plain field: a comma, LF, and the quote and CR
 * that make a row one for csv_next. */
static const unsigned char stops[256] = {[','] = 1, ['\n'] = 2, ['"'] = 3, ['\r'] = 3};

/* Row r (its fields split in place, w of them kept) written at d, its time
 * fields moved and the bytes between them copied as they are, with *as
 * set to the row as its reader will see it. The end of what was written. */
static char *plain_row(const merger *m, const csv_row *r, int w, double shift, char *d,
                       csv_row *as) {
    const char *run = r->f[0]; /* the source bytes not yet copied */
    int first = 0;             /* the first field among them */
    as->known = 0;
    for (int i = 0; i <= w; i++) {
        double v;
        int moved = i < w && merge_moves(m->is_time, r, i, shift, &v);
        if (!moved && i < w)
            continue;
        const char *upto = i < w ? r->f[i] : r->f[w - 1] + r->len[w - 1];
        size_t n = (size_t)(upto - run);
        for (int j = first; j < i; j++) {
            as->f[j] = d + (r->f[j] - run);
            as->len[j] = r->len[j];
        }
        merge_copy_small(d, run, n);
        d += n;
        if (i == w)
            break;
        long long ms;
        as->f[i] = d;
        d += merge_put_ms_known(d, v + shift, &ms);
        as->len[i] = (size_t)(d - as->f[i]);
        if (ms != LLONG_MIN) { /* its reader is handed the value it would read */
            as->known |= 1ULL << i;
            as->value[i] = csv_thousandths(ms);
        }
        run = r->f[i] + r->len[i];
        first = i + 1;
    }
    as->n = w;
    as->error = NULL;
    *d++ = '\n';
    return d;
}

/* The rows of the n bytes at p (readable up to limit) written into the sink and handed to the
 * feed, as long as they are plain (no quote, no CR: nearly every row):
 * such a row is split here, as csv_next would split it, and written
 * straight into the sink's buffer, no field needing quotes. Stops at the
 * first row that is not plain, *done saying how many bytes were taken.
 * 0; -1: writing failed; -2: the feed refused a row (err). */
static int plain_rows(const merger *m, const char *p, size_t n, const char *limit, double shift,
                      sink *o, rows_feed *feed, const char *path, int *out_line, size_t *done,
                      char *err, int errlen) {
    const char *start = p, *end = p + n;
    csv_row r, as;
    bytescan sc;
    bytescan_init(&sc, end, limit, 1);
    *done = 0;
    while (p < end) {
        int k = 0, stop = 0;
        const char *x = p, *st = p;
        for (;; x++) {
            x = x < end ? bytescan_next(&sc, x) : end;
            stop = x < end ? stops[(unsigned char)*x] : 2;
            if (stop == 3)
                break;
            if (k < CSV_MAX_FIELDS) {
                r.f[k] = st;
                r.len[k] = (size_t)(x - st);
            }
            k++;
            st = x + 1;
            if (stop == 2)
                break;
        }
        if (stop == 3)
            break; /* not plain: csv_next reads it */
        r.n = k;
        r.known = 0;
        const char *row = p;
        p = x < end ? x + 1 : end;
        *done = (size_t)(p - start);
        if (k == 1 && r.len[0] == 0)
            continue; /* a blank line */
        int w = k < CSV_MAX_FIELDS ? k : CSV_MAX_FIELDS, times = 0;
        for (int i = 0; i < w; i++)
            times += m->is_time[i];
        size_t need = (size_t)(x - row) + 1 + (size_t)times * MERGE_MS_ROOM;
        char *d = need <= SINK_BYTES ? sink_room(o, need) : NULL;
        if (!d) {
            if (need <= SINK_BYTES)
                return -1;
            *done = (size_t)(row - start); /* a row too large for the buffer: csv_next's */
            break;
        }
        o->used += (size_t)(plain_row(m, &r, w, shift, d, &as) - d);
        ++*out_line;
        if (feed && m->f->feed_row && m->f->feed_row(feed, &as, path, *out_line, err, errlen))
            return -2;
    }
    return 0;
}

/* How many entries ahead the copy asks for its rows to be fetched: the
 * entries take turns among the shards' files, a stream too many for the
 * processor's own prefetching to follow. */
#define PREFETCH_AHEAD 16

/* out/FILE: the header, then each entry's rows from its shard's file,
 * rewritten (merge_row_text), each handed to the feed as it is written. */
static int write_out(const merger *m, const entry *e, size_t n, rows_feed *feed, char *err,
                     int errlen) {
    char path[4400];
    snprintf(path, sizeof path, "%s/%s", m->out, m->f->name);
    mapfile *src = xcalloc((size_t)m->n_shards, sizeof *src);
    sink o = {.fd = -1};
    int rc = map_sources(m, src, err, errlen), wrote = 0;
    if (!rc && sink_open(&o, path)) {
        snprintf(err, errlen, "merge: writing %s: %s", path, strerror(errno));
        rc = -1;
    }
    if (!rc && feed_header(m, feed, path, err, errlen))
        rc = -2;
    wrote = !rc && !sink_put(&o, m->header, strlen(m->header));
    csv_file v = {0};
    csv_view(&v, "", 0); /* a view from the start: csv_close must not close fd 0 */
    csv_row r, as;
    char *line = NULL;
    size_t cap = 0;
    int out_line = 1;
    for (size_t i = 0; i < n && !rc && wrote; i++) {
        if (i + PREFETCH_AHEAD < n) { /* the rows a few entries on: another shard's, mostly */
            const entry *a = &e[i + PREFETCH_AHEAD];
            const char *q = src[a->shard].map + a->off;
            for (uint32_t b = 0; b < a->len && b < 512; b += 64)
                __builtin_prefetch(q + b);
        }
        mapfile *sr = &src[e[i].shard];
        release_behind(sr, e[i].off);
        const char *at = sr->map + e[i].off;
        double shift = m->s[e[i].shard].shift_ms;
        size_t done;
        int k = plain_rows(m, at, e[i].len, sr->map + sr->size, shift, &o, feed, path, &out_line,
                           &done, err, errlen);
        rc = k == -2 ? -2 : 0;
        wrote = k != -1;
        if (rc || !wrote || done == e[i].len)
            continue;
        csv_view(&v, at + done, e[i].len - done); /* the rest, from the first row not plain */
        while (!rc && wrote && csv_next(&v, &r)) {
            if (csv_row_blank(&r))
                continue;
            size_t len = merge_row_text(&line, &cap, &r, m->is_time, shift, &as);
            wrote = !sink_put(&o, line, len);
            out_line++;
            if (feed && m->f->feed_row && m->f->feed_row(feed, &as, path, out_line, err, errlen))
                rc = -2;
        }
    }
    csv_close(&v);
    free(line);
    int closed = sink_close(&o) == 0;
    if (!rc && !(wrote && closed)) {
        snprintf(err, errlen, "merge: writing %s: %s", path, strerror(errno));
        rc = -1;
    }
    for (int k = 0; k < m->n_shards; k++)
        mapfile_close(&src[k]);
    free(src);
    return rc;
}

/* The threads' entries as one array, in the threads' order (a request's
 * are all one shard's, so one thread's, in the order read). */
static entry *gather_entries(worker *w, int threads, size_t *n) {
    *n = 0;
    for (int t = 0; t < threads; t++)
        *n += w[t].n;
    entry *e = xmalloc((*n ? *n : 1) * sizeof *e);
    size_t at = 0;
    for (int t = 0; t < threads; t++) {
        if (w[t].n)
            memcpy(e + at, w[t].e, w[t].n * sizeof *e);
        at += w[t].n;
        free(w[t].e);
        w[t].e = NULL;
    }
    return e;
}

/* As many threads as CPUs this process may use, at most one a shard and 8. */
static int thread_count(int shards) {
    cpu_set_t set;
    int cpus = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
    int t = cpus < shards ? cpus : shards;
    return t < 1 ? 1 : t > 8 ? 8 : t;
}

/* Every thread's shards read; the first shard (by index into s) whose
 * row stopped a thread names the error. */
static int index_all(const merger *m, worker *w, char *err, int errlen) {
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

/* One thread's share of the counting sort: the entries whose index is in
 * [lo, hi), counted into at[lo + 1, hi] (place = 0), or placed at e. The
 * shares' indices, and so the parts of at and e each writes, are apart. */
typedef struct order_job {
    worker *w;
    int threads, place;
    uint64_t lo, hi;
    uint32_t *at;
    entry *e;
} order_job;

static void *order_part(void *arg) {
    order_job *j = arg;
    for (int t = 0; t < j->threads; t++) {
        const entry *x = j->w[t].e;
        for (size_t i = 0; i < j->w[t].n; i++) {
            uint64_t k = x[i].index;
            if (k < j->lo || k >= j->hi)
                continue;
            if (j->place)
                j->e[j->at[k]++] = x[i];
            else
                j->at[k + 1]++;
        }
    }
    return NULL;
}

/* Each job's share, on a thread of its own; place says which pass. */
static void order_run(order_job *j, int n, int place) {
    for (int i = 0; i < n; i++)
        j[i].place = place;
    jobs_run(order_part, j, sizeof *j, n);
}

/* The threads' entries as one array in request order, stable: counted by
 * index and placed (a counting sort: one pass to count, one to place, each
 * thread taking a range of the indices) when a table of the indices is
 * not much larger than the entries, as it is for a whole schedule's
 * shards; else gathered and radix-sorted. At 16 x 1M the radix sort took a
 * second of one core for each file. */
static entry *order_entries(worker *w, int threads, size_t *n) {
    size_t total = 0;
    uint64_t max = 0;
    for (int t = 0; t < threads; t++) {
        total += w[t].n;
        for (size_t i = 0; i < w[t].n; i++)
            max = w[t].e[i].index > max ? w[t].e[i].index : max;
    }
    if (!total || total >= UINT32_MAX || max >= UINT32_MAX - 1 || max / 4 > total) {
        entry *e = gather_entries(w, threads, n);
        sort_entries(e, *n);
        return e;
    }
    uint32_t *at = xcalloc((size_t)max + 2, sizeof *at); /* at[k + 1]: entries of index k */
    entry *e = xmalloc(total * sizeof *e);
    order_job j[8];
    int jobs = threads < 8 ? threads : 8;
    for (int i = 0; i < jobs; i++)
        j[i] = (order_job){w,
                           threads,
                           0,
                           (max + 1) * (uint64_t)i / (uint64_t)jobs,
                           (max + 1) * (uint64_t)(i + 1) / (uint64_t)jobs,
                           at,
                           e};
    order_run(j, jobs, 0);
    for (size_t k = 1; k <= max + 1; k++) /* at[k]: where index k's entries start */
        at[k] += at[k - 1];
    order_run(j, jobs, 1);
    for (int t = 0; t < threads; t++) {
        free(w[t].e);
        w[t].e = NULL;
    }
    free(at);
    *n = total;
    return e;
}

struct merge_index {
    merger m;
    entry *e;
    size_t n;
    double max;
};

int merge_rows_index(const shard_in *s, int n, const char *out, const merge_rows_file *f,
                     merge_index **idx, char *err, int errlen) {
    merge_index *x = *idx = xcalloc(1, sizeof *x);
    x->m = (merger){.s = s, .n_shards = n, .threads = thread_count(n), .f = f, .out = out};
    x->max = NAN;
    merger *m = &x->m;
    worker *w = xcalloc((size_t)m->threads, sizeof *w);
    int rc = read_headers(m, err, errlen);
    if (!rc && m->header)
        rc = index_all(m, w, err, errlen);
    if (!rc && m->header) {
        x->e = order_entries(w, m->threads, &x->n);
        rc = f->once && check_once(m, x->e, x->n, err, errlen) ? -1 : 0;
        for (int t = 0; t < m->threads; t++)
            if (!isnan(w[t].max) && (isnan(x->max) || w[t].max > x->max))
                x->max = w[t].max;
    }
    for (int t = 0; t < m->threads; t++)
        free(w[t].e);
    free(w);
    return rc;
}

double merge_index_max(const merge_index *idx) {
    return idx->max;
}

int merge_rows_write(merge_index *idx, rows_feed *feed, char *err, int errlen) {
    return idx->m.header ? write_out(&idx->m, idx->e, idx->n, feed, err, errlen) : 0;
}

void merge_index_free(merge_index *idx) {
    if (!idx)
        return;
    free(idx->e);
    free(idx->m.header);
    free(idx);
}

int merge_rows(const shard_in *s, int n, const char *out, const merge_rows_file *f, rows_feed *feed,
               char *err, int errlen) {
    merge_index *idx;
    int rc = merge_rows_index(s, n, out, f, &idx, err, errlen);
    if (!rc)
        rc = merge_rows_write(idx, feed, err, errlen);
    merge_index_free(idx);
    return rc;
}

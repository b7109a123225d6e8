/* merge_rows: the shards' request and chunk rows into one file, streamed
 * through a spool and put in request order by a radix sort of where each
 * request's rows lie (see merge_rows.h). Ours rather than a library's: the
 * job is the merge's own, and the first version (a string per row, qsort)
 * spent its time in malloc, printf and comparisons. */
#include "sweep/merge_rows.h"
#include "common/csv.h"
#include "common/util.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Where one request's row (or block of chunk rows) lies in its spool. */
typedef struct entry {
    uint64_t index; /* the global request index */
    uint64_t off;
    uint32_t len;
    uint32_t shard; /* into the shard array: its spool is shard % threads */
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
} merger;

/* One thread's share: shards id, id + threads, ..., into its own spool. */
typedef struct worker {
    const merger *m;
    int id;
    char spool_path[4400];
    FILE *spool;
    uint64_t spooled; /* bytes written to the spool */
    entry *e;
    size_t n, cap;
    char *line; /* one row being rewritten */
    size_t line_cap;
    int err_shard; /* the shard whose row stopped it; -1: none */
    char err[4600];
} worker;

/* ---- one row rewritten ---- */

/* Whole thousandths by integer arithmetic where x*1000 rounds without
 * doubt (it is not within a few ulps of a half, nor a negative zero), else
 * printf itself: the same text either way, at a fraction of printf's cost
 * for the millions of times a merge writes. */
size_t merge_put_ms(char *dst, double x) {
    double m = x * 1000.0; /* within half an ulp of the true product */
    if (!(fabs(m) < 1e15))
        return (size_t)snprintf(dst, MERGE_MS_ROOM, "%.3f", x);
    double r = nearbyint(m), tol = fabs(m) * 1e-15 + 1e-9; /* a few ulps of m */
    if (fabs(fabs(m - r) - 0.5) < tol || (r == 0 && signbit(x)))
        return (size_t)snprintf(dst, MERGE_MS_ROOM, "%.3f", x);
    long long q = (long long)r;
    char tmp[32], *p = tmp + sizeof tmp;
    int neg = q < 0;
    unsigned long long u = neg ? 0ULL - (unsigned long long)q : (unsigned long long)q;
    for (int d = 0; d < 3; d++, u /= 10)
        *--p = (char)('0' + u % 10);
    *--p = '.';
    do {
        *--p = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (neg)
        *--p = '-';
    size_t n = (size_t)(tmp + sizeof tmp - p);
    memcpy(dst, p, n);
    return n;
}

size_t merge_row_text(char **line, size_t *cap, const csv_row *r, const int *is_time,
                      double shift_ms) {
    size_t need = 2; /* the LF and a NUL */
    for (int i = 0; i < r->n && i < CSV_MAX_FIELDS; i++)
        need += 1 + (is_time[i] ? MERGE_MS_ROOM : 0) + csv_field_bytes(r->f[i], r->len[i]);
    if (need > *cap)
        *line = xrealloc(*line, *cap = need * 2);
    char *p = *line;
    for (int i = 0; i < r->n && i < CSV_MAX_FIELDS; i++) {
        if (i)
            *p++ = ',';
        double v;
        if (is_time[i] && shift_ms != 0 && r->len[i] && csv_number(r, i, &v) == 0 && isfinite(v))
            p += merge_put_ms(p, v + shift_ms);
        else
            p = csv_put_field(p, r->f[i], r->len[i]);
    }
    *p++ = '\n';
    *p = 0;
    return (size_t)(p - *line);
}

void merge_time_columns(const csv_row *h, const char *const *times, int *is_time) {
    memset(is_time, 0, CSV_MAX_FIELDS * sizeof *is_time);
    for (int i = 0; i < h->n && i < CSV_MAX_FIELDS; i++)
        for (int t = 0; times[t]; t++)
            is_time[i] |= h->len[i] == strlen(times[t]) && !memcmp(h->f[i], times[t], h->len[i]);
}

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
    merge_row_text(&line, &cap, h, (int[CSV_MAX_FIELDS]){0}, 0);
    if (!m->header) {
        m->header = line;
        m->header_fields = h->n;
        merge_time_columns(h, m->f->times, m->is_time);
        m->col = m->f->id_column_first ? 0 : csv_column(h, "request_id");
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

/* ---- one shard's rows into its thread's spool ---- */

static void add_entry(worker *w, uint64_t index, uint32_t len, uint32_t shard) {
    if (w->n == w->cap)
        w->e = xrealloc(w->e, (w->cap = w->cap ? 2 * w->cap : 4096) * sizeof *w->e);
    w->e[w->n++] = (entry){index, w->spooled, len, shard};
}

/* Row r of shard k (line `line` of path), with request index id, into the
 * spool: a new entry, or the request's block of chunk rows grown. */
static int spool_row(worker *w, int k, const csv_row *r, long long id, long long prev) {
    const merger *m = w->m;
    size_t len = merge_row_text(&w->line, &w->line_cap, r, m->is_time, m->s[k].shift_ms);
    entry *last = w->n ? &w->e[w->n - 1] : NULL;
    if (!m->f->once && id == prev && last && last->len <= UINT32_MAX - len)
        last->len += (uint32_t)len; /* the request's chunk rows go on */
    else
        add_entry(w, (uint64_t)id, (uint32_t)len, (uint32_t)k);
    w->spooled += len;
    if (fwrite(w->line, 1, len, w->spool) == len)
        return 0;
    snprintf(w->err, sizeof w->err, "merge: writing %s: %s", w->spool_path, strerror(errno));
    return -1;
}

/* Shard k's rows into the spool. 0, or -1 with w->err. */
static int spool_shard(worker *w, int k) {
    const merger *m = w->m;
    const shard_in *s = &m->s[k];
    char path[4400];
    snprintf(path, sizeof path, "%s/%s", s->dir, m->f->name);
    csv_file c;
    int rc = csv_open(&c, path);
    if (rc > 0 && !m->f->once)
        return 0;
    if (rc) {
        snprintf(w->err, sizeof w->err, "merge: %s: %s", path,
                 rc > 0 ? "missing" : strerror(errno));
        return -1;
    }
    csv_row r;
    long long rows = 0, prev = -1;
    rc = 0;
    while (!rc && csv_next(&c, &r)) {
        if (c.line == 1 || csv_row_blank(&r))
            continue;
        long long id = -1;
        if (r.error)
            snprintf(w->err, sizeof w->err, "merge: %s:%d: %s", path, c.line, r.error);
        else
            id = id_of(w, s, &r, m->col, path, c.line);
        rc = id < 0 ? -1 : spool_row(w, k, &r, id, prev);
        prev = id;
        rows++;
    }
    if (!rc && m->f->once && rows != s->requests) {
        snprintf(w->err, sizeof w->err,
                 "merge: %s holds %lld rows, its meta.json's shard.requests is %lld", path, rows,
                 s->requests);
        rc = -1;
    }
    csv_close(&c);
    return rc;
}

static void *work(void *arg) {
    worker *w = arg;
    for (int k = w->id; k < w->m->n_shards; k += w->m->threads)
        if (spool_shard(w, k)) {
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
            col = csv_column(&r, "request_id");
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

/* out/FILE: the header, then each entry's bytes from its spool. */
static int write_out(const merger *m, worker *w, const entry *e, size_t n, char *err, int errlen) {
    char path[4400];
    snprintf(path, sizeof path, "%s/%s", m->out, m->f->name);
    const char **map = xcalloc((size_t)m->threads, sizeof *map);
    int rc = 0;
    for (int t = 0; t < m->threads && !rc; t++) {
        int fd = w[t].spooled ? open(w[t].spool_path, O_RDONLY | O_CLOEXEC) : -1;
        void *p =
            fd >= 0 ? mmap(NULL, (size_t)w[t].spooled, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
        if (fd >= 0)
            close(fd);
        if (w[t].spooled && p == MAP_FAILED) {
            snprintf(err, errlen, "merge: reading %s: %s", w[t].spool_path, strerror(errno));
            rc = -1;
        }
        map[t] = p == MAP_FAILED ? NULL : p;
    }
    FILE *o = rc ? NULL : fopen(path, "w");
    if (o) {
        setvbuf(o, NULL, _IOFBF, 1 << 20);
        rc = fputs(m->header, o) < 0;
        for (size_t i = 0; i < n && !rc; i++)
            rc = fwrite(map[e[i].shard % (unsigned)m->threads] + e[i].off, 1, e[i].len, o) !=
                 e[i].len;
        if (fclose(o))
            rc = -1;
    }
    if (!o || rc) {
        if (!rc || o)
            snprintf(err, errlen, "merge: writing %s: %s", path, strerror(errno));
        rc = -1;
    }
    for (int t = 0; t < m->threads; t++)
        if (map[t])
            munmap((void *)map[t], (size_t)w[t].spooled);
    free(map);
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

/* Every thread's shards spooled; the first shard (by index into s) whose
 * row stopped a thread names the error. */
static int spool_all(const merger *m, worker *w, char *err, int errlen) {
    pthread_t *tid = xcalloc((size_t)m->threads, sizeof *tid);
    int rc = 0, started = 0;
    for (int t = 0; t < m->threads; t++) {
        w[t] = (worker){.m = m, .id = t, .err_shard = -1};
        snprintf(w[t].spool_path, sizeof w[t].spool_path, "%s/.spool-%d-%s", m->out, t, m->f->name);
        if (!(w[t].spool = fopen(w[t].spool_path, "w"))) {
            snprintf(err, errlen, "merge: %s: %s", w[t].spool_path, strerror(errno));
            rc = -1;
            break;
        }
        setvbuf(w[t].spool, NULL, _IOFBF, 1 << 20);
    }
    for (int t = 0; t < m->threads && !rc; t++, started++)
        if (pthread_create(&tid[t], NULL, work, &w[t])) {
            snprintf(err, errlen, "merge: cannot start a thread");
            rc = -1;
        }
    for (int t = 0; t < started; t++)
        pthread_join(tid[t], NULL);
    free(tid);
    int first = -1;
    for (int t = 0; t < m->threads; t++) {
        if (w[t].spool && fclose(w[t].spool) && w[t].err_shard < 0) {
            snprintf(w[t].err, sizeof w[t].err, "merge: writing %s: %s", w[t].spool_path,
                     strerror(errno));
            w[t].err_shard = m->n_shards; /* after any shard's own */
        }
        if (w[t].err_shard >= 0 && (first < 0 || w[t].err_shard < w[first].err_shard))
            first = t;
    }
    if (!rc && first >= 0) {
        snprintf(err, errlen, "%s", w[first].err);
        rc = -1;
    }
    return rc;
}

int merge_rows(const shard_in *s, int n, const char *out, const merge_rows_file *f, char *err,
               int errlen) {
    merger m = {.s = s, .n_shards = n, .threads = thread_count(n), .f = f, .out = out};
    worker *w = xcalloc((size_t)m.threads, sizeof *w);
    int rc = read_headers(&m, err, errlen);
    if (!rc && m.header)
        rc = spool_all(&m, w, err, errlen);
    if (!rc && m.header) {
        size_t ne;
        entry *e = gather_entries(w, m.threads, &ne);
        sort_entries(e, ne);
        rc = (f->once && check_once(&m, e, ne, err, errlen)) || write_out(&m, w, e, ne, err, errlen)
                 ? -1
                 : 0;
        free(e);
    }
    for (int t = 0; t < m.threads; t++) {
        if (w[t].spool_path[0])
            unlink(w[t].spool_path);
        free(w[t].e);
        free(w[t].line);
    }
    free(w);
    free(m.header);
    return rc;
}

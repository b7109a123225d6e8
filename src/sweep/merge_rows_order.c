/* merge_rows_order: the index of a merge put in request order, stable (a
 * request's rows keep the order they were read in): a counting sort by
 * index over the threads when the indices are dense, as a whole
 * schedule's shards' are, else an LSD radix sort; and, for requests.csv,
 * the check that no request is there twice, which an ordered index makes
 * one look at neighbours. */
#include "sweep/merge_rows_internal.h"
#include "common/csv.h"
#include "common/jobs.h"
#include "common/util.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
int merge_rows_order_check_once(const merger *m, const entry *e, size_t n, char *err, int errlen) {
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
entry *merge_rows_order(worker *w, int threads, size_t *n) {
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

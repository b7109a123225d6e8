/* merge_rows_internal: what the files of one file's merge share; nothing
 * outside them includes it (merge_rows.h is the interface). merge_rows.c
 * checks the shards' headers and runs the two passes; merge_rows_read.c
 * reads the shards' mapped files into the index of where each request's
 * rows lie; merge_rows_order.c puts it in request order; merge_rows_write.c
 * copies the rows in that order into the merged file. The index passes
 * from one to the next once a file, never a row at a time; what a row's
 * path needs in two of them (the id's number, handing a mapped file back)
 * is static inline here, so the split costs the per-row loops no call. */
#ifndef SERVELAB_MERGE_ROWS_INTERNAL_H
#define SERVELAB_MERGE_ROWS_INTERNAL_H

#include "common/csv.h"
#include "common/mapfile.h"
#include "sweep/merge_rows.h"

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

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
    /* Each shard's file as the first pass read it (all zero: missing or
     * empty), for the second to check it reads the same bytes. */
    mapfile_id *ids;
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

/* What merge_rows_index makes and merge_rows_write (merge_rows_write.c)
 * writes: the file's merger and its entries in request order. */
struct merge_index {
    merger m;
    entry *e;
    size_t n;
    double max;
};

/* "req-K" as K, or -1. */
static inline long long id_index(const char *f, size_t len) {
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

/* A shard's file is mapped (common/mapfile.h) and what lies wholly behind
 * the last read is handed back now and then, so that the process does not
 * hold every shard's file resident; a row read again later (a shard's rows
 * are a little out of order) reads back from the page cache. */
#define RELEASE_STEP (32u << 20)
#define RELEASE_BEHIND (8u << 20)
static inline void release_behind(mapfile *src, uint64_t off) {
    if (off > RELEASE_BEHIND)
        mapfile_release(src->map, &src->released, (size_t)(off - RELEASE_BEHIND), RELEASE_STEP);
}

/* merge_rows_read.c */

/* Every thread's shards read (w: m->threads workers, set up here); the
 * first shard (by index into s) whose row stopped a thread names the
 * error. 0, or -1 with err. */
int merge_rows_read(const merger *m, worker *w, char *err, int errlen);

/* merge_rows_order.c */

/* The threads' entries as one array in request order, stable (see
 * merge_rows_order.c); the workers' own arrays are freed. */
entry *merge_rows_order(worker *w, int threads, size_t *n);
/* requests.csv: no index twice. 0, or -1 with err. */
int merge_rows_order_check_once(const merger *m, const entry *e, size_t n, char *err, int errlen);

#endif

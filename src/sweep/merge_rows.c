/* merge_rows: one file of the merged run made from the shards' (see
 * merge_rows.h): their headers checked against the first's, then the two
 * passes: the index of where each request's rows lie read by a few threads
 * (merge_rows_read.c) and put in request order (merge_rows_order.c), and
 * the rows copied in that order (merge_rows_write.c). Ours rather than a
 * library's: the job is the merge's own, and the first version (a string
 * per row, qsort) spent its time in malloc, printf and comparisons. */
#include "sweep/merge_rows.h"
#include "sweep/merge_rows_internal.h"
#include "common/csv.h"
#include "common/files.h"
#include "common/util.h"

#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* Every shard's header read. Only requests.csv is required, but a file one
 * shard has (chunks.csv) every shard must have: a shard that lost it would
 * merge into a run whose chunk figures are of some requests only. 0, or -1
 * with err. */
static int read_headers(merger *m, char *err, int errlen) {
    int have = -1, lack = -1;
    for (int k = 0; k < m->n_shards; k++) {
        char path[4400];
        snprintf(path, sizeof path, "%s/%s", m->s[k].dir, m->f->name);
        csv_file c;
        int rc = csv_open(&c, path);
        if (rc > 0 && !m->f->once) {
            lack = lack < 0 ? k : lack;
            continue;
        }
        if (rc) {
            snprintf(err, errlen, "merge: %s: %s", path, rc > 0 ? "missing" : file_why(errno));
            return -1;
        }
        csv_row h;
        int any = csv_next(&c, &h);
        rc = any && !h.error ? take_header(m, &h, path, err, errlen) : 0;
        csv_close(&c);
        if (rc)
            return -1;
        if (any)
            have = have < 0 ? k : have;
        else
            lack = lack < 0 ? k : lack;
    }
    if (have >= 0 && lack >= 0) {
        snprintf(err, errlen,
                 "merge: %s/%s is missing or empty while %s/%s is not: every run writes one "
                 "(copy the shard whole, or run it again)",
                 m->s[lack].dir, m->f->name, m->s[have].dir, m->f->name);
        return -1;
    }
    return 0;
}

/* As many threads as CPUs this process may use, at most one a shard and 8. */
static int thread_count(int shards) {
    cpu_set_t set;
    int cpus = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
    int t = cpus < shards ? cpus : shards;
    return t < 1 ? 1 : t > 8 ? 8 : t;
}

int merge_rows_index(const shard_in *s, int n, const char *out, const merge_rows_file *f,
                     merge_index **idx, char *err, int errlen) {
    merge_index *x = *idx = xcalloc(1, sizeof *x);
    x->m = (merger){.s = s, .n_shards = n, .threads = thread_count(n), .f = f, .out = out};
    x->max = NAN;
    merger *m = &x->m;
    m->ids = xcalloc((size_t)n, sizeof *m->ids);
    worker *w = xcalloc((size_t)m->threads, sizeof *w);
    int rc = read_headers(m, err, errlen);
    if (!rc && m->header)
        rc = merge_rows_read(m, w, err, errlen);
    if (!rc && m->header) {
        x->e = merge_rows_order(w, m->threads, &x->n);
        rc = f->once && merge_rows_order_check_once(m, x->e, x->n, err, errlen) ? -1 : 0;
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

void merge_index_free(merge_index *idx) {
    if (!idx)
        return;
    free(idx->e);
    free(idx->m.header);
    free(idx->m.ids);
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

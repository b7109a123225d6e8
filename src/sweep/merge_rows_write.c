/* merge_rows_write: the second pass of a merge (see merge_rows.h): the
 * merged file's header, then each entry's rows copied in request order
 * from the shards' mapped files, their time columns moved, into the output
 * through common/filesink.h, each handed as written to the report's reader
 * (report/load.h's feed), so that summary.json is made without reading the
 * merged file back. Rows with no quote and no CR (nearly all) take a fast
 * path that splits and writes them in place (merge_text.h); any other row
 * is csv_next's and merge_row_text's. */
#include "sweep/merge_rows.h"
#include "sweep/merge_rows_internal.h"
#include "common/bytescan.h"
#include "common/csv.h"
#include "common/files.h"
#include "common/filesink.h"
#include "common/mapfile.h"
#include "common/stop.h"
#include "common/util.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every shard's FILE mapped (one without it, or empty: none), each the
 * file the first pass indexed, unchanged: its offsets are of those bytes.
 * 0, or -1. */
static int map_sources(const merger *m, mapfile *src, char *err, int errlen) {
    for (int k = 0; k < m->n_shards; k++) {
        char path[4400];
        snprintf(path, sizeof path, "%s/%s", m->s[k].dir, m->f->name);
        if (mapfile_open(&src[k], path) < 0) {
            if (errno == ENOMEM)
                snprintf(err, errlen,
                         "merge: reading %s: no room for one more mapped file (%d shards: "
                         "the kernel's vm.max_map_count may be lower than the merge needs; "
                         "merge fewer shards at a time, or raise it)",
                         path, m->n_shards);
            else
                snprintf(err, errlen, "merge: reading %s: %s", path, file_why(errno));
            return -1;
        }
        if (!mapfile_same(&src[k].id, &m->ids[k])) {
            snprintf(err, errlen,
                     "merge: %s changed while the merge read it: merge again once nothing "
                     "writes the shards",
                     path);
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
        if ((i & 0xffff) == 0xffff && stop_signal()) {
            snprintf(err, errlen, "merge: stopped by a signal");
            rc = -1;
            break;
        }
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

int merge_rows_write(merge_index *idx, rows_feed *feed, char *err, int errlen) {
    return idx->m.header ? write_out(&idx->m, idx->e, idx->n, feed, err, errlen) : 0;
}

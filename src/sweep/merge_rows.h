/* merge_rows: every shard's requests.csv or chunks.csv made into one file
 * of the merged run, in global request order, each shard's time columns
 * moved by its shift_ms, and each row checked on the way: its id is the
 * shard's own (req-K, K mod N = I, K below the schedule's length), and in
 * requests.csv each id is there once and the shard holds as many rows as
 * its meta.json's shard.requests says. Every shard's header must be the
 * first's (a shard written by another servelab version is refused rather
 * than having its rows put under columns that are not theirs).
 *
 * It streams: each shard's rows are read once (mapped: common/csv.h),
 * rewritten into a spool file beside the output (one a thread: shards are
 * shared out over as many threads as the process has CPUs, at most 8; the
 * error reported is the first shard's, whatever the threads' timing), and
 * only where each request's rows lie in the spool is kept in memory (24
 * bytes a request row, and 24 a request's block of chunk rows); that index
 * is sorted by
 * request index (a stable radix sort: the rows of one request keep the
 * order they were read in) and the output copied from the spool in that
 * order. So memory grows with the requests, not with the bytes, and the
 * disk briefly holds the file twice. The first version kept every row as a
 * string of its own and qsorted them: bench/merge_shards.sh times the two
 * side by side (docs/performance.md: 16 shards of 100,000 requests with 8
 * chunks each, 5.0 s and 464 MiB against 47.9 s and 13 GiB). */
#ifndef SERVELAB_MERGE_ROWS_H
#define SERVELAB_MERGE_ROWS_H

#include "common/csv.h"
#include "sweep/merge_check.h"

#include <stddef.h>

typedef struct merge_rows_file {
    const char *name;         /* "requests.csv" */
    const char *const *times; /* the time columns' names, NULL-ended */
    int id_column_first;      /* the request id is the first field (chunks.csv) */
    int once;                 /* each id once, shard.requests of them (requests.csv) */
} merge_rows_file;

/* FILE of every shard into out/FILE (nothing written when no shard has
 * one; a shard without chunks.csv is skipped, one without requests.csv is
 * refused). 0, or -1 with one line in err naming the shard's file and line
 * where a row was refused; out/FILE may then be partly written (the caller
 * removes its temporary directory). */
int merge_rows(const shard_in *s, int n, const char *out, const merge_rows_file *f, char *err,
               int errlen);

/* x as printf's "%.3f" writes it, at dst (room for MERGE_MS_ROOM bytes:
 * the largest double has 309 digits), no NUL; the bytes written. How a moved time is written,
 * millions of times a merge, at a fraction of printf's cost. */
#define MERGE_MS_ROOM 320
size_t merge_put_ms(char *dst, double x);

/* Row r as CSV with its LF (and a NUL after it) into *line, of *cap bytes
 * (grown as needed), the time columns (is_time[i]) moved by shift_ms: the
 * one way a merge writes a row. Its length, the NUL not counted. */
size_t merge_row_text(char **line, size_t *cap, const csv_row *r, const int *is_time,
                      double shift_ms);
/* is_time[i] (CSV_MAX_FIELDS of them) set for the fields of header h named
 * in times (NULL-ended). */
void merge_time_columns(const csv_row *h, const char *const *times, int *is_time);

#endif

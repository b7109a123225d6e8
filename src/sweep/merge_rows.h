/* merge_rows: every shard's requests.csv or chunks.csv made into one file
 * of the merged run, in global request order, each shard's time columns
 * moved by its shift_ms, and each row checked on the way: its id is the
 * shard's own (req-K, K mod N = I, K below the schedule's length), and in
 * requests.csv each id is there once and the shard holds as many rows as
 * its meta.json's shard.requests says. Every shard's header must be the
 * first's (a shard written by another servelab version is refused rather
 * than having its rows put under columns that are not theirs), and hold
 * every contract column of the file's table (rundir/columns.h).
 *
 * Two passes, and the rows written once. First each shard's rows are read
 * (mapped: common/csv.h) and their ids checked, by as many threads as the
 * process has CPUs (at most 8; the error reported is the first shard's,
 * whatever the threads' timing), keeping only where each request's rows
 * lie in its shard's file (24 bytes a request row, and 24 a request's
 * block of chunk rows). That index is put in request order (a counting
 * sort, stable: the rows of one request keep the order they were read in),
 * and the rows are then copied in that order from the shards' files,
 * rewritten, into the output (through common/filesink.h, whose thread
 * does the kernel's copy), each handed as written to the report's reader
 * (report/load.h's feed), so that summary.json is made without reading
 * the merged files back (a moved time handed on as the value its text
 * reads as: csv_row's known). Rows with no quote and no CR (nearly all)
 * take a fast path that splits and writes them in place (merge_text.h).
 * So memory grows with the requests, not with the bytes. The first version kept every row as a
 * string of its own and qsorted them; the second spooled the rewritten
 * rows and read the merged files back: bench/merge_shards.sh times them
 * side by side (docs/performance.md). */
#ifndef SERVELAB_MERGE_ROWS_H
#define SERVELAB_MERGE_ROWS_H

#include "common/csv.h"
#include "report/load.h"
#include "sweep/merge_check.h"
#include "sweep/merge_text.h"
#include "rundir/columns.h"

#include <stddef.h>

typedef struct merge_rows_file {
    const char *name;          /* "requests.csv" */
    const rundir_table *table; /* its columns: each shard's header must have the contract ones */
    const char *const *times;  /* the time columns' names, NULL-ended */
    int id_column_first;       /* the request id is the first field (chunks.csv) */
    int once;                  /* each id once, shard.requests of them (requests.csv) */
    const char *max_of;        /* a column whose largest value merge_index_max gives; NULL */
    /* How the feed takes the merged file's header and its rows (either
     * NULL: not at all): report/load.h's feed_requests_header and
     * feed_request, or none and feed_chunk. */
    int (*feed_header)(rows_feed *, const csv_row *, const char *path, char *err, int errlen);
    int (*feed_row)(rows_feed *, const csv_row *, const char *path, int line, char *err,
                    int errlen);
} merge_rows_file;

/* FILE of every shard into out/FILE (nothing written when no shard has
 * one; a shard without chunks.csv is skipped, one without requests.csv is
 * refused), each row handed to feed as written (f->feed_row; NULL feed:
 * none). 0; -1 with one line in err naming the shard's file and line where
 * a row was refused; or -2 when the feed refused one (err is the feed's,
 * naming out/FILE's line). out/FILE may then be partly written (the caller
 * removes its temporary directory). */
int merge_rows(const shard_in *s, int n, const char *out, const merge_rows_file *f, rows_feed *feed,
               char *err, int errlen);

/* merge_rows in its two steps, for a caller that writes two files at once
 * and needs to know one's largest value before the other is written. The
 * first reads and checks every shard's rows and sorts where they lie (0,
 * or -1 with err); *idx is then the caller's to merge_index_free, also on
 * failure. The second writes out/FILE (merge_rows's returns). Two indexes
 * may be written at once by two threads if their feeds are not one
 * another's (report/load.h: a feed's requests and its chunks are). */
typedef struct merge_index merge_index;
int merge_rows_index(const shard_in *s, int n, const char *out, const merge_rows_file *f,
                     merge_index **idx, char *err, int errlen);
/* The largest value of f->max_of over the rows, as the merged file will
 * read back (its time moved); NAN when no row has one. */
double merge_index_max(const merge_index *idx);
int merge_rows_write(merge_index *idx, rows_feed *feed, char *err, int errlen);
void merge_index_free(merge_index *idx);

#endif

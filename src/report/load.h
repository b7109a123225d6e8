/* load: reads what a run left on disk (requests.csv, chunks.csv,
 * meta.json, server_metrics.csv, gpu.csv) back into the records the
 * analysis works on. Fast enough for millions of rows: the files are mapped
 * and parsed in place, with a number parser for the fixed formats servelab
 * writes. A malformed row is an error naming file and line. */
#ifndef SERVELAB_REPORT_LOAD_H
#define SERVELAB_REPORT_LOAD_H

#include "analysis/serverstats.h"
#include "analysis/summary.h"
#include "common/csv.h"

#include <jansson.h>

typedef struct run_files {
    json_t *meta;    /* NULL when missing */
    int has_summary; /* summary.json is there (a run that was not cut short wrote it) */
    int has_chunks;
    series_set metrics; /* server_metrics.csv: the metrics servelab keeps */
    series_set gpu;     /* gpu.csv: "gpuN util_pct", "gpuN power_w" */
    server_stats server;
} run_files;

/* Appends the run in `dir` to `rows` as part `part`; class names are
 * interned into rows->classes. Returns -1 with "file:line: what" in err. */
int load_run(const char *dir, int part, run_rows *rows, run_files *files, char *err, int errlen);
void run_files_free(run_files *f);
/* server_metrics.csv and gpu.csv of the run in dir into files->metrics,
 * files->gpu and files->server (what load_run reads beside the rows). */
void load_samples(const char *dir, run_files *files);

/* Rows handed over one at a time, each exactly as load_run would take it
 * from the file: for a reader that has the rows in hand as it writes them
 * (merge), so that it need not read back what it wrote. Requests first
 * (the header, then the rows), then the chunk rows without their header
 * (their window ends at the last scheduled request). Each returns 0, or -1
 * with "path:line: what" in err. The caller zeroes the struct, sets rows
 * and part, and feed_free()s it. The requests and the chunks touch apart
 * parts of the struct and of rows, so two threads may feed one each once
 * window_ms is given. */
#define ROWS_FEED_COLUMNS 40
typedef struct rows_feed {
    run_rows *rows;
    int part;
    /* Where the chunks' window ends, for a caller that feeds the chunks
     * while the requests are still being fed (merge: the largest
     * scheduled_ms the requests will read as, or 0 when below); set with
     * window_given. Else the requests fed so far say. */
    double window_ms;
    int window_given;
    /* private */
    int header_read, ncols, col[ROWS_FEED_COLUMNS];
    double last_sched;
    char *prev_id; /* the previous chunk row's request id */
    size_t prev_len, prev_cap;
    int have_prev, gaps_started;
    double prev_t;
} rows_feed;
int feed_requests_header(rows_feed *f, const csv_row *header, const char *path, char *err,
                         int errlen);
int feed_request(rows_feed *f, const csv_row *row, const char *path, int line, char *err,
                 int errlen);
int feed_chunk(rows_feed *f, const csv_row *row, const char *path, int line, char *err, int errlen);
void feed_free(rows_feed *f);

/* A run's summary parameters from its meta.json (NULL: none known): the
 * offered rate (NAN without meta.json, INFINITY for inf), the SLO (slo, when
 * not NULL, in place of the run's own) and the cost basis (cost_per_hour,
 * when > 0, in place of the run's own). 0, or -1 with why the SLO does not
 * parse in err. */
int meta_summary_params(json_t *meta, const char *slo, double cost_per_hour, summary_params *p,
                        char *err, int errlen);

#endif

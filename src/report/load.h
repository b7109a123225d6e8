/* load: reads what a run left on disk (requests.csv, chunks.csv,
 * meta.json, server_metrics.csv, gpu.csv) back into the records the
 * analysis works on. Fast enough for millions of rows: the files are mapped
 * and parsed in place, with a number parser for the fixed formats servelab
 * writes. A malformed row is an error naming file and line. */
#ifndef SERVELAB_REPORT_LOAD_H
#define SERVELAB_REPORT_LOAD_H

#include "analysis/summary.h"

#include <jansson.h>

/* A sample series from server_metrics.csv or gpu.csv. */
typedef struct series {
    char name[64];
    double *t_ms, *v;
    size_t n, cap;
} series;

typedef struct run_files {
    json_t *meta; /* NULL when missing */
    int has_chunks;
    series *metrics; /* server_metrics.csv, one series per name+labels */
    int n_metrics;
    series *gpu; /* gpu.csv: util_pct, mem_used_mib, power_w per GPU */
    int n_gpu;
} run_files;

/* Appends the run in `dir` to `rows` as part `part`; class names are
 * interned into rows->classes. Returns -1 with "file:line: what" in err. */
int load_run(const char *dir, int part, run_rows *rows, run_files *files, char *err, int errlen);
void run_files_free(run_files *f);

#endif

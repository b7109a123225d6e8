/* load: reads what a run left on disk (requests.csv, chunks.csv,
 * meta.json, server_metrics.csv, gpu.csv) back into the records the
 * analysis works on. Fast enough for millions of rows: the files are mapped
 * and parsed in place, with a number parser for the fixed formats servelab
 * writes. A malformed row is an error naming file and line. */
#ifndef SERVELAB_REPORT_LOAD_H
#define SERVELAB_REPORT_LOAD_H

#include "analysis/serverstats.h"
#include "analysis/summary.h"

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

/* A run's summary parameters from its meta.json (NULL: none known): the
 * offered rate (NAN without meta.json, INFINITY for inf), the SLO (slo, when
 * not NULL, in place of the run's own) and the cost basis (cost_per_hour,
 * when > 0, in place of the run's own). 0, or -1 with why the SLO does not
 * parse in err. */
int meta_summary_params(json_t *meta, const char *slo, double cost_per_hour, summary_params *p,
                        char *err, int errlen);

#endif

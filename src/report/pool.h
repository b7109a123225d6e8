/* pool: one report_run built from its repetitions. The rows of every
 * repetition are loaded into one pooled set (req_rec.part = repetition),
 * the run's settings are read from the first repetition's meta.json, and
 * the summaries are computed: pooled, per repetition, per prompt class,
 * with bootstrap confidence intervals of the latency percentiles. */
#ifndef SERVELAB_REPORT_POOL_H
#define SERVELAB_REPORT_POOL_H

#include "report/report.h"

#include <stddef.h>

/* Fixed so that the same rows always give the same intervals. */
#define BOOTSTRAP_REPS 2000
#define BOOTSTRAP_SEED 0

/* Fills everything in rr but its name, repetition directories and
 * root_len, which discovery set. -1 with a message naming the file and
 * line of a malformed row, or the SLO that does not parse. */
int pool_run(report_run *rr, const report_opts *o, char *err, int errlen);
/* Its first part alone: every repetition's rows into rr->rows and the
 * run's settings into rr->params (no summary), for a caller that reads the
 * rows before summarize() sorts their gaps. The same errors. pool_unload
 * frees what it loaded (the rows, their class names, the files), leaving
 * what discovery set. */
int pool_load(report_run *rr, const report_opts *o, char *err, int errlen);
void pool_unload(report_run *rr);

/* The successful requests' TTFT (tpot 0) or TPOT (tpot 1) in ms, sorted
 * ascending, in a new array (*out, to free) of *n values. */
void pool_sorted_metric(const run_rows *rows, int tpot, double **out, size_t *n);

/* The smallest and largest TTFT p50 (p95 1) over the repetitions; NAN for
 * both when no repetition has one. */
void pool_rep_range(const report_run *rr, int p95, double *lo, double *hi);

#endif

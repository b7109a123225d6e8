/* shard_rows: a merged run's shards in its report (servelab merge,
 * sweep/merge.h): one key-figure row per shard from meta.json's
 * merged.from, with its host, requests, failures, schedule lag p99,
 * whether its client measured within 1 ms, and its clock's state. A run
 * that was not merged gets none. */
#ifndef SERVELAB_REPORT_SHARD_ROWS_H
#define SERVELAB_REPORT_SHARD_ROWS_H

#include "report/report.h"
#include "report/table.h"

/* Adds the rows to a two-column (figure, value) table. */
void shard_rows(const report_run *rr, table *t);

#endif

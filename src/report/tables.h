/* tables: the tables of the human-readable report (summary.md and
 * report.html): how the runs were measured, one overview line per run,
 * where TTFT went and the server's own account, and per run its key
 * figures, latency distributions, repetitions and prompt classes. Each
 * returns a new table for the caller to render and free. */
#ifndef SERVELAB_REPORT_TABLES_H
#define SERVELAB_REPORT_TABLES_H

#include "report/report.h"
#include "report/table.h"

/* Rows source, GPU, server, model, API, SLO, client host and tool, from
 * the first run's meta.json. */
table *meta_table(const report *r);
table *overview_table(const report *r);
/* Where TTFT went, one row per run that has the phase columns; and the
 * server's own account, one row per run whose server reported timings.
 * The report_has_ tests say whether any run has them (no table then). */
int report_has_phases(const report *r);
int report_has_server_account(const report *r);
table *phases_table(const report *r);
table *server_account_table(const report *r);
table *detail_table(const report_run *rr);
table *latency_table(const report_run *rr);
table *reps_table(const report_run *rr);
table *class_table(const report_run *rr);
/* Multi-turn runs: TTFT and the rest by turn (turn k carries k - 1 turns of
 * history, so its prefill grows with k). */
table *turn_table(const report_run *rr);

#endif

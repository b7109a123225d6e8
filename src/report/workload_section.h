/* workload_section: what a run asked of the server, from its meta.json:
 * the arrivals (process, rate, burstiness or the closed loop's
 * concurrency), how many requests or how long, the prompts and their mix,
 * the output cap, the warmup, the seed, the server's arguments in a sweep,
 * the command line, and when it started and ended. A reader can then tell
 * what load a figure's point stands for without opening the run. */
#ifndef SERVELAB_REPORT_WORKLOAD_SECTION_H
#define SERVELAB_REPORT_WORKLOAD_SECTION_H

#include "report/report.h"
#include "report/table.h"

/* A two-column table (setting, value); "unknown" where meta.json lacks it
 * (a run without meta.json: every row). */
table *workload_table(const report_run *rr);

#endif

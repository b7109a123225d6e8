/* server_proc_section: the server's process tree in a report, read from
 * each repetition's server_proc.csv (docs/files.md): rows for a run's key
 * figures (peak RSS, mean CPU, peak threads) and a figure of RSS and CPU%
 * over its first repetition. A run without the file gets neither, so a
 * report of runs that never sampled a server's processes is unchanged. */
#ifndef SERVELAB_REPORT_SERVER_PROC_SECTION_H
#define SERVELAB_REPORT_SERVER_PROC_SECTION_H

#include "common/strbuf.h"
#include "report/report.h"
#include "report/table.h"

#include <stddef.h>

/* Adds the rows to a two-column (figure, value) table. */
void server_proc_rows(const report_run *rr, table *t);
/* The figure's SVG into svg and its caption into cap: 1, or 0 (nothing
 * written) when the first repetition has fewer than two samples. */
int server_proc_figure(const report_run *rr, strbuf *svg, char *cap, size_t caplen);

#endif

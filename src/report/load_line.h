/* load_line: which runs a load figure connects and the report's answer
 * reads. Only runs that differ by offered load alone belong on one line:
 * the largest group of runs sharing their other settings (the first on
 * ties). The figures and the capacity sentence use the same group, so the
 * sentence never speaks of runs the figure does not show. With several
 * campaigns (`report A B`), each campaign has its own line. */
#ifndef SERVELAB_REPORT_LOAD_LINE_H
#define SERVELAB_REPORT_LOAD_LINE_H

#include <stddef.h>

struct report;

/* in[k] = 1 for the runs on the line of campaign `campaign` (its
 * campaign_index), or on every campaign's line when it is -1 (r->n_runs
 * entries); the names of the others as "a, b" into left_out; the number of
 * runs on the line(s). */
int load_line_runs(const struct report *r, int campaign, int *in, char *left_out, size_t cap);

#endif

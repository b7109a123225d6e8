/* discover: which runs a report covers. Every directory holding a
 * requests.csv under the given paths is a run directory; rep-K directories
 * of one parent are the repetitions of one run and are grouped under the
 * parent's name. Directories are visited in sorted order so that the same
 * tree always gives the same runs in the same order. */
#ifndef SERVELAB_REPORT_DISCOVER_H
#define SERVELAB_REPORT_DISCOVER_H

#include "report/report.h"

/* Fills r->runs with each run's name, repetition directories and root_len,
 * nothing else (r is zeroed first). -1 with a message when a path is not a
 * directory or no run directory lies under any of them. */
int discover_runs(char *const *paths, int n_paths, report *r, char *err, int errlen);

#endif

/* figures: the SVG figures of a report, each kept as a file of its own
 * (figures/NAME.svg) and inlined in report.html. Figures across runs show
 * how latency, throughput and server queueing change with the offered
 * load and how TTFT is distributed; figures of one run show each request's
 * timeline and the server and GPU during the run. */
#ifndef SERVELAB_REPORT_FIGURES_H
#define SERVELAB_REPORT_FIGURES_H

#include "common/strbuf.h"
#include "report/report.h"

typedef struct figure {
    char file[256]; /* figures/NAME.svg */
    char caption[1600];
    strbuf svg;
} figure;

/* Append the figures that compare the runs to *figs (*n of them, the array
 * grown as needed; the caller frees it and owns each svg). */
void figures_across_runs(const report *r, figure **figs, int *n);
/* Append the figures of run k (its first repetition) the same way. Their
 * files are named after the run, one to one (runs of the same name told
 * apart by their order), so no two runs share a figure file. */
void figures_of_run(const report *r, int k, figure **figs, int *n);

#endif

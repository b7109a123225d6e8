/* comparison: two run or campaign directories read as `servelab report`
 * reads them, their runs paired, and every pair's figures compared
 * (analysis/compare.h). Runs are paired by name (a campaign's RUN, its
 * repetitions pooled); when each side is one run, the two are paired
 * whatever their names, so that two plain run directories compare. A run
 * on one side only is listed, not compared.
 *
 * Both runs of a pair are judged by one SLO, since a change of SLO is not
 * a change of the server: the one given (compare --slo), else the base's,
 * else the new run's; a note says when the new run had recorded another.
 * Pairs are computed one at a time, so memory holds two runs' rows at
 * most, whatever the campaigns' size. */
#ifndef SERVELAB_COMPARISON_H
#define SERVELAB_COMPARISON_H

#include "analysis/compare.h"
#include "analysis/gate.h"
#include "analysis/summary.h"

#include <stdint.h>

typedef struct compared_run {
    char name[600]; /* the runs' name, or "BASE_NAME vs NEW_NAME" when they differ */
    run_summary base, new_;
    figure_change fig[FIG_COUNT];
    char note[800]; /* "" or why the SLO is not the new run's own, and the workloads' differences */
} compared_run;

typedef struct comparison {
    const char *base_dir, *new_dir; /* as given */
    int resamples;
    uint64_t seed;
    compared_run *runs;
    int n_runs;
    char **only_base, **only_new; /* names of the runs on one side only */
    int n_only_base, n_only_new;
} comparison;

typedef struct comparison_opts {
    const char *slo; /* judge both sides by this SLO; NULL: as above */
    int resamples;
    uint64_t seed;
} comparison_opts;

/* 0, or -1 with one line in err: a directory that is not a run or a
 * campaign ("DIR: not a run or campaign directory ..."), a row that does
 * not read (file:line), an SLO that does not parse, no run in common. c
 * then holds nothing to free. */
int comparison_build(const char *base_dir, const char *new_dir, const comparison_opts *o,
                     comparison *c, char *err, int errlen);
void comparison_free(comparison *c);

/* How many (gate, run) pairs trip (analysis/gate.h). */
int comparison_trips(const comparison *c, const gate *g, int n_gates);
/* The first gate whose figure no compared run measures on both sides (a
 * goodput gate on runs without an SLO), or -1. */
int comparison_unmeasured_gate(const comparison *c, const gate *g, int n_gates);

#endif

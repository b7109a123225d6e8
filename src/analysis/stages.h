/* stages: a rate plan's stages summarised from the rows, one summary per
 * stage window, so that a run that steps or ramps its load reads as the
 * sequence of loads it offered. `servelab run` writes them into
 * summary.json and `servelab report` into its per-stage table, from the
 * same rows by the same function.
 *
 * A request belongs to the stage its scheduled time falls in ([start, end)
 * on the schedule clock). Multi-turn, the schedule's arrivals are
 * conversations: the counts and arrival rates are of their first turns,
 * the latencies of every turn scheduled in the window. Latencies are
 * summarize()'s (summary.h), from send; pooled repetitions (req_rec.part)
 * add their counts and divide their rates by the repetitions. */
#ifndef SERVELAB_STAGES_H
#define SERVELAB_STAGES_H

#include "analysis/summary.h"
#include "model/record.h"

#include <jansson.h>
#include <stddef.h>

/* One stage as the plan offered it: its window and its rates at either end
 * (equal for a constant stage). */
typedef struct stage_window {
    double start_s, end_s;
    double from_rps, to_rps;
    int ramp;
} stage_window;

typedef struct stage_summary {
    stage_window w;
    double offered_rps;    /* the plan's mean rate over the window */
    double planned;        /* offered_rps * length: the arrivals the plan expects, per repetition */
    size_t scheduled;      /* arrivals the schedule put in the window (all repetitions) */
    size_t sent;           /* of them, those the client sent within the window */
    size_t completions;    /* requests (every turn) that ended successfully within the window */
    double realized_rps;   /* scheduled / length: the rate the schedule drew */
    double arrived_rps;    /* sent / length: the rate that reached the server */
    double completed_rps;  /* completions / length */
    run_summary latencies; /* of the requests scheduled in the window */
} stage_summary;

/* The n stages' summaries into out[0..n). */
void stages_summarize(const run_rows *rows, const stage_window *w, int n, stage_summary *out);
/* summary.json's `stages`: an array of one object a stage. */
json_t *stages_json(const stage_summary *s, int n);
/* The windows of a plan as meta.json's rate_plan.stages records them, and
 * read back from there (the report's source): -1 when `stages` is not such
 * an array, in order and not overlapping; else their count, at most max,
 * into w. */
json_t *stage_windows_json(const stage_window *w, int n);
int stages_from_json(const json_t *stages, stage_window *w, int max);

#endif

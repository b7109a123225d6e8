/* stages_section: reads the plan's windows back from meta.json, summarises
 * the rows by them (analysis/stages.c) and lays the summaries out. */
#include "report/stages_section.h"
#include "analysis/stages.h"
#include "common/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define STAGES_MAX 256

/* The run's windows into w; their count, 0 when it has no plan. */
static int windows_of(const report_run *rr, stage_window *w) {
    json_t *plan = json_object_get(rr->files[0].meta, "rate_plan");
    int n = stages_from_json(json_object_get(plan, "stages"), w, STAGES_MAX);
    return n > 0 ? n : 0;
}

/* The summaries of the run's stages (malloc'd), or NULL when it has none. */
static stage_summary *summaries_of(const report_run *rr, int *n) {
    stage_window w[STAGES_MAX];
    *n = windows_of(rr, w);
    if (!*n)
        return NULL;
    stage_summary *s = xcalloc((size_t)*n, sizeof *s);
    stages_summarize(&rr->rows, w, *n, s);
    return s;
}

static void plan_text(const stage_window *w, char *buf, size_t cap) {
    if (w->ramp)
        snprintf(buf, cap, "ramp %g-%g req/s", w->from_rps, w->to_rps);
    else
        snprintf(buf, cap, "%g req/s", w->from_rps);
}

static void add_stage_row(table *t, const stage_summary *s, int k) {
    const run_summary *l = &s->latencies;
    char b[14][48];
    snprintf(b[0], sizeof b[0], "%d", k + 1);
    plan_text(&s->w, b[1], sizeof b[1]);
    snprintf(b[2], sizeof b[2], "%g-%g", s->w.start_s, s->w.end_s);
    format_number(b[3], s->offered_rps, 2);
    snprintf(b[4], sizeof b[4], "%zu", s->scheduled);
    format_number(b[5], s->realized_rps, 2);
    format_number(b[6], s->arrived_rps, 2);
    format_number(b[7], s->completed_rps, 2);
    format_number(b[8], l->ttft.p50, 2);
    format_number(b[9], l->ttft.p95, 2);
    format_number(b[10], l->ttft.p99, 2);
    format_number(b[11], l->tpot.p50, 2);
    format_number(b[12], l->e2e.p50, 1);
    format_number(b[13], l->e2e.p95, 1);
    const char *cells[14];
    for (int c = 0; c < 14; c++)
        cells[c] = b[c];
    table_add_row(t, cells);
}

table *stage_table(const report_run *rr) {
    int n;
    stage_summary *s = summaries_of(rr, &n);
    if (!s)
        return NULL;
    const char *h[] = {"stage",     "plan",           "window (s)",    "offered req/s",
                       "scheduled", "realized req/s", "arrived req/s", "completed req/s",
                       "TTFT p50",  "TTFT p95",       "TTFT p99",      "TPOT p50",
                       "E2E p50",   "E2E p95"};
    table *t = table_new(14, h);
    for (int k = 0; k < n; k++)
        add_stage_row(t, &s[k], k);
    free(s);
    return t;
}

json_t *stage_summaries_json(const report_run *rr) {
    int n;
    stage_summary *s = summaries_of(rr, &n);
    if (!s)
        return NULL;
    json_t *j = stages_json(s, n);
    free(s);
    return j;
}

int stage_marks(const report_run *rr, plot_rule *rules, char labels[][STAGE_LABEL_LEN]) {
    stage_window w[STAGES_MAX];
    int n = windows_of(rr, w), m = 0;
    for (int k = 1; k <= n && m < STAGE_MARKS_MAX; k++) {
        char plan[40];
        if (k < n) {
            plan_text(&w[k], plan, sizeof plan);
            snprintf(labels[m], STAGE_LABEL_LEN, "stage %d: %s", k + 1, plan);
        } else {
            snprintf(labels[m], STAGE_LABEL_LEN, "plan ends");
        }
        double at = k < n ? w[k].start_s : w[n - 1].end_s;
        rules[m] = (plot_rule){1, at, NAN, NAN, labels[m], 8, 1};
        m++;
    }
    return m;
}

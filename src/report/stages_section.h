/* stages_section: a rate plan's stages in the report: the per-stage table
 * of a run (offered, scheduled and achieved rates, latencies), its object
 * in the report's summary.json, and the marks at the stages' starts in the
 * run's timeline. The stages are those meta.json's rate_plan records (the
 * first repetition's: a run's repetitions share their options); the figures
 * are analysis/stages.h's, from every repetition's rows. A run without a
 * plan gets none of them. */
#ifndef SERVELAB_REPORT_STAGES_SECTION_H
#define SERVELAB_REPORT_STAGES_SECTION_H

#include "report/report.h"
#include "report/svg.h"
#include "report/table.h"

#include <jansson.h>

#define STAGE_MARKS_MAX 64
#define STAGE_LABEL_LEN 64

/* The table, or NULL when the run has no plan. */
table *stage_table(const report_run *rr);
/* summary.json's stages for the run, or NULL when it has no plan. */
json_t *stage_summaries_json(const report_run *rr);
/* Vertical marks at each stage's start after the first and at the plan's
 * end, labelled in labels[k]; their count (at most STAGE_MARKS_MAX: a plan
 * of more stages is marked at its first ones). */
int stage_marks(const report_run *rr, plot_rule *rules, char labels[][STAGE_LABEL_LEN]);

#endif

/* comparison_render: a comparison (report/comparison.h) as a terminal
 * table, as GitHub-flavoured Markdown for a pull request's comment, and as
 * JSON for scripts. Each compared run is one table (figure, base, new,
 * change, its 95% interval, verdict); the runs on one side only follow,
 * then every --fail-on gate with the runs it tripped on. Changes are
 * relative to the base ("+12.3%"), or in the figure's unit where the base
 * is 0. */
#ifndef SERVELAB_COMPARISON_RENDER_H
#define SERVELAB_COMPARISON_RENDER_H

#include "analysis/gate.h"
#include "common/strbuf.h"
#include "report/comparison.h"

#include <jansson.h>

void comparison_text(const comparison *c, const gate *g, int n_gates, strbuf *out);
void comparison_markdown(const comparison *c, const gate *g, int n_gates, strbuf *out);
/* {base, new, resamples, seed, confidence, runs: [{name, base_requests,
 * new_requests, note, figures: {NAME: {base, new, change, change_pct,
 * ci, ci_pct, verdict}}}], only_in_base, only_in_new, fail_on: [{gate,
 * tripped_by: [run...]}], regressed} */
json_t *comparison_json(const comparison *c, const gate *g, int n_gates);

#endif

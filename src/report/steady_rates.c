/* steady_rates: one pass per repetition over the pooled rows (req_rec.part
 * is the repetition), the median through the stats module. */
#include "report/steady_rates.h"
#include "analysis/stats.h"
#include "common/util.h"

#include <math.h>
#include <stdlib.h>

/* Repetition p's completions in its shifted window, their output tokens,
 * and the window's length in ms (0 when it has none). */
static void one_part(const run_rows *rows, int p, double *count, double *tokens, double *window) {
    double *lat = xmalloc((rows->n ? rows->n : 1) * sizeof *lat), w = 0;
    size_t m = 0;
    for (size_t i = 0; i < rows->n; i++) {
        const req_rec *r = &rows->r[i];
        if (r->part != p)
            continue;
        w = fmax(w, r->scheduled_ms);
        if (r->error == ERR_NONE && isfinite(r->end_ms))
            lat[m++] = r->end_ms - r->scheduled_ms;
    }
    *count = *tokens = 0;
    *window = m ? w : 0;
    if (m) {
        sort_doubles(lat, m);
        double shift = percentile_sorted(lat, m, 50);
        for (size_t i = 0; i < rows->n; i++) {
            const req_rec *r = &rows->r[i];
            if (r->part == p && r->error == ERR_NONE && r->end_ms >= shift &&
                r->end_ms <= w + shift) {
                *count += 1;
                *tokens += r->output_tokens > 0 ? r->output_tokens : 0;
            }
        }
    }
    free(lat);
}

void steady_rates(const report_run *rr, double *requests_per_s, double *tokens_per_s) {
    double count = 0, tokens = 0, window_ms = 0;
    for (int p = 0; p < rr->n_reps; p++) {
        double c, t, w;
        one_part(&rr->rows, p, &c, &t, &w);
        count += c;
        tokens += t;
        window_ms += w;
    }
    *requests_per_s = window_ms > 0 ? count / (window_ms / 1000) : NAN;
    *tokens_per_s = window_ms > 0 ? tokens / (window_ms / 1000) : NAN;
}

/* stages: every row goes to its stage in one pass (the windows are in
 * order, so a binary search finds it), and each stage's rows are then
 * summarised by summarize() itself, so a stage's TTFT is defined exactly as
 * the run's is. */
#include "analysis/stages.h"
#include "common/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The stage whose window holds t_ms; -1 when none does. */
static int stage_of(const stage_window *w, int n, double t_ms) {
    double t = t_ms / 1000;
    if (isnan(t) || n <= 0 || t < w[0].start_s || t >= w[n - 1].end_s)
        return -1;
    int lo = 0, hi = n - 1;
    while (lo < hi) { /* the last window starting at or before t */
        int mid = (lo + hi + 1) / 2;
        if (w[mid].start_s <= t)
            lo = mid;
        else
            hi = mid - 1;
    }
    return t < w[lo].end_s ? lo : -1;
}

static int parts_of(const run_rows *rows) {
    int parts = 1;
    for (size_t i = 0; i < rows->n; i++)
        if (rows->r[i].part + 1 > parts)
            parts = rows->r[i].part + 1;
    return parts;
}

/* A schedule's own arrival: every request, or a conversation's first turn. */
static int is_arrival(const req_rec *r) {
    return r->turn <= 1;
}

/* The counts of one row: its arrival in the stage it was scheduled in, its
 * send if that stage also saw it go, its end in the stage it ended in. */
static void count_row(const req_rec *r, const stage_window *w, int n, int at, stage_summary *out) {
    if (at >= 0 && is_arrival(r)) {
        out[at].scheduled++;
        out[at].sent += stage_of(w, n, r->sent_ms) == at;
    }
    int ended = r->error == ERR_NONE ? stage_of(w, n, r->end_ms) : -1;
    if (ended >= 0)
        out[ended].completions++;
}

void stages_summarize(const run_rows *rows, const stage_window *w, int n, stage_summary *out) {
    memset(out, 0, (size_t)(n > 0 ? n : 0) * sizeof *out);
    run_rows *sub = xcalloc((size_t)(n > 0 ? n : 1), sizeof *sub);
    for (size_t i = 0; i < rows->n; i++) {
        const req_rec *r = &rows->r[i];
        int at = stage_of(w, n, r->scheduled_ms);
        count_row(r, w, n, at, out);
        if (at >= 0)
            rows_add(&sub[at], r);
    }
    double parts = parts_of(rows);
    for (int k = 0; k < n; k++) {
        stage_summary *s = &out[k];
        double len = (w[k].end_s - w[k].start_s) * parts;
        s->w = w[k];
        s->offered_rps = (w[k].from_rps + w[k].to_rps) / 2;
        s->planned = s->offered_rps * (w[k].end_s - w[k].start_s);
        s->realized_rps = len > 0 ? (double)s->scheduled / len : NAN;
        s->arrived_rps = len > 0 ? (double)s->sent / len : NAN;
        s->completed_rps = len > 0 ? (double)s->completions / len : NAN;
        summary_params p = {.offered_rps = s->offered_rps, .client_cpu_s = -1};
        summarize(&sub[k], &p, &s->latencies);
        rows_free(&sub[k]);
    }
    free(sub);
}

static json_t *num(double x) {
    return isfinite(x) ? json_real(x) : json_null();
}

/* The window's own keys, shared by meta.json's plan and summary.json. */
static json_t *window_json(const stage_window *w, int k) {
    return json_pack("{s:i,s:s,s:o,s:o,s:o,s:o,s:o}", "stage", k + 1, "kind",
                     w->ramp ? "ramp" : "constant", "start_s", num(w->start_s), "end_s",
                     num(w->end_s), "from_rps", num(w->from_rps), "to_rps", num(w->to_rps),
                     "offered_rps", num((w->from_rps + w->to_rps) / 2));
}

json_t *stages_json(const stage_summary *s, int n) {
    json_t *a = json_array();
    for (int k = 0; k < n; k++) {
        const run_summary *l = &s[k].latencies;
        json_t *o = window_json(&s[k].w, k);
        json_object_set_new(o, "planned_requests", num(s[k].planned));
        json_object_set_new(o, "scheduled_requests", json_integer((json_int_t)s[k].scheduled));
        json_object_set_new(o, "realized_rps", num(s[k].realized_rps));
        json_object_set_new(o, "sent_requests", json_integer((json_int_t)s[k].sent));
        json_object_set_new(o, "arrived_rps", num(s[k].arrived_rps));
        json_object_set_new(o, "completions", json_integer((json_int_t)s[k].completions));
        json_object_set_new(o, "completed_rps", num(s[k].completed_rps));
        json_object_set_new(o, "requests", json_integer((json_int_t)l->requests));
        json_object_set_new(o, "completed", json_integer((json_int_t)l->completed));
        json_object_set_new(o, "failed", json_integer((json_int_t)l->failed));
        json_object_set_new(o, "ttft_ms", dist_json(&l->ttft));
        json_object_set_new(o, "tpot_ms", dist_json(&l->tpot));
        json_object_set_new(o, "e2e_ms", dist_json(&l->e2e));
        json_array_append_new(a, o);
    }
    return a;
}

json_t *stage_windows_json(const stage_window *w, int n) {
    json_t *a = json_array();
    for (int k = 0; k < n; k++)
        json_array_append_new(a, window_json(&w[k], k));
    return a;
}

static int read_number(const json_t *o, const char *key, double *v) {
    const json_t *x = json_object_get(o, key);
    if (!json_is_number(x))
        return -1;
    *v = json_number_value(x);
    return 0;
}

int stages_from_json(const json_t *stages, stage_window *w, int max) {
    if (!json_is_array(stages))
        return -1;
    int n = 0;
    for (size_t i = 0; i < json_array_size(stages) && n < max; i++) {
        const json_t *o = json_array_get(stages, i);
        stage_window s = {0};
        const json_t *kind = json_object_get(o, "kind");
        if (read_number(o, "start_s", &s.start_s) || read_number(o, "end_s", &s.end_s) ||
            read_number(o, "from_rps", &s.from_rps) || read_number(o, "to_rps", &s.to_rps) ||
            !(s.end_s > s.start_s) || (n && s.start_s < w[n - 1].end_s))
            return -1;
        s.ramp = json_is_string(kind) && !strcmp(json_string_value(kind), "ramp");
        w[n++] = s;
    }
    return n;
}

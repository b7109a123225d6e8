/* answer: the search's answer from its probes, and capacity.json (see
 * answer.h). Numbers that do not apply are null, never 0, so a reader
 * cannot take "not found" for a capacity of nothing. */
#include "capacity/answer.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Requests of probe p that failed (not cut short by a stop). */
static long failures(const probe *p) {
    long n = 0;
    for (int e = 1; e < ERR_COUNT; e++)
        if (e != ERR_CANCELLED)
            n += p->failed[e];
    return n;
}

int capacity_result_binding(const capacity_result *a) {
    long by[SLO_BOUNDS] = {0}, all[SLO_BOUNDS] = {0}, failed = 0, missed = 0;
    for (int i = 0; i < a->n_probes; i++) {
        if (a->probes[i].max_users)
            continue; /* the throughput probe is meant to miss */
        if (!a->probes[i].passed) {
            failed += failures(&a->probes[i]);
            missed += a->probes[i].requests - a->probes[i].met - a->probes[i].unfinished;
        }
        for (int b = 0; b < SLO_BOUNDS; b++) {
            all[b] += a->probes[i].missed[b];
            if (!a->probes[i].passed)
                by[b] += a->probes[i].missed[b];
        }
    }
    if (failed > 0 && 2 * failed >= missed)
        return ANSWER_FAILURES; /* most misses are requests that failed, not latencies */
    const long *use = by[0] + by[1] + by[2] + by[3] > 0 ? by : all;
    int best = -1;
    for (int b = 0; b < SLO_BOUNDS; b++)
        if (slo_bound_ms(&a->ans.slo, b) > 0 && (best < 0 || use[b] > use[best]))
            best = b;
    return best < 0 ? 0 : best;
}

static json_t *num_or_null(double v) {
    return isfinite(v) ? json_real(v) : json_null();
}

static json_t *probe_core_json(const probe *p);

static json_t *failed_json(const probe *p) {
    json_t *j = json_object();
    for (int e = 1; e < ERR_COUNT; e++)
        if (p->failed[e])
            json_object_set_new(j, err_class_name(e), json_integer((json_int_t)p->failed[e]));
    return j;
}

/* The keep-up test's figures (steady.h): the wait's drift over the second
 * half of the arrivals, ms a second, with its one-sided 97.5% ends. */
static json_t *keep_up_json(const probe *p) {
    return json_pack("{s:o,s:o,s:o,s:f,s:i,s:b}", "drift_ms_per_s", num_or_null(p->steady.slope),
                     "drift_low", num_or_null(p->steady.slope_low), "drift_high",
                     num_or_null(p->steady.slope_high), "window_s", p->steady.window_s, "points",
                     p->steady.points, "steady", !p->not_steady);
}

static json_t *probe_json(const probe *p) {
    json_t *j = probe_core_json(p);
    json_object_set_new(j, "confirmation", json_boolean(p->confirm));
    json_object_set_new(j, "lagged", json_boolean(p->lagged));
    json_object_set_new(j, "duration_s", num_or_null(p->duration_s));
    json_object_set_new(j, "keep_up", keep_up_json(p));
    json_object_set_new(j, "failed", failed_json(p));
    json_object_set_new(j, "first_error",
                        p->error_words[0] ? json_string(p->error_words) : json_null());
    json_object_set_new(j, "drain",
                        json_pack("{s:s,s:f,s:f,s:f,s:o,s:o}", "state",
                                  drain_state_name(p->drain.state), "waited_s", p->drain.waited_s,
                                  "running", p->drain.running, "waiting", p->drain.waiting,
                                  "lone_ms", num_or_null(p->drain.lone_ms), "baseline_ms",
                                  num_or_null(p->drain.baseline_ms)));
    return j;
}

static json_t *probe_core_json(const probe *p) {
    return json_pack("{s:s,s:o,s:o,s:I,s:I,s:I,s:f,s:f,s:f,s:b,s:b,s:s?,s:f,s:b}", "dir", p->dir,
                     "rate_rps", num_or_null(p->rate_rps), "concurrency",
                     p->concurrency ? json_integer(p->concurrency) : json_null(), "seed",
                     (json_int_t)p->seed, "requests", (json_int_t)p->requests, "met",
                     (json_int_t)p->met, "met_share",
                     p->requests ? (double)p->met / (double)p->requests : 0.0, "ci_low", p->ci_low,
                     "ci_high", p->ci_high, "passed", p->passed, "stopped_early", p->stopped != 0,
                     "why_stopped", p->stopped && p->why[0] ? p->why : NULL, "wall_s", p->wall_s,
                     "client_within_1ms", !p->client_flagged);
}

/* The confirmation run at the answer: its load, requests, length, share
 * met and drift. */
static json_t *confirmation_json(const capacity_result *a) {
    if (a->confirm_probe < 0)
        return json_null();
    const probe *p = &a->probes[a->confirm_probe];
    return json_pack("{s:s,s:o,s:o,s:I,s:o,s:f,s:b,s:o}", "dir", p->dir, "rate_rps",
                     num_or_null(p->rate_rps), "concurrency",
                     p->concurrency ? json_integer(p->concurrency) : json_null(), "requests",
                     (json_int_t)p->requests, "duration_s", num_or_null(p->duration_s), "met_share",
                     p->requests ? (double)p->met / (double)p->requests : 0.0, "passed", p->passed,
                     "drift", keep_up_json(p));
}

/* The throughput probe: what the server completed when kept busy. */
static json_t *throughput_json(const capacity_result *a) {
    if (a->tp_probe < 0)
        return json_null();
    const probe *p = &a->probes[a->tp_probe];
    const throughput_fit *t = &p->tp;
    return json_pack("{s:s,s:I,s:o,s:o,s:o,s:I,s:f,s:o,s:b,s:b}", "dir", p->dir, "users",
                     (json_int_t)p->max_users, "rate_rps", num_or_null(t->rate_rps), "ci_low_rps",
                     num_or_null(t->low_rps), "ci_high_rps", num_or_null(t->high_rps), "counted",
                     (json_int_t)t->counted, "window_s", t->window_s, "ttft_ms",
                     num_or_null(t->ttft_ms), "saturated", t->saturated, "bounds_the_answer",
                     a->tp_used);
}

json_t *capacity_result_json(const capacity_result *r) {
    json_t *probes = json_array();
    for (int i = 0; i < r->n_probes; i++)
        json_array_append_new(probes, probe_json(&r->probes[i]));
    json_t *j = answer_json(&r->ans);
    json_object_set_new(j, "confirmation", confirmation_json(r));
    json_object_set_new(j, "throughput", throughput_json(r));
    json_object_set_new(j, "wait_budget_ms", num_or_null(r->budget_ms));
    json_object_set_new(j, "probes", probes);
    return j;
}

void capacity_result_finish(capacity_result *r) {
    capacity_answer *a = &r->ans;
    a->binding = capacity_result_binding(r);
    a->failure[0] = 0;
    for (int i = 0; i < r->n_probes && a->binding == ANSWER_FAILURES && !a->failure[0]; i++)
        if (!r->probes[i].passed && !r->probes[i].max_users)
            snprintf(a->failure, sizeof a->failure, "%s", r->probes[i].error_words);
    a->none_succeeded = r->n_probes > 0 && r->probes[0].met == 0;
    a->tries = r->n_probes;
    const probe *c = r->confirm_probe >= 0 ? &r->probes[r->confirm_probe] : NULL;
    a->confirmed = a->status == ANSWER_FOUND && c && c->passed;
    a->confirm_load = !c ? NAN : a->by_concurrency ? (double)c->concurrency : c->rate_rps;
    a->confirm_s = c ? c->duration_s : NAN;
    const probe *b = r->best >= 0 ? &r->probes[r->best] : NULL;
    a->at_in_flight = b ? b->in_flight : NAN;
    a->at_goodput_rps = b ? b->goodput_rps : NAN;
    a->at_tokens_per_s = b ? b->output_tokens_per_s : NAN;
}

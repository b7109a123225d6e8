/* answer: capacity.json and the sentence (see answer.h). Numbers that do
 * not apply are null, never 0, so a reader cannot take "not found" for a
 * capacity of nothing. */
#include "capacity/answer.h"
#include "capacity/slo_check.h"

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

int capacity_answer_binding(const capacity_answer *a) {
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
        return BINDING_FAILURES; /* most misses are requests that failed, not latencies */
    const long *use = by[0] + by[1] + by[2] + by[3] > 0 ? by : all;
    int best = -1;
    for (int b = 0; b < SLO_BOUNDS; b++)
        if (slo_bound_ms(&a->slo, b) > 0 && (best < 0 || use[b] > use[best]))
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
    json_object_set_new(j, "duration_s", num_or_null(p->duration_s));
    json_object_set_new(j, "keep_up", keep_up_json(p));
    json_object_set_new(j, "failed", failed_json(p));
    json_object_set_new(j, "first_error",
                        p->error_words[0] ? json_string(p->error_words) : json_null());
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

static json_t *at_answer_json(const capacity_answer *a) {
    if (a->best < 0)
        return json_null();
    const probe *p = &a->probes[a->best];
    return json_pack("{s:o,s:o,s:o}", "concurrency_in_flight", num_or_null(p->in_flight),
                     "goodput_rps", num_or_null(p->goodput_rps), "output_tokens_per_s",
                     num_or_null(p->output_tokens_per_s));
}

int capacity_answer_confirmed(const capacity_answer *a) {
    return a->status == CAP_FOUND && a->confirm_probe >= 0 && a->probes[a->confirm_probe].passed;
}

/* The confirmation run at the answer: its load, requests, length, share
 * met and drift. */
static json_t *confirmation_json(const capacity_answer *a) {
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
static json_t *throughput_json(const capacity_answer *a) {
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

static const char *status_name(int s) {
    return s == CAP_FOUND ? "found" : s == CAP_NOT_REACHED ? "not_reached" : "missed_at_lowest";
}

json_t *capacity_answer_json(const capacity_answer *a) {
    int found = a->status == CAP_FOUND;
    int rate = found && !a->by_concurrency, conc = found && a->by_concurrency;
    json_t *probes = json_array();
    for (int i = 0; i < a->n_probes; i++)
        json_array_append_new(probes, probe_json(&a->probes[i]));
    char sentence[1024];
    capacity_answer_sentence(a, sentence, sizeof sentence);
    json_t *j = json_pack("{s:s,s:f,s:o,s:s}", "by", a->by_concurrency ? "concurrency" : "rate",
                          "goal", a->goal, "slo", slo_json(&a->slo, SLO_JSON_THREE), "status",
                          status_name(a->status));
    json_object_set_new(j, "max_rate_rps", rate ? json_real(a->max) : json_null());
    json_object_set_new(j, "ci_low_rps", rate ? json_real(a->ci_low) : json_null());
    json_object_set_new(j, "ci_high_rps", rate ? json_real(a->ci_high) : json_null());
    json_object_set_new(j, "max_concurrency",
                        conc ? json_integer((json_int_t)a->max) : json_null());
    json_object_set_new(j, "ci_low_concurrency",
                        conc ? json_integer((json_int_t)a->ci_low) : json_null());
    json_object_set_new(j, "ci_high_concurrency",
                        conc ? json_integer((json_int_t)a->ci_high) : json_null());
    json_object_set_new(
        j, "binding",
        json_string(a->binding == BINDING_FAILURES ? "failures" : slo_bound_name(a->binding)));
    json_object_set_new(j, "confirmed", json_boolean(capacity_answer_confirmed(a)));
    json_object_set_new(j, "confirmation", confirmation_json(a));
    json_object_set_new(j, "upper_bound", json_boolean(a->upper_bound));
    json_object_set_new(j, "throughput", throughput_json(a));
    json_object_set_new(j, "wait_budget_ms", num_or_null(a->budget_ms));
    json_object_set_new(j, "probe_seconds", num_or_null(a->full_s));
    json_object_set_new(j, "probe_seconds_needed", num_or_null(a->need_s));
    json_object_set_new(j, "at_answer", at_answer_json(a));
    json_object_set_new(j, "sentence", json_string(sentence));
    json_object_set_new(j, "probes", probes);
    json_object_set_new(j, "wall_s", json_real(a->wall_s));
    return j;
}

/* "23.4 req/s" or "8 concurrent users". */
static void load_text(const capacity_answer *a, double v, char *buf, size_t n) {
    if (a->by_concurrency)
        snprintf(buf, n, "%.0f concurrent user%s", v, v == 1 ? "" : "s");
    else
        snprintf(buf, n, "%.3g req/s", v);
}

/* What binds, in words: "miss TTFT <= 750 ms", or "fail (connect: ...)". */
static void binding_text(const capacity_answer *a, char *buf, size_t n) {
    if (a->binding != BINDING_FAILURES) {
        char bound[64];
        slo_bound_human(&a->slo, a->binding, bound, sizeof bound);
        snprintf(buf, n, "miss %s", bound);
        return;
    }
    const char *words = "";
    for (int i = 0; i < a->n_probes && !words[0]; i++)
        if (!a->probes[i].passed && !a->probes[i].max_users)
            words = a->probes[i].error_words;
    snprintf(buf, n, "fail%s%s%s", words[0] ? " (" : "", words, words[0] ? ")" : "");
}

/* The answer's qualifiers after its interval: "; confirmed over 4.1 min at
 * 15.2 req/s", "; not confirmed", the search out of time. */
static void qualifiers(const capacity_answer *a, char *buf, size_t n) {
    buf[0] = 0;
    size_t len = 0;
    if (a->confirm_probe >= 0 && capacity_answer_confirmed(a)) {
        const probe *p = &a->probes[a->confirm_probe];
        char at[64];
        load_text(a, a->by_concurrency ? (double)p->concurrency : p->rate_rps, at, sizeof at);
        double d = p->duration_s;
        if (d >= 120)
            len +=
                (size_t)snprintf(buf + len, n - len, "; confirmed over %.1f min at %s", d / 60, at);
        else
            len += (size_t)snprintf(buf + len, n - len, "; confirmed over %.0f s at %s", d, at);
    } else if (a->confirm_asked) {
        len += (size_t)snprintf(buf + len, n - len, "; not confirmed");
    }
    if (a->stopped_by_time && len < n)
        snprintf(buf + len, n - len, "; the search ran out of --max-time");
}

void capacity_answer_sentence(const capacity_answer *a, char *buf, size_t n) {
    char bound[256], slo[256], at[64], miss[32], more[160];
    binding_text(a, bound, sizeof bound);
    slo_human(&a->slo, slo, sizeof slo);
    snprintf(miss, sizeof miss, "%.3g%%", 100 * (1 - a->goal));
    if (a->status == CAP_FOUND) {
        load_text(a, a->max, at, sizeof at);
        qualifiers(a, more, sizeof more);
        if (a->by_concurrency)
            snprintf(buf, n,
                     "users start waiting above %s (95%% CI %.0f-%.0f%s): beyond it more than %s "
                     "of requests %s",
                     at, a->ci_low, a->ci_high, more, miss, bound);
        else if (a->upper_bound)
            snprintf(buf, n,
                     "users start waiting at %s or below (95%% CI %.3g-%.3g%s): above it more "
                     "than %s of requests %s; an upper bound: to show an overload of %.3g%% a "
                     "probe needs %.0f s of arrivals and its probes had %.0f s",
                     at, a->ci_low, a->ci_high, more, miss, bound, 100 * a->precision, a->need_s,
                     a->full_s);
        else
            snprintf(buf, n,
                     "users start waiting at %s (95%% CI %.3g-%.3g%s): above it more than %s of "
                     "requests %s",
                     at, a->ci_low, a->ci_high, more, miss, bound);
    } else if (a->status == CAP_NOT_REACHED) {
        load_text(a, a->reached, at, sizeof at);
        snprintf(buf, n,
                 "not reached: at %s, the most probed%s, at least %.3g%% of requests still met "
                 "%s",
                 at, a->stopped_by_time ? " before --max-time" : "", 100 * a->goal, slo);
    } else if (a->binding == BINDING_FAILURES && a->n_probes > 0 && a->probes[0].met == 0) {
        load_text(a, a->lowest, at, sizeof at);
        snprintf(buf, n, "no request succeeded at %s, the lowest load: requests %s", at, bound);
    } else {
        load_text(a, a->lowest, at, sizeof at);
        snprintf(buf, n,
                 "already missed at the lowest load: at %s more than %s of requests %s "
                 "(lower --start-%s to look below it)",
                 at, miss, bound, a->by_concurrency ? "concurrency" : "rate");
    }
}

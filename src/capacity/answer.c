/* answer: capacity.json and the sentence (see answer.h). Numbers that do
 * not apply are null, never 0, so a reader cannot take "not found" for a
 * capacity of nothing. */
#include "capacity/answer.h"
#include "capacity/slo_check.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

int capacity_answer_binding(const capacity_answer *a) {
    long by[3] = {0}, all[3] = {0};
    for (int i = 0; i < a->n_probes; i++)
        for (int b = 0; b < 3; b++) {
            all[b] += a->probes[i].missed[b];
            if (!a->probes[i].passed)
                by[b] += a->probes[i].missed[b];
        }
    const long *use = by[0] + by[1] + by[2] > 0 ? by : all;
    double bounds[3] = {a->slo.ttft_ms, a->slo.tpot_ms, a->slo.e2e_ms};
    int best = -1;
    for (int b = 0; b < 3; b++)
        if (bounds[b] > 0 && (best < 0 || use[b] > use[best]))
            best = b;
    return best < 0 ? 0 : best;
}

static json_t *num_or_null(double v) {
    return isfinite(v) ? json_real(v) : json_null();
}

static json_t *slo_json(const slo_spec *s) {
    return json_pack("{s:o,s:o,s:o}", "ttft_ms",
                     s->ttft_ms > 0 ? json_real(s->ttft_ms) : json_null(), "tpot_ms",
                     s->tpot_ms > 0 ? json_real(s->tpot_ms) : json_null(), "e2e_ms",
                     s->e2e_ms > 0 ? json_real(s->e2e_ms) : json_null());
}

static json_t *probe_json(const probe *p) {
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
    json_t *j =
        json_pack("{s:s,s:f,s:o,s:s}", "by", a->by_concurrency ? "concurrency" : "rate", "goal",
                  a->goal, "slo", slo_json(&a->slo), "status", status_name(a->status));
    json_object_set_new(j, "max_rate_rps", rate ? json_real(a->max) : json_null());
    json_object_set_new(j, "ci_low_rps", rate ? json_real(a->ci_low) : json_null());
    json_object_set_new(j, "ci_high_rps", rate ? json_real(a->ci_high) : json_null());
    json_object_set_new(j, "max_concurrency",
                        conc ? json_integer((json_int_t)a->max) : json_null());
    json_object_set_new(j, "ci_low_concurrency",
                        conc ? json_integer((json_int_t)a->ci_low) : json_null());
    json_object_set_new(j, "ci_high_concurrency",
                        conc ? json_integer((json_int_t)a->ci_high) : json_null());
    json_object_set_new(j, "binding", json_string(slo_bound_name(a->binding)));
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

/* "TTFT <= 750 ms, TPOT <= 100 ms": every stated bound. */
static void slo_text(const slo_spec *s, char *buf, size_t n) {
    double bounds[3] = {s->ttft_ms, s->tpot_ms, s->e2e_ms};
    buf[0] = 0;
    for (int b = 0; b < 3; b++)
        if (bounds[b] > 0) {
            char one[64];
            slo_bound_text(s, b, one, sizeof one);
            size_t len = strlen(buf);
            snprintf(buf + len, n - len, "%s%s", len ? ", " : "", one);
        }
}

void capacity_answer_sentence(const capacity_answer *a, char *buf, size_t n) {
    char bound[64], slo[256], at[64], miss[32];
    slo_bound_text(&a->slo, a->binding, bound, sizeof bound);
    slo_text(&a->slo, slo, sizeof slo);
    snprintf(miss, sizeof miss, "%.3g%%", 100 * (1 - a->goal));
    if (a->status == CAP_FOUND) {
        load_text(a, a->max, at, sizeof at);
        if (a->by_concurrency)
            snprintf(buf, n,
                     "users start waiting above %s (95%% CI %.0f-%.0f): beyond it more than %s "
                     "of requests miss %s%s",
                     at, a->ci_low, a->ci_high, miss, bound,
                     a->stopped_by_time ? " (the search ran out of --max-time)" : "");
        else
            snprintf(buf, n,
                     "users start waiting at %s (95%% CI %.3g-%.3g): above it more than %s of "
                     "requests miss %s%s",
                     at, a->ci_low, a->ci_high, miss, bound,
                     a->stopped_by_time ? " (the search ran out of --max-time)" : "");
    } else if (a->status == CAP_NOT_REACHED) {
        load_text(a, a->reached, at, sizeof at);
        snprintf(buf, n,
                 "not reached: at %s, the most probed%s, at least %.3g%% of requests still met "
                 "%s",
                 at, a->stopped_by_time ? " before --max-time" : "", 100 * a->goal, slo);
    } else {
        load_text(a, a->lowest, at, sizeof at);
        snprintf(buf, n,
                 "already missed at the lowest load: at %s more than %s of requests miss %s "
                 "(lower --start-%s to look below it)",
                 at, miss, bound, a->by_concurrency ? "concurrency" : "rate");
    }
}

/* answer_text: the capacity answer said in words (the sentence a report
 * opens with) and in summary.json. One sentence whatever the source: the
 * claim first, then where it comes from, so a reader can tell a searched
 * answer with an interval from one interpolated between two runs. */
#include "report/answer.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void answer_slo_text(const slo_spec *slo, const char *only, char *buf, size_t cap) {
    const double v[4] = {slo->ttft_ms, slo->tpot_ms, slo->e2e_ms, slo->ttfa_ms};
    static const char *const key[4] = {"ttft", "tpot", "e2e", "ttfa"}, *const name[4] = {
                                                                           "TTFT", "TPOT", "E2E",
                                                                           "TTFA"};
    size_t used = 0;
    buf[0] = 0;
    for (int b = 0; b < 4; b++)
        if (v[b] > 0 && (!only || !only[0] || !strcmp(only, key[b])) && used < cap)
            used += (size_t)snprintf(buf + used, cap - used, "%s%s <= %g ms", used ? ", " : "",
                                     name[b], v[b]);
}

/* A load as the sentence says it: requests/s with one decimal (three
 * digits below 1), or a whole number of concurrent requests. */
static void load_text(const report_answer *a, double v, int unit, char *buf, size_t cap) {
    int conc = !strcmp(a->by, "concurrency");
    if (!isfinite(v))
        snprintf(buf, cap, "?");
    else if (conc)
        snprintf(buf, cap, "%.*f%s", v == floor(v) ? 0 : 1, v, unit ? " concurrent requests" : "");
    else
        snprintf(buf, cap, "%.*f%s", v < 1 ? 2 : 1, v, unit ? " req/s" : "");
}

/* What misses: the binding bound, or the whole SLO when none binds. */
static void miss_text(const report_answer *a, char *buf, size_t cap) {
    char slo[200];
    answer_slo_text(&a->slo, a->binding, slo, sizeof slo);
    if (a->binding[0])
        snprintf(buf, cap, "miss %s", slo);
    else
        snprintf(buf, cap, "fail or miss the SLO (%s)", slo);
}

/* Where the answer comes from, in parentheses. */
static void source_text(const report_answer *a, char *buf, size_t cap) {
    char lo[48], hi[48];
    if (!strcmp(a->source, "capacity.json")) {
        snprintf(buf, cap, "servelab capacity, capacity.json: %d probes", a->probes);
        return;
    }
    if (!strcmp(a->status, "found")) {
        load_text(a, a->bracket_lo, 1, lo, sizeof lo);
        load_text(a, a->bracket_hi, 1, hi, sizeof hi);
        snprintf(buf, cap,
                 "interpolated between the runs at %s, where %.1f%% met the SLO, and %s, where "
                 "%.1f%% did; %d runs on the load line, no confidence interval",
                 lo, 100 * a->share_at_lo, hi, 100 * a->share_at_hi, a->runs_on_line);
    } else {
        snprintf(buf, cap, "from %d run%s", a->runs_on_line, a->runs_on_line == 1 ? "" : "s");
    }
}

void answer_compose(report_answer *a) {
    char v[48], lo[48], hi[48], miss[240], src[320], slo[200];
    double pct = 100 * (1 - a->goal);
    load_text(a, a->value, 1, v, sizeof v);
    miss_text(a, miss, sizeof miss);
    source_text(a, src, sizeof src);
    answer_slo_text(&a->slo, NULL, slo, sizeof slo);
    if (!strcmp(a->status, "found")) {
        char ci[128] = "";
        if (isfinite(a->ci_low) && isfinite(a->ci_high)) {
            load_text(a, a->ci_low, 0, lo, sizeof lo);
            load_text(a, a->ci_high, 0, hi, sizeof hi);
            snprintf(ci, sizeof ci, " (95%% CI %s-%s)", lo, hi);
        }
        snprintf(a->sentence, sizeof a->sentence,
                 "Users start waiting at %s%s%s: above it more than %.3g%% of requests %s (%s).",
                 strcmp(a->source, "capacity.json") ? "about " : "", v, ci, pct, miss, src);
    } else if (!strcmp(a->status, "not_reached")) {
        load_text(a, isfinite(a->highest) ? a->highest : a->value, 1, hi, sizeof hi);
        snprintf(a->sentence, sizeof a->sentence,
                 "Capacity not reached at the highest load tried (%s): at every load at least "
                 "%.3g%% of requests met %s (%s).",
                 hi, 100 * a->goal, slo, src);
    } else if (!strcmp(a->status, "missed_at_lowest")) {
        load_text(a, isfinite(a->lowest) ? a->lowest : a->value, 1, lo, sizeof lo);
        snprintf(a->sentence, sizeof a->sentence,
                 "Already missed at the lowest load tried (%s): more than %.3g%% of requests %s "
                 "there, so users wait at every load tried (%s).",
                 lo, pct, miss, src);
    } else {
        snprintf(a->sentence, sizeof a->sentence,
                 "No capacity can be read from these runs: the runs on the load line have no "
                 "offered rate (or closed-loop concurrency) to compare (SLO %s).",
                 slo);
    }
}

static json_t *num(double v) {
    return isfinite(v) ? json_real(v) : json_null();
}

json_t *answer_json(const report_answer *a) {
    if (!a->present)
        return json_null();
    json_t *o = json_object();
    json_object_set_new(o, "sentence", json_string(a->sentence));
    json_object_set_new(o, "source", json_string(a->source));
    json_object_set_new(o, "status", json_string(a->status));
    json_object_set_new(o, "by", json_string(a->by));
    json_object_set_new(
        o, "unit", json_string(strcmp(a->by, "concurrency") ? "req/s" : "concurrent requests"));
    json_object_set_new(o, "goal", json_real(a->goal));
    json_t *slo =
        json_pack("{s:o,s:o,s:o}", "ttft_ms", num(a->slo.ttft_ms > 0 ? a->slo.ttft_ms : NAN),
                  "tpot_ms", num(a->slo.tpot_ms > 0 ? a->slo.tpot_ms : NAN), "e2e_ms",
                  num(a->slo.e2e_ms > 0 ? a->slo.e2e_ms : NAN));
    if (a->slo.ttfa_ms > 0)
        json_object_set_new(slo, "ttfa_ms", json_real(a->slo.ttfa_ms));
    json_object_set_new(o, "slo", slo);
    json_object_set_new(o, "binding", a->binding[0] ? json_string(a->binding) : json_null());
    json_object_set_new(o, "capacity", num(a->value));
    json_object_set_new(o, "ci_low", num(a->ci_low));
    json_object_set_new(o, "ci_high", num(a->ci_high));
    json_object_set_new(o, "lowest_load", num(a->lowest));
    json_object_set_new(o, "highest_load", num(a->highest));
    if (!strcmp(a->source, "interpolated")) {
        json_object_set_new(o, "runs", json_integer(a->runs_on_line));
        json_object_set_new(o, "bracket",
                            isfinite(a->bracket_lo)
                                ? json_pack("[o,o]", num(a->bracket_lo), num(a->bracket_hi))
                                : json_null());
        json_object_set_new(o, "share_met_at_bracket",
                            isfinite(a->bracket_lo)
                                ? json_pack("[o,o]", num(a->share_at_lo), num(a->share_at_hi))
                                : json_null());
    } else {
        json_object_set_new(o, "probes", json_integer(a->probes));
        json_object_set_new(o, "wall_s", num(a->wall_s));
        json_object_set_new(o, "at_answer",
                            json_pack("{s:o,s:o,s:o}", "concurrency_in_flight",
                                      num(a->at_in_flight), "goodput_rps", num(a->at_goodput_rps),
                                      "output_tokens_per_s", num(a->at_tokens_per_s)));
    }
    return o;
}

/* answer_summary: the report's answer in summary.json: the sentence, then
 * the figures behind it, so that a program reads what the sentence says
 * (where it comes from, the capacity and its interval, the loads tried, and
 * either the runs it was interpolated between or the search's probes). */
#include "report/answer.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static json_t *num(double v) {
    return isfinite(v) ? json_real(v) : json_null();
}

/* The bound that binds: a bound's name, "failures" from capacity.json;
 * null when the misses were failures of an interpolated line, or where
 * nothing was missed. */
static json_t *binding_json(const report_answer *ra) {
    const capacity_answer *a = &ra->a;
    if (a->source != ANSWER_INTERPOLATED)
        return json_string(answer_binding_name(a->binding));
    if (a->binding == ANSWER_FAILURES ||
        (a->status != ANSWER_FOUND && a->status != ANSWER_MISSED_AT_LOWEST))
        return json_null();
    return json_string(slo_bound_name(a->binding));
}

static void put_interpolated(json_t *o, const capacity_answer *a) {
    int found = a->status == ANSWER_FOUND;
    json_object_set_new(o, "runs", json_integer(a->runs));
    json_object_set_new(o, "bracket",
                        found ? json_pack("[o,o]", num(a->below.load), num(a->above.load))
                              : json_null());
    double lo = a->below.requests
                    ? (double)(a->below.requests - a->below.missed) / (double)a->below.requests
                    : NAN,
           hi = a->above.requests
                    ? (double)(a->above.requests - a->above.missed) / (double)a->above.requests
                    : NAN;
    json_object_set_new(o, "share_met_at_bracket",
                        found ? json_pack("[o,o]", num(lo), num(hi)) : json_null());
}

json_t *answer_summary_json(const report_answer *ra) {
    if (!ra->present)
        return json_null();
    const capacity_answer *a = &ra->a;
    int interpolated = a->source == ANSWER_INTERPOLATED;
    json_t *o = json_object();
    json_object_set_new(o, "sentence", json_string(ra->sentence));
    json_object_set_new(o, "source", json_string(interpolated ? "interpolated" : "capacity.json"));
    json_object_set_new(o, "status", json_string(answer_status_name(a->status)));
    json_object_set_new(o, "by", json_string(a->by_concurrency ? "concurrency" : "rate"));
    json_object_set_new(o, "unit",
                        json_string(a->by_concurrency ? "concurrent requests" : "req/s"));
    json_object_set_new(o, "goal", json_real(a->goal));
    json_object_set_new(o, "slo", slo_json(&a->slo, SLO_JSON_THREE));
    json_object_set_new(o, "binding", binding_json(ra));
    json_object_set_new(o, "capacity", num(a->max));
    json_object_set_new(o, "ci_low", num(a->ci_low));
    json_object_set_new(o, "ci_high", num(a->ci_high));
    json_object_set_new(o, "lowest_load", num(ra->lowest));
    json_object_set_new(o, "highest_load", num(ra->highest));
    if (interpolated) {
        put_interpolated(o, a);
    } else {
        json_object_set_new(o, "probes", json_integer(a->tries));
        json_object_set_new(o, "wall_s", num(a->wall_s));
        json_object_set_new(o, "at_answer",
                            json_pack("{s:o,s:o,s:o}", "concurrency_in_flight",
                                      num(a->at_in_flight), "goodput_rps", num(a->at_goodput_rps),
                                      "output_tokens_per_s", num(a->at_tokens_per_s)));
    }
    return o;
}

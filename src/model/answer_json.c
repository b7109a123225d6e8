/* answer_json: the capacity answer's keys of capacity.json, written and
 * read back (answer.h). The keys a search wrote before every field of the
 * sentence was among them (by, goal, slo, status, the capacity and its
 * interval, binding, confirmed, upper_bound, probe_seconds, at_answer,
 * sentence, wall_s; predict's fail_* and requests_a_run; the
 * confirmation's run, which the search writes) keep their names
 * and meaning; the rest were added beside them (docs/capacity.md). A file
 * without them (written before; "out_of_time" is the one looked for) is
 * read for what it has, and its sentence is said as it stands. */
#include "model/answer.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static json_t *num(double v) {
    return isfinite(v) ? json_real(v) : json_null();
}

static json_t *whole(double v) {
    return isfinite(v) ? json_integer((json_int_t)v) : json_null();
}

/* The capacity and its interval, under rate or concurrency names. */
static void put_capacity(json_t *j, const capacity_answer *a) {
    int found = a->status == ANSWER_FOUND, rate = found && !a->by_concurrency,
        conc = found && a->by_concurrency;
    json_object_set_new(j, "max_rate_rps", num(rate ? a->max : NAN));
    json_object_set_new(j, "ci_low_rps", num(rate ? a->ci_low : NAN));
    json_object_set_new(j, "ci_high_rps", num(rate ? a->ci_high : NAN));
    json_object_set_new(j, "max_concurrency", whole(conc ? a->max : NAN));
    json_object_set_new(j, "ci_low_concurrency", whole(conc ? a->ci_low : NAN));
    json_object_set_new(j, "ci_high_concurrency", whole(conc ? a->ci_high : NAN));
}

/* predict's: the highest load that passed and the lowest that failed. */
static void put_predicted(json_t *j, const capacity_answer *a) {
    int rate = !a->by_concurrency;
    json_object_set_new(j, "predicted", json_true());
    json_object_set_new(j, "max_rate_rps", num(rate ? a->max : NAN));
    json_object_set_new(j, "fail_rate_rps", num(rate ? a->fail_load : NAN));
    json_object_set_new(j, "max_concurrency", num(rate ? NAN : a->max));
    json_object_set_new(j, "fail_concurrency", num(rate ? NAN : a->fail_load));
    json_object_set_new(j, "requests_a_run", json_integer(a->requests_a_run));
}

static void put_search(json_t *j, const capacity_answer *a) {
    put_capacity(j, a);
    json_object_set_new(j, "confirmed", json_boolean(a->confirmed));
    json_object_set_new(j, "confirm_asked", json_boolean(a->confirm_asked));
    json_object_set_new(j, "confirmed_at_load", num(a->confirmed ? a->confirm_load : NAN));
    json_object_set_new(j, "confirmed_over_s", num(a->confirmed ? a->confirm_s : NAN));
    json_object_set_new(j, "upper_bound", json_boolean(a->upper_bound));
    json_object_set_new(
        j, "capped",
        a->capped ? json_pack("{s:s,s:o,s:o,s:o,s:o,s:o}", "by",
                              a->capped == ANSWER_CAP_THROUGHPUT ? "throughput" : "overload",
                              "probed_load", num(a->probed_load), "longest_s", num(a->longest_s),
                              "overload_shown", num(a->overload_shown), "low_rps", num(a->tp_low),
                              "high_rps", num(a->tp_high))
                  : json_null());
    json_object_set_new(j, "probe_seconds", num(a->full_s));
    json_object_set_new(j, "probe_seconds_needed", num(a->need_s));
    json_object_set_new(j, "none_succeeded", json_boolean(a->none_succeeded));
    json_object_set_new(j, "busy_probes", json_integer(a->busy_probes));
    json_object_set_new(j, "requests_total",
                        a->requests_total >= 0 ? json_integer(a->requests_total) : json_null());
    json_object_set_new(j, "failure", a->failure[0] ? json_string(a->failure) : json_null());
    json_object_set_new(j, "twin", json_string(answer_twin_name(a->twin)));
    json_object_set_new(j, "twin_load", num(a->twin_load));
    json_object_set_new(j, "twin_probes", json_integer(a->twin_probes));
    json_object_set_new(j, "twin_why", a->twin_why[0] ? json_string(a->twin_why) : json_null());
    json_object_set_new(j, "twin_seconds", num(a->twin_s));
    json_object_set_new(j, "twin_scale", num(a->twin_scale));
    json_object_set_new(j, "at_answer",
                        isfinite(a->at_in_flight) || isfinite(a->at_goodput_rps)
                            ? json_pack("{s:o,s:o,s:o}", "concurrency_in_flight",
                                        num(a->at_in_flight), "goodput_rps", num(a->at_goodput_rps),
                                        "output_tokens_per_s", num(a->at_tokens_per_s))
                            : json_null());
}

json_t *answer_json(const capacity_answer *a) {
    char sentence[1024];
    answer_sentence(a, sentence, sizeof sentence);
    json_t *j = json_object();
    json_object_set_new(j, "by", json_string(a->by_concurrency ? "concurrency" : "rate"));
    json_object_set_new(j, "goal", json_real(a->goal));
    json_object_set_new(j, "slo", slo_json(&a->slo, SLO_JSON_THREE));
    json_object_set_new(j, "status", json_string(answer_status_name(a->status)));
    json_object_set_new(j, "binding", json_string(answer_binding_name(a->binding)));
    if (a->source == ANSWER_PREDICTED)
        put_predicted(j, a);
    else
        put_search(j, a);
    json_object_set_new(j, "out_of_time", json_boolean(a->out_of_time));
    json_object_set_new(j, "precision", num(a->precision));
    json_object_set_new(j, "lowest_load", num(a->lowest));
    json_object_set_new(j, "reached_load", num(a->reached));
    json_object_set_new(j, "loads_tried", json_integer(a->tries));
    json_object_set_new(j, "sentence", json_string(sentence));
    json_object_set_new(j, "wall_s", num(a->wall_s));
    return j;
}

/* ---- read back ---- */

static double get(const json_t *o, const char *key) {
    json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static int flag(const json_t *o, const char *key) {
    return json_is_true(json_object_get(o, key));
}

static void copy_string(char *dst, size_t cap, const json_t *o, const char *key) {
    const char *s = json_string_value(json_object_get(o, key));
    snprintf(dst, cap, "%s", s ? s : "");
}

/* The unit and the status; -1 with the reason when either is not one
 * servelab writes. */
static int read_kind(const json_t *j, capacity_answer *a, char *err, int errlen) {
    char by[32], status[32];
    copy_string(by, sizeof by, j, "by");
    copy_string(status, sizeof status, j, "status");
    if (by[0] && strcmp(by, "rate") && strcmp(by, "concurrency")) {
        snprintf(err, errlen, "\"by\" is \"%s\", not rate or concurrency", by);
        return -1;
    }
    a->by_concurrency = !strcmp(by, "concurrency");
    for (int s = ANSWER_FOUND; s < ANSWER_NO_LOAD; s++)
        if (!strcmp(status, answer_status_name(s))) {
            a->status = s;
            return 0;
        }
    snprintf(err, errlen, "\"status\" is \"%s\", not found, not_reached or missed_at_lowest",
             status);
    return -1;
}

static int binding_of(const char *name) {
    for (int b = 0; b <= ANSWER_FAILURES; b++)
        if (!strcmp(name, answer_binding_name(b)))
            return b;
    return 0;
}

static void read_search(const json_t *j, capacity_answer *a) {
    const char *c = a->by_concurrency ? "concurrency" : "rps";
    char key[32];
    snprintf(key, sizeof key, "max_%s", a->by_concurrency ? "concurrency" : "rate_rps");
    a->max = get(j, key);
    snprintf(key, sizeof key, "ci_low_%s", c);
    a->ci_low = get(j, key);
    snprintf(key, sizeof key, "ci_high_%s", c);
    a->ci_high = get(j, key);
    a->confirmed = flag(j, "confirmed");
    a->confirm_asked = flag(j, "confirm_asked");
    a->upper_bound = flag(j, "upper_bound");
    const json_t *cap = json_object_get(j, "capped");
    const char *by = json_string_value(json_object_get(cap, "by"));
    a->capped = !by                         ? ANSWER_CAP_NONE
                : !strcmp(by, "throughput") ? ANSWER_CAP_THROUGHPUT
                                            : ANSWER_CAP_OVERLOAD;
    a->probed_load = get(cap, "probed_load");
    a->longest_s = get(cap, "longest_s");
    a->overload_shown = get(cap, "overload_shown");
    a->tp_low = get(cap, "low_rps");
    a->tp_high = get(cap, "high_rps");
    a->full_s = get(j, "probe_seconds");
    a->need_s = get(j, "probe_seconds_needed");
    a->none_succeeded = flag(j, "none_succeeded");
    double busy = get(j, "busy_probes");
    a->busy_probes = isfinite(busy) ? (int)busy : 0;
    double total = get(j, "requests_total");
    a->requests_total = isfinite(total) ? (long)total : -1;
    copy_string(a->failure, sizeof a->failure, j, "failure");
    a->twin = answer_twin_of(json_string_value(json_object_get(j, "twin")));
    a->twin_load = get(j, "twin_load");
    a->twin_s = get(j, "twin_seconds");
    a->twin_scale = get(j, "twin_scale");
    double twin_probes = get(j, "twin_probes");
    a->twin_probes = isfinite(twin_probes) ? (int)twin_probes : 0;
    copy_string(a->twin_why, sizeof a->twin_why, j, "twin_why");
    const json_t *at = json_object_get(j, "at_answer"), *cf = json_object_get(j, "confirmation");
    a->at_in_flight = get(at, "concurrency_in_flight");
    a->at_goodput_rps = get(at, "goodput_rps");
    a->at_tokens_per_s = get(at, "output_tokens_per_s");
    a->confirm_load = get(j, "confirmed_at_load");
    a->confirm_s = get(j, "confirmed_over_s");
    if (!json_object_get(j, "confirmed_over_s")) { /* older: the confirmation run's own */
        a->confirm_s = get(cf, "duration_s");
        a->confirm_load = get(cf, a->by_concurrency ? "concurrency" : "rate_rps");
    }
    a->tries = (int)json_array_size(json_object_get(j, "probes"));
}

static void read_predicted(const json_t *j, capacity_answer *a) {
    int rate = !a->by_concurrency;
    a->max = get(j, rate ? "max_rate_rps" : "max_concurrency");
    a->fail_load = get(j, rate ? "fail_rate_rps" : "fail_concurrency");
    double n = get(j, "requests_a_run");
    a->requests_a_run = isfinite(n) ? (long)n : 0;
    a->tries = (int)json_array_size(json_object_get(j, "levels"));
}

int answer_read(const json_t *j, capacity_answer *a, char *err, int errlen) {
    answer_init(a, flag(j, "predicted") ? ANSWER_PREDICTED : ANSWER_SEARCHED);
    if (read_kind(j, a, err, errlen))
        return -1;
    a->goal = get(j, "goal");
    slo_from_json(json_object_get(j, "slo"), &a->slo);
    char binding[32];
    copy_string(binding, sizeof binding, j, "binding");
    a->binding = binding_of(binding);
    if (a->source == ANSWER_PREDICTED)
        read_predicted(j, a);
    else
        read_search(j, a);
    a->out_of_time = flag(j, "out_of_time");
    a->precision = get(j, "precision");
    a->lowest = get(j, "lowest_load");
    a->reached = get(j, "reached_load");
    a->wall_s = get(j, "wall_s");
    double tries = get(j, "loads_tried");
    if (isfinite(tries))
        a->tries = (int)tries;
    if (!json_object_get(j, "out_of_time"))
        copy_string(a->said, sizeof a->said, j, "sentence");
    return 0;
}

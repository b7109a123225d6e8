/* answer: the capacity answer's one sentence (see answer.h; its JSON is in
 * answer_json.c). The sentence is built from the fields alone, so a reader
 * that has the fields says what the writer said. */
#include "model/answer.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

void answer_init(capacity_answer *a, answer_source source) {
    memset(a, 0, sizeof *a);
    a->source = source;
    a->max = a->ci_low = a->ci_high = a->reached = a->lowest = NAN;
    a->confirm_load = a->confirm_s = a->precision = a->need_s = a->full_s = NAN;
    a->at_in_flight = a->at_goodput_rps = a->at_tokens_per_s = a->wall_s = a->fail_load = NAN;
    a->below.load = a->above.load = NAN;
    a->requests_total = -1;
    a->twin_load = a->twin_s = a->twin_scale = NAN;
    a->probed_load = a->longest_s = a->overload_shown = a->tp_low = a->tp_high = NAN;
}

static const char *const twin_names[] = {"none", "checked", "unchecked", "rejected", "unfit"};

const char *answer_twin_name(int twin) {
    return twin >= 0 && twin <= ANSWER_TWIN_UNFIT ? twin_names[twin] : "none";
}

int answer_twin_of(const char *name) {
    for (int t = 0; name && t <= ANSWER_TWIN_UNFIT; t++)
        if (!strcmp(name, twin_names[t]))
            return t;
    return ANSWER_TWIN_NONE;
}

const char *answer_status_name(answer_status s) {
    return s == ANSWER_FOUND              ? "found"
           : s == ANSWER_NOT_REACHED      ? "not_reached"
           : s == ANSWER_MISSED_AT_LOWEST ? "missed_at_lowest"
                                          : "no_load";
}

const char *answer_binding_name(int binding) {
    return binding == ANSWER_FAILURES ? "failures" : slo_bound_name(binding);
}

/* ---- the sentence ---- */

/* "23.4 req/s" or "8 concurrent users". */
static void load_text(const capacity_answer *a, double v, char *buf, size_t n) {
    if (a->by_concurrency)
        snprintf(buf, n, "%.0f concurrent user%s", v, v == 1 ? "" : "s");
    else
        snprintf(buf, n, "%.3g req/s", v);
}

/* What binds, in words: "miss TTFT <= 750 ms", or "fail (connect: ...)". */
static void binding_text(const capacity_answer *a, char *buf, size_t n) {
    if (a->binding != ANSWER_FAILURES) {
        char bound[64];
        slo_bound_human(&a->slo, a->binding, bound, sizeof bound);
        snprintf(buf, n, "miss %s", bound);
        return;
    }
    const char *words = a->failure;
    snprintf(buf, n, "fail%s%s%s", words[0] ? " (" : "", words, words[0] ? ")" : "");
}

/* A search's qualifiers after its interval: "; confirmed over 4.1 min at
 * 15.2 req/s", "; not confirmed", the search out of time. */
static void qualifiers(const capacity_answer *a, char *buf, size_t n) {
    buf[0] = 0;
    size_t len = 0;
    if (a->confirmed) {
        char at[64];
        load_text(a, a->confirm_load, at, sizeof at);
        double d = a->confirm_s;
        if (d >= 120)
            len +=
                (size_t)snprintf(buf + len, n - len, "; confirmed over %.1f min at %s", d / 60, at);
        else
            len += (size_t)snprintf(buf + len, n - len, "; confirmed over %.0f s at %s", d, at);
    } else if (a->confirm_asked) {
        len += (size_t)snprintf(buf + len, n - len, "; not confirmed");
    }
    if (a->out_of_time && len < n)
        snprintf(buf + len, n - len, "; the search ran out of --max-time");
}

static void searched_found(const capacity_answer *a, const char *miss, const char *bound, char *buf,
                           size_t n) {
    char at[64], more[160];
    load_text(a, a->max, at, sizeof at);
    qualifiers(a, more, sizeof more);
    if (a->by_concurrency)
        snprintf(buf, n,
                 "users start waiting above %s (95%% CI %.0f-%.0f%s): beyond it more than %s "
                 "of requests %s",
                 at, a->ci_low, a->ci_high, more, miss, bound);
    else if (a->capped) {
        char probed[64], why[200];
        load_text(a, a->probed_load, probed, sizeof probed);
        if (a->capped == ANSWER_CAP_THROUGHPUT)
            snprintf(why, sizeof why, "the low end of the %.4g-%.4g req/s the server completes",
                     a->tp_low, a->tp_high);
        else
            snprintf(why, sizeof why, "%.2g%% under it", 100 * a->overload_shown);
        snprintf(buf, n,
                 "users start waiting at %s (95%% CI %.3g-%.3g%s): above it more than %s of "
                 "requests %s; probes passed up to %s, but the longest of them had %.0f s of "
                 "arrivals, enough to show an overload of %.2g%% and not one of %.3g%% (%.0f "
                 "s): the answer is %s",
                 at, a->ci_low, a->ci_high, more, miss, bound, probed, a->longest_s,
                 100 * a->overload_shown, 100 * a->precision, a->need_s, why);
    } else if (a->upper_bound)
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
}

/* servelab capacity's sentence. */
static void searched(const capacity_answer *a, char *buf, size_t n) {
    char bound[256], slo[256], at[64], miss[32];
    binding_text(a, bound, sizeof bound);
    slo_human(&a->slo, slo, sizeof slo);
    snprintf(miss, sizeof miss, "%.3g%%", 100 * (1 - a->goal));
    if (a->status == ANSWER_FOUND) {
        searched_found(a, miss, bound, buf, n);
    } else if (a->status == ANSWER_NOT_REACHED) {
        load_text(a, a->reached, at, sizeof at);
        snprintf(buf, n,
                 "not reached: at %s, the most probed%s, at least %.3g%% of requests still met "
                 "%s",
                 at, a->out_of_time ? " before --max-time" : "", 100 * a->goal, slo);
    } else if (a->binding == ANSWER_FAILURES && a->none_succeeded) {
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

/* predict --capacity's sentence: loads in four digits, as the engine is
 * exact and not a measurement. */
static void predicted(const capacity_answer *a, char *buf, size_t n) {
    char bound[256];
    const char *unit = a->by_concurrency ? "users" : "req/s";
    binding_text(a, bound, sizeof bound); /* "miss TTFT <= ...", or "fail (http)" */
    double miss = 100 * (1 - a->goal);
    if (a->status == ANSWER_FOUND)
        snprintf(buf, n,
                 "long-run capacity: %.4g %s (it fails at %.4g): above it more than %.3g%% of "
                 "requests %s (%d virtual runs of %ld requests, %.1f s)",
                 a->max, unit, a->fail_load, miss, bound, a->tries, a->requests_a_run, a->wall_s);
    else if (a->status == ANSWER_NOT_REACHED)
        snprintf(buf, n,
                 "long-run capacity not reached: %.4g %s, the most tried, still met the SLO for "
                 "%.4g%% of requests",
                 a->reached, unit, 100 * a->goal);
    else
        snprintf(buf, n,
                 "already missed at the lowest load: at %.4g %s more than %.3g%% of requests "
                 "%s",
                 a->lowest, unit, miss, bound);
}

/* What an interpolated answer rests on, after "not a capacity search: ". */
static void rests_on(const capacity_answer *a, char *buf, size_t n) {
    char lo[64], hi[64];
    if (a->status != ANSWER_FOUND) {
        snprintf(buf, n, "read from %d run%s on the load line", a->runs, a->runs == 1 ? "" : "s");
        return;
    }
    load_text(a, a->below.load, lo, sizeof lo);
    load_text(a, a->above.load, hi, sizeof hi);
    snprintf(buf, n,
             "interpolated between the runs at %s, where %ld of %ld requests missed the SLO, and "
             "%s, where %ld of %ld did (%d runs on the load line; no confidence interval)",
             lo, a->below.missed, a->below.requests, hi, a->above.missed, a->above.requests,
             a->runs);
}

/* A report's crossing of the load line, read from its runs. */
static void interpolated(const capacity_answer *a, char *buf, size_t n) {
    char bound[256], slo[256], at[64], on[320];
    binding_text(a, bound, sizeof bound);
    slo_human(&a->slo, slo, sizeof slo);
    rests_on(a, on, sizeof on);
    double miss = 100 * (1 - a->goal);
    if (a->status == ANSWER_FOUND) {
        load_text(a, a->max, at, sizeof at);
        snprintf(buf, n,
                 "users start waiting at about %s: above it more than %.3g%% of requests %s; not "
                 "a capacity search: %s",
                 at, miss, bound, on);
    } else if (a->status == ANSWER_NOT_REACHED) {
        load_text(a, a->reached, at, sizeof at);
        snprintf(buf, n,
                 "not reached: at %s, the most tried, at least %.3g%% of requests still met %s; "
                 "not a capacity search: %s",
                 at, 100 * a->goal, slo, on);
    } else if (a->status == ANSWER_MISSED_AT_LOWEST) {
        load_text(a, a->lowest, at, sizeof at);
        snprintf(buf, n,
                 "already missed at the lowest load: at %s more than %.3g%% of requests %s; not a "
                 "capacity search: %s",
                 at, miss, bound, on);
    } else {
        snprintf(buf, n,
                 "no capacity can be read from these runs: the runs on the load line have no "
                 "offered rate (or closed-loop concurrency) to compare (SLO %s)",
                 slo);
    }
}

/* How a found answer was reached: ", by bisection" or the twin's part. */
static void method_text(const capacity_answer *a, char *buf, size_t n) {
    char at[64];
    load_text(a, a->twin_load, at, sizeof at);
    switch (a->twin) {
    case ANSWER_TWIN_CHECKED:
        snprintf(buf, n,
                 ", the capacity its twin (fitted to %d probes' rows) predicts, which the probes "
                 "at it do not contradict",
                 a->twin_probes);
        break;
    case ANSWER_TWIN_UNCHECKED:
        snprintf(buf, n,
                 ", the capacity its twin (fitted to %d probes' rows) predicts, unchecked: "
                 "--max-time left no room to probe it",
                 a->twin_probes);
        break;
    case ANSWER_TWIN_REJECTED:
        snprintf(buf, n, ", by bisection (the twin said %s; %s)", at, a->twin_why);
        break;
    case ANSWER_TWIN_UNFIT: snprintf(buf, n, ", by bisection (no twin: %s)", a->twin_why); break;
    default: snprintf(buf, n, ", by bisection");
    }
}

void answer_sentence(const capacity_answer *a, char *buf, size_t n) {
    assert(a->binding >= 0 && a->binding <= ANSWER_FAILURES);
    assert(a->source <= ANSWER_INTERPOLATED && a->status <= ANSWER_NO_LOAD);
    if (a->said[0])
        snprintf(buf, n, "%s", a->said);
    else if (a->source == ANSWER_SEARCHED) {
        searched(a, buf, n);
        size_t len = strlen(buf);
        if (a->busy_probes > 0 && len < n)
            snprintf(buf + len, n - len,
                     "; %d of %d probes began on a server still working after --drain-timeout: "
                     "their verdicts met its backlog",
                     a->busy_probes, a->tries);
        len = strlen(buf);
        char method[400] = "";
        if (a->status == ANSWER_FOUND)
            method_text(a, method, sizeof method);
        if (a->requests_total >= 0 && isfinite(a->wall_s) && len < n)
            snprintf(buf + len, n - len,
                     "; it rests on %d probe%s of %ld requests in all over %.1f min%s", a->tries,
                     a->tries == 1 ? "" : "s", a->requests_total, a->wall_s / 60, method);
    } else if (a->source == ANSWER_PREDICTED)
        predicted(a, buf, n);
    else
        interpolated(a, buf, n);
}

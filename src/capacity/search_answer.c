/* search_answer: what a capacity search says (see search.h): the answer
 * as it stands after each probe, written to OUT/capacity.json with each
 * load's pooled verdict (capacity/answer.h's result and JSON), so that a
 * search stopped at any point leaves what it found; and the warnings about
 * the answer once it is done. The verdicts themselves are
 * search_verdict.c's. */
#include "capacity/search_internal.h"
#include "capacity/binomial.h"
#include "common/files.h"
#include "common/notice.h"
#include "common/util.h"

#include <errno.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* x rounded down to 3 significant digits: a load a user can read, never
 * above what it rests on. */
static double floor_readable(double x) {
    double unit = pow(10, floor(log10(x)) - 2);
    return floor(x / unit * (1 + 1e-12)) * unit;
}

/* Probes too short to show an overload of the precision passed at the
 * answer: the answer may be over what the server keeps up with by as
 * much as the longest of them could not show (a real vLLM held 13.4 req/s
 * through a search and its 3.2-minute confirmation, and then missed for
 * 43% of 3,000 requests at it on a fresh start). The answer is that much
 * under the load, or the low end of what the throughput probe says the
 * server completes when that is higher, and says so. */
static void cap_short_probes(const search *s, const capacity_result *r, capacity_answer *a,
                             const tp_says *t) {
    /* the longest run that passed at the answer: the one with most requests */
    double longest = r->best >= 0 ? (double)s->probes[r->best].requests / s->lo : 0;
    if (!(longest > s->ramp_s))
        return; /* nothing passed long enough to say anything: an upper bound */
    double shown = LEN_FACTOR * s->budget_ms / 1000 / (longest - s->ramp_s);
    if (shown <= s->o->precision) { /* the confirmation was long enough */
        a->upper_bound = 0;
        return;
    }
    double under = s->lo / (1 + shown), low = t ? t->low : 0;
    a->capped = low > under ? ANSWER_CAP_THROUGHPUT : ANSWER_CAP_OVERLOAD;
    a->probed_load = s->lo;
    a->longest_s = longest;
    a->overload_shown = shown;
    a->tp_low = t ? t->low : NAN;
    a->tp_high = t ? t->high : NAN;
    a->max = floor_readable(fmax(low, under));
    if (!(a->ci_low <= a->max))
        a->ci_low = a->max;
    a->upper_bound = 0;
}

void search_answer_fill(const search *s, capacity_result *r) {
    memset(r, 0, sizeof *r);
    capacity_answer *a = &r->ans;
    answer_init(a, ANSWER_SEARCHED);
    a->by_concurrency = s->ps.by_concurrency;
    a->goal = s->o->goal;
    a->slo = s->ps.slo;
    r->probes = s->probes;
    r->n_probes = s->n;
    a->wall_s = elapsed(s);
    a->out_of_time = s->stopped_by_time;
    a->requests_total = 0;
    for (int i = 0; i < s->n; i++) {
        a->busy_probes += s->probes[i].drain.state == DRAIN_BUSY;
        a->requests_total += s->probes[i].requests;
    }
    r->best = -1;
    a->lowest = s->n ? value_of(s, 0) : NAN;
    if (isnan(s->lo))
        a->status = ANSWER_MISSED_AT_LOWEST;
    else if (isnan(s->hi))
        a->status = ANSWER_NOT_REACHED;
    else
        a->status = ANSWER_FOUND;
    if (!isnan(s->lo)) {
        a->max = a->reached = s->lo;
        search_verdict_interval(s, &a->ci_low, &a->ci_high);
        for (int i = 0; i < s->n; i++) /* the passing probe at the answer with most requests */
            if (value_of(s, i) == s->lo && s->probes[i].passed &&
                (r->best < 0 || s->probes[i].requests > s->probes[r->best].requests))
                r->best = i;
    }
    r->confirm_probe = -1;
    for (int i = 0; i < s->n; i++)
        if (s->probes[i].confirm && value_of(s, i) == s->lo)
            r->confirm_probe = i;
    a->confirm_asked = s->o->confirm;
    a->upper_bound = s->upper_bound;
    r->budget_ms = s->budget_ms;
    a->need_s = s->need_s;
    a->full_s = s->full_s;
    if (s->fixed_n && !s->ps.by_concurrency && s->lo > 0) {
        /* --requests sets the probes: as long as the precision needs? */
        a->full_s = (double)s->o->run.requests / s->lo;
        a->upper_bound = a->full_s < s->need_s;
    }
    tp_says t;
    int tp = search_verdict_throughput(s, &t);
    if (a->upper_bound && a->status == ANSWER_FOUND) {
        if (tp && s->lo < t.low) /* under what the server surely completes: no overload */
            a->upper_bound = 0;
        else if (!a->by_concurrency)
            cap_short_probes(s, r, a, tp ? &t : NULL);
    }
    a->precision = s->o->precision;
    a->twin = s->twin_state == TWIN_ACCEPTED
                  ? (s->twin_unchecked ? ANSWER_TWIN_UNCHECKED : ANSWER_TWIN_CHECKED)
              : s->twin_state == TWIN_REJECTED ? ANSWER_TWIN_REJECTED
              : s->twin_state == TWIN_UNFIT    ? ANSWER_TWIN_UNFIT
                                               : ANSWER_TWIN_NONE;
    a->twin_load = s->twin_load;
    a->twin_probes = s->twin_probes;
    a->twin_s = s->twin_proposals ? s->twin_s : NAN;
    a->twin_scale = s->twin_proposals ? s->twin_scale : NAN;
    snprintf(a->twin_why, sizeof a->twin_why, "%s", s->twin_why);
    r->tp_probe = s->tp_at;
    r->tp_used = search_verdict_bound(s, &r->tp_bound);
    capacity_result_finish(r);
}

/* capacity.json's levels: each load's pooled verdict, as the search
 * judged it. */
static json_t *levels_json(const search *s) {
    int k;
    double *all = search_verdict_loads(s, &k);
    json_t *arr = json_array();
    for (int j = 0; j < k; j++) {
        level l = search_verdict_level(s, all[j]);
        double lo, hi; /* as clear_pass and clear_fail judge it */
        wilson_interval(l.met / l.deff, l.n / l.deff, BINOMIAL_Z95, &lo, &hi);
        const char *verdict = search_verdict_end_fail(s, &l)   ? "clear_fail"
                              : search_verdict_end_pass(s, &l) ? "clear_pass"
                              : search_verdict_passed(s, &l)   ? "passed"
                                                               : "failed";
        json_array_append_new(arr,
                              json_pack("{s:f,s:i,s:I,s:I,s:f,s:f,s:f,s:f,s:b,s:s}", "load", all[j],
                                        "runs", l.runs, "requests", (json_int_t)l.n, "met",
                                        (json_int_t)l.met, "met_share", l.n > 0 ? l.met / l.n : 0.0,
                                        "design_effect", l.deff, "ci_low", lo, "ci_high", hi,
                                        "drifting", l.drifting, "verdict", verdict));
    }
    free(all);
    return arr;
}

int search_answer_write(const search *s, char *err, int errlen) {
    capacity_result a;
    search_answer_fill(s, &a);
    json_t *j = capacity_result_json(&a);
    json_object_set_new(j, "levels", levels_json(s));
    int rc = write_json_atomic(s->out, "capacity.json", j);
    if (rc)
        snprintf(err, errlen, "cannot write %s/capacity.json: %s", s->out, strerror(errno));
    json_decref(j);
    return rc ? -1 : 0;
}

/* The warnings about the answer: probes whose client fell behind, an end
 * of the interval that is a point verdict's. */
void search_answer_warn(const search *s, const capacity_answer *a) {
    double lo, hi;
    int flagged = 0;
    for (int i = 0; i < s->n; i++)
        flagged += s->probes[i].client_flagged;
    if (flagged)
        notice(s->o->notices, NOTICE_WARNING,
               "capacity: in %d of %d probes the client was not within 1 ms (each probe's "
               "summary.json says how; servelab calibrate tells this machine's limits); %d failed "
               "so and were run again, not counted",
               flagged, s->n, s->lag_repeats);
    double waited = 0;
    for (int i = 0; i < s->n; i++)
        waited += s->probes[i].drain.waited_s;
    if (a->busy_probes) /* the sentence says it too */
        notice(s->o->notices, NOTICE_WARNING,
               "capacity: before %d of %d probes the server was still working after "
               "--drain-timeout %.0f s (its /metrics: requests running or waiting)",
               a->busy_probes, s->n, s->o->drain_max_s);
    else if (waited >= 1 && !s->o->run.quiet)
        notice(s->o->notices, NOTICE_INFO,
               "capacity: the probes waited %.1f s in all for the server to be idle first", waited);
    if (a->status == ANSWER_FOUND && search_verdict_interval(s, &lo, &hi) && !s->o->run.quiet)
        notice(s->o->notices, NOTICE_WARNING,
               "capacity: no probe at an end of the interval cleared its verdict at 95%%; "
               "that end is a point verdict's (more --requests would clear it)");
}

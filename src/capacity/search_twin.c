/* search_twin: the capacity search led by a twin (docs/capacity.md, "The
 * twin"). Once the probes bracket the answer (and the throughput probe has
 * run), the server's step model is fitted to their rows (fit/fit.h, as
 * `servelab fit` would from the same folders) and the fitted engine is
 * asked for the long-run capacity in virtual time (longrun.h, as `predict
 * --capacity` would, over TWIN_MISSES / (1 - goal) requests of the
 * search's own workload and arrivals). Near a soft knee a probe cannot
 * tell a load 3% over the answer from the answer (one passes at the true
 * capacity 75-80% of the time and still half the time 15% above it),
 * while the twin's long runs can.
 *
 * The server checks the twin. The proposal and the load a precision step
 * above are probed, and every probe (but the throughput probe) is set
 * against TWIN_DRAWS runs of the twin with the same load, requests and
 * workload and other seeds (more when it lies beyond them all): a probe
 * that went worse than every one of them, or (run whole) better than every
 * one, is one the twin cannot explain (probe_badness ranks them: misses,
 * or how early the run was lost). Misses come in bursts, and the twin's
 * own runs hold the bursts: this is the test sized for their design effect
 * that a binomial interval is not. A probe the twin cannot explain rejects
 * it, and so does the throughput probe's bound under the proposal; one
 * refit with every probe may propose again, else bisection goes on. An
 * accepted proposal is the answer until a later probe (the ends, the
 * confirmation) rejects it. */
#include "analysis/stats.h"
#include "capacity/longrun.h"
#include "capacity/search_internal.h"
#include "capacity/throughput.h"
#include "common/clock.h"
#include "common/notice.h"
#include "common/util.h"
#include "fit/fit.h"
#include "fit/fit_data.h"
#include "sim/engine.h"
#include "model/record.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the first fit; one refit with the probes that tested an accepted
 * proposal (they are most of the rows near the answer); one after a
 * contradiction */
#define TWIN_MAX_PROPOSALS 3
#define TWIN_MIN_REQUESTS 50000
#define TWIN_MAX_REQUESTS 1000000
/* a twin's run holds this many allowed misses: near a soft knee misses
 * come in bursts, and 200,000 requests at a goal of 0.99 put one seed's
 * answer within about 1% of another's (one slot, TTFT <= 1 s) */
#define TWIN_MISSES 2000
#define TWIN_MIN_GAPS 30
/* the twin's runs a probe is set against; and, when it lies beyond all of
 * them, TWIN_DRAWS for each probe tested (at most TWIN_DRAWS_MOST) before
 * it rejects: every probe is tested, and about ten probes each beyond 100
 * runs by chance one time in a hundred rejected about one right twin in
 * ten (the matrix's cells C and I); beyond all of 100 x k runs, one of k
 * probes is so by chance about one search in a hundred */
#define TWIN_DRAWS 100
#define TWIN_DRAWS_MOST 2000
#define TWIN_SEED_BASE 1000003 /* their seeds: far from the probes' own */

/* The twin's runs of one load and length: their badness, ascending. */
typedef struct twin_draws {
    double load;
    long requests;
    int n;
    double *b; /* n of them */
} twin_draws;

/* The probes' folders (not those run again because the client lagged). */
static char **probe_paths(const search *s, int *k) {
    char **paths = xmalloc((size_t)(s->n ? s->n : 1) * sizeof *paths);
    *k = 0;
    for (int i = 0; i < s->n; i++) {
        if (s->probes[i].lagged)
            continue;
        size_t len = strlen(s->out) + strlen(s->probes[i].dir) + 2;
        paths[*k] = xmalloc(len);
        snprintf(paths[(*k)++], len, "%s/%s", s->out, s->probes[i].dir);
    }
    return paths;
}

/* The profile fitted to the probes' rows into *doc. 0, or -1 with why. */
static int fit_probes(search *s, profile_doc *doc, char *why, size_t n) {
    int k, n_runs = 0;
    char **paths = probe_paths(s, &k);
    fit_run *runs = NULL;
    char err[300];
    int rc = fit_load(paths, k, &runs, &n_runs, err, sizeof err);
    s->twin_probes = k;
    for (int i = 0; i < k; i++)
        free(paths[i]);
    free(paths);
    if (rc) {
        snprintf(why, n, "the probes' rows do not read: %.180s", err);
        return -1;
    }
    fit_opts fo = {.min_gaps = TWIN_MIN_GAPS, .name = "twin"};
    fit_result fr;
    rc = fit_estimate(runs, n_runs, &fo, &fr, err, sizeof err);
    fit_runs_free(runs, n_runs);
    if (rc) {
        snprintf(why, n, "it could not be fitted: %.180s", err);
        return -1;
    }
    *doc = fr.doc; /* the rest of fr is the fit's record, not needed */
    return 0;
}

/* The twin held to what the server completes. Fitted to probes that are
 * mostly below the limit, a twin can run faster at the limit than the
 * server (llama.cpp with 2 slots: 4.38 req/s proposed where the throughput
 * probe measured 3.94), and then proposes a load the server cannot carry.
 * Its closed-loop throughput with the throughput probe's users is measured
 * as the probe's was; when it is above the probe's interval, every step
 * cost is scaled by the ratio, so that the twin completes what the server
 * does (a step's cost sets the rate at a fixed batch). s->twin_scale keeps
 * the factor (1: left as fitted). */
static void hold_to_throughput(search *s, virtual_target *vt) {
    s->twin_scale = 1;
    tp_says t;
    if (s->tp_at < 0 || !search_verdict_throughput(s, &t))
        return;
    const probe *p = &s->probes[s->tp_at];
    long users = p->max_users, n = users * 20 > 4000 ? users * 20 : 4000;
    run_rows rows;
    char err[300];
    if (longrun_rows(&s->o->run, vt, 1, (double)users, n, NULL, &rows, err, sizeof err) !=
        OUTCOME_OK)
        return;
    throughput_fit f = throughput_of(rows.r, rows.n, users, 0);
    rows_free(&rows);
    if (!(f.rate_rps > t.high))
        return;
    s->twin_scale = f.rate_rps / t.point;
    engine_divide_step_costs(&vt->engine, t.point / f.rate_rps);
}

/* The fitted engine's long-run capacity: 1 with *load, or 0 with why. */
static int ask(search *s, const profile_doc *doc, double *load, char *why, size_t n) {
    virtual_target vt = {0};
    if (s->o->vt)
        vt = *s->o->vt; /* its reasoning settings; the engine is the twin's */
    vt.engine = doc->engine;
    vt.eos_min_frac_pct = doc->eos_min_frac_pct;
    vt.seed = vt.engine.seed = (uint64_t)s->o->run.seed;
    snprintf(s->twin_model, sizeof s->twin_model, "%s", doc->model ? doc->model : "twin");
    vt.model = s->twin_model;
    vt.profile = "twin";
    vt.profile_file = NULL;
    vt.chunks = 0;
    vt.stats = NULL;
    hold_to_throughput(s, &vt);
    s->twin_vt = vt;
    double requests = fmax(TWIN_MIN_REQUESTS, TWIN_MISSES / (1 - s->o->goal));
    longrun_opts lo = {.run = &s->o->run,
                       .target = &vt,
                       .by_concurrency = s->ps.by_concurrency,
                       .goal = s->o->goal,
                       .precision = s->o->precision / 4,
                       .requests = (long)fmin(requests, TWIN_MAX_REQUESTS),
                       /* from under what the probes passed: a refit may say less */
                       .start = !(s->lo > 0)           ? 0
                                : s->ps.by_concurrency ? fmax(1, floor(s->lo / 2))
                                                       : s->lo / 2};
    longrun_result *r = xmalloc(sizeof *r);
    char err[300];
    outcome got = longrun_capacity(&lo, r, err, sizeof err);
    int ok = got == OUTCOME_OK && r->ans.status == ANSWER_FOUND && r->ans.max > 0;
    if (got != OUTCOME_OK)
        snprintf(why, n, "its virtual runs failed: %.180s", err);
    else if (!ok)
        snprintf(why, n, "it found no capacity (%s)", answer_status_name(r->ans.status));
    *load = r->ans.max;
    free(r);
    return ok;
}

/* d's runs up to `upto` (more seeds), sorted. 0, or -1 when a run could
 * not be made (d keeps the runs it had). */
static int draw_more(search *s, twin_draws *d, int upto) {
    d->b = xrealloc(d->b, (size_t)upto * sizeof *d->b); /* the first d->n stay as they are */
    for (int k = d->n; k < upto; k++) {
        virtual_target vt = s->twin_vt;
        run_opts ro = s->o->run;
        ro.seed = (int64_t)((uint64_t)s->o->run.seed + TWIN_SEED_BASE + (uint64_t)k);
        vt.seed = vt.engine.seed = (uint64_t)ro.seed;
        run_rows rows;
        char err[300];
        if (longrun_rows(&ro, &vt, s->ps.by_concurrency, d->load, d->requests, NULL, &rows, err,
                         sizeof err) != OUTCOME_OK)
            return -1;
        d->b[k] = probe_badness(rows.r, rows.n, d->requests, &s->ps.slo, s->o->goal);
        rows_free(&rows);
    }
    d->n = upto;
    sort_doubles(d->b, (size_t)d->n);
    return 0;
}

/* The twin's runs of a probe at `load` with `requests`, at least `want`
 * of them: made once, then kept and added to. NULL when a run could not
 * be made. */
static const twin_draws *draws_of(search *s, double load, long requests, int want) {
    twin_draws *d = NULL;
    for (int i = 0; i < s->n_draws && !d; i++)
        if (s->draws[i].load == load && s->draws[i].requests == requests)
            d = &s->draws[i];
    if (!d) {
        s->draws = xrealloc(s->draws, (size_t)(s->n_draws + 1) * sizeof *s->draws);
        d = &s->draws[s->n_draws++];
        d->load = load;
        d->requests = requests;
        d->n = 0;
        d->b = NULL;
    }
    return d->n >= want || draw_more(s, d, want) == 0 ? d : NULL;
}

/* Where probe p lies among the twin's runs of it: 1 worse than each, -1
 * (run whole) better than each, 0 among them. */
static int beyond(const probe *p, const twin_draws *d) {
    if (p->badness > d->b[d->n - 1])
        return 1;
    return !p->stopped && p->badness < d->b[0] ? -1 : 0;
}

/* What the twin cannot explain, into why: 1, or 0 when nothing. A probe
 * beyond the twin's first runs of it is set against more before it
 * counts. */
static int contradicted(search *s, char *why, size_t n) {
    const char *unit = s->ps.by_concurrency ? "users" : "req/s";
    tp_says t; /* a load over the throughput probe's estimate is more likely lost than not */
    if (search_verdict_throughput(s, &t) && s->twin_load >= t.point) {
        snprintf(why, n, "it is at or over the throughput the server completes (%g %s)", t.point,
                 unit);
        return 1;
    }
    int tested = 0;
    for (int i = 0; i < s->n; i++)
        tested += !isnan(value_of(s, i));
    int most = TWIN_DRAWS * tested < TWIN_DRAWS_MOST ? TWIN_DRAWS * tested : TWIN_DRAWS_MOST;
    for (int i = 0; i < s->n; i++) {
        double v = value_of(s, i);
        const probe *p = &s->probes[i];
        if (isnan(v))
            continue;
        const twin_draws *d = draws_of(s, v, p->requests, TWIN_DRAWS);
        if (d && beyond(p, d) && most > d->n)
            d = draws_of(s, v, p->requests, most);
        int side = d ? beyond(p, d) : 0; /* no run of the twin says nothing of this probe */
        if (side) {
            snprintf(
                why, n,
                "probe %d at %g %s went %s than each of the twin's %d runs of it (%ld of %ld met)",
                i + 1, v, unit, side > 0 ? "worse" : "better", d->n, p->met, p->requests);
            return 1;
        }
    }
    return 0;
}

/* The twin's CPU since t0, into what the search has spent (with --virtual
 * its time is the probes' and this: a real search would spend it too). */
static double spend(search *s, double t0) {
    double took = mono_us() / 1e6 - t0;
    s->twin_s += took;
    if (s->o->vt)
        s->virtual_s += took;
    return took;
}

void search_twin_free(search *s) {
    for (int i = 0; i < s->n_draws; i++)
        free(s->draws[i].b);
    free(s->draws);
    s->draws = NULL;
    s->n_draws = 0;
}

void search_twin_propose(search *s) {
    double t0 = mono_us() / 1e6;
    search_twin_free(s); /* the runs of an earlier twin */
    if (s->twin_state == TWIN_ACCEPTED)
        s->twin_refitted = 1;
    s->twin_fit_at = s->n;
    profile_doc doc;
    s->twin_proposals++;
    s->twin_state = TWIN_UNFIT;
    if (!fit_probes(s, &doc, s->twin_why, sizeof s->twin_why)) {
        double load;
        if (ask(s, &doc, &load, s->twin_why, sizeof s->twin_why)) {
            s->twin_state = TWIN_TESTING;
            if (s->ps.by_concurrency) {
                s->twin_load = floor(load);
                s->twin_above = s->twin_load + 1;
            } else {
                s->twin_load = search_verdict_round(load, 0, INFINITY);
                s->twin_above = search_verdict_round(s->twin_load * (1 + s->o->precision),
                                                     s->twin_load, INFINITY);
            }
            s->twin_why[0] = 0;
        }
        profile_doc_free(&doc);
    }
    double took = spend(s, t0);
    if (!s->o->run.quiet && s->twin_state == TWIN_TESTING)
        notice(s->o->notices, NOTICE_PROGRESS,
               "capacity: the twin fitted to %d probes%s says %g %s: probing it and %g (%.1f s)",
               s->twin_probes, s->twin_scale > 1 ? " (held to the throughput probe's rate)" : "",
               s->twin_load, s->ps.by_concurrency ? "users" : "req/s", s->twin_above, took);
    else if (!s->o->run.quiet)
        notice(s->o->notices, NOTICE_PROGRESS, "capacity: no twin: %s (%.1f s)", s->twin_why, took);
    search_verdict_derive(s);
}

/* Whether the load a step above the proposal needs a probe: not when the
 * throughput probe says it is over what the server completes (it fails). */
static int above_needed(const search *s) {
    tp_says t;
    return !(search_verdict_throughput(s, &t) && s->twin_above >= t.point);
}

void search_twin_judge(search *s) {
    if (s->twin_state != TWIN_TESTING && s->twin_state != TWIN_ACCEPTED)
        return;
    double t0 = mono_us() / 1e6;
    int no = contradicted(s, s->twin_why, sizeof s->twin_why);
    spend(s, t0);
    if (no) {
        s->twin_state = TWIN_REJECTED;
        if (!s->o->run.quiet)
            notice(s->o->notices, NOTICE_PROGRESS, "capacity: the twin's %g %s is rejected: %s",
                   s->twin_load, s->ps.by_concurrency ? "users" : "req/s", s->twin_why);
        return;
    }
    if (s->twin_state == TWIN_TESTING) {
        level at = search_verdict_level(s, s->twin_load);
        level above = search_verdict_level(s, s->twin_above);
        if (at.runs == 0 || (above.runs == 0 && above_needed(s)))
            return;
        s->twin_state = TWIN_ACCEPTED;
    }
    s->lo = s->twin_load;
    s->hi = s->twin_above;
}

void search_twin_unchecked(search *s) {
    s->twin_state = TWIN_ACCEPTED;
    s->twin_unchecked = search_verdict_level(s, s->twin_load).runs == 0;
    search_verdict_derive(s);
}

int search_twin_next(const search *s, double *v) {
    if (s->twin_state != TWIN_TESTING)
        return 0;
    level at = search_verdict_level(s, s->twin_load);
    *v = at.runs == 0 ? s->twin_load : s->twin_above;
    return at.runs == 0 || above_needed(s);
}

/* Whether the search asks the twin now: once the probes bracket the
 * answer and the throughput probe (when one is run) has run; once more
 * when its proposal was accepted, refitted with the probes that tested it
 * (a proposal that moves is tested again); and after a contradiction,
 * once a probe has run that it was not fitted to; at most
 * TWIN_MAX_PROPOSALS times. */
int search_twin_due(const search *s) {
    if (isnan(s->lo) || isnan(s->hi) || s->o->twin == 0 || s->twin_proposals >= TWIN_MAX_PROPOSALS)
        return 0;
    if (s->twin_state == TWIN_ACCEPTED)
        return !s->twin_refitted && !s->twin_unchecked;
    if (s->twin_state == TWIN_REJECTED)
        return s->n > s->twin_fit_at; /* a probe it was not fitted to */
    return s->twin_state == TWIN_NOT_YET;
}

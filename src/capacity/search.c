/* search: bracket, measure the throughput, bisect, clear the ends,
 * confirm (see search.h and docs/capacity.md). The probes at one load are
 * pooled into a level; each level has a point verdict (the share met of
 * all its runs planned, a stopped run's unfinished requests as met) and,
 * when its Wilson interval (its counts shrunk by the design effect of its
 * runs' spread, the largest within 10%) lies wholly on one side of the
 * goal, a clear one; a run whose wait still drifted up makes no clear pass.
 * A full probe's arrivals last long enough for an overload of the precision
 * to push waits past the SLO's bound (plan_lengths). With random arrivals
 * the closed-loop throughput probe's lower end fails every load at or above
 * it. Bisection follows the point verdicts; the interval's ends are clear
 * verdicts from two runs at least, the lower a precision step below the
 * answer; the answer is then run once more, three probes long. */
#include "capacity/search.h"
#include "capacity/answer.h"
#include "capacity/binomial.h"
#include "capacity/probe.h"
#include "capacity/saturation.h"
#include "common/notice.h"
#include "common/clock.h"
#include "common/files.h"
#include "common/stop.h"
#include "common/util.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_RUNS_A_LEVEL 5 /* a boundary load is run at most this often */
#define LEN_FACTOR 2.0     /* a full probe: 2 x wait budget / precision of arrivals, + the ramp */
#define CONFIRM_FACTOR 3   /* the confirmation run: this many full probes' requests */
#define MAX_CONFIRMS 3     /* confirmation runs at most (each failure sends the search below) */
#define PLANNED_FULL 8     /* full probes a search is planned to need, for --max-time */
#define IMPLICIT_BUDGET 10 /* no TTFT or E2E bound: a wait 10 x the first probe's TTFT */
#define THROUGHPUT_S 10.0  /* the throughput probe: about this long saturated */
#define MAX_TP_USERS 20000
#define MIN_RUNS_AT_END 2 /* an end of the interval: at least this many runs (seeds) */
#define BRACKET_S 5.0     /* a bracketing probe: about 5 s of arrivals (or rounds of users) */
#define MAX_RATE 1e6
#define MAX_USERS 100000

typedef struct search {
    const capacity_opts *o;
    probe_setup ps;
    const char *out;
    probe *probes;
    int n, cap;
    long goal_n;      /* the fewest requests of a full probe (binomial.h) */
    int fixed_n;      /* --requests given: every probe has it */
    double budget_ms; /* the wait an overload must push past: the TTFT or E2E bound */
    double need_s;    /* the arrivals a full probe needs (LEN_FACTOR x budget / precision + ramp) */
    double full_s;    /* what it gets: need_s, or less when --max-time cannot hold it */
    int upper_bound;  /* full_s < need_s: the answer is an upper bound */
    int confirmed;    /* the last confirmation run passed */
    int n_confirms;   /* confirmation runs so far */
    int confirm_at;   /* the last one's probe index; -1: none */
    int tp_at;        /* the throughput probe's index (throughput.h); -1: none */
    double t0, lo, hi; /* lo: the highest passing load below hi, the lowest failing; NAN none */
    int stopped_by_time;
    int lock_fd;
    int last_code; /* the last probe's (probe.h) */
} search;

typedef struct level {
    double met_lo, met_hi, n; /* unfinished counted as missed / as met */
    double deff;              /* design effect of the runs' spread (binomial.h), >= 1 */
    int growing, runs;
    int confirm_failed; /* a confirmation run here failed: the level fails (its point verdict) */
    int certain;        /* runs stopped as certain to fail (saturation.h) */
    int drifting;       /* a run's wait still grew in its second half (steady.h): no clear pass */
} level;

#define SPREAD_RUNS 32 /* the runs of a level whose spread is measured */

/* The loads this close (relative) lend each other their spread. */
#define SPREAD_NEIGHBOURS 0.10

/* Probe i's load: its rate or users; NAN for the throughput probe, which is
 * no load of the search. */
static double value_of(const search *s, int i) {
    const probe *p = &s->probes[i];
    if (p->max_users)
        return NAN;
    return s->ps.by_concurrency ? (double)p->concurrency : p->rate_rps;
}

/* A level's counts and the design effect of its own runs' spread (a run
 * stopped as lost counts all it planned, the unfinished as met: the least
 * it missed). */
static level own_level(const search *s, double v) {
    level l = {0};
    double met[SPREAD_RUNS], planned[SPREAD_RUNS];
    for (int i = 0; i < s->n; i++) {
        const probe *p = &s->probes[i];
        if (value_of(s, i) != v)
            continue;
        l.met_lo += (double)p->met;
        l.met_hi += (double)(p->met + p->unfinished);
        l.n += (double)p->requests;
        l.growing |= p->stopped == SAT_GROWING || p->not_steady;
        l.confirm_failed |= p->confirm && !p->passed;
        l.certain += p->stopped == SAT_CERTAIN;
        l.drifting |= !p->stopped && p->steady.slope_low > 0;
        if (l.runs < SPREAD_RUNS) {
            met[l.runs] = (double)(p->met + p->unfinished);
            planned[l.runs] = (double)p->requests;
        }
        l.runs++;
    }
    l.deff = design_effect(met, planned, l.runs < SPREAD_RUNS ? l.runs : SPREAD_RUNS);
    return l;
}

/* A level, its design effect the largest measured at it or at a load
 * within SPREAD_NEIGHBOURS of it: near the knee a probe either holds or
 * collapses (gpu-7b at 12 req/s: 5 seeds met 81%, 99%, 100%, 100%, 49%), and
 * two runs that both met everything show no spread of their own, while
 * their neighbour's runs do. */
static level level_of(const search *s, double v) {
    level l = own_level(s, v);
    for (int i = 0; i < s->n; i++) {
        double u = value_of(s, i);
        if (isnan(u) || u == v || fabs(u - v) > SPREAD_NEIGHBOURS * v)
            continue;
        level near = own_level(s, u);
        if (near.deff > l.deff)
            l.deff = near.deff;
    }
    return l;
}

/* The point verdict: the share met of every request the runs planned,
 * a stopped run's unfinished ones counted as met. A run stopped as lost
 * was stopped just after a burst of misses, so its finished requests alone
 * would overstate them; counted so it still misses more than the goal
 * allows (it was stopped because even then it could not pass). */
static int level_passed(const search *s, const level *l) {
    return !l->growing && !l->confirm_failed && l->n > 0 && l->met_hi >= s->o->goal * l->n;
}

/* A clear pass also needs every run's wait to have stopped growing: a
 * queue still filling from empty near the limit meets the SLO until it is
 * full. */
static int clear_pass(const search *s, const level *l) {
    double lo, hi;
    if (l->growing || l->confirm_failed || l->drifting || l->n <= 0)
        return 0;
    wilson_interval(l->met_lo / l->deff, l->n / l->deff, BINOMIAL_Z95, &lo, &hi);
    return lo >= s->o->goal;
}

static int clear_fail(const search *s, const level *l) {
    double lo, hi;
    if (l->growing)
        return 1;
    wilson_interval(l->met_hi / l->deff, l->n / l->deff, BINOMIAL_Z95, &lo, &hi);
    return hi < s->o->goal;
}

/* Clear enough to be an end of the interval: from at least two runs (a
 * growing queue is lost at any seed, and needs none). */
static int end_pass(const search *s, const level *l) {
    return clear_pass(s, l) && l->runs >= MIN_RUNS_AT_END;
}

static int end_fail(const search *s, const level *l) {
    if (l->runs >= MIN_RUNS_AT_END && l->certain == l->runs) /* each lost for certain */
        return 1;
    return l->growing || (clear_fail(s, l) && l->runs >= MIN_RUNS_AT_END);
}

/* Random arrivals at or above what the server completes build a queue
 * with no bound: the lower end of the throughput probe's interval, when it
 * was saturated and is precise to a quarter of the precision, fails every
 * load from it on (docs/capacity.md). 1 with *bound, or 0. */
static int capacity_bound(const search *s, double *bound) {
    if (s->tp_at < 0 || !strcmp(s->o->run.arrival, "constant"))
        return 0;
    const throughput_fit *t = &s->probes[s->tp_at].tp;
    if (!t->saturated || !(t->low_rps > 0) ||
        (t->high_rps - t->low_rps) / 2 > s->o->precision / 4 * t->rate_rps)
        return 0;
    *bound = t->low_rps;
    return 1;
}

/* lo and hi from every level probed so far. */
static void derive(search *s) {
    s->lo = s->hi = NAN;
    for (int i = 0; i < s->n; i++) {
        double v = value_of(s, i);
        if (isnan(v))
            continue; /* the throughput probe is no load of the search */
        level l = level_of(s, v);
        if (!level_passed(s, &l) && !(v >= s->hi))
            s->hi = v;
    }
    double bound;
    if (capacity_bound(s, &bound) && !(bound >= s->hi))
        s->hi = bound;
    for (int i = 0; i < s->n; i++) {
        double v = value_of(s, i);
        if (isnan(v))
            continue; /* the throughput probe is no load of the search */
        level l = level_of(s, v);
        if (level_passed(s, &l) && !(v <= s->lo) && !(v >= s->hi))
            s->lo = v;
    }
}

/* x to 3 significant digits (4, 5 when that is not strictly between lo
 * and hi): a load a user can read, 12 req/s rather than 11.9968. */
static double round_between(double x, double lo, double hi) {
    for (int digits = 3; digits <= 5; digits++) {
        double scale = pow(10, digits - 1 - floor(log10(fabs(x))));
        double r = round(x * scale) / scale;
        if (r > lo && r < hi)
            return r;
    }
    return x;
}

/* The interval's low end is a clear pass one precision step below the
 * answer or lower: the answer itself is a point verdict at the
 * bisection's resolution, and near the limit the misses come in bursts
 * rarer than a probe, so runs at the answer that all held are weaker
 * evidence than their count says (docs/capacity.md measures how often). */
static double low_end_cap(const search *s) {
    if (s->ps.by_concurrency)
        return s->lo - 1;
    return round_between(s->lo / (1 + s->o->precision), 0, s->lo);
}

/* The interval's ends: the highest clear pass at or below the answer and
 * the lowest clear failure above it; the point verdicts' loads when none
 * is clear. Returns how many ends are only point verdicts. */
static int interval(const search *s, double *ci_low, double *ci_high) {
    *ci_low = *ci_high = NAN;
    for (int i = 0; i < s->n; i++) {
        double v = value_of(s, i);
        if (isnan(v))
            continue; /* the throughput probe is no load of the search */
        level l = level_of(s, v);
        if (v <= low_end_cap(s) && end_pass(s, &l) && !(v <= *ci_low))
            *ci_low = v;
        if (v > s->lo && end_fail(s, &l) && !(v >= *ci_high))
            *ci_high = v;
    }
    double bound;
    if (capacity_bound(s, &bound) && bound > s->lo && !(bound >= *ci_high))
        *ci_high = bound; /* every load from it on fails, clearly */
    int unclear = isnan(*ci_low) + isnan(*ci_high);
    if (isnan(*ci_low))
        *ci_low = s->lo;
    if (isnan(*ci_high))
        *ci_high = s->hi;
    return unclear;
}

static int narrow(const search *s) {
    if (s->ps.by_concurrency && s->hi - s->lo <= 1)
        return 1;
    return (s->hi - s->lo) / s->lo < s->o->precision;
}

static double elapsed(const search *s) {
    return mono_us() / 1e6 - s->t0;
}

static int time_up(search *s) {
    if (elapsed(s) < s->o->max_time_s)
        return 0;
    s->stopped_by_time = 1;
    return 1;
}

static void fill_answer(const search *s, capacity_result *r) {
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
        interval(s, &a->ci_low, &a->ci_high);
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
    a->precision = s->o->precision;
    r->tp_probe = s->tp_at;
    r->tp_used = capacity_bound(s, &r->tp_bound);
    capacity_result_finish(r);
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The loads probed, each once, ascending; the caller frees. */
static double *loads(const search *s, int *k) {
    double *v = xmalloc((size_t)(s->n ? s->n : 1) * sizeof *v);
    *k = 0;
    for (int i = 0; i < s->n; i++) {
        int seen = isnan(value_of(s, i));
        for (int j = 0; j < *k && !seen; j++)
            seen = v[j] == value_of(s, i);
        if (!seen)
            v[(*k)++] = value_of(s, i);
    }
    qsort(v, (size_t)*k, sizeof *v, cmp_double);
    return v;
}

/* capacity.json's levels: each load's pooled verdict, as the search
 * judged it. */
static json_t *levels_json(const search *s) {
    int k;
    double *all = loads(s, &k);
    json_t *arr = json_array();
    for (int j = 0; j < k; j++) {
        level l = level_of(s, all[j]);
        /* the unfinished requests of a stopped probe as missed for the
         * lower end and as met for the upper (as clear_pass/clear_fail) */
        double lo, hi, unused;
        wilson_interval(l.met_lo / l.deff, l.n / l.deff, BINOMIAL_Z95, &lo, &unused);
        wilson_interval(l.met_hi / l.deff, l.n / l.deff, BINOMIAL_Z95, &unused, &hi);
        const char *verdict = end_fail(s, &l)       ? "clear_fail"
                              : end_pass(s, &l)     ? "clear_pass"
                              : level_passed(s, &l) ? "passed"
                                                    : "failed";
        json_array_append_new(arr, json_pack("{s:f,s:i,s:I,s:I,s:f,s:f,s:f,s:f,s:b,s:s}", "load",
                                             all[j], "runs", l.runs, "requests", (json_int_t)l.n,
                                             "met", (json_int_t)l.met_lo, "met_share",
                                             l.n > 0 ? l.met_hi / l.n : 0.0, "design_effect",
                                             l.deff, "ci_low", lo, "ci_high", hi, "drifting",
                                             l.drifting, "verdict", verdict));
    }
    free(all);
    return arr;
}

static void write_answer(const search *s) {
    capacity_result a;
    fill_answer(s, &a);
    json_t *j = capacity_result_json(&a);
    json_object_set_new(j, "levels", levels_json(s));
    if (write_json_atomic(s->out, "capacity.json", j))
        notice(s->o->notices, NOTICE_WARNING, "cannot write %s/capacity.json: %s", s->out,
               strerror(errno));
    json_decref(j);
}

static void say_probe(const search *s, const probe *p, double v) {
    if (s->o->run.quiet)
        return;
    notice(s->o->notices, NOTICE_PROGRESS,
           "capacity: probe %d at %g %s: %ld of %ld met (95%% CI %.3f-%.3f) %s%s%s (%.1f s)", s->n,
           v, s->ps.by_concurrency ? "users" : "req/s", p->met, p->requests, p->ci_low, p->ci_high,
           p->passed ? "passed" : "failed", p->stopped ? ", stopped early: " : "",
           p->stopped ? p->why : "", p->wall_s);
}

enum { PROBE_FULL, PROBE_BRACKET, PROBE_CONFIRM };

/* The requests of a probe at v: a full probe's arrivals last full_s (at
 * least goal_n requests), a bracketing one about BRACKET_S, the
 * confirmation CONFIRM_FACTOR full probes. */
static long probe_requests(const search *s, double v, int kind) {
    long full = s->goal_n;
    if (s->fixed_n)
        full = (long)s->o->run.requests;
    else if (!s->ps.by_concurrency && s->full_s > 0 && ceil(v * s->full_s) > (double)full)
        full = (long)fmin(ceil(v * s->full_s), 1e8);
    if (kind == PROBE_CONFIRM)
        return CONFIRM_FACTOR * full;
    if (kind == PROBE_BRACKET && !s->fixed_n) {
        long short_n = (long)ceil(BRACKET_S * v);
        return short_n < 10 ? 10 : short_n < full ? short_n : full;
    }
    return full;
}

/* Once the first probe has run: the wait an overload must push past, and
 * how long a full probe's arrivals must last for an overload of the
 * precision to push past it, within --max-time. */
static void plan_lengths(search *s) {
    const probe *first = &s->probes[0];
    const slo_spec *slo = &s->ps.slo;
    double b = slo->ttft_ms > 0 ? slo->ttft_ms : 0;
    if (slo->e2e_ms > 0 && (b == 0 || slo->e2e_ms < b))
        b = slo->e2e_ms;
    if (b == 0) /* a TPOT bound alone: a wait ten times the first probe's */
        b = fmax(1000, IMPLICIT_BUDGET * (isnan(first->ttft_mean_ms) ? 0 : first->ttft_mean_ms));
    s->budget_ms = b;
    double ramp = fmax(1, isnan(first->e2e_mean_ms) ? 1 : 2 * first->e2e_mean_ms / 1000);
    s->need_s = LEN_FACTOR * b / 1000 / s->o->precision + ramp;
    double left = s->o->max_time_s - elapsed(s);
    s->full_s = s->need_s;
    if (s->need_s * (PLANNED_FULL + CONFIRM_FACTOR) > left) {
        s->full_s = fmax(left, 0) / (PLANNED_FULL + CONFIRM_FACTOR);
        s->upper_bound = !s->ps.by_concurrency && !s->fixed_n;
    }
    s->ps.wait_budget_ms = b;
    s->ps.horizon_s = CONFIRM_FACTOR * s->need_s;
    s->ps.keep_up_fails = !(slo->ttft_ms > 0 || slo->e2e_ms > 0);
}

/* One more probe at v of the kind. 0, or the probe's code (probe.h) with
 * err. */
static int probe_at(search *s, double v, int kind, char *err, int errlen) {
    long n = probe_requests(s, v, kind);
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 16;
        s->probes = xrealloc(s->probes, (size_t)s->cap * sizeof *s->probes);
    }
    probe *p = &s->probes[s->n];
    probe_spec sp = {.number = s->n + 1,
                     .value = v,
                     .requests = n,
                     .seed = (int64_t)((uint64_t)s->o->run.seed + (uint64_t)s->n)}; /* its own */
    int code = probe_run(&s->ps, &sp, p, err, errlen);
    s->last_code = code;
    if (code)
        return code;
    if (kind == PROBE_CONFIRM) {
        /* with a stable queue: misses near the allowance that came mostly in
         * one burst are a queue that builds now and then, and the long run
         * has more of them than one run shows */
        double missed = (double)(p->requests - p->met);
        if (missed >= 3 && missed > (1 - s->o->goal) * (double)p->requests / 2 &&
            p->miss_burst > 0.5)
            p->passed = 0;
        p->confirm = 1;
        s->confirm_at = s->n;
        s->n_confirms++;
    }
    s->n++;
    if (s->n == 1)
        plan_lengths(s);
    say_probe(s, p, v);
    write_answer(s);
    derive(s);
    return 0;
}

/* Once a load has passed and one above it failed: the throughput probe,
 * closed loop with twice the most requests the failing load had in flight
 * (at least twice what the passing one had, by Little's law), for about
 * THROUGHPUT_S of completions at the failing rate (or 3 x the users). */
static int throughput_probe(search *s, char *err, int errlen) {
    const probe *passing = NULL, *failing = NULL;
    for (int i = 0; i < s->n; i++) {
        if (value_of(s, i) == s->lo && !passing)
            passing = &s->probes[i];
        if (value_of(s, i) == s->hi && !failing)
            failing = &s->probes[i];
    }
    double e2e_s = passing && !isnan(passing->e2e_mean_ms) ? passing->e2e_mean_ms / 1000 : 1;
    double users =
        fmax(2.0 * (failing ? (double)failing->peak_in_flight : 0), 2 * ceil(s->lo * e2e_s));
    users = fmin(fmax(users, 4), MAX_TP_USERS);
    double span = fmax(THROUGHPUT_S, 10 * e2e_s);
    long n = (long)(users + fmax(3 * users, ceil(s->hi * span)));
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 16;
        s->probes = xrealloc(s->probes, (size_t)s->cap * sizeof *s->probes);
    }
    probe_spec sp = {.number = s->n + 1,
                     .value = s->hi,
                     .requests = n,
                     .seed = (int64_t)((uint64_t)s->o->run.seed + (uint64_t)s->n),
                     .max_users = (long)users,
                     .unloaded_ttft_ms = s->probes[0].ttft_mean_ms};
    probe *p = &s->probes[s->n];
    int code = probe_run(&s->ps, &sp, p, err, errlen);
    s->last_code = code;
    if (code)
        return -1;
    s->tp_at = s->n++;
    if (!s->o->run.quiet)
        notice(s->o->notices, NOTICE_PROGRESS,
               "capacity: probe %d, throughput with %ld users: %.4g req/s (95%% CI %.4g-%.4g)"
               "%s (%.1f s)",
               s->n, p->max_users, p->tp.rate_rps, p->tp.low_rps, p->tp.high_rps,
               p->tp.saturated ? "" : ", not saturated: not used", p->wall_s);
    write_answer(s);
    derive(s);
    return 1;
}

/* The search has found its answer: run it once more for CONFIRM_FACTOR
 * full probes' worth of requests, unless the last confirmation was of this
 * answer already. 1 after a run (the next step judges what it changed),
 * 0 when there is nothing to confirm, or a probe's code. */
static int confirm_answer(search *s, char *err, int errlen) {
    if (!s->o->confirm || isnan(s->lo) || isnan(s->hi) || s->n_confirms >= MAX_CONFIRMS)
        return 0;
    if (s->confirm_at >= 0 && value_of(s, s->confirm_at) == s->lo)
        return 0; /* confirmed (a failed one would have moved lo) */
    return probe_at(s, s->lo, PROBE_CONFIRM, err, errlen) ? -1 : 1;
}

/* The load to repeat so that an end of the interval is clear: walking
 * down from lo over the passing loads (up from hi over the failing ones)
 * to the first that is clear from enough runs, the first one on the way
 * that may still be run again. 1 with *v, or 0: nothing to repeat. */
static int confirm_end(const search *s, int upper, double *v) {
    int k, found = 0;
    double bound;
    if (upper && capacity_bound(s, &bound) && bound == s->hi)
        return 0; /* the upper end is the server's throughput: clear */
    double *all = loads(s, &k);
    double cap = low_end_cap(s), below = NAN; /* the highest load probed at or under cap */
    for (int j = 0; j < k; j++)
        if (all[j] <= cap)
            below = all[j];
    double step = s->ps.by_concurrency ? cap - 1 : cap / (1 + s->o->precision);
    if (!upper && cap >= 1 && (isnan(below) || below < step)) {
        free(all); /* a load there to clear, one step below the answer */
        *v = cap;
        return 1;
    }
    int bounded = capacity_bound(s, &bound);
    for (int j = 0; j < k && !found; j++) {
        double x = upper ? all[j] : all[k - 1 - j];
        if (upper ? !(x > s->lo) : !(x <= cap))
            continue;
        if (upper && bounded && x >= bound)
            break; /* the throughput bound below it is a clear failure */
        level l = level_of(s, x);
        if (level_passed(s, &l) == upper) /* a failing load below lo, a passing one above */
            continue;
        if (upper ? end_fail(s, &l) : end_pass(s, &l))
            break;
        if (!upper && l.drifting)
            continue; /* no repetition makes it clear: the next load down */
        if (l.runs < MAX_RUNS_A_LEVEL) {
            *v = x;
            found = 1;
        }
    }
    free(all);
    return found;
}

/* The next step: while no load has failed, double the highest that passed
 * (from the start); while none has passed, repeat the failing first load
 * until its failure is clear; then bisect to the precision, and repeat the
 * ends until their verdicts are clear from at least MIN_RUNS_AT_END runs
 * (at most MAX_RUNS_A_LEVEL each; an end that stays unclear gives way to
 * the next load outward, confirmed the same way).
 * Pooled repeats may turn a verdict over; the next step follows from what
 * all probes say then. Returns 0 when done, 1 after a probe, or the code of
 * a probe that could not run (probe.h). */
static int step(search *s, char *err, int errlen) {
    double ceiling = s->ps.by_concurrency ? MAX_USERS : MAX_RATE;
    double start = s->ps.by_concurrency ? (double)s->o->start_concurrency : s->o->start_rate;
    if (isnan(s->hi)) {
        double v = isnan(s->lo) ? start : 2 * s->lo;
        if (v > ceiling)
            return 0;
        return probe_at(s, v, PROBE_BRACKET, err, errlen) ? -1 : 1;
    }
    if (!isnan(s->lo) && s->tp_at < 0 && !s->ps.by_concurrency &&
        strcmp(s->o->run.arrival, "constant"))
        return throughput_probe(s, err, errlen);
    level h = level_of(s, s->hi);
    double v;
    if (isnan(s->lo) && !clear_fail(s, &h) && h.runs < MAX_RUNS_A_LEVEL)
        v = s->hi;
    else if (isnan(s->lo))
        return 0;
    else if (!narrow(s))
        v = s->ps.by_concurrency ? floor((s->lo + s->hi) / 2)
                                 : round_between((s->lo + s->hi) / 2, s->lo, s->hi);
    else if (!confirm_end(s, 0, &v) && !confirm_end(s, 1, &v))
        return confirm_answer(s, err, errlen);
    return probe_at(s, v, PROBE_FULL, err, errlen) ? -1 : 1;
}

static int run_search(search *s, char *err, int errlen) {
    for (;;) {
        int r = step(s, err, errlen);
        if (r < 0) /* the probe could not run */
            return s->last_code;
        if (r == 0 || stop_signal() || time_up(s))
            return 0;
    }
}

/* OUT: made, locked, and holding no earlier search (unless --force, which
 * removes its probes and capacity.json). 0, or -1 with err. */
static int prepare_out(search *s, char *err, int errlen) {
    if (strlen(s->out) > OUT_DIR_MAX - 100) {
        snprintf(err, errlen, "--out: the path has %zu characters (at most %d)", strlen(s->out),
                 OUT_DIR_MAX - 100);
        return -1;
    }
    if (mkdir_p(s->out)) {
        snprintf(err, errlen, "--out %s: cannot create: %s", s->out, strerror(errno));
        return -1;
    }
    char why[4400];
    if (dir_lock(s->out, &s->lock_fd, why, sizeof why)) {
        snprintf(err, errlen, "--out %s", why);
        return -1;
    }
    DIR *d = opendir(s->out);
    struct dirent *e;
    int held = 0;
    while (d && (e = readdir(d))) {
        if (strncmp(e->d_name, "probe-", 6) && strcmp(e->d_name, "capacity.json"))
            continue;
        held = 1;
        char path[4400];
        snprintf(path, sizeof path, "%s/%s", s->out, e->d_name);
        if (s->o->run.force && remove_tree(path)) {
            snprintf(err, errlen, "--out %s: cannot remove %s: %s", s->out, e->d_name,
                     strerror(errno));
            closedir(d);
            return -1;
        }
    }
    if (d)
        closedir(d);
    if (held && !s->o->run.force) {
        snprintf(err, errlen,
                 "--out %s already holds a capacity search: add --force to replace it, or give "
                 "another --out",
                 s->out);
        return -1;
    }
    return 0;
}

int capacity_opts_validate(const capacity_opts *o, char *err, int errlen) {
    slo_spec slo;
    if (!o->run.slo) {
        snprintf(err, errlen, "--slo is required (e.g. --slo ttft=750ms,tpot=100ms)");
        return -1;
    }
    if (slo_parse(o->run.slo, &slo, err, errlen))
        return -1;
    if (!o->run.url == !o->sim) {
        snprintf(err, errlen, "give --url URL or --sim \"ARGS\" (the simulator), one of them");
        return -1;
    }
    run_opts r = o->run;
    if (!r.url)
        r.url = "http://127.0.0.1:1"; /* each probe's simulator has its own */
    return run_opts_validate(&r, err, errlen);
}

/* The warnings about the answer: probes whose client fell behind, an end
 * of the interval that is a point verdict's. */
static void warn_about(const search *s, const capacity_answer *a) {
    double lo, hi;
    int flagged = 0;
    for (int i = 0; i < s->n; i++)
        flagged += s->probes[i].client_flagged;
    if (flagged)
        notice(s->o->notices, NOTICE_WARNING,
               "capacity: in %d of %d probes the client was not within 1 ms (each probe's "
               "summary.json says how; servelab calibrate tells this machine's limits)",
               flagged, s->n);
    if (a->status == ANSWER_FOUND && interval(s, &lo, &hi) && !s->o->run.quiet)
        notice(s->o->notices, NOTICE_WARNING,
               "capacity: no probe at an end of the interval cleared its verdict at 95%%; "
               "that end is a point verdict's (more --requests would clear it)");
}

outcome capacity_execute(const capacity_opts *o, json_t *command_line, capacity_answer *said,
                         char *err, int errlen) {
    search s = {.o = o, .out = o->run.out ? o->run.out : "out/capacity", .lock_fd = -1};
    s.ps = (probe_setup){.base = &o->run,
                         .sim_args = o->sim,
                         .self = o->self,
                         .out = s.out,
                         .by_concurrency = !strcmp(o->by, "concurrency"),
                         .goal = o->goal,
                         .command_line = command_line};
    slo_parse(o->run.slo, &s.ps.slo, err, errlen); /* checked by capacity_opts_validate */
    s.fixed_n = o->run.have_requests;
    s.goal_n = requests_for_goal(o->goal);
    s.confirm_at = -1;
    s.tp_at = -1;
    s.ps.vt = o->vt;
    s.ps.wait_budget_ms = INFINITY; /* no keep-up verdict before the lengths are planned */
    s.lo = s.hi = NAN;
    s.t0 = mono_us() / 1e6;
    answer_init(said, ANSWER_SEARCHED);
    int code = prepare_out(&s, err, errlen) ? 2 : 0;
    stop_install();
    if (!code)
        code = run_search(&s, err, errlen);
    outcome got = !code ? OUTCOME_OK : code == 2 || s.n == 0 ? OUTCOME_BAD_INPUT : OUTCOME_FAILED;
    /* (the first probe could not run: the target or its arguments) */
    if (s.n) {
        write_answer(&s);
        capacity_result r;
        fill_answer(&s, &r);
        *said = r.ans;
        warn_about(&s, said);
        if (!code && said->status != ANSWER_FOUND)
            got = OUTCOME_FAILED;
    }
    if (stop_signal())
        got = OUTCOME_STOPPED;
    free(s.probes);
    json_decref(command_line);
    dir_unlock(s.lock_fd);
    return got;
}

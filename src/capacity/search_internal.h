/* search_internal: what the capacity search's files share; nothing
 * outside them includes it (search.h is the interface). search.c runs the
 * search: it chooses each probe, its load and its length, and stops;
 * search_verdict.c says what the probes so far say (each load's pooled
 * verdict, lo and hi, the interval); search_answer.c writes what the
 * search says (capacity.json, the answer, the warnings about it). */
#ifndef SERVELAB_SEARCH_INTERNAL_H
#define SERVELAB_SEARCH_INTERNAL_H

#include "capacity/answer.h"
#include "capacity/probe.h"
#include "capacity/search.h"
#include "common/clock.h"

#include <math.h>

/* A full probe's arrivals: LEN_FACTOR x wait budget / precision, + the
 * ramp: an overload of d lengthens the wait by d seconds a second, so
 * that it passes the budget in budget / d seconds, and twice that makes it
 * plain. Read the other way, t seconds of arrivals show an overload of
 * LEN_FACTOR x budget / (t - ramp) or more. */
#define LEN_FACTOR 2.0

/* A search as it goes: its options, its probes so far, and what they say. */
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
    double ramp_s;    /* of which the ramp: the seconds before a probe's waits can grow */
    double full_s;    /* what it gets: need_s, or less when --max-time cannot hold it */
    int upper_bound;  /* full_s < need_s: the answer is an upper bound */
    int confirmed;    /* the last confirmation run passed */
    int n_confirms;   /* confirmation runs so far */
    int confirm_at;   /* the last one's probe index; -1: none */
    int tp_at;        /* the throughput probe's index (throughput.h); -1: none */
    double t0, lo, hi; /* lo: the highest passing load below hi, the lowest failing; NAN none */
    int stopped_by_time;
    int lock_fd;
    int last_code;           /* the last probe's (probe.h) */
    double virtual_s;        /* --virtual: the probes' time so far, in virtual time */
    double lone_baseline_ms; /* no gauges: the lone request's time on the idle server (drain.h) */
    struct curl_slist *lone_headers;
    char lone_url[4200];
    char *lone_body;
    int lag_repeats; /* probes run again because the client lagged */
    /* the twin (search_twin.c): fitted to the probes, it proposes the answer */
    int twin_state;         /* TWIN_* */
    int twin_proposals;     /* fits asked so far */
    double twin_load;       /* its proposal; NAN: none */
    double twin_above;      /* a precision step above it */
    int twin_probes;        /* the probes the last fit was fitted to */
    int twin_unchecked;     /* accepted with no probe at it: --max-time left no room */
    int twin_refitted;      /* an accepted proposal was refitted with the probes that tested it */
    int twin_fit_at;        /* s->n when it was last fitted */
    double twin_s;          /* the seconds the fits and their virtual runs took */
    double twin_scale;      /* its step costs' factor to match the throughput probe (1: none) */
    char twin_why[240];     /* why it was not fitted, or what contradicted it */
    virtual_target twin_vt; /* the fitted engine (its model: twin_model) */
    char twin_model[128];
    struct twin_draws *draws; /* the twin's runs of the probes' loads (search_twin.c) */
    int n_draws;
} search;

enum {
    TWIN_NOT_YET,  /* not asked yet: the probes do not bracket the answer */
    TWIN_TESTING,  /* proposed: the probes at it and a step above run */
    TWIN_ACCEPTED, /* both ran and no probe contradicts it: it is the answer */
    TWIN_REJECTED, /* a probe contradicted it clearly: bisection goes on */
    TWIN_UNFIT,    /* it could not be fitted, or proposed nothing: bisection */
};

/* The probes at one load, pooled (search_verdict.c). */
typedef struct level {
    double met, n; /* of the requests whose verdict the runs show */
    double deff;   /* design effect of the runs' spread (binomial.h), >= 1 */
    int growing, runs;
    int confirm_failed; /* a confirmation run here failed: the level fails (its point verdict) */
    int certain;        /* runs stopped as certain to fail (saturation.h) */
    int drifting;       /* a run's wait still grew in its second half (steady.h): no clear pass */
} level;

/* Probe i's load: its rate or users; NAN for the throughput probe, which is
 * no load of the search, and for a probe run again because the client
 * lagged. */
static inline double value_of(const search *s, int i) {
    const probe *p = &s->probes[i];
    if (p->max_users || p->lagged)
        return NAN;
    return s->ps.by_concurrency ? (double)p->concurrency : p->rate_rps;
}

/* Seconds since the search started: with --virtual, the probes' own time
 * (what the search would take against the simulator), which is what
 * --max-time bounds there. */
static inline double elapsed(const search *s) {
    if (s->o->vt)
        return s->virtual_s;
    return mono_us() / 1e6 - s->t0;
}

/* search_verdict.c */

/* A level, its design effect the largest measured at it or at a load near
 * it (see search_verdict.c). */
level search_verdict_level(const search *s, double v);
/* The point verdict: the share met of every request the runs planned. */
int search_verdict_passed(const search *s, const level *l);
/* The level fails clearly at 95% (or its queue grew without bound). */
int search_verdict_clear_fail(const search *s, const level *l);
/* Clear enough to be an end of the interval, from enough runs. */
int search_verdict_end_pass(const search *s, const level *l);
int search_verdict_end_fail(const search *s, const level *l);
/* What the throughput probe says of the loads (search_verdict.c): every
 * load at or above `clear` fails clearly; hi is at most `point`; a load
 * under `low` is no overload. 1 with *t, or 0 when it says nothing. */
typedef struct tp_says {
    double clear, point, low, high;
} tp_says;
int search_verdict_throughput(const search *s, tp_says *t);
/* Its `clear`: 1 with *bound, or 0. */
int search_verdict_bound(const search *s, double *bound);
/* s->lo and s->hi from every level probed so far. */
void search_verdict_derive(search *s);
/* x to 3 significant digits (4, 5 when that is not strictly between lo
 * and hi). */
double search_verdict_round(double x, double lo, double hi);
/* The highest load the interval's low end may be. */
double search_verdict_low_end_cap(const search *s);
/* The interval's ends; how many of them are only point verdicts. */
int search_verdict_interval(const search *s, double *ci_low, double *ci_high);
/* The loads probed, each once, ascending; the caller frees. */
double *search_verdict_loads(const search *s, int *k);

/* search_twin.c */

/* Fits the twin to the probes so far and asks it for the answer: the
 * state becomes TWIN_TESTING with twin_load, or TWIN_UNFIT / TWIN_REJECTED
 * with twin_why. */
void search_twin_propose(search *s);
/* After search_verdict_derive's lo and hi: a probe that contradicts the
 * proposal clearly rejects it; once it and the load a step above have run
 * uncontradicted it is accepted; an accepted proposal is lo, the step
 * above hi. */
void search_twin_judge(search *s);
/* The next load the twin's test needs: 1 with *v, or 0. */
int search_twin_next(const search *s, double *v);
/* What the twin's runs cost and hold, freed at the search's end. */
void search_twin_free(search *s);
/* Whether the twin is to be asked now (search.c's step). */
int search_twin_due(const search *s);
/* --max-time has no room for the test's next probe: the proposal is the
 * answer, checked as far as it was probed (unchecked when not at all). */
void search_twin_unchecked(search *s);

/* search_answer.c */

/* The answer as it stands, into r (its probes are s's). */
void search_answer_fill(const search *s, capacity_result *r);
/* OUT/capacity.json: the answer as it stands and each load's verdict,
 * whole or not at all: 0, or -1 with why (the search then ends: an answer
 * that cannot be kept is none). */
int search_answer_write(const search *s, char *err, int errlen);
/* The warnings about the answer a. */
void search_answer_warn(const search *s, const capacity_answer *a);

#endif

/* search_verdict: what the probes of a capacity search say so far (the
 * loop that asks is search.c's). The probes at one load are pooled into a
 * level; each level has a point verdict (the share met of all its runs
 * planned, a stopped run's unfinished requests as met) and, when its
 * Wilson interval (its counts shrunk by the design effect of its runs'
 * spread, the largest within 10%) lies wholly on one side of the goal, a
 * clear one; a run whose wait still drifted up makes no clear pass. With
 * random arrivals the closed-loop throughput probe's lower end fails every
 * load at or above it. From the levels: lo (the highest passing load below
 * hi) and hi (the lowest failing), and the interval's ends: clear verdicts
 * from two runs at least, the lower a precision step below the answer
 * (docs/capacity.md). */
#include "capacity/search_internal.h"
#include "capacity/binomial.h"
#include "capacity/saturation.h"
#include "common/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MIN_RUNS_AT_END 2 /* an end of the interval: at least this many runs (seeds) */

#define SPREAD_RUNS 32 /* the runs of a level whose spread is measured */

/* The loads this close (relative) lend each other their spread. */
#define SPREAD_NEIGHBOURS 0.10

/* A level's counts and the design effect of its own runs' spread (a run
 * stopped as lost counts what it shows: its requests cut short with no
 * verdict yet are left out). */
static level own_level(const search *s, double v, int whole_only) {
    level l = {0};
    double met[SPREAD_RUNS], planned[SPREAD_RUNS];
    for (int i = 0; i < s->n; i++) {
        const probe *p = &s->probes[i];
        if (value_of(s, i) != v || (whole_only && p->stopped))
            continue;
        l.met += (double)p->met;
        l.n += (double)(p->requests - p->unfinished);
        l.growing |= p->stopped == SAT_GROWING || p->not_steady;
        l.confirm_failed |= p->confirm && !p->passed;
        l.certain += p->stopped == SAT_CERTAIN;
        l.drifting |= !p->stopped && p->steady.slope_low > 0;
        if (l.runs < SPREAD_RUNS) {
            met[l.runs] = (double)p->met;
            planned[l.runs] = (double)(p->requests - p->unfinished);
        }
        l.runs++;
    }
    l.deff = design_effect(met, planned, l.runs < SPREAD_RUNS ? l.runs : SPREAD_RUNS);
    return l;
}

/* A level, its design effect the largest measured at it or at a load
 * within SPREAD_NEIGHBOURS of it: near the knee a probe either holds or
 * collapses (gpu-7b at 12 req/s: 5 seeds met 81%, 99%, 100%, 100%, 49%),
 * and two runs that both met everything show no spread of their own, while
 * their neighbours' runs do. A higher neighbour lends only the spread of
 * its runs that went the whole way: one collapse there (a run stopped as
 * lost) would make every load under it unclear, and empty the interval's
 * lower end. */
level search_verdict_level(const search *s, double v) {
    level l = own_level(s, v, 0);
    for (int i = 0; i < s->n; i++) {
        double u = value_of(s, i);
        if (isnan(u) || u == v || fabs(u - v) > SPREAD_NEIGHBOURS * v)
            continue;
        level near = own_level(s, u, u > v);
        if (near.deff > l.deff)
            l.deff = near.deff;
    }
    return l;
}

/* The point verdict: the share met of the requests whose verdict the runs
 * show (a stopped run's requests cut short before any bound passed are
 * neither met nor missed). */
int search_verdict_passed(const search *s, const level *l) {
    return !l->growing && !l->confirm_failed && l->n > 0 && l->met >= s->o->goal * l->n;
}

/* A clear pass also needs every run's wait to have stopped growing: a
 * queue still filling from empty near the limit meets the SLO until it is
 * full. */
static int clear_pass(const search *s, const level *l) {
    double lo, hi;
    if (l->growing || l->confirm_failed || l->drifting || l->n <= 0)
        return 0;
    wilson_interval(l->met / l->deff, l->n / l->deff, BINOMIAL_Z95, &lo, &hi);
    return lo >= s->o->goal;
}

int search_verdict_clear_fail(const search *s, const level *l) {
    double lo, hi;
    if (l->growing)
        return 1;
    wilson_interval(l->met / l->deff, l->n / l->deff, BINOMIAL_Z95, &lo, &hi);
    return hi < s->o->goal;
}

/* Clear enough to be an end of the interval: from at least two runs (a
 * growing queue is lost at any seed, and needs none). */
int search_verdict_end_pass(const search *s, const level *l) {
    return clear_pass(s, l) && l->runs >= MIN_RUNS_AT_END;
}

int search_verdict_end_fail(const search *s, const level *l) {
    if (l->runs >= MIN_RUNS_AT_END && l->certain == l->runs) /* each lost for certain */
        return 1;
    return l->growing || (search_verdict_clear_fail(s, l) && l->runs >= MIN_RUNS_AT_END);
}

/* Random arrivals at or above what the server completes build a queue
 * with no bound. When the throughput probe was saturated: every load at or
 * above the high end of its interval fails clearly (the server completes
 * less, at 97.5%), and so does every load at or above its low end when the
 * interval is within a quarter of the precision; a load above its
 * estimate is more likely overloaded than not, so the search's hi is at
 * most the estimate; and a load below its low end is no overload, so an
 * answer there needs no probe long enough to show one (docs/capacity.md).
 * On a batching server whose answers end in waves the interval is wide
 * (vLLM on a CPU: 12.8 req/s, 11.6-14.1): it still bounds the search. */
int search_verdict_throughput(const search *s, tp_says *t) {
    if (s->tp_at < 0 || !strcmp(s->o->run.arrival, "constant"))
        return 0;
    const throughput_fit *f = &s->probes[s->tp_at].tp;
    if (!f->saturated || !(f->low_rps > 0) || !(f->high_rps >= f->rate_rps))
        return 0;
    int precise = (f->high_rps - f->low_rps) / 2 <= s->o->precision / 4 * f->rate_rps;
    t->clear = precise ? f->low_rps : f->high_rps;
    t->point = precise ? f->low_rps : f->rate_rps;
    t->low = f->low_rps;
    t->high = f->high_rps;
    return 1;
}

int search_verdict_bound(const search *s, double *bound) {
    tp_says t;
    if (!search_verdict_throughput(s, &t))
        return 0;
    *bound = t.clear;
    return 1;
}

/* lo and hi from every level probed so far. */
void search_verdict_derive(search *s) {
    s->lo = s->hi = NAN;
    for (int i = 0; i < s->n; i++) {
        double v = value_of(s, i);
        if (isnan(v))
            continue; /* the throughput probe is no load of the search */
        level l = search_verdict_level(s, v);
        if (!search_verdict_passed(s, &l) && !(v >= s->hi))
            s->hi = v;
    }
    tp_says t;
    if (search_verdict_throughput(s, &t) && !(t.point >= s->hi))
        s->hi = t.point;
    for (int i = 0; i < s->n; i++) {
        double v = value_of(s, i);
        if (isnan(v))
            continue; /* the throughput probe is no load of the search */
        level l = search_verdict_level(s, v);
        if (search_verdict_passed(s, &l) && !(v <= s->lo) && !(v >= s->hi))
            s->lo = v;
    }
    search_twin_judge(s);
}

/* x to 3 significant digits (4, 5 when that is not strictly between lo
 * and hi): a load a user can read, 12 req/s rather than 11.9968. */
double search_verdict_round(double x, double lo, double hi) {
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
double search_verdict_low_end_cap(const search *s) {
    if (s->ps.by_concurrency)
        return s->lo - 1;
    return search_verdict_round(s->lo / (1 + s->o->precision), 0, s->lo);
}

/* The interval's ends: the highest clear pass at or below the answer and
 * the lowest clear failure above it; the point verdicts' loads when none
 * is clear. Returns how many ends are only point verdicts. */
int search_verdict_interval(const search *s, double *ci_low, double *ci_high) {
    *ci_low = *ci_high = NAN;
    for (int i = 0; i < s->n; i++) {
        double v = value_of(s, i);
        if (isnan(v))
            continue; /* the throughput probe is no load of the search */
        level l = search_verdict_level(s, v);
        if (v <= search_verdict_low_end_cap(s) && search_verdict_end_pass(s, &l) && !(v <= *ci_low))
            *ci_low = v;
        if (v > s->lo && search_verdict_end_fail(s, &l) && !(v >= *ci_high))
            *ci_high = v;
    }
    double bound;
    if (search_verdict_bound(s, &bound) && bound > s->lo && !(bound >= *ci_high))
        *ci_high = bound; /* every load from it on fails, clearly */
    int unclear = isnan(*ci_low) + isnan(*ci_high);
    if (isnan(*ci_low) && s->twin_state == TWIN_ACCEPTED) {
        /* the twin's answer is no probe's verdict: the low end is the
         * highest load under it that a probe passed */
        for (int i = 0; i < s->n; i++) {
            double v = value_of(s, i);
            level l = search_verdict_level(s, v);
            if (v < s->lo && search_verdict_passed(s, &l) && !(v <= *ci_low))
                *ci_low = v;
        }
    }
    if (isnan(*ci_low))
        *ci_low = s->lo;
    if (isnan(*ci_high))
        *ci_high = s->hi;
    return unclear;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The loads probed, each once, ascending; the caller frees. */
double *search_verdict_loads(const search *s, int *k) {
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

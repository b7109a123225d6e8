/* longrun: bracket and bisect over long virtual runs (see longrun.h). A
 * run that can no longer pass (more requests missed than the goal allows
 * of all it counts) is stopped there through the run's watch: half of a
 * bisection's loads are over the answer, and their runs would otherwise
 * take the longest. */
#include "capacity/longrun.h"
#include "client/loadgen.h"
#include "common/clock.h"
#include "common/files.h"
#include "common/stop.h"
#include "common/util.h"
#include "rundir/rundir.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_RATE 1e6
#define MAX_USERS 100000
#define WARMUP_SHARE 0.05 /* of the schedule's span, not counted */

/* The watch: stop once the misses among the counted requests exceed what
 * the goal allows of every request the run will count. */
typedef struct lost_watch {
    const slo_spec *slo;
    double goal;
    double counted_planned; /* the requests past the warm-up */
    double warm_ms;         /* the warm-up's end on the schedule; by concurrency: none */
    size_t seen, misses;
    int stopped;
} lost_watch;

static int counted(const lost_watch *w, const req_rec *r) {
    return !(r->scheduled_ms < w->warm_ms);
}

static int watch_fn(void *arg, const struct loadgen_result *so_far, int in_flight, int64_t now) {
    (void)in_flight;
    (void)now;
    lost_watch *w = arg;
    for (; w->seen < so_far->rows.n; w->seen++) {
        const req_rec *r = &so_far->rows.r[w->seen];
        if (counted(w, r) && request_slo_misses(r, w->slo))
            w->misses++;
    }
    if ((double)w->misses > (1 - w->goal) * w->counted_planned) {
        w->stopped = 1;
        return 1;
    }
    return 0;
}

outcome longrun_rows(const run_opts *run, const virtual_target *target, int by_concurrency,
                     double load, long n, const run_watch *watch, run_rows *rows, char *err,
                     int errlen) {
    run_opts ro = *run;
    ro.predict = target;
    ro.out = NULL;
    ro.quiet = 1;
    ro.watch = watch;
    ro.requests = n;
    ro.have_requests = 1;
    ro.have_duration = 0;
    ro.rate_plan = NULL;
    ro.rate = by_concurrency ? INFINITY : load;
    ro.concurrency = by_concurrency ? (int64_t)load : 0;
    return run_predict_rows(&ro, rows, err, errlen);
}

/* One virtual run at `load`: its level. 0 (OUTCOME_OK), or the run's
 * outcome (OUTCOME_FAILED, _BAD_INPUT or _STOPPED). */
static int run_level(const longrun_opts *o, const slo_spec *slo, double load, longrun_level *l,
                     char *err, int errlen) {
    /* a schedule lasts at most a week (workload/arrivals.h): a low rate gets
     * the requests of 6 days */
    long n = o->requests;
    if (!o->by_concurrency && (double)n > load * 6 * 86400)
        n = (long)fmax(100, floor(load * 6 * 86400));
    /* the span of a rate-r schedule of n requests is about (n - 1) / r */
    double warm_ms = o->by_concurrency ? -INFINITY : WARMUP_SHARE * (double)(n - 1) / load * 1000.0;
    lost_watch w = {.slo = slo,
                    .goal = o->goal,
                    .counted_planned = (double)n * (o->by_concurrency ? 1 : 1 - WARMUP_SHARE),
                    .warm_ms = warm_ms};
    run_watch rw = {.fn = watch_fn, .arg = &w};
    memset(l, 0, sizeof *l);
    l->load = load;
    l->scheduled = n;
    double t0 = mono_us() / 1e6;
    run_rows rows;
    outcome done =
        longrun_rows(o->run, o->target, o->by_concurrency, load, n, &rw, &rows, err, errlen);
    l->wall_s = mono_us() / 1e6 - t0;
    if (done != OUTCOME_OK)
        return (int)done;
    for (size_t i = 0; i < rows.n; i++) {
        const req_rec *r = &rows.r[i];
        if (!counted(&w, r))
            continue;
        l->counted++;
        int m = request_slo_misses(r, slo);
        if (!m)
            l->met++;
        if (r->error != ERR_NONE && r->error != ERR_CANCELLED) {
            if (!l->failed++)
                l->first_error = r->error;
            continue; /* a failure is not a latency bound's miss */
        }
        for (int b = 0; b < SLO_BOUNDS; b++)
            l->missed[b] += (m >> b) & 1;
    }
    l->stopped = w.stopped;
    rows_free(&rows);
    return 0;
}

static int level_passed(const longrun_opts *o, const longrun_level *l) {
    return !l->stopped && l->counted > 0 && (double)l->met >= o->goal * (double)l->counted;
}

static void say(const longrun_opts *o, const longrun_level *l, int passed) {
    notice(o->progress, NOTICE_PROGRESS, "predict: %g %s: %ld of %ld met (%.4f) %s%s (%.1f s)",
           l->load, o->by_concurrency ? "users" : "req/s", l->met, l->counted,
           l->counted ? (double)l->met / (double)l->counted : 0.0, passed ? "passed" : "failed",
           l->stopped ? ", stopped once it could not pass" : "", l->wall_s);
}

/* The bound most missed at the failing load, or ANSWER_FAILURES when more
 * requests failed there than missed any bound (its error class into
 * failure). */
static int binding_of(longrun_result *r) {
    long by[SLO_BOUNDS] = {0}, failed = 0;
    int first_error = ERR_NONE;
    for (int i = 0; i < r->n_levels; i++)
        if (r->levels[i].load == r->ans.fail_load) {
            for (int b = 0; b < SLO_BOUNDS; b++)
                by[b] += r->levels[i].missed[b];
            failed += r->levels[i].failed;
            if (first_error == ERR_NONE)
                first_error = r->levels[i].first_error;
        }
    int best = -1;
    for (int b = 0; b < SLO_BOUNDS; b++)
        if (slo_bound_ms(&r->ans.slo, b) > 0 && (best < 0 || by[b] > by[best]))
            best = b;
    if (failed > 0 && (best < 0 || failed >= by[best])) {
        snprintf(r->ans.failure, sizeof r->ans.failure, "%s", err_class_name(first_error));
        return ANSWER_FAILURES;
    }
    return best < 0 ? 0 : best;
}

static int try_load(const longrun_opts *o, longrun_result *r, double load, int *passed, char *err,
                    int errlen) {
    if (r->n_levels == LONGRUN_MAX_LEVELS)
        return -1;
    longrun_level *l = &r->levels[r->n_levels];
    int code = run_level(o, &r->ans.slo, load, l, err, errlen);
    if (code)
        return code;
    r->n_levels++;
    *passed = level_passed(o, l);
    say(o, l, *passed);
    return 0;
}

static int narrow(const longrun_opts *o, double lo, double hi) {
    if (o->by_concurrency)
        return hi - lo <= 1;
    return (hi - lo) / lo < o->precision;
}

outcome longrun_capacity(const longrun_opts *o, longrun_result *r, char *err, int errlen) {
    memset(r, 0, sizeof *r);
    capacity_answer *a = &r->ans;
    answer_init(a, ANSWER_PREDICTED);
    a->by_concurrency = o->by_concurrency;
    a->goal = o->goal;
    a->precision = o->precision;
    a->requests_a_run = o->requests;
    if (!o->run->slo) {
        snprintf(err, errlen, "--capacity needs --slo (e.g. --slo ttft=750ms)");
        return OUTCOME_BAD_INPUT;
    }
    if (slo_parse(o->run->slo, &a->slo, err, errlen))
        return OUTCOME_BAD_INPUT;
    double t0 = mono_us() / 1e6, ceiling = o->by_concurrency ? MAX_USERS : MAX_RATE;
    double lo = NAN, hi = NAN, v = o->start > 0 ? o->start : 1, floor_load = 1e-3;
    int passed, code = 0;
    while (isnan(hi) && v <= ceiling) { /* bracket: up while it passes */
        if ((code = try_load(o, r, v, &passed, err, errlen)))
            break;
        if (!passed)
            hi = v;
        else
            lo = v;
        v *= 2;
    }
    /* the first load failed: down while it fails */
    for (v = hi / 2; !code && isnan(lo) && !o->by_concurrency && v >= floor_load; v /= 2) {
        if ((code = try_load(o, r, v, &passed, err, errlen)))
            break;
        if (passed)
            lo = v;
        else
            hi = v;
    }
    while (!code && !isnan(lo) && !isnan(hi) && !narrow(o, lo, hi)) { /* bisect */
        double mid = o->by_concurrency ? floor((lo + hi) / 2) : (lo + hi) / 2;
        if ((code = try_load(o, r, mid, &passed, err, errlen)))
            break;
        if (passed)
            lo = mid;
        else
            hi = mid;
    }
    a->wall_s = mono_us() / 1e6 - t0;
    if (code > 0)
        return (outcome)code; /* run_level's */
    if (code < 0) {
        snprintf(err, errlen, "--capacity: more than %d loads tried", LONGRUN_MAX_LEVELS);
        return OUTCOME_FAILED;
    }
    a->max = a->reached = lo;
    a->fail_load = hi;
    a->lowest = NAN; /* the lowest load tried (the search may have halved below its start) */
    for (int i = 0; i < r->n_levels; i++)
        if (isnan(a->lowest) || r->levels[i].load < a->lowest)
            a->lowest = r->levels[i].load;
    a->tries = r->n_levels;
    /* the runs the answer rests on (those at lo and hi) say how many
     * requests a run had: a low rate's run is cut to a week of arrivals */
    for (int i = 0; i < r->n_levels; i++)
        if ((r->levels[i].load == lo || r->levels[i].load == hi) &&
            r->levels[i].scheduled < a->requests_a_run)
            a->requests_a_run = r->levels[i].scheduled;
    a->status = isnan(lo) ? ANSWER_MISSED_AT_LOWEST : isnan(hi) ? ANSWER_NOT_REACHED : ANSWER_FOUND;
    a->binding = binding_of(r);
    return OUTCOME_OK;
}

int longrun_out_check(const char *dir, int force, char *err, int errlen) {
    char names[256] = "", path[4200];
    if (rundir_holds(dir, names, sizeof names) & RUNDIR_MARKS) {
        snprintf(err, errlen,
                 "--out %s holds a run (%s): a predicted capacity there would be read as the "
                 "run's; give another --out",
                 dir, names[0] ? names : "a sweep's files");
        return -1;
    }
    snprintf(path, sizeof path, "%s/campaign.json", dir);
    if (access(path, F_OK) == 0) {
        snprintf(err, errlen, "--out %s holds a campaign (campaign.json); give another --out", dir);
        return -1;
    }
    snprintf(path, sizeof path, "%s/capacity.json", dir);
    if (!force && access(path, F_OK) == 0) {
        snprintf(err, errlen, "--out %s already holds capacity.json: add --force to replace it",
                 dir);
        return -1;
    }
    return 0;
}

int longrun_write(const char *dir, const longrun_opts *o, const longrun_result *r, int force,
                  char *err, int errlen) {
    char path[4200];
    snprintf(path, sizeof path, "%s/capacity.json", dir);
    if (mkdir_p(dir)) {
        snprintf(err, errlen, "--out %s: cannot create: %s", dir, strerror(errno));
        return -1;
    }
    if (!force && access(path, F_OK) == 0) {
        snprintf(err, errlen, "--out %s already holds capacity.json: add --force to replace it",
                 dir);
        return -1;
    }
    json_t *levels = json_array();
    for (int i = 0; i < r->n_levels; i++) {
        const longrun_level *l = &r->levels[i];
        json_array_append_new(
            levels, json_pack("{s:f,s:I,s:I,s:I,s:f,s:I,s:b,s:b,s:f}", "load", l->load, "scheduled",
                              (json_int_t)l->scheduled, "counted", (json_int_t)l->counted, "met",
                              (json_int_t)l->met, "met_share",
                              l->counted ? (double)l->met / (double)l->counted : 0.0, "failed",
                              (json_int_t)l->failed, "stopped", l->stopped, "passed",
                              level_passed(o, l), "wall_s", l->wall_s));
    }
    json_t *j = answer_json(&r->ans);
    json_object_set_new(j, "levels", levels);
    int rc = write_json_atomic(dir, "capacity.json", j);
    json_decref(j);
    if (rc) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

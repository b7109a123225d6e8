/* search: bracket, measure the throughput, ask the twin (search_twin.c)
 * or bisect, clear the ends, confirm (see search.h and docs/capacity.md):
 * the loop that chooses each
 * probe, its load and its length, runs it, and stops; the --out directory
 * it writes in; and capacity_execute around them. What the probes so far
 * say (each load's pooled verdict, lo and hi, the interval) is
 * search_verdict.c's; what the search says (capacity.json, the answer, the
 * warnings) is search_answer.c's.
 *
 * A full probe's arrivals last long enough for an overload of the
 * precision to push waits past the SLO's bound (plan_lengths). Bisection
 * follows the point verdicts; the ends of the interval are repeated until
 * their verdicts are clear; the answer is then run once more, three probes
 * long. */
#include "capacity/search.h"
#include "capacity/search_internal.h"
#include "capacity/answer.h"
#include "capacity/binomial.h"
#include "capacity/probe.h"
#include "client/probe.h"
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
#define MAX_CONFIRMS 3     /* confirmation runs at most (each failure sends the search below) */
#define PLANNED_FULL 8     /* full probes a search is planned to need, for --max-time */
#define IMPLICIT_BUDGET 10 /* no TTFT or E2E bound: a wait 10 x the first probe's TTFT */
#define THROUGHPUT_S 10.0  /* the throughput probe: about this long saturated */
#define MAX_TP_USERS 20000
#define BRACKET_S 5.0 /* a bracketing probe: about 5 s of arrivals (or rounds of users) */
#define MAX_RATE 1e6
#define MAX_USERS 100000
#define MAX_LAG_REPEATS 3 /* probes run again because the client lagged, at most */
#define LAG_SHARE 0.05    /* a client this late, of the tightest bound, may have failed a probe */

/* The client (or the host under it) was late enough in probe p to have
 * failed it: by 5% of the SLO's tightest bound or more. A client 1.3 ms
 * late (vLLM's engine on the same two cores) fails no TTFT <= 5 s. */
static int lagged_enough(const search *s, const probe *p) {
    const slo_spec *slo = &s->ps.slo;
    double tightest = INFINITY;
    double b[] = {slo->ttft_ms, slo->tpot_ms, slo->e2e_ms, slo->ttfa_ms};
    for (int i = 0; i < 4; i++)
        if (b[i] > 0 && b[i] < tightest)
            tightest = b[i];
    return p->client_flagged && p->client_worst_ms >= LAG_SHARE * tightest;
}

static int narrow(const search *s) {
    if (s->twin_state == TWIN_ACCEPTED)
        return 1; /* lo and hi are the twin's answer and the step above it */
    if (s->ps.by_concurrency && s->hi - s->lo <= 1)
        return 1;
    return (s->hi - s->lo) / s->lo < s->o->precision;
}

static int time_up(search *s) {
    if (elapsed(s) < s->o->max_time_s)
        return 0;
    s->stopped_by_time = 1;
    return 1;
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
 * confirmation CAPACITY_CONFIRM_PROBES full probes. */
static long probe_requests(const search *s, double v, int kind) {
    long full = s->goal_n;
    if (s->fixed_n)
        full = (long)s->o->run.requests;
    else if (!s->ps.by_concurrency && s->full_s > 0 && ceil(v * s->full_s) > (double)full)
        full = (long)fmin(ceil(v * s->full_s), 1e8);
    if (kind == PROBE_CONFIRM)
        return CAPACITY_CONFIRM_PROBES * full;
    if (kind == PROBE_BRACKET && !s->fixed_n) {
        long short_n = (long)ceil(BRACKET_S * v);
        return short_n < 10 ? 10 : short_n < full ? short_n : full;
    }
    return full;
}

/* The seconds of arrivals a probe at rate v of the kind lasts. */
static double probe_seconds(const search *s, double v, int kind) {
    return (double)probe_requests(s, v, kind) / v;
}

/* A full probe's arrivals: need_s, or less when the full probes planned
 * and the confirmation would not fit in what is left of --max-time. Set
 * once the first probe has run, and again after the throughput probe,
 * whose length is not known before. */
static void fit_lengths(search *s) {
    double left = s->o->max_time_s - elapsed(s);
    s->full_s = s->need_s;
    s->upper_bound = 0;
    if (s->need_s * (PLANNED_FULL + CAPACITY_CONFIRM_PROBES) > left) {
        s->full_s = fmax(left, 0) / (PLANNED_FULL + CAPACITY_CONFIRM_PROBES);
        s->upper_bound = !s->ps.by_concurrency && !s->fixed_n;
    }
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
    s->ramp_s = ramp;
    s->need_s = LEN_FACTOR * b / 1000 / s->o->precision + ramp;
    fit_lengths(s);
    s->ps.wait_budget_ms = b;
    s->ps.horizon_s = CAPACITY_CONFIRM_PROBES * s->need_s;
    s->ps.keep_up_fails = !(slo->ttft_ms > 0 || slo->e2e_ms > 0);
}

/* What every probe leaves the search: its virtual time, and the lone
 * request's baseline when it measured one (drain.h). */
static void after_probe(search *s, const probe *p) {
    s->virtual_s += isfinite(p->duration_s) ? p->duration_s : 0;
    if (p->drain.state == DRAIN_LONE_BASE)
        s->lone_baseline_ms = p->drain.baseline_ms;
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
    sp.lone_baseline_ms = s->lone_baseline_ms;
    int code = probe_run(&s->ps, &sp, p, err, errlen);
    s->last_code = code;
    if (code)
        return code;
    after_probe(s, p);
    if (!p->passed && lagged_enough(s, p) && s->lag_repeats < MAX_LAG_REPEATS) {
        /* a client (or host) that fell behind measured itself: the load
         * is run again rather than failed */
        p->lagged = 1;
        s->lag_repeats++;
        s->n++;
        if (!s->o->run.quiet)
            notice(s->o->notices, NOTICE_PROGRESS,
                   "capacity: probe %d at %g %s failed while the client was up to %.1f ms late "
                   "(its summary.json's client): not counted, run again (%.1f s)",
                   s->n, v, s->ps.by_concurrency ? "users" : "req/s", p->client_worst_ms,
                   p->wall_s);
        if (search_answer_write(s, err, errlen))
            return 1;
        if (s->n == 1)
            plan_lengths(s);
        return stop_signal() ? 0 : probe_at(s, v, kind, err, errlen);
    }
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
    if (search_answer_write(s, err, errlen))
        return 1;
    search_verdict_derive(s);
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
    sp.lone_baseline_ms = s->lone_baseline_ms;
    probe *p = &s->probes[s->n];
    int code = probe_run(&s->ps, &sp, p, err, errlen);
    s->last_code = code;
    if (code)
        return -1;
    after_probe(s, p);
    s->tp_at = s->n++;
    fit_lengths(s);
    if (!s->o->run.quiet)
        notice(s->o->notices, NOTICE_PROGRESS,
               "capacity: probe %d, throughput with %ld users: %.4g req/s (95%% CI %.4g-%.4g)"
               "%s (%.1f s)",
               s->n, p->max_users, p->tp.rate_rps, p->tp.low_rps, p->tp.high_rps,
               p->tp.saturated ? "" : ", not saturated: not used", p->wall_s);
    if (search_answer_write(s, err, errlen)) {
        s->last_code = 1;
        return -1;
    }
    search_verdict_derive(s);
    return 1;
}

/* The search has found its answer: run it once more for CAPACITY_CONFIRM_PROBES
 * full probes' worth of requests, unless the last confirmation was of this
 * answer already. 1 after a run (the next step judges what it changed),
 * 0 when there is nothing to confirm, or a probe's code. */
static int confirm_answer(search *s, char *err, int errlen) {
    if (!s->o->confirm || isnan(s->lo) || isnan(s->hi) || s->n_confirms >= MAX_CONFIRMS)
        return 0;
    if (s->confirm_at >= 0 && value_of(s, s->confirm_at) == s->lo)
        return 0; /* confirmed (a failed one would have moved lo) */
    if (s->twin_state == TWIN_ACCEPTED && !s->ps.by_concurrency &&
        elapsed(s) + probe_seconds(s, s->lo, PROBE_CONFIRM) > s->o->max_time_s)
        return 0; /* the twin's answer stands as probed: no room left to run it longer */
    return probe_at(s, s->lo, PROBE_CONFIRM, err, errlen) ? -1 : 1;
}

/* The load to repeat so that an end of the interval is clear: walking
 * down from lo over the passing loads (up from hi over the failing ones)
 * to the first that is clear from enough runs, the first one on the way
 * that may still be run again. 1 with *v, or 0: nothing to repeat. */
static int confirm_end(const search *s, int upper, double *v) {
    int k, found = 0;
    double bound;
    tp_says t;
    if (upper && search_verdict_throughput(s, &t) && (t.point == s->hi || t.clear == s->hi))
        return 0; /* hi is the server's throughput: the upper end is its bound, clear */
    double *all = search_verdict_loads(s, &k);
    double cap = search_verdict_low_end_cap(s);
    double below = NAN; /* the highest load probed at or under cap */
    for (int j = 0; j < k; j++)
        if (all[j] <= cap)
            below = all[j];
    double step = s->ps.by_concurrency ? cap - 1 : cap / (1 + s->o->precision);
    if (!upper && cap >= 1 && (isnan(below) || below < step)) {
        free(all); /* a load there to clear, one step below the answer */
        *v = cap;
        return 1;
    }
    int bounded = search_verdict_bound(s, &bound);
    for (int j = 0; j < k && !found; j++) {
        double x = upper ? all[j] : all[k - 1 - j];
        if (upper ? !(x > s->lo) : !(x <= cap))
            continue;
        if (upper && bounded && x >= bound)
            break; /* the throughput bound below it is a clear failure */
        level l = search_verdict_level(s, x);
        /* a failing load below lo, a passing one above */
        if (search_verdict_passed(s, &l) == upper)
            continue;
        if (upper ? search_verdict_end_fail(s, &l) : search_verdict_end_pass(s, &l))
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

/* Whether a full probe at v leaves time for the confirmation of the
 * answer after it, within --max-time (by rate: a probe's seconds are its
 * requests over its rate). */
static int room_for(const search *s, double v) {
    if (!s->o->confirm || isnan(s->lo) || s->ps.by_concurrency || s->n_confirms >= MAX_CONFIRMS)
        return 1;
    return elapsed(s) + probe_seconds(s, v, PROBE_FULL) + probe_seconds(s, s->lo, PROBE_CONFIRM) <=
           s->o->max_time_s;
}

/* Whether the twin's next test probe at v fits in --max-time (by
 * concurrency: always). */
static int room_for_twin(const search *s, double v) {
    if (s->ps.by_concurrency)
        return 1;
    return elapsed(s) + probe_seconds(s, v, PROBE_FULL) <= s->o->max_time_s;
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
    level h = search_verdict_level(s, s->hi);
    double v;
    if (isnan(s->lo) && !search_verdict_clear_fail(s, &h) && h.runs < MAX_RUNS_A_LEVEL)
        v = s->hi;
    else if (isnan(s->lo))
        return 0;
    else if (search_twin_due(s)) {
        search_twin_propose(s);
        return 1; /* the next step follows from what it proposed */
    } else if (search_twin_next(s, &v)) {
        if (!room_for_twin(s, v)) { /* the proposal as far as it was probed */
            search_twin_unchecked(s);
            return 1;
        }
        return probe_at(s, v, PROBE_FULL, err, errlen) ? -1 : 1;
    } else if (!narrow(s))
        v = s->ps.by_concurrency ? floor((s->lo + s->hi) / 2)
                                 : search_verdict_round((s->lo + s->hi) / 2, s->lo, s->hi);
    else if (!confirm_end(s, 0, &v) && !confirm_end(s, 1, &v))
        return confirm_answer(s, err, errlen);
    if (!room_for(s, v)) { /* what is left of --max-time goes to the confirmation */
        s->stopped_by_time = 1;
        return confirm_answer(s, err, errlen);
    }
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

/* Against --url: the headers of the run (its key and --header) for the
 * server's /metrics, and the lone request that times a server without
 * gauges (drain.h): one token of answer, to the run's endpoint, for --model
 * or the first model the server lists. 0, or -1 with err. */
static int prepare_target(search *s, char *err, int errlen) {
    const run_opts *r = &s->o->run;
    const char *key_env;
    if (s->o->sim || s->o->vt || !r->url)
        return 0;
    if (run_headers(r, &s->ps.headers, &key_env, err, errlen) ||
        run_headers(r, &s->lone_headers, &key_env, err, errlen))
        return -1;
    s->lone_headers = curl_slist_append(s->lone_headers, "Content-Type: application/json");
    run_endpoint_url(r->url, r->api, s->lone_url, sizeof s->lone_url);
    server_probe sp = {0};
    const char *model = r->model;
    if (!model) {
        char base[4200];
        run_base_url(r->url, base, sizeof base);
        probe_server(base, s->ps.headers, r->insecure, &sp);
        model = sp.first_model[0] ? sp.first_model : NULL;
    }
    json_t *body = json_pack("{s:i,s:b}", "max_tokens", 1, "stream", 0);
    if (model)
        json_object_set_new(body, "model", json_string(model));
    if (!strcmp(r->api, "chat"))
        json_object_set_new(body, "messages",
                            json_pack("[{s:s,s:s}]", "role", "user", "content", "Hello"));
    else
        json_object_set_new(body, "prompt", json_string("Hello"));
    s->lone_body = json_dumps(body, JSON_COMPACT);
    json_decref(body);
    probe_free(&sp);
    s->ps.lone = (drain_lone_req){.url = s->lone_url,
                                  .body = s->lone_body,
                                  .headers = s->lone_headers,
                                  .insecure = r->insecure};
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
    /* a probe too short to hold one miss the goal allows passes at any
     * load: the search would double to its ceiling and call it "not
     * reached" */
    long need = (long)ceil(1 / (1 - o->goal) - 1e-9);
    if (o->run.have_requests && o->run.requests < need) {
        snprintf(err, errlen,
                 "--requests %lld: a probe needs at least %ld at --goal %g (1 / (1 - goal)), else "
                 "one miss is more than the goal allows and none is all it can show",
                 (long long)o->run.requests, need, o->goal);
        return -1;
    }
    int by_users = o->by && !strcmp(o->by, "concurrency");
    if (by_users ? o->start_concurrency > MAX_USERS : o->start_rate > MAX_RATE) {
        snprintf(err, errlen, "--start-%s %g: above the most the search probes (%g)",
                 by_users ? "concurrency" : "rate",
                 by_users ? (double)o->start_concurrency : o->start_rate,
                 by_users ? (double)MAX_USERS : MAX_RATE);
        return -1;
    }
    run_opts r = o->run;
    if (!r.url)
        r.url = "http://127.0.0.1:1"; /* each probe's simulator has its own */
    return run_opts_validate(&r, err, errlen);
}

outcome capacity_execute(const capacity_opts *o, json_t *command_line, capacity_answer *said,
                         char *err, int errlen) {
    search s = {
        .o = o, .out = o->run.out ? o->run.out : "out/capacity", .lock_fd = -1, .twin_scale = 1};
    s.ps = (probe_setup){.base = &o->run,
                         .sim_args = o->sim,
                         .self = o->self,
                         .out = s.out,
                         .by_concurrency = !strcmp(o->by, "concurrency"),
                         .goal = o->goal,
                         .command_line = command_line,
                         .drain_max_s = o->drain_max_s};
    slo_parse(o->run.slo, &s.ps.slo, err, errlen); /* checked by capacity_opts_validate */
    s.fixed_n = o->run.have_requests;
    s.goal_n = requests_for_goal(o->goal);
    s.confirm_at = -1;
    s.tp_at = -1;
    s.ps.vt = o->vt;
    s.ps.wait_budget_ms = INFINITY; /* no keep-up verdict before the lengths are planned */
    s.lo = s.hi = NAN;
    s.lone_baseline_ms = NAN;
    s.t0 = mono_us() / 1e6;
    answer_init(said, ANSWER_SEARCHED);
    int code = prepare_out(&s, err, errlen) || prepare_target(&s, err, errlen) ? 2 : 0;
    stop_install();
    if (!code)
        code = run_search(&s, err, errlen);
    int wrote_none = s.n < s.cap && s.probes[s.n].write_failed; /* the last probe's files */
    outcome got = !code                                    ? OUTCOME_OK
                  : (code == 2 || s.n == 0) && !wrote_none ? OUTCOME_BAD_INPUT
                                                           : OUTCOME_FAILED;
    /* (the first probe could not run: the target or its arguments) */
    char why[1024];
    if (s.n && search_answer_write(&s, why, sizeof why) && !code) {
        snprintf(err, errlen, "%s", why);
        code = 1;
        got = OUTCOME_FAILED;
    }
    if (s.n) {
        capacity_result r;
        search_answer_fill(&s, &r);
        *said = r.ans;
        search_answer_warn(&s, said);
        if (!code && said->status != ANSWER_FOUND)
            got = OUTCOME_FAILED;
    }
    if (stop_signal())
        got = OUTCOME_STOPPED;
    search_twin_free(&s);
    free(s.probes);
    free(s.lone_body);
    curl_slist_free_all(s.ps.headers);
    curl_slist_free_all(s.lone_headers);
    json_decref(command_line);
    dir_unlock(s.lock_fd);
    return got;
}

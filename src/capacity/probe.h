/* probe: one measured run of the capacity search at one offered rate (or
 * one number of closed-loop users): exactly a `servelab run` through
 * run_execute into its own directory (so `servelab report` reads it),
 * against the URL or a fresh simulator, watched by saturation.h so that a
 * lost probe stops early; then its rows are read back and judged against
 * the SLO, bound by bound. */
#ifndef SERVELAB_PROBE_CAP_H
#define SERVELAB_PROBE_CAP_H

#include "analysis/summary.h"
#include "capacity/drain.h"
#include "capacity/steady.h"
#include "capacity/throughput.h"
#include "run/run.h"
#include "run/virtual_client.h"

#include <stdint.h>

/* What every probe shares: the run's options as given (url, workload,
 * arrival, ...), the target, the SLO and the goal. */
typedef struct probe_setup {
    const run_opts *base;
    const char *sim_args;     /* NULL: base->url */
    const char *self;         /* this binary, for the simulator */
    const char *out;          /* the search's directory */
    const virtual_target *vt; /* the engine in virtual time in place of sim_args; NULL: none */
    int by_concurrency;
    slo_spec slo;
    double goal;
    /* the keep-up test (steady.h): growing when even the low end of the
     * wait's drift would add more than budget_ms over horizon_s */
    double wait_budget_ms, horizon_s;
    int keep_up_fails;    /* the SLO bounds no wait (TPOT alone): a growing wait fails the probe */
    json_t *command_line; /* copied into each probe's meta.json */
    double drain_max_s;   /* against a URL: wait at most this long for an idle server (drain.h) */
    struct curl_slist *headers; /* against a URL: the run's (its key, --header), for /metrics */
    drain_lone_req lone;        /* against a URL: the lone request (url NULL: none) */
} probe_setup;

typedef struct probe {
    char dir[64];     /* under out: probe-NN-VALUE */
    double rate_rps;  /* offered; INFINITY by concurrency */
    long concurrency; /* users; 0 by rate */
    int64_t seed;
    long requests;          /* scheduled */
    long met;               /* met the SLO */
    long unfinished;        /* cut short by an early stop with no verdict yet (not counted) */
    long missed[4];         /* requests that missed ttft, tpot, e2e, ttfa (request_slo_misses) */
    long failed[ERR_COUNT]; /* requests that failed, by error class (cancelled: cut short) */
    int stopped;            /* saturation.h: SAT_NONE, SAT_CERTAIN, SAT_GROWING */
    int confirm;            /* the search's confirmation run */
    long max_users;    /* > 0: the throughput probe, closed loop with this many (throughput.h) */
    throughput_fit tp; /* its fit */
    steady_fit steady; /* the wait's drift over its second half (steady.h) */
    int not_steady;    /* the keep-up test failed: the wait kept growing */
    double miss_burst; /* the share of its misses in the eighth of its arrivals that has most */
    int n_batches;     /* its batches for the search's levels: 8 slices of arrivals, or 1 */
    long batch_n[8], batch_missed[8];
    double duration_s;                /* the run's, t=0 to its last end */
    double ttft_mean_ms, e2e_mean_ms; /* of the requests that succeeded (NAN: none) */
    char why[160];                    /* why it stopped early */
    char error_words[200]; /* its most common failure, "connect: Connection refused"; "" none */
    double wall_s;
    double goodput_rps, output_tokens_per_s, in_flight; /* in flight: the time average */
    long peak_in_flight;                                /* and the most at once */
    double ci_low, ci_high; /* Wilson 95% of the share met of those with a verdict */
    int passed;             /* met/requests >= goal, not stopped, and steady */
    int write_failed;       /* its files could not all be written: the search ends */
    int client_flagged;     /* the client was not within 1 ms (its summary.json's client) */
    double client_worst_ms; /* the most the client was late (its summary.json's client) */
    int lagged;             /* failed while it lagged: run again, and not counted (search.c) */
    drain_result drain;     /* the wait for an idle server before it (drain.h) */
    double badness;         /* probe_badness of its rows (the twin's test, search_twin.c) */
} probe;

/* How badly a run of n planned requests went, as one number the twin's
 * test ranks: walking its requests in the order they were due, the misses
 * so far (a request cut short counts as missed only when what it shows
 * already misses); a run whose misses came to exceed what the goal allows
 * of all n is lost at that request, and ranks above every run that was
 * not, the earlier the higher (n + the requests left after it); a run never
 * lost ranks by its misses. */
double probe_badness(const req_rec *r, size_t n_rows, long n_planned, const slo_spec *slo,
                     double goal);

/* One probe to run: its number, its load (a rate, or users) with n
 * requests and the seed; or, with max_users > 0, the throughput probe:
 * closed loop with that many users, not watched, its fit against the
 * unloaded TTFT. */
typedef struct probe_spec {
    int number;
    double value;
    long requests;
    int64_t seed;
    long max_users;
    double unloaded_ttft_ms;
    double lone_baseline_ms; /* a server without gauges: the lone request's idle time; NAN:
                                measure it before this probe (drain.h) */
} probe_spec;

/* Runs it. 0; 2 when the input was bad (before any traffic: err says why);
 * 1 when it could not run (a simulator that did not start, a failed write:
 * err says why); 128 + signal when a stop signal ended it. */
int probe_run(const probe_setup *ps, const probe_spec *spec, probe *p, char *err, int errlen);

#endif

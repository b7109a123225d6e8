/* probe: one measured run of the capacity search at one offered rate (or
 * one number of closed-loop users): exactly a `servelab run` through
 * run_execute into its own directory (so `servelab report` reads it),
 * against the URL or a fresh simulator, watched by saturation.h so that a
 * lost probe stops early; then its rows are read back and judged against
 * the SLO, bound by bound. */
#ifndef SERVELAB_PROBE_CAP_H
#define SERVELAB_PROBE_CAP_H

#include "analysis/summary.h"
#include "run/run.h"

#include <stdint.h>

/* What every probe shares: the run's options as given (url, workload,
 * arrival, ...), the target, the SLO and the goal. */
typedef struct probe_setup {
    const run_opts *base;
    const char *sim_args; /* NULL: base->url */
    const char *self;     /* this binary, for the simulator */
    const char *out;      /* the search's directory */
    int by_concurrency;
    slo_spec slo;
    double goal;
    json_t *command_line; /* copied into each probe's meta.json */
} probe_setup;

typedef struct probe {
    char dir[64];     /* under out: probe-NN-VALUE */
    double rate_rps;  /* offered; INFINITY by concurrency */
    long concurrency; /* users; 0 by rate */
    int64_t seed;
    long requests;   /* scheduled */
    long met;        /* met the SLO */
    long unfinished; /* cancelled when the probe was stopped early */
    long missed[3];  /* requests that missed ttft, tpot, e2e */
    int stopped;     /* saturation.h: SAT_NONE, SAT_CERTAIN, SAT_GROWING */
    char why[160];   /* why it stopped early */
    double wall_s;
    double goodput_rps, output_tokens_per_s, in_flight; /* in flight: the time average */
    double ci_low, ci_high; /* Wilson 95% of the share met (unfinished as missed / as met) */
    int passed;             /* met/requests >= goal, and not stopped */
    int client_flagged;     /* the client was not within 1 ms (its summary.json's client) */
} probe;

/* Runs probe number `number` at `value` (a rate, or users) with n requests
 * and the seed. 0; 2 when the input was bad (before any traffic: err says
 * why); 1 when it could not run (a simulator that did not start, a failed
 * write: err says why); 128 + signal when a stop signal ended it. */
int probe_run(const probe_setup *ps, int number, double value, long n, int64_t seed, probe *p,
              char *err, int errlen);

#endif

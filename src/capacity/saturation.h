/* saturation: the watch that stops a probe already lost (run/run.h's
 * run_watch, called every 10 ms with the rows so far). Two tests:
 *   certain  more requests already missed the SLO than the goal allows of
 *            the whole probe, so many that even if every other request
 *            met it the probe would fail clearly at 95% (so it needs no
 *            repetition);
 *   growing  (open loop only) the requests in flight keep growing through
 *            the arrivals: the server takes in less than arrives, its
 *            queue has no bound, and sustained load at this rate is lost
 *            however long the probe would have run.
 * docs/capacity.md says how the growth test is made and how often it was
 * wrong on the simulator. */
#ifndef SERVELAB_SATURATION_H
#define SERVELAB_SATURATION_H

#include "analysis/summary.h"
#include "run/run.h"

#include <stddef.h>
#include <stdint.h>

typedef struct saturation {
    /* set before the probe */
    slo_spec slo;
    double goal;
    size_t planned;      /* requests in the probe's schedule */
    int64_t arrivals_us; /* when its last request is due (about) */
    int watch_growth;    /* 0: the certain test only (closed loop) */
    double min_ramp_ms;  /* the growth test looks no earlier than this (the queue's fill) */
    /* what it found */
    int stopped; /* 0, SAT_CERTAIN or SAT_GROWING */
    char why[160];
    size_t seen, misses; /* rows looked at, and of them missed */
    double e2e_sum_ms;   /* of the rows that succeeded, for the ramp */
    size_t e2e_n;
    float *in_flight; /* one sample a tick (10 ms), from t=0 */
    size_t n_samples, cap_samples;
    run_watch watch; /* what run_opts.watch points at */
} saturation;

enum { SAT_NONE, SAT_CERTAIN, SAT_GROWING };

/* Ready to watch a probe (s's settings filled first). */
void saturation_init(saturation *s);
void saturation_free(saturation *s);
/* The growth test on a series of in-flight counts, one per 10 ms from t=0,
 * whose requests took e2e_ms on average, arriving at `rate` req/s: 1 when
 * it has grown through the series by a quarter of the rate a second or
 * more
 * (tests call it on made-up series). */
int saturation_growing(const float *in_flight, size_t n, double e2e_ms, double rate);

#endif

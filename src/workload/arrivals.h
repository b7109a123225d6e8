/* arrivals: the open-loop schedule. Every request's due time is computed up
 * front as an absolute offset from the run's start (t=0 is the first
 * arrival), never as a relative sleep, so a slow client cannot drift the
 * offered rate: it can only be late, and its lateness is measured.
 *   poisson   exponential gaps with mean 1/rate
 *   gamma     gamma gaps with mean 1/rate and coefficient of variation
 *             `burstiness` (shape 1/cv^2; cv 1 is poisson, > 1 burstier)
 *   constant  gaps of exactly 1/rate
 *   rate inf  everything due at t=0
 * A rate plan (rate_plan.h) makes the rate a function of time: the process
 * above is drawn at rate 1 in "expected arrivals" (operational time) and
 * each arrival put where the plan's integrated rate reaches it, the time
 * rescaling of a renewal process. */
#ifndef SERVELAB_ARRIVALS_H
#define SERVELAB_ARRIVALS_H

#include "common/rng.h"
#include "workload/rate_plan.h"

#include <stddef.h>
#include <stdint.h>

typedef enum { ARRIVAL_POISSON, ARRIVAL_GAMMA, ARRIVAL_CONSTANT } arrival_kind;

typedef struct arrival_spec {
    arrival_kind kind;
    double rate;       /* requests per second; INFINITY for all at once */
    double burstiness; /* gamma's coefficient of variation */
} arrival_spec;

/* Parse "poisson" | "gamma" | "constant"; -1 when unknown. */
int arrival_kind_parse(const char *s, arrival_kind *out);
const char *arrival_kind_name(arrival_kind k);

/* The longest schedule there is: a run of more than a week is a mistake
 * (a rate of 1e-300, say), not a benchmark. */
#define ARRIVALS_MAX_S (7 * 24 * 3600)

/* Due times in microseconds for up to `max_n` requests, stopping early at
 * the first one due after `max_us` (use INT64_MAX for none) or after
 * ARRIVALS_MAX_S. Returns the count; *out is malloc'd. */
size_t arrivals_generate(const arrival_spec *a, uint64_t seed, size_t max_n, int64_t max_us,
                         int64_t **out);

/* The schedule of a rate plan: the kind and burstiness of `a` (its rate is
 * the plan's), up to `max_n` due times, every one before the plan's end.
 * The k-th arrival (from 0) is where the plan's integrated rate reaches the
 * sum of k unit-mean gaps: k itself for constant, so a stage of R req/s for
 * D s holds R * D of them when that is whole; the first is at t=0, or at
 * the start of the first stage that offers anything. One constant-rate
 * stage draws the same schedule as arrivals_generate at that rate with the
 * same seed (to the microsecond's rounding). *out is malloc'd. */
size_t arrivals_generate_plan(const arrival_spec *a, const rate_plan *p, uint64_t seed,
                              size_t max_n, int64_t **out);

#endif

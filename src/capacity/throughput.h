/* throughput: the most the server completes of the workload, measured.
 *
 * Near its limit a server's queue wanders so far that no probe of a few
 * minutes can tell a load just under the limit from one just over it by
 * latencies alone: at exactly the limit, with random arrivals, the wait
 * grows only like the square root of time. What the server completes
 * while it is kept busy, though, varies only as its own service does:
 * with fixed answers, hardly at all. So the search measures it once: a
 * closed-loop probe keeps `users` requests outstanding, more than the
 * server runs at once, and the completions between the first cohort's
 * end and the last drain are counted. They are split into THROUGHPUT_BATCHES
 * runs of equal count, each timed from one completion to another (so that
 * answers ending together in one step do not make the count jump), and
 * the spread of the batches' rates gives the interval (Student's t). A
 * probe whose requests did not queue (their TTFT no longer than the
 * unloaded one's few times) was not saturated and says nothing of the
 * limit. docs/capacity.md says how the search uses it. */
#ifndef SERVELAB_THROUGHPUT_H
#define SERVELAB_THROUGHPUT_H

#include "model/record.h"

#include <stddef.h>

#define THROUGHPUT_BATCHES 8

typedef struct throughput_fit {
    double rate_rps, low_rps, high_rps; /* NAN: too few completions */
    long counted;                       /* completions in the window */
    double window_s;
    double ttft_ms; /* the mean TTFT of the requests that succeeded */
    int saturated;  /* they queued: ttft_ms at least 4 x the unloaded one */
} throughput_fit;

/* The fit of a closed-loop probe's rows with `users` outstanding;
 * `unloaded_ttft_ms` is the mean TTFT at the search's lowest load. */
throughput_fit throughput_of(const req_rec *r, size_t n, long users, double unloaded_ttft_ms);

#endif

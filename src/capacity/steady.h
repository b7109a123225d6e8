/* steady: does the server keep up? The drift of the queue wait against
 * arrival time over the second half of a probe's arrivals, with an
 * interval. A server that keeps up has a wait that wanders about a level;
 * one that falls behind by a share d of what arrives has a wait that grows
 * by about d seconds every second (its queue grows by d x rate requests a
 * second, served at the rate it can). The wait of each request is its TTFT
 * from its scheduled time (queueing, prefill, the first step); requests
 * are put in BATCHES slices of arrival time and each slice's mean is one
 * point, so that the interval of the fitted slope (Student's t on the
 * slices' residuals) holds although neighbouring requests wait alike.
 * docs/capacity.md says how the test is used and how often it was wrong. */
#ifndef SERVELAB_STEADY_H
#define SERVELAB_STEADY_H

#include "model/record.h"

#include <stddef.h>

#define STEADY_BATCHES 8

typedef struct steady_fit {
    int points;        /* slices with requests in them (the fit needs 4) */
    double window_s;   /* the arrival time it covers */
    double slope;      /* ms of wait per s of arrival time (NAN: no fit) */
    double slope_low;  /* the lower end of its one-sided 97.5% interval */
    double slope_high; /* the upper end */
    double mean_ms;    /* the mean wait over the window */
} steady_fit;

/* The fit over the rows whose scheduled time is in the second half of
 * [0, last_due_ms]; requests without a first token are left out. */
steady_fit steady_of(const req_rec *r, size_t n, double last_due_ms);
/* Growing beyond doubt: even the lower end of the slope would add more
 * than `budget_ms` of wait over `horizon_s` seconds. */
int steady_growing(const steady_fit *f, double budget_ms, double horizon_s);

#endif

/* inflight: the client's own account of its queue over a run, from the
 * rows of requests.csv: how many requests were in flight (sent, not yet
 * ended), how many of those had no first token yet, and how many waited in
 * the client (due by the schedule, not yet sent: a --concurrency cap). The
 * rows hold every request's instants to the microsecond, so these counts
 * have whatever resolution is wanted, unlike /metrics samples taken once a
 * second; and they count what a server may not (requests still waiting in
 * its HTTP queue, before its scheduler sees them). */
#ifndef SERVELAB_REPORT_INFLIGHT_H
#define SERVELAB_REPORT_INFLIGHT_H

#include "model/record.h"

#include <stddef.h>

/* Bins are at most this wide (s), and narrower for short runs. */
#define INFLIGHT_STEP_MAX_S 0.1

typedef struct client_counts {
    size_t n;          /* bins */
    double step_s;     /* their width */
    double *t_s;       /* each bin's middle, seconds since the run started */
    double *in_flight; /* the mean count over each bin: sent, not yet ended */
    double *no_first;  /* sent, no first token yet (all of a failed request's time) */
    double *waiting;   /* due by the schedule, not yet sent */
    double peak_waiting;
} client_counts;

/* The counts of repetition `part` of the rows (n 0 when it has no row with
 * a time). The bins cover the run from t=0 to its last end, each
 * INFLIGHT_STEP_MAX_S wide or, for a run under 20 s, a 200th of it (at
 * least 1 ms), and never more than 4000 of them. */
void client_counts_of(const run_rows *rows, int part, client_counts *out);
void client_counts_free(client_counts *c);

#endif

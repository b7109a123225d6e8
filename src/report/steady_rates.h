/* steady_rates: the request and output-token rates the throughput figure
 * plots, over the arrival window shifted by the run's median latency. The
 * plain arrival-window rates (summary.h) count what ended by the last
 * arrival: in a short run whose requests take about as long as the window
 * (40 requests at 32 req/s arrive in 1.4 s, and each takes 1.9 s), almost
 * nothing has ended by then, and the rate reads near 0 for a server that
 * kept up. Shifting the window by the median time from a request's
 * scheduled arrival to its end counts the completions of the requests that
 * arrived in it, whichever way the run went: a server that keeps up
 * completes them at the offered rate, a saturated one at its own. */
#ifndef SERVELAB_REPORT_STEADY_RATES_H
#define SERVELAB_REPORT_STEADY_RATES_H

#include "report/report.h"

/* Over the repetitions: the completed requests (and their output tokens)
 * whose end lies in [L, W + L], with W the repetition's arrival window (t=0
 * to its last scheduled arrival) and L the median, over its completed
 * requests, of end - scheduled; summed, then divided by the summed W. NAN
 * when no repetition has a window. */
void steady_rates(const report_run *rr, double *requests_per_s, double *tokens_per_s);

#endif

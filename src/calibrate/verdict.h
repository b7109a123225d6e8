/* verdict: whether one calibration level measured within 1 ms, and the one
 * sentence that sums up a table of them. The sentence follows the table:
 * levels are ordered by load (streams, then chunk rate), separately for
 * spread arrivals and for streams started together, and the claim for each
 * stops below the lightest level that failed, naming that level and the
 * figures that failed it: a lighter failure is never hidden by a heavier
 * pass (noise is met with --repeat, not by skipping a level). */
#ifndef SERVELAB_VERDICT_H
#define SERVELAB_VERDICT_H

#include "calibrate/calibrate.h"

#include <stddef.h>

/* No request failed, TTFT and inter-token errors under 1 ms at p99, client
 * CPU under 95%, and for spread arrivals the schedule lag p99 under 1 ms
 * too. Started together, every request is due at t=0: its lag is the time
 * the client takes to open STREAMS connections, which no latency it
 * reports contains (each is timed from the request's own send), so a burst
 * shows its lag but is not judged by it. */
int calibrate_within_1ms(const calib_result *r);

/* The simulator used at least 90% of its CPUs (sim_threads of them): at
 * that level it, not only the client, may have been the limit, so a
 * failure there may not be the client's. The table marks its CPU with "!"
 * and the sentence says so of a failed level. */
#define CALIB_SIM_BOUND_PCT 90
int calibrate_sim_bound(const calib_result *r);

/* "This machine measures within 1 ms up to ..." for the n results. */
void calibrate_sentence(char *buf, size_t cap, const calib_result *r, int n);

#endif

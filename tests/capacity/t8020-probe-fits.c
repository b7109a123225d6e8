/* t8020-probe-fits: the two fits the capacity search makes of a probe's
 * rows, on rows made up so that the answer is known: the saturated
 * completion rate of the throughput probe (capacity/throughput.h) and the
 * drift of the wait (capacity/steady.h). */
#include "capacity/steady.h"
#include "capacity/throughput.h"
#include "test.h"

#include <math.h>
#include <stdlib.h>

/* n requests of a closed loop with `users` outstanding against 8 slots
 * whose answers end together every 500 ms (one, then seven 10 ms later, as
 * the simulator's steps end them): 16 req/s exactly. */
static req_rec *bursts(int n, int users) {
    req_rec *r = calloc((size_t)n, sizeof *r);
    for (int i = 0; i < n; i++) {
        r[i] = req_rec_unknown();
        int burst = i / 8, within = i % 8;
        r[i].end_ms = 500.0 * (burst + 1) + (within ? 10 : 0);
        r[i].sent_ms = i < users ? 0 : r[i - users].end_ms;
        r[i].first_ms = r[i].sent_ms + 2000;
        r[i].scheduled_ms = 0;
    }
    return r;
}

TEST(capacity_throughput_fit_of_bursts) {
    req_rec *r = bursts(800, 100);
    throughput_fit f = throughput_of(r, 800, 100, 10);
    CHECK(f.saturated);
    CHECK_NEAR(f.rate_rps, 16, 0.01);
    CHECK_MSG(f.high_rps - f.low_rps < 0.1, "interval %.3f-%.3f", f.low_rps, f.high_rps);
    /* requests that did not queue: no limit was seen */
    for (int i = 0; i < 800; i++)
        r[i].first_ms = r[i].sent_ms + 10;
    f = throughput_of(r, 800, 100, 10);
    CHECK(!f.saturated);
    /* too few completions past the first cohort and before the drain */
    f = throughput_of(r, 40, 16, 10);
    CHECK(isnan(f.rate_rps));
    free(r);
}

TEST(capacity_throughput_fit_of_irregular_service) {
    /* exponential gaps of mean 1/16 s: the same rate, a wider interval */
    int n = 2000;
    req_rec *r = calloc((size_t)n, sizeof *r);
    double t = 0;
    unsigned x = 12345;
    for (int i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        double u = ((x >> 8) + 0.5) / 16777216.0;
        t += -log(u) / 16 * 1000;
        r[i] = req_rec_unknown();
        r[i].sent_ms = 0;
        r[i].first_ms = 5000;
        r[i].end_ms = t;
    }
    throughput_fit f = throughput_of(r, (size_t)n, 100, 10);
    CHECK_MSG(f.low_rps < 16 && 16 < f.high_rps, "%.3f-%.3f", f.low_rps, f.high_rps);
    CHECK(f.high_rps - f.low_rps > 0.5 && f.high_rps - f.low_rps < 4);
    free(r);
}

TEST(capacity_steady_fit) {
    enum { N = 2000 };
    req_rec r[N];
    unsigned x = 99;
    for (int i = 0; i < N; i++) { /* a wait that wanders about 200 ms */
        x = x * 1103515245u + 12345u;
        r[i] = req_rec_unknown();
        r[i].scheduled_ms = i * 50.0;
        r[i].first_ms = r[i].scheduled_ms + 200 + (double)((x >> 16) % 100);
    }
    steady_fit f = steady_of(r, N, (N - 1) * 50.0);
    CHECK_INT(f.points, STEADY_BATCHES);
    CHECK_MSG(f.slope_low < 0 && f.slope_high > 0, "%.3f-%.3f", f.slope_low, f.slope_high);
    CHECK(!steady_growing(&f, 1000, 400));
    for (int i = 0; i < N; i++) /* falling behind by 5%: 50 ms of wait a second */
        r[i].first_ms = r[i].scheduled_ms + 200 + 0.05 * r[i].scheduled_ms;
    f = steady_of(r, N, (N - 1) * 50.0);
    CHECK_NEAR(f.slope, 50, 0.5);
    CHECK(f.slope_low > 45);
    CHECK(steady_growing(&f, 1000, 400)); /* 400 s at 45 ms/s: 18 s of wait */
    CHECK(!steady_growing(&f, 1e6, 400)); /* a budget nobody reaches */
}

/* saturation: the early stop of a lost probe (see saturation.h). The
 * growth test looks only past the ramp (in flight rises from 0 to its level
 * over about one request's latency, which at gpu-7b's long answers is
 * seconds), splits what is left of the arrivals into four quarters and
 * calls the queue unbounded when each quarter's mean count is above the one
 * before, the last is at least 1.5 times the first plus 4, and it grew by a
 * quarter of the arrival rate a second or more. Near its limit a stable
 * queue wanders far (at 0.95 of the knee its random walk climbed the first
 * two ways in 4 of 6 probes, and by a tenth of the rate in 2 of 6), but a
 * quarter of every second's arrivals left behind is a server that cannot
 * keep up; lesser overloads are left to the certain test. */
#include "capacity/saturation.h"
#include "capacity/binomial.h"
#include "client/loadgen.h"
#include "common/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TICK_MS 10.0
#define MIN_RAMP_MS 1000.0
#define MIN_WATCHED_MS 3000.0
#define GROWTH_SHARE 0.5 /* it grows by half of what arrives, or more */

int saturation_growing(const float *in_flight, size_t n, double e2e_ms, double rate) {
    double ramp = 2 * e2e_ms > MIN_RAMP_MS ? 2 * e2e_ms : MIN_RAMP_MS;
    size_t from = (size_t)(ramp / TICK_MS);
    /* as long past the ramp as the ramp itself, and 3 s at least */
    if (n <= from || (double)(n - from) * TICK_MS < (ramp > MIN_WATCHED_MS ? ramp : MIN_WATCHED_MS))
        return 0;
    double mean[4] = {0};
    size_t len = (n - from) / 4;
    for (int q = 0; q < 4; q++) {
        for (size_t i = 0; i < len; i++)
            mean[q] += in_flight[from + (size_t)q * len + i];
        mean[q] /= (double)len;
    }
    for (int q = 1; q < 4; q++)
        if (!(mean[q] > mean[q - 1]))
            return 0;
    /* from the first quarter's middle to the last's: three quarters */
    double per_s = (mean[3] - mean[0]) / (3.0 * (double)len * TICK_MS / 1000.0);
    return mean[3] >= 1.5 * mean[0] + 4 && per_s >= GROWTH_SHARE * rate;
}

/* The new rows: their misses, and their latency for the ramp. */
static void look_at_rows(saturation *s, const run_rows *rows) {
    for (; s->seen < rows->n; s->seen++) {
        const req_rec *r = &rows->r[s->seen];
        if (request_slo_misses(r, &s->slo))
            s->misses++;
        if (r->error == ERR_NONE) {
            s->e2e_sum_ms += r->end_ms - r->sent_ms;
            s->e2e_n++;
        }
    }
}

static void keep_sample(saturation *s, int in_flight) {
    if (s->n_samples == s->cap_samples) {
        s->cap_samples = s->cap_samples ? 2 * s->cap_samples : 4096;
        s->in_flight = xrealloc(s->in_flight, s->cap_samples * sizeof *s->in_flight);
    }
    s->in_flight[s->n_samples++] = (float)in_flight;
}

/* It cannot pass even if every request not yet finished meets the SLO, and
 * that best case is a clear failure at 95% (its Wilson interval wholly
 * under the goal), so that no repetition is needed to believe it. */
static int lost_for_certain(const saturation *s) {
    double n = (double)s->planned, best = n - (double)s->misses, lo, hi;
    if (!(best < s->goal * n))
        return 0;
    wilson_interval(best, n, BINOMIAL_Z95, &lo, &hi);
    return hi < s->goal;
}

static int watch(void *arg, const struct loadgen_result *so_far, int in_flight, int64_t now_us) {
    saturation *s = arg;
    look_at_rows(s, &so_far->rows);
    if (lost_for_certain(s)) {
        s->stopped = SAT_CERTAIN;
        snprintf(s->why, sizeof s->why,
                 "%zu of %zu requests had missed the SLO: it cannot pass, clearly", s->misses,
                 s->planned);
        return 1;
    }
    if (!s->watch_growth || now_us > s->arrivals_us)
        return 0; /* past the last arrival the count drains, whatever the server */
    keep_sample(s, in_flight);
    if (s->n_samples % 50) /* the test every half second is enough */
        return 0;
    double e2e = s->e2e_n ? s->e2e_sum_ms / (double)s->e2e_n : 0;
    if (e2e < s->min_ramp_ms / 2) /* the ramp is twice it */
        e2e = s->min_ramp_ms / 2;
    double rate = s->arrivals_us > 0 ? (double)(s->planned - 1) / (s->arrivals_us / 1e6) : 0;
    if (!saturation_growing(s->in_flight, s->n_samples, e2e, rate))
        return 0;
    s->stopped = SAT_GROWING;
    snprintf(s->why, sizeof s->why,
             "the requests in flight grew through the run (%d at %.1f s): the queue has no bound",
             in_flight, now_us / 1e6);
    return 1;
}

void saturation_init(saturation *s) {
    s->stopped = SAT_NONE;
    s->why[0] = 0;
    s->seen = s->misses = s->e2e_n = 0;
    s->e2e_sum_ms = 0;
    s->in_flight = NULL;
    s->n_samples = s->cap_samples = 0;
    s->watch = (run_watch){.fn = watch, .arg = s};
}

void saturation_free(saturation *s) {
    free(s->in_flight);
    s->in_flight = NULL;
}

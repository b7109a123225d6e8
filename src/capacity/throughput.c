/* throughput: the saturated completion rate (see throughput.h). */
#include "capacity/throughput.h"
#include "common/util.h"

#include <math.h>
#include <stdlib.h>

/* Student's t, two-sided 95%, for THROUGHPUT_BATCHES - 1 = 7 degrees of freedom. */
#define T95_7 2.365

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

throughput_fit throughput_of(const req_rec *r, size_t n, long users, double unloaded_ttft_ms) {
    throughput_fit f = {.rate_rps = NAN, .low_rps = NAN, .high_rps = NAN, .ttft_ms = NAN};
    double *end = xmalloc((n ? n : 1) * sizeof *end);
    size_t k = 0;
    double ttft = 0;
    for (size_t i = 0; i < n; i++)
        if (r[i].error == 0 && !isnan(r[i].end_ms)) {
            end[k++] = r[i].end_ms;
            ttft += r[i].first_ms - r[i].sent_ms;
        }
    f.ttft_ms = k ? ttft / (double)k : NAN;
    f.saturated = k && unloaded_ttft_ms > 0 && f.ttft_ms >= 4 * unloaded_ttft_ms;
    qsort(end, k, sizeof *end, cmp_double);
    /* from the end of the first cohort to where fewer than `users` are left */
    size_t a = users > 0 ? (size_t)users : 0, b = k > a ? k - a : 0;
    size_t per = b > a ? (b - a) / THROUGHPUT_BATCHES : 0;
    if (per < 2) {
        free(end);
        return f;
    }
    /* Batch boundaries at the start of a burst: a completion that follows
     * the one before it by at least the mean gap. Answers that end in one
     * step end together, and a boundary inside such a burst would make the
     * batch's count jump while its time does not; between burst starts
     * both are whole. */
    double mean_gap = (end[b] - end[a]) / (double)(b - a);
    size_t cut[THROUGHPUT_BATCHES + 1];
    for (int j = 0; j <= THROUGHPUT_BATCHES; j++) {
        size_t i = a + (size_t)j * per;
        while (i + 1 < k && i > 0 && !(end[i] - end[i - 1] >= mean_gap))
            i++;
        cut[j] = i;
    }
    double rates[THROUGHPUT_BATCHES], mean = 0;
    int ok = 1;
    for (int j = 0; j < THROUGHPUT_BATCHES; j++) {
        double dt = (end[cut[j + 1]] - end[cut[j]]) / 1000.0;
        ok &= dt > 0 && cut[j + 1] > cut[j];
        rates[j] = dt > 0 ? (double)(cut[j + 1] - cut[j]) / dt : 0;
        mean += rates[j] / THROUGHPUT_BATCHES;
    }
    f.window_s = (end[cut[THROUGHPUT_BATCHES]] - end[cut[0]]) / 1000.0;
    f.counted = (long)(cut[THROUGHPUT_BATCHES] - cut[0]);
    if (ok && f.window_s > 0) {
        double var = 0;
        for (int j = 0; j < THROUGHPUT_BATCHES; j++)
            var += (rates[j] - mean) * (rates[j] - mean) / (THROUGHPUT_BATCHES - 1);
        double se = sqrt(var / THROUGHPUT_BATCHES);
        f.rate_rps = (double)f.counted / f.window_s;
        f.low_rps = f.rate_rps - T95_7 * se;
        f.high_rps = f.rate_rps + T95_7 * se;
    }
    free(end);
    return f;
}

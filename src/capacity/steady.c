/* steady: the drift fit (see steady.h). Least squares of the slices' mean
 * waits on their mean arrival times, each slice weighted alike; the
 * interval is the slope's standard error from the residuals times
 * Student's t for points - 2 degrees of freedom at 97.5% one-sided. */
#include "capacity/steady.h"

#include <math.h>
#include <string.h>

/* Student's t, one-sided 97.5%, for 1..8 degrees of freedom. */
static const double t975[] = {0, 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306};

steady_fit steady_of(const req_rec *r, size_t n, double last_due_ms) {
    steady_fit f = {.slope = NAN, .slope_low = NAN, .slope_high = NAN, .mean_ms = NAN};
    double from = last_due_ms / 2, width = (last_due_ms - from) / STEADY_BATCHES;
    if (!(width > 0))
        return f;
    double sum_t[STEADY_BATCHES] = {0}, sum_w[STEADY_BATCHES] = {0};
    long count[STEADY_BATCHES] = {0};
    double all = 0;
    long all_n = 0;
    for (size_t i = 0; i < n; i++) {
        if (isnan(r[i].first_ms) || r[i].scheduled_ms < from || r[i].scheduled_ms > last_due_ms)
            continue;
        int b = (int)((r[i].scheduled_ms - from) / width);
        b = b >= STEADY_BATCHES ? STEADY_BATCHES - 1 : b;
        double wait = r[i].first_ms - r[i].scheduled_ms;
        sum_t[b] += r[i].scheduled_ms / 1000.0;
        sum_w[b] += wait;
        count[b]++;
        all += wait;
        all_n++;
    }
    double x[STEADY_BATCHES], y[STEADY_BATCHES], mx = 0, my = 0;
    int k = 0;
    for (int b = 0; b < STEADY_BATCHES; b++)
        if (count[b] > 0) {
            x[k] = sum_t[b] / (double)count[b];
            y[k] = sum_w[b] / (double)count[b];
            mx += x[k];
            my += y[k];
            k++;
        }
    f.points = k;
    f.window_s = (last_due_ms - from) / 1000.0;
    f.mean_ms = all_n ? all / (double)all_n : NAN;
    if (k < 4)
        return f;
    mx /= k;
    my /= k;
    double sxx = 0, sxy = 0;
    for (int i = 0; i < k; i++) {
        sxx += (x[i] - mx) * (x[i] - mx);
        sxy += (x[i] - mx) * (y[i] - my);
    }
    if (!(sxx > 0))
        return f;
    f.slope = sxy / sxx;
    double rss = 0;
    for (int i = 0; i < k; i++) {
        double e = y[i] - my - f.slope * (x[i] - mx);
        rss += e * e;
    }
    double se = sqrt(rss / (k - 2) / sxx);
    f.slope_low = f.slope - t975[k - 2] * se;
    f.slope_high = f.slope + t975[k - 2] * se;
    return f;
}

int steady_growing(const steady_fit *f, double budget_ms, double horizon_s) {
    return f->slope_low > 0 && f->slope_low * horizon_s > budget_ms;
}

/* stats: sorting, numpy-compatible percentiles and a distribution summary. */
#include "analysis/stats.h"

#include <math.h>
#include <stdlib.h>

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void sort_doubles(double *x, size_t n) {
    qsort(x, n, sizeof *x, cmp_double);
}

double percentile_sorted(const double *x, size_t n, double p) {
    if (n == 0)
        return NAN;
    if (p <= 0)
        return x[0];
    if (p >= 100)
        return x[n - 1];
    double h = (double)(n - 1) * p / 100.0;
    size_t lo = (size_t)floor(h);
    if (lo + 1 >= n)
        return x[n - 1];
    double frac = h - (double)lo;
    return x[lo] + frac * (x[lo + 1] - x[lo]);
}

dist dist_of(double *x, size_t n) {
    dist d = {.n = n};
    if (n == 0) {
        d.mean = d.sd = d.min = d.max = d.p50 = d.p90 = d.p95 = d.p99 = d.p999 = NAN;
        return d;
    }
    sort_doubles(x, n);
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += x[i];
    d.mean = sum / (double)n;
    double ss = 0;
    for (size_t i = 0; i < n; i++)
        ss += (x[i] - d.mean) * (x[i] - d.mean);
    d.sd = sqrt(ss / (double)n);
    d.min = x[0];
    d.max = x[n - 1];
    d.p50 = percentile_sorted(x, n, 50);
    d.p90 = percentile_sorted(x, n, 90);
    d.p95 = percentile_sorted(x, n, 95);
    d.p99 = percentile_sorted(x, n, 99);
    d.p999 = percentile_sorted(x, n, 99.9);
    return d;
}

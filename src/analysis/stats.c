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

static int cmp_float(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

static double percentile_sorted_f(const float *x, size_t n, double p) {
    if (p <= 0)
        return x[0];
    if (p >= 100)
        return x[n - 1];
    double h = (double)(n - 1) * p / 100.0;
    size_t lo = (size_t)floor(h);
    if (lo + 1 >= n)
        return x[n - 1];
    double frac = h - (double)lo;
    return (double)x[lo] + frac * ((double)x[lo + 1] - (double)x[lo]);
}

dist dist_of_floats(float *x, size_t n) {
    dist d = {.n = n};
    if (n == 0) {
        d.mean = d.sd = d.min = d.max = d.p50 = d.p90 = d.p95 = d.p99 = d.p999 = NAN;
        return d;
    }
    qsort(x, n, sizeof *x, cmp_float);
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
    d.p50 = percentile_sorted_f(x, n, 50);
    d.p90 = percentile_sorted_f(x, n, 90);
    d.p95 = percentile_sorted_f(x, n, 95);
    d.p99 = percentile_sorted_f(x, n, 99);
    d.p999 = percentile_sorted_f(x, n, 99.9);
    return d;
}

#include "common/rng.h"
#include "common/util.h"

static double beta_draw(rng *r, double a, double b) {
    double x = rng_gamma(r, a, 1.0), y = rng_gamma(r, b, 1.0);
    return x / (x + y);
}

void bootstrap_percentile_ci(const double *x, size_t n, double p, int reps, uint64_t seed,
                             double *lo, double *hi) {
    if (n == 0) {
        *lo = *hi = NAN;
        return;
    }
    if (n == 1) {
        *lo = *hi = x[0];
        return;
    }
    double h = (double)(n - 1) * p / 100.0;
    size_t k0 = (size_t)floor(h); /* 0-based rank of the lower order statistic */
    double frac = h - (double)k0;
    double *rep = xmalloc((size_t)reps * sizeof *rep);
    rng r;
    rng_seed(&r, seed ^ 0xb00757ULL);
    double nd = (double)n;
    for (int i = 0; i < reps; i++) {
        double k = (double)(k0 + 1);
        double u = beta_draw(&r, k, nd + 1 - k);
        size_t i0 = (size_t)floor(u * nd);
        if (i0 >= n)
            i0 = n - 1;
        double v = x[i0];
        if (frac > 0 && k0 + 1 < n) {
            double u1 = u + (1 - u) * beta_draw(&r, 1, nd - k);
            size_t i1 = (size_t)floor(u1 * nd);
            if (i1 >= n)
                i1 = n - 1;
            v += frac * (x[i1] - x[i0]);
        }
        rep[i] = v;
    }
    sort_doubles(rep, (size_t)reps);
    *lo = percentile_sorted(rep, (size_t)reps, 2.5);
    *hi = percentile_sorted(rep, (size_t)reps, 97.5);
    free(rep);
}

/* stats: sorting, numpy-compatible percentiles, a distribution summary and
 * its JSON form. */
#include "analysis/stats.h"
#include "analysis/radix.h"
#include "common/rng.h"
#include "common/util.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>

void sort_doubles(double *x, size_t n) {
    radix_sort_doubles(x, n);
}

static double at_double(const void *x, size_t i) {
    return ((const double *)x)[i];
}

static double at_float(const void *x, size_t i) {
    return ((const float *)x)[i];
}

/* Percentile p of n sorted values read through `at` (numpy's linear rule). */
__attribute__((always_inline)) static inline double
percentile_at(const void *x, size_t n, double p, double (*at)(const void *, size_t)) {
    assert(n > 0);
    if (p <= 0)
        return at(x, 0);
    if (p >= 100)
        return at(x, n - 1);
    double h = (double)(n - 1) * p / 100.0;
    size_t lo = (size_t)floor(h);
    if (lo + 1 >= n)
        return at(x, n - 1);
    double frac = h - (double)lo;
    return at(x, lo) + frac * (at(x, lo + 1) - at(x, lo));
}

double percentile_sorted(const double *x, size_t n, double p) {
    return n ? percentile_at(x, n, p, at_double) : NAN;
}

/* The summary of n sorted values (n > 0) read through `at` (inlined into
 * each caller, so that `at` is no call a value). */
__attribute__((always_inline)) static inline dist
dist_of_sorted(const void *x, size_t n, double (*at)(const void *, size_t)) {
    dist d = {.n = n};
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += at(x, i);
    d.mean = sum / (double)n;
    double ss = 0;
    for (size_t i = 0; i < n; i++)
        ss += (at(x, i) - d.mean) * (at(x, i) - d.mean);
    d.sd = sqrt(ss / (double)n);
    d.min = at(x, 0);
    d.max = at(x, n - 1);
    d.p50 = percentile_at(x, n, 50, at);
    d.p90 = percentile_at(x, n, 90, at);
    d.p95 = percentile_at(x, n, 95, at);
    d.p99 = percentile_at(x, n, 99, at);
    d.p999 = percentile_at(x, n, 99.9, at);
    /* the values were sorted: the order statistics are in order (NaN
     * compares false either way, and rows never hold one) */
    assert(!(d.min > d.p50) && !(d.p50 > d.p99) && !(d.p99 > d.max));
    return d;
}

static dist dist_empty(void) {
    dist d = {.n = 0};
    d.mean = d.sd = d.min = d.max = d.p50 = d.p90 = d.p95 = d.p99 = d.p999 = NAN;
    return d;
}

dist dist_of(double *x, size_t n) {
    if (n == 0)
        return dist_empty();
    sort_doubles(x, n);
    return dist_of_sorted(x, n, at_double);
}

dist dist_of_floats(float *x, size_t n) {
    if (n == 0)
        return dist_empty();
    radix_sort_floats(x, n);
    return dist_of_sorted(x, n, at_float);
}

dist dist_of_with(double *x, size_t n, void *scratch) {
    if (n == 0)
        return dist_empty();
    radix_sort_doubles_with(x, n, scratch);
    return dist_of_sorted(x, n, at_double);
}

dist dist_of_floats_with(float *x, size_t n, void *scratch) {
    if (n == 0)
        return dist_empty();
    radix_sort_floats_with(x, n, scratch);
    return dist_of_sorted(x, n, at_float);
}

dist dist_of_floats_threads(float *x, size_t n, int threads) {
    if (n == 0)
        return dist_empty();
    radix_sort_floats_threads(x, n, threads);
    return dist_of_sorted(x, n, at_float);
}

static double beta_draw(rng *r, double a, double b) {
    double x = rng_gamma(r, a, 1.0), y = rng_gamma(r, b, 1.0);
    return x / (x + y);
}

void bootstrap_percentile_reps(const double *x, size_t n, double p, int reps, uint64_t seed,
                               double *out) {
    if (n <= 1) {
        for (int i = 0; i < reps; i++)
            out[i] = n ? x[0] : NAN;
        return;
    }
    double h = (double)(n - 1) * p / 100.0;
    size_t k0 = (size_t)floor(h); /* 0-based rank of the lower order statistic */
    double frac = h - (double)k0;
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
        out[i] = v;
    }
}

void bootstrap_percentile_ci(const double *x, size_t n, double p, int reps, uint64_t seed,
                             double *lo, double *hi) {
    if (n == 0) {
        *lo = *hi = NAN;
        return;
    }
    double *rep = xmalloc((size_t)reps * sizeof *rep);
    bootstrap_percentile_reps(x, n, p, reps, seed, rep);
    sort_doubles(rep, (size_t)reps);
    *lo = percentile_sorted(rep, (size_t)reps, 2.5);
    *hi = percentile_sorted(rep, (size_t)reps, 97.5);
    free(rep);
}

static json_t *finite_or_null(double x) {
    return isfinite(x) ? json_real(x) : json_null();
}

json_t *dist_json(const dist *d) {
    return json_pack(
        "{s:I,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o}", "n", (json_int_t)d->n, "mean",
        finite_or_null(d->mean), "sd", finite_or_null(d->sd), "min", finite_or_null(d->min), "p50",
        finite_or_null(d->p50), "p90", finite_or_null(d->p90), "p95", finite_or_null(d->p95), "p99",
        finite_or_null(d->p99), "p99_9", finite_or_null(d->p999), "max", finite_or_null(d->max));
}

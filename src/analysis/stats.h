/* stats: exact descriptive statistics over samples. Percentiles interpolate
 * linearly between closest ranks, numpy's default ("linear", method 7 of
 * Hyndman and Fan): for p in [0,100] over n sorted values the rank is
 * h = (n - 1) * p / 100 and the result x[floor h] + (h - floor h) *
 * (x[floor h + 1] - x[floor h]). */
#ifndef SERVELAB_STATS_H
#define SERVELAB_STATS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

typedef struct dist {
    size_t n;
    double mean, sd; /* sd: population standard deviation (numpy's default ddof=0) */
    double min, max;
    double p50, p90, p95, p99, p999;
} dist;

void sort_doubles(double *x, size_t n);
/* Percentile of already sorted values; NaN when n == 0. */
double percentile_sorted(const double *x, size_t n, double p);
/* Sorts x in place and summarises it; all NaN when n == 0. */
dist dist_of(double *x, size_t n);
/* The same for floats (sorted in place, figures computed in double): the
 * same numbers as dist_of on their widened copy, without the copy. */
dist dist_of_floats(float *x, size_t n);
/* The same, the sort on up to `threads` threads (radix.h). */
dist dist_of_floats_threads(float *x, size_t n, int threads);
/* dist_of and dist_of_floats with the caller's scratch for the sort, room
 * for n values (radix.h's _with sorts). */
dist dist_of_with(double *x, size_t n, void *scratch);
dist dist_of_floats_with(float *x, size_t n, void *scratch);
/* summary.json's object for a distribution: {n, mean, sd, min, p50, p90,
 * p95, p99, p99_9, max}, each figure null when not finite. */
json_t *dist_json(const dist *d);

/* Bootstrap 95% confidence interval of the p-th percentile of sorted x,
 * `reps` replicates, seeded. Exact for the order statistics: the k-th
 * smallest of n resampled ranks is floor(n * U(k)) with U(k) ~ Beta(k,
 * n+1-k), and U(k+1) = U(k) + (1 - U(k)) * Beta(1, n-k); each replicate's
 * percentile interpolates between those two values as numpy does. O(reps),
 * whatever n. */
void bootstrap_percentile_ci(const double *x, size_t n, double p, int reps, uint64_t seed,
                             double *lo, double *hi);
/* The same bootstrap's replicates themselves, into out[0..reps), in the
 * order drawn (for an interval of a difference between two samples, each
 * side drawn with its own seed); all NaN when n == 0. */
void bootstrap_percentile_reps(const double *x, size_t n, double p, int reps, uint64_t seed,
                               double *out);

#endif

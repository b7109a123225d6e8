/* stats: percentiles against values from numpy's documented linear method,
 * computed by hand for the edge cases (n=1, n=2, ties). */
#include "analysis/radix.h"
#include "analysis/stats.h"
#include "test.h"
#include "common/rng.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

TEST(stats_percentile_n1) {
    double x[] = {7.5};
    dist d = dist_of(x, 1);
    CHECK_NEAR(d.p50, 7.5, 1e-12);
    CHECK_NEAR(d.p99, 7.5, 1e-12);
    CHECK_NEAR(d.sd, 0, 1e-12);
}

TEST(stats_percentile_n2) {
    double x[] = {10, 0};
    dist d = dist_of(x, 2);
    /* h = (2-1) * p/100: p50 -> 5, p90 -> 9, p99 -> 9.9, p99.9 -> 9.99 */
    CHECK_NEAR(d.p50, 5, 1e-12);
    CHECK_NEAR(d.p90, 9, 1e-12);
    CHECK_NEAR(d.p99, 9.9, 1e-12);
    CHECK_NEAR(d.p999, 9.99, 1e-12);
    CHECK_NEAR(d.mean, 5, 1e-12);
    CHECK_NEAR(d.sd, 5, 1e-12);
}

TEST(stats_percentile_ties_and_known_values) {
    /* numpy.percentile([1,2,2,2,3,4,10], [50,90,95]) = [2, 6.4, 8.2] */
    double x[] = {10, 2, 1, 2, 4, 2, 3};
    dist d = dist_of(x, 7);
    CHECK_NEAR(d.p50, 2, 1e-12);
    CHECK_NEAR(d.p90, 6.4, 1e-12);
    CHECK_NEAR(d.p95, 8.2, 1e-12);
    CHECK_NEAR(d.min, 1, 0);
    CHECK_NEAR(d.max, 10, 0);
    /* numpy.percentile(range(1, 101), 99) = 99.01 */
    double y[100];
    for (int i = 0; i < 100; i++)
        y[i] = i + 1;
    CHECK_NEAR(percentile_sorted(y, 100, 99), 99.01, 1e-9);
    CHECK_NEAR(percentile_sorted(y, 100, 50), 50.5, 1e-9);
}

TEST(stats_empty_is_nan) {
    dist d = dist_of(NULL, 0);
    CHECK(isnan(d.p50) && isnan(d.mean));
}

/* The order-statistic bootstrap agrees with a brute-force bootstrap that
 * resamples the data itself, within Monte-Carlo noise. */
TEST(stats_bootstrap_matches_brute_force) {
    enum { N = 400, B = 4000 };
    double x[N];
    rng r;
    rng_seed(&r, 3);
    for (int i = 0; i < N; i++)
        x[i] = rng_exponential(&r, 100);
    sort_doubles(x, N);
    double lo, hi;
    bootstrap_percentile_ci(x, N, 95, B, 1, &lo, &hi);
    static double reps[B], sample[N];
    for (int b = 0; b < B; b++) {
        for (int i = 0; i < N; i++)
            sample[i] = x[rng_range(&r, 0, N - 1)];
        sort_doubles(sample, N);
        reps[b] = percentile_sorted(sample, N, 95);
    }
    sort_doubles(reps, B);
    double blo = percentile_sorted(reps, B, 2.5), bhi = percentile_sorted(reps, B, 97.5);
    double p95 = percentile_sorted(x, N, 95);
    CHECK(lo < p95 && p95 < hi);
    CHECK_NEAR(lo, blo, (bhi - blo) * 0.1);
    CHECK_NEAR(hi, bhi, (bhi - blo) * 0.1);
    /* seeded: same answer twice */
    double lo2, hi2;
    bootstrap_percentile_ci(x, N, 95, B, 1, &lo2, &hi2);
    CHECK(lo == lo2 && hi == hi2);
}

/* The ITL summary works on the float array in place: every figure equals
 * dist_of's on the widened copy. */
TEST(stats_dist_of_floats_equals_dist_of_widened) {
    enum { N = 10007 };
    static float f[N];
    static double d[N];
    uint64_t x = 12345;
    for (int i = 0; i < N; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        f[i] = (float)((x >> 40) % 100000) / 997.0f;
        d[i] = f[i];
    }
    dist a = dist_of_floats(f, N), b = dist_of(d, N);
    CHECK_INT(a.n, b.n);
    double got[] = {a.mean, a.sd, a.min, a.max, a.p50, a.p90, a.p95, a.p99, a.p999};
    double want[] = {b.mean, b.sd, b.min, b.max, b.p50, b.p90, b.p95, b.p99, b.p999};
    for (int i = 0; i < 9; i++)
        CHECK_MSG(got[i] == want[i], "figure %d: %.17g vs %.17g", i, got[i], want[i]);
    for (int i = 1; i < N; i++)
        CHECK(f[i - 1] <= f[i]);
}

/* The radix sorts, serial and on threads, against qsort's order on values
 * users' runs produce (latencies with three decimals, many ties, a narrow
 * range that leaves digits shared) and on those no run should, but a
 * broken server's figures can: negatives, both zeros, infinities. Compared
 * bit for bit, so -0 before +0 is checked too (below RADIX_MIN, where
 * qsort itself sorts and leaves the zeros as they come, as numbers). */
static int cmp_dbl(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y ? 1 : !!signbit(y) - !!signbit(x);
}

static int cmp_flt(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y ? 1 : !!signbit(y) - !!signbit(x);
}

static double draw(rng *r, int kind) {
    double u = rng_uniform(r);
    switch (kind) {
    case 0: /* a latency in ms, as written: three decimals */
        return floor((20 + u * 2000) * 1000) / 1000;
    case 1: /* a narrow range: the high digits all shared */ return 1000 + floor(u * 64) / 8;
    default: { /* anything */
        static const double odd[] = {0.0, -0.0, INFINITY, -INFINITY, -1e300, 1e-300, -5.5};
        return u < 0.2 ? odd[(int)(u * 35) % 7] : (u - 0.6) * 1e6;
    }
    }
}

TEST(stats_radix_sorts_match_qsort) {
    static const size_t sizes[] = {300, 70001, 2500003};
    rng r;
    rng_seed(&r, 42);
    for (int kind = 0; kind < 3; kind++)
        for (int s = 0; s < 3; s++) {
            size_t n = sizes[s];
            double *d = malloc(n * sizeof *d), *dw = malloc(n * sizeof *dw);
            float *f = malloc(n * sizeof *f), *fw = malloc(n * sizeof *fw),
                  *ft = malloc(n * sizeof *ft);
            for (size_t i = 0; i < n; i++) {
                d[i] = dw[i] = draw(&r, kind);
                f[i] = fw[i] = ft[i] = (float)d[i];
            }
            sort_doubles(d, n);
            qsort(dw, n, sizeof *dw, cmp_dbl);
            dist a = dist_of_floats(f, n), b = dist_of_floats_threads(ft, n, 2 + kind);
            qsort(fw, n, sizeof *fw, cmp_flt);
            int same_d = 1, same_f = 1, same_t = 1;
            for (size_t i = 0; i < n; i++)
                if (n < RADIX_MIN) {
                    same_d &= d[i] == dw[i];
                    same_f &= f[i] == fw[i];
                    same_t &= ft[i] == fw[i];
                }
            if (n >= RADIX_MIN) {
                same_d = !memcmp(d, dw, n * sizeof *d);
                same_f = !memcmp(f, fw, n * sizeof *f);
                same_t = !memcmp(ft, fw, n * sizeof *f);
            }
            CHECK_MSG(same_d, "doubles, kind %d, n %zu", kind, n);
            CHECK_MSG(same_f, "floats, kind %d, n %zu", kind, n);
            CHECK_MSG(same_t, "floats on threads, kind %d, n %zu", kind, n);
            CHECK(a.p99 == b.p99 || (isnan(a.p99) && isnan(b.p99)));
            free(d);
            free(dw);
            free(f);
            free(fw);
            free(ft);
        }
}

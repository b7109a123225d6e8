/* stats: percentiles against values from numpy's documented linear method,
 * computed by hand for the edge cases (n=1, n=2, ties). */
#include "analysis/stats.h"
#include "test.h"

#include <math.h>

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

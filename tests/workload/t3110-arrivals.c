/* arrivals: same seed same schedule; poisson mean within 3% of 1/rate and
 * CV within 5% of 1 over 10,000 draws; gamma honours its CV; constant and
 * inf are exact; --duration stops at the horizon. */
#include "workload/arrivals.h"
#include "test.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

static void gap_stats(const int64_t *due, size_t n, double *mean, double *cv) {
    double s = 0, ss = 0;
    for (size_t i = 1; i < n; i++)
        s += (double)(due[i] - due[i - 1]);
    *mean = s / (double)(n - 1);
    for (size_t i = 1; i < n; i++) {
        double d = (double)(due[i] - due[i - 1]) - *mean;
        ss += d * d;
    }
    *cv = sqrt(ss / (double)(n - 1)) / *mean;
}

TEST(arrivals_same_seed_same_schedule) {
    arrival_spec a = {ARRIVAL_POISSON, 10, 1};
    int64_t *x, *y, *z;
    size_t n1 = arrivals_generate(&a, 5, 1000, INT64_MAX, &x);
    size_t n2 = arrivals_generate(&a, 5, 1000, INT64_MAX, &y);
    CHECK_INT(arrivals_generate(&a, 6, 1000, INT64_MAX, &z), 1000);
    CHECK_INT(n1, 1000);
    CHECK_INT(n2, 1000);
    CHECK(memcmp(x, y, 1000 * sizeof *x) == 0);
    CHECK(memcmp(x, z, 1000 * sizeof *x) != 0);
    CHECK_INT(x[0], 0);
    free(x);
    free(y);
    free(z);
}

TEST(arrivals_poisson_mean_and_cv) {
    arrival_spec a = {ARRIVAL_POISSON, 200, 1};
    for (uint64_t seed = 0; seed < 3; seed++) {
        int64_t *d;
        size_t n = arrivals_generate(&a, seed, 10001, INT64_MAX, &d);
        double mean, cv;
        gap_stats(d, n, &mean, &cv);
        CHECK_MSG(fabs(mean / 5000.0 - 1) < 0.03, "seed %llu mean gap %.1f us",
                  (unsigned long long)seed, mean);
        CHECK_MSG(fabs(cv - 1) < 0.05, "seed %llu cv %.3f", (unsigned long long)seed, cv);
        free(d);
    }
}

TEST(arrivals_gamma_honours_cv) {
    double cvs[] = {0.5, 2.0, 4.0};
    for (int i = 0; i < 3; i++) {
        arrival_spec a = {ARRIVAL_GAMMA, 50, cvs[i]};
        int64_t *d;
        size_t n = arrivals_generate(&a, 11, 20001, INT64_MAX, &d);
        double mean, cv;
        gap_stats(d, n, &mean, &cv);
        CHECK_MSG(fabs(mean / 20000.0 - 1) < 0.05, "cv %.1f: mean gap %.1f", cvs[i], mean);
        CHECK_MSG(fabs(cv / cvs[i] - 1) < 0.08, "asked cv %.2f got %.3f", cvs[i], cv);
        free(d);
    }
}

TEST(arrivals_constant_inf_and_duration) {
    arrival_spec c = {ARRIVAL_CONSTANT, 4, 1};
    int64_t *d;
    size_t n = arrivals_generate(&c, 0, 100, 2000000, &d); /* 2 s horizon */
    CHECK_INT(n, 9);                                       /* 0, 0.25, ..., 2.0 s */
    CHECK_INT(d[8], 2000000);
    free(d);
    arrival_spec inf = {ARRIVAL_POISSON, INFINITY, 1};
    n = arrivals_generate(&inf, 0, 50, INT64_MAX, &d);
    CHECK_INT(n, 50);
    CHECK_INT(d[49], 0);
    free(d);
}

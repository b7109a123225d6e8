/* arrivals: seeded inter-arrival draws accumulated into absolute due times.
 * The sum is kept in double seconds and each due time rounded once, so
 * rounding never accumulates. */
#include "workload/arrivals.h"
#include "common/util.h"

#include <math.h>
#include <string.h>

int arrival_kind_parse(const char *s, arrival_kind *out) {
    if (!strcmp(s, "poisson"))
        *out = ARRIVAL_POISSON;
    else if (!strcmp(s, "gamma"))
        *out = ARRIVAL_GAMMA;
    else if (!strcmp(s, "constant"))
        *out = ARRIVAL_CONSTANT;
    else
        return -1;
    return 0;
}

const char *arrival_kind_name(arrival_kind k) {
    return k == ARRIVAL_GAMMA ? "gamma" : k == ARRIVAL_CONSTANT ? "constant" : "poisson";
}

static double next_gap(const arrival_spec *a, rng *r) {
    double mean = 1.0 / a->rate;
    switch (a->kind) {
    case ARRIVAL_CONSTANT: return mean;
    case ARRIVAL_GAMMA: {
        double cv = a->burstiness > 0 ? a->burstiness : 1.0;
        double shape = 1.0 / (cv * cv);
        return rng_gamma(r, shape, mean / shape);
    }
    default: return rng_exponential(r, mean);
    }
}

size_t arrivals_generate(const arrival_spec *a, uint64_t seed, size_t max_n, int64_t max_us,
                         int64_t **out) {
    size_t cap = max_n < 1024 ? (max_n ? max_n : 1) : 1024, n = 0;
    int64_t *due = xmalloc(cap * sizeof *due);
    rng r;
    rng_seed(&r, seed ^ 0xa441a1ULL);
    int all_at_once = isinf(a->rate) || a->rate <= 0;
    double t = 0;
    while (n < max_n && t <= ARRIVALS_MAX_S) {
        int64_t us = all_at_once ? 0 : llround(t * 1e6);
        if (us > max_us)
            break;
        if (n == cap)
            due = xrealloc(due, (cap *= 2) * sizeof *due);
        due[n++] = us;
        if (!all_at_once)
            t += next_gap(a, &r);
    }
    *out = due;
    return n;
}

/* arrivals: seeded inter-arrival draws accumulated into absolute due times.
 * The sum is kept in double seconds (or, for a rate plan, in expected
 * arrivals) and each due time rounded once, so rounding never accumulates. */
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

size_t arrivals_generate_plan(const arrival_spec *a, const rate_plan *p, uint64_t seed,
                              size_t max_n, int64_t **out) {
    size_t cap = 1024, n = 0;
    int64_t *due = xmalloc(cap * sizeof *due);
    rng r;
    rng_seed(&r, seed ^ 0xa441a1ULL); /* arrivals_generate's stream: one stage draws its schedule */
    arrival_spec unit = *a;
    unit.rate = 1;
    double s = 0, before = 0; /* the next arrival's expected count; the stages' before stage i */
    int i = 0;
    while (n < max_n) {
        while (i < p->n && s >= before + rate_stage_expected(&p->stage[i]))
            before += rate_stage_expected(&p->stage[i++]);
        if (i == p->n)
            break;
        const rate_stage *st = &p->stage[i];
        if (n == cap)
            due = xrealloc(due, (cap *= 2) * sizeof *due);
        due[n++] = llround((st->start_s + rate_stage_time_at(st, s - before)) * 1e6);
        s += next_gap(&unit, &r);
    }
    *out = due;
    return n;
}

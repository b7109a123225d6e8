/* rng: a small seeded generator (xoshiro256**) and the draws servelab needs:
 * uniform, exponential, normal and gamma. Everything seeded in servelab goes
 * through here so that a seed reproduces a schedule byte for byte on any
 * machine (no libc rand(), whose sequence differs between libcs). */
#ifndef SERVELAB_RNG_H
#define SERVELAB_RNG_H

#include <stdint.h>

typedef struct rng {
    uint64_t s[4];
} rng;

void rng_seed(rng *r, uint64_t seed);
uint64_t rng_next(rng *r);
/* Uniform in [0, 1). */
double rng_uniform(rng *r);
/* Uniform integer in [lo, hi] (inclusive). */
int64_t rng_range(rng *r, int64_t lo, int64_t hi);
/* Exponential with the given mean. */
double rng_exponential(rng *r, double mean);
/* Standard normal (Box-Muller). */
double rng_normal(rng *r);
/* Gamma(shape k, scale theta) by Marsaglia-Tsang. */
double rng_gamma(rng *r, double shape, double scale);

#endif

/* rng: xoshiro256** seeded through splitmix64, plus the distributions the
 * workload and the simulator draw from. Pure integer/IEEE arithmetic and
 * libm's log/sqrt/cos, so results are identical across glibc versions. */
#include "common/rng.h"
#include "common/util.h"

#include <math.h>

static uint64_t rotl(uint64_t x, int k) {
    return (x << k) | (x >> (64 - k));
}

void rng_seed(rng *r, uint64_t seed) {
    uint64_t x = seed;
    for (int i = 0; i < 4; i++) {
        x += 0x9e3779b97f4a7c15ULL;
        r->s[i] = mix64(x);
    }
}

uint64_t rng_next(rng *r) {
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double rng_uniform(rng *r) {
    return (double)(rng_next(r) >> 11) * 0x1.0p-53;
}

int64_t rng_range(rng *r, int64_t lo, int64_t hi) {
    if (hi <= lo)
        return lo;
    uint64_t span = (uint64_t)(hi - lo) + 1;
    return lo + (int64_t)(rng_next(r) % span);
}

double rng_exponential(rng *r, double mean) {
    double u = rng_uniform(r);
    return -mean * log1p(-u);
}

double rng_normal(rng *r) {
    double u1 = rng_uniform(r), u2 = rng_uniform(r);
    if (u1 < 1e-300)
        u1 = 1e-300;
    return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

double rng_gamma(rng *r, double shape, double scale) {
    if (shape < 1.0) {
        /* Boost: Gamma(k) = Gamma(k+1) * U^(1/k). */
        double u = rng_uniform(r);
        if (u < 1e-300)
            u = 1e-300;
        return rng_gamma(r, shape + 1.0, scale) * pow(u, 1.0 / shape);
    }
    double d = shape - 1.0 / 3.0, c = 1.0 / sqrt(9.0 * d);
    for (;;) {
        double x = rng_normal(r), v = 1.0 + c * x;
        if (v <= 0)
            continue;
        v = v * v * v;
        double u = rng_uniform(r);
        if (u < 1 - 0.0331 * x * x * x * x)
            return d * v * scale;
        if (log(u) < 0.5 * x * x + d * (1 - v + log(v)))
            return d * v * scale;
    }
}

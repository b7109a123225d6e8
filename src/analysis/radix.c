/* radix: LSD radix sorts of doubles and floats by their bits. */
#include "analysis/radix.h"
#include "common/util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define BITS 11
#define BUCKETS (1u << BITS)

/* A value's bits made to sort as unsigned integers in the value's order:
 * negatives flipped whole, positives with the sign bit set. */
static inline uint64_t key64(uint64_t u) {
    return u & 0x8000000000000000ULL ? ~u : u | 0x8000000000000000ULL;
}
static inline uint64_t unkey64(uint64_t k) {
    return k & 0x8000000000000000ULL ? k & ~0x8000000000000000ULL : ~k;
}
static inline uint32_t key32(uint32_t u) {
    return u & 0x80000000u ? ~u : u | 0x80000000u;
}
static inline uint32_t unkey32(uint32_t k) {
    return k & 0x80000000u ? k & ~0x80000000u : ~k;
}

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int cmp_f(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

void radix_sort_doubles(double *x, size_t n) {
    if (n < RADIX_MIN) {
        qsort(x, n, sizeof *x, cmp_d);
        return;
    }
    uint64_t *a = (uint64_t *)(void *)x, *b = xmalloc(n * sizeof *b), *src = a, *dst = b;
    for (size_t i = 0; i < n; i++) {
        uint64_t u;
        memcpy(&u, &x[i], sizeof u);
        a[i] = key64(u);
    }
    static const int passes = (64 + BITS - 1) / BITS;
    for (int p = 0; p < passes; p++) {
        int shift = p * BITS;
        size_t count[BUCKETS] = {0};
        for (size_t i = 0; i < n; i++)
            count[(src[i] >> shift) & (BUCKETS - 1)]++;
        if (count[(src[0] >> shift) & (BUCKETS - 1)] == n)
            continue; /* every value has this digit */
        size_t at = 0;
        for (unsigned d = 0; d < BUCKETS; d++) {
            size_t c = count[d];
            count[d] = at;
            at += c;
        }
        for (size_t i = 0; i < n; i++)
            dst[count[(src[i] >> shift) & (BUCKETS - 1)]++] = src[i];
        uint64_t *t = src;
        src = dst;
        dst = t;
    }
    for (size_t i = 0; i < n; i++) {
        uint64_t u = unkey64(src[i]);
        memcpy(&x[i], &u, sizeof u);
    }
    free(b);
}

void radix_sort_floats(float *x, size_t n) {
    if (n < RADIX_MIN) {
        qsort(x, n, sizeof *x, cmp_f);
        return;
    }
    uint32_t *a = (uint32_t *)(void *)x, *b = xmalloc(n * sizeof *b), *src = a, *dst = b;
    for (size_t i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, &x[i], sizeof u);
        a[i] = key32(u);
    }
    static const int passes = (32 + BITS - 1) / BITS;
    for (int p = 0; p < passes; p++) {
        int shift = p * BITS;
        size_t count[BUCKETS] = {0};
        for (size_t i = 0; i < n; i++)
            count[(src[i] >> shift) & (BUCKETS - 1)]++;
        if (count[(src[0] >> shift) & (BUCKETS - 1)] == n)
            continue;
        size_t at = 0;
        for (unsigned d = 0; d < BUCKETS; d++) {
            size_t c = count[d];
            count[d] = at;
            at += c;
        }
        for (size_t i = 0; i < n; i++)
            dst[count[(src[i] >> shift) & (BUCKETS - 1)]++] = src[i];
        uint32_t *t = src;
        src = dst;
        dst = t;
    }
    for (size_t i = 0; i < n; i++) {
        uint32_t u = unkey32(src[i]);
        memcpy(&x[i], &u, sizeof u);
    }
    free(b);
}

/* radix: LSD radix sorts of doubles and floats by their bits (radix.h).
 * One read of the values turns them into keys and counts every pass's
 * digits at once; each pass is then a single scatter, and the last one
 * turns the keys back into values as it writes: two reads of the array
 * fewer than counting before each pass and converting after the last. */
#include "analysis/radix.h"
#include "common/jobs.h"
#include "common/util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define BITS 11
#define BUCKETS (1u << BITS)
#define MASK (BUCKETS - 1)
#define PASSES64 ((64 + BITS - 1) / BITS)
#define PASSES32 ((32 + BITS - 1) / BITS)
/* The histograms count in 32 bits, this many values at a time. */
#define BLOCK (1u << 30)

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

/* ---- 64 bits ---- */

/* a's values made keys, and each pass's digit counts into count. */
static void keys_and_counts64(uint64_t *a, size_t n, size_t (*count)[BUCKETS]) {
    uint32_t(*h)[BUCKETS] = xmalloc(PASSES64 * sizeof *h);
    memset(count, 0, PASSES64 * sizeof *count);
    for (size_t s = 0; s < n; s += BLOCK) {
        size_t e = n - s < BLOCK ? n : s + BLOCK;
        memset(h, 0, PASSES64 * sizeof *h);
        for (size_t i = s; i < e; i++) {
            uint64_t k = key64(a[i]);
            a[i] = k;
            for (int p = 0; p < PASSES64; p++)
                h[p][(k >> (p * BITS)) & MASK]++;
        }
        for (int p = 0; p < PASSES64; p++)
            for (unsigned d = 0; d < BUCKETS; d++)
                count[p][d] += h[p][d];
    }
    free(h);
}

/* One pass: src's keys into dst by their digit at shift, values again
 * when `values`. */
static void scatter64(const uint64_t *src, uint64_t *dst, size_t n, int shift, const size_t *count,
                      int values) {
    size_t at[BUCKETS], sum = 0;
    for (unsigned d = 0; d < BUCKETS; d++) {
        at[d] = sum;
        sum += count[d];
    }
    if (values)
        for (size_t i = 0; i < n; i++)
            dst[at[(src[i] >> shift) & MASK]++] = unkey64(src[i]);
    else
        for (size_t i = 0; i < n; i++)
            dst[at[(src[i] >> shift) & MASK]++] = src[i];
}

/* The n values' bits at a sorted, tmp as scratch. */
static void sort64(uint64_t *a, uint64_t *tmp, size_t n) {
    size_t(*count)[BUCKETS] = xmalloc(PASSES64 * sizeof *count);
    keys_and_counts64(a, n, count);
    int pass[PASSES64], k = 0;
    for (int p = 0; p < PASSES64; p++)
        if (count[p][(a[0] >> (p * BITS)) & MASK] != n) /* not every value's digit */
            pass[k++] = p;
    uint64_t *src = a, *dst = tmp;
    for (int j = 0; j < k; j++) {
        scatter64(src, dst, n, pass[j] * BITS, count[pass[j]], j == k - 1);
        uint64_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != a)
        memcpy(a, src, n * sizeof *a);
    else if (k == 0) /* all one value */
        for (size_t i = 0; i < n; i++)
            a[i] = unkey64(a[i]);
    free(count);
}

void radix_sort_doubles_with(double *x, size_t n, void *scratch) {
    if (n < RADIX_MIN)
        qsort(x, n, sizeof *x, cmp_d);
    else
        sort64((uint64_t *)(void *)x, scratch, n);
}

void radix_sort_doubles(double *x, size_t n) {
    void *tmp = n < RADIX_MIN ? NULL : xmalloc(n * sizeof *x);
    radix_sort_doubles_with(x, n, tmp);
    free(tmp);
}

/* ---- 32 bits ---- */

static void keys_and_counts32(uint32_t *a, size_t n, size_t (*count)[BUCKETS]) {
    uint32_t(*h)[BUCKETS] = xmalloc(PASSES32 * sizeof *h);
    memset(count, 0, PASSES32 * sizeof *count);
    for (size_t s = 0; s < n; s += BLOCK) {
        size_t e = n - s < BLOCK ? n : s + BLOCK;
        memset(h, 0, PASSES32 * sizeof *h);
        for (size_t i = s; i < e; i++) {
            uint32_t k = key32(a[i]);
            a[i] = k;
            for (int p = 0; p < PASSES32; p++)
                h[p][(k >> (p * BITS)) & MASK]++;
        }
        for (int p = 0; p < PASSES32; p++)
            for (unsigned d = 0; d < BUCKETS; d++)
                count[p][d] += h[p][d];
    }
    free(h);
}

static void scatter32(const uint32_t *src, uint32_t *dst, size_t n, int shift, const size_t *count,
                      int values) {
    size_t at[BUCKETS], sum = 0;
    for (unsigned d = 0; d < BUCKETS; d++) {
        at[d] = sum;
        sum += count[d];
    }
    if (values)
        for (size_t i = 0; i < n; i++)
            dst[at[(src[i] >> shift) & MASK]++] = unkey32(src[i]);
    else
        for (size_t i = 0; i < n; i++)
            dst[at[(src[i] >> shift) & MASK]++] = src[i];
}

/* The n values' bits at a sorted, as keys (`keys`) or values; tmp as scratch. */
static void sort32(uint32_t *a, uint32_t *tmp, size_t n, int keys) {
    size_t(*count)[BUCKETS] = xmalloc(PASSES32 * sizeof *count);
    keys_and_counts32(a, n, count);
    int pass[PASSES32], k = 0;
    for (int p = 0; p < PASSES32; p++)
        if (count[p][(a[0] >> (p * BITS)) & MASK] != n)
            pass[k++] = p;
    uint32_t *src = a, *dst = tmp;
    for (int j = 0; j < k; j++) {
        scatter32(src, dst, n, pass[j] * BITS, count[pass[j]], !keys && j == k - 1);
        uint32_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != a)
        memcpy(a, src, n * sizeof *a);
    else if (k == 0 && !keys)
        for (size_t i = 0; i < n; i++)
            a[i] = unkey32(a[i]);
    free(count);
}

void radix_sort_floats_with(float *x, size_t n, void *scratch) {
    if (n < RADIX_MIN)
        qsort(x, n, sizeof *x, cmp_f);
    else
        sort32((uint32_t *)(void *)x, scratch, n, 0);
}

void radix_sort_floats(float *x, size_t n) {
    void *tmp = n < RADIX_MIN ? NULL : xmalloc(n * sizeof *x);
    radix_sort_floats_with(x, n, tmp);
    free(tmp);
}

/* ---- 32 bits on several threads: parts sorted, then merged ---- */

typedef struct part32 {
    uint32_t *a, *tmp;
    size_t n;
} part32;

static void *sort_part32(void *arg) {
    part32 *p = arg;
    sort32(p->a, p->tmp, p->n, 1);
    return NULL;
}

/* out[lo, hi) of the merge of sorted keys x[0, nx) and y[0, ny), as
 * values when `values`. */
typedef struct merge32 {
    const uint32_t *x, *y;
    size_t nx, ny;
    uint32_t *out;
    size_t lo, hi;
    int values;
} merge32;

/* How many of the merge's first k keys come from x (x's first on a tie). */
static size_t from_x(size_t k, const uint32_t *x, size_t nx, const uint32_t *y, size_t ny) {
    size_t lo = k > ny ? k - ny : 0, hi = k < nx ? k : nx;
    while (lo < hi) {
        size_t i = lo + (hi - lo) / 2;
        if (y[k - i - 1] >= x[i])
            lo = i + 1;
        else
            hi = i;
    }
    return lo;
}

static void *merge_part32(void *arg) {
    merge32 *m = arg;
    size_t i = from_x(m->lo, m->x, m->nx, m->y, m->ny), j = m->lo - i;
    for (size_t o = m->lo; o < m->hi; o++) {
        uint32_t v = j >= m->ny || (i < m->nx && m->x[i] <= m->y[j]) ? m->x[i++] : m->y[j++];
        m->out[o] = m->values ? unkey32(v) : v;
    }
    return NULL;
}

void radix_sort_floats_threads(float *x, size_t n, int threads) {
    int t = 1;
    while (t * 2 <= threads && t * 2 <= RADIX_MAX_THREADS)
        t *= 2;
    if (t < 2 || n < RADIX_THREADS_MIN) {
        radix_sort_floats(x, n);
        return;
    }
    uint32_t *a = (uint32_t *)(void *)x, *b = xmalloc(n * sizeof *b);
    size_t bound[RADIX_MAX_THREADS + 1];
    part32 parts[RADIX_MAX_THREADS];
    for (int i = 0; i <= t; i++)
        bound[i] = n / (size_t)t * (size_t)i + n % (size_t)t * (size_t)i / (size_t)t;
    for (int i = 0; i < t; i++)
        parts[i] = (part32){a + bound[i], b + bound[i], bound[i + 1] - bound[i]};
    jobs_run(sort_part32, parts, sizeof *parts, t);
    uint32_t *src = a, *dst = b;
    for (int runs = t; runs > 1; runs /= 2) { /* pairs of runs merged, t jobs a round */
        merge32 m[RADIX_MAX_THREADS];
        int jobs = 0, per = t / (runs / 2);
        for (int r = 0; r < runs; r += 2) {
            size_t nx = bound[r + 1] - bound[r], ny = bound[r + 2] - bound[r + 1];
            for (int q = 0; q < per; q++)
                m[jobs++] = (merge32){src + bound[r],
                                      src + bound[r + 1],
                                      nx,
                                      ny,
                                      dst + bound[r],
                                      (nx + ny) * (size_t)q / (size_t)per,
                                      (nx + ny) * (size_t)(q + 1) / (size_t)per,
                                      runs == 2};
        }
        jobs_run(merge_part32, m, sizeof *m, jobs);
        for (int i = 0; i <= runs / 2; i++)
            bound[i] = bound[2 * i];
        uint32_t *s = src;
        src = dst;
        dst = s;
    }
    if (src != a)
        memcpy(a, src, n * sizeof *a);
    free(b);
}

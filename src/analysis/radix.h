/* radix: sorting latencies in time linear in their count. A report of a
 * million requests and eight million chunks spent two thirds of its time in
 * qsort's comparison calls (measured with perf: msort, cmp_double,
 * cmp_float); an LSD radix sort of the values' bits, 11 bits a pass, passes
 * whose digit every value shares skipped, does the same work in a few reads
 * of the array. The order is qsort's for every value that is not NaN or a
 * signed zero (-0 sorts before +0, NaNs last), so every percentile is the
 * same. It needs a scratch array as large as the input, taken and given
 * back inside the call; below RADIX_MIN values it falls back to qsort.
 * radix_sort_floats_threads sorts parts of the array on threads of their
 * own and merges them, also on all of them (the inter-token gaps of a
 * large merge, 112 million at 16 x 1M, are one array sorted while nothing
 * else runs): the same result, with the same scratch. */
#ifndef SERVELAB_RADIX_H
#define SERVELAB_RADIX_H

#include <stddef.h>

#define RADIX_MIN 256
/* Below this many values, or with fewer than 2 threads, one thread sorts;
 * the threads used are a power of two, at most RADIX_MAX_THREADS. */
#define RADIX_THREADS_MIN 1000000
#define RADIX_MAX_THREADS 8

void radix_sort_doubles(double *x, size_t n);
void radix_sort_floats(float *x, size_t n);
void radix_sort_floats_threads(float *x, size_t n, int threads);
/* The same sorts with the caller's scratch, room for n values (unused
 * below RADIX_MIN): a caller sorting array after array reuses one, and
 * the kernel zeroes no fresh pages for each. */
void radix_sort_doubles_with(double *x, size_t n, void *scratch);
void radix_sort_floats_with(float *x, size_t n, void *scratch);

#endif

/* fit_util: the small statistics the fit's files share (fit_internal.h). */
#include "fit/fit_internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

int fit_cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double fit_quantile(double *v, size_t n, double q) {
    if (n == 0)
        return NAN;
    qsort(v, n, sizeof *v, fit_cmp_d);
    double pos = q * (double)(n - 1);
    size_t i = (size_t)pos;
    double f = pos - (double)i;
    return i + 1 < n ? v[i] * (1 - f) + v[i + 1] * f : v[i];
}

int fit_by_a(const void *x, const void *y) {
    const span *p = x, *q = y;
    return (p->a > q->a) - (p->a < q->a);
}

size_t fit_count_below(const double *v, size_t n, double x, int le) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (v[mid] < x || (le && v[mid] == x))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

void fit_prov(json_t *p, const char *key, const char *fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    json_object_set_new(p, key, json_string(buf));
}

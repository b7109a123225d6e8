/* merge_text: how a merge writes a row: its moved times as printf's
 * "%.3f" would write them (by integer arithmetic, at a fraction of
 * printf's cost, for the hundreds of millions of times a large merge
 * writes one), and the other fields copied as they were. See
 * merge_text.h. */
#include "sweep/merge_text.h"
#include "common/util.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* "00" to "99". */
static const char digit_pairs[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

/* Whole thousandths by integer arithmetic where x*1000 rounds without
 * doubt (it is not within a few ulps of a half, nor a negative zero), else
 * printf itself: the same text either way, at a fraction of printf's cost
 * for the millions of times a merge writes. */
size_t merge_put_ms_known(char *dst, double x, long long *ms) {
    double m = x * 1000.0; /* within half an ulp of the true product */
    *ms = LLONG_MIN;
    if (!(fabs(m) < 1e15))
        return (size_t)snprintf(dst, MERGE_MS_ROOM, "%.3f", x);
    double r = nearbyint(m), tol = fabs(m) * 1e-15 + 1e-9; /* a few ulps of m */
    if (fabs(fabs(m - r) - 0.5) < tol || (r == 0 && signbit(x)))
        return (size_t)snprintf(dst, MERGE_MS_ROOM, "%.3f", x);
    long long q = *ms = (long long)r;
    char tmp[32], *p = tmp + sizeof tmp;
    int neg = q < 0;
    unsigned long long u = neg ? 0ULL - (unsigned long long)q : (unsigned long long)q;
    unsigned f = (unsigned)(u % 1000);
    u /= 1000;
    p -= 4;
    p[0] = '.';
    p[1] = (char)('0' + f / 100);
    memcpy(p + 2, digit_pairs + 2 * (f % 100), 2);
    while (u >= 100) { /* the whole part two digits at a time */
        p -= 2;
        memcpy(p, digit_pairs + 2 * (u % 100), 2);
        u /= 100;
    }
    if (u >= 10) {
        p -= 2;
        memcpy(p, digit_pairs + 2 * u, 2);
    } else {
        *--p = (char)('0' + u);
    }
    if (neg)
        *--p = '-';
    size_t n = (size_t)(tmp + sizeof tmp - p);
    merge_copy_small(dst, p, n);
    return n;
}

size_t merge_put_ms(char *dst, double x) {
    long long ms;
    return merge_put_ms_known(dst, x, &ms);
}

int merge_moves(const int *is_time, const csv_row *r, int i, double shift, double *v) {
    return is_time[i] && shift != 0 && r->len[i] && csv_number(r, i, v) == 0 && isfinite(*v);
}

size_t merge_row_text(char **line, size_t *cap, const csv_row *r, const int *is_time,
                      double shift_ms, csv_row *as_read) {
    size_t need = 2; /* the LF and a NUL */
    for (int i = 0; i < r->n && i < CSV_MAX_FIELDS; i++)
        need += 1 + (is_time[i] ? MERGE_MS_ROOM : 0) + csv_field_bytes(r->f[i], r->len[i]);
    if (need > *cap)
        *line = xrealloc(*line, *cap = need * 2);
    char *p = *line;
    int n = r->n < CSV_MAX_FIELDS ? r->n : CSV_MAX_FIELDS;
    for (int i = 0; i < n; i++) {
        if (i)
            *p++ = ',';
        double v;
        const char *at = p;
        if (merge_moves(is_time, r, i, shift_ms, &v)) {
            p += merge_put_ms(p, v + shift_ms);
            if (as_read) {
                as_read->f[i] = at;
                as_read->len[i] = (size_t)(p - at);
            }
        } else {
            p = csv_put_field(p, r->f[i], r->len[i]);
            if (as_read) { /* a field reads back as it was, quoted or not */
                as_read->f[i] = r->f[i];
                as_read->len[i] = r->len[i];
            }
        }
    }
    if (as_read) {
        as_read->n = n;
        as_read->error = NULL;
        as_read->known = 0;
    }
    *p++ = '\n';
    *p = 0;
    return (size_t)(p - *line);
}

void merge_time_columns(const csv_row *h, const char *const *times, int *is_time) {
    memset(is_time, 0, CSV_MAX_FIELDS * sizeof *is_time);
    for (int i = 0; i < h->n && i < CSV_MAX_FIELDS; i++)
        for (int t = 0; times[t]; t++)
            is_time[i] |= h->len[i] == strlen(times[t]) && !memcmp(h->f[i], times[t], h->len[i]);
}

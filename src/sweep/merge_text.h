/* merge_text: one row as a merge writes it: its time columns moved by the
 * shard's shift and written as printf's "%.3f" writes them, every other
 * field as it was read. */
#ifndef SERVELAB_MERGE_TEXT_H
#define SERVELAB_MERGE_TEXT_H

#include "common/csv.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* x as printf's "%.3f" writes it, at dst (room for MERGE_MS_ROOM bytes:
 * the largest double has 309 digits), no NUL; the bytes written. How a
 * moved time is written, millions of times a merge, at a fraction of
 * printf's cost. */
#define MERGE_MS_ROOM 320
size_t merge_put_ms(char *dst, double x);
/* The same, with the thousandths written in *ms (csv_thousandths(*ms) is
 * then the value the text reads as), or LLONG_MIN where printf wrote them
 * (a half-way case, a negative zero, a value past 10^12). */
size_t merge_put_ms_known(char *dst, double x, long long *ms);
/* Field i of r is a time that moves (a number in a time column, shift
 * not 0): 1 with its value in *v. The one rule every writer of a row
 * follows. */
int merge_moves(const int *is_time, const csv_row *r, int i, double shift, double *v);

/* Row r as CSV with its LF (and a NUL after it) into *line, of *cap bytes
 * (grown as needed), the time columns (is_time[i]) moved by shift_ms: the
 * one way a merge writes a row. Its length, the NUL not counted. With
 * as_read, that row as a reader of the written line would see it (its
 * fields in *line or in r: valid while both are). */
size_t merge_row_text(char **line, size_t *cap, const csv_row *r, const int *is_time,
                      double shift_ms, csv_row *as_read);
/* is_time[i] (CSV_MAX_FIELDS of them) set for the fields of header h named
 * in times (NULL-ended). */
void merge_time_columns(const csv_row *h, const char *const *times, int *is_time);

/* n bytes from s to d, for the few bytes between a row's times: two
 * overlapping moves of 8 or 4 bytes instead of a call (a merge of 16 x 1M
 * makes 400 million such copies; as calls they were about 5% of its CPU). */
static inline void merge_copy_small(char *d, const char *s, size_t n) {
    if (n > 16) {
        memcpy(d, s, n);
    } else if (n >= 8) {
        uint64_t a, b;
        memcpy(&a, s, 8);
        memcpy(&b, s + n - 8, 8);
        memcpy(d, &a, 8);
        memcpy(d + n - 8, &b, 8);
    } else if (n >= 4) {
        uint32_t a, b;
        memcpy(&a, s, 4);
        memcpy(&b, s + n - 4, 4);
        memcpy(d, &a, 4);
        memcpy(d + n - 4, &b, 4);
    } else {
        for (size_t i = 0; i < n; i++)
            d[i] = s[i];
    }
}

#endif

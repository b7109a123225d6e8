/* metric_memo: the last value written of each series of /metrics (a
 * series is a name with its labels), so that server_metrics.csv holds a
 * series' sample only when its value changed since the last one written
 * for it (client/sampler.h states the whole rule). A hash table of the
 * series seen, keyed by their text as written. */
#ifndef SERVELAB_METRIC_MEMO_H
#define SERVELAB_METRIC_MEMO_H

#include <stddef.h>

typedef struct metric_memo_entry metric_memo_entry;

typedef struct metric_memo {
    metric_memo_entry *slots;
    size_t cap, n;
} metric_memo;

/* Whether the series `key` (n bytes) now has `value` for the first time
 * or a value other than the last one recorded (NaN equals NaN, and the
 * sign of a zero counts); either way `value` is recorded. */
int metric_memo_changed(metric_memo *m, const char *key, size_t n, double value);
void metric_memo_free(metric_memo *m);

#endif

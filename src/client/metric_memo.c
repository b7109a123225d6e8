/* metric_memo: the last value written of each series (see metric_memo.h).
 * Open addressing with linear probing, grown at half full; values are
 * compared as bytes, so that NaN equals NaN and every change of the
 * number's text shows. */
#include "client/metric_memo.h"
#include "common/util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct metric_memo_entry {
    char *key; /* NULL: an empty slot */
    size_t n;
    uint64_t hash;
    double value;
};

static metric_memo_entry *slot_of(metric_memo_entry *slots, size_t cap, const char *key, size_t n,
                                  uint64_t h) {
    for (size_t i = h & (cap - 1);; i = (i + 1) & (cap - 1)) {
        metric_memo_entry *e = &slots[i];
        if (!e->key || (e->hash == h && e->n == n && !memcmp(e->key, key, n)))
            return e;
    }
}

static void grow(metric_memo *m) {
    size_t cap = m->cap ? 2 * m->cap : 256;
    metric_memo_entry *slots = xcalloc(cap, sizeof *slots);
    for (size_t i = 0; i < m->cap; i++)
        if (m->slots[i].key)
            *slot_of(slots, cap, m->slots[i].key, m->slots[i].n, m->slots[i].hash) = m->slots[i];
    free(m->slots);
    m->slots = slots;
    m->cap = cap;
}

int metric_memo_changed(metric_memo *m, const char *key, size_t n, double value) {
    if (2 * (m->n + 1) > m->cap)
        grow(m);
    uint64_t h = hash_bytes(key, n, 0);
    metric_memo_entry *e = slot_of(m->slots, m->cap, key, n, h);
    if (e->key) {
        int changed = memcmp(&e->value, &value, sizeof value) != 0;
        e->value = value;
        return changed;
    }
    e->key = xmalloc(n ? n : 1);
    memcpy(e->key, key, n);
    e->n = n;
    e->hash = h;
    e->value = value;
    m->n++;
    return 1;
}

void metric_memo_free(metric_memo *m) {
    for (size_t i = 0; i < m->cap; i++)
        free(m->slots[i].key);
    free(m->slots);
    memset(m, 0, sizeof *m);
}

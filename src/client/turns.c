/* turns: a binary min-heap of (due, index) (see turns.h). Conversations
 * in flight at once are few (thousands at most), so a heap's log n is
 * nothing next to a request's cost. */
#include "client/turns.h"
#include "common/util.h"

#include <stdlib.h>

static void swap(turn_heap *h, size_t a, size_t b) {
    int64_t d = h->due[a];
    uint32_t i = h->index[a];
    h->due[a] = h->due[b];
    h->index[a] = h->index[b];
    h->due[b] = d;
    h->index[b] = i;
}

void turns_push(turn_heap *h, int64_t due_us, uint32_t index) {
    if (h->n == h->cap) {
        h->cap = h->cap ? 2 * h->cap : 64;
        h->due = xrealloc(h->due, h->cap * sizeof *h->due);
        h->index = xrealloc(h->index, h->cap * sizeof *h->index);
    }
    size_t at = h->n++;
    h->due[at] = due_us;
    h->index[at] = index;
    while (at > 0 && h->due[(at - 1) / 2] > h->due[at]) {
        swap(h, at, (at - 1) / 2);
        at = (at - 1) / 2;
    }
}

int64_t turns_next_due(const turn_heap *h) {
    return h->n ? h->due[0] : INT64_MAX;
}

uint32_t turns_pop(turn_heap *h, int64_t *due_us) {
    uint32_t top = h->index[0];
    *due_us = h->due[0];
    h->n--;
    if (h->n) {
        h->due[0] = h->due[h->n];
        h->index[0] = h->index[h->n];
    }
    for (size_t at = 0;;) {
        size_t l = 2 * at + 1, r = l + 1, least = at;
        if (l < h->n && h->due[l] < h->due[least])
            least = l;
        if (r < h->n && h->due[r] < h->due[least])
            least = r;
        if (least == at)
            break;
        swap(h, at, least);
        at = least;
    }
    return top;
}

void turns_free(turn_heap *h) {
    free(h->due);
    free(h->index);
    h->due = NULL;
    h->index = NULL;
    h->n = h->cap = 0;
}

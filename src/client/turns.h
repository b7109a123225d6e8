/* turns: the later turns of multi-turn conversations waiting for their
 * time (workload/conversation.h): a min-heap by due time. A turn's time is
 * known only when the turn before it ends (its end plus the think time),
 * so these cannot be in the schedule computed up front; the loop takes
 * from the schedule and from here, whichever is due first. */
#ifndef SERVELAB_TURNS_H
#define SERVELAB_TURNS_H

#include <stddef.h>
#include <stdint.h>

typedef struct turn_heap {
    int64_t *due;
    uint32_t *index; /* request index */
    size_t n, cap;
} turn_heap;

void turns_push(turn_heap *h, int64_t due_us, uint32_t index);
/* The earliest due time; INT64_MAX when empty. */
int64_t turns_next_due(const turn_heap *h);
/* Removes the earliest; its request index and due time. h->n > 0. */
uint32_t turns_pop(turn_heap *h, int64_t *due_us);
void turns_free(turn_heap *h);

#endif

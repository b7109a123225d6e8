/* kv_cache: the block pool (see kv_cache.h). The free queue links blocks
 * through their prev/next indices (-1 ends it), as vLLM's
 * FreeKVCacheBlockQueue does, so taking a hit block out of the middle is
 * O(1). Names live in an open-address table with linear probing, at most
 * half full, and deletion shifts the following entries back (no
 * tombstones), so a lookup stops at the first empty slot. */
#include "sim/kv_cache.h"
#include "common/util.h"

#include <assert.h>
#include <stdlib.h>

typedef struct kv_block {
    uint64_t hash;
    int named; /* hash is its name, and the table points to it */
    int refs;  /* sequences holding it; 0: in the free queue */
    int prev, next;
} kv_block;

typedef struct slot {
    uint64_t hash;
    int block; /* -1: empty */
} slot;

struct kv_cache {
    kv_block *b;
    int n;
    int head, tail, n_free; /* the free queue */
    slot *table;
    size_t mask; /* table size - 1 (a power of two) */
    int n_named;
};

/* Invariants (asserted where they are cheap, as SQLite's rowset.c does): a
 * block is in the free queue exactly when nobody holds it (refs == 0);
 * 0 <= n_free <= n; head and tail are -1 together. A hold, take or drop
 * that would break them is a bug of the engine, not of its input. */
static void queue_remove(kv_cache *c, int i) {
    kv_block *k = &c->b[i];
    assert(c->n_free > 0 && (k->prev >= 0 || c->head == i)); /* it is in the queue */
    if (k->prev >= 0)
        c->b[k->prev].next = k->next;
    else
        c->head = k->next;
    if (k->next >= 0)
        c->b[k->next].prev = k->prev;
    else
        c->tail = k->prev;
    k->prev = k->next = -1;
    c->n_free--;
}

static void queue_append(kv_cache *c, int i) {
    kv_block *k = &c->b[i];
    k->next = -1;
    k->prev = c->tail;
    if (c->tail >= 0)
        c->b[c->tail].next = i;
    else
        c->head = i;
    c->tail = i;
    c->n_free++;
    assert(c->n_free <= c->n);
}

kv_cache *kv_cache_new(int blocks) {
    kv_cache *c = xcalloc(1, sizeof *c);
    c->n = blocks;
    c->b = xcalloc((size_t)blocks, sizeof *c->b);
    c->head = c->tail = -1;
    for (int i = 0; i < blocks; i++)
        queue_append(c, i);
    size_t size = 16;
    while (size < (size_t)blocks * 2)
        size *= 2;
    c->table = xmalloc(size * sizeof *c->table);
    for (size_t i = 0; i < size; i++)
        c->table[i].block = -1;
    c->mask = size - 1;
    return c;
}

void kv_cache_free(kv_cache *c) {
    if (!c)
        return;
    free(c->b);
    free(c->table);
    free(c);
}

int kv_cache_free_blocks(const kv_cache *c) {
    return c->n_free;
}

int kv_cache_named_blocks(const kv_cache *c) {
    return c->n_named;
}

/* The table slot of `hash`, or of the empty slot where it would go. */
static size_t slot_of(const kv_cache *c, uint64_t hash) {
    size_t i = mix64(hash) & c->mask;
    while (c->table[i].block >= 0 && c->table[i].hash != hash)
        i = (i + 1) & c->mask;
    return i;
}

int kv_cache_find(const kv_cache *c, uint64_t hash) {
    return c->table[slot_of(c, hash)].block;
}

/* Removes the name at slot i, moving back any entry that the gap would
 * otherwise hide from its lookup. */
static void table_delete(kv_cache *c, size_t i) {
    size_t gap = i;
    for (size_t j = (i + 1) & c->mask; c->table[j].block >= 0; j = (j + 1) & c->mask) {
        size_t home = mix64(c->table[j].hash) & c->mask;
        /* j's entry may fill the gap when its home is not in (gap, j] */
        int between = gap <= j ? (home > gap && home <= j) : (home > gap || home <= j);
        if (!between) {
            c->table[gap] = c->table[j];
            gap = j;
        }
    }
    c->table[gap].block = -1;
}

static void forget_name(kv_cache *c, int i) {
    kv_block *k = &c->b[i];
    if (!k->named)
        return;
    table_delete(c, slot_of(c, k->hash));
    k->named = 0;
    c->n_named--;
}

int kv_cache_is_free(const kv_cache *c, int block) {
    return c->b[block].refs == 0;
}

void kv_cache_hold(kv_cache *c, int block) {
    assert(block >= 0 && block < c->n);
    if (c->b[block].refs++ == 0)
        queue_remove(c, block);
}

int kv_cache_take(kv_cache *c) {
    int i = c->head;
    if (i < 0)
        return -1;
    queue_remove(c, i);
    forget_name(c, i);
    c->b[i].refs = 1;
    return i;
}

void kv_cache_drop(kv_cache *c, int block) {
    assert(block >= 0 && block < c->n && c->b[block].refs > 0); /* no drop of a free block */
    if (--c->b[block].refs == 0)
        queue_append(c, block);
}

void kv_cache_name(kv_cache *c, int block, uint64_t hash) {
    kv_block *k = &c->b[block];
    if (k->named)
        return;
    size_t s = slot_of(c, hash);
    if (c->table[s].block >= 0)
        return; /* another block computed the same prefix first */
    c->table[s] = (slot){hash, block};
    k->hash = hash;
    k->named = 1;
    c->n_named++;
}

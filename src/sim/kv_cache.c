/* kv_cache: the block pool (see kv_cache.h). The free queue links blocks
 * through their prev/next indices (-1 ends it), as vLLM's
 * FreeKVCacheBlockQueue does, so taking a hit block out of the middle is
 * O(1). Names live in an open-address table with linear probing, at most
 * half full, and deletion shifts the following entries back (no
 * tombstones), so a lookup stops at the first empty slot.
 *
 * Memory grows with the blocks used, not with the pool: a block never
 * taken is not made. vLLM's queue starts as every block in order, and a
 * block never taken is never named or held, so it only ever leaves from
 * the head: the untouched blocks are the queue's first ones, in index
 * order, and are made (b grown, the table grown with the names) when
 * taken. A pool of 2^31-1 blocks then costs what a run touches of it. */
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
    int made, cap;          /* blocks made (0..made-1, never taken: made..n-1), b's room */
    int head, tail, n_free; /* the free queue of made blocks */
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
    assert(c->n_free <= c->made);
}

kv_cache *kv_cache_new(int blocks) {
    kv_cache *c = xcalloc(1, sizeof *c);
    c->n = blocks;
    c->head = c->tail = -1;
    c->mask = 15;
    c->table = xmalloc((c->mask + 1) * sizeof *c->table);
    for (size_t i = 0; i <= c->mask; i++)
        c->table[i].block = -1;
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
    return c->n_free + (c->n - c->made);
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
    assert(block >= 0 && block < c->made);
    if (c->b[block].refs++ == 0)
        queue_remove(c, block);
}

/* The next block never taken, made now (the queue's head before any
 * made block). */
static int make_block(kv_cache *c) {
    if (c->made == c->cap) {
        c->cap = c->cap ? (c->cap > c->n / 2 ? c->n : c->cap * 2) : (c->n < 64 ? c->n : 64);
        c->b = xrealloc(c->b, (size_t)c->cap * sizeof *c->b);
    }
    int i = c->made++;
    c->b[i] = (kv_block){.refs = 1, .prev = -1, .next = -1};
    return i;
}

int kv_cache_take(kv_cache *c) {
    if (c->made < c->n)
        return make_block(c);
    int i = c->head;
    if (i < 0)
        return -1;
    queue_remove(c, i);
    forget_name(c, i);
    c->b[i].refs = 1;
    return i;
}

void kv_cache_drop(kv_cache *c, int block) {
    assert(block >= 0 && block < c->made && c->b[block].refs > 0); /* no drop of a free block */
    if (--c->b[block].refs == 0)
        queue_append(c, block);
}

/* The table twice as large, every name placed again: kept at most half
 * full as names are added. */
static void table_grow(kv_cache *c) {
    slot *old = c->table;
    size_t old_size = c->mask + 1;
    c->mask = 2 * old_size - 1;
    c->table = xmalloc((c->mask + 1) * sizeof *c->table);
    for (size_t i = 0; i <= c->mask; i++)
        c->table[i].block = -1;
    for (size_t i = 0; i < old_size; i++)
        if (old[i].block >= 0)
            c->table[slot_of(c, old[i].hash)] = old[i];
    free(old);
}

void kv_cache_name(kv_cache *c, int block, uint64_t hash) {
    kv_block *k = &c->b[block];
    if (k->named)
        return;
    if ((size_t)c->n_named + 1 > (c->mask + 1) / 2)
        table_grow(c);
    size_t s = slot_of(c, hash);
    if (c->table[s].block >= 0)
        return; /* another block computed the same prefix first */
    c->table[s] = (slot){hash, block};
    k->hash = hash;
    k->named = 1;
    c->n_named++;
}

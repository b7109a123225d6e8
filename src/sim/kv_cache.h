/* kv_cache: the engine's pool of KV blocks, kept the way vLLM's V1 block
 * pool keeps it, internal to src/sim/ (engine.c is its one user).
 *
 * Every block is held by zero or more running sequences (its reference
 * count). A block nobody holds is free: it sits in one queue, least
 * recently freed first, and allocation takes from the front. A full block
 * of a prompt may be named by the chained hash of its tokens
 * (prompt_ids.h): a named block stays findable by that hash while it is
 * held and after it is freed, until allocation takes it for something else
 * (only then is its name forgotten: lazy eviction, so a free cached block
 * still counts as free). Holding a found block that nobody held takes it
 * out of the free queue. Sequences free their blocks last block first, so
 * the end of a prompt is evicted before the prefix it shares with others.
 * All of it is O(1) a block: a doubly linked free queue and an open-address
 * table from hash to block. */
#ifndef SERVELAB_SIM_KV_CACHE_H
#define SERVELAB_SIM_KV_CACHE_H

#include <stdint.h>

typedef struct kv_cache kv_cache;

kv_cache *kv_cache_new(int blocks);
void kv_cache_free(kv_cache *c);

/* Blocks no sequence holds, named or not. */
int kv_cache_free_blocks(const kv_cache *c);
/* Blocks that carry a name (held or free). */
int kv_cache_named_blocks(const kv_cache *c);

/* The block named `hash`, or -1. */
int kv_cache_find(const kv_cache *c, uint64_t hash);
/* Whether no sequence holds `block`. */
int kv_cache_is_free(const kv_cache *c, int block);
/* One more holder of `block` (a found block: a prefix-cache hit). */
void kv_cache_hold(kv_cache *c, int block);
/* The free block freed longest ago, now held once and its old name
 * forgotten; -1 when every block is held. */
int kv_cache_take(kv_cache *c);
/* One holder fewer; the last one puts the block at the free queue's end. */
void kv_cache_drop(kv_cache *c, int block);
/* Names a held block whose tokens are now all computed. A block already
 * named, or a name another block already has, is left as it is. */
void kv_cache_name(kv_cache *c, int block, uint64_t hash);

#endif

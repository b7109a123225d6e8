/* The simulator's prefix cache on a virtual clock (engine, kv_cache and
 * prompt_ids together, no server): hits exact to the token for prompts that
 * share prefixes, the last token always recomputed, shared blocks held once,
 * eviction least recently freed first and a prompt's tail before its head,
 * the same-step hit, a preempted sequence's second look-up uncounted, the
 * prefill a hit saves in the step's cost, and nothing at all with caching
 * off. */
#include "sim/engine.h"
#include "sim/kv_cache.h"
#include "sim/prompt_ids.h"
#include "test.h"

#include <stdlib.h>
#include <string.h>

typedef struct prompt {
    seq s;
    prompt_ids ids;
    uint64_t *hashes;
} prompt;

static void ignore(seq *s, int64_t now, void *ud) {
    (void)s;
    (void)now;
    (void)ud;
}

static engine_params params(int kv_blocks) {
    return (engine_params){.max_num_seqs = 8,
                           .kv_blocks = kv_blocks,
                           .block_size = 16,
                           .max_model_len = 2048,
                           .max_batched_tokens = 4096,
                           .decode_base_ms = 10,
                           .decode_per_seq_ms = 1,
                           .prefill_per_token_ms = 0.1,
                           .enable_prefix_caching = 1};
}

static engine *make(const engine_params *p) {
    char err[128];
    engine *e = engine_new(p, ignore, NULL, err, sizeof err);
    CHECK_MSG(e != NULL, "engine_new: %s", err);
    return e;
}

/* A prompt of n ids: `shared` of them base, base+1, ... then ids of its own
 * (from `own`), queued with `out` output tokens. */
static void add(engine *e, prompt *p, int n, int shared, int base, int own, int out, int64_t now) {
    memset(p, 0, sizeof *p);
    for (int i = 0; i < n; i++) {
        if (p->ids.n == p->ids.cap) {
            p->ids.cap = p->ids.cap ? p->ids.cap * 2 : 64;
            p->ids.id = realloc(p->ids.id, (size_t)p->ids.cap * sizeof *p->ids.id);
        }
        p->ids.id[p->ids.n++] = i < shared ? base + i : own + i;
    }
    p->hashes =
        prompt_block_hashes(&p->ids, engine_get_params(e)->block_size, 0, &p->s.n_block_hashes);
    p->s.block_hashes = p->hashes;
    p->s.prompt_tokens = n;
    p->s.target_tokens = out;
    engine_add(e, &p->s, now);
}

static void done(prompt *p) {
    prompt_ids_free(&p->ids);
    free(p->hashes);
}

/* Steps until idle; returns the time. */
static int64_t run(engine *e, int64_t now) {
    for (int64_t d; (d = engine_step_begin(e, now)) >= 0;) {
        now += d;
        engine_step_end(e, now);
    }
    return now;
}

TEST(sim_prefix_hits_exact_for_a_shared_prefix) {
    engine_params p = params(1000);
    engine *e = make(&p);
    prompt a, b;
    /* 100 ids each, the first 64 the same: b hits a's 4 full shared blocks */
    add(e, &a, 100, 64, 1000, 50000, 3, 0);
    int64_t now = run(e, 0);
    CHECK_INT(a.s.cached_tokens, 0);
    add(e, &b, 100, 64, 1000, 60000, 3, now);
    run(e, now);
    CHECK_INT(b.s.cached_tokens, 64);
    engine_stats st = engine_get_stats(e);
    CHECK_INT(st.prefix_cache_queries_total, 200);
    CHECK_INT(st.prefix_cache_hits_total, 64);
    CHECK_INT(st.prompt_tokens_total, 200); /* cached tokens are still prompt tokens */
    /* a's 6 full blocks and b's 2 of its own stay cached, held by no one */
    CHECK_INT(st.cached_blocks, 8);
    CHECK_INT(st.used_blocks, 0);
    done(&a);
    done(&b);
    engine_free(e);
}

TEST(sim_prefix_always_recomputes_the_last_token) {
    engine_params p = params(1000);
    engine *e = make(&p);
    prompt a, b, c, d;
    /* 64 ids, all cached: vLLM caps the hit at 63 tokens, so 3 blocks */
    add(e, &a, 64, 64, 7, 0, 2, 0);
    int64_t now = run(e, 0);
    add(e, &b, 64, 64, 7, 0, 2, now);
    now = run(e, now);
    CHECK_INT(b.s.cached_tokens, 48);
    /* one id more: all 4 blocks hit, the 65th token is computed */
    add(e, &c, 65, 64, 7, 9000, 2, now);
    now = run(e, now);
    CHECK_INT(c.s.cached_tokens, 64);
    /* a prompt shorter than a block has nothing to hit */
    add(e, &d, 15, 15, 7, 0, 2, now);
    run(e, now);
    CHECK_INT(d.s.cached_tokens, 0);
    engine_stats st = engine_get_stats(e);
    CHECK_INT(st.prefix_cache_hits_total, 48 + 64);
    CHECK_INT(st.prefix_cache_queries_total, 64 + 64 + 65 + 15);
    done(&a);
    done(&b);
    done(&c);
    done(&d);
    engine_free(e);
}

TEST(sim_prefix_hit_skips_prefill_in_the_step_cost) {
    engine_params p = params(1000);
    engine *e = make(&p);
    prompt a, b;
    add(e, &a, 1000, 992, 3, 70000, 1, 0);
    /* 1000 prefill tokens: 10 + 0.1 * 1000 = 110 ms */
    CHECK_INT(engine_step_begin(e, 0), 110000);
    engine_step_end(e, 110000);
    CHECK(a.s.state == SEQ_FINISHED);
    add(e, &b, 1000, 992, 3, 80000, 1, 110000);
    /* 992 shared ids are 62 full blocks: 8 tokens left, 10 + 0.8 ms */
    CHECK_INT(engine_step_begin(e, 110000), 10800);
    engine_step_end(e, 120800);
    CHECK_INT(b.s.cached_tokens, 992);
    done(&a);
    done(&b);
    engine_free(e);
}

TEST(sim_prefix_running_sequences_share_blocks) {
    engine_params p = params(1000);
    engine *e = make(&p);
    prompt a, b;
    add(e, &a, 64, 64, 500, 0, 100, 0);
    int64_t now = engine_step_begin(e, 0);
    engine_step_end(e, now); /* a prefilled, its first token out: 4 blocks */
    CHECK_INT(engine_get_stats(e).used_blocks, 4);
    add(e, &b, 80, 64, 500, 40000, 100, now);
    int64_t d = engine_step_begin(e, now);
    engine_step_end(e, now + d);
    /* b holds a's first 4 blocks and one of its own; a took a 5th for its
     * second token: 6 blocks in use, not 4 + 5 + 1 */
    CHECK_INT(b.s.cached_tokens, 64);
    CHECK_INT(b.s.blocks, 5);
    CHECK_INT(engine_get_stats(e).used_blocks, 6);
    run(e, now + d);
    CHECK_INT(engine_get_stats(e).used_blocks, 0);
    done(&a);
    done(&b);
    engine_free(e);
}

TEST(sim_prefix_a_block_scheduled_in_this_step_hits_already) {
    /* vLLM names a block when the step that computes it is scheduled, so a
     * request admitted later in the same step shares it */
    engine_params p = params(1000);
    engine *e = make(&p);
    prompt a, b;
    add(e, &a, 48, 48, 11, 0, 1, 0);
    add(e, &b, 48, 48, 11, 0, 1, 0);
    run(e, 0);
    CHECK_INT(a.s.cached_tokens, 0);
    CHECK_INT(b.s.cached_tokens, 32);
    done(&a);
    done(&b);
    engine_free(e);
}

TEST(sim_prefix_evicts_least_recently_freed_tail_first) {
    /* 8 blocks of 16. a (4 blocks) finishes and frees them last block
     * first; b, unrelated, needs 6: the 4 never used, then a's 4th and 3rd
     * block. a's prompt again hits only its first two blocks. */
    engine_params p = params(8);
    p.max_model_len = 128;
    engine *e = make(&p);
    prompt a, b, c;
    add(e, &a, 64, 64, 100, 0, 1, 0);
    int64_t now = run(e, 0);
    CHECK_INT(engine_get_stats(e).cached_blocks, 4);
    add(e, &b, 96, 0, 0, 20000, 1, now);
    now = run(e, now);
    CHECK_INT(b.s.cached_tokens, 0);
    CHECK_INT(engine_get_stats(e).cached_blocks, 2 + 6);
    add(e, &c, 64, 64, 100, 0, 1, now);
    run(e, now);
    CHECK_INT(c.s.cached_tokens, 32);
    done(&a);
    done(&b);
    done(&c);
    engine_free(e);
}

TEST(sim_prefix_preempted_lookup_is_not_counted_again) {
    /* 10 blocks: a and b (3 blocks each) decode until one must give way;
     * the victim comes back, hits its own freed prompt blocks, and the
     * counters still hold one look-up per request */
    engine_params p = params(10);
    p.max_model_len = 160;
    engine *e = make(&p);
    prompt a, b;
    add(e, &a, 48, 0, 0, 1000, 100, 0);
    add(e, &b, 48, 0, 0, 3000, 100, 0);
    run(e, 0);
    CHECK(a.s.preemptions + b.s.preemptions > 0);
    engine_stats st = engine_get_stats(e);
    CHECK_INT(st.prefix_cache_queries_total, 96);
    CHECK_INT(st.prefix_cache_hits_total, 0);
    CHECK_INT(a.s.cached_tokens + b.s.cached_tokens, 0);
    CHECK_INT(a.s.generated, 100);
    CHECK_INT(b.s.generated, 100);
    done(&a);
    done(&b);
    engine_free(e);
}

TEST(sim_prefix_caching_off_hits_nothing) {
    engine_params p = params(1000);
    p.enable_prefix_caching = 0;
    engine *e = make(&p);
    prompt a, b;
    add(e, &a, 100, 100, 1, 0, 2, 0);
    int64_t now = run(e, 0);
    add(e, &b, 100, 100, 1, 0, 2, now);
    run(e, now);
    CHECK_INT(b.s.cached_tokens, 0);
    engine_stats st = engine_get_stats(e);
    CHECK_INT(st.prefix_cache_queries_total, 0);
    CHECK_INT(st.prefix_cache_hits_total, 0);
    CHECK_INT(st.cached_blocks, 0);
    done(&a);
    done(&b);
    engine_free(e);
}

TEST(sim_prefix_block_hashes_chain_the_whole_prefix) {
    int64_t xs[40], ys[40];
    for (int i = 0; i < 40; i++)
        xs[i] = ys[i] = i;
    ys[3] = 99; /* y differs from x in block 0 only */
    prompt_ids x = {xs, 40, 40}, y = {ys, 40, 40};
    int nx, ny;
    uint64_t *hx = prompt_block_hashes(&x, 16, 0, &nx), *hy = prompt_block_hashes(&y, 16, 0, &ny);
    CHECK_INT(nx, 2); /* 40 ids: two full blocks, the partial third has no hash */
    CHECK_INT(ny, 2);
    /* block 1's ids are equal, but its prefix is not */
    CHECK(hx[0] != hy[0]);
    CHECK(hx[1] != hy[1]);
    int ns;
    uint64_t *hs = prompt_block_hashes(&x, 16, 12345, &ns);
    CHECK(hs[0] != hx[0]); /* a cache_salt keeps them apart */
    uint64_t *again = prompt_block_hashes(&x, 16, 0, &ns);
    CHECK(again[0] == hx[0] && again[1] == hx[1]);
    free(hx);
    free(hy);
    free(hs);
    free(again);
}

TEST(sim_prefix_kv_cache_names_survive_until_taken) {
    kv_cache *c = kv_cache_new(3);
    int a = kv_cache_take(c), b = kv_cache_take(c);
    kv_cache_name(c, a, 111);
    kv_cache_name(c, b, 222);
    kv_cache_name(c, b, 333); /* a named block keeps its name */
    CHECK_INT(kv_cache_find(c, 222), b);
    CHECK_INT(kv_cache_find(c, 333), -1);
    kv_cache_drop(c, b);
    kv_cache_drop(c, a);
    CHECK_INT(kv_cache_free_blocks(c), 3);
    CHECK_INT(kv_cache_named_blocks(c), 2);
    /* a hit on a free block takes it out of the free queue */
    kv_cache_hold(c, kv_cache_find(c, 111));
    CHECK_INT(kv_cache_free_blocks(c), 2);
    /* the never-used block goes first, then b (freed before a) */
    int first = kv_cache_take(c);
    CHECK(first != a && first != b);
    CHECK_INT(kv_cache_take(c), b);
    CHECK_INT(kv_cache_find(c, 222), -1); /* taken: its name forgotten */
    CHECK_INT(kv_cache_find(c, 111), a);
    CHECK_INT(kv_cache_take(c), -1);
    kv_cache_free(c);
}

TEST(sim_prefix_kv_cache_table_survives_many_names) {
    /* fill, evict and refill a pool so that the hash table's deletions
     * shift entries around; every name must stay findable */
    enum { N = 500 };
    kv_cache *c = kv_cache_new(N);
    int block[N];
    for (int round = 0; round < 4; round++) {
        for (int i = 0; i < N; i++) {
            block[i] = kv_cache_take(c);
            kv_cache_name(c, block[i], (uint64_t)(round * N + i) * 0x9e3779b97f4a7c15ULL);
        }
        for (int i = 0; i < N; i++)
            CHECK_INT(kv_cache_find(c, (uint64_t)(round * N + i) * 0x9e3779b97f4a7c15ULL),
                      block[i]);
        for (int i = N - 1; i >= 0; i--)
            kv_cache_drop(c, block[i]);
        CHECK_INT(kv_cache_named_blocks(c), N);
    }
    kv_cache_free(c);
}

/* engine: the simulator's model of a vLLM-like inference engine.
 *
 * A discrete-event scheduler with continuous batching, a paged KV cache and
 * preemption by recompute, driven by whoever owns the clock: the HTTP server
 * calls it from real timers, the tests from a virtual clock. It never reads
 * a clock itself, so a test can replay a schedule exactly.
 *
 * One step, as vLLM's scheduler does it:
 *   1. Running sequences, oldest admitted first, each get work: the rest of
 *      their prefill (as far as the step's token budget allows: chunked
 *      prefill) or one decode token. A decode that crosses into a new KV
 *      block needs a free block; when none is free the most recently
 *      admitted running sequence is preempted (its blocks freed, back to the
 *      head of the waiting queue, its prompt and output recomputed later),
 *      possibly the one asking.
 *   2. If nothing was preempted, waiting sequences are admitted in FIFO
 *      order while fewer than max_num_seqs run, the blocks for their whole
 *      (re)compute fit, and budget remains; the first that does not fit
 *      stops admission (no overtaking). With prefix caching, a sequence's
 *      leading full prompt blocks that are in the cache (kv_cache.h) are
 *      hits: it holds them instead of new blocks and skips their prefill,
 *      though never its last token (vLLM recomputes it for the logits, so
 *      the hit stops a block short of a prompt that is all cached). A
 *      prompt block is named in the cache as soon as a step is scheduled
 *      to compute its last token, so a sequence admitted later in the same
 *      step already hits it, as in vLLM.
 *   3. The step lasts decode(decoding) + prefill (or, when it computes
 *      prompt tokens and mixed_per_seq is set, decode_base + mixed_per_seq
 *      x decoding + prefill), times (1 + jitter *
 *      N(0,1)) when jitter is set (seeded). `decoding` counts sequences
 *      that generate a token by decode this step. decode(b) is
 *      decode_base + decode_per_seq * b, or, when the profile gives a
 *      table of measured steps by batch, the table read at b: linear
 *      between its points, from decode_base at b = 0 to its first point,
 *      and along its last two points' slope beyond its last (a table is
 *      what a measured engine needs: a CPU's step is far from linear in
 *      the batch). prefill is prefill_per_token for every prompt token
 *      computed in the step plus prefill_ctx_per_1k for every 1000
 *      tokens that token attends to (its position in its sequence), so a
 *      long prompt's later tokens cost more, as attention does; or, with a
 *      prefill table measured by prompt length, each chunk's share of it
 *      (engine_prefill_ms).
 *   4. At its end every decoding sequence emits one token (with speculative
 *      decoding, 1 + its accepted drafts, as one emission), and so does every
 *      sequence whose prefill completed (the first token, or the next one
 *      after a recompute). A sequence finishes at its target length or at
 *      max_model_len; its blocks are freed at once.
 * Times are int64 microseconds. */
#ifndef SERVELAB_ENGINE_H
#define SERVELAB_ENGINE_H

#include "common/rng.h"

#include <stdint.h>

/* Most points of a step table (engine_params.step_batch/step_ms). */
#define ENGINE_STEP_POINTS 64
/* Most draft tokens a step may propose for one sequence (spec_tokens). */
#define ENGINE_SPEC_MAX 16

typedef struct engine_params {
    int max_num_seqs;       /* most sequences running at once */
    int kv_blocks;          /* KV cache size in blocks */
    int block_size;         /* tokens per KV block */
    int max_model_len;      /* prompt + output limit */
    int max_batched_tokens; /* token budget of one step (chunked prefill) */
    double decode_base_ms;  /* fixed cost of a step */
    double decode_per_seq_ms;
    double prefill_per_token_ms;
    double prefill_ctx_per_1k_ms; /* a prompt token's extra cost per 1000 tokens before it */
    /* The decode step by batch, measured: n_step_points points, batches
     * rising from 1, in place of decode_per_seq when n_step_points > 0. */
    int n_step_points;
    int step_batch[ENGINE_STEP_POINTS];
    double step_ms[ENGINE_STEP_POINTS];
    /* The prefill measured by prompt length: F(n), the cost of computing a
     * prompt's first n tokens from nothing, at n_prefill_points rising
     * lengths; a chunk from position p to p + c costs F(p + c) - F(p). In
     * place of prefill_per_token and prefill_ctx_per_1k when
     * n_prefill_points > 0. */
    int n_prefill_points;
    int prefill_tokens[ENGINE_STEP_POINTS];
    double prefill_ms[ENGINE_STEP_POINTS];
    /* A server that has been idle idle_after_ms or longer (or has not run a
     * step yet) takes idle_wake_ms more for its next step: its threads slept
     * (measured on llama.cpp's CPU server: ~85 ms after 200 ms idle). */
    double idle_wake_ms, idle_after_ms;
    /* A step that computes prompt tokens while sequences decode, when > 0:
     * decode_base + mixed_per_seq x decoding + the prefill, in place of
     * decode(decoding) + the prefill (measured on llama.cpp's CPU server: a
     * prompt's step cost what it costs alone plus ~6 ms a decoding stream,
     * more than the decode-only step's table says). 0: off. */
    double mixed_per_seq_ms;
    /* Speculative decoding, when spec_tokens > 0: each decode of a
     * sequence drafts spec_tokens tokens and the step verifies them; draft
     * position i (from 0) is accepted with probability spec_accept when
     * every one before it was, and the decode emits 1 + the accepted ones
     * (never past the sequence's target or max_model_len) as one chunk.
     * The step's cost is that of a decode: the drafting is free. */
    int spec_tokens;
    double spec_accept;
    double jitter; /* relative sd of step time; 0 = deterministic */
    uint64_t seed;
    int enable_prefix_caching; /* reuse cached prompt blocks (vLLM's automatic prefix caching) */
} engine_params;

typedef enum { SEQ_NEW, SEQ_WAITING, SEQ_RUNNING, SEQ_FINISHED, SEQ_ABORTED } seq_state;
typedef enum { FINISH_NONE, FINISH_STOP, FINISH_LENGTH, FINISH_ABORT } finish_kind;

/* One request as the engine sees it. The owner allocates it (usually
 * embedded in its own request struct) and keeps it alive until it is
 * finished or aborted. */
typedef struct seq {
    int prompt_tokens;
    int target_tokens;     /* output tokens to generate before stopping */
    finish_kind at_target; /* STOP (end of sequence) or LENGTH (max_tokens) */
    /* The chained hashes of the prompt's full blocks (prompt_ids.h), the
     * owner's and kept alive as long as the sequence; NULL: none to match. */
    const uint64_t *block_hashes;
    int n_block_hashes;
    /* progress */
    int generated;      /* output tokens emitted so far */
    int computed;       /* tokens whose KV is in the cache */
    int prefill_target; /* tokens to compute before the next emission */
    int blocks;         /* KV blocks held */
    int cached_tokens;  /* prompt tokens served from the prefix cache at the first admission */
    int *block_table;   /* the engine's: the blocks held, in token order */
    int table_cap;
    int named; /* leading blocks already named in the cache */
    int preemptions;
    int step_work;   /* tokens scheduled in the current step; 0 if none */
    int step_decode; /* 1 when this step's work is a decode */
    int step_tokens; /* tokens the last emission carried (1, or 1 + accepted drafts) */
    seq_state state;
    finish_kind finish;
    uint64_t admit_order;
    int64_t arrived_us, admitted_us, first_token_us, finished_us; /* -1 until set */
    int64_t emitted_us;      /* the last emission's time (its step's end); -1 until the first */
    struct seq *prev, *next; /* waiting or running list */
    void *user;
} seq;

typedef struct engine engine;

/* Called at a step's end for each emission (one token, or with speculative
 * decoding s->step_tokens of them): `s->generated` already counts it.
 * When `s->state == SEQ_FINISHED` this was the last token; the engine no
 * longer touches `s` after this call returns. */
typedef void (*engine_emit_fn)(seq *s, int64_t now_us, void *ud);

typedef struct engine_stats {
    int running, waiting;
    int used_blocks, total_blocks;
    uint64_t preemptions_total;
    uint64_t prompt_tokens_total;     /* counted when a first prefill completes */
    uint64_t generation_tokens_total; /* tokens emitted */
    /* vLLM's prefix cache counters, in tokens, for first admissions (a
     * preempted sequence's second look-up is not counted, as in vLLM) */
    uint64_t prefix_cache_queries_total;
    uint64_t prefix_cache_hits_total;
    int cached_blocks; /* blocks carrying a name, held or free */
    uint64_t steps;
    /* speculative decoding, as vLLM counts it: drafts (one a sequence's
     * decode), draft tokens proposed, those accepted, and accepted by
     * draft position */
    uint64_t spec_drafts_total, spec_draft_tokens_total, spec_accepted_total;
    uint64_t spec_accepted_per_pos[ENGINE_SPEC_MAX];
} engine_stats;

/* The most any step cost term (or table cost) may be: an hour. A step is
 * never longer than ENGINE_STEP_MOST_US (about 31 years), whatever its
 * terms add up to, so the engine's clock cannot wrap. */
#define ENGINE_TERM_MOST_MS 3600000.0
#define ENGINE_STEP_MOST_US 1000000000000000LL

/* Every step cost (the decode and prefill terms, the mixed-step term, each
 * point of the step and prefill tables) divided by d: --speedup's
 * scaling, and the capacity twin's hold to a measured throughput. The idle
 * terms are the caller's. */
void engine_divide_step_costs(engine_params *p, double d);
/* NULL, or why the parameters are impossible (engine_new's own check, for
 * a command to refuse them before it makes anything). */
const char *engine_params_check(const engine_params *p);
/* Returns NULL and fills `err` when the parameters are impossible. */
engine *engine_new(const engine_params *p, engine_emit_fn emit, void *ud, char *err, int errlen);
void engine_free(engine *e);
const engine_params *engine_get_params(const engine *e);

/* Queue a new sequence (prompt_tokens, target_tokens and at_target set,
 * block_hashes set or NULL). */
void engine_add(engine *e, seq *s, int64_t now_us);
/* Remove a sequence wherever it is (client went away); frees its blocks. */
void engine_abort(engine *e, seq *s, int64_t now_us);

/* Plan the next step at `now_us`. Returns its duration in microseconds, or
 * -1 when there is nothing to do (the engine is idle). */
int64_t engine_step_begin(engine *e, int64_t now_us);
/* Finish the step begun last: emits tokens through the callback. */
void engine_step_end(engine *e, int64_t now_us);
int engine_in_step(const engine *e);

engine_stats engine_get_stats(const engine *e);

/* F(n): the cost of a prompt's first n tokens from nothing, in ms: the
 * prefill table read at n (linear from 0 to its first point, between
 * points, and along its last segment beyond it), or prefill_per_token x n
 * + prefill_ctx_per_1k x n (n - 1) / 2000 without one. */
double engine_prefill_ms(const engine_params *p, double n);
/* decode(b) of step 3 above, in ms, for the parameters p. */
double engine_decode_ms(const engine_params *p, double batch);
/* The step table is well formed (batches rising from 1, costs not
 * negative): NULL, or what is wrong. */
const char *engine_step_table_check(const engine_params *p);

#endif

/* engine: continuous batching with a paged KV cache (see engine.h for the
 * model). Two intrusive lists hold the sequences: `waiting` (FIFO, preempted
 * sequences go back to its head) and `running` (in admission order, so the
 * tail is the most recently admitted and the first to be preempted). The
 * step's scheduled sequences sit in a small array so that step_end can emit
 * their tokens; an abort during a step clears its slot. The blocks
 * themselves, and the prefix cache's names for them, are kv_cache.c's; each
 * sequence keeps the list of those it holds. */
#include "sim/engine.h"
#include "common/util.h"
#include "sim/kv_cache.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct seq_list {
    seq *head, *tail;
    int count;
} seq_list;

struct engine {
    engine_params p;
    engine_emit_fn emit;
    void *ud;
    rng jitter_rng;
    rng spec_rng; /* the drafts' acceptance */
    seq_list waiting, running;
    kv_cache *kv;
    uint64_t admit_counter;
    seq **sched; /* this step's work, max_num_seqs slots */
    int n_sched;
    double step_ctx_tokens; /* the context the step's prompt tokens attend to, summed */
    double step_prefill_ms; /* with a prefill table: the step's prompt chunks' cost */
    int64_t last_end_us;    /* when the last step ended; -1: none yet */
    int in_step;
    engine_stats stats;
};

static void list_remove(seq_list *l, seq *s) {
    if (s->prev)
        s->prev->next = s->next;
    else
        l->head = s->next;
    if (s->next)
        s->next->prev = s->prev;
    else
        l->tail = s->prev;
    s->prev = s->next = NULL;
    l->count--;
}

static void list_push_tail(seq_list *l, seq *s) {
    s->next = NULL;
    s->prev = l->tail;
    if (l->tail)
        l->tail->next = s;
    else
        l->head = s;
    l->tail = s;
    l->count++;
}

static void list_push_head(seq_list *l, seq *s) {
    s->prev = NULL;
    s->next = l->head;
    if (l->head)
        l->head->prev = s;
    else
        l->tail = s;
    l->head = s;
    l->count++;
}

static int blocks_for(const engine *e, int tokens) {
    return (tokens + e->p.block_size - 1) / e->p.block_size;
}

const char *engine_params_check(const engine_params *p) {
    const double most = ENGINE_TERM_MOST_MS;
    if (p->max_num_seqs < 1)
        return "max_num_seqs must be at least 1";
    if (p->block_size < 1)
        return "block_size must be at least 1";
    if (p->kv_blocks < 1)
        return "kv_blocks must be at least 1";
    if (p->max_model_len < 2)
        return "max_model_len must be at least 2";
    if ((long long)p->kv_blocks * p->block_size < p->max_model_len)
        return "kv_blocks * block_size must hold at least max_model_len tokens";
    if (p->max_batched_tokens < 1)
        return "max_num_batched_tokens must be at least 1";
    if (p->decode_base_ms < 0 || p->decode_per_seq_ms < 0 || p->prefill_per_token_ms < 0 ||
        p->prefill_ctx_per_1k_ms < 0 || p->idle_wake_ms < 0 || p->idle_after_ms < 0 ||
        p->mixed_per_seq_ms < 0)
        return "step cost terms must not be negative";
    if (!(p->decode_base_ms <= most && p->decode_per_seq_ms <= most &&
          p->prefill_per_token_ms <= most && p->prefill_ctx_per_1k_ms <= most &&
          p->idle_wake_ms <= most && p->idle_after_ms <= most && p->mixed_per_seq_ms <= most))
        return "step cost terms must be at most 3600000 ms (an hour)";
    if (p->spec_tokens < 0 || p->spec_tokens > ENGINE_SPEC_MAX)
        return "num_speculative_tokens must be 0 to 16";
    if (!(p->spec_accept >= 0 && p->spec_accept <= 1))
        return "spec_accept must be a probability, 0 to 1";
    const char *why = engine_step_table_check(p);
    if (why)
        return why;
    if (!(p->jitter >= 0 && p->jitter <= 1))
        return "jitter must be in [0, 1]";
    return NULL;
}

void engine_divide_step_costs(engine_params *p, double d) {
    p->decode_base_ms /= d;
    p->decode_per_seq_ms /= d;
    p->prefill_per_token_ms /= d;
    p->prefill_ctx_per_1k_ms /= d;
    p->mixed_per_seq_ms /= d;
    for (int i = 0; i < p->n_step_points; i++)
        p->step_ms[i] /= d;
    for (int i = 0; i < p->n_prefill_points; i++)
        p->prefill_ms[i] /= d;
}

engine *engine_new(const engine_params *p, engine_emit_fn emit, void *ud, char *err, int errlen) {
    const char *why = engine_params_check(p);
    if (why) {
        snprintf(err, errlen, "%s", why);
        return NULL;
    }
    engine *e = xcalloc(1, sizeof *e);
    e->p = *p;
    e->emit = emit;
    e->ud = ud;
    rng_seed(&e->jitter_rng, p->seed ^ 0x5eed5eedULL);
    rng_seed(&e->spec_rng, p->seed ^ 0x5bec0de5ULL);
    e->last_end_us = -1;
    e->kv = kv_cache_new(p->kv_blocks);
    e->sched = xcalloc((size_t)p->max_num_seqs, sizeof *e->sched);
    return e;
}

void engine_free(engine *e) {
    if (!e)
        return;
    free(e->sched);
    kv_cache_free(e->kv);
    free(e);
}

const engine_params *engine_get_params(const engine *e) {
    return &e->p;
}

void engine_add(engine *e, seq *s, int64_t now_us) {
    if (s->prompt_tokens < 1)
        s->prompt_tokens = 1;
    if (s->target_tokens < 1)
        s->target_tokens = 1;
    if (s->at_target != FINISH_STOP)
        s->at_target = FINISH_LENGTH;
    s->generated = s->computed = s->blocks = s->preemptions = 0;
    s->cached_tokens = s->named = 0;
    s->block_table = NULL;
    s->table_cap = 0;
    s->prefill_target = s->prompt_tokens;
    s->step_work = s->step_decode = 0;
    s->finish = FINISH_NONE;
    s->arrived_us = now_us;
    s->admitted_us = s->first_token_us = s->finished_us = s->emitted_us = -1;
    s->state = SEQ_WAITING;
    list_push_tail(&e->waiting, s);
}

static void unschedule(engine *e, seq *s) {
    if (!s->step_work)
        return;
    for (int i = 0; i < e->n_sched; i++)
        if (e->sched[i] == s)
            e->sched[i] = NULL;
    s->step_work = 0;
}

/* Appends `block` (already held) to the blocks s holds. */
static void add_block(seq *s, int block) {
    if (s->blocks == s->table_cap) {
        s->table_cap = s->table_cap ? s->table_cap * 2 : 16;
        s->block_table = xrealloc(s->block_table, (size_t)s->table_cap * sizeof *s->block_table);
    }
    s->block_table[s->blocks++] = block;
}

/* Frees every block s holds, its last block first (vLLM's order: the end
 * of a prompt is evicted before the prefix it may share). */
static void release(engine *e, seq *s) {
    while (s->blocks > 0)
        kv_cache_drop(e->kv, s->block_table[--s->blocks]);
    s->named = 0;
}

/* The sequence leaves the engine: its blocks and its block list. */
static void retire(engine *e, seq *s) {
    release(e, s);
    free(s->block_table);
    s->block_table = NULL;
    s->table_cap = 0;
}

/* Names the blocks of s's prompt that will be fully computed once its
 * scheduled work is done, so that later look-ups hit them. */
static void name_blocks(engine *e, seq *s, int computed_tokens) {
    if (!e->p.enable_prefix_caching)
        return;
    int full = computed_tokens / e->p.block_size;
    if (full > s->n_block_hashes)
        full = s->n_block_hashes;
    if (full > s->blocks)
        full = s->blocks;
    for (; s->named < full; s->named++)
        kv_cache_name(e->kv, s->block_table[s->named], s->block_hashes[s->named]);
}

void engine_abort(engine *e, seq *s, int64_t now_us) {
    if (s->state == SEQ_WAITING)
        list_remove(&e->waiting, s);
    else if (s->state == SEQ_RUNNING)
        list_remove(&e->running, s);
    else
        return;
    unschedule(e, s);
    retire(e, s);
    s->state = SEQ_ABORTED;
    s->finish = FINISH_ABORT;
    s->finished_us = now_us;
}

/* Recompute-style preemption: the victim loses its KV and will prefill its
 * prompt plus the output so far again before its next token. */
static void preempt(engine *e, seq *v) {
    list_remove(&e->running, v);
    release(e, v);
    v->computed = 0;
    v->prefill_target = v->prompt_tokens + v->generated;
    v->state = SEQ_WAITING;
    v->preemptions++;
    e->stats.preemptions_total++;
    list_push_head(&e->waiting, v);
}

static void schedule(engine *e, seq *s, int work, int decode) {
    if (!decode) { /* positions computed..computed+work-1 attend to as many before them */
        e->step_ctx_tokens += (double)work * s->computed + (double)work * (work - 1) / 2;
        if (e->p.n_prefill_points > 0)
            e->step_prefill_ms += engine_prefill_ms(&e->p, s->computed + work) -
                                  engine_prefill_ms(&e->p, s->computed);
    }
    s->step_work = work;
    s->step_decode = decode;
    e->sched[e->n_sched++] = s;
    if (!decode)
        name_blocks(e, s, s->computed + work);
}

/* The leading blocks of s's prompt found in the cache, at most those
 * before its last token to compute (vLLM's max_cache_hit_length of
 * num_tokens - 1); *unheld counts those nobody holds, which holding takes
 * out of the free blocks. */
static int cache_hits(const engine *e, const seq *s, int *unheld) {
    *unheld = 0;
    if (!e->p.enable_prefix_caching || !s->block_hashes)
        return 0;
    int most = (s->prefill_target - 1) / e->p.block_size;
    if (most > s->n_block_hashes)
        most = s->n_block_hashes;
    int n = 0;
    for (; n < most; n++) {
        int b = kv_cache_find(e->kv, s->block_hashes[n]);
        if (b < 0)
            break;
        *unheld += kv_cache_is_free(e->kv, b);
    }
    return n;
}

/* Admits the waiting head s if the blocks for its whole (re)compute fit:
 * its cache hits held, the rest taken free. 0, or -1 when it does not fit. */
static int admit(engine *e, seq *s) {
    int unheld, hits = cache_hits(e, s, &unheld);
    int fresh = blocks_for(e, s->prefill_target) - hits;
    if (fresh + unheld > kv_cache_free_blocks(e->kv))
        return -1;
    for (int i = 0; i < hits; i++) {
        int b = kv_cache_find(e->kv, s->block_hashes[i]);
        kv_cache_hold(e->kv, b);
        add_block(s, b);
    }
    for (int i = 0; i < fresh; i++)
        add_block(s, kv_cache_take(e->kv));
    s->named = hits;
    s->computed = hits * e->p.block_size;
    if (e->p.enable_prefix_caching && s->preemptions == 0) {
        s->cached_tokens = s->computed;
        e->stats.prefix_cache_queries_total += (uint64_t)s->prefill_target;
        e->stats.prefix_cache_hits_total += (uint64_t)s->computed;
    }
    return 0;
}

int64_t engine_step_begin(engine *e, int64_t now_us) {
    if (e->in_step)
        return -1;
    int budget = e->p.max_batched_tokens;
    int decoding = 0, prefill_tokens = 0, preempted = 0;
    e->n_sched = 0;
    e->step_ctx_tokens = 0;
    e->step_prefill_ms = 0;

    /* 1. Running sequences, oldest first. */
    for (seq *s = e->running.head; s && budget > 0;) {
        if (s->computed < s->prefill_target) {
            int chunk = s->prefill_target - s->computed;
            if (chunk > budget)
                chunk = budget;
            schedule(e, s, chunk, 0);
            prefill_tokens += chunk;
            budget -= chunk;
            s = s->next;
            continue;
        }
        int need = blocks_for(e, s->computed + 1 + e->p.spec_tokens); /* drafts' slots too */
        while (s->blocks < need) {
            if (kv_cache_free_blocks(e->kv) > 0) {
                add_block(s, kv_cache_take(e->kv));
                continue;
            }
            seq *victim = e->running.tail;
            preempt(e, victim);
            preempted++;
            if (victim == s)
                break;
        }
        if (s->state != SEQ_RUNNING)
            break; /* s preempted itself: it was the tail */
        schedule(e, s, 1, 1);
        decoding++;
        budget--;
        s = s->next;
    }

    /* 2. Admission, FIFO, only when nothing was preempted this step. */
    while ((!preempted || e->n_sched == 0) && e->waiting.head &&
           e->running.count < e->p.max_num_seqs && budget > 0) {
        seq *s = e->waiting.head;
        if (admit(e, s))
            break;
        list_remove(&e->waiting, s);
        list_push_tail(&e->running, s);
        s->state = SEQ_RUNNING;
        s->admit_order = ++e->admit_counter;
        if (s->admitted_us < 0)
            s->admitted_us = now_us;
        int rest = s->prefill_target - s->computed;
        int chunk = rest < budget ? rest : budget;
        schedule(e, s, chunk, 0);
        prefill_tokens += chunk;
        budget -= chunk;
    }

    if (e->n_sched == 0)
        return -1;
    /* 3. The step's cost. */
    double prefill_ms = e->p.n_prefill_points > 0
                            ? e->step_prefill_ms
                            : e->p.prefill_per_token_ms * prefill_tokens +
                                  e->p.prefill_ctx_per_1k_ms * e->step_ctx_tokens / 1000.0;
    double decode_ms = prefill_tokens > 0 && e->p.mixed_per_seq_ms > 0
                           ? e->p.decode_base_ms + e->p.mixed_per_seq_ms * decoding
                           : engine_decode_ms(&e->p, decoding);
    double ms = decode_ms + prefill_ms;
    if (e->p.jitter > 0) {
        double f = 1.0 + e->p.jitter * rng_normal(&e->jitter_rng);
        ms *= f < 0.1 ? 0.1 : f;
    }
    if (e->p.idle_wake_ms > 0 &&
        (e->last_end_us < 0 || now_us - e->last_end_us >= llround(e->p.idle_after_ms * 1000.0)))
        ms += e->p.idle_wake_ms;
    /* terms are bounded, but their sum over a huge batch or prompt is not:
     * a step past ENGINE_STEP_MOST_US is that long (every request times
     * out), never a wrapped clock */
    double u = ms * 1000.0;
    int64_t us = u < (double)ENGINE_STEP_MOST_US ? llround(u) : ENGINE_STEP_MOST_US;
    e->in_step = 1;
    e->stats.steps++;
    return us < 1 ? 1 : us;
}

/* The accepted drafts of one decode of `s` (speculative decoding): the
 * leading run of positions that pass, at most what s may still emit after
 * the decode's own token; counted as vLLM counts them. */
static int spec_accepted(engine *e, const seq *s) {
    int k = e->p.spec_tokens;
    if (k <= 0)
        return 0;
    int left = s->target_tokens - s->generated;
    int room = e->p.max_model_len - s->prompt_tokens - s->generated;
    int most = (left < room ? left : room) - 1;
    int a = 0;
    while (a < k && rng_uniform(&e->spec_rng) < e->p.spec_accept)
        a++;
    if (a > most)
        a = most < 0 ? 0 : most;
    e->stats.spec_drafts_total++;
    e->stats.spec_draft_tokens_total += (uint64_t)k;
    e->stats.spec_accepted_total += (uint64_t)a;
    for (int i = 0; i < a; i++)
        e->stats.spec_accepted_per_pos[i]++;
    return a;
}

/* n tokens out of `s` in one emission; finishes it at its target or the
 * context limit. */
static void emit_tokens(engine *e, seq *s, int n, int64_t now_us) {
    s->generated += n;
    s->step_tokens = n;
    s->emitted_us = now_us;
    e->stats.generation_tokens_total += (uint64_t)n;
    if (s->first_token_us < 0)
        s->first_token_us = now_us;
    if (s->generated >= s->target_tokens || s->prompt_tokens + s->generated >= e->p.max_model_len) {
        s->finish = s->generated >= s->target_tokens ? s->at_target : FINISH_LENGTH;
        list_remove(&e->running, s);
        retire(e, s);
        s->state = SEQ_FINISHED;
        s->finished_us = now_us;
    }
    e->emit(s, now_us, e->ud);
}

void engine_step_end(engine *e, int64_t now_us) {
    e->last_end_us = now_us;
    if (!e->in_step)
        return;
    e->in_step = 0;
    /* 4. Emissions. The callback may abort other sequences (their slots
     * become NULL) but never touches this array otherwise. */
    for (int i = 0; i < e->n_sched; i++) {
        seq *s = e->sched[i];
        if (!s)
            continue;
        e->sched[i] = NULL;
        int work = s->step_work;
        s->step_work = 0;
        if (s->step_decode) {
            int n = 1 + spec_accepted(e, s);
            s->computed += n;
            emit_tokens(e, s, n, now_us);
            continue;
        }
        s->computed += work;
        if (s->computed >= s->prefill_target) {
            if (s->generated == 0)
                e->stats.prompt_tokens_total += (uint64_t)s->prompt_tokens;
            emit_tokens(e, s, 1, now_us);
        }
    }
    e->n_sched = 0;
}

int engine_in_step(const engine *e) {
    return e->in_step;
}

engine_stats engine_get_stats(const engine *e) {
    engine_stats st = e->stats;
    st.running = e->running.count;
    st.waiting = e->waiting.count;
    st.total_blocks = e->p.kv_blocks;
    st.used_blocks = e->p.kv_blocks - kv_cache_free_blocks(e->kv);
    st.cached_blocks = kv_cache_named_blocks(e->kv);
    return st;
}

const char *engine_step_table_check(const engine_params *p) {
    if (p->n_step_points < 0 || p->n_step_points > ENGINE_STEP_POINTS)
        return "the step table has too many points";
    for (int i = 0; i < p->n_step_points; i++) {
        if (p->step_batch[i] < 1 || (i > 0 && p->step_batch[i] <= p->step_batch[i - 1]))
            return "the step table's batches must rise from 1";
        if (!(p->step_ms[i] >= 0) || !isfinite(p->step_ms[i]))
            return "the step table's costs must not be negative";
        if (p->step_ms[i] > ENGINE_TERM_MOST_MS)
            return "the step table's costs must be at most 3600000 ms (an hour)";
    }
    if (p->n_prefill_points < 0 || p->n_prefill_points > ENGINE_STEP_POINTS)
        return "the prefill table has too many points";
    for (int i = 0; i < p->n_prefill_points; i++) {
        if (p->prefill_tokens[i] < 1 || (i > 0 && p->prefill_tokens[i] <= p->prefill_tokens[i - 1]))
            return "the prefill table's prompt lengths must rise from 1";
        if (!(p->prefill_ms[i] >= (i > 0 ? p->prefill_ms[i - 1] : 0)) ||
            !isfinite(p->prefill_ms[i]))
            return "the prefill table's costs must not fall as the prompt grows";
        if (p->prefill_ms[i] > ENGINE_TERM_MOST_MS)
            return "the prefill table's costs must be at most 3600000 ms (an hour)";
    }
    return NULL;
}

/* A table of n points (xs rising from above 0) read at x: y0 at 0,
 * straight lines between points, and beyond the last one the slope of the
 * last two (of the line from (0, y0) when there is one point); never
 * below 0. */
static double table_at(const int *xs, const double *ys, int n, double y0, double x) {
    if (x <= 0)
        return y0;
    double xa = 0, ya = y0;
    int i = 0;
    while (i < n - 1 && x > xs[i]) {
        xa = xs[i];
        ya = ys[i];
        i++;
    }
    double xb = xs[i], yb = ys[i];
    if (x > xb && i > 0) {
        xa = xs[i - 1];
        ya = ys[i - 1];
    }
    double y = ya + (yb - ya) * (x - xa) / (xb - xa);
    return y < 0 ? 0 : y;
}

double engine_decode_ms(const engine_params *p, double b) {
    if (p->n_step_points == 0)
        return p->decode_base_ms + p->decode_per_seq_ms * b;
    return table_at(p->step_batch, p->step_ms, p->n_step_points, p->decode_base_ms, b);
}

double engine_prefill_ms(const engine_params *p, double n) {
    if (p->n_prefill_points == 0)
        return p->prefill_per_token_ms * n + p->prefill_ctx_per_1k_ms * n * (n - 1) / 2000.0;
    return table_at(p->prefill_tokens, p->prefill_ms, p->n_prefill_points, 0, n);
}

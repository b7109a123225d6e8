/* Engine tests on a virtual clock: step times by the formula, the
 * max_num_seqs cap, FIFO admission, chunked prefill, preemption exactly when
 * the KV blocks run out, abort, determinism and the gpu-7b calibration. */
#include "sim/engine.h"
#include "sim/profiles.h"
#include "test.h"

#include <string.h>

typedef struct emission {
    seq *s;
    int64_t t;
    int generated;
    int finished;
} emission;

typedef struct harness {
    emission ev[20000];
    int n;
} harness;

static void record(seq *s, int64_t now, void *ud) {
    harness *h = ud;
    if (h->n < 20000)
        h->ev[h->n++] = (emission){s, now, s->generated, s->state == SEQ_FINISHED};
}

static engine_params base_params(void) {
    return (engine_params){.max_num_seqs = 8,
                           .kv_blocks = 1000,
                           .block_size = 16,
                           .max_model_len = 2048,
                           .max_batched_tokens = 4096,
                           .decode_base_ms = 10,
                           .decode_per_seq_ms = 1,
                           .prefill_per_token_ms = 0.1,
                           .jitter = 0};
}

static engine *make(const engine_params *p, harness *h) {
    char err[128];
    memset(h, 0, sizeof *h);
    engine *e = engine_new(p, record, h, err, sizeof err);
    CHECK_MSG(e != NULL, "engine_new: %s", err);
    return e;
}

static void add(engine *e, seq *s, int prompt, int target, int64_t now) {
    memset(s, 0, sizeof *s);
    s->prompt_tokens = prompt;
    s->target_tokens = target;
    engine_add(e, s, now);
}

/* One step; returns its duration (us) or -1 when idle. */
static int64_t step(engine *e, int64_t *now) {
    int64_t d = engine_step_begin(e, *now);
    if (d < 0)
        return -1;
    *now += d;
    engine_step_end(e, *now);
    return d;
}

TEST(engine_step_time_follows_formula) {
    harness h;
    engine_params p = base_params();
    engine *e = make(&p, &h);
    seq a;
    int64_t now = 0;
    add(e, &a, 100, 3, now);
    /* Prefill of 100 tokens: 10 + 0.1 * 100 = 20 ms, first token at its end. */
    CHECK_INT(step(e, &now), 20000);
    CHECK_INT(h.n, 1);
    CHECK_INT(h.ev[0].t, 20000);
    /* Decode alone: 10 + 1 * 1 = 11 ms. */
    CHECK_INT(step(e, &now), 11000);
    seq b;
    add(e, &b, 50, 2, now);
    /* One decoding (a) + 50 prefill tokens (b): 10 + 1 + 5 = 16 ms. */
    CHECK_INT(step(e, &now), 16000);
    CHECK(a.state == SEQ_FINISHED);
    CHECK_INT(a.generated, 3);
    CHECK_INT(a.first_token_us, 20000);
    CHECK_INT(a.finished_us, 47000);
    /* b decodes alone: 11 ms, then it is done. */
    CHECK_INT(step(e, &now), 11000);
    CHECK(b.state == SEQ_FINISHED);
    CHECK(b.finish == FINISH_LENGTH);
    CHECK_INT(step(e, &now), -1);
    engine_stats st = engine_get_stats(e);
    CHECK_INT(st.generation_tokens_total, 5);
    CHECK_INT(st.prompt_tokens_total, 150);
    CHECK_INT(st.used_blocks, 0);
    engine_free(e);
}

TEST(engine_chunked_prefill_respects_token_budget) {
    harness h;
    engine_params p = base_params();
    p.max_batched_tokens = 64;
    engine *e = make(&p, &h);
    seq a;
    int64_t now = 0;
    add(e, &a, 100, 2, now);
    CHECK_INT(step(e, &now), 10000 + 6400); /* 64 tokens */
    CHECK_INT(h.n, 0);                      /* no token before prefill completes */
    CHECK_INT(step(e, &now), 10000 + 3600); /* the remaining 36 */
    CHECK_INT(h.n, 1);
    engine_free(e);
}

TEST(engine_never_runs_more_than_max_num_seqs) {
    harness h;
    engine_params p = base_params();
    p.max_num_seqs = 4;
    engine *e = make(&p, &h);
    static seq s[40];
    int64_t now = 0;
    for (int i = 0; i < 40; i++)
        add(e, &s[i], 20 + i, 5 + i % 7, now);
    int peak = 0, steps = 0;
    while (engine_step_begin(e, now) >= 0) {
        engine_stats st = engine_get_stats(e);
        if (st.running > peak)
            peak = st.running;
        CHECK(st.running <= 4);
        now += 1000;
        engine_step_end(e, now);
        steps++;
        CHECK(steps < 100000);
    }
    CHECK_INT(peak, 4);
    for (int i = 0; i < 40; i++)
        CHECK(s[i].state == SEQ_FINISHED);
    /* FIFO: requests were admitted in arrival order. */
    for (int i = 1; i < 40; i++)
        CHECK(s[i].admitted_us >= s[i - 1].admitted_us);
    engine_free(e);
}

TEST(engine_fifo_head_blocks_smaller_requests) {
    harness h;
    engine_params p = base_params();
    p.kv_blocks = 10;
    p.block_size = 16;
    p.max_model_len = 160;
    engine *e = make(&p, &h);
    seq big1, big2, small;
    int64_t now = 0;
    add(e, &big1, 100, 10, now); /* 7 blocks */
    add(e, &big2, 100, 10, now); /* 7 blocks: does not fit next to big1 */
    add(e, &small, 10, 2, now);  /* 1 block: would fit, but must not overtake */
    step(e, &now);
    CHECK(big1.state == SEQ_RUNNING);
    CHECK(big2.state == SEQ_WAITING);
    CHECK(small.state == SEQ_WAITING);
    engine_free(e);
}

/* Two sequences of prompt 4 in a 6-block cache of 4-token blocks: both grow
 * one block every four tokens, and the cache is exhausted exactly when the
 * older one needs its fourth block at its 10th token. */
TEST(engine_preempts_exactly_when_blocks_run_out) {
    harness h;
    engine_params p = base_params();
    p.kv_blocks = 6;
    p.block_size = 4;
    p.max_model_len = 24;
    engine *e = make(&p, &h);
    seq a, b;
    int64_t now = 0;
    add(e, &a, 4, 12, now);
    add(e, &b, 4, 12, now);
    for (int i = 1; i <= 9; i++) {
        step(e, &now);
        engine_stats st = engine_get_stats(e);
        CHECK_INT(st.preemptions_total, 0);
        if (i == 9) /* after step 9 every block is held */
            CHECK_INT(st.used_blocks, 6);
    }
    CHECK_INT(a.generated, 9);
    CHECK_INT(b.generated, 9);
    step(e, &now); /* step 10: a needs a 4th block; b, the newest, is preempted */
    engine_stats st = engine_get_stats(e);
    CHECK_INT(st.preemptions_total, 1);
    CHECK_INT(b.preemptions, 1);
    CHECK(b.state == SEQ_WAITING);
    CHECK_INT(a.generated, 10);
    CHECK_INT(st.used_blocks, 4);
    CHECK_INT(st.waiting, 1);
    step(e, &now);
    step(e, &now); /* a finishes at 12 tokens */
    CHECK(a.state == SEQ_FINISHED);
    /* b is re-admitted and recomputes its 4 + 9 tokens in one prefill,
     * emitting its 10th token at that step's end. */
    int64_t d = step(e, &now);
    CHECK_INT(d, 10000 + 1300);
    CHECK_INT(b.generated, 10);
    CHECK_INT(b.computed, 13);
    while (step(e, &now) >= 0)
        ;
    CHECK(b.state == SEQ_FINISHED);
    CHECK_INT(b.generated, 12);
    CHECK_INT(engine_get_stats(e).preemptions_total, 1);
    CHECK_INT(engine_get_stats(e).used_blocks, 0);
    engine_free(e);
}

TEST(engine_abort_frees_blocks_at_once) {
    harness h;
    engine_params p = base_params();
    engine *e = make(&p, &h);
    seq a, b;
    int64_t now = 0;
    add(e, &a, 100, 50, now);
    add(e, &b, 100, 50, now);
    step(e, &now);
    CHECK_INT(engine_get_stats(e).used_blocks, 14);
    engine_step_begin(e, now);
    engine_abort(e, &a, now); /* mid-step */
    CHECK_INT(engine_get_stats(e).used_blocks, 7);
    CHECK_INT(engine_get_stats(e).running, 1);
    now += 1000;
    engine_step_end(e, now);
    CHECK_INT(a.generated, 1); /* no token for the aborted one */
    CHECK_INT(b.generated, 2);
    CHECK(a.state == SEQ_ABORTED);
    engine_free(e);
}

TEST(engine_rejects_impossible_params) {
    engine_params p = base_params();
    p.kv_blocks = 10;
    p.block_size = 16;
    p.max_model_len = 1000;
    char err[128];
    CHECK(engine_new(&p, record, NULL, err, sizeof err) == NULL);
    CHECK(strstr(err, "max_model_len") != NULL);
    p = base_params();
    p.max_num_seqs = 0;
    CHECK(engine_new(&p, record, NULL, err, sizeof err) == NULL);
}

static void run_profile_batch1(const char *name, uint64_t seed, int64_t *gaps, int *n) {
    harness *h = calloc(1, sizeof *h);
    engine_params p = sim_profile_engine(sim_profile_find(name));
    p.seed = seed;
    engine *e = make(&p, h);
    seq a;
    int64_t now = 0;
    add(e, &a, 200, 257, now);
    while (step(e, &now) >= 0)
        ;
    *n = 0;
    for (int i = 1; i < h->n; i++)
        gaps[(*n)++] = h->ev[i].t - h->ev[i - 1].t;
    engine_free(e);
    free(h);
}

static int cmp64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

TEST(engine_gpu7b_batch1_tpot_near_8ms) {
    int64_t gaps[300];
    int n;
    run_profile_batch1("gpu-7b", 0, gaps, &n);
    CHECK_INT(n, 256);
    qsort(gaps, (size_t)n, sizeof *gaps, cmp64);
    double median_ms = (gaps[n / 2 - 1] + gaps[n / 2]) / 2000.0;
    CHECK_NEAR(median_ms, 8.0, 0.8);
    /* jitter is on: not every step is identical */
    CHECK(gaps[0] != gaps[n - 1]);
}

TEST(engine_cpu1b_batch1_tpot_near_30ms) {
    int64_t gaps[300];
    int n;
    run_profile_batch1("cpu-1b", 1, gaps, &n);
    qsort(gaps, (size_t)n, sizeof *gaps, cmp64);
    double median_ms = (gaps[n / 2 - 1] + gaps[n / 2]) / 2000.0;
    CHECK(median_ms >= 28.0 && median_ms <= 35.0);
}

TEST(engine_jitter_is_seeded) {
    int64_t g1[300], g2[300], g3[300];
    int n1, n2, n3;
    run_profile_batch1("gpu-7b", 42, g1, &n1);
    run_profile_batch1("gpu-7b", 42, g2, &n2);
    run_profile_batch1("gpu-7b", 43, g3, &n3);
    CHECK_INT(n1, n2);
    CHECK(memcmp(g1, g2, sizeof(int64_t) * (size_t)n1) == 0);
    CHECK(memcmp(g1, g3, sizeof(int64_t) * (size_t)n1) != 0);
}

TEST(engine_stops_at_max_model_len) {
    harness h;
    engine_params p = base_params();
    p.max_model_len = 64;
    p.kv_blocks = 4;
    engine *e = make(&p, &h);
    seq a;
    int64_t now = 0;
    add(e, &a, 60, 100, now);
    while (step(e, &now) >= 0)
        ;
    CHECK_INT(a.generated, 4);
    CHECK(a.finish == FINISH_LENGTH);
    engine_free(e);
}

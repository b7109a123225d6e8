/* live: counters and histograms, and a ring of the last ends for the
 * recent percentiles, behind a sequence lock: a writer (a client thread)
 * makes the sequence odd, updates, makes it even again; a reader copies
 * and keeps the copy only when the sequence was even and unchanged across
 * it, else copies again. The reader never holds anything a writer waits
 * for, so a watcher thread preempted in the middle of its copy (it runs
 * SCHED_IDLE) cannot delay the client; writers share a mutex among
 * themselves only (a run's client threads). A reader's buffers are made
 * before the run (live_reader_new): calibrate measured a schedule lag p99
 * of 6-8 ms at 1000 streams while a watcher, moved off the client's CPU,
 * took a mutex and mapped memory there and was preempted by the
 * simulator's real-time thread. The buckets are the ones vLLM's own
 * histograms use for the same figures (vllm:time_to_first_token_seconds,
 * vllm:time_per_output_token_seconds, vllm:e2e_request_latency_seconds),
 * so a dashboard can put the client's figure beside the server's; the
 * schedule lag gets its own, from 0.1 ms, since a healthy client keeps it
 * under a millisecond. */
#include "client/live.h"
#include "common/clock.h"
#include "common/util.h"

#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static const double ttft_b[] = {0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1,  0.25, 0.5,
                                0.75,  1.0,   2.5,  5.0,  7.5,  10.0, 20.0, 40.0, 80.0, 160.0};
static const double tpot_b[] = {0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3,
                                0.4,  0.5,   0.75, 1.0,   2.5, 5.0,  7.5, 10.0};
static const double e2e_b[] = {0.3,  0.5,  0.8,  1.0,  1.5,  2.0,   2.5,   5.0,   10.0,  15.0,
                               20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0};
static const double lag_b[] = {0.0001, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0};

typedef struct recent {
    int64_t end_us;
    float ttft_ms, tpot_ms, e2e_ms, tokens;
} recent;

struct live_stats {
    pthread_mutex_t lock; /* between writers only */
    atomic_uint seq;      /* odd while a writer is updating */
    live_snapshot s;
    int64_t t0_us;
    recent *ring;
    size_t ring_n; /* entries ever added; the ring holds the last LIVE_RECENT */
};

static void write_begin(live_stats *l) {
    pthread_mutex_lock(&l->lock);
    atomic_fetch_add_explicit(&l->seq, 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
}

static void write_end(live_stats *l) {
    atomic_thread_fence(memory_order_release);
    atomic_fetch_add_explicit(&l->seq, 1, memory_order_relaxed);
    pthread_mutex_unlock(&l->lock);
}

live_stats *live_new(size_t total) {
    live_stats *l = xcalloc(1, sizeof *l);
    pthread_mutex_init(&l->lock, NULL);
    l->s.total = total;
    const double *b[] = {ttft_b, tpot_b, e2e_b, lag_b};
    const int n[] = {sizeof ttft_b / sizeof *ttft_b, sizeof tpot_b / sizeof *tpot_b,
                     sizeof e2e_b / sizeof *e2e_b, sizeof lag_b / sizeof *lag_b};
    for (int k = 0; k < LIVE_N_HIST; k++) {
        l->s.hist[k].bounds = b[k];
        l->s.hist[k].n_bounds = n[k];
    }
    l->ring = xcalloc(LIVE_RECENT, sizeof *l->ring);
    return l;
}

void live_free(live_stats *l) {
    if (!l)
        return;
    pthread_mutex_destroy(&l->lock);
    free(l->ring);
    free(l);
}

void live_start(live_stats *l, int64_t t0_us) {
    write_begin(l);
    if (!l->s.started) {
        l->t0_us = t0_us;
        l->s.started = 1;
    }
    write_end(l);
}

static void observe(live_hist *h, double v_s) {
    if (isnan(v_s))
        return;
    int i = 0;
    while (i < h->n_bounds && v_s > h->bounds[i])
        i++;
    h->counts[i]++;
    h->sum += v_s;
    h->count++;
}

void live_set_total(live_stats *l, size_t total) {
    write_begin(l);
    l->s.total = total;
    write_end(l);
}

void live_sent(live_stats *l, double lag_ms) {
    write_begin(l);
    l->s.sent++;
    observe(&l->s.hist[LIVE_LAG], lag_ms / 1000);
    write_end(l);
}

void live_ended(live_stats *l, int error, int was_sent, double ttft_ms, double tpot_ms,
                double e2e_ms, int output_tokens, int64_t end_us) {
    write_begin(l);
    live_snapshot *s = &l->s;
    s->done++;
    s->failed += error != ERR_NONE;
    if (error >= 0 && error < ERR_COUNT)
        s->by_error[error]++;
    if (output_tokens > 0)
        s->output_tokens += output_tokens;
    if (was_sent && error == ERR_NONE) {
        observe(&s->hist[LIVE_TTFT], ttft_ms / 1000);
        observe(&s->hist[LIVE_TPOT], tpot_ms / 1000);
        observe(&s->hist[LIVE_E2E], e2e_ms / 1000);
    }
    l->ring[l->ring_n++ % LIVE_RECENT] = (recent){
        end_us, error == ERR_NONE ? (float)ttft_ms : NAN, error == ERR_NONE ? (float)tpot_ms : NAN,
        error == ERR_NONE ? (float)e2e_ms : NAN, output_tokens > 0 ? (float)output_tokens : 0};
    write_end(l);
}

static int float_cmp(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

/* The p-th percentile (linear) of the non-NaN values, sorted here; NAN when none. */
static double pct(float *v, size_t n, double p) {
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (!isnan(v[i]))
            v[k++] = v[i];
    if (!k)
        return NAN;
    qsort(v, k, sizeof *v, float_cmp);
    double h = (double)(k - 1) * p / 100;
    size_t lo = (size_t)h;
    return lo + 1 < k ? v[lo] + (h - (double)lo) * (v[lo + 1] - v[lo]) : v[lo];
}

#define RECENT_WINDOW_US 10000000

/* One consistent copy of the counters and of the last 10 s of ends into
 * out and copy (room for LIVE_RECENT): the number of ends copied. Copies
 * again while a writer was at work (writers are quick: a few counter
 * updates). */
static size_t read_consistent(live_stats *l, int64_t now_us, live_snapshot *out, int64_t *now,
                              recent *copy) {
    const size_t cap = LIVE_RECENT;
    int64_t since = mono_us();
    for (;;) {
        unsigned s1 = atomic_load_explicit(&l->seq, memory_order_acquire);
        if ((s1 & 1) && mono_us() - since < 1000000) { /* a writer is at work */
            sched_yield();
            continue;
        } /* (a writer never takes a second: past one, read what is there, never hang) */
        *out = l->s;
        *now = out->started ? now_us - l->t0_us : 0;
        size_t ring_n = l->ring_n, have = ring_n < cap ? ring_n : cap, n = 0;
        for (size_t i = 0; i < have; i++) { /* newest first, until one is too old */
            const recent *r = &l->ring[(ring_n - 1 - i) % cap];
            if (r->end_us < *now - RECENT_WINDOW_US)
                break;
            copy[n++] = *r;
        }
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&l->seq, memory_order_relaxed) == s1 ||
            mono_us() - since >= 1000000)
            return n;
    }
}

struct live_reader {
    live_stats *l;
    recent *copy; /* the last 10 s of the ring */
    float *v;     /* one figure of them, for its percentiles */
};

live_reader *live_reader_new(live_stats *l) {
    live_reader *r = xcalloc(1, sizeof *r);
    r->l = l;
    /* calloc's pages are touched here, before t=0, and never given back
     * while the run goes */
    r->copy = xmalloc(LIVE_RECENT * sizeof *r->copy);
    r->v = xmalloc(LIVE_RECENT * sizeof *r->v);
    memset(r->copy, 0, LIVE_RECENT * sizeof *r->copy);
    memset(r->v, 0, LIVE_RECENT * sizeof *r->v);
    return r;
}

void live_reader_free(live_reader *r) {
    if (!r)
        return;
    free(r->copy);
    free(r->v);
    free(r);
}

void live_read(live_reader *r, int64_t now_us, live_snapshot *out) {
    int64_t now;
    recent *copy = r->copy;
    float *v = r->v;
    size_t n = read_consistent(r->l, now_us, out, &now, copy);
    out->elapsed_s = now > 0 ? now / 1e6 : 0;
    out->recent_n = n;
    double tok = 0;
    const size_t off[] = {offsetof(recent, ttft_ms), offsetof(recent, tpot_ms),
                          offsetof(recent, e2e_ms)};
    const double p[] = {50, 95, 50, 50};
    const int field[] = {0, 0, 1, 2};
    double *dst[] = {&out->recent_ttft_p50_ms, &out->recent_ttft_p95_ms, &out->recent_tpot_p50_ms,
                     &out->recent_e2e_p50_ms};
    for (int m = 0; m < 4; m++) { /* pct() reorders v: fill it afresh each time */
        for (size_t i = 0; i < n; i++)
            memcpy(&v[i], (const char *)&copy[i] + off[field[m]], sizeof *v);
        *dst[m] = pct(v, n, p[m]);
    }
    for (size_t i = 0; i < n; i++)
        tok += copy[i].tokens;
    double window_s = fmin(out->elapsed_s, RECENT_WINDOW_US / 1e6);
    out->recent_tokens_per_s = window_s > 0 ? tok / window_s : 0;
}

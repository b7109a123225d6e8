/* live: counters and histograms under one mutex, and a ring of the last
 * ends for the recent percentiles. The buckets are the ones vLLM's own
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
    pthread_mutex_t lock;
    live_snapshot s;
    int64_t t0_us;
    recent *ring;
    size_t ring_n; /* entries ever added; the ring holds the last LIVE_RECENT */
};

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
    pthread_mutex_lock(&l->lock);
    if (!l->s.started) {
        l->t0_us = t0_us;
        l->s.started = 1;
    }
    pthread_mutex_unlock(&l->lock);
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

void live_sent(live_stats *l, double lag_ms) {
    pthread_mutex_lock(&l->lock);
    l->s.sent++;
    observe(&l->s.hist[LIVE_LAG], lag_ms / 1000);
    pthread_mutex_unlock(&l->lock);
}

void live_ended(live_stats *l, int error, int was_sent, double ttft_ms, double tpot_ms,
                double e2e_ms, int output_tokens, int64_t end_us) {
    pthread_mutex_lock(&l->lock);
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
    pthread_mutex_unlock(&l->lock);
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

void live_snapshot_take(live_stats *l, int64_t now_us, live_snapshot *out) {
    size_t cap = LIVE_RECENT, room = 1024, n = 0;
    recent *copy = xmalloc(room * sizeof *copy);
    pthread_mutex_lock(&l->lock);
    *out = l->s;
    int64_t now = l->s.started ? now_us - l->t0_us : 0;
    size_t have = l->ring_n < cap ? l->ring_n : cap;
    for (size_t i = 0; i < have; i++) { /* newest first, until one is too old */
        const recent *r = &l->ring[(l->ring_n - 1 - i) % cap];
        if (r->end_us < now - RECENT_WINDOW_US)
            break;
        if (n == room) /* rarely: grown under the lock, by doubling */
            copy = xrealloc(copy, (room *= 2) * sizeof *copy);
        copy[n++] = *r;
    }
    pthread_mutex_unlock(&l->lock);
    out->elapsed_s = now > 0 ? now / 1e6 : 0;
    out->recent_n = n;
    float *v = xmalloc((n ? n : 1) * sizeof *v);
    double tok = 0;
    const size_t off[] = {offsetof(recent, ttft_ms), offsetof(recent, tpot_ms),
                          offsetof(recent, e2e_ms)};
    double *dst[] = {&out->recent_ttft_p50_ms, &out->recent_tpot_p50_ms, &out->recent_e2e_p50_ms};
    for (int m = 0; m < 3; m++) {
        for (size_t i = 0; i < n; i++)
            memcpy(&v[i], (const char *)&copy[i] + off[m], sizeof *v);
        *dst[m] = pct(v, n, 50);
        if (m == 0) {
            out->recent_ttft_p95_ms = pct(v, n, 95);
        }
    }
    for (size_t i = 0; i < n; i++)
        tok += copy[i].tokens;
    double window_s = fmin(out->elapsed_s, RECENT_WINDOW_US / 1e6);
    out->recent_tokens_per_s = window_s > 0 ? tok / window_s : 0;
    free(v);
    free(copy);
}

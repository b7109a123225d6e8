/* live: what a run has done so far, for whoever watches it while it goes
 * (the progress display, the Prometheus endpoint). The client's threads
 * add each request as it is sent and as it ends (a few counter updates); a
 * watcher takes a snapshot from its own thread without ever making a
 * client thread wait for it (live.c says how), so drawing or serving costs
 * the client's loop nothing but those updates. Recent figures come from
 * the last LIVE_RECENT ends (a ring), filtered to the last 10 seconds at
 * the snapshot. Any number of watchers may read at once, each with its
 * own reader. */
#ifndef SERVELAB_LIVE_H
#define SERVELAB_LIVE_H

#include "model/record.h"

#include <stddef.h>
#include <stdint.h>

#define LIVE_RECENT 65536
#define LIVE_BUCKETS 24

typedef struct live_stats live_stats;

/* A histogram as Prometheus keeps one: upper bounds (seconds, ascending,
 * +Inf implied) and counts per bucket (not cumulative), sum and count. */
typedef struct live_hist {
    const double *bounds;
    int n_bounds;
    uint64_t counts[LIVE_BUCKETS + 1];
    double sum;
    uint64_t count;
} live_hist;

enum { LIVE_TTFT, LIVE_TPOT, LIVE_E2E, LIVE_LAG, LIVE_N_HIST };

typedef struct live_snapshot {
    size_t total;                /* rows the run will write */
    size_t sent, done, failed;   /* requests: sent, ended (failed among them) */
    size_t by_error[ERR_COUNT];  /* ended, by error class (ERR_NONE: succeeded) */
    double output_tokens;        /* of every ended request */
    double elapsed_s;            /* since t=0 (0 before it) */
    int started;                 /* t=0 has come */
    live_hist hist[LIVE_N_HIST]; /* ttft, tpot, e2e (from sent), schedule lag */
    /* the last 10 s of ends */
    size_t recent_n;
    double recent_ttft_p50_ms, recent_ttft_p95_ms, recent_tpot_p50_ms; /* NAN: none */
    double recent_e2e_p50_ms;
    double recent_tokens_per_s; /* output tokens of those ends / the window */
} live_snapshot;

live_stats *live_new(size_t total);
void live_free(live_stats *l);
/* t=0 on the monotonic clock (µs); the first call sets it (threads share one). */
void live_start(live_stats *l, int64_t t0_us);
/* The rows the run will write, when known only later than live_new. */
void live_set_total(live_stats *l, size_t total);
/* A request went out, lag_ms after it was due (NAN: unknown). */
void live_sent(live_stats *l, double lag_ms);
/* A request ended: error (ERR_*), its times from sending (ms, NAN when
 * unknown), its output tokens (< 0: unknown) and its end (µs since t=0). */
void live_ended(live_stats *l, int error, int was_sent, double ttft_ms, double tpot_ms,
                double e2e_ms, int output_tokens, int64_t end_us);
/* A watcher's means of reading: its buffers are made (and their pages
 * touched) here, before the run, so that reading while the run goes never
 * maps or unmaps memory (which takes a lock the client's page faults wait
 * on). One per watching thread. */
typedef struct live_reader live_reader;
live_reader *live_reader_new(live_stats *l);
void live_reader_free(live_reader *r);
/* Everything so far; now_us on the monotonic clock. */
void live_read(live_reader *r, int64_t now_us, live_snapshot *s);

#endif

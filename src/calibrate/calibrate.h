/* calibrate: measures the measurer on this machine. For rising numbers of
 * concurrent streams and chunk rates it runs the simulator and the client
 * as two processes (as a user would), then compares what the client
 * recorded with the simulator's own per-token ground truth: schedule lag,
 * TTFT error (after aligning the two clocks by the median offset),
 * inter-token error (gap against gap, no alignment needed), CPU and peak
 * memory of both. A level's arrivals are spread evenly over a second, or
 * all start together (a burst: --rate inf --concurrency STREAMS, two
 * requests a stream), as most people benchmark. `servelab calibrate`
 * prints the table and one sentence (verdict.c); bench/client_capacity.sh
 * and bench/burst_accuracy.sh repeat it and report medians. */
#ifndef SERVELAB_CALIBRATE_H
#define SERVELAB_CALIBRATE_H

#include <jansson.h>
#include <stdio.h>

typedef struct calib_level {
    int streams;    /* concurrent streams */
    double step_ms; /* the simulator's step: each stream gets a chunk per step */
    int burst;      /* 1: STREAMS started together, rounds x STREAMS requests in all */
    int rounds;     /* requests each stream runs back to back (1 when spread) */
} calib_level;

/* The requests each stream of a burst runs back to back unless
 * `calibrate --burst-rounds` says otherwise. */
#define CALIB_BURST_ROUNDS 2

/* Requests a level's client sends: streams x rounds (one a stream when
 * spread; CALIB_BURST_ROUNDS, or --burst-rounds, when started together). */
int calibrate_level_requests(const calib_level *lv);

typedef struct calib_result {
    calib_level level;
    double seconds;               /* how long each stream lasts */
    double offered_chunks_per_s;  /* streams / step */
    double achieved_chunks_per_s; /* chunk rate while every stream was open */
    size_t requests, failed, chunks;
    size_t joined; /* requests whose first chunk was found in the simulator's trace */
    double lag_p50_ms, lag_p99_ms;
    double ttft_err_p50_ms, ttft_err_p99_ms;
    double itl_err_p50_ms, itl_err_p99_ms;
    double client_cpu_pct, client_rss_mib, bytes_per_stream;
    double sim_cpu_pct, sim_rss_mib;
    int sim_threads; /* the simulator's I/O threads: 100% of a CPU each at most */
    int within_1ms;
    int runs; /* repetitions behind every figure (each the median over them) */
} calib_result;

typedef struct calib_opts {
    const char *self; /* the servelab binary */
    const char *work; /* scratch directory */
    double seconds;   /* per stream (default 2) */
    const calib_level *levels;
    int n_levels;
    int repeat;  /* runs of each level; every figure is the median over them */
    int threads; /* client threads (servelab run --threads) */
    int quiet;
    /* Placement, decided by calibrate_placement(): the simulator's CPU and
     * the client's (NULL: not pinned), and SCHED_FIFO for both. */
    const char *sim_cpus, *client_cpus;
    int realtime;
    const char *http_client; /* run --http-client; NULL: its default */
    int sim_threads;         /* sim --threads (0/1: one) */
    int client_progress;     /* the client prints its progress (plain, twice a second) */
} calib_opts;

/* Pins the simulator to this process's last CPU and the client to the
 * others when there are at least threads + 1 of them and the simulator runs
 * one thread (a client woken on the
 * server's core waits for it: milliseconds of error that are neither's).
 * Fills the two lists (caller's buffers of 64 bytes) or leaves them NULL. */
void calibrate_placement(calib_opts *o, char *sim_buf, char *client_buf);

/* Runs every level; results[] has n_levels entries. Returns 0, or -1 with a
 * message when a level could not run at all. */
int calibrate_run(const calib_opts *o, calib_result *results, char *err, int errlen);
void calibrate_print_table(FILE *f, const calib_result *r, int n);
json_t *calibrate_json(const calib_result *r, int n);

#endif

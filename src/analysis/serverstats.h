/* serverstats: what the server and GPU did during a run, from samples of
 * /metrics and NVML taken while it ran: per-run deltas of the counters
 * (preemptions, prompt and generation tokens, prefix-cache queries and
 * hits, llama.cpp's decode steps, its busy slots per step, its speculative
 * drafts and accepted tokens), peaks of queue depth and KV use, the share of TTFT the server itself
 * spent queueing (from vLLM's queue-time and TTFT histogram sums), and GPU energy per output token.
 * `servelab run` computes these from its live samples, `report` from server_metrics.csv and
 * gpu.csv: the same function either way. */
#ifndef SERVELAB_SERVERSTATS_H
#define SERVELAB_SERVERSTATS_H

#include "common/series.h"

#include <jansson.h>
#include <stddef.h>

typedef struct server_stats {
    int has_metrics, has_gpu;
    double preemptions, prompt_tokens, generation_tokens; /* deltas over the run */
    double peak_running, peak_waiting, peak_kv_usage;     /* kv in [0,1] */
    double queue_time_s, ttft_time_s;                     /* deltas of the two histogram sums */
    double queue_share_of_ttft;       /* queue_time_s / ttft_time_s; NAN unknown */
    double cache_queries, cache_hits; /* deltas of vLLM's prefix-cache counters (tokens) */
    double cache_hit_rate;            /* cache_hits / cache_queries; NAN unknown */
    double decode_steps;              /* llama.cpp: delta of n_decode_total */
    double busy_slot_steps;           /* and of the slots busy in them (the gauge
                                         n_busy_slots_per_decode is their ratio since start) */
    double busy_per_decode;           /* busy_slot_steps / decode_steps: the mean batch */
    double spec_drafts, spec_draft_tokens, spec_accepted; /* speculative decoding deltas */
    double spec_acceptance; /* spec_accepted / spec_draft_tokens; NAN unknown */
    double gpu_energy_j;    /* all GPUs, trapezoid over power samples */
    double gpu_util_mean_pct;
} server_stats;

/* `gpu` holds series named "gpuN power_w" and "gpuN util_pct". */
void server_stats_compute(const series_set *metrics, const series_set *gpu, server_stats *out);
/* Pool repetitions: deltas and energy add up, peaks take the maximum. */
void server_stats_pool(server_stats *into, const server_stats *add);
/* The run table's line about the server ("peak 12 running, 3 waiting, KV
 * 64%, 0 preemptions, 40% of TTFT queued"), of the figures the server gave:
 * one it did not give is left out, never printed as nan. Returns its
 * length (0: the server gave none). */
size_t server_stats_line(const server_stats *s, char *buf, size_t n);
/* The "server" object of summary.json; energy per token needs the run's
 * output tokens. */
json_t *server_stats_json(const server_stats *s, double output_tokens);

#endif

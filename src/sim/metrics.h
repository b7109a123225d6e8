/* metrics: the simulator's Prometheus exposition, with vLLM's metric names,
 * fed from the engine's counters and from per-request latencies. Counters
 * only grow; histograms are cumulative with _bucket/_sum/_count. */
#ifndef SERVELAB_SIM_METRICS_H
#define SERVELAB_SIM_METRICS_H

#include "sim/engine.h"

#include <event2/buffer.h>
#include <stdint.h>

#define METRICS_MAX_BUCKETS 24

typedef struct histogram {
    int n_bounds;
    double bounds[METRICS_MAX_BUCKETS]; /* upper bounds, seconds; +Inf implied */
    uint64_t counts[METRICS_MAX_BUCKETS + 1];
    double sum;
    uint64_t count;
} histogram;

/* The KV cache's configuration, exported as vLLM's vllm:cache_config_info
 * (an info gauge of value 1 whose labels carry the settings). */
typedef struct sim_cache_config {
    int block_size;
    int num_gpu_blocks;
    int enable_prefix_caching;
    double gpu_memory_utilization; /* 0: the block count was given, not computed */
} sim_cache_config;

typedef struct sim_metrics {
    histogram ttft, queue_time, e2e;
    uint64_t requests_success_total;
    uint64_t requests_aborted_total;
    sim_cache_config cache;
    int spec_tokens;   /* speculative decoding's draft length: its counters when > 0 */
    int64_t started_s; /* the server's start (Unix seconds): the counters' _created */
    /* how long the engine's steps ran behind the model, in all: a step that
     * ended later than its slack (the loop held up by a busy host or by its
     * own writes) and a step held back for the writes (engine_clock.c) */
    uint64_t step_late_us;
} sim_metrics;

void sim_metrics_init(sim_metrics *m);
void histogram_observe(histogram *h, double seconds);
/* Append the full /metrics page to `out`. */
void sim_metrics_render(const sim_metrics *m, const engine_stats *st, const char *model,
                        struct evbuffer *out);

#endif

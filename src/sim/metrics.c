/* metrics: Prometheus text format for the simulator's /metrics, using the
 * metric names vLLM exports (gauges for queue state and KV use, counters for
 * tokens, preemptions and prefix-cache look-ups, histograms for TTFT, queue
 * time and end-to-end latency, and the cache_config_info gauge). vLLM
 * declares its counters without the _total suffix and prometheus_client
 * adds it, so the names here carry it. Bucket bounds follow vLLM's
 * defaults, trimmed. */
#include "sim/metrics.h"

#include <stdio.h>
#include <string.h>

static const double ttft_bounds[] = {0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1,  0.25, 0.5,
                                     0.75,  1.0,   2.5,  5.0,  7.5,  10.0, 20.0, 40.0, 80.0, 160.0};
static const double latency_bounds[] = {0.01, 0.025, 0.05,  0.1,   0.3,   0.5,  1.0,
                                        2.5,  5.0,   10.0,  15.0,  20.0,  30.0, 40.0,
                                        50.0, 60.0,  120.0, 240.0, 480.0, 960.0};

static void hist_init(histogram *h, const double *bounds, int n) {
    memset(h, 0, sizeof *h);
    h->n_bounds = n;
    memcpy(h->bounds, bounds, (size_t)n * sizeof *bounds);
}

void sim_metrics_init(sim_metrics *m) {
    memset(m, 0, sizeof *m);
    int nt = (int)(sizeof ttft_bounds / sizeof *ttft_bounds);
    int nl = (int)(sizeof latency_bounds / sizeof *latency_bounds);
    hist_init(&m->ttft, ttft_bounds, nt);
    hist_init(&m->queue_time, latency_bounds, nl);
    hist_init(&m->e2e, latency_bounds, nl);
}

void histogram_observe(histogram *h, double seconds) {
    int i = 0;
    while (i < h->n_bounds && seconds > h->bounds[i])
        i++;
    h->counts[i]++;
    h->sum += seconds;
    h->count++;
}

static void header(struct evbuffer *out, const char *name, const char *type, const char *help) {
    evbuffer_add_printf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void sample(struct evbuffer *out, const char *name, const char *model, double v) {
    evbuffer_add_printf(out, "%s{model_name=\"%s\"} %.17g\n", name, model, v);
}

static void render_hist(struct evbuffer *out, const char *name, const char *help,
                        const histogram *h, const char *model) {
    header(out, name, "histogram", help);
    uint64_t cum = 0;
    for (int i = 0; i < h->n_bounds; i++) {
        cum += h->counts[i];
        evbuffer_add_printf(out, "%s_bucket{le=\"%g\",model_name=\"%s\"} %llu\n", name,
                            h->bounds[i], model, (unsigned long long)cum);
    }
    cum += h->counts[h->n_bounds];
    evbuffer_add_printf(out, "%s_bucket{le=\"+Inf\",model_name=\"%s\"} %llu\n", name, model,
                        (unsigned long long)cum);
    evbuffer_add_printf(out, "%s_sum{model_name=\"%s\"} %.9g\n", name, model, h->sum);
    evbuffer_add_printf(out, "%s_count{model_name=\"%s\"} %llu\n", name, model,
                        (unsigned long long)h->count);
}

/* A label value as Prometheus spells it: backslash, quote and newline
 * escaped. */
static void escape_label(const char *in, char *out, size_t cap) {
    size_t k = 0;
    for (; *in && k + 3 < cap; in++) {
        if (*in == '\\' || *in == '"') {
            out[k++] = '\\';
            out[k++] = *in;
        } else if (*in == '\n') {
            out[k++] = '\\';
            out[k++] = 'n';
        } else {
            out[k++] = *in;
        }
    }
    out[k] = 0;
}

/* vLLM writes every CacheConfig field as a label; these are the ones the
 * simulator has (gpu_memory_utilization only when the blocks came from it). */
static void render_cache_config(struct evbuffer *out, const sim_cache_config *c,
                                const char *model) {
    header(out, "vllm:cache_config_info", "gauge", "Information of the LLMEngine CacheConfig");
    evbuffer_add_printf(out,
                        "vllm:cache_config_info{block_size=\"%d\",enable_prefix_caching=\"%s\",",
                        c->block_size, c->enable_prefix_caching ? "True" : "False");
    if (c->gpu_memory_utilization > 0)
        evbuffer_add_printf(out, "gpu_memory_utilization=\"%g\",", c->gpu_memory_utilization);
    evbuffer_add_printf(out, "model_name=\"%s\",num_gpu_blocks=\"%d\"} 1\n", model,
                        c->num_gpu_blocks);
}

/* A counter as prometheus_client writes it: NAME_total and NAME_created
 * (the Unix time it was made: what a reader must not take for a count). */
static void counter(struct evbuffer *out, const char *name, const char *labels, double v,
                    int64_t created) {
    evbuffer_add_printf(out, "%s_total{%s} %.17g\n%s_created{%s} %lld\n", name, labels, v, name,
                        labels, (long long)created);
}

/* vLLM's speculative-decoding counters (vllm/v1/spec_decode/metrics.py):
 * drafts, draft tokens, accepted tokens, and accepted by draft position. */
static void render_spec(struct evbuffer *out, const sim_metrics *m, const engine_stats *st,
                        const char *model) {
    char labels[600];
    snprintf(labels, sizeof labels, "model_name=\"%s\"", model);
    static const char *const names[3] = {"vllm:spec_decode_num_drafts",
                                         "vllm:spec_decode_num_draft_tokens",
                                         "vllm:spec_decode_num_accepted_tokens"};
    static const char *const helps[3] = {"Number of spec decoding drafts.",
                                         "Number of draft tokens.", "Number of accepted tokens."};
    const uint64_t v[3] = {st->spec_drafts_total, st->spec_draft_tokens_total,
                           st->spec_accepted_total};
    for (int i = 0; i < 3; i++) {
        header(out, names[i], "counter", helps[i]);
        counter(out, names[i], labels, (double)v[i], m->started_s);
    }
    const char *per = "vllm:spec_decode_num_accepted_tokens_per_pos";
    header(out, per, "counter", "Accepted tokens per draft position.");
    for (int k = 0; k < m->spec_tokens && k < ENGINE_SPEC_MAX; k++) {
        snprintf(labels, sizeof labels, "model_name=\"%s\",position=\"%d\"", model, k);
        counter(out, per, labels, (double)st->spec_accepted_per_pos[k], m->started_s);
    }
}

void sim_metrics_render(const sim_metrics *m, const engine_stats *st, const char *model_raw,
                        struct evbuffer *out) {
    char model[512];
    escape_label(model_raw, model, sizeof model);
    header(out, "vllm:num_requests_running", "gauge",
           "Number of requests in model execution batches.");
    sample(out, "vllm:num_requests_running", model, st->running);
    header(out, "vllm:num_requests_waiting", "gauge",
           "Number of requests waiting to be processed.");
    sample(out, "vllm:num_requests_waiting", model, st->waiting);
    header(out, "vllm:kv_cache_usage_perc", "gauge", "KV-cache usage. 1 means 100 percent usage.");
    sample(out, "vllm:kv_cache_usage_perc", model,
           st->total_blocks ? (double)st->used_blocks / st->total_blocks : 0.0);
    header(out, "vllm:num_preemptions_total", "counter", "Cumulative number of preemptions.");
    sample(out, "vllm:num_preemptions_total", model, (double)st->preemptions_total);
    header(out, "vllm:prompt_tokens_total", "counter", "Number of prefill tokens processed.");
    sample(out, "vllm:prompt_tokens_total", model, (double)st->prompt_tokens_total);
    header(out, "vllm:generation_tokens_total", "counter",
           "Number of generation tokens processed.");
    sample(out, "vllm:generation_tokens_total", model, (double)st->generation_tokens_total);
    header(out, "vllm:prefix_cache_queries_total", "counter",
           "Prefix cache queries, in terms of number of queried tokens.");
    sample(out, "vllm:prefix_cache_queries_total", model, (double)st->prefix_cache_queries_total);
    header(out, "vllm:prefix_cache_hits_total", "counter",
           "Prefix cache hits, in terms of number of cached tokens.");
    sample(out, "vllm:prefix_cache_hits_total", model, (double)st->prefix_cache_hits_total);
    render_cache_config(out, &m->cache, model);
    header(out, "vllm:request_success_total", "counter",
           "Count of successfully processed requests.");
    sample(out, "vllm:request_success_total", model, (double)m->requests_success_total);
    header(out, "vllm:num_requests_aborted_total", "counter",
           "Requests aborted because the client went away.");
    sample(out, "vllm:num_requests_aborted_total", model, (double)m->requests_aborted_total);
    if (m->spec_tokens > 0)
        render_spec(out, m, st, model);
    header(out, "servelab_sim_step_late_seconds_total", "counter",
           "Time the simulator's engine steps ran behind its model (its loop held up by a busy "
           "host or by its writes); 0 while it keeps the model's pace.");
    sample(out, "servelab_sim_step_late_seconds_total", model, m->step_late_us / 1e6);
    render_hist(out, "vllm:time_to_first_token_seconds",
                "Histogram of time to first token in seconds.", &m->ttft, model);
    render_hist(out, "vllm:request_queue_time_seconds",
                "Histogram of time spent in WAITING phase for request.", &m->queue_time, model);
    render_hist(out, "vllm:e2e_request_latency_seconds",
                "Histogram of end to end request latency in seconds.", &m->e2e, model);
}

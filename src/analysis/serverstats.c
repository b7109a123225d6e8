/* serverstats: the deltas, peaks and queueing share of a run (see serverstats.h). */
#include "analysis/serverstats.h"
#include "common/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The first of the NULL-ended names the server has: servers name the same
 * figure differently (vLLM's gauges were renamed; llama.cpp has its own). */
static const series *first_of(const series_set *m, const char *const *names) {
    for (; *names; names++) {
        const series *s = series_find(m, *names);
        if (s && s->n > 0)
            return s;
    }
    return NULL;
}

static double delta(const series_set *m, const char *const *names) {
    const series *s = first_of(m, names);
    return s ? s->v[s->n - 1] - s->v[0] : NAN;
}

static double peak(const series_set *m, const char *const *names) {
    const series *s = first_of(m, names);
    if (!s)
        return NAN;
    double p = s->v[0];
    for (size_t i = 1; i < s->n; i++)
        p = fmax(p, s->v[i]);
    return p;
}

#define NAMES(...) ((const char *const[]){__VA_ARGS__, NULL})

/* llama.cpp's n_busy_slots_per_decode is busy slots / decode steps since
 * the server started, both cumulative: the run's busy slot-steps are the
 * difference of gauge x steps at its last and first samples (taken by the
 * same scrapes, so at the same times). */
static double busy_slot_steps(const series_set *m) {
    const series *g = series_find(m, "llamacpp:n_busy_slots_per_decode");
    const series *d = series_find(m, "llamacpp:n_decode_total");
    if (!g || !d || g->n < 1 || g->n != d->n || g->t_ms[0] != d->t_ms[0] ||
        g->t_ms[g->n - 1] != d->t_ms[d->n - 1])
        return NAN;
    return g->v[g->n - 1] * d->v[d->n - 1] - g->v[0] * d->v[0];
}

void server_stats_compute(const series_set *metrics, const series_set *gpu, server_stats *o) {
    memset(o, 0, sizeof *o);
    o->has_metrics = metrics && metrics->n > 0;
    o->has_gpu = gpu && gpu->n > 0;
    o->queue_share_of_ttft = o->gpu_energy_j = o->gpu_util_mean_pct = NAN;
    o->queue_time_s = o->ttft_time_s = NAN;
    o->cache_queries = o->cache_hits = o->cache_hit_rate = NAN;
    o->preemptions = o->prompt_tokens = o->generation_tokens = NAN;
    o->peak_running = o->peak_waiting = o->peak_kv_usage = NAN;
    o->decode_steps = o->busy_slot_steps = o->busy_per_decode = NAN;
    o->spec_drafts = o->spec_draft_tokens = o->spec_accepted = o->spec_acceptance = NAN;
    if (o->has_metrics) {
        o->decode_steps = delta(metrics, NAMES("llamacpp:n_decode_total"));
        o->busy_slot_steps = busy_slot_steps(metrics);
        if (isfinite(o->busy_slot_steps) && o->decode_steps > 0)
            o->busy_per_decode = o->busy_slot_steps / o->decode_steps;
        o->spec_drafts = delta(metrics, NAMES("llamacpp:spec_decode_num_drafts_total"));
        o->spec_draft_tokens = delta(metrics, NAMES("llamacpp:spec_decode_num_draft_tokens_total"));
        o->spec_accepted = delta(metrics, NAMES("llamacpp:spec_decode_num_accepted_tokens_total"));
        if (isfinite(o->spec_accepted) && o->spec_draft_tokens > 0)
            o->spec_acceptance = o->spec_accepted / o->spec_draft_tokens;
        o->preemptions = delta(metrics, NAMES("vllm:num_preemptions_total"));
        o->prompt_tokens =
            delta(metrics, NAMES("vllm:prompt_tokens_total", "llamacpp:prompt_tokens_total"));
        o->generation_tokens = delta(
            metrics, NAMES("vllm:generation_tokens_total", "llamacpp:tokens_predicted_total"));
        o->peak_running =
            peak(metrics, NAMES("vllm:num_requests_running", "llamacpp:requests_processing"));
        o->peak_waiting =
            peak(metrics, NAMES("vllm:num_requests_waiting", "llamacpp:requests_deferred"));
        o->peak_kv_usage =
            peak(metrics, NAMES("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc",
                                "llamacpp:kv_cache_usage_ratio"));
        o->queue_time_s = delta(metrics, NAMES("vllm:request_queue_time_seconds_sum"));
        o->ttft_time_s = delta(metrics, NAMES("vllm:time_to_first_token_seconds_sum"));
        if (isfinite(o->queue_time_s) && isfinite(o->ttft_time_s) && o->ttft_time_s > 0)
            o->queue_share_of_ttft = o->queue_time_s / o->ttft_time_s;
        o->cache_queries = delta(metrics, NAMES("vllm:prefix_cache_queries_total"));
        o->cache_hits = delta(metrics, NAMES("vllm:prefix_cache_hits_total"));
        if (isfinite(o->cache_hits) && o->cache_queries > 0)
            o->cache_hit_rate = o->cache_hits / o->cache_queries;
    }
    if (o->has_gpu) {
        double energy = 0, util = 0;
        int have_power = 0, n_util = 0;
        for (int i = 0; i < gpu->n; i++) {
            const series *s = &gpu->s[i];
            if (strstr(s->name, "power_w")) {
                for (size_t k = 1; k < s->n; k++)
                    energy += (s->v[k] + s->v[k - 1]) / 2 * (s->t_ms[k] - s->t_ms[k - 1]) / 1000;
                have_power = 1;
            } else if (strstr(s->name, "util_pct")) {
                for (size_t k = 0; k < s->n; k++, n_util++)
                    util += s->v[k];
            }
        }
        if (have_power)
            o->gpu_energy_j = energy;
        if (n_util)
            o->gpu_util_mean_pct = util / n_util;
    }
}

/* NAN-aware sum and max: unknown plus known is the known part. */
static double add_nan(double a, double b) {
    return isnan(a) ? b : isnan(b) ? a : a + b;
}

static double max_nan(double a, double b) {
    return isnan(a) ? b : isnan(b) ? a : fmax(a, b);
}

void server_stats_pool(server_stats *into, const server_stats *add) {
    into->has_metrics |= add->has_metrics;
    into->has_gpu |= add->has_gpu;
    into->preemptions = add_nan(into->preemptions, add->preemptions);
    into->prompt_tokens = add_nan(into->prompt_tokens, add->prompt_tokens);
    into->generation_tokens = add_nan(into->generation_tokens, add->generation_tokens);
    into->peak_running = max_nan(into->peak_running, add->peak_running);
    into->peak_waiting = max_nan(into->peak_waiting, add->peak_waiting);
    into->peak_kv_usage = max_nan(into->peak_kv_usage, add->peak_kv_usage);
    into->queue_time_s = add_nan(into->queue_time_s, add->queue_time_s);
    into->ttft_time_s = add_nan(into->ttft_time_s, add->ttft_time_s);
    into->queue_share_of_ttft = isfinite(into->queue_time_s) && into->ttft_time_s > 0
                                    ? into->queue_time_s / into->ttft_time_s
                                    : NAN;
    into->cache_queries = add_nan(into->cache_queries, add->cache_queries);
    into->cache_hits = add_nan(into->cache_hits, add->cache_hits);
    into->cache_hit_rate = isfinite(into->cache_hits) && into->cache_queries > 0
                               ? into->cache_hits / into->cache_queries
                               : NAN;
    into->decode_steps = add_nan(into->decode_steps, add->decode_steps);
    into->busy_slot_steps = add_nan(into->busy_slot_steps, add->busy_slot_steps);
    into->busy_per_decode = isfinite(into->busy_slot_steps) && into->decode_steps > 0
                                ? into->busy_slot_steps / into->decode_steps
                                : NAN;
    into->spec_drafts = add_nan(into->spec_drafts, add->spec_drafts);
    into->spec_draft_tokens = add_nan(into->spec_draft_tokens, add->spec_draft_tokens);
    into->spec_accepted = add_nan(into->spec_accepted, add->spec_accepted);
    into->spec_acceptance = isfinite(into->spec_accepted) && into->spec_draft_tokens > 0
                                ? into->spec_accepted / into->spec_draft_tokens
                                : NAN;
    into->gpu_energy_j = add_nan(into->gpu_energy_j, add->gpu_energy_j);
    into->gpu_util_mean_pct = max_nan(into->gpu_util_mean_pct, add->gpu_util_mean_pct);
}

static json_t *jnum(double v) {
    return isfinite(v) ? json_real(v) : json_null();
}

json_t *server_stats_json(const server_stats *s, double output_tokens) {
    double per_tok =
        isfinite(s->gpu_energy_j) && output_tokens > 0 ? s->gpu_energy_j / output_tokens : NAN;
    json_t *j = json_pack(
        "{s:b,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:b,s:o,s:o,s:o}", "metrics_sampled", s->has_metrics,
        "preemptions", jnum(s->preemptions), "prompt_tokens", jnum(s->prompt_tokens),
        "generation_tokens", jnum(s->generation_tokens), "peak_running", jnum(s->peak_running),
        "peak_waiting", jnum(s->peak_waiting), "peak_kv_cache_usage", jnum(s->peak_kv_usage),
        "queue_share_of_ttft", jnum(s->queue_share_of_ttft), "gpu_sampled", s->has_gpu,
        "gpu_energy_j", jnum(s->gpu_energy_j), "gpu_energy_j_per_output_token", jnum(per_tok),
        "gpu_util_mean_pct", jnum(s->gpu_util_mean_pct));
    if (isfinite(s->cache_queries)) { /* a server that counts its prefix cache */
        json_object_set_new(j, "prefix_cache_queries", jnum(s->cache_queries));
        json_object_set_new(j, "prefix_cache_hits", jnum(s->cache_hits));
        json_object_set_new(j, "prefix_cache_hit_rate", jnum(s->cache_hit_rate));
    }
    if (isfinite(s->decode_steps)) { /* llama.cpp's decode steps */
        json_object_set_new(j, "decode_steps", jnum(s->decode_steps));
        json_object_set_new(j, "busy_slots_per_decode", jnum(s->busy_per_decode));
    }
    if (isfinite(s->spec_drafts)) { /* a server that counts its speculative drafts */
        json_object_set_new(j, "spec_drafts", jnum(s->spec_drafts));
        json_object_set_new(j, "spec_draft_tokens", jnum(s->spec_draft_tokens));
        json_object_set_new(j, "spec_accepted_tokens", jnum(s->spec_accepted));
        json_object_set_new(j, "spec_acceptance_rate", jnum(s->spec_acceptance));
    }
    return j;
}

/* ", NAME" after the first, when v is a number. */
static void figure(char *buf, size_t n, size_t *used, const char *fmt, double v) {
    if (!isfinite(v) || *used >= n)
        return;
    if (*used)
        *used += (size_t)snprintf(buf + *used, n - *used, ", ");
    if (*used < n)
        *used += (size_t)snprintf(buf + *used, n - *used, fmt, v);
}

size_t server_stats_line(const server_stats *s, char *buf, size_t n) {
    size_t used = 0;
    buf[0] = 0;
    if (!s->has_metrics)
        return 0;
    figure(buf, n, &used, "peak %.0f running", s->peak_running);
    figure(buf, n, &used, "%.0f waiting", s->peak_waiting);
    figure(buf, n, &used, "KV %.0f%%", 100 * s->peak_kv_usage);
    figure(buf, n, &used, "%.0f preemptions", s->preemptions);
    figure(buf, n, &used, "%.0f%% of TTFT queued", 100 * s->queue_share_of_ttft);
    figure(buf, n, &used, "prefix cache %.1f%% hits", 100 * s->cache_hit_rate);
    figure(buf, n, &used, "%.2f busy slots per decode step", s->busy_per_decode);
    if (s->spec_draft_tokens > 0)
        figure(buf, n, &used, "%.1f%% of draft tokens accepted", 100 * s->spec_acceptance);
    return used < n ? used : n - 1;
}

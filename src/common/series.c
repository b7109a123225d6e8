/* series: bookkeeping of sampled time series (see series.h). */
#include "common/series.h"
#include "common/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *wanted[] = {"vllm:num_requests_running",
                               "vllm:num_requests_waiting",
                               "vllm:kv_cache_usage_perc",
                               "vllm:gpu_cache_usage_perc",
                               "vllm:num_preemptions_total",
                               "vllm:prompt_tokens_total",
                               "vllm:generation_tokens_total",
                               "vllm:request_queue_time_seconds_sum",
                               "vllm:time_to_first_token_seconds_sum",
                               "vllm:prefix_cache_queries_total",
                               "vllm:prefix_cache_hits_total",
                               "llamacpp:requests_processing",
                               "llamacpp:requests_deferred",
                               "llamacpp:kv_cache_usage_ratio",
                               "llamacpp:prompt_tokens_total",
                               "llamacpp:tokens_predicted_total",
                               "llamacpp:n_decode_total",
                               "llamacpp:n_busy_slots_per_decode",
                               "llamacpp:spec_decode_num_drafts_total",
                               "llamacpp:spec_decode_num_draft_tokens_total",
                               "llamacpp:spec_decode_num_accepted_tokens_total"};

int server_metric_wanted(const char *name) {
    for (size_t i = 0; i < sizeof wanted / sizeof *wanted; i++)
        if (!strcmp(name, wanted[i]))
            return 1;
    return 0;
}

void series_add(series_set *set, const char *name, double t_ms, double v) {
    series *s = NULL;
    for (int i = 0; i < set->n && !s; i++)
        if (!strcmp(set->s[i].name, name))
            s = &set->s[i];
    if (!s) {
        set->s = xrealloc(set->s, (size_t)(set->n + 1) * sizeof *set->s);
        s = &set->s[set->n++];
        memset(s, 0, sizeof *s);
        snprintf(s->name, sizeof s->name, "%s", name);
    }
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 64;
        s->t_ms = xrealloc(s->t_ms, s->cap * sizeof *s->t_ms);
        s->v = xrealloc(s->v, s->cap * sizeof *s->v);
    }
    s->t_ms[s->n] = t_ms;
    s->v[s->n++] = v;
}

const series *series_find(const series_set *set, const char *name) {
    for (int i = 0; i < set->n; i++)
        if (!strcmp(set->s[i].name, name))
            return &set->s[i];
    return NULL;
}

void series_set_free(series_set *set) {
    for (int i = 0; i < set->n; i++) {
        free(set->s[i].t_ms);
        free(set->s[i].v);
    }
    free(set->s);
    memset(set, 0, sizeof *set);
}

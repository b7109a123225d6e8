/* probe: what the target server says about itself before a run: /v1/models
 * (the default model), /version (or llama.cpp's /props: its build, model
 * file, slots and context), its Server header, and whether it is
 * servelab's own simulator. Failures are not fatal: a run against a dead
 * server still records every request (as connect errors). What went wrong
 * is told apart, for the one warning a run prints before its traffic: no
 * connection at all, a model list that did not come (an HTTP error, a
 * timeout, an answer that is not a list), or a --model the list lacks.
 * Also the small reads of a server between runs: its busy gauges and the
 * time of a lone request (capacity/drain.h). */
#ifndef SERVELAB_PROBE_H
#define SERVELAB_PROBE_H

#include "monitor/busy.h"

#include <curl/curl.h>
#include <jansson.h>

typedef struct server_probe {
    int reachable;     /* a connection could be made (TCP, and TLS for https) */
    int models_status; /* /v1/models' HTTP status; 0: no answer */
    int models_listed; /* its answer was a model list (data: [...]) */
    char first_model[256];
    char server_header[256];
    json_t *version;      /* parsed /version body or NULL */
    json_t *models;       /* parsed /v1/models body or NULL */
    json_t *props;        /* llama.cpp's /props, kept in part: build_info, model_path,
                             total_slots, n_ctx; NULL when it has none */
    json_t *cache_config; /* the labels of vLLM's vllm:cache_config_info gauge (block_size,
                             num_gpu_blocks, ...) from /metrics; NULL when it has none */
    int is_sim;           /* servelab sim */
    int vllm_like;        /* known to accept stream_options.continuous_usage_stats */
    char error[256];      /* why /v1/models got no answer (curl's words, the URL redacted) */
} server_probe;

void probe_server(const char *base, struct curl_slist *headers, int insecure, server_probe *p);
/* The warning a run prints before its traffic, for a run asking for
 * `model` (NULL: none given): that the server cannot be reached; that it
 * did not list its models (and why: "HTTP 404", a timeout), and that
 * --model is needed when none was given or cannot be checked when one was;
 * or that `model` is not among those it lists (naming them: a warning, not
 * an error, since a server may serve models it does not list). Returns 0
 * and leaves msg alone when all is well. */
int probe_warning(const server_probe *p, const char *model, char *msg, size_t n);
json_t *probe_json(const server_probe *p);
/* The server's speculative-decoding counters now, from its /metrics at
 * `metrics_url` (monitor/spec_counters.h's object), or NULL when it has
 * none or does not answer: a run reads them before and after its traffic. */
json_t *probe_spec_counters(const char *metrics_url, struct curl_slist *headers, int insecure);
/* How busy the server is now, from its /metrics at `metrics_url`
 * (monitor/busy.h): 0 with *b filled (b->found 0 when the page has none
 * of the gauges), or -1 when it does not answer 200. */
int probe_busy(const char *metrics_url, struct curl_slist *headers, int insecure, busy_gauges *b);
/* POSTs body to url and times the whole answer (its body discarded): the
 * milliseconds, or NAN when it did not succeed (no answer, not a 2xx);
 * *timed_out when max_s (at least 1 s) ran out first, the time then being
 * at least that. */
double probe_post_ms(const char *url, const char *body, struct curl_slist *headers, int insecure,
                     double max_s, int *timed_out);
void probe_free(server_probe *p);

#endif

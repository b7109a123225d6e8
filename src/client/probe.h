/* probe: what the target server says about itself before a run: /v1/models
 * (the default model), /version, its Server header, and whether it is
 * servelab's own simulator. Failures are not fatal: a run against a dead
 * server still records every request (as connect errors). */
#ifndef SERVELAB_PROBE_H
#define SERVELAB_PROBE_H

#include <curl/curl.h>
#include <jansson.h>

typedef struct server_probe {
    int reachable;
    char first_model[256];
    char server_header[256];
    json_t *version; /* parsed /version body or NULL */
    json_t *models;  /* parsed /v1/models body or NULL */
    int is_sim;      /* servelab sim */
    int vllm_like;   /* known to accept stream_options.continuous_usage_stats */
    char error[256];
} server_probe;

void probe_server(const char *base, struct curl_slist *headers, int insecure, server_probe *p);
json_t *probe_json(const server_probe *p);
void probe_free(server_probe *p);

#endif

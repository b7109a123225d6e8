/* busy: how many requests a server is working on, read from its /metrics
 * page: running (in a batch, decoding or prefilling) and waiting (queued,
 * deferred) by the gauges each server names:
 *   vLLM       vllm:num_requests_running, vllm:num_requests_waiting
 *   llama.cpp  llamacpp:requests_processing, llamacpp:requests_deferred
 *   SGLang     sglang:num_running_reqs, sglang:num_queue_reqs
 *   TGI        tgi_batch_current_size, tgi_queue_size
 * (summed over label sets, as for a server of several engines). The
 * capacity search reads it before each probe: a probe starts on an idle
 * server, not on the backlog the last one left. */
#ifndef SERVELAB_BUSY_H
#define SERVELAB_BUSY_H

#include <stddef.h>

typedef struct busy_gauges {
    int found;          /* the page had a running or a waiting gauge */
    const char *source; /* "vllm", "llamacpp", "sglang" or "tgi" */
    double running, waiting;
} busy_gauges;

/* The gauges of a /metrics page of n bytes. */
void busy_read(const char *page, size_t n, busy_gauges *b);

#endif

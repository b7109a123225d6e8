/* phases: where each request's time to the first token went, and what the
 * server said of its own timings, summarised per run. A request's TTFT
 * (sent to first token) splits into the handshake (connect), the client's
 * own time to hand over the request (client write: written - sent -
 * connect), the server's (first byte - written) and the stream's time from
 * the first byte to the first token; before it comes the client's dispatch
 * (sent - scheduled). Each phase is summarised over the successful requests
 * that have it, on its own: the phases' medians need not add up to the TTFT
 * median, nor their p95s to its p95.
 *
 * The server's account (llama.cpp's final `timings`, the usage's cached
 * tokens) is set against the client's: TTFT minus the server's prompt time
 * (what the network, the queue before the server's clock starts and the
 * client add), the decode rate both ways, and the share of prompt tokens
 * the server served from its cache. */
#ifndef SERVELAB_PHASES_H
#define SERVELAB_PHASES_H

#include "analysis/stats.h"
#include "model/record.h"

#include <jansson.h>
#include <stddef.h>

typedef struct ttft_phases {
    int present; /* some request has a phase column's value */
    dist dispatch, connect, client_write, server, stream;
    size_t first_tokens;    /* successful requests whose first token's coalescing is known */
    size_t first_coalesced; /* of them, first tokens read together with a later chunk */
} ttft_phases;

typedef struct server_reported {
    int present;               /* some request has a value the server reported */
    dist ttft_minus_prompt;    /* client TTFT - server prompt_ms, ms */
    dist client_decode_tok_s;  /* (output_tokens - 1) / (last - first token) */
    dist server_decode_tok_s;  /* (predicted_n - 1) / predicted_ms */
    dist decode_ratio;         /* client / server, per request with both */
    dist server_prefill_tok_s; /* prompt_n / prompt_ms: the tokens it computed (not cached) */
    double cached_share;       /* mean of cached_tokens / prompt_tokens; NAN when none */
    size_t cached_n;           /* requests in that mean */
} server_reported;

/* Both summaries of rows (every repetition in them pooled). */
void phases_compute(const run_rows *rows, ttft_phases *p, server_reported *s);
json_t *ttft_phases_json(const ttft_phases *p);
json_t *server_reported_json(const server_reported *s);

#endif

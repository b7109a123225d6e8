/* spec_counters: a server's speculative-decoding counters, read from its
 * /metrics page: vLLM's vllm:spec_decode_num_drafts_total,
 * _num_draft_tokens_total, _num_accepted_tokens_total and
 * _num_accepted_tokens_per_pos_total{position="i"}, and llama.cpp's
 * llamacpp: counters of the same names. Only the `_total` series count:
 * the `_created` series beside them hold the Unix time they were made. A
 * run reads them before its first request and after its last; the
 * difference is the run's (analysis/spec_decode.h). */
#ifndef SERVELAB_SPEC_COUNTERS_H
#define SERVELAB_SPEC_COUNTERS_H

#include <jansson.h>
#include <stddef.h>

#define SPEC_MAX_POS 32

typedef struct spec_counters {
    int found;          /* the page had the drafts counter */
    const char *source; /* "vllm" or "llamacpp" */
    double drafts, draft_tokens, accepted;
    double per_pos[SPEC_MAX_POS]; /* accepted tokens by draft position */
    int n_pos;                    /* positions the page gave */
} spec_counters;

/* The counters of a /metrics page of n bytes (summed over label sets, as
 * for a server of several engines). */
void spec_counters_read(const char *page, size_t n, spec_counters *c);
/* {"source", "num_drafts", "num_draft_tokens", "num_accepted_tokens",
 * "num_accepted_tokens_per_pos": [...]}, or NULL when none were found. */
json_t *spec_counters_json(const spec_counters *c);

#endif

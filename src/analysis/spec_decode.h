/* spec_decode: a run's speculative-decoding figures from the server's own
 * counters read before its first request and after its last (the objects
 * monitor/spec_counters.h writes into meta.json): drafts, draft tokens and
 * accepted tokens over the run, the acceptance rate (accepted / draft
 * tokens), the mean acceptance length (1 + accepted / drafts: the tokens a
 * verification step yields) and the rate at each draft position (accepted
 * there / drafts), as vLLM's `vllm bench serve` computes them. */
#ifndef SERVELAB_SPEC_DECODE_H
#define SERVELAB_SPEC_DECODE_H

#include <jansson.h>

/* summary.json's "spec_decode" object, or NULL when either side is missing
 * or the run made no drafts. */
json_t *spec_decode_figures(const json_t *before, const json_t *after);

/* The figures of repetitions pooled: each meta.json's
 * "spec_decode_counters" (before and after), their differences summed;
 * NULL when none has them. */
json_t *spec_decode_of_metas(json_t *const *metas, int n);

/* The same figures under the keys `vllm bench serve` writes
 * (spec_decode_acceptance_rate in percent, spec_decode_acceptance_length,
 * spec_decode_num_drafts, spec_decode_draft_tokens,
 * spec_decode_accepted_tokens, spec_decode_per_position_acceptance_rates),
 * set into `obj`; nothing when `figures` is NULL. */
void spec_decode_vllm_keys(const json_t *figures, json_t *obj);

#endif

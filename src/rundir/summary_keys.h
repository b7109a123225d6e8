/* summary_keys: the keys of a run's summary.json, the one list of them:
 * the top level and the `client` object, each key with its JSON type, its
 * unit and a line for docs/files.md, and whether every run's summary.json
 * has it (the others are there only when the run had what they describe).
 *
 * The one writer (rundir/summary_file.h) makes every `always` key present,
 * null where the run that wrote it could not know it (a merge does not know
 * its shards' worst delayed requests), so that a run, a merge and a
 * prediction have the same keys; docs/files.md's tables are printed from
 * these (rundir/docs.h). The distributions' own keys (n, mean, ...) and the
 * server's are described in docs/files.md by hand. */
#ifndef SERVELAB_RUNDIR_SUMMARY_KEYS_H
#define SERVELAB_RUNDIR_SUMMARY_KEYS_H

#include <jansson.h>

/* How `servelab merge` makes a key of `client` from its shards: from the
 * merged rows, as a run does (the summary computes it); the sum, the
 * largest or the conjunction of the shards' values (null when a shard has
 * none); null, as it cannot be known from the shards' summaries (the worst
 * delayed requests of all, a CPU share of machines apart); or the shards'
 * own lines, each named by its shard. */
typedef enum rundir_merge {
    RUNDIR_MERGE_ROWS,
    RUNDIR_MERGE_SUM,
    RUNDIR_MERGE_MAX,
    RUNDIR_MERGE_ALL,
    RUNDIR_MERGE_NONE,
    RUNDIR_MERGE_NOTES,
} rundir_merge;

typedef struct rundir_key {
    const char *name;
    const char *type; /* "number", "integer", "distribution", "object", ... */
    const char *unit;
    int always; /* every run's summary.json has it (null when unknown) */
    rundir_merge merge;
    const char *meaning;
} rundir_key;

typedef struct rundir_keys {
    const char *name; /* "summary.json", "client" */
    const rundir_key *key;
    int n;
} rundir_keys;

/* X(key, type, unit, always, meaning) for the top level, and
 * X(key, type, unit, merge, meaning) for `client` (every key always there),
 * in the order documented. */
#define RUNDIR_SUMMARY_KEYS(X)                                                                     \
    X(requests, "integer", "count", 1, "rows in `requests.csv` (every scheduled request)")         \
    X(completed, "integer", "count", 1, "requests with an empty `error`")                          \
    X(failed, "integer", "count", 1, "the others")                                                 \
    X(errors, "object", "counts", 1,                                                               \
      "one count per class: `connect`, `timeout`, `http`, `disconnect`, `malformed`, "             \
      "`cancelled`, `client`")                                                                     \
    X(duration_s, "number", "s", 1,                                                                \
      "t=0 to the end of the last request ([Definitions](#duration-and-arrival-window))")          \
    X(arrival_window_s, "number", "s", 1, "t=0 to the last scheduled arrival")                     \
    X(offered_rps, "number or `\"inf\"`", "req/s", 1,                                              \
      "the rate asked for; the string `\"inf\"` for `--rate inf`; with `--replay`, the "           \
      "schedule's own: records after the first over its scaled span")                              \
    X(realized_offered_rps, "number", "req/s", 1, "the rate the seeded schedule actually offered") \
    X(achieved_rps, "number", "req/s", 1, "completed requests / `duration_s`")                     \
    X(achieved_rps_arrival_window, "number", "req/s", 1,                                           \
      "requests completed by the last arrival / `arrival_window_s`")                               \
    X(output_tokens, "number", "tokens", 1, "sum of `output_tokens` over completed requests")      \
    X(prompt_tokens, "number", "tokens", 1, "sum of `prompt_tokens` over completed requests")      \
    X(output_tokens_per_s, "number", "tok/s", 1, "`output_tokens` / `duration_s`")                 \
    X(output_tokens_per_s_arrival_window, "number", "tok/s", 1,                                    \
      "tokens in chunks that arrived by the last arrival / `arrival_window_s`")                    \
    X(total_tokens_per_s, "number", "tok/s", 1,                                                    \
      "(`output_tokens` + `prompt_tokens`) / `duration_s`")                                        \
    X(ttft_ms, "distribution", "ms", 1, "TTFT from send, a distribution (below)")                  \
    X(ttft_from_scheduled_ms, "distribution", "ms", 1, "TTFT from the scheduled arrival")          \
    X(tpot_ms, "distribution", "ms", 1, "time per output token after the first")                   \
    X(itl_ms, "distribution", "ms", 1, "inter-token time, one value per token")                    \
    X(e2e_ms, "distribution", "ms", 1, "end-to-end latency from send")                             \
    X(e2e_from_scheduled_ms, "distribution", "ms", 1,                                              \
      "end-to-end latency from the scheduled arrival")                                             \
    X(slo, "object", "ms", 1,                                                                      \
      "the bounds given: `ttft_ms`, `tpot_ms`, `e2e_ms`, each present only when set")              \
    X(meeting_slo, "integer", "count", 1, "requests that met the SLO")                             \
    X(goodput_rps, "number", "req/s", 1, "`meeting_slo` / `duration_s`")                           \
    X(goodput_fraction, "number", "0-1", 1, "`meeting_slo` / `requests`")                          \
    X(cost_per_hour, "number", "USD/h", 1, "as given, or `null`")                                  \
    X(cost_per_million_output_tokens, "number", "USD", 1,                                          \
      "`null` without a cost or without output tokens")                                            \
    X(client, "object", "", 1, "the client's own health, below")                                   \
    X(server, "object", "", 1, "what the server and GPUs did, below")                              \
    X(server_process, "object", "", 0,                                                             \
      "the server's process tree over the run, from `server_proc.csv` (below); absent when none "  \
      "was sampled")                                                                               \
    X(ttft_phases, "object", "", 0,                                                                \
      "where TTFT went, below; present only when some request has the phase columns of "           \
      "`requests.csv` (`connect_ms`, `written_ms`, `first_byte_ms`, `first_coalesced`)")           \
    X(server_reported, "object", "", 0,                                                            \
      "the server's own account set against the client's, below; present only when some request "  \
      "has a value the server reported (`server_prompt_ms`, `server_decode_ms`, "                  \
      "`server_decode_n`, `cached_tokens`)")                                                       \
    X(interrupted, "boolean", "", 1, "`true` when a stop signal ended the run")                    \
    X(ttfa_ms, "distribution", "ms", 0,                                                            \
      "time to the first answer token; present only when some request reasoned "                   \
      "([below](#latency-distributions))")                                                         \
    X(reasoning, "object", "", 0,                                                                  \
      "the reasoning tokens (`tokens`, `requests`, `mean_tokens`, `no_answer`, `counted_by`); "    \
      "present with `ttfa_ms`")                                                                    \
    X(answers, "object", "", 0,                                                                    \
      "`--tools` and `--response-format` runs: how many answers were checked and were what was "   \
      "asked ([below](#latency-distributions))")                                                   \
    X(spec_decode_per_request, "object", "", 0,                                                    \
      "the server's own per-request account of its speculative drafts (`requests`, "               \
      "`draft_tokens`, `accepted_tokens`, `acceptance_rate`); present when some request has "      \
      "`server_draft_n`")                                                                          \
    X(inter_chunk_ms, "distribution", "ms", 0,                                                     \
      "the gaps between chunks, once each; present when some chunk carried more than one token")   \
    X(tokens_per_chunk, "number", "tokens", 0,                                                     \
      "the mean tokens a chunk carried; present with `inter_chunk_ms`")                            \
    X(spec_decode, "object", "", 0,                                                                \
      "the server's speculative-decoding counters over the run; present when the server counts "   \
      "its drafts")                                                                                \
    X(stages, "array of objects", "", 0, "runs with `--rate-plan` only: one object a stage, below")

#define RUNDIR_CLIENT_KEYS(X)                                                                      \
    X(schedule_lag_ms, "distribution", "ms", RUNDIR_MERGE_ROWS,                                    \
      "the distribution of `lag_ms` over every request the client dispatched")                     \
    X(cpu_s, "number", "s", RUNDIR_MERGE_SUM,                                                      \
      "CPU seconds (user + system) servelab used during the measured requests")                    \
    X(cpu_pct, "number", "%", RUNDIR_MERGE_NONE, "100 x `cpu_s` / `duration_s` (100 is one core)") \
    X(threads, "integer", "", RUNDIR_MERGE_SUM, "client threads (`--threads`)")                    \
    X(within_1ms, "boolean", "", RUNDIR_MERGE_ALL,                                                 \
      "`true` when none of these held: the schedule lag p99 over 1 ms; the client's CPU "          \
      "saturated (over a run of at least 1 s, `cpu_pct` over 90 per thread; a shorter run is not " \
      "judged on CPU); any request held more than 1 ms by the client (`delayed_requests` > 0); "   \
      "more than 1% of first tokens coalesced, or more than 1% of all chunks")                     \
    X(max_client_delay_ms, "number", "ms", RUNDIR_MERGE_MAX,                                       \
      "the longest any request waited for the client: the larger of how late it was sent after "   \
      "it could have gone (due, with a slot free) and its time from sending to its last byte "     \
      "beyond the handshake (`written_ms - sent_ms - connect_ms`)")                                \
    X(delayed_requests, "integer", "count", RUNDIR_MERGE_SUM,                                      \
      "requests the client held more than 1 ms, of either kind (the two below)")                   \
    X(late_sent_requests, "integer", "count", RUNDIR_MERGE_SUM,                                    \
      "sent more than 1 ms after they could have gone (TTFT from the schedule holds it, TTFT "     \
      "from send does not)")                                                                       \
    X(slow_written_requests, "integer", "count", RUNDIR_MERGE_SUM,                                 \
      "more than 1 ms from sending to the last byte beyond the handshake (TTFT from send holds "   \
      "it too)")                                                                                   \
    X(delayed_request_ids, "array of strings", "", RUNDIR_MERGE_NONE,                              \
      "the worst of them, at most 20, the worst first (`[\"req-132\", ...]`)")                     \
    X(first_tokens, "integer", "count", RUNDIR_MERGE_SUM, "requests with a first token")           \
    X(coalesced_first_tokens, "integer", "count", RUNDIR_MERGE_SUM,                                \
      "of them, those whose first chunk came in one read with a later one (`first_coalesced`)")    \
    X(chunks, "integer", "count", RUNDIR_MERGE_SUM, "output chunks")                               \
    X(coalesced_chunks, "integer", "count", RUNDIR_MERGE_SUM,                                      \
      "of them, those flagged `coalesced`")                                                        \
    X(notes, "array of strings", "", RUNDIR_MERGE_NOTES,                                           \
      "why `within_1ms` is false, a line per cause: `schedule lag p99 over 1 ms`, `client CPU "    \
      "saturated`, `N requests waited more than 1 ms for the client (at most X ms; the worst: "    \
      "req-...)...`, `N of M first tokens came in one read with a later chunk: their TTFT is an "  \
      "upper bound`")

extern const rundir_keys rundir_summary_keys, rundir_client_keys;

/* Every `always` key of k that obj lacks, added as null. */
void rundir_keys_fill(json_t *obj, const rundir_keys *k);
/* The `client` keys a merge makes from its shards' `client` objects (n of
 * them, in shard index order; NULL: a shard without a summary), by each
 * key's rule: a new object without the ROWS keys. */
json_t *rundir_client_merge(json_t *const *shards, int n);
/* A merge rule in words, for docs/files.md. */
const char *rundir_merge_words(rundir_merge m);

#endif

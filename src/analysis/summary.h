/* summary: the figures of one run (or of pooled repetitions), computed from
 * compact per-request records. `servelab run` fills the records as requests
 * finish; `servelab report` fills them from requests.csv. Both then call
 * the same function, so the numbers can never disagree.
 *
 * Definitions (docs/files.md): the run's duration runs from t=0, the
 * first scheduled arrival, to the end of the last request; the arrival
 * window from t=0 to the last scheduled arrival. A request meets the SLO
 * when it succeeded and every stated bound holds; failures count as misses
 * and stay in every denominator. Pooled repetitions (req_rec.part) add up
 * their own durations and arrival windows. */
#ifndef SERVELAB_SUMMARY_H
#define SERVELAB_SUMMARY_H

#include "analysis/phases.h"
#include "analysis/stats.h"
#include "model/record.h"
#include "model/slo.h"

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

typedef struct summary_params {
    double offered_rps; /* as asked; INFINITY for inf */
    slo_spec slo;
    double cost_per_hour; /* <= 0: no cost */
    double client_cpu_s;  /* < 0: unknown */
} summary_params;

typedef struct run_summary {
    size_t requests, completed, failed;
    int parts; /* repetitions pooled */
    size_t errors[ERR_COUNT];
    double duration_s, arrival_window_s;
    double offered_rps, realized_offered_rps;
    double achieved_rps, achieved_rps_window;
    double output_tokens, prompt_tokens;
    double output_tokens_per_s, total_tokens_per_s, output_tokens_per_s_window;
    dist ttft, ttft_sched, tpot, itl, e2e, e2e_sched, lag;
    /* A reasoning model's: time to its first answer token (from sending),
     * its reasoning tokens, and the answers that never came (all thinking:
     * max_tokens spent); present when some request reasoned. */
    int has_reasoning;
    dist ttfa;
    double reasoning_tokens;
    size_t reasoning_requests, no_answer, reasoning_from_server;
    /* Chunks of several tokens (speculative decoding, or a server that
     * batches its stream): the gap between chunks beside ITL's per-token
     * one, and the mean tokens a chunk after the first; present when some
     * chunk carried more than one token. */
    int multi_token;
    dist icl;
    double tokens_per_chunk;
    /* --tools, --response-format: the answers checked (every request sent;
     * a failed one is not valid), those that were what was asked, the tool
     * calls made and the time to the first (from sending); present when
     * some answer was checked. */
    size_t answers_checked, answers_valid, tool_calls, with_tool_call;
    dist ttf_tool;
    /* The server's own per-request account of its drafts (llama.cpp's
     * timings.draft_n, draft_n_accepted), summed over the requests that
     * give it: beside the counters' difference (analysis/spec_decode.h). */
    size_t draft_requests;
    double draft_tokens, draft_accepted;
    int has_slo;
    slo_spec slo;
    size_t meeting_slo;
    double goodput_rps, goodput_fraction;
    double cost_per_hour, cost_per_million_output_tokens; /* NAN when no cost */
    double client_cpu_s;
    ttft_phases phases;         /* present: some request has the phase columns */
    server_reported server_rep; /* present: the server reported its own timings */
} run_summary;

/* The rows are not changed, except that itl_ms is sorted in place (its
 * order means nothing; sorting it where it lies saves a copy as large). */
void summarize(const run_rows *rows, const summary_params *p, run_summary *s);
/* summarize in two halves, for a caller whose chunk gaps are still being
 * added when its request rows are complete (merge): summarize_requests
 * reads only rows->r and rows->n, and summarize_chunks, after it, adds the
 * figures of the gaps (itl, icl, tokens_per_chunk, the window's output
 * rate). Together, the same summary as summarize. */
void summarize_requests(const run_rows *rows, const summary_params *p, run_summary *s);
void summarize_chunks(const run_rows *rows, run_summary *s);
/* summary.json's object for a run (with ttft_phases and server_reported
 * only where present). */
json_t *summary_json(const run_summary *s);
/* The table printed at the end of `servelab run`. */
void summary_print(FILE *f, const run_summary *s);

/* Whether one request meets the SLO: it succeeded and every stated bound
 * holds (the count behind goodput). */
int request_meets_slo(const req_rec *r, const slo_spec *slo);
/* The bounds one request missed, bound b's bit 1 << b (model/slo.h's
 * order), so that a search or a report can name the bound that binds;
 * SLO_MISSED_FAILED alone for a request that failed; 0 when it met the
 * SLO. TTFT, E2E and TTFA count from sending, TPOT over requests of two
 * tokens or more. */
int request_slo_misses(const req_rec *r, const slo_spec *slo);
/* When the answer began (ms from t=0): first_answer_ms; the first token
 * for rows from before servelab recorded it (reasoning_tokens unknown);
 * NAN when no answer came. */
double request_answer_ms(const req_rec *r);

/* Did the client use all its CPU (over 90% of each of its threads) during
 * a run long enough to tell? A run shorter than a second is mostly
 * start-up and is never called saturated. */
int client_cpu_saturated(double duration_s, double cpu_s, int threads);

#endif

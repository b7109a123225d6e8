/* fit: the simulator's step model estimated from a black-box server's
 * rows (`servelab fit`; docs/simulator.md, "Fitting a profile").
 *
 * - Prefill: from the requests that had the server to themselves (no other
 *   request between their send and their first token, none sent before it
 *   still streaming), whose first token is one step of nothing but their
 *   prompt. Their TTFT (what the twin's first token must be: the server's
 *   own prompt_ms leaves out work it does in the same loop, which grew with
 *   the prompt on llama.cpp) is fitted to c0 + a x tokens + k x context /
 *   1000 (context: the positions the prompt's tokens sit at, summed, so
 *   that attention's growth shows as k), tokens being those the server
 *   computed (its prompt_n where it gives one), by weighted least squares
 *   (weights 1 / fitted^2, since a step's noise is a share of it) with no
 *   negative term: of the column sets the lengths can tell apart, the one
 *   with the least error; then once more without the points beyond 3.5
 *   robust sd. decode_base_ms is c0.
 * - Decode: every gap between two one-token chunks of a stream, grouped by
 *   how many streams were decoding in its middle (between their first and
 *   last token), leaving out every gap that a prompt was being computed in
 *   (any other request whose first token came in the gap or within its
 *   predicted prefill after it). The median of each batch's gaps with at
 *   least min_gaps of them is the table's point; jitter is their relative
 *   spread about it (root mean square, beyond 4 robust sd left out).
 * - A step that computed a prompt while streams decoded: every gap of a
 *   stream that ended with exactly one other request's first token (and no
 *   other prompt in it) is such a step. When decode_base + m x decoding +
 *   the prompt's fitted prefill (m by least squares) fits those gaps
 *   better than the table's decode(decoding) + prefill, and at least 20
 *   gave it, m is mixed_step_per_seq_ms (engine.h).
 * - Limits: what the servers reported (fit_data.h), the most common value
 *   over the runs. Slots, when no run reported them: the most streams seen
 *   decoding at once when, in at least FIT_HELD_GAPS clean gaps at that
 *   many, a request sent two steps before had no first token yet (held
 *   back: the cap was met); else FIT_UNREPORTED_MAX_NUM_SEQS (or the most
 *   seen, if more). The context, when none did, FIT_UNREPORTED_MAX_MODEL_LEN
 *   (or the longest request seen, if longer). Never the most seen alone,
 *   which says nothing of what the server would take.
 * - Output length: without --ignore-eos, the simulator draws it uniformly
 *   from [p x max_tokens, max_tokens]; p = 2 x mean(output / max_tokens) - 1.
 * Runs of different servers or models are refused. */
#ifndef SERVELAB_FIT_H
#define SERVELAB_FIT_H

#include "fit/fit_data.h"
#include "sim/profile_file.h"

#include <stdio.h>

typedef struct fit_opts {
    int min_gaps;     /* clean gaps a batch needs to be a point (default 30) */
    const char *name; /* the profile's name; NULL: "fitted" */
} fit_opts;

typedef struct fit_point {
    int batch;
    size_t gaps;
    double mean, median, p10, p90; /* ms; the table takes the mean */
} fit_point;

#define FIT_LEN_BINS 12
/* max_model_len when no run reported one (fit.h, Limits) */
#define FIT_UNREPORTED_MAX_MODEL_LEN 131072
/* max_num_seqs when no run reported it and none showed its cap (vLLM's default) */
#define FIT_UNREPORTED_MAX_NUM_SEQS 256
#define FIT_HELD_GAPS 3 /* clean gaps with a request held back that show the cap */

typedef struct fit_result {
    profile_doc doc; /* the profile, with provenance and the fit's record */
    fit_point points[ENGINE_STEP_POINTS];
    int n_points;
    size_t runs, requests, gaps, clean_gaps;
    size_t lone;                 /* requests the prefill was fitted from */
    size_t cold;                 /* requests alone after an idle spell that told idle_wake_ms */
    int mask;                    /* the prefill line's terms: bit 0 fixed, 1 per token, 2 context */
    int prefill_from_server;     /* 1: the server gave its prompt_ms */
    int one_length;              /* the lone requests had one prompt length (within 2%) */
    double one_length_tokens;    /* then: their median prompt tokens */
    double overhead_ms;          /* median TTFT - prompt_ms of those; NAN without */
    double resid_p50, resid_p90; /* |fitted - measured| / measured over the lone requests */
    /* the steps that computed one prompt while streams decoded (fit_mixed) */
    size_t mixed_gaps, mixed_kept;
    double mixed_per_seq;              /* ms a decoding stream, fitted (taken or not) */
    double mixed_rms, mixed_rms_table; /* the two models' rms error on those gaps, ms */
    /* the prefill's residuals by prompt length (bins of equal counts) */
    int n_bins;
    int bin_lo[FIT_LEN_BINS], bin_hi[FIT_LEN_BINS];
    size_t bin_n[FIT_LEN_BINS];
    double bin_err[FIT_LEN_BINS]; /* median signed relative error */
} fit_result;

/* Estimates the profile from the runs. 0, or -1 with one line in err
 * (different servers or models; too little to fit). */
int fit_estimate(const fit_run *runs, int n, const fit_opts *o, fit_result *r, char *err,
                 size_t errlen);
/* The fit and its residuals, as a table. */
void fit_print(FILE *f, const fit_result *r);
void fit_result_free(fit_result *r);

#endif

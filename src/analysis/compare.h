/* compare: how far one run's figures moved from another's, and whether
 * the move is more than the noise of a run of that many requests. Each
 * figure's change (new - base) gets a 95% bootstrap interval: each side's
 * requests are resampled with replacement, independently of the other
 * side's, the figure is computed on every resample, and the interval is
 * the 2.5th to 97.5th percentile of the resampled differences (and, beside
 * it, of the relative changes new / base - 1). A figure moved when that
 * interval leaves out 0: worse or better by the figure's direction (lower
 * is better for a latency, higher for a throughput or goodput), else there
 * is no significant change.
 *
 * What a resample is, figure by figure (docs/commands.md says the same):
 *   - TTFT, TPOT and E2E percentiles: the successful requests' values
 *     resampled (the same requests summarize() takes), drawn exactly and
 *     in O(1) a resample by stats.h's order-statistic bootstrap.
 *   - ITL percentiles: the requests are resampled, each with all its gaps,
 *     since the gaps of one request share its batch and are not
 *     independent; resampling gaps one by one would make the interval too
 *     narrow by about the square root of the tokens a request.
 *   - output_tokens_per_s, achieved_rps, goodput_rps, goodput_fraction:
 *     each repetition's requests resampled within it (so it keeps its
 *     count), and the duration is the resample's own, from t=0 to the end
 *     of its last request, as the figure's definition reads. Keeping the
 *     measured duration instead would give a run of fixed-length answers
 *     (--ignore-eos) an interval of width 0, in which a millisecond's
 *     difference in the last request's end would count as significant.
 *
 * The point values are the run_summary's, so they are exactly what
 * `servelab report` and summary.json say. Resampling is seeded: the same
 * rows, resamples and seed always give the same intervals. */
#ifndef SERVELAB_COMPARE_H
#define SERVELAB_COMPARE_H

#include "analysis/summary.h"
#include "model/record.h"

#include <stddef.h>
#include <stdint.h>

/* The figures compared, in the order the tables list them. */
enum {
    FIG_TTFT_P50,
    FIG_TTFT_P95,
    FIG_TTFT_P99,
    FIG_TPOT_P50,
    FIG_TPOT_P95,
    FIG_TPOT_P99,
    FIG_ITL_P50,
    FIG_ITL_P95,
    FIG_ITL_P99,
    FIG_E2E_P50,
    FIG_E2E_P95,
    FIG_E2E_P99,
    FIG_OUTPUT_TOKENS_PER_S,
    FIG_ACHIEVED_RPS,
    FIG_GOODPUT_RPS,
    FIG_GOODPUT_FRACTION,
    FIG_COUNT
};

/* What a figure's absolute values are in. */
typedef enum { UNIT_MS, UNIT_TOK_S, UNIT_REQ_S, UNIT_FRACTION } figure_unit;

/* "ttft_p95", "output_tokens_per_s", ... (summary.json's names). */
const char *figure_name(int fig);
/* The figure called `name`, or -1. */
int figure_find(const char *name);
/* 1 for the latencies (lower is better), 0 for the rates and goodput. */
int figure_lower_is_better(int fig);
figure_unit figure_unit_of(int fig);
/* The figure's value in a run's summary; NAN where the run does not
 * measure it (no request with two tokens for TPOT, no SLO for goodput). */
double figure_value(const run_summary *s, int fig);

/* Fewer values than this on a side (requests, or requests with gaps for
 * ITL) and a bootstrap interval says more than the sample can: the figure
 * gets no verdict but VERDICT_FEW. */
#define COMPARE_MIN_SAMPLES 10

/* VERDICT_GONE: the base measured the figure and the new run has no value
 * for it at all (every request failed, say): worse, and a gate on it trips. */
typedef enum {
    VERDICT_NA,
    VERDICT_FEW,
    VERDICT_SAME,
    VERDICT_BETTER,
    VERDICT_WORSE,
    VERDICT_GONE
} verdict;
/* "n/a", "too few requests", "no significant change", "better", "worse",
 * "worse: none in new". */
const char *verdict_name(verdict v);

typedef struct figure_change {
    double base, new_;
    double diff, rel;        /* new - base; new / base - 1 (NAN when base is 0 or unknown) */
    double diff_lo, diff_hi; /* 95% bootstrap interval of new - base */
    double rel_lo, rel_hi;   /* and of new / base - 1 */
    verdict v;               /* VERDICT_NA when either side lacks the figure */
    size_t n_base, n_new;    /* the values resampled on each side */
} figure_change;

/* What the resampling needs of one run, taken from its rows before
 * summarize() sorts their gaps: opaque, made by compare_side_new. */
typedef struct compare_side compare_side;

/* The side of `rows` (every repetition in them, req_rec.part), its SLO
 * judged by `slo`. The rows are not changed and may be freed after. */
compare_side *compare_side_new(const run_rows *rows, const slo_spec *slo);
void compare_side_free(compare_side *s);

/* Every figure's change from base to new (summaries: their rows' pooled
 * summaries, by the same SLO as the sides) into out[FIG_COUNT], with
 * `resamples` resamples of each side drawn from `seed`. */
void compare_figures(const compare_side *base, const run_summary *sb, const compare_side *new_,
                     const run_summary *sn, int resamples, uint64_t seed, figure_change *out);

#endif

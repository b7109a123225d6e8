/* compare_stats: the statistics under servelab compare, in process, on
 * rows made here: identical rows show no significant change, latencies
 * 15% longer are worse and the gate trips only past its threshold; ITL
 * resamples requests with all their gaps (resampling gaps one by one would
 * call a small shift within one request's noise significant); the rates
 * keep an interval when every answer has the same length; and --fail-on
 * accepts and refuses what its documentation says. */
#include "analysis/compare.h"
#include "analysis/gate.h"
#include "common/rng.h"
#include "support.h"
#include "test.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define SLOWER 1.15 /* the regression the tests look for */

/* n requests, one every 50 ms, with spread latencies (the same for the
 * same seed), each latency times `scale`; every `miss_every`-th request
 * (0: none) fails. Each request's gaps are its TPOT, one per token. */
static void make_rows(run_rows *rows, int n, double scale, int miss_every, uint64_t seed) {
    memset(rows, 0, sizeof *rows);
    rng g;
    rng_seed(&g, seed);
    for (int i = 0; i < n; i++) {
        req_rec r = req_rec_unknown();
        r.scheduled_ms = 50.0 * i;
        r.sent_ms = r.scheduled_ms + 0.1;
        r.output_tokens = 16 + (int)rng_range(&g, 0, 16);
        r.prompt_tokens = 100;
        double ttft = scale * (20 + 20 * rng_uniform(&g));
        double tpot = scale * (5 + 3 * rng_uniform(&g));
        r.first_ms = r.sent_ms + ttft;
        r.last_ms = r.first_ms + tpot * (r.output_tokens - 1);
        r.end_ms = r.last_ms;
        if (miss_every && i % miss_every == 0)
            r.error = ERR_HTTP;
        rows_add(rows, &r);
        rows_start_itl_request(rows);
        for (int k = 1; k < r.output_tokens; k++)
            rows_add_itl(rows, (float)tpot);
    }
}

static const slo_spec slo = {.ttft_ms = 1000, .tpot_ms = 100};

/* Base and new rows compared as `servelab compare` does. */
static void compare_rows(run_rows *b, run_rows *n, figure_change *out) {
    summary_params p = {.offered_rps = 20, .slo = slo, .client_cpu_s = -1};
    compare_side *sb = compare_side_new(b, &slo), *sn = compare_side_new(n, &slo);
    run_summary rb, rn;
    summarize(b, &p, &rb);
    summarize(n, &p, &rn);
    compare_figures(sb, &rb, sn, &rn, 2000, 0, out);
    for (int f = 0; f < FIG_COUNT; f++) { /* the point values are the summary's */
        CHECK_MSG(out[f].base == figure_value(&rb, f) || isnan(out[f].base), "%s", figure_name(f));
        CHECK_MSG(out[f].new_ == figure_value(&rn, f) || isnan(out[f].new_), "%s", figure_name(f));
    }
    compare_side_free(sb);
    compare_side_free(sn);
}

TEST(compare_same_rows_no_change_slower_rows_worse) {
    run_rows b, n;
    figure_change c[FIG_COUNT];
    make_rows(&b, 200, 1, 0, 7);
    make_rows(&n, 200, 1, 0, 7);
    compare_rows(&b, &n, c);
    for (int f = 0; f < FIG_COUNT; f++) {
        CHECK_MSG(c[f].v == VERDICT_SAME, "%s: %s", figure_name(f), verdict_name(c[f].v));
        CHECK_MSG(c[f].diff_lo <= 0 && c[f].diff_hi >= 0, "%s", figure_name(f));
    }
    gate g[GATE_MAX];
    char err[256];
    CHECK_INT(gate_parse("tpot_p50>+5%", g, err, sizeof err), 1);
    CHECK(!gate_tripped(&g[0], &c[FIG_TPOT_P50]));
    rows_free(&n);

    make_rows(&n, 200, SLOWER, 0, 7);
    compare_rows(&b, &n, c);
    const int worse[] = {FIG_TTFT_P50, FIG_TTFT_P95, FIG_TPOT_P50, FIG_TPOT_P95,
                         FIG_ITL_P50,  FIG_ITL_P95,  FIG_E2E_P50,  FIG_E2E_P95};
    for (size_t i = 0; i < sizeof worse / sizeof *worse; i++) {
        const figure_change *w = &c[worse[i]];
        CHECK_MSG(w->v == VERDICT_WORSE, "%s: %s", figure_name(worse[i]), verdict_name(w->v));
        CHECK_NEAR(w->rel, SLOWER - 1, 1e-6); /* every latency scaled alike (ITL in floats) */
        CHECK(w->rel_lo > 0 && w->rel_lo < w->rel && w->rel < w->rel_hi);
    }
    CHECK(gate_tripped(&g[0], &c[FIG_TPOT_P50]));
    CHECK_INT(gate_parse("tpot_p50>+30%", g, err, sizeof err), 1); /* worse, not by that much */
    CHECK(!gate_tripped(&g[0], &c[FIG_TPOT_P50]));
    CHECK(c[FIG_GOODPUT_FRACTION].v == VERDICT_SAME);
    rows_free(&n);

    make_rows(&n, 200, 1, 5, 7); /* a fifth of the requests fail */
    compare_rows(&b, &n, c);
    CHECK(c[FIG_GOODPUT_FRACTION].v == VERDICT_WORSE);
    CHECK(c[FIG_OUTPUT_TOKENS_PER_S].v == VERDICT_WORSE);
    CHECK(c[FIG_ACHIEVED_RPS].v == VERDICT_WORSE);
    CHECK_INT(gate_parse("goodput_fraction<-1%", g, err, sizeof err), 1);
    CHECK(gate_tripped(&g[0], &c[FIG_GOODPUT_FRACTION]));
    rows_free(&n);
    rows_free(&b);
}

/* 40 requests, each with 50 gaps all equal to its own value (10 to 20 ms),
 * every gap of the new rows `shift` longer. */
static void blocky_rows(run_rows *rows, double shift, int with_starts) {
    memset(rows, 0, sizeof *rows);
    for (int i = 0; i < 40; i++) {
        req_rec r = req_rec_unknown();
        r.scheduled_ms = r.sent_ms = 50.0 * i;
        r.first_ms = r.sent_ms + 10;
        r.output_tokens = 51;
        double gap = (10 + 10 * i / 39.0) * (1 + shift);
        r.last_ms = r.first_ms + 50 * gap;
        r.end_ms = r.last_ms;
        rows_add(rows, &r);
        if (with_starts)
            rows_start_itl_request(rows);
        for (int k = 0; k < 50; k++)
            rows_add_itl(rows, (float)gap);
    }
}

TEST(compare_itl_resamples_requests_not_gaps) {
    run_rows b, n;
    figure_change c[FIG_COUNT];
    blocky_rows(&b, 0, 1);
    blocky_rows(&n, 0.04, 1);
    compare_rows(&b, &n, c);
    /* 4% is well within what 40 requests' medians vary by */
    CHECK_MSG(c[FIG_ITL_P50].v == VERDICT_SAME, "by request: %s [%g, %g]",
              verdict_name(c[FIG_ITL_P50].v), c[FIG_ITL_P50].diff_lo, c[FIG_ITL_P50].diff_hi);
    double width = c[FIG_ITL_P50].diff_hi - c[FIG_ITL_P50].diff_lo;
    rows_free(&b);
    rows_free(&n);
    /* the same gaps with no request boundaries: 2,000 independent gaps */
    blocky_rows(&b, 0, 0);
    blocky_rows(&n, 0.04, 0);
    compare_rows(&b, &n, c);
    CHECK_MSG(c[FIG_ITL_P50].v == VERDICT_WORSE, "by gap: %s", verdict_name(c[FIG_ITL_P50].v));
    CHECK(c[FIG_ITL_P50].diff_hi - c[FIG_ITL_P50].diff_lo < width / 2);
    rows_free(&b);
    rows_free(&n);
}

TEST(compare_fixed_length_answers_keep_a_rate_interval) {
    run_rows b, n;
    figure_change c[FIG_COUNT];
    blocky_rows(&b, 0, 1); /* 51 tokens each, all successes */
    blocky_rows(&n, 0, 1);
    for (size_t i = 0; i < n.n; i++)
        n.r[i].end_ms += 1; /* the last answer ends a millisecond later */
    compare_rows(&b, &n, c);
    for (int f = FIG_OUTPUT_TOKENS_PER_S; f <= FIG_ACHIEVED_RPS; f++) {
        CHECK_MSG(c[f].v == VERDICT_SAME, "%s: %s", figure_name(f), verdict_name(c[f].v));
        CHECK(c[f].diff < 0 && c[f].diff_hi > c[f].diff_lo);
    }
    rows_free(&b);
    rows_free(&n);
}

static void gate_ok(const char *spec, int count, int last_fig, int relative, double threshold) {
    gate g[GATE_MAX];
    char err[256] = "";
    int n = gate_parse(spec, g, err, sizeof err);
    CHECK_MSG(n == count, "%s: %d gates (%s)", spec, n, err);
    CHECK_MSG(g[n - 1].fig == last_fig, "%s: %s", spec, figure_name(g[n - 1].fig));
    CHECK_INT(g[n - 1].relative, relative);
    CHECK_NEAR(g[n - 1].threshold, threshold, 1e-12);
}

static void gate_bad(const char *spec, const char *want) {
    gate g[GATE_MAX];
    char err[256] = "";
    CHECK_MSG(gate_parse(spec, g, err, sizeof err) < 0, "%s accepted", spec);
    CHECK_MSG(strstr(err, want) != NULL, "%s: '%s' lacks '%s'", spec, err, want);
}

TEST(compare_gate_parse_accepts_and_refuses) {
    gate_ok("ttft_p95>+10%,goodput_fraction<-1%", 2, FIG_GOODPUT_FRACTION, 1, 1);
    gate_ok("ttft_p95>10%", 1, FIG_TTFT_P95, 1, 10);
    gate_ok(" tpot_p50>5ms , e2e_p99 > +1.5 s", 2, FIG_E2E_P99, 0, 1500);
    gate_ok("itl_p50>250us", 1, FIG_ITL_P50, 0, 0.25);
    gate_ok("output_tokens_per_s<-50tok/s", 1, FIG_OUTPUT_TOKENS_PER_S, 0, 50);
    gate_ok("achieved_rps<-0.5req/s,goodput_rps<-2%", 2, FIG_GOODPUT_RPS, 1, 2);
    gate_ok("goodput_fraction<-2pp", 1, FIG_GOODPUT_FRACTION, 0, 0.02);
    gate_bad("ttft_p95>10", "'ttft_p95>10': the threshold needs a unit: %, ms, s or us");
    gate_bad("ttft_p42>+10%", "unknown figure 'ttft_p42'");
    gate_bad("ttft_p95<-10%", "ttft_p95 is worse when it grows");
    gate_bad("goodput_fraction>+1%", "goodput_fraction is worse when it shrinks");
    gate_bad("ttft_p95>-10%", "the sign contradicts");
    gate_bad("ttft_p95", "expected FIGURE>+N% or FIGURE<-N%");
    gate_bad("ttft_p95>+%", "expected a number");
    gate_bad("goodput_fraction<-5ms", "% or pp");
    gate_bad("tpot_p50>+5%,bogus", "'bogus'");
    gate_bad(",", "no gate");
}

TEST(compare_too_few_requests_get_no_verdict) {
    run_rows b, n;
    figure_change c[FIG_COUNT];
    make_rows(&b, COMPARE_MIN_SAMPLES - 1, 1, 0, 7);
    make_rows(&n, COMPARE_MIN_SAMPLES - 1, 2, 0, 7); /* twice as slow, but nine requests */
    compare_rows(&b, &n, c);
    gate g[GATE_MAX];
    char err[256];
    CHECK_INT(gate_parse("tpot_p50>+5%", g, err, sizeof err), 1);
    for (int f = 0; f < FIG_COUNT; f++)
        CHECK_MSG(c[f].v == VERDICT_FEW, "%s: %s", figure_name(f), verdict_name(c[f].v));
    CHECK(!gate_tripped(&g[0], &c[FIG_TPOT_P50]));
    CHECK_NEAR(c[FIG_TPOT_P50].rel, 1, 1e-9);
    rows_free(&b);
    rows_free(&n);
}

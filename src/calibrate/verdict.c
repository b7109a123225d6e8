/* verdict: the bar a level must pass and the sentence over a table (see
 * verdict.h). The sentence is built in a strbuf and copied out, cut at the
 * caller's capacity. */
#include "calibrate/verdict.h"
#include "common/strbuf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int calibrate_within_1ms(const calib_result *r) {
    return r->failed == 0 && (r->level.burst || r->lag_p99_ms < 1) && r->ttft_err_p99_ms < 1 &&
           r->itl_err_p99_ms < 1 && r->client_cpu_pct < 95;
}

/* The simulator's cores: one a thread, one when not recorded. */
static int sim_cores(const calib_result *r) {
    return r->sim_threads > 1 ? r->sim_threads : 1;
}

int calibrate_sim_bound(const calib_result *r) {
    return r->sim_cpu_pct >= CALIB_SIM_BOUND_PCT * sim_cores(r);
}

/* One kind of arrivals in a table: where its claim stops. */
typedef struct kind_verdict {
    int present;     /* the table has a level of this kind */
    int claim;       /* the heaviest level below the first failure; -1: none */
    int fail;        /* the lightest level that failed; -1: none did */
    double achieved; /* the most chunks/s among the claimed levels */
} kind_verdict;

/* Level a is lighter than level b: fewer streams, or as many at a lower
 * chunk rate; the table's order breaks a tie. */
static int lighter(const calib_result *r, int a, int b) {
    if (r[a].level.streams != r[b].level.streams)
        return r[a].level.streams < r[b].level.streams;
    if (r[a].offered_chunks_per_s != r[b].offered_chunks_per_s)
        return r[a].offered_chunks_per_s < r[b].offered_chunks_per_s;
    return a < b;
}

/* Walks the levels of one kind from the lightest up: every level before
 * the first failure is claimed, none after it. */
static kind_verdict judge_kind(const calib_result *r, int n, int burst) {
    kind_verdict v = {0, -1, -1, 0};
    for (int i = 0; i < n; i++)
        if (r[i].level.burst == burst) {
            v.present = 1;
            if (!r[i].within_1ms && (v.fail < 0 || lighter(r, i, v.fail)))
                v.fail = i;
        }
    for (int i = 0; i < n; i++) {
        if (r[i].level.burst != burst || !r[i].within_1ms ||
            (v.fail >= 0 && !lighter(r, i, v.fail)))
            continue;
        if (v.claim < 0 || lighter(r, v.claim, i))
            v.claim = i;
        if (r[i].achieved_chunks_per_s > v.achieved)
            v.achieved = r[i].achieved_chunks_per_s;
    }
    return v;
}

/* "1000 concurrent streams (spread arrivals)" or "1000 streams started
 * together", with the offered chunk rate when it alone tells this level
 * from the claimed one. */
static void name_level(strbuf *b, const calib_result *r, int with_rate) {
    const calib_level *lv = &r->level;
    sb_printf(b, lv->burst ? "%d streams started together" : "%d concurrent streams", lv->streams);
    if (with_rate)
        sb_printf(
            b, lv->burst ? " (%.0f chunks/s offered)" : " (spread arrivals, %.0f chunks/s offered)",
            r->offered_chunks_per_s);
    else if (!lv->burst)
        sb_puts(b, " (spread arrivals)");
}

/* A p99 figure that failed the bar, or that could not be measured. */
static void put_figure(strbuf *b, int *count, const char *what, double ms) {
    sb_puts(b, (*count)++ ? ", " : " ");
    if (isnan(ms))
        sb_printf(b, "no %s could be measured", what);
    else
        sb_printf(b, "%s p99 was %.2f ms", what, ms);
}

/* What failed a level, e.g. " TTFT error p99 was 5.10 ms, client CPU was 97%". */
static void put_failures(strbuf *b, const calib_result *r) {
    int count = 0;
    if (r->failed)
        sb_printf(b, "%s%zu requests failed", count++ ? ", " : " ", r->failed);
    if (!r->level.burst && !(r->lag_p99_ms < 1))
        put_figure(b, &count, "schedule lag", r->lag_p99_ms);
    if (!(r->ttft_err_p99_ms < 1))
        put_figure(b, &count, "TTFT error", r->ttft_err_p99_ms);
    if (!(r->itl_err_p99_ms < 1))
        put_figure(b, &count, "inter-token error", r->itl_err_p99_ms);
    if (!(r->client_cpu_pct < 95))
        sb_printf(b, "%sclient CPU was %.0f%%", count++ ? ", " : " ", r->client_cpu_pct);
    if (calibrate_sim_bound(r)) {
        int threads = sim_cores(r);
        sb_printf(b,
                  " (the simulator was at %.0f%% of its %d CPU%s: the limit there may be the "
                  "simulator's rather than the client's; --sim-threads gives it more)",
                  r->sim_cpu_pct, threads, threads > 1 ? "s" : "");
    }
}

/* "up to 5000 concurrent streams, 125508 chunks/s and 5000 new requests/s
 * (spread arrivals)" or "up to 300 streams started together". */
static void put_claim(strbuf *b, const calib_result *r, const kind_verdict *v) {
    const calib_result *c = &r[v->claim];
    if (c->level.burst)
        sb_printf(b, "up to %d streams started together", c->level.streams);
    else
        sb_printf(b,
                  "up to %d concurrent streams, %.0f chunks/s and %d new requests/s (spread "
                  "arrivals)",
                  c->level.streams, v->achieved, c->level.streams);
}

/* "; at 1000 streams started together TTFT error p99 was 5.10 ms", or
 * "even at ..., the fewest tried, ..." when nothing of its kind passed. */
static void put_failed_level(strbuf *b, const calib_result *r, const kind_verdict *v) {
    const calib_result *f = &r[v->fail];
    sb_puts(b, v->claim < 0 ? "even at " : "at ");
    name_level(b, f, v->claim >= 0 && r[v->claim].level.streams == f->level.streams);
    if (v->claim < 0)
        sb_puts(b, ", the fewest tried,");
    put_failures(b, f);
}

static void build_sentence(strbuf *b, const calib_result *r, int n) {
    kind_verdict k[2] = {judge_kind(r, n, 0), judge_kind(r, n, 1)};
    int claims = 0, fails = 0;
    for (int i = 0; i < 2; i++) {
        claims += k[i].claim >= 0;
        fails += k[i].fail >= 0;
    }
    sb_puts(b, claims ? "This machine measures within 1 ms "
                      : "This machine did not measure within 1 ms at any level tried: ");
    for (int i = 0, put = 0; i < 2; i++)
        if (k[i].claim >= 0) {
            sb_puts(b, put++ ? " and " : "");
            put_claim(b, r, &k[i]);
        }
    for (int i = 0, put = 0; i < 2; i++)
        if (k[i].fail >= 0) {
            sb_puts(b, put++ || claims ? "; " : "");
            put_failed_level(b, r, &k[i]);
        }
    if (!fails)
        sb_puts(b, !k[1].present  ? " (schedule lag, TTFT and inter-token errors all under 1 ms at "
                                    "p99, client CPU under 95%)"
                   : k[0].present ? " (TTFT and inter-token errors under 1 ms at p99, schedule lag "
                                    "too for spread arrivals, client CPU under 95%)"
                                  : " (TTFT and inter-token errors under 1 ms at p99, client CPU "
                                    "under 95%)");
    if (!claims)
        sb_puts(b, "; treat sub-millisecond differences as noise");
    if (n > 0 && r[0].runs > 1)
        sb_printf(b, "; every figure is the median of %d runs", r[0].runs);
    sb_puts(b, ".");
}

void calibrate_sentence(char *buf, size_t cap, const calib_result *r, int n) {
    strbuf b = {0};
    build_sentence(&b, r, n);
    snprintf(buf, cap, "%s", b.s ? b.s : "");
    sb_free(&b);
}

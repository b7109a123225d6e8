/* figures: what each figure draws, from the pooled runs, through the
 * plotting module (report/svg.h). Load lines only connect runs that differ
 * by offered load alone; long runs are sampled evenly (CDF_POINTS,
 * TIMELINE_MAX) so that a figure stays small whatever the row count. */
#include "report/figures.h"
#include "report/server_proc_section.h"
#include "common/util.h"
#include "report/inflight.h"
#include "report/knee.h"
#include "report/load_line.h"
#include "report/pool.h"
#include "report/steady_rates.h"
#include "report/stages_section.h"
#include "report/svg.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A run's name as part of a file name, one to one, so that two runs never
 * share a figure file: bytes of [A-Za-z0-9._-] stay (a name of only those
 * keeps its file name), every other byte becomes ~XX, its hex ('~' too).
 * An escaped name too long for a file name keeps its first bytes (never
 * half an escape) and ends in "~~" and 16 hex digits of a 64-bit FNV-1a
 * hash of the whole name; the k-th run (k from 2) of a name an earlier run
 * already has ends in "~~k". No escaped name holds "~~", and what follows
 * it tells a hash (16 digits) from a count (fewer), so only a collision of
 * the hash could map two names to one file. */
#define NAME_ESCAPED_MAX 160
#define NAME_PREFIX_MAX 140

static void file_name_of(char *out, size_t cap, const char *in, int occurrence) {
    static const char hex[] = "0123456789ABCDEF";
    char esc[3 * 256 + 1];
    size_t k = 0, cut = 0;
    for (const unsigned char *p = (const unsigned char *)in; *p && k + 4 < sizeof esc; p++) {
        if (k <= NAME_PREFIX_MAX)
            cut = k; /* the last escape boundary within the prefix */
        if (isalnum(*p) || *p == '-' || *p == '_' || *p == '.') {
            esc[k++] = (char)*p;
        } else {
            esc[k++] = '~';
            esc[k++] = hex[*p >> 4];
            esc[k++] = hex[*p & 15];
        }
    }
    esc[k] = 0;
    if (k > NAME_ESCAPED_MAX) {
        uint64_t h = 0xcbf29ce484222325ULL;
        for (const unsigned char *p = (const unsigned char *)in; *p; p++)
            h = (h ^ *p) * 0x100000001b3ULL;
        snprintf(esc + cut, sizeof esc - cut, "~~%016llX", (unsigned long long)h);
    }
    int room = cap > 16 ? (int)cap - 16 : 0; /* a name past the caller's room is cut */
    if (occurrence > 1)
        snprintf(out, cap, "%.*s~~%d", room, esc, occurrence);
    else
        snprintf(out, cap, "%.*s", room, esc);
}

/* 1 for the first run of its name, 2 for the second, and so on. */
static int occurrence_of(const report *r, int k) {
    int n = 1;
    for (int j = 0; j < k; j++)
        n += !strcmp(r->runs[j].name, r->runs[k].name);
    return n;
}

static figure *fig_add(figure **f, int *n, const char *file, const char *caption) {
    *f = xrealloc(*f, (size_t)(*n + 1) * sizeof **f);
    figure *g = &(*f)[(*n)++];
    memset(g, 0, sizeof *g);
    snprintf(g->file, sizeof g->file, "figures/%s.svg", file);
    snprintf(g->caption, sizeof g->caption, "%s", caption);
    return g;
}

/* The runs of the load line (report/load_line.h), their offered loads and
 * the caption's note on the runs left off. */
typedef struct line_runs {
    const report_run **rs;
    int n;
    double *x;
    char note[1200];
} line_runs;

static void line_runs_of(const report *r, line_runs *l) {
    int *in = xcalloc((size_t)r->n_runs + 1, sizeof *in);
    char left_out[1024];
    load_line_runs(r, -1, in, left_out, sizeof left_out);
    l->note[0] = 0;
    if (left_out[0])
        snprintf(l->note, sizeof l->note,
                 " Runs with other settings (%s) are in the tables, not on these lines.", left_out);
    l->rs = xcalloc((size_t)r->n_runs + 1, sizeof *l->rs);
    l->x = xcalloc((size_t)r->n_runs + 1, sizeof *l->x);
    l->n = 0;
    for (int k = 0; k < r->n_runs; k++)
        if (in[k]) {
            l->x[l->n] = r->runs[k].pooled.offered_rps;
            l->rs[l->n++] = &r->runs[k];
        }
    free(in);
}

/* The capacity as a vertical marker with its interval shaded, when the
 * answer found one in requests/s (the load figures' x axis). 1 when added. */
static int capacity_rule(const report_answer *a, plot_rule *u, char *label, size_t cap) {
    const capacity_answer *c = &a->a;
    if (!a->present || c->status != ANSWER_FOUND || c->by_concurrency || !isfinite(c->max))
        return 0;
    int ci = isfinite(c->ci_low) && isfinite(c->ci_high);
    /* three significant digits: 23.4 req/s, and 0.113 on a CPU, not 0.1 */
    if (ci)
        snprintf(label, cap, "capacity %.3g req/s (95%% CI %.3g-%.3g)", c->max, c->ci_low,
                 c->ci_high);
    else
        snprintf(label, cap, "capacity ~%.3g req/s (interpolated)", c->max);
    *u = (plot_rule){1, c->max, ci ? c->ci_low : NAN, ci ? c->ci_high : NAN, label, 2, 0};
    return 1;
}

/* The SLO's latency bounds as labelled horizontal lines. */
static int slo_rules(const slo_spec *slo, plot_rule *u, char labels[][64]) {
    int n = 0;
    if (slo->ttft_ms > 0) {
        snprintf(labels[n], 64, "SLO: TTFT <= %g ms", slo->ttft_ms);
        u[n] = (plot_rule){0, slo->ttft_ms, NAN, NAN, labels[n], 1, 1};
        n++;
    }
    if (slo->tpot_ms > 0) {
        snprintf(labels[n], 64, "SLO: TPOT <= %g ms", slo->tpot_ms);
        u[n] = (plot_rule){0, slo->tpot_ms, NAN, NAN, labels[n], 4, 1};
        n++;
    }
    return n;
}

static const char *const knee_rule_text =
    " Knee: the first load whose TTFT p95 is more than twice what the lower loads' trend "
    "(their least-squares line, no lower than their largest p95) predicts there, with its "
    "interval above the interval of the load before; ";

/* ---- several campaigns (`report A B`): one set of curves each ---- */

#define CAMPAIGNS_DRAWN 8

/* Campaign c's runs of the load lines, by load: into rs and x; how many. */
static int campaign_runs(const line_runs *l, int c, const report_run **rs, double *x) {
    int n = 0;
    for (int k = 0; k < l->n; k++)
        if (l->rs[k]->campaign_index == c) {
            rs[n] = l->rs[k];
            x[n++] = l->x[k];
        }
    return n;
}

/* A campaign's label (its runs' campaign). */
static const char *campaign_label(const line_runs *l, int c) {
    for (int k = 0; k < l->n; k++)
        if (l->rs[k]->campaign_index == c)
            return l->rs[k]->campaign;
    return "";
}

/* Per campaign: what one value of a run is (v picks it), as a series. */
typedef double (*run_value)(const report_run *rr, int which);

static double latency_value(const report_run *rr, int which) {
    switch (which) {
    case 0: return rr->pooled.ttft.p50;
    case 1: return rr->pooled.ttft.p95;
    case 2: return rr->ci[0][0];
    case 3: return rr->ci[0][1];
    case 4: return rr->ci[1][0];
    default: return rr->ci[1][1];
    }
}

static double throughput_value(const report_run *rr, int which) {
    double req, tok;
    steady_rates(rr, &req, &tok);
    return which == 0 ? tok : req;
}

/* vals[c][w][k]: value w of campaign c's k-th run; xs[c], counts in n[c]. */
typedef struct campaign_values {
    int nc, n[CAMPAIGNS_DRAWN];
    double *x[CAMPAIGNS_DRAWN], *v[CAMPAIGNS_DRAWN][6];
    char names[CAMPAIGNS_DRAWN][2][300];
} campaign_values;

static void campaign_values_of(const report *r, const line_runs *l, run_value f, int nv,
                               campaign_values *cv) {
    memset(cv, 0, sizeof *cv);
    cv->nc = r->n_campaigns < CAMPAIGNS_DRAWN ? r->n_campaigns : CAMPAIGNS_DRAWN;
    const report_run **rs = xcalloc((size_t)l->n + 1, sizeof *rs);
    for (int c = 0; c < cv->nc; c++) {
        cv->x[c] = xcalloc((size_t)l->n + 1, sizeof *cv->x[c]);
        cv->n[c] = campaign_runs(l, c, rs, cv->x[c]);
        for (int w = 0; w < nv; w++) {
            cv->v[c][w] = xcalloc((size_t)l->n + 1, sizeof *cv->v[c][w]);
            for (int k = 0; k < cv->n[c]; k++)
                cv->v[c][w][k] = f(rs[k], w);
        }
    }
    free(rs);
}

static void campaign_values_free(campaign_values *cv) {
    for (int c = 0; c < cv->nc; c++) {
        free(cv->x[c]);
        for (int w = 0; w < 6; w++)
            free(cv->v[c][w]);
    }
}

static void fig_latency_campaigns(const report *r, const line_runs *l, figure **figs, int *nf) {
    campaign_values cv;
    campaign_values_of(r, l, latency_value, 6, &cv);
    plot_series s[2 * CAMPAIGNS_DRAWN];
    const double *lo[2 * CAMPAIGNS_DRAWN], *hi[2 * CAMPAIGNS_DRAWN];
    int ns = 0;
    for (int c = 0; c < cv.nc; c++)
        for (int p = 0; p < 2; p++) {
            snprintf(cv.names[c][p], sizeof cv.names[c][p], "%.200s: TTFT %s", campaign_label(l, c),
                     p ? "p95" : "p50");
            s[ns] =
                (plot_series){cv.names[c][p], cv.x[c], cv.v[c][p], (size_t)cv.n[c], 0, !p, 1, 0, c};
            lo[ns] = cv.v[c][2 + 2 * p];
            hi[ns++] = cv.v[c][3 + 2 * p];
        }
    plot_rule rules[2];
    char labels[2][64];
    int nr = slo_rules(&r->answer.a.slo, rules, labels);
    plot_spec sp = {.title = "Latency vs offered load, one pair of curves per campaign",
                    .xlabel = "offered load (requests/s)",
                    .ylabel = "TTFT (ms, log scale)",
                    .logy = 1,
                    .rules = rules,
                    .n_rules = (size_t)nr,
                    .err_lo = lo,
                    .err_hi = hi};
    char cap[2600];
    snprintf(cap, sizeof cap,
             "TTFT p50 (dashed) and p95 (solid) against offered load, one colour per campaign "
             "(at most %d), error bars: the 95%% bootstrap intervals; TPOT and the rest per "
             "campaign are in the tables.%s%s",
             CAMPAIGNS_DRAWN, nr ? " Dashed horizontal lines: the SLO's bounds." : "", l->note);
    figure *f = fig_add(figs, nf, "latency_vs_load", cap);
    svg_plot(&f->svg, &sp, s, (size_t)ns);
    campaign_values_free(&cv);
}

static void fig_throughput_campaigns(const report *r, const line_runs *l, figure **figs, int *nf) {
    campaign_values cv;
    campaign_values_of(r, l, throughput_value, 2, &cv);
    plot_series s[2 * CAMPAIGNS_DRAWN];
    int ns = 0;
    for (int c = 0; c < cv.nc; c++)
        for (int p = 0; p < 2; p++) {
            snprintf(cv.names[c][p], sizeof cv.names[c][p], "%.200s: %s", campaign_label(l, c),
                     p ? "achieved req/s" : "output tokens/s");
            s[ns++] =
                (plot_series){cv.names[c][p], cv.x[c], cv.v[c][p], (size_t)cv.n[c], p, p, 1, 0, c};
        }
    plot_spec sp = {.title = "Throughput vs offered load, per campaign (over the arrival window, "
                             "shifted)",
                    .xlabel = "offered load (requests/s)",
                    .ylabel = "output tokens/s",
                    .y2label = "requests/s",
                    .ymin_zero = 1};
    char cap[2600];
    snprintf(cap, sizeof cap,
             "Output tokens/s (solid, left) and achieved requests/s (dashed, right) over each "
             "run's arrival window shifted by its median time from scheduled arrival to end, "
             "one colour per campaign.%s",
             l->note);
    figure *f = fig_add(figs, nf, "throughput_vs_load", cap);
    svg_plot(&f->svg, &sp, s, (size_t)ns);
    campaign_values_free(&cv);
}

static void fig_latency(const report *r, const line_runs *l, figure **figs, int *nf) {
    if (r->n_campaigns > 1) {
        fig_latency_campaigns(r, l, figs, nf);
        return;
    }
    int n = l->n;
    double *y[13];
    for (int i = 0; i < 13; i++)
        y[i] = xcalloc((size_t)n + 1, sizeof *y[i]);
    for (int k = 0; k < n; k++) {
        const report_run *rr = l->rs[k];
        const double v[13] = {rr->pooled.ttft.p50, rr->pooled.ttft.p95, rr->pooled.ttft.p99,
                              rr->pooled.tpot.p50, rr->pooled.tpot.p95, rr->ci[0][0],
                              rr->ci[0][1],        rr->ci[1][0],        rr->ci[1][1],
                              rr->ci[2][0],        rr->ci[2][1],        rr->ci[3][0],
                              rr->ci[3][1]};
        for (int i = 0; i < 13; i++)
            y[i][k] = v[i];
    }
    plot_series lat[] = {
        {"TTFT p50", l->x, y[0], (size_t)n, 0, 0, 1, 0, 0},
        {"TTFT p95", l->x, y[1], (size_t)n, 0, 0, 1, 0, 1},
        {"TTFT p99", l->x, y[2], (size_t)n, 0, 0, 1, 0, 3},
        {"TPOT p50", l->x, y[3], (size_t)n, 0, 1, 1, 0, 2},
        {"TPOT p95", l->x, y[4], (size_t)n, 0, 1, 1, 0, 4},
    };
    plot_rule rules[3];
    char labels[2][64], cap_label[128], title[200], knee_words[200];
    int nr = slo_rules(&r->answer.a.slo, rules, labels);
    nr += capacity_rule(&r->answer, &rules[nr], cap_label, sizeof cap_label);
    int knee = knee_find(l->x, y[1], y[7], y[8], n, NULL);
    if (knee >= 0) {
        snprintf(title, sizeof title, "Latency vs offered load: TTFT p95 knee at %.3g req/s",
                 l->x[knee]);
        snprintf(knee_words, sizeof knee_words, "here at %.3g req/s (%.100s).", l->x[knee],
                 l->rs[knee]->name);
    } else {
        snprintf(title, sizeof title, "Latency vs offered load");
        snprintf(knee_words, sizeof knee_words, "none is found here, so none is named.");
    }
    const double *err_lo[5] = {y[5], y[7], NULL, y[9], y[11]},
                 *err_hi[5] = {y[6], y[8], NULL, y[10], y[12]};
    plot_spec sp = {.title = title,
                    .xlabel = "offered load (requests/s)",
                    .ylabel = "latency (ms, log scale)",
                    .logy = 1,
                    .rules = rules,
                    .n_rules = (size_t)nr,
                    .err_lo = err_lo,
                    .err_hi = err_hi};
    char cap[2600];
    int marked = nr > 0 && rules[nr - 1].vertical;
    snprintf(cap, sizeof cap,
             "TTFT and TPOT percentiles against offered load, one point per run; error bars: the "
             "95%% bootstrap intervals of p50 and p95.%s%s%s%s%s",
             nr > marked ? " Dashed horizontal lines: the SLO's bounds." : "",
             marked ? " Vertical line: the capacity of the report's opening sentence (shaded: its "
                      "95% interval, when it has one)."
                    : "",
             knee_rule_text, knee_words, l->note);
    figure *f = fig_add(figs, nf, "latency_vs_load", cap);
    svg_plot(&f->svg, &sp, lat, 5);
    for (int i = 0; i < 13; i++)
        free(y[i]);
}

/* Rates over the arrival window: a short run's drain tail (the last long
 * answers ending after arrivals stopped) pulls the whole-run rates down
 * and makes an unsaturated server look saturated. */
static void fig_throughput(const report *r, const line_runs *l, figure **figs, int *nf) {
    if (r->n_campaigns > 1) {
        fig_throughput_campaigns(r, l, figs, nf);
        return;
    }
    int n = l->n;
    double *y[4];
    for (int i = 0; i < 4; i++)
        y[i] = xcalloc((size_t)n + 1, sizeof *y[i]);
    for (int k = 0; k < n; k++) {
        const run_summary *s = &l->rs[k]->pooled;
        steady_rates(l->rs[k], &y[1][k], &y[0][k]);
        y[2][k] = s->realized_offered_rps;
        y[3][k] = s->realized_offered_rps * s->goodput_fraction;
    }
    plot_series thr[] = {
        {"output tokens/s", l->x, y[0], (size_t)n, 0, 0, 1, 0, 0},
        {"achieved req/s", l->x, y[1], (size_t)n, 1, 0, 1, 0, 2},
        {"offered req/s (scheduled)", l->x, y[2], (size_t)n, 1, 1, 0, 0, 8},
        {"goodput req/s", l->x, y[3], (size_t)n, 1, 1, 1, 0, 1},
    };
    plot_rule rule;
    char cap_label[128];
    int nr = capacity_rule(&r->answer, &rule, cap_label, sizeof cap_label);
    plot_spec sp = {.title = "Throughput vs offered load (over the arrival window, shifted)",
                    .xlabel = "offered load (requests/s)",
                    .ylabel = "output tokens/s",
                    .y2label = "requests/s",
                    .ymin_zero = 1,
                    .rules = &rule,
                    .n_rules = (size_t)nr};
    char cap[2600];
    snprintf(cap, sizeof cap,
             "Output token throughput (left) and request rates (right), each over the run's "
             "arrival window (t=0 to the last scheduled arrival) shifted by the run's median "
             "time from scheduled arrival to end: the completions (and their output tokens) "
             "that ended in it, per second of window. Neither the drain tail after the last "
             "arrival nor the first requests' wait to end is counted, so a short run does not "
             "look saturated when it is not. The whole-run rates are in each run's key figures. "
             "Goodput here is the realized offered rate times the share of requests meeting the "
             "SLO.%s",
             l->note);
    figure *f = fig_add(figs, nf, "throughput_vs_load", cap);
    svg_plot(&f->svg, &sp, thr, 4);
    for (int i = 0; i < 4; i++)
        free(y[i]);
}

static void fig_queueing(const line_runs *l, figure **figs, int *nf) {
    int n = l->n, have_share = 0;
    double *q0 = xcalloc((size_t)n + 1, sizeof *q0), *q1 = xcalloc((size_t)n + 1, sizeof *q1);
    for (int k = 0; k < n; k++) {
        q0[k] = 100 * l->rs[k]->server.queue_share_of_ttft;
        q1[k] = 100 * l->rs[k]->server.peak_kv_usage;
        have_share |= isfinite(q0[k]);
    }
    if (have_share) {
        plot_series q[] = {{"server queueing share of TTFT", l->x, q0, (size_t)n, 0, 0, 1, 0, 1},
                           {"peak KV-cache use", l->x, q1, (size_t)n, 0, 1, 1, 0, 0}};
        plot_spec sp = {.title = "Why TTFT rises: time queued in the server, KV-cache pressure",
                        .xlabel = "offered load (requests/s)",
                        .ylabel = "percent",
                        .ymin_zero = 1};
        char cap[2600];
        snprintf(cap, sizeof cap,
                 "Share of the server's TTFT spent waiting in its queue (from vLLM's queue-time "
                 "and TTFT histograms) and peak KV-cache use, per run.%s",
                 l->note);
        figure *f = fig_add(figs, nf, "queueing_vs_load", cap);
        svg_plot(&f->svg, &sp, q, 2);
    }
    free(q0);
    free(q1);
}

static void fig_load(const report *r, figure **figs, int *nf) {
    line_runs l;
    line_runs_of(r, &l);
    fig_latency(r, &l, figs, nf);
    fig_throughput(r, &l, figs, nf);
    fig_queueing(&l, figs, nf);
    free(l.rs);
    free(l.x);
}

#define CDF_POINTS 400

static void fig_cdf(const report *r, figure **figs, int *nf) {
    plot_series *s = xcalloc((size_t)r->n_runs, sizeof *s);
    double **xs = xcalloc((size_t)r->n_runs, sizeof *xs),
           **ys = xcalloc((size_t)r->n_runs, sizeof *ys);
    for (int k = 0; k < r->n_runs; k++) {
        double *v;
        size_t n;
        pool_sorted_metric(&r->runs[k].rows, 0, &v, &n);
        size_t m = n < CDF_POINTS ? n : CDF_POINTS;
        xs[k] = xcalloc(m + 1, sizeof **xs);
        ys[k] = xcalloc(m + 1, sizeof **ys);
        for (size_t i = 0; i < m; i++) {
            size_t idx = m == n ? i : (size_t)((double)(i + 1) / (double)m * (double)(n - 1));
            xs[k][i] = v[idx];
            ys[k][i] = (double)(idx + 1) / (double)n;
        }
        s[k] = (plot_series){r->runs[k].name, xs[k], ys[k], m, 0, 0, 0, 1, -1};
        free(v);
    }
    /* the TTFT bound, where there is one: the share left of it met it */
    char label[64];
    double bound = r->answer.present ? r->answer.a.slo.ttft_ms : 0;
    snprintf(label, sizeof label, "SLO: TTFT <= %g ms", bound);
    plot_rule rule = {1, bound, NAN, NAN, label, 1, 1};
    plot_spec sp = {.title = "TTFT distribution per run",
                    .xlabel = "time to first token (ms, log scale)",
                    .ylabel = "fraction of successful requests",
                    .logx = 1,
                    .ymin_zero = 1,
                    .rules = &rule,
                    .n_rules = bound > 0};
    figure *f = fig_add(figs, nf, "ttft_cdf",
                        bound > 0 ? "Cumulative distribution of TTFT (from send); dashed "
                                    "vertical line: the SLO's TTFT bound."
                                  : "Cumulative distribution of TTFT (from send).");
    svg_plot(&f->svg, &sp, s, r->n_runs);
    for (int k = 0; k < r->n_runs; k++) {
        free(xs[k]);
        free(ys[k]);
    }
    free(xs);
    free(ys);
    free(s);
}

#define TIMELINE_MAX 1500

static int cmp_sched(const void *a, const void *b) {
    const req_rec *x = *(req_rec *const *)a, *y = *(req_rec *const *)b;
    return (x->scheduled_ms > y->scheduled_ms) - (x->scheduled_ms < y->scheduled_ms);
}

static void fig_timeline(const report_run *rr, const char *file_part, figure **figs, int *nf) {
    size_t n = 0;
    req_rec **p = xmalloc((rr->rows.n ? rr->rows.n : 1) * sizeof *p);
    for (size_t i = 0; i < rr->rows.n; i++)
        if (rr->rows.r[i].part == 0)
            p[n++] = &rr->rows.r[i];
    qsort(p, n, sizeof *p, cmp_sched);
    size_t m = n < TIMELINE_MAX ? n : TIMELINE_MAX;
    plot_bar *bars = xcalloc(3 * m + 1, sizeof *bars);
    size_t nb = 0;
    for (size_t j = 0; j < m; j++) {
        const req_rec *r = p[m == n ? j : (size_t)((double)j / (double)m * (double)n)];
        double y = (double)j, s0 = r->scheduled_ms / 1000, s1 = r->sent_ms / 1000,
               f = r->first_ms / 1000, e = r->end_ms / 1000;
        if (r->error != ERR_NONE) {
            bars[nb++] = (plot_bar){s0, isnan(e) ? s0 : e, y, 1};
            continue;
        }
        if (s1 > s0)
            bars[nb++] = (plot_bar){s0, s1, y, 8};
        bars[nb++] = (plot_bar){s1, isnan(f) ? e : f, y, 3};
        if (!isnan(f))
            bars[nb++] = (plot_bar){f, e, y, 0};
    }
    /* legend entries are palette slots 0.. in order: name them by colour */
    static const char *const legend[] = {"decode (first token to end)", "failed", NULL};
    plot_spec sp = {.title = NULL,
                    .xlabel = "time since the run started (s)",
                    .ylabel = "request (in arrival order)",
                    .bars = bars,
                    .n_bars = nb,
                    .bar_height = 0.8,
                    .bar_legend = legend,
                    .height = 460};
    plot_rule marks[STAGE_MARKS_MAX];
    char mark_labels[STAGE_MARKS_MAX][STAGE_LABEL_LEN];
    sp.n_rules = (size_t)stage_marks(rr, marks, mark_labels); /* a rate plan's stages */
    sp.rules = marks;
    /* orange (3) and grey (8) keep their meaning through the series legend */
    double zx[1] = {NAN}, zy[1] = {NAN};
    plot_series keys[] = {{"time to first token", zx, zy, 1, 0, 0, 0, 0, 3},
                          {"waiting in the client (cap)", zx, zy, 1, 0, 0, 0, 0, 8}};
    char title[320], file[240];
    snprintf(title, sizeof title, "Timeline of %.200s%s: each request's wait, TTFT and decode",
             rr->name, rr->n_reps > 1 ? " (first repetition)" : "");
    sp.title = title;
    snprintf(file, sizeof file, "timeline-%s", file_part);
    figure *f = fig_add(figs, nf, file,
                        m < n ? "Every request's life, sampled evenly (too many to draw all)."
                              : "Every request's life in the run.");
    if (sp.n_rules) /* a rate plan's */
        snprintf(f->caption + strlen(f->caption), sizeof f->caption - strlen(f->caption),
                 " Dashed lines: where the rate plan's stages start, and where it ends.");
    svg_plot(&f->svg, &sp, keys, 2);
    free(bars);
    free(p);
}

/* Fewer /metrics samples than this over a run cannot show its queue (a
 * 3-second run sampled each second reads "0 waiting" while most of its
 * TTFT was queueing): the client's own counts stand in for the server's. */
#define SERVER_SAMPLES_MIN 10

/* A figure's series and the arrays made for them, freed together. */
typedef struct series_list {
    plot_series s[12];
    int n;
    double *own[24];
    int n_own;
} series_list;

static void add_series(series_list *l, plot_series s) {
    if (l->n < 12)
        l->s[l->n++] = s;
}

static double *owned(series_list *l, size_t n) {
    double *v = xmalloc((n ? n : 1) * sizeof *v);
    l->own[l->n_own++] = v;
    return v;
}

/* A series' times in seconds and its values times `scale`, in arrays of l. */
static void rescaled(series_list *l, const series *src, double scale, double **t, double **v) {
    *t = owned(l, src->n);
    *v = owned(l, src->n);
    for (size_t k = 0; k < src->n; k++) {
        (*t)[k] = src->t_ms[k] / 1000;
        (*v)[k] = scale * src->v[k];
    }
}

static size_t samples_within(const series *s, double end_s) {
    size_t n = 0;
    for (size_t k = 0; s && k < s->n; k++)
        n += s->t_ms[k] >= 0 && s->t_ms[k] <= end_s * 1000;
    return n;
}

/* The server's queue series, vLLM's or llama.cpp's; either may be NULL. */
static void queue_series(const run_files *rf, const series **run, const series **wait) {
    *run = series_find(&rf->metrics, "vllm:num_requests_running");
    *wait = series_find(&rf->metrics, "vllm:num_requests_waiting");
    if (!*run)
        *run = series_find(&rf->metrics, "llamacpp:requests_processing");
    if (!*wait)
        *wait = series_find(&rf->metrics, "llamacpp:requests_deferred");
}

/* The server's queue (when `queue`) and KV-cache use from /metrics, its
 * GPUs' utilisation from NVML. */
static void add_server_series(const run_files *rf, int queue, series_list *l) {
    const series *run, *wait;
    queue_series(rf, &run, &wait);
    const series *src[3] = {queue ? run : NULL, queue ? wait : NULL,
                            series_find(&rf->metrics, "vllm:kv_cache_usage_perc")};
    const char *names[3] = {"server: requests running", "server: requests waiting",
                            "KV cache used (%)"};
    for (int i = 0; i < 3; i++) {
        if (!src[i] || !src[i]->n)
            continue;
        double *t, *v;
        rescaled(l, src[i], i == 2 ? 100 : 1, &t, &v);
        add_series(l, (plot_series){names[i], t, v, src[i]->n, i == 2, 0, 0, 1, i});
    }
    for (int g = 0; g < rf->gpu.n; g++) {
        const series *gs = &rf->gpu.s[g];
        if (!strstr(gs->name, "util_pct"))
            continue;
        double *t, *v;
        rescaled(l, gs, 1, &t, &v);
        add_series(l, (plot_series){gs->name, t, v, gs->n, 1, 1, 0, 1, 3 + g});
    }
}

/* The client's own counts, dashed: in flight, of those no first token yet,
 * and waiting to be sent (only when a request waited: every request waits
 * the microseconds of its dispatch, too little to draw). */
static void add_client_series(const client_counts *c, series_list *l) {
    add_series(l, (plot_series){"client: in flight (sent, not ended)", c->t_s, c->in_flight, c->n,
                                0, 1, 0, 0, 7});
    add_series(
        l, (plot_series){"client: no first token yet", c->t_s, c->no_first, c->n, 0, 1, 0, 0, 1});
    if (c->peak_waiting >= 0.5)
        add_series(l, (plot_series){"client: waiting to send (cap)", c->t_s, c->waiting, c->n, 0, 1,
                                    0, 0, 8});
}

/* What the figure draws and where each series comes from. */
static void server_caption(char *cap, size_t n, size_t samples, int queue, const client_counts *c) {
    char why[400];
    double run_s = (double)c->n * c->step_s;
    if (queue)
        snprintf(why, sizeof why,
                 "Solid: the server's queue from its /metrics (%zu samples). Dashed: the "
                 "client's own counts beside it, as a server may not count requests still "
                 "waiting in its HTTP queue.",
                 samples);
    else if (samples)
        snprintf(why, sizeof why,
                 "The server's /metrics were sampled %zu times in this %.1f s run, too few to "
                 "show its queue: the queue drawn is the client's own (dashed), not the "
                 "server's.",
                 samples, run_s);
    else
        snprintf(why, sizeof why,
                 "No queue from the server's /metrics: the queue drawn is the "
                 "client's own (dashed).");
    snprintf(cap, n,
             "%s The client's counts are from requests.csv, means over %.3g ms bins. KV-cache "
             "use from /metrics, GPU utilisation from NVML.",
             why, c->step_s * 1000);
}

static void fig_server(const report_run *rr, const char *file_part, figure **figs, int *nf) {
    const run_files *rf = &rr->files[0];
    client_counts cc;
    client_counts_of(&rr->rows, 0, &cc);
    const series *run, *wait;
    queue_series(rf, &run, &wait);
    double run_s = (double)cc.n * cc.step_s;
    size_t samples = samples_within(run ? run : wait, run_s);
    int queue = samples >= SERVER_SAMPLES_MIN;
    series_list l = {0};
    add_server_series(rf, queue, &l);
    if (cc.n)
        add_client_series(&cc, &l);
    if (l.n > 0) {
        char title[320], file[240], cap[1000];
        snprintf(title, sizeof title, "Server, client and GPU during %.200s%s", rr->name,
                 rr->n_reps > 1 ? " (first repetition)" : "");
        snprintf(file, sizeof file, "server-%s", file_part);
        plot_spec sp = {.title = title,
                        .xlabel = "time since the run started (s)",
                        .ylabel = "requests",
                        .y2label = "percent",
                        .ymin_zero = 1};
        server_caption(cap, sizeof cap, samples, queue, &cc);
        figure *f = fig_add(figs, nf, file, cap);
        svg_plot(&f->svg, &sp, l.s, l.n);
    }
    for (int i = 0; i < l.n_own; i++)
        free(l.own[i]);
    client_counts_free(&cc);
}

/* The server's process tree, when the run sampled it (server_proc_section.h). */
static void fig_server_proc(const report_run *rr, const char *file_part, figure **figs, int *nf) {
    strbuf svg = {0};
    char cap[1000], file[240];
    if (!server_proc_figure(rr, &svg, cap, sizeof cap))
        return;
    snprintf(file, sizeof file, "server_proc-%s", file_part);
    fig_add(figs, nf, file, cap)->svg = svg;
}

void figures_across_runs(const report *r, figure **figs, int *n) {
    fig_load(r, figs, n);
    fig_cdf(r, figs, n);
}

void figures_of_run(const report *r, int k, figure **figs, int *n) {
    char part[NAME_ESCAPED_MAX + 32];
    file_name_of(part, sizeof part, r->runs[k].name, occurrence_of(r, k));
    fig_timeline(&r->runs[k], part, figs, n);
    fig_server(&r->runs[k], part, figs, n);
    fig_server_proc(&r->runs[k], part, figs, n);
}

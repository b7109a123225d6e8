/* figures: what each figure draws, from the pooled runs, through the
 * plotting module (report/svg.h). Load lines only connect runs that differ
 * by offered load alone; long runs are sampled evenly (CDF_POINTS,
 * TIMELINE_MAX) so that a figure stays small whatever the row count. */
#include "report/figures.h"
#include "common/util.h"
#include "report/inflight.h"
#include "report/pool.h"
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
    if (occurrence > 1)
        snprintf(out, cap, "%s~~%d", esc, occurrence);
    else
        snprintf(out, cap, "%s", esc);
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

/* The runs that differ only by offered load: the largest such group (the
 * first on ties). The others stay in the tables but off the load lines. */
static int main_variant(const report *r, int *in, char *left_out, size_t cap) {
    int best = 0, best_n = 0;
    for (int k = 0; k < r->n_runs; k++) {
        int c = 0;
        for (int j = 0; j < r->n_runs; j++)
            c += !strcmp(r->runs[j].variant, r->runs[k].variant);
        if (c > best_n) {
            best_n = c;
            best = k;
        }
    }
    left_out[0] = 0;
    for (int k = 0; k < r->n_runs; k++) {
        in[k] = !strcmp(r->runs[k].variant, r->runs[best].variant);
        if (!in[k])
            snprintf(left_out + strlen(left_out), cap - strlen(left_out), "%s%s",
                     left_out[0] ? ", " : "", r->runs[k].name);
    }
    return best_n;
}

static void fig_load(const report *r, figure **figs, int *nf) {
    int *in = xcalloc((size_t)r->n_runs, sizeof *in);
    char left_out[1024], note[1200] = "";
    main_variant(r, in, left_out, sizeof left_out);
    if (left_out[0])
        snprintf(note, sizeof note,
                 " Runs with other settings (%s) are in the tables, not on these lines.", left_out);
    int n = 0;
    const report_run **rs = xcalloc((size_t)r->n_runs, sizeof *rs);
    for (int k = 0; k < r->n_runs; k++)
        if (in[k])
            rs[n++] = &r->runs[k];
    double *x = xcalloc((size_t)n + 1, sizeof *x);
    double *y[8];
    for (int i = 0; i < 8; i++)
        y[i] = xcalloc((size_t)n + 1, sizeof *y[i]);
    for (int k = 0; k < n; k++) {
        const run_summary *s = &rs[k]->pooled;
        x[k] = s->offered_rps;
        y[0][k] = s->ttft.p50;
        y[1][k] = s->ttft.p95;
        y[2][k] = s->ttft.p99;
        y[3][k] = s->tpot.p50;
        y[4][k] = s->tpot.p95;
        y[5][k] = s->output_tokens_per_s;
        y[6][k] = s->achieved_rps;
        y[7][k] = s->goodput_rps;
    }
    plot_series lat[] = {
        {"TTFT p50", x, y[0], (size_t)n, 0, 0, 1, 0, 0},
        {"TTFT p95", x, y[1], (size_t)n, 0, 0, 1, 0, 1},
        {"TTFT p99", x, y[2], (size_t)n, 0, 0, 1, 0, 3},
        {"TPOT p50", x, y[3], (size_t)n, 0, 1, 1, 0, 2},
        {"TPOT p95", x, y[4], (size_t)n, 0, 1, 1, 0, 4},
    };
    plot_spec sp = {.title = "Latency vs offered load (where TTFT leaves the floor is the knee)",
                    .xlabel = "offered load (requests/s)",
                    .ylabel = "latency (ms, log scale)",
                    .logy = 1};
    char cap[1600];
    snprintf(cap, sizeof cap,
             "TTFT and TPOT percentiles against offered load, one point per run.%s", note);
    figure *f = fig_add(figs, nf, "latency_vs_load", cap);
    svg_plot(&f->svg, &sp, lat, 5);
    plot_series thr[] = {
        {"output tokens/s", x, y[5], (size_t)n, 0, 0, 1, 0, 0},
        {"achieved requests/s", x, y[6], (size_t)n, 1, 0, 1, 0, 2},
        {"goodput requests/s", x, y[7], (size_t)n, 1, 1, 1, 0, 1},
    };
    plot_spec sp2 = {.title = "Throughput vs offered load",
                     .xlabel = "offered load (requests/s)",
                     .ylabel = "output tokens/s",
                     .y2label = "requests/s",
                     .ymin_zero = 1};
    snprintf(cap, sizeof cap,
             "Output token throughput (left) and achieved and goodput request rates (right).%s",
             note);
    f = fig_add(figs, nf, "throughput_vs_load", cap);
    svg_plot(&f->svg, &sp2, thr, 3);
    int have_share = 0;
    for (int k = 0; k < n; k++) {
        y[0][k] = 100 * rs[k]->server.queue_share_of_ttft;
        y[1][k] = 100 * rs[k]->server.peak_kv_usage;
        have_share |= isfinite(y[0][k]);
    }
    if (have_share) {
        plot_series q[] = {{"server queueing share of TTFT", x, y[0], (size_t)n, 0, 0, 1, 0, 1},
                           {"peak KV-cache use", x, y[1], (size_t)n, 0, 1, 1, 0, 0}};
        plot_spec sp3 = {.title = "Why TTFT rises: time queued in the server, KV-cache pressure",
                         .xlabel = "offered load (requests/s)",
                         .ylabel = "percent",
                         .ymin_zero = 1};
        snprintf(cap, sizeof cap,
                 "Share of the server's TTFT spent waiting in its queue (from vLLM's queue-time "
                 "and TTFT histograms) and peak KV-cache use, per run.%s",
                 note);
        f = fig_add(figs, nf, "queueing_vs_load", cap);
        svg_plot(&f->svg, &sp3, q, 2);
    }
    free(x);
    free(in);
    free(rs);
    for (int i = 0; i < 8; i++)
        free(y[i]);
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
    plot_spec sp = {.title = "TTFT distribution per run",
                    .xlabel = "time to first token (ms, log scale)",
                    .ylabel = "fraction of successful requests",
                    .logx = 1,
                    .ymin_zero = 1};
    figure *f = fig_add(figs, nf, "ttft_cdf", "Cumulative distribution of TTFT (from send).");
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

void figures_across_runs(const report *r, figure **figs, int *n) {
    fig_load(r, figs, n);
    fig_cdf(r, figs, n);
}

void figures_of_run(const report *r, int k, figure **figs, int *n) {
    char part[NAME_ESCAPED_MAX + 32];
    file_name_of(part, sizeof part, r->runs[k].name, occurrence_of(r, k));
    fig_timeline(&r->runs[k], part, figs, n);
    fig_server(&r->runs[k], part, figs, n);
}

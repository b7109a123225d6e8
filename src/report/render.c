/* render: the files of a report, in memory. summary.md and report.html
 * are written side by side, every table and figure going to both, so the
 * two documents always hold the same figures in the same order; the
 * figures are also files of their own, after the four documents. */
#include "report/report.h"
#include "common/util.h"
#include "report/figures.h"
#include "report/stages_section.h"
#include "report/summary_files.h"
#include "report/tables.h"
#include "report/workload_section.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *html_head =
    "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
    "<title>servelab report</title>\n<style>\n"
    "body{font-family:sans-serif;margin:2em auto;max-width:1100px;color:#222;padding:0 1em}\n"
    "table{border-collapse:collapse;margin:0.6em 0 1.2em}\n"
    "th,td{border:1px solid #ccc;padding:3px 8px;font-size:13px}\n"
    "th{background:#f2f2f2}td.n{text-align:right;font-variant-numeric:tabular-nums}\n"
    "figure{margin:1em 0}figcaption{font-size:13px;color:#555}\n"
    "svg{max-width:100%;height:auto;border:1px solid #eee}\n"
    ".note{font-size:13px;color:#555}\n"
    ".answer{font-size:17px;border-left:4px solid #2ca02c;padding:0.4em 0.8em;background:#f6fbf6}\n"
    "</style>\n</head>\n<body>\n";

static void html_figure(strbuf *h, const figure *f) {
    sb_puts(h, "<figure>\n");
    sb_puts(h, f->svg.s);
    sb_puts(h, "<figcaption>");
    sb_escape(h, f->caption);
    sb_puts(h, " (");
    sb_escape(h, f->file);
    sb_puts(h, ")</figcaption>\n</figure>\n");
}

out_file *out_files_add(out_file **o, int *n, const char *name) {
    *o = xrealloc(*o, (size_t)(*n + 1) * sizeof **o);
    out_file *f = &(*o)[(*n)++];
    memset(f, 0, sizeof *f);
    snprintf(f->name, sizeof f->name, "%s", name);
    return f;
}

static const char *definitions =
    "Definitions: TTFT and E2E are measured from when each request was sent (comparable with "
    "vLLM's bench) and from when it was due by the arrival schedule (what a user arriving on "
    "schedule waits). Percentiles interpolate linearly between closest ranks (numpy's default). "
    "A request meets the SLO when it succeeded and every stated bound holds; failures count as "
    "misses and stay in every denominator. The run's duration runs from the first scheduled "
    "arrival to the end of the last request; rates over the arrival window leave out the drain "
    "tail. Confidence intervals: 2000 bootstrap replicates of the percentile, seed 0.";

static const char *phases_note =
    "Each request's TTFT (sent to first token) in phases: connect is its TCP handshake (0 on a "
    "pooled connection), client write the client's own time from starting the request to "
    "handing its last byte to the kernel, less the handshake, server the time from then to the "
    "answer's first byte (often the response headers, which many servers send before the "
    "prefill), stream to first token the time from that byte to the first chunk carrying "
    "output. Dispatch, before TTFT, is the time from the scheduled arrival to the send. Each "
    "percentile is over the successful requests that have that phase, taken on its own: the "
    "phases' medians need not add up to the TTFT median, nor their p95s to its p95. A "
    "coalesced first token arrived in one read with a later chunk, so its time is an upper "
    "bound.";

static const char *server_note =
    "From the server's own timings where it sent them (llama.cpp's final timings and the "
    "usage's cached tokens), over successful requests. TTFT - server prompt is the client's "
    "TTFT less the server's prompt_ms: the network, any queue before the server's clock "
    "starts, and the client. The decode rates are of the same requests, the client's (output "
    "tokens - 1) / (last - first token) and the server's (predicted_n - 1) / predicted_ms "
    "(its predicted_ms runs from its first token to its last, n - 1 gaps; llama.cpp's own "
    "tokens per second divide n by it). Prefill is the server's prompt_n / prompt_ms: the "
    "prompt tokens it computed (not those from its cache) per second. Cached "
    "prompt tokens: the mean share of each request's prompt tokens that the server took from "
    "its cache (the usage's cached_tokens, else the prompt tokens its prompt_n did not "
    "count).";

/* The two documents under construction. They live in their own buffers,
 * not in the output array, because adding a file may move that array. */
typedef struct documents {
    strbuf md, html;
} documents;

static void put_table(documents *d, table *t) {
    table_markdown(&d->md, t);
    table_html(&d->html, t);
    table_free(t);
}

static void put_figure(documents *d, const figure *f) {
    html_figure(&d->html, f);
    sb_printf(&d->md, "![%s](%s)\n\n", f->caption, f->file);
}

static void put_heading(documents *d, const char *h) {
    sb_printf(&d->md, "## %s\n\n", h);
    sb_puts(&d->html, "<h2>");
    sb_escape(&d->html, h);
    sb_puts(&d->html, "</h2>\n");
}

static void put_note(documents *d, const char *note) {
    sb_printf(&d->md, "%s\n\n", note);
    sb_puts(&d->html, "<p class=\"note\">");
    sb_escape(&d->html, note);
    sb_puts(&d->html, "</p>\n");
}

/* Title, how the runs were measured, one line per run, the definitions and
 * the heading of the figures across runs. */
static void put_front(documents *d, const report *r) {
    sb_puts(&d->md, "# servelab report\n\n");
    sb_puts(&d->html, html_head);
    sb_puts(&d->html, "<h1>servelab report</h1>\n");
    int n_answers = r->campaign_answers ? r->n_campaigns : 1;
    for (int c = 0; c < n_answers && r->answer.present; c++) { /* the answer first */
        const char *s = r->campaign_answers ? r->campaign_answers[c].sentence : r->answer.sentence;
        sb_printf(&d->md, "**%s**\n\n", s);
        sb_puts(&d->html, "<p class=\"answer\">");
        sb_escape(&d->html, s);
        sb_puts(&d->html, "</p>\n");
    }
    put_table(d, meta_table(r));
    sb_puts(&d->md, "## Runs\n\n");
    sb_puts(&d->html, "<h2>Runs</h2>\n");
    put_table(d, overview_table(r));
    put_note(d, definitions);
    if (report_has_phases(r)) {
        put_heading(d, "Where TTFT went");
        put_table(d, phases_table(r));
        put_note(d, phases_note);
    }
    if (report_has_server_account(r)) {
        put_heading(d, "Server's own account");
        put_table(d, server_account_table(r));
        put_note(d, server_note);
    }
    sb_puts(&d->html, "<h2>Figures</h2>\n"); /* in summary.md the figures follow unheaded */
}

/* One run's section: its tables, then its figures figs[from, to). */
static void put_run(documents *d, const report_run *rr, const figure *figs, int from, int to) {
    sb_printf(&d->md, "## Run %s\n\n", rr->name);
    sb_puts(&d->html, "<h2>Run ");
    sb_escape(&d->html, rr->name);
    sb_puts(&d->html, "</h2>\n");
    table *parts[7] = {workload_table(rr), detail_table(rr), latency_table(rr),
                       reps_table(rr),     class_table(rr),  rr->n_turns ? turn_table(rr) : NULL,
                       stage_table(rr)};
    const char *heads[7] = {"Workload",
                            "Key figures",
                            "Latency",
                            "Repetitions",
                            "By prompt class",
                            "By turn (multi-turn conversations)",
                            "By stage (rate plan; latencies in ms, by scheduled time)"};
    for (int i = 0; i < 7; i++) {
        if (!parts[i])
            continue;
        sb_printf(&d->md, "### %s\n\n", heads[i]);
        sb_printf(&d->html, "<h3>%s</h3>\n", heads[i]);
        put_table(d, parts[i]);
    }
    for (int i = from; i < to; i++)
        put_figure(d, &figs[i]);
}

void report_render(const report *r, out_file **files, int *n_files) {
    *files = NULL;
    *n_files = 0;
    figure *figs = NULL;
    int nf = 0;
    figures_across_runs(r, &figs, &nf);
    int n_across = nf;
    int *run_figs = xcalloc((size_t)r->n_runs + 1, sizeof *run_figs); /* run k's: [k], [k+1] */
    for (int k = 0; k < r->n_runs; k++) {
        run_figs[k] = nf;
        figures_of_run(r, k, &figs, &nf);
    }
    run_figs[r->n_runs] = nf;

    render_summary_csv(r, &out_files_add(files, n_files, "summary.csv")->body);
    render_summary_json(r, &out_files_add(files, n_files, "summary.json")->body);
    documents d = {0};
    put_front(&d, r);
    for (int i = 0; i < n_across; i++)
        put_figure(&d, &figs[i]);
    for (int k = 0; k < r->n_runs; k++)
        put_run(&d, &r->runs[k], figs, run_figs[k], run_figs[k + 1]);
    sb_puts(&d.html, "</body>\n</html>\n");
    out_files_add(files, n_files, "summary.md")->body = d.md;
    out_files_add(files, n_files, "report.html")->body = d.html;
    for (int i = 0; i < nf; i++)
        out_files_add(files, n_files, figs[i].file)->body = figs[i].svg;
    free(figs);
    free(run_figs);
}

void out_files_free(out_file *f, int n) {
    for (int i = 0; i < n; i++)
        sb_free(&f[i].body);
    free(f);
}

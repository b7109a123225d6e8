/* tables: the report's tables, as cell grids (report/table.h renders them).
 * Numbers go through format_number, so an unknown value is an empty cell
 * in every table, as it is in summary.csv. */
#include "report/tables.h"
#include "analysis/spec_decode.h"
#include "report/server_proc_section.h"
#include "report/shard_rows.h"
#include "report/pool.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Runs that lack meta.json or summary.json, as "a, b" into buf; how many. */
static int incomplete_runs(const report *r, char *buf, size_t n) {
    int count = 0;
    size_t used = 0;
    buf[0] = 0;
    for (int k = 0; k < r->n_runs; k++)
        if (r->runs[k].incomplete[0]) {
            if (used < n)
                used += (size_t)snprintf(buf + used, n - used, "%s%s", count ? ", " : "",
                                         r->runs[k].name);
            count++;
        }
    return count;
}

/* The header's facts come from the first run that recorded them; where some
 * runs did not (no meta.json), it says so instead of letting one run's
 * facts stand for all. */
static void meta_rows(const report *r, table *t) {
    json_t *meta = NULL;
    for (int k = 0; k < r->n_runs && !meta; k++)
        meta = r->runs[k].files[0].meta;
    char buf[512], missing[256];
    int fixture = 1, no_meta = 0, unknown = 0;
    for (int k = 0; k < r->n_runs; k++) {
        fixture &= r->runs[k].fixture == 1;
        unknown |= r->runs[k].fixture < 0;
        no_meta |= strstr(r->runs[k].incomplete, "meta.json") != NULL; /* any repetition */
    }
    const char *cells[2];
    cells[0] = "rows";
    cells[1] = no_meta ? "unknown for runs without meta.json: where they were measured"
               : unknown
                   ? "unknown for runs read from another tool's file: where they were measured"
               : fixture ? "fixture: every run was against servelab sim (simulated server)"
                         : "measured against a real server";
    table_add_row(t, cells);
    if (incomplete_runs(r, missing, sizeof missing)) {
        cells[0] = "incomplete runs";
        cells[1] = missing;
        table_add_row(t, cells);
    }
    json_t *gpus = json_object_get(meta, "gpus");
    if (json_array_size(gpus) > 0) {
        json_t *g = json_array_get(gpus, 0);
        snprintf(buf, sizeof buf, "%zu x %s, driver %s, CUDA %s", json_array_size(gpus),
                 json_string_value(json_object_get(g, "name")) ?: "?",
                 json_string_value(json_object_get(g, "driver")) ?: "?",
                 json_string_value(json_object_get(g, "cuda")) ?: "?");
    } else {
        snprintf(buf, sizeof buf, "none recorded");
    }
    cells[0] = no_meta ? "GPU (of the runs with meta.json)" : "GPU";
    cells[1] = buf;
    table_add_row(t, cells);
    json_t *server = json_object_get(meta, "server");
    json_t *ver = json_object_get(json_object_get(server, "version"), "version");
    if (!json_is_string(ver)) /* llama.cpp's server: its /props build */
        ver = json_object_get(json_object_get(server, "llamacpp_props"), "build_info");
    json_t *hdr = json_object_get(server, "server_header");
    snprintf(buf, sizeof buf, "%s%s%s", json_is_string(ver) ? json_string_value(ver) : "unknown",
             json_is_string(hdr) ? ", Server: " : "",
             json_is_string(hdr) ? json_string_value(hdr) : "");
    cells[0] = no_meta ? "server (of the runs with meta.json)" : "server";
    cells[1] = buf;
    table_add_row(t, cells);
    json_t *bin = json_object_get(server, "binary");
    if (json_is_string(json_object_get(bin, "sha256"))) {
        snprintf(buf, sizeof buf, "%s, SHA-256 %s",
                 json_string_value(json_object_get(bin, "path")) ?: "?",
                 json_string_value(json_object_get(bin, "sha256")));
        cells[0] = "server binary";
        cells[1] = buf;
        table_add_row(t, cells);
    }
    json_t *md = json_object_get(meta, "metadata");
    if (json_object_size(md) > 0) {
        buf[0] = 0;
        const char *k;
        json_t *v;
        json_object_foreach(md, k, v) {
            snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s=%s", buf[0] ? ", " : "", k,
                     json_string_value(v) ?: "?");
        }
        cells[0] = "metadata";
        cells[1] = buf;
        table_add_row(t, cells);
    }
    json_t *cfg = json_object_get(meta, "config");
    json_t *model = json_object_get(cfg, "model");
    cells[0] = no_meta ? "model (of the runs with meta.json)" : "model";
    cells[1] = json_is_string(model) ? json_string_value(model) : "unknown";
    table_add_row(t, cells);
    cells[0] = no_meta ? "API (of the runs with meta.json)" : "API";
    json_t *api = json_object_get(cfg, "api");
    cells[1] = json_is_string(api) ? json_string_value(api) : "unknown";
    table_add_row(t, cells);
    const slo_spec *slo = &r->runs[0].params.slo;
    buf[0] = 0;
    if (slo->ttft_ms > 0)
        snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "TTFT <= %g ms ", slo->ttft_ms);
    if (slo->tpot_ms > 0)
        snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "TPOT <= %g ms ", slo->tpot_ms);
    if (slo->e2e_ms > 0)
        snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "E2E <= %g ms ", slo->e2e_ms);
    if (slo->ttfa_ms > 0)
        snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "TTFA <= %g ms ", slo->ttfa_ms);
    cells[0] = "SLO";
    cells[1] = buf[0] ? buf : "none (every successful request counts as good)";
    table_add_row(t, cells);
    json_t *host = json_object_get(meta, "host");
    snprintf(buf, sizeof buf, "%s, %d cores, kernel %s",
             json_string_value(json_object_get(host, "cpu_model")) ?: "unknown",
             (int)json_integer_value(json_object_get(host, "cores")),
             json_string_value(json_object_get(host, "kernel")) ?: "?");
    cells[0] = no_meta ? "client host (of the runs with meta.json)" : "client host";
    cells[1] = buf;
    table_add_row(t, cells);
    json_t *tool = json_object_get(meta, "tool");
    if (json_is_string(json_object_get(tool, "other_client"))) /* vLLM's file (vllm_import) */
        snprintf(buf, sizeof buf, "%s", json_string_value(json_object_get(tool, "other_client")));
    else
        snprintf(buf, sizeof buf, "servelab %s (%s)",
                 json_string_value(json_object_get(tool, "version")) ?: "?",
                 json_string_value(json_object_get(tool, "git_commit")) ?: "?");
    cells[0] = no_meta ? "measured with (of the runs with meta.json)" : "measured with";
    cells[1] = buf;
    table_add_row(t, cells);
}

table *meta_table(const report *r) {
    const char *h[] = {"", ""};
    table *t = table_new(2, h);
    meta_rows(r, t);
    return t;
}

/* A run's name for a row of a table across runs. */
static void run_label(const report_run *rr, char *name, size_t n) {
    if (rr->incomplete[0])
        snprintf(name, n, "%.31s (incomplete: %s)", rr->name, rr->incomplete);
    else
        snprintf(name, n, "%.31s", rr->name);
}

table *overview_table(const report *r) {
    const char *h[] = {"run",
                       "offered rps",
                       "realized rps",
                       "requests",
                       "failed",
                       "TTFT p50 ms",
                       "TTFT p95 ms",
                       "TPOT p50 ms",
                       "TPOT p95 ms",
                       "output tok/s",
                       "goodput rps",
                       "goodput %",
                       "$ / M output tok",
                       "server queueing % of TTFT",
                       "preemptions"};
    table *t = table_new(15, h);
    for (int k = 0; k < r->n_runs; k++) {
        const run_summary *s = &r->runs[k].pooled;
        char b[15][32], name[128];
        run_label(&r->runs[k], name, sizeof name);
        format_number(b[1], s->offered_rps, 2);
        format_number(b[2], s->realized_offered_rps, 2);
        snprintf(b[3], 32, "%zu", s->requests);
        snprintf(b[4], 32, "%zu", s->failed);
        format_number(b[5], s->ttft.p50, 1);
        format_number(b[6], s->ttft.p95, 1);
        format_number(b[7], s->tpot.p50, 2);
        format_number(b[8], s->tpot.p95, 2);
        format_number(b[9], s->output_tokens_per_s, 1);
        format_number(b[10], s->goodput_rps, 3);
        format_number(b[11], 100 * s->goodput_fraction, 1);
        format_number(b[12], s->cost_per_million_output_tokens, 4);
        format_number(b[13], 100 * r->runs[k].server.queue_share_of_ttft, 1);
        format_number(b[14], r->runs[k].server.preemptions, 0);
        const char *cells[15];
        for (int c = 0; c < 15; c++)
            cells[c] = b[c];
        cells[0] = name;
        table_add_row(t, cells);
    }
    return t;
}

int report_has_phases(const report *r) {
    for (int k = 0; k < r->n_runs; k++)
        if (r->runs[k].pooled.phases.present)
            return 1;
    return 0;
}

int report_has_server_account(const report *r) {
    for (int k = 0; k < r->n_runs; k++)
        if (r->runs[k].pooled.server_rep.present)
            return 1;
    return 0;
}

table *phases_table(const report *r) {
    const char *h[] = {"run",
                       "offered rps",
                       "dispatch p50 ms",
                       "dispatch p95 ms",
                       "connect p50 ms",
                       "connect p95 ms",
                       "client write p50 ms",
                       "client write p95 ms",
                       "server p50 ms",
                       "server p95 ms",
                       "stream to first token p50 ms",
                       "stream to first token p95 ms",
                       "first tokens coalesced"};
    table *t = table_new(13, h);
    for (int k = 0; k < r->n_runs; k++) {
        const ttft_phases *p = &r->runs[k].pooled.phases;
        if (!p->present)
            continue;
        char b[13][32], name[128];
        run_label(&r->runs[k], name, sizeof name);
        format_number(b[1], r->runs[k].pooled.offered_rps, 2);
        const dist *d[] = {&p->dispatch, &p->connect, &p->client_write, &p->server, &p->stream};
        for (int i = 0; i < 5; i++) {
            format_number(b[2 + 2 * i], d[i]->p50, 3);
            format_number(b[3 + 2 * i], d[i]->p95, 3);
        }
        snprintf(b[12], 32, "%zu of %zu", p->first_coalesced, p->first_tokens);
        const char *cells[13];
        for (int c = 0; c < 13; c++)
            cells[c] = b[c];
        cells[0] = name;
        table_add_row(t, cells);
    }
    return t;
}

table *server_account_table(const report *r) {
    const char *h[] = {"run",
                       "offered rps",
                       "TTFT - server prompt p50 ms",
                       "TTFT - server prompt p95 ms",
                       "decode p50 tok/s (client)",
                       "decode p50 tok/s (server)",
                       "client / server decode rate p50",
                       "prefill p50 tok/s (server)",
                       "cached prompt tokens %"};
    table *t = table_new(9, h);
    for (int k = 0; k < r->n_runs; k++) {
        const server_reported *s = &r->runs[k].pooled.server_rep;
        if (!s->present)
            continue;
        char b[9][32], name[128];
        run_label(&r->runs[k], name, sizeof name);
        format_number(b[1], r->runs[k].pooled.offered_rps, 2);
        format_number(b[2], s->ttft_minus_prompt.p50, 3);
        format_number(b[3], s->ttft_minus_prompt.p95, 3);
        format_number(b[4], s->client_decode_tok_s.p50, 1);
        format_number(b[5], s->server_decode_tok_s.p50, 1);
        format_number(b[6], s->decode_ratio.p50, 3);
        format_number(b[7], s->server_prefill_tok_s.p50, 1);
        format_number(b[8], 100 * s->cached_share, 1);
        const char *cells[9];
        for (int c = 0; c < 9; c++)
            cells[c] = b[c];
        cells[0] = name;
        table_add_row(t, cells);
    }
    return t;
}

static void dist_row(table *t, const char *name, const dist *d) {
    char b[8][32];
    const char *cells[9] = {name};
    double v[] = {d->mean, d->p50, d->p90, d->p95, d->p99, d->p999, d->max};
    for (int i = 0; i < 7; i++)
        cells[i + 1] = format_number(b[i], d->n ? v[i] : NAN, 2);
    snprintf(b[7], 32, "%zu", d->n);
    cells[8] = b[7];
    table_add_row(t, cells);
}

table *latency_table(const report_run *rr) {
    const char *h[] = {"ms", "mean", "p50", "p90", "p95", "p99", "p99.9", "max", "n"};
    table *t = table_new(9, h);
    const run_summary *s = &rr->pooled;
    dist_row(t, "TTFT (from send)", &s->ttft);
    dist_row(t, "TTFT (from scheduled arrival)", &s->ttft_sched);
    dist_row(t, "TPOT", &s->tpot);
    if (s->has_reasoning)
        dist_row(t, "TTFA: first answer token, after reasoning (from send)", &s->ttfa);
    dist_row(t, "inter-token (per token)", &s->itl);
    if (s->multi_token)
        dist_row(t, "between chunks (a chunk of several tokens is one gap)", &s->icl);
    dist_row(t, "E2E (from send)", &s->e2e);
    dist_row(t, "E2E (from scheduled arrival)", &s->e2e_sched);
    dist_row(t, "client schedule lag", &s->lag);
    return t;
}

/* A reasoning model's and speculative decoding's rows of the detail
 * table, where the run has them. */
static void reasoning_and_draft_rows(table *t, const report_run *rr) {
    const run_summary *s = &rr->pooled;
    char b[256], c[64];
    const char *cells[2];
#define ROW(label, ...)                                                                            \
    do {                                                                                           \
        snprintf(b, sizeof b, __VA_ARGS__);                                                        \
        cells[0] = label;                                                                          \
        cells[1] = b;                                                                              \
        table_add_row(t, cells);                                                                   \
    } while (0)
    if (s->has_reasoning)
        ROW("reasoning tokens (mean of the requests that reasoned; counted by)",
            "%s over %zu "
            "requests (%s); %zu answers never began",
            format_number(c, s->reasoning_tokens / (double)s->reasoning_requests, 1),
            s->reasoning_requests,
            s->reasoning_from_server == s->reasoning_requests ? "the server's usage"
            : s->reasoning_from_server == 0                   ? "the client, from the stream"
                                                              : "both",
            s->no_answer);
    if (s->multi_token)
        ROW("tokens per chunk (after the first)", "%s", format_number(c, s->tokens_per_chunk, 3));
    if (s->answers_checked)
        ROW("answers as asked (--tools, --response-format)", "%zu of %zu (%s%%); %zu tool calls",
            s->answers_valid, s->answers_checked,
            format_number(c, 100.0 * (double)s->answers_valid / (double)s->answers_checked, 1),
            s->tool_calls);
    json_t *metas[64];
    int n_metas = 0;
    for (int k = 0; k < rr->n_reps && n_metas < 64; k++)
        if (rr->files[k].meta)
            metas[n_metas++] = rr->files[k].meta;
    json_t *spec = spec_decode_of_metas(metas, n_metas);
    if (spec) {
        char c2[64];
        ROW("speculative decoding (the server's counters, before and after)",
            "%s%% of draft tokens accepted, mean acceptance length %s, %.0f drafts",
            format_number(c, 100 * json_number_value(json_object_get(spec, "acceptance_rate")), 2),
            format_number(c2, json_number_value(json_object_get(spec, "acceptance_length")), 3),
            json_number_value(json_object_get(spec, "num_drafts")));
        json_decref(spec);
    }
#undef ROW
}

table *detail_table(const report_run *rr) {
    const char *h[] = {"figure", "value"};
    table *t = table_new(2, h);
    const run_summary *s = &rr->pooled;
    char b[256], c[64];
    const char *cells[2];
#define ROW(label, ...)                                                                            \
    do {                                                                                           \
        snprintf(b, sizeof b, __VA_ARGS__);                                                        \
        cells[0] = label;                                                                          \
        cells[1] = b;                                                                              \
        table_add_row(t, cells);                                                                   \
    } while (0)
    if (rr->incomplete[0])
        ROW("incomplete",
            "%s: the run was cut short or copied in part; what those files say "
            "(the offered rate, where it ran) is unknown",
            rr->incomplete);
    ROW("repetitions pooled", "%d", rr->n_reps);
    ROW("duration (t=0 to last end, summed over repetitions)", "%.3f s", s->duration_s);
    ROW("arrival window (t=0 to last arrival)", "%.3f s", s->arrival_window_s);
    ROW("offered rate, as asked", "%s req/s", format_number(c, s->offered_rps, 3));
    ROW("offered rate, realized by the schedule", "%s req/s",
        format_number(c, s->realized_offered_rps, 3));
    ROW("achieved rate, whole run (includes the drain tail)", "%s req/s",
        format_number(c, s->achieved_rps, 3));
    ROW("achieved rate, arrival window only", "%s req/s",
        format_number(c, s->achieved_rps_window, 3));
    ROW("output tokens/s, whole run", "%s", format_number(c, s->output_tokens_per_s, 1));
    ROW("output tokens/s, arrival window only", "%s",
        format_number(c, s->output_tokens_per_s_window, 1));
    ROW("total tokens/s (prompt + output)", "%s", format_number(c, s->total_tokens_per_s, 1));
    ROW("completed / failed", "%zu / %zu", s->completed, s->failed);
    for (int e = 1; e < ERR_COUNT; e++)
        if (s->errors[e]) {
            char label[64];
            snprintf(label, sizeof label, "errors: %s", err_class_name(e));
            ROW(label, "%zu", s->errors[e]);
        }
    ROW("met the SLO", "%zu of %zu (%s%%)", s->meeting_slo, s->requests,
        format_number(c, 100 * s->goodput_fraction, 1));
    ROW("goodput", "%s req/s", format_number(c, s->goodput_rps, 3));
    if (isfinite(s->cost_per_million_output_tokens))
        ROW("cost per million output tokens", "$%.4f at $%.2f/hour",
            s->cost_per_million_output_tokens, s->cost_per_hour);
    const server_stats *sv = &rr->server;
    if (sv->has_metrics) {
        ROW("server: preemptions during the run", "%s", format_number(c, sv->preemptions, 0));
        ROW("server: prompt / generation tokens", "%.0f / %.0f", sv->prompt_tokens,
            sv->generation_tokens);
        ROW("server: peak running / waiting", "%.0f / %.0f", sv->peak_running, sv->peak_waiting);
        ROW("server: peak KV-cache use", "%s%%", format_number(c, 100 * sv->peak_kv_usage, 1));
        ROW("server: share of TTFT spent queued", "%s%%",
            format_number(c, 100 * sv->queue_share_of_ttft, 1));
        if (isfinite(sv->cache_queries))
            ROW("server: prefix-cache hits (of prompt tokens it looked up)", "%s%% (%.0f of %.0f)",
                format_number(c, 100 * sv->cache_hit_rate, 1), sv->cache_hits, sv->cache_queries);
        if (isfinite(sv->decode_steps))
            ROW("server: decode steps / mean busy slots per step", "%.0f / %s", sv->decode_steps,
                format_number(c, sv->busy_per_decode, 2));
        if (isfinite(sv->spec_drafts))
            ROW("server: speculative drafts / draft tokens accepted", "%.0f / %s%% (%.0f of %.0f)",
                sv->spec_drafts, format_number(c, 100 * sv->spec_acceptance, 1), sv->spec_accepted,
                sv->spec_draft_tokens);
    } else {
        ROW("server metrics", "%s", "not sampled (no /metrics)");
    }
    server_proc_rows(rr, t);
    shard_rows(rr, t);
    if (s->server_rep.cached_n)
        ROW("prompt tokens served from the cache (usage cached_tokens, mean share)",
            "%s%% over %zu "
            "requests",
            format_number(c, 100 * s->server_rep.cached_share, 1), s->server_rep.cached_n);
    reasoning_and_draft_rows(t, rr);
    if (sv->has_gpu) {
        ROW("GPU energy per output token", "%s J",
            format_number(c, s->output_tokens > 0 ? sv->gpu_energy_j / s->output_tokens : NAN, 4));
        ROW("GPU utilisation (mean)", "%s%%", format_number(c, sv->gpu_util_mean_pct, 1));
    }
    const char *ci_names[] = {"TTFT p50 95% CI (bootstrap)", "TTFT p95 95% CI (bootstrap)",
                              "TPOT p50 95% CI (bootstrap)", "TPOT p95 95% CI (bootstrap)"};
    for (int m = 0; m < 4; m++) {
        char lo[32], hi[32];
        ROW(ci_names[m], "%s - %s ms", format_number(lo, rr->ci[m][0], 2),
            format_number(hi, rr->ci[m][1], 2));
    }
    if (rr->n_reps > 1) {
        double a, z, lo95, hi95;
        char x1[32], x2[32], x3[32], x4[32];
        pool_rep_range(rr, 0, &a, &z);
        pool_rep_range(rr, 1, &lo95, &hi95);
        ROW("TTFT p50 across repetitions (min - max)", "%s - %s ms", format_number(x1, a, 2),
            format_number(x2, z, 2));
        ROW("TTFT p95 across repetitions (min - max)", "%s - %s ms", format_number(x3, lo95, 2),
            format_number(x4, hi95, 2));
    }
#undef ROW
    return t;
}

table *reps_table(const report_run *rr) {
    const char *h[] = {"repetition", "requests", "failed",   "TTFT p50",
                       "TTFT p95",   "TPOT p50", "TPOT p95", "output tok/s"};
    table *t = table_new(8, h);
    for (int k = 0; k < rr->n_reps; k++) {
        const run_summary *s = &rr->per_rep[k];
        char b[8][32];
        const char *name = strrchr(rr->rep_dirs[k], '/');
        snprintf(b[0], 32, "%.31s", name ? name + 1 : rr->rep_dirs[k]);
        snprintf(b[1], 32, "%zu", s->requests);
        snprintf(b[2], 32, "%zu", s->failed);
        format_number(b[3], s->ttft.p50, 2);
        format_number(b[4], s->ttft.p95, 2);
        format_number(b[5], s->tpot.p50, 2);
        format_number(b[6], s->tpot.p95, 2);
        format_number(b[7], s->output_tokens_per_s, 1);
        const char *cells[8];
        for (int c = 0; c < 8; c++)
            cells[c] = b[c];
        table_add_row(t, cells);
    }
    return t;
}

table *turn_table(const report_run *rr) {
    const char *h[] = {"turn",     "requests", "failed",   "prompt tok (mean)",
                       "TTFT p50", "TTFT p95", "TPOT p50", "E2E p50"};
    table *t = table_new(8, h);
    for (int k = 0; k < rr->n_turns; k++) {
        const run_summary *s = &rr->per_turn[k];
        char b[8][32];
        snprintf(b[0], 32, "%d", k + 1);
        snprintf(b[1], 32, "%zu", s->requests);
        snprintf(b[2], 32, "%zu", s->failed);
        format_number(b[3], s->completed ? s->prompt_tokens / s->completed : NAN, 1);
        format_number(b[4], s->ttft.p50, 2);
        format_number(b[5], s->ttft.p95, 2);
        format_number(b[6], s->tpot.p50, 2);
        format_number(b[7], s->e2e.p50, 1);
        const char *cells[8];
        for (int c = 0; c < 8; c++)
            cells[c] = b[c];
        table_add_row(t, cells);
    }
    return t;
}

table *class_table(const report_run *rr) {
    const char *h[] = {
        "class",    "requests", "failed", "prompt tok (mean)", "output tok (mean)", "TTFT p50",
        "TTFT p95", "TPOT p50", "E2E p50"};
    table *t = table_new(9, h);
    for (int c = 0; c < rr->rows.n_classes; c++) {
        const run_summary *s = &rr->per_class[c];
        char b[9][32];
        snprintf(b[0], 32, "%.31s", rr->rows.classes[c]);
        snprintf(b[1], 32, "%zu", s->requests);
        snprintf(b[2], 32, "%zu", s->failed);
        format_number(b[3], s->completed ? s->prompt_tokens / s->completed : NAN, 1);
        format_number(b[4], s->completed ? s->output_tokens / s->completed : NAN, 1);
        format_number(b[5], s->ttft.p50, 2);
        format_number(b[6], s->ttft.p95, 2);
        format_number(b[7], s->tpot.p50, 2);
        format_number(b[8], s->e2e.p50, 1);
        const char *cells[9];
        for (int k = 0; k < 9; k++)
            cells[k] = b[k];
        table_add_row(t, cells);
    }
    return t;
}

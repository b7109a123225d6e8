/* run_files: what a run writes once its requests are done: meta.json (the
 * tool, the command line, the config as the option table records it with
 * what the run resolved, the host, the GPUs, the server) and summary.json
 * (both through rundir/summary_file.h), with the table to the FILE the
 * caller gave (run_opts.summary_to): nothing here prints to the terminal
 * itself, and warnings go through common/notice.h. Secrets never reach
 * the files: header values and URL credentials are redacted, and only the
 * name of the key's variable is kept. */
#include "analysis/serverstats.h"
#include "analysis/stages.h"
#include "client/errorlog.h"
#include "client/rowwriter.h"
#include "analysis/summary.h"
#include "common/notice.h"
#include "common/files.h"
#include "common/hostinfo.h"
#include "common/sha256.h"
#include "monitor/procstat.h"
#include "common/util.h"
#include "model/slo.h"
#include "analysis/spec_decode.h"
#include "run/run_ctx.h"
#include "run/start_at.h"
#include "run/virtual_client.h"
#include "rundir/summary_file.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Header names only: values (keys, tokens) never reach a file. */
static json_t *redacted_headers(const opt_list *h) {
    json_t *a = json_array();
    for (int i = 0; i < h->n; i++) {
        const char *colon = strchr(h->v[i], ':');
        char name[128];
        snprintf(name, sizeof name, "%.*s: <redacted>", (int)(colon - h->v[i]), h->v[i]);
        json_array_append_new(a, json_string(name));
    }
    return a;
}

json_t *run_command_line_json(int argc, char **argv) {
    json_t *a = json_array();
    int redact_next = 0;
    for (int i = 0; i < argc; i++) {
        if (redact_next) {
            const char *colon = strchr(argv[i], ':');
            char v[160];
            snprintf(v, sizeof v, "%.*s: <redacted>", colon ? (int)(colon - argv[i]) : 0, argv[i]);
            json_array_append_new(a, json_string(v));
            redact_next = 0;
            continue;
        }
        if (!strcmp(argv[i], "--url") && i + 1 < argc) {
            char *u = redact_url(argv[i + 1]);
            json_array_append_new(a, json_string(argv[i]));
            json_array_append_new(a, json_string(u));
            free(u);
            i++;
            continue;
        }
        if (!strncmp(argv[i], "--url=", 6)) {
            char *u = redact_url(argv[i] + 6);
            char buf[4200];
            snprintf(buf, sizeof buf, "--url=%s", u);
            json_array_append_new(a, json_string(buf));
            free(u);
            continue;
        }
        if (!strncmp(argv[i], "--header=", 9)) {
            json_array_append_new(a, json_string("--header=<redacted>"));
            continue;
        }
        redact_next = !strcmp(argv[i], "--header");
        json_array_append_new(a, json_string(argv[i]));
    }
    return a;
}

/* The config: the URL (redacted), every recorded option as the table has
 * it, then what the run resolved in place of what was asked. */
static json_t *config_json(const run_ctx *x) {
    const run_opts *o = &x->o;
    json_t *cfg = json_object();
    char *shown_url = redact_url(x->base);
    json_object_set_new(cfg, "url", json_string(shown_url));
    free(shown_url);
    json_t *opts = opt_json(run_options, o);
    json_object_update(cfg, opts);
    json_decref(opts);
    json_object_set_new(cfg, "model", x->model ? json_string(x->model) : json_null());
    int multi = workload_multi_turn(&x->w);
    size_t rows = multi && x->n < x->w.conv.n_conv ? x->w.conv.first[x->n] : x->w.conv.n_requests;
    json_object_set_new(cfg, "requests", json_integer((json_int_t)(multi ? rows : x->n)));
    json_object_set_new(cfg, "conversations", multi ? json_integer((json_int_t)x->n) : json_null());
    json_object_set_new(cfg, "duration_s",
                        o->have_duration ? json_real(o->duration_s) : json_null());
    json_object_set_new(cfg, "cost_per_hour",
                        o->cost_per_hour > 0 ? json_real(o->cost_per_hour) : json_null());
    json_object_set_new(cfg, "continuous_usage_stats", json_boolean(x->cusage));
    json_object_set_new(cfg, "headers", redacted_headers(&o->headers));
    json_object_set_new(cfg, "api_key_env", x->key_env ? json_string(x->key_env) : json_null());
    json_object_set_new(cfg, "realtime", json_string(x->priority));
    json_object_set_new(cfg, "metrics_listen_port",
                        x->ml_port ? json_integer(x->ml_port) : json_null());
    json_object_set_new(cfg, "http_client",
                        json_string(x->client == HTTP_CLIENT_BUILTIN ? "builtin" : "libcurl"));
    return cfg;
}

static const char *token_counting(const loadgen_result *res) {
    if (res->usage_counted && !res->chunk_counted)
        return "usage";
    return res->chunk_counted && !res->usage_counted ? "chunk_count" : "mixed";
}

/* The wall clock at t=0 to the microsecond ("2026-12-01T10:50:58.123456Z"):
 * a packet capture's times are the wall clock's, and rows are offsets from
 * t=0, so the two can be read against each other. */
static json_t *t0_utc_json(int64_t unix_us) {
    time_t s = (time_t)(unix_us / 1000000);
    struct tm tm;
    char buf[64], out[80];
    if (unix_us <= 0 || !gmtime_r(&s, &tm) || !strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm))
        return json_null();
    snprintf(out, sizeof out, "%s.%06lldZ", buf, (long long)(unix_us % 1000000));
    return json_string(out);
}

/* The plan's stages as the analysis reads them (analysis/stages.h). */
static int plan_windows(const rate_plan *p, stage_window *w) {
    for (int k = 0; k < p->n; k++) {
        const rate_stage *st = &p->stage[k];
        w[k] = (stage_window){st->start_s, st->start_s + st->duration_s, st->from_rps, st->to_rps,
                              st->ramp};
    }
    return p->n;
}

/* meta.json's rate_plan: the spec, its length and expected arrivals, and
 * each stage's window on the schedule clock (what the report reads). */
static json_t *plan_json(const run_ctx *x) {
    stage_window w[RATE_PLAN_MAX_STAGES];
    int n = plan_windows(&x->plan, w);
    return json_pack("{s:s,s:f,s:f,s:f,s:o}", "spec", x->o.rate_plan, "duration_s",
                     x->plan.duration_s, "expected_requests", rate_plan_expected(&x->plan),
                     "mean_rps", rate_plan_mean_rps(&x->plan), "stages", stage_windows_json(w, n));
}

/* summary.json's stages: each stage's window, rates and latencies. */
static json_t *stages_of_run(const run_ctx *x) {
    stage_window w[RATE_PLAN_MAX_STAGES];
    int n = plan_windows(&x->plan, w);
    stage_summary *s = xcalloc((size_t)n, sizeof *s);
    stages_summarize(&x->res.rows, w, n, s);
    json_t *j = stages_json(s, n);
    free(s);
    return j;
}

/* The server process's program (its /proc/PID/exe, the binary a wrapper
 * such as env exec'd): the path, size and SHA-256 that say which build was
 * measured when the server itself cannot (a build from a source snapshot
 * reports "b0-unknown"). When the PID runs the server as a child (`sh -c
 * 'a; b'`, a start script), the program is that of the process of its tree
 * that holds the most memory, the server, and `wrapper` names the PID's
 * own. NULL when there is no pid or it cannot be read. */
static json_t *server_binary_json(int pid) {
    if (pid <= 0)
        return NULL;
    pid_t server = procstat_heaviest(pid);
    char link[64], path[4096], hex[65], wrapper[4096] = "";
    snprintf(link, sizeof link, "/proc/%d/exe", (int)server);
    ssize_t n = readlink(link, path, sizeof path - 1);
    long long bytes;
    if (n <= 0 || sha256_file(link, hex, &bytes))
        return NULL;
    path[n] = 0;
    if (server != pid) {
        snprintf(link, sizeof link, "/proc/%d/exe", pid);
        ssize_t w = readlink(link, wrapper, sizeof wrapper - 1);
        wrapper[w > 0 ? w : 0] = 0;
    }
    json_t *b = json_pack("{s:s,s:I,s:s}", "path", path, "bytes", (json_int_t)bytes, "sha256", hex);
    if (wrapper[0] && strcmp(wrapper, path))
        json_object_set_new(b, "wrapper", json_string(wrapper));
    return b;
}

/* A prediction's server: the simulator's engine in virtual time, and its
 * every parameter, so that the rows can be made again. */
static json_t *predicted_json(const virtual_target *t) {
    const engine_params *e = &t->engine;
    json_t *j = json_pack(
        "{s:b,s:s,s:s,s:s?,s:I,s:{s:i,s:i,s:i,s:i,s:i,s:f,s:f,s:f,s:f,s:f,s:I,s:b,s:i}}",
        "predicted", 1, "kind", "servelab predict", "model", t->model, "profile", t->profile,
        "seed", (json_int_t)t->seed, "engine", "max_num_seqs", e->max_num_seqs, "kv_blocks",
        e->kv_blocks, "block_size", e->block_size, "max_model_len", e->max_model_len,
        "max_num_batched_tokens", e->max_batched_tokens, "decode_base_ms", e->decode_base_ms,
        "decode_per_seq_ms", e->decode_per_seq_ms, "prefill_per_token_ms", e->prefill_per_token_ms,
        "prefill_ctx_per_1k_ms", e->prefill_ctx_per_1k_ms, "jitter", e->jitter, "seed",
        (json_int_t)e->seed, "prefix_caching", e->enable_prefix_caching, "eos_min_frac_pct",
        t->eos_min_frac_pct);
    json_t *eng = json_object_get(j, "engine");
    json_object_set_new(eng, "idle_wake_ms", json_real(e->idle_wake_ms));
    json_object_set_new(eng, "idle_after_ms", json_real(e->idle_after_ms));
    if (e->n_step_points > 0) {
        json_t *tbl = json_object();
        for (int i = 0; i < e->n_step_points; i++) {
            char b[16];
            snprintf(b, sizeof b, "%d", e->step_batch[i]);
            json_object_set_new(tbl, b, json_real(e->step_ms[i]));
        }
        json_object_set_new(eng, "step_ms_by_batch", tbl);
    }
    if (e->n_prefill_points > 0) {
        json_t *tbl = json_object();
        for (int i = 0; i < e->n_prefill_points; i++) {
            char b[16];
            snprintf(b, sizeof b, "%d", e->prefill_tokens[i]);
            json_object_set_new(tbl, b, json_real(e->prefill_ms[i]));
        }
        json_object_set_new(eng, "prefill_ms_by_tokens", tbl);
    }
    if (t->profile_file) {
        char hex[65];
        long long bytes;
        json_object_set_new(j, "profile_file",
                            sha256_file(t->profile_file, hex, &bytes)
                                ? json_pack("{s:s}", "path", t->profile_file)
                                : json_pack("{s:s,s:s}", "path", t->profile_file, "sha256", hex));
    }
    return j;
}

int run_write_meta(run_ctx *x, json_t *cmdline, json_t *extra) {
    const run_opts *o = &x->o;
    const loadgen_result *res = &x->res;
    json_t *meta = json_object();
    json_object_set_new(meta, "tool", tool_info_json());
    json_object_set_new(meta, "command_line", cmdline);
    json_object_set_new(meta, "config", config_json(x));
    if (x->tokenizer)
        json_object_set_new(meta, "tokenizer", json_incref(x->tokenizer));
    json_object_set_new(meta, "seed", json_integer((json_int_t)o->seed));
    json_object_set_new(meta, "label", o->label ? json_string(o->label) : json_null());
    json_t *md = json_object(); /* --metadata KEY=VALUE, as vLLM's file has them */
    for (int i = 0; i < o->metadata.n; i++) {
        const char *kv = o->metadata.v[i], *eq = strchr(kv, '=');
        char key[80];
        snprintf(key, sizeof key, "%.*s", (int)(eq - kv), kv); /* checked: KEY=VALUE */
        json_object_set_new(md, key, json_string(eq + 1));
    }
    json_object_set_new(meta, "metadata", md);
    json_object_set_new(meta, "started_utc", json_string(x->started));
    json_object_set_new(meta, "t0_utc", t0_utc_json(res->t0_unix_us));
    json_object_set_new(meta, "host", host_info_json());
    json_object_set_new(meta, "gpus", gpu_meta_json(x->gpu));
    if (!x->gpu)
        json_object_set_new(meta, "gpu_note",
                            json_string(o->no_sampling ? "GPU sampling off" : x->gpu_why));
    json_object_set_new(meta, "sampling",
                        json_pack("{s:f,s:i,s:i}", "interval_s", o->metrics_interval_s,
                                  "metrics_samples", res->metrics_samples, "gpu_samples",
                                  res->gpu_samples));
    json_t *server = o->predict ? predicted_json(o->predict) : probe_json(&x->probe);
    json_t *binary = o->predict ? NULL : server_binary_json(o->server_pid);
    if (binary)
        json_object_set_new(server, "binary", binary);
    json_object_set_new(meta, "server", server);
    if (x->spec_before && x->spec_after)
        json_object_set_new(
            meta, "spec_decode_counters",
            json_pack("{s:O,s:O}", "before", x->spec_before, "after", x->spec_after));
    json_object_set_new(meta, "fixture", json_boolean(o->predict || x->probe.is_sim));
    json_object_set_new(meta, "token_counting",
                        json_pack("{s:s,s:I,s:I}", "method", token_counting(res),
                                  "requests_from_usage", (json_int_t)res->usage_counted,
                                  "requests_from_chunk_count", (json_int_t)res->chunk_counted));
    json_object_set_new(meta, "interrupted", json_boolean(res->interrupted));
    if (x->plan.n)
        json_object_set_new(meta, "rate_plan", plan_json(x));
    if (x->w.replay)
        json_object_set_new(meta, "replay", replay_json(x->w.replay));
    json_object_set_new(meta, "shard",
                        o->shard
                            ? json_pack("{s:i,s:i,s:s,s:I,s:I}", "index", x->shard.index, "count",
                                        x->shard.count, "source", x->shard.source, "requests",
                                        (json_int_t)x->n, "schedule_requests", (json_int_t)x->n_all)
                            : json_null());
    json_object_set_new(meta, "start_at_utc",
                        x->start_at_us ? t0_utc_json(x->start_at_us) : json_null());
    json_object_set_new(meta, "clock", start_at_clock_json());
    if (extra) {
        json_object_update(meta, extra);
        json_decref(extra);
    }
    int rc = rundir_meta_write(o->out, meta);
    json_decref(meta);
    return rc;
}

/* The client's verdicts on itself. */
typedef struct client_verdict {
    int lag_over;         /* schedule lag p99 over 1 ms */
    int cpu_over;         /* its CPU saturated */
    int delayed;          /* some request waited more than 1 ms for it */
    int coalesced;        /* more than 1% of first tokens shared a read with a later chunk */
    int chunks_coalesced; /* more than 1% of all chunks did: inter-token times are bounds */
    char named[256];      /* the worst of the delayed requests, "req-3 req-17 ..." */
    char delay_words[512];
    char chunk_words[160], first_words[160]; /* the two coalescing causes, in words */
} client_verdict;

/* What the delayed requests were held by, and what it does to TTFT. */
static void describe_delays(const client_check *k, client_verdict *v) {
    char kinds[160] = "";
    if (k->late_sent && k->slow_written)
        snprintf(kinds, sizeof kinds, "%zu sent late, %zu slow to write", k->late_sent,
                 k->slow_written);
    snprintf(v->delay_words, sizeof v->delay_words,
             "%zu requests waited more than 1 ms for the client (at most %.2f ms; the worst: "
             "%.200s)%s%s%s",
             k->delayed, k->max_delay_ms, v->named, kinds[0] ? ": " : "", kinds,
             k->slow_written ? "; TTFT from send includes the time it took to write them"
                             : "; TTFT from send is not affected, TTFT from the schedule is");
}

/* The worst few of the delayed requests, in words (summary.json's
 * delayed_request_ids has all that were kept). */
static void name_delayed(const client_check *k, char *buf, size_t cap) {
    size_t n = 0;
    int shown = k->n_named < 8 ? k->n_named : 8;
    buf[0] = 0;
    for (int i = 0; i < shown && n + 16 < cap; i++) {
        char id[24];
        request_id_format(id, sizeof id, k->named[i]);
        n += (size_t)snprintf(buf + n, cap - n, "%s%s", i ? " " : "", id);
    }
    if ((size_t)shown < k->delayed && n + 8 < cap)
        snprintf(buf + n, cap - n, " ...");
}

/* Is this run within what the client measures to 1 ms? Its own lag, CPU,
 * per-request delay and coalesced first tokens say so (docs/accuracy.md);
 * `servelab calibrate` tells the limits beforehand. */
static json_t *client_json(const run_summary *s, const loadgen_result *res, int threads,
                           client_verdict *v) {
    const client_check *k = &res->check;
    double cpu_pct = s->duration_s > 0 ? 100 * res->cpu_s / s->duration_s : 0;
    v->lag_over = s->lag.n && s->lag.p99 > 1.0;
    v->cpu_over = client_cpu_saturated(s->duration_s, res->cpu_s, threads);
    v->delayed = k->delayed > 0;
    v->coalesced = k->first_coalesced * 100 > k->first_tokens;
    v->chunks_coalesced = k->coalesced * 100 > k->chunks;
    name_delayed(k, v->named, sizeof v->named);
    describe_delays(k, v);
    snprintf(v->chunk_words, sizeof v->chunk_words,
             "%zu of %zu chunks came in one read with a later one: their inter-token times are "
             "bounds",
             k->coalesced, k->chunks);
    snprintf(v->first_words, sizeof v->first_words,
             "%zu of %zu first tokens came in one read with a later chunk: their TTFT is an "
             "upper bound",
             k->first_coalesced, k->first_tokens);
    json_t *client = json_object();
    json_object_set_new(client, "cpu_pct", json_real(cpu_pct));
    json_object_set_new(client, "threads", json_integer(threads));
    json_object_set_new(client, "within_1ms",
                        json_boolean(!v->lag_over && !v->cpu_over && !v->delayed && !v->coalesced &&
                                     !v->chunks_coalesced));
    json_object_set_new(client, "max_client_delay_ms", json_real(k->max_delay_ms));
    json_object_set_new(client, "delayed_requests", json_integer((json_int_t)k->delayed));
    json_object_set_new(client, "late_sent_requests", json_integer((json_int_t)k->late_sent));
    json_object_set_new(client, "slow_written_requests", json_integer((json_int_t)k->slow_written));
    json_t *ids = json_array();
    for (int i = 0; i < k->n_named; i++) {
        char id[24];
        request_id_format(id, sizeof id, k->named[i]);
        json_array_append_new(ids, json_string(id));
    }
    json_object_set_new(client, "delayed_request_ids", ids);
    json_object_set_new(client, "first_tokens", json_integer((json_int_t)k->first_tokens));
    json_object_set_new(client, "coalesced_first_tokens",
                        json_integer((json_int_t)k->first_coalesced));
    json_object_set_new(client, "chunks", json_integer((json_int_t)k->chunks));
    json_object_set_new(client, "coalesced_chunks", json_integer((json_int_t)k->coalesced));
    json_t *notes = json_array();
    if (v->lag_over)
        json_array_append_new(notes, json_string("schedule lag p99 over 1 ms"));
    if (v->cpu_over)
        json_array_append_new(notes, json_string("client CPU saturated"));
    if (v->delayed)
        json_array_append_new(notes, json_string(v->delay_words));
    if (v->chunks_coalesced)
        json_array_append_new(notes, json_string(v->chunk_words));
    if (v->coalesced)
        json_array_append_new(notes, json_string(v->first_words));
    json_object_set_new(client, "notes", notes);
    return client;
}

/* summary.json's server_process: the server's process tree over the run
 * (--server-pid, or a sweep's managed server), NULL when none was sampled. */
static json_t *server_process_json(const run_ctx *x) {
    const procstat_summary *p = &x->res.server_proc;
    if (p->samples == 0)
        return NULL;
    double cpu = procstat_summary_mean_cpu_pct(p);
    return json_pack("{s:i,s:f,s:o,s:i,s:i,s:i}", "pid", x->o.server_pid, "peak_rss_bytes",
                     p->peak_rss_bytes, "mean_cpu_pct", isnan(cpu) ? json_null() : json_real(cpu),
                     "peak_threads", p->peak_threads, "peak_processes", p->peak_processes,
                     "samples", p->samples);
}

static void print_server_process(FILE *to, const procstat_summary *p) {
    if (p->samples == 0)
        return;
    double cpu = procstat_summary_mean_cpu_pct(p);
    fprintf(to, "server process  %.1f MiB peak RSS, %s%.0f%% mean CPU, %d threads at most\n",
            p->peak_rss_bytes / 1048576, isnan(cpu) ? "- " : "", isnan(cpu) ? 0 : cpu,
            p->peak_threads);
}

/* The run's table, to the caller's file. */
static void print_table(FILE *to, const run_summary *s, const server_stats *ss,
                        const error_log *errors, const procstat_summary *proc, const char *out) {
    summary_print(to, s);
    char line[256];
    if (server_stats_line(ss, line, sizeof line))
        fprintf(to, "server          %s\n", line);
    if (ss->has_gpu && s->output_tokens > 0)
        fprintf(to, "GPU             %.3f J per output token, %.0f%% mean utilisation\n",
                ss->gpu_energy_j / s->output_tokens, ss->gpu_util_mean_pct);
    print_server_process(to, proc);
    errorlog_print(to, errors); /* the server's own words, a line per error class */
    fprintf(to, "rows            %s/requests.csv\n", out);
    fflush(to);
}

/* One warning, with the advice that fits the cause: a client that used all
 * its CPU needs more threads; one that was late without using it was held
 * off the CPU by something else, which more threads do not cure. */
static int client_flagged(const client_verdict *v) {
    return v->lag_over || v->cpu_over || v->delayed || v->coalesced || v->chunks_coalesced;
}

static void warn_client(const run_summary *s, const client_verdict *v) {
    int lag_over = v->lag_over, cpu_over = v->cpu_over;
    if (!client_flagged(v))
        return;
    char what[640];
    if (lag_over)
        snprintf(what, sizeof what, "the client's schedule lag p99 was %.2f ms", s->lag.p99);
    else if (cpu_over)
        snprintf(what, sizeof what, "the client used all of its CPU");
    else if (v->delayed)
        snprintf(what, sizeof what, "%s", v->delay_words);
    else
        snprintf(what, sizeof what, "%s", v->coalesced ? v->first_words : v->chunk_words);
    const char *advice =
        !lag_over && !cpu_over && v->delayed
            ? "one client thread sends a burst a request after another: --threads shares it out, "
              "and --cpus with --realtime keeps other work off the client's CPU"
        : !lag_over && !cpu_over
            ? "its reads fell behind the stream: --threads shares the streams out, and --cpus "
              "with --realtime keeps other work off the client's CPU"
        : cpu_over ? "its CPU was saturated: add --threads, or spread the load over "
                     "more machines"
                   : "it was held off the CPU by other work on this machine: pin it "
                     "apart with --cpus and --realtime, or quiet the machine "
                     "(--threads will not help)";
    notice_warn("%s, beyond what it measures within 1 ms: %s%s (servelab calibrate tells this "
                "machine's limits)",
                what, advice,
                s->lag.n && s->lag.p99 > 5.0 ? "; latencies include the client's own delay" : "");
}

outcome run_write_summary(run_ctx *x, int meta_rc, run_result *rr) {
    const run_opts *o = &x->o;
    summary_params sp = {.offered_rps = x->w.replay ? replay_offered_rps(x->w.replay) : o->rate,
                         .cost_per_hour = o->cost_per_hour,
                         .client_cpu_s = x->res.cpu_s};
    char err[256];
    if (o->slo)
        slo_parse(o->slo, &sp.slo, err, sizeof err); /* checked when it was given */
    run_summary s;
    summarize(&x->res.rows, &sp, &s);
    server_stats ss;
    server_stats_compute(&x->res.metrics, &x->res.gpu, &ss);
    client_verdict v;
    client_check_sort(&x->res.check);
    rundir_summary out = {.s = &s,
                          .server = &ss,
                          .client = client_json(&s, &x->res, o->threads, &v),
                          .server_process = server_process_json(x),
                          .spec_decode = spec_decode_figures(x->spec_before, x->spec_after),
                          .stages = x->plan.n ? stages_of_run(x) : NULL,
                          .interrupted = x->res.interrupted};
    int sum_rc = rundir_summary_write(o->out, &out);
    FILE *to = o->print_summary ? o->summary_to : NULL;
    if (to)
        print_table(to, &s, &ss, &x->res.errors, &x->res.server_proc, o->out);
    if (to && x->res.interrupted)
        fprintf(to,
                "interrupted     after %.2f s: %zu of %zu requests cancelled; the rates above are "
                "over the time it ran\n",
                s.duration_s, s.errors[ERR_CANCELLED], s.requests);
    rr->client_flagged = client_flagged(&v);
    rr->client_worst_ms = x->res.check.max_delay_ms;
    if (s.lag.max > rr->client_worst_ms)
        rr->client_worst_ms = s.lag.max;
    if (!o->quiet_client)
        warn_client(&s, &v);

    outcome done = OUTCOME_OK;
    if (x->res.write_error || meta_rc || sum_rc) {
        snprintf(rr->error, sizeof rr->error, "writing results in %s failed: %s", o->out,
                 strerror(x->res.write_error ? x->res.write_error : errno));
        rr->write_failed = 1;
        done = OUTCOME_FAILED;
    }
    /* A run whose every request failed measured nothing: that is a failure
     * whatever the figures say, and so is one past --max-error-rate. */
    if (s.requests &&
        (s.failed == s.requests || (double)s.failed > o->max_error_rate * (double)s.requests)) {
        char why[128];
        snprintf(why, sizeof why, "%zu of %zu requests failed%s", s.failed, s.requests,
                 s.failed == s.requests ? "" : " (more than --max-error-rate)");
        if (!rr->error[0]) /* said by servelab run, recorded by a sweep */
            snprintf(rr->error, sizeof rr->error, "%s", why);
        done = OUTCOME_FAILED;
    }
    if (o->fail_on_slo && !(s.goodput_fraction >= o->fail_fraction)) {
        notice(notice_default(), NOTICE_INFO, "run: SLO missed: %.1f%% met, %.1f%% required",
               100 * s.goodput_fraction, 100 * o->fail_fraction); /* servelab: run: SLO ... */
        done = OUTCOME_FAILED;
    }
    if (x->res.interrupted)
        done = OUTCOME_STOPPED;
    rr->requests = s.requests;
    rr->completed = s.completed;
    rr->failed = s.failed;
    rr->interrupted = x->res.interrupted;
    rr->duration_s = s.duration_s;
    rr->server_peak_rss_bytes = x->res.server_proc.peak_rss_bytes;
    return done;
}

/* run: executes one run: workload and schedule first (bad input fails
 * before any traffic), then the server probe, the warmup, the measured
 * requests through loadgen, and meta.json and summary.json written through
 * a temporary name and renamed. */
#include "run/run.h"
#include "analysis/serverstats.h"
#include "client/h1.h"
#include "client/loadgen.h"
#include "client/rowwriter.h"
#include "client/probe.h"
#include "common/clock.h"
#include "common/cpus.h"
#include "common/files.h"
#include "common/hostinfo.h"
#include "common/stop.h"
#include "common/util.h"
#include "monitor/gpu.h"
#include "workload/workload.h"

#include <errno.h>
#include <pthread.h>
#include <sys/resource.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

void run_opts_defaults(run_opts *o) {
    memset(o, 0, sizeof *o);
    o->api = "completions";
    o->prompts = "builtin";
    o->cusage = "auto";
    o->http_client = "auto";
    o->rate = INFINITY;
    o->burstiness = 1;
    o->requests = 100;
    o->timeout_s = 600;
    o->max_event_bytes = 16 << 20;
    o->fail_fraction = 1.0;
    o->metrics_interval_s = 1.0;
    o->print_summary = 1;
    o->threads = 1;
}

int run_opts_validate(const run_opts *o, char *err, int errlen) {
    const char *why = NULL;
    if (!o->url)
        why = "--url is required (e.g. --url http://127.0.0.1:8000)";
    else if (strncmp(o->url, "http://", 7) && strncmp(o->url, "https://", 8))
        why = "--url: expected http:// or https://";
    else if (o->have_requests && o->have_duration)
        why = "give --requests or --duration, not both";
    else if (o->have_duration && isinf(o->rate))
        why = "--duration needs a finite --rate";
    else if (o->fail_on_slo && !o->slo_text)
        why = "--fail-on-slo needs --slo";
    else if (!strcmp(o->http_client, "builtin") && !h1_usable(o->url))
        why = "--http-client builtin: needs a plain http:// URL without credentials and no "
              "http_proxy/all_proxy in the environment";
    if (why) {
        snprintf(err, errlen, "%s", why);
        return -1;
    }
    return 0;
}

/* Base URL without a trailing slash or /v1. */
static char *base_url(const char *url) {
    char *b = xstrdup(url);
    size_t n = strlen(b);
    while (n && b[n - 1] == '/')
        b[--n] = 0;
    if (n >= 3 && !strcmp(b + n - 3, "/v1"))
        b[n - 3] = 0;
    return b;
}

/* Header names only: values (keys, tokens) never reach a file. */
static json_t *redacted_headers(const run_opts *o) {
    json_t *a = json_array();
    for (int i = 0; i < o->n_headers; i++) {
        const char *colon = strchr(o->headers[i], ':');
        char name[128];
        snprintf(name, sizeof name, "%.*s: <redacted>", (int)(colon - o->headers[i]),
                 o->headers[i]);
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

static double process_cpu_s(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec / 1e6;
}

typedef struct lg_thread {
    pthread_t tid;
    loadgen_config cfg;
    loadgen_result res;
    int64_t *due;
    uint32_t *idx;
    char err[256];
    int rc;
} lg_thread;

static void *thread_main(void *arg) {
    lg_thread *t = arg;
    t->rc = loadgen_run(&t->cfg, &t->res, t->err, sizeof t->err);
    return NULL;
}

/* --threads N: request i goes to thread i % N (deterministic), each thread
 * with its own event loop and connections, all writing the same row files
 * and sharing one t=0; their records are merged for the summary. Only the
 * first thread samples /metrics and the GPUs. */
static int run_threads(const loadgen_config *base, int n_threads, loadgen_result *res, char *err,
                       int errlen) {
    row_writer shared;
    if (row_writer_open(&shared, base->out_dir, err, errlen))
        return -1;
    lg_thread *t = xcalloc((size_t)n_threads, sizeof *t);
    int64_t t0 = mono_us() + 20000; /* every thread started before t=0 */
    for (int k = 0; k < n_threads; k++) {
        size_t cnt = 0;
        for (size_t i = (size_t)k; i < base->n; i += (size_t)n_threads)
            cnt++;
        t[k].due = xmalloc((cnt ? cnt : 1) * sizeof *t[k].due);
        t[k].idx = xmalloc((cnt ? cnt : 1) * sizeof *t[k].idx);
        size_t j = 0;
        for (size_t i = (size_t)k; i < base->n; i += (size_t)n_threads, j++) {
            t[k].due[j] = base->due_us[i];
            t[k].idx[j] = (uint32_t)(base->first_index + i);
        }
        t[k].cfg = *base;
        t[k].cfg.due_us = t[k].due;
        t[k].cfg.n = cnt;
        t[k].cfg.indices = t[k].idx;
        t[k].cfg.t0_us = t0;
        t[k].cfg.shared_rows = &shared;
        t[k].cfg.progress = 0;
        if (k > 0) {
            t[k].cfg.metrics_url = NULL;
            t[k].cfg.gpu = NULL;
        }
    }
    for (int k = 0; k < n_threads; k++)
        pthread_create(&t[k].tid, NULL, thread_main, &t[k]);
    for (int k = 0; k < n_threads; k++)
        pthread_join(t[k].tid, NULL);
    memset(res, 0, sizeof *res);
    int rc = 0;
    for (int k = 0; k < n_threads; k++) {
        loadgen_result *r = &t[k].res;
        if (t[k].rc && !rc) {
            snprintf(err, errlen, "%s", t[k].err);
            rc = -1;
        }
        for (size_t i = 0; i < r->rows.n; i++)
            rows_add(&res->rows, &r->rows.r[i]);
        for (size_t i = 0; i < r->rows.n_itl; i++)
            rows_add_itl(&res->rows, r->rows.itl_ms[i]);
        res->rows.window_output_tokens += r->rows.window_output_tokens;
        res->usage_counted += r->usage_counted;
        res->chunk_counted += r->chunk_counted;
        res->interrupted |= r->interrupted;
        if (!res->write_error)
            res->write_error = r->write_error;
        if (k == 0) { /* the sampler's series move over */
            res->metrics = r->metrics;
            res->gpu = r->gpu;
            res->metrics_samples = r->metrics_samples;
            res->gpu_samples = r->gpu_samples;
        }
        rows_free(&r->rows);
        free(t[k].due);
        free(t[k].idx);
    }
    int werr = row_writer_close(&shared);
    if (!res->write_error)
        res->write_error = werr;
    free(t);
    return rc;
}

int run_execute(const run_opts *opts, json_t *cmdline, json_t *extra_meta, run_result *rr) {
    run_opts o = *opts;
    memset(rr, 0, sizeof *rr);
    char err[1024];
    raise_fd_limit();
    signal(SIGPIPE, SIG_IGN);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    stop_install();
    /* Placement first: the client threads inherit both. */
    if (o.cpus && cpus_pin(o.cpus, err, sizeof err))
        die(2, "run: %s", err);
    const char *priority = o.realtime ? cpus_realtime() : "off";

    /* Workload and schedule first: bad input fails before any traffic. */
    workload w;
    if (workload_load(&w, o.prompts, o.mix, err, sizeof err))
        die(2, "run: %s", err);
    arrival_spec as = {o.arrival, o.rate, o.burstiness};
    int64_t *due;
    size_t n =
        o.have_duration
            ? arrivals_generate(&as, o.seed, (size_t)100000000, llround(o.duration_s * 1e6), &due)
            : arrivals_generate(&as, o.seed, (size_t)o.requests, INT64_MAX, &due);
    workload_assign(&w, n + (size_t)o.warmup, o.seed);

    char out_default[128];
    if (!o.out) {
        char ts[40];
        utc_now_iso(ts, sizeof ts);
        for (char *p = ts; *p; p++)
            if (*p == ':' || *p == '.')
                *p = '-';
        snprintf(out_default, sizeof out_default, "out/run-%s", ts);
        o.out = out_default;
    }
    if (mkdir_p(o.out))
        die(2, "run: --out %s: cannot create directory: %s", o.out, strerror(errno));

    /* Headers: the API key from the environment, user headers. */
    struct curl_slist *headers = NULL;
    const char *key_env =
        o.key_env ? o.key_env : (getenv("OPENAI_API_KEY") ? "OPENAI_API_KEY" : NULL);
    if (key_env) {
        const char *key = getenv(key_env);
        if (!key || !*key)
            die(2, "run: --api-key-env %s: the variable is not set", key_env);
        size_t n_auth = strlen(key) + 32;
        char *auth = xmalloc(n_auth);
        snprintf(auth, n_auth, "Authorization: Bearer %s", key);
        headers = curl_slist_append(headers, auth);
        memset(auth, 0, n_auth);
        free(auth);
    }
    for (int i = 0; i < o.n_headers; i++)
        headers = curl_slist_append(headers, o.headers[i]);

    char *base = base_url(o.url);
    server_probe probe;
    probe_server(base, headers, o.insecure, &probe);
    if (!probe.reachable)
        warnx_("cannot reach the server (%s); every request will be recorded as it fails",
               probe.error);
    const char *model = o.model ? o.model : (probe.first_model[0] ? probe.first_model : NULL);
    int cusage = !strcmp(o.cusage, "on") || (!strcmp(o.cusage, "auto") && probe.vllm_like);

    char endpoint[2100];
    int chat = !strcmp(o.api, "chat");
    snprintf(endpoint, sizeof endpoint, "%s/v1/%s", base,
             chat ? "chat/completions" : "completions");

    /* What the server and the GPUs do meanwhile. */
    char metrics_url[2200];
    snprintf(metrics_url, sizeof metrics_url, "%s/metrics", base);
    char gpu_why[256] = "";
    gpu_monitor *gpu = o.no_sampling ? NULL : gpu_open(gpu_why, sizeof gpu_why);
    if (!gpu && !o.no_sampling && !o.quiet)
        fprintf(stderr, "servelab: note: no GPU sampled (%s)\n", gpu_why);

    /* Our own HTTP/1.1 client where it can go (client/h1.h says why). */
    http_client_kind http_client = HTTP_CLIENT_LIBCURL;
    if (strcmp(o.http_client, "libcurl") && h1_usable(endpoint))
        http_client = HTTP_CLIENT_BUILTIN;

    char started[40];
    utc_now_iso(started, sizeof started);
    loadgen_config lc = {.endpoint = endpoint,
                         .headers = headers,
                         .w = &w,
                         .body = {.chat = chat,
                                  .model = model,
                                  .include_usage = 1,
                                  .continuous_usage = cusage,
                                  .ignore_eos = o.ignore_eos,
                                  .max_tokens = (int)o.max_tokens},
                         .concurrency = (int)o.concurrency,
                         .timeout_s = o.timeout_s,
                         .insecure = o.insecure,
                         .client = http_client,
                         .max_event_bytes = (size_t)o.max_event_bytes,
                         .progress = !o.quiet && isatty(2),
                         .metrics_url = o.no_sampling ? NULL : metrics_url,
                         .metrics_headers = headers,
                         .sample_interval_s = o.metrics_interval_s,
                         .gpu = gpu};
    loadgen_result res;
    if (o.warmup > 0) {
        int64_t *wdue;
        size_t wn = arrivals_generate(&as, o.seed + 1, (size_t)o.warmup, INT64_MAX, &wdue);
        loadgen_config wc = lc;
        wc.due_us = wdue;
        wc.n = wn;
        wc.first_index = n;
        wc.out_dir = NULL;
        wc.progress = 0;
        loadgen_run(&wc, &res, err, sizeof err);
        rows_free(&res.rows);
        free(wdue);
        if (res.interrupted) {
            rr->interrupted = 1;
            rr->code = stop_exit_code(stop_signal());
            return rr->code;
        }
    }
    lc.due_us = due;
    lc.n = n;
    lc.out_dir = o.out;
    double cpu0 = process_cpu_s();
    if (o.threads <= 1) {
        if (loadgen_run(&lc, &res, err, sizeof err))
            die(1, "run: %s", err);
    } else if (run_threads(&lc, o.threads, &res, err, sizeof err)) {
        die(1, "run: %s", err);
    }
    res.cpu_s = process_cpu_s() - cpu0;

    /* meta.json */
    char *shown_url = redact_url(base);
    json_t *meta = json_object();
    json_object_set_new(meta, "tool", tool_info_json());
    json_object_set_new(meta, "command_line", cmdline);
    json_t *cfg = json_pack(
        "{s:s,s:s,s:s?,s:s,s:s?,s:o,s:s,s:f,s:I,s:o,s:I,s:I,s:b,s:b,s:I,s:f,s:s?,s:o,s:o,s:b}",
        "url", shown_url, "api", o.api, "model", model, "prompts", o.prompts, "mix", o.mix, "rate",
        isinf(o.rate) ? json_string("inf") : json_real(o.rate), "arrival",
        arrival_kind_name(o.arrival), "burstiness", o.burstiness, "requests", (json_int_t)n,
        "duration_s", o.have_duration ? json_real(o.duration_s) : json_null(), "concurrency",
        (json_int_t)o.concurrency, "max_tokens", (json_int_t)o.max_tokens, "ignore_eos",
        o.ignore_eos, "continuous_usage_stats", cusage, "warmup", (json_int_t)o.warmup, "timeout_s",
        o.timeout_s, "slo", o.slo_text, "cost_per_hour",
        o.cost > 0 ? json_real(o.cost) : json_null(), "headers", redacted_headers(&o), "insecure",
        o.insecure);
    json_object_set_new(cfg, "api_key_env", key_env ? json_string(key_env) : json_null());
    json_object_set_new(cfg, "threads", json_integer(o.threads));
    json_object_set_new(cfg, "cpus", o.cpus ? json_string(o.cpus) : json_null());
    json_object_set_new(cfg, "realtime", json_string(priority));
    json_object_set_new(cfg, "http_client",
                        json_string(http_client == HTTP_CLIENT_BUILTIN ? "builtin" : "libcurl"));
    json_object_set_new(meta, "config", cfg);
    json_object_set_new(meta, "seed", json_integer((json_int_t)o.seed));
    json_object_set_new(meta, "started_utc", json_string(started));
    json_object_set_new(meta, "host", host_info_json());
    json_object_set_new(meta, "gpus", gpu_meta_json(gpu));
    if (!gpu)
        json_object_set_new(meta, "gpu_note",
                            json_string(o.no_sampling ? "GPU sampling off" : gpu_why));
    json_object_set_new(meta, "sampling",
                        json_pack("{s:f,s:i,s:i}", "interval_s", o.metrics_interval_s,
                                  "metrics_samples", res.metrics_samples, "gpu_samples",
                                  res.gpu_samples));
    json_object_set_new(meta, "server", probe_json(&probe));
    json_object_set_new(meta, "fixture", json_boolean(probe.is_sim));
    json_object_set_new(meta, "token_counting",
                        json_pack("{s:s,s:I,s:I}", "method",
                                  res.usage_counted && !res.chunk_counted   ? "usage"
                                  : res.chunk_counted && !res.usage_counted ? "chunk_count"
                                                                            : "mixed",
                                  "requests_from_usage", (json_int_t)res.usage_counted,
                                  "requests_from_chunk_count", (json_int_t)res.chunk_counted));
    json_object_set_new(meta, "interrupted", json_boolean(res.interrupted));
    if (extra_meta) {
        json_object_update(meta, extra_meta);
        json_decref(extra_meta);
    }
    int meta_rc = write_json_atomic(o.out, "meta.json", meta);
    json_decref(meta);
    free(shown_url);

    /* summary.json and the table */
    summary_params sp = {
        .offered_rps = o.rate, .slo = o.slo, .cost_per_hour = o.cost, .client_cpu_s = res.cpu_s};
    run_summary s;
    summarize(&res.rows, &sp, &s);
    server_stats ss;
    server_stats_compute(&res.metrics, &res.gpu, &ss);
    json_t *sj = summary_json(&s);
    json_object_set_new(sj, "server", server_stats_json(&ss, s.output_tokens));
    /* Is this run within what the client measures to 1 ms? Its own lag and
     * CPU say so; `servelab calibrate` tells the limits beforehand. */
    double cpu_pct = s.duration_s > 0 ? 100 * res.cpu_s / s.duration_s : 0;
    int lag_over = s.lag.n && s.lag.p99 > 1.0;
    int cpu_over = cpu_pct > 90.0 * o.threads;
    json_t *client = json_object_get(sj, "client");
    json_object_set_new(client, "cpu_pct", json_real(cpu_pct));
    json_object_set_new(client, "threads", json_integer(o.threads));
    json_object_set_new(client, "within_1ms", json_boolean(!lag_over && !cpu_over));
    json_t *notes = json_array();
    if (lag_over)
        json_array_append_new(notes, json_string("schedule lag p99 over 1 ms"));
    if (cpu_over)
        json_array_append_new(notes, json_string("client CPU saturated"));
    json_object_set_new(client, "notes", notes);
    int sum_rc = write_json_atomic(o.out, "summary.json", sj);
    json_decref(sj);
    if (o.print_summary) {
        summary_print(stdout, &s);
        if (ss.has_metrics)
            printf("server          peak %.0f running, %.0f waiting, KV %.0f%%, %.0f preemptions"
                   "%s%.0f%% of TTFT queued\n",
                   ss.peak_running, ss.peak_waiting, 100 * ss.peak_kv_usage, ss.preemptions,
                   isfinite(ss.queue_share_of_ttft) ? ", " : "",
                   isfinite(ss.queue_share_of_ttft) ? 100 * ss.queue_share_of_ttft : 0.0);
        if (ss.has_gpu && s.output_tokens > 0)
            printf("GPU             %.3f J per output token, %.0f%% mean utilisation\n",
                   ss.gpu_energy_j / s.output_tokens, ss.gpu_util_mean_pct);
        printf("rows            %s/requests.csv\n", o.out);
        fflush(stdout);
    }
    if (s.lag.n && s.lag.p99 > 5.0)
        warnx_("the client's schedule lag p99 is %.1f ms (> 5 ms): this machine could not keep "
               "the schedule; latencies include the client's own delay",
               s.lag.p99);
    else if (lag_over || cpu_over)
        warnx_("this run went beyond what the client measures within 1 ms (%s%s%s); see "
               "`servelab calibrate` for this machine's limits, or add --threads",
               lag_over ? "schedule lag p99 over 1 ms" : "", lag_over && cpu_over ? ", " : "",
               cpu_over ? "client CPU saturated" : "");

    int code = 0;
    if (res.write_error || meta_rc || sum_rc) {
        fprintf(stderr, "servelab: run: writing results in %s failed: %s\n", o.out,
                strerror(res.write_error ? res.write_error : errno));
        code = 1;
    }
    if (o.fail_on_slo && !(s.goodput_fraction >= o.fail_fraction)) {
        fprintf(stderr, "servelab: run: SLO missed: %.1f%% met, %.1f%% required\n",
                100 * s.goodput_fraction, 100 * o.fail_fraction);
        code = 1;
    }
    if (res.interrupted)
        code = stop_exit_code(stop_signal());
    rr->requests = s.requests;
    rr->completed = s.completed;
    rr->failed = s.failed;
    rr->interrupted = res.interrupted;
    rr->duration_s = s.duration_s;
    rr->code = code;
    rows_free(&res.rows);
    series_set_free(&res.metrics);
    series_set_free(&res.gpu);
    gpu_close(gpu);
    probe_free(&probe);
    curl_slist_free_all(headers);
    workload_free(&w);
    free(due);
    free(base);
    return code;
}

/* run_cmd: `servelab run`, one load run against a server. Parses options,
 * probes the server, builds the schedule and the workload, runs the warmup
 * and then the measured requests through loadgen, and writes meta.json and
 * summary.json (through a temporary name, then renamed) beside the rows. */
#include "analysis/summary.h"
#include "cli/commands.h"
#include "client/loadgen.h"
#include "client/probe.h"
#include "common/clock.h"
#include "common/hostinfo.h"
#include "common/util.h"
#include "workload/arrivals.h"
#include "workload/workload.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void run_usage(FILE *f) {
    fputs("usage: servelab run --url URL [options]\n"
          "One open-loop load run; rows in --out DIR, the summary on stdout.\n\n"
          "target:\n"
          "  --url BASE              server base URL, e.g. http://127.0.0.1:8000\n"
          "  --api completions|chat  endpoint (completions)\n"
          "  --model NAME            model id (default: the first from /v1/models)\n"
          "  --api-key-env VAR       send $VAR as a Bearer token (default OPENAI_API_KEY if set)\n"
          "  --header 'K: V'         extra request header (repeatable)\n"
          "  --insecure              do not verify TLS certificates\n"
          "arrivals:\n"
          "  --rate R                requests/s, or inf for all at t=0 (inf)\n"
          "  --arrival KIND          poisson|gamma|constant (poisson)\n"
          "  --burstiness CV         gamma's coefficient of variation (1)\n"
          "  --requests N            how many requests (100), or\n"
          "  --duration S            schedule arrivals for S seconds\n"
          "  --concurrency N         cap on requests in flight (none: open loop)\n"
          "  --seed N                seed of schedule and prompt choice (0)\n"
          "workload:\n"
          "  --prompts SRC           builtin | FILE.jsonl | sharegpt:FILE.json | random:IN:OUT\n"
          "  --mix short=0.5,...     class weights (builtin: short=0.5,medium=0.3,long=0.2)\n"
          "  --max-tokens N          output cap for every request (default per class)\n"
          "  --ignore-eos            ask the server to generate exactly max_tokens\n"
          "  --continuous-usage M    auto|on|off: ask for per-chunk usage (auto: vLLM-like)\n"
          "run:\n"
          "  --warmup N              requests sent first and not counted (0)\n"
          "  --timeout S             per-request timeout in seconds (600)\n"
          "  --slo ttft=750ms,tpot=100ms[,e2e=30s]   goodput bounds\n"
          "  --fail-on-slo[=F]       exit 1 when under fraction F met the SLO (F=1)\n"
          "  --cost-per-hour USD     for cost per million output tokens\n"
          "  --out DIR               where rows and summaries go (out/run-UTCTIME)\n"
          "  --max-event-bytes N     largest SSE event accepted (16777216)\n"
          "  --quiet                 no progress line\n",
          f);
}

enum {
    O_URL = 1000, O_API, O_MODEL, O_KEYENV, O_HEADER, O_INSECURE, O_RATE, O_ARRIVAL, O_BURST,
    O_REQUESTS, O_DURATION, O_CONC, O_SEED, O_PROMPTS, O_MIX, O_MAXTOK, O_IGNORE_EOS, O_CUSAGE,
    O_WARMUP, O_TIMEOUT, O_SLO, O_FAILSLO, O_COST, O_OUT, O_MAXEV, O_QUIET, O_HELP
};

static const struct option long_opts[] = {
    {"url", required_argument, 0, O_URL},
    {"api", required_argument, 0, O_API},
    {"model", required_argument, 0, O_MODEL},
    {"api-key-env", required_argument, 0, O_KEYENV},
    {"header", required_argument, 0, O_HEADER},
    {"insecure", no_argument, 0, O_INSECURE},
    {"rate", required_argument, 0, O_RATE},
    {"arrival", required_argument, 0, O_ARRIVAL},
    {"burstiness", required_argument, 0, O_BURST},
    {"requests", required_argument, 0, O_REQUESTS},
    {"duration", required_argument, 0, O_DURATION},
    {"concurrency", required_argument, 0, O_CONC},
    {"seed", required_argument, 0, O_SEED},
    {"prompts", required_argument, 0, O_PROMPTS},
    {"mix", required_argument, 0, O_MIX},
    {"max-tokens", required_argument, 0, O_MAXTOK},
    {"ignore-eos", no_argument, 0, O_IGNORE_EOS},
    {"continuous-usage", required_argument, 0, O_CUSAGE},
    {"warmup", required_argument, 0, O_WARMUP},
    {"timeout", required_argument, 0, O_TIMEOUT},
    {"slo", required_argument, 0, O_SLO},
    {"fail-on-slo", optional_argument, 0, O_FAILSLO},
    {"cost-per-hour", required_argument, 0, O_COST},
    {"out", required_argument, 0, O_OUT},
    {"max-event-bytes", required_argument, 0, O_MAXEV},
    {"quiet", no_argument, 0, O_QUIET},
    {"help", no_argument, 0, O_HELP},
    {0, 0, 0, 0}};

typedef struct run_opts {
    const char *url, *api, *model, *key_env, *prompts, *mix, *out, *cusage;
    const char *headers[64];
    int n_headers;
    int insecure, ignore_eos, quiet;
    double rate, burstiness, duration_s, timeout_s, cost, fail_fraction;
    arrival_kind arrival;
    long requests, concurrency, max_tokens, warmup, max_event_bytes;
    uint64_t seed;
    int have_requests, have_duration, fail_on_slo;
    slo_spec slo;
    const char *slo_text;
} run_opts;

static long opt_long(const char *flag, const char *v, long lo) {
    long x;
    if (parse_int(v, &x) || x < lo)
        die(2, "run: --%s: expected an integer >= %ld, got '%s'", flag, lo, v);
    return x;
}

static double opt_double(const char *flag, const char *v, double lo) {
    double x;
    if (parse_double(v, &x) || x < lo)
        die(2, "run: --%s: expected a number >= %g, got '%s'", flag, lo, v);
    return x;
}

static void parse_opts(int argc, char **argv, run_opts *o) {
    memset(o, 0, sizeof *o);
    o->api = "completions";
    o->prompts = "builtin";
    o->cusage = "auto";
    o->rate = INFINITY;
    o->burstiness = 1;
    o->requests = 100;
    o->timeout_s = 600;
    o->max_event_bytes = 16 << 20;
    o->fail_fraction = 1.0;
    char err[512];
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", long_opts, NULL)) != -1) {
        const char *name = NULL;
        for (const struct option *lo = long_opts; lo->name; lo++)
            if (lo->val == c)
                name = lo->name;
        switch (c) {
        case O_URL: o->url = optarg; break;
        case O_API:
            if (strcmp(optarg, "completions") && strcmp(optarg, "chat"))
                die(2, "run: --api: expected completions or chat, got '%s'", optarg);
            o->api = optarg;
            break;
        case O_MODEL: o->model = optarg; break;
        case O_KEYENV: o->key_env = optarg; break;
        case O_HEADER:
            if (!strchr(optarg, ':') || optarg[0] == ':')
                die(2, "run: --header: expected 'Name: value', got '%s'", optarg);
            if (o->n_headers == 64)
                die(2, "run: --header: at most 64 headers");
            o->headers[o->n_headers++] = optarg;
            break;
        case O_INSECURE: o->insecure = 1; break;
        case O_RATE:
            if (!strcasecmp(optarg, "inf"))
                o->rate = INFINITY;
            else if (parse_double(optarg, &o->rate) || o->rate <= 0)
                die(2, "run: --rate: expected a positive number or inf, got '%s'", optarg);
            break;
        case O_ARRIVAL:
            if (arrival_kind_parse(optarg, &o->arrival))
                die(2, "run: --arrival: expected poisson, gamma or constant, got '%s'", optarg);
            break;
        case O_BURST: o->burstiness = opt_double(name, optarg, 1e-3); break;
        case O_REQUESTS:
            o->requests = opt_long(name, optarg, 1);
            o->have_requests = 1;
            break;
        case O_DURATION: {
            double ms;
            if (parse_duration_ms(optarg, &ms) || ms <= 0)
                die(2, "run: --duration: expected seconds (e.g. 60 or 2m), got '%s'", optarg);
            o->duration_s = ms / 1000;
            o->have_duration = 1;
            break;
        }
        case O_CONC: o->concurrency = opt_long(name, optarg, 1); break;
        case O_SEED: o->seed = (uint64_t)opt_long(name, optarg, 0); break;
        case O_PROMPTS: o->prompts = optarg; break;
        case O_MIX: o->mix = optarg; break;
        case O_MAXTOK: o->max_tokens = opt_long(name, optarg, 1); break;
        case O_IGNORE_EOS: o->ignore_eos = 1; break;
        case O_CUSAGE:
            if (strcmp(optarg, "auto") && strcmp(optarg, "on") && strcmp(optarg, "off"))
                die(2, "run: --continuous-usage: expected auto, on or off, got '%s'", optarg);
            o->cusage = optarg;
            break;
        case O_WARMUP: o->warmup = opt_long(name, optarg, 0); break;
        case O_TIMEOUT: {
            double ms;
            if (parse_duration_ms(optarg, &ms) || ms <= 0)
                die(2, "run: --timeout: expected seconds, got '%s'", optarg);
            o->timeout_s = ms / 1000;
            break;
        }
        case O_SLO:
            if (slo_parse(optarg, &o->slo, err, sizeof err))
                die(2, "run: %s", err);
            o->slo_text = optarg;
            break;
        case O_FAILSLO:
            o->fail_on_slo = 1;
            if (optarg && (parse_double(optarg, &o->fail_fraction) || o->fail_fraction < 0 ||
                           o->fail_fraction > 1))
                die(2, "run: --fail-on-slo: expected a fraction in [0,1], got '%s'", optarg);
            break;
        case O_COST: o->cost = opt_double(name, optarg, 0); break;
        case O_OUT: o->out = optarg; break;
        case O_MAXEV: o->max_event_bytes = opt_long(name, optarg, 1024); break;
        case O_QUIET: o->quiet = 1; break;
        case O_HELP:
        case 'h': run_usage(stdout); exit(0);
        default:
            die(2, "run: unknown or incomplete option '%s' (see servelab run --help)",
                argv[optind - 1]);
        }
    }
    if (optind < argc)
        die(2, "run: unexpected argument '%s'", argv[optind]);
    if (!o->url)
        die(2, "run: --url is required (e.g. --url http://127.0.0.1:8000)");
    if (strncmp(o->url, "http://", 7) && strncmp(o->url, "https://", 8))
        die(2, "run: --url: expected http:// or https://, got '%s'", o->url);
    if (o->have_requests && o->have_duration)
        die(2, "run: give --requests or --duration, not both");
    if (o->have_duration && isinf(o->rate))
        die(2, "run: --duration needs a finite --rate");
    if (o->fail_on_slo && !o->slo_text)
        die(2, "run: --fail-on-slo needs --slo");
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

/* Write JSON through a temporary name, then rename: never a half file. */
static int write_json_file(const char *dir, const char *name, json_t *obj) {
    char tmp[4096], path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    snprintf(tmp, sizeof tmp, "%s/.%s.tmp", dir, name);
    if (json_dump_file(obj, tmp, JSON_INDENT(2) | JSON_SORT_KEYS) != 0)
        return -1;
    return rename(tmp, path);
}

static int mkdir_p(const char *path) {
    char *p = xstrdup(path);
    for (char *s = p + 1; *s; s++) {
        if (*s == '/') {
            *s = 0;
            mkdir(p, 0755);
            *s = '/';
        }
    }
    int rc = mkdir(p, 0755);
    free(p);
    return rc == 0 || errno == EEXIST ? 0 : -1;
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

static json_t *command_line(int argc, char **argv) {
    json_t *a = json_array();
    int redact_next = 0;
    for (int i = 0; i < argc; i++) {
        if (redact_next) {
            const char *colon = strchr(argv[i], ':');
            char v[160];
            snprintf(v, sizeof v, "%.*s: <redacted>", colon ? (int)(colon - argv[i]) : 0,
                     argv[i]);
            json_array_append_new(a, json_string(v));
            redact_next = 0;
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

int cmd_run(int argc, char **argv) {
    run_opts o;
    parse_opts(argc, argv, &o);
    char err[1024];
    raise_fd_limit();
    signal(SIGPIPE, SIG_IGN);
    curl_global_init(CURL_GLOBAL_DEFAULT);

    /* Workload and schedule first: bad input fails before any traffic. */
    workload w;
    if (workload_load(&w, o.prompts, o.mix, err, sizeof err))
        die(2, "run: %s", err);
    arrival_spec as = {o.arrival, o.rate, o.burstiness};
    int64_t *due;
    size_t n = o.have_duration
                   ? arrivals_generate(&as, o.seed, (size_t)100000000, llround(o.duration_s * 1e6),
                                       &due)
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
    const char *key_env = o.key_env ? o.key_env : (getenv("OPENAI_API_KEY") ? "OPENAI_API_KEY" : NULL);
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
        warnx_("cannot reach %s (%s); every request will be recorded as it fails", base,
               probe.error);
    const char *model = o.model ? o.model : (probe.first_model[0] ? probe.first_model : NULL);
    int cusage = !strcmp(o.cusage, "on") || (!strcmp(o.cusage, "auto") && probe.vllm_like);

    char endpoint[2100];
    int chat = !strcmp(o.api, "chat");
    snprintf(endpoint, sizeof endpoint, "%s/v1/%s", base, chat ? "chat/completions" : "completions");

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
                         .max_event_bytes = (size_t)o.max_event_bytes,
                         .progress = !o.quiet && isatty(2)};
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
        if (res.interrupted)
            return 130;
    }
    lc.due_us = due;
    lc.n = n;
    lc.out_dir = o.out;
    if (loadgen_run(&lc, &res, err, sizeof err))
        die(1, "run: %s", err);

    /* meta.json */
    json_t *meta = json_object();
    json_object_set_new(meta, "tool", tool_info_json());
    json_object_set_new(meta, "command_line", command_line(argc + 1, argv - 1));
    json_t *cfg = json_pack(
        "{s:s,s:s,s:s?,s:s,s:s?,s:o,s:s,s:f,s:I,s:o,s:I,s:I,s:b,s:b,s:I,s:f,s:s?,s:o,s:o,s:b}",
        "url", base, "api", o.api, "model", model, "prompts", o.prompts, "mix", o.mix, "rate",
        isinf(o.rate) ? json_string("inf") : json_real(o.rate), "arrival",
        arrival_kind_name(o.arrival), "burstiness", o.burstiness, "requests", (json_int_t)n,
        "duration_s", o.have_duration ? json_real(o.duration_s) : json_null(), "concurrency",
        (json_int_t)o.concurrency, "max_tokens", (json_int_t)o.max_tokens, "ignore_eos",
        o.ignore_eos, "continuous_usage_stats", cusage, "warmup", (json_int_t)o.warmup,
        "timeout_s", o.timeout_s, "slo", o.slo_text, "cost_per_hour",
        o.cost > 0 ? json_real(o.cost) : json_null(), "headers", redacted_headers(&o),
        "insecure", o.insecure);
    json_object_set_new(cfg, "api_key_env", key_env ? json_string(key_env) : json_null());
    json_object_set_new(meta, "config", cfg);
    json_object_set_new(meta, "seed", json_integer((json_int_t)o.seed));
    json_object_set_new(meta, "started_utc", json_string(started));
    json_object_set_new(meta, "host", host_info_json());
    json_object_set_new(meta, "gpus", json_array());
    json_object_set_new(meta, "server", probe_json(&probe));
    json_object_set_new(meta, "fixture", json_boolean(probe.is_sim));
    json_object_set_new(meta, "token_counting",
                        json_pack("{s:s,s:I,s:I}", "method",
                                  res.usage_counted && !res.chunk_counted ? "usage"
                                  : res.chunk_counted && !res.usage_counted ? "chunk_count"
                                                                             : "mixed",
                                  "requests_from_usage", (json_int_t)res.usage_counted,
                                  "requests_from_chunk_count", (json_int_t)res.chunk_counted));
    json_object_set_new(meta, "interrupted", json_boolean(res.interrupted));
    int meta_rc = write_json_file(o.out, "meta.json", meta);
    json_decref(meta);

    /* summary.json and the table */
    summary_params sp = {.offered_rps = o.rate, .slo = o.slo, .cost_per_hour = o.cost,
                         .client_cpu_s = res.cpu_s};
    run_summary s;
    summarize(&res.rows, &sp, &s);
    json_t *sj = summary_json(&s);
    int sum_rc = write_json_file(o.out, "summary.json", sj);
    json_decref(sj);
    summary_print(stdout, &s);
    printf("rows            %s/requests.csv\n", o.out);
    fflush(stdout);
    if (s.lag.n && s.lag.p99 > 5.0)
        warnx_("the client's schedule lag p99 is %.1f ms (> 5 ms): this machine could not keep "
               "the schedule; latencies include the client's own delay",
               s.lag.p99);

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
        code = 130;
    rows_free(&res.rows);
    probe_free(&probe);
    curl_slist_free_all(headers);
    workload_free(&w);
    free(due);
    free(base);
    curl_global_cleanup();
    return code;
}

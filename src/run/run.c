/* run: executes one run in phases, each returning an error rather than
 * ending the process (a sweep goes on to its next run):
 *   prepare  placement, workload and schedule, output directory, headers,
 *            the server probe, the GPUs: all bad input is found here,
 *            before any traffic (OUTCOME_BAD_INPUT)
 *   warmup   requests sent first and not counted
 *   measure  the schedule through loadgen, on one or several threads
 *   finish   meta.json and summary.json, each through a temporary name
 *            (run_files.c), and the outcome. */
#include "run/run.h"
#include "client/fdbudget.h"
#include "client/h1.h"
#include "client/live.h"
#include "client/tokenizer.h"
#include "common/notice.h"
#include "common/tokens.h"
#include "common/clock.h"
#include "common/cpus.h"
#include "common/files.h"
#include "common/stop.h"
#include "common/util.h"
#include "run/metrics_listen.h"
#include "run/progress.h"
#include "run/run_ctx.h"
#include "run/start_at.h"
#include "run/virtual_client.h"
#include "rundir/outdir.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

void run_opts_defaults(run_opts *o) {
    memset(o, 0, sizeof *o);
    opt_defaults(run_options, o);
    o->print_summary = 1;
}

/* What --replay cannot go with: the trace is the schedule and the prompts,
 * and says what is shared. NULL when nothing. */
static const char *replay_conflict(const run_opts *o) {
    if (!o->replay)
        return NULL;
    if (o->have_duration)
        return "--replay: the trace is the schedule: give --replay-duration (trace time), not "
               "--duration";
    if (o->have_rate)
        return "--replay: the trace's timestamps are the schedule: --time-scale speeds it up, "
               "--rate does not apply";
    if (strcmp(o->prompts, "builtin") || o->mix)
        return "--replay: the trace makes the prompts: --prompts and --mix do not apply";
    if (strcmp(o->arrival, "poisson") || o->burstiness != 1)
        return "--replay: the trace's timestamps are the arrivals: --arrival and --burstiness do "
               "not apply";
    if (strcmp(o->turns, "1"))
        return "--replay: a trace's records are single requests: --turns does not apply";
    if (o->prefix_tokens > 0)
        return "--replay: the trace says what is shared: --prefix-tokens does not apply";
    if (o->warmup > 0)
        return "--replay: --warmup would send the trace's blocks first and prime the prefix "
               "cache it measures";
    return NULL;
}

int run_opts_validate(const run_opts *o, char *err, int errlen) {
    const char *why = NULL;
    if (!o->url && !o->predict)
        why = "--url is required (e.g. --url http://127.0.0.1:8000)";
    else if (o->predict && o->warmup > 0)
        why = "--warmup: a prediction's engine starts empty and its warmup would not reach the "
              "measured requests' engine: leave it out";
    else if (o->rate_plan && o->have_rate)
        why = "give --rate or --rate-plan, not both";
    else if (o->rate_plan && o->replay)
        why = "--replay: the trace's timestamps are the schedule: --rate-plan does not apply";
    else if (o->rate_plan && (o->have_requests || o->have_duration))
        why = "--rate-plan sets the schedule's length: give neither --requests nor --duration";
    else if ((why = replay_conflict(o)))
        ; /* said */
    else if (o->have_requests && o->have_duration)
        why = "give --requests or --duration, not both";
    else if (o->have_duration && isinf(o->rate))
        why = "--duration needs a finite --rate";
    else if (o->have_duration && o->rate * o->duration_s > RATE_PLAN_MAX_REQUESTS)
        why = "--rate x --duration: more than 100,000,000 requests, more than a run holds";
    else if (o->fail_on_slo && !o->slo)
        why = "--fail-on-slo needs --slo";
    else if (o->tools && strcmp(o->api, "chat"))
        why = "--tools: tool calls are asked of the chat API: add --api chat";
    else if ((o->tools || o->response_format) && o->predict)
        why = "--tools, --response-format: a prediction's engine writes no text to check";
    else if (!o->predict && !strcmp(o->http_client, "builtin") && !h1_usable(o->url))
        why = "--http-client builtin: needs a plain http:// URL without credentials and no "
              "http_proxy/all_proxy in the environment";
    if (why) {
        snprintf(err, errlen, "%s", why);
        return -1;
    }
    return 0;
}

__attribute__((format(printf, 2, 3))) static int fail(run_result *rr, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(rr->error, sizeof rr->error, fmt, ap);
    va_end(ap);
    return -1;
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

/* The shared prefix and the cache-busting nonce (workload/shaping.h). A
 * salt not given is drawn from the clock and the process, and recorded
 * in meta.json's config like any option, so a body can be rebuilt. */
static void shape_prompts(run_ctx *x) {
    run_opts *o = &x->o;
    shaping *sh = &x->w.shape;
    sh->cache_bust = !strcmp(o->cache_bust, "on");
    if (!o->cache_bust_salt) {
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        uint64_t v = mix64((uint64_t)now.tv_sec * 1000000000ULL + (uint64_t)now.tv_nsec) ^
                     mix64((uint64_t)getpid() ^ (uint64_t)mono_us());
        snprintf(x->salt, sizeof x->salt, "%016llx", (unsigned long long)v);
        o->cache_bust_salt = x->salt;
    }
    sh->salt = strtoull(o->cache_bust_salt, NULL, 16);
    sh->prefix_tokens = o->prefix_tokens;
    sh->prefix_groups = o->prefix_groups;
    sh->prefix_system = !strcmp(o->prefix_mode, "system");
    sh->words = &x->w.words;
}

/* Every request its prompt: one a scheduled request (and a warmup one
 * after them), or, multi-turn, one a turn of the conversations the
 * schedule starts (and of the warmup's, whose first turns only are sent). */
static int plan_prompts(run_ctx *x, uint64_t seed, char *err, int errlen) {
    const run_opts *o = &x->o;
    if (!strcmp(o->turns, "1")) {
        workload_assign(&x->w, x->n + (size_t)o->warmup, seed);
        return 0;
    }
    int turns = !strcmp(o->turns, "all") ? 0 : atoi(o->turns);
    size_t total = workload_plan_conversations(&x->w, x->n + (size_t)o->warmup, turns,
                                               o->think_time_s, o->max_tokens, seed, err, errlen);
    if (!total)
        return -1;
    const conv_plan *p = &x->w.conv;
    if (p->n_requests > UINT32_MAX - 1) {
        snprintf(err, errlen, "--turns: %zu requests in all is more than a run holds", total);
        return -1;
    }
    return 0;
}

/* Multi-turn: the schedule starts conversations; their later turns follow
 * in the client (loadgen.h). */
static void plan_turns(run_ctx *x) {
    const conv_plan *p = &x->w.conv;
    if (!workload_multi_turn(&x->w))
        return;
    x->lc.next_turn = p->next;
    x->lc.think_us = p->think_us;
    x->lc.indices = p->first;
    x->lc.total = x->n < p->n_conv ? p->first[x->n] : p->n_requests;
}

/* --rate-plan's schedule (workload/arrivals.h). What the run offered on the
 * whole, the plan's mean rate, stands in for --rate from here on: in
 * meta.json's config, summary.json's offered_rps and the warmup's pace. */
static size_t plan_arrivals(run_ctx *x, uint64_t seed) {
    size_t n =
        arrivals_generate_plan(&x->arrivals, &x->plan, seed, RATE_PLAN_MAX_REQUESTS, &x->due);
    x->o.rate = x->arrivals.rate = rate_plan_mean_rps(&x->plan);
    return n;
}

/* --replay: the trace's window is the schedule and the prompts, with no
 * nonce (the run records cache_bust off); a bad file fails here. */
static int prepare_replay(run_ctx *x, run_result *rr) {
    const run_opts *o = &x->o;
    char err[1024];
    replay_format f = REPLAY_AUTO;
    replay_format_parse(o->replay_format, &f); /* the option's choices are the names */
    replay_trace *t = xcalloc(1, sizeof *t);
    replay_window win = {.start_s = o->replay_start_s,
                         .duration_s = o->replay_duration_s,
                         .time_scale = o->time_scale,
                         .max_records = o->have_requests ? (size_t)o->requests : 0};
    if (replay_load(t, o->replay, f, o->replay_block_tokens, err, sizeof err) ||
        replay_select(t, &win, err, sizeof err)) {
        replay_free(t);
        free(t);
        return fail(rr, "%s", err);
    }
    shape_prompts(x); /* the run's salt, drawn if not given */
    replay_set_salt(t, x->w.shape.salt);
    workload_use_replay(&x->w, t);
    t->words = &x->w.words; /* --tokenize fills it before the first body */
    x->w_loaded = 1;
    x->o.cache_bust = "off";
    x->n = replay_due_times(t, &x->due);
    if (t->uncovered)
        notice_warn(
            "--replay: %zu of %zu records have hash_ids that do not number ceil(input / %d): "
            "is the trace cut in blocks of another size (--replay-block-tokens)?",
            t->uncovered, t->n, t->block_tokens);
    x->o.metrics_interval_s = run_metrics_interval_s(o, (double)x->due[x->n - 1] / 1e6);
    return 0;
}

/* --shard (run/shard.h): this shard's part of the whole schedule, and
 * --start-at's instant. Multi-turn conversations are not split. */
static int prepare_shard(run_ctx *x, run_result *rr) {
    const run_opts *o = &x->o;
    char why[512];
    x->n_all = x->n;
    x->shard.count = 1;
    if (o->start_at && start_at_parse(o->start_at, wall_us(), &x->start_at_us, why, sizeof why))
        return fail(rr, "--start-at: %s", why);
    if (!o->shard)
        return 0;
    if (shard_parse(o->shard, o->shard_count, getenv, &x->shard, why, sizeof why))
        return fail(rr, "--shard: %s", why);
    if (o->replay && x->salt[0]) /* drawn here: each shard would draw its own */
        return fail(rr, "--shard with --replay: give every shard the same --cache-bust-salt HEX, "
                        "so that the prompts the trace shares are the same on every shard");
    if (workload_multi_turn(&x->w))
        return fail(rr, "--shard: a multi-turn run (--turns) cannot be split yet: give --turns 1");
    x->n = shard_select(&x->shard, x->due, x->n, &x->shard_idx);
    return 0;
}

/* The workload and the schedule: bad prompts fail here. */
static int prepare_schedule(run_ctx *x, run_result *rr) {
    const run_opts *o = &x->o;
    char err[1024];
    if (o->replay)
        return prepare_replay(x, rr) || prepare_shard(x, rr);
    if (workload_load(&x->w, o->prompts, o->mix, err, sizeof err))
        return fail(rr, "%s", err);
    x->w_loaded = 1;
    shape_prompts(x);
    arrival_kind_parse(o->arrival, &x->arrivals.kind);
    x->arrivals.rate = o->rate;
    x->arrivals.burstiness = o->burstiness;
    uint64_t seed = (uint64_t)o->seed;
    if (o->rate_plan && rate_plan_parse(o->rate_plan, &x->plan, err, sizeof err))
        return fail(rr, "--rate-plan: %s", err); /* a sweep's value was checked when read */
    x->n = o->rate_plan ? plan_arrivals(x, seed)
           : o->have_duration
               ? arrivals_generate(&x->arrivals, seed, (size_t)100000000,
                                   llround(o->duration_s * 1e6), &x->due)
               : arrivals_generate(&x->arrivals, seed, (size_t)o->requests, INT64_MAX, &x->due);
    if (!o->rate_plan && !o->have_duration && x->n < (size_t)o->requests)
        return fail(rr, "--rate %g: %lld requests would take more than %d days to arrive", o->rate,
                    (long long)o->requests, ARRIVALS_MAX_S / 86400);
    if (plan_prompts(x, seed, err, sizeof err))
        return fail(rr, "%s", err);
    double schedule_s = o->rate_plan       ? x->plan.duration_s
                        : o->have_duration ? o->duration_s
                        : x->n             ? (double)x->due[x->n - 1] / 1e6
                                           : 0;
    x->o.metrics_interval_s = run_metrics_interval_s(o, schedule_s);
    return prepare_shard(x, rr);
}

/* --out: made, locked for this run, and holding no earlier run's files (or
 * cleared of them with --force), so two runs' rows never mix. */
static int prepare_out(run_ctx *x, run_result *rr) {
    if (!x->o.out) {
        char ts[40];
        utc_now_iso(ts, sizeof ts);
        for (char *p = ts; *p; p++)
            if (*p == ':' || *p == '.')
                *p = '-';
        snprintf(x->out_default, sizeof x->out_default, "out/run-%s", ts);
        x->o.out = x->out_default;
    }
    const char *out = x->o.out;
    snprintf(rr->out, sizeof rr->out, "%s", out);
    char err[4400];
    if (strlen(out) > OUT_DIR_MAX)
        return fail(rr, "--out: the path has %zu characters (at most %d)", strlen(out),
                    OUT_DIR_MAX);
    if (mkdir_p(out))
        return fail(rr, "--out %s: cannot create directory: %s", out, strerror(errno));
    if (dir_lock(out, &x->lock_fd, err, sizeof err))
        return fail(rr, "--out %s", err);
    char campaign[4200];
    snprintf(campaign, sizeof campaign, "%s/campaign.json", out);
    if (access(campaign, F_OK) == 0) /* a sweep's: its report would pool this run */
        return fail(rr,
                    "--out %s holds a campaign (campaign.json): give the run a directory of "
                    "its own",
                    out);
    if (outdir_take(out, x->o.force, err, sizeof err))
        return fail(rr, "--out %s", err);
    return 0;
}

/* The API key from the environment, and the user's headers. */
static int prepare_headers(run_ctx *x, run_result *rr) {
    const run_opts *o = &x->o;
    x->key_env = o->key_env ? o->key_env : getenv("OPENAI_API_KEY") ? "OPENAI_API_KEY" : NULL;
    if (x->key_env) {
        const char *key = getenv(x->key_env);
        if (!key || !*key)
            return fail(rr, "--api-key-env %s: the variable is not set", x->key_env);
        size_t n_auth = strlen(key) + 32;
        char *auth = xmalloc(n_auth);
        snprintf(auth, n_auth, "Authorization: Bearer %s", key);
        x->headers = curl_slist_append(x->headers, auth);
        memset(auth, 0, n_auth);
        free(auth);
    }
    for (int i = 0; i < o->headers.n; i++)
        x->headers = curl_slist_append(x->headers, o->headers.v[i]);
    if (o->extra_body) {
        char why[256];
        if (!(x->extra_body = workload_extra_body(o->extra_body, why, sizeof why)))
            return fail(rr, "--extra-body: %s", why);
    }
    if (o->tools || o->response_format) {
        char why[512];
        if (answer_spec_load(o->tools, o->response_format, &x->answers, why, sizeof why))
            return fail(rr, "%s", why);
        if (x->extra_body && (json_object_get(x->extra_body, "tools") ||
                              json_object_get(x->extra_body, "response_format")))
            return fail(rr, "--extra-body sets tools or response_format: give them with --tools "
                            "and --response-format only");
        if (!x->extra_body)
            x->extra_body = json_object();
        answer_spec_apply(&x->answers, x->extra_body);
    }
    return 0;
}

/* How many connections to open before t=0: what --preconnect says, or
 * for auto as many as can be in flight at once at the start, when that is
 * known: the --concurrency cap, or every request of an unpaced burst. */
static int preconnect_count(const run_opts *o, size_t n) {
    if (!strcmp(o->preconnect, "off"))
        return 0;
    long want = strcmp(o->preconnect, "auto") ? atol(o->preconnect)
                : o->concurrency > 0          ? (long)o->concurrency
                : isinf(o->rate)              ? (long)n
                                              : 0;
    return (int)(want < (long)n ? want : (long)n);
}

/* The client's settings every target shares: the bodies, the cap, the
 * timeout, the limits on an answer. */
static loadgen_config client_config(const run_ctx *x) {
    const run_opts *o = &x->o;
    return (loadgen_config){.w = &x->w,
                            .body = {.chat = !strcmp(o->api, "chat"),
                                     .model = x->model,
                                     .include_usage = 1,
                                     .continuous_usage = x->cusage,
                                     .ignore_eos = o->ignore_eos,
                                     .max_tokens = (int)o->max_tokens,
                                     .extra = x->extra_body},
                            .concurrency = (int)o->concurrency,
                            .preconnect = preconnect_count(o, x->n),
                            .timeout_s = o->timeout_s,
                            .max_event_bytes = (size_t)o->max_event_bytes,
                            .max_chunks = (int)o->max_chunks,
                            .answers = {x->answers.tools, x->answers.schema}};
}

/* `servelab predict`: no server to ask, nothing to sample; the model is
 * the simulator's. */
static void prepare_virtual_target(run_ctx *x) {
    x->base = xstrdup("");
    x->model = x->o.model ? x->o.model : x->o.predict->model;
    x->cusage = !strcmp(x->o.cusage, "on") || !strcmp(x->o.cusage, "auto");
    snprintf(x->gpu_why, sizeof x->gpu_why, "a prediction: no GPU");
    x->lc = client_config(x);
}

/* What the server says about itself, the endpoints, the GPUs and the HTTP
 * client (client/h1.h says why there are two). */
static void prepare_target(run_ctx *x) {
    const run_opts *o = &x->o;
    if (o->predict) {
        prepare_virtual_target(x);
        return;
    }
    x->base = base_url(o->url);
    probe_server(x->base, x->headers, o->insecure, &x->probe);
    x->probed = 1;
    char why[1024];
    if (probe_warning(&x->probe, o->model, why, sizeof why))
        notice_warn("%s", why);
    x->model = o->model ? o->model : (x->probe.first_model[0] ? x->probe.first_model : NULL);
    x->cusage = !strcmp(o->cusage, "on") || (!strcmp(o->cusage, "auto") && x->probe.vllm_like);
    snprintf(x->endpoint, sizeof x->endpoint, "%s/v1/%s", x->base,
             !strcmp(o->api, "chat") ? "chat/completions" : "completions");
    snprintf(x->metrics_url, sizeof x->metrics_url, "%s/metrics", x->base);
    x->gpu = o->no_sampling ? NULL : gpu_open(x->gpu_why, sizeof x->gpu_why);
    if (!x->gpu && !o->no_sampling && !o->quiet)
        notice(notice_default(), NOTICE_INFO, "note: no GPU sampled (%s)", x->gpu_why);
    x->client = strcmp(o->http_client, "libcurl") && h1_usable(x->endpoint) ? HTTP_CLIENT_BUILTIN
                                                                            : HTTP_CLIENT_LIBCURL;
    x->lc = client_config(x);
    x->lc.endpoint = x->endpoint;
    x->lc.headers = x->headers;
    x->lc.insecure = o->insecure;
    x->lc.client = x->client;
    x->lc.metrics_url = o->no_sampling ? NULL : x->metrics_url;
    x->lc.metrics_headers = x->headers;
    x->lc.sample_interval_s = o->metrics_interval_s;
    x->lc.gpu = x->gpu;
    x->lc.server_pid = o->no_sampling ? 0 : o->server_pid;
}

/* Whether servelab builds text of its own words for this run (words.h). */
static int builds_words(const run_ctx *x) {
    const run_opts *o = &x->o;
    return ((x->w.random_in || x->w.replay) && !strcmp(o->api, "chat")) || o->prefix_tokens > 0 ||
           (workload_multi_turn(&x->w) && !x->w.conv.all_turns);
}

/* The simulator's /tokenize, for a prediction: common/tokens.h's rule. */
static int count_by_rule(void *arg, const char *text, int *count) {
    (void)arg;
    size_t n = count_text_tokens(text, strlen(text));
    *count = n ? (int)n : 1; /* an empty text is its BOS token */
    return 0;
}

/* --tokenize auto: the words the server counts one token each, when the
 * run builds text of its own and the server can tokenize; what came of it
 * goes to meta.json. */
static void prepare_words(run_ctx *x) {
    if (strcmp(x->o.tokenize, "auto") || !builds_words(x))
        return;
    server_tokenizer t = {x->base, x->headers, x->o.insecure, x->model};
    x->kept_words = xmalloc((size_t)n_common_words * sizeof *x->kept_words);
    int k =
        x->o.predict
            ? tokenizer_keep_words_by(count_by_rule, NULL, common_words, n_common_words,
                                      x->kept_words)
            : tokenizer_keep_words_within(&t, &(tokenizer_limits){TOKENIZER_BUDGET_S, x->o.quiet},
                                          common_words, n_common_words, x->kept_words);
    const char *why = k == TOKENIZER_TOO_SLOW ? "the server's /tokenize was too slow (over 15 s in "
                                                "all)"
                      : k == TOKENIZER_STOPPED ? "stopped before it was done"
                      : k < 0                  ? "the server has no /tokenize that answers"
                      : k < TOKENIZER_WORDS    ? "too few common words are one token on the server"
                                               : NULL;
    x->tokenizer = json_pack("{s:b,s:i,s:i,s:s?}", "used", why == NULL, "words_tried",
                             n_common_words, "words_kept", k < 0 ? 0 : k, "why", why);
    if (why) {
        if (!x->o.quiet)
            notice_warn("note: prompt lengths are by servelab's token rule, not the server's "
                        "tokenizer (%s)",
                        why);
        return;
    }
    x->w.words = (word_source){x->kept_words, k};
}

/* --progress plain prints, even with --quiet (asked for by name); auto
 * draws on a terminal only, unless --quiet (a sweep's runs are quiet, and
 * the sweep says with --progress off whether their progress shows). */
static progress_mode progress_mode_of(const run_opts *o) {
    if (!o->progress || !strcmp(o->progress, "off"))
        return PROGRESS_OFF;
    if (!strcmp(o->progress, "plain"))
        return PROGRESS_PLAIN;
    return (!o->quiet || o->progress_label) && isatty(2) ? PROGRESS_DRAW : PROGRESS_OFF;
}

/* The live counters, only when something watches them (the progress
 * display, --metrics-listen); /metrics answers from here on, the warmup
 * included (its requests are not counted). */
static void prepare_watchers(run_ctx *x) {
    if (progress_mode_of(&x->o) == PROGRESS_OFF && !x->ml)
        return;
    x->live = live_new(x->n);
    if (x->ml) {
        char *url = redact_url(x->o.url); /* never a password in a label */
        metrics_listen_start(x->ml, x->live, x->o.progress_label ? x->o.progress_label : x->o.out,
                             url);
        free(url);
    }
}

/* Everything before traffic; -1 means bad input (OUTCOME_BAD_INPUT). */
static int prepare(run_ctx *x, run_result *rr) {
    char err[512];
    if (run_opts_validate(&x->o, err, sizeof err)) /* a sweep's runs come here unchecked */
        return fail(rr, "%s", err);
    raise_fd_limit();
    signal(SIGPIPE, SIG_IGN);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    stop_install();
    /* Placement first: the client threads inherit both. */
    if (x->o.cpus && cpus_pin(x->o.cpus, err, sizeof err))
        return fail(rr, "%s", err);
    x->priority = x->o.realtime ? cpus_realtime() : "off";
    if (prepare_schedule(x, rr))
        return -1;
    fd_demand fds = {(int)x->o.concurrency, x->o.threads, x->due, x->n, x->o.timeout_s};
    if (!x->o.predict && fd_budget_check(&fds, err, sizeof err))
        return fail(rr, "%s", err);
    /* every connection the run may hold, before any thread exists (util.h) */
    if (!x->o.predict)
        fd_table_reserve(
            256 + (long)(x->o.concurrency > 0 ? x->o.concurrency * x->o.threads : (int64_t)x->n));
    if (prepare_headers(x, rr) || prepare_out(x, rr))
        return -1;
    if (x->o.metrics_listen && !(x->ml = metrics_listen_open(x->o.metrics_listen, err, sizeof err)))
        return fail(rr, "%s", err);
    if (x->ml) {
        x->ml_port = metrics_listen_port(x->ml);
        if (!x->o.quiet)
            metrics_listen_announce(x->ml);
    }
    prepare_watchers(x);
    prepare_target(x);
    prepare_words(x);
    utc_now_iso(x->started, sizeof x->started);
    return 0;
}

/* The warmup requests: their own schedule (seed + 1) and request indices
 * after the measured ones, no rows. */
static void warmup(run_ctx *x) {
    if (x->o.warmup <= 0)
        return;
    int64_t *wdue;
    size_t wn = arrivals_generate(&x->arrivals, (uint64_t)x->o.seed + 1, (size_t)x->o.warmup,
                                  INT64_MAX, &wdue);
    loadgen_config wc = x->lc;
    wc.due_us = wdue;
    wc.n = wn;
    wc.first_index = x->n_all; /* after the whole schedule's, sharded or not */
    wc.indices = NULL;
    if (workload_multi_turn(&x->w)) /* the first turns of the warmup's conversations, alone */
        wc.indices = x->w.conv.first + x->n;
    wc.out_dir = NULL;
    wc.live = NULL; /* the warmup is not counted */
    loadgen_result wr;
    char err[512];
    if (loadgen_run(&wc, &wr, err, sizeof err))
        notice_warn("warmup: %s", err);
    rows_free(&wr.rows);
    series_set_free(&wr.metrics);
    series_set_free(&wr.gpu);
    free(wdue);
}

static double process_cpu_s(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec / 1e6;
}

/* A prediction's speculative-decoding counters, as a server's /metrics
 * would give them (client/probe.h's object): the engine's at the end, or
 * zeros for the start. NULL when the engine drafts nothing. */
static json_t *predicted_spec_counters(const virtual_target *t, int at_end) {
    if (!t->stats || t->engine.spec_tokens <= 0)
        return NULL;
    const engine_stats *st = t->stats;
    json_t *per = json_array();
    for (int i = 0; i < t->engine.spec_tokens; i++)
        json_array_append_new(per, json_real(at_end ? (double)st->spec_accepted_per_pos[i] : 0));
    return json_pack("{s:s,s:f,s:f,s:f,s:o}", "source", "vllm", "num_drafts",
                     at_end ? (double)st->spec_drafts_total : 0, "num_draft_tokens",
                     at_end ? (double)st->spec_draft_tokens_total : 0, "num_accepted_tokens",
                     at_end ? (double)st->spec_accepted_total : 0, "num_accepted_tokens_per_pos",
                     per);
}

/* The measured schedule; -1 when it could not start (its output files). */
static int measure(run_ctx *x, run_result *rr) {
    char err[512];
    x->lc.due_us = x->due;
    x->lc.n = x->n;
    x->lc.out_dir = x->o.out;
    plan_turns(x);
    if (x->shard_idx)
        x->lc.indices = x->shard_idx;
    if (x->start_at_us) {
        x->lc.t0_us = mono_at_wall(x->start_at_us);
        if (x->lc.t0_us < mono_us())
            notice_warn(
                "--start-at: t=0 passed %.3f s ago (during the warmup?): the first requests "
                "go late, and their lag_ms says by how much",
                (mono_us() - x->lc.t0_us) / 1e6);
    }
    if (x->o.watch &&
        (x->o.threads <= 1 || x->o.predict)) { /* not for the warmup, which copied lc before */
        x->lc.watch = x->o.watch->fn;
        x->lc.watch_arg = x->o.watch->arg;
    }
    /* the watchers: the progress display and --metrics-listen */
    if (x->live)
        live_set_total(x->live, x->lc.total ? x->lc.total : x->n);
    x->lc.live = x->live;
    progress_opts po = {.mode = progress_mode_of(&x->o),
                        .interval_s = x->o.progress_interval_s,
                        .label = x->o.progress_label,
                        .last_due_s = x->n ? x->due[x->n - 1] / 1e6 : 0};
    progress *pg = progress_start(x->live, &po);
    int counters = !x->o.predict && !x->o.no_sampling;
    if (counters)
        x->spec_before = probe_spec_counters(x->metrics_url, x->headers, x->o.insecure);
    double cpu0 = process_cpu_s();
    int rc = x->o.predict ? virtual_client_run(&x->lc, x->o.predict, &x->res, err, sizeof err)
             : x->o.threads <= 1 ? loadgen_run(&x->lc, &x->res, err, sizeof err)
                                 : run_threads(&x->lc, x->o.threads, &x->res, err, sizeof err);
    progress_stop(pg);
    if (counters && x->spec_before)
        x->spec_after = probe_spec_counters(x->metrics_url, x->headers, x->o.insecure);
    if (x->o.predict && rc == 0) {
        x->spec_before = predicted_spec_counters(x->o.predict, 0);
        x->spec_after = predicted_spec_counters(x->o.predict, 1);
    }
    double listen_cpu_s = metrics_listen_close(x->ml); /* the listener's, not the client's */
    x->ml = NULL;
    x->lc.live = NULL;
    live_free(x->live);
    x->live = NULL;
    if (rc)
        return fail(rr, "%s", err);
    x->have_res = 1;
    x->res.cpu_s = process_cpu_s() - cpu0 - listen_cpu_s;
    return 0;
}

static void release(run_ctx *x) {
    metrics_listen_close(x->ml); /* before the counters it reads */
    live_free(x->live);
    if (x->have_res) {
        rows_free(&x->res.rows);
        series_set_free(&x->res.metrics);
        series_set_free(&x->res.gpu);
    }
    gpu_close(x->gpu);
    if (x->probed)
        probe_free(&x->probe);
    curl_slist_free_all(x->headers);
    json_decref(x->extra_body);
    answer_spec_free(&x->answers);
    json_decref(x->spec_before);
    json_decref(x->spec_after);
    if (x->w_loaded)
        workload_free(&x->w);
    free(x->due);
    free(x->shard_idx);
    free(x->base);
    free(x->kept_words);
    json_decref(x->tokenizer);
    dir_unlock(x->lock_fd);
}

outcome run_execute(const run_opts *opts, json_t *cmdline, json_t *extra_meta, run_result *rr) {
    memset(rr, 0, sizeof *rr);
    run_ctx *x = xcalloc(1, sizeof *x);
    x->o = *opts;
    x->lock_fd = -1;
    if (prepare(x, rr)) {
        rr->done = OUTCOME_BAD_INPUT;
    } else {
        /* A stop during the warmup still measures: loadgen then sends
         * nothing, every scheduled request becomes a cancelled row, and
         * meta.json and summary.json are written, marked interrupted. */
        warmup(x);
        if (measure(x, rr)) {
            rr->done = OUTCOME_FAILED;
        } else {
            int meta_rc = run_write_meta(x, cmdline, extra_meta);
            cmdline = extra_meta = NULL; /* stolen */
            rr->done = run_write_summary(x, meta_rc, rr);
            rr->watch_stopped = x->res.watch_stopped;
        }
    }
    json_decref(cmdline);
    json_decref(extra_meta);
    release(x);
    free(x);
    return rr->done;
}

outcome run_predict_rows(const run_opts *opts, run_rows *rows, char *err, int errlen) {
    memset(rows, 0, sizeof *rows);
    run_ctx *x = xcalloc(1, sizeof *x);
    run_result rr;
    memset(&rr, 0, sizeof rr);
    x->o = *opts;
    x->lock_fd = -1;
    outcome done = OUTCOME_OK;
    if (run_opts_validate(&x->o, rr.error, sizeof rr.error) || prepare_schedule(x, &rr) ||
        prepare_headers(x, &rr))
        done = OUTCOME_BAD_INPUT;
    if (done == OUTCOME_OK) {
        prepare_target(x);
        prepare_words(x);
        x->lc.due_us = x->due;
        x->lc.n = x->n;
        plan_turns(x);
        if (x->o.watch) {
            x->lc.watch = x->o.watch->fn;
            x->lc.watch_arg = x->o.watch->arg;
        }
        if (virtual_client_run(&x->lc, x->o.predict, &x->res, rr.error, sizeof rr.error))
            done = OUTCOME_FAILED;
        else {
            *rows = x->res.rows; /* the caller's now */
            memset(&x->res.rows, 0, sizeof x->res.rows);
            x->have_res = 1;
            if (x->res.interrupted)
                done = OUTCOME_STOPPED;
        }
    }
    if (done != OUTCOME_OK)
        snprintf(err, errlen, "%s", rr.error);
    release(x);
    free(x);
    return done;
}

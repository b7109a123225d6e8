/* run_options: every option of a run, once (see common/opt.h for what a row
 * drives). `servelab run` parses its command line with this table and a
 * campaign's run keys are read with it, so both take the same values; the
 * `key` column is the campaign key ("workload.max_tokens" is max_tokens in
 * a run's workload map), `meta` the name meta.json's config and
 * campaign.json record the value under. */
#include "analysis/summary.h"
#include "run/run.h"
#include "workload/answer_spec.h"
#include "workload/conversation.h"
#include "workload/arrivals.h"
#include "workload/rate_plan.h"
#include "workload/workload.h"
#include "run/shard.h"
#include "run/start_at.h"
#include "common/clock.h"
#include "common/util.h"
#include "model/slo.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The authority of a URL (after "scheme://", up to the path): an optional
 * user@, a host (a name or address, or [IPv6]) and an optional :port in
 * 1-65535. NULL, or what is wrong with it. */
static const char *authority_problem(const char *a, size_t n) {
    const char *at = memchr(a, '@', n);
    if (at) {
        n -= (size_t)(at + 1 - a);
        a = at + 1;
    }
    const char *port = NULL;
    if (n && a[0] == '[') {
        const char *close = memchr(a, ']', n);
        if (!close)
            return "the host's '[' is not closed";
        if (close == a + 1)
            return "no host";
        if (close + 1 < a + n && close[1] != ':')
            return "something after the host's ']'";
        port = close + 1 < a + n ? close + 2 : NULL;
    } else {
        const char *colon = memchr(a, ':', n);
        if ((colon ? colon : a + n) == a)
            return "no host";
        port = colon ? colon + 1 : NULL;
    }
    if (!port)
        return NULL;
    size_t digits = (size_t)(a + n - port);
    long v = 0;
    for (size_t i = 0; i < digits; i++) {
        if (port[i] < '0' || port[i] > '9')
            return "the port is not a number";
        v = v * 10 + (port[i] - '0');
        if (v > 65535)
            break;
    }
    return digits == 0 || v < 1 || v > 65535 ? "the port is not in 1-65535" : NULL;
}

static int url_check(const char *text, char *err, size_t errlen) {
    size_t skip = !strncmp(text, "http://", 7) ? 7 : !strncmp(text, "https://", 8) ? 8 : 0;
    if (!skip) {
        snprintf(err, errlen, "expected a URL starting with http:// or https://, got '%.60s'",
                 text);
        return -1;
    }
    const char *why = NULL;
    for (const char *c = text; *c && !why; c++)
        if ((unsigned char)*c <= ' ' || *c == 0x7f)
            why = "it holds a space or a control character";
    if (!why) {
        const char *a = text + skip;
        why = authority_problem(a, strcspn(a, "/?#"));
    }
    if (!why)
        return 0;
    char *shown = redact_url(text); /* credentials never reach a message */
    snprintf(err, errlen, "'%.60s' is not a usable URL: %s", shown, why);
    free(shown);
    return -1;
}

static int header_check(const char *text, char *err, size_t errlen) {
    if (!strchr(text, ':') || text[0] == ':') {
        snprintf(err, errlen, "expected 'Name: value', got '%.60s'", text);
        return -1;
    }
    if (strpbrk(text, "\r\n")) {
        snprintf(err, errlen, "a header may not hold CR or LF");
        return -1;
    }
    size_t name = (size_t)(strchr(text, ':') - text);
    if ((name == 14 && !strncasecmp(text, "Content-Length", 14)) ||
        (name == 17 && !strncasecmp(text, "Transfer-Encoding", 17))) {
        snprintf(err, errlen, "%.*s is servelab's to set (the body's own length)", (int)name, text);
        return -1;
    }
    return 0;
}

/* --metadata KEY=VALUE: a key of letters, digits, '_', '-' and '.' (a
 * JSON key a reader of vLLM's file can use as it is), any value. */
static int metadata_check(const char *text, char *err, size_t errlen) {
    const char *eq = strchr(text, '=');
    size_t k = eq ? (size_t)(eq - text) : 0;
    int ok = k > 0 && k <= 64;
    for (size_t i = 0; ok && i < k; i++)
        ok = isalnum((unsigned char)text[i]) || strchr("_-.", text[i]);
    if (!ok) {
        snprintf(err, errlen, "expected KEY=VALUE (a key of letters, digits, _ - .), got '%.60s'",
                 text);
        return -1;
    }
    return 0;
}

/* --metrics-interval's seconds: the row an explicit value is read with,
 * so that it takes what any option in seconds takes, with the same words. */
static const opt_def interval_seconds = {
    .name = "metrics-interval", .type = OPT_SECONDS, .at = 0, .size = sizeof(double), .min = 0.01};

static int metrics_interval_check(const char *text, char *err, size_t errlen) {
    double v;
    if (!strcmp(text, "auto") || !opt_set(&interval_seconds, text, &v, err, errlen))
        return 0;
    char what[160];
    snprintf(err, errlen, "expected auto or %s, got '%.60s'",
             opt_what(&interval_seconds, what, sizeof what), text);
    return -1;
}

double run_metrics_interval_s(const run_opts *o, double schedule_s) {
    double v;
    char err[256];
    if (strcmp(o->metrics_interval, "auto") &&
        !opt_set(&interval_seconds, o->metrics_interval, &v, err, sizeof err))
        return v;
    double auto_s = schedule_s / METRICS_AUTO_SAMPLES;
    return auto_s < METRICS_AUTO_MIN_S   ? METRICS_AUTO_MIN_S
           : auto_s > METRICS_AUTO_MAX_S ? METRICS_AUTO_MAX_S
                                         : auto_s;
}

/* auto, off, or a whole number of connections (0 is off). */
static int preconnect_check(const char *text, char *err, size_t errlen) {
    if (!strcmp(text, "auto") || !strcmp(text, "off"))
        return 0;
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (*text < '0' || *text > '9' || *end || errno || v > 1000000) {
        snprintf(err, errlen, "expected auto, off or a number of connections, got '%s'", text);
        return -1;
    }
    return 0;
}

static int slo_check(const char *text, char *err, size_t errlen) {
    slo_spec s;
    char why[256];
    if (!slo_parse(text, &s, why, sizeof why))
        return 0;
    /* slo_parse names the flag itself; the caller puts the name in front */
    const char *msg = strncmp(why, "--slo: ", 7) ? why : why + 7;
    snprintf(err, errlen, "%s", msg);
    return -1;
}

/* --turns: a whole number of turns, or all. */
static int turns_check(const char *v, char *why, size_t whylen) {
    long n;
    if (!strcmp(v, "all") || (!parse_int(v, &n) && n >= 1 && n <= CONV_MAX_TURNS))
        return 0;
    snprintf(why, whylen, "expected a number of turns from 1 to %d, or all, got '%s'",
             CONV_MAX_TURNS, v);
    return -1;
}

/* --cache-bust-salt: 1-16 hex digits. */
static int salt_check(const char *v, char *why, size_t whylen) {
    size_t n = strlen(v);
    if (n < 1 || n > 16 || strspn(v, "0123456789abcdefABCDEF") != n) {
        snprintf(why, whylen, "expected 1 to 16 hex digits, got '%s'", v);
        return -1;
    }
    return 0;
}

/* --extra-body: a JSON object without servelab's own keys. */
static int extra_body_check(const char *v, char *why, size_t whylen) {
    json_t *o = workload_extra_body(v, why, whylen);
    json_decref(o);
    return o ? 0 : -1;
}

/* --tools FILE and --response-format FILE: read and checked now. */
static int tools_check(const char *v, char *why, size_t whylen) {
    answer_spec s;
    int rc = answer_spec_load(v, NULL, &s, why, whylen);
    answer_spec_free(&s);
    return rc;
}

static int format_check(const char *v, char *why, size_t whylen) {
    answer_spec s;
    int rc = answer_spec_load(NULL, v, &s, why, whylen);
    answer_spec_free(&s);
    return rc;
}

/* --shard: I/N or auto (the scheduler's variables are read when the run
 * starts). */
static int shard_check(const char *v, char *why, size_t whylen) {
    if (!strcmp(v, "auto"))
        return 0;
    shard_spec s;
    return shard_parse(v, 0, getenv, &s, why, whylen);
}

/* --start-at: EPOCH or +S, in the future (checked again when the run starts). */
static int start_at_check(const char *v, char *why, size_t whylen) {
    int64_t at;
    return start_at_parse(v, wall_us(), &at, why, whylen);
}

/* --rate-plan: stages that parse (workload/rate_plan.h says what they are). */
static int rate_plan_check(const char *v, char *why, size_t whylen) {
    rate_plan p;
    return rate_plan_parse(v, &p, why, whylen);
}

#define RUN(field) OPT_AT(run_opts, field)

const opt_def run_options[] = {
    {.name = "url",
     .type = OPT_STRING,
     RUN(url),
     .arg = "BASE",
     .check = url_check,
     .group = "target",
     .help = "server base URL, e.g. http://127.0.0.1:8000"},
    {.name = "api",
     .key = "api",
     .meta = "api",
     .type = OPT_CHOICE,
     RUN(api),
     .choices = "completions|chat",
     .def = "completions",
     .help = "endpoint"},
    {.name = "model",
     .key = "model",
     .meta = "model",
     .type = OPT_STRING,
     RUN(model),
     .arg = "NAME",
     .help = "model id (default: the first from /v1/models)"},

    {.name = "prompts",
     .key = "workload.prompts",
     .meta = "prompts",
     .type = OPT_STRING,
     RUN(prompts),
     .arg = "SRC",
     .def = "builtin",
     .group = "workload",
     .help = "builtin | FILE.jsonl | sharegpt:FILE.json | random:IN:OUT"},
    {.name = "mix",
     .key = "workload.mix",
     .meta = "mix",
     .type = OPT_STRING,
     RUN(mix),
     .arg = "short=0.5,...",
     .help = "class weights (builtin: short=0.5,medium=0.3,long=0.2)"},
    {.name = "max-tokens",
     .key = "workload.max_tokens",
     .meta = "max_tokens",
     .type = OPT_INT,
     RUN(max_tokens),
     .arg = "N",
     .min = 1,
     .max = INT_MAX,
     .help = "output cap for every request (default per class)"},
    {.name = "ignore-eos",
     .key = "workload.ignore_eos",
     .meta = "ignore_eos",
     .type = OPT_FLAG,
     RUN(ignore_eos),
     .help = "ask the server to generate exactly max_tokens"},
    {.name = "extra-body",
     .key = "workload.extra_body",
     .meta = "extra_body",
     .type = OPT_STRING,
     RUN(extra_body),
     .arg = "JSON",
     .check = extra_body_check,
     .help = "fields added to every request's body, e.g. '{\"cache_prompt\":false}' (llama.cpp)"},
    {.name = "tools",
     .key = "workload.tools",
     .meta = "tools",
     .type = OPT_STRING,
     RUN(tools),
     .arg = "FILE",
     .check = tools_check,
     .help = "ask for tool calls: OpenAI tools (a JSON array, or {\"tools\":[...],\"tool_choice\":"
             "...}) in every body; each call is checked against its tool (--api chat)"},
    {.name = "response-format",
     .key = "workload.response_format",
     .meta = "response_format",
     .type = OPT_STRING,
     RUN(response_format),
     .arg = "FILE",
     .check = format_check,
     .help = "ask for JSON: a response_format object (json_schema or json_object) in every body; "
             "each answer is checked against its schema"},
    {.name = "turns",
     .key = "workload.turns",
     .meta = "turns",
     .type = OPT_STRING,
     RUN(turns),
     .arg = "N|all",
     .def = "1",
     .check = turns_check,
     .help = "turns a conversation (all: ShareGPT's own); --requests and --rate count "
             "conversations"},
    {.name = "think-time",
     .key = "workload.think_time",
     .meta = "think_time_s",
     .type = OPT_SECONDS,
     RUN(think_time_s),
     .arg = "S",
     .max = ARRIVALS_MAX_S, /* a week, as the longest schedule */
     .def = "0",
     .help = "from a turn's answer's end to the next turn's sending"},
    {.name = "tokenize",
     .key = "workload.tokenize",
     .meta = "tokenize",
     .type = OPT_CHOICE,
     RUN(tokenize),
     .choices = "auto|off",
     .def = "auto",
     .help = "build synthetic text from words the server's /tokenize counts one token each"},
    {.name = "cache-bust",
     .key = "workload.cache_bust",
     .meta = "cache_bust",
     .type = OPT_CHOICE,
     RUN(cache_bust),
     .choices = "on|off",
     .def = "on",
     .help = "start every prompt with a 3-token nonce unique to the request and run"},
    {.name = "cache-bust-salt",
     .key = "workload.cache_bust_salt",
     .meta = "cache_bust_salt",
     .type = OPT_STRING,
     RUN(cache_bust_salt),
     .arg = "HEX",
     .check = salt_check,
     .help = "the nonces' salt (default: new each run; meta.json records it)"},
    {.name = "prefix-tokens",
     .key = "workload.prefix_tokens",
     .meta = "prefix_tokens",
     .type = OPT_INT,
     RUN(prefix_tokens),
     .arg = "N",
     .min = 0,
     .max = 1000000,
     .def = "0",
     .help = "start every prompt with one of --prefix-groups shared prefixes of N tokens"},
    {.name = "prefix-groups",
     .key = "workload.prefix_groups",
     .meta = "prefix_groups",
     .type = OPT_INT,
     RUN(prefix_groups),
     .arg = "G",
     .min = 1,
     .max = 1000000,
     .def = "1",
     .help = "how many distinct shared prefixes (a seeded draw per request)"},
    {.name = "prefix-mode",
     .key = "workload.prefix_mode",
     .meta = "prefix_mode",
     .type = OPT_CHOICE,
     RUN(prefix_mode),
     .choices = "system|prepend",
     .def = "system",
     .help = "chat: the prefix as a system message of its own, or at the start of the first"},

    {.name = "replay",
     .key = "workload.replay",
     .meta = "replay",
     .type = OPT_STRING,
     RUN(replay),
     .arg = "FILE",
     .group = "trace replay",
     .help = "the requests are a trace's records, at its times and lengths (docs/replay.md)"},
    {.name = "replay-format",
     .key = "workload.replay_format",
     .meta = "replay_format",
     .type = OPT_CHOICE,
     RUN(replay_format),
     .choices = "auto|mooncake|burstgpt|azure|jsonl",
     .def = "auto",
     .help = "the trace's format (auto: told by its first line)"},
    {.name = "time-scale",
     .key = "workload.time_scale",
     .meta = "time_scale",
     .type = OPT_NUMBER,
     RUN(time_scale),
     .arg = "F",
     .min = 0,
     .above = 1,
     .max = 1e6,
     .def = "1",
     .help = "replay F times as fast: gaps between arrivals are divided by F"},
    {.name = "replay-start",
     .key = "workload.replay_start",
     .meta = "replay_start_s",
     .type = OPT_SECONDS,
     RUN(replay_start_s),
     .arg = "S",
     .def = "0",
     .help = "replay from S seconds after the trace's first record (trace time)"},
    {.name = "replay-duration",
     .key = "workload.replay_duration",
     .meta = "replay_duration_s",
     .type = OPT_SECONDS,
     RUN(replay_duration_s),
     .arg = "S",
     .above = 1,
     .help = "replay the records of S seconds of trace time (default: to the end)"},
    {.name = "replay-block-tokens",
     .key = "workload.replay_block_tokens",
     .meta = "replay_block_tokens",
     .type = OPT_INT,
     RUN(replay_block_tokens),
     .arg = "N",
     .min = 1,
     .max = 1000000,
     .def = "512",
     .help = "tokens a Mooncake hash id stands for (its traces' blocks are 512)"},

    {.name = "requests",
     .key = "requests",
     .meta = "requests",
     .type = OPT_INT,
     RUN(requests),
     OPT_SEEN(run_opts, have_requests),
     .arg = "N",
     .min = 1,
     .max = RATE_PLAN_MAX_REQUESTS, /* a run of more is a mistake, not a benchmark */
     .def = "100",
     .group = "arrivals",
     .help = "how many requests, or"},
    {.name = "duration",
     .key = "duration",
     .meta = "duration_s",
     .type = OPT_SECONDS,
     RUN(duration_s),
     OPT_SEEN(run_opts, have_duration),
     .arg = "S",
     .above = 1,
     .max = ARRIVALS_MAX_S,
     .help = "schedule arrivals for S seconds"},
    {.name = "rate",
     .key = "rate",
     .meta = "rate",
     .type = OPT_RATE,
     RUN(rate),
     .arg = "R",
     OPT_SEEN(run_opts, have_rate),
     .def = "inf",
     .help = "requests/s, or inf for all at t=0"},
    {.name = "rate-plan",
     .key = "rate_plan",
     .meta = "rate_plan",
     .type = OPT_STRING,
     RUN(rate_plan),
     .arg = "R@D,ramp:A-B@D,...",
     .check = rate_plan_check,
     .help = "stages of constant or linearly ramping rates; replaces --rate and "
             "--requests/--duration"},
    {.name = "arrival",
     .key = "arrival",
     .meta = "arrival",
     .type = OPT_CHOICE,
     RUN(arrival),
     .arg = "KIND",
     .choices = "poisson|gamma|constant",
     .def = "poisson",
     .help = "poisson|gamma|constant"},
    {.name = "burstiness",
     .key = "burstiness",
     .meta = "burstiness",
     .type = OPT_NUMBER,
     RUN(burstiness),
     .arg = "CV",
     .min = 1e-3,
     .def = "1",
     .max = 100,
     .help = "gamma's coefficient of variation"},
    {.name = "concurrency",
     .key = "concurrency",
     .meta = "concurrency",
     .type = OPT_INT,
     RUN(concurrency),
     .arg = "N",
     .min = 1,
     .max = INT_MAX,
     .help = "cap on requests in flight (none: open loop)"},
    {.name = "seed",
     .key = "seed",
     .meta = "seed",
     .type = OPT_INT,
     RUN(seed),
     .arg = "N",
     .def = "0",
     .help = "seed of schedule and prompt choice"},

    {.name = "warmup",
     .key = "warmup",
     .meta = "warmup",
     .type = OPT_INT,
     RUN(warmup),
     .arg = "N",
     .max = RATE_PLAN_MAX_REQUESTS,
     .def = "0",
     .group = "run",
     .help = "requests sent first and not counted"},
    {.name = "timeout",
     .key = "timeout",
     .meta = "timeout_s",
     .type = OPT_SECONDS,
     RUN(timeout_s),
     .arg = "S",
     .above = 1,
     .max = 86400,
     .def = "600",
     .help = "per-request timeout in seconds"},
    {.name = "slo",
     .key = "slo",
     .meta = "slo",
     .type = OPT_STRING,
     RUN(slo),
     .arg = "ttft=750ms,tpot=100ms[,e2e=30s]",
     .check = slo_check,
     .help = "goodput bounds"},
    {.name = "fail-on-slo",
     .type = OPT_NUMBER,
     RUN(fail_fraction),
     OPT_SEEN(run_opts, fail_on_slo),
     .arg = "F",
     .bare = "1",
     .max = 1,
     .def = "1",
     .help = "exit 1 when under fraction F met the SLO"},
    {.name = "max-error-rate",
     .key = "max_error_rate",
     .meta = "max_error_rate",
     .type = OPT_NUMBER,
     RUN(max_error_rate),
     .arg = "F",
     .max = 1,
     .def = "1",
     .help = "exit 1 when more than fraction F of the requests failed (always when all did)"},
    {.name = "cost-per-hour",
     .key = "cost_per_hour",
     .meta = "cost_per_hour",
     .type = OPT_NUMBER,
     RUN(cost_per_hour),
     .arg = "USD",
     .max = 1e6,
     .help = "for cost per million output tokens"},
    {.name = "out",
     .type = OPT_STRING,
     RUN(out),
     .arg = "DIR",
     .help = "where rows and summaries go (out/run-UTCTIME)"},
    {.name = "label",
     .key = "label",
     .meta = "label",
     .type = OPT_STRING,
     RUN(label),
     .arg = "TEXT",
     .help = "a name for the run in meta.json and the vLLM file (vLLM's --label)"},
    {.name = "metadata",
     .key = "metadata",
     .meta = "metadata",
     .type = OPT_LIST,
     RUN(metadata),
     .arg = "KEY=VALUE",
     .check = metadata_check,
     .help = "recorded in meta.json and the vLLM file (vLLM's --metadata; repeatable)"},
    {.name = "save-vllm-json",
     .type = OPT_STRING,
     RUN(save_vllm_json),
     .arg = "FILE",
     .help = "also write the run as vLLM's bench serve result file (--save-detailed keys)"},
    {.name = "metric-percentiles",
     .type = OPT_STRING,
     RUN(metric_percentiles),
     .arg = "P[,P...]",
     .def = "99",
     .help = "the percentiles of that file's TTFT, TPOT, ITL and E2EL (as vLLM's option)"},
    {.name = "force",
     .type = OPT_FLAG,
     RUN(force),
     .help = "replace the files an earlier run left in --out"},
    {.name = "metrics-interval",
     .key = "metrics_interval",
     .meta = "metrics_interval",
     .type = OPT_STRING,
     RUN(metrics_interval),
     .arg = "auto|S",
     .check = metrics_interval_check,
     .def = "auto",
     .help = "sample /metrics and GPUs every S seconds (auto: the schedule's length / 20, "
             "0.1-1 s)"},
    {.name = "no-sampling",
     .key = "no_sampling",
     .meta = "no_sampling",
     .type = OPT_FLAG,
     RUN(no_sampling),
     .help = "sample neither /metrics, GPUs nor the server's processes"},
    {.name = "server-pid",
     .type = OPT_INT,
     RUN(server_pid),
     .arg = "PID",
     .min = 1,
     .max = INT_MAX,
     .help = "sample this process and its children (RSS, CPU, threads) into server_proc.csv"},
    {.name = "threads",
     .key = "threads",
     .meta = "threads",
     .type = OPT_INT,
     RUN(threads),
     .arg = "N",
     .min = 1,
     .max = 64,
     .def = "1",
     .help = "client threads, each its own loop and connections"},
    {.name = "shard",
     .meta = "shard",
     .type = OPT_STRING,
     RUN(shard),
     .arg = "I/N|auto",
     .check = shard_check,
     .help = "send only requests I, I+N, I+2N, ... of the schedule (auto: from Slurm, a "
             "Kubernetes Indexed Job, MPI); merge the shards with servelab merge"},
    {.name = "shard-count",
     .meta = "shard_count",
     .type = OPT_INT,
     RUN(shard_count),
     .arg = "N",
     .min = 1,
     .max = 100000,
     .help = "with --shard auto from JOB_COMPLETION_INDEX: how many shards (the Job's "
             "completions)"},
    {.name = "start-at",
     .meta = "start_at",
     .type = OPT_STRING,
     RUN(start_at),
     .arg = "EPOCH|+S",
     .check = start_at_check,
     .help = "t=0 at this wall-clock time (seconds since the epoch, or +S from now): shards "
             "start together"},
    {.name = "http-client",
     .key = "http_client",
     .meta = "http_client",
     .type = OPT_CHOICE,
     RUN(http_client),
     .arg = "C",
     .choices = "auto|builtin|libcurl",
     .def = "auto",
     .help = "auto|builtin|libcurl (auto: builtin for plain http://)"},
    {.name = "preconnect",
     .key = "preconnect",
     .meta = "preconnect",
     .type = OPT_STRING,
     RUN(preconnect),
     .arg = "auto|off|N",
     .check = preconnect_check,
     .def = "auto",
     .help = "connections opened before t=0 (auto: the --concurrency cap, or every "
             "request with --rate inf and no cap; built-in client only)"},
    {.name = "cpus",
     .meta = "cpus",
     .type = OPT_STRING,
     RUN(cpus),
     .arg = "LIST",
     .help = "run the client on these CPUs only, e.g. 0 or 0-1"},
    {.name = "realtime",
     .meta = "realtime",
     .type = OPT_FLAG,
     RUN(realtime),
     .help = "SCHED_FIFO when allowed, else nice -10"},
    {.name = "quiet", .type = OPT_FLAG, RUN(quiet), .help = "no progress on stderr"},
    {.name = "progress",
     .type = OPT_CHOICE,
     RUN(progress),
     .choices = "auto|plain|off",
     .def = "auto",
     .help = "auto: redrawn on a terminal, twice a second; plain: a line every "
             "--progress-interval, terminal or not"},
    {.name = "progress-interval",
     .type = OPT_SECONDS,
     RUN(progress_interval_s),
     .arg = "S",
     .min = 0,
     .above = 1,
     .def = "10",
     .max = 3600,
     .help = "how often --progress plain prints its line"},
    {.name = "metrics-listen",
     .type = OPT_STRING,
     RUN(metrics_listen),
     .arg = "HOST:PORT",
     .help = "serve the client's own figures in Prometheus text at http://HOST:PORT/metrics"},

    {.name = "api-key-env",
     .key = "api_key_env",
     .meta = "api_key_env",
     .type = OPT_STRING,
     RUN(key_env),
     .arg = "VAR",
     .group = "requests to the server",
     .help = "send $VAR as a Bearer token (default OPENAI_API_KEY if set)"},
    {.name = "header",
     .type = OPT_LIST,
     RUN(headers),
     .arg = "'K: V'",
     .check = header_check,
     .help = "extra request header (repeatable)"},
    {.name = "insecure",
     .key = "insecure",
     .meta = "insecure",
     .type = OPT_FLAG,
     RUN(insecure),
     .help = "do not verify TLS certificates"},
    {.name = "continuous-usage",
     .key = "continuous_usage",
     .meta = "continuous_usage",
     .type = OPT_CHOICE,
     RUN(cusage),
     .arg = "M",
     .choices = "auto|on|off",
     .def = "auto",
     .help = "auto|on|off: ask for per-chunk usage (auto: vLLM-like)"},
    {.name = "max-event-bytes",
     .key = "max_event_bytes",
     .meta = "max_event_bytes",
     .type = OPT_INT,
     RUN(max_event_bytes),
     .arg = "N",
     .min = 1024,
     .def = "16777216",
     .max = 1073741824,
     .help = "largest SSE event accepted"},
    {.name = "max-chunks",
     .key = "max_chunks",
     .meta = "max_chunks",
     .type = OPT_INT,
     RUN(max_chunks),
     .arg = "N",
     .min = 1,
     .max = INT_MAX,
     .def = "1000000",
     .help = "most chunks kept of one answer; past it the request is malformed"},
    {0}};

void run_opts_defaults(run_opts *o) {
    memset(o, 0, sizeof *o);
    opt_defaults(run_options, o);
    o->print_summary = 1;
}

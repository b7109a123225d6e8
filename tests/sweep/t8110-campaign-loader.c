/* campaign: the sweep file loader. Good files check every resolved value
 * (inheritance, key-by-key overrides, requests vs duration); bad files check
 * the exact "file:line: key:" start of the one-line message, since that is
 * what a user reads to find the mistake. Files live in tests/data/campaigns/
 * (tests run from the repository root); short cases are written inline. */
#include "sweep/campaign.h"
#include "test.h"

#include <math.h>
#include <string.h>

#define DATA "tests/data/campaigns/"

/* A valid skeleton the inline cases start from (lines 1-2). */
#define HEAD "name: t\ntarget: {url: http://127.0.0.1:8000}\n"

static void load_ok(const char *yaml, campaign *c) {
    char err[512] = "";
    int rc = campaign_load_string(yaml, "t.yaml", c, err, sizeof err);
    CHECK_MSG(rc == 0, "expected to load, got: %s", err);
}

/* Loading fails and the message starts with `prefix`; the campaign is left
 * empty (campaign_load freed what it had built). */
static void check_error(int rc, const campaign *c, const char *err, const char *prefix) {
    CHECK_MSG(rc != 0, "loaded, but expected an error starting '%s'", prefix);
    CHECK_MSG(!strncmp(err, prefix, strlen(prefix)), "error '%s'\n    does not start with '%s'",
              err, prefix);
    CHECK_MSG(!strchr(err, '\n'), "error is not one line: '%s'", err);
    CHECK(c->name == NULL && c->path == NULL && c->runs == NULL && c->n_runs == 0);
    CHECK(c->defaults.p.api == NULL && c->url == NULL && c->sim_args == NULL);
}

static void expect_error(const char *yaml, const char *prefix) {
    campaign c;
    char err[512] = "";
    int rc = campaign_load_string(yaml, "t.yaml", &c, err, sizeof err);
    check_error(rc, &c, err, prefix);
}

static void expect_file_error(const char *path, const char *prefix) {
    campaign c;
    char err[512] = "";
    int rc = campaign_load(path, &c, err, sizeof err);
    check_error(rc, &c, err, prefix);
}

/* ---- good files ---- */

TEST(campaign_reference_example_resolves) {
    campaign c;
    char err[512] = "";
    CHECK_MSG(campaign_load(DATA "gpu-load.yaml", &c, err, sizeof err) == 0, "%s", err);
    CHECK_STR(c.name, "gpu-load");
    CHECK_STR(c.path, DATA "gpu-load.yaml");
    CHECK_INT(c.target, TARGET_URL);
    CHECK_STR(c.url, "http://127.0.0.1:8000");
    CHECK_INT(c.n_runs, 3);
    const char *names[] = {"load-1rps", "load-8rps", "load-8rps-kv0.45"};
    const double rates[] = {1, 8, 8};
    const int lines[] = {18, 19, 20};
    for (int i = 0; i < 3; i++) {
        const campaign_run *r = &c.runs[i];
        CHECK_STR(r->name, names[i]);
        CHECK_INT(r->line, lines[i]);
        CHECK_STR(r->p.api, "completions");
        CHECK(r->p.model == NULL);
        CHECK_STR(r->p.prompts, "builtin");
        CHECK_STR(r->p.mix, "short=0.5,medium=0.3,long=0.2");
        CHECK_INT(r->p.max_tokens, 256);
        CHECK_INT(r->p.ignore_eos, 0);
        CHECK_INT(r->p.requests, 120);
        CHECK_NEAR(r->p.duration_s, 0, 0);
        CHECK_NEAR(r->p.rate, rates[i], 0);
        CHECK_STR(r->p.arrival, "poisson");
        CHECK_NEAR(r->p.burstiness, 1, 0);
        CHECK_INT(r->p.concurrency, 0);
        CHECK_INT(r->p.warmup, 10);
        CHECK_INT(r->p.seed, 0);
        CHECK_NEAR(r->p.timeout_s, 600, 0);
        CHECK_STR(r->p.slo, "ttft=750ms,tpot=100ms");
        CHECK_NEAR(r->p.cost_per_hour, 0.40, 1e-12);
        CHECK_STR(r->server_args, i == 2 ? "--gpu-memory-utilization 0.45" : "");
        CHECK_STR(r->p.metrics_interval, "auto");
        CHECK_INT(r->repetitions, 2);
    }
    /* The defaults are resolved too (rate stays inf: no top-level rate). */
    CHECK_INT(c.defaults.p.requests, 120);
    CHECK(isinf(c.defaults.p.rate));
    CHECK_STR(c.defaults.p.slo, "ttft=750ms,tpot=100ms");
    campaign_free(&c);
    CHECK(c.runs == NULL && c.name == NULL);
    campaign_free(&c); /* freeing twice is harmless */
}

TEST(campaign_header_defaults) {
    campaign c;
    load_ok(HEAD "runs:\n  - name: only\n", &c);
    const run_opts *p = &c.runs[0].p;
    CHECK_STR(p->api, "completions");
    CHECK(p->model == NULL && p->mix == NULL && p->slo == NULL);
    CHECK_STR(p->prompts, "builtin");
    CHECK_INT(p->max_tokens, 0);
    CHECK_INT(p->requests, 100);
    CHECK_NEAR(p->duration_s, 0, 0);
    CHECK(isinf(p->rate) && p->rate > 0);
    CHECK_STR(p->arrival, "poisson");
    CHECK_NEAR(p->burstiness, 1, 0);
    CHECK_INT(p->concurrency, 0);
    CHECK_INT(p->warmup, 0);
    CHECK_INT(p->seed, 0);
    CHECK_NEAR(p->timeout_s, 600, 0);
    CHECK_NEAR(p->cost_per_hour, 0, 0);
    CHECK_STR(c.runs[0].server_args, "");
    CHECK_STR(p->metrics_interval, "auto");
    CHECK_INT(c.runs[0].repetitions, 1);
    CHECK_INT(p->threads, 1);
    CHECK_STR(p->http_client, "auto");
    CHECK_INT(c.runs[0].line, 4);
    CHECK_STR(c.path, "t.yaml");
    campaign_free(&c);
}

TEST(campaign_sim_target_flags) {
    campaign c;
    load_ok("name: s\n"
            "target:\n"
            "  sim: {profile: gpu-7b, kv_blocks: 900, max_num_seqs: 64, seed: 3}\n"
            "runs: [{name: a}]\n",
            &c);
    CHECK_INT(c.target, TARGET_SIM);
    CHECK_STR(c.sim_profile, "gpu-7b");
    CHECK_STR(c.sim_args, "--kv-blocks 900 --max-num-seqs 64 --seed 3");
    CHECK(c.url == NULL && c.server_command == NULL);
    campaign_free(&c);

    /* No keys at all: the tiny profile, no flags. */
    load_ok("name: s\ntarget: {sim: {}}\nruns: [{name: a}]\n", &c);
    CHECK_STR(c.sim_profile, "tiny");
    CHECK_STR(c.sim_args, "");
    campaign_free(&c);
    load_ok("name: s\ntarget:\n  sim:\nruns: [{name: a}]\n", &c);
    CHECK_INT(c.target, TARGET_SIM);
    CHECK_STR(c.sim_profile, "tiny");
    CHECK_STR(c.sim_args, "");
    campaign_free(&c);
    /* Flags without a profile keep the default one. */
    load_ok("name: s\ntarget: {sim: {decode_base_ms: 2.5}}\nruns: [{name: a}]\n", &c);
    CHECK_STR(c.sim_profile, "tiny");
    CHECK_STR(c.sim_args, "--decode-base-ms 2.5");
    campaign_free(&c);
    /* true is the bare flag, false leaves it out */
    load_ok("name: s\ntarget: {sim: {threads: 2, realtime: true, cpus: 1}}\n"
            "runs: [{name: a}]\n",
            &c);
    CHECK_STR(c.sim_args, "--threads 2 --realtime --cpus 1");
    campaign_free(&c);
    load_ok("name: s\ntarget: {sim: {realtime: false, threads: 3}}\nruns: [{name: a}]\n", &c);
    CHECK_STR(c.sim_args, "--threads 3");
    campaign_free(&c);
}

/* target.sim keys are the simulator's own options, checked by the same rows
 * as `servelab sim`'s flags before anything runs. */
TEST(campaign_sim_keys_checked_like_sim_flags) {
    expect_error(
        "name: t\ntarget:\n  sim: {decode_ms: 2.5}\nruns: [{name: a}]\n",
        "t.yaml:3: target.sim.decode_ms: unknown key (known: profile, profile_file, model, seed, ");
    expect_error("name: t\ntarget:\n  sim: {kv_blocks: lots}\nruns: [{name: a}]\n",
                 "t.yaml:3: target.sim.kv_blocks: expected an integer >= 1, got 'lots'");
    expect_error("name: t\ntarget:\n  sim: {realtime: yes}\nruns: [{name: a}]\n",
                 "t.yaml:3: target.sim.realtime: expected true or false, got 'yes'");
    expect_error("name: t\ntarget:\n  sim: {profile: gpu-70b}\nruns: [{name: a}]\n",
                 "t.yaml:3: target.sim.profile: expected one of tiny, gpu-7b, cpu-1b, cpu-1b-2c, "
                 "vllm-cpu, got 'gpu-70b'");
    expect_error("name: t\ntarget:\n  sim: {port: 9000}\nruns: [{name: a}]\n",
                 "t.yaml:3: target.sim.port: unknown key");
    expect_error("name: t\ntarget:\n  sim: {fault: http404=1}\nruns: [{name: a}]\n",
                 "t.yaml:3: target.sim.fault: ");
}

/* The client's threads and HTTP client, as run --threads / --http-client:
 * a default at the top, overridden per run, bad values named. */
TEST(campaign_client_threads_and_http_client) {
    campaign c;
    load_ok(HEAD "threads: 2\nruns:\n  - name: a\n  - name: b\n    threads: 1\n"
                 "    http_client: libcurl\n",
            &c);
    CHECK_INT(c.runs[0].p.threads, 2);
    CHECK_STR(c.runs[0].p.http_client, "auto");
    CHECK_INT(c.runs[1].p.threads, 1);
    CHECK_STR(c.runs[1].p.http_client, "libcurl");
    campaign_free(&c);
    expect_error(HEAD "runs:\n  - name: a\n    threads: 0\n", "t.yaml:5: runs[0].threads:");
    expect_error(HEAD "runs:\n  - name: a\n    http_client: wget\n",
                 "t.yaml:5: runs[0].http_client: expected one of auto, builtin, libcurl");
}

TEST(campaign_server_target) {
    campaign c;
    load_ok("name: m\n"
            "target:\n"
            "  server:\n"
            "    command: \"vllm serve MODEL --port {port} {server_args}\"\n"
            "runs: [{name: a, rate: 1}]\n",
            &c);
    CHECK_INT(c.target, TARGET_SERVER);
    CHECK_STR(c.server_command, "vllm serve MODEL --port {port} {server_args}");
    CHECK_STR(c.health_path, "/health");
    CHECK_NEAR(c.ready_timeout_s, 600, 0);
    CHECK_NEAR(c.stop_grace_s, 10, 0);
    CHECK_INT(c.restart_always, 0);
    CHECK(c.url == NULL && c.sim_profile == NULL);
    campaign_free(&c);

    load_ok("name: m\n"
            "target:\n"
            "  server:\n"
            "    command: llama-server --port {port}\n"
            "    health: /v1/models\n"
            "    ready_timeout_s: 90.5\n"
            "    stop_grace_s: 0\n"
            "    restart: always\n"
            "runs: [{name: a, rate: 1}]\n",
            &c);
    CHECK_STR(c.server_command, "llama-server --port {port}");
    CHECK_STR(c.health_path, "/v1/models");
    CHECK_NEAR(c.ready_timeout_s, 90.5, 0);
    CHECK_NEAR(c.stop_grace_s, 0, 0);
    CHECK_INT(c.restart_always, 1);
    campaign_free(&c);
}

TEST(campaign_workload_and_slo_override_key_by_key) {
    campaign c;
    load_ok(HEAD "workload:\n"
                 "  prompts: builtin\n"
                 "  mix: {short: 0.5, medium: 0.5}\n"
                 "  max_tokens: 128\n"
                 "slo: {ttft_ms: 750, tpot_ms: 100}\n"
                 "runs:\n"
                 "  - name: tokens\n"
                 "    workload: {max_tokens: 512, ignore_eos: true}\n"
                 "    slo: {e2e_ms: 30000}\n"
                 "  - name: mix\n"
                 "    workload: {mix: {long: 1}, prompts: random:512:128}\n"
                 "    slo: {tpot_ms: 50.5}\n"
                 "  - name: plain\n",
            &c);
    CHECK_INT(c.n_runs, 3);
    const run_opts *a = &c.runs[0].p, *b = &c.runs[1].p, *d = &c.runs[2].p;
    CHECK_STR(a->prompts, "builtin");
    CHECK_STR(a->mix, "short=0.5,medium=0.5");
    CHECK_INT(a->max_tokens, 512);
    CHECK_INT(a->ignore_eos, 1);
    CHECK_STR(a->slo, "ttft=750ms,tpot=100ms,e2e=30000ms");
    CHECK_STR(b->prompts, "random:512:128");
    CHECK_STR(b->mix, "long=1");
    CHECK_INT(b->max_tokens, 128);
    CHECK_INT(b->ignore_eos, 0);
    CHECK_STR(b->slo, "ttft=750ms,tpot=50.5ms");
    CHECK_STR(d->mix, "short=0.5,medium=0.5");
    CHECK_INT(d->max_tokens, 128);
    CHECK_STR(d->slo, "ttft=750ms,tpot=100ms");
    /* slo keys render in the order ttft, tpot, e2e whatever the file's order */
    campaign_free(&c);
    load_ok(HEAD "slo: {e2e_ms: 2000, ttft_ms: 1e3}\nruns: [{name: a}]\n", &c);
    CHECK_STR(c.runs[0].p.slo, "ttft=1000ms,e2e=2000ms");
    campaign_free(&c);
}

TEST(campaign_requests_vs_duration) {
    campaign c;
    /* Top level requests; one run switches to duration, one overrides requests. */
    load_ok(HEAD "requests: 50\n"
                 "rate: 4\n"
                 "runs:\n"
                 "  - {name: by-time, duration: 2m}\n"
                 "  - {name: more, requests: 500}\n"
                 "  - {name: same}\n",
            &c);
    CHECK_INT(c.runs[0].p.requests, 0);
    CHECK_NEAR(c.runs[0].p.duration_s, 120, 0);
    CHECK_INT(c.runs[1].p.requests, 500);
    CHECK_NEAR(c.runs[1].p.duration_s, 0, 0);
    CHECK_INT(c.runs[2].p.requests, 50);
    campaign_free(&c);

    /* Top level duration (a bare number is seconds); a run going back to requests. */
    load_ok(HEAD "duration: 30\n"
                 "rate: 2\n"
                 "runs:\n"
                 "  - {name: timed}\n"
                 "  - {name: counted, requests: 10, rate: inf}\n"
                 "  - {name: short, duration: 500ms}\n",
            &c);
    CHECK_INT(c.defaults.p.requests, 0);
    CHECK_NEAR(c.defaults.p.duration_s, 30, 0);
    CHECK_INT(c.runs[0].p.requests, 0);
    CHECK_NEAR(c.runs[0].p.duration_s, 30, 0);
    CHECK_INT(c.runs[1].p.requests, 10);
    CHECK_NEAR(c.runs[1].p.duration_s, 0, 0);
    CHECK(isinf(c.runs[1].p.rate));
    CHECK_NEAR(c.runs[2].p.duration_s, 0.5, 1e-12);
    campaign_free(&c);

    /* Neither anywhere: 100 requests. */
    load_ok(HEAD "runs: [{name: a, rate: 3}]\n", &c);
    CHECK_INT(c.runs[0].p.requests, 100);
    CHECK_NEAR(c.runs[0].p.duration_s, 0, 0);
    campaign_free(&c);
}

TEST(campaign_scalar_types) {
    campaign c;
    /* A quoted string stays a string; durations take a number or a unit. */
    load_ok(HEAD "api: chat\n"
                 "model: \"7\"\n"
                 "requests: 120\n"
                 "rate: 2.5\n"
                 "arrival: gamma\n"
                 "burstiness: 0.5\n"
                 "concurrency: 16\n"
                 "warmup: 0\n"
                 "seed: 12345678901\n"
                 "timeout: 1.5m\n"
                 "metrics_interval: 250ms\n"
                 "cost_per_hour: 0\n"
                 "server_args: \"\"\n"
                 "runs:\n"
                 "  - name: A.b_c-9\n"
                 "    rate: inf\n"
                 "    timeout: 20\n",
            &c);
    const run_opts *p = &c.runs[0].p;
    CHECK_STR(p->api, "chat");
    CHECK_STR(p->model, "7");
    CHECK_INT(p->requests, 120);
    CHECK(isinf(p->rate));
    CHECK_NEAR(c.defaults.p.rate, 2.5, 0);
    CHECK_STR(p->arrival, "gamma");
    CHECK_NEAR(p->burstiness, 0.5, 0);
    CHECK_INT(p->concurrency, 16);
    CHECK_INT(p->warmup, 0);
    CHECK(p->seed == 12345678901ULL);
    CHECK_NEAR(p->timeout_s, 20, 0);
    CHECK_NEAR(c.defaults.p.timeout_s, 90, 1e-9);
    CHECK_NEAR(run_metrics_interval_s(p, 0), 0.25, 1e-12);
    CHECK_STR(c.runs[0].server_args, "");
    CHECK_STR(c.runs[0].name, "A.b_c-9");
    campaign_free(&c);
}

/* ---- bad files: one kind of mistake each ---- */

TEST(campaign_err_unknown_top_key) {
    expect_file_error(DATA "bad-unknown-key.yaml",
                      DATA "bad-unknown-key.yaml:5: reqests: unknown key (known: name, target, "
                           "api, model, workload, requests, duration,");
}

TEST(campaign_err_unknown_run_key) {
    expect_file_error(DATA "bad-run-key.yaml",
                      DATA "bad-run-key.yaml:7: runs[0].rat: unknown key (known: name, api, ");
}

TEST(campaign_err_requests_not_an_integer) {
    expect_error(HEAD "requests: lots\nruns: [{name: a}]\n",
                 "t.yaml:3: requests: expected an integer >= 1, got 'lots'");
    expect_error(HEAD "runs:\n  - {name: a, requests: 1.5}\n",
                 "t.yaml:4: runs[0].requests: expected an integer >= 1, got '1.5'");
    expect_error(HEAD "requests: 0\nruns: [{name: a}]\n",
                 "t.yaml:3: requests: expected an integer >= 1, got '0'");
    expect_error(HEAD "warmup: -1\nruns: [{name: a}]\n",
                 "t.yaml:3: warmup: expected an integer >= 0, got '-1'");
    expect_error(HEAD "concurrency: 99999999999\nruns: [{name: a}]\n",
                 "t.yaml:3: concurrency: 99999999999 is too large");
}

TEST(campaign_err_rate_not_positive) {
    expect_error(HEAD "runs:\n  - {name: a, rate: 1}\n  - {name: b, rate: 0}\n",
                 "t.yaml:5: runs[1].rate: expected a positive number or inf, got '0'");
    expect_error(HEAD "rate: -2\nruns: [{name: a}]\n",
                 "t.yaml:3: rate: expected a positive number or inf, got '-2'");
    expect_error(HEAD "runs:\n  - name: a\n    rate: fast\n",
                 "t.yaml:5: runs[0].rate: expected a positive number or inf, got 'fast'");
    expect_error(HEAD "rate: infinity\nruns: [{name: a}]\n",
                 "t.yaml:3: rate: expected a positive number or inf, got 'infinity'");
}

TEST(campaign_err_missing_runs) {
    expect_error(HEAD, "t.yaml:1: missing required key 'runs'");
    expect_error(HEAD "runs: []\n", "t.yaml:3: runs: expected at least one run");
    expect_error(HEAD "runs:\n", "t.yaml:3: runs: expected a list of runs, got no value");
    expect_error(HEAD "runs: {name: a}\n", "t.yaml:3: runs: expected a list of runs, got a map");
    expect_error(HEAD "runs: [a, b]\n", "t.yaml:3: runs[0]: expected a map, got 'a'");
}

TEST(campaign_err_missing_name_or_target) {
    expect_error("# comment\n\ntarget: {url: http://x}\nruns: [{name: a}]\n",
                 "t.yaml:3: missing required key 'name'");
    expect_error("name: t\nruns: [{name: a}]\n", "t.yaml:1: missing required key 'target'");
    expect_error("name: t\ntarget: {}\nruns: [{name: a}]\n",
                 "t.yaml:2: target: missing required key: one of url, sim, server");
}

TEST(campaign_err_run_without_name) {
    expect_error(HEAD "runs:\n  - name: a\n  - rate: 2\n    requests: 5\n",
                 "t.yaml:5: runs[1]: missing required key 'name'");
}

TEST(campaign_err_duplicate_run_names) {
    expect_error(HEAD "runs:\n  - {name: a}\n  - {name: b}\n  - {name: a, rate: 2}\n",
                 "t.yaml:6: runs[2].name: duplicate run name 'a' (first at line 4)");
}

TEST(campaign_err_bad_run_name) {
    expect_error(HEAD "runs:\n  - {name: \"my run\"}\n",
                 "t.yaml:4: runs[0].name: expected letters, digits, '.', '_' or '-'");
    expect_error(HEAD "runs:\n  - {name: ..}\n",
                 "t.yaml:4: runs[0].name: expected letters, digits, '.', '_' or '-'");
    expect_error(HEAD "runs:\n  - {name: a/b}\n",
                 "t.yaml:4: runs[0].name: expected letters, digits, '.', '_' or '-'");
}

TEST(campaign_err_two_target_kinds) {
    expect_file_error(DATA "bad-two-targets.yaml",
                      DATA "bad-two-targets.yaml:4: target: give one of url, sim, server, vllm, "
                           "or server or vllm with sim (got url and sim)");
}

/* A server with a sim beside it: the server is the target, the sim its
 * stand-in; campaign_use_sim swaps them, each run taking its sim_args, and
 * with a speedup scales rates, SLOs and timeouts. */
TEST(campaign_server_with_a_sim_stand_in) {
    campaign c;
    load_ok("name: t\ntarget:\n  server: {command: 'srv --port {port} {server_args}'}\n"
            "  sim: {profile: cpu-1b-2c, max_num_seqs: 1}\n"
            "rate: 0.5\ntimeout: 60s\nslo: {ttft_ms: 20000, tpot_ms: 2500}\n"
            "server_args: '-m a.gguf'\n"
            "runs: [{name: a}, {name: b, server_args: '-m b.gguf', sim_args: '--kv-blocks 64'},"
            " {name: c, rate: inf}]\n",
            &c);
    CHECK_INT(c.target, TARGET_SERVER);
    CHECK_INT(c.has_sim, 1);
    CHECK_STR(c.runs[1].server_args, "-m b.gguf");
    char err[256] = "";
    CHECK_MSG(campaign_use_sim(&c, 20, err, sizeof err) == 0, "%s", err);
    CHECK_INT(c.target, TARGET_SIM);
    CHECK_STR(c.sim_args, "--max-num-seqs 1 --speedup 20");
    CHECK_STR(c.runs[0].server_args, "");
    CHECK_STR(c.runs[1].server_args, "--kv-blocks 64");
    CHECK(fabs(c.runs[0].p.rate - 10) < 1e-9 && isinf(c.runs[2].p.rate));
    CHECK(fabs(c.runs[1].p.timeout_s - 3) < 1e-9);
    CHECK_STR(c.runs[0].p.slo, "ttft=1000ms,tpot=125ms");
    campaign_free(&c);

    load_ok("name: t\ntarget: {server: {command: 'srv --port {port}'}}\nruns: [{name: a}]\n", &c);
    CHECK_MSG(campaign_use_sim(&c, 1, err, sizeof err) != 0 && strstr(err, "has no sim: key"), "%s",
              err);
    campaign_free(&c);
    expect_error("name: t\ntarget: {url: 'http://127.0.0.1:1', sim: {}}\nruns: [{name: a}]\n",
                 "t.yaml:2: target: give one of url, sim, server, vllm, or server or vllm with sim "
                 "(got url and "
                 "sim)");
}

TEST(campaign_err_server_command_without_port) {
    expect_file_error(DATA "bad-server-port.yaml",
                      DATA "bad-server-port.yaml:4: target.server.command: must contain {port}");
    expect_error("name: t\ntarget:\n  server:\n    health: /health\nruns: [{name: a}]\n",
                 "t.yaml:4: target.server: missing required key 'command'");
    expect_error("name: t\ntarget:\n  server: {command: \"x {port}\", health: health}\n"
                 "runs: [{name: a}]\n",
                 "t.yaml:3: target.server.health: expected a path starting with '/'");
    expect_error("name: t\ntarget:\n  server: {command: \"x {port}\", restart: never}\n"
                 "runs: [{name: a}]\n",
                 "t.yaml:3: target.server.restart: expected one of on_change, always, got 'never'");
    expect_error(
        "name: t\ntarget:\n  server: {command: \"x {port}\", port: 80}\nruns: [{name: a}]\n",
        "t.yaml:3: target.server.port: unknown key (known: command, health, "
        "ready_timeout_s, stop_grace_s, restart, env)");
}

TEST(campaign_err_bad_url_and_sim_keys) {
    expect_error("name: t\ntarget: {url: 127.0.0.1:8000}\nruns: [{name: a}]\n",
                 "t.yaml:2: target.url: expected a URL starting with http:// or https://");
    expect_error("name: t\ntarget:\n  sim: {profile: tiny, Kv-Blocks: 9}\nruns: [{name: a}]\n",
                 "t.yaml:3: target.sim.Kv-Blocks: sim keys are lowercase letters, digits and '_'");
    expect_error("name: t\ntarget:\n  sim: {kv_blocks: [1, 2]}\nruns: [{name: a}]\n",
                 "t.yaml:3: target.sim.kv_blocks: expected a single value, got a list");
    expect_error("name: t\ntarget:\n  sim: {fault: \"http429=0.5 stall=1\"}\nruns: [{name: a}]\n",
                 "t.yaml:3: target.sim.fault: expected a single word");
    expect_error("name: t\ntarget: {sim: gpu-7b}\nruns: [{name: a}]\n",
                 "t.yaml:2: target.sim: expected a map, got 'gpu-7b'");
}

TEST(campaign_err_mix_negative_weight) {
    expect_file_error(DATA "bad-mix.yaml",
                      DATA "bad-mix.yaml:11: runs[0].workload.mix.short: expected a number >= 0, "
                           "got '-0.5'");
    expect_error(HEAD "workload: {mix: {short: 0, long: 0}}\nruns: [{name: a}]\n",
                 "t.yaml:3: workload.mix: expected at least one class with a weight > 0");
    expect_error(HEAD "workload: {mix: {}}\nruns: [{name: a}]\n",
                 "t.yaml:3: workload.mix: expected at least one class with a weight > 0");
    expect_error(HEAD "workload: {mix: {\"a=b\": 1}}\nruns: [{name: a}]\n",
                 "t.yaml:3: workload.mix.a=b: class names are letters, digits");
}

TEST(campaign_err_requests_and_duration_together) {
    expect_error(HEAD "runs:\n  - {name: a, rate: 2, requests: 10, duration: 30s}\n",
                 "t.yaml:4: runs[0].duration: cannot be combined with requests (line 4)");
    expect_error(HEAD "duration: 1m\nrate: 1\nrequests: 5\nruns: [{name: a}]\n",
                 "t.yaml:5: requests: cannot be combined with duration (line 3)");
}

TEST(campaign_err_duration_with_rate_inf) {
    /* rate defaults to inf, so a duration without a rate cannot work */
    expect_error(HEAD "runs:\n  - {name: a, duration: 60}\n",
                 "t.yaml:4: runs[0]: duration (60s) needs a finite rate, but rate is inf");
    /* inherited duration, run sets rate inf */
    expect_error(HEAD "duration: 10\nrate: 5\nruns:\n  - {name: ok}\n  - {name: b, rate: inf}\n",
                 "t.yaml:7: runs[1]: duration (10s) needs a finite rate");
    expect_error(HEAD "duration: 0\nrate: 1\nruns: [{name: a}]\n",
                 "t.yaml:3: duration: expected seconds > 0 (a number, or like 90s, 2m), got '0'");
    expect_error(HEAD "timeout: 10 minutes\nruns: [{name: a}]\n",
                 "t.yaml:3: timeout: expected seconds > 0");
}

TEST(campaign_err_yaml_syntax) {
    expect_file_error(DATA "bad-syntax.yaml",
                      DATA "bad-syntax.yaml:6: YAML syntax error: did not find expected ',' or "
                           "'}' (while parsing a flow mapping at line 5)");
    expect_error("name: a: b\n", "t.yaml:1: YAML syntax error: mapping values are not allowed");
    expect_error("name: t\n\ttarget: x\n", "t.yaml:2: YAML syntax error: ");
    /* A control character is a reader error, which libyaml reports by offset. */
    expect_error("name: t\nmodel: a\x01\n", "t.yaml:2: YAML syntax error: control characters");
}

TEST(campaign_err_bad_arrival) {
    expect_error(HEAD "arrival: uniform\nruns: [{name: a}]\n",
                 "t.yaml:3: arrival: expected one of poisson, gamma, constant, got 'uniform'");
    expect_error(HEAD "runs: [{name: a, api: responses}]\n",
                 "t.yaml:3: runs[0].api: expected one of completions, chat, got 'responses'");
}

TEST(campaign_err_boolean_yes) {
    expect_error(HEAD "workload:\n  ignore_eos: yes\nruns: [{name: a}]\n",
                 "t.yaml:4: workload.ignore_eos: expected true or false, got 'yes'");
    expect_error(HEAD "runs: [{name: a, workload: {ignore_eos: 1}}]\n",
                 "t.yaml:3: runs[0].workload.ignore_eos: expected true or false, got '1'");
}

TEST(campaign_err_wrong_node_kind) {
    expect_error(HEAD "model:\n  name: x\nruns: [{name: a}]\n",
                 "t.yaml:3: model: expected a string, got a map");
    expect_error(HEAD "workload: [builtin]\nruns: [{name: a}]\n",
                 "t.yaml:3: workload: expected a map, got a list");
    expect_error(
        HEAD "slo: 750\nruns: [{name: a}]\n",
        "t.yaml:3: slo: '750' is not NAME=DURATION with a unit (e.g. ttft=750ms, e2e=30s)");
    expect_error(
        HEAD "slo: [ttft=1s]\nruns: [{name: a}]\n",
        "t.yaml:3: slo: expected a text like \"ttft=750ms,tpot=100ms\" or a map, got a list");
    expect_error(HEAD "model:\nruns: [{name: a}]\n",
                 "t.yaml:3: model: expected a string, got no value");
    expect_error("- name: t\n", "t.yaml:1: expected a map with name, target and runs, got a list");
    expect_error(HEAD "slo: {ttft_ms: 0}\nruns: [{name: a}]\n",
                 "t.yaml:3: slo.ttft_ms: expected a number > 0, got '0'");
    expect_error(HEAD "slo: {p99_ms: 3}\nruns: [{name: a}]\n",
                 "t.yaml:3: slo.p99_ms: unknown key (known: ttft_ms, tpot_ms, e2e_ms, ttfa_ms, "
                 "ttft, tpot, e2e, ttfa)");
}

TEST(campaign_err_duplicate_key) {
    expect_error(HEAD "runs:\n  - name: a\n    rate: 1\n    rate: 2\n",
                 "t.yaml:6: runs[0].rate: duplicate key (first at line 5)");
    expect_error(HEAD "name: again\nruns: [{name: a}]\n",
                 "t.yaml:3: name: duplicate key (first at line 1)");
}

TEST(campaign_err_alias_and_documents) {
    expect_error(HEAD "workload: &w {max_tokens: 5}\nruns:\n  - {name: a, workload: *w}\n",
                 "t.yaml:5: aliases (*w) are not supported");
    expect_error(HEAD "runs: [{name: a}]\n---\nname: b\n", "t.yaml:4: a second YAML document");
}

TEST(campaign_err_empty_document) {
    expect_error("", "t.yaml:1: empty document");
    expect_error("# nothing here\n", "t.yaml:1: empty document");
    expect_error("---\n", "t.yaml:1: empty document");
    expect_error("--- ~\n", "t.yaml:1: empty document");
}

TEST(campaign_err_cannot_read) {
    expect_file_error(DATA "no-such-file.yaml",
                      DATA "no-such-file.yaml: cannot read: No such file or directory");
    expect_file_error(DATA, DATA ": cannot read: Is a directory");
}

/* Values quoted in a message cannot break it over lines, and a short buffer
 * truncates rather than overflows. */
TEST(campaign_err_message_one_line_and_truncated) {
    expect_error(HEAD "rate: \"fast\\nslow\"\nruns: [{name: a}]\n",
                 "t.yaml:3: rate: expected a positive number or inf, got 'fast slow'");
    campaign c;
    char err[16];
    memset(err, 'x', sizeof err);
    CHECK(campaign_load_string(HEAD "rate: x\nruns: [{name: a}]\n", "t.yaml", &c, err, sizeof err));
    CHECK_STR(err, "t.yaml:3: rate:");
    CHECK(campaign_load_string(HEAD "rate: x\n", "t.yaml", &c, NULL, 0));
}

/* The SLO in --slo's own text (all four bounds, ttfa too), a run's text
 * replacing every bound, and the map with ttfa_ms and duration values. */
TEST(campaign_slo_text_form_and_map_form) {
    campaign c;
    load_ok(HEAD "slo: \"ttfa=2s,ttft=1s\"\n"
                 "runs:\n"
                 "  - {name: inherits}\n"
                 "  - {name: replaces, slo: \"e2e=30s\"}\n"
                 "  - {name: adds, slo: {tpot: 50ms, ttfa_ms: 1500}}\n",
            &c);
    CHECK_STR(c.runs[0].p.slo, "ttft=1000ms,ttfa=2000ms");
    CHECK_NEAR(c.runs[0].slo.ttfa_ms, 2000, 0);
    CHECK_STR(c.runs[1].p.slo, "e2e=30000ms");
    CHECK_STR(c.runs[2].p.slo, "ttft=1000ms,tpot=50ms,ttfa=1500ms");
    campaign_free(&c);
    load_ok(HEAD "slo: {ttft: 750ms, e2e_ms: 30000, ttfa: 2s}\nruns: [{name: a}]\n", &c);
    CHECK_STR(c.runs[0].p.slo, "ttft=750ms,e2e=30000ms,ttfa=2000ms");
    campaign_free(&c);
}

TEST(campaign_slo_refuses_what_the_command_line_refuses) {
    expect_error(HEAD "slo: \"ttft=750\"\nruns: [{name: a}]\n",
                 "t.yaml:3: slo: 'ttft=750' is not NAME=DURATION with a unit");
    expect_error(HEAD "slo: \"p99=1s\"\nruns: [{name: a}]\n",
                 "t.yaml:3: slo: unknown bound 'p99' (ttft, tpot, e2e, ttfa)");
    expect_error(HEAD "slo: \"ttft=1s,ttft=2s\"\nruns: [{name: a}]\n",
                 "t.yaml:3: slo: ttft is given twice");
    expect_error(
        HEAD "slo: {ttft: 750}\nruns: [{name: a}]\n",
        "t.yaml:3: slo.ttft: expected a duration with its unit (e.g. 750ms, 30s), got '750'");
    expect_error(HEAD "slo: {ttft: 1s, ttft_ms: 750}\nruns: [{name: a}]\n",
                 "t.yaml:3: slo.ttft_ms: the ttft bound is given twice");
}

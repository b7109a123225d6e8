/* drain: a capacity probe against a server the search did not start waits
 * for it to be idle. Against the simulator kept busy by another client's
 * requests, the wait lasts until its /metrics show nothing running or
 * waiting (checked there once it returns), stops at its bound while the
 * server is still busy, returns at once on an idle server; on a server
 * without /metrics a lone request is timed instead, until it is back at
 * the idle server's time. */
#include "capacity/drain.h"
#include "common/proc.h"
#include "support.h"
#include "test.h"

#include <curl/curl.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

TEST_SLOW(capacity_probe_waits_for_an_idle_server) {
    /* cpu-1b decodes a token in about 30 ms: 60 tokens, one request at a time */
    sim_proc sim = sim_start("--profile cpu-1b --max-num-seqs 1");
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/metrics", sim.port);
    pid_t other = sim_backlog(&sim, 3);
    CHECK_MSG(sim_metric(sim.port, "vllm:num_requests_running") >= 1, "the backlog did not start");
    drain_result r;
    drain_wait(url, NULL, 0, 0.3, &r); /* too short for three answers of 60 tokens */
    CHECK_MSG(r.state == DRAIN_BUSY, "state %s after %.2f s", drain_state_name(r.state),
              r.waited_s);
    CHECK(r.waited_s >= 0.3 && r.running + r.waiting >= 1);
    drain_wait(url, NULL, 0, 60, &r);
    CHECK_MSG(r.state == DRAIN_IDLE, "state %s", drain_state_name(r.state));
    CHECK_MSG(r.waited_s > 0.5, "waited only %.2f s for 3 x 60 tokens", r.waited_s);
    CHECK(sim_metric(sim.port, "vllm:num_requests_running") == 0);
    CHECK(sim_metric(sim.port, "vllm:num_requests_waiting") == 0);
    int st;
    waitpid(other, &st, 0);
    drain_wait(url, NULL, 0, 60, &r); /* idle already */
    CHECK(r.state == DRAIN_IDLE && r.waited_s < 0.5);
    sim_stop(&sim);
    /* nothing listening: no gauges, no wait */
    drain_wait(url, NULL, 0, 60, &r);
    CHECK_MSG(r.state == DRAIN_NO_GAUGES && r.waited_s < 5, "state %s after %.2f s",
              drain_state_name(r.state), r.waited_s);
}

/* The first /metrics page of a probe's run (read just before its t=0):
 * the server's running plus waiting then, or -1 when the page has none. */
static double busy_at_start(const char *probe_dir) {
    char p[1400];
    snprintf(p, sizeof p, "%s/server_metrics.csv", probe_dir);
    char *csv = read_file(p, NULL);
    if (!csv)
        return -1;
    double busy = -1;
    for (char *line = strchr(csv, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
        double t, v;
        char name[128];
        if (sscanf(line + 1, "%lf,%127[^,],%*[^,],%lf", &t, name, &v) != 3 &&
            sscanf(line + 1, "%lf,%127[^,],,%lf", &t, name, &v) != 3)
            continue;
        if (t > 0)
            break;
        if (!strcmp(name, "vllm:num_requests_running") ||
            !strcmp(name, "vllm:num_requests_waiting"))
            busy = (busy < 0 ? 0 : busy) + v;
    }
    free(csv);
    return busy;
}

/* A server that goes on with requests its client gave up on (the
 * simulator with --keep-abandoned): a lost probe, stopped early, leaves it
 * a backlog; the next probe waits for it to finish and every probe starts
 * with nothing running or waiting. */
TEST_SLOW(capacity_probes_start_on_an_idle_server_that_keeps_abandoned_work) {
    sim_proc sim = sim_start("--profile cpu-1b --max-num-seqs 2 --keep-abandoned");
    char *dir = temp_dir(), cmd[2048], *out;
    snprintf(cmd, sizeof cmd,
             "capacity --url http://127.0.0.1:%d --prompts random:16:20 --ignore-eos "
             "--slo ttft=400ms --goal 0.9 --requests 30 --start-rate 2 --precision 0.25 "
             "--confirm off --max-time 90s --quiet --out %s/c",
             sim.port, dir);
    int code = servelab_cmd(cmd, &out);
    CHECK_MSG(code == 0 || code == 1, "capacity exit %d: %s", code, out);
    char p[1200];
    snprintf(p, sizeof p, "%s/c/capacity.json", dir);
    json_error_t je;
    json_t *cap = json_load_file(p, 0, &je);
    CHECK_MSG(cap != NULL, "no capacity.json: %s", out);
    json_t *probes = json_object_get(cap, "probes"), *pr;
    size_t i;
    int stopped = 0, waited_after_stop = 0, prev_stopped = 0;
    json_array_foreach(probes, i, pr) {
        json_t *d = json_object_get(pr, "drain");
        const char *state = json_string_value(json_object_get(d, "state"));
        double waited = json_number_value(json_object_get(d, "waited_s"));
        CHECK_MSG(state && !strcmp(state, "idle"), "probe %zu: drain %s", i + 1,
                  state ? state : "(none)");
        if (prev_stopped && waited > 0.2)
            waited_after_stop++;
        prev_stopped = json_is_true(json_object_get(pr, "stopped_early"));
        stopped += prev_stopped;
        snprintf(p, sizeof p, "%s/c/%s", dir, json_string_value(json_object_get(pr, "dir")));
        double busy = busy_at_start(p);
        CHECK_MSG(busy == 0, "probe %zu began with %g requests running or waiting", i + 1, busy);
    }
    CHECK_MSG(stopped >= 1, "no probe was lost: nothing to drain (%s)", out);
    CHECK_MSG(waited_after_stop >= 1, "no probe after a lost one waited for the backlog");
    json_decref(cap);
    free(out);
    sim_stop(&sim);
}

/* A server with no /metrics (the simulator with --no-metrics), timed by a
 * lone request instead: kept busy by another client, the lone request is
 * slow until the backlog is done; and a search against it that keeps
 * abandoned work measures the baseline before its first probe and waits
 * after each lost one until a lone request is back at it. */
TEST_SLOW(capacity_probes_start_idle_on_a_server_without_metrics) {
    sim_proc sim = sim_start("--profile cpu-1b --max-num-seqs 2 --keep-abandoned --no-metrics");
    char url[128], metrics[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/v1/completions", sim.port);
    snprintf(metrics, sizeof metrics, "http://127.0.0.1:%d/metrics", sim.port);
    struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
    drain_lone_req q = {
        .url = url, .body = "{\"prompt\":\"Hello\",\"max_tokens\":1}", .headers = h};
    drain_result r;
    drain_wait(metrics, NULL, 0, 5, &r);
    CHECK_MSG(r.state == DRAIN_NO_GAUGES, "state %s", drain_state_name(r.state));
    drain_lone(&q, NAN, 5, &r);
    CHECK_MSG(r.state == DRAIN_LONE_BASE && r.baseline_ms > 0 && r.baseline_ms < 500,
              "state %s, baseline %.1f ms", drain_state_name(r.state), r.baseline_ms);
    double base = r.baseline_ms;
    char *dir = temp_dir(), cmd[2048];
    snprintf(cmd, sizeof cmd,
             "exec %s run --url http://127.0.0.1:%d --prompts random:16:60 --ignore-eos --rate inf "
             "--requests 8 --no-sampling --quiet --out %s/r",
             servelab_bin(), sim.port, dir);
    pid_t other = spawn_sh(cmd, PROC_DEVNULL, PROC_DEVNULL);
    sleep_ms(300);
    r = (drain_result){0};
    drain_lone(&q, base, 0.2, &r); /* two slots, 8 x 60 tokens ahead: slow */
    CHECK_MSG(r.state == DRAIN_BUSY && r.lone_ms > 1.5 * base + 20, "state %s, %.1f ms",
              drain_state_name(r.state), r.lone_ms);
    r = (drain_result){0};
    drain_lone(&q, base, 60, &r);
    CHECK_MSG(r.state == DRAIN_LONE_IDLE, "state %s", drain_state_name(r.state));
    int st;
    waitpid(other, &st, 0);
    curl_slist_free_all(h);
    /* the search */
    char *out;
    snprintf(cmd, sizeof cmd,
             "capacity --url http://127.0.0.1:%d --prompts random:16:20 --ignore-eos "
             "--slo ttft=400ms --goal 0.9 --requests 30 --start-rate 2 --precision 0.25 "
             "--confirm off --max-time 60s --quiet --out %s/c",
             sim.port, dir);
    int code = servelab_cmd(cmd, &out);
    CHECK_MSG(code == 0 || code == 1, "capacity exit %d: %s", code, out);
    char p[1200];
    snprintf(p, sizeof p, "%s/c/capacity.json", dir);
    json_t *cap = json_load_file(p, 0, NULL);
    CHECK_MSG(cap != NULL, "no capacity.json: %s", out);
    json_t *probes = json_object_get(cap, "probes"), *pr;
    size_t i;
    int stopped = 0, waited_after_stop = 0, prev_stopped = 0;
    json_array_foreach(probes, i, pr) {
        json_t *d = json_object_get(pr, "drain");
        const char *state = json_string_value(json_object_get(d, "state"));
        const char *want = i == 0 ? "baseline" : "idle (lone request)";
        CHECK_MSG(state && !strcmp(state, want), "probe %zu: drain %s", i + 1,
                  state ? state : "(none)");
        double lone = json_number_value(json_object_get(d, "lone_ms")),
               b = json_number_value(json_object_get(d, "baseline_ms"));
        CHECK_MSG(lone <= 1.5 * b + 20, "probe %zu began after a lone request of %.1f ms (%.1f)",
                  i + 1, lone, b);
        if (prev_stopped && json_number_value(json_object_get(d, "waited_s")) > 0.2)
            waited_after_stop++;
        prev_stopped = json_is_true(json_object_get(pr, "stopped_early"));
        stopped += prev_stopped;
    }
    CHECK_MSG(stopped >= 1, "no probe was lost: nothing to drain (%s)", out);
    CHECK_MSG(waited_after_stop >= 1, "no probe after a lost one waited for the backlog");
    json_decref(cap);
    free(out);
    sim_stop(&sim);
}

/* sweep, demo and env end to end: the campaign layout and dry run, a
 * managed server restarted exactly when server_args change, a server killed
 * mid-run, /metrics agreeing with the simulator's trace, the queueing share
 * rising with load, GPU sampling through a fake NVML, and the demo. */
#include "csv_util.h"
#include "support.h"
#include "test.h"

#include <string.h>
#include <sys/stat.h>
#include <time.h>

static char *write_campaign(const char *dir, const char *text) {
    char *p = malloc(1024);
    snprintf(p, 1024, "%s/c.yaml", dir);
    FILE *f = fopen(p, "w");
    CHECK(f != NULL);
    fputs(text, f);
    fclose(f);
    return p;
}

static int sweep(const char *args, char **out) {
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "sweep --quiet %s", args);
    return servelab_cmd(cmd, out);
}

static int exists(const char *dir, const char *rel) {
    char p[2048];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", dir, rel);
    return stat(p, &st) == 0;
}

TEST(sweep_3x2_against_sim_layout_report_and_dry_run) {
    char *dir = temp_dir();
    char *cfg = write_campaign(dir, "name: t\n"
                                    "target: {sim: {profile: tiny}}\n"
                                    "workload: {prompts: \"random:16:8\"}\n"
                                    "requests: 20\nrate: 100\nrepetitions: 2\n"
                                    "metrics_interval: 0.05\n"
                                    "runs:\n  - {name: a, rate: 50}\n  - {name: b}\n"
                                    "  - {name: c, rate: 200}\n");
    char args[2048], *out;
    snprintf(args, sizeof args, "%s --out %s/o --dry-run", cfg, dir);
    CHECK_INT(sweep(args, &out), 0);
    CHECK_MSG(strstr(out, "6 planned runs") != NULL, "%s", out);
    CHECK_INT(count_of(out, " rep-"), 6);
    char o[1200];
    snprintf(o, sizeof o, "%s/o", dir);
    CHECK(!exists(o, "campaign.json")); /* a dry run runs nothing */
    snprintf(args, sizeof args, "%s --out %s/o", cfg, dir);
    int code = sweep(args, &out);
    CHECK_MSG(code == 0, "sweep exit %d: %s", code, out);
    const char *runs[] = {"a", "b", "c"};
    const char *files[] = {"requests.csv", "chunks.csv",         "meta.json",
                           "summary.json", "server_metrics.csv", "trace.csv"};
    for (int r = 0; r < 3; r++)
        for (int k = 1; k <= 2; k++)
            for (int f = 0; f < 6; f++) {
                char rel[256];
                snprintf(rel, sizeof rel, "%s/rep-%d/%s", runs[r], k, files[f]);
                CHECK_MSG(exists(o, rel), "missing %s", rel);
            }
    CHECK(exists(o, "campaign.json") && exists(o, "report/report.html") &&
          exists(o, "report/summary.csv"));
    char p[2048];
    snprintf(p, sizeof p, "%s/campaign.json", o);
    char *cj = read_file(p, NULL);
    CHECK_INT(count_of(cj, "\"status\": \"ok\""), 6);
    snprintf(p, sizeof p, "%s/report/summary.csv", o);
    csv_table *t = csv_read(p);
    CHECK_INT(t->n_rows, 3);
    CHECK_STR(csv_get(t, 0, "repetitions"), "2");
    CHECK_STR(csv_get(t, 0, "requests"), "40");
}

/* The client's threads and HTTP client reach each run (meta.json), and a
 * sim target's boolean flag becomes a bare flag (two I/O threads here). */
TEST(sweep_client_threads_and_http_client_reach_the_runs) {
    char *dir = temp_dir();
    char *cfg = write_campaign(dir, "name: t\n"
                                    "target: {sim: {profile: tiny, threads: 2, realtime: false}}\n"
                                    "workload: {prompts: \"random:8:4\"}\n"
                                    "requests: 20\nrate: 200\nthreads: 2\n"
                                    "runs:\n  - {name: a}\n  - {name: b, threads: 1, "
                                    "http_client: libcurl}\n");
    char args[2048], *out;
    snprintf(args, sizeof args, "%s --out %s/o", cfg, dir);
    int code = sweep(args, &out);
    CHECK_MSG(code == 0, "sweep exit %d: %s", code, out);
    char p[2048];
    snprintf(p, sizeof p, "%s/o/a/rep-1/meta.json", dir);
    char *a = read_file(p, NULL);
    snprintf(p, sizeof p, "%s/o/b/rep-1/meta.json", dir);
    char *b = read_file(p, NULL);
    CHECK(a && b);
    CHECK_MSG(strstr(a, "\"threads\": 2") && strstr(a, "\"http_client\": \"builtin\""), "%s", a);
    CHECK_MSG(strstr(b, "\"threads\": 1") && strstr(b, "\"http_client\": \"libcurl\""), "%s", b);
    snprintf(p, sizeof p, "%s/o/a/rep-1/requests.csv", dir);
    csv_table *t = csv_read(p);
    CHECK_INT(t->n_rows, 20);
    for (int i = 0; i < t->n_rows; i++)
        CHECK_STR(csv_get(t, i, "error"), "");
}

/* servelab sim as the managed server: restarted for c (args change) and e
 * (back to none), reused for b and d. */
TEST(sweep_managed_server_restarts_exactly_when_args_change) {
    char *dir = temp_dir();
    char text[2048];
    snprintf(text, sizeof text,
             "name: m\n"
             "target:\n  server:\n    command: \"%s sim --port {port} {server_args}\"\n"
             "    stop_grace_s: 5\n"
             "workload: {prompts: \"random:8:4\"}\nrequests: 10\nrate: 100\n"
             "runs:\n  - {name: a}\n  - {name: b}\n"
             "  - {name: c, server_args: \"--max-num-seqs 8\"}\n"
             "  - {name: d, server_args: \"--max-num-seqs 8\"}\n  - {name: e}\n",
             servelab_bin());
    char *cfg = write_campaign(dir, text);
    char args[2048], *out;
    snprintf(args, sizeof args, "%s --out %s/o", cfg, dir);
    int code = sweep(args, &out);
    CHECK_MSG(code == 0, "exit %d: %s", code, out);
    char o[1200], p[2048];
    snprintf(o, sizeof o, "%s/o", dir);
    CHECK(exists(o, "servers/server-1.log") && exists(o, "servers/server-2.log") &&
          exists(o, "servers/server-3.log") && !exists(o, "servers/server-4.log"));
    snprintf(p, sizeof p, "%s/campaign.json", o);
    char *cj = read_file(p, NULL);
    CHECK_INT(count_of(cj, "\"server_restarted\": true"), 3);
    CHECK_INT(count_of(cj, "\"server_restarted\": false"), 2);
    /* each run's server.log is its server's log: b's shows one start, as a's */
    const char *want[] = {"a", "b", "c", "d", "e"};
    int starts[] = {1, 1, 1, 1, 1};
    for (int i = 0; i < 5; i++) {
        snprintf(p, sizeof p, "%s/%s/rep-1/server.log", o, want[i]);
        char *log = read_file(p, NULL);
        CHECK_MSG(log != NULL, "no server.log for %s", want[i]);
        CHECK_INT(count_of(log, "starting server:"), starts[i]);
        if (i == 2 || i == 3)
            CHECK(strstr(log, "--max-num-seqs 8") != NULL);
    }
    snprintf(p, sizeof p, "%s/servers/server-1.log", o);
    char *first = read_file(p, NULL);
    CHECK(strstr(first, "restarting: server_args changed") != NULL);
    CHECK(strstr(first, "server stopped") != NULL);
}

TEST(sweep_server_killed_mid_run_leaves_error_rows_and_goes_on) {
    char *dir = temp_dir();
    char text[2048];
    /* the server shoots itself 1.2 s after it starts */
    snprintf(text, sizeof text,
             "name: k\n"
             "target:\n  server:\n"
             "    command: \"sh -c '( sleep 1.2; kill -9 $$ ) & exec %s sim --port {port} "
             "--decode-base-ms 5 {server_args}'\"\n"
             "    stop_grace_s: 2\n"
             "workload: {prompts: \"random:8:20\"}\nrequests: 60\nrate: 20\ntimeout: 5\n"
             "runs:\n  - {name: dies}\n  - {name: after, requests: 5, rate: 50}\n",
             servelab_bin());
    char *cfg = write_campaign(dir, text);
    char args[2048], *out;
    snprintf(args, sizeof args, "%s --out %s/o", cfg, dir);
    int code = sweep(args, &out);
    CHECK_MSG(code == 1, "exit %d (want 1: a run failed): %s", code, out);
    char p[2048];
    snprintf(p, sizeof p, "%s/o/campaign.json", dir);
    char *cj = read_file(p, NULL);
    CHECK(strstr(cj, "\"status\": \"server_died\"") != NULL);
    CHECK(strstr(cj, "\"finished_utc\"") != NULL);
    snprintf(p, sizeof p, "%s/o/dies/rep-1/requests.csv", dir);
    csv_table *t = csv_read(p);
    CHECK_INT(t->n_rows, 60);
    int errors = 0, ok = 0;
    for (int i = 0; i < t->n_rows; i++) {
        const char *e = csv_get(t, i, "error");
        errors += strcmp(e, "") != 0;
        ok += strcmp(e, "") == 0;
    }
    CHECK_MSG(errors >= 20 && ok >= 5, "ok %d, errors %d", ok, errors);
    snprintf(p, sizeof p, "%s/o/after/rep-1/requests.csv", dir);
    csv_table *t2 = csv_read(p);
    CHECK_INT(t2->n_rows, 5);
    for (int i = 0; i < 5; i++)
        CHECK_STR(csv_get(t2, i, "error"), "");
}

/* /metrics sampled during a saturated run agrees with the trace: the peak
 * of vllm:num_requests_running is the trace's peak in flight. */
TEST(sweep_server_metrics_agree_with_trace) {
    char *dir = temp_dir();
    char *cfg = write_campaign(dir, "name: s\n"
                                    "target: {sim: {profile: tiny, max_num_seqs: 6, "
                                    "decode_base_ms: 4}}\n"
                                    "workload: {prompts: \"random:8:40\", ignore_eos: true}\n"
                                    "requests: 120\nrate: 300\nmetrics_interval: 0.02\n"
                                    "runs:\n  - {name: r}\n");
    char args[2048], *out;
    snprintf(args, sizeof args, "%s --out %s/o", cfg, dir);
    CHECK_INT(sweep(args, &out), 0);
    char p[2048];
    snprintf(p, sizeof p, "%s/o/r/rep-1/server_metrics.csv", dir);
    /* labels are CSV-quoted and may hold commas: read the gauge's rows by
     * name, the value is the last field */
    char *text = read_file(p, NULL);
    CHECK(text != NULL);
    double peak_metrics = -1, last_t = -1;
    int samples = 0; /* pages: a row only when a value changed, but every page has one */
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        if (strstr(line, ",vllm:num_requests_running,")) {
            double v = atof(strrchr(line, ',') + 1);
            if (v > peak_metrics)
                peak_metrics = v;
        }
        if (line[0] != 't' && atof(line) != last_t) {
            last_t = atof(line);
            samples++;
        }
    }
    CHECK_MSG(samples >= 20, "only %d samples", samples);
    snprintf(p, sizeof p, "%s/o/r/rep-1/trace.csv", dir);
    csv_table *tr = csv_read(p);
    int peak_trace = 0;
    for (int i = 0; i < tr->n_rows; i++) {
        double t = atof(tr->rows[i][2]);
        int cur = 0;
        for (int j = 0; j < tr->n_rows; j++)
            if (atof(tr->rows[j][2]) <= t && atof(tr->rows[j][4]) > t)
                cur++;
        if (cur > peak_trace)
            peak_trace = cur;
    }
    CHECK_INT(peak_trace, 6);
    CHECK_INT(peak_metrics, peak_trace);
}

TEST_SLOW(sweep_report_shows_queueing_share_rising_with_load) {
    char *dir = temp_dir();
    char *cfg = write_campaign(dir, "name: q\n"
                                    "target: {sim: {profile: tiny, max_num_seqs: 4, "
                                    "decode_base_ms: 3}}\n"
                                    "workload: {prompts: \"random:8:10\", ignore_eos: true}\n"
                                    "requests: 80\nmetrics_interval: 0.1\n"
                                    "runs:\n  - {name: l1, rate: 20}\n  - {name: l2, rate: 80}\n"
                                    "  - {name: l3, rate: 200}\n");
    char args[2048], *out;
    snprintf(args, sizeof args, "%s --out %s/o", cfg, dir);
    CHECK_INT(sweep(args, &out), 0);
    char p[2048];
    snprintf(p, sizeof p, "%s/o/report/summary.csv", dir);
    csv_table *t = csv_read(p);
    CHECK_INT(t->n_rows, 3);
    double share[3];
    for (int i = 0; i < 3; i++)
        share[i] = atof(csv_get(t, i, "server_queue_share_of_ttft"));
    printf("    queueing share of TTFT: %.3f %.3f %.3f\n", share[0], share[1], share[2]);
    CHECK(share[0] < share[1] && share[1] < share[2]);
    CHECK(share[2] > 0.5);
    snprintf(p, sizeof p, "%s/o/report/report.html", dir);
    char *html = read_file(p, NULL);
    CHECK(strstr(html, "queueing_vs_load.svg") != NULL);
}

static char *build_fake_nvml(const char *dir) {
    char *lib = malloc(1200), cmd[4096];
    snprintf(lib, 1200, "%s/libnvidia-ml.so.1", dir);
    snprintf(cmd, sizeof cmd, "cc -shared -fPIC -O1 -o %s tests/fake_nvml/fake_nvml.c", lib);
    CHECK_INT(system(cmd), 0);
    return lib;
}

TEST(run_samples_gpus_through_fake_nvml) {
    char *dir = temp_dir();
    setenv("SERVELAB_NVML_LIB", build_fake_nvml(dir), 1);
    sim_proc sp = sim_start("--decode-base-ms 3");
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "%s run --quiet --url http://127.0.0.1:%d --rate 50 --requests 40 "
             "--prompts random:8:20 --metrics-interval 0.1 --out %s/r 2>&1",
             servelab_bin(), sp.port, dir);
    int code;
    char *out = run_capture(cmd, &code);
    CHECK_MSG(code == 0, "%s", out);
    sim_stop(&sp);
    char p[2048];
    snprintf(p, sizeof p, "%s/r/gpu.csv", dir);
    csv_table *g = csv_read(p);
    CHECK_MSG(g != NULL, "no gpu.csv");
    CHECK(g->n_rows >= 10);
    CHECK_STR(g->header[0], "t_ms");
    CHECK_STR(g->header[6], "temp_c");
    CHECK_STR(csv_get(g, 0, "gpu"), "0");
    CHECK_STR(csv_get(g, 0, "power_w"), "150.000");
    CHECK_STR(csv_get(g, 1, "power_w"), "151.000");
    CHECK_STR(csv_get(g, 1, "mem_used_mib"), "2048.0");
    CHECK_STR(csv_get(g, 0, "sm_clock_mhz"), "1800");
    CHECK_STR(csv_get(g, 2, "util_pct"), "10.0"); /* second sample of GPU 0 */
    snprintf(p, sizeof p, "%s/r/meta.json", dir);
    char *meta = read_file(p, NULL);
    CHECK(strstr(meta, "Fake GPU 0") && strstr(meta, "Fake GPU 1") && strstr(meta, "550.54.15") &&
          strstr(meta, "\"12.4\""));
    snprintf(p, sizeof p, "%s/r/summary.json", dir);
    char *sum = read_file(p, NULL);
    CHECK(strstr(sum, "\"gpu_energy_j_per_output_token\": null") == NULL);
    CHECK(strstr(out, "J per output token") != NULL);
}

TEST(run_without_gpu_succeeds_and_says_so) {
    char *dir = temp_dir();
    setenv("SERVELAB_NVML_LIB", "/nonexistent/libnvidia-ml.so.1", 1);
    sim_proc sp = sim_start(NULL);
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "%s run --url http://127.0.0.1:%d --requests 5 --out %s/r 2>&1 >/dev/null",
             servelab_bin(), sp.port, dir);
    int code;
    char *out = run_capture(cmd, &code);
    sim_stop(&sp);
    CHECK_INT(code, 0);
    CHECK_MSG(strstr(out, "no GPU sampled") != NULL, "%s", out);
    char p[2048];
    snprintf(p, sizeof p, "%s/r/meta.json", dir);
    char *meta = read_file(p, NULL);
    CHECK(strstr(meta, "\"gpus\": []") != NULL);
    CHECK(strstr(meta, "not found") != NULL);
    snprintf(p, sizeof p, "%s/r/gpu.csv", dir);
    CHECK(read_file(p, NULL) == NULL);
}

TEST(env_prints_metadata_json) {
    char *dir = temp_dir();
    setenv("SERVELAB_NVML_LIB", build_fake_nvml(dir), 1);
    sim_proc sp = sim_start(NULL);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s env --url http://127.0.0.1:%d", servelab_bin(), sp.port);
    int code;
    char *out = run_capture(cmd, &code);
    sim_stop(&sp);
    CHECK_INT(code, 0);
    CHECK(strstr(out, "\"Fake GPU 0\"") && strstr(out, "\"cores\"") &&
          strstr(out, "\"is_servelab_sim\": true") && strstr(out, "sim-model"));
}

TEST_SLOW(demo_finishes_in_two_minutes_and_shows_preemption) {
    char *dir = temp_dir();
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s demo --out %s/d 2>/dev/null", servelab_bin(), dir);
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    int code;
    char *out = run_capture(cmd, &code);
    clock_gettime(CLOCK_MONOTONIC, &b);
    double s = (double)(b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9;
    printf("    demo took %.1f s\n", s);
    CHECK_MSG(code == 0, "%s", out);
    CHECK(s < 120);
    CHECK(strstr(out, "report.html") != NULL);
    char p[1200];
    snprintf(p, sizeof p, "%s/d/report/summary.csv", dir);
    csv_table *t = csv_read(p);
    CHECK_INT(t->n_rows, 5);
    int found = 0;
    for (int i = 0; i < t->n_rows; i++) {
        double pre = atof(csv_get(t, i, "server_preemptions"));
        if (strstr(t->rows[i][0], "kv-900")) {
            found = 1;
            CHECK_MSG(pre > 0, "no preemptions in the run with 900 KV blocks");
        } else {
            CHECK_MSG(pre == 0, "%s preempted %g", t->rows[i][0], pre);
        }
    }
    CHECK(found);
}

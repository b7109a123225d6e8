/* t6110-files-never-lost-or-mixed: the second round of defects of `servelab run`, its
 * files and its report (each test was made to fail before its fix): what
 * could lose a file, mix runs, or state something untrue. */
#include "csv_util.h"
#include "support.h"
#include "test.h"

#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

static json_t *load(const char *dir, const char *name) {
    char path[4500];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    json_t *j = json_load_file(path, 0, NULL);
    CHECK_MSG(j, "no %s", path);
    return j;
}

static double num_at(json_t *o, const char *key) {
    json_t *v = json_object_get(o, key);
    CHECK_MSG(json_is_number(v), "%s is not a number", key);
    return json_number_value(v);
}

/* A bad value: exit 2, one line, and the words expected in it. */
static void refused(const char *args, const char *words) {
    char *out = NULL;
    int code = servelab_cmd(args, &out);
    CHECK_MSG(code == 2, "%s: exit %d: %s", args, code, out);
    CHECK_MSG(out && strstr(out, words) && count_of(out, "\n") <= 1, "%s: %s", args, out);
    free(out);
}

/* C1, L5, L7, L10, M9, M11: bounds checked before traffic. */
TEST(run_refuses_absurd_values_before_traffic) {
    const char *u = "run --url http://127.0.0.1:1 --out /nonexistent/x";
    char cmd[1024];
    struct {
        const char *args, *words;
    } cases[] = {
        {"--requests 9223372036854775807 --concurrency 1", "at most 100000000"},
        {"--rate 1e12 --duration 1", "more than 100,000,000 requests"},
        {"--think-time 1e300 --turns all", "at most 604800"},
        {"--extra-body '{\"ignore_eos\":false}' --ignore-eos", "'ignore_eos' is set by servelab"},
        {"--extra-body '{\"max_completion_tokens\":5000}'", "'max_completion_tokens' is set"},
        {"--extra-body '{\"n\":2}'", "'n' is set by servelab"},
        {"--mix short=1e308,medium=1e308", "a weight from 0 to 1e9"},
        {"--mix short=1,short=0,medium=1", "class 'short' is given twice"},
        {"--header 'Content-Length: 5'", "Content-Length is servelab's to set"},
        {"--header 'transfer-encoding: chunked'", "servelab's to set"},
        {"--metadata '=x'", "expected KEY=VALUE"},
        {"--metadata 'a b=x'", "expected KEY=VALUE"},
        {"--warmup 2000000000", "at most 100000000"},
        {"--arrival gamma --burstiness 1e300", "at most 100"},
        {"--cost-per-hour 1e300", "too large"},
        {"--max-event-bytes 99999999999", "too large"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        snprintf(cmd, sizeof cmd, "%s %s", u, cases[i].args);
        refused(cmd, cases[i].words);
    }
    /* a start far away is refused with a number a person can read */
    char *out = NULL;
    CHECK_INT(servelab_cmd("run --url http://127.0.0.1:1 --start-at +1e300 --out /tmp/no", &out),
              2);
    CHECK_MSG(out && strlen(out) < 200 && strstr(out, "more than a day"), "%s", out);
    free(out);
}

/* L1: a run stopped after 1.5 s of a 20 s schedule gives its rates over the
 * 1.5 s it ran, says it was interrupted, and the report marks it so. */
TEST(run_interrupted_rates_are_over_the_time_it_ran) {
    char *dir = temp_dir(), cmd[9200], p[4400];
    sim_proc s = sim_start("");
    snprintf(cmd, sizeof cmd,
             "exec %s run --no-sampling --url http://127.0.0.1:%d --rate 0.1 --requests 3 "
             "--arrival constant --max-tokens 5 --out %s/r > %s/out.txt 2>&1",
             servelab_bin(), s.port, dir, dir);
    pid_t pid = spawn_sh(cmd, PROC_DEVNULL, PROC_DEVNULL);
    sleep_ms(1500);
    kill(pid, SIGTERM);
    int st;
    waitpid(pid, &st, 0);
    sim_stop(&s);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 143);
    snprintf(p, sizeof p, "%s/r", dir);
    json_t *sum = load(p, "summary.json");
    double d = num_at(sum, "duration_s");
    /* from t=0 to the stop: 1.5 s less the start-up before t=0 (the
     * server's probe, and under the sanitizers a slower start), and far
     * more than the ~0.05 s its one answered request took */
    CHECK_MSG(d >= 1.0 && d < 5, "duration %.3f s", d);
    CHECK_MSG(num_at(sum, "achieved_rps") < 1.0, "achieved %.3f req/s",
              num_at(sum, "achieved_rps"));
    CHECK(num_at(sum, "arrival_window_s") <= d + 1e-9);
    json_decref(sum);
    snprintf(p, sizeof p, "%s/out.txt", dir);
    char *out = read_file(p, NULL);
    CHECK_MSG(out && strstr(out, "interrupted     after") && strstr(out, "2 of 3 requests"), "%s",
              out);
    free(out);
    snprintf(cmd, sizeof cmd, "report %s/r", dir);
    servelab_ok(cmd);
    snprintf(p, sizeof p, "%s/r/report", dir);
    json_t *rep = load(p, "summary.json");
    char *text = json_dumps(rep, 0);
    CHECK_MSG(strstr(text, "\"incomplete\": \"interrupted\""), "%.400s", text);
    free(text);
    json_decref(rep);
    free(dir);
}

/* D3, D4, M5: no run's file is replaced by another file, and a report never
 * goes into a run's directory. */
TEST(run_and_report_never_write_over_a_run) {
    char *dir = temp_dir(), cmd[9200], p[4400];
    sim_proc s = sim_start("");
    const char *q = "--quiet --no-sampling --requests 3";
    snprintf(cmd, sizeof cmd, "run --url http://127.0.0.1:%d %s --out %s/A", s.port, q, dir);
    servelab_ok(cmd);
    snprintf(p, sizeof p, "%s/A/meta.json", dir);
    char *before = read_file(p, NULL);
    snprintf(cmd, sizeof cmd,
             "run --url http://127.0.0.1:%d %s --out %s/B --save-vllm-json %s/A/meta.json", s.port,
             q, dir, dir);
    CHECK_INT(servelab_cmd(cmd, NULL), 2);
    snprintf(cmd, sizeof cmd,
             "run --url http://127.0.0.1:%d %s --out %s/A --force --save-vllm-json %s/A/x.json",
             s.port, q, dir, dir);
    CHECK_INT(servelab_cmd(cmd, NULL), 2); /* its own --out, even with --force */
    char *after = read_file(p, NULL);
    CHECK(before && after && !strcmp(before, after));
    free(after);
    /* an existing vLLM file needs --force */
    snprintf(cmd, sizeof cmd,
             "run --url http://127.0.0.1:%d %s --out %s/C --save-vllm-json %s/v.json", s.port, q,
             dir, dir);
    servelab_ok(cmd);
    snprintf(cmd, sizeof cmd,
             "run --url http://127.0.0.1:%d %s --out %s/D --save-vllm-json %s/v.json", s.port, q,
             dir, dir);
    CHECK_INT(servelab_cmd(cmd, NULL), 2);
    snprintf(cmd, sizeof cmd,
             "run --url http://127.0.0.1:%d %s --out %s/D --force --save-vllm-json %s/v.json",
             s.port, q, dir, dir);
    servelab_ok(cmd);
    sim_stop(&s);
    /* report A --out A would replace A's summary.json */
    snprintf(p, sizeof p, "%s/A/summary.json", dir);
    before = read_file(p, NULL);
    snprintf(cmd, sizeof cmd, "report %s/A --out %s/A", dir, dir);
    CHECK_INT(servelab_cmd(cmd, NULL), 2);
    after = read_file(p, NULL);
    CHECK(before && after && !strcmp(before, after));
    free(before);
    free(after);
    /* a vLLM file's report goes beside it by default */
    snprintf(cmd, sizeof cmd, "report %s/v.json", dir);
    servelab_ok(cmd);
    snprintf(p, sizeof p, "%s/v-report/summary.json", dir);
    char *rep = read_file(p, NULL);
    CHECK(rep != NULL);
    free(rep);
    free(dir);
}

/* L9: a vLLM file's impossible settings are refused, and where its rows
 * were measured is unknown, not "a real server". */
TEST(report_of_a_vllm_file_says_what_it_cannot_know) {
    char *dir = temp_dir(), cmd[9200], p[4400];
    sim_proc s = sim_start("");
    snprintf(cmd, sizeof cmd,
             "run --url http://127.0.0.1:%d --quiet --no-sampling --requests 5 --out %s/r "
             "--save-vllm-json %s/v.json",
             s.port, dir, dir);
    servelab_ok(cmd);
    sim_stop(&s);
    snprintf(cmd, sizeof cmd, "report %s/v.json --out %s/rep", dir, dir);
    servelab_ok(cmd);
    snprintf(p, sizeof p, "%s/rep/summary.md", dir);
    char *md = read_file(p, NULL);
    CHECK_MSG(md && strstr(md, "unknown for runs read from another tool's file") &&
                  !strstr(md, "measured against a real server"),
              "%.600s", md);
    free(md);
    snprintf(p, sizeof p, "%s", dir);
    json_t *v = load(p, "v.json");
    const char *keys[] = {"request_rate", "max_concurrency", "burstiness"};
    json_t *bad[] = {json_integer(-5), json_integer(-3), json_integer(-1)};
    for (int k = 0; k < 3; k++) {
        json_t *c = json_deep_copy(v);
        json_object_set_new(c, keys[k], bad[k]);
        snprintf(p, sizeof p, "%s/bad-%d.json", dir, k);
        json_dump_file(c, p, 0);
        json_decref(c);
        snprintf(cmd, sizeof cmd, "report %s --out %s/rb%d", p, dir, k);
        char *out = NULL;
        CHECK_INT(servelab_cmd(cmd, &out), 2);
        CHECK_MSG(out && strstr(out, keys[k]), "%s", out);
        free(out);
    }
    json_decref(v);
    free(dir);
}

/* L6, --label, --metadata, the ramp: the vLLM file says what vLLM's would. */
TEST(vllm_file_of_replays_plans_labels_and_metadata) {
    char *dir = temp_dir(), cmd[9200], p[4400];
    sim_proc s = sim_start("");
    /* a replay: the trace's own rate, no arrival process; --arrival refused */
    snprintf(p, sizeof p, "%s/t.jsonl", dir);
    FILE *f = fopen(p, "w");
    for (int i = 0; i < 10; i++)
        fprintf(f, "{\"timestamp\": %d, \"input_length\": 20, \"output_length\": 2}\n", i * 100);
    fclose(f);
    snprintf(cmd, sizeof cmd,
             "run --url http://127.0.0.1:%d --quiet --no-sampling --replay %s --arrival gamma "
             "--out %s/x",
             s.port, p, dir);
    CHECK_INT(servelab_cmd(cmd, NULL), 2);
    snprintf(cmd, sizeof cmd,
             "run --url http://127.0.0.1:%d --quiet --no-sampling --replay %s --out %s/rp "
             "--save-vllm-json %s/rp.json --label traced --metadata tensor_parallel_size=2",
             s.port, p, dir, dir);
    servelab_ok(cmd);
    snprintf(p, sizeof p, "%s", dir);
    json_t *v = load(p, "rp.json");
    CHECK_NEAR(num_at(v, "request_rate"), 10.0, 0.01); /* 9 gaps of 100 ms */
    CHECK(json_is_null(json_object_get(v, "burstiness")));
    CHECK(!strcmp(json_string_value(json_object_get(v, "label")), "traced"));
    CHECK(!strcmp(json_string_value(json_object_get(v, "tensor_parallel_size")), "2"));
    json_decref(v);
    snprintf(p, sizeof p, "%s/rp", dir);
    json_t *meta = load(p, "meta.json");
    CHECK(!strcmp(json_string_value(json_object_get(meta, "label")), "traced"));
    CHECK(!strcmp(json_string_value(
                      json_object_get(json_object_get(meta, "metadata"), "tensor_parallel_size")),
                  "2"));
    json_decref(meta);
    /* a plan of one ramp: vLLM's linear ramp-up */
    snprintf(cmd, sizeof cmd,
             "run --url http://127.0.0.1:%d --quiet --no-sampling --rate-plan ramp:2-8@2s "
             "--max-tokens 4 --out %s/ramp --save-vllm-json %s/ramp.json",
             s.port, dir, dir);
    servelab_ok(cmd);
    sim_stop(&s);
    snprintf(p, sizeof p, "%s", dir);
    v = load(p, "ramp.json");
    CHECK(!strcmp(json_string_value(json_object_get(v, "ramp_up_strategy")), "linear"));
    CHECK_NEAR(num_at(v, "ramp_up_start_rps"), 2, 1e-9);
    CHECK_NEAR(num_at(v, "ramp_up_end_rps"), 8, 1e-9);
    json_decref(v);
    free(dir);
}

/* M2: two runs of different workloads compare with a note that says so. */
TEST(compare_notes_different_workloads) {
    char *dir = temp_dir(), cmd[2048], *out = NULL;
    sim_proc s = sim_start("");
    snprintf(
        cmd, sizeof cmd,
        "run --url http://127.0.0.1:%d --quiet --no-sampling --requests 12 --rate 50 --out %s/a",
        s.port, dir);
    servelab_ok(cmd);
    snprintf(cmd, sizeof cmd,
             "run --url http://127.0.0.1:%d --quiet --no-sampling --requests 12 --rate 50 "
             "--prompts random:200:16 --out %s/b",
             s.port, dir);
    servelab_ok(cmd);
    sim_stop(&s);
    snprintf(cmd, sizeof cmd, "compare %s/a %s/b", dir, dir);
    servelab_cmd(cmd, &out);
    CHECK_MSG(out && strstr(out, "different workloads") && strstr(out, "prompts"), "%s", out);
    free(out);
    free(dir);
}

/* M8: a shard with no request of its own has no lag figures to print. */
TEST(run_without_requests_prints_no_lag) {
    char *dir = temp_dir(), cmd[2048], *out = NULL;
    sim_proc s = sim_start("");
    snprintf(cmd, sizeof cmd,
             "run --url http://127.0.0.1:%d --no-sampling --requests 2 --shard 3/4 --out %s/r",
             s.port, dir);
    servelab_cmd(cmd, &out);
    sim_stop(&s);
    CHECK_MSG(out && strstr(out, "schedule lag -") && !strstr(out, "lag p50 0.000"), "%s", out);
    free(out);
    free(dir);
}

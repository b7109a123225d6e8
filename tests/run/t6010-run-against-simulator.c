/* servelab run against servelab sim: every request a row, first-token times
 * that agree with the simulator's trace, reproducible schedules, the
 * concurrency cap, fault classes, kills, and secrets kept out of files. */
#include "csv_util.h"
#include "support.h"
#include "test.h"

#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int run_cmd(const char *args, char **out) {
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "run --quiet %s", args);
    return servelab_cmd(cmd, out);
}

static csv_table *rows_of(const char *dir) {
    char p[2048];
    snprintf(p, sizeof p, "%s/requests.csv", dir);
    csv_table *t = csv_read(p);
    CHECK_MSG(t != NULL, "no %s", p);
    return t;
}

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int trace_row_of(csv_table *tr, const char *id) {
    /* request ids are req-N: the trace is small enough to scan */
    for (int i = 0; i < tr->n_rows; i++)
        if (!strcmp(tr->rows[i][0], id))
            return i;
    return -1;
}

TEST_SLOW_ALONE(run_2000_requests_match_simulator_trace) {
    char *dir = temp_dir();
    char args[1024], *out;
    snprintf(args, sizeof args, "--trace %s/trace.csv", dir);
    sim_proc p = sim_start(args);
    snprintf(args, sizeof args,
             "--url http://127.0.0.1:%d --rate 200 --requests 2000 --prompts random:32:16 "
             "--ignore-eos --out %s/run",
             p.port, dir);
    int code = run_cmd(args, &out);
    CHECK_MSG(code == 0, "run exit %d: %s", code, out);
    sim_stop(&p);
    snprintf(args, sizeof args, "%s/run", dir);
    csv_table *t = rows_of(args);
    CHECK_INT(t->n_rows, 2000);
    snprintf(args, sizeof args, "%s/trace.csv", dir);
    csv_table *tr = csv_read(args);
    CHECK(tr != NULL);
    /* index trace rows by request number */
    int *by_num = calloc(2000, sizeof *by_num);
    for (int i = 0; i < tr->n_rows; i++) {
        int k = atoi(tr->rows[i][0] + 4);
        if (k >= 0 && k < 2000)
            by_num[k] = i + 1;
    }
    double *diff = malloc(2000 * sizeof *diff);
    for (int i = 0; i < 2000; i++) {
        CHECK_STR(csv_get(t, i, "error"), "");
        CHECK_STR(csv_get(t, i, "output_tokens"), "16");
        int k = atoi(csv_get(t, i, "request_id") + 4);
        CHECK(by_num[k] > 0);
        double client = atof(csv_get(t, i, "first_token_ms"));
        double server = atof(tr->rows[by_num[k] - 1][3]);
        diff[i] = client - server;
    }
    double sorted[2000];
    memcpy(sorted, diff, sizeof sorted);
    qsort(sorted, 2000, sizeof *sorted, cmp_d);
    double offset = (sorted[999] + sorted[1000]) / 2;
    double *err = malloc(2000 * sizeof *err);
    for (int i = 0; i < 2000; i++)
        err[i] = fabs(diff[i] - offset);
    qsort(err, 2000, sizeof *err, cmp_d);
    double p99 = err[1979];
    printf("    first-token error after alignment: p50 %.3f ms, p99 %.3f ms, max %.3f ms\n",
           err[999], p99, err[1999]);
    /* within 2 ms, plus what the host held the client off the CPU, as the
     * run measured it of itself (its schedule lag's p99): on a quiet
     * machine about 0.05 ms, with two busy loops beside it about 2 ms */
    snprintf(args, sizeof args, "%s/run/summary.json", dir);
    json_t *sum = json_load_file(args, 0, NULL);
    double lag = json_number_value(
        json_object_get(json_object_get(json_object_get(sum, "client"), "schedule_lag_ms"), "p99"));
    json_decref(sum);
    CHECK_MSG(p99 < 2.0 + lag, "p99 first-token error %.3f ms (the host's lag p99 %.3f ms)", p99,
              lag);
    (void)trace_row_of;
}

TEST(run_same_seed_same_schedule_and_prompts) {
    char *dir = temp_dir();
    sim_proc p = sim_start(NULL);
    char args[1024];
    char *cols[2];
    for (int k = 0; k < 2; k++) {
        snprintf(args, sizeof args,
                 "--url http://127.0.0.1:%d --rate 500 --requests 60 --seed 9 --max-tokens 4 "
                 "--out %s/r%d",
                 p.port, dir, k);
        CHECK_INT(run_cmd(args, NULL), 0);
        snprintf(args, sizeof args, "cut -d, -f1-3 %s/r%d/requests.csv | sort", dir, k);
        cols[k] = run_capture(args, NULL);
    }
    CHECK(strlen(cols[0]) > 60 * 10);
    CHECK_STR(cols[0], cols[1]);
    snprintf(args, sizeof args,
             "--url http://127.0.0.1:%d --rate 500 --requests 60 --seed 10 --max-tokens 4 "
             "--out %s/r2",
             p.port, dir);
    CHECK_INT(run_cmd(args, NULL), 0);
    snprintf(args, sizeof args, "cut -d, -f1-3 %s/r2/requests.csv | sort", dir);
    char *other = run_capture(args, NULL);
    CHECK(strcmp(cols[0], other) != 0);
    /* the builtin mix put several classes in */
    CHECK(strstr(cols[0], ",short,") && strstr(cols[0], ",medium,"));
    sim_stop(&p);
}

TEST(run_concurrency_cap_holds_and_queueing_shows) {
    char *dir = temp_dir();
    char args[1024];
    snprintf(args, sizeof args, "--trace %s/trace.csv --decode-base-ms 5", dir);
    sim_proc p = sim_start(args);
    snprintf(args, sizeof args,
             "--url http://127.0.0.1:%d --rate inf --requests 40 --concurrency 4 "
             "--prompts random:8:10 --ignore-eos --out %s/run",
             p.port, dir);
    CHECK_INT(run_cmd(args, NULL), 0);
    sim_stop(&p);
    snprintf(args, sizeof args, "%s/trace.csv", dir);
    csv_table *tr = csv_read(args);
    CHECK_INT(tr->n_rows, 40);
    /* peak of arrived..finished intervals */
    int peak = 0;
    for (int i = 0; i < tr->n_rows; i++) {
        double t = atof(tr->rows[i][1]);
        int cur = 0;
        for (int j = 0; j < tr->n_rows; j++)
            if (atof(tr->rows[j][1]) <= t && atof(tr->rows[j][4]) > t)
                cur++;
        if (cur > peak)
            peak = cur;
    }
    CHECK_MSG(peak <= 4 && peak >= 3, "peak in flight %d", peak);
    snprintf(args, sizeof args, "%s/run", dir);
    csv_table *t = rows_of(args);
    int waited = 0;
    for (int i = 0; i < t->n_rows; i++) {
        double wait = atof(csv_get(t, i, "sent_ms")) - atof(csv_get(t, i, "scheduled_ms"));
        if (wait > 50)
            waited++;
    }
    CHECK_MSG(waited >= 30, "only %d requests show client queueing", waited);
}

TEST(run_faults_end_as_rows_with_right_error_class) {
    char *dir = temp_dir();
    char args[1024], *out;
    snprintf(args, sizeof args,
             "--trace %s/trace.csv --stall-ms 3000 --fault "
             "http429=0.1,http500=0.1,disconnect=0.1,malformed=0.1,stall=0.05",
             dir);
    sim_proc p = sim_start(args);
    snprintf(args, sizeof args,
             "--url http://127.0.0.1:%d --rate 400 --requests 300 --prompts random:8:12 "
             "--ignore-eos --timeout 1 --out %s/run",
             p.port, dir);
    int code = run_cmd(args, &out);
    CHECK_MSG(code == 0, "exit %d: %s", code, out);
    sim_stop(&p);
    snprintf(args, sizeof args, "%s/run", dir);
    csv_table *t = rows_of(args);
    CHECK_INT(t->n_rows, 300);
    snprintf(args, sizeof args, "%s/trace.csv", dir);
    csv_table *tr = csv_read(args);
    const char *faults[] = {"http429", "http500", "disconnect", "malformed", "stall", ""};
    const char *want[] = {"http", "http", "disconnect", "malformed", "timeout", ""};
    int fcol = csv_col(tr, "fault");
    for (int i = 0; i < t->n_rows; i++) {
        const char *id = csv_get(t, i, "request_id");
        int r = trace_row_of(tr, id);
        CHECK_MSG(r >= 0, "%s not in trace", id);
        const char *fault = tr->rows[r][fcol];
        for (int k = 0; k < 6; k++)
            if (!strcmp(fault, faults[k]))
                CHECK_MSG(!strcmp(csv_get(t, i, "error"), want[k]),
                          "%s: fault '%s' gave error '%s'", id, fault, csv_get(t, i, "error"));
    }
    int n_fault_kinds = 0;
    for (int k = 0; k < 5; k++) {
        int c = 0;
        for (int r = 0; r < tr->n_rows; r++)
            c += !strcmp(tr->rows[r][fcol], faults[k]);
        n_fault_kinds += c > 0;
    }
    CHECK_INT(n_fault_kinds, 5);
}

TEST(run_connection_refused_gives_connect_rows) {
    char *dir = temp_dir();
    char args[512];
    /* a port nobody listens on: bind one, close it */
    sim_proc p = sim_start(NULL);
    int port = p.port;
    sim_stop(&p);
    snprintf(args, sizeof args,
             "--url http://127.0.0.1:%d --model m --rate 100 --requests 20 --out %s/run", port,
             dir);
    CHECK_INT(run_cmd(args, NULL), 1); /* every request failed: the run did */
    snprintf(args, sizeof args, "%s/run", dir);
    csv_table *t = rows_of(args);
    CHECK_INT(t->n_rows, 20);
    for (int i = 0; i < 20; i++)
        CHECK_STR(csv_get(t, i, "error"), "connect");
}

static pid_t spawn_run(const char *args) {
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "exec %s run --quiet %s", servelab_bin(), args);
    return spawn_sh(cmd, PROC_DEVNULL, PROC_DEVNULL);
}

TEST(run_sigkill_leaves_parseable_rows) {
    char *dir = temp_dir();
    sim_proc p = sim_start(NULL);
    char args[1024];
    snprintf(args, sizeof args,
             "--url http://127.0.0.1:%d --rate 100 --requests 1000 --prompts random:8:8 "
             "--out %s/run",
             p.port, dir);
    pid_t pid = spawn_run(args);
    usleep(1500000);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    sim_stop(&p);
    snprintf(args, sizeof args, "%s/run", dir);
    csv_table *t = rows_of(args); /* fails on any malformed line */
    CHECK_MSG(t->n_rows > 50 && t->n_rows < 1000, "%d rows", t->n_rows);
    snprintf(args, sizeof args, "%s/run/requests.csv", dir);
    size_t len;
    char *raw = read_file(args, &len);
    CHECK(len > 0 && raw[len - 1] == '\n');
}

TEST(run_sigint_writes_everything_and_exits_130) {
    char *dir = temp_dir();
    sim_proc p = sim_start(NULL);
    char args[1024];
    snprintf(args, sizeof args,
             "--url http://127.0.0.1:%d --rate 50 --requests 500 --prompts random:8:100 "
             "--ignore-eos --out %s/run",
             p.port, dir);
    pid_t pid = spawn_run(args);
    usleep(1500000);
    kill(pid, SIGINT);
    int status;
    waitpid(pid, &status, 0);
    sim_stop(&p);
    CHECK(WIFEXITED(status));
    CHECK_INT(WEXITSTATUS(status), 130);
    snprintf(args, sizeof args, "%s/run", dir);
    csv_table *t = rows_of(args);
    CHECK_INT(t->n_rows, 500); /* every scheduled request, cancelled or not */
    int cancelled = 0, ok = 0;
    for (int i = 0; i < t->n_rows; i++) {
        cancelled += !strcmp(csv_get(t, i, "error"), "cancelled");
        ok += !strcmp(csv_get(t, i, "error"), "");
    }
    CHECK(cancelled > 300 && ok > 10);
    const char *files[] = {"meta.json", "summary.json", "chunks.csv"};
    for (int i = 0; i < 3; i++) {
        snprintf(args, sizeof args, "%s/run/%s", dir, files[i]);
        char *s = read_file(args, NULL);
        CHECK_MSG(s && strlen(s) > 10, "%s missing", files[i]);
    }
}

TEST(run_api_key_and_header_values_never_written) {
    char *dir = temp_dir();
    sim_proc p = sim_start(NULL);
    char args[1024];
    setenv("SERVELAB_TEST_KEY", "sk-test-do-not-leak-4711", 1);
    snprintf(args, sizeof args,
             "--url http://127.0.0.1:%d --requests 5 --api-key-env SERVELAB_TEST_KEY "
             "--header 'X-Secret: hunter2-do-not-leak' --out %s/run",
             p.port, dir);
    CHECK_INT(run_cmd(args, NULL), 0);
    sim_stop(&p);
    snprintf(args, sizeof args, "grep -rl -e do-not-leak %s/run | wc -l", dir);
    char *o = run_capture(args, NULL);
    CHECK_INT(atoi(o), 0);
    snprintf(args, sizeof args, "%s/run/meta.json", dir);
    char *meta = read_file(args, NULL);
    CHECK(strstr(meta, "SERVELAB_TEST_KEY") != NULL); /* the variable's name is fine */
    CHECK(strstr(meta, "X-Secret") != NULL);
    CHECK(strstr(meta, "\"fixture\": true") != NULL);
}

TEST(run_bad_input_fails_before_traffic) {
    char *dir = temp_dir();
    char path[600], args[1024], *out;
    snprintf(path, sizeof path, "%s/p.jsonl", dir);
    FILE *f = fopen(path, "w");
    fputs("{\"prompt\": \"ok\"}\n{\"prompt\": 5}\n", f);
    fclose(f);
    snprintf(args, sizeof args, "--url http://127.0.0.1:1 --prompts %s --out %s/r", path, dir);
    CHECK_INT(run_cmd(args, &out), 2);
    CHECK_MSG(strstr(out, "p.jsonl:2:") != NULL, "got: %s", out);
    CHECK_INT(run_cmd("--url http://127.0.0.1:1 --rate -3", &out), 2);
    CHECK(strstr(out, "--rate") != NULL);
    CHECK_INT(run_cmd("--url http://127.0.0.1:1 --mix short=1,huge=2", &out), 2);
    CHECK(strstr(out, "huge") != NULL);
    CHECK_INT(run_cmd("--url http://127.0.0.1:1 --prompts random:0:5", &out), 2);
    CHECK_INT(run_cmd("--rate 3", &out), 2);
    CHECK(strstr(out, "--url") != NULL);
    snprintf(args, sizeof args, "--url http://127.0.0.1:1 --prompts sharegpt:%s/none.json", dir);
    CHECK_INT(run_cmd(args, &out), 2);
    CHECK(strstr(out, "none.json") != NULL);
    CHECK_INT(run_cmd("--url http://127.0.0.1:1 --http-client wget", &out), 2);
    CHECK(strstr(out, "--http-client") != NULL);
    CHECK_INT(run_cmd("--url https://127.0.0.1:1 --http-client builtin", &out), 2);
    CHECK(strstr(out, "--http-client builtin") != NULL);
    CHECK_INT(run_cmd("--url http://127.0.0.1:1 --cpus 1-0", &out), 2);
    CHECK(strstr(out, "--cpus") != NULL);
}

/* --progress plain: the progress line even when stderr is not a terminal
 * (here a pipe), and over --quiet; without it, none. */
TEST(run_progress_line_when_asked) {
    char *dir = temp_dir();
    sim_proc p = sim_start(NULL);
    char args[1024], *out;
    snprintf(args, sizeof args,
             "--url http://127.0.0.1:%d --rate 20 --requests 30 --max-tokens 4 --progress "
             "plain --out %s/a",
             p.port, dir);
    CHECK_INT(run_cmd(args, &out), 0);
    CHECK_MSG(strstr(out, " done, ") && strstr(out, " in flight, "), "%s", out);
    snprintf(args, sizeof args,
             "--url http://127.0.0.1:%d --rate 20 --requests 30 --max-tokens 4 --out %s/b", p.port,
             dir);
    CHECK_INT(run_cmd(args, &out), 0);
    CHECK_MSG(!strstr(out, " in flight, "), "%s", out);
    sim_stop(&p);
}

/* --cpus and --realtime: the run goes on, and meta.json says where and how
 * it ran (the priority it got depends on the machine's permissions). */
TEST(run_cpus_and_realtime_recorded_in_meta) {
    char *dir = temp_dir();
    sim_proc p = sim_start(NULL);
    char args[1024], *out;
    snprintf(args, sizeof args,
             "--url http://127.0.0.1:%d --rate 200 --requests 20 --max-tokens 4 --cpus 0 "
             "--realtime --no-sampling --out %s/run",
             p.port, dir);
    CHECK_INT(run_cmd(args, &out), 0);
    sim_stop(&p);
    snprintf(args, sizeof args, "%s/run/meta.json", dir);
    char *meta = read_file(args, NULL);
    CHECK(meta && strstr(meta, "\"cpus\": \"0\""));
    CHECK(strstr(meta, "\"realtime\": \"fifo\"") || strstr(meta, "\"realtime\": \"nice\"") ||
          strstr(meta, "\"realtime\": \"off\""));
    CHECK(strstr(meta, "\"http_client\": \"builtin\""));
}

TEST(run_summary_json_and_table) {
    char *dir = temp_dir();
    sim_proc p = sim_start(NULL);
    char args[1024], *out;
    snprintf(args, sizeof args,
             "--url http://127.0.0.1:%d --api chat --rate 100 --requests 50 --max-tokens 8 "
             "--slo ttft=500ms,tpot=50ms --cost-per-hour 2 --out %s/run",
             p.port, dir);
    CHECK_INT(run_cmd(args, &out), 0);
    sim_stop(&p);
    CHECK(strstr(out, "TTFT") && strstr(out, "goodput") && strstr(out, "cost"));
    snprintf(args, sizeof args, "%s/run/summary.json", dir);
    char *s = read_file(args, NULL);
    CHECK(s != NULL);
    CHECK(strstr(s, "\"goodput_fraction\": 1.0") != NULL);
    CHECK(strstr(s, "\"completed\": 50") != NULL);
    CHECK(strstr(s, "\"realized_offered_rps\"") != NULL);
}

TEST(run_threads_split_the_schedule_and_keep_every_row) {
    char *dir = temp_dir();
    char args[1024];
    snprintf(args, sizeof args, "--trace %s/trace.csv", dir);
    sim_proc p = sim_start(args);
    char *out;
    snprintf(args, sizeof args,
             "--url http://127.0.0.1:%d --rate 400 --requests 600 --prompts random:8:12 "
             "--ignore-eos --threads 3 --seed 4 --out %s/run",
             p.port, dir);
    int code = run_cmd(args, &out);
    CHECK_MSG(code == 0, "exit %d: %s", code, out);
    CHECK(strstr(out, "600 scheduled, 600 completed") != NULL);
    sim_stop(&p);
    snprintf(args, sizeof args, "%s/run", dir);
    csv_table *t = rows_of(args);
    CHECK_INT(t->n_rows, 600);
    char *seen = calloc(600, 1);
    for (int i = 0; i < 600; i++) {
        int k = atoi(csv_get(t, i, "request_id") + 4);
        CHECK(k >= 0 && k < 600 && !seen[k]);
        seen[k] = 1;
        CHECK_STR(csv_get(t, i, "error"), "");
        CHECK_STR(csv_get(t, i, "output_tokens"), "12");
    }
    /* the schedule is the single-threaded one: same seed, same due times */
    snprintf(args, sizeof args,
             "--url http://127.0.0.1:1 --model m --rate 400 --requests 600 --prompts random:8:12 "
             "--seed 4 --out %s/ref",
             dir);
    run_cmd(args, NULL);
    snprintf(args, sizeof args,
             "cut -d, -f1-3 %s/run/requests.csv | sort > %s/a; cut -d, -f1-3 %s/ref/requests.csv "
             "| sort > %s/b; cmp %s/a %s/b",
             dir, dir, dir, dir, dir, dir);
    CHECK_INT(system(args), 0);
    /* every chunk row whole: 600 x 12 */
    snprintf(args, sizeof args, "%s/run/chunks.csv", dir);
    csv_table *c = csv_read(args);
    CHECK_INT(c->n_rows, 600 * 12);
}

TEST(run_credentials_in_the_url_are_never_written) {
    char *dir = temp_dir();
    sim_proc p = sim_start(NULL);
    char args[1024], *out;
    snprintf(args, sizeof args,
             "--url http://alice:pw-do-not-leak@127.0.0.1:%d --requests 3 --out %s/run", p.port,
             dir);
    int code = run_cmd(args, &out);
    sim_stop(&p);
    CHECK_MSG(code == 0, "%s", out);
    CHECK(strstr(out, "do-not-leak") == NULL);
    snprintf(args, sizeof args, "grep -rl do-not-leak %s/run | wc -l", dir);
    CHECK_INT(atoi(run_capture(args, NULL)), 0);
    snprintf(args, sizeof args, "%s/run/meta.json", dir);
    char *meta = read_file(args, NULL);
    CHECK(strstr(meta, "http://<redacted>@127.0.0.1") != NULL);
    CHECK(strstr(meta, "\"insecure\": false") != NULL); /* TLS verified by default */
}

/* Live progress and live metrics: the display read off a pseudo-terminal
 * (`script` gives the run one; the bytes it drew are replayed here onto a
 * screen of rows and columns, the way a terminal applies them), the plain
 * line off one, --quiet, a sweep's run and repetition, and the Prometheus
 * text --metrics-listen serves while the run goes. */
#include "client/live.h"
#include "common/clock.h"
#include "common/util.h"
#include "run/metrics_listen.h"
#include "target/server_proc.h"
#include "support.h"
#include "test.h"

#include <jansson.h>
#include <math.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define ROWS 200
#define COLS 240

typedef struct screen {
    char c[ROWS][COLS + 1];
    int row, col, used; /* used: rows written so far */
} screen;

/* What a terminal shows after these bytes: printable characters, CR, LF,
 * ESC[nA (up n rows) and ESC[K (clear to the end of the row). */
static void replay(screen *s, const char *p, size_t n) {
    memset(s, 0, sizeof *s);
    for (size_t i = 0; i < n; i++) {
        char ch = p[i];
        if (ch == '\r') {
            s->col = 0;
        } else if (ch == '\n') {
            if (s->row < ROWS - 1)
                s->row++;
        } else if (ch == '\033' && i + 1 < n && p[i + 1] == '[') {
            size_t j = i + 2;
            int k = 0;
            while (j < n && p[j] >= '0' && p[j] <= '9')
                k = k * 10 + (p[j++] - '0');
            if (j < n && p[j] == 'A')
                s->row = s->row - (k ? k : 1) < 0 ? 0 : s->row - (k ? k : 1);
            else if (j < n && p[j] == 'K')
                memset(s->c[s->row] + s->col, 0, COLS - (size_t)s->col);
            i = j;
        } else if ((unsigned char)ch >= ' ' && s->col < COLS) {
            s->c[s->row][s->col++] = ch;
        }
        if (s->row + 1 > s->used)
            s->used = s->row + 1;
    }
}

/* How many rows of the screen hold `needle`. */
static int rows_with(const screen *s, const char *needle) {
    int k = 0;
    for (int r = 0; r < s->used; r++)
        k += strstr(s->c[r], needle) != NULL;
    return k;
}

static const char *row_with(const screen *s, const char *needle) {
    for (int r = 0; r < s->used; r++)
        if (strstr(s->c[r], needle))
            return s->c[r];
    return "";
}

/* `servelab ARGS` under a pseudo-terminal; what it drew, in *out. */
static int under_pty(const char *args, const char *dir, char **out, size_t *len) {
    char cmd[4096], ts[2100];
    snprintf(ts, sizeof ts, "%s/typescript", dir);
    snprintf(cmd, sizeof cmd, "script -qfec '%s %s' %s > /dev/null 2>&1", servelab_bin(), args, ts);
    int st = system(cmd);
    *out = read_file(ts, len);
    CHECK_MSG(*out != NULL, "no typescript from: %s", cmd);
    /* what the program drew: after script's first line, before its last */
    char *nl = strchr(*out, '\n'), *end = strstr(*out, "\nScript done");
    if (end)
        *end = 0;
    if (nl)
        memmove(*out, nl + 1, strlen(nl + 1) + 1);
    *len = strlen(*out);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

TEST(progress_drawn_in_place_on_a_terminal) {
    sim_proc sim = sim_start("--profile tiny --fault http500=0.15 --seed 2");
    char *dir = temp_dir(), args[2048], *ts;
    size_t len;
    snprintf(args, sizeof args,
             "run --url http://127.0.0.1:%d --requests 60 --rate 20 --seed 1 --out %s/run",
             sim.port, dir);
    CHECK_INT(under_pty(args, dir, &ts, &len), 0);
    sim_stop(&sim);
    /* redrawn about twice a second over the run's three seconds, in place */
    int redraws = count_of(ts, "\033[4A");
    CHECK_MSG(redraws >= 3 && redraws <= 12, "%d redraws", redraws);
    screen s;
    replay(&s, ts, len);
    CHECK_INT(rows_with(&s, "servelab run"), 1); /* one block on the screen, not one a draw */
    CHECK_INT(rows_with(&s, "  requests  "), 1);
    const char *req = row_with(&s, "  requests  "), *tim = row_with(&s, "  time  ");
    const char *lat = row_with(&s, "  latency  ");
    CHECK_MSG(strstr(req, "60/60 done, 0 in flight, ") && strstr(req, " failed (http "), "%s", req);
    CHECK_MSG(strstr(tim, " s elapsed, ETA 0 s, ") && strstr(tim, " req/s sent, ") &&
                  strstr(tim, " output tok/s"),
              "%s", tim);
    CHECK_MSG(strstr(lat, "last 10 s: TTFT p50 ") && strstr(lat, ", p95 ") &&
                  strstr(lat, "TPOT p50 ") && strstr(lat, " ms"),
              "%s", lat);
    /* the draws' counts only grow */
    long prev = -1;
    int draws = 0;
    for (const char *p = ts; (p = strstr(p, "  requests  ")); p++) {
        long done = strtol(p + 12, NULL, 10);
        CHECK_MSG(done >= prev, "done went from %ld to %ld", prev, done);
        prev = done;
        draws++;
    }
    CHECK_INT(draws, redraws + 1);
    free(ts);
    free(dir);
}

TEST(progress_quiet_draws_nothing_on_a_terminal) {
    sim_proc sim = sim_start("--profile tiny");
    char *dir = temp_dir(), args[2048], *ts;
    size_t len;
    snprintf(args, sizeof args,
             "run --url http://127.0.0.1:%d --requests 30 --rate 20 --out %s/run --quiet", sim.port,
             dir);
    CHECK_INT(under_pty(args, dir, &ts, &len), 0);
    sim_stop(&sim);
    CHECK_MSG(!strstr(ts, "  requests  ") && !strstr(ts, "\033[4A"), "%s", ts);
    CHECK(strstr(ts, "TTFT") != NULL); /* the summary table on stdout is still there */
    free(ts);
    free(dir);
}

TEST(progress_plain_line_every_interval_off_a_terminal) {
    sim_proc sim = sim_start("--profile tiny");
    char *dir = temp_dir(), args[2048], *out;
    snprintf(args, sizeof args,
             "run --url http://127.0.0.1:%d --requests 60 --rate 20 --out %s/run --progress plain "
             "--progress-interval 0.5",
             sim.port, dir);
    CHECK_INT(servelab_cmd(args, &out), 0);
    sim_stop(&sim);
    int lines = count_of(out, " done, "); /* the progress lines, not warnings or notes */
    CHECK_MSG(lines >= 4 && lines <= 12, "%d lines:\n%s", lines, out);
    CHECK_MSG(strstr(out, "servelab: 60/60 done, 0 in flight, 0 failed; ") &&
                  strstr(out, "last 10 s: TTFT p50"),
              "%s", out);
    CHECK(!strstr(out, "\033[")); /* no terminal control off a terminal */
    free(out);
    snprintf(args, sizeof args, "run --url http://127.0.0.1:1 --progress sometimes --out %s/x",
             dir);
    CHECK_INT(servelab_cmd(args, &out), 2);
    CHECK_MSG(strstr(out, "--progress") && count_of(out, "\n") == 1, "%s", out);
    free(out);
    free(dir);
}

TEST(progress_sweep_names_its_run_and_repetition) {
    char *dir = temp_dir(), path[2100], args[4400], *ts;
    size_t len;
    snprintf(path, sizeof path, "%s/c.yaml", dir);
    FILE *f = fopen(path, "w");
    fputs("name: p\ntarget: {sim: {profile: tiny}}\nrequests: 20\nrepetitions: 2\n"
          "runs:\n  - {name: slow, rate: 10}\n",
          f);
    fclose(f);
    snprintf(args, sizeof args, "sweep %s --out %s/out", path, dir);
    CHECK_INT(under_pty(args, dir, &ts, &len), 0);
    CHECK_MSG(strstr(ts, "sweep run 1 of 2: slow, repetition 1 of 2") &&
                  strstr(ts, "sweep run 2 of 2: slow, repetition 2 of 2"),
              "%s", ts);
    free(ts);
    free(dir);
}

/* The value on the line that starts with line_start. */
static double metric(const char *text, const char *line_start) {
    size_t n = strlen(line_start);
    for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
        if (!strncmp(l, line_start, n))
            return strtod(l + n, NULL);
    CHECK_MSG(0, "no %s in\n%s", line_start, text);
    return 0;
}

/* A histogram's buckets grow and end at its _count. */
static void check_histogram(const char *text, const char *name) {
    char key[160];
    snprintf(key, sizeof key, "%s_bucket{le=\"", name);
    double prev = -1;
    const char *p = text;
    int buckets = 0;
    while ((p = strstr(p, key))) {
        const char *v = strstr(p, "} ");
        double c = strtod(v + 2, NULL);
        CHECK_MSG(c >= prev, "%s: a bucket shrank", name);
        prev = c;
        buckets++;
        p = v;
    }
    CHECK_MSG(buckets >= 5, "%s: %d buckets", name, buckets);
    snprintf(key, sizeof key, "%s_count ", name);
    CHECK_NEAR(metric(text, key), prev, 0);
    snprintf(key, sizeof key, "# TYPE %s histogram", name);
    CHECK(strstr(text, key) != NULL);
}

TEST(metrics_listen_serves_prometheus_text_while_running) {
    sim_proc sim = sim_start("--profile tiny");
    char *dir = temp_dir(), cmd[4096];
    int port = server_proc_free_port();
    CHECK(port > 0);
    snprintf(cmd, sizeof cmd,
             "exec %s run --url http://127.0.0.1:%d --requests 80 --rate 20 --out %s/run "
             "--metrics-listen 127.0.0.1:%d --quiet > /dev/null 2>&1",
             servelab_bin(), sim.port, dir, port);
    pid_t run = spawn_sh(cmd, PROC_INHERIT, PROC_INHERIT);
    http_result r1 = {0}, r2 = {0};
    int got = -1;
    for (int i = 0; i < 40 && got < 0; i++) { /* up within 2 s */
        sleep_ms(50);
        got = http_request_raw(port, "GET", "/metrics", "", NULL, &r1);
    }
    CHECK_MSG(got >= 0 && r1.status == 200, "no /metrics on port %d", port);
    sleep_ms(1500);
    CHECK(http_request_raw(port, "GET", "/metrics", "", NULL, &r2) >= 0 && r2.status == 200);
    int st;
    waitpid(run, &st, 0);
    CHECK_INT(WEXITSTATUS(st), 0);
    sim_stop(&sim);
    CHECK(strstr(r2.headers, "text/plain; version=0.0.4") != NULL);
    const char *t = r2.body;
    CHECK_NEAR(metric(t, "servelab_requests_scheduled "), 80, 0);
    double ok = metric(t, "servelab_requests_total{outcome=\"ok\"} ");
    double sent = metric(t, "servelab_requests_sent_total ");
    double in_flight = metric(t, "servelab_requests_in_flight ");
    CHECK_MSG(ok >= 10 && ok < 80, "ok %g", ok);
    CHECK_NEAR(sent, ok + in_flight + metric(t, "servelab_requests_total{outcome=\"http\"} "), 0);
    CHECK(metric(t, "servelab_output_tokens_total ") > 0);
    CHECK(metric(t, "servelab_requests_sent_total ") >=
          metric(r1.body, "servelab_requests_sent_total "));
    CHECK(strstr(t, "servelab_run_info{run=\"") != NULL);
    check_histogram(t, "servelab_time_to_first_token_seconds");
    check_histogram(t, "servelab_time_per_output_token_seconds");
    check_histogram(t, "servelab_e2e_request_latency_seconds");
    check_histogram(t, "servelab_schedule_lag_seconds");
    CHECK_NEAR(metric(t, "servelab_time_to_first_token_seconds_count "), ok, 0);
    /* every line is a comment or a name under servelab_ */
    for (const char *l = t; *l; l = strchr(l, '\n') + 1) {
        CHECK_MSG(l[0] == '#' || !strncmp(l, "servelab_", 9), "%.60s", l);
        if (!strchr(l, '\n'))
            break;
    }
    http_result_free(&r1);
    http_result_free(&r2);
    free(dir);
}

TEST(metrics_listen_port_in_use_refused_before_traffic) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t l = sizeof a;
    CHECK(bind(fd, (struct sockaddr *)&a, sizeof a) == 0 && listen(fd, 1) == 0);
    getsockname(fd, (struct sockaddr *)&a, &l);
    sim_proc sim = sim_start("--profile tiny");
    char *dir = temp_dir(), args[2048], *out, path[2100];
    snprintf(args, sizeof args,
             "run --url http://127.0.0.1:%d --requests 5 --out %s/run --metrics-listen "
             "127.0.0.1:%d",
             sim.port, dir, ntohs(a.sin_port));
    CHECK_INT(servelab_cmd(args, &out), 2);
    CHECK_MSG(strstr(out, "--metrics-listen") && strstr(out, "cannot listen") &&
                  count_of(out, "\n") == 1,
              "%s", out);
    free(out);
    snprintf(path, sizeof path, "%s/run/requests.csv", dir);
    CHECK(access(path, F_OK) != 0);
    CHECK_NEAR(sim_metric(sim.port, "vllm:prompt_tokens_total"), 0, 0);
    sim_stop(&sim);
    close(fd);
    free(dir);
}

/* The exposition of a known snapshot, and the Grafana dashboard asking
 * only for names servelab serves. */
TEST(metrics_text_format_and_dashboard_names) {
    live_stats *l = live_new(10);
    live_start(l, 1000);
    live_sent(l, 0.2);
    live_sent(l, 3);
    live_ended(l, 0, 1, 12, 2, 300, 40, 500000);
    live_ended(l, 3, 1, NAN, NAN, NAN, -1, 600000);
    live_snapshot s;
    live_reader *rd = live_reader_new(l);
    live_read(rd, 2001000, &s);
    live_reader_free(rd);
    char *text;
    size_t len;
    metrics_text(&s, "a \"run\"", "http://x", &text, &len);
    CHECK(strstr(text, "servelab_run_info{run=\"a \\\"run\\\"\",url=\"http://x\"} 1\n") != NULL);
    CHECK(strstr(text, "servelab_requests_total{outcome=\"ok\"} 1\n") != NULL);
    CHECK(strstr(text, "servelab_requests_total{outcome=\"http\"} 1\n") != NULL);
    CHECK(strstr(text, "servelab_requests_in_flight 0\n") != NULL);
    CHECK(strstr(text, "servelab_output_tokens_total 40\n") != NULL);
    CHECK(strstr(text, "servelab_time_to_first_token_seconds_bucket{le=\"0.01\"} 0\n") != NULL);
    CHECK(strstr(text, "servelab_time_to_first_token_seconds_bucket{le=\"0.02\"} 1\n") != NULL);
    CHECK(strstr(text, "servelab_time_to_first_token_seconds_count 1\n") != NULL);
    CHECK(strstr(text, "servelab_schedule_lag_seconds_bucket{le=\"0.0005\"} 1\n") != NULL);
    CHECK(strstr(text, "servelab_schedule_lag_seconds_bucket{le=\"0.005\"} 2\n") != NULL);
    CHECK(strstr(text, "servelab_run_elapsed_seconds 2.000\n") != NULL);
    live_free(l);
    char *dash = read_file("deploy/grafana/servelab-dashboard.json", NULL);
    CHECK(dash != NULL);
    json_error_t je;
    json_t *d = json_loads(dash, 0, &je);
    CHECK_MSG(d && json_array_size(json_object_get(d, "panels")) >= 6, "%s", je.text);
    int names = 0;
    for (const char *p = dash; (p = strstr(p, "servelab_")); names++) {
        char name[96];
        size_t n = strspn(p, "abcdefghijklmnopqrstuvwxyz0123456789_");
        snprintf(name, sizeof name, "%.*s", (int)(n < 95 ? n : 95), p);
        char *b = strstr(name, "_bucket");
        if (b)
            *b = 0;
        char want[120];
        snprintf(want, sizeof want, "# TYPE %s ", name);
        CHECK_MSG(strstr(text, want) != NULL, "the dashboard asks for %s, not served", name);
        p += n;
    }
    CHECK(names >= 8);
    json_decref(d);
    free(dash);
    free(text);
}

static long fd_size(void) {
    FILE *f = fopen("/proc/self/status", "r");
    CHECK(f != NULL);
    char line[256];
    long n = -1;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "FDSize:", 7))
            n = strtol(line + 7, NULL, 10);
    fclose(f);
    return n;
}

/* The descriptor table grown at once (a run does it before its watcher
 * threads exist: docs/accuracy.md says what its growth cost otherwise). */
TEST(fd_table_reserve_grows_the_table_at_once) {
    raise_fd_limit();
    struct rlimit rl;
    CHECK(getrlimit(RLIMIT_NOFILE, &rl) == 0);
    long before = fd_size();
    long want = rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > 3001 ? 3000 : (long)rl.rlim_cur - 1;
    CHECK_MSG(before > 0 && before < want, "FDSize %ld, limit %ld", before, want);
    fd_table_reserve(want);
    CHECK_MSG(fd_size() >= want, "FDSize %ld after reserving %ld", fd_size(), want);
    CHECK(fcntl((int)want - 1, F_GETFD) == -1); /* nothing left open up there */
}

/* Every end closes what it opened: a reader after an odd number of ends
 * (one) gets the counts at once, and a run of one request ends. */
TEST(progress_after_an_odd_number_of_ends) {
    live_stats *l = live_new(1);
    live_start(l, 1000);
    live_sent(l, 0.1);
    live_ended(l, 0, 1, 5, NAN, 6, 1, 7000);
    live_reader *rd = live_reader_new(l);
    live_snapshot s;
    int64_t t = mono_us();
    live_read(rd, 9000, &s);
    CHECK_MSG(mono_us() - t < 500000, "the read took %lld us", (long long)(mono_us() - t));
    CHECK_INT((long)s.done, 1);
    CHECK_INT((long)s.by_error[0], 1);
    live_reader_free(rd);
    live_free(l);
    char *dir = temp_dir(), args[2048], *out;
    snprintf(args, sizeof args,
             "run --url http://127.0.0.1:1 --requests 1 --progress plain --out %s/run", dir);
    CHECK_INT(servelab_cmd(args, &out), 1); /* its one request failed: exit 1, and it ended */
    CHECK_MSG(strstr(out, "servelab: 1/1 done, 0 in flight, 1 failed (connect 1)"), "%s", out);
    free(out);
    free(dir);
}

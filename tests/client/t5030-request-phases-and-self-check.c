/* Where each request's time went, as the rows say (connect_ms, written_ms,
 * first_byte_ms), what --preconnect changes, and the run's self-check
 * catching the client's own delay (a client stopped mid-run) and naming
 * the requests it touched. docs/accuracy.md says what each column means;
 * bench/wire_phases.sh checks the columns against a packet capture. */
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
#include <time.h>
#include <unistd.h>

/* `servelab run` against the simulator on `port`; its requests.csv. */
static csv_table *run_rows(const char *dir, int port, const char *args) {
    char cmd[2048], *out = NULL, p[1200];
    snprintf(cmd, sizeof cmd,
             "run --quiet --no-sampling --url http://127.0.0.1:%d --prompts random:8:6 "
             "--ignore-eos %s --out %s/r",
             port, args, dir);
    int rc = servelab_cmd(cmd, &out);
    CHECK_MSG(rc == 0, "run exit %d: %s", rc, out);
    free(out);
    snprintf(p, sizeof p, "%s/r/requests.csv", dir);
    csv_table *t = csv_read(p);
    CHECK(t != NULL);
    return t;
}

/* The phases of every row in order: sent <= written <= first byte <= first
 * token, and connect within written - sent. */
static void check_order(const csv_table *t, const char *what) {
    for (int i = 0; i < t->n_rows; i++) {
        double sent = csv_num(t, i, "sent_ms"), wr = csv_num(t, i, "written_ms"),
               fb = csv_num(t, i, "first_byte_ms"), ft = csv_num(t, i, "first_token_ms"),
               conn = csv_num(t, i, "connect_ms");
        CHECK_MSG(isfinite(sent) && isfinite(wr) && isfinite(fb) && isfinite(conn),
                  "%s: %s has empty phases", what, csv_get(t, i, "request_id"));
        CHECK_MSG(sent <= wr && wr <= fb && fb <= ft && conn <= wr - sent + 0.0005,
                  "%s: %s: sent %.3f written %.3f first byte %.3f first token %.3f connect %.3f",
                  what, csv_get(t, i, "request_id"), sent, wr, fb, ft, conn);
    }
}

static int count_connects(const csv_table *t) {
    int n = 0;
    for (int i = 0; i < t->n_rows; i++)
        n += csv_num(t, i, "connect_ms") > 0;
    return n;
}

/* Connections opened before t=0 carry the burst: no request pays a
 * handshake, and the phases run in order. */
TEST(timing_preconnected_burst_pays_no_handshake) {
    sim_proc s = sim_start("--profile tiny");
    char *dir = temp_dir();
    csv_table *t = run_rows(dir, s.port, "--rate inf --concurrency 8 --requests 40");
    CHECK_INT(t->n_rows, 40);
    check_order(t, "preconnect auto");
    CHECK_MSG(count_connects(t) == 0, "%d requests connected", count_connects(t));
    csv_free(t);
    sim_stop(&s);
}

/* Without it the first request of each connection pays its handshake
 * (connect_ms > 0) and the rest reuse a pooled one (connect_ms 0). */
TEST(timing_without_preconnect_first_requests_connect) {
    sim_proc s = sim_start("--profile tiny");
    char *dir = temp_dir();
    csv_table *t =
        run_rows(dir, s.port, "--rate inf --concurrency 4 --requests 24 --preconnect off");
    check_order(t, "preconnect off");
    int n = count_connects(t);
    CHECK_MSG(n >= 4 && n <= 8, "%d of 24 requests connected, expected the first 4 or so", n);
    csv_free(t);
    sim_stop(&s);
}

/* A server that closes after every streamed answer (as llama.cpp's does):
 * every request pays a handshake, through both clients, and each row says
 * so. */
TEST(timing_close_after_stream_every_request_connects) {
    sim_proc s = sim_start("--profile tiny --close-after-stream");
    const char *clients[] = {"builtin", "libcurl"};
    for (int c = 0; c < 2; c++) {
        char *dir = temp_dir(), args[256];
        snprintf(args, sizeof args, "--rate 50 --requests 20 --http-client %s", clients[c]);
        csv_table *t = run_rows(dir, s.port, args);
        CHECK_MSG(count_connects(t) == 20, "%s: %d of 20 connected", clients[c], count_connects(t));
        if (c == 0)
            check_order(t, "close after stream");
        for (int i = 0; i < t->n_rows; i++)
            CHECK_MSG(isfinite(csv_num(t, i, "first_byte_ms")) &&
                          isfinite(csv_num(t, i, "written_ms")),
                      "%s: %s lacks phases", clients[c], csv_get(t, i, "request_id"));
        csv_free(t);
    }
    sim_stop(&s);
}

static double wall_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* meta.json's t0_utc in seconds since the epoch. */
static double t0_of(const char *dir) {
    char p[1200];
    snprintf(p, sizeof p, "%s/r/meta.json", dir);
    json_t *m = json_load_file(p, 0, NULL);
    const char *v = json_string_value(json_object_get(m, "t0_utc"));
    CHECK_MSG(v && strlen(v) == 27, "t0_utc '%s'", v ? v : "");
    struct tm tm = {0};
    CHECK(strptime(v, "%Y-%m-%dT%H:%M:%S", &tm) != NULL);
    double t = (double)timegm(&tm) + atof(v + 19);
    json_decref(m);
    return t;
}

/* The client stopped (SIGSTOP) for 30 ms mid-run: the run is not within
 * 1 ms, and among the requests it names are the ones due while it was
 * stopped; it held at least as many as fell due then. */
TEST_ALONE(timing_client_stopped_mid_run_is_flagged_with_its_requests) {
    sim_proc s = sim_start("--profile tiny");
    char *dir = temp_dir(), cmd[2048];
    snprintf(cmd, sizeof cmd,
             "exec %s run --quiet --no-sampling --url http://127.0.0.1:%d --prompts random:8:4 "
             "--rate 200 --arrival constant --requests 300 --out %s/r > %s/log 2>&1",
             servelab_bin(), s.port, dir, dir);
    pid_t pid = spawn_sh(cmd, -1, -1);
    sleep_ms(700);
    double stopped = wall_s();
    kill(pid, SIGSTOP);
    sleep_ms(30);
    double resumed = wall_s();
    kill(pid, SIGCONT);
    int st;
    waitpid(pid, &st, 0);
    CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "run status %d", st);
    char p[1200];
    snprintf(p, sizeof p, "%s/r/summary.json", dir);
    json_t *sum = json_load_file(p, 0, NULL);
    json_t *client = json_object_get(sum, "client");
    CHECK(json_is_false(json_object_get(client, "within_1ms")));
    double t0 = t0_of(dir);
    double from_ms = (stopped - t0) * 1000, to_ms = (resumed - t0) * 1000;
    CHECK_MSG(from_ms > 100 && to_ms < 1500, "stopped at %.0f-%.0f ms of the run", from_ms, to_ms);
    snprintf(p, sizeof p, "%s/r/requests.csv", dir);
    csv_table *t = csv_read(p);
    /* the client's delay per request, as the rows tell it: lateness, or the
     * time from sending to the last byte beyond the handshake */
    int due_while_stopped = 0, named_in_window = 0;
    double worst_in_window = 0, least_named = INFINITY;
    for (int i = 0; i < t->n_rows; i++) {
        double sched = csv_num(t, i, "scheduled_ms");
        double d =
            fmax(csv_num(t, i, "lag_ms"), csv_num(t, i, "written_ms") - csv_num(t, i, "sent_ms") -
                                              csv_num(t, i, "connect_ms"));
        if (sched >= from_ms + 2 && sched <= to_ms - 2) {
            due_while_stopped++;
            CHECK_MSG(d > 1, "%s was due while the client was stopped, yet its delay is %.3f ms",
                      csv_get(t, i, "request_id"), d);
            worst_in_window = fmax(worst_in_window, d);
        }
    }
    json_t *ids = json_object_get(client, "delayed_request_ids");
    for (size_t k = 0; k < json_array_size(ids); k++) {
        const char *id = json_string_value(json_array_get(ids, k));
        for (int i = 0; i < t->n_rows; i++)
            if (!strcmp(csv_get(t, i, "request_id"), id)) {
                double sched = csv_num(t, i, "scheduled_ms");
                named_in_window += sched >= from_ms - 5 && sched <= to_ms + 5;
                least_named =
                    fmin(least_named, fmax(csv_num(t, i, "lag_ms"),
                                           csv_num(t, i, "written_ms") - csv_num(t, i, "sent_ms") -
                                               csv_num(t, i, "connect_ms")));
            }
    }
    json_int_t delayed = json_integer_value(json_object_get(client, "delayed_requests"));
    CHECK_MSG(due_while_stopped >= 3, "only %d requests fell due in the stop", due_while_stopped);
    /* the named are the worst: the stopped ones, unless this machine held
     * the client off for longer still elsewhere in the run */
    CHECK_MSG(delayed >= due_while_stopped && json_array_size(ids) > 0 &&
                  (named_in_window > 0 || least_named >= worst_in_window - 0.01),
              "%lld delayed, %d due while stopped (worst %.3f ms), %d of the named in the "
              "window, the least named %.3f ms",
              (long long)delayed, due_while_stopped, worst_in_window, named_in_window, least_named);
    json_t *notes = json_object_get(client, "notes");
    int noted = 0;
    for (size_t k = 0; k < json_array_size(notes); k++)
        noted |= strstr(json_string_value(json_array_get(notes, k)), "waited more than 1 ms") != 0;
    CHECK(noted);
    csv_free(t);
    json_decref(sum);
    sim_stop(&s);
}

/* test_client_errors: failures the client must not blame on the server, and
 * what the client says about the failures it records.
 *
 * A client short of file descriptors (a child whose RLIMIT_NOFILE is
 * lowered with `ulimit -n`) records its own failures as `client`, never as
 * `connect`, through both HTTP clients; and a run whose peak of connections
 * cannot fit within the limit is refused before any traffic, with one line
 * and exit 2. */
#include "csv_util.h"
#include "hostile_server.h"
#include "support.h"
#include "test.h"

#include <string.h>

/* `servelab run --quiet --no-sampling ARGS` with its open-file limit
 * lowered to `nofile` (soft and hard: raise_fd_limit cannot undo it);
 * returns the exit code, and the output (stdout and stderr) in *out. */
static int run_limited(int nofile, const char *args, char **out) {
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "ulimit -n %d && exec %s run --quiet --no-sampling %s 2>&1", nofile,
             servelab_bin(), args);
    int code;
    char *o = run_capture(cmd, &code);
    if (out)
        *out = o;
    else
        free(o);
    return code;
}

static int count_lines(const char *s) {
    int n = 0;
    for (; s && *s; s++)
        n += *s == '\n';
    return n;
}

static csv_table *rows_in(const char *dir) {
    char path[1200];
    snprintf(path, sizeof path, "%s/requests.csv", dir);
    csv_table *t = csv_read(path);
    CHECK_MSG(t != NULL, "no %s", path);
    return t;
}

/* A cap the limit cannot hold, and an uncapped burst (--rate inf) that it
 * cannot hold: each refused before any connection, with one line, exit 2. */
TEST(client_fd_limit_refuses_a_peak_it_cannot_hold) {
    hostile_script s = {.modes = {HOSTILE_GOOD}, .n_modes = 1};
    hostile_server h = hostile_start(&s);
    char *dir = temp_dir(), args[1024], *out;
    const char *cases[][2] = {{"--rate 100 --requests 300 --concurrency 200", "--concurrency 200"},
                              {"--rate inf --requests 300", "all 300 requests"},
                              {"--rate 1000 --requests 300 --timeout 5", "all 300 requests"}};
    for (int i = 0; i < 3; i++) {
        snprintf(args, sizeof args, "--url http://127.0.0.1:%d --model m %s --out %s/r%d", h.port,
                 cases[i][0], dir, i);
        int code = run_limited(64, args, &out);
        CHECK_MSG(code == 2, "%s: exit %d: %s", cases[i][0], code, out);
        CHECK_MSG(strstr(out, cases[i][1]) && strstr(out, "ulimit -n 64"), "%s: %s", cases[i][0],
                  out);
        CHECK_MSG(count_lines(out) == 1, "%s: more than one line: %s", cases[i][0], out);
        free(out);
    }
    CHECK_INT(hostile_count(&h.stats->connections), 0); /* not even the probe */
    /* a limit that holds them: the same burst runs */
    snprintf(args, sizeof args,
             "--url http://127.0.0.1:%d --model m --rate inf --requests 300 "
             "--out %s/ok",
             h.port, dir);
    int code = run_limited(1024, args, &out);
    CHECK_MSG(code == 0, "exit %d: %s", code, out);
    free(out);
    hostile_stop(&h);
}

/* An uncapped schedule longer than --timeout is not refused (its peak is
 * the server's doing), so against a silent server it runs out of
 * descriptors halfway: those requests are the client's failures. */
static void runs_out_of_descriptors(const char *client) {
    hostile_script s = {.modes = {HOSTILE_SILENT}, .n_modes = 1};
    hostile_server h = hostile_start(&s);
    char *dir = temp_dir(), args[1024], *out, path[1100];
    snprintf(args, sizeof args,
             "--url http://127.0.0.1:%d --model m --http-client %s --prompts random:8:4 "
             "--rate 200 --arrival constant --requests 300 --timeout 1 --out %s/run",
             h.port, client, dir);
    int code = run_limited(64, args, &out);
    CHECK_MSG(code == 0, "exit %d: %s", code, out);
    snprintf(path, sizeof path, "%s/run", dir);
    csv_table *t = rows_in(path);
    CHECK_INT(t->n_rows, 300);
    int by_client = 0, timed_out = 0;
    for (int i = 0; i < t->n_rows; i++) {
        const char *e = csv_get(t, i, "error");
        CHECK_MSG(!strcmp(e, "client") || !strcmp(e, "timeout"), "%s: row %d error '%s'", client, i,
                  e);
        by_client += !strcmp(e, "client");
        timed_out += !strcmp(e, "timeout");
    }
    printf("    %s: %d client, %d timeout\n", client, by_client, timed_out);
    CHECK_MSG(by_client >= 50 && timed_out >= 10, "%d client, %d timeout", by_client, timed_out);
    /* the summary counts the class by name */
    CHECK_MSG(strstr(out, "client ") != NULL, "summary table: %s", out);
    snprintf(path, sizeof path, "%s/run/summary.json", dir);
    char *sj = read_file(path, NULL), want[64];
    snprintf(want, sizeof want, "\"client\": %d", by_client);
    CHECK_MSG(sj && strstr(sj, want), "summary.json lacks %s", want);
    free(sj);
    free(out);
    csv_free(t);
    hostile_stop(&h);
}

TEST(client_out_of_descriptors_is_client_not_connect_builtin) {
    runs_out_of_descriptors("builtin");
}

TEST(client_out_of_descriptors_is_client_not_connect_libcurl) {
    runs_out_of_descriptors("libcurl");
}
